//! C's shifts and masks by constants, as GPU code writes them (`s >>= 1` in a tree reduction,
//! `tid & 31` for a lane, `1 << 5`): arithmetic the verifier and the interpreter already know.
//!
//! - `x << k` is `x * 2^k` (an overflow is undefined in C for signed values; unsigned values are
//!   read as unbounded integers throughout, docs/cuda.md).
//! - `x >> k` is `x / 2^k` rounded down: the arithmetic shift every C compiler for a GPU or a
//!   CPU performs on a negative value, and Euclidean division by a positive divisor.
//! - `x & (2^k - 1)` is `x mod 2^k`, never negative: two's complement keeps the low bits.
//!
//! Conversion writes the Euclidean `Div`/`Mod`; `division::settle` keeps them where the operand
//! is visibly non-negative (the common case: indices, sizes, unsigned locals) and elsewhere
//! calls [`floor_form`], whose divisions have non-negative dividends, so that they mean the same
//! in PVL and in C, also when an optimization prints them back into C code. A shift by an amount
//! that is not a constant stays opaque and is refused by name.

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Shifts past this many bits are left opaque: no GPU integer type is wider.
const MAX_SHIFT: u32 = 63;

/// What a constant shift or mask computes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BitOp {
    Shl,
    Shr,
    Mask,
}

impl BitOp {
    /// The shift or mask `op` computes (`<<`, `>>`, `&`).
    pub(super) fn of(op: &c::BinaryOperator) -> Option<BitOp> {
        use c::BinaryOperator as B;
        match op {
            B::ShiftLeft => Some(BitOp::Shl),
            B::ShiftRight => Some(BitOp::Shr),
            B::BitwiseAnd => Some(BitOp::Mask),
            _ => None,
        }
    }

    /// The shift or mask a compound assignment `op` stores (`<<=`, `>>=`, `&=`).
    pub(super) fn of_assign(op: &c::BinaryOperator) -> Option<BitOp> {
        use c::BinaryOperator as B;
        match op {
            B::AssignShiftLeft => Some(BitOp::Shl),
            B::AssignShiftRight => Some(BitOp::Shr),
            B::AssignBitwiseAnd => Some(BitOp::Mask),
            _ => None,
        }
    }

    /// The operator of the tree that computes `x op r`, and its right operand, where `r` is a
    /// constant this module reads: `None` otherwise.
    pub(super) fn lower(self, r: &Expr) -> Option<(BinOp, BigInt)> {
        let v = constant(r)?;
        match self {
            BitOp::Shl | BitOp::Shr => {
                let k = v.to_u32().filter(|k| *k <= MAX_SHIFT)?;
                let p = BigInt::one() << k;
                Some((if self == BitOp::Shl { BinOp::Mul } else { BinOp::Div }, p))
            }
            BitOp::Mask => {
                // `m = 2^k - 1` with `k >= 1`: `m + 1` is a power of two.
                let p: BigInt = &v + 1;
                let pow2 = p.is_positive() && (&p & (&p - 1u8)).is_zero();
                (pow2 && !v.is_zero()).then_some((BinOp::Mod, p))
            }
        }
    }
}

/// The value of a constant integer expression (literals, `#define`d values, `+ - *` of them).
pub(super) fn constant(e: &Expr) -> Option<BigInt> {
    match &e.kind {
        ExprKind::Int(v) => Some(v.clone()),
        ExprKind::Unary(UnOp::Neg, a) => constant(a).map(|v| -v),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (constant(a)?, constant(b)?);
            match op {
                BinOp::Add => Some(a + b),
                BinOp::Sub => Some(a - b),
                BinOp::Mul => Some(a * b),
                _ => None,
            }
        }
        _ => None,
    }
}

impl Conv<'_> {
    /// `l op r` for a shift or mask `op`: the arithmetic it computes, or an opaque expression
    /// naming the operator where the amount or mask is not a constant this module reads.
    pub(super) fn bit_expr(&self, op: BitOp, l: Expr, r: Expr, span: Span) -> Expr {
        // `&` commutes: the mask may come first (`0x1f & t`).
        let (l, r) = match op == BitOp::Mask && constant(&r).is_none() && constant(&l).is_some() {
            true => (r, l),
            false => (l, r),
        };
        match op.lower(&r) {
            Some((bin, v)) => {
                let rhs = Expr::new(ExprKind::Int(v), r.span);
                Expr::new(ExprKind::Binary(bin, Box::new(l), Box::new(rhs)), span)
            }
            None => self.opaque_expr(opaque_word(op), span),
        }
    }
}

/// The word a refusal uses for a shift or mask it cannot read.
pub(super) fn opaque_word(op: BitOp) -> &'static str {
    match op {
        BitOp::Shl | BitOp::Shr => "a shift by an amount that is not a constant",
        BitOp::Mask => "a bitwise `&` with a mask other than a constant 2^k - 1",
    }
}

/// The operator written between `a` and `b` in `src` (`>>`, `&=`, `/`…), in either order (a
/// mask written first is the right operand of its `Mod`); empty where the spans are not both
/// from the text, one after the other.
pub(super) fn written_between<'s>(src: &'s str, a: &Expr, b: &Expr) -> &'s str {
    if a.span.is_dummy() || b.span.is_dummy() {
        return "";
    }
    let (lo, hi) = match a.span.end() <= b.span.start() {
        true => (a.span.end(), b.span.start()),
        false => (b.span.end(), a.span.start()),
    };
    if lo > hi || hi > src.len() {
        return "";
    }
    src.get(lo..hi).map_or("", |t| t.trim().trim_start_matches(')').trim_end_matches('(').trim())
}

/// `x / p` rounded down and `x mod p` (Euclidean), `p` a positive constant, written so that
/// each division has a non-negative dividend:
/// `x >= 0 ? x / p : -((p - 1 - x) / p)` and `x >= 0 ? x % p : (p - (-x) % p) % p`.
pub(super) fn floor_form(op: BinOp, x: Expr, p: Expr, span: Span) -> Expr {
    let nonneg = Expr::bin(BinOp::Ge, x.clone(), Expr::int(0));
    let neg_x = Expr::synth(ExprKind::Unary(UnOp::Neg, Box::new(x.clone())));
    let (then, otherwise) = if op == BinOp::Div {
        let p_minus_1 = match constant(&p) {
            Some(v) => Expr::synth(ExprKind::Int(v - 1)),
            None => Expr::bin(BinOp::Sub, p.clone(), Expr::int(1)),
        };
        let up = Expr::bin(BinOp::TruncDiv, Expr::bin(BinOp::Sub, p_minus_1, x.clone()), p.clone());
        (Expr::bin(BinOp::TruncDiv, x, p), Expr::synth(ExprKind::Unary(UnOp::Neg, Box::new(up))))
    } else {
        let low = Expr::bin(BinOp::TruncMod, neg_x, p.clone());
        (
            Expr::bin(BinOp::TruncMod, x, p.clone()),
            Expr::bin(BinOp::TruncMod, Expr::bin(BinOp::Sub, p.clone(), low), p),
        )
    };
    Expr::new(ExprKind::Cond(Box::new(nonneg), Box::new(then), Box::new(otherwise)), span)
}

impl Conv<'_> {
    /// `x <<= k`, `x >>= k`, `x &= m`: the compound assignment of the arithmetic they compute.
    pub(super) fn bit_assign(
        &mut self,
        op: BitOp,
        b: &c::BinaryOperatorExpression,
        span: Span,
    ) -> Stmt {
        let (Ok(target), Ok(r)) = (self.expr(&b.lhs), self.expr(&b.rhs)) else {
            return self.opaque_stmt(opaque_word(op), span);
        };
        match op.lower(&r) {
            Some((bin, v)) => {
                let op = match bin {
                    BinOp::Mul => CompoundOp::Mul,
                    BinOp::Div => CompoundOp::Div,
                    _ => CompoundOp::Mod,
                };
                let value = Expr::new(ExprKind::Int(v), r.span);
                Stmt { kind: StmtKind::CompoundAssign { target, op, value }, span }
            }
            None => self.opaque_stmt(opaque_word(op), span),
        }
    }
}
