//! Keeping the Viper well-typed where PVL converts implicitly: an integer used as a
//! permission, `null` of an object type (arrays' null is `anull()`), set and bag inclusion, C's truncating division.
//! Silicon rejects an ill-typed program as a whole (E-INTERNAL), so every such spot goes
//! through here.

use super::{Encoder, R};
use crate::ast::{Contract, Exp, ExpKind, Function, Origin, Ty};
use front::ast::{self, BinOp, Expr, Type, TypeKind};
use front::span::Span;

/// A type whose values are Viper's `Perm` (reals): `frac`, `zfrac`, `rational`, and the
/// floats, which are verified as reals (`floats.rs`).
pub(super) fn is_perm(t: &Type) -> bool {
    matches!(
        t.kind,
        TypeKind::Frac
            | TypeKind::ZFrac
            | TypeKind::Rational
            | TypeKind::Float32
            | TypeKind::Float64
    )
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

    pub(super) fn coerce(&mut self, x: Exp, have: Option<Type>, want: Option<&Type>) -> Exp {
        match want {
            // A float from an integer: typed `Perm` on its own (`none + x/1`), since the other
            // side of a comparison may be an integer made a float too.
            Some(w) if super::floats::is_float(w) && have.as_ref().is_some_and(is_int) => {
                super::floats::int_as_real(x)
            }
            // An integer from a float: C truncates toward zero.
            Some(w) if is_int(w) && have.as_ref().is_some_and(super::floats::is_float) => {
                self.trunc(x)
            }
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

    /// C's `a / b` and `a % b`, which truncate toward zero: applications of `vct_c_div` and
    /// `vct_c_mod` (declared on first use, [`truncated_function`]). A function, not an inline
    /// conditional: Silicon branches on a conditional whose operands read the heap, once per
    /// division (VerCors' `cuda_blur.cu`, three such reads per quotient, ran out of time), and
    /// two quotients of equal operands are then equal by congruence alone. Its precondition
    /// `b != 0` is the division-by-zero check (reported as V-DIV0, `viper::errors`).
    pub(super) fn truncated(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let l = self.expr(a, code)?;
        let r = self.expr(b, code)?;
        let div = op == BinOp::TruncDiv;
        let name = if div { TRUNC_DIV } else { TRUNC_MOD };
        if !self.out.functions.iter().any(|f| f.name == name) {
            self.out.functions.push(truncated_function(div));
        }
        Ok(Exp::app(name, vec![l, r]).with_span(Some(span)))
    }
}

/// The Viper functions of C's truncating division and remainder.
pub const TRUNC_DIV: &str = "vct_c_div";
pub const TRUNC_MOD: &str = "vct_c_mod";

/// `vct_c_div(a, b)` or `vct_c_mod(a, b)` over Viper's Euclidean `\` and `%`: they agree when
/// `a >= 0` or `b` divides `a`; otherwise C's quotient is one nearer zero (`+ sign(b)`) and its
/// remainder `|b|` lower. Written over `a \ b` and `a % b` only (not over `-a`), the relation
/// is linear in those two terms, which Z3 handles (through `-a`, VerCors' `mod_div.c` was
/// left unproved).
fn truncated_function(div: bool) -> Function {
    let (a, b) = (Exp::var("a"), Exp::var("b"));
    let rem = Exp::bin("%", a.clone(), b.clone());
    let exact = Exp::bin(
        "||",
        Exp::bin(">=", a.clone(), Exp::int(0)),
        Exp::bin("==", rem.clone(), Exp::int(0)),
    );
    let positive = Exp::bin(">", b.clone(), Exp::int(0));
    let cond =
        |c: Exp, t: Exp, e: Exp| Exp::synth(ExpKind::Cond(Box::new(c), Box::new(t), Box::new(e)));
    let body = if div {
        let q = Exp::bin("\\", a, b);
        cond(exact, q.clone(), Exp::bin("+", q, cond(positive, Exp::int(1), Exp::int(-1))))
    } else {
        let minus_b = Exp::synth(ExpKind::Unary("-", Box::new(b.clone())));
        cond(exact, rem.clone(), Exp::bin("-", rem, cond(positive, b, minus_b)))
    };
    Function {
        name: (if div { TRUNC_DIV } else { TRUNC_MOD }).to_string(),
        params: vec![("a".to_string(), Ty::Int), ("b".to_string(), Ty::Int)],
        ret: Ty::Int,
        pres: vec![Contract {
            exp: Exp::bin("!=", Exp::var("b"), Exp::int(0)),
            origin: Origin::synthetic(),
        }],
        posts: vec![],
        body: Some(body),
        span: None,
    }
}
