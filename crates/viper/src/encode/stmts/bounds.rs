//! Bounds of products over ranged variables, stated for Z3.
//!
//! A thread's contract often indexes a block of an array, `N*i <= k && k < N*(i+1)`, for a
//! thread `i` in `[0, M)` of an array of length `M*N`. Whether `k` is in bounds is nonlinear
//! (`N*(i+1) <= N*M`), and Z3 does not find it. For every product `x * f` in a thread's
//! contract where `f` is `v`, `v + c` or `v - c` for a variable `v` with a known range
//! `lo <= v < hi` and `x` does not mention `v`, the thread method assumes
//! `lo <= v && v < hi && 0 <= x ==> x * f[lo/v] <= x * f && x * f <= x * f[hi - 1/v]`:
//! multiplying the bounds of `f` by a non-negative `x`. Each such fact is valid arithmetic
//! (it holds in every state), so assuming it is sound; it is a precondition only of the thread
//! method itself, never asserted at the fork.

use crate::ast::{Exp, ExpKind};

/// `(v, lo, hi)` for every conjunct `lo <= v && v < hi` (a variable's range) of `e`.
fn ranges(e: &Exp, out: &mut Vec<(String, Exp, Exp)>) {
    if let ExpKind::Binary("&&", a, b) = &e.kind {
        if let (ExpKind::Binary("<=", lo, v1), ExpKind::Binary("<", v2, hi)) = (&a.kind, &b.kind) {
            if let (ExpKind::Var(x), ExpKind::Var(y)) = (&v1.kind, &v2.kind) {
                if x == y && !lo.mentions_var(x) && !hi.mentions_var(x) {
                    out.push((x.clone(), (**lo).clone(), (**hi).clone()));
                    return;
                }
            }
        }
        ranges(a, out);
        ranges(b, out);
    }
}

/// Whether `f` is `v`, `v + c`, `c + v` or `v - c` with `c` free of `v`.
fn shifted(f: &Exp, v: &str) -> bool {
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == v);
    match &f.kind {
        ExpKind::Var(n) => n == v,
        ExpKind::Binary("+", a, b) => {
            (is_v(a) && !b.mentions_var(v)) || (is_v(b) && !a.mentions_var(v))
        }
        ExpKind::Binary("-", a, b) => is_v(a) && !b.mentions_var(v),
        _ => false,
    }
}

/// The product facts for the products of `exps` over the variables ranged by `known` (the
/// conjuncts `lo <= v && v < hi` among them).
pub(super) fn facts_from<'e>(known: impl IntoIterator<Item = &'e Exp>, exps: &[&Exp]) -> Vec<Exp> {
    let mut ranged = Vec::new();
    for e in known {
        ranges(e, &mut ranged);
    }
    product_facts(&ranged, exps)
}

/// The product facts for the products of `exps` over the variables of `ranged`.
fn product_facts(ranged: &[(String, Exp, Exp)], exps: &[&Exp]) -> Vec<Exp> {
    let mut out: Vec<Exp> = Vec::new();
    let mut seen = Vec::new();
    // Variables a quantifier binds: a product over one of them is no term of the state the
    // facts are about (lifted out, it named an undeclared variable; found by writing user
    // programs: a tiled kernel whose thread contract quantifies over its tiles).
    let mut bound: Vec<String> = Vec::new();
    for e in exps {
        e.visit(&mut |x| {
            if let ExpKind::Forall(vs, ..) | ExpKind::Exists(vs, ..) = &x.kind {
                bound.extend(vs.iter().map(|(v, _)| v.clone()));
            }
        });
    }
    for e in exps {
        e.visit(&mut |p| {
            if bound.iter().any(|v| p.mentions_var(v)) {
                return;
            }
            // A product, or the product inside a strided subscript `vct_stride(c, y, z)` (its
            // body is `c + y * z`; the fact is about `y * z`, the term the body unfolds to).
            let owned;
            let (a, b) = match &p.kind {
                ExpKind::Binary("*", a, b) => (a, b),
                ExpKind::App(f, args)
                    if f == crate::encode::quant::STRIDE_FN && args.len() == 3 =>
                {
                    owned = (Box::new(args[1].clone()), Box::new(args[2].clone()));
                    (&owned.0, &owned.1)
                }
                _ => return,
            };
            let p = &Exp::bin("*", (**a).clone(), (**b).clone());
            for (x, f) in [(a, b), (b, a)] {
                for (v, lo, hi) in ranged {
                    if x.mentions_var(v) || !shifted(f, v) {
                        continue;
                    }
                    let at =
                        |bound: Exp| Exp::bin("*", (**x).clone(), (**f).clone().subst(v, &bound));
                    let last = Exp::bin("-", hi.clone(), Exp::int(1));
                    // The upper bound twice: as `x * f[hi - 1/v]`, and expanded as
                    // `x * f[hi/v] - x` (equal, as `f` is `v` shifted). Z3 does not distribute
                    // the product, and only the expanded form meets a length `x * hi`
                    // (`g*N + k < N*M` from `g*N <= N*M - N` and `k < N`).
                    let fact = Exp::implies(
                        Exp::and_all([
                            Exp::bin("<=", lo.clone(), Exp::var(v)),
                            Exp::bin("<", Exp::var(v), hi.clone()),
                            Exp::bin("<=", Exp::int(0), (**x).clone()),
                        ]),
                        Exp::and_all([
                            Exp::bin("<=", at(lo.clone()), p.clone()),
                            Exp::bin("<=", p.clone(), at(last)),
                            Exp::bin("<=", p.clone(), Exp::bin("-", at(hi.clone()), (**x).clone())),
                        ]),
                    );
                    let key = crate::encode::quant::text(&fact);
                    if !seen.contains(&key) {
                        seen.push(key);
                        out.push(fact);
                    }
                }
            }
        });
    }
    out
}
