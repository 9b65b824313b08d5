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
                let tuples = self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?;
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

/// A binder that ranges over a collection's members: it has a membership and lacks an integer
/// bound (a binder with both is enumerated over its bounds, which is cheaper).
fn by_membership(b: &Binder) -> bool {
    !b.members.is_empty() && (b.lows.is_empty() || b.highs.is_empty())
}
