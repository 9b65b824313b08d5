//! Expressions: identifiers, operators with the parentheses they need, calls, quantifiers and
//! the other expression forms.

use super::{
    binary_operand_needs_parens, comma_separated, is_negative, is_plain_word, leading_word, Printer,
};
use crate::ast::*;
use crate::dialect::Dialect;
use crate::keywords::{HARD_KEYWORDS, V1_RESERVED, VALUE_WORDS};
use crate::lexer::is_bs_word;
use crate::prec;

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
        // CUDA's built-in variables (`threadIdx.x`) are one name in the tree, written as is.
        let cuda = n.split_once('.').is_some_and(|(base, f)| {
            crate::cuda::CUDA_BUILTINS.contains(&base) && matches!(f, "x" | "y" | "z")
        });
        if (is_plain_word(n) && !reserved) || cuda {
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
    pub(super) fn expr_into(&self, out: &mut String, e: &Expr) {
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
                // `- -x` would lex as `--`, `-*` as the magic wand. Checked on the printed
                // operand too: an opaque operand's text can start with `*` (`- * y`, found by
                // the fuzzer, `fixtures/fuzz/`), and `!` before `=` would lex as `!=`.
                let clash =
                    *op == UnOp::Neg && (is_negative(x) || matches!(x.kind, ExprKind::Wildcard));
                let paren = self.level(x) < prec::UNARY || clash;
                let text = self.expr_paren(x, paren);
                let glued = match op {
                    UnOp::Neg => text.starts_with(['-', '*', '>', '=']),
                    UnOp::Not => text.starts_with('='),
                };
                out.push_str(&if glued && !paren { self.expr_paren(x, true) } else { text });
            }
            ExprKind::Binary(op, l, r) => {
                self.operand(out, l, binary_operand_needs_parens(*op, l, false, self.dialect));
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
                    self.operand(out, r, binary_operand_needs_parens(*op, r, true, self.dialect));
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
            ExprKind::Call { recv, name, args, ghost, null_safe } => {
                if let Some(r) = recv {
                    self.receiver(out, r);
                    out.push_str(match (null_safe, self.dialect) {
                        (false, _) => ".",
                        (true, Dialect::V1) => "->",
                        (true, Dialect::V2) => "?.",
                    });
                }
                out.push_str(&self.ident(name));
                self.type_args(out, &ghost.type_args);
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
            ExprKind::Quant { kind, bindings, cond, body } => {
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
            ExprKind::Let { ty, name, value: middle, body }
            | ExprKind::Sum { ty, name, cond: middle, body } => {
                let is_let = matches!(e.kind, ExprKind::Let { .. });
                out.push_str(if is_let { "(\\let " } else { "(\\sum " });
                self.typed(out, ty, name);
                out.push_str(if is_let { " = " } else { "; " });
                self.expr_into(out, middle);
                out.push_str("; ");
                self.expr_into(out, body);
                out.push(')');
            }
            ExprKind::NewObject(name, args, ghost) => {
                out.push_str("new ");
                out.push_str(&self.ident(name));
                self.type_args(out, &ghost.type_args);
                self.args(out, args);
                self.ghost_args(out, ghost);
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
            ExprKind::Collection { kind, elem_ty, elems } => {
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
            ExprKind::MapLit { key_ty, val_ty, entries } => {
                out.push_str("map<");
                out.push_str(&self.ty(key_ty));
                out.push_str(", ");
                out.push_str(&self.ty(val_ty));
                out.push_str(">{");
                comma_separated(out, entries, |out, (k, v)| {
                    self.operand(out, k, self.level(k) < prec::COND);
                    out.push_str(" -> ");
                    self.operand(out, v, self.level(v) < prec::COND);
                });
                out.push('}');
            }
            ExprKind::TupleLit(ty, a, b) => {
                out.push_str(&self.ty(ty));
                out.push('{');
                self.expr_into(out, a);
                out.push_str(", ");
                self.expr_into(out, b);
                out.push('}');
            }
            ExprKind::Tuple(elems) => {
                out.push('(');
                comma_separated(out, elems, |out, x| self.expr_into(out, x));
                out.push(')');
            }
            ExprKind::SetComprehension(c) => {
                out.push_str("set<");
                out.push_str(&self.ty(&c.elem_ty));
                out.push_str("> {");
                self.expr_into(out, &c.body);
                out.push_str(" | ");
                comma_separated(out, &c.gens, |out, g| {
                    self.typed(out, &g.ty, &g.name);
                    if let Some(s) = &g.source {
                        out.push_str(" <- ");
                        self.expr_into(out, s);
                    }
                });
                if let Some(cond) = &c.cond {
                    out.push_str("; ");
                    self.expr_into(out, cond);
                }
                out.push('}');
            }
            ExprKind::Range(kind, lo, hi) => {
                out.push(if *kind == CollKind::Seq { '[' } else { '{' });
                self.expr_into(out, lo);
                out.push_str(" .. ");
                self.expr_into(out, hi);
                out.push(if *kind == CollKind::Seq { ']' } else { '}' });
            }
            ExprKind::Trigger(t, x) => {
                out.push_str("{:");
                out.push_str(&"<".repeat(t.parent as usize));
                if let Some(g) = t.group {
                    out.push_str(&format!("{g}:"));
                } else if t.parent > 0 {
                    out.push(':');
                }
                out.push(' ');
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
    pub(super) fn idents(&self, out: &mut String, names: &[Ident]) {
        comma_separated(out, names, |out, n| out.push_str(&self.ident(n)));
    }

    /// `T x`, as in parameters and binders.
    pub(super) fn typed(&self, out: &mut String, ty: &Type, name: &Ident) {
        out.push_str(&self.ty(ty));
        out.push(' ');
        out.push_str(&self.ident(name));
    }

    /// `T x = lo .. hi`, as in ranged `for` headers, `par` iterators and quantifier bindings.
    pub(super) fn typed_range(
        &self,
        out: &mut String,
        ty: &Type,
        name: &Ident,
        lo: &Expr,
        hi: &Expr,
    ) {
        self.typed(out, ty, name);
        out.push_str(" = ");
        self.expr_into(out, lo);
        out.push_str(" .. ");
        self.expr_into(out, hi);
    }

    /// `<T, U>` before a call's arguments (nothing when there are none).
    fn type_args(&self, out: &mut String, tys: &[Type]) {
        if tys.is_empty() {
            return;
        }
        out.push('<');
        comma_separated(out, tys, |out, t| out.push_str(&self.ty(t)));
        out.push('>');
    }

    fn ghost_args(&self, out: &mut String, g: &GhostArgs) {
        // Ghost blocks inside an expression are printed on one line.
        let inline =
            Printer { dialect: self.dialect, unit: String::new(), newline: " ".to_string() };
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
}
