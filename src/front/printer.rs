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
use super::keywords::{HARD_KEYWORDS, V1_RESERVED, VALUE_WORDS};
use super::lexer::is_bs_word;
use super::prec::{self, Assoc};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

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
        Printer {
            dialect,
            unit: "  ".to_string(),
            newline: "\n".to_string(),
        }
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
    Printer::new(Dialect::V1)
        .with_layout(unit, newline)
        .stmt(s, indent)
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
        let c = prec::binary(*cop, dialect);
        if c.level != p.level {
            return c.level < p.level;
        }
        // The parser continues a right-associative operator's right operand at the same level,
        // and continues the left-nested chain after a left-associative one.
        return if right {
            p.assoc == Assoc::Left
        } else {
            c.assoc == Assoc::Right
        };
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
    Stmt {
        kind: StmtKind::Block(Block {
            stmts: vec![s.clone()],
            span: s.span,
        }),
        span: s.span,
    }
}

fn is_plain_word(s: &str) -> bool {
    let mut cs = s.bytes();
    matches!(cs.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && cs.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The leading identifier characters of `s`.
fn leading_word(s: &str) -> &str {
    let n = s
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    &s[..n]
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

impl Printer {
    /// The level of `e`'s outermost form in the printer's dialect ([`prec::level`]).
    fn level(&self, e: &Expr) -> u8 {
        prec::level(e, self.dialect)
    }

    /// An identifier, backticked when it would otherwise read as a keyword (or not lex as one
    /// word). Names are never changed otherwise.
    pub fn ident(&self, id: &Ident) -> String {
        let n = id.name.as_str();
        let reserved = HARD_KEYWORDS.contains(&n)
            || VALUE_WORDS.contains(&n)
            || (self.dialect == Dialect::V1 && V1_RESERVED.contains(&n));
        if is_plain_word(n) && !reserved {
            n.to_string()
        } else {
            format!("`{n}`")
        }
    }

    pub fn expr(&self, e: &Expr) -> String {
        let mut out = String::new();
        self.expr_into(&mut out, e);
        out
    }

    /// `e` in a position where any expression may stand (argument, index, clause body, …).
    fn expr_into(&self, out: &mut String, e: &Expr) {
        match &e.kind {
            ExprKind::Int(v) => out.push_str(&v.to_string()),
            ExprKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            ExprKind::Null => out.push_str("null"),
            ExprKind::This => out.push_str("this"),
            ExprKind::Write => out.push_str("write"),
            ExprKind::Read => out.push_str("read"),
            ExprKind::NoPerm => out.push_str("none"),
            ExprKind::Empty => out.push_str("empty"),
            ExprKind::NoneOpt => out.push_str("None"),
            ExprKind::Wildcard => out.push('*'),
            ExprKind::Result => out.push_str("\\result"),
            ExprKind::ThreadId(s) => out.push_str(s),
            ExprKind::Name(id) => out.push_str(&self.ident(id)),
            ExprKind::Unary(op, x) => {
                out.push(match op {
                    UnOp::Not => '!',
                    UnOp::Neg => '-',
                });
                // `- -x` would lex as `--`, `-*` as the magic wand.
                let clash =
                    *op == UnOp::Neg && (is_negative(x) || matches!(x.kind, ExprKind::Wildcard));
                self.operand(out, x, self.level(x) < prec::UNARY || clash);
            }
            ExprKind::Binary(op, l, r) => {
                self.operand(
                    out,
                    l,
                    binary_operand_needs_parens(*op, l, false, self.dialect),
                );
                if *op == BinOp::Frac {
                    // No spaces around `\`; but `1\n` must not become the word `\n…`.
                    out.push('\\');
                    let rhs =
                        self.expr_paren(r, binary_operand_needs_parens(*op, r, true, self.dialect));
                    if is_bs_word(leading_word(&rhs)) {
                        out.push('(');
                        out.push_str(&rhs);
                        out.push(')');
                    } else {
                        out.push_str(&rhs);
                    }
                } else {
                    out.push(' ');
                    out.push_str(op.symbol());
                    out.push(' ');
                    self.operand(
                        out,
                        r,
                        binary_operand_needs_parens(*op, r, true, self.dialect),
                    );
                }
            }
            ExprKind::Cond(c, a, b) => {
                // `c ? a : b` parses `c` and `a` as binary expressions and `b` as a ternary.
                self.operand(out, c, self.level(c) < prec::IMPLIES);
                out.push_str(" ? ");
                self.operand(out, a, self.level(a) < prec::IMPLIES);
                out.push_str(" : ");
                self.operand(out, b, self.level(b) < prec::COND);
            }
            ExprKind::Field(x, name) => {
                self.receiver(out, x);
                out.push('.');
                out.push_str(&self.ident(name));
            }
            ExprKind::Index(x, i) => {
                self.receiver(out, x);
                out.push('[');
                self.expr_into(out, i);
                out.push(']');
            }
            ExprKind::Slice(x, lo, hi) => {
                self.receiver(out, x);
                out.push('[');
                if let Some(lo) = lo {
                    self.expr_into(out, lo);
                }
                out.push_str("..");
                if let Some(hi) = hi {
                    self.expr_into(out, hi);
                }
                out.push(']');
            }
            ExprKind::SeqUpdate(x, i, v) => {
                self.receiver(out, x);
                out.push('[');
                self.expr_into(out, i);
                out.push_str(" -> ");
                self.expr_into(out, v);
                out.push(']');
            }
            ExprKind::Call {
                recv,
                name,
                args,
                ghost,
                null_safe,
            } => {
                if let Some(r) = recv {
                    self.receiver(out, r);
                    out.push_str(match (null_safe, self.dialect) {
                        (false, _) => ".",
                        (true, Dialect::V1) => "->",
                        (true, Dialect::V2) => "?.",
                    });
                }
                out.push_str(&self.ident(name));
                self.args(out, args);
                self.ghost_args(out, ghost);
            }
            ExprKind::Builtin(b, args) => {
                out.push_str(b.name());
                self.args(out, args);
            }
            ExprKind::Old(x, label) => {
                out.push_str("\\old");
                if let Some(l) = label {
                    out.push('[');
                    out.push_str(&self.ident(l));
                    out.push(']');
                }
                out.push('(');
                self.expr_into(out, x);
                out.push(')');
            }
            ExprKind::Length(x) => {
                // The parser reads `|e|` with the operators above `&&` of both dialects; a
                // leading or trailing `|` would lex as `||`.
                let inner = self.expr_paren(x, self.level(x) < prec::EQ);
                let wrap = inner.starts_with('|') || inner.ends_with('|');
                out.push('|');
                if wrap {
                    out.push('(');
                }
                out.push_str(&inner);
                if wrap {
                    out.push(')');
                }
                out.push('|');
            }
            ExprKind::Quant {
                kind,
                bindings,
                cond,
                body,
            } => {
                out.push('(');
                out.push_str(kind.symbol());
                out.push(' ');
                comma_separated(out, bindings, |out, b| self.binding(out, b));
                out.push_str("; ");
                if let Some(c) = cond {
                    self.expr_into(out, c);
                    out.push_str("; ");
                }
                self.expr_into(out, body);
                out.push(')');
            }
            // `(\let T x = value; body)` and `(\sum T x; cond; body)`.
            ExprKind::Let {
                ty,
                name,
                value: middle,
                body,
            }
            | ExprKind::Sum {
                ty,
                name,
                cond: middle,
                body,
            } => {
                let is_let = matches!(e.kind, ExprKind::Let { .. });
                out.push_str(if is_let { "(\\let " } else { "(\\sum " });
                self.typed(out, ty, name);
                out.push_str(if is_let { " = " } else { "; " });
                self.expr_into(out, middle);
                out.push_str("; ");
                self.expr_into(out, body);
                out.push(')');
            }
            ExprKind::NewObject(name, args) => {
                out.push_str("new ");
                out.push_str(&self.ident(name));
                self.args(out, args);
            }
            ExprKind::NewArray(ty, dims) => {
                out.push_str("new ");
                out.push_str(&self.ty(ty));
                for d in dims {
                    out.push('[');
                    self.expr_into(out, d);
                    out.push(']');
                }
            }
            ExprKind::Collection {
                kind,
                elem_ty,
                elems,
            } => {
                let (open, close) = match (kind, elem_ty) {
                    (CollKind::Seq, Some(_)) => ("seq<", "}"),
                    (CollKind::Set, Some(_)) => ("set<", "}"),
                    (CollKind::Bag, Some(_)) => ("bag<", "}"),
                    (CollKind::Seq, None) => ("[", "]"),
                    (CollKind::Set, None) => ("{", "}"),
                    (CollKind::Bag, None) => ("b{", "}"),
                };
                out.push_str(open);
                if let Some(t) = elem_ty {
                    out.push_str(&self.ty(t));
                    out.push_str(">{");
                }
                // `[t: T]` / `{t: T}` are empty collections, so a labelled first element
                // (`t: e`) must not stand bare; parenthesise every labelled element.
                comma_separated(out, elems, |out, x| {
                    self.operand(out, x, self.level(x) < prec::COND)
                });
                out.push_str(close);
            }
            ExprKind::EmptyCollection(kind, t) => {
                out.push_str(match kind {
                    CollKind::Seq => "[t: ",
                    CollKind::Set => "{t: ",
                    CollKind::Bag => "b{t: ",
                });
                out.push_str(&self.ty(t));
                out.push(if *kind == CollKind::Seq { ']' } else { '}' });
            }
            ExprKind::Range(kind, lo, hi) => {
                out.push(if *kind == CollKind::Seq { '[' } else { '{' });
                self.expr_into(out, lo);
                out.push_str(" .. ");
                self.expr_into(out, hi);
                out.push(if *kind == CollKind::Seq { ']' } else { '}' });
            }
            ExprKind::Trigger(x) => {
                out.push_str("{: ");
                self.expr_into(out, x);
                out.push_str(" :}");
            }
            ExprKind::Unfolding(p, x) => {
                out.push_str("unfolding ");
                // The predicate is read with the operators above `in`.
                self.operand(out, p, self.level(p) <= prec::IN);
                out.push_str(" in ");
                self.expr_into(out, x);
            }
            ExprKind::Scale(pi, r) => {
                out.push('[');
                self.expr_into(out, pi);
                out.push(']');
                // The parser takes `[π]` as a scale only before `Perm`, `PointsTo`, `Value` or
                // `(`; anything else is parenthesised.
                let bare = matches!(
                    r.kind,
                    ExprKind::Builtin(Builtin::Perm | Builtin::PointsTo | Builtin::Value, _)
                );
                self.operand(out, r, !bare);
            }
            ExprKind::Labelled(l, x) => {
                out.push_str(&self.ident(l));
                out.push_str(": ");
                self.expr_into(out, x);
            }
            ExprKind::Opaque(o) => out.push_str(&o.text),
        }
    }

    fn expr_paren(&self, e: &Expr, paren: bool) -> String {
        let mut s = String::new();
        self.operand(&mut s, e, paren);
        s
    }

    fn operand(&self, out: &mut String, e: &Expr, paren: bool) {
        if paren {
            out.push('(');
            self.expr_into(out, e);
            out.push(')');
        } else {
            self.expr_into(out, e);
        }
    }

    /// The expression in front of `.f`, `[i]`, `(args)`.
    fn receiver(&self, out: &mut String, e: &Expr) {
        self.operand(out, e, self.level(e) < prec::POSTFIX);
    }

    fn args(&self, out: &mut String, args: &[Expr]) {
        out.push('(');
        comma_separated(out, args, |out, a| self.expr_into(out, a));
        out.push(')');
    }

    /// Names separated by `, `.
    fn idents(&self, out: &mut String, names: &[Ident]) {
        comma_separated(out, names, |out, n| out.push_str(&self.ident(n)));
    }

    /// `T x`, as in parameters and binders.
    fn typed(&self, out: &mut String, ty: &Type, name: &Ident) {
        out.push_str(&self.ty(ty));
        out.push(' ');
        out.push_str(&self.ident(name));
    }

    /// `T x = lo .. hi`, as in ranged `for` headers, `par` iterators and quantifier bindings.
    fn typed_range(&self, out: &mut String, ty: &Type, name: &Ident, lo: &Expr, hi: &Expr) {
        self.typed(out, ty, name);
        out.push_str(" = ");
        self.expr_into(out, lo);
        out.push_str(" .. ");
        self.expr_into(out, hi);
    }

    fn ghost_args(&self, out: &mut String, g: &GhostArgs) {
        // Ghost blocks inside an expression are printed on one line.
        let inline = Printer {
            dialect: self.dialect,
            unit: String::new(),
            newline: " ".to_string(),
        };
        if let Some(b) = &g.with {
            out.push_str(" with ");
            inline.block(out, b, "");
        }
        if let Some(b) = &g.then {
            out.push_str(" then ");
            inline.block(out, b, "");
        }
        // `given { x = e, … }` and `yields { x = y, … }`, their values already printed.
        let pairs = |out: &mut String, word: &str, pairs: &[(&Ident, String)]| {
            if !pairs.is_empty() {
                out.push_str(word);
                out.push_str(" { ");
                comma_separated(out, pairs, |out, (n, v)| {
                    out.push_str(&self.ident(n));
                    out.push_str(" = ");
                    out.push_str(v);
                });
                out.push_str(" }");
            }
        };
        let given: Vec<_> = g.given.iter().map(|(n, v)| (n, self.expr(v))).collect();
        pairs(out, " given", &given);
        let yields: Vec<_> = g.yields.iter().map(|(n, v)| (n, self.ident(v))).collect();
        pairs(out, " yields", &yields);
    }

    fn binding(&self, out: &mut String, b: &Binding) {
        match &b.range {
            Some((lo, hi)) => self.typed_range(out, &b.ty, &b.name, lo, hi),
            None => self.typed(out, &b.ty, &b.name),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Types, clauses, annotations
    // -----------------------------------------------------------------------------------------

    pub fn ty(&self, t: &Type) -> String {
        let mut out = String::new();
        // `int[M][N]` is Array(Array(int, N), M): print the outer dimension first.
        let mut dims = Vec::new();
        let mut base = t;
        while let TypeKind::Array(inner, size) = &base.kind {
            dims.push(size.as_deref());
            base = inner;
        }
        let word = match &base.kind {
            TypeKind::Int => "int",
            TypeKind::Boolean => "boolean",
            TypeKind::Bool => "bool",
            TypeKind::Void => "void",
            TypeKind::String => "string",
            TypeKind::Resource => "resource",
            TypeKind::Process => "process",
            TypeKind::Frac => "frac",
            TypeKind::ZFrac => "zfrac",
            TypeKind::Rational => "rational",
            TypeKind::Float32 => "float32",
            TypeKind::Float64 => "float64",
            TypeKind::Char => "char",
            TypeKind::Generic1(g, inner) => {
                out.push_str(g.as_str());
                out.push('<');
                out.push_str(&self.ty(inner));
                out.push('>');
                ""
            }
            TypeKind::Map(a, b) | TypeKind::Tuple(a, b) => {
                out.push_str(if matches!(base.kind, TypeKind::Map(..)) {
                    "map<"
                } else {
                    "tuple<"
                });
                out.push_str(&self.ty(a));
                out.push_str(", ");
                out.push_str(&self.ty(b));
                out.push('>');
                ""
            }
            TypeKind::Class(name, args) => {
                out.push_str(&self.ident(name));
                if !args.is_empty() {
                    out.push('<');
                    comma_separated(&mut out, args, |out, a| out.push_str(&self.ty(a)));
                    out.push('>');
                }
                ""
            }
            TypeKind::Array(..) => "",
        };
        out.push_str(word);
        for d in dims {
            out.push('[');
            if let Some(e) = d {
                self.expr_into(&mut out, e);
            }
            out.push(']');
        }
        out
    }

    pub fn clause(&self, c: &Clause) -> String {
        let mut out = String::from(c.kind.keyword());
        match &c.body {
            ClauseBody::Expr(e) => {
                out.push(' ');
                self.expr_into(&mut out, e);
            }
            ClauseBody::Decl(t, n) => {
                out.push(' ');
                self.typed(&mut out, t, n);
            }
            ClauseBody::List(es) => {
                if !es.is_empty() {
                    out.push(' ');
                }
                comma_separated(&mut out, es, |out, e| self.expr_into(out, e));
            }
            ClauseBody::DecreasesAssume => out.push_str(" assume"),
            ClauseBody::Signals(t, n, e) => {
                out.push_str(" (");
                self.typed(&mut out, t, n);
                out.push_str(") ");
                self.expr_into(&mut out, e);
            }
        }
        out.push(';');
        out
    }

    /// A `gpuopt` annotation: its word and operand tokens as written (the front end does not
    /// interpret them; see [`Annotation`]), with a single space where the source had space or a
    /// comment, so that they read back as the same tokens (`a(t)` is a call, `a (t)` two
    /// operands).
    pub fn annotation(&self, a: &Annotation) -> String {
        let mut out = String::from("gpuopt ");
        // The optimization word as written (`loop_unroll` or its synonym `unroll`).
        out.push_str(&a.keyword.name);
        // Tokens that touched in the source touch again, and lex the same way again.
        for t in &a.operands {
            if t.spaced {
                out.push(' ');
            }
            out.push_str(&t.text);
        }
        out.push(';');
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

/// Does a statement end in an `if` without `else` (which would capture a following `else`)?
fn ends_in_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { els: None, .. } => true,
        StmtKind::If { els: Some(e), .. } => ends_in_open_if(e),
        StmtKind::While(l) | StmtKind::For(l) => ends_in_open_if(&l.body),
        StmtKind::RangedFor { body, .. } => ends_in_open_if(body),
        StmtKind::Ghost(inner) => ends_in_open_if(inner),
        StmtKind::Par(p) => p.arms.last().is_some_and(|a| ends_in_open_if(&a.body)),
        _ => false,
    }
}

/// Does a statement start with contract clauses (which a preceding `par` or barrier header
/// would take as its own)?
fn starts_with_clause(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::While(l) | StmtKind::For(l) => {
            l.prefix.annotations.is_empty() && !l.prefix.clauses.is_empty()
        }
        StmtKind::RangedFor { prefix, .. } => {
            prefix.annotations.is_empty() && !prefix.clauses.is_empty()
        }
        StmtKind::Par(p) => p.prefix.annotations.is_empty() && !p.prefix.clauses.is_empty(),
        _ => false,
    }
}

impl Printer {
    /// A statement; see [`print_stmt`] for the layout.
    pub fn stmt(&self, s: &Stmt, indent: &str) -> String {
        let mut out = String::new();
        self.stmt_into(&mut out, s, indent);
        out
    }

    /// A program, ending with a line break.
    pub fn program(&self, p: &Program) -> String {
        let mut out = String::new();
        let is_field = |item: &Item| matches!(item, Item::Field(_));
        self.members(&mut out, &p.items, is_field, |out, item| match item {
            Item::Class(c) => self.class(out, c),
            Item::Method(m) => self.method(out, m, ""),
            Item::Field(f) => self.field(out, f, ""),
            Item::Opaque(o) => out.push_str(&o.text),
        });
        if let Some(b) = &p.main {
            if !p.items.is_empty() {
                out.push_str(&self.newline);
            }
            self.block(&mut out, b, "");
            out.push_str(&self.newline);
        }
        out
    }

    fn class(&self, out: &mut String, c: &Class) {
        out.push_str("class ");
        out.push_str(&self.ident(&c.name));
        self.type_params(out, &c.type_params);
        if c.members.is_empty() {
            out.push_str(" { }");
            return;
        }
        out.push_str(" {");
        out.push_str(&self.newline);
        let ind = self.unit.clone();
        let is_field = |m: &Member| matches!(m, Member::Field(_));
        self.members(out, &c.members, is_field, |out, m| match m {
            Member::Field(f) => self.field(out, f, &ind),
            Member::Method(m) => self.method(out, m, &ind),
        });
        out.push('}');
    }

    /// Declarations each followed by a line break, with a blank line between two of them except
    /// inside a run of fields.
    fn members<T>(
        &self,
        out: &mut String,
        items: &[T],
        is_field: impl Fn(&T) -> bool,
        mut each: impl FnMut(&mut String, &T),
    ) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 && !(is_field(item) && is_field(&items[i - 1])) {
                out.push_str(&self.newline);
            }
            each(out, item);
            out.push_str(&self.newline);
        }
    }

    fn type_params(&self, out: &mut String, tps: &[Ident]) {
        if tps.is_empty() {
            return;
        }
        out.push('<');
        self.idents(out, tps);
        out.push('>');
    }

    fn field(&self, out: &mut String, f: &Field, ind: &str) {
        out.push_str(ind);
        if f.is_final {
            out.push_str("final ");
        }
        out.push_str(&self.ty(&f.ty));
        out.push(' ');
        self.idents(out, &f.names);
        out.push(';');
    }

    /// Annotations, then clauses, one per line at `ind`, each followed by a line break.
    fn prefix(&self, out: &mut String, p: &Prefix, ind: &str) {
        for a in &p.annotations {
            out.push_str(ind);
            out.push_str(&self.annotation(a));
            out.push_str(&self.newline);
        }
        self.clauses(out, &p.clauses, ind);
    }

    fn clauses(&self, out: &mut String, cs: &[Clause], ind: &str) {
        for c in cs {
            out.push_str(ind);
            out.push_str(&self.clause(c));
            out.push_str(&self.newline);
        }
    }

    fn method(&self, out: &mut String, m: &Method, ind: &str) {
        self.prefix(out, &m.prefix, ind);
        out.push_str(ind);
        for md in &m.modifiers {
            out.push_str(md.as_str());
            out.push(' ');
        }
        match m.kind {
            MethodKind::Method => self.typed(out, &m.ret, &m.name),
            MethodKind::CtorV1 => out.push_str(&self.ident(&m.name)),
            MethodKind::CtorV2 => out.push_str("constructor"),
        }
        self.type_params(out, &m.type_params);
        out.push('(');
        comma_separated(out, &m.params, |out, p| self.typed(out, &p.ty, &p.name));
        out.push(')');
        match &m.body {
            MethodBody::Block(b) => {
                out.push(' ');
                self.block(out, b, ind);
            }
            MethodBody::Abstract => out.push(';'),
            MethodBody::Expr(e) => {
                out.push_str(" = ");
                self.expr_into(out, e);
                out.push(';');
            }
        }
    }

    /// `{ … }` starting at the cursor; the closing brace at `ind`, no line break after it.
    fn block(&self, out: &mut String, b: &Block, ind: &str) {
        self.stmt_list(out, &b.stmts, ind);
    }

    fn stmt_list(&self, out: &mut String, stmts: &[Stmt], ind: &str) {
        if stmts.is_empty() {
            out.push_str("{ }");
            return;
        }
        out.push('{');
        out.push_str(&self.newline);
        let inner = format!("{ind}{}", self.unit);
        for s in stmts {
            self.stmt_into(out, s, &inner);
            out.push_str(&self.newline);
        }
        out.push_str(ind);
        out.push('}');
    }

    /// A statement body after a header (`while (…)`, `else`, …) that has already been written:
    /// a block continues the header line; anything else goes on its own line, one unit deeper.
    fn body(&self, out: &mut String, s: &Stmt, ind: &str) {
        if let StmtKind::Block(b) = &s.kind {
            out.push(' ');
            self.block(out, b, ind);
        } else {
            out.push_str(&self.newline);
            self.stmt_into(out, s, &format!("{ind}{}", self.unit));
        }
    }

    /// Write `s` at indentation `ind` (the first line too), without a final line break.
    fn stmt_into(&self, out: &mut String, s: &Stmt, ind: &str) {
        match &s.kind {
            // The parser keeps a run of unattached annotations as one block-less `Block`
            // statement; printed in braces it would read as a block around such a run.
            StmtKind::Block(b)
                if b.stmts.len() >= 2
                    && b.stmts
                        .iter()
                        .all(|s| matches!(s.kind, StmtKind::Annotation(_))) =>
            {
                for (i, a) in b.stmts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.newline);
                    }
                    self.stmt_into(out, a, ind);
                }
            }
            StmtKind::Block(b) => {
                out.push_str(ind);
                self.block(out, b, ind);
            }
            StmtKind::Decl { .. }
            | StmtKind::Assign { .. }
            | StmtKind::CompoundAssign { .. }
            | StmtKind::IncDec { .. }
            | StmtKind::Expr(_) => {
                out.push_str(ind);
                self.simple(out, s);
                out.push(';');
            }
            StmtKind::If { cond, then, els } => {
                out.push_str(ind);
                out.push_str("if (");
                self.expr_into(out, cond);
                out.push(')');
                // A then-branch ending in an open `if` would take our `else`: brace it.
                let braced;
                let then: &Stmt = if els.is_some() && ends_in_open_if(then) {
                    braced = in_block(then);
                    &braced
                } else {
                    then
                };
                self.body(out, then, ind);
                if let Some(e) = els {
                    if matches!(then.kind, StmtKind::Block(_)) {
                        out.push(' ');
                    } else {
                        out.push_str(&self.newline);
                        out.push_str(ind);
                    }
                    out.push_str("else");
                    if let StmtKind::If { .. } = e.kind {
                        // `else if` on one line: print the nested `if` at our indentation.
                        out.push(' ');
                        let nested = self.stmt(e, ind);
                        out.push_str(&nested[ind.len()..]);
                    } else {
                        self.body(out, e, ind);
                    }
                }
            }
            StmtKind::While(l) => self.loop_stmt(out, &l.prefix, "while", &l.body, ind, |out| {
                if let Some(c) = &l.cond {
                    self.expr_into(out, c);
                }
            }),
            StmtKind::For(l) => self.loop_stmt(out, &l.prefix, "for", &l.body, ind, |out| {
                self.simple_list(out, &l.init);
                out.push(';');
                if let Some(c) = &l.cond {
                    out.push(' ');
                    self.expr_into(out, c);
                }
                out.push(';');
                if !l.update.is_empty() {
                    out.push(' ');
                    self.simple_list(out, &l.update);
                }
            }),
            StmtKind::RangedFor {
                prefix,
                ty,
                var,
                lo,
                hi,
                body,
                ..
            } => self.loop_stmt(out, prefix, "for", body, ind, |out| {
                self.typed_range(out, ty, var, lo, hi)
            }),
            StmtKind::Par(p) => self.par(out, p, ind),
            StmtKind::Parallel { sequential, body } => {
                out.push_str(ind);
                out.push_str(if *sequential {
                    "sequential "
                } else {
                    "parallel "
                });
                self.stmt_list(out, body, ind);
            }
            StmtKind::Barrier(b) => self.barrier(out, b, ind),
            StmtKind::Invariant {
                name,
                resource,
                body,
            } => {
                out.push_str(ind);
                out.push_str("invariant ");
                out.push_str(&self.ident(name));
                out.push('(');
                self.expr_into(out, resource);
                out.push_str(") ");
                self.block(out, body, ind);
            }
            StmtKind::Atomic { names, body } => {
                out.push_str(ind);
                out.push_str("atomic(");
                self.idents(out, names);
                out.push_str(") ");
                self.block(out, body, ind);
            }
            StmtKind::Return(e) => {
                out.push_str(ind);
                out.push_str("return");
                if let Some(e) = e {
                    out.push(' ');
                    self.expr_into(out, e);
                }
                out.push(';');
            }
            StmtKind::Spec { kind, expr } => {
                out.push_str(ind);
                out.push_str(kind.keyword());
                out.push(' ');
                self.expr_into(out, expr);
                out.push(';');
            }
            StmtKind::Ghost(inner) => {
                out.push_str(ind);
                out.push_str("ghost ");
                let text = self.stmt(inner, ind);
                out.push_str(&text[ind.len()..]);
            }
            StmtKind::Annotation(a) => {
                out.push_str(ind);
                out.push_str(&self.annotation(a));
            }
            StmtKind::Opaque(o) => {
                out.push_str(ind);
                out.push_str(&o.text);
            }
        }
    }

    /// A loop at `ind`: its prefix, then `keyword (`, the header `head` writes, `)` and the body.
    fn loop_stmt(
        &self,
        out: &mut String,
        prefix: &Prefix,
        keyword: &str,
        body: &Stmt,
        ind: &str,
        head: impl FnOnce(&mut String),
    ) {
        self.prefix(out, prefix, ind);
        out.push_str(ind);
        out.push_str(keyword);
        out.push_str(" (");
        head(out);
        out.push(')');
        self.body(out, body, ind);
    }

    /// A simple statement without its `;` (also the parts of a `for` header).
    fn simple(&self, out: &mut String, s: &Stmt) {
        match &s.kind {
            StmtKind::Decl { ty, vars } => {
                out.push_str(&self.ty(ty));
                if !vars.is_empty() {
                    out.push(' ');
                }
                comma_separated(out, vars, |out, d| {
                    out.push_str(&self.ident(&d.name));
                    if let Some(e) = &d.init {
                        out.push_str(" = ");
                        self.expr_into(out, e);
                    }
                });
            }
            StmtKind::Assign { target, value } => {
                self.expr_into(out, target);
                out.push_str(" = ");
                self.expr_into(out, value);
            }
            StmtKind::CompoundAssign { target, op, value } => {
                self.expr_into(out, target);
                out.push(' ');
                out.push_str(op.bin_op().symbol());
                out.push_str("= ");
                self.expr_into(out, value);
            }
            StmtKind::IncDec { target, inc } => {
                self.expr_into(out, target);
                out.push_str(if *inc { "++" } else { "--" });
            }
            StmtKind::Expr(e) => self.expr_into(out, e),
            _ => {
                // Not a simple statement (only a generated AST can put one in a `for` header):
                // print it whole, without its final `;`.
                let text = self.stmt(s, "");
                out.push_str(text.strip_suffix(';').unwrap_or(&text));
            }
        }
    }

    fn simple_list(&self, out: &mut String, stmts: &[Stmt]) {
        comma_separated(out, stmts, |out, s| self.simple(out, s));
    }

    fn par(&self, out: &mut String, p: &Par, ind: &str) {
        self.prefix(out, &p.prefix, ind);
        let inner = format!("{ind}{}", self.unit);
        for (i, arm) in p.arms.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.newline);
            }
            out.push_str(ind);
            out.push_str(if i == 0 { "par" } else { "and" });
            if let Some(l) = &arm.label {
                out.push(' ');
                out.push_str(&self.ident(l));
            }
            if !arm.iters.is_empty() || arm.wait.is_some() {
                out.push_str(" (");
                comma_separated(out, &arm.iters, |out, it| {
                    self.typed_range(out, &it.ty, &it.name, &it.lo, &it.hi)
                });
                if let Some(w) = &arm.wait {
                    // The wait list keeps its text, which starts with its `;`.
                    out.push_str(&w.text);
                }
                out.push(')');
            }
            // A body that starts with clauses would lose them to the per-thread contract.
            let braced;
            let body: &Stmt = if starts_with_clause(&arm.body) {
                braced = in_block(&arm.body);
                &braced
            } else {
                &arm.body
            };
            if arm.contract.is_empty() {
                self.body(out, body, ind);
            } else {
                // Per-thread clauses one unit below the header, the block at the header's level.
                out.push_str(&self.newline);
                self.clauses(out, &arm.contract, &inner);
                match &body.kind {
                    StmtKind::Block(b) => {
                        out.push_str(ind);
                        self.block(out, b, ind);
                    }
                    _ => self.stmt_into(out, body, &inner),
                }
            }
        }
    }

    fn barrier(&self, out: &mut String, b: &Barrier, ind: &str) {
        out.push_str(ind);
        out.push_str("barrier(");
        out.push_str(&self.ident(&b.label));
        if !b.tags.is_empty() {
            out.push_str("; ");
        }
        self.idents(out, &b.tags);
        out.push(')');
        let inner = format!("{ind}{}", self.unit);
        if b.contract_in_braces || (b.body.is_none() && b.contract.is_empty()) {
            // `barrier(L) {` clauses `}`: the canonical form of generated barriers.
            if b.contract.is_empty() {
                out.push_str(" { }");
            } else {
                out.push_str(" {");
                out.push_str(&self.newline);
                self.clauses(out, &b.contract, &inner);
                out.push_str(ind);
                out.push('}');
            }
            return;
        }
        // `barrier(L)` clauses `{ body }`, kept for barriers parsed in that form.
        let empty = Block {
            stmts: Vec::new(),
            span: Default::default(),
        };
        let body = b.body.as_ref().unwrap_or(&empty);
        if b.contract.is_empty() {
            out.push(' ');
        } else {
            out.push_str(&self.newline);
            self.clauses(out, &b.contract, &inner);
            out.push_str(ind);
        }
        self.block(out, body, ind);
    }
}

// ---------------------------------------------------------------------------------------------
// Light arithmetic simplification for generated expressions
// ---------------------------------------------------------------------------------------------

/// Fold literal arithmetic in a generated expression (pvl.md §9.3), bottom-up everywhere in `e`:
/// * `2 * 3` → `6`, `0 + 5` → `5`, `2 - 5` → `-3` (as unary minus: there are no negative
///   literals), `7 / 2` → `3` and `7 % 2` → `1` for a non-negative dividend and positive divisor
///   (where truncating and Euclidean division agree);
/// * `e + 0`, `e - 0`, `0 + e`, `e * 1`, `e / 1` → `e`; `-(-k)` → `k` for a literal `k`;
/// * a literal chain at the end of a sum: `(e + 1) + 1` → `e + 2`, `(e + 1) - 3` → `e - 2`;
/// * `e + -k` → `e - k` and `e - -k` → `e + k` for a literal `k`.
///
/// Nothing is reordered: `n - 1 - t` stays as it is, and `e` always keeps its place. Fractions
/// (`\`) are never folded. Meant for bounds, indices and counters the optimizer builds; the
/// printer never applies it to parsed expressions.
pub fn simplify_arith(e: &Expr) -> Expr {
    let e = map_children(e, &mut simplify_arith);
    let span = e.span;
    match e.kind {
        ExprKind::Unary(UnOp::Neg, x) => match lit(&x) {
            Some(v) if v.is_negative() => int_expr(-v, span),
            _ => Expr::new(ExprKind::Unary(UnOp::Neg, x), span),
        },
        ExprKind::Binary(op, l, r) => fold_binary(op, *l, *r, span),
        kind => Expr::new(kind, span),
    }
}

/// The value of an integer literal or a negated one.
fn lit(e: &Expr) -> Option<BigInt> {
    match &e.kind {
        ExprKind::Int(v) => Some(v.clone()),
        ExprKind::Unary(UnOp::Neg, x) => match &x.kind {
            ExprKind::Int(v) => Some(-v.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A literal: `-k` as unary minus applied to `k`.
fn int_expr(v: BigInt, span: super::span::Span) -> Expr {
    if v.is_negative() {
        Expr::new(
            ExprKind::Unary(UnOp::Neg, Box::new(Expr::new(ExprKind::Int(-v), span))),
            span,
        )
    } else {
        Expr::new(ExprKind::Int(v), span)
    }
}

fn fold_binary(op: BinOp, l: Expr, r: Expr, span: super::span::Span) -> Expr {
    let (lv, rv) = (lit(&l), lit(&r));
    if let (Some(a), Some(b)) = (&lv, &rv) {
        let folded = match op {
            BinOp::Add => Some(a + b),
            BinOp::Sub => Some(a - b),
            BinOp::Mul => Some(a * b),
            BinOp::Div | BinOp::Mod if !a.is_negative() && b.is_positive() => {
                Some(if op == BinOp::Div { a / b } else { a % b })
            }
            _ => None,
        };
        if let Some(v) = folded {
            return int_expr(v, span);
        }
    }
    match op {
        BinOp::Add | BinOp::Sub => {
            let sign = |o: BinOp, v: BigInt| if o == BinOp::Add { v } else { -v };
            if let Some(b) = &rv {
                if b.is_zero() {
                    return l;
                }
                // `(e ± a) ± b` → `e ± (±a ± b)`: only the literals move together.
                if let ExprKind::Binary(inner @ (BinOp::Add | BinOp::Sub), ll, lr) = &l.kind {
                    if let Some(a) = lit(lr) {
                        let total = sign(*inner, a) + sign(op, b.clone());
                        return offset(*ll.clone(), total, span);
                    }
                }
                return offset(l, sign(op, b.clone()), span);
            }
            if op == BinOp::Add && lv.as_ref().is_some_and(Zero::is_zero) {
                return r;
            }
        }
        BinOp::Mul | BinOp::Div if rv.as_ref().is_some_and(One::is_one) => return l,
        _ => {}
    }
    Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
}

/// `e + v` written as `e + v`, `e - |v|` or `e`.
fn offset(e: Expr, v: BigInt, span: super::span::Span) -> Expr {
    if v.is_zero() {
        return e;
    }
    let (op, mag) = if v.is_negative() {
        (BinOp::Sub, -v)
    } else {
        (BinOp::Add, v)
    };
    Expr::new(
        ExprKind::Binary(
            op,
            Box::new(e),
            Box::new(Expr::new(ExprKind::Int(mag), span)),
        ),
        span,
    )
}

/// Rebuild `e` with `f` applied to each direct sub-expression (statements inside ghost blocks
/// are left as they are).
pub fn map_children(e: &Expr, f: &mut dyn FnMut(&Expr) -> Expr) -> Expr {
    let mut bx = |x: &Expr| Box::new(f(x));
    let kind = match &e.kind {
        ExprKind::Unary(op, x) => ExprKind::Unary(*op, bx(x)),
        ExprKind::Binary(op, l, r) => {
            let l = bx(l);
            ExprKind::Binary(*op, l, bx(r))
        }
        ExprKind::Cond(c, a, b) => {
            let c = bx(c);
            let a = bx(a);
            ExprKind::Cond(c, a, bx(b))
        }
        ExprKind::Field(x, n) => ExprKind::Field(bx(x), n.clone()),
        ExprKind::Index(x, i) => {
            let x = bx(x);
            ExprKind::Index(x, bx(i))
        }
        ExprKind::Slice(x, lo, hi) => {
            let x = bx(x);
            let lo = lo.as_deref().map(&mut bx);
            ExprKind::Slice(x, lo, hi.as_deref().map(&mut bx))
        }
        ExprKind::SeqUpdate(x, i, v) => {
            let x = bx(x);
            let i = bx(i);
            ExprKind::SeqUpdate(x, i, bx(v))
        }
        ExprKind::Call {
            recv,
            name,
            args,
            ghost,
            null_safe,
        } => {
            let recv = recv.as_deref().map(&mut bx);
            let args = args.iter().map(|a| *bx(a)).collect();
            let given = ghost
                .given
                .iter()
                .map(|(n, v)| (n.clone(), *bx(v)))
                .collect();
            ExprKind::Call {
                recv,
                name: name.clone(),
                args,
                ghost: Box::new(GhostArgs {
                    given,
                    ..(**ghost).clone()
                }),
                null_safe: *null_safe,
            }
        }
        ExprKind::Builtin(b, args) => ExprKind::Builtin(*b, args.iter().map(|a| *bx(a)).collect()),
        ExprKind::Old(x, l) => ExprKind::Old(bx(x), l.clone()),
        ExprKind::Length(x) => ExprKind::Length(bx(x)),
        ExprKind::Quant {
            kind,
            bindings,
            cond,
            body,
        } => {
            let bindings = bindings
                .iter()
                .map(|b| Binding {
                    range: b.range.as_ref().map(|(lo, hi)| (bx(lo), bx(hi))),
                    ..b.clone()
                })
                .collect();
            let cond = cond.as_deref().map(&mut bx);
            ExprKind::Quant {
                kind: *kind,
                bindings,
                cond,
                body: bx(body),
            }
        }
        ExprKind::Let {
            ty,
            name,
            value,
            body,
        } => {
            let value = bx(value);
            ExprKind::Let {
                ty: ty.clone(),
                name: name.clone(),
                value,
                body: bx(body),
            }
        }
        ExprKind::Sum {
            ty,
            name,
            cond,
            body,
        } => {
            let cond = bx(cond);
            ExprKind::Sum {
                ty: ty.clone(),
                name: name.clone(),
                cond,
                body: bx(body),
            }
        }
        ExprKind::NewObject(n, args) => {
            ExprKind::NewObject(n.clone(), args.iter().map(|a| *bx(a)).collect())
        }
        ExprKind::NewArray(t, dims) => {
            ExprKind::NewArray(t.clone(), dims.iter().map(|a| *bx(a)).collect())
        }
        ExprKind::Collection {
            kind,
            elem_ty,
            elems,
        } => ExprKind::Collection {
            kind: *kind,
            elem_ty: elem_ty.clone(),
            elems: elems.iter().map(|a| *bx(a)).collect(),
        },
        ExprKind::Range(k, lo, hi) => {
            let lo = bx(lo);
            ExprKind::Range(*k, lo, bx(hi))
        }
        ExprKind::Trigger(x) => ExprKind::Trigger(bx(x)),
        ExprKind::Unfolding(p, x) => {
            let p = bx(p);
            ExprKind::Unfolding(p, bx(x))
        }
        ExprKind::Scale(p, r) => {
            let p = bx(p);
            ExprKind::Scale(p, bx(r))
        }
        ExprKind::Labelled(l, x) => ExprKind::Labelled(l.clone(), bx(x)),
        k => k.clone(),
    };
    Expr::new(kind, e.span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::parser::parse_expr_text;

    fn pe(s: &str) -> Expr {
        parse_expr_text(s, Dialect::V1).unwrap_or_else(|d| panic!("{s}: {:?}", d))
    }

    fn canon(s: &str) -> String {
        print_expr(&pe(s), Dialect::V1)
    }

    #[test]
    fn minimal_parentheses() {
        assert_eq!(canon("(a + b) * c"), "(a + b) * c");
        assert_eq!(canon("a + (b * c)"), "a + b * c");
        assert_eq!(canon("(a - b) - c"), "a - b - c");
        assert_eq!(canon("a - (b - c)"), "a - (b - c)");
        assert_eq!(canon("a - -b"), "a - (-b)");
        assert_eq!(canon("-(-x)"), "-(-x)");
        assert_eq!(canon("!(a || b)"), "!(a || b)");
        assert_eq!(canon("-x * y"), "-x * y");
        assert_eq!(canon("x % 2 == 0 ==> y"), "x % 2 == 0 ==> y");
        assert_eq!(canon("c ? a : b ? d : e"), "c ? a : b ? d : e");
        assert_eq!(canon("(c ? a : b) ? d : e"), "(c ? a : b) ? d : e");
        assert_eq!(canon("x + (c ? 1 : 2)"), "x + (c ? 1 : 2)");
        assert_eq!(canon("(x :: s) ++ t"), "(x :: s) ++ t");
        assert_eq!(canon("x :: (s ++ t)"), "x :: s ++ t");
        assert_eq!(canon("(new A()).f"), "(new A()).f");
        assert_eq!(canon("(-a)[i]"), "(-a)[i]");
    }

    #[test]
    fn dialect_neutral_parentheses() {
        // (`parse_expr_text` refuses the unparenthesised mixes: they draw warning A0010.)
        let (a, b, c) = (Expr::name("a"), Expr::name("b"), Expr::name("c"));
        let and_or = Expr::bin(
            BinOp::Or,
            Expr::bin(BinOp::And, a.clone(), b.clone()),
            c.clone(),
        );
        assert_eq!(print_expr(&and_or, Dialect::V1), "(a && b) || c");
        let or_and = Expr::bin(
            BinOp::Or,
            a.clone(),
            Expr::bin(BinOp::And, b.clone(), c.clone()),
        );
        assert_eq!(print_expr(&or_and, Dialect::V2), "a || (b && c)");
        let imp = Expr::bin(BinOp::Implies, Expr::bin(BinOp::Implies, a, b), c);
        assert_eq!(print_expr(&imp, Dialect::V1), "(a ==> b) ==> c");
        assert_eq!(canon("(a || b) && c"), "(a || b) && c");
        assert_eq!(canon("a ==> (b ==> c)"), "a ==> (b ==> c)");
        assert_eq!(canon("a && b ** c"), "a && b ** c");
        assert_eq!(canon("a && (b ** c)"), "a && (b ** c)");
    }

    /// The shapes a precedence table gets wrong most easily, in both dialects: printing keeps
    /// the parentheses the reading needs, and re-parsing the print gives the same tree.
    #[test]
    fn precedence_shapes_round_trip_in_both_dialects() {
        let cases = [
            ("(a ==> b) ==> c", "(a ==> b) ==> c"),
            ("a ==> (b ==> c)", "a ==> (b ==> c)"),
            ("(a -* b) ==> c", "(a -* b) ==> c"),
            ("(a * b) ^^ c", "(a * b) ^^ c"),
            ("a * (b ^^ c)", "a * b ^^ c"),
            ("(a ^^ b) ^^ c", "a ^^ b ^^ c"),
            ("a ^^ (b ^^ c)", "a ^^ (b ^^ c)"),
            ("(a + b) :: s", "(a + b) :: s"),
            ("(a \\ b) :: s", "(a\\b) :: s"),
            ("x :: (y :: s)", "x :: y :: s"),
            ("(x :: y) :: s", "(x :: y) :: s"),
            ("!(a || b)", "!(a || b)"),
            ("!(a && b)", "!(a && b)"),
            ("!(a == b)", "!(a == b)"),
            ("!((a || b) && c)", "!((a || b) && c)"),
            ("!(a || (b && c))", "!(a || (b && c))"),
            (
                "!((tid < 2 || tid > 5) && tid % 2 == 0)",
                "!((tid < 2 || tid > 5) && tid % 2 == 0)",
            ),
            ("(a || b) == (c && d)", "(a || b) == (c && d)"),
            ("(a == b) == c", "a == b == c"),
            ("a == (b == c)", "a == (b == c)"),
            ("(a == b) < c", "(a == b) < c"),
            ("(a < b) == (c < d)", "a < b == c < d"),
            ("(a + b) == (c * d)", "a + b == c * d"),
            ("(a ? b : c) == d", "(a ? b : c) == d"),
            ("(c ? a : b) ? d : e", "(c ? a : b) ? d : e"),
            ("c ? (a ? b : d) : e", "c ? (a ? b : d) : e"),
            ("c ? a : (b ? d : e)", "c ? a : b ? d : e"),
            ("((a || b) && c) ? x : y", "(a || b) && c ? x : y"),
            ("(a ==> b) ? x : y", "a ==> b ? x : y"),
            ("c ? (a ==> b) : (d ==> e)", "c ? a ==> b : d ==> e"),
            ("!(c ? a : b)", "!(c ? a : b)"),
            (
                "(\\forall* int k; (k < 2 || k > 5) && k % 2 == 0; Perm(a[k], 1\\4))",
                "(\\forall* int k; (k < 2 || k > 5) && k % 2 == 0; Perm(a[k], 1\\4))",
            ),
            (
                "(\\forall* int k; k < 2 || (k > 5 && k % 2 == 0); Perm(a[k], 1\\4))",
                "(\\forall* int k; k < 2 || (k > 5 && k % 2 == 0); Perm(a[k], 1\\4))",
            ),
            ("a - (b - c)", "a - (b - c)"),
            ("a - (-b)", "a - (-b)"),
        ];
        for d in [Dialect::V1, Dialect::V2] {
            for (src, want) in cases {
                let e = parse_expr_text(src, d)
                    .unwrap_or_else(|x| panic!("{src} ({}): {x:?}", d.name()));
                let printed = print_expr(&e, d);
                assert_eq!(printed, want, "{src} printed in {}", d.name());
                let again = parse_expr_text(&printed, d)
                    .unwrap_or_else(|x| panic!("{printed} ({}): {x:?}", d.name()));
                assert_eq!(
                    again,
                    e,
                    "{src}: the print `{printed}` reads differently in {}",
                    d.name()
                );
            }
        }
        // Generated negative literals (the parser writes `-2` as a negation) print like one.
        let neg = Expr::synth(ExprKind::Int(BigInt::from(-2)));
        let a = Expr::name("a");
        for d in [Dialect::V1, Dialect::V2] {
            let sub = Expr::bin(BinOp::Sub, a.clone(), neg.clone());
            assert_eq!(print_expr(&sub, d), "a - (-2)");
            let minus = Expr::synth(ExprKind::Unary(UnOp::Neg, Box::new(neg.clone())));
            assert_eq!(print_expr(&minus, d), "-(-2)");
            let field = Expr::synth(ExprKind::Field(Box::new(neg.clone()), Ident::synth("f")));
            assert_eq!(print_expr(&field, d), "(-2).f");
        }
    }

    #[test]
    fn fractions_and_spacing() {
        assert_eq!(canon("Perm(a[i], 1 \\ 2)"), "Perm(a[i], 1\\2)");
        assert_eq!(canon("Perm(a[i], 1\\(2 * n))"), "Perm(a[i], 1\\(2 * n))");
        assert_eq!(canon("write \\ 2"), "write\\2");
        // `1\length` would lex as the backslash word `\length`.
        let e = Expr::bin(BinOp::Frac, Expr::int(1), Expr::name("length"));
        assert_eq!(print_expr(&e, Dialect::V1), "1\\(length)");
        assert_eq!(canon("| s |"), "|s|");
        assert_eq!(canon("|(a && b)|"), "|(a && b)|");
    }

    #[test]
    fn names_that_need_backticks() {
        let e = Expr::name("tile");
        assert_eq!(print_expr(&e, Dialect::V1), "`tile`");
        assert_eq!(print_expr(&e, Dialect::V2), "tile");
        assert_eq!(print_expr(&Expr::name("par"), Dialect::V2), "`par`");
        assert_eq!(print_expr(&Expr::name("merge"), Dialect::V1), "merge");
    }

    #[test]
    fn statements_and_barriers() {
        let b = Stmt {
            kind: StmtKind::Barrier(Barrier {
                label: Ident::synth("blk"),
                tags: Vec::new(),
                contract: vec![Clause {
                    kind: ClauseKind::Requires,
                    body: ClauseBody::Expr(pe("Perm(x[t], write)")),
                    span: Default::default(),
                }],
                contract_in_braces: true,
                body: None,
                keyword: Default::default(),
            }),
            span: Default::default(),
        };
        assert_eq!(
            print_stmt(&b, "    ", "  ", "\r\n"),
            "    barrier(blk) {\r\n      requires Perm(x[t], write);\r\n    }"
        );
        let inc = Stmt {
            kind: StmtKind::Assign {
                target: Expr::name("x"),
                value: Expr::bin(BinOp::Add, Expr::name("x"), Expr::int(1)),
            },
            span: Default::default(),
        };
        assert_eq!(print_stmt(&inc, "", "  ", "\n"), "x = x + 1;");
    }

    #[test]
    fn dangling_else_is_braced() {
        let open_if = Stmt {
            kind: StmtKind::If {
                cond: Expr::name("b"),
                then: Box::new(Stmt {
                    kind: StmtKind::Return(None),
                    span: Default::default(),
                }),
                els: None,
            },
            span: Default::default(),
        };
        let s = Stmt {
            kind: StmtKind::If {
                cond: Expr::name("a"),
                then: Box::new(open_if),
                els: Some(Box::new(Stmt {
                    kind: StmtKind::Return(Some(Expr::int(1))),
                    span: Default::default(),
                })),
            },
            span: Default::default(),
        };
        assert_eq!(
            print_stmt(&s, "", "  ", "\n"),
            "if (a) {\n  if (b)\n    return;\n} else\n  return 1;"
        );
    }

    /// The first method of `class A { <member> }`, parsed.
    fn method_of(member: &str) -> Method {
        let src = format!("class A {{ {member} }}");
        let p = crate::front::parse(&src, &Default::default());
        assert!(!p.has_errors(), "{member}: {:?}", p.diagnostics);
        match &p.program.items[..] {
            [Item::Class(c)] => match &c.members[..] {
                [Member::Method(m)] => m.clone(),
                _ => panic!("{member}: not one method"),
            },
            _ => panic!("{member}: not one class"),
        }
    }

    #[test]
    fn types() {
        let m =
            method_of("void m(int[M][N] a, seq<seq<int>> s, map<int, boolean> f, Box<int>[] b);");
        let tys: Vec<String> = m
            .params
            .iter()
            .map(|p| print_type(&p.ty, Dialect::V1))
            .collect();
        assert_eq!(
            tys,
            [
                "int[M][N]",
                "seq<seq<int>>",
                "map<int, boolean>",
                "Box<int>[]"
            ]
        );
    }

    #[test]
    fn clauses_and_annotations() {
        let m = method_of(
            "gpuopt glob_to_reg a [i] (t+1) -t;\n\
             gpuopt tile intra (n - 1);\n\
             requires   Perm( a[ t ] , 1 \\ 2 );\n\
             decreases;\n\
             signals (E e) e != null;\n\
             void m();",
        );
        let anns: Vec<String> = m
            .prefix
            .annotations
            .iter()
            .map(|a| print_annotation(a, Dialect::V1))
            .collect();
        // Operands are kept as written (the optimization reads them; see transforms/params.rs),
        // with single spaces where the source had space.
        assert_eq!(
            anns,
            [
                "gpuopt glob_to_reg a [i] (t+1) -t;",
                "gpuopt tile intra (n - 1);"
            ]
        );
        let clauses: Vec<String> = m
            .prefix
            .clauses
            .iter()
            .map(|c| print_clause(c, Dialect::V1))
            .collect();
        assert_eq!(
            clauses,
            [
                "requires Perm(a[t], 1\\2);",
                "decreases;",
                "signals (E e) e != null;"
            ]
        );
    }

    fn simp(s: &str) -> String {
        print_expr(&simplify_arith(&pe(s)), Dialect::V1)
    }

    #[test]
    fn arithmetic_folding() {
        assert_eq!(simp("0 + 5"), "5");
        assert_eq!(simp("2 * 3"), "6");
        assert_eq!(simp("2 - 5"), "-3");
        assert_eq!(simp("x + 0"), "x");
        assert_eq!(simp("x - 0"), "x");
        assert_eq!(simp("0 + x"), "x");
        assert_eq!(simp("x * 1"), "x");
        assert_eq!(simp("x / 1"), "x");
        assert_eq!(simp("x + -5"), "x - 5");
        assert_eq!(simp("x - -5"), "x + 5");
        assert_eq!(simp("i + 1 + 1"), "i + 2");
        assert_eq!(simp("i + 1 - 1"), "i");
        assert_eq!(simp("i - 2 + 1"), "i - 1");
        assert_eq!(simp("a[t + 0 * 4]"), "a[t]");
        assert_eq!(simp("7 / 2 + 7 % 2"), "4");
        // Never reordered, never folded across a non-literal, no fractions, no negative division.
        assert_eq!(simp("n - 1 - t"), "n - 1 - t");
        assert_eq!(simp("1 + i + 1"), "1 + i + 1");
        assert_eq!(simp("1 * x"), "1 * x");
        assert_eq!(simp("1\\2"), "1\\2");
        assert_eq!(simp("-7 / 2"), "-7 / 2");
        assert_eq!(simp("x / 0"), "x / 0");
    }
}
