//! Recursive-descent parser for PVL (pvl.md §3–4).
//!
//! Never panics and always terminates: every loop consumes a token or stops, recursion depth is
//! bounded, and errors are collected (with recovery at statement and member boundaries) instead
//! of aborting. The result is always a `Program`, possibly partial, plus diagnostics.

use super::ast::*;
use super::dialect::{self, Dialect, DialectChoice};
use super::keywords::{
    CLAUSE_WORDS, EXPRESSION_KEYWORDS, HARD_KEYWORDS, OPAQUE_STMT_WORDS, SPEC_WORDS, V1_RESERVED,
};
use super::lexer::{lex, TokKind, Token};
use super::prec::{self, Assoc};
use super::span::Span;
use crate::diag::Diagnostic;
use num_bigint::BigInt;
use std::collections::HashSet;

#[path = "annot.rs"]
pub mod annot;

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
    // The parser's thread outlives this call, so it gets its own copy of the text.
    let (src, opts) = (src.to_string(), opts.clone());
    super::worker::run(move || parse_here(&src, &opts))
}

fn parse_here(src: &str, opts: &ParseOptions) -> Parsed {
    let lexed = lex(src);
    let (dialect, settled) = dialect::select(src, &lexed.tokens, opts.dialect);
    let mut p = Parser::new(src, lexed.tokens, dialect);
    p.error_count = lexed.errors.len();
    p.diags = lexed.errors;
    let program = p.parse_program();
    let mut diagnostics = p.diags;
    diagnostics.extend(super::lint::lint(&program));
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
    Parsed {
        program,
        diagnostics,
        dialect,
        settled,
        sensitive: p.sensitive,
    }
}

/// Parse a standalone expression (used for command-line arguments such as `--locations`).
pub fn parse_expr_text(src: &str, dialect: Dialect) -> Result<Expr, Vec<Diagnostic>> {
    let src = src.to_string();
    super::worker::run(move || parse_expr_here(&src, dialect))
}

fn parse_expr_here(src: &str, dialect: Dialect) -> Result<Expr, Vec<Diagnostic>> {
    let lexed = lex(src);
    if !lexed.errors.is_empty() {
        return Err(lexed.errors);
    }
    let mut p = Parser::new(src, lexed.tokens, dialect);
    let e = p.parse_expr();
    if e.is_ok() && !p.at_eof() {
        p.error_expected("end of expression");
    }
    match e {
        Ok(e) if p.diags.is_empty() => Ok(e),
        _ => Err(p.diags),
    }
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
                .with_secondary(
                    Span::new(prev.end(), prev.end()),
                    "a `;` may be missing here",
                )
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
                syntax_error("nesting too deep", t.span, "nesting limit reached here").with_help(
                    format!("alpine-rs accepts at most {MAX_DEPTH} nested constructs"),
                ),
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
            || matches!(
                w,
                "class" | "static" | "pure" | "inline" | "void" | "gpuopt" | "resource"
            )
    }

    // -----------------------------------------------------------------------------------------
    // Program structure
    // -----------------------------------------------------------------------------------------

    fn parse_program(&mut self) -> Program {
        let mut items = Vec::new();
        let mut main = None;
        while !self.at_eof() {
            let before = self.pos;
            if self.is_punct("{") {
                match self.parse_block() {
                    Ok(b) => main = Some(b),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("class") {
                match self.parse_class() {
                    Ok(c) => items.push(Item::Class(c)),
                    Err(_) => self.recover(false),
                }
            } else if self.is_word("kernel") || self.is_word("enum") || self.is_word("seq_program")
            {
                items.push(Item::Opaque(self.parse_opaque_decl()));
            } else {
                match self.parse_member(None) {
                    Ok(Member::Method(m)) => items.push(Item::Method(m)),
                    Ok(Member::Field(f)) => items.push(Item::Field(f)),
                    Err(_) => self.recover(false),
                }
            }
            if self.pos == before {
                // A token nothing can start with: report once and skip it.
                if !self.at_eof() {
                    self.error_expected("a class, method or field declaration");
                    self.bump();
                }
            }
        }
        Program {
            items,
            main,
            span: Span::new(0, self.src.len()),
            memo: Memo::default(),
        }
    }

    fn parse_opaque_decl(&mut self) -> Opaque {
        let lo = self.tok().span.start();
        let kw = self.text().to_string();
        self.bump();
        // Up to and including the first balanced `{ … }`.
        while !self.at_eof() && !self.is_punct("{") {
            self.bump();
        }
        let mut depth = 0;
        while !self.at_eof() {
            if self.is_punct("{") {
                depth += 1;
            } else if self.is_punct("}") {
                depth -= 1;
                if depth == 0 {
                    self.bump();
                    break;
                }
            }
            self.bump();
        }
        self.opaque_from(lo, kw)
    }

    /// The source text from `lo` to the last token consumed, kept as an opaque `keyword` construct.
    fn opaque_from(&self, lo: usize, keyword: impl Into<String>) -> Opaque {
        let span = self.span_from(lo);
        Opaque {
            keyword: keyword.into(),
            text: span.text(self.src).to_string(),
            span,
        }
    }

    /// [`Self::opaque_from`] as an expression.
    fn opaque_expr_from(&self, lo: usize, keyword: impl Into<String>) -> Expr {
        let o = self.opaque_from(lo, keyword);
        let span = o.span;
        Expr::new(ExprKind::Opaque(o), span)
    }

    fn parse_class(&mut self) -> PResult<Class> {
        let lo = self.bump().span.start(); // `class`
        let name = self.expect_ident("a class name")?;
        let type_params = self.parse_type_params()?;
        self.expect_punct("{")?;
        // A class cut off by the end of the file keeps the members read so far.
        let (members, _) = self.parse_braced(
            |p| p.parse_member(Some(&name.name)),
            false,
            "a field or method declaration",
            |eof| {
                syntax_error(
                    format!(
                        "unbalanced braces: end of file reached inside the body of class `{}`",
                        name.name
                    ),
                    eof,
                    "expected `}` before the end of the file",
                )
                .with_secondary(name.span, "class declared here")
                .with_help("close the class body with `}`")
            },
        );
        Ok(Class {
            name,
            type_params,
            members,
            span: self.span_from(lo),
        })
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

    fn parse_type_params(&mut self) -> PResult<Vec<Ident>> {
        if !self.eat_punct("<") {
            return Ok(Vec::new());
        }
        let out = self.comma_list(|p| p.expect_ident("a type parameter"))?;
        self.expect_punct(">")?;
        Ok(out)
    }

    /// Annotations and contract clauses, interleaved, in front of a construct.
    fn parse_prefix(&mut self) -> PResult<Prefix> {
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
        prefix.span = if prefix.is_empty() {
            Span::new(lo, lo)
        } else {
            self.span_from(lo)
        };
        Ok(prefix)
    }

    /// Is the current token a contract clause keyword in clause position?
    fn at_clause(&self) -> bool {
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
            && matches!(
                nt,
                "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "." | "++" | "--" | ")" | ","
            ))
            || (self.text_of(t) == "decreases" && nt == ";")
    }

    /// Is the `[` at offset `n` an index whose `]` is followed by an assignment, an increment or
    /// a further `[`/`.` (the shape of an assignment target)?
    fn index_target_at(&self, n: usize) -> bool {
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
                            let a = self.tok_at(i + 1);
                            return a.kind == TokKind::Punct
                                && matches!(
                                    self.text_of(a),
                                    "=" | "+="
                                        | "-="
                                        | "*="
                                        | "/="
                                        | "%="
                                        | "."
                                        | "++"
                                        | "--"
                                        | "["
                                );
                        }
                    }
                    ";" | "{" | "}" => return false,
                    _ => {}
                }
            }
            i += 1;
        }
    }

    fn parse_clause(&mut self) -> PResult<Clause> {
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
        Ok(Clause {
            kind,
            body,
            span: self.span_from(lo),
        })
    }

    fn parse_modifiers(&mut self) -> Vec<Modifier> {
        let mut mods = Vec::new();
        loop {
            let m = match self.text() {
                "static" => Modifier::Static,
                "pure" => Modifier::Pure,
                "inline" => Modifier::Inline,
                "thread_local" => Modifier::ThreadLocal,
                _ => break,
            };
            if self.tok().kind != TokKind::Word {
                break;
            }
            // `pure` etc. are contextual: `int pure;` is not a modifier use.
            if m != Modifier::Static
                && !(self.is_ident_tok(self.tok_at(1)) || self.tok_at(1).kind == TokKind::Word)
            {
                break;
            }
            self.bump();
            mods.push(m);
        }
        mods
    }

    fn parse_member(&mut self, class: Option<&str>) -> PResult<Member> {
        let lo = self.tok().span.start();
        let prefix = self.parse_prefix()?;
        let mods = self.parse_modifiers();
        let is_final = self.is_word("final") && self.tok_at(1).kind == TokKind::Word;
        if is_final {
            self.bump();
        }
        // Constructors.
        let ctor = if self.is_word("constructor") && self.is_punct_at(1, "(") {
            let kw = self.bump();
            Some((MethodKind::CtorV2, Ident::new("constructor", kw.span)))
        } else if self.is_ident() && self.is_punct_at(1, "(") && class.is_some() {
            let t = self.bump();
            Some((MethodKind::CtorV1, self.ident_from(t)))
        } else {
            None
        };
        if let Some((kind, name)) = ctor {
            let void = Type::new(TypeKind::Void);
            return self.finish_method(lo, prefix, mods, kind, void, name);
        }
        let ty = self.parse_type()?;
        let name = self.expect_ident("a member name")?;
        if self.is_punct("(") || self.is_punct("<") {
            return self.finish_method(lo, prefix, mods, MethodKind::Method, ty, name);
        }
        // Field declaration.
        if !prefix.is_empty() {
            self.error(
                syntax_error(
                    "a contract or annotation cannot precede a field",
                    prefix.span,
                    "this prefix has no method to attach to",
                )
                .with_help("move the clauses in front of a method"),
            );
        }
        let mut names = vec![name];
        while self.eat_punct(",") {
            names.push(self.expect_ident("a field name")?);
        }
        self.expect_punct(";")?;
        Ok(Member::Field(Field {
            is_final,
            ty,
            names,
            span: self.span_from(lo),
        }))
    }

    fn finish_method(
        &mut self,
        lo: usize,
        prefix: Prefix,
        modifiers: Vec<Modifier>,
        kind: MethodKind,
        ret: Type,
        name: Ident,
    ) -> PResult<Member> {
        let type_params = self.parse_type_params()?;
        self.expect_punct("(")?;
        let params = self.comma_list_unless(")", |p| {
            let plo = p.tok().span.start();
            let ty = p.parse_type()?;
            let name = p.expect_ident("a parameter name")?;
            Ok(Param {
                ty,
                name,
                span: p.span_from(plo),
            })
        })?;
        self.expect_punct(")")?;
        let body = if self.is_punct("{") {
            MethodBody::Block(self.parse_block()?)
        } else if self.eat_punct("=") {
            let e = self.parse_expr()?;
            self.expect_punct(";")?;
            MethodBody::Expr(e)
        } else if self.eat_punct(";") {
            MethodBody::Abstract
        } else {
            return Err(self.error_expected("a method body `{`, `= expression;` or `;`"));
        };
        Ok(Member::Method(Method {
            prefix,
            modifiers,
            kind,
            ret,
            name,
            type_params,
            params,
            body,
            span: self.span_from(lo),
        }))
    }

    // -----------------------------------------------------------------------------------------
    // gpuopt annotations
    // -----------------------------------------------------------------------------------------

    /// `gpuopt WORD OPERAND… ;` (pvl.md §3.5). The operands are kept as tokens: what they mean
    /// is up to the optimization WORD names, which reads them with its parameter schema through
    /// [`annot::OperandReader`]. They run to the `;`; one that stops before a clause or statement
    /// keyword, a brace, an unmatched closing bracket or the end of the file is unterminated (an
    /// error here; the annotation is kept, so recovery goes on at what stopped it).
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
        Ok(Annotation {
            keyword,
            operands,
            end,
            terminated,
            span: self.span_from(lo),
        })
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

    // -----------------------------------------------------------------------------------------
    // Types
    // -----------------------------------------------------------------------------------------

    fn parse_type(&mut self) -> PResult<Type> {
        match self.try_type() {
            Some(t) => Ok(t),
            None => Err(self.error_expected("a type")),
        }
    }

    /// Parse a type without reporting errors; restores the position on failure.
    fn try_type(&mut self) -> Option<Type> {
        let start = self.pos;
        // Type arguments and array dimensions nest the type; a speculative parse stops silently
        // at the depth limit (the caller then reports what it expected).
        let saved = self.depth;
        let r = if self.depth < MAX_DEPTH {
            self.depth += 1;
            self.try_type_inner()
        } else {
            None
        };
        self.depth = saved;
        if r.is_none() {
            self.pos = start;
        }
        r
    }

    fn try_type_inner(&mut self) -> Option<Type> {
        let t = self.tok();
        if t.kind != TokKind::Word && t.kind != TokKind::QuotedWord {
            return None;
        }
        let lo = t.span.start();
        let w = self.text_of(t);
        let simple = match w {
            "int" => Some(TypeKind::Int),
            "boolean" => Some(TypeKind::Boolean),
            "bool" => Some(TypeKind::Bool),
            "void" => Some(TypeKind::Void),
            "string" => Some(TypeKind::String),
            "resource" => Some(TypeKind::Resource),
            "process" => Some(TypeKind::Process),
            "frac" => Some(TypeKind::Frac),
            "zfrac" => Some(TypeKind::ZFrac),
            "rational" => Some(TypeKind::Rational),
            "float32" => Some(TypeKind::Float32),
            "float64" => Some(TypeKind::Float64),
            "char" => Some(TypeKind::Char),
            _ => None,
        };
        let mut ty = if let Some(k) = simple.filter(|_| t.kind == TokKind::Word) {
            self.bump();
            Type {
                kind: k,
                span: t.span,
            }
        } else {
            let g1 = match w {
                "seq" => Some(Generic1::Seq),
                "set" => Some(Generic1::Set),
                "bag" => Some(Generic1::Bag),
                "option" => Some(Generic1::Option),
                "loc" => Some(Generic1::Loc),
                "pointer" => Some(Generic1::Pointer),
                _ => None,
            };
            if let (Some(g), true) = (g1, self.is_punct_at(1, "<")) {
                self.bump();
                self.bump();
                let inner = self.try_type()?;
                if !self.eat_punct(">") {
                    return None;
                }
                Type {
                    kind: TypeKind::Generic1(g, Box::new(inner)),
                    span: self.span_from(lo),
                }
            } else if (w == "map" || w == "tuple") && self.is_punct_at(1, "<") {
                self.bump();
                self.bump();
                let a = self.try_type()?;
                if !self.eat_punct(",") {
                    return None;
                }
                let b = self.try_type()?;
                if !self.eat_punct(">") {
                    return None;
                }
                let kind = if w == "map" {
                    TypeKind::Map(Box::new(a), Box::new(b))
                } else {
                    TypeKind::Tuple(Box::new(a), Box::new(b))
                };
                Type {
                    kind,
                    span: self.span_from(lo),
                }
            } else if self.is_ident() {
                self.bump();
                let name = self.ident_from(t);
                let mut args = Vec::new();
                if self.is_punct("<") {
                    let save = self.pos;
                    self.bump();
                    let mut ok = true;
                    loop {
                        match self.try_type() {
                            Some(a) => args.push(a),
                            None => {
                                ok = false;
                                break;
                            }
                        }
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    if !(ok && self.eat_punct(">")) {
                        self.pos = save;
                        args.clear();
                    }
                }
                Type {
                    kind: TypeKind::Class(name, args),
                    span: self.span_from(lo),
                }
            } else {
                return None;
            }
        };
        // Array dimensions: `[]`* or sized `[E]`+.
        let mut sizes: Vec<Option<Expr>> = Vec::new();
        while self.is_punct("[") && self.depth < MAX_DEPTH {
            self.depth += 1;
            if self.is_punct_at(1, "]") {
                self.bump();
                self.bump();
                sizes.push(None);
            } else {
                // A sized dimension; only part of a type if a declaration follows, which the
                // caller checks. Errors inside are not reported in this speculative parse.
                let save_pos = self.pos;
                let save_diags = self.diags.len();
                let save_count = self.error_count;
                let save_last = self.last_error_at;
                self.bump();
                let e = self.parse_expr().ok();
                let closed = e.is_some() && self.eat_punct("]");
                if !closed || self.diags.len() != save_diags {
                    self.pos = save_pos;
                    self.diags.truncate(save_diags);
                    self.error_count = save_count;
                    self.last_error_at = save_last;
                    break;
                }
                sizes.push(e);
            }
        }
        // Innermost dimension last: `int[M][N]` is Array(Array(int, N), M).
        for size in sizes.into_iter().rev() {
            let span = self.span_from(lo);
            ty = Type {
                kind: TypeKind::Array(Box::new(ty), size.map(Box::new)),
                span,
            };
        }
        if let TypeKind::Array(..) = ty.kind {
            ty.span = self.span_from(lo);
        }
        Some(ty)
    }

    // -----------------------------------------------------------------------------------------
    // Statements
    // -----------------------------------------------------------------------------------------

    fn parse_block(&mut self) -> PResult<Block> {
        let open = self.expect_punct("{")?;
        let (stmts, closed) = self.parse_braced(Self::parse_stmt, true, "a statement", |eof| {
            syntax_error(
                "unbalanced braces: end of file reached inside a block",
                eof,
                "expected `}` before the end of the file",
            )
            .with_secondary(open, "block opened here")
            .with_help("close the block with `}`")
        });
        if !closed {
            return Err(Fail);
        }
        Ok(Block {
            stmts,
            span: self.span_from(open.start()),
        })
    }

    fn parse_stmt(&mut self) -> PResult<Stmt> {
        self.nested(Self::parse_stmt_inner)
    }

    fn parse_stmt_inner(&mut self) -> PResult<Stmt> {
        let lo = self.tok().span.start();
        if self.is_punct("{") {
            let b = self.parse_block()?;
            let span = b.span;
            return Ok(Stmt {
                kind: StmtKind::Block(b),
                span,
            });
        }
        // A prefix (annotations, contract clauses) belongs to the loop or par that follows.
        if self.is_word("gpuopt") || self.at_clause() {
            let prefix = self.parse_prefix()?;
            if self.is_word("while") || self.is_word("for") {
                return self.parse_loop(lo, prefix);
            }
            if self.is_word("par") {
                return self.parse_par(lo, prefix);
            }
            if !prefix.clauses.is_empty() {
                let t = self.tok();
                let found = self.describe(t);
                self.error(
                    syntax_error(format!("contract clauses must be followed by a loop or a par block, found {found}"), t.span, "expected `while`, `for` or `par`")
                    .with_secondary(prefix.span, "these clauses have nothing to attach to")
                    .with_help("move the clauses in front of the loop or par block they describe"),
                );
                return Err(Fail);
            }
            // Only annotations: a dangling annotation, reported by the front checks (A0002).
            let mut anns = prefix.annotations.into_iter();
            let first = anns.next().ok_or(Fail)?;
            // Further annotations become their own statements (rare).
            let extra: Vec<Annotation> = anns.collect();
            let span = first.span;
            let stmt = Stmt {
                kind: StmtKind::Annotation(first),
                span,
            };
            if extra.is_empty() {
                return Ok(stmt);
            }
            let mut stmts = vec![stmt];
            for a in extra {
                let span = a.span;
                stmts.push(Stmt {
                    kind: StmtKind::Annotation(a),
                    span,
                });
            }
            // Keep them in a synthetic block-less sequence: a Block with the union span.
            let span = self.span_from(lo);
            return Ok(Stmt {
                kind: StmtKind::Block(Block { stmts, span }),
                span,
            });
        }
        let t = self.tok();
        if t.kind == TokKind::Word {
            let w = self.text_of(t);
            match w {
                "if" => return self.parse_if(lo),
                "while" | "for" => return self.parse_loop(lo, Prefix::default()),
                "par" => return self.parse_par(lo, Prefix::default()),
                "barrier" => return self.parse_barrier(lo),
                "return" => {
                    self.bump();
                    let e = if self.is_punct(";") {
                        None
                    } else {
                        Some(self.parse_expr()?)
                    };
                    self.expect_punct(";")?;
                    return Ok(Stmt {
                        kind: StmtKind::Return(e),
                        span: self.span_from(lo),
                    });
                }
                "invariant" => {
                    self.bump();
                    let name = self.expect_ident("an invariant name")?;
                    self.expect_punct("(")?;
                    let resource = self.parse_expr()?;
                    self.expect_punct(")")?;
                    let body = self.parse_block()?;
                    return Ok(Stmt {
                        kind: StmtKind::Invariant {
                            name,
                            resource,
                            body,
                        },
                        span: self.span_from(lo),
                    });
                }
                "atomic" if self.is_punct_at(1, "(") => return self.parse_atomic(lo),
                "ghost" if !self.next_is_assignment_like() => {
                    self.bump();
                    let inner = self.parse_stmt()?;
                    return Ok(Stmt {
                        kind: StmtKind::Ghost(Box::new(inner)),
                        span: self.span_from(lo),
                    });
                }
                "parallel" | "sequential" if self.is_punct_at(1, "{") => {
                    let sequential = w == "sequential";
                    self.bump();
                    let b = self.parse_block()?;
                    return Ok(Stmt {
                        kind: StmtKind::Parallel {
                            sequential,
                            body: b.stmts,
                        },
                        span: self.span_from(lo),
                    });
                }
                "vec" => return Ok(self.parse_opaque_stmt(lo)),
                _ => {}
            }
            if SPEC_WORDS.contains(&w) && !self.next_is_assignment_like() {
                self.bump();
                let kind = SpecKind::from_keyword(w).ok_or(Fail)?;
                let expr = self.parse_expr()?;
                self.expect_punct(";")?;
                return Ok(Stmt {
                    kind: StmtKind::Spec { kind, expr },
                    span: self.span_from(lo),
                });
            }
            if OPAQUE_STMT_WORDS.contains(&w)
                && (HARD_KEYWORDS.contains(&w) || self.opaque_word_follows())
            {
                return Ok(self.parse_opaque_stmt(lo));
            }
        }
        if self.is_punct("{*") || (self.is_punct("{") && self.is_punct_at(1, "*")) {
            return Ok(self.parse_opaque_stmt(lo));
        }
        let s = self.parse_simple()?;
        self.expect_punct(";")?;
        Ok(Stmt {
            kind: s.kind,
            span: self.span_from(lo),
        })
    }

    /// Is the word at the cursor used as a variable (`assert = 1;`, `ghost.x`)?
    fn next_is_assignment_like(&self) -> bool {
        let n = self.tok_at(1);
        n.kind == TokKind::Punct
            && matches!(
                self.text_of(n),
                "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "." | "++" | "--" | "[" | ";"
            )
    }

    fn opaque_word_follows(&self) -> bool {
        let n = self.tok_at(1);
        matches!(
            n.kind,
            TokKind::Word | TokKind::Int | TokKind::BsWord | TokKind::QuotedWord
        ) || (n.kind == TokKind::Punct
            && matches!(self.text_of(n), "{" | "(")
            && self.tok_at(1).space_before)
    }

    /// Opaque statement: up to the `;` that ends it, or through a balanced block.
    fn parse_opaque_stmt(&mut self, lo: usize) -> Stmt {
        let kw = self.text().to_string();
        let mut depth = 0i32;
        while !self.at_eof() {
            if self.is_punct("(") || self.is_punct("[") || self.is_punct("{") || self.is_punct("{*")
            {
                depth += 1;
            } else if self.is_punct(")") || self.is_punct("]") || self.is_punct("*}") {
                depth -= 1;
            } else if self.is_punct("}") {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                if depth == 0 {
                    self.bump();
                    break;
                }
            } else if self.is_punct(";") && depth <= 0 {
                self.bump();
                break;
            }
            self.bump();
        }
        let o = self.opaque_from(lo, kw);
        Stmt {
            span: o.span,
            kind: StmtKind::Opaque(o),
        }
    }

    fn parse_atomic(&mut self, lo: usize) -> PResult<Stmt> {
        self.bump();
        self.expect_punct("(")?;
        let names = self.comma_list_unless(")", |p| p.expect_ident("an invariant name"))?;
        self.expect_punct(")")?;
        let body = self.parse_block()?;
        Ok(Stmt {
            kind: StmtKind::Atomic { names, body },
            span: self.span_from(lo),
        })
    }

    fn parse_if(&mut self, lo: usize) -> PResult<Stmt> {
        self.bump();
        self.expect_punct("(")?;
        let cond = self.parse_expr()?;
        self.expect_punct(")")?;
        let then = Box::new(self.parse_stmt()?);
        let els = if self.eat_word("else") {
            Some(Box::new(self.parse_stmt()?))
        } else {
            None
        };
        Ok(Stmt {
            kind: StmtKind::If { cond, then, els },
            span: self.span_from(lo),
        })
    }

    fn parse_loop(&mut self, lo: usize, prefix: Prefix) -> PResult<Stmt> {
        let kw = self.bump();
        let is_while = self.text_of(kw) == "while";
        self.expect_punct("(")?;
        if is_while {
            let cond = self.parse_expr()?;
            self.expect_punct(")")?;
            let body = Box::new(self.parse_stmt()?);
            return Ok(Stmt {
                kind: StmtKind::While(Loop {
                    prefix,
                    init: Vec::new(),
                    cond: Some(cond),
                    update: Vec::new(),
                    body,
                    keyword: kw.span,
                }),
                span: self.span_from(lo),
            });
        }
        // v2 ranged for: `for (int i = lo .. hi)`.
        if self.is_ranged_for() {
            let ty = self.parse_type()?;
            let var = self.expect_ident("the loop variable")?;
            self.expect_punct("=")?;
            let lo_e = self.parse_expr()?;
            self.expect_punct("..")?;
            let hi_e = self.parse_expr()?;
            self.expect_punct(")")?;
            let body = Box::new(self.parse_stmt()?);
            return Ok(Stmt {
                kind: StmtKind::RangedFor {
                    prefix,
                    keyword: kw.span,
                    ty,
                    var,
                    lo: lo_e,
                    hi: hi_e,
                    body,
                },
                span: self.span_from(lo),
            });
        }
        let init = self.comma_list_unless(";", Self::parse_simple)?;
        self.expect_punct(";")?;
        let cond = if self.is_punct(";") {
            None
        } else {
            Some(self.parse_expr()?)
        };
        self.expect_punct(";")?;
        let update = self.comma_list_unless(")", Self::parse_simple)?;
        self.expect_punct(")")?;
        let body = Box::new(self.parse_stmt()?);
        Ok(Stmt {
            kind: StmtKind::For(Loop {
                prefix,
                init,
                cond,
                update,
                body,
                keyword: kw.span,
            }),
            span: self.span_from(lo),
        })
    }

    fn is_ranged_for(&self) -> bool {
        // `Type Name = … ..` before any `;` at depth 0.
        let mut i = 0;
        let mut depth = 0i32;
        loop {
            let t = self.tok_at(i);
            if t.kind == TokKind::Eof {
                return false;
            }
            if t.kind == TokKind::Punct {
                match self.text_of(t) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => {
                        if depth == 0 {
                            return false;
                        }
                        depth -= 1;
                    }
                    ";" => return false,
                    ".." if depth == 0 => return true,
                    _ => {}
                }
            }
            i += 1;
            if i > 200 {
                return false;
            }
        }
    }

    fn parse_par(&mut self, lo: usize, prefix: Prefix) -> PResult<Stmt> {
        let kw = self.tok().span;
        let mut arms = Vec::new();
        loop {
            let arm_lo = self.tok().span.start();
            self.bump(); // `par` (or `and`)
            let label = if self.is_ident() && !self.at_clause() {
                let t = self.bump();
                Some(self.ident_from(t))
            } else {
                None
            };
            let mut iters = Vec::new();
            let mut wait = None;
            if self.is_punct("(") {
                self.bump();
                if !self.is_punct(")") && !self.is_punct(";") {
                    iters = self.comma_list(Self::parse_iter)?;
                }
                if self.is_punct(";") {
                    let wlo = self.bump().span.start();
                    while !self.is_punct(")") && !self.at_eof() {
                        self.bump();
                    }
                    wait = Some(self.opaque_from(wlo, "wait-list"));
                }
                self.expect_punct(")")?;
            }
            let mut contract = Vec::new();
            while self.at_clause() {
                contract.push(self.parse_clause()?);
            }
            if !self.is_punct("{") && self.dialect == Dialect::V1 {
                return Err(self.error_expected("`{` to start the par body"));
            }
            let body = Box::new(self.parse_stmt()?);
            arms.push(ParArm {
                label,
                iters,
                wait,
                contract,
                body,
                span: self.span_from(arm_lo),
            });
            if !self.is_word("and") {
                break;
            }
        }
        Ok(Stmt {
            kind: StmtKind::Par(Par {
                prefix,
                arms,
                keyword: kw,
            }),
            span: self.span_from(lo),
        })
    }

    fn parse_iter(&mut self) -> PResult<Iter> {
        let lo = self.tok().span.start();
        let ty = self.parse_type()?;
        let name = self.expect_ident("an iterator name")?;
        if !self.is_punct("=") {
            let t = self.tok();
            let found = self.describe(t);
            self.error(
                syntax_error(
                    format!(
                        "the par iterator `{}` needs a range, found {found}",
                        name.name
                    ),
                    t.span,
                    "expected `= lo .. hi`",
                )
                .with_secondary(name.span, "iterator declared here")
                .with_help(format!(
                    "give it a range: par blk (int {} = lo .. hi)",
                    name.name
                )),
            );
            return Err(Fail);
        }
        self.bump();
        let lo_e = self.parse_expr()?;
        self.expect_punct("..")?;
        let hi_e = self.parse_expr()?;
        Ok(Iter {
            ty,
            name,
            lo: lo_e,
            hi: hi_e,
            span: self.span_from(lo),
        })
    }

    fn parse_barrier(&mut self, lo: usize) -> PResult<Stmt> {
        let kw = self.bump();
        self.expect_punct("(")?;
        let label = self.expect_ident("a barrier label")?;
        let mut tags = Vec::new();
        if self.eat_punct(";") {
            tags = self.comma_list(|p| p.expect_ident("an invariant name"))?;
        }
        self.expect_punct(")")?;
        let mut contract = Vec::new();
        let mut contract_in_braces = false;
        let mut body = None;
        if self.is_punct("{")
            && (self.is_clause_word_at(1) || self.is_punct_at(1, "}"))
            && !self.at_clause_after_brace_is_empty_block()
        {
            // `barrier(L) { clauses }`
            contract_in_braces = true;
            self.bump();
            while self.at_clause() {
                contract.push(self.parse_clause()?);
            }
            self.expect_punct("}")?;
        } else {
            while self.at_clause() {
                contract.push(self.parse_clause()?);
            }
            body = Some(self.parse_block()?);
        }
        Ok(Stmt {
            kind: StmtKind::Barrier(Barrier {
                label,
                tags,
                contract,
                contract_in_braces,
                body,
                keyword: kw.span,
            }),
            span: self.span_from(lo),
        })
    }

    fn is_clause_word_at(&self, n: usize) -> bool {
        let t = self.tok_at(n);
        t.kind == TokKind::Word && CLAUSE_WORDS.contains(&self.text_of(t))
    }

    /// `barrier(L) { }` with no clauses: treat as the contract-in-braces form with an empty
    /// contract (both readings print the same); this helper keeps the second form for
    /// `barrier(L) requires …; { }` only.
    fn at_clause_after_brace_is_empty_block(&self) -> bool {
        false
    }

    /// Simple statement without the terminating `;` (also used in `for` headers).
    fn parse_simple(&mut self) -> PResult<Stmt> {
        let lo = self.tok().span.start();
        // Declaration: `Type Name` followed by `=`, `,`, `;` or `)`.
        if let Some(decl) = self.try_decl(lo)? {
            return Ok(decl);
        }
        let target = self.parse_expr()?;
        let t = self.tok();
        let s = self.text_of(t);
        if t.kind == TokKind::Punct {
            match s {
                "=" => {
                    self.bump();
                    let value = self.parse_expr()?;
                    return Ok(Stmt {
                        kind: StmtKind::Assign { target, value },
                        span: self.span_from(lo),
                    });
                }
                "++" | "--" => {
                    self.bump();
                    return Ok(Stmt {
                        kind: StmtKind::IncDec {
                            target,
                            inc: s == "++",
                        },
                        span: self.span_from(lo),
                    });
                }
                "+=" | "-=" | "*=" | "/=" | "%=" => {
                    self.bump();
                    let op = match s {
                        "+=" => CompoundOp::Add,
                        "-=" => CompoundOp::Sub,
                        "*=" => CompoundOp::Mul,
                        "/=" => CompoundOp::Div,
                        _ => CompoundOp::Mod,
                    };
                    let value = self.parse_expr()?;
                    return Ok(Stmt {
                        kind: StmtKind::CompoundAssign { target, op, value },
                        span: self.span_from(lo),
                    });
                }
                _ => {}
            }
        }
        Ok(Stmt {
            kind: StmtKind::Expr(target),
            span: self.span_from(lo),
        })
    }

    fn try_decl(&mut self, lo: usize) -> PResult<Option<Stmt>> {
        let start = self.pos;
        let Some(ty) = self.try_type() else {
            return Ok(None);
        };
        let name_tok = self.tok();
        let is_name = self.is_ident_tok(name_tok);
        let after = self.tok_at(1);
        let after_ok =
            after.kind == TokKind::Punct && matches!(self.text_of(after), "=" | "," | ";" | ")");
        if !(is_name && after_ok) {
            // Not a declaration; but `int tile = 4;` style uses of keywords as names deserve a
            // precise message rather than a confusing expression error.
            if after_ok
                && name_tok.kind == TokKind::Word
                && matches!(
                    ty.kind,
                    TypeKind::Int
                        | TypeKind::Boolean
                        | TypeKind::Array(..)
                        | TypeKind::Generic1(..)
                )
            {
                self.expect_ident("a variable")?;
            }
            self.pos = start;
            return Ok(None);
        }
        let vars = self.comma_list(|p| {
            let dlo = p.tok().span.start();
            let name = p.expect_ident("a variable name")?;
            let init = if p.eat_punct("=") {
                Some(p.parse_expr()?)
            } else {
                None
            };
            Ok(Declarator {
                name,
                init,
                span: p.span_from(dlo),
            })
        })?;
        Ok(Some(Stmt {
            kind: StmtKind::Decl { ty, vars },
            span: self.span_from(lo),
        }))
    }

    // -----------------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------------

    fn parse_expr(&mut self) -> PResult<Expr> {
        self.nested(Self::parse_expr_inner)
    }

    fn parse_expr_inner(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        // v1 labelled expression `L: e`.
        if self.is_ident() && self.is_punct_at(1, ":") && !self.operand_mode {
            let t = self.bump();
            let label = self.ident_from(t);
            self.bump();
            let e = self.parse_expr()?;
            return Ok(Expr::new(
                ExprKind::Labelled(label, Box::new(e)),
                self.span_from(lo),
            ));
        }
        if self.is_word("unfolding") || self.is_bsword("\\unfolding") {
            self.bump();
            // The predicate stops before `in`, which is also the membership operator.
            let p = self.parse_binary(prec::IN + 1)?;
            if !(self.eat_word("in")
                || (self.is_bsword("\\in") && {
                    self.bump();
                    true
                }))
            {
                return Err(self.error_expected("`in`"));
            }
            let e = self.parse_expr()?;
            return Ok(Expr::new(
                ExprKind::Unfolding(Box::new(p), Box::new(e)),
                self.span_from(lo),
            ));
        }
        self.parse_cond()
    }

    fn parse_cond(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        let c = self.parse_binary(0)?;
        if self.is_punct("?") {
            self.bump();
            let a = self.parse_binary(0)?;
            self.expect_punct(":")?;
            let b = self.nested(Self::parse_cond)?;
            return Ok(Expr::new(
                ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
                self.span_from(lo),
            ));
        }
        Ok(c)
    }

    /// The binary operator at the cursor with its precedence level and right-associativity.
    fn binop(&self) -> Option<(BinOp, u8, bool)> {
        let t = self.tok();
        let s = self.text_of(t);
        let op = match (t.kind, s) {
            (TokKind::Punct, "==>") => BinOp::Implies,
            (TokKind::Punct, "-*") => BinOp::Wand,
            (TokKind::Punct, "&&") => BinOp::And,
            (TokKind::Punct, "||") => BinOp::Or,
            (TokKind::Punct, "**") => BinOp::Star,
            (TokKind::Punct, "==") => BinOp::Eq,
            (TokKind::Punct, "!=") => BinOp::Ne,
            (TokKind::Punct, "<") => BinOp::Lt,
            (TokKind::Punct, "<=") => BinOp::Le,
            (TokKind::Punct, ">") => BinOp::Gt,
            (TokKind::Punct, ">=") => BinOp::Ge,
            (TokKind::Word, "in") => BinOp::In,
            (TokKind::BsWord, "\\in") => BinOp::In,
            (TokKind::Punct, "+") => BinOp::Add,
            (TokKind::Punct, "-") => BinOp::Sub,
            (TokKind::Punct, "*") => BinOp::Mul,
            (TokKind::Punct, "/") => BinOp::Div,
            (TokKind::Punct, "%") => BinOp::Mod,
            (TokKind::Punct, "\\") => BinOp::Frac,
            (TokKind::Punct, "^^") => BinOp::Pow,
            (TokKind::Punct, "::") => BinOp::Cons,
            (TokKind::Punct, "++") | (TokKind::Punct, "--") => {
                // `x++;` / `x++)` is an increment statement, not concatenation.
                let n = self.tok_at(1);
                if n.kind == TokKind::Punct && matches!(self.text_of(n), ";" | ")" | ",") {
                    return None;
                }
                if s == "--" {
                    return None;
                }
                BinOp::Concat
            }
            _ => return None,
        };
        let p = prec::binary(op, self.dialect);
        Some((op, p.level, p.assoc == Assoc::Right))
    }

    /// Precedence climbing over the binary operators of levels ≥ `min` ([`prec`], levels 3–12
    /// of pvl.md §4); `0` takes them all.
    fn parse_binary(&mut self, min: u8) -> PResult<Expr> {
        self.enter()?;
        let saved = self.depth;
        let r = self.parse_binary_inner(min);
        // The loop enters once per operator (each nests the tree deeper); undo them all.
        self.depth = saved;
        self.leave();
        r
    }

    fn parse_binary_inner(&mut self, min: u8) -> PResult<Expr> {
        let lo = self.tok().span.start();
        let mut lhs = self.parse_unary()?;
        while let Some((op, level, right)) = self.binop() {
            if level < min {
                break;
            }
            self.enter()?;
            let op_span = self.bump().span;
            let next_min = if right { level } else { level + 1 };
            let rhs = self.parse_binary(next_min)?;
            let e = Expr::new(
                ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                self.span_from(lo),
            );
            self.check_sensitive(&e, op_span);
            lhs = e;
        }
        Ok(lhs)
    }

    fn is_paren(&self, e: &Expr) -> bool {
        self.paren_spans.contains(&(e.span.lo, e.span.hi))
    }

    /// Record dialect-sensitive mixes (pvl.md §1.2): `a || b && c` and `a ==> b ==> c`.
    fn check_sensitive(&mut self, e: &Expr, op_span: Span) {
        let ExprKind::Binary(op, l, r) = &e.kind else {
            return;
        };
        let side = if self.dialect == Dialect::V1 { l } else { r };
        let ExprKind::Binary(inner, _, _) = &side.kind else {
            return;
        };
        if self.is_paren(side) {
            return;
        }
        let sensitive = prec::dialect_sensitive(*op, *inner);
        // In v2 `a && b || c` is read the same way by both dialects.
        let sensitive =
            sensitive && !(self.dialect == Dialect::V2 && matches!(op, BinOp::And | BinOp::Star));
        if !sensitive {
            return;
        }
        let text = e.span.text(self.src).to_string();
        let (reading, other) = if self.dialect == Dialect::V1 {
            (
                format!("({}) {} …", side.span.text(self.src), op.symbol()),
                format!("… {} (…)", inner.symbol()),
            )
        } else {
            (
                format!("… {} ({})", op.symbol(), side.span.text(self.src)),
                format!("(…) {} …", inner.symbol()),
            )
        };
        self.sensitive.push(e.span);
        self.diags.push(
            Diagnostic::warning(
                "A0010",
                format!("`{text}` is read differently by VerCors 1.4 and VerCors 2"),
            )
            .with_primary(
                op_span,
                format!("read as {reading} in the {} dialect", self.dialect.name()),
            )
            .with_secondary(side.span, "this operand")
            .with_note(format!("the other dialect reads it as {other}"))
            .with_help(format!(
                "add parentheses to keep the current meaning: {reading}"
            )),
        );
    }

    fn parse_unary(&mut self) -> PResult<Expr> {
        self.nested(Self::parse_unary_inner)
    }

    fn parse_unary_inner(&mut self) -> PResult<Expr> {
        let lo = self.tok().span.start();
        if self.is_punct("!") || self.is_punct("-") {
            let op = if self.is_punct("!") {
                UnOp::Not
            } else {
                UnOp::Neg
            };
            self.bump();
            let e = self.parse_unary()?;
            return Ok(Expr::new(
                ExprKind::Unary(op, Box::new(e)),
                self.span_from(lo),
            ));
        }
        if self.is_word("new") {
            return self.parse_new(lo);
        }
        let prim = self.parse_primary()?;
        self.parse_postfix(lo, prim)
    }

    fn parse_new(&mut self, lo: usize) -> PResult<Expr> {
        self.bump();
        // `new C(args)` or `new T[e]…`
        if self.is_ident() && self.is_punct_at(1, "(") {
            let t = self.bump();
            let name = self.ident_from(t);
            let args = self.parse_args()?;
            return Ok(Expr::new(
                ExprKind::NewObject(name, args),
                self.span_from(lo),
            ));
        }
        // Element type without dimensions, then sized dimensions.
        let t = self.tok();
        let w = self.text_of(t);
        let base = match w {
            "int" => TypeKind::Int,
            "boolean" => TypeKind::Boolean,
            "bool" => TypeKind::Bool,
            "frac" => TypeKind::Frac,
            "zfrac" => TypeKind::ZFrac,
            "rational" => TypeKind::Rational,
            "float32" => TypeKind::Float32,
            "float64" => TypeKind::Float64,
            "char" => TypeKind::Char,
            _ if self.is_ident() => TypeKind::Class(self.ident_from(t), Vec::new()),
            _ => return Err(self.error_expected("a type after `new`")),
        };
        self.bump();
        let ty = Type {
            kind: base,
            span: t.span,
        };
        let mut dims = Vec::new();
        while self.is_punct("[") {
            self.bump();
            dims.push(self.parse_expr()?);
            self.expect_punct("]")?;
        }
        if dims.is_empty() {
            return Err(self.error_expected("`[` or `(` after `new`"));
        }
        Ok(Expr::new(ExprKind::NewArray(ty, dims), self.span_from(lo)))
    }

    fn parse_args(&mut self) -> PResult<Vec<Expr>> {
        self.expect_punct("(")?;
        self.parse_list_until(")")
    }

    /// The arguments and ghost arguments of a call to `name`, which started at `lo`.
    fn parse_call(
        &mut self,
        lo: usize,
        recv: Option<Box<Expr>>,
        name: Ident,
        null_safe: bool,
    ) -> PResult<Expr> {
        // Fields are evaluated in order: the arguments, then the ghost arguments.
        let kind = ExprKind::Call {
            recv,
            name,
            args: self.parse_args()?,
            ghost: self.parse_ghost_args()?,
            null_safe,
        };
        Ok(Expr::new(kind, self.span_from(lo)))
    }

    fn call_paren_follows(&self) -> bool {
        self.is_punct("(") && !(self.operand_mode && self.tok().space_before)
    }

    fn parse_postfix(&mut self, lo: usize, e: Expr) -> PResult<Expr> {
        // Each suffix nests the tree one level deeper: count them against the depth limit.
        let saved = self.depth;
        let r = self.parse_postfix_chain(lo, e);
        self.depth = saved;
        r
    }

    fn parse_postfix_chain(&mut self, lo: usize, mut e: Expr) -> PResult<Expr> {
        loop {
            if self.is_punct(".") && !self.is_punct_at(1, ".") {
                self.enter()?;
                self.bump();
                let name = self.expect_ident("a field or method name")?;
                if self.call_paren_follows() {
                    e = self.parse_call(lo, Some(Box::new(e)), name, false)?;
                } else {
                    e = Expr::new(ExprKind::Field(Box::new(e), name), self.span_from(lo));
                }
            } else if (self.is_punct("->") || self.is_punct("?."))
                && self.is_ident_tok(self.tok_at(1))
                && self.is_punct_at(2, "(")
            {
                self.enter()?;
                self.bump();
                let t = self.bump();
                let name = self.ident_from(t);
                e = self.parse_call(lo, Some(Box::new(e)), name, true)?;
            } else if self.is_punct("[") {
                self.enter()?;
                self.bump();
                if self.eat_punct("..") {
                    let hi = self.parse_expr()?;
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::Slice(Box::new(e), None, Some(Box::new(hi))),
                        self.span_from(lo),
                    );
                    continue;
                }
                let i = self.parse_expr()?;
                if self.eat_punct("..") {
                    let hi = if self.is_punct("]") {
                        None
                    } else {
                        Some(Box::new(self.parse_expr()?))
                    };
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::Slice(Box::new(e), Some(Box::new(i)), hi),
                        self.span_from(lo),
                    );
                } else if self.eat_punct("->") {
                    let v = self.parse_expr()?;
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::SeqUpdate(Box::new(e), Box::new(i), Box::new(v)),
                        self.span_from(lo),
                    );
                } else {
                    self.expect_punct("]")?;
                    e = Expr::new(
                        ExprKind::Index(Box::new(e), Box::new(i)),
                        self.span_from(lo),
                    );
                }
            } else {
                break;
            }
        }
        Ok(e)
    }

    /// The `{ name = value, … }` of `given` or `yields` (the keyword is current), a trailing `,`
    /// allowed.
    fn parse_ghost_pairs<V>(
        &mut self,
        name_what: &str,
        mut value: impl FnMut(&mut Self) -> PResult<V>,
    ) -> PResult<Vec<(Ident, V)>> {
        self.bump();
        self.bump();
        let mut out = Vec::new();
        while !self.is_punct("}") {
            let n = self.expect_ident(name_what)?;
            self.expect_punct("=")?;
            out.push((n, value(self)?));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct("}")?;
        Ok(out)
    }

    /// `with { … } then { … }` (v1) and `given { … } yields { … }` (v2) after a call.
    fn parse_ghost_args(&mut self) -> PResult<Box<GhostArgs>> {
        let mut g = Box::<GhostArgs>::default();
        loop {
            if self.is_word("with") && self.is_punct_at(1, "{") {
                self.bump();
                g.with = Some(self.parse_block()?);
            } else if self.is_word("then") && self.is_punct_at(1, "{") {
                self.bump();
                g.then = Some(self.parse_block()?);
            } else if self.is_word("given") && self.is_punct_at(1, "{") {
                let pairs = self.parse_ghost_pairs("a ghost parameter", Self::parse_expr)?;
                g.given.extend(pairs);
            } else if self.is_word("yields") && self.is_punct_at(1, "{") {
                let pairs = self
                    .parse_ghost_pairs("a variable", |p| p.expect_ident("a yielded parameter"))?;
                g.yields.extend(pairs);
            } else {
                break;
            }
        }
        Ok(g)
    }

    fn parse_primary(&mut self) -> PResult<Expr> {
        let t = self.tok();
        let lo = t.span.start();
        let s = self.text_of(t);
        match t.kind {
            TokKind::Int => {
                self.bump();
                let v = s.parse::<BigInt>().unwrap_or_default();
                Ok(Expr::new(ExprKind::Int(v), t.span))
            }
            TokKind::Decimal | TokKind::Str | TokKind::Char => {
                self.bump();
                Ok(self.opaque_expr_from(lo, "literal"))
            }
            TokKind::BsWord => self.parse_bsword(t),
            TokKind::QuotedWord => {
                self.bump();
                let id = self.ident_from(t);
                self.finish_name(lo, id)
            }
            TokKind::Word => self.parse_word_primary(t),
            TokKind::Punct => match s {
                "(" => self.parse_paren(lo),
                "|" => {
                    self.bump();
                    // The operators above `||` (in v1, `&&`/`**` share its level and stay out too).
                    let e = self.parse_binary(prec::OR + 1)?;
                    self.expect_punct("|")?;
                    Ok(Expr::new(ExprKind::Length(Box::new(e)), self.span_from(lo)))
                }
                "[" => self.parse_bracket(lo),
                "{" => self.parse_brace(lo, CollKind::Set),
                "{:" => {
                    self.bump();
                    let e = self.parse_expr()?;
                    self.expect_punct(":}")?;
                    Ok(Expr::new(
                        ExprKind::Trigger(Box::new(e)),
                        self.span_from(lo),
                    ))
                }
                "*" => {
                    self.bump();
                    Ok(Expr::new(ExprKind::Wildcard, t.span))
                }
                "?" if self.is_ident_tok(self.tok_at(1)) && !self.tok_at(1).space_before => {
                    self.bump();
                    self.bump();
                    Ok(self.opaque_expr_from(lo, "?"))
                }
                _ => Err(self.error_expected("an expression")),
            },
            TokKind::Eof => Err(self.error_expected("an expression")),
        }
    }

    fn parse_word_primary(&mut self, t: Token) -> PResult<Expr> {
        let lo = t.span.start();
        let s = self.text_of(t);
        let simple = match s {
            "true" => Some(ExprKind::Bool(true)),
            "false" => Some(ExprKind::Bool(false)),
            "null" => Some(ExprKind::Null),
            "this" => Some(ExprKind::This),
            "write" => Some(ExprKind::Write),
            "read" => Some(ExprKind::Read),
            "none" => Some(ExprKind::NoPerm),
            "empty" => Some(ExprKind::Empty),
            "None" => Some(ExprKind::NoneOpt),
            "current_thread" => Some(ExprKind::ThreadId(s.to_string())),
            _ => None,
        };
        if let Some(k) = simple {
            self.bump();
            return Ok(Expr::new(k, t.span));
        }
        // Typed collection literals `seq<T>{…}`, `set<T>{…}`, `bag<T>{…}`; map/tuple are opaque.
        if matches!(s, "seq" | "set" | "bag" | "map" | "tuple") && self.is_punct_at(1, "<") {
            let save = self.pos;
            if let Some(ty) = self.try_type() {
                if self.is_punct("{") {
                    return match ty.kind {
                        TypeKind::Generic1(g, inner) => {
                            let kind = match g {
                                Generic1::Seq => CollKind::Seq,
                                Generic1::Set => CollKind::Set,
                                _ => CollKind::Bag,
                            };
                            self.bump();
                            let elems = self.parse_list_until("}")?;
                            Ok(Expr::new(
                                ExprKind::Collection {
                                    kind,
                                    elem_ty: Some(*inner),
                                    elems,
                                },
                                self.span_from(lo),
                            ))
                        }
                        _ => {
                            // map<K,V>{…} / tuple<A,B>{…}: keep as text.
                            self.skip_balanced("{", "}");
                            Ok(self.opaque_expr_from(lo, s))
                        }
                    };
                }
            }
            self.pos = save;
        }
        // Bag literal `b{…}` / `b{t: T}`: `b` directly followed by `{`.
        if s == "b" && self.is_punct_at(1, "{") && !self.tok_at(1).space_before {
            self.bump();
            return self.parse_brace(lo, CollKind::Bag);
        }
        if let Some(b) = Builtin::from_name(s) {
            if self.is_punct_at(1, "(") {
                self.bump();
                return self.finish_builtin(lo, b, t.span);
            }
        }
        if !self.is_ident_tok(t) {
            let found = self.describe(t);
            let mut d = syntax_error(
                format!("expected an expression, found {found}"),
                t.span,
                "expected an expression",
            );
            if HARD_KEYWORDS.contains(&s) {
                d = d.with_help(format!(
                    "`{s}` is a keyword; write `` `{s}` `` to use it as a name"
                ));
            }
            self.error(d);
            return Err(Fail);
        }
        self.bump();
        let id = self.ident_from(t);
        self.check_reserved(&id, t);
        self.finish_name(lo, id)
    }

    fn finish_name(&mut self, lo: usize, id: Ident) -> PResult<Expr> {
        if self.call_paren_follows() {
            return self.parse_call(lo, None, id, false);
        }
        let span = id.span;
        Ok(Expr::new(ExprKind::Name(id), span))
    }

    fn finish_builtin(&mut self, lo: usize, b: Builtin, name_span: Span) -> PResult<Expr> {
        let args = self.parse_args()?;
        let (min, max) = b.arity();
        if args.len() < min || args.len() > max {
            let span = self.span_from(lo);
            self.error(
                syntax_error(
                    format!(
                        "`{}` takes {} argument{}, found {}",
                        b.name(),
                        min,
                        if min == 1 { "" } else { "s" },
                        args.len()
                    ),
                    span,
                    "wrong number of arguments",
                )
                .with_secondary(name_span, "built-in function")
                .with_help(builtin_usage(b)),
            );
            return Err(Fail);
        }
        Ok(Expr::new(ExprKind::Builtin(b, args), self.span_from(lo)))
    }

    fn skip_balanced(&mut self, open: &str, close: &str) {
        let mut depth = 0;
        while !self.at_eof() {
            if self.is_punct(open) {
                depth += 1;
            } else if self.is_punct(close) {
                depth -= 1;
                if depth <= 0 {
                    self.bump();
                    return;
                }
            }
            self.bump();
        }
    }

    fn parse_list_until(&mut self, close: &str) -> PResult<Vec<Expr>> {
        let v = self.comma_list_unless(close, Self::parse_expr)?;
        self.expect_punct(close)?;
        Ok(v)
    }

    fn parse_bsword(&mut self, t: Token) -> PResult<Expr> {
        let lo = t.span.start();
        let s = self.text_of(t);
        match s {
            "\\result" => {
                self.bump();
                Ok(Expr::new(ExprKind::Result, t.span))
            }
            "\\current_thread" | "\\ltid" | "\\gtid" => {
                self.bump();
                Ok(Expr::new(ExprKind::ThreadId(s.to_string()), t.span))
            }
            "\\old" => {
                self.bump();
                let label = if self.is_punct("[") {
                    self.bump();
                    let l = self.expect_ident("a label")?;
                    self.expect_punct("]")?;
                    Some(l)
                } else {
                    None
                };
                self.expect_punct("(")?;
                let e = self.parse_expr()?;
                self.expect_punct(")")?;
                Ok(Expr::new(
                    ExprKind::Old(Box::new(e), label),
                    self.span_from(lo),
                ))
            }
            "\\unfolding" => self.parse_expr_inner(),
            _ => {
                if let Some(b) = Builtin::from_name(s) {
                    self.bump();
                    return self.finish_builtin(lo, b, t.span);
                }
                // Other backslash words (`\typeof`, `\sum(a, b)`, v2 extras): opaque call.
                self.bump();
                if self.is_punct("(") {
                    self.skip_balanced("(", ")");
                }
                Ok(self.opaque_expr_from(lo, s))
            }
        }
    }

    fn parse_paren(&mut self, lo: usize) -> PResult<Expr> {
        let n = self.tok_at(1);
        let ns = self.text_of(n);
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
                    ExprKind::Let {
                        ty,
                        name,
                        value: middle,
                        body,
                    }
                } else {
                    ExprKind::Sum {
                        ty,
                        name,
                        cond: middle,
                        body,
                    }
                };
                return Ok(Expr::new(kind, self.span_from(lo)));
            }
        }
        self.bump();
        let mut e = self.parse_expr()?;
        self.expect_punct(")")?;
        e.span = self.span_from(lo);
        self.paren_spans.insert((e.span.lo, e.span.hi));
        Ok(e)
    }

    fn parse_quant(&mut self, lo: usize, kind: QuantKind) -> PResult<Expr> {
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
            Ok(Binding {
                ty,
                name,
                range,
                span: p.span_from(blo),
            })
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
            ExprKind::Quant {
                kind,
                bindings,
                cond,
                body: Box::new(body),
            },
            self.span_from(lo),
        ))
    }

    fn parse_bracket(&mut self, lo: usize) -> PResult<Expr> {
        let mut e = self.parse_coll_literal(lo, CollKind::Seq, "]")?;
        // `[π]R`: scaling, when a resource-shaped primary follows a one-element list directly.
        if let ExprKind::Collection { elems, .. } = &mut e.kind {
            if elems.len() == 1
                && (self.is_word("Perm")
                    || self.is_word("PointsTo")
                    || self.is_word("Value")
                    || self.is_punct("("))
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
    fn parse_brace(&mut self, lo: usize, kind: CollKind) -> PResult<Expr> {
        self.parse_coll_literal(lo, kind, "}")
    }

    /// A `[…]` or `{…}` literal of `kind` up to its `close`: `t: T` (empty), nothing,
    /// `lo .. hi`, or `e, …`.
    fn parse_coll_literal(&mut self, lo: usize, kind: CollKind, close: &str) -> PResult<Expr> {
        self.bump(); // `[` or `{`
        if self.is_word("t") && self.is_punct_at(1, ":") {
            self.bump();
            self.bump();
            let ty = self.parse_type()?;
            self.expect_punct(close)?;
            return Ok(Expr::new(
                ExprKind::EmptyCollection(kind, ty),
                self.span_from(lo),
            ));
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
        Ok(Expr::new(
            ExprKind::Collection {
                kind,
                elem_ty: None,
                elems,
            },
            self.span_from(lo),
        ))
    }
}

fn builtin_usage(b: Builtin) -> String {
    match b {
        Builtin::Perm => "usage: Perm(location, fraction)".into(),
        Builtin::PointsTo => "usage: PointsTo(location, fraction, value)".into(),
        Builtin::Value => "usage: Value(location)".into(),
        Builtin::Array => "usage: \\array(a, n)".into(),
        Builtin::Matrix => "usage: \\matrix(m, rows, cols)".into(),
        _ => {
            let (min, _) = b.arity();
            format!("`{}` takes {min} argument(s)", b.name())
        }
    }
}
