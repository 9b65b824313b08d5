//! The canonical printer (pvl.md §9.3).
//!
//! Rewrites never re-print a whole file: they are span replacements on the original text
//! (`crate::edit`). This printer produces the text of *new* syntax only: generated statements,
//! clauses, barriers and expressions. It is also used by the round-trip tests, which print whole
//! parsed programs and parse them again (R-canon).
//!
//! Guarantees:
//! * Re-parsing the output of a parsed AST gives the same AST (up to spans) in the dialect it was
//!   printed for. Expressions are dialect-neutral: besides the parentheses the precedence table
//!   of pvl.md §4 ([`super::prec`], read in the printer's dialect) needs, every `&&`/`**`
//!   operand of `||`, `||` operand of `&&`/`**`, and `==>`/`-*` operand of `==>`/`-*` is
//!   parenthesised (pvl.md §1.2 rule 5), so a v1 program's print also reads the same in v2.
//!   (v2-only constructs such as a `par` without a block body stay v2-only.)
//! * Layout: one statement or clause per line, K&R braces, `{ }` for an empty block, single spaces
//!   around binary operators except the fraction operator (`1\2`), no trailing whitespace
//!   (outside opaque text).
//! * Comments are not part of the AST and are not printed; opaque nodes print their source text.
//! * A parsed barrier keeps its form (`contract_in_braces`); build generated barriers with
//!   `contract_in_braces: true`, the canonical `barrier(L) {` clauses `}` form.
//!
//! Arithmetic is never simplified while printing (a parsed AST prints as parsed);
//! [`simplify_arith`] is the separate light folding for generated bounds and indices.

use super::ast::*;
use super::dialect::Dialect;
use super::prec::{self, Assoc};
use num_traits::Signed;

mod decls;
mod exprs;
mod simplify;
mod stmts;
#[cfg(test)]
mod tests;

pub use simplify::{map_children, simplify_arith};

/// Printer settings: the dialect (for the few spellings that differ) and the layout.
#[derive(Clone, Debug)]
pub struct Printer {
    /// `V1` backticks the words VerCors 1.4 reserves (`tile`, `fuse`, …) when they are names and
    /// writes null-safe calls as `o->m()`; `V2` writes them plainly and as `o?.m()`.
    pub dialect: Dialect,
    /// One indentation unit.
    pub unit: String,
    /// Line break between generated lines.
    pub newline: String,
}

impl Printer {
    /// Two-space indentation and LF line breaks.
    pub fn new(dialect: Dialect) -> Printer {
        Printer { dialect, unit: "  ".to_string(), newline: "\n".to_string() }
    }

    /// The same printer with another layout (e.g. from `edit::Layout::detect`).
    pub fn with_layout(mut self, unit: &str, newline: &str) -> Printer {
        self.unit = unit.to_string();
        self.newline = newline.to_string();
        self
    }
}

/// Print an expression with minimal, dialect-neutral parentheses.
pub fn print_expr(e: &Expr, dialect: Dialect) -> String {
    Printer::new(dialect).expr(e)
}

/// Print a type, e.g. `int[]`, `seq<seq<int>>`, `int[M][N]`.
pub fn print_type(t: &Type, dialect: Dialect) -> String {
    Printer::new(dialect).ty(t)
}

/// Print a contract clause on one line, e.g. `requires Perm(a[t], 1\2);`.
pub fn print_clause(c: &Clause, dialect: Dialect) -> String {
    Printer::new(dialect).clause(c)
}

/// Print a `gpuopt` annotation on one line, e.g. `gpuopt loop_unroll i 2;`.
pub fn print_annotation(a: &Annotation, dialect: Dialect) -> String {
    Printer::new(dialect).annotation(a)
}

/// Print a statement. Every line starts with `indent` (nested lines with further `unit`s), lines
/// are separated by `newline`, and there is no line break after the last line.
///
/// Uses the v1 spellings (see [`Printer::dialect`]); the output parses the same in both dialects.
/// Use [`Printer::stmt`] to choose the dialect.
pub fn print_stmt(s: &Stmt, indent: &str, unit: &str, newline: &str) -> String {
    Printer::new(Dialect::V1).with_layout(unit, newline).stmt(s, indent)
}

/// Print a whole program (two-space indentation, LF, a final line break).
pub fn print_program(p: &Program, dialect: Dialect) -> String {
    Printer::new(dialect).program(p)
}

// ---------------------------------------------------------------------------------------------
// Precedence
// ---------------------------------------------------------------------------------------------

/// Is `e` a negation, or a (generated) negative literal, which also prints with a leading `-`?
fn is_negative(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary(UnOp::Neg, _) => true,
        ExprKind::Int(v) => v.is_negative(),
        _ => false,
    }
}

/// Does `child` need parentheses as the left (`right == false`) or right operand of `parent`
/// when read in `dialect`?
fn binary_operand_needs_parens(parent: BinOp, child: &Expr, right: bool, dialect: Dialect) -> bool {
    let p = prec::binary(parent, dialect);
    if let ExprKind::Binary(cop, ..) = &child.kind {
        // Dialect-neutral parentheses (pvl.md §1.2 rule 5), whatever the levels say.
        if prec::dialect_sensitive(parent, *cop) {
            return true;
        }
        // `(x < y) > (z)` printed as `x < y > (z)` reads as a call with type arguments,
        // `x<y>(z)` (found by the fuzzer, `fixtures/fuzz/`): a comparison inside a comparison
        // keeps its parentheses.
        let rel = |o: BinOp| matches!(o, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge);
        if rel(parent) && rel(*cop) {
            return true;
        }
        let c = prec::binary(*cop, dialect);
        if c.level != p.level {
            return c.level < p.level;
        }
        // The parser continues a right-associative operator's right operand at the same level,
        // and continues the left-nested chain after a left-associative one.
        return if right { p.assoc == Assoc::Left } else { c.assoc == Assoc::Right };
    }
    // Includes every ternary, labelled and `unfolding` operand; and `a - (-b)` (pvl.md §9.3).
    prec::level(child, dialect) < p.level || (right && parent == BinOp::Sub && is_negative(child))
}

/// `each` for every item, with `, ` between them.
fn comma_separated<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, x);
    }
}

/// `s` alone in a block: what a nested statement is wrapped in when, bare, it would read
/// differently in its context (a dangling `else`, clauses taken by the enclosing header).
fn in_block(s: &Stmt) -> Stmt {
    Stmt { kind: StmtKind::Block(Block { stmts: vec![s.clone()], span: s.span }), span: s.span }
}

fn is_plain_word(s: &str) -> bool {
    let mut cs = s.bytes();
    matches!(cs.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && cs.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The leading identifier characters of `s`.
fn leading_word(s: &str) -> &str {
    let n = s.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    &s[..n]
}
