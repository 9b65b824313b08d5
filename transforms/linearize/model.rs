//! What linearization works on: the matrices of the plan (a matrix variable of one method, its
//! layout and extents), the call edges between them, and helpers over methods and calls.

use analyze::sites::find_method;
use diag::Diagnostic;
use front::ast::*;
use front::span::Span;
use front::visit::{stmt_exprs, walk_expr, walk_stmts};
use std::collections::BTreeSet;

/// A matrix variable of one method.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub(super) class: Option<String>,
    pub(super) method: String,
    pub(super) var: String,
}

impl Key {
    pub(super) fn describe(&self) -> String {
        format!("`{}` of `{}`", self.var, self.method)
    }
}

/// One matrix to linearize.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) key: Key,
    pub(super) row: bool,
    pub(super) dims: (Expr, Expr),
    /// The call that brought this matrix into the plan (None: the requested one).
    pub(super) via: Option<Span>,
    /// Its own pending `matrix_lin`, consumed by this step.
    pub(super) consumed: Option<Span>,
    /// Filled by the checks.
    pub(super) linear: bool,
}

/// A call that passes a linearized matrix from `caller` to `callee`.
#[derive(Clone, Debug)]
pub(super) struct Edge {
    pub(super) caller: Key,
    pub(super) callee: Key,
    pub(super) call: Span,
    /// The argument expression that is the caller's matrix.
    pub(super) arg: Span,
    pub(super) args: Vec<Expr>,
    pub(super) callee_params: Vec<String>,
    /// Start of the innermost statement holding the call (None: a contract clause).
    pub(super) point: Option<usize>,
}

/// A use of a matrix as a call argument, found by the scan.
#[derive(Clone, Debug)]
pub(super) struct CallUse {
    pub(super) call: Span,
    pub(super) arg: Span,
    pub(super) recv: Option<Expr>,
    pub(super) name: String,
    pub(super) index: usize,
    pub(super) args: Vec<Expr>,
    pub(super) point: Option<usize>,
}

/// What a method's rewrite needs to know about one of its matrices.
#[derive(Clone, Debug)]
pub(super) struct Info {
    pub(super) row: bool,
    pub(super) e1: String,
    pub(super) e2: String,
    pub(super) linear: bool,
}

pub(super) fn key_span(s: Span) -> (usize, usize) {
    (s.start(), s.end())
}

/// Every call in `m` (contract and body) with the start of the innermost statement holding it.
pub(super) fn calls_in<'m>(m: &'m Method, f: &mut dyn FnMut(&'m Expr, Option<usize>)) {
    let mut visit = |e: &'m Expr, point: Option<usize>| {
        walk_expr(e, &mut |x| {
            if matches!(x.kind, ExprKind::Call { .. }) {
                f(x, point);
            }
        })
    };
    for c in &m.prefix.clauses {
        if let Some(e) = c.expr() {
            visit(e, None);
        }
    }
    match &m.body {
        MethodBody::Block(b) => {
            for s in &b.stmts {
                walk_stmts(s, &mut |st| {
                    let p = Some(st.span.start());
                    stmt_exprs(st, &mut |e| visit(e, p));
                });
            }
        }
        MethodBody::Expr(e) => visit(e, None),
        MethodBody::Abstract => {}
    }
}

/// The method a call `recv.name(…)` made from class `from` resolves to.
pub(super) fn resolve<'p>(
    p: &'p Program,
    from: Option<&str>,
    recv: Option<&Expr>,
    name: &str,
) -> Option<(Option<&'p Class>, &'p Method)> {
    match recv.map(|r| &r.kind) {
        None | Some(ExprKind::This) => {
            find_method(p, from, name).or_else(|| find_method(p, None, name))
        }
        Some(ExprKind::Name(c)) => find_method(p, Some(&c.name), name),
        _ => None,
    }
}

/// Names mentioned in `e`.
pub(super) fn names_of(e: &Expr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_expr(e, &mut |x| {
        if let ExprKind::Name(id) = &x.kind {
            out.insert(id.name.clone());
        }
    });
    out
}

/// The declaration of `var` in `m`: a parameter (its index and type) or a local.
pub(super) enum Decl<'m> {
    Param(usize, &'m Type),
    Local(&'m Type, Option<&'m Expr>, usize),
}

pub(super) fn decl_of<'m>(m: &'m Method, var: &str) -> Option<Decl<'m>> {
    if let Some(i) = m.params.iter().position(|p| p.name.name == var) {
        return Some(Decl::Param(i, &m.params[i].ty));
    }
    let mut local = None;
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if let StmtKind::Decl { ty, vars } = &st.kind {
                    if let Some(d) = vars.iter().find(|d| d.name.name == var) {
                        if local.is_none() {
                            local = Some(Decl::Local(ty, d.init.as_ref(), st.span.start()));
                        }
                    }
                }
            });
        }
    }
    local
}

pub(super) fn method_body_stmt(m: &Method) -> Stmt {
    Stmt {
        kind: StmtKind::Block(match &m.body {
            MethodBody::Block(b) => b.clone(),
            _ => Block { stmts: vec![], span: Span::DUMMY },
        }),
        span: Span::DUMMY,
    }
}

pub(super) fn entry_point(m: &Method) -> usize {
    match &m.body {
        MethodBody::Block(b) => b.stmts.first().map_or(usize::MAX, |s| s.span.start()),
        _ => usize::MAX,
    }
}

/// Attach to a refusal about a matrix reached through a call the call that brought it in.
pub(super) fn via(d: Diagnostic, t: &Target) -> Diagnostic {
    match t.via {
        Some(c) => d.with_secondary(
            c,
            format!(
                "{} is linearized with the requested matrix because of this call",
                t.key.describe()
            ),
        ),
        None => d,
    }
}

pub(super) fn layout_name(row: bool) -> &'static str {
    if row {
        "row-major"
    } else {
        "column-major"
    }
}
