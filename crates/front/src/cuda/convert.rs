//! lang-c's syntax tree → ours: declarations, statements and expressions of C, with spans in
//! the user's file and the annotation comments attached where VerCors attaches them.
//!
//! What C has and PVL lacks is either lowered here to an equivalent PVL form (atomics to
//! read-modify-writes, `p + i` targets to `p[i]`, OpenCL work-item functions to CUDA's
//! built-ins) or kept as an opaque node, which `verify` and `run` refuse by name. Nothing is
//! dropped: a construct that has no node of its own is never silently skipped.

use super::builtin_name;
use super::prep::{AnnotComment, Prepared};
use super::types::{sized_dims, without_extents};
use crate::ast::*;
use crate::dialect::Dialect;
use crate::parser::{parse_fragment, FragItem};
use crate::span::Span;
use diag::Diagnostic;
use lang_c::ast as c;
use lang_c::span::Node;
use num_bigint::BigInt;
use std::collections::{HashMap, HashSet};

pub(super) struct Conv<'a> {
    /// Kernels in the verifier's flat form (`parse_cuda_for_verification`).
    pub flat: bool,
    pub src: &'a str,
    /// The file with C-only spelling inside annotations normalised (same length as `src`).
    pub norm: &'a str,
    pub prep: &'a Prepared,
    pub diags: Vec<Diagnostic>,
    pub used: Vec<bool>,
    /// The `#pragma` lines (`prep.pragmas`) a construct has taken into account.
    pub pragma_used: Vec<bool>,
    pub defines: HashMap<String, Expr>,
    /// Function-like macros whose bodies are expressions (`macros.rs`).
    pub fn_macros: HashMap<String, super::macros::FnMacro>,
    /// Offsets of the names of functions called with a launch configuration.
    pub launches: HashMap<usize, usize>,
    /// Names of every function defined or declared in the file.
    pub functions: HashSet<String>,
    /// The spans of the calls made by launches `k<<<g, b>>>(…)`.
    pub launched: HashSet<(u32, u32)>,
    /// Labels whose jumps were all read as structured code (`forward_goto`): no label needed.
    pub structured_labels: HashSet<String>,
    /// The labels some `goto` of the file names (a label nothing jumps to only names a
    /// statement, as VerCors 1's `send`/`recv` do).
    pub goto_targets: HashSet<String>,
    /// Inside a `#pragma omp parallel` region (`openmp.rs`).
    pub omp_region: bool,
    /// The `omp for` loops of regions, by the start of their converted statement.
    pub omp_fors: HashMap<usize, super::openmp::OmpFor>,
    /// Local vector variables and their numbers of lanes (`vectors.rs`).
    pub vectors: HashMap<String, usize>,
    /// Modifiers (`/*@ pure @*/`) an annotation gave the next function (`pure.rs`).
    pub next_modifiers: Vec<Modifier>,
    /// The element type of every pointer (or array) variable declared so far, by name: what
    /// `free(p)` frees (`host.rs`).
    pub pointee: HashMap<String, TypeKind>,
    /// Every name declared with a float type (variables, and functions that return one), so
    /// that a cast of such a value to an integer type is not read as the identity
    /// (`casts.rs`).
    pub floats: HashSet<String>,
    /// Converting the body of a kernel (`__global__`, `__kernel`): only there may the threads
    /// of a block meet at a barrier.
    pub in_kernel: bool,
}

pub(super) type R<T> = Result<T, ()>;

/// A C statement may become several of ours (a declaration list, an annotation's ghost code).
pub(super) struct Body {
    pub stmts: Vec<Stmt>,
}

impl<'a> Conv<'a> {
    pub fn sp(&self, s: lang_c::span::Span) -> Span {
        let off = self.prep.prelude_len();
        if s.is_none() || s.start < off {
            return Span::DUMMY;
        }
        Span::new(s.start - off, s.end - off)
    }

    pub fn unsupported(&mut self, what: &str, span: Span) {
        self.diags.push(
            Diagnostic::error("A0014", format!("{what} is not supported in C/CUDA input"))
                .with_primary(span, "not supported")
                .with_help(
                    "rewrite this part in the supported subset (see docs/cuda.md), or keep it out of the annotated file",
                ),
        );
    }

    /// An opaque statement standing for a construct the oracles refuse by name.
    pub fn opaque_stmt(&self, keyword: &str, span: Span) -> Stmt {
        Stmt {
            kind: StmtKind::Opaque(Opaque {
                keyword: keyword.to_string(),
                text: span.text(self.src).to_string(),
                span,
            }),
            span,
        }
    }

    pub(super) fn opaque_expr(&self, keyword: &str, span: Span) -> Expr {
        Expr::new(
            ExprKind::Opaque(Opaque {
                keyword: keyword.to_string(),
                text: span.text(self.src).to_string(),
                span,
            }),
            span,
        )
    }

    // -----------------------------------------------------------------------------------------
    // Annotations
    // -----------------------------------------------------------------------------------------

    /// The annotation comments in `[lo, hi)` not yet attached, parsed, in order.
    pub fn annotations_in(&mut self, lo: usize, hi: usize) -> Vec<FragItem> {
        let mut out = Vec::new();
        for k in 0..self.prep.annots.len() {
            let AnnotComment { span, body } = self.prep.annots[k].clone();
            if self.used[k] || span.start() < lo || span.end() > hi {
                continue;
            }
            out.extend(self.parse_annotation(k, body));
        }
        out
    }

    /// Annotation comment `k`, whose text to read is `body`: marked as attached, parsed, with
    /// `#define`d constants substituted.
    fn parse_annotation(&mut self, k: usize, body: Span) -> Vec<FragItem> {
        self.used[k] = true;
        let mut frag = parse_fragment(self.norm, body, Dialect::V2);
        self.diags.extend(frag.diagnostics);
        for item in &mut frag.items {
            self.substitute_defines(item);
        }
        frag.items
    }

    /// VerCors' ghost block after an atomic call, `atomicAdd(…) /*@ then { … } @*/;`, in
    /// `[lo, hi)`: its statements, which run inside the atomic (updating ghost state together
    /// with the cell). Empty when there is none.
    pub(super) fn then_block(&mut self, lo: usize, hi: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for k in 0..self.prep.annots.len() {
            let AnnotComment { span, body } = self.prep.annots[k].clone();
            if self.used[k] || span.start() < lo || span.end() > hi {
                continue;
            }
            let text = body.text(self.norm);
            let lead = text.len() - text.trim_start().len();
            let Some(rest) = text.trim_start().strip_prefix("then") else { continue };
            if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let inner = Span::new(body.start() + lead + "then".len(), body.end());
            for item in self.parse_annotation(k, inner) {
                match item {
                    FragItem::Stmt(s) => out.push(s),
                    FragItem::Prefix(p) => self.diags.push(
                        Diagnostic::error("A0001", "contract clauses in an atomic's `then` block")
                            .with_primary(p.span, "a `then` block holds ghost statements")
                            .with_help(
                                "write the ghost statements the atomic runs: `then { x = e; }`",
                            ),
                    ),
                }
            }
        }
        out
    }

    /// One node of [`Self::substitute_defines`]: a `#define`d name stands for its value.
    pub(super) fn define_value(&self, e: &mut Expr) -> bool {
        if let ExprKind::Name(n) = &e.kind {
            if let Some(v) = self.defines.get(&n.name) {
                *e = Expr { span: e.span, ..v.clone() };
                return true;
            }
        }
        false
    }

    /// The same in an expression read from the text (a launch configuration).
    fn substitute_defines_in(&self, e: &mut Expr) {
        crate::visit::map_expr(e, &mut |x| self.define_value(x));
    }

    /// Object-like `#define` constants used in an annotation stand for their value, as in code.
    pub fn substitute_defines(&self, item: &mut FragItem) {
        if self.defines.is_empty() && self.fn_macros.is_empty() {
            return;
        }
        let mut f = |e: &mut Expr| self.define_or_macro(e);
        match item {
            FragItem::Prefix(p) => {
                for c in &mut p.clauses {
                    crate::visit::map_clause(c, &mut f);
                }
            }
            FragItem::Stmt(s) => crate::visit::map_stmt(s, &mut f),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Types and declarators
    // -----------------------------------------------------------------------------------------

    // -----------------------------------------------------------------------------------------
    // Statements
    // -----------------------------------------------------------------------------------------

    /// A `{ … }` block with the annotation comments inside it attached.
    pub fn block(&mut self, items: &[Node<c::BlockItem>], span: Span) -> Block {
        let mut stmts = Vec::new();
        let mut pending: Option<Prefix> = None;
        let mut cursor = span.start();
        let mut k = 0;
        while k < items.len() {
            let item = &items[k];
            k += 1;
            // `goto L;` or `if (c) goto L;` to a label later in this block: the statements in
            // between run only when the jump is not taken.
            if let Some((cond, target)) = self.forward_goto(items, k - 1) {
                let ispan = self.sp(item.span);
                let frags = self.annotations_in(cursor, ispan.start());
                self.place(frags, &mut stmts, &mut pending);
                self.attach(pending.take(), &mut Vec::new());
                let skipped = &items[k..target];
                let lo = skipped.first().map_or(ispan.end(), |i| self.sp(i.span).start());
                let hi = items.get(target).map_or(span.end(), |i| self.sp(i.span).start());
                let inner = self.block(skipped, Span::new(lo, hi.max(lo)));
                let not = Expr::new(ExprKind::Unary(UnOp::Not, Box::new(cond)), ispan);
                let then = Box::new(Stmt {
                    kind: StmtKind::Block(inner),
                    span: Span::new(lo, hi.max(lo)),
                });
                stmts.push(Stmt { kind: StmtKind::If { cond: not, then, els: None }, span: ispan });
                cursor = hi.max(lo);
                k = target;
                continue;
            }
            let ispan = self.sp(item.span);
            // lang-c's span of an `if` without `else` reaches over what follows it up to the
            // next token (it looked for an `else`): an annotation there belongs to the next
            // statement, so the item ends where its last branch does.
            let ispan = match &item.node {
                c::BlockItem::Statement(st) => {
                    Span::new(ispan.start(), self.stmt_end(st).max(ispan.start()))
                }
                _ => ispan,
            };
            let frags = self.annotations_in(cursor, ispan.start());
            self.place(frags, &mut stmts, &mut pending);
            let mut body = Body { stmts: Vec::new() };
            match &item.node {
                c::BlockItem::Declaration(d) => self.local_decl(d, &mut body),
                c::BlockItem::Statement(s) => self.stmt(s, &mut body),
                c::BlockItem::StaticAssert(s) => {
                    let sp = self.sp(s.span);
                    body.stmts.push(self.opaque_stmt("_Static_assert", sp));
                }
            }
            self.attach(pending.take(), &mut body.stmts);
            stmts.extend(body.stmts);
            cursor = ispan.end();
        }
        let frags = self.annotations_in(cursor, span.end());
        self.place(frags, &mut stmts, &mut pending);
        self.attach(pending.take(), &mut Vec::new());
        Block { stmts, span }
    }

    /// Annotation items in statement position: statements go in place, clauses wait for the
    /// construct that follows.
    fn place(&mut self, frags: Vec<FragItem>, stmts: &mut Vec<Stmt>, pending: &mut Option<Prefix>) {
        for f in frags {
            match f {
                FragItem::Stmt(s) => {
                    self.attach(pending.take(), &mut Vec::new());
                    stmts.push(s);
                }
                FragItem::Prefix(p) => match pending {
                    Some(q) => {
                        q.span = q.span.to(p.span);
                        q.clauses.extend(p.clauses);
                        q.annotations.extend(p.annotations);
                    }
                    None => *pending = Some(p),
                },
            }
        }
    }

    /// Give clauses to the first statement of `stmts`: a loop's invariants, a barrier's contract.
    fn attach(&mut self, prefix: Option<Prefix>, stmts: &mut [Stmt]) {
        let Some(mut prefix) = prefix else { return };
        // The prefix and the statement start at the first annotation comment, so that an edit
        // replacing them replaces whole comments.
        let first = self
            .prep
            .annots
            .iter()
            .find(|a| a.body.contains(Span::new(prefix.span.start(), prefix.span.start())));
        let last = self
            .prep
            .annots
            .iter()
            .find(|a| a.body.contains(Span::new(prefix.span.end(), prefix.span.end())));
        if let (Some(f), Some(l)) = (first, last) {
            prefix.span = Span::new(f.span.start(), l.span.end());
        }
        let lo = prefix.span.start();
        if let Some(s) = stmts.first_mut() {
            if matches!(s.kind, StmtKind::For(_) | StmtKind::While(_) | StmtKind::Barrier(_)) {
                s.span = Span::new(lo, s.span.end());
            }
        }
        match stmts.first_mut().map(|s| &mut s.kind) {
            Some(StmtKind::For(l) | StmtKind::While(l)) => l.prefix = prefix,
            // The contract of an OpenMP parallel region, before its first loop (`openmp.rs`).
            Some(StmtKind::Par(p)) if self.omp_region && p.loop_form => {
                p.prefix.clauses = prefix.clauses;
                p.prefix.span = prefix.span;
            }
            Some(StmtKind::Barrier(b)) if prefix.annotations.is_empty() => {
                b.contract = prefix.clauses;
            }
            _ => self.diags.push(
                Diagnostic::error(
                    "A0001",
                    "contract clauses in an annotation must be followed by a loop or a barrier",
                )
                .with_primary(prefix.span, "these clauses have nothing to attach to")
                .with_help("put loop invariants right before `for`/`while`, and a barrier contract right before `__syncthreads();`"),
            ),
        }
    }

    fn local_decl(&mut self, d: &Node<c::Declaration>, out: &mut Body) {
        let span = self.sp(d.span);
        // lang-c's declaration starts after the blanked qualifier.
        let shared = self.prep.qualifiers.iter().any(|q| {
            matches!(q.word, "__shared__" | "__local")
                && (span.contains(q.span)
                    || (q.span.end() <= span.start()
                        && self
                            .src
                            .get(q.span.end()..span.start())
                            .is_some_and(|g| g.trim().is_empty())))
        });
        if shared {
            self.shared_decl(d, span, out);
            return;
        }
        // C11 6.7.4: a function specifier only declares functions. lang-c parses `int inline;`
        // (VerCors' `technical/keywords/disallowed-c-inline.c`, an Error there) without a word.
        if let Some(f) = d.node.specifiers.iter().find_map(|s| match &s.node {
            c::DeclarationSpecifier::Function(f) => Some(f),
            _ => None,
        }) {
            let at = self.sp(f.span);
            self.diags.push(
                Diagnostic::error("A0001", "a function specifier in a declaration of no function")
                    .with_primary(at, "`inline` and `_Noreturn` only declare functions")
                    .with_help("`inline` is a C keyword: give the variable another name"),
            );
            return;
        }
        if self.vector_decl(d, span, out) {
            return;
        }
        let base = self.base_type(&d.node.specifiers, span);
        let mut vars = Vec::new();
        let mut ty = base.clone();
        let mut after = Vec::new();
        for id in &d.node.declarators {
            let (name, t) = self.declarator(&base, &id.node.declarator);
            let Some(name) = name else { continue };
            // `int old = atomicAdd(p, v);`: declared, then assigned inside the atomic step.
            // (Alone in its declaration: a later declarator's initializer would run first.)
            let alone = d.node.declarators.len() == 1;
            if let (true, Some(Node { node: c::Initializer::Expression(e), .. })) =
                (alone, &id.node.initializer)
            {
                if let Some((f, call)) = super::atomics::atomic_call(e) {
                    if self.is_atomic(f, call) {
                        let target = Expr::new(ExprKind::Name(name.clone()), name.span);
                        if let Some(s) = self.atomic(f, call, self.sp(id.span), Some(target)) {
                            after.push(s);
                        }
                        ty = without_extents(&t);
                        vars.push(Declarator { name, init: None, span: self.sp(id.span) });
                        continue;
                    }
                }
            }
            let mut init = match &id.node.initializer {
                Some(Node { node: c::Initializer::Expression(e), .. })
                    if t.kind == TypeKind::Int =>
                {
                    self.expr(super::casts::initial_value(e)).ok()
                }
                Some(Node { node: c::Initializer::Expression(e), .. }) => self.expr(e).ok(),
                Some(Node { node: c::Initializer::List(items), span: at }) => {
                    let at = self.sp(*at);
                    self.array_initializer(&name, &t, items, at, &mut after)
                }
                None => None,
            };
            // `int a[N][M];` allocates: `int[][] a = new int[N][M];`.
            let (elem, dims) = sized_dims(&t);
            if init.is_none() && !dims.is_empty() {
                init = Some(Expr::new(ExprKind::NewArray(elem, dims), self.sp(id.span)));
            }
            ty = without_extents(&t);
            vars.push(Declarator { name, init, span: self.sp(id.span) });
        }
        if !vars.is_empty() {
            out.stmts.push(Stmt { kind: StmtKind::Decl { ty, vars }, span });
        }
        out.stmts.extend(after);
    }

    /// Where statement `s` ends: its span's end, or for an `if`, its last branch's.
    fn stmt_end(&self, s: &Node<c::Statement>) -> usize {
        match &s.node {
            c::Statement::If(i) => match &i.node.else_statement {
                Some(e) => self.stmt_end(e),
                None => self.stmt_end(&i.node.then_statement),
            },
            _ => self.sp(s.span).end(),
        }
    }

    pub fn stmt(&mut self, s: &Node<c::Statement>, out: &mut Body) {
        let span = self.sp(s.span);
        match &s.node {
            c::Statement::Compound(items) => {
                if let Some(region) = self.omp_region(items, span) {
                    out.stmts.push(region);
                    return;
                }
                let b = self.block(items, span);
                out.stmts.push(Stmt { kind: StmtKind::Block(b), span });
            }
            c::Statement::Expression(None) => {}
            c::Statement::Expression(Some(e)) => self.expr_stmt(e, span, out),
            c::Statement::If(i) => {
                let Ok(cond) = self.expr(&i.node.condition) else { return };
                let then = Box::new(self.single(&i.node.then_statement));
                let els = i.node.else_statement.as_ref().map(|e| Box::new(self.single(e)));
                // lang-c's span of an `if` without `else` reaches up to the next token, over
                // the annotations in between: the statement ends where its last branch does,
                // so that code inserted after it stays before those annotations.
                let span = Span::new(span.start(), self.stmt_end(s).max(span.start()));
                out.stmts.push(Stmt { kind: StmtKind::If { cond, then, els }, span });
            }
            c::Statement::While(w) => {
                let Ok(cond) = self.expr(&w.node.expression) else { return };
                let body = Box::new(self.single(&w.node.statement));
                let keyword = Span::new(span.start(), span.start() + 5);
                let l = Loop {
                    prefix: Prefix::default(),
                    init: vec![],
                    cond: Some(cond),
                    update: vec![],
                    body,
                    keyword,
                };
                out.stmts.push(Stmt { kind: StmtKind::While(l), span });
            }
            c::Statement::For(f) => {
                let mut init = Body { stmts: Vec::new() };
                match &f.node.initializer.node {
                    c::ForInitializer::Empty => {}
                    c::ForInitializer::Expression(e) => {
                        self.expr_stmt(e, self.sp(e.span), &mut init)
                    }
                    c::ForInitializer::Declaration(d) => {
                        self.local_decl(d, &mut init);
                        // lang-c's declaration ends after its `;`; ours ends before it, as in
                        // PVL, where the `;` belongs to the `for` header.
                        for st in &mut init.stmts {
                            if st.span.text(self.src).ends_with(';') {
                                st.span = Span::new(st.span.start(), st.span.end() - 1);
                            }
                        }
                    }
                    c::ForInitializer::StaticAssert(a) => {
                        let sp = self.sp(a.span);
                        self.unsupported("_Static_assert in a for header", sp);
                    }
                }
                let cond = match &f.node.condition {
                    Some(c) => self.expr(c).ok(),
                    None => None,
                };
                let mut update = Body { stmts: Vec::new() };
                if let Some(st) = &f.node.step {
                    self.expr_stmt(st, self.sp(st.span), &mut update);
                }
                let body = Box::new(self.single(&f.node.statement));
                let keyword = Span::new(span.start(), span.start() + 3);
                let l = Loop {
                    prefix: Prefix::default(),
                    init: init.stmts,
                    cond,
                    update: update.stmts,
                    body,
                    keyword,
                };
                // An annotation between the header and the body: invariants or an iteration
                // contract (`iteration.rs`).
                let body_start = self.sp(f.node.statement.span).start();
                let st = self.loop_with_header_annotations(l, span.start(), body_start, span);
                let st = self.omp_loop(st);
                out.stmts.push(st);
            }
            c::Statement::Return(e) => {
                let v = e.as_ref().and_then(|e| self.expr(e).ok());
                out.stmts.push(Stmt { kind: StmtKind::Return(v), span });
            }
            c::Statement::DoWhile(_) => out.stmts.push(self.opaque_stmt("do", span)),
            c::Statement::Break => out.stmts.push(self.opaque_stmt("break", span)),
            c::Statement::Continue => out.stmts.push(self.opaque_stmt("continue", span)),
            c::Statement::Switch(_) => out.stmts.push(self.opaque_stmt("switch", span)),
            // `L: stmt`: the statement (the label names it for VerCors 1's `send`/`recv`);
            // a `goto` to it is refused where it stands.
            c::Statement::Labeled(l) if matches!(l.node.label.node, c::Label::Identifier(_)) => {
                // Annotations between the label and its statement belong to the statement.
                let label_end = self.sp(l.node.label.span).end();
                let inner = self.sp(l.node.statement.span).start();
                let frags = self.annotations_in(label_end, inner.max(label_end));
                let mut pending = None;
                self.place(frags, &mut out.stmts, &mut pending);
                // A label another jump may target: `label L;`, which the verifier and the
                // interpreter check jumps against (a loop made of jumps is refused there).
                if let c::Label::Identifier(id) = &l.node.label.node {
                    let name = &id.node.name;
                    if self.goto_targets.contains(name) && !self.structured_labels.contains(name) {
                        let at = self.sp(l.node.label.span);
                        let text = format!("label {};", id.node.name);
                        let op = Opaque { keyword: "label".into(), text, span: at };
                        out.stmts.push(Stmt { kind: StmtKind::Opaque(op), span: at });
                    }
                }
                let mut body = Body { stmts: Vec::new() };
                self.stmt(&l.node.statement, &mut body);
                self.attach(pending, &mut body.stmts);
                out.stmts.extend(body.stmts);
            }
            c::Statement::Goto(_) | c::Statement::Labeled(_) => {
                out.stmts.push(self.opaque_stmt("goto", span))
            }
            c::Statement::Asm(_) => out.stmts.push(self.opaque_stmt("asm", span)),
        }
    }

    /// A statement that must be one node (a branch, a loop body).
    fn single(&mut self, s: &Node<c::Statement>) -> Stmt {
        let span = self.sp(s.span);
        let mut b = Body { stmts: Vec::new() };
        self.stmt(s, &mut b);
        match b.stmts.len() {
            1 => b.stmts.pop().unwrap_or_else(|| Stmt {
                kind: StmtKind::Block(Block { stmts: vec![], span }),
                span,
            }),
            _ => Stmt { kind: StmtKind::Block(Block { stmts: b.stmts, span }), span },
        }
    }

    fn expr_stmt(&mut self, e: &Node<c::Expression>, span: Span, out: &mut Body) {
        use c::BinaryOperator as B;
        match &e.node {
            c::Expression::BinaryOperator(b) => {
                if let Some(bit) = super::bits::BitOp::of_assign(&b.node.operator.node) {
                    let st = self.bit_assign(bit, &b.node, span);
                    out.stmts.push(st);
                    return;
                }
                let op = match b.node.operator.node {
                    B::Assign => None,
                    B::AssignPlus => Some(CompoundOp::Add),
                    B::AssignMinus => Some(CompoundOp::Sub),
                    B::AssignMultiply => Some(CompoundOp::Mul),
                    B::AssignDivide => Some(CompoundOp::Div),
                    B::AssignModulo => Some(CompoundOp::Mod),
                    _ => {
                        // An expression evaluated for nothing: keep it (its reads are checked).
                        if let Ok(x) = self.expr(e) {
                            out.stmts.push(Stmt { kind: StmtKind::Expr(x), span });
                        }
                        return;
                    }
                };
                if self.vector_assign(&b.node.lhs, &b.node.rhs, op, span, out) {
                    return;
                }
                if let (None, Some((name, call))) = (op, super::atomics::atomic_call(&b.node.rhs)) {
                    if self.is_atomic(name, call) {
                        let Ok(target) = self.expr(&b.node.lhs) else { return };
                        if let Some(s) = self.atomic(name, call, span, Some(target)) {
                            out.stmts.push(s);
                        }
                        return;
                    }
                }
                let (Ok(target), Ok(value)) = (self.expr(&b.node.lhs), self.expr(&b.node.rhs))
                else {
                    return;
                };
                let kind = match op {
                    None => StmtKind::Assign { target, value },
                    Some(op) => StmtKind::CompoundAssign { target, op, value },
                };
                out.stmts.push(Stmt { kind, span });
            }
            c::Expression::UnaryOperator(u) => {
                use c::UnaryOperator as U;
                let inc = match u.node.operator.node {
                    U::PostIncrement | U::PreIncrement => true,
                    U::PostDecrement | U::PreDecrement => false,
                    _ => {
                        if let Ok(x) = self.expr(e) {
                            out.stmts.push(Stmt { kind: StmtKind::Expr(x), span });
                        }
                        return;
                    }
                };
                let Ok(target) = self.expr(&u.node.operand) else { return };
                out.stmts.push(Stmt { kind: StmtKind::IncDec { target, inc }, span });
            }
            c::Expression::Call(call) => self.call_stmt(call, span, out),
            _ => {
                if let Ok(x) = self.expr(e) {
                    out.stmts.push(Stmt { kind: StmtKind::Expr(x), span });
                }
            }
        }
    }

    /// Calls in statement position: barriers, atomics, launches and ordinary calls.
    fn call_stmt(&mut self, call: &Node<c::CallExpression>, span: Span, out: &mut Body) {
        let name = match &call.node.callee.node {
            c::Expression::Identifier(id) => id.node.name.clone(),
            _ => String::new(),
        };
        if let Some(s) = self.host_memory(&name, &call.node.arguments, span) {
            out.stmts.push(s);
            return;
        }
        if let Some(s) = self.atomic(&name, call, span, None) {
            out.stmts.push(s);
            return;
        }
        match name.as_str() {
            "__syncthreads" | "barrier" if !self.functions.contains(&name) && !self.in_kernel => {
                // A barrier in a `__device__` helper would synchronise the threads of the
                // kernel that calls it; the kernel form has no such barrier.
                let at = self.sp(call.span);
                self.unsupported(
                    "a barrier outside a kernel's own body (in a `__device__` function)",
                    at,
                );
            }
            "__syncthreads" | "barrier" if !self.functions.contains(&name) => {
                let keyword = self.sp(call.node.callee.span);
                out.stmts.push(Stmt {
                    kind: StmtKind::Barrier(Barrier {
                        label: Ident::synth(super::BLOCK_LABEL),
                        tags: vec![],
                        contract: vec![],
                        contract_in_braces: true,
                        body: None,
                        keyword,
                    }),
                    span,
                });
            }
            // `assert(e)` of <assert.h>: a program that gets past it knows `e`, and one that
            // can fail it aborts; VerCors verifies it as an assertion.
            "assert" if !self.functions.contains(&name) && call.node.arguments.len() == 1 => {
                let Ok(e) = self.expr(&call.node.arguments[0]) else { return };
                // A call of the program's functions in it is code that runs (`assert(f(x) ==
                // 1)` calls `f`): `if (!(e)) assert false;`, whose condition is code.
                let calls = crate::visit::any_expr(
                    &e,
                    &mut |x| matches!(&x.kind, ExprKind::Call { name, .. } if self.functions.contains(&name.name)),
                );
                let kind = if calls {
                    let not = Expr::new(ExprKind::Unary(UnOp::Not, Box::new(e)), span);
                    let fail = Expr::new(ExprKind::Bool(false), span);
                    let then =
                        Stmt { kind: StmtKind::Spec { kind: SpecKind::Assert, expr: fail }, span };
                    StmtKind::If { cond: not, then: Box::new(then), els: None }
                } else {
                    StmtKind::Spec { kind: SpecKind::Assert, expr: e }
                };
                out.stmts.push(Stmt { kind, span });
            }
            n if n.starts_with("vstore") && !self.functions.contains(&name) => {
                self.vector_store(call, span, out)
            }
            n if super::stdio::OUTPUT.contains(&n) && !self.functions.contains(&name) => {
                self.output_call(call, span, out)
            }
            _ if self.undeclared(&name)
                && !self.launches.contains_key(&self.sp(call.node.callee.span).end()) =>
            {
                out.stmts.push(self.opaque_stmt(UNDECLARED_CALL, span));
            }
            _ => {
                let Ok(x) = self.call(call, self.sp(call.span)) else { return };
                out.stmts.push(Stmt { kind: StmtKind::Expr(x), span });
            }
        }
    }

    /// A called function the file neither declares nor gets a model for (an effect-free
    /// runtime function).
    fn undeclared(&self, name: &str) -> bool {
        !self.functions.contains(name) && !super::RUNTIME_WITHOUT_EFFECT.contains(&name)
    }

    // -----------------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------------

    pub fn expr(&mut self, e: &Node<c::Expression>) -> R<Expr> {
        use c::Expression as E;
        let span = self.sp(e.span);
        if let Some(lane) = self.lane_access(e) {
            return lane;
        }
        if self.is_vector(e) {
            return Ok(self.opaque_expr("a vector value where a scalar is expected", span));
        }
        if let Some(a) = self.allocation(e, span) {
            return a;
        }
        let kind = match &e.node {
            E::Identifier(id) => {
                let n = id.node.name.as_str();
                if let Some(v) = self.defines.get(n) {
                    return Ok(Expr { span, ..v.clone() });
                }
                match n {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    "NULL" => ExprKind::Null,
                    _ => ExprKind::Name(Ident::new(n, span)),
                }
            }
            E::Constant(k) => match &k.node {
                c::Constant::Integer(i) => {
                    let radix = match i.base {
                        c::IntegerBase::Decimal => 10,
                        c::IntegerBase::Octal => 8,
                        c::IntegerBase::Hexadecimal => 16,
                        c::IntegerBase::Binary => 2,
                    };
                    match BigInt::parse_bytes(i.number.as_bytes(), radix) {
                        Some(v) => ExprKind::Int(v),
                        None => return Ok(self.opaque_expr("integer literal", span)),
                    }
                }
                c::Constant::Float(_) => {
                    return Ok(self.opaque_expr("floating-point literal", span))
                }
                c::Constant::Character(_) => return Ok(self.opaque_expr("character literal", span)),
            },
            E::StringLiteral(_) => return Ok(self.opaque_expr("string literal", span)),
            E::Member(m) => {
                if let E::Identifier(base) = &m.node.expression.node {
                    if let Some(b) = builtin_name(&base.node.name, &m.node.identifier.node.name) {
                        return Ok(Expr::new(ExprKind::Name(Ident::new(b, span)), span));
                    }
                }
                let recv = self.expr(&m.node.expression)?;
                let f = Ident::new(&m.node.identifier.node.name, self.sp(m.node.identifier.span));
                ExprKind::Field(Box::new(recv), f)
            }
            E::Call(call) => return self.call(call, span),
            E::UnaryOperator(u) => {
                use c::UnaryOperator as U;
                let x = self.expr(&u.node.operand)?;
                match u.node.operator.node {
                    U::Minus => ExprKind::Unary(UnOp::Neg, Box::new(x)),
                    U::Negate => ExprKind::Unary(UnOp::Not, Box::new(x)),
                    U::Plus => return Ok(x),
                    U::Indirection => match x.kind {
                        ExprKind::Binary(BinOp::Add, a, i) => ExprKind::Index(a, i),
                        _ => ExprKind::Index(Box::new(x), Box::new(Expr::int(0))),
                    },
                    _ => return Ok(self.opaque_expr("this operator", span)),
                }
            }
            E::Cast(cst) => return self.cast(cst, span),
            E::BinaryOperator(b) => {
                use c::BinaryOperator as B;
                let l = self.expr(&b.node.lhs)?;
                let r = self.expr(&b.node.rhs)?;
                if let Some(bit) = super::bits::BitOp::of(&b.node.operator.node) {
                    return Ok(self.bit_expr(bit, l, r, span));
                }
                let op = match b.node.operator.node {
                    B::Index => {
                        return Ok(Expr::new(ExprKind::Index(Box::new(l), Box::new(r)), span))
                    }
                    B::Multiply => BinOp::Mul,
                    B::Divide => BinOp::Div,
                    B::Modulo => BinOp::Mod,
                    B::Plus => BinOp::Add,
                    B::Minus => BinOp::Sub,
                    B::Less => BinOp::Lt,
                    B::Greater => BinOp::Gt,
                    B::LessOrEqual => BinOp::Le,
                    B::GreaterOrEqual => BinOp::Ge,
                    B::Equals => BinOp::Eq,
                    B::NotEquals => BinOp::Ne,
                    B::LogicalAnd => BinOp::And,
                    B::LogicalOr => BinOp::Or,
                    _ => return Ok(self.opaque_expr("this operator", span)),
                };
                ExprKind::Binary(op, Box::new(l), Box::new(r))
            }
            E::Conditional(k) => ExprKind::Cond(
                Box::new(self.expr(&k.node.condition)?),
                Box::new(self.expr(&k.node.then_expression)?),
                Box::new(self.expr(&k.node.else_expression)?),
            ),
            _ => return Ok(self.opaque_expr("this expression", span)),
        };
        Ok(Expr::new(kind, span))
    }

    fn call(&mut self, call: &Node<c::CallExpression>, span: Span) -> R<Expr> {
        let c::Expression::Identifier(id) = &call.node.callee.node else {
            return Ok(self.opaque_expr("a call through a pointer", span));
        };
        let name = id.node.name.as_str();
        // OpenCL work-item functions with dimension 0 are CUDA's built-ins.
        if !self.functions.contains(name) && call.node.arguments.len() == 1 {
            let dim = match &call.node.arguments[0].node {
                c::Expression::Constant(k) => match &k.node {
                    c::Constant::Integer(i) => i.number.parse::<usize>().ok(),
                    _ => None,
                },
                _ => None,
            };
            if let Some(e) = dim.and_then(|d| super::lower::work_item(name, d, span)) {
                return Ok(e);
            }
        }
        let callee_span = self.sp(id.span);
        let launch = self.launches.get(&callee_span.end()).copied();
        // A function the file does not declare has no contract: what it does to memory is
        // unknown, and reading the call as a no-op would be unsound (VerCors 1.4 passes
        // gpgpu/ASSSPv3.cu this way). The oracles refuse it by name.
        if launch.is_none() && !self.functions.contains(name) {
            let mut args = Vec::new();
            for a in &call.node.arguments {
                args.push(self.expr(a)?);
            }
            if let Some(e) = self.expand_call(name, &args, span) {
                return Ok(e);
            }
        }
        if launch.is_none() && self.undeclared(name) {
            return Ok(self.opaque_expr(&format!("a call to the undeclared `{name}`"), span));
        }
        let mut args = Vec::new();
        for a in &call.node.arguments {
            args.push(self.expr(a)?);
        }
        if let Some(k) = launch {
            let launch = self.prep.launches[k].clone();
            if launch.args.len() > 2 {
                self.unsupported(
                    "a launch with shared-memory size or stream arguments",
                    launch.span,
                );
            }
            self.launched.insert((span.lo, span.hi));
            for a in launch.args.iter().take(2) {
                // A `dim3` variable declared before the launch stands for its sizes.
                let text = a.text(self.src);
                let decl = self
                    .prep
                    .dim3s
                    .iter()
                    .rev()
                    .find(|d| d.name == text && d.span.end() <= launch.span.start());
                let spans = decl.map_or_else(|| vec![*a], |d| d.args.clone());
                let mut parts = Vec::new();
                for sp in &spans {
                    match crate::parser::parse_expr_at(self.src, *sp, Dialect::V2) {
                        Ok(mut e) => {
                            self.substitute_defines_in(&mut e);
                            parts.push(e)
                        }
                        Err(_) => {
                            self.unsupported("this launch configuration", *sp);
                            return Err(());
                        }
                    }
                }
                if decl.is_some() {
                    args.push(Expr::new(
                        ExprKind::Call {
                            recv: None,
                            name: Ident::new("dim3", *a),
                            args: parts,
                            ghost: Box::default(),
                            null_safe: false,
                        },
                        *a,
                    ));
                } else {
                    args.extend(parts);
                }
            }
        }
        Ok(Expr::new(
            ExprKind::Call {
                recv: None,
                name: Ident::new(name, callee_span),
                args,
                ghost: Box::default(),
                null_safe: false,
            },
            span,
        ))
    }
}
