//! The shape a sized array-of-arrays parameter implies (`T[M][N] m`: `\matrix(m, M, N)`,
//! verification.md §5.2), shared by the Viper encoder and the interpreter so that both read a
//! parameter's type the same way.

use front::ast::{self, Builtin, Expr, ExprKind, TypeKind};
use front::visit::{stmt_exprs, walk_expr, walk_stmts};

/// Whether member `m` states a permission for a row of its array-of-arrays parameter `name`
/// itself (`Perm(name[e], p)`, `PointsTo`, `Value`, `\matrix(name, …)`) anywhere, contract or
/// body. The shape a sized parameter implies gives wildcard permission to every row; added to a
/// stated write permission that would exceed 1 and make the member's state infeasible (Silicon
/// then proves anything), so the implied shape is left out for such a member.
pub fn states_row_permission(m: &ast::Method, name: &str) -> bool {
    let is_param = |e: &Expr| matches!(&e.kind, ExprKind::Name(id) if id.name == name);
    let mut found = false;
    let mut check = |e: &Expr| {
        walk_expr(e, &mut |x| {
            if let ExprKind::Builtin(b, args) = &x.kind {
                let row = |a: &Expr| matches!(&a.kind, ExprKind::Index(r, _) if is_param(r));
                found |= match b {
                    Builtin::Perm | Builtin::PointsTo | Builtin::Value => {
                        args.first().is_some_and(row)
                    }
                    Builtin::Matrix => args.first().is_some_and(is_param),
                    _ => false,
                };
            }
        })
    };
    for c in &m.prefix.clauses {
        match &c.body {
            ast::ClauseBody::Expr(e) | ast::ClauseBody::Signals(_, _, e) => check(e),
            ast::ClauseBody::List(v) => v.iter().for_each(&mut check),
            _ => {}
        }
    }
    match &m.body {
        ast::MethodBody::Block(b) => {
            b.stmts.iter().for_each(|s| walk_stmts(s, &mut |s| stmt_exprs(s, &mut check)))
        }
        ast::MethodBody::Expr(e) => check(e),
        ast::MethodBody::Abstract => {}
    }
    found
}

/// The extent of the rows of a sized array-of-arrays type `T[x][y]`: `Some(Some(y))`, or
/// `Some(None)` for `T[x][]`; `None` when the elements are not arrays.
pub fn row_extent(elem: &ast::Type) -> Option<Option<&Expr>> {
    match &elem.kind {
        TypeKind::Array(_, n) => Some(n.as_deref()),
        _ => None,
    }
}
