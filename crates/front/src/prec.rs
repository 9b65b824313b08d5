//! The operator precedence table of PVL, per dialect (pvl.md §4): the one definition read by the
//! parser (precedence climbing over the binary operators) and by the canonical printer (minimal
//! parentheses), and through it by every transformation that prints expressions.
//!
//! Levels run from the loosest (1) to the tightest. The dialects differ in two places only
//! (pvl.md §1.1): `&&`/`**` share the level of `||` in v1 but bind tighter in v2 (C1), and
//! `==>`/`-*` associate to the left in v1 and to the right in v2 (C2).

use super::ast::{BinOp, Expr, ExprKind};
use super::dialect::Dialect;

/// `L: e`, `unfolding p in e`: they extend as far to the right as possible.
pub const PREFIX: u8 = 1;
/// `c ? a : b` (the else branch may be another conditional).
pub const COND: u8 = 2;
/// `==>` `-*`.
pub const IMPLIES: u8 = 3;
/// `||`; in v1 also `&&` and `**`.
pub const OR: u8 = 4;
/// `&&` `**` in v2.
pub const AND: u8 = 5;
/// `==` `!=`.
pub const EQ: u8 = 6;
/// `<` `<=` `>` `>=`.
pub const REL: u8 = 7;
/// Membership `e in s` (also written `e \in s`).
pub const IN: u8 = 8;
/// `+` `-`.
pub const ADD: u8 = 9;
/// `*` `/` `%` `\`.
pub const MUL: u8 = 10;
/// `^^`.
pub const POW: u8 = 11;
/// `x :: s` (right-associative), `s ++ t` (left-associative).
pub const SEQ: u8 = 12;
/// Unary `!` `-` and the scale prefix `[π]R`.
pub const UNARY: u8 = 13;
/// `new …`: not followed by postfix operators in the grammar.
pub const NEW: u8 = 14;
/// `.f`, calls, `[i]`, slices, `[i -> v]`.
pub const POSTFIX: u8 = 15;
/// Literals, names, parenthesised and bracketed forms.
pub const PRIMARY: u8 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assoc {
    Left,
    Right,
}

/// The precedence of a binary operator in one dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpPrec {
    pub level: u8,
    pub assoc: Assoc,
}

/// Level and associativity of `op` in `dialect` (pvl.md §4, rows 3 to 12).
pub fn binary(op: BinOp, dialect: Dialect) -> OpPrec {
    use Assoc::{Left, Right};
    use BinOp::*;
    // (v1, v2)
    let (v1, v2) = match op {
        Implies | Wand => ((IMPLIES, Left), (IMPLIES, Right)),
        Or => ((OR, Left), (OR, Left)),
        And | Star => ((OR, Left), (AND, Left)),
        Eq | Ne => ((EQ, Left), (EQ, Left)),
        Lt | Le | Gt | Ge => ((REL, Left), (REL, Left)),
        In => ((IN, Left), (IN, Left)),
        Add | Sub => ((ADD, Left), (ADD, Left)),
        Mul | Div | Mod | TruncDiv | TruncMod | Frac => ((MUL, Left), (MUL, Left)),
        Pow => ((POW, Left), (POW, Left)),
        Cons => ((SEQ, Right), (SEQ, Right)),
        Concat => ((SEQ, Left), (SEQ, Left)),
    };
    let (level, assoc) = match dialect {
        Dialect::V1 => v1,
        Dialect::V2 => v2,
    };
    OpPrec { level, assoc }
}

/// The level of the outermost form of `e`; for a binary operator its level in `dialect`.
pub fn level(e: &Expr, dialect: Dialect) -> u8 {
    match &e.kind {
        ExprKind::Labelled(..) | ExprKind::Unfolding(..) => PREFIX,
        ExprKind::Cond(..) => COND,
        ExprKind::Binary(op, ..) => binary(*op, dialect).level,
        ExprKind::Unary(..) | ExprKind::Scale(..) => UNARY,
        // A generated negative literal prints as `-n`: a unary minus to the reader.
        ExprKind::Int(v) if v.sign() == num_bigint::Sign::Minus => UNARY,
        ExprKind::NewObject(..) | ExprKind::NewArray(..) => NEW,
        ExprKind::Field(..)
        | ExprKind::Index(..)
        | ExprKind::Slice(..)
        | ExprKind::SeqUpdate(..)
        | ExprKind::Call { .. } => POSTFIX,
        _ => PRIMARY,
    }
}

/// Does `child`, directly under `parent` without parentheses, read differently in VerCors 1.4
/// and VerCors 2 (pvl.md §1.1)? That is a `&&`/`**` operand of `||`, a `||` operand of
/// `&&`/`**`, or a `==>`/`-*` operand of `==>`/`-*`.
pub fn dialect_sensitive(parent: BinOp, child: BinOp) -> bool {
    use BinOp::*;
    matches!(
        (parent, child),
        (Or, And | Star) | (And | Star, Or) | (Implies | Wand, Implies | Wand)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_logical_operators_differ_between_the_dialects() {
        use BinOp::*;
        let all = [
            Implies, Wand, Or, And, Star, Eq, Ne, Lt, Le, Gt, Ge, In, Add, Sub, Mul, Div, Mod,
            Frac, Pow, Cons, Concat,
        ];
        for op in all {
            let (a, b) = (binary(op, Dialect::V1), binary(op, Dialect::V2));
            let differs = matches!(op, Implies | Wand | And | Star);
            assert_eq!(a != b, differs, "{op:?}");
        }
        assert_eq!(binary(And, Dialect::V1).level, binary(Or, Dialect::V1).level);
        assert!(binary(And, Dialect::V2).level > binary(Or, Dialect::V2).level);
        assert_eq!(binary(Implies, Dialect::V1).assoc, Assoc::Left);
        assert_eq!(binary(Implies, Dialect::V2).assoc, Assoc::Right);
        assert_eq!(binary(Cons, Dialect::V1).assoc, Assoc::Right);
        // The levels of pvl.md §4 are ordered loosest first, in both dialects.
        for d in [Dialect::V1, Dialect::V2] {
            let order = [Implies, Or, Eq, Lt, In, Add, Mul, Pow, Cons];
            for w in order.windows(2) {
                assert!(binary(w[0], d).level < binary(w[1], d).level, "{w:?}");
            }
            assert!(COND < binary(Implies, d).level && binary(Concat, d).level < UNARY);
        }
    }
}
