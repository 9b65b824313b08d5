//! Arrays of arrays: the shape `\matrix(m, x, y)` states, also implied by a sized parameter
//! `int[M][N] m` (`verification.md` §5.2).

use super::Encoder;
use crate::front::ast::{self, Builtin, Expr, ExprKind, TypeKind};
use crate::front::visit::{stmt_exprs, walk_expr, walk_stmts};
use crate::viper::ast::{Exp, ExpKind, Ty};

impl Encoder<'_> {
    /// `m` is a non-null array of `x` rows that the member may read (wildcard permission on every
    /// row cell), each row non-null (of length `y` when given), and rows pairwise distinct.
    pub(super) fn matrix_shape(&mut self, m: &Exp, x: &Exp, y: Option<&Exp>) -> Exp {
        let i = self.fresh_name("i");
        let k = self.fresh_name("k");
        let iv = Exp::var(&i);
        let kv = Exp::var(&k);
        let range = |v: &Exp| {
            Exp::and(Exp::bin("<=", Exp::int(0), v.clone()), Exp::bin("<", v.clone(), x.clone()))
        };
        let row = |v: &Exp| Exp::field(Exp::app("aloc", vec![m.clone(), v.clone()]), "arr_val");
        let trig = |v: &Exp| vec![vec![Exp::app("aloc", vec![m.clone(), v.clone()])]];
        let forall = |vars: Vec<(String, Ty)>, trig: Vec<Vec<Exp>>, body: Exp| {
            Exp::synth(ExpKind::Forall(vars, trig, Box::new(body)))
        };
        let perm = forall(
            vec![(i.clone(), Ty::Int)],
            trig(&iv),
            Exp::implies(range(&iv), Exp::acc(row(&iv), Exp::synth(ExpKind::Wildcard))),
        );
        let some = Exp::bin("!=", row(&iv), Exp::app("anull", vec![]));
        let shape_body = match y {
            Some(y) => Exp::and(some, Exp::bin("==", Exp::app("alen", vec![row(&iv)]), y.clone())),
            None => some,
        };
        let shape =
            forall(vec![(i.clone(), Ty::Int)], trig(&iv), Exp::implies(range(&iv), shape_body));
        let both = vec![vec![
            Exp::app("aloc", vec![m.clone(), iv.clone()]),
            Exp::app("aloc", vec![m.clone(), kv.clone()]),
        ]];
        let distinct = forall(
            vec![(i, Ty::Int), (k, Ty::Int)],
            both,
            Exp::implies(
                Exp::and_all([range(&iv), range(&kv), Exp::bin("!=", iv.clone(), kv.clone())]),
                Exp::bin("!=", row(&iv), row(&kv)),
            ),
        );
        Exp::and_all([
            Exp::bin("!=", m.clone(), Exp::app("anull", vec![])),
            Exp::bin("==", Exp::app("alen", vec![m.clone()]), x.clone()),
            perm,
            shape,
            distinct,
        ])
    }
}

/// Whether member `m` states a permission for a row of its array-of-arrays parameter `name`
/// itself (`Perm(name[e], p)`, `PointsTo`, `Value`, `\matrix(name, …)`) anywhere, contract or
/// body. The shape a sized parameter implies gives wildcard permission to every row; added to a
/// stated write permission that would exceed 1 and make the member's state infeasible (Silicon
/// then proves anything), so the implied shape is left out for such a member.
pub(super) fn states_row_permission(m: &ast::Method, name: &str) -> bool {
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
pub(super) fn row_extent(elem: &ast::Type) -> Option<Option<&Expr>> {
    match &elem.kind {
        TypeKind::Array(_, n) => Some(n.as_deref()),
        _ => None,
    }
}
