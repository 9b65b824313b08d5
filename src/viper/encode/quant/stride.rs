//! Subscripts `c + v * k` with two symbolic factors as applications of `vct_stride`: Viper
//! forbids arithmetic in triggers, and a function application is a valid one.

use super::{lit, map_aloc_index, summands};
use crate::viper::ast::{Exp, ExpKind};
use num_traits::Zero;

/// The Viper function that stands for a subscript `c + v * k` with two symbolic factors.
/// Viper forbids arithmetic in triggers, and a quantified permission over such a receiver
/// needs one (Silicon cannot prove it injective otherwise); a function application is a valid
/// trigger. Concrete accesses are encoded through the same function, so that the trigger
/// matches them.
pub const STRIDE_FN: &str = "vct_stride";

/// `c + v * k` as the body of `STRIDE_FN` over its parameters `c`, `v`, `k`.
pub fn stride_body() -> Exp {
    Exp::bin("+", Exp::var("c"), Exp::bin("*", Exp::var("v"), Exp::var("k")))
}

fn non_literal(e: &Exp) -> bool {
    lit(e).is_none()
}

/// A subscript `X + Y * Z` (summands in any order and sign, the product positive, its factors
/// not literals) as `vct_stride(X, Y, Z)`; anything else unchanged.
pub fn wrap_index(i: Exp) -> Exp {
    let mut parts = Vec::new();
    summands(&i, false, &mut parts);
    let products: Vec<usize> = (0..parts.len())
        .filter(|k| {
            matches!(&parts[*k].1.kind, ExpKind::Binary("*", a, b) if non_literal(a) && non_literal(b))
        })
        .collect();
    let [p] = products[..] else { return i };
    if parts[p].0 {
        return i;
    }
    let (y, z) = match &parts[p].1.kind {
        ExpKind::Binary("*", a, b) => ((**a).clone(), (**b).clone()),
        _ => return i,
    };
    let mut rest: Option<Exp> = None;
    for (k, (neg, t)) in parts.into_iter().enumerate() {
        if k == p {
            continue;
        }
        rest = Some(match (rest, neg) {
            (None, false) => t,
            (None, true) => Exp::bin("-", Exp::int(0), t),
            (Some(r), false) => Exp::bin("+", r, t),
            (Some(r), true) => Exp::bin("-", r, t),
        });
    }
    Exp::app(STRIDE_FN, vec![rest.unwrap_or_else(|| Exp::int(0)), y, z])
}

/// Every `aloc(A, I)` with `I` wrapped by `wrap_index`.
pub(super) fn wrap_strides(e: Exp) -> Exp {
    map_aloc_index(e, wrap_index)
}

/// Every `vct_stride(c, v, k)` back as `c + v * k`.
pub(super) fn expand_strides(e: Exp) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::App(f, args) if f == STRIDE_FN && args.len() == 3 => {
            let mut it = args.into_iter();
            let (c, v, k) = match (it.next(), it.next(), it.next()) {
                (Some(c), Some(v), Some(k)) => (c, v, k),
                _ => return Exp::int(0),
            };
            let prod = Exp::bin("*", v, k);
            match lit(&c) {
                Some(z) if z.is_zero() => prod,
                _ => Exp::bin("+", c, prod),
            }
        }
        k => Exp { kind: k, span: n.span },
    })
}
