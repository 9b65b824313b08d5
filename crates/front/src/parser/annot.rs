//! Reading the operands of a `gpuopt` annotation (pvl.md §3.5).
//!
//! The parser keeps an annotation's operands as tokens ([`Annotation`]); the optimization the
//! annotation names reads them, in the order its parameter schema gives, with the primitives
//! here: a name, an unsigned integer, one of a few words, an access path, or an operand
//! expression. An operand is a full expression that continues for as long as binary operators
//! continue it; a new one starts where the next token can only start a new primary (a name, a
//! literal, a backslash word, `!`, or `(` after whitespace).
//!
//! The reader never decides what an annotation means and reports no errors of its own besides
//! those of the expression parser: a caller that finds something unexpected asks
//! [`OperandReader::found`] what is there and words the diagnostic itself.

use super::*;

/// A cursor over the operands of one annotation; spans are those of the source text.
pub struct OperandReader<'s> {
    p: Parser<'s>,
}

impl<'s> OperandReader<'s> {
    /// A reader over `ann`'s operands in `src`, the text `ann` was parsed from, followed by the
    /// token that ends them (the `;`, or whatever stopped an unterminated annotation).
    pub fn new(src: &'s str, dialect: Dialect, ann: &Annotation) -> OperandReader<'s> {
        let lo = ann.operands_span().start().min(src.len());
        let hi = ann.end.end().clamp(lo, src.len());
        // Only the annotation's own text is lexed, then moved to its place in the file.
        let mut toks: Vec<Token> = match src.get(lo..hi) {
            Some(text) => lex(text).tokens,
            None => Vec::new(),
        };
        for t in &mut toks {
            t.span = Span::new(t.span.start() + lo, t.span.end() + lo);
        }
        if let (Some(first), Some(op)) = (toks.first_mut(), ann.operands.first()) {
            first.space_before = op.spaced;
        }
        if toks.last().is_none_or(|t| t.kind != TokKind::Eof) {
            toks.push(Token {
                kind: TokKind::Eof,
                span: Span::new(hi, hi),
                space_before: false,
                reserved: false,
            });
        }
        let p = Parser {
            src,
            toks,
            pos: 0,
            diags: Vec::new(),
            error_count: 0,
            last_error_at: usize::MAX,
            dialect,
            depth: 0,
            paren_spans: HashSet::new(),
            sensitive: Vec::new(),
            operand_mode: false,
            map_key: false,
        };
        OperandReader { p }
    }

    /// The source text of the next token.
    pub fn text(&self) -> &'s str {
        if self.p.at_eof() {
            ""
        } else {
            self.p.text()
        }
    }

    /// The span of the next token.
    pub fn span(&self) -> Span {
        self.p.tok().span
    }

    /// What the next token is, for messages: "`x`" or "end of file".
    pub fn found(&self) -> String {
        self.p.describe(self.p.tok())
    }

    /// The end of the last token read (or of nothing, at the start).
    pub fn prev_end(&self) -> usize {
        self.p.prev_end()
    }

    /// At the `;` that ends the annotation.
    pub fn at_semicolon(&self) -> bool {
        self.p.is_punct(";")
    }

    /// At the `;`, or at whatever ends an unterminated annotation: no operand follows.
    pub fn at_end(&self) -> bool {
        self.at_semicolon() || self.p.pos + 1 >= self.p.toks.len()
    }

    /// The next token is a word (reserved or not) spelled `w`.
    pub fn at_word(&self, w: &str) -> bool {
        self.p.is_word(w)
    }

    /// The next token is a name.
    pub fn at_name(&self) -> bool {
        self.p.is_ident()
    }

    /// The next token is an unsigned integer literal.
    pub fn at_int(&self) -> bool {
        self.p.tok().kind == TokKind::Int
    }

    /// The next token is `p`.
    pub fn at_punct(&self, p: &str) -> bool {
        self.p.is_punct(p)
    }

    /// `-` followed by an integer literal: the literal's text and the span of both.
    pub fn negative_int(&self) -> Option<(&'s str, Span)> {
        (self.p.is_punct("-") && self.p.tok_at(1).kind == TokKind::Int)
            .then(|| (self.p.text_at(1), self.p.tok().span.to(self.p.tok_at(1).span)))
    }

    /// Skip the next token.
    pub fn bump(&mut self) {
        self.p.bump();
    }

    /// Skip a `,` if one is next (the comma-separated operand form).
    pub fn eat_comma(&mut self) -> bool {
        self.p.eat_punct(",")
    }

    /// A name.
    pub fn name(&mut self) -> Option<Ident> {
        if !self.p.is_ident() {
            return None;
        }
        let t = self.p.bump();
        Some(self.p.ident_from(t))
    }

    /// An unsigned integer literal with its span (a value beyond `u64` reads as `u64::MAX`).
    pub fn int(&mut self) -> Option<(u64, Span)> {
        let t = self.p.tok();
        if t.kind != TokKind::Int {
            return None;
        }
        self.p.bump();
        Some((self.p.text_of(t).parse::<u64>().unwrap_or(u64::MAX), t.span))
    }

    /// One operand expression; `Err` holds the expression parser's diagnostics.
    pub fn operand(&mut self) -> Result<Expr, Vec<Diagnostic>> {
        self.p.operand_mode = true;
        let r = self.p.parse_binary(0);
        self.p.operand_mode = false;
        self.result(r)
    }

    /// An access path `Name ( "." Name | "[" Expr "]" )*`, never a call; `None` when no name is
    /// next.
    pub fn path(&mut self) -> Option<Result<Expr, Vec<Diagnostic>>> {
        if !self.p.is_ident() {
            return None;
        }
        let lo = self.p.tok().span.start();
        let t = self.p.bump();
        let e = Expr::new(ExprKind::Name(self.p.ident_from(t)), t.span);
        let r = self.p.path_suffixes(lo, e);
        Some(self.result(r))
    }

    fn result(&mut self, r: PResult<Expr>) -> Result<Expr, Vec<Diagnostic>> {
        match r {
            Ok(e) if self.p.diags.is_empty() => Ok(e),
            _ => Err(std::mem::take(&mut self.p.diags)),
        }
    }
}

impl Parser<'_> {
    /// The `.field` and `[index]` suffixes of an access path starting with `e` at `lo`.
    fn path_suffixes(&mut self, lo: usize, mut e: Expr) -> PResult<Expr> {
        let saved = self.depth;
        let r = loop {
            if self.is_punct(".") && self.is_ident_tok(self.tok_at(1)) {
                if let Err(f) = self.enter() {
                    break Err(f);
                }
                self.bump();
                let f = self.bump();
                let id = self.ident_from(f);
                e = Expr::new(ExprKind::Field(Box::new(e), id), self.span_from(lo));
            } else if self.is_punct("[") {
                if let Err(f) = self.enter() {
                    break Err(f);
                }
                self.bump();
                let i = match self.parse_expr() {
                    Ok(i) => i,
                    Err(f) => break Err(f),
                };
                if let Err(f) = self.expect_punct("]") {
                    break Err(f);
                }
                e = Expr::new(ExprKind::Index(Box::new(e), Box::new(i)), self.span_from(lo));
            } else {
                break Ok(e);
            }
        };
        self.depth = saved;
        r
    }
}
