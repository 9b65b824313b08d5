//! The fields an abstract method's postcondition sets. A method without body whose
//! postcondition says `n == \old(n) + 1`, `left < v`, or `c ? f == x : f == \old(f)` changes
//! the fields it names; running it as "the heap stays as it is" makes every such call
//! inconclusive (R-ABSTRACT). Here the postcondition's conjuncts that bound a field are read
//! as assignments: `o.f == e` sets `o.f` to `e`, `o.f < e` (and `>`, `<=`, `>=`) moves a field
//! that breaks the bound to the value next to it; a conditional is followed into the branch its
//! condition selects, an implication only when its condition holds. Right-hand sides are
//! evaluated with `\old` reading the heap before the call, and the passes repeat (three at
//! most) so that a field set from another settles. Only fields the callee may write are set
//! (any field when permissions are not checked). When the result still breaks the
//! postcondition of a method without result (`ensures 0 <= move.i && move.i <= 2; ensures
//! cell(move.i) == -1`), the fields it bounds on both sides within a small range are searched,
//! in order, for a state that meets it. The choice is deterministic, so two programs calling
//! the same abstract method in the same state get the same heap; whether the postcondition
//! holds is then checked as before.

use super::abstract_call::{mentions_result, next_to};
use super::*;

/// `o.f op e` with `op` turned around when the field is on the right: the field access, the
/// operator as seen from the field, and the bound.
fn field_bound(e: &CE) -> Option<(&CE, BinOp, &CE)> {
    let CE::Bin(op, a, b, _) = e else { return None };
    let flip = match op {
        BinOp::Eq => BinOp::Eq,
        BinOp::Lt => BinOp::Gt,
        BinOp::Gt => BinOp::Lt,
        BinOp::Le => BinOp::Ge,
        BinOp::Ge => BinOp::Le,
        _ => return None,
    };
    match (&**a, &**b) {
        (f @ CE::Field(..), y) if !mentions_result_or_old_field(y, f) => Some((f, *op, y)),
        (y, f @ CE::Field(..)) if !mentions_result_or_old_field(y, f) => Some((f, flip, y)),
        _ => None,
    }
}

/// Does `y` mention `\result` (chosen later), or is it the field itself (`f == f`)?
fn mentions_result_or_old_field(y: &CE, f: &CE) -> bool {
    mentions_result(y) || y == f
}

impl Interp {
    /// Set the fields `post` bounds (see the module documentation). Returns the heap before
    /// the call when a field changed, for `\old` in the postcondition's check.
    pub(super) fn abstract_fields(
        &mut self,
        post: &[CClause],
        store: &mut Vec<Value>,
        this: &Value,
        callee: &Holder,
        search: bool,
    ) -> Result<Option<Heap>, Stop> {
        let mut conj = Vec::new();
        for c in post {
            c.e.conjuncts(&mut conj);
        }
        let mut old: Option<Heap> = None;
        for _ in 0..3 {
            let mut sets = Vec::new();
            {
                let null = Value::Null;
                let mut env = Env::contract(store, this, &null, old.as_ref());
                for e in &conj {
                    self.settle(e, &mut env, callee, &mut sets)?;
                }
            }
            sets.retain(|(l, v)| self.heap.get(*l) != *v);
            if sets.is_empty() {
                break;
            }
            if old.is_none() {
                old = Some(self.heap.clone());
            }
            for (l, v) in sets {
                self.heap.set(l, v);
            }
        }
        if search
            && self.post_false(post, store, this, &Value::Null, callee, old.as_ref())?.is_some()
        {
            let mut ranges = Vec::new();
            {
                let null = Value::Null;
                let mut env = Env::contract(store, this, &null, old.as_ref());
                for e in &conj {
                    self.bounds_of(e, &mut env, callee, &mut ranges)?;
                }
            }
            ranges.retain(
                |(_, lo, hi)| matches!((lo, hi), (Some(l), Some(h)) if l <= h && h - l < 16),
            );
            ranges.truncate(4);
            if !ranges.is_empty() {
                let old = old.get_or_insert_with(|| self.heap.clone());
                let at: Vec<(Loc, i64, i64)> = ranges
                    .iter()
                    .map(|(l, lo, hi)| (*l, lo.unwrap_or(0), hi.unwrap_or(0)))
                    .collect();
                let start: Vec<Value> = at.iter().map(|(l, ..)| self.heap.get(*l)).collect();
                let mut idx: Vec<i64> = at.iter().map(|(_, lo, _)| *lo).collect();
                let mut found = false;
                'states: loop {
                    for ((l, ..), v) in at.iter().zip(&idx) {
                        self.heap.set(*l, Value::Int(*v));
                    }
                    if self
                        .post_false(post, store, this, &Value::Null, callee, Some(old))?
                        .is_none()
                    {
                        found = true;
                        break;
                    }
                    // The next state, the last field fastest.
                    for k in (0..at.len()).rev() {
                        if idx[k] < at[k].2 {
                            idx[k] += 1;
                            continue 'states;
                        }
                        idx[k] = at[k].1;
                    }
                    break;
                }
                if !found {
                    for ((l, ..), v) in at.iter().zip(start) {
                        self.heap.set(*l, v);
                    }
                }
            }
        }
        Ok(old)
    }

    /// Conjunct `e` as a bound on a field the callee may write (see [`field_bound`]): the
    /// field's location, the operator as seen from it, and the bound.
    fn writable_bound<'e>(
        &mut self,
        e: &'e CE,
        env: &mut Env,
        callee: &Holder,
    ) -> Result<Option<(Loc, BinOp, &'e CE)>, Stop> {
        let Some((CE::Field(o, f, span), op, y)) = field_bound(e) else { return Ok(None) };
        let Some(ov @ Value::Ref(_)) = self.quiet_ev(o, env, PV::Unchecked)? else {
            return Ok(None);
        };
        let Ok(loc) = self.field_loc(ov, *f, *span) else { return Ok(None) };
        if self.cfg.checks.perms && !callee.can_write(loc) {
            return Ok(None);
        }
        Ok(Some((loc, op, y)))
    }

    /// The integer bounds conjunct `e` puts on fields the callee may write: the field and its
    /// least and greatest value.
    fn bounds_of(
        &mut self,
        e: &CE,
        env: &mut Env,
        callee: &Holder,
        out: &mut Vec<(Loc, Option<i64>, Option<i64>)>,
    ) -> Result<(), Stop> {
        if let CE::Bin(BinOp::And | BinOp::Star, a, b, _) = e {
            self.bounds_of(a, env, callee, out)?;
            return self.bounds_of(b, env, callee, out);
        }
        let Some((loc, op, y)) = self.writable_bound(e, env, callee)? else { return Ok(()) };
        if op == BinOp::Eq {
            return Ok(());
        }
        let Some(Value::Int(k)) = self.quiet_ev(y, env, PV::Unchecked)? else { return Ok(()) };
        let i = match out.iter().position(|(l, ..)| *l == loc) {
            Some(i) => i,
            None => {
                out.push((loc, None, None));
                out.len() - 1
            }
        };
        let (_, lo, hi) = &mut out[i];
        match op {
            BinOp::Ge => *lo = Some(lo.map_or(k, |x| x.max(k))),
            BinOp::Gt => *lo = k.checked_add(1).map(|k| lo.map_or(k, |x| x.max(k))),
            BinOp::Le => *hi = Some(hi.map_or(k, |x| x.min(k))),
            _ => *hi = k.checked_sub(1).map(|k| hi.map_or(k, |x| x.min(k))),
        }
        Ok(())
    }

    /// The assignments conjunct `e` asks for, in the state `env` sees.
    fn settle(
        &mut self,
        e: &CE,
        env: &mut Env,
        callee: &Holder,
        sets: &mut Vec<(Loc, Value)>,
    ) -> Result<(), Stop> {
        match e {
            CE::Bin(BinOp::And | BinOp::Star, a, b, _) => {
                self.settle(a, env, callee, sets)?;
                self.settle(b, env, callee, sets)
            }
            CE::Cond(c, a, b) => match self.quiet_ev(c, env, PV::Unchecked)? {
                Some(Value::Bool(true)) => self.settle(a, env, callee, sets),
                Some(Value::Bool(false)) => self.settle(b, env, callee, sets),
                _ => Ok(()),
            },
            CE::Bin(BinOp::Implies, c, a, _) => match self.quiet_ev(c, env, PV::Unchecked)? {
                Some(Value::Bool(true)) => self.settle(a, env, callee, sets),
                _ => Ok(()),
            },
            _ => {
                let Some((loc, op, y)) = self.writable_bound(e, env, callee)? else {
                    return Ok(());
                };
                // A field set earlier in this pass keeps its first value.
                if sets.iter().any(|(l, _)| *l == loc) {
                    return Ok(());
                }
                let Some(k) = self.quiet_ev(y, env, PV::Unchecked)? else { return Ok(()) };
                let now = self.heap.get(loc);
                let v = match (op, &k, &now) {
                    (BinOp::Eq, _, _) => k,
                    (_, Value::Int(k), Value::Int(n)) => {
                        let holds = match op {
                            BinOp::Lt => n < k,
                            BinOp::Gt => n > k,
                            BinOp::Le => n <= k,
                            _ => n >= k,
                        };
                        match next_to(op, *k) {
                            Some(x) if !holds => Value::Int(x),
                            _ => return Ok(()),
                        }
                    }
                    _ => return Ok(()),
                };
                sets.push((loc, v));
                Ok(())
            }
        }
    }
}
