//! Quantification and re-indexing (`verification.md` §5.5).
//!
//! Viper rejects arithmetic in triggers, and without a trigger Silicon cannot combine
//! permission chunks whose receivers are shifted. So every quantifier is re-indexed until a
//! subscript of the bound variable is the bare variable, which then becomes the trigger.

mod extreme;
mod forall;
mod ground;
mod invert;
mod modular;
mod radix;
mod rows;
mod stride;

use crate::ast::{Exp, ExpKind};
use crate::print::Printer;
use forall::{forall, trigger_term_ok};
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use stride::{expand_strides, wrap_strides};
pub use stride::{stride_domain, wrap_index, STRIDE_DOMAIN_HEAD, STRIDE_FN};

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
pub(super) struct Linear {
    pub(super) coeffs: Vec<BigInt>,
    pub(super) constant: Option<Exp>,
}

pub(super) fn linear(e: &Exp, vars: &[String]) -> Option<Linear> {
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
            Some(Linear { coeffs, constant: None })
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
                (None, Some(c)) => {
                    Some(if neg { Exp::synth(ExpKind::Unary("-", Box::new(c))) } else { c })
                }
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
                constant: la.constant.map(|c| Exp::synth(ExpKind::Unary("-", Box::new(c)))),
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

/// The first `Some` of `f(t, lo, e, hi)` over the variables `t` (in order) and the pairs of
/// guards `lo <= e` and `e < hi` that bound the same `e` (compared as text): the windows the
/// chunk rules of `simplify_quant` look for.
fn first_window<T>(
    vars: &[String],
    guards: &[Exp],
    mut f: impl FnMut(&String, &Exp, &Exp, &Exp) -> Option<T>,
) -> Option<T> {
    for t in vars {
        for g1 in guards {
            let ExpKind::Binary("<=", lo, e) = &g1.kind else {
                continue;
            };
            for g2 in guards {
                let ExpKind::Binary("<", e2, hi) = &g2.kind else {
                    continue;
                };
                if text(e2) != text(e) {
                    continue;
                }
                if let Some(r) = f(t, lo, e, hi) {
                    return Some(r);
                }
            }
        }
    }
    None
}

/// Replace every `aloc(A', I')` whose index equals `from` by `aloc(A', to)`.
fn replace_index(e: Exp, from: &str, to: &Exp) -> Exp {
    map_aloc_index(e, |i| if text(&i) == from { to.clone() } else { i })
}

/// Every `aloc(A, I)` in `e` as `aloc(A, f(I))`.
fn map_aloc_index(e: Exp, mut f: impl FnMut(Exp) -> Exp) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::App(name, mut args) if name == "aloc" && args.len() == 2 => {
            let i = args.pop().unwrap_or_else(|| Exp::int(0));
            args.push(f(i));
            Exp { kind: ExpKind::App(name, args), span: n.span }
        }
        k => Exp { kind: k, span: n.span },
    })
}

/// Replace every sub-expression whose text is `from` by `to` (the re-indexed cell also occurs
/// outside subscripts, e.g. in a tiling guard `t + i * N < T`).
fn replace_term(e: Exp, from: &str, to: &Exp) -> Exp {
    if text(&e) == from {
        return to.clone();
    }
    e.map(&mut |n| {
        if text(&n) == from {
            to.clone()
        } else {
            n
        }
    })
}

fn int(v: &BigInt) -> Exp {
    Exp::synth(ExpKind::Int(v.clone()))
}

/// Find a literal bound `lo <= v && v < hi` among the guards.
/// `(lo, hi)` of guards `lo <= v` and `v < hi` with bounds free of the variables.
fn symbolic_range(guards: &[Exp], v: &str, vars: &[String]) -> Option<(Exp, Exp)> {
    let free = |e: &Exp| !vars.iter().any(|x| e.mentions_var(x));
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == v);
    let lo = guards.iter().find_map(|g| match &g.kind {
        ExpKind::Binary("<=", lo, x) if is_v(x) && free(lo) => Some((**lo).clone()),
        _ => None,
    })?;
    let hi = guards.iter().find_map(|g| match &g.kind {
        ExpKind::Binary("<", x, hi) if is_v(x) && free(hi) => Some((**hi).clone()),
        _ => None,
    })?;
    Some((lo, hi))
}

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

/// A literal start `lo <= v` and a symbolic end `v < e` (or `v <= e`) of `v`'s range among the
/// guards: `lo` and the condition `e <= lo + k` (`e < lo + k`) under which the range is at
/// most `k` wide, so that `K * u + v` determines `u` and `v`.
fn symbolic_window(guards: &[Exp], v: &str, vars: &[String], k: &BigInt) -> Option<(BigInt, Exp)> {
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == v);
    let lo = guards.iter().find_map(|g| match &g.kind {
        ExpKind::Binary("<=", l, x) if is_v(x) => lit(l),
        _ => None,
    })?;
    let end = guards.iter().find_map(|g| match &g.kind {
        ExpKind::Binary(op @ ("<" | "<="), x, e)
            if is_v(x) && !vars.iter().any(|u| e.mentions_var(u)) =>
        {
            Some((*op, (**e).clone()))
        }
        _ => None,
    })?;
    let top = int(&(lo.clone() + k));
    let cond = match end {
        ("<", e) => Exp::bin("<=", e, top),
        (_, e) => Exp::bin("<", e, top),
    };
    Some((lo, cond))
}

/// Fresh-name source for bound variables.
pub trait Fresh {
    fn fresh(&mut self, base: &str) -> String;
    /// Called when the output uses the stride function (`STRIDE_FN`), so that the encoder
    /// emits its definition.
    fn uses_stride(&mut self) {}
    /// Remember that the quantifier printed as `key` is a re-indexing of `forall vars ::
    /// guards ==> body`: an enclosing quantifier that flattens it re-indexes all the variables
    /// together (a grid's blocks around a block's threads).
    fn record(&mut self, _key: String, _original: Original) {}
    /// The quantifier `key` was re-indexed from, if it was.
    fn original(&self, _key: &str) -> Option<Original> {
        None
    }
}

/// A quantifier before re-indexing: its variables, guards and body.
pub type Original = (Vec<String>, Vec<Exp>, Exp);

/// Build `forall vars :: guard ==> body` with re-indexing and an automatic trigger.
///
/// `body` may itself be guarded (`g ==> x`) or a nested `forall` (a `\forall*` inside a
/// per-thread contract); both are flattened into one quantifier.
pub fn quantify(fresh: &mut dyn Fresh, vars: Vec<String>, guard: Vec<Exp>, body: Exp) -> Exp {
    let mut vars = vars;
    // The re-indexing rules read subscripts as arithmetic.
    let mut guards: Vec<Exp> = guard.into_iter().map(expand_strides).collect();
    let mut body = peel_guards(expand_strides(body), &mut guards);
    // ∀ distributes over (separating) conjunction; quantifying each conjunct on its own lets
    // each one be re-indexed and flattened with its own nested quantifier.
    if let ExpKind::Binary("&&", _, _) = &body.kind {
        let mut parts = Vec::new();
        split_and(body, &mut parts);
        let qs: Vec<Exp> =
            parts.into_iter().map(|p| quantify(fresh, vars.clone(), guards.clone(), p)).collect();
        return Exp::and_all(qs);
    }
    // Flatten nested universal quantifiers (one that was re-indexed, as it was written).
    while matches!(body.kind, ExpKind::Forall(..)) {
        // Only where all the variables together are a mixed radix: other rules work on the
        // re-indexed form.
        if let Some((ovars, oguards, obody)) = fresh.original(&text(&body)) {
            let mut v2 = vars.clone();
            v2.extend(ovars);
            let mut g2 = guards.clone();
            g2.extend(oguards);
            let b2 = peel_guards(obody, &mut g2);
            if radix::radix_applies(&v2, &g2, &b2) {
                (vars, guards, body) = (v2, g2, b2);
                continue;
            }
        }
        let ExpKind::Forall(vs, _, b) = body.kind else { break };
        vars.extend(vs.into_iter().map(|(n, _)| n));
        body = peel_guards(*b, &mut guards);
    }
    // Drop variables the body and guards do not mention.
    vars.retain(|v| body.mentions_var(v) || guards.iter().any(|g| g.mentions_var(v)));

    // One-point rule: a guard `v == e` with e free of v. An `e` free of every variable first;
    // then one naming others (`r == t + i * 2`, what `ground` names in an inner quantifier that
    // an outer one then binds `t` and `i` of: the rules below re-index the subscript again).
    loop {
        let mut hit = None;
        'outer: for others in [false, true] {
            for (gi, g) in guards.iter().enumerate() {
                if let ExpKind::Binary("==", a, b) = &g.kind {
                    for (x, e) in [(a, b), (b, a)] {
                        if let ExpKind::Var(n) = &x.kind {
                            let free = if others {
                                !e.mentions_var(n)
                            } else {
                                !vars.iter().any(|v| e.mentions_var(v))
                            };
                            if vars.contains(n) && free {
                                hit = Some((gi, n.clone(), (**e).clone()));
                                break 'outer;
                            }
                        }
                    }
                }
            }
        }
        let Some((gi, v, e)) = hit else { break };
        // `v`'s range was not empty: said first, it keeps a division by a size defined
        // (`i % (blockDim * gridDim)` for `gid` in `0 .. gridDim * blockDim`).
        let nonempty = symbolic_range(&guards, &v, &vars)
            .filter(|_| divides_by_symbol(&e))
            .map(|(lo, hi)| Exp::bin("<", lo, hi));
        guards.remove(gi);
        if let Some(n) = nonempty {
            guards.insert(0, n);
        }
        guards = guards.into_iter().map(|g| g.subst(&v, &e)).collect();
        body = body.subst(&v, &e);
        vars.retain(|x| x != &v);
    }
    // Chunk rule: a variable that only selects a chunk, `K * t + c <= e && e < K * t + c + K`
    // with `e` free of `t`, is determined by `e`: t == (e - c) / K. Substituting it keeps the
    // same set of instances and leaves a quantifier whose index can be proven injective.
    // (Each rule gives the variable, its value, and a guard `0 < K` it needs, if any.)
    loop {
        let mut hit = first_window(&vars, &guards, |t, a, e1, b| {
            if e1.mentions_var(t) {
                return None;
            }
            let la = linear(a, std::slice::from_ref(t))?;
            let k = la.coeffs[0].clone();
            if !k.is_positive() {
                return None;
            }
            let ca = la.constant.as_ref().map_or(Some(BigInt::zero()), lit);
            let lb = linear(b, std::slice::from_ref(t))?;
            let cb = lb.constant.as_ref().map_or(Some(BigInt::zero()), lit);
            if lb.coeffs[0] == k && matches!((&ca, &cb), (Some(x), Some(y)) if y - x == k) {
                let c = ca.clone().unwrap_or_default();
                let v = Exp::bin("\\", Exp::bin("-", e1.clone(), int(&c)), int(&k));
                return Some((t.clone(), v, None));
            }
            None
        });
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
                    if e.mentions_var(t) {
                        continue;
                    }
                    // `t`, or `t + c` with c free of the variables (a shifted cell `t + c + K * i`).
                    let shift = match linear(tv, std::slice::from_ref(t)) {
                        Some(l) if l.coeffs[0].is_one() => l.constant,
                        _ => continue,
                    };
                    // The shift may name the other variables (a block's `b * 64 + t` over
                    // (b, t, j)): t is then a function of them, substituted like any other.
                    if shift.as_ref().is_some_and(|c| c.mentions_var(t)) {
                        continue;
                    }
                    if k.is_positive() && hi.clone() - lo.clone() == k {
                        let base = match shift {
                            Some(c) => Exp::bin("-", (**e).clone(), c),
                            None => (**e).clone(),
                        };
                        let v = Exp::bin(
                            "+",
                            Exp::bin("%", Exp::bin("-", base, int(&lo)), int(&k)),
                            int(&lo),
                        );
                        hit = Some((t.clone(), v, None));
                        break 'residue;
                    }
                }
            }
        }
        // Symbolic chunk rule: `K * t <= e && e < (t + 1) * K` (any spelling of the products)
        // with a symbolic K: t == e \\ K, when 0 < K (the chunk is empty otherwise). With a
        // range `lo <= t < hi`, the implied `K * lo <= e && e < K * hi` joins the guard: the
        // same instances, and the bounds of `e` without the nonlinear step Z3 does not take.
        let mut implied = Vec::new();
        if hit.is_none() {
            hit = first_window(&vars, &guards, |t, a, e1, b| {
                if vars.iter().any(|v| e1.mentions_var(v) && v == t) {
                    return None;
                }
                let Some((k, None)) = sym_affine(a, t, &vars) else {
                    return None;
                };
                let (k2, c2) = sym_affine(b, t, &vars)?;
                let c2 = c2?;
                if text(&k2) == text(&k) && text(&c2) == text(&k) {
                    if let Some((lo, hi)) = symbolic_range(&guards, t, &vars) {
                        implied.push(Exp::bin("<=", Exp::bin("*", k.clone(), lo), e1.clone()));
                        implied.push(Exp::bin("<", e1.clone(), Exp::bin("*", k.clone(), hi)));
                    }
                    let positive = Exp::bin("<", Exp::int(0), k.clone());
                    return Some((t.clone(), Exp::bin("\\", e1.clone(), k), Some(positive)));
                }
                None
            });
        }
        // Shifted chunk rule: `L <= e - K * t && e - K * t < L + K` (what re-indexing an inner
        // `c` over [L, L + K) in a cell `K * t + c` leaves for an outer variable t) determines
        // t == (e - L) \ K. A symbolic K adds the guard `0 < K` (the window is empty otherwise).
        if hit.is_none() {
            hit = first_window(&vars, &guards, |t, lo, d1, hi| {
                if lo.mentions_var(t) || hi.mentions_var(t) {
                    return None;
                }
                let (k, rest) = minus_scaled(d1, t, &vars)?;
                let width_ok = match (lit(lo), lit(hi), lit(&k)) {
                    (Some(l), Some(h), Some(kk)) => kk.is_positive() && h - l == kk,
                    _ => stride_range_text(lo, hi, &k),
                };
                if !width_ok {
                    return None;
                }
                let base = if lit(lo).is_some_and(|z| z.is_zero()) {
                    rest
                } else {
                    Exp::bin("-", rest, lo.clone())
                };
                // With a range `lo_t <= t < hi_t`, the implied `K * lo_t <= e - L < K * hi_t`
                // joins the guard, as in the chunk rule above.
                if let Some((lo_t, hi_t)) = symbolic_range(&guards, t, &vars) {
                    implied.push(Exp::bin("<=", Exp::bin("*", k.clone(), lo_t), base.clone()));
                    implied.push(Exp::bin("<", base.clone(), Exp::bin("*", k.clone(), hi_t)));
                }
                let positive = lit(&k).is_none().then(|| Exp::bin("<", Exp::int(0), k.clone()));
                Some((t.clone(), Exp::bin("\\", base, k), positive))
            });
        }
        // A variable the guards determine without a syntactic window (see `invert`).
        if hit.is_none() {
            hit = invert::determined(&vars, &guards).map(|(t, v)| (t, v, None));
        }
        let Some((t, v, positive)) = hit else { break };
        guards = guards.into_iter().map(|g| g.subst(&t, &v)).collect();
        if let Some(p) = positive {
            guards.insert(0, p);
        }
        guards.append(&mut implied);
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
        && subs.first().is_some_and(|(_, i)| matches!(i.kind, ExpKind::Var(_)))
    {
        if vars.len() == 1 {
            return ground::triggered(fresh, vars, vec![trig.swap_remove(0)], whole);
        }
        return ground::triggered(fresh, vars, trig, whole);
    }

    // Re-index through the first linear subscript.
    if let Some((_, idx)) = subs.first() {
        if let Some(lin) = linear(idx, &vars) {
            let nz: Vec<usize> = (0..vars.len()).filter(|k| !lin.coeffs[*k].is_zero()).collect();
            let c = lin.constant.clone().unwrap_or_else(|| Exp::int(0));
            let j = fresh.fresh("j");
            let jv = Exp::var(&j);
            let shifted = Exp::bin("-", jv.clone(), c.clone());
            let mut extra = Vec::new();
            let mut substs: Vec<(String, Exp)> = Vec::new();
            // A condition under which the re-indexing keeps every instance (see the grid rule).
            let mut window: Option<Exp> = None;
            let ok = if nz.len() == 1 && vars.len() == 1 {
                let k = &lin.coeffs[nz[0]];
                if k.is_one() {
                    substs.push((vars[0].clone(), shifted.clone()));
                    true
                } else if (-k).is_one() {
                    substs.push((vars[0].clone(), Exp::bin("-", c.clone(), jv.clone())));
                    true
                } else if k.is_positive() {
                    extra.push(Exp::bin("==", Exp::bin("%", shifted.clone(), int(k)), Exp::int(0)));
                    substs.push((vars[0].clone(), Exp::bin("\\", shifted.clone(), int(k))));
                    true
                } else {
                    false
                }
            } else if let Some(digits) = radix::mixed_radix(&lin, &vars, &guards) {
                // Every variable a digit of the index in a mixed radix (`(by * 16 + ty) * 64
                // + bx * 16 + tx` over a 2-D grid of 2-D blocks): each one is read back from
                // `j`, and the guards, substituted, keep exactly the instances.
                let base = Exp::bin("-", shifted.clone(), digits.offset);
                for d in &digits.digits {
                    let q = if d.stride.is_one() {
                        base.clone()
                    } else {
                        Exp::bin("\\", base.clone(), int(&d.stride))
                    };
                    let q = match &d.modulus {
                        Some(m) => Exp::bin("%", q, int(m)),
                        None => q,
                    };
                    let v = match d.mirrored {
                        true => Exp::bin("-", int(&d.lo), q),
                        false => Exp::bin("+", q, int(&d.lo)),
                    };
                    substs.push((vars[d.var].clone(), v));
                }
                true
            } else if nz.len() == 2 && vars.len() == 2 {
                // `K * v1 + v2 + c` with v2 ranging over [lo, lo + K): the row-major grid rule.
                let (a, b) = (nz[0], nz[1]);
                let (outer, inner) = if lin.coeffs[b].abs().is_one() { (a, b) } else { (b, a) };
                let k = lin.coeffs[outer].clone();
                // The inner range exactly K wide; or from a literal `lo` to a symbolic end
                // (`r < i`, a loop's progress), which is at most K wide where `window` holds.
                let range = match literal_range(&guards, &vars[inner]) {
                    Some((lo, hi)) if hi.clone() - lo.clone() == k => Some(lo),
                    Some(_) => None,
                    None => symbolic_window(&guards, &vars[inner], &vars, &k).map(|(lo, w)| {
                        window = Some(w);
                        lo
                    }),
                };
                match range {
                    Some(lo) if lin.coeffs[inner].is_one() && k.is_positive() => {
                        let base = Exp::bin("-", shifted.clone(), int(&lo));
                        substs.push((vars[outer].clone(), Exp::bin("\\", base.clone(), int(&k))));
                        substs.push((
                            vars[inner].clone(),
                            Exp::bin("+", Exp::bin("%", base, int(&k)), int(&lo)),
                        ));
                        true
                    }
                    // `K * v1 + c - v2` (a mirrored block, `b * 64 + 63 - t`): the digit
                    // `top - v2` counts up, with `top = lo + K - 1`.
                    Some(lo)
                        if (-&lin.coeffs[inner]).is_one()
                            && k.is_positive()
                            && window.is_none() =>
                    {
                        let top = lo + &k - 1;
                        let base = Exp::bin("+", shifted.clone(), int(&top));
                        substs.push((vars[outer].clone(), Exp::bin("\\", base.clone(), int(&k))));
                        substs.push((
                            vars[inner].clone(),
                            Exp::bin("-", int(&top), Exp::bin("%", base, int(&k))),
                        ));
                        true
                    }
                    _ => false,
                }
            } else {
                false
            };
            if ok && k_fits(&lin) {
                let original = (vars.clone(), guards.clone(), body.clone());
                let from = text(&substs.iter().fold(idx.clone(), |e, (v, r)| e.subst(v, r)));
                let mut ng: Vec<Exp> = extra;
                for g in guards {
                    ng.push(substs.iter().fold(g, |e, (v, r)| e.subst(v, r)));
                }
                let nb = substs.iter().fold(body, |e, (v, r)| e.subst(v, r));
                let ng: Vec<Exp> = ng.into_iter().map(|g| replace_index(g, &from, &jv)).collect();
                let nb = replace_index(nb, &from, &jv);
                let arr = subs[0].0.clone();
                let trig = Exp::app("aloc", vec![arr, jv.clone()]);
                let cells = Exp::implies(Exp::and_all(ng), nb);
                let q = forall(vec![j], vec![vec![trig]], cells);
                return match window {
                    None => {
                        fresh.record(text(&q), original);
                        q
                    }
                    // Where the window may not hold, the quantifier as it was.
                    Some(w) => {
                        let not_w = Exp::synth(ExpKind::Unary("!", Box::new(w.clone())));
                        Exp::and(
                            Exp::implies(w, q),
                            Exp::implies(not_w, forall(vars, vec![], whole)),
                        )
                    }
                };
            }
        }
    }
    // A neighbour's cell `E % K` (see `modular`).
    if let Some((cond, q)) = modular::modular(fresh, &vars, &guards, &body, &subs) {
        return match cond {
            None => q,
            // Where the window may not hold, the quantifier as it was (Silicon's triggers).
            Some(c) => {
                let not_c = Exp::synth(ExpKind::Unary("!", Box::new(c.clone())));
                Exp::and(Exp::implies(c, q), Exp::implies(not_c, forall(vars, vec![], whole)))
            }
        };
    }
    // Symbolic row-major grid: `K * v1 + v2 + c` with v2 ranging over [lo, lo + K).
    if let Some(q) = symbolic_grid(fresh, &vars, &guards, &body, &subs) {
        return q;
    }
    // A cell `A[E][c]` whose row E combines some of the variables (see `rows`).
    if !covered.iter().all(|c| *c) {
        if let Some(q) = rows::rows(fresh, &vars, &guards, &body, &subs) {
            return q;
        }
    }
    // No rule applies. A subscript with a symbolic stride that mentions every variable becomes
    // `aloc(A, vct_stride(c, v, k))`, the form concrete accesses have, and is the trigger.
    if trig.is_empty() || !covered.iter().all(|c| *c) {
        let wrapped = wrap_strides(whole.clone());
        let mut strided = None;
        wrapped.visit(&mut |n| {
            if let ExpKind::App(f, args) = &n.kind {
                if f == "aloc" && args.len() == 2 && strided.is_none() {
                    let (a, i) = (&args[0], &args[1]);
                    if matches!(&i.kind, ExpKind::App(g, _) if g == STRIDE_FN)
                        && !vars.iter().any(|v| a.mentions_var(v))
                        && vars.iter().all(|v| i.mentions_var(v))
                    {
                        strided = Some(n.clone());
                    }
                }
            }
        });
        if let Some(t) = strided {
            fresh.uses_stride();
            return forall(vars, vec![vec![t]], wrapped);
        }
    }
    // Let Silicon choose triggers.
    if !trig.is_empty() && covered.iter().all(|c| *c) {
        return ground::triggered(fresh, vars, trig, whole);
    }
    // A bound without a subscript (arithmetic only) is never instantiated: its instance at the
    // extreme point of the guards goes with it (see `extreme`).
    if subs.is_empty() {
        if let Some(inst) = extreme::instance(&vars, &guards, &body) {
            return Exp::and(forall(vars, vec![], whole), inst);
        }
    }
    forall(vars, vec![], whole)
}

/// `e` divides by something other than a literal (`%` or `\\`).
fn divides_by_symbol(e: &Exp) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if let ExpKind::Binary("%" | "\\", _, d) = &x.kind {
            found |= !matches!(d.kind, ExpKind::Int(_));
        }
    });
    found
}

/// `d` as `rest - K * t` (t's only occurrence, K free of `vars`): (K, rest).
fn minus_scaled(d: &Exp, t: &str, vars: &[String]) -> Option<(Exp, Exp)> {
    let mut parts = Vec::new();
    summands(d, false, &mut parts);
    let free = |e: &Exp| !vars.iter().any(|v| e.mentions_var(v));
    let is_t = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == t);
    let mut k = None;
    let mut rest: Option<Exp> = None;
    for (neg, p) in parts {
        if p.mentions_var(t) {
            let ExpKind::Binary("*", a, b) = &p.kind else {
                return None;
            };
            let kk = if is_t(a) && free(b) {
                (**b).clone()
            } else if is_t(b) && free(a) {
                (**a).clone()
            } else {
                return None;
            };
            if !neg || k.is_some() {
                return None;
            }
            k = Some(kk);
        } else {
            rest = Some(match (rest, neg) {
                (None, false) => p,
                (None, true) => Exp::bin("-", Exp::int(0), p),
                (Some(r), false) => Exp::bin("+", r, p),
                (Some(r), true) => Exp::bin("-", r, p),
            });
        }
    }
    Some((k?, rest.unwrap_or_else(|| Exp::int(0))))
}

/// `e` as `K * t + c` with a symbolic `K` free of `vars` (products `t * K`, `K * t`,
/// `(t + 1) * K`, … distributed): (K, c), `c` absent when there is no constant part.
fn sym_affine(e: &Exp, t: &str, vars: &[String]) -> Option<(Exp, Option<Exp>)> {
    let free = |x: &Exp| !vars.iter().any(|v| x.mentions_var(v));
    let is_t = |x: &Exp| matches!(&x.kind, ExpKind::Var(n) if n == t);
    match &e.kind {
        ExpKind::Binary("*", a, b) => {
            let (x, k) = if free(b) && !free(a) {
                (a, b)
            } else if free(a) && !free(b) {
                (b, a)
            } else {
                return None;
            };
            if lit(k).is_some() {
                return None;
            }
            if is_t(x) {
                return Some(((**k).clone(), None));
            }
            // (t + c) * K with a literal c: K * t + c * K (only c == 1 is spelled as K).
            if let ExpKind::Binary("+", p, q) = &x.kind {
                if is_t(p) && lit(q).is_some_and(|v| v.is_one()) {
                    return Some(((**k).clone(), Some((**k).clone())));
                }
            }
            None
        }
        ExpKind::Binary("+", a, b) if free(b) => {
            let (k, c) = sym_affine(a, t, vars)?;
            match c {
                None => Some((k, Some((**b).clone()))),
                Some(_) => None,
            }
        }
        _ => None,
    }
}

/// `hi` is the text of `lo + k` (or of `k` when `lo` is 0).
fn stride_range_text(lo: &Exp, hi: &Exp, k: &Exp) -> bool {
    let (ht, kt) = (text(hi), text(k));
    (lit(lo).is_some_and(|z| z.is_zero()) && ht == kt)
        || ht == text(&Exp::bin("+", lo.clone(), k.clone()))
        || ht == text(&Exp::bin("+", k.clone(), lo.clone()))
}

/// One summand of an index: `sign * term`.
fn summands(e: &Exp, neg: bool, out: &mut Vec<(bool, Exp)>) {
    match &e.kind {
        ExpKind::Binary("+", a, b) => {
            summands(a, neg, out);
            summands(b, neg, out);
        }
        ExpKind::Binary("-", a, b) => {
            summands(a, neg, out);
            summands(b, !neg, out);
        }
        _ => out.push((neg, e.clone())),
    }
}

/// The lower bound `lo` of `v` when the guards hold `lo <= v` and `v < hi` with `hi` the text of
/// `lo + k` (or `k` itself when `lo` is 0): `v` then ranges over exactly `[lo, lo + k)`.
fn stride_range(guards: &[Exp], v: &str, k: &Exp) -> Option<Exp> {
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(x) if x == v);
    let los: Vec<&Exp> = guards
        .iter()
        .filter_map(|g| match &g.kind {
            ExpKind::Binary("<=", a, b) if is_v(b) => Some(&**a),
            ExpKind::Binary(">=", a, b) if is_v(a) => Some(&**b),
            _ => None,
        })
        .collect();
    let his: Vec<String> = guards
        .iter()
        .filter_map(|g| match &g.kind {
            ExpKind::Binary("<", a, b) if is_v(a) => Some(text(b)),
            ExpKind::Binary(">", a, b) if is_v(b) => Some(text(a)),
            _ => None,
        })
        .collect();
    let kt = text(k);
    los.into_iter()
        .find(|lo| {
            let lt = text(lo);
            let zero = lit(lo).is_some_and(|z| z.is_zero());
            his.iter().any(|h| {
                (zero && *h == kt)
                    || *h == text(&Exp::bin("+", (*lo).clone(), k.clone()))
                    || *h == text(&Exp::bin("+", k.clone(), (*lo).clone()))
                    || *h == format!("{lt} + {kt}")
            })
        })
        .cloned()
}

/// Re-indexing for a receiver `K * v1 + v2 + c` over two variables where the stride `K` is
/// symbolic (a linearized matrix `g[w * r + c]`, a tiled cell `t + i * N`) and `v2` ranges over
/// exactly `[lo, lo + K)`. The map (v1, v2) ↦ j is then a bijection onto the integers when
/// `K > 0` (and the domain is empty otherwise), with inverse `v1 = (j - c - lo) \ K`,
/// `v2 = (j - c - lo) % K + lo`. Quantifying over `j` makes the receiver injective by
/// construction, so Silicon needs no non-linear reasoning, and `aloc(A, j)` is a trigger. The
/// guard starts with `0 < K`, which keeps the divisions well-defined.
fn symbolic_grid(
    fresh: &mut dyn Fresh,
    vars: &[String],
    guards: &[Exp],
    body: &Exp,
    subs: &[(Exp, Exp)],
) -> Option<Exp> {
    if vars.len() != 2 {
        return None;
    }
    let (arr, idx) = subs.first()?;
    let mut parts = Vec::new();
    summands(idx, false, &mut parts);
    let is_var = |e: &Exp| match &e.kind {
        ExpKind::Var(n) => vars.iter().position(|v| v == n),
        _ => None,
    };
    let free = |e: &Exp| !vars.iter().any(|v| e.mentions_var(v));
    let mut unit = None;
    let mut scaled = None;
    let mut constant: Vec<(bool, Exp)> = Vec::new();
    for (neg, t) in parts {
        if let Some(k) = is_var(&t) {
            if neg || unit.is_some() {
                return None;
            }
            unit = Some(k);
        } else if let ExpKind::Binary("*", a, b) = &t.kind {
            let (k, v) = match (is_var(a), is_var(b)) {
                (Some(v), None) if free(b) => ((**b).clone(), v),
                (None, Some(v)) if free(a) => ((**a).clone(), v),
                _ if free(&t) => {
                    constant.push((neg, t.clone()));
                    continue;
                }
                _ => return None,
            };
            if neg || scaled.is_some() {
                return None;
            }
            scaled = Some((k, v));
        } else if free(&t) {
            constant.push((neg, t));
        } else {
            return None;
        }
    }
    let (inner, (k, outer)) = (unit?, scaled?);
    if inner == outer {
        return None;
    }
    let lo = stride_range(guards, &vars[inner], &k)?;
    let j = fresh.fresh("j");
    let jv = Exp::var(&j);
    let mut base = jv.clone();
    for (neg, c) in &constant {
        base = Exp::bin(if *neg { "+" } else { "-" }, base, c.clone());
    }
    let lo_zero = lit(&lo).is_some_and(|z| z.is_zero());
    if !lo_zero {
        base = Exp::bin("-", base, lo.clone());
    }
    let v_outer = Exp::bin("\\", base.clone(), k.clone());
    let v_inner = if lo_zero {
        Exp::bin("%", base.clone(), k.clone())
    } else {
        Exp::bin("+", Exp::bin("%", base.clone(), k.clone()), lo)
    };
    let substs = [(vars[outer].clone(), v_outer), (vars[inner].clone(), v_inner)];
    let sub = |e: Exp| substs.iter().fold(e, |e, (v, r)| e.subst(v, r));
    let from = text(&sub(idx.clone()));
    // With a range `lo_o <= v1 < hi_o` of the outer variable, the cell lies in
    // `[K * lo_o, K * hi_o)` (shifted as `base` is): a consequence of the guards, stated because
    // reaching it takes the nonlinear step Z3 does not take (`K * v1 + v2 < K * hi_o`).
    let implied = symbolic_range(guards, &vars[outer], vars).map(|(lo_o, hi_o)| {
        [
            Exp::bin("<=", Exp::bin("*", k.clone(), lo_o), base.clone()),
            Exp::bin("<", base.clone(), Exp::bin("*", k.clone(), hi_o)),
        ]
    });
    let mut ng = vec![Exp::bin("<", Exp::int(0), k.clone())];
    ng.extend(guards.iter().cloned().map(|g| replace_term(sub(g), &from, &jv)));
    ng.extend(implied.into_iter().flatten());
    let nb = replace_term(sub(body.clone()), &from, &jv);
    let trig = Exp::app("aloc", vec![arr.clone(), jv.clone()]);
    Some(forall(vec![j], vec![vec![trig]], Exp::implies(Exp::and_all(ng), nb)))
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
