//! Indices in a mixed radix: `(by * 16 + ty) * 64 + bx * 16 + tx` over the blocks and threads
//! of a 2-D grid of 2-D blocks names each cell once, and each variable is read back from the
//! index as a digit. Re-indexing such a quantifier by its index (`quantify`) leaves Silicon a
//! receiver that is the bound variable itself.

use super::{int, linear, literal_range, subscripts, Linear};
use crate::ast::Exp;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// Whether the first subscript of `forall vars :: guards ==> body` is a mixed radix of
/// `vars` (see [`mixed_radix`]).
pub(super) fn radix_applies(vars: &[String], guards: &[Exp], body: &Exp) -> bool {
    let whole = Exp::implies(Exp::and_all(guards.to_vec()), body.clone());
    let subs = subscripts(&whole, vars);
    subs.first()
        .and_then(|(_, idx)| linear(idx, vars))
        .is_some_and(|lin| mixed_radix(&lin, vars, guards).is_some())
}

/// One variable of a mixed-radix index: `lo + (base \\ stride) % modulus` (no modulus for the
/// most significant digit); mirrored, `lo - (base \\ stride) % modulus`, where `lo` is then the
/// top of the variable's range.
pub(super) struct Digit {
    pub(super) var: usize,
    pub(super) stride: BigInt,
    pub(super) modulus: Option<BigInt>,
    pub(super) lo: BigInt,
    /// The variable counts down in the index (a negative coefficient: `b * 64 + 63 - t`).
    pub(super) mirrored: bool,
}

pub(super) struct Digits {
    pub(super) digits: Vec<Digit>,
    /// `Σ stride * lo`: the index of the first instance past the constant.
    pub(super) offset: Exp,
}

/// The variables of a linear index `Σ k_v * v + c` as the digits of a mixed radix: every
/// variable has a literal range `[lo, lo + w)`, and ordered by the size of their coefficients,
/// each coefficient divides the next and leaves room for the digit below it (`|k_v| * w_v <=
/// |k_next|`). Then distinct instances have distinct indices, and each variable is read back:
/// `lo_v + ((j - c - offset) \\ k_v) % (k_next / k_v)`. A variable with a negative coefficient
/// (a mirrored block, `b * 64 + 63 - t`) is the digit `u = lo + w - 1 - v`, which counts up: `v`
/// is `lo + w - 1 - u`, and the offset takes `-|k_v| * (lo + w - 1)`. Two or more variables;
/// `None` otherwise.
pub(super) fn mixed_radix(lin: &Linear, vars: &[String], guards: &[Exp]) -> Option<Digits> {
    if vars.len() < 2 || lin.coeffs.iter().any(|k| k.is_zero()) {
        return None;
    }
    let mut order: Vec<(usize, BigInt, BigInt, BigInt, bool)> = Vec::new();
    for (v, k) in lin.coeffs.iter().enumerate() {
        let (lo, hi) = literal_range(guards, &vars[v])?;
        let w = hi - lo.clone();
        if !w.is_positive() {
            return None;
        }
        order.push((v, k.abs(), lo, w, k.is_negative()));
    }
    order.sort_by(|a, b| a.1.cmp(&b.1));
    if !order[0].1.is_one() {
        return None;
    }
    let mut digits = Vec::new();
    let mut offset = BigInt::zero();
    for (n, (v, k, lo, w, mirrored)) in order.iter().enumerate() {
        let modulus = match order.get(n + 1) {
            Some((_, next, _, _, _)) => {
                if !(next % k).is_zero() || k * w > *next {
                    return None;
                }
                Some(next / k)
            }
            None => None,
        };
        let lo = if *mirrored {
            let top = lo + w - 1;
            offset -= k * &top;
            top
        } else {
            offset += k * lo;
            lo.clone()
        };
        digits.push(Digit { var: *v, stride: k.clone(), modulus, lo, mirrored: *mirrored });
    }
    Some(Digits { digits, offset: int(&offset) })
}
