//! Operators, quantifier kinds, binders, built-in functions and collection kinds of the syntax
//! tree, kept apart from `ast.rs` to keep that file readable (re-exported there).

use super::ast::{Expr, ExprKind, Ident, Type};
use super::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Implies,
    Wand,
    And,
    Or,
    Star,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `e in s` (and v2 `\in`).
    In,
    Add,
    Sub,
    Mul,
    /// `/` on integers: Euclidean (SMT-LIB `div`), PVL's division.
    Div,
    /// `%`: the Euclidean remainder, in `[0, |b|)`.
    Mod,
    /// C's `/`, which truncates toward zero (`-7 / 2 == -3`). The C front end writes it where
    /// the dividend may be negative; where it cannot be, the two agree and `Div` is kept
    /// (`front::cuda::division`).
    TruncDiv,
    /// C's `%`, whose sign is the dividend's (`-7 % 2 == -1`).
    TruncMod,
    /// `\`: rational division (fractions).
    Frac,
    /// `^^` (opaque).
    Pow,
    /// `x :: s`
    Cons,
    /// `s ++ t`
    Concat,
}

impl BinOp {
    /// The comparison read the other way round: `a op b` is `b op.converse() a`. Other
    /// operators are returned as they are.
    pub fn converse(self) -> BinOp {
        match self {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            other => other,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Implies => "==>",
            BinOp::Wand => "-*",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Star => "**",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div | BinOp::TruncDiv => "/",
            BinOp::Mod | BinOp::TruncMod => "%",
            BinOp::Frac => "\\",
            BinOp::Pow => "^^",
            BinOp::Cons => "::",
            BinOp::Concat => "++",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }

    pub fn is_arith(self) -> bool {
        self.is_int_arith() || self == BinOp::Frac
    }

    /// `+ - * / %` (either division): the operators of integer arithmetic.
    pub fn is_int_arith(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Sub | BinOp::Mul) || self.is_division()
    }

    /// Integer division or remainder, of either rounding.
    pub fn is_division(self) -> bool {
        matches!(self, BinOp::Div | BinOp::Mod | BinOp::TruncDiv | BinOp::TruncMod)
    }

    /// The Euclidean operator that agrees with `self` on non-negative dividends.
    pub fn euclidean(self) -> BinOp {
        match self {
            BinOp::TruncDiv => BinOp::Div,
            BinOp::TruncMod => BinOp::Mod,
            other => other,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantKind {
    /// `\forall*`: iterated separating conjunction.
    ForallStar,
    Forall,
    Exists,
}

impl QuantKind {
    pub fn symbol(self) -> &'static str {
        match self {
            QuantKind::ForallStar => "\\forall*",
            QuantKind::Forall => "\\forall",
            QuantKind::Exists => "\\exists",
        }
    }
}

/// Where a pattern `{:<<2: e :}` belongs: `parent` counts the `<` (0: the innermost enclosing
/// quantifier, 1: the one around it, …), `group` joins the patterns of one number into one
/// multi-pattern (none: the pattern is a trigger on its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TriggerTag {
    pub parent: u32,
    pub group: Option<u32>,
}

/// `int k` or `int k = lo .. hi` in a quantifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub ty: Type,
    pub name: Ident,
    pub range: Option<(Box<Expr>, Box<Expr>)>,
    pub span: Span,
}

/// Built-in functions with fixed argument counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `Perm(loc, frac)`
    Perm,
    /// `PointsTo(loc, frac, value)`
    PointsTo,
    /// `Value(loc)`
    Value,
    HPerm,
    APerm,
    ArrayPerm,
    /// `\array(a, n)`
    Array,
    /// `\matrix(m, r, c)`
    Matrix,
    /// `\pointer(p, n, π)`
    Pointer,
    /// `\pointer_index(p, i, π)`
    PointerIndex,
    /// `\values(a, lo, hi)`
    Values,
    /// `\length(e)`
    LengthFn,
    Head,
    Tail,
    Held,
    /// VerCors 2's `committed(o)`: `o`'s lock invariant was committed (`commit o;`).
    Committed,
    Idle,
    Running,
    Some,
    TypeOf,
    /// `perm(loc)`: the permission currently held for a location.
    PermOf,
}

impl Builtin {
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Perm => "Perm",
            Builtin::PointsTo => "PointsTo",
            Builtin::Value => "Value",
            Builtin::HPerm => "HPerm",
            Builtin::APerm => "APerm",
            Builtin::ArrayPerm => "ArrayPerm",
            Builtin::Array => "\\array",
            Builtin::Matrix => "\\matrix",
            Builtin::Pointer => "\\pointer",
            Builtin::PointerIndex => "\\pointer_index",
            Builtin::Values => "\\values",
            Builtin::LengthFn => "\\length",
            Builtin::Head => "head",
            Builtin::Tail => "tail",
            Builtin::Held => "held",
            Builtin::Committed => "committed",
            Builtin::Idle => "idle",
            Builtin::Running => "running",
            Builtin::Some => "Some",
            Builtin::TypeOf => "\\typeof",
            Builtin::PermOf => "perm",
        }
    }

    pub fn from_name(s: &str) -> Option<Builtin> {
        Some(match s {
            "Perm" => Builtin::Perm,
            "PointsTo" => Builtin::PointsTo,
            "Value" => Builtin::Value,
            "HPerm" => Builtin::HPerm,
            "APerm" => Builtin::APerm,
            "ArrayPerm" => Builtin::ArrayPerm,
            "\\array" => Builtin::Array,
            "\\matrix" => Builtin::Matrix,
            "\\pointer" => Builtin::Pointer,
            "\\pointer_index" => Builtin::PointerIndex,
            "\\values" => Builtin::Values,
            "\\length" => Builtin::LengthFn,
            "head" => Builtin::Head,
            "tail" => Builtin::Tail,
            "held" => Builtin::Held,
            "committed" => Builtin::Committed,
            "idle" => Builtin::Idle,
            "running" => Builtin::Running,
            "Some" => Builtin::Some,
            "\\typeof" => Builtin::TypeOf,
            "perm" => Builtin::PermOf,
            _ => return None,
        })
    }

    /// Allowed argument counts (inclusive range).
    pub fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Perm | Builtin::HPerm | Builtin::APerm => (2, 2),
            Builtin::PointsTo => (3, 3),
            Builtin::Value => (1, 1),
            Builtin::ArrayPerm => (5, 5),
            Builtin::Array => (2, 2),
            Builtin::Matrix => (3, 3),
            Builtin::Pointer | Builtin::PointerIndex | Builtin::Values => (3, 3),
            Builtin::LengthFn => (1, 1),
            Builtin::Head | Builtin::Tail => (1, 1),
            Builtin::Held
            | Builtin::Committed
            | Builtin::Idle
            | Builtin::Running
            | Builtin::Some
            | Builtin::TypeOf
            | Builtin::PermOf => (1, 1),
        }
    }

    /// Is this a resource (permission-carrying) built-in?
    pub fn is_resource(self) -> bool {
        matches!(
            self,
            Builtin::Perm
                | Builtin::PointsTo
                | Builtin::Value
                | Builtin::HPerm
                | Builtin::APerm
                | Builtin::ArrayPerm
                | Builtin::Pointer
                | Builtin::PointerIndex
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollKind {
    Seq,
    Set,
    Bag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompoundOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    /// C's `/=` and `%=` (see [`BinOp::TruncDiv`]).
    TruncDiv,
    TruncMod,
}

impl CompoundOp {
    pub fn bin_op(self) -> BinOp {
        match self {
            CompoundOp::Add => BinOp::Add,
            CompoundOp::Sub => BinOp::Sub,
            CompoundOp::Mul => BinOp::Mul,
            CompoundOp::Div => BinOp::Div,
            CompoundOp::Mod => BinOp::Mod,
            CompoundOp::TruncDiv => BinOp::TruncDiv,
            CompoundOp::TruncMod => BinOp::TruncMod,
        }
    }

    /// The value `target op= value` stores: `target op value`.
    pub fn value_of(self, target: &Expr, value: &Expr, span: Span) -> Expr {
        Expr::new(
            ExprKind::Binary(self.bin_op(), Box::new(target.clone()), Box::new(value.clone())),
            span,
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecKind {
    Assert,
    Assume,
    Inhale,
    Exhale,
    Fold,
    Unfold,
    Open,
    Close,
    Witness,
    Refute,
}

impl SpecKind {
    pub fn keyword(self) -> &'static str {
        match self {
            SpecKind::Assert => "assert",
            SpecKind::Assume => "assume",
            SpecKind::Inhale => "inhale",
            SpecKind::Exhale => "exhale",
            SpecKind::Fold => "fold",
            SpecKind::Unfold => "unfold",
            SpecKind::Open => "open",
            SpecKind::Close => "close",
            SpecKind::Witness => "witness",
            SpecKind::Refute => "refute",
        }
    }

    pub fn from_keyword(s: &str) -> Option<SpecKind> {
        Some(match s {
            "assert" => SpecKind::Assert,
            "assume" => SpecKind::Assume,
            "inhale" => SpecKind::Inhale,
            "exhale" => SpecKind::Exhale,
            "fold" => SpecKind::Fold,
            "unfold" => SpecKind::Unfold,
            "open" => SpecKind::Open,
            "close" => SpecKind::Close,
            "witness" => SpecKind::Witness,
            "refute" => SpecKind::Refute,
            _ => return None,
        })
    }
}
