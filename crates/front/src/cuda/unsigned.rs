//! Unsigned integers, soundly: the verifier reads C's integers as unbounded mathematical ones
//! (as VerCors does), so an `unsigned` variable that C would wrap around (`x = x - 1` at 0)
//! would become negative, and `assert(x < 0)` would verify. In the verifier's form every store
//! into an unsigned local is followed by `assert x >= 0;` (a program that relies on the wrap
//! fails verification instead), and an unsigned parameter is required to be non-negative, which
//! every call and launch must show and the body may then assume. The form the optimizations
//! edit is untouched.

use super::division::unsigned;
use crate::ast::*;
use crate::span::Span;
use std::collections::HashSet;

/// Add the checks to `m` (a function of the verifier's form).
pub(super) fn checks(m: &mut Method, src: &str) {
    let mut names = HashSet::new();
    let mut signed = HashSet::new();
    if let MethodBody::Block(body) = &m.body {
        for s in &body.stmts {
            crate::visit::walk_stmts(s, &mut |st| {
                if let StmtKind::Decl { ty, vars } = &st.kind {
                    let set = if unsigned(ty, src) { &mut names } else { &mut signed };
                    set.extend(vars.iter().map(|v| v.name.name.clone()));
                }
            });
        }
    }
    for p in &m.params {
        if unsigned(&p.ty, src) {
            let at = p.ty.span.to(p.name.span);
            let e = non_negative(&p.name.name, at);
            m.prefix.clauses.push(Clause {
                kind: ClauseKind::Requires,
                body: ClauseBody::Expr(e),
                span: at,
            });
            names.insert(p.name.name.clone());
        } else {
            signed.insert(p.name.name.clone());
        }
    }
    // A name declared both ways is left alone: which declaration a use means is not tracked.
    names.retain(|n| !signed.contains(n));
    let MethodBody::Block(body) = &mut m.body else { return };
    if names.is_empty() {
        return;
    }
    body.stmts = with_checks(std::mem::take(&mut body.stmts), &names, src);
    for s in &mut body.stmts {
        crate::visit::map_stmts(s, &mut |st| check_nested(st, &names, src));
    }
}

/// `name >= 0` at `at`.
fn non_negative(name: &str, at: Span) -> Expr {
    let x = Expr::new(ExprKind::Name(Ident::new(name, at)), at);
    let zero = Expr::new(ExprKind::Int(0.into()), at);
    Expr::new(ExprKind::Binary(BinOp::Ge, Box::new(x), Box::new(zero)), at)
}

fn assert_at(name: &str, at: Span) -> Stmt {
    Stmt { kind: StmtKind::Spec { kind: SpecKind::Assert, expr: non_negative(name, at) }, span: at }
}

/// The unsigned names statement `s` stores into (a declaration with an initial value, an
/// assignment, a compound assignment, an increment or decrement).
fn stored(s: &Stmt, names: &HashSet<String>, src: &str) -> Vec<String> {
    let target = |t: &Expr| match &t.kind {
        ExprKind::Name(n) if names.contains(&n.name) => vec![n.name.clone()],
        _ => vec![],
    };
    match &s.kind {
        StmtKind::Decl { ty, vars } if unsigned(ty, src) => vars
            .iter()
            .filter(|v| v.init.is_some() && names.contains(&v.name.name))
            .map(|v| v.name.name.clone())
            .collect(),
        StmtKind::Assign { target: t, .. }
        | StmtKind::CompoundAssign { target: t, .. }
        | StmtKind::IncDec { target: t, .. } => target(t),
        _ => vec![],
    }
}

/// A statement list with `assert x >= 0;` after each store into an unsigned `x`.
fn with_checks(stmts: Vec<Stmt>, names: &HashSet<String>, src: &str) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        let after: Vec<Stmt> =
            stored(&s, names, src).iter().map(|n| assert_at(n, s.span)).collect();
        out.push(s);
        out.extend(after);
    }
    out
}

/// The lists inside statement `st` (blocks, loop headers) get their checks; a store that is a
/// branch or loop body of its own becomes a block with its check.
fn check_nested(st: &mut Stmt, names: &HashSet<String>, src: &str) {
    let boxed = |b: &mut Box<Stmt>| {
        let checks: Vec<Stmt> =
            stored(b, names, src).iter().map(|n| assert_at(n, b.span)).collect();
        if !checks.is_empty() && !matches!(b.kind, StmtKind::Decl { .. }) {
            let span = b.span;
            let inner = std::mem::replace(
                &mut **b,
                Stmt { kind: StmtKind::Block(Block { stmts: vec![], span }), span },
            );
            let mut stmts = vec![inner];
            stmts.extend(checks);
            **b = Stmt { kind: StmtKind::Block(Block { stmts, span }), span };
        }
    };
    match &mut st.kind {
        StmtKind::Block(b)
        | StmtKind::Atomic { body: b, .. }
        | StmtKind::Invariant { body: b, .. }
        | StmtKind::Vec { body: b, .. } => {
            b.stmts = with_checks(std::mem::take(&mut b.stmts), names, src)
        }
        StmtKind::Barrier(Barrier { body: Some(b), .. }) => {
            b.stmts = with_checks(std::mem::take(&mut b.stmts), names, src)
        }
        StmtKind::Parallel { body, .. } => {
            *body = with_checks(std::mem::take(body), names, src);
        }
        StmtKind::If { then, els, .. } => {
            boxed(then);
            if let Some(e) = els {
                boxed(e);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            // What the loop stores stays non-negative (every store is checked): an invariant,
            // which the verifier needs after the loop havocs the variable.
            let (mut written, mut inner) = (Vec::new(), HashSet::new());
            for s in std::iter::once(&*l.body).chain(&l.update) {
                crate::visit::walk_stmts(s, &mut |x| {
                    if let StmtKind::Decl { vars, .. } = &x.kind {
                        inner.extend(vars.iter().map(|v| v.name.name.clone()));
                    }
                    for n in stored(x, names, src) {
                        if !written.contains(&n) {
                            written.push(n);
                        }
                    }
                });
            }
            for n in written.iter().filter(|n| !inner.contains(*n)) {
                let at = l.keyword;
                l.prefix.clauses.push(Clause {
                    kind: ClauseKind::LoopInvariant,
                    body: ClauseBody::Expr(non_negative(n, at)),
                    span: at,
                });
            }
            l.init = with_checks(std::mem::take(&mut l.init), names, src);
            l.update = with_checks(std::mem::take(&mut l.update), names, src);
            boxed(&mut l.body);
        }
        _ => {}
    }
}
