//! C's `float` and `double` (and PVL's `float32`/`float64`) as real numbers, as VerCors verifies
//! them: a value is a Viper `Perm` (Silicon's reals), a literal `1.5f` is the exact fraction
//! `none + 3/2` (the `none +` fixes the type: Viper reads a bare `3/2` between integers as
//! integer division), an integer where a float is expected is `none + i/1`, and a float where an
//! integer is expected is truncated toward zero (`vct_trunc`, C's conversion). Rounding,
//! overflow, infinities and NaN are not modelled; the program's report says so (V-FLOAT-REAL),
//! so that nobody reads a verified float kernel as proved for IEEE arithmetic.

use super::Encoder;
use crate::ast::{Exp, ExpKind, Function};
use front::ast::{Expr, Type, TypeKind};
use num_bigint::BigInt;

/// A float type.
pub(super) fn is_float(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Float32 | TypeKind::Float64)
}

/// The floating literal an expression is (both front ends keep it as text).
pub(super) fn literal(e: &Expr) -> Option<(BigInt, BigInt)> {
    front::exprtext::float_literal(e)
}

/// `none + n/d`: a real of exactly that value, typed `Perm` wherever it stands.
pub(super) fn real(num: BigInt, den: BigInt) -> Exp {
    let frac = Exp::bin("/", Exp::synth(ExpKind::Int(num)), Exp::synth(ExpKind::Int(den)));
    Exp::bin("+", Exp::synth(ExpKind::NoPerm), frac)
}

/// An integer as a real: `none + x/1`.
pub(super) fn int_as_real(x: Exp) -> Exp {
    let sp = x.span;
    Exp::bin("+", Exp::synth(ExpKind::NoPerm), Exp::bin("/", x, Exp::int(1))).with_span(sp)
}

impl Encoder<'_> {
    /// A real truncated toward zero, as C converts a float to an integer: `vct_trunc(x)`
    /// (declared on first use, with the SMT floor it is built on).
    pub(super) fn trunc(&mut self, x: Exp) -> Exp {
        if !self.out.functions.iter().any(|f| f.name == "vct_trunc") {
            self.out.domains.push(
                "domain VctReal {\n  function vct_floor(r: Perm): Int interpretation \"to_int\"\n}\n"
                    .to_string(),
            );
            let r = Exp::var("r");
            let floor = |x: Exp| Exp::app("vct_floor", vec![x]);
            let neg = |x: Exp| Exp::synth(ExpKind::Unary("-", Box::new(x)));
            let body = Exp::synth(ExpKind::Cond(
                Box::new(Exp::bin(">=", r.clone(), Exp::synth(ExpKind::NoPerm))),
                Box::new(floor(r.clone())),
                Box::new(neg(floor(neg(r)))),
            ));
            self.out.functions.push(Function {
                name: "vct_trunc".into(),
                params: vec![("r".into(), crate::ast::Ty::Perm)],
                ret: crate::ast::Ty::Int,
                pres: vec![],
                posts: vec![],
                body: Some(body),
                span: None,
            });
        }
        let sp = x.span;
        Exp::app("vct_trunc", vec![x]).with_span(sp)
    }

    /// Remember that the program computes with floats (the report gets V-FLOAT-REAL once).
    pub(super) fn note_float(&mut self, span: front::span::Span) {
        if self.out.reals.is_none() {
            self.out.reals = Some(span);
        }
    }
}
