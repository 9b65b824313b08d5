//! Statements: blocks, control flow (`if`, loops, `par`, `barrier`, …), opaque statements and
//! simple statements (declarations, assignments, expression statements).

use super::{syntax_error, Fail, PResult, Parser};
use crate::ast::*;
use crate::dialect::Dialect;
use crate::keywords::{CLAUSE_WORDS, HARD_KEYWORDS, OPAQUE_STMT_WORDS, SPEC_WORDS};
use crate::lexer::TokKind;

impl<'s> Parser<'s> {
    pub(super) fn parse_block(&mut self) -> PResult<Block> {
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
        Ok(Block { stmts, span: self.span_from(open.start()) })
    }

    pub(super) fn parse_stmt(&mut self) -> PResult<Stmt> {
        self.nested(Self::parse_stmt_inner)
    }

    fn parse_stmt_inner(&mut self) -> PResult<Stmt> {
        let lo = self.tok().span.start();
        if self.is_punct("{") {
            let b = self.parse_block()?;
            let span = b.span;
            return Ok(Stmt { kind: StmtKind::Block(b), span });
        }
        // `L: stmt`, a C-style label (VerCors 1 ghost code names the statements of a loop
        // iteration that `send … to L` and `recv … from L` connect): the statement itself. The
        // label means nothing else; `goto` is refused wherever it appears.
        // Only before a word or a block: `x := 3` (v2 assignment) and `x :: …` are no labels.
        let labelled = self.tok_at(2).kind == TokKind::Word || self.is_punct_at(2, "{");
        if self.is_ident() && self.is_punct_at(1, ":") && labelled {
            self.bump();
            self.bump();
            return self.parse_stmt();
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
            let stmt = Stmt { kind: StmtKind::Annotation(first), span };
            if extra.is_empty() {
                return Ok(stmt);
            }
            let mut stmts = vec![stmt];
            for a in extra {
                let span = a.span;
                stmts.push(Stmt { kind: StmtKind::Annotation(a), span });
            }
            // Keep them in a synthetic block-less sequence: a Block with the union span.
            let span = self.span_from(lo);
            return Ok(Stmt { kind: StmtKind::Block(Block { stmts, span }), span });
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
                    let e = if self.is_punct(";") { None } else { Some(self.parse_expr()?) };
                    self.expect_punct(";")?;
                    return Ok(Stmt { kind: StmtKind::Return(e), span: self.span_from(lo) });
                }
                "invariant" => {
                    self.bump();
                    let name = self.expect_ident("an invariant name")?;
                    self.expect_punct("(")?;
                    let resource = self.parse_expr()?;
                    self.expect_punct(")")?;
                    let body = self.parse_block()?;
                    return Ok(Stmt {
                        kind: StmtKind::Invariant { name, resource, body },
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
                        kind: StmtKind::Parallel { sequential, body: b.stmts },
                        span: self.span_from(lo),
                    });
                }
                "vec" if self.is_punct_at(1, "(") => return self.parse_vec(lo),
                // `spec_ignore }` … `spec_ignore {`: markers around code the verifier skips
                // (their braces are not a block); kept as text, refused downstream.
                "spec_ignore" if self.is_punct_at(1, "{") || self.is_punct_at(1, "}") => {
                    self.bump();
                    self.bump();
                    let o = self.opaque_from(lo, "spec_ignore");
                    return Ok(Stmt { span: o.span, kind: StmtKind::Opaque(o) });
                }
                _ => {}
            }
            if SPEC_WORDS.contains(&w) && !self.next_is_assignment_like() {
                self.bump();
                let kind = SpecKind::from_keyword(w).ok_or(Fail)?;
                let expr = self.parse_expr()?;
                self.expect_punct(";")?;
                return Ok(Stmt { kind: StmtKind::Spec { kind, expr }, span: self.span_from(lo) });
            }
            if OPAQUE_STMT_WORDS.contains(&w)
                && (HARD_KEYWORDS.contains(&w)
                    || self.opaque_word_follows()
                    || (w == "action" && self.action_stmt_follows()))
            {
                return Ok(self.parse_opaque_stmt(lo));
            }
        }
        if self.seq_assign_follows() {
            return Ok(self.parse_opaque_stmt(lo));
        }
        if self.is_punct("{*") || (self.is_punct("{") && self.is_punct_at(1, "*")) {
            return Ok(self.parse_opaque_stmt(lo));
        }
        let s = self.parse_simple()?;
        self.expect_punct(";")?;
        Ok(Stmt { kind: s.kind, span: self.span_from(lo) })
    }

    /// Is the word at the cursor used as a variable (`assert = 1;`, `ghost.x`)?
    fn next_is_assignment_like(&self) -> bool {
        let n = self.tok_at(1);
        if n.kind == TokKind::Punct && self.text_of(n) == "[" {
            // `assert[i] = 1;` indexes a variable; `assert [a, b] == s;` and
            // `unfold [1\2]p();` are statements: decide by what follows the matching `]`.
            return self.index_target_at(1);
        }
        n.kind == TokKind::Punct
            && matches!(
                self.text_of(n),
                "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "." | "++" | "--" | ";"
            )
    }

    /// v2 `action(obj, frac, process, args) { … }` (or `;`), the process-algebra action
    /// statement: its parenthesised list is followed by a block, or, in v2, by `;`.
    fn action_stmt_follows(&self) -> bool {
        if !self.is_punct_at(1, "(") {
            return false;
        }
        let mut depth = 0usize;
        let mut i = 1;
        loop {
            let t = self.tok_at(i);
            if t.kind == TokKind::Eof {
                return false;
            }
            match self.text_of(t) {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.is_punct_at(i + 1, "{")
            || (self.dialect == Dialect::V2 && self.is_punct_at(i + 1, ";"))
    }

    /// VeyMont's choreographic assignment `x := e;` / `p: x.f := e;`: a `:` directly followed
    /// by `=` before the statement's `;`.
    fn seq_assign_follows(&self) -> bool {
        let mut depth = 0i32;
        let mut i = 0;
        loop {
            let t = self.tok_at(i);
            if t.kind == TokKind::Eof || i > 256 {
                return false;
            }
            if t.kind == TokKind::Punct {
                match self.text_of(t) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    ";" if depth <= 0 => return false,
                    ":" if depth == 0
                        && self.is_punct_at(i + 1, "=")
                        && !self.tok_at(i + 1).space_before =>
                    {
                        return true
                    }
                    _ => {}
                }
            }
            if depth < 0 {
                return false;
            }
            i += 1;
        }
    }

    fn opaque_word_follows(&self) -> bool {
        let n = self.tok_at(1);
        matches!(n.kind, TokKind::Word | TokKind::Int | TokKind::BsWord | TokKind::QuotedWord)
            || (n.kind == TokKind::Punct
                && matches!(self.text_of(n), "{" | "(")
                && self.tok_at(1).space_before)
    }

    /// Opaque statement: up to the `;` that ends it, or through a balanced block.
    fn parse_opaque_stmt(&mut self, lo: usize) -> Stmt {
        let kw = self.text().to_string();
        // `extract frame requires …; ensures …; { … }`: its clauses end in `;`, the statement
        // with its block.
        let framed = matches!(kw.as_str(), "extract" | "frame");
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
            } else if self.is_punct(";") && depth <= 0 && !framed {
                self.bump();
                break;
            }
            self.bump();
        }
        let o = self.opaque_from(lo, kw);
        Stmt { span: o.span, kind: StmtKind::Opaque(o) }
    }

    /// `vec (int j = lo .. hi) { … }` (v1).
    fn parse_vec(&mut self, lo: usize) -> PResult<Stmt> {
        self.parse_headed_block(lo, Self::parse_iter, |iter, body| StmtKind::Vec { iter, body })
    }

    /// `atomic (inv, …) { … }`.
    fn parse_atomic(&mut self, lo: usize) -> PResult<Stmt> {
        let names =
            |p: &mut Self| p.comma_list_unless(")", |p| p.expect_ident("an invariant name"));
        self.parse_headed_block(lo, names, |names, body| StmtKind::Atomic { names, body })
    }

    /// A keyword (the current token), `(`, what `head` parses, `)` and a block: the statement
    /// `kind` makes of the head and the block.
    fn parse_headed_block<H>(
        &mut self,
        lo: usize,
        head: impl FnOnce(&mut Self) -> PResult<H>,
        kind: impl FnOnce(H, Block) -> StmtKind,
    ) -> PResult<Stmt> {
        self.bump();
        self.expect_punct("(")?;
        let head = head(self)?;
        self.expect_punct(")")?;
        let body = self.parse_block()?;
        Ok(Stmt { kind: kind(head, body), span: self.span_from(lo) })
    }

    fn parse_if(&mut self, lo: usize) -> PResult<Stmt> {
        self.bump();
        self.expect_punct("(")?;
        let cond = self.parse_expr()?;
        self.expect_punct(")")?;
        let then = Box::new(self.parse_stmt()?);
        let els = if self.eat_word("else") { Some(Box::new(self.parse_stmt()?)) } else { None };
        Ok(Stmt { kind: StmtKind::If { cond, then, els }, span: self.span_from(lo) })
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
            // With an iteration contract, the parallel block over the range, as VerCors reads
            // it (`front::iteration`).
            let iter = Iter {
                ty: ty.clone(),
                name: var.clone(),
                lo: lo_e.clone(),
                hi: hi_e.clone(),
                span: var.span,
            };
            if let Some(par) = crate::iteration::parallel_ranged(&prefix, &iter, &body, kw.span) {
                return Ok(Stmt { span: self.span_from(lo), ..par });
            }
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
        let cond = if self.is_punct(";") { None } else { Some(self.parse_expr()?) };
        self.expect_punct(";")?;
        let update = self.comma_list_unless(")", Self::parse_simple)?;
        self.expect_punct(")")?;
        let body = Box::new(self.parse_stmt()?);
        let span = self.span_from(lo);
        // VerCors 2's iteration contract (`context Perm(a[i], write); for (…)`) makes the loop
        // a parallel block (`front::iteration`). Where it cannot be one, the loop keeps the
        // clauses, which the oracles then refuse by name.
        let l = Loop { prefix: Prefix::default(), init, cond, update, body, keyword: kw.span };
        Ok(match crate::iteration::parallel_loop(l, prefix, span) {
            Ok(st) => st,
            Err((l, _, _)) => Stmt { kind: StmtKind::For(l), span },
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
                    // `; a(j), b(j)`: up to the `)` that closes the header.
                    let mut depth = 0usize;
                    while !(self.at_eof() || (depth == 0 && self.is_punct(")"))) {
                        if self.is_punct("(") {
                            depth += 1;
                        } else if self.is_punct(")") {
                            depth -= 1;
                        }
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
            arms.push(ParArm { label, iters, wait, contract, body, span: self.span_from(arm_lo) });
            if !self.is_word("and") {
                break;
            }
        }
        Ok(Stmt {
            kind: StmtKind::Par(Par { prefix, arms, keyword: kw, loop_form: false }),
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
                    format!("the par iterator `{}` needs a range, found {found}", name.name),
                    t.span,
                    "expected `= lo .. hi`",
                )
                .with_secondary(name.span, "iterator declared here")
                .with_help(format!("give it a range: par blk (int {} = lo .. hi)", name.name)),
            );
            return Err(Fail);
        }
        self.bump();
        let lo_e = self.parse_expr()?;
        self.expect_punct("..")?;
        let hi_e = self.parse_expr()?;
        Ok(Iter { ty, name, lo: lo_e, hi: hi_e, span: self.span_from(lo) })
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
                        kind: StmtKind::IncDec { target, inc: s == "++" },
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
        Ok(Stmt { kind: StmtKind::Expr(target), span: self.span_from(lo) })
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
            let init = if p.eat_punct("=") { Some(p.parse_expr()?) } else { None };
            Ok(Declarator { name, init, span: p.span_from(dlo) })
        })?;
        Ok(Some(Stmt { kind: StmtKind::Decl { ty, vars }, span: self.span_from(lo) }))
    }
}
