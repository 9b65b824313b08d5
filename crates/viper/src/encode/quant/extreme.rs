//! A quantified bound's instance at the point where its bounded term is largest (smallest).
//!
//! `forall b, t, i :: G ==> b * 64 + t + i * 32 < alen(x)` is what a `\pointer_index` under a
//! quantifier gives (a tiled kernel over a grid of blocks). It has no function application to
//! trigger on, so Silicon's Z3 never instantiates it, and a quantified read of those cells
//! (`x[b * 64 + t + i * 32]` in a postcondition, re-indexed to a cell `j`) cannot show that `j`
//! is in bounds. Its instance at the point of `G` where the term is largest,
//! `G(Gd - 1, 31, 1) ==> (Gd - 1) * 64 + 31 + 32 < alen(x)`, is quantifier-free, and from it Z3
//! bounds every cell of the range by linear arithmetic (`j \ 64 < Gd` gives `j < 64 * Gd`).
//!
//! An instance of a quantified formula is implied by it, so adding it changes no meaning
//! wherever the formula stands (assumed, asserted, negated). The point is found greedily, and
//! a point outside `G` only makes the instance vacuous: its choice is a matter of usefulness,
//! never of soundness.

use super::{int, linear, lit, Linear};
use crate::ast::{Exp, ExpKind};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// `Σ coeffs · vars <= rhs`, from a guard `a < b` or `a <= b` (or `>`/`>=`) whose sides are
/// linear over the variables with literal coefficients.
struct Le {
    coeffs: Vec<BigInt>,
    rhs: Exp,
}

fn le(g: &Exp, vars: &[String]) -> Option<Le> {
    let ExpKind::Binary(op, a, b) = &g.kind else { return None };
    // `l <= r` (strict: `l + 1 <= r`) with l, r the sides in that order.
    let (l, r, strict) = match *op {
        "<" => (a, b, true),
        "<=" => (a, b, false),
        ">" => (b, a, true),
        ">=" => (b, a, false),
        _ => return None,
    };
    let (ll, lr) = (linear(l, vars)?, linear(r, vars)?);
    let coeffs = ll.coeffs.iter().zip(&lr.coeffs).map(|(x, y)| x - y).collect();
    let zero = || Exp::int(0);
    let mut rhs = minus(lr.constant.unwrap_or_else(zero), ll.constant.unwrap_or_else(zero));
    if strict {
        rhs = minus(rhs, Exp::int(1));
    }
    Some(Le { coeffs, rhs })
}

/// `a - b`, `k * x` and `-e`, folded where a side is a literal (the instance is
/// printed into the Viper program, and read when it fails).
fn minus(a: Exp, b: Exp) -> Exp {
    match (lit(&a), lit(&b)) {
        (Some(x), Some(y)) => int(&(x - y)),
        (_, Some(y)) if y.is_zero() => a,
        (Some(x), _) if x.is_zero() => negate(b),
        _ => Exp::bin("-", a, b),
    }
}

fn times(k: &BigInt, x: Exp) -> Exp {
    match lit(&x) {
        Some(v) => int(&(k * v)),
        None if k.is_one() => x,
        None => Exp::bin("*", int(k), x),
    }
}

fn negate(e: Exp) -> Exp {
    if let Some(v) = lit(&e) {
        return int(&-v);
    }
    match e.kind {
        ExpKind::Unary("-", x) => *x,
        ExpKind::Binary("-", a, b) => Exp::bin("-", *b, *a),
        kind => Exp::synth(ExpKind::Unary("-", Box::new(Exp::synth(kind)))),
    }
}

/// The largest (`upper`) or smallest value of variable `k` that the constraints allow, given
/// the values chosen so far and the ranges of the others; `None` when nothing bounds it.
fn extreme_value(
    k: usize,
    upper: bool,
    cons: &[&Le],
    chosen: &[Option<Exp>],
    ranges: &[(Option<Exp>, Option<Exp>)],
) -> Option<Exp> {
    let mut best: Option<Exp> = None;
    for c in cons {
        let ck = &c.coeffs[k];
        // `ck * v <= -(constant + rest)`: an upper bound when ck > 0, a lower one when ck < 0.
        if ck.is_zero() || ck.is_positive() != upper {
            continue;
        }
        // What the constraint leaves for `ck * v`.
        let mut room = c.rhs.clone();
        let mut ok = true;
        for (m, cm) in c.coeffs.iter().enumerate() {
            if m == k || cm.is_zero() {
                continue;
            }
            // The other variable at its chosen value, or at the end of its range that leaves
            // `v` the most room (its smallest contribution to the left side).
            let at = chosen[m].clone().or_else(|| {
                let (lo, hi) = &ranges[m];
                if cm.is_positive() {
                    lo.clone()
                } else {
                    hi.clone()
                }
            });
            match at {
                Some(x) => room = minus(room, times(cm, x)),
                None => ok = false,
            }
        }
        if !ok {
            continue;
        }
        // ck > 0: v <= floor(room / ck); ck < 0: v >= ceil(room / ck) = -floor(room / |ck|).
        // Viper's `\\` is floor division for a positive divisor.
        let pos = ck.abs();
        let quotient = match lit(&room) {
            Some(n) => int(&n.div_floor(&pos)),
            None if pos.is_one() => room,
            None => Exp::bin("\\", room, int(&pos)),
        };
        let bound = if ck.is_positive() { quotient } else { negate(quotient) };
        best = match best {
            None => Some(bound),
            Some(b) => match (lit(&b), lit(&bound)) {
                (Some(x), Some(y)) => Some(int(&if upper { x.min(y) } else { x.max(y) })),
                // Two bounds, not both literal: which is tighter depends on the state. An
                // instance at a conditional point costs the solver more than it gives (and is
                // quantified again where a thread's contract is lifted to its block): none.
                _ => return None,
            },
        };
    }
    best
}

/// For a quantifier `forall vars :: guards ==> body` whose body is a comparison of a term
/// linear in the variables (literal coefficients) with a term free of them, its instance at
/// the greedy extreme point of the guards (see the module doc); `None` for any other shape or
/// when a variable is unbounded.
pub(super) fn instance(vars: &[String], guards: &[Exp], body: &Exp) -> Option<Exp> {
    let ExpKind::Binary(op, a, b) = &body.kind else { return None };
    let free = |e: &Exp| !vars.iter().any(|v| e.mentions_var(v));
    // The bounded term, and whether the comparison bounds it from above.
    let (term, upper) = match (*op, free(a), free(b)) {
        ("<" | "<=", false, true) => (a, true),
        ("<" | "<=", true, false) => (b, false),
        (">" | ">=", false, true) => (a, false),
        (">" | ">=", true, false) => (b, true),
        _ => return None,
    };
    let Linear { coeffs, .. } = linear(term, vars)?;
    let cons: Vec<Le> = guards.iter().filter_map(|g| le(g, vars)).collect();
    let all: Vec<&Le> = cons.iter().collect();
    // Each variable's own range, for the room the others leave.
    let n = vars.len();
    let none = vec![None; n];
    let ranges: Vec<(Option<Exp>, Option<Exp>)> = (0..n)
        .map(|k| {
            let own: Vec<&Le> = cons
                .iter()
                .filter(|c| c.coeffs.iter().enumerate().all(|(m, x)| m == k || x.is_zero()))
                .collect();
            (extreme_value(k, false, &own, &none, &[]), extreme_value(k, true, &own, &none, &[]))
        })
        .collect();
    // Largest coefficients first: they move the term most.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| coeffs[y].abs().cmp(&coeffs[x].abs()).then(x.cmp(&y)));
    let mut chosen: Vec<Option<Exp>> = vec![None; n];
    for k in order {
        // Up where the term grows with the variable (for an upper bound), down otherwise; a
        // variable the term does not mention takes its smallest value.
        let up = !coeffs[k].is_zero() && (coeffs[k].is_positive() == upper);
        chosen[k] = Some(extreme_value(k, up, &all, &chosen, &ranges)?);
    }
    let point: Vec<Exp> = chosen.into_iter().collect::<Option<_>>()?;
    let at = |e: &Exp| vars.iter().zip(&point).fold(e.clone(), |e, (v, x)| e.subst(v, x));
    let guard = Exp::and_all(guards.iter().map(at));
    Some(Exp::implies(guard, at(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: &str) -> Exp {
        Exp::var(n)
    }

    fn text(e: &Exp) -> String {
        super::super::text(e)
    }

    #[test]
    fn the_largest_cell_of_a_tiled_grid() {
        let vars: Vec<String> = ["b", "t", "i"].iter().map(|s| s.to_string()).collect();
        let (b, t, i) = (v("b"), v("t"), v("i"));
        let guards = vec![
            Exp::bin("<=", Exp::int(0), b.clone()),
            Exp::bin("<", b.clone(), v("G")),
            Exp::bin("<=", Exp::int(0), t.clone()),
            Exp::bin("<", t.clone(), Exp::int(32)),
            Exp::bin("<=", Exp::int(0), i.clone()),
            Exp::bin("<", i.clone(), Exp::int(64)),
            Exp::bin(
                "<",
                Exp::bin("+", t.clone(), Exp::bin("*", i.clone(), Exp::int(32))),
                Exp::int(64),
            ),
        ];
        let cell = Exp::bin(
            "+",
            Exp::bin("*", b, Exp::int(64)),
            Exp::bin("+", t, Exp::bin("*", i, Exp::int(32))),
        );
        let body = Exp::bin("<", cell, Exp::app("alen", vec![v("x")]));
        let inst = instance(&vars, &guards, &body).expect("an instance");
        let s = text(&inst);
        // b = G - 1, i = 1, t = 31: the cell 64 * G - 1.
        assert!(s.contains("(G - 1) * 64") || s.contains("((G - 1) * 64)"), "{s}");
        assert!(s.contains("31 + (1 * 32)") || s.contains("(31 + (1 * 32))"), "{s}");
    }

    #[test]
    fn a_lower_bound_takes_the_smallest_point_and_other_shapes_none() {
        let vars = vec!["k".to_string()];
        let guards = vec![Exp::bin("<=", v("lo"), v("k")), Exp::bin("<", v("k"), v("hi"))];
        let body = Exp::bin("<=", Exp::int(0), Exp::bin("-", v("k"), Exp::int(2)));
        let s = text(&instance(&vars, &guards, &body).expect("an instance"));
        assert!(s.contains("(lo - 2)"), "{s}");
        // A body that is not a bound of a linear term, or a variable without a bound.
        let eq = Exp::bin("==", v("k"), Exp::int(0));
        assert!(instance(&vars, &guards, &eq).is_none());
        let open = vec![Exp::bin("<=", v("lo"), v("k"))];
        let up = Exp::bin("<", v("k"), v("n"));
        assert!(instance(&vars, &open, &up).is_none());
    }
}
