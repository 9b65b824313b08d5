//! Contracts and annotations: the prefix in front of a method, loop or `par` block, its
//! contract clauses, and the `gpuopt` annotations, kept as tokens for [`super::annot`] to read.

use super::{Fail, PResult, Parser};
use crate::ast::*;
use crate::keywords::{CLAUSE_WORDS, EXPRESSION_KEYWORDS, HARD_KEYWORDS};
use crate::lexer::TokKind;
use crate::span::Span;
use diag::Diagnostic;

impl<'s> Parser<'s> {
    /// Annotations and contract clauses, interleaved, in front of a construct.
    pub(super) fn parse_prefix(&mut self) -> PResult<Prefix> {
        let lo = self.tok().span.start();
        let mut prefix = Prefix::default();
        loop {
            if self.is_word("gpuopt") {
                match self.parse_annotation() {
                    Ok(a) => prefix.annotations.push(a),
                    Err(_) => self.recover(true),
                }
            } else if self.at_clause() {
                match self.parse_clause() {
                    Ok(c) => prefix.clauses.push(c),
                    Err(_) => self.recover(true),
                }
            } else {
                break;
            }
        }
        prefix.span = if prefix.is_empty() { Span::new(lo, lo) } else { self.span_from(lo) };
        Ok(prefix)
    }

    /// Is the current token a contract clause keyword in clause position?
    pub(super) fn at_clause(&self) -> bool {
        let t = self.tok();
        if t.kind != TokKind::Word || !CLAUSE_WORDS.contains(&self.text_of(t)) {
            return false;
        }
        // `context = 1;`, `given.x`, `requires++` … are uses of a variable with that name.
        let n = self.tok_at(1);
        let nt = self.text_of(n);
        if n.kind == TokKind::Punct && nt == "[" {
            // `requires[i] = 1;` indexes a variable; `requires [1\2]Perm(…);` and
            // `requires [x] == s;` are clauses. Decide by what follows the matching `]`.
            return !self.index_target_at(1);
        }
        !(n.kind == TokKind::Punct
            && matches!(nt, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "." | "++" | "--" | ")" | ","))
            || (self.text_of(t) == "decreases" && nt == ";")
    }

    /// Is the `[` at offset `n` an index whose `]` is followed by an assignment, an increment or
    /// a further `[`/`.` (the shape of an assignment target)?
    pub(super) fn index_target_at(&self, n: usize) -> bool {
        let mut depth = 0usize;
        let mut i = n;
        loop {
            let t = self.tok_at(i);
            // Bounded look-ahead keeps parsing linear on pathological input.
            if t.kind == TokKind::Eof || i > n + 256 {
                return false;
            }
            if t.kind == TokKind::Punct {
                match self.text_of(t) {
                    "[" => depth += 1,
                    "]" => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            let mut a = self.tok_at(i + 1);
                            // `x[i][j] = …`: look past every index (`[1\2][1\2]p()` is none).
                            if a.kind == TokKind::Punct && self.text_of(a) == "[" {
                                i += 1;
                                continue;
                            }
                            // `x[i].f.g = …` is a target, `assert [1].head == 1;` is not:
                            // look past the fields to what follows them.
                            while a.kind == TokKind::Punct && self.text_of(a) == "." {
                                i += 2;
                                a = self.tok_at(i + 1);
                            }
                            if a.kind == TokKind::Punct && self.text_of(a) == "[" {
                                i += 1;
                                continue;
                            }
                            if a.kind != TokKind::Punct {
                                return false;
                            }
                            return match self.text_of(a) {
                                "=" | "+=" | "-=" | "*=" | "/=" | "%=" => true,
                                // `x[i]++;`, not `assert [1] ++ [3] == [1, 3];` (v2's
                                // concatenation).
                                "++" | "--" => self.is_punct_at(i + 2, ";"),
                                _ => false,
                            };
                        }
                    }
                    ";" | "{" | "}" => return false,
                    _ => {}
                }
            }
            i += 1;
        }
    }

    pub(super) fn parse_clause(&mut self) -> PResult<Clause> {
        let kw = self.bump();
        let lo = kw.span.start();
        let kind = ClauseKind::from_keyword(self.text_of(kw)).ok_or(Fail)?;
        let body = match kind {
            ClauseKind::Given | ClauseKind::Yields => {
                let ty = self.parse_type()?;
                let name = self.expect_ident("a parameter name")?;
                ClauseBody::Decl(ty, name)
            }
            ClauseKind::Modifies | ClauseKind::Accessible => {
                let mut v = vec![self.parse_expr()?];
                while self.eat_punct(",") {
                    v.push(self.parse_expr()?);
                }
                ClauseBody::List(v)
            }
            ClauseKind::Decreases => {
                if self.is_punct(";") {
                    ClauseBody::List(Vec::new())
                } else if self.is_word("assume") {
                    self.bump();
                    ClauseBody::DecreasesAssume
                } else {
                    let mut v = vec![self.parse_expr()?];
                    while self.eat_punct(",") {
                        v.push(self.parse_expr()?);
                    }
                    ClauseBody::List(v)
                }
            }
            ClauseKind::Signals => {
                self.expect_punct("(")?;
                let ty = self.parse_type()?;
                let name = self.expect_ident("a name")?;
                self.expect_punct(")")?;
                let e = self.parse_expr()?;
                ClauseBody::Signals(ty, name, e)
            }
            _ => ClauseBody::Expr(self.parse_expr()?),
        };
        self.expect_punct(";")?;
        Ok(Clause { kind, body, span: self.span_from(lo) })
    }

    // -----------------------------------------------------------------------------------------
    // gpuopt annotations
    // -----------------------------------------------------------------------------------------

    /// `gpuopt WORD OPERAND… ;` (pvl.md §3.5). The operands are kept as tokens: what they mean
    /// is up to the optimization WORD names, which reads them with its parameter schema through
    /// [`annot::OperandReader`](super::annot::OperandReader). They run to the `;`; one that stops
    /// before a clause or statement keyword, a brace, an unmatched closing bracket or the end of
    /// the file is unterminated (an error here; the annotation is kept, so recovery goes on at
    /// what stopped it).
    fn parse_annotation(&mut self) -> PResult<Annotation> {
        let kw = self.bump(); // gpuopt
        let lo = kw.span.start();
        let w = self.tok();
        let keyword = if self.annotation_stops(0) || self.is_punct(";") {
            Ident::new(String::new(), Span::new(w.span.start(), w.span.start()))
        } else {
            self.bump();
            Ident::new(self.text_of(w).to_string(), w.span)
        };
        let mut operands = Vec::new();
        let mut depth = 0usize;
        loop {
            let t = self.tok();
            if depth == 0 && (self.is_punct(";") || self.annotation_stops(depth)) {
                break;
            }
            if t.kind == TokKind::Eof || self.is_punct("{") || self.is_punct("}") {
                break;
            }
            if t.kind == TokKind::Punct {
                match self.text_of(t) {
                    "(" | "[" => depth += 1,
                    ")" | "]" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            operands.push(AnnotToken {
                text: self.text_of(t).to_string(),
                span: t.span,
                spaced: t.space_before,
            });
            self.bump();
        }
        let end = self.tok().span;
        let terminated = self.is_punct(";");
        if terminated {
            self.bump();
        } else {
            let found = self.describe(self.tok());
            self.error(
                Diagnostic::error(
                    "A0003",
                    format!("unterminated `gpuopt` annotation: expected `;`, found {found}"),
                )
                .with_primary(end, "expected `;` to end the annotation")
                .with_help("end the annotation with `;`"),
            );
        }
        Ok(Annotation { keyword, operands, end, terminated, span: self.span_from(lo) })
    }

    /// Whether the token at the cursor ends the operands of an annotation at bracket depth
    /// `depth`: the end of the file, or (at depth 0) a closing bracket, a contract clause or a
    /// statement or declaration keyword.
    fn annotation_stops(&self, depth: usize) -> bool {
        let t = self.tok();
        if t.kind == TokKind::Eof {
            return true;
        }
        if depth > 0 {
            return false;
        }
        if t.kind == TokKind::Punct {
            return matches!(self.text_of(t), ")" | "]" | "}");
        }
        let w = self.text_of(t);
        t.kind == TokKind::Word
            && ((HARD_KEYWORDS.contains(&w) && !EXPRESSION_KEYWORDS.contains(&w))
                || self.at_clause())
    }
}
