//! The row rule of re-indexing: a cell of an array of arrays `A[E][c]` whose row `E` is an
//! arithmetic combination of some of the variables (the rows a tiled thread walks, `t + i * K`),
//! the column a variable of its own.
//!
//! The receiver is `aloc(aloc(A, E).arr_val, c)`. Viper forbids the arithmetic of `E` in a
//! trigger, so the quantifier had none, and Silicon could not prove its permission injective.
//! Ranging over the row `r = E` itself instead of the variables in `E` gives the receiver
//! `aloc(aloc(A, r).arr_val, c)`, a valid trigger, that the concrete accesses also match. The
//! variables of `E` follow from `r` as in the one-variable and grid rules of `quantify`:
//! `v = (r - d) \ K` where `(r - d) % K == 0`, or `K * o + n + d` with `n` over exactly `K`
//! values. Every instance of the original quantifier is the instance at its own row, and every
//! row whose variables meet the guards is one of them, so the quantifier means the same.

use super::{forall, int, linear, literal_range, replace_term, text, trigger_term_ok, Fresh};
use crate::ast::{Exp, ExpKind};
use num_traits::{One, Signed, ToPrimitive, Zero};

/// The quantifier over the row of the first subscript `aloc(A, E)` whose index `E` is a
/// non-trivial combination of some but not all of `vars`, when the rule applies and the
/// re-indexed quantifier has a trigger covering every variable.
pub(super) fn rows(
    fresh: &mut dyn Fresh,
    vars: &[String],
    guards: &[Exp],
    body: &Exp,
    subs: &[(Exp, Exp)],
) -> Option<Exp> {
    let (_, idx) = subs.iter().find(|(_, i)| !matches!(i.kind, ExpKind::Var(_)))?;
    // Every subscript that mentions a variable of the row must be the row itself: another
    // would turn into a quotient, and no trigger would cover it.
    let lin = linear(idx, vars)?;
    if lin.coeffs.iter().any(|c| c.to_i64().is_none()) {
        return None;
    }
    let in_row: Vec<usize> = (0..vars.len()).filter(|k| !lin.coeffs[*k].is_zero()).collect();
    if in_row.is_empty() || in_row.len() == vars.len() {
        return None;
    }
    let row_text = text(idx);
    if subs
        .iter()
        .any(|(_, i)| text(i) != row_text && in_row.iter().any(|k| i.mentions_var(&vars[*k])))
    {
        return None;
    }
    let d = lin.constant.clone().unwrap_or_else(|| Exp::int(0));
    let r = fresh.fresh("r");
    let rv = Exp::var(&r);
    let from_d = Exp::bin("-", rv.clone(), d);
    let mut extra = Vec::new();
    let mut substs: Vec<(String, Exp)> = Vec::new();
    match in_row[..] {
        [v] => {
            let k = &lin.coeffs[v];
            if k.is_one() {
                substs.push((vars[v].clone(), from_d));
            } else if k.is_positive() {
                extra.push(Exp::bin("==", Exp::bin("%", from_d.clone(), int(k)), Exp::int(0)));
                substs.push((vars[v].clone(), Exp::bin("\\", from_d, int(k))));
            } else {
                return None;
            }
        }
        [a, b] => {
            // `K * outer + inner + d` with `inner` over exactly [lo, lo + K).
            let (outer, inner) = if lin.coeffs[b].is_one() { (a, b) } else { (b, a) };
            let k = lin.coeffs[outer].clone();
            let (lo, hi) = literal_range(guards, &vars[inner])?;
            if !lin.coeffs[inner].is_one() || !k.is_positive() || hi - lo.clone() != k {
                return None;
            }
            let base = Exp::bin("-", from_d, int(&lo));
            substs.push((vars[outer].clone(), Exp::bin("\\", base.clone(), int(&k))));
            substs
                .push((vars[inner].clone(), Exp::bin("+", Exp::bin("%", base, int(&k)), int(&lo))));
        }
        _ => return None,
    }
    let apply = |e: &Exp| substs.iter().fold(e.clone(), |e, (v, x)| e.subst(v, x));
    // The row, rewritten by the substitution, is `r` again (under `extra`): wherever it occurs.
    let from = text(&apply(idx));
    let mut new_guards = extra;
    new_guards.extend(guards.iter().map(|g| replace_term(apply(g), &from, &rv)));
    let new_body = replace_term(apply(body), &from, &rv);
    let mut new_vars = vec![r];
    new_vars.extend((0..vars.len()).filter(|k| !in_row.contains(k)).map(|k| vars[k].clone()));
    let whole = Exp::implies(Exp::and_all(new_guards), new_body);
    let trig = receiver_trigger(&whole, &new_vars)?;
    Some(forall(new_vars, vec![vec![trig]], whole))
}

/// The first `aloc` application in `e` that mentions every variable and may stand in a trigger
/// (the cell `aloc(aloc(A, r).arr_val, c)`).
fn receiver_trigger(e: &Exp, vars: &[String]) -> Option<Exp> {
    let mut found = None;
    e.visit(&mut |n| {
        if found.is_some() {
            return;
        }
        if let ExpKind::App(f, args) = &n.kind {
            if f == "aloc"
                && args.len() == 2
                && vars.iter().all(|v| n.mentions_var(v))
                && trigger_term_ok(n)
            {
                found = Some(n.clone());
            }
        }
    });
    found
}
