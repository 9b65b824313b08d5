//! Keeping the Viper well-typed where PVL converts implicitly: an integer used as a
//! permission, `null` of an object type (arrays' null is `anull()`), set and bag inclusion.
//! Silicon rejects an ill-typed program as a whole (E-INTERNAL), so every such spot goes
//! through here.

use super::{Encoder, R};
use crate::front::ast::{self, BinOp, Expr, Type, TypeKind};
use crate::front::span::Span;
use crate::viper::ast::{Exp, ExpKind};

/// A permission-valued PVL type (`frac`, `zfrac`, `rational`): `Perm` in Viper.
pub(super) fn is_perm(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Frac | TypeKind::ZFrac | TypeKind::Rational)
}

pub(super) fn is_int(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Int)
}

pub(super) fn is_class(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Class(..))
}

/// Set and bag types, whose `<`/`<=` are (strict) inclusion.
pub(super) fn is_set_or_bag(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Generic1(ast::Generic1::Set | ast::Generic1::Bag, _))
}

/// An integer as a permission: `x / 1` (Viper has no implicit `Int` → `Perm` conversion).
fn int_as_perm(x: Exp) -> Exp {
    let sp = x.span;
    Exp::new(ExpKind::Binary("/", Box::new(x), Box::new(Exp::int(1))), sp)
}

fn is_anull(x: &Exp) -> bool {
    matches!(&x.kind, ExpKind::App(f, args) if f == "anull" && args.is_empty())
}

impl Encoder<'_> {
    /// `e` encoded as a value of type `want` (when known): an integer where a permission is
    /// expected becomes `e / 1`, `null` where an object is expected is Viper's `null` (arrays'
    /// null is `anull()`, the default).
    pub fn expr_to(&mut self, e: &Expr, want: Option<&Type>, code: bool) -> R<Exp> {
        let x = self.expr(e, code)?;
        Ok(self.coerce(x, self.type_of(e), want))
    }

    pub(super) fn coerce(&self, x: Exp, have: Option<Type>, want: Option<&Type>) -> Exp {
        match want {
            Some(w) if is_perm(w) && have.as_ref().is_some_and(is_int) => int_as_perm(x),
            Some(w) if is_class(w) && is_anull(&x) => Exp::new(ExpKind::Null, x.span),
            _ => x,
        }
    }

    /// `a < b`, `a <= b` (and flipped) on sets and bags: (strict) inclusion, `subset` in Viper.
    pub(super) fn inclusion(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let (small, big) = if matches!(op, BinOp::Lt | BinOp::Le) { (a, b) } else { (b, a) };
        let l = self.expr(small, code)?;
        let r = self.expr(big, code)?;
        let sub =
            Exp::new(ExpKind::Binary("subset", Box::new(l.clone()), Box::new(r.clone())), None);
        let strict = matches!(op, BinOp::Lt | BinOp::Gt);
        let e = if strict { Exp::and(sub, Exp::bin("!=", l, r)) } else { sub };
        Ok(e.with_span(Some(span)))
    }
}
