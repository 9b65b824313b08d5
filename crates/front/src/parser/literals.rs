//! Bracketed expression forms: parenthesised expressions, tuples and binders (quantifiers,
//! `\let`, `\sum`, kept-as-text binder forms), `[…]` and `{…}` collection literals and
//! ranges, scaling `[π]R`, map entries and set comprehensions.

use super::{Fail, PResult, Parser};
use crate::ast::*;
use crate::lexer::TokKind;

impl<'s> Parser<'s> {
    /// The entries `k -> v, …` of a map literal whose `{` is consumed, up to and including `}`.
    pub(super) fn parse_map_entries(&mut self) -> PResult<Vec<(Expr, Expr)>> {
        let mut entries = Vec::new();
        if self.eat_punct("}") {
            return Ok(entries);
        }
        loop {
            let saved = std::mem::replace(&mut self.map_key, true);
            let k = self.parse_expr();
            self.map_key = saved;
            let k = k?;
            self.expect_punct("->")?;
            let v = self.parse_expr()?;
            entries.push((k, v));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct("}")?;
        Ok(entries)
    }

    /// Does the `{` at the cursor open a comprehension `{e | …}`? A `|` at depth zero before the
    /// closing `}` (a length `|x|` inside `e` is skipped pairwise: its bars are followed by
    /// an operand and an operator or end, so the first bar of an odd count is the separator).
    pub(super) fn comprehension_follows(&self) -> bool {
        let mut depth = 0usize;
        let mut bars = Vec::new();
        let mut i = 1;
        loop {
            let t = self.tok_at(i);
            if t.kind == TokKind::Eof || i > 4096 {
                return false;
            }
            if t.kind == TokKind::Punct {
                match self.text_of(t) {
                    "(" | "[" | "{" | "{:" => depth += 1,
                    ")" | "]" | ":}" => depth = depth.saturating_sub(1),
                    "}" if depth == 0 => break,
                    "}" => depth -= 1,
                    "|" if depth == 0 => bars.push(i),
                    ";" if depth == 0 => break,
                    _ => {}
                }
            }
            i += 1;
        }
        // The separator is followed by a generator: a type and a name.
        bars.iter().any(|&b| {
            let n = self.tok_at(b + 1);
            let m = self.tok_at(b + 2);
            n.kind == TokKind::Word && (m.kind == TokKind::Word || self.text_of(m) == "<")
        })
    }

    /// `set<T> {body | T x <- source, T y; cond}` (the `{` is current).
    pub(super) fn parse_comprehension(&mut self, lo: usize, elem_ty: Type) -> PResult<Expr> {
        self.bump();
        // The body stops before the separator `|`, which no binary operator uses.
        let body = self.parse_expr()?;
        self.expect_punct("|")?;
        let gens = self.comma_list(|p| {
            let glo = p.tok().span.start();
            let ty = p.parse_type()?;
            let name = p.expect_ident("a variable")?;
            // `<-` is two tokens (`x<-1` compares with a negative number elsewhere).
            let source = if p.is_punct("<") && p.is_punct_at(1, "-") && !p.tok_at(1).space_before {
                p.bump();
                p.bump();
                Some(p.parse_expr()?)
            } else {
                None
            };
            Ok(Generator { ty, name, source, span: p.span_from(glo) })
        })?;
        let cond = if self.eat_punct(";") { Some(self.parse_expr()?) } else { None };
        self.expect_punct("}")?;
        let c = Comprehension { elem_ty, body, gens, cond };
        Ok(Expr::new(ExprKind::SetComprehension(Box::new(c)), self.span_from(lo)))
    }

    pub(super) fn parse_paren(&mut self, lo: usize) -> PResult<Expr> {
        let n = self.tok_at(1);
        let ns = self.text_of(n);
        // Binder forms the pipeline keeps as text (refused by name downstream): permission
        // quantifiers `(\forperm T x \in e; b)`, VeyMont's endpoint and choreography
        // expressions `(\endpoint a; e)`, `(\[a] e)`, `(\chor e)`, `(\[] e)`, and the
        // function-of form `(f!x, y)`.
        let function_of = self.is_ident_tok(n)
            && self.is_punct_at(2, "!")
            && self.is_ident_tok(self.tok_at(3))
            && !self.tok_at(2).space_before;
        if matches!(ns, "\\forperm" | "\\forpermwithvalue" | "\\endpoint" | "\\chor" | "\\")
            || function_of
        {
            let kw = if function_of { "!" } else { ns }.to_string();
            self.skip_balanced("(", ")");
            return Ok(self.opaque_expr_from(lo, kw));
        }
        if n.kind == TokKind::BsWord {
            let kind = match ns {
                "\\forall*" | "∀*" => Some(QuantKind::ForallStar),
                "\\forall" | "∀" => Some(QuantKind::Forall),
                "\\exists" | "∃" => Some(QuantKind::Exists),
                _ => None,
            };
            if let Some(k) = kind {
                return self.parse_quant(lo, k);
            }
            let is_let = ns == "\\let";
            if is_let || (ns == "\\sum" && !self.is_punct_at(2, "(")) {
                // `(\let T x = value; body)` and `(\sum T x; cond; body)` differ only in the
                // first separator and in what the middle expression means.
                self.bump();
                self.bump();
                let ty = self.parse_type()?;
                let name = self.expect_ident("a variable")?;
                self.expect_punct(if is_let { "=" } else { ";" })?;
                let middle = Box::new(self.parse_expr()?);
                self.expect_punct(";")?;
                let body = Box::new(self.parse_expr()?);
                self.expect_punct(")")?;
                let kind = if is_let {
                    ExprKind::Let { ty, name, value: middle, body }
                } else {
                    ExprKind::Sum { ty, name, cond: middle, body }
                };
                return Ok(Expr::new(kind, self.span_from(lo)));
            }
        }
        self.bump();
        let mut e = self.parse_expr()?;
        if self.is_punct(",") {
            let mut elems = vec![e];
            while self.eat_punct(",") {
                elems.push(self.parse_expr()?);
            }
            self.expect_punct(")")?;
            return Ok(Expr::new(ExprKind::Tuple(elems), self.span_from(lo)));
        }
        self.expect_punct(")")?;
        e.span = self.span_from(lo);
        self.paren_spans.insert((e.span.lo, e.span.hi));
        Ok(e)
    }

    pub(super) fn parse_quant(&mut self, lo: usize, kind: QuantKind) -> PResult<Expr> {
        self.bump(); // (
        self.bump(); // quantifier symbol
        let bindings = self.comma_list(|p| {
            let blo = p.tok().span.start();
            let ty = p.parse_type()?;
            let name = p.expect_ident("a bound variable")?;
            let range = if p.eat_punct("=") {
                let a = p.parse_expr()?;
                p.expect_punct("..")?;
                let b = p.parse_expr()?;
                Some((Box::new(a), Box::new(b)))
            } else {
                None
            };
            Ok(Binding { ty, name, range, span: p.span_from(blo) })
        })?;
        self.expect_punct(";")?;
        let first = self.parse_expr()?;
        let (cond, body) = if self.eat_punct(";") {
            let body = self.parse_expr()?;
            (Some(Box::new(first)), body)
        } else {
            (None, first)
        };
        self.expect_punct(")")?;
        Ok(Expr::new(
            ExprKind::Quant { kind, bindings, cond, body: Box::new(body) },
            self.span_from(lo),
        ))
    }

    pub(super) fn parse_bracket(&mut self, lo: usize) -> PResult<Expr> {
        let mut e = self.parse_coll_literal(lo, CollKind::Seq, "]")?;
        // `[π]R`: scaling, when a resource-shaped primary follows a one-element list directly.
        if let ExprKind::Collection { elems, .. } = &mut e.kind {
            // Also before a predicate call `[π]p(…)` (a name right after `]` cannot continue an
            // expression) and before another scaling `[π][π']R` when `π` is a fraction (a list of
            // fractions indexed by a fraction would be meaningless).
            let fraction = matches!(
                elems.first().map(|x| &x.kind),
                Some(ExprKind::Binary(BinOp::Frac, ..) | ExprKind::Write | ExprKind::Read)
            );
            if elems.len() == 1
                && (self.is_word("Perm")
                    || self.is_word("PointsTo")
                    || self.is_word("Value")
                    || self.is_punct("(")
                    || (self.is_ident() && self.is_punct_at(1, "("))
                    || (fraction && self.is_punct("[")))
            {
                let pi = elems.pop().ok_or(Fail)?;
                let r = self.parse_unary()?;
                return Ok(Expr::new(
                    ExprKind::Scale(Box::new(pi), Box::new(r)),
                    self.span_from(lo),
                ));
            }
        }
        Ok(e)
    }

    /// `{…}` set literals (or `b{…}` bags): `{t: T}`, `{lo .. hi}`, `{e, …}`.
    pub(super) fn parse_brace(&mut self, lo: usize, kind: CollKind) -> PResult<Expr> {
        self.parse_coll_literal(lo, kind, "}")
    }

    /// A `[…]` or `{…}` literal of `kind` up to its `close`: `t: T` (empty), nothing,
    /// `lo .. hi`, or `e, …`.
    pub(super) fn parse_coll_literal(
        &mut self,
        lo: usize,
        kind: CollKind,
        close: &str,
    ) -> PResult<Expr> {
        self.bump(); // `[` or `{`
        if self.is_word("t") && self.is_punct_at(1, ":") {
            self.bump();
            self.bump();
            let ty = self.parse_type()?;
            self.expect_punct(close)?;
            return Ok(Expr::new(ExprKind::EmptyCollection(kind, ty), self.span_from(lo)));
        }
        let mut elems = Vec::new();
        if !self.eat_punct(close) {
            let first = self.parse_expr()?;
            if self.eat_punct("..") {
                let hi = self.parse_expr()?;
                self.expect_punct(close)?;
                return Ok(Expr::new(
                    ExprKind::Range(kind, Box::new(first), Box::new(hi)),
                    self.span_from(lo),
                ));
            }
            elems.push(first);
            while self.eat_punct(",") {
                elems.push(self.parse_expr()?);
            }
            self.expect_punct(close)?;
        }
        Ok(Expr::new(ExprKind::Collection { kind, elem_ty: None, elems }, self.span_from(lo)))
    }
}
