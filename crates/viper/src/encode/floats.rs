//! C's `float` and `double` (and PVL's `float32`/`float64`) as real numbers, as VerCors verifies
//! them: a value is a Viper `Perm` (Silicon's reals), a literal `1.5f` is the exact fraction
//! `none + 3/2` (the `none +` fixes the type: Viper reads a bare `3/2` between integers as
//! integer division), an integer where a float is expected is `none + i/1`, and a float where an
//! integer is expected is truncated toward zero (`vct_trunc`, C's conversion). Rounding,
//! overflow, infinities and NaN are not modelled; the program's report says so (V-FLOAT-REAL),
//! so that nobody reads a verified float kernel as proved for IEEE arithmetic.

use super::Encoder;
use crate::ast::{Exp, ExpKind, Function};
use front::ast::{Expr, ExprKind, Type, TypeKind};
use num_bigint::BigInt;

/// A float type.
pub(super) fn is_float(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Float32 | TypeKind::Float64)
}

/// The exact value of a decimal floating literal (`1.5`, `0.5f`, `2.`, `.25`, `1e-3`, `3.0L`) as
/// numerator and denominator; `None` for anything else (hexadecimal floats included).
pub fn decimal(text: &str) -> Option<(BigInt, BigInt)> {
    let t = text.trim().trim_end_matches(['f', 'F', 'l', 'L']);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        || !(t.contains('.') || t.contains(['e', 'E']))
    {
        return None;
    }
    let digits: BigInt = format!("{int}{frac}0").parse::<BigInt>().ok()? / 10;
    let scale = exp - i32::try_from(frac.len()).ok()?;
    let ten = BigInt::from(10);
    let (num, den) = if scale >= 0 {
        (digits * ten.pow(scale.unsigned_abs()), BigInt::from(1))
    } else {
        (digits, ten.pow(scale.unsigned_abs()))
    };
    let g = num_integer::Integer::gcd(&num, &den);
    if g == BigInt::from(0) {
        return Some((num, den));
    }
    Some((num / &g, den / g))
}

/// The floating literal an expression is (both front ends keep it as text).
pub(super) fn literal(e: &Expr) -> Option<(BigInt, BigInt)> {
    match &e.kind {
        ExprKind::Opaque(o) if o.keyword.ends_with("literal") => decimal(&o.text),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::decimal;

    fn d(s: &str) -> Option<(i64, i64)> {
        decimal(s).map(|(n, d)| (n.try_into().unwrap(), d.try_into().unwrap()))
    }

    #[test]
    fn decimal_literals_are_exact_fractions() {
        assert_eq!(d("1.5"), Some((3, 2)));
        assert_eq!(d("0.5f"), Some((1, 2)));
        assert_eq!(d("0.510000"), Some((51, 100)));
        assert_eq!(d("2."), Some((2, 1)));
        assert_eq!(d(".25"), Some((1, 4)));
        assert_eq!(d("1e-3"), Some((1, 1000)));
        assert_eq!(d("2.5E2"), Some((250, 1)));
        assert_eq!(d("0.0"), Some((0, 1)));
        assert_eq!(d("12"), None);
        assert_eq!(d("0x1.8p1"), None);
        assert_eq!(d("'a'"), None);
        assert_eq!(d("."), None);
    }
}
