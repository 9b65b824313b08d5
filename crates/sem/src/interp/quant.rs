//! Quantifiers (semantics.md §5.4): `\forall`, `\exists` and `\sum`, and the enumeration of
//! binders over the bounds the compiler extracted. Apart from the evaluator because
//! assertions enumerate binders too (`\forall*` permissions), and so that the evaluator's
//! frame stays small.

use super::*;

impl Interp {
    /// `\forall`, `\exists` and `\sum` (kept out of [`Self::eval`], whose stack frame they
    /// would enlarge).
    #[inline(never)]
    pub(super) fn eval_quant(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Value, Stop> {
        match e {
            CE::Quant { kind, binders, cond, implied, body, span } => {
                if binders.iter().any(by_membership) {
                    let tuples =
                        self.enumerate_members(binders, cond.as_deref(), *span, env, pv)?;
                    let mut res = *kind != QuantKind::Exists;
                    for t in tuples.chunks(binders.len().max(1)) {
                        for (b, v) in binders.iter().zip(t) {
                            env.store[b.slot as usize] = v.clone();
                        }
                        let v = self.ev(body, env, pv)?;
                        if self.as_bool(v, *span)? == (*kind == QuantKind::Exists) {
                            res = !res;
                            break;
                        }
                    }
                    return Ok(Value::Bool(res));
                }
                let tuples = match binders.as_slice() {
                    [b] if b.lows.is_empty() || b.highs.is_empty() => {
                        match self.pieces(b, cond.as_deref(), body, env, pv)? {
                            Some(points) => points,
                            None => {
                                self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?
                            }
                        }
                    }
                    _ => self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?,
                };
                let mut res = *kind != QuantKind::Exists;
                let mut from = 0;
                if let [b] = &binders[..] {
                    match self.quant_vector(*kind, b.slot, &tuples, body, env, pv) {
                        Ok(r) => return Ok(Value::Bool(r)),
                        Err(at) => from = at,
                    }
                }
                for t in tuples[from..].chunks(binders.len().max(1)) {
                    for (b, v) in binders.iter().zip(t) {
                        env.store[b.slot as usize] = Value::Int(*v);
                    }
                    let v = self.ev(body, env, pv)?;
                    let b = self.as_bool(v, *span)?;
                    if *kind == QuantKind::Exists && b {
                        res = true;
                        break;
                    }
                    if *kind != QuantKind::Exists && !b {
                        res = false;
                        break;
                    }
                }
                Ok(Value::Bool(res))
            }
            CE::Sum { binder, cond, implied, body, span } => {
                let binders = std::slice::from_ref(binder);
                if by_membership(binder) {
                    let tuples = self.enumerate_members(binders, Some(cond), *span, env, pv)?;
                    let mut acc = 0i64;
                    for t in tuples {
                        env.store[binder.slot as usize] = t;
                        let v = self.ev(body, env, pv)?;
                        let i = self.as_int(v, *span)?;
                        acc = self.arith(BinOp::Add, acc, i, *span)?;
                    }
                    return Ok(Value::Int(acc));
                }
                let tuples = self.enumerate(binders, Some(cond), *implied, *span, env, pv)?;
                let mut acc = 0i64;
                for t in tuples {
                    env.store[binder.slot as usize] = Value::Int(t);
                    let v = self.ev(body, env, pv)?;
                    let i = self.as_int(v, *span)?;
                    acc = self.arith(BinOp::Add, acc, i, *span)?;
                }
                Ok(Value::Int(acc))
            }
            _ => Err(unsupported("not a quantifier", Span::DUMMY)),
        }
    }

    /// Enumerate quantifier binders over their extracted bounds (semantics.md §5.4). The
    /// tuples are returned flat, `binders.len()` values each. With `implied`, the condition is
    /// known to hold for every value in the bounds and is not evaluated.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn enumerate(
        &mut self,
        binders: &[Binder],
        cond: Option<&CE>,
        implied: bool,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Vec<i64>, Stop> {
        let cond = if implied { None } else { cond };
        if let ([b], None) = (binders, cond) {
            // One binder and nothing to filter (the usual `0 <= i && i < n`): the tuples are
            // the range itself. The store ends as the recursive enumeration leaves it.
            let (lo, hi) = self.binder_range(b, span, env, pv)?;
            if lo < hi {
                env.store[b.slot as usize] = Value::Int(hi - 1);
            }
            self.tick(hi.saturating_sub(lo).max(0) as u64 + 1, span)?;
            return Ok((lo..hi).collect());
        }
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(binders.len());
        self.enum_rec(binders, 0, cond, span, env, pv, &mut cur, &mut out)?;
        self.tick(out.len() as u64 + 1, span)?;
        Ok(out)
    }

    /// The range `[lo, hi)` of binder `b`: the largest of its lower bounds and the smallest of
    /// its upper bounds, evaluated in order.
    pub(super) fn binder_range(
        &mut self,
        b: &Binder,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<(i64, i64), Stop> {
        if b.lows.is_empty() || b.highs.is_empty() {
            return Err(inconclusive(
                "R-QUANT-UNBOUNDED",
                format!(
                    "no {} bound for `{}`",
                    if b.lows.is_empty() { "lower" } else { "upper" },
                    b.name
                ),
                span,
            ));
        }
        let mut lo = i64::MIN;
        for x in &b.lows {
            let v = self.ev(x, env, pv)?;
            lo = lo.max(self.as_int(v, span)?);
        }
        let mut hi = i64::MAX;
        for x in &b.highs {
            let v = self.ev(x, env, pv)?;
            hi = hi.min(self.as_int(v, span)?);
        }
        if hi.saturating_sub(lo) > 10_000_000 {
            return Err(inconclusive("R-QUANT-LIMIT", "quantifier domain larger than 10^7", span));
        }
        Ok((lo, hi))
    }

    #[allow(clippy::too_many_arguments)]
    fn enum_rec(
        &mut self,
        binders: &[Binder],
        i: usize,
        cond: Option<&CE>,
        span: Span,
        env: &mut Env,
        pv: PV,
        cur: &mut Vec<i64>,
        out: &mut Vec<i64>,
    ) -> Result<(), Stop> {
        if i == binders.len() {
            if self.cond_holds(cond, span, env, pv)? {
                out.extend_from_slice(cur);
            }
            return Ok(());
        }
        let b = &binders[i];
        let (lo, hi) = self.binder_range(b, span, env, pv)?;
        for v in lo..hi {
            env.store[b.slot as usize] = Value::Int(v);
            cur.push(v);
            self.enum_rec(binders, i + 1, cond, span, env, pv, cur, out)?;
            cur.pop();
        }
        Ok(())
    }

    /// Whether a quantifier's condition holds for the binders' current values (no condition:
    /// it does).
    fn cond_holds(
        &mut self,
        cond: Option<&CE>,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<bool, Stop> {
        match cond {
            Some(c) => {
                let v = self.ev(c, env, pv)?;
                self.as_bool(v, span)
            }
            None => Ok(true),
        }
    }

    /// Enumerate binders some of which range over the elements of a collection (`x in xs`)
    /// rather than over integer bounds; the tuples are returned flat, and filtered by `cond`.
    fn enumerate_members(
        &mut self,
        binders: &[Binder],
        cond: Option<&CE>,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Vec<Value>, Stop> {
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(binders.len());
        self.members_rec(binders, cond, span, env, pv, &mut cur, &mut out)?;
        self.tick(out.len() as u64 + 1, span)?;
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn members_rec(
        &mut self,
        binders: &[Binder],
        cond: Option<&CE>,
        span: Span,
        env: &mut Env,
        pv: PV,
        cur: &mut Vec<Value>,
        out: &mut Vec<Value>,
    ) -> Result<(), Stop> {
        let Some(b) = binders.get(cur.len()) else {
            if self.cond_holds(cond, span, env, pv)? {
                out.extend(cur.iter().cloned());
            }
            return Ok(());
        };
        let domain: Vec<Value> = if by_membership(b) {
            let coll = self.ev(&b.members[0], env, pv)?;
            let mut elems = match coll {
                Value::Seq(v) | Value::Set(v) | Value::Bag(v) => v.to_vec(),
                Value::Map(m) => m.entries.iter().map(|(k, _)| k.clone()).collect(),
                _ => {
                    return Err(unsupported(
                        "a quantifier over the members of a non-collection",
                        span,
                    ))
                }
            };
            elems.sort();
            elems.dedup();
            elems
        } else {
            let (lo, hi) = self.binder_range(b, span, env, pv)?;
            (lo..hi).map(Value::Int).collect()
        };
        self.tick(domain.len() as u64, span)?;
        for v in domain {
            env.store[b.slot as usize] = v.clone();
            cur.push(v);
            self.members_rec(binders, cond, span, env, pv, cur, out)?;
            cur.pop();
        }
        Ok(())
    }
}

impl Interp {
    /// An integer binder without one of its bounds (`\forall int k; true; (0 <= k && k < i) ==
    /// k in keysMap(a)`) whose every use is a comparison `k + c op e` or a membership `k in xs`
    /// with `c`, `e`, `xs` free of it: the quantified formula is then constant between the
    /// values those uses name, so checking each named value and its two neighbours (and the
    /// bounds the binder has) decides it exactly. The points, ascending; `None` when some use
    /// is of another kind.
    fn pieces(
        &mut self,
        b: &Binder,
        cond: Option<&CE>,
        body: &CE,
        env: &mut Env,
        pv: PV,
    ) -> Result<Option<Vec<i64>>, Stop> {
        let mut marks = Vec::new();
        for e in cond.into_iter().chain([body]) {
            if !self.marks(b.slot, e, env, pv, &mut marks)? {
                return Ok(None);
            }
        }
        let mut bounds = (i64::MIN, i64::MAX);
        for x in &b.lows {
            let v = self.ev(x, env, pv)?;
            let v = self.as_int(v, Span::DUMMY)?;
            bounds.0 = bounds.0.max(v);
            marks.push(v);
        }
        for x in &b.highs {
            let v = self.ev(x, env, pv)?;
            let v = self.as_int(v, Span::DUMMY)?;
            bounds.1 = bounds.1.min(v);
            marks.push(v);
        }
        if marks.is_empty() {
            marks.push(0);
        }
        let mut points: Vec<i64> = marks
            .iter()
            .flat_map(|&m| [m.checked_sub(1), Some(m), m.checked_add(1)])
            .flatten()
            .filter(|&p| bounds.0 <= p && p < bounds.1)
            .collect();
        points.sort_unstable();
        points.dedup();
        self.tick(points.len() as u64 + 1, Span::DUMMY)?;
        // The condition filters the points, as it filters an enumerated range.
        let mut kept = Vec::with_capacity(points.len());
        for p in points {
            env.store[b.slot as usize] = Value::Int(p);
            if self.cond_holds(cond, Span::DUMMY, env, pv)? {
                kept.push(p);
            }
        }
        Ok(Some(kept))
    }

    /// Collect into `out` the values at which `e` may change as binder `slot` varies (see
    /// [`Self::pieces`]); false when `e` uses the binder otherwise.
    fn marks(
        &mut self,
        slot: u32,
        e: &CE,
        env: &mut Env,
        pv: PV,
        out: &mut Vec<i64>,
    ) -> Result<bool, Stop> {
        if !e.reads_local(slot) {
            return Ok(true);
        }
        // `k`, `k + c`, `c + k`, `k - c`: the offset `c` (free of `k`), or `None`.
        let shifted = |me: &mut Self, x: &CE, env: &mut Env| -> Result<Option<i64>, Stop> {
            let off = match x {
                CE::Local(s) if *s == slot => return Ok(Some(0)),
                CE::Bin(BinOp::Add, a, c, _) | CE::Bin(BinOp::Add, c, a, _)
                    if matches!(**a, CE::Local(s) if s == slot) && !c.reads_local(slot) =>
                {
                    me.ev(c, env, pv)?
                }
                CE::Bin(BinOp::Sub, a, c, _)
                    if matches!(**a, CE::Local(s) if s == slot) && !c.reads_local(slot) =>
                {
                    match me.ev(c, env, pv)? {
                        Value::Int(c) => Value::Int(c.saturating_neg()),
                        _ => return Ok(None),
                    }
                }
                _ => return Ok(None),
            };
            Ok(match off {
                Value::Int(c) => Some(c),
                _ => None,
            })
        };
        match e {
            CE::Not(x) => self.marks(slot, x, env, pv, out),
            CE::Cond(c, a, b) => Ok(self.marks(slot, c, env, pv, out)?
                && self.marks(slot, a, env, pv, out)?
                && self.marks(slot, b, env, pv, out)?),
            CE::Bin(BinOp::In, x, coll, _) if !coll.reads_local(slot) => {
                let Some(c) = shifted(self, x, env)? else { return Ok(false) };
                let elems = match self.ev(coll, env, pv)? {
                    Value::Seq(v) | Value::Set(v) | Value::Bag(v) => v.to_vec(),
                    Value::Map(m) => m.entries.iter().map(|(k, _)| k.clone()).collect(),
                    _ => return Ok(false),
                };
                for v in elems {
                    let Value::Int(v) = v else { return Ok(false) };
                    out.push(v.saturating_sub(c));
                }
                Ok(true)
            }
            CE::Bin(op, x, y, _) => {
                let cmp = matches!(
                    op,
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
                );
                for (k, other) in [(x, y), (y, x)] {
                    if cmp && !other.reads_local(slot) {
                        if let Some(c) = shifted(self, k, env)? {
                            let Value::Int(v) = self.ev(other, env, pv)? else { return Ok(false) };
                            out.push(v.saturating_sub(c));
                            return Ok(true);
                        }
                    }
                }
                // Connectives (and `==` between two conditions): each side on its own.
                let logic = matches!(
                    op,
                    BinOp::And | BinOp::Or | BinOp::Implies | BinOp::Eq | BinOp::Ne | BinOp::Star
                );
                Ok(logic
                    && self.marks(slot, x, env, pv, out)?
                    && self.marks(slot, y, env, pv, out)?)
            }
            _ => Ok(false),
        }
    }
}

/// A binder that ranges over a collection's members: it has a membership and lacks an integer
/// bound (a binder with both is enumerated over its bounds, which is cheaper).
fn by_membership(b: &Binder) -> bool {
    !b.members.is_empty() && (b.lows.is_empty() || b.highs.is_empty())
}
