//! Subscripts `c + v * k` with two symbolic factors as applications of `vct_stride`: Viper
//! forbids arithmetic in triggers, and a function application is a valid one.

use super::{int, lit, map_aloc_index, summands};
use crate::ast::{Exp, ExpKind};
use num_bigint::BigInt;
use num_traits::{One, Zero};

/// The Viper function that stands for a subscript `c + v * k` with two symbolic factors.
/// Viper forbids arithmetic in triggers, and a quantified permission over such a receiver
/// needs one (Silicon cannot prove it injective otherwise); a function application is a valid
/// trigger. Concrete accesses are encoded through the same function, so that the trigger
/// matches them.
pub const STRIDE_FN: &str = "vct_stride";

/// The first line of the domain that declares `STRIDE_FN`.
pub const STRIDE_DOMAIN_HEAD: &str = "domain VctStride {";

/// The domain declaring `STRIDE_FN`: its definition `c + v * k`, and its injectivity in
/// `(c, v)` for a fixed `k` when both `c` lie in `[0, k)` (true of the integers: the quotient
/// and remainder of a division by a positive `k` are unique). Both axioms are triggered by
/// applications only, and none concludes a new application, so none loops. The bound axioms
/// meet a subscript and a size written as a stride (`vct_stride(0, w, k)`, see `products`):
/// `c + v * k` lies in `[0, w * k)` when `c` lies in `[0, k)` and `v` in `[0, w)`, which Z3
/// cannot find for a symbolic `k` (non-linear).
pub fn stride_domain() -> String {
    format!(
        "{STRIDE_DOMAIN_HEAD}
  function {f}(c: Int, v: Int, k: Int): Int
  axiom {f}_def {{
    forall c: Int, v: Int, k: Int :: {{ {f}(c, v, k) }} {f}(c, v, k) == c + v * k &&
      (0 <= c && 0 <= v && 0 <= k ==> 0 <= {f}(c, v, k))
  }}
  axiom {f}_below {{
    forall c: Int, v: Int, k: Int, w: Int :: {{ {f}(c, v, k), {f}(0, w, k) }}
      0 <= c && c < k && 0 <= v && v < w ==> {f}(c, v, k) < {f}(0, w, k)
  }}
  axiom {f}_below_swapped {{
    forall c: Int, v: Int, k: Int, w: Int :: {{ {f}(c, v, k), {f}(0, k, w) }}
      0 <= c && c < k && 0 <= v && v < w ==> {f}(c, v, k) < {f}(0, k, w)
  }}
  axiom {f}_inj {{
    forall c1: Int, v1: Int, c2: Int, v2: Int, k: Int :: {{ {f}(c1, v1, k), {f}(c2, v2, k) }}
      0 <= c1 && c1 < k && 0 <= c2 && c2 < k && {f}(c1, v1, k) == {f}(c2, v2, k) ==> c1 == c2 && v1 == v2
  }}
}}
",
        f = STRIDE_FN
    )
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
    let rest = rest.unwrap_or_else(|| Exp::int(0));
    Exp::app(STRIDE_FN, vec![digits(rest), digits(y), z])
}

/// `x * K + y` (a positive literal `K`, `x` and `y` not literals, in any order) as
/// `vct_stride(y, x, K)`, recursively in `x` and `y`; anything else unchanged. Inside a
/// symbolic stride this is what lets Silicon take a matrix cell apart: the row and column
/// `by * 16 + ty` and `bx * 16 + tx` of a 2-D grid are equal for two threads only when their
/// digits are, which the stride's injectivity axiom states and linear arithmetic cannot see
/// (it reasons over the rationals first). Applied to the arguments of a symbolic stride only,
/// so every other subscript keeps the linear form the re-indexing rules read.
fn digits(e: Exp) -> Exp {
    let mut parts = Vec::new();
    summands(&e, false, &mut parts);
    let [(false, a), (false, b)] = &parts[..] else { return e };
    let scaled = |t: &Exp| {
        let ExpKind::Binary("*", a, b) = &t.kind else { return None };
        let (x, k) = match (lit(a), lit(b)) {
            (None, Some(k)) => (a, k),
            (Some(k), None) => (b, k),
            _ => return None,
        };
        (k > BigInt::one()).then(|| ((**x).clone(), k))
    };
    let ((x, k), y) = match (scaled(a), scaled(b)) {
        (Some(xk), None) if non_literal(b) => (xk, b.clone()),
        (None, Some(xk)) if non_literal(a) => (xk, a.clone()),
        _ => return e,
    };
    Exp::app(STRIDE_FN, vec![digits(y), digits(x), int(&k)])
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
