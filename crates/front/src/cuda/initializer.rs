//! Initializer lists of local arrays: `int a[] = {1, 2, 3};`, `int a[4] = {1};`.
//!
//! The array is allocated with its length (the list's, or the declared extent) and each cell
//! assigned in order; cells past the list are zero, as C11 6.7.9 §21 says. Only one dimension
//! of scalars without designators: anything else is refused (A0014).

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

/// The most cells written out for the zeros after a list (a larger extent is refused).
const MAX_CELLS: usize = 4096;

impl Conv<'_> {
    /// The allocation for `name` of type `t` initialised by `items`, with the cell assignments
    /// pushed to `after`; `None` (and a diagnostic) when the list is not supported.
    pub(super) fn array_initializer(
        &mut self,
        name: &Ident,
        t: &Type,
        items: &[Node<c::InitializerListItem>],
        at: Span,
        after: &mut Vec<Stmt>,
    ) -> Option<Expr> {
        let TypeKind::Array(elem, extent) = &t.kind else {
            self.unsupported("an initializer list for a variable that is not an array", at);
            return None;
        };
        if !matches!(elem.kind, TypeKind::Int | TypeKind::Boolean | TypeKind::Bool) {
            self.unsupported("an initializer list of arrays or non-integer elements", at);
            return None;
        }
        let mut values = Vec::new();
        for item in items {
            match (&item.node.designation[..], &item.node.initializer.node) {
                ([], c::Initializer::Expression(e)) => values.push(self.expr(e).ok()?),
                _ => {
                    let s = self.sp(item.span);
                    self.unsupported("a designator or nested list in an initializer list", s);
                    return None;
                }
            }
        }
        let len = match extent {
            None => values.len(),
            Some(n) => match n.as_int().and_then(|v| usize::try_from(v).ok()) {
                Some(n) if n >= values.len() && n <= MAX_CELLS => n,
                _ => {
                    self.unsupported(
                        "an initializer list for an array whose extent is not a literal at least as long",
                        at,
                    );
                    return None;
                }
            },
        };
        let zero = match elem.kind {
            TypeKind::Int => Expr::new(ExprKind::Int(0.into()), at),
            _ => Expr::new(ExprKind::Bool(false), at),
        };
        let cells = values.into_iter().chain(std::iter::repeat(zero)).take(len);
        for (k, v) in cells.enumerate() {
            let var = Expr::new(ExprKind::Name(name.clone()), at);
            let idx = Expr::new(ExprKind::Int(k.into()), at);
            let target = Expr::new(ExprKind::Index(Box::new(var), Box::new(idx)), at);
            after.push(Stmt { kind: StmtKind::Assign { target, value: v }, span: at });
        }
        let n = Expr::new(ExprKind::Int(len.into()), at);
        Some(Expr::new(ExprKind::NewArray((**elem).clone(), vec![n]), at))
    }
}
