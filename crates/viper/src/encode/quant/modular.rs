//! The modular rule of re-indexing: a cell `E % K` (a neighbour `(t + 1) % N`, and what tiling
//! makes of it, `(t + i * T + 1) % N`).
//!
//! Silicon cannot prove such a receiver injective on its own: it needs the inverse of a `%`.
//! When the guards keep `E` within one window of `K` consecutive values, `E % K` takes each
//! value of `[0, K)` at most once, and the quantifier can range over the cell `j` itself:
//! `E = (j - lo) % K + lo`, from which the variables follow (one variable, or the row-major grid
//! `K' * outer + inner` that tiling leaves). Every instance of the original quantifier is the
//! instance at its own cell, and every cell whose variables meet the guards is one of them, so
//! the quantifier means the same; its receiver is the bare cell, which is also the trigger.

use super::{forall, int, linear, lit, literal_range, replace_index, symbolic_range, text, Fresh};
use crate::ast::{Exp, ExpKind};
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive};

/// The quantifier over the cell of a modular subscript, if the first subscript is one and the
/// rule applies, with the condition under which the window holds when the guards do not decide
/// it (`None`: it always holds). Under the opposite condition the caller keeps the quantifier
/// as it was, so the meaning never changes.
pub(super) fn modular(
    fresh: &mut dyn Fresh,
    vars: &[String],
    guards: &[Exp],
    body: &Exp,
    subs: &[(Exp, Exp)],
) -> Option<(Option<Exp>, Exp)> {
    let (arr, idx) = subs.first()?;
    let ExpKind::Binary("%", e, k) = &idx.kind else { return None };
    let k = lit(k).filter(|k| k.is_positive() && k.to_i64().is_some())?;
    let lin = linear(e, vars)?;
    if lin.coeffs.iter().any(|c| !c.is_positive() || c.to_i64().is_none()) {
        return None;
    }
    let c_e = lin.constant.clone().unwrap_or_else(|| Exp::int(0));
    // Each variable's range, and E's window [lower, upper): the least E from the ranges; the
    // bound of a guard `Σ coeff · v + d < U` on the same combination (`t + i * T < N`), or
    // else the greatest E from the ranges.
    let mut ranges = Vec::new();
    for v in vars {
        let r = match literal_range(guards, v) {
            Some((lo, hi)) => (int(&lo), int(&hi)),
            None => symbolic_range(guards, v, vars)?,
        };
        ranges.push(r);
    }
    let scaled = |a: &BigInt, x: Exp| if a.is_one() { x } else { Exp::bin("*", int(a), x) };
    let sum = |xs: Vec<Exp>| xs.into_iter().reduce(|a, b| Exp::bin("+", a, b));
    let lin_lower =
        sum(lin.coeffs.iter().zip(&ranges).map(|(a, (lo, _))| scaled(a, lo.clone())).collect())?;
    let lower = Exp::bin("+", lin_lower.clone(), c_e.clone());
    let from_guard = guards.iter().find_map(|g| {
        let (x, u) = match &g.kind {
            ExpKind::Binary("<", x, u) => ((**x).clone(), (**u).clone()),
            ExpKind::Binary("<=", x, u) => {
                ((**x).clone(), Exp::bin("+", (**u).clone(), Exp::int(1)))
            }
            _ => return None,
        };
        if vars.iter().any(|v| u.mentions_var(v)) {
            return None;
        }
        let l = linear(&x, vars)?;
        (l.coeffs == lin.coeffs).then(|| {
            let d = l.constant.unwrap_or_else(|| Exp::int(0));
            Exp::bin("+", Exp::bin("-", u, d), c_e.clone())
        })
    });
    let upper = match from_guard {
        Some(u) => u,
        None => {
            let tops = lin
                .coeffs
                .iter()
                .zip(&ranges)
                .map(|(a, (_, hi))| scaled(a, Exp::bin("-", hi.clone(), Exp::int(1))))
                .collect();
            Exp::bin("+", Exp::bin("+", sum(tops)?, Exp::int(1)), c_e.clone())
        }
    };
    let width_ok = Exp::bin("<=", Exp::bin("-", upper, lower.clone()), int(&k));
    let cond = match lit(&width_ok_lhs(&width_ok)) {
        Some(w) if w <= k => None,
        Some(_) => return None,
        None => Some(width_ok),
    };
    let j = fresh.fresh("j");
    let jv = Exp::var(&j);
    let e_val =
        Exp::bin("+", Exp::bin("%", Exp::bin("-", jv.clone(), lower.clone()), int(&k)), lower);
    let l_val = Exp::bin("-", e_val, c_e);
    // The variables from L = E - c.
    let mut extra = Vec::new();
    let substs = invert(vars, &lin.coeffs, &ranges, l_val, &mut extra)?;
    let apply = |x: &Exp| substs.iter().fold(x.clone(), |acc, (v, r)| acc.subst(v, r));
    let from = text(&apply(idx));
    let mut ng = vec![Exp::bin("<=", Exp::int(0), jv.clone()), Exp::bin("<", jv.clone(), int(&k))];
    ng.extend(extra);
    ng.extend(guards.iter().map(apply));
    let ng: Vec<Exp> = ng.into_iter().map(|g| replace_index(g, &from, &jv)).collect();
    let nb = replace_index(apply(body), &from, &jv);
    let trig = Exp::app("aloc", vec![arr.clone(), jv.clone()]);
    Some((cond, forall(vec![j], vec![vec![trig]], Exp::implies(Exp::and_all(ng), nb))))
}

/// The width `upper - lower` of a window condition `upper - lower <= K`.
fn width_ok_lhs(cond: &Exp) -> Exp {
    match &cond.kind {
        ExpKind::Binary("<=", w, _) => (**w).clone(),
        _ => cond.clone(),
    }
}

/// The variables of `Σ coeffs · vars = value` (every coefficient positive): one variable, or the
/// row-major grid `kk * outer + inner` with `inner` ranging over exactly `kk` literal values.
/// A coefficient above 1 on a single variable adds the divisibility guard to `extra`.
fn invert(
    vars: &[String],
    coeffs: &[BigInt],
    ranges: &[(Exp, Exp)],
    value: Exp,
    extra: &mut Vec<Exp>,
) -> Option<Vec<(String, Exp)>> {
    match coeffs {
        [a] => {
            if a.is_one() {
                Some(vec![(vars[0].clone(), value)])
            } else {
                extra.push(Exp::bin("==", Exp::bin("%", value.clone(), int(a)), Exp::int(0)));
                Some(vec![(vars[0].clone(), Exp::bin("\\", value, int(a)))])
            }
        }
        [_, b] => {
            let (outer, inner) = if b.is_one() { (0, 1) } else { (1, 0) };
            let kk = coeffs[outer].clone();
            let (Some(lo), Some(hi)) = (lit(&ranges[inner].0), lit(&ranges[inner].1)) else {
                return None;
            };
            if !coeffs[inner].is_one() || hi - lo.clone() != kk {
                return None;
            }
            let base = Exp::bin("-", value, int(&lo));
            Some(vec![
                (vars[outer].clone(), Exp::bin("\\", base.clone(), int(&kk))),
                (vars[inner].clone(), Exp::bin("+", Exp::bin("%", base, int(&kk)), int(&lo))),
            ])
        }
        _ => None,
    }
}
