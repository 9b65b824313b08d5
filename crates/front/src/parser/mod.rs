//! Recursive-descent parser for PVL (pvl.md §3–4).
//!
//! Never panics and always terminates: every loop consumes a token or stops, recursion depth is
//! bounded, and errors are collected (with recovery at statement and member boundaries) instead
//! of aborting. The result is always a `Program`, possibly partial, plus diagnostics.

use super::ast::*;
use super::dialect::{self, Dialect, DialectChoice};
use super::keywords::{CLAUSE_WORDS, HARD_KEYWORDS, V1_RESERVED};
use super::lexer::{lex, TokKind, Token};
use super::span::Span;
use diag::Diagnostic;
use std::collections::HashSet;

pub mod annot;
mod clauses;
mod decls;
mod exprs;
mod literals;
mod stmts;

const MAX_DEPTH: u32 = 200;
const MAX_ERRORS: usize = 50;

#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    pub dialect: DialectChoice,
}

/// The result of parsing one file.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub program: Program,
    /// Errors and warnings, in source order of discovery.
    pub diagnostics: Vec<Diagnostic>,
    pub dialect: Dialect,
    /// Whether the dialect reading is settled (explicit flag or markers of exactly one dialect).
    pub settled: bool,
    /// Spans of dialect-sensitive expressions (pvl.md §1.2).
    pub sensitive: Vec<Span>,
}

impl Parsed {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

pub fn parse(src: &str, opts: &ParseOptions) -> Parsed {
    // C and CUDA files go to their own front end, which builds the same tree.
    if crate::cuda::looks_like_cuda(src) {
        return crate::cuda::parse_cuda(src);
    }
    // The parser's thread outlives this call, so it gets its own copy of the text.
    let (src, opts) = (src.to_string(), opts.clone());
    super::worker::run(move || parse_here(&src, &opts))
}

/// [`parse`] for the verifier: a C or CUDA file in the verifier's kernel form
/// ([`crate::cuda::parse_cuda_for_verification`]).
pub fn parse_for_verification(src: &str, opts: &ParseOptions) -> Parsed {
    if crate::cuda::looks_like_cuda(src) {
        return crate::cuda::parse_cuda_for_verification(src);
    }
    parse(src, opts)
}

/// [`parse_for_verification`] for a named file: a C or CUDA file name (`.c`, `.h`, `.cu`,
/// `.cuh`, `.cl`) is read as C whatever its text looks like, as VerCors chooses the language by
/// the extension (`void test() { int inline; }` in a `.c` file is a C syntax error, not a PVL
/// method).
pub fn parse_file_for_verification(name: &str, src: &str, opts: &ParseOptions) -> Parsed {
    if is_c_file_name(name) {
        return crate::cuda::parse_cuda_for_verification(src);
    }
    parse_for_verification(src, opts)
}

/// Whether a file name has a C or CUDA extension.
pub fn is_c_file_name(name: &str) -> bool {
    std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "c" | "h" | "cu" | "cuh" | "cl"))
}

fn parse_here(src: &str, opts: &ParseOptions) -> Parsed {
    let lexed = lex(src);
    let (dialect, settled) = dialect::select(src, &lexed.tokens, opts.dialect);
    let mut p = Parser::new(src, lexed.tokens, dialect);
    p.error_count = lexed.errors.len();
    p.diags = lexed.errors;
    let program = p.parse_program();
    let mut diagnostics = p.diags;
    if let Some((v1, v2)) = dialect::mixed(src, &p.toks, opts.dialect) {
        diagnostics.push(
            Diagnostic::warning(
                "A0013",
                "this file mixes VerCors 1 and VerCors 2 syntax; it is read as VerCors 1",
            )
            .with_primary(v1, "VerCors 1 only")
            .with_secondary(v2, "VerCors 2 only")
            .with_help("keep to one generation, or pass `--dialect v1` or `--dialect v2` to choose the reading"),
        );
    }
    // An unterminated comment swallows the rest of the file; what the parser then says about the
    // missing end is a consequence, not a second problem.
    if let Some(cut) = diagnostics
        .iter()
        .filter(|d| d.message.starts_with("unterminated"))
        .filter_map(|d| d.primary_span())
        .map(|s| s.lo)
        .min()
    {
        diagnostics.retain(|d| {
            d.message.starts_with("unterminated")
                || (!d.message.starts_with("unbalanced")
                    && d.primary_span().is_some_and(|s| s.lo < cut))
        });
    }
    diagnostics.sort_by_key(|d| (d.primary_span().map_or(0, |s| s.lo), !d.is_error()));
    Parsed { program, diagnostics, dialect, settled, sensitive: p.sensitive }
}

/// Parse a standalone expression (used for command-line arguments such as `--locations`).
pub fn parse_expr_text(src: &str, dialect: Dialect) -> Result<Expr, Vec<Diagnostic>> {
    let src = src.to_string();
    super::worker::run(move || parse_expr_here(&src, dialect))
}

fn parse_expr_here(src: &str, dialect: Dialect) -> Result<Expr, Vec<Diagnostic>> {
    parse_expr_at(src, Span::new(0, src.len()), dialect)
}

/// The tokens of `src[span]`, their spans (and the lexer's diagnostics) offsets in `src`.
fn lex_at(src: &str, span: Span) -> super::lexer::Lexed {
    let mut lexed = lex(&src[span.range()]);
    let off = span.start();
    if off > 0 {
        for t in &mut lexed.tokens {
            t.span = Span::new(t.span.start() + off, t.span.end() + off);
        }
        for d in &mut lexed.errors {
            d.shift(off);
        }
    }
    lexed
}

/// One piece of an annotation comment in a C or CUDA file: contract clauses (with `gpuopt`
/// annotations) for the construct that follows, or a ghost or specification statement.
#[derive(Clone, Debug)]
pub enum FragItem {
    Prefix(Prefix),
    Stmt(Stmt),
}

/// The content of one annotation comment, parsed.
#[derive(Clone, Debug, Default)]
pub struct Fragment {
    pub items: Vec<FragItem>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse the expression at `span` of `src` (spans are offsets in `src`), on the calling thread.
pub fn parse_expr_at(src: &str, span: Span, dialect: Dialect) -> Result<Expr, Vec<Diagnostic>> {
    parse_one_at(src, span, dialect, "end of expression", Parser::parse_expr)
}

/// `src[span]` as exactly one construct read by `read` (spans are offsets in `src`).
fn parse_one_at<'s, T>(
    src: &'s str,
    span: Span,
    dialect: Dialect,
    end: &str,
    read: impl FnOnce(&mut Parser<'s>) -> PResult<T>,
) -> Result<T, Vec<Diagnostic>> {
    let lexed = lex_at(src, span);
    if !lexed.errors.is_empty() {
        return Err(lexed.errors);
    }
    let mut p = Parser::new(src, lexed.tokens, dialect);
    let x = read(&mut p);
    if x.is_ok() && !p.at_eof() {
        p.error_expected(end);
    }
    match x {
        Ok(x) if p.diags.is_empty() => Ok(x),
        _ => Err(p.diags),
    }
}

/// Parse `src[span]` as one statement (spans are offsets in `src`): a block kept as text by
/// the parser, such as the body of a v1 `create { … }`, read when it is encoded.
pub fn parse_stmt_at(src: &str, span: Span, dialect: Dialect) -> Result<Stmt, Vec<Diagnostic>> {
    parse_one_at(src, span, dialect, "end of statement", Parser::parse_stmt)
}

/// Parse `body`, a part of `src` (a ghost declaration comment), as top-level declarations.
pub fn parse_decls_at(src: &str, body: Span, dialect: Dialect) -> (Vec<Item>, Vec<Diagnostic>) {
    let lexed = lex_at(src, body);
    let mut p = Parser::new(src, lexed.tokens, dialect);
    p.diags = lexed.errors;
    let program = p.parse_program();
    (program.items, p.diags)
}

/// Parse `body`, a part of `src` (an annotation comment's content), as clauses and statements.
/// Spans are offsets in `src`. Runs on the calling thread: the caller is a front end that is
/// already on the parser's big-stack thread.
pub fn parse_fragment(src: &str, body: Span, dialect: Dialect) -> Fragment {
    let lexed = lex_at(src, body);
    let mut frag = Fragment { items: Vec::new(), diagnostics: lexed.errors };
    let mut p = Parser::new(src, lexed.tokens, dialect);
    while !p.at_eof() {
        let before = p.pos;
        if p.is_word("gpuopt") || p.at_clause() {
            if let Ok(prefix) = p.parse_prefix() {
                frag.items.push(FragItem::Prefix(prefix));
            }
        } else {
            match p.parse_stmt() {
                Ok(s) => frag.items.push(FragItem::Stmt(s)),
                Err(_) => p.recover(true),
            }
        }
        if p.pos == before {
            p.bump();
        }
    }
    frag.diagnostics.extend(p.diags);
    frag
}

/// A syntax error (`A0001`) with its primary label: how every parser diagnostic starts.
fn syntax_error(message: impl Into<String>, at: Span, label: impl Into<String>) -> Diagnostic {
    Diagnostic::error("A0001", message).with_primary(at, label)
}

/// Marker: an error was recorded; the caller recovers.
#[derive(Debug)]
struct Fail;

type PResult<T> = Result<T, Fail>;

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    error_count: usize,
    last_error_at: usize,
    dialect: Dialect,
    depth: u32,
    /// Spans of parenthesised expressions `( e )` (span includes the parentheses).
    paren_spans: HashSet<(u32, u32)>,
    sensitive: Vec<Span>,
    /// Inside a `gpuopt` operand list: `(` after whitespace starts a new operand, not a call.
    operand_mode: bool,
    /// Reading the key of a map literal entry: `->` ends the key (`k -> v`), it does not start a
    /// v1 null-safe call (`o->m(x)`).
    map_key: bool,
}

impl<'s> Parser<'s> {
    /// A parser at the first of `toks` (which end with `Eof`), with nothing reported yet.
    fn new(src: &'s str, toks: Vec<Token>, dialect: Dialect) -> Self {
        Parser {
            src,
            toks,
            dialect,
            pos: 0,
            depth: 0,
            diags: Vec::new(),
            error_count: 0,
            last_error_at: usize::MAX,
            paren_spans: HashSet::new(),
            sensitive: Vec::new(),
            operand_mode: false,
            map_key: false,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Token helpers
    // -----------------------------------------------------------------------------------------

    fn tok(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn tok_at(&self, n: usize) -> Token {
        self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    fn text_of(&self, t: Token) -> &'s str {
        t.span.text(self.src)
    }

    fn text(&self) -> &'s str {
        self.text_of(self.tok())
    }

    fn text_at(&self, n: usize) -> &'s str {
        self.text_of(self.tok_at(n))
    }

    fn at_eof(&self) -> bool {
        self.tok().kind == TokKind::Eof
    }

    fn bump(&mut self) -> Token {
        let t = self.tok();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end()
        }
    }

    fn is_punct(&self, p: &str) -> bool {
        let t = self.tok();
        t.kind == TokKind::Punct && self.text_of(t) == p
    }

    fn is_punct_at(&self, n: usize, p: &str) -> bool {
        let t = self.tok_at(n);
        t.kind == TokKind::Punct && self.text_of(t) == p
    }

    fn is_word(&self, w: &str) -> bool {
        let t = self.tok();
        t.kind == TokKind::Word && self.text_of(t) == w
    }

    fn is_bsword(&self, w: &str) -> bool {
        let t = self.tok();
        t.kind == TokKind::BsWord && self.text_of(t) == w
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.is_punct(p);
        self.consume_if(hit)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let hit = self.is_word(w);
        self.consume_if(hit)
    }

    /// Consume the current token if `hit`; returns `hit`.
    fn consume_if(&mut self, hit: bool) -> bool {
        if hit {
            self.bump();
        }
        hit
    }

    /// One or more `item`s separated by `,` (the list syntax of parameters, arguments, bindings
    /// and declarators).
    fn comma_list<T>(&mut self, mut item: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        let mut out = vec![item(self)?];
        while self.eat_punct(",") {
            out.push(item(self)?);
        }
        Ok(out)
    }

    /// Like [`Self::comma_list`], but empty when the list's closing punctuation `close` comes
    /// first (which is left for the caller to consume).
    fn comma_list_unless<T>(
        &mut self,
        close: &str,
        item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        if self.is_punct(close) {
            Ok(Vec::new())
        } else {
            self.comma_list(item)
        }
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            TokKind::Eof => "end of file".to_string(),
            _ => format!("`{}`", self.text_of(t)),
        }
    }

    fn error(&mut self, d: Diagnostic) {
        let at = d.primary_span().map_or(0, |s| s.start());
        // One error per position: avoids cascades when recovery re-reports the same token.
        if at == self.last_error_at {
            return;
        }
        self.last_error_at = at;
        self.error_count += 1;
        if self.error_count <= MAX_ERRORS {
            self.diags.push(d);
        }
    }

    fn error_expected(&mut self, what: &str) -> Fail {
        let t = self.tok();
        let found = self.describe(t);
        let mut d = syntax_error(
            format!("expected {what}, found {found}"),
            t.span,
            format!("expected {what}"),
        );
        if what.contains("`;`") && self.pos > 0 {
            let prev = self.toks[self.pos - 1].span;
            d = d
                .with_secondary(Span::new(prev.end(), prev.end()), "a `;` may be missing here")
                .with_help("end the statement before it with `;`");
        } else if t.kind == TokKind::Eof {
            d = d.with_help("the file ends too early: check for an unclosed `{` or `(`");
        } else {
            d = d.with_help(format!("insert {what} here, or remove {found}"));
        }
        self.error(d);
        Fail
    }

    fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.error_expected(&format!("`{p}`")))
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.tok();
            self.error(
                syntax_error("nesting too deep", t.span, "nesting limit reached here")
                    .with_help(format!("alpine-rs accepts at most {MAX_DEPTH} nested constructs")),
            );
            self.depth -= 1;
            return Err(Fail);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// `f` one nesting level deeper, against the depth limit.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    /// Is the current token a word usable as an identifier?
    fn is_ident(&self) -> bool {
        self.is_ident_tok(self.tok())
    }

    fn is_ident_tok(&self, t: Token) -> bool {
        match t.kind {
            TokKind::QuotedWord => true,
            TokKind::Word => !t.reserved,
            _ => false,
        }
    }

    fn ident_from(&self, t: Token) -> Ident {
        let text = self.text_of(t);
        let name = if t.kind == TokKind::QuotedWord {
            text.trim_matches('`').to_string()
        } else {
            text.to_string()
        };
        Ident::new(name, t.span)
    }

    /// An identifier that names something (declaration, parameter, variable use).
    fn expect_ident(&mut self, what: &str) -> PResult<Ident> {
        if self.is_ident() {
            let t = self.bump();
            let id = self.ident_from(t);
            self.check_reserved(&id, t);
            Ok(id)
        } else {
            let t = self.tok();
            if t.kind == TokKind::Word && HARD_KEYWORDS.contains(&self.text_of(t)) {
                let w = self.text_of(t);
                self.error(
                    syntax_error(
                        format!("`{w}` is a keyword and cannot name {what}"),
                        t.span,
                        "keyword used as a name",
                    )
                    .with_help(format!("rename it, or write it as `` `{w}` ``")),
                );
                return Err(Fail);
            }
            Err(self.error_expected(what))
        }
    }

    fn check_reserved(&mut self, id: &Ident, t: Token) {
        if t.kind == TokKind::Word
            && self.dialect == Dialect::V1
            && V1_RESERVED.contains(&id.name.as_str())
        {
            self.error(
                syntax_error(format!("`{}` is a keyword of PVL 1.4 and cannot name a variable", id.name), id.span, "reserved word used as a name")
                .with_note("VerCors 1.4 reserves the gpuopt words loop_unroll, iter_merge, matrix_lin, glob_to_reg, tile, fuse, inter and intra")
                .with_help("rename it, or pass `--dialect v2` for a VerCors 2 file"),
            );
        }
    }

    fn span_from(&self, lo: usize) -> Span {
        Span::new(lo, self.prev_end().max(lo))
    }

    /// Skip tokens up to (not past) one of the stop punctuations at nesting level 0, consuming a
    /// `;` stop. Always consumes at least one token unless already at a stop or EOF.
    fn recover(&mut self, stop_at_semicolon: bool) {
        let mut depth: i32 = 0;
        let start = self.pos;
        loop {
            if self.at_eof() {
                return;
            }
            let t = self.tok();
            let s = self.text_of(t);
            if t.kind == TokKind::Punct {
                match s {
                    "(" | "[" | "{" | "{:" => depth += 1,
                    ")" | "]" | ":}" if depth > 0 => depth -= 1,
                    "}" => {
                        if depth == 0 {
                            if self.pos == start {
                                // Never stall on a stray `}` the caller cannot consume.
                            }
                            return;
                        }
                        depth -= 1;
                        if depth == 0 && !stop_at_semicolon {
                            self.bump();
                            return;
                        }
                    }
                    ";" if depth == 0 && stop_at_semicolon => {
                        self.bump();
                        return;
                    }
                    _ => {}
                }
            }
            self.bump();
            if depth == 0 && self.pos > start && !stop_at_semicolon && self.starts_member() {
                return;
            }
        }
    }

    fn starts_member(&self) -> bool {
        let t = self.tok();
        if t.kind != TokKind::Word {
            return false;
        }
        let w = self.text_of(t);
        CLAUSE_WORDS.contains(&w)
            || matches!(w, "class" | "static" | "pure" | "inline" | "void" | "gpuopt" | "resource")
    }

    /// The source text from `lo` to the last token consumed, kept as an opaque `keyword` construct.
    fn opaque_from(&self, lo: usize, keyword: impl Into<String>) -> Opaque {
        let span = self.span_from(lo);
        Opaque { keyword: keyword.into(), text: span.text(self.src).to_string(), span }
    }

    /// [`Self::opaque_from`] as an expression.
    fn opaque_expr_from(&self, lo: usize, keyword: impl Into<String>) -> Expr {
        let o = self.opaque_from(lo, keyword);
        let span = o.span;
        Expr::new(ExprKind::Opaque(o), span)
    }

    /// The `item`s of a body whose `{` is consumed, up to and including its `}`, and whether that
    /// `}` came: at the end of the file `unclosed(eof)` is reported instead. A failed item is
    /// skipped by [`Self::recover`] (`in_block`: up to a `;` too), and one that consumes nothing
    /// is reported as not `expected`, so the loop always advances.
    fn parse_braced<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
        in_block: bool,
        expected: &str,
        unclosed: impl FnOnce(Span) -> Diagnostic,
    ) -> (Vec<T>, bool) {
        let mut items = Vec::new();
        loop {
            if self.eat_punct("}") {
                return (items, true);
            }
            if self.at_eof() {
                let eof = Span::new(self.prev_end(), self.prev_end());
                self.error(unclosed(eof));
                return (items, false);
            }
            let before = self.pos;
            match item(self) {
                Ok(x) => items.push(x),
                Err(_) => self.recover(in_block),
            }
            if self.pos == before {
                self.error_expected(expected);
                self.bump();
            }
        }
    }
}
