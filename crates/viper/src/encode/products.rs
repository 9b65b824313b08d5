//! Products of two sizes (`n * n`, `rows * cols`, `alen(a) * m`) as applications of the stride
//! function, `vct_stride(0, n, n)`.
//!
//! A matrix kernel states `\pointer_length(C) == n * n` and writes `C[row * n + col]`; every
//! access then asks Silicon for `col + row * n < n * n`, which is non-linear in `n` and beyond
//! Z3 whenever `n` is symbolic. As applications of one function, the subscript and the size
//! meet in the stride domain's bound axiom (`c < k && v < w` gives `c + v * k < w * k`), which
//! its multi-pattern instantiates on exactly those pairs. The value is unchanged (the
//! definition axiom), so this only adds facts Silicon could not find.
//!
//! Only products of two variables or array lengths, none of them bound by a quantifier of the
//! expression: a product over a bound variable would offer Silicon a new trigger term and
//! change which instances its quantifier gets.

use super::quant::STRIDE_FN;
use crate::ast::{Exp, ExpKind, Program};

/// Rewrite every product of two sizes in the program; whether any was rewritten (the caller
/// then declares the stride domain).
pub(super) fn wrap_sizes(prog: &mut Program) -> bool {
    let mut any = false;
    // Reals (floats, fractions) are no sizes: the stride function is over integers. By name
    // across the program: a name that is a real anywhere is left alone everywhere.
    let reals = real_names(prog);
    let mut exp = |e: &mut Exp| {
        let mut bound = binders(e);
        bound.extend(reals.iter().cloned());
        let old = std::mem::replace(e, Exp::int(0));
        *e = old.map(&mut |n| match n.kind {
            ExpKind::Binary("*", a, b) if size(&a, &bound) && size(&b, &bound) => {
                any = true;
                Exp {
                    kind: ExpKind::App(STRIDE_FN.into(), vec![Exp::int(0), *a, *b]),
                    span: n.span,
                }
            }
            kind => Exp { kind, span: n.span },
        });
    };
    prog.exps_mut(&mut exp);
    any
}

/// The names of the program's variables of type `Perm` (parameters, results, locals).
fn real_names(prog: &Program) -> Vec<String> {
    use crate::ast::{StmtKind, Ty};
    let mut out: Vec<String> = Vec::new();
    let mut add = |vs: &[(String, Ty)]| {
        out.extend(vs.iter().filter(|(_, t)| *t == Ty::Perm).map(|(n, _)| n.clone()))
    };
    for f in &prog.functions {
        add(&f.params);
    }
    for m in &prog.methods {
        add(&m.params);
        add(&m.returns);
        fn locals(ss: &[crate::ast::Stmt], out: &mut Vec<(String, Ty)>) {
            for s in ss {
                match &s.kind {
                    StmtKind::VarDecl(n, t) => out.push((n.clone(), t.clone())),
                    StmtKind::If(_, a, b) => {
                        locals(a, out);
                        locals(b, out);
                    }
                    StmtKind::While(_, _, b) | StmtKind::Package(_, b) => locals(b, out),
                    _ => {}
                }
            }
        }
        let mut ls = Vec::new();
        locals(m.body.as_deref().unwrap_or_default(), &mut ls);
        add(&ls);
    }
    out
}

/// The variables some quantifier or `let` of `e` binds.
fn binders(e: &Exp) -> Vec<String> {
    let mut out = Vec::new();
    e.visit(&mut |n| match &n.kind {
        ExpKind::Forall(vs, _, _) | ExpKind::Exists(vs, _, _) => {
            out.extend(vs.iter().map(|(v, _)| v.clone()))
        }
        ExpKind::Let(v, _, _) => out.push(v.clone()),
        _ => {}
    });
    out
}

/// A variable that no quantifier binds, or the length of such an array.
fn size(e: &Exp, bound: &[String]) -> bool {
    match &e.kind {
        ExpKind::Var(v) => !bound.contains(v),
        ExpKind::App(f, args) if f == "alen" => args.iter().all(|a| size(a, bound)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Contract, Method, MethodKind, Origin, Ty};

    fn method(pre: Exp) -> Program {
        let mut p = Program::default();
        p.methods.push(Method {
            name: "m".into(),
            params: vec![],
            returns: vec![],
            pres: vec![Contract { exp: pre, origin: Origin::synthetic() }],
            posts: vec![],
            body: None,
            kind: MethodKind::Pvl,
            span: None,
        });
        p
    }

    #[test]
    fn a_size_product_becomes_a_stride_and_a_bound_one_stays() {
        let nn = Exp::bin("*", Exp::var("n"), Exp::var("n"));
        let mut p = method(Exp::bin("==", Exp::app("alen", vec![Exp::var("a")]), nn.clone()));
        assert!(wrap_sizes(&mut p));
        assert_eq!(
            crate::print::exp_text(&p.methods[0].pres[0].exp),
            "alen(a) == vct_stride(0, n, n)"
        );
        // `i * n` under `forall i` stays arithmetic: it would be a new trigger term.
        let body = Exp::bin("<", Exp::bin("*", Exp::var("i"), Exp::var("n")), nn);
        let q =
            Exp::new(ExpKind::Forall(vec![("i".into(), Ty::Int)], vec![], Box::new(body)), None);
        let mut p = method(q);
        assert!(wrap_sizes(&mut p));
        let t = crate::print::exp_text(&p.methods[0].pres[0].exp);
        assert!(t.contains("i * n") && t.contains("vct_stride(0, n, n)"), "{t}");
        // A product with a literal is linear: unchanged.
        let mut p = method(Exp::bin("<", Exp::var("i"), Exp::bin("*", Exp::int(4), Exp::var("n"))));
        assert!(!wrap_sizes(&mut p));
    }
}
