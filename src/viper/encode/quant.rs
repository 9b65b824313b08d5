//! Quantification and re-indexing (`verification.md` §5.5).
//!
//! Viper rejects arithmetic in triggers, and without a trigger Silicon cannot combine
//! permission chunks whose receivers are shifted. So every quantifier is re-indexed until a
//! subscript of the bound variable is the bare variable, which then becomes the trigger.

use crate::viper::ast::{Exp, ExpKind, Ty};
use crate::viper::print::Printer;
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Structural equality of Viper expressions, ignoring origins.
pub fn same(a: &Exp, b: &Exp) -> bool {
    text(a) == text(b)
}

pub fn text(e: &Exp) -> String {
    let mut p = Printer::new();
    p.exp(e, false);
    p.finish().0
}

/// Split `g1 ==> g2 ==> x` into guard conjuncts and the body.
fn peel_guards(mut body: Exp, guards: &mut Vec<Exp>) -> Exp {
    loop {
        match body.kind {
            ExpKind::Binary("==>", g, x) => {
                split_and(*g, guards);
                body = *x;
            }
            _ => return body,
        }
    }
}

pub fn split_and(e: Exp, out: &mut Vec<Exp>) {
    match e.kind {
        ExpKind::Binary("&&", a, b) => {
            split_and(*a, out);
            split_and(*b, out);
        }
        _ => out.push(e),
    }
}

/// `coeffs · vars + constant`, the constant free of all vars.
struct Linear {
    coeffs: Vec<BigInt>,
    constant: Option<Exp>,
}

fn linear(e: &Exp, vars: &[String]) -> Option<Linear> {
    if !vars.iter().any(|v| e.mentions_var(v)) {
        return Some(Linear {
            coeffs: vec![BigInt::zero(); vars.len()],
            constant: Some(e.clone()),
        });
    }
    match &e.kind {
        ExpKind::Var(n) => {
            let mut coeffs = vec![BigInt::zero(); vars.len()];
            let i = vars.iter().position(|v| v == n)?;
            coeffs[i] = BigInt::one();
            Some(Linear {
                coeffs,
                constant: None,
            })
        }
        ExpKind::Binary(op @ ("+" | "-"), a, b) => {
            let la = linear(a, vars)?;
            let lb = linear(b, vars)?;
            let neg = *op == "-";
            let coeffs = la
                .coeffs
                .iter()
                .zip(&lb.coeffs)
                .map(|(x, y)| if neg { x - y } else { x + y })
                .collect();
            let constant = match (la.constant, lb.constant) {
                (None, None) => None,
                (Some(c), None) => Some(c),
                (None, Some(c)) => Some(if neg {
                    Exp::synth(ExpKind::Unary("-", Box::new(c)))
                } else {
                    c
                }),
                (Some(a), Some(b)) => Some(Exp::bin(op, a, b)),
            };
            Some(Linear { coeffs, constant })
        }
        ExpKind::Binary("*", a, b) => {
            let (k, x) = match (&a.kind, &b.kind) {
                (ExpKind::Int(k), _) => (k.clone(), b),
                (_, ExpKind::Int(k)) => (k.clone(), a),
                _ => return None,
            };
            let lx = linear(x, vars)?;
            Some(Linear {
                coeffs: lx.coeffs.iter().map(|c| c * &k).collect(),
                constant: lx
                    .constant
                    .map(|c| Exp::bin("*", Exp::synth(ExpKind::Int(k.clone())), c)),
            })
        }
        ExpKind::Unary("-", a) => {
            let la = linear(a, vars)?;
            Some(Linear {
                coeffs: la.coeffs.iter().map(|c| -c).collect(),
                constant: la
                    .constant
                    .map(|c| Exp::synth(ExpKind::Unary("-", Box::new(c)))),
            })
        }
        _ => None,
    }
}

/// Every `aloc(A, I)` in `e` whose array does not mention the bound variables but whose index
/// does. Receivers of accessibility predicates come first.
fn subscripts(e: &Exp, vars: &[String]) -> Vec<(Exp, Exp)> {
    let mut acc_first = Vec::new();
    let mut rest = Vec::new();
    e.visit(&mut |n| {
        if let ExpKind::Acc(loc, _) = &n.kind {
            if let ExpKind::Field(r, _) = &loc.kind {
                if let ExpKind::App(f, args) = &r.kind {
                    if f == "aloc" && args.len() == 2 {
                        acc_first.push((args[0].clone(), args[1].clone()));
                    }
                }
            }
        }
        if let ExpKind::App(f, args) = &n.kind {
            if f == "aloc" && args.len() == 2 {
                rest.push((args[0].clone(), args[1].clone()));
            }
        }
    });
    acc_first
        .into_iter()
        .chain(rest)
        .filter(|(a, i)| {
            !vars.iter().any(|v| a.mentions_var(v)) && vars.iter().any(|v| i.mentions_var(v))
        })
        .collect()
}

/// Replace every `aloc(A', I')` whose index equals `from` by `aloc(A', to)`.
fn replace_index(e: Exp, from: &str, to: &Exp) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::App(f, mut args) if f == "aloc" && args.len() == 2 && text(&args[1]) == from => {
            args[1] = to.clone();
            Exp {
                kind: ExpKind::App(f, args),
                span: n.span,
            }
        }
        k => Exp {
            kind: k,
            span: n.span,
        },
    })
}

fn int(v: &BigInt) -> Exp {
    Exp::synth(ExpKind::Int(v.clone()))
}

/// Find a literal bound `lo <= v && v < hi` among the guards.
fn literal_range(guards: &[Exp], v: &str) -> Option<(BigInt, BigInt)> {
    let mut lo = None;
    let mut hi = None;
    for g in guards {
        if let ExpKind::Binary(op, a, b) = &g.kind {
            match (op, &a.kind, &b.kind) {
                (&"<=", ExpKind::Int(l), ExpKind::Var(x)) if x == v => lo = Some(l.clone()),
                (&"<", ExpKind::Var(x), ExpKind::Int(h)) if x == v => hi = Some(h.clone()),
                (&"<=", ExpKind::Var(x), ExpKind::Int(h)) if x == v => hi = Some(h + 1),
                _ => {}
            }
        }
    }
    Some((lo?, hi?))
}

/// Fresh-name source for bound variables.
pub trait Fresh {
    fn fresh(&mut self, base: &str) -> String;
}

/// Build `forall vars :: guard ==> body` with re-indexing and an automatic trigger.
///
/// `body` may itself be guarded (`g ==> x`) or a nested `forall` (a `\forall*` inside a
/// per-thread contract); both are flattened into one quantifier.
pub fn quantify(fresh: &mut dyn Fresh, vars: Vec<String>, guard: Vec<Exp>, body: Exp) -> Exp {
    let mut vars = vars;
    let mut guards = guard;
    let mut body = peel_guards(body, &mut guards);
    // ∀ distributes over (separating) conjunction; quantifying each conjunct on its own lets
    // each one be re-indexed and flattened with its own nested quantifier.
    if let ExpKind::Binary("&&", _, _) = &body.kind {
        let mut parts = Vec::new();
        split_and(body, &mut parts);
        let qs: Vec<Exp> = parts
            .into_iter()
            .map(|p| quantify(fresh, vars.clone(), guards.clone(), p))
            .collect();
        return Exp::and_all(qs);
    }
    // Flatten nested universal quantifiers.
    while let ExpKind::Forall(vs, _, b) = body.kind {
        vars.extend(vs.into_iter().map(|(n, _)| n));
        body = peel_guards(*b, &mut guards);
    }
    // Drop variables the body and guards do not mention.
    vars.retain(|v| body.mentions_var(v) || guards.iter().any(|g| g.mentions_var(v)));

    // One-point rule: a guard `v == e` with e free of v.
    loop {
        let mut hit = None;
        'outer: for (gi, g) in guards.iter().enumerate() {
            if let ExpKind::Binary("==", a, b) = &g.kind {
                for (x, e) in [(a, b), (b, a)] {
                    if let ExpKind::Var(n) = &x.kind {
                        if vars.contains(n) && !vars.iter().any(|v| e.mentions_var(v)) {
                            hit = Some((gi, n.clone(), (**e).clone()));
                            break 'outer;
                        }
                    }
                }
            }
        }
        let Some((gi, v, e)) = hit else { break };
        guards.remove(gi);
        guards = guards.into_iter().map(|g| g.subst(&v, &e)).collect();
        body = body.subst(&v, &e);
        vars.retain(|x| x != &v);
    }
    // Chunk rule: a variable that only selects a chunk, `K * t + c <= e && e < K * t + c + K`
    // with `e` free of `t`, is determined by `e`: t == (e - c) / K. Substituting it keeps the
    // same set of instances and leaves a quantifier whose index can be proven injective.
    loop {
        let mut hit = None;
        'chunk: for t in &vars {
            for g1 in &guards {
                let ExpKind::Binary("<=", a, e1) = &g1.kind else {
                    continue;
                };
                if e1.mentions_var(t) {
                    continue;
                }
                let Some(la) = linear(a, std::slice::from_ref(t)) else {
                    continue;
                };
                let k = la.coeffs[0].clone();
                if !k.is_positive() {
                    continue;
                }
                let ca = la.constant.as_ref().map_or(Some(BigInt::zero()), lit);
                for g2 in &guards {
                    let ExpKind::Binary("<", e2, b) = &g2.kind else {
                        continue;
                    };
                    if text(e2) != text(e1) {
                        continue;
                    }
                    let Some(lb) = linear(b, std::slice::from_ref(t)) else {
                        continue;
                    };
                    let cb = lb.constant.as_ref().map_or(Some(BigInt::zero()), lit);
                    if lb.coeffs[0] == k && matches!((&ca, &cb), (Some(x), Some(y)) if y - x == k) {
                        let c = ca.clone().unwrap_or_default();
                        let v = Exp::bin("\\", Exp::bin("-", (**e1).clone(), int(&c)), int(&k));
                        hit = Some((t.clone(), v));
                        break 'chunk;
                    }
                }
            }
        }
        // Residue rule: `(e - t) % K == 0` with t ranging over exactly [lo, lo + K) determines
        // t == (e - lo) % K + lo (the shape a re-indexed inner quantifier leaves behind).
        if hit.is_none() {
            'residue: for t in &vars {
                let Some((lo, hi)) = literal_range(&guards, t) else {
                    continue;
                };
                for g in &guards {
                    let ExpKind::Binary("==", m, z) = &g.kind else {
                        continue;
                    };
                    if lit(z) != Some(BigInt::zero()) {
                        continue;
                    }
                    let ExpKind::Binary("%", d, k) = &m.kind else {
                        continue;
                    };
                    let Some(k) = lit(k) else { continue };
                    let ExpKind::Binary("-", e, tv) = &d.kind else {
                        continue;
                    };
                    if !matches!(&tv.kind, ExpKind::Var(n) if n == t) || e.mentions_var(t) {
                        continue;
                    }
                    if k.is_positive() && hi.clone() - lo.clone() == k {
                        let v = Exp::bin(
                            "+",
                            Exp::bin("%", Exp::bin("-", (**e).clone(), int(&lo)), int(&k)),
                            int(&lo),
                        );
                        hit = Some((t.clone(), v));
                        break 'residue;
                    }
                }
            }
        }
        let Some((t, v)) = hit else { break };
        guards = guards.into_iter().map(|g| g.subst(&t, &v)).collect();
        body = body.subst(&t, &v);
        vars.retain(|x| x != &t);
    }
    if vars.is_empty() {
        return Exp::implies(Exp::and_all(guards), body);
    }

    let whole = Exp::implies(Exp::and_all(guards.clone()), body.clone());
    let subs = subscripts(&whole, &vars);
    // A bare subscript of every variable: trigger on those terms as they are.
    let mut trig = Vec::new();
    let mut covered = vec![false; vars.len()];
    for (a, i) in &subs {
        if let ExpKind::Var(n) = &i.kind {
            if let Some(k) = vars.iter().position(|v| v == n) {
                if !covered[k] {
                    covered[k] = true;
                    trig.push(Exp::app("aloc", vec![a.clone(), i.clone()]));
                }
            }
        }
    }
    // A single receiver whose index covers every variable bare: prefer it (one term).
    if covered.iter().all(|c| *c)
        && subs
            .first()
            .is_some_and(|(_, i)| matches!(i.kind, ExpKind::Var(_)))
    {
        if vars.len() == 1 {
            return forall(vars, vec![vec![trig.swap_remove(0)]], whole);
        }
        return forall(vars, vec![trig], whole);
    }

    // Re-index through the first linear subscript.
    if let Some((_, idx)) = subs.first() {
        if let Some(lin) = linear(idx, &vars) {
            let nz: Vec<usize> = (0..vars.len())
                .filter(|k| !lin.coeffs[*k].is_zero())
                .collect();
            let c = lin.constant.clone().unwrap_or_else(|| Exp::int(0));
            let j = fresh.fresh("j");
            let jv = Exp::var(&j);
            let shifted = Exp::bin("-", jv.clone(), c.clone());
            let mut extra = Vec::new();
            let mut substs: Vec<(String, Exp)> = Vec::new();
            let ok = if nz.len() == 1 && vars.len() == 1 {
                let k = &lin.coeffs[nz[0]];
                if k.is_one() {
                    substs.push((vars[0].clone(), shifted.clone()));
                    true
                } else if (-k).is_one() {
                    substs.push((vars[0].clone(), Exp::bin("-", c.clone(), jv.clone())));
                    true
                } else if k.is_positive() {
                    extra.push(Exp::bin(
                        "==",
                        Exp::bin("%", shifted.clone(), int(k)),
                        Exp::int(0),
                    ));
                    substs.push((vars[0].clone(), Exp::bin("\\", shifted.clone(), int(k))));
                    true
                } else {
                    false
                }
            } else if nz.len() == 2 && vars.len() == 2 {
                // `K * v1 + v2 + c` with v2 ranging over [lo, lo + K): the row-major grid rule.
                let (a, b) = (nz[0], nz[1]);
                let (outer, inner) = if lin.coeffs[b].is_one() {
                    (a, b)
                } else {
                    (b, a)
                };
                let k = lin.coeffs[outer].clone();
                match literal_range(&guards, &vars[inner]) {
                    Some((lo, hi))
                        if lin.coeffs[inner].is_one()
                            && k.is_positive()
                            && hi.clone() - lo.clone() == k =>
                    {
                        let base = Exp::bin("-", shifted.clone(), int(&lo));
                        substs.push((vars[outer].clone(), Exp::bin("\\", base.clone(), int(&k))));
                        substs.push((
                            vars[inner].clone(),
                            Exp::bin("+", Exp::bin("%", base, int(&k)), int(&lo)),
                        ));
                        true
                    }
                    _ => false,
                }
            } else {
                false
            };
            if ok && k_fits(&lin) {
                let from = text(&substs.iter().fold(idx.clone(), |e, (v, r)| e.subst(v, r)));
                let mut ng: Vec<Exp> = extra;
                for g in guards {
                    ng.push(substs.iter().fold(g, |e, (v, r)| e.subst(v, r)));
                }
                let nb = substs.iter().fold(body, |e, (v, r)| e.subst(v, r));
                let ng: Vec<Exp> = ng
                    .into_iter()
                    .map(|g| replace_index(g, &from, &jv))
                    .collect();
                let nb = replace_index(nb, &from, &jv);
                let arr = subs[0].0.clone();
                let trig = Exp::app("aloc", vec![arr, jv.clone()]);
                let whole = Exp::implies(Exp::and_all(ng), nb);
                return forall(vec![j], vec![vec![trig]], whole);
            }
        }
    }
    // No rule applies: let Silicon choose triggers.
    if !trig.is_empty() && covered.iter().all(|c| *c) {
        return forall(vars, vec![trig], whole);
    }
    forall(vars, vec![], whole)
}

/// The value of a literal integer expression (`16 * 1`, `-2 + 3`).
fn lit(e: &Exp) -> Option<BigInt> {
    match &e.kind {
        ExpKind::Int(v) => Some(v.clone()),
        ExpKind::Unary("-", a) => lit(a).map(|v| -v),
        ExpKind::Binary("+", a, b) => Some(lit(a)? + lit(b)?),
        ExpKind::Binary("-", a, b) => Some(lit(a)? - lit(b)?),
        ExpKind::Binary("*", a, b) => Some(lit(a)? * lit(b)?),
        _ => None,
    }
}

fn k_fits(lin: &Linear) -> bool {
    lin.coeffs.iter().all(|c| c.to_i64().is_some())
}

fn forall(vars: Vec<String>, trig: Vec<Vec<Exp>>, body: Exp) -> Exp {
    Exp::synth(ExpKind::Forall(
        vars.into_iter().map(|v| (v, Ty::Int)).collect(),
        trig,
        Box::new(body),
    ))
}
