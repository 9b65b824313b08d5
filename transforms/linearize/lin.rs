//! Text rewriting of one method for all of its matrices at once.

use super::model::*;
use edit::{removal_span, EditSet};
use front::ast::*;
use front::exprtext::{children, is_atomic, paren, splice};
use front::span::Span;
use front::visit::{stmt_exprs, walk_stmts};
use std::collections::{BTreeMap, BTreeSet};

/// Text rewriting of one method, for all of its matrices at once (so nested accesses such as
/// `g[h[i][j]][k]` come out right).
pub(super) struct Lin<'a> {
    pub(super) src: &'a str,
    pub(super) mats: BTreeMap<String, Info>,
    pub(super) index_fn: Option<String>,
    /// Spans of `new T[x][y]` initialisers of local matrices.
    pub(super) new_inits: BTreeSet<(usize, usize)>,
    /// Call arguments that stay as they are (the callee's parameter is linearized too).
    pub(super) allowed_args: BTreeSet<(usize, usize)>,
    pub(super) bad: Vec<Span>,
    pub(super) calls: Vec<CallUse>,
    /// Start of the statement whose expressions are being visited.
    pub(super) point: Option<usize>,
    pub(super) matrix_converted: BTreeSet<String>,
    /// Matrices whose `g.length == X` was rewritten inside a `context_everywhere`.
    pub(super) length_everywhere: BTreeSet<String>,
    pub(super) in_everywhere: bool,
    pub(super) removed: Vec<Span>,
}

impl<'a> Lin<'a> {
    pub(super) fn new(
        src: &'a str,
        mats: BTreeMap<String, Info>,
        index_fn: Option<String>,
    ) -> Lin<'a> {
        Lin {
            src,
            mats,
            index_fn,
            new_inits: BTreeSet::new(),
            allowed_args: BTreeSet::new(),
            bad: Vec::new(),
            calls: Vec::new(),
            point: None,
            matrix_converted: BTreeSet::new(),
            length_everywhere: BTreeSet::new(),
            in_everywhere: false,
            removed: Vec::new(),
        }
    }

    /// Text of `e` with every matrix access rewritten.
    pub(super) fn text(&mut self, e: &Expr) -> String {
        let mut reps = Vec::new();
        self.collect(e, &mut reps);
        splice(self.src, e.span, reps)
    }

    pub(super) fn mat(&self, e: &Expr) -> Option<(String, Info)> {
        let n = e.as_name()?;
        self.mats.get(n).map(|i| (n.to_string(), i.clone()))
    }

    /// The linearized index of `g[r][c]` (texts of `r` and `c` already rewritten).
    pub(super) fn index(&self, info: &Info, r: &Expr, c: &Expr, rt: String, ct: String) -> String {
        use ExprKind as K;
        let src = self.src;
        let (major, minor, stride) =
            if info.row { (rt, ct, info.e2.clone()) } else { (ct, rt, info.e1.clone()) };
        let (maj_e, min_e) = if info.row { (r, c) } else { (c, r) };
        match &self.index_fn {
            Some(f) => format!("{f}({stride}, {major}, {minor})"),
            None => {
                let maj =
                    if is_atomic(src, maj_e) || matches!(maj_e.kind, K::Binary(BinOp::Mul, ..)) {
                        major
                    } else {
                        paren(&major)
                    };
                let min = if is_atomic(src, min_e)
                    || matches!(min_e.kind, K::Binary(op, ..) if op.is_int_arith())
                {
                    minor
                } else {
                    paren(&minor)
                };
                format!("{} * {maj} + {min}", paren(&stride))
            }
        }
    }

    pub(super) fn collect(&mut self, e: &Expr, out: &mut Vec<(Span, String)>) {
        use ExprKind as K;
        let src = self.src;
        let keep = |e: &Expr| (e.span, e.span.text(src).to_string());
        match &e.kind {
            K::Index(inner, c) => {
                if let K::Index(a, r) = &inner.kind {
                    if let Some((g, info)) = self.mat(a) {
                        let rt = self.text(r);
                        let ct = self.text(c);
                        let idx = self.index(&info, r, c, rt, ct);
                        out.push((e.span, format!("{g}[{idx}]")));
                        return;
                    }
                }
            }
            K::Field(x, f) if f.name == "length" => {
                if let Some((_, info)) = self.mat(x) {
                    out.push(if info.linear { keep(e) } else { (e.span, info.e1.clone()) });
                    return;
                }
                if let K::Index(a, _) = &x.kind {
                    if let Some((_, info)) = self.mat(a) {
                        out.push((e.span, info.e2.clone()));
                        return;
                    }
                }
            }
            K::Binary(BinOp::Eq | BinOp::Ne, l, r)
                if (self.mat(l).is_some() && matches!(r.kind, K::Null))
                    || (self.mat(r).is_some() && matches!(l.kind, K::Null)) =>
            {
                out.push(keep(e));
                return;
            }
            // 2-D convention: `g.length == X` states the new length as `g.length == X * E2`.
            K::Binary(BinOp::Eq, l, r) => {
                let len_of = |x: &Expr| match &x.kind {
                    K::Field(y, f) if f.name == "length" => self.mat(y).filter(|(_, i)| !i.linear),
                    _ => None,
                };
                let hit = match (len_of(l), len_of(r)) {
                    (Some(m), _) => Some((m, &**l, &**r, true)),
                    (None, Some(m)) => Some((m, &**r, &**l, false)),
                    _ => None,
                };
                if let Some(((g, info), len, other, left)) = hit {
                    let o = self.text(other);
                    let scaled = format!("{} * {}", paren(&o), paren(&info.e2));
                    let lt = len.span.text(src);
                    out.push((
                        e.span,
                        if left {
                            format!("{lt} == {scaled}")
                        } else {
                            format!("{scaled} == {lt}")
                        },
                    ));
                    if self.in_everywhere {
                        self.length_everywhere.insert(g);
                    }
                    return;
                }
            }
            K::Builtin(Builtin::Matrix, args) if args.len() == 3 => {
                if let Some((g, _)) = self.mat(&args[0]) {
                    let x = self.text(&args[1]);
                    let y = self.text(&args[2]);
                    self.matrix_converted.insert(g.clone());
                    out.push((e.span, format!("\\array({g}, {} * {})", paren(&x), paren(&y))));
                    return;
                }
            }
            // A row-level operand of a conjunction goes with its connective.
            K::Binary(BinOp::And | BinOp::Star, l, r) => {
                let (lr, rr) = (self.is_row_level(l), self.is_row_level(r));
                if lr != rr {
                    let (kept, gone) = if lr { (r, l) } else { (l, r) };
                    let t = self.text(kept);
                    self.removed.push(gone.span);
                    out.push((e.span, t));
                    return;
                }
            }
            K::NewArray(_, args)
                if self.new_inits.contains(&key_span(e.span)) && args.len() == 2 =>
            {
                let text = e.span.text(src);
                let base = text.split('[').next().unwrap_or("new int").trim_end();
                let x = self.text(&args[0]);
                let y = self.text(&args[1]);
                out.push((e.span, format!("{base}[{} * {}]", paren(&x), paren(&y))));
                return;
            }
            K::Call { recv, name, args, .. } => {
                let mut hit = false;
                for (i, a) in args.iter().enumerate() {
                    if self.mat(a).is_some() {
                        hit = true;
                        self.calls.push(CallUse {
                            call: e.span,
                            arg: a.span,
                            recv: recv.as_deref().cloned(),
                            name: name.name.clone(),
                            index: i,
                            args: args.clone(),
                            point: self.point,
                        });
                        if !self.allowed_args.contains(&key_span(a.span)) {
                            self.bad.push(a.span);
                        }
                    }
                }
                if hit {
                    if let Some(r) = recv {
                        self.collect(r, out);
                    }
                    for a in args {
                        if self.mat(a).is_none() {
                            self.collect(a, out);
                        }
                    }
                    return;
                }
            }
            K::Name(id) if self.mats.contains_key(&id.name) => {
                self.bad.push(e.span);
                return;
            }
            K::Quant { bindings, .. }
                if bindings.iter().any(|b| self.mats.contains_key(&b.name.name)) =>
            {
                out.push(keep(e));
                return;
            }
            _ => {}
        }
        for (c, _) in children(e) {
            self.collect(c, out);
        }
    }

    /// Row-level facts (row permissions, row null checks, row lengths, row distinctness, and
    /// quantified or guarded forms of these): meaningless once the rows are gone.
    pub(super) fn is_row_level(&self, e: &Expr) -> bool {
        use ExprKind as K;
        let row = |x: &Expr| matches!(&x.kind, K::Index(a, _) if self.mat(a).is_some());
        match &e.kind {
            K::Quant { body, .. } => self.is_row_level(body),
            K::Binary(BinOp::And | BinOp::Star, l, r) => {
                self.is_row_level(l) && self.is_row_level(r)
            }
            K::Binary(BinOp::Implies, _, r) => self.is_row_level(r),
            K::Builtin(Builtin::Perm | Builtin::Value, args) => args.first().is_some_and(row),
            K::Binary(BinOp::Ne | BinOp::Eq, l, r) => {
                let rl =
                    |x: &Expr| matches!(&x.kind, K::Field(y, f) if f.name == "length" && row(y));
                (row(l) && matches!(r.kind, K::Null))
                    || (row(r) && matches!(l.kind, K::Null))
                    || (row(l) && row(r))
                    || rl(l)
                    || rl(r)
            }
            _ => false,
        }
    }

    /// Rewrite a clause list: row-level conjuncts are deleted with their connective (the whole
    /// clause when nothing remains), the others rewritten.
    pub(super) fn clauses(&mut self, clauses: &[Clause], edits: &mut EditSet) {
        for clause in clauses {
            let Some(e) = clause.expr() else { continue };
            self.in_everywhere = clause.kind == ClauseKind::ContextEverywhere;
            self.conjunction(e, clause.span, edits);
            self.in_everywhere = false;
        }
    }

    /// Rewrite the conjunction `e` (the expression of the statement or clause `whole`).
    pub(super) fn conjunction(&mut self, e: &Expr, whole: Span, edits: &mut EditSet) {
        let src = self.src;
        let cjs = e.conjuncts();
        let drop: Vec<bool> = cjs.iter().map(|c| self.is_row_level(c)).collect();
        if drop.iter().all(|d| *d) {
            edits.replace(removal_span(src, whole), "");
            self.removed.push(whole);
            return;
        }
        let last_kept = drop.iter().rposition(|d| !*d).unwrap_or(0);
        let mut trailing_done = false;
        for (i, c) in cjs.iter().enumerate() {
            if !drop[i] {
                let mut reps = Vec::new();
                self.collect(c, &mut reps);
                for (s, t) in reps {
                    edits.replace(s, t);
                }
            } else if i < last_kept {
                edits.replace(Span::new(c.span.start(), cjs[i + 1].span.start()), "");
                self.removed.push(c.span);
            } else if !trailing_done {
                edits.replace(
                    Span::new(cjs[last_kept].span.end(), cjs[cjs.len() - 1].span.end()),
                    "",
                );
                trailing_done = true;
                self.removed.push(c.span);
            } else {
                self.removed.push(c.span);
            }
        }
    }

    /// Every expression of a method: its contract, statements and nested contracts.
    pub(super) fn method(&mut self, m: &Method, edits: &mut EditSet) {
        self.point = None;
        self.clauses(&m.prefix.clauses, edits);
        let MethodBody::Block(b) = &m.body else {
            if let MethodBody::Expr(e) = &m.body {
                let mut reps = Vec::new();
                self.collect(e, &mut reps);
                for (s, t) in reps {
                    edits.replace(s, t);
                }
            }
            return;
        };
        for s in &b.stmts {
            walk_stmts(s, &mut |st| self.stmt(st, edits));
        }
    }

    pub(super) fn stmt(&mut self, st: &Stmt, edits: &mut EditSet) {
        self.point = Some(st.span.start());
        let mut reps = Vec::new();
        match &st.kind {
            StmtKind::While(l) | StmtKind::For(l) => {
                self.clauses(&l.prefix.clauses, edits);
                if let Some(c) = &l.cond {
                    self.collect(c, &mut reps);
                }
            }
            StmtKind::RangedFor { prefix, lo, hi, .. } => {
                self.clauses(&prefix.clauses, edits);
                self.collect(lo, &mut reps);
                self.collect(hi, &mut reps);
            }
            StmtKind::Par(p) => {
                self.clauses(&p.prefix.clauses, edits);
                for a in &p.arms {
                    for it in &a.iters {
                        self.collect(&it.lo, &mut reps);
                        self.collect(&it.hi, &mut reps);
                    }
                    self.clauses(&a.contract, edits);
                }
            }
            StmtKind::Barrier(b) => self.clauses(&b.contract, edits),
            StmtKind::Spec {
                kind: SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale | SpecKind::Exhale,
                expr,
            } => self.conjunction(expr, st.span, edits),
            _ => stmt_exprs(st, &mut |e| self.collect(e, &mut reps)),
        }
        for (s, t) in reps {
            edits.replace(s, t);
        }
    }
}
