//! C casts. A cast to a signed integer type at least as wide as `int` is the identity on our
//! unbounded integers (as VerCors reads C); a cast to `float` or `double` makes the value a
//! float: `(double) sum / n` divides reals, so the cast is kept as `e + 0.0` (a float sum of the
//! same value; `viper/encode/floats.rs`). A cast of a float to an integer truncates toward zero:
//! it is the binding `(\let int vct_cast = x; vct_cast)`, which both oracles truncate as they
//! do `int k = x;` (read as the identity, `(int) x + 1` would add before truncating); code
//! printed back into C shows it as the cast again (`emit.rs`).
//! Other casts (`unsigned`, `short`, `char`, pointers) can change values and are refused.

use super::convert::{Conv, R};
use crate::ast::*;
use lang_c::ast as c;
use lang_c::span::Node;

/// The variable of a float-to-integer cast's binding (`emit.rs` prints the binding as the cast).
pub const CAST: &str = "vct_cast";

/// What a cast's target type is.
enum Target {
    Int,
    Float,
    Other,
}

fn target(t: &c::TypeName) -> Target {
    if t.declarator.is_some() {
        return Target::Other;
    }
    let words = super::types::type_words(&t.specifiers);
    let int = |w: &&c::TypeSpecifier| {
        matches!(w, c::TypeSpecifier::Int | c::TypeSpecifier::Long | c::TypeSpecifier::Signed)
    };
    let float = |w: &&c::TypeSpecifier| {
        matches!(w, c::TypeSpecifier::Float | c::TypeSpecifier::Double | c::TypeSpecifier::Long)
    };
    if words.iter().all(int) {
        Target::Int
    } else if words.iter().all(float) && words.iter().any(|w| !int(w)) {
        Target::Float
    } else {
        Target::Other
    }
}

/// `(int) e` for a float `e`: `(\let int vct_cast = e; vct_cast)`, truncated toward zero by
/// both oracles.
pub(super) fn truncated(e: Expr, span: crate::span::Span) -> Expr {
    let name = Ident::new(CAST, span);
    Expr::new(
        ExprKind::Let {
            ty: Type { kind: TypeKind::Int, span },
            name: name.clone(),
            value: Box::new(e),
            body: Box::new(Expr::new(ExprKind::Name(name), span)),
        },
        span,
    )
}

/// `(double) e`: `e + 0.0`, a float of the same value.
pub(super) fn as_float(e: Expr, span: crate::span::Span) -> Expr {
    let zero = Expr::new(
        ExprKind::Opaque(Opaque {
            keyword: "floating-point literal".into(),
            text: "0.0".into(),
            span,
        }),
        span,
    );
    Expr::new(ExprKind::Binary(BinOp::Add, Box::new(e), Box::new(zero)), span)
}

impl Conv<'_> {
    pub(super) fn cast(
        &mut self,
        cst: &Node<c::CastExpression>,
        span: crate::span::Span,
    ) -> R<Expr> {
        match target(&cst.node.type_name.node) {
            Target::Int => {
                let e = self.expr(&cst.node.expression)?;
                if !self.may_be_float(&e) {
                    return Ok(e);
                }
                Ok(truncated(e, span))
            }
            Target::Float => {
                let e = self.expr(&cst.node.expression)?;
                Ok(as_float(e, span))
            }
            Target::Other => Ok(self.opaque_expr("cast", span)),
        }
    }

    /// Whether a converted expression may have a float value: it holds a floating literal, a
    /// name declared with a float type, a cell of a float array, or a call of a function that
    /// returns one (over-approximated by name: a refused cast is only a refusal).
    fn may_be_float(&self, e: &Expr) -> bool {
        crate::visit::any_expr(e, &mut |x| match &x.kind {
            ExprKind::Opaque(o) => {
                o.keyword.ends_with("literal") && o.text.contains(['.', 'e', 'E'])
            }
            ExprKind::Name(n) => self.floats.contains(&n.name),
            ExprKind::Index(a, _) => a.as_name().is_some_and(|n| {
                matches!(self.pointee.get(n), Some(TypeKind::Float32 | TypeKind::Float64))
            }),
            ExprKind::Call { name, .. } => self.floats.contains(&name.name),
            _ => false,
        })
    }
}

/// The value an integer variable is initialised with: `int k = (int) x;` is `int k = x;` (the
/// initialisation truncates as the cast would), so the cast is left out there.
pub(super) fn initial_value(e: &Node<c::Expression>) -> &Node<c::Expression> {
    match &e.node {
        c::Expression::Cast(cst) if matches!(target(&cst.node.type_name.node), Target::Int) => {
            &cst.node.expression
        }
        _ => e,
    }
}
