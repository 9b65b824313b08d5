//! Numbers beyond `i64`: rationals (`frac`, `zfrac`, `rational` values and permission amounts
//! used as values, q + k·ε as in §3.3) and integers outside the `i64` range. Integer
//! arithmetic on two `Int`s stays in the evaluator; this file takes the rest: `\`, and every
//! operator with a rational or a big operand. An integer operand is promoted to the
//! rational it equals.
//!
//! `/` and `%` are integer operators (pvl.md: `\` is rational division), so on a rational
//! they are R-UNSUPPORTED, as is what q + k·ε cannot express exactly (`read\2`, `read * read`):
//! the interpreter never rounds.

use super::*;
use num_bigint::BigInt;
use num_integer::Integer;

impl Interp {
    /// `a op b` for numbers `a`, `b` of which one at least is not an `Int`, or for `\`.
    pub(super) fn num_binary(
        &self,
        op: BinOp,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Result<Value, Stop> {
        let rational =
            op == BinOp::Frac || matches!(a, Value::Perm(_)) || matches!(b, Value::Perm(_));
        if !rational {
            return self.big_binary(op, a, b, span);
        }
        // On amounts, C's `/` is the same division as PVL's.
        let op = op.euclidean();
        let (Some(x), Some(y)) = (a.amount(), b.amount()) else {
            return Err(self.bad_operands(op, a, b, span));
        };
        if let Some(b) = ordered(op, &x, &y) {
            return Ok(Value::Bool(b));
        }
        Ok(match op {
            BinOp::Add => Value::perm(x.plus(&y)),
            BinOp::Sub => Value::perm(x.minus(&y)),
            BinOp::Mul => match (x.k, y.k) {
                (0, 0) => Value::perm(Amt { q: x.q.mul(&y.q), k: 0 }),
                // n · (q + k·ε) = n·q + n·k·ε for an integer n.
                (0, _) => Value::perm(self.times(&x.q, &y, span)?),
                (_, 0) => Value::perm(self.times(&y.q, &x, span)?),
                _ => return Err(unsupported("the product of two `read` amounts", span)),
            },
            BinOp::Frac => {
                if y.k != 0 {
                    return Err(unsupported("a division by an amount with `read` in it", span));
                }
                let Some(inv) = Q::ONE.div(&y.q) else {
                    return Err(err(
                        "R-DIV0",
                        format!("zero denominator in the fraction `{}`", self.text(span)),
                        span,
                        "the denominator is 0",
                    ));
                };
                Value::perm(self.times(&inv, &x, span)?)
            }
            BinOp::Div | BinOp::Mod => {
                return Err(unsupported(
                    format!(
                        "`{}` on a rational in `{}` (`\\` is rational division)",
                        op.symbol(),
                        self.text(span)
                    ),
                    span,
                ))
            }
            _ => return Err(self.bad_operands(op, a, b, span)),
        })
    }

    /// `s · (q + k·ε)`: exact when `s·k` is an integer (ε's multiples are whole).
    fn times(&self, s: &Q, a: &Amt, span: Span) -> Result<Amt, Stop> {
        if a.k == 0 {
            return Ok(Amt { q: s.mul(&a.q), k: 0 });
        }
        let k = s.mul(&Q::int(a.k));
        match k {
            Q::S(k, 1) => Ok(Amt { q: s.mul(&a.q), k }),
            _ => Err(unsupported(
                format!("`{}`: a fraction of `read` is not a multiple of it", self.text(span)),
                span,
            )),
        }
    }

    /// Integer operators with a big operand: exact, the result an `Int` again when it fits.
    fn big_binary(&self, op: BinOp, a: &Value, b: &Value, span: Span) -> Result<Value, Stop> {
        let big = |v: &Value| match v {
            Value::Int(i) => Some(BigInt::from(*i)),
            Value::Big(b) => Some((**b).clone()),
            _ => None,
        };
        let (Some(x), Some(y)) = (big(a), big(b)) else {
            return Err(self.bad_operands(op, a, b, span));
        };
        if let Some(b) = ordered(op, &x, &y) {
            return Ok(Value::Bool(b));
        }
        Ok(match op {
            BinOp::Add => Value::big(x + y),
            BinOp::Sub => Value::big(x - y),
            BinOp::Mul => Value::big(x * y),
            BinOp::Div | BinOp::Mod | BinOp::TruncDiv | BinOp::TruncMod => {
                if y == BigInt::from(0) {
                    return Err(err(
                        "R-DIV0",
                        format!("division by zero in `{}`", self.text(span)),
                        span,
                        "the divisor is 0",
                    ));
                }
                if matches!(op, BinOp::TruncDiv | BinOp::TruncMod) {
                    // C truncates toward zero, as BigInt's `/` and `%` do.
                    return Ok(Value::big(if op == BinOp::TruncDiv { x / y } else { x % y }));
                }
                // Euclidean (semantics.md §4.8): 0 <= r < |y|.
                let r = x.mod_floor(&y.magnitude().clone().into());
                if op == BinOp::Mod {
                    Value::big(r)
                } else {
                    Value::big((x - r) / y)
                }
            }
            _ => return Err(self.bad_operands(op, a, b, span)),
        })
    }

    #[cold]
    pub(super) fn bad_operands(&self, op: BinOp, a: &Value, b: &Value, span: Span) -> Stop {
        unsupported(format!("operator `{}` on {a:?} and {b:?}", op.symbol()), span)
    }
}

/// Is `v` a number (an integer of any size or a rational)?
pub(super) fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Big(_) | Value::Perm(_))
}

/// `x op y` for the order comparisons (`None` for other operators).
fn ordered<T: PartialOrd>(op: BinOp, x: &T, y: &T) -> Option<bool> {
    match op {
        BinOp::Lt => Some(x < y),
        BinOp::Le => Some(x <= y),
        BinOp::Gt => Some(x > y),
        BinOp::Ge => Some(x >= y),
        _ => None,
    }
}
