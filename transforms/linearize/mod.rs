//! Matrix linearization (optimizations.md §5; paper §5, "matrix linearization"): a 2-D array
//! `g` with `E1` rows and `E2` columns becomes a 1-D array; `g[r][c]` becomes `g[E2 * r + c]`
//! (row-major) or `g[E1 * c + r]` (column-major) in the code and in every annotation of the
//! method.
//!
//! Two length conventions are accepted, decided by Z3 from the program's own facts:
//! * the *linear* one used by Alpinist's examples and the corpus: `g.length == E1 * E2` is already
//!   a fact of the 2-D program (VerCors 1.4 encodes `int[][]` with value rows); `g.length` then
//!   keeps its text, because after the rewrite it describes the 1-D array;
//! * the *2-D* one of the design: `g.length == E1` and every row has length `E2` (a
//!   `\matrix(g, E1, E2)` fact, or row facts); `g.length == X` becomes `g.length == X * E2`, any
//!   other `g.length` becomes `E1`, `g[r].length` becomes `E2`.
//!
//! **Across methods.** A matrix that is passed to, or received from, another method of the file
//! is linearized there too, with the same layout: the plan follows every call edge (a caller
//! passing the matrix parameter, a callee receiving the matrix), derives each other matrix's
//! extents by substituting the call's arguments (or takes them from that matrix's own pending
//! `matrix_lin`, which is then consumed), and proves with Z3 at every call site that caller and
//! callee agree on the extents. Every method involved is rewritten in the same step. A call that
//! passes something that cannot be linearized consistently is refused (A404, the call labelled).

use super::{Applied, Ctx, Outcome, Params};
use crate::analyze::exprtext::{children, is_atomic, paren, print_simple, splice};
use crate::analyze::facts::{facts_at, Point};
use crate::analyze::scope::assigned_vars;
use crate::analyze::sites::{find_method, Site, SiteKind};
use crate::check::{prove, Answer};
use crate::diag::Diagnostic;
use crate::edit::{indent_at, line_start, removal_span, EditSet};
use crate::front::ast::*;
use crate::front::span::Span;
use crate::front::visit::{stmt_exprs, walk_expr, walk_stmts};
use std::collections::{BTreeMap, BTreeSet};

/// A matrix variable of one method.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    class: Option<String>,
    method: String,
    var: String,
}

impl Key {
    fn describe(&self) -> String {
        format!("`{}` of `{}`", self.var, self.method)
    }
}

/// One matrix to linearize.
#[derive(Clone, Debug)]
struct Target {
    key: Key,
    row: bool,
    dims: (Expr, Expr),
    /// The call that brought this matrix into the plan (None: the requested one).
    via: Option<Span>,
    /// Its own pending `matrix_lin`, consumed by this step.
    consumed: Option<Span>,
    /// Filled by the checks.
    linear: bool,
}

/// A call that passes a linearized matrix from `caller` to `callee`.
#[derive(Clone, Debug)]
struct Edge {
    caller: Key,
    callee: Key,
    call: Span,
    /// The argument expression that is the caller's matrix.
    arg: Span,
    args: Vec<Expr>,
    callee_params: Vec<String>,
    /// Start of the innermost statement holding the call (None: a contract clause).
    point: Option<usize>,
}

/// A use of a matrix as a call argument, found by the scan.
#[derive(Clone, Debug)]
struct CallUse {
    call: Span,
    arg: Span,
    recv: Option<Expr>,
    name: String,
    index: usize,
    args: Vec<Expr>,
    point: Option<usize>,
}

/// What a method's rewrite needs to know about one of its matrices.
#[derive(Clone, Debug)]
struct Info {
    row: bool,
    e1: String,
    e2: String,
    linear: bool,
}

/// Text rewriting of one method, for all of its matrices at once (so nested accesses such as
/// `g[h[i][j]][k]` come out right).
struct Lin<'a> {
    src: &'a str,
    mats: BTreeMap<String, Info>,
    index_fn: Option<String>,
    /// Spans of `new T[x][y]` initialisers of local matrices.
    new_inits: BTreeSet<(usize, usize)>,
    /// Call arguments that stay as they are (the callee's parameter is linearized too).
    allowed_args: BTreeSet<(usize, usize)>,
    bad: Vec<Span>,
    calls: Vec<CallUse>,
    /// Start of the statement whose expressions are being visited.
    point: Option<usize>,
    matrix_converted: BTreeSet<String>,
    /// Matrices whose `g.length == X` was rewritten inside a `context_everywhere`.
    length_everywhere: BTreeSet<String>,
    in_everywhere: bool,
    removed: Vec<Span>,
}

fn key_span(s: Span) -> (usize, usize) {
    (s.start(), s.end())
}

impl<'a> Lin<'a> {
    fn new(src: &'a str, mats: BTreeMap<String, Info>, index_fn: Option<String>) -> Lin<'a> {
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
    fn text(&mut self, e: &Expr) -> String {
        let mut reps = Vec::new();
        self.collect(e, &mut reps);
        splice(self.src, e.span, reps)
    }

    fn mat(&self, e: &Expr) -> Option<(String, Info)> {
        let n = e.as_name()?;
        self.mats.get(n).map(|i| (n.to_string(), i.clone()))
    }

    /// The linearized index of `g[r][c]` (texts of `r` and `c` already rewritten).
    fn index(&self, info: &Info, r: &Expr, c: &Expr, rt: String, ct: String) -> String {
        use ExprKind as K;
        let src = self.src;
        let (major, minor, stride) = if info.row {
            (rt, ct, info.e2.clone())
        } else {
            (ct, rt, info.e1.clone())
        };
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
                    || matches!(
                        min_e.kind,
                        K::Binary(
                            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod,
                            ..
                        )
                    ) {
                    minor
                } else {
                    paren(&minor)
                };
                format!("{} * {maj} + {min}", paren(&stride))
            }
        }
    }

    fn collect(&mut self, e: &Expr, out: &mut Vec<(Span, String)>) {
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
                    out.push(if info.linear {
                        keep(e)
                    } else {
                        (e.span, info.e1.clone())
                    });
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
                    out.push((
                        e.span,
                        format!("\\array({g}, {} * {})", paren(&x), paren(&y)),
                    ));
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
            K::Call {
                recv, name, args, ..
            } => {
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
                if bindings
                    .iter()
                    .any(|b| self.mats.contains_key(&b.name.name)) =>
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
    fn is_row_level(&self, e: &Expr) -> bool {
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
    fn clauses(&mut self, clauses: &[Clause], edits: &mut EditSet) {
        for clause in clauses {
            let Some(e) = clause.expr() else { continue };
            self.in_everywhere = clause.kind == ClauseKind::ContextEverywhere;
            self.conjunction(e, clause.span, edits);
            self.in_everywhere = false;
        }
    }

    /// Rewrite the conjunction `e` (the expression of the statement or clause `whole`).
    fn conjunction(&mut self, e: &Expr, whole: Span, edits: &mut EditSet) {
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
    fn method(&mut self, m: &Method, edits: &mut EditSet) {
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

    fn stmt(&mut self, st: &Stmt, edits: &mut EditSet) {
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

/// Every call in `m` (contract and body) with the start of the innermost statement holding it.
fn calls_in<'m>(m: &'m Method, f: &mut dyn FnMut(&'m Expr, Option<usize>)) {
    let mut visit = |e: &'m Expr, point: Option<usize>| {
        walk_expr(e, &mut |x| {
            if matches!(x.kind, ExprKind::Call { .. }) {
                f(x, point);
            }
        })
    };
    for c in &m.prefix.clauses {
        if let Some(e) = c.expr() {
            visit(e, None);
        }
    }
    match &m.body {
        MethodBody::Block(b) => {
            for s in &b.stmts {
                walk_stmts(s, &mut |st| {
                    let p = Some(st.span.start());
                    stmt_exprs(st, &mut |e| visit(e, p));
                });
            }
        }
        MethodBody::Expr(e) => visit(e, None),
        MethodBody::Abstract => {}
    }
}

/// Every method of the program with its class.
fn all_methods(p: &Program) -> Vec<(Option<&Class>, &Method)> {
    let mut out = Vec::new();
    for item in &p.items {
        match item {
            Item::Class(c) => {
                for m in &c.members {
                    if let Member::Method(m) = m {
                        out.push((Some(c), m));
                    }
                }
            }
            Item::Method(m) => out.push((None, m)),
            _ => {}
        }
    }
    out
}

/// The method a call `recv.name(…)` made from class `from` resolves to.
fn resolve<'p>(
    p: &'p Program,
    from: Option<&str>,
    recv: Option<&Expr>,
    name: &str,
) -> Option<(Option<&'p Class>, &'p Method)> {
    match recv.map(|r| &r.kind) {
        None | Some(ExprKind::This) => {
            find_method(p, from, name).or_else(|| find_method(p, None, name))
        }
        Some(ExprKind::Name(c)) => find_method(p, Some(&c.name), name),
        _ => None,
    }
}

/// `e` with names replaced; None when `e` has a form this does not handle.
fn subst(e: &Expr, map: &BTreeMap<String, Expr>) -> Option<Expr> {
    use ExprKind as K;
    let b = |x: &Expr| subst(x, map).map(Box::new);
    let kind = match &e.kind {
        K::Int(_) | K::Bool(_) | K::Null | K::This => e.kind.clone(),
        K::Name(id) => return Some(map.get(&id.name).cloned().unwrap_or_else(|| e.clone())),
        K::Unary(o, x) => K::Unary(*o, b(x)?),
        K::Binary(o, l, r) => K::Binary(*o, b(l)?, b(r)?),
        K::Cond(a, x, y) => K::Cond(b(a)?, b(x)?, b(y)?),
        K::Field(x, f) => K::Field(b(x)?, f.clone()),
        K::Index(x, i) => K::Index(b(x)?, b(i)?),
        K::Call {
            recv,
            name,
            args,
            ghost,
            null_safe,
        } if ghost.is_empty() => K::Call {
            recv: match recv {
                Some(r) => Some(b(r)?),
                None => None,
            },
            name: name.clone(),
            args: args.iter().map(|a| subst(a, map)).collect::<Option<_>>()?,
            ghost: ghost.clone(),
            null_safe: *null_safe,
        },
        _ => return None,
    };
    Some(Expr::synth(kind))
}

/// Names mentioned in `e`.
fn names_of(e: &Expr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_expr(e, &mut |x| {
        if let ExprKind::Name(id) = &x.kind {
            out.insert(id.name.clone());
        }
    });
    out
}

/// The declaration of `var` in `m`: a parameter (its index and type) or a local.
enum Decl<'m> {
    Param(usize, &'m Type),
    Local(&'m Type, Option<&'m Expr>, usize),
}

fn decl_of<'m>(m: &'m Method, var: &str) -> Option<Decl<'m>> {
    if let Some(i) = m.params.iter().position(|p| p.name.name == var) {
        return Some(Decl::Param(i, &m.params[i].ty));
    }
    let mut local = None;
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if let StmtKind::Decl { ty, vars } = &st.kind {
                    if let Some(d) = vars.iter().find(|d| d.name.name == var) {
                        if local.is_none() {
                            local = Some(Decl::Local(ty, d.init.as_ref(), st.span.start()));
                        }
                    }
                }
            });
        }
    }
    local
}

fn method_body_stmt(m: &Method) -> Stmt {
    Stmt {
        kind: StmtKind::Block(match &m.body {
            MethodBody::Block(b) => b.clone(),
            _ => Block {
                stmts: vec![],
                span: Span::DUMMY,
            },
        }),
        span: Span::DUMMY,
    }
}

fn entry_point(m: &Method) -> usize {
    match &m.body {
        MethodBody::Block(b) => b.stmts.first().map_or(usize::MAX, |s| s.span.start()),
        _ => usize::MAX,
    }
}

/// A pending `matrix_lin` of method `m` for `var`.
fn pending_lin<'m>(m: &'m Method, var: &str) -> Option<&'m Annotation> {
    m.prefix
        .annotations
        .iter()
        .find(|a| matches!(&a.kind, AnnotKind::Linearize { matrix, .. } if matrix.name == var))
}

fn prove_goal(ctx: &Ctx, fx: &mut crate::analyze::facts::Facts, goal: &Expr) -> Answer {
    match fx.tr.bool(goal) {
        Ok(z) => prove(&fx.tr, &fx.facts, &z, ctx.timeout_ms),
        Err(u) => Answer::Unknown(format!("cannot encode: {}", u.0)),
    }
}

fn with_answer(mut d: Diagnostic, a: &Answer) -> Diagnostic {
    match a {
        Answer::Refuted(cx) if !cx.values.is_empty() => {
            d = d.with_note(format!("counterexample: {cx}"))
        }
        Answer::Unknown(w) => d = d.with_note(format!("not proven: {w}")),
        _ => {}
    }
    d
}

/// Attach to a refusal about a matrix reached through a call the call that brought it in.
fn via(d: Diagnostic, t: &Target) -> Diagnostic {
    match t.via {
        Some(c) => d.with_secondary(
            c,
            format!(
                "{} is linearized with the requested matrix because of this call",
                t.key.describe()
            ),
        ),
        None => d,
    }
}

struct Plan<'p> {
    program: &'p Program,
    targets: Vec<Target>,
    edges: Vec<Edge>,
}

impl<'p> Plan<'p> {
    fn find(&self, k: &Key) -> Option<usize> {
        self.targets.iter().position(|t| t.key == *k)
    }

    fn method(&self, k: &Key) -> Option<(Option<&'p Class>, &'p Method)> {
        find_method(self.program, k.class.as_deref(), &k.method)
    }

    /// Add the matrix `key` reached through `call`; its extents come from its own pending
    /// annotation (which must agree on the layout) or from `derived`.
    fn reach(
        &mut self,
        key: Key,
        row: bool,
        derived: Option<(Expr, Expr)>,
        call: Span,
    ) -> Result<(), Diagnostic> {
        if let Some(i) = self.find(&key) {
            if self.targets[i].row != row {
                return Err(Diagnostic::error(
                    "A404",
                    format!(
                        "{} would need both layouts: it is linearized {} and passed here to a matrix linearized {}",
                        key.describe(),
                        layout_name(self.targets[i].row),
                        layout_name(row)
                    ),
                )
                .with_primary(call, "this call")
                .with_help("use one layout for a matrix and every matrix it is passed to"));
            }
            return Ok(());
        }
        let Some((_, m)) = self.method(&key) else {
            return Err(
                Diagnostic::error("A404", "cannot find the method of this call")
                    .with_primary(call, "this call")
                    .with_help("call methods of this file directly"),
            );
        };
        let (dims, consumed) = match pending_lin(m, &key.var) {
            Some(a) => {
                let AnnotKind::Linearize { layout, dims, .. } = &a.kind else {
                    return Err(Diagnostic::error(
                        "A0099",
                        "internal error: malformed matrix_lin annotation",
                    )
                    .with_help("please report this"));
                };
                if (*layout == Layout::Row) != row {
                    return Err(Diagnostic::error(
                        "A404",
                        format!(
                            "{} is annotated {} but is passed to or from a matrix linearized {}",
                            key.describe(),
                            layout_name(*layout == Layout::Row),
                            layout_name(row)
                        ),
                    )
                    .with_primary(call, "this call")
                    .with_secondary(a.span, "its own annotation")
                    .with_help("use one layout for a matrix and every matrix it is passed to"));
                }
                (dims.clone(), Some(a.span))
            }
            None => match derived {
                Some(d) => (d, None),
                None => {
                    return Err(Diagnostic::error(
                        "A404",
                        format!(
                            "cannot linearize {} consistently: its extents cannot be written in `{}`'s own variables",
                            key.describe(),
                            key.method
                        ),
                    )
                    .with_primary(call, "the matrix is passed here")
                    .with_help(format!(
                        "pass the extents as plain arguments, or add `gpuopt matrix_lin {} … ;` to `{}`",
                        key.var, key.method
                    )))
                }
            },
        };
        self.targets.push(Target {
            key,
            row,
            dims,
            via: Some(call),
            consumed,
            linear: false,
        });
        Ok(())
    }
}

fn layout_name(row: bool) -> &'static str {
    if row {
        "row-major"
    } else {
        "column-major"
    }
}

pub fn apply(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let Params::Linearize {
        matrix,
        layout,
        dims,
        index_fn,
    } = params
    else {
        return super::not_available(params);
    };
    if site.kind != SiteKind::Method {
        return Err(vec![Diagnostic::error(
            "A0004",
            "matrix linearization applies to a method",
        )
        .with_primary(site.keyword, "not a method")
        .with_help("place `gpuopt matrix_lin …;` before the method contract")]);
    }
    let parsed = ctx.parsed;
    let program = &parsed.program;
    let Some((class, method)) = find_method(program, site.class.as_deref(), &site.method) else {
        return Err(vec![Diagnostic::error(
            "A401",
            "cannot find the annotated method",
        )
        .with_primary(site.keyword, "here")]);
    };
    let src = ctx.src;
    let primary = Key {
        class: class.map(|c| c.name.name.clone()),
        method: method.name.name.clone(),
        var: matrix.clone(),
    };
    let mut plan = Plan {
        program,
        targets: vec![Target {
            key: primary,
            row: *layout == Layout::Row,
            dims: dims.clone(),
            via: None,
            consumed: None,
            linear: false,
        }],
        edges: Vec::new(),
    };

    // ---- the plan: follow every call edge (worklist) ----
    let mut i = 0;
    while i < plan.targets.len() {
        let t = plan.targets[i].clone();
        let Some((tclass, m)) = plan.method(&t.key) else {
            return Err(vec![via(
                Diagnostic::error("A401", format!("cannot find `{}`", t.key.method))
                    .with_help("name a method of this file"),
                &t,
            )]);
        };
        let g = t.key.var.as_str();
        let decl = decl_of(m, g);
        let ty = match &decl {
            Some(Decl::Param(_, ty)) | Some(Decl::Local(ty, _, _)) => *ty,
            None => {
                let d = Diagnostic::error(
                    if t.via.is_some() { "A404" } else { "A401" },
                    format!("`{g}` is not a parameter or local of `{}`", m.name.name),
                )
                .with_primary(m.name.span, "this method")
                .with_help("name a 2-D array parameter or local of the method");
                return Err(vec![via(d, &t)]);
            }
        };
        if ty.array_dims() != 2 {
            let d = Diagnostic::error(
                if t.via.is_some() { "A404" } else { "A401" },
                format!("`{g}` is not a 2-D array"),
            )
            .with_primary(ty.span, format!("`{g}` has this type"))
            .with_help("matrix linearization applies to `T[][]` arrays");
            return Err(vec![via(d, &t)]);
        }
        // Extents use only variables the method does not assign.
        let assigned = assigned_vars(&method_body_stmt(m));
        for d in [&t.dims.0, &t.dims.1] {
            if let Some(v) = names_of(d)
                .into_iter()
                .find(|v| assigned.contains(v) || v == g)
            {
                let d = Diagnostic::error(
                    "A402",
                    format!(
                        "the extent `{}` of {} uses `{v}`, which the method assigns",
                        print_simple(d),
                        t.key.describe()
                    ),
                )
                .with_primary(m.name.span, "this method")
                .with_help("give the extents in terms of parameters the method does not assign");
                return Err(vec![via(d, &t)]);
            }
        }

        // Uses of the matrix in its method: calls that pass it, and anything illegal.
        let info = Info {
            row: t.row,
            e1: print_simple(&t.dims.0),
            e2: print_simple(&t.dims.1),
            linear: false,
        };
        let mut scan = Lin::new(src, BTreeMap::from([(g.to_string(), info)]), None);
        let mut sink = EditSet::new();
        scan.method(m, &mut sink);
        let call_args: BTreeSet<(usize, usize)> =
            scan.calls.iter().map(|u| key_span(u.arg)).collect();
        let bad: Vec<Span> = scan
            .bad
            .iter()
            .copied()
            .filter(|b| !call_args.contains(&key_span(*b)))
            .collect();
        if !bad.is_empty() {
            let mut d = Diagnostic::error(
                "A403",
                format!(
                    "cannot linearize {}: the matrix or one of its rows is used as a value",
                    t.key.describe()
                ),
            )
            .with_primary(m.name.span, "this method");
            for b in bad {
                d = d.with_secondary(b, "used here");
            }
            return Err(vec![via(d, &t).with_help(format!(
                "access `{g}` only as `{g}[r][c]`, `{g}.length`, `{g}[r].length`, in `\\matrix({g}, …)`, or pass it whole to a method of this file"
            ))]);
        }
        let tclass_name = tclass.map(|c| c.name.name.as_str());
        for u in scan.calls.clone() {
            let Some((cc, callee)) = resolve(program, tclass_name, u.recv.as_ref(), &u.name) else {
                let d = Diagnostic::error(
                    "A403",
                    format!("cannot linearize `{g}`: it is passed to `{}`, which is not a method of this file", u.name),
                )
                .with_primary(u.arg, "passed here")
                .with_help("only calls to methods of this file can be rewritten with the matrix");
                return Err(vec![via(d, &t)]);
            };
            let Some(q) = callee.params.get(u.index) else {
                continue;
            };
            let ckey = Key {
                class: cc.map(|c| c.name.name.clone()),
                method: callee.name.name.clone(),
                var: q.name.name.clone(),
            };
            // The callee's extents in its own variables: the caller's extents with every
            // variable passed as a plain argument replaced by the parameter it is passed to.
            let mut back = BTreeMap::new();
            for (a, p) in u.args.iter().zip(&callee.params) {
                if let Some(n) = a.as_name() {
                    back.entry(n.to_string())
                        .or_insert_with(|| Expr::name(&p.name.name));
                }
            }
            let derived = match (
                names_of(&t.dims.0).iter().all(|v| back.contains_key(v)),
                names_of(&t.dims.1).iter().all(|v| back.contains_key(v)),
            ) {
                (true, true) => subst(&t.dims.0, &back).zip(subst(&t.dims.1, &back)),
                _ => None,
            };
            if let Err(d) = plan.reach(ckey.clone(), t.row, derived, u.call) {
                return Err(vec![via(d, &t)]);
            }
            push_edge(
                &mut plan.edges,
                Edge {
                    caller: t.key.clone(),
                    callee: ckey,
                    call: u.call,
                    arg: u.arg,
                    args: u.args.clone(),
                    callee_params: callee.params.iter().map(|p| p.name.name.clone()).collect(),
                    point: u.point,
                },
            );
        }
        // Callers that pass a matrix for this parameter.
        if let Some(Decl::Param(k, _)) = decl {
            for (cc, caller) in all_methods(program) {
                let cname = cc.map(|c| c.name.name.as_str());
                let mut found = Vec::new();
                calls_in(caller, &mut |e, point| {
                    if let ExprKind::Call {
                        recv, name, args, ..
                    } = &e.kind
                    {
                        let target = resolve(program, cname, recv.as_deref(), &name.name);
                        if let Some((rc, rm)) = target {
                            if rm.name.name == t.key.method
                                && rc.map(|c| c.name.name.clone()) == t.key.class
                            {
                                found.push((e.span, args.clone(), point));
                            }
                        }
                    }
                });
                for (call, args, point) in found {
                    let Some(arg) = args.get(k) else { continue };
                    let Some(h) = arg.as_name() else {
                        let d = Diagnostic::error(
                            "A404",
                            format!(
                                "cannot linearize {} consistently: this call passes `{}`, which is not a matrix variable of `{}`",
                                t.key.describe(),
                                arg.span.text(src),
                                caller.name.name
                            ),
                        )
                        .with_primary(arg.span, "passed here")
                        .with_help("pass a 2-D array parameter or local, which is then linearized with it");
                        return Err(vec![via(d, &t)]);
                    };
                    let ckey = Key {
                        class: cc.map(|c| c.name.name.clone()),
                        method: caller.name.name.clone(),
                        var: h.to_string(),
                    };
                    let fwd: BTreeMap<String, Expr> = m
                        .params
                        .iter()
                        .zip(&args)
                        .map(|(p, a)| (p.name.name.clone(), a.clone()))
                        .collect();
                    let derived = subst(&t.dims.0, &fwd).zip(subst(&t.dims.1, &fwd));
                    if let Err(d) = plan.reach(ckey.clone(), t.row, derived, call) {
                        return Err(vec![via(d, &t)]);
                    }
                    push_edge(
                        &mut plan.edges,
                        Edge {
                            caller: ckey,
                            callee: t.key.clone(),
                            call,
                            arg: arg.span,
                            args: args.clone(),
                            callee_params: m.params.iter().map(|p| p.name.name.clone()).collect(),
                            point,
                        },
                    );
                }
            }
        }
        i += 1;
    }

    // ---- extents (A402) and distinct rows (A405), per matrix ----
    for i in 0..plan.targets.len() {
        let t = plan.targets[i].clone();
        let Some((tclass, m)) = plan.method(&t.key) else {
            continue;
        };
        match check_extents(ctx, program, tclass, m, &t) {
            Ok(linear) => plan.targets[i].linear = linear,
            Err(d) => return Err(vec![via(d, &t)]),
        }
    }

    // ---- every call agrees on the extents (A404) ----
    for e in &plan.edges {
        let (Some(ci), Some(ki)) = (plan.find(&e.caller), plan.find(&e.callee)) else {
            continue;
        };
        let (ct, kt) = (&plan.targets[ci], &plan.targets[ki]);
        let Some((cclass, cm)) = plan.method(&e.caller) else {
            continue;
        };
        let fwd: BTreeMap<String, Expr> = e
            .callee_params
            .iter()
            .cloned()
            .zip(e.args.iter().cloned())
            .collect();
        let (Some(k1), Some(k2)) = (subst(&kt.dims.0, &fwd), subst(&kt.dims.1, &fwd)) else {
            return Err(vec![Diagnostic::error(
                "A404",
                format!(
                    "cannot compare the extents of {} with this call's arguments",
                    kt.key.describe()
                ),
            )
            .with_primary(e.call, "this call")
            .with_help("give the extents as plain expressions over parameters")]);
        };
        let goal = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Eq, ct.dims.0.clone(), k1.clone()),
            Expr::bin(BinOp::Eq, ct.dims.1.clone(), k2.clone()),
        );
        let point = e.point.unwrap_or_else(|| entry_point(cm));
        let mut fx = facts_at(program, cclass, cm, Point::Before(point));
        let a = prove_goal(ctx, &mut fx, &goal);
        if !a.is_proved() {
            let d = Diagnostic::error(
                "A404",
                format!(
                    "cannot linearize {} and {} consistently: the extents {} x {} and {} x {} may differ at this call",
                    ct.key.describe(),
                    kt.key.describe(),
                    print_simple(&ct.dims.0),
                    print_simple(&ct.dims.1),
                    print_simple(&k1),
                    print_simple(&k2)
                ),
            )
            .with_primary(e.call, "this call")
            .with_secondary(e.arg, "the matrix passed");
            return Err(vec![with_answer(d, &a).with_help(
                "pass a matrix with the same extents, or give both matrices matching `matrix_lin` annotations",
            )]);
        }
    }

    rewrite(ctx, &plan, *index_fn)
}

fn push_edge(edges: &mut Vec<Edge>, e: Edge) {
    if !edges.iter().any(|x| x.call == e.call && x.arg == e.arg) {
        edges.push(e);
    }
}

/// A402: the extents agree with the facts at the method's entry (or the local's allocation);
/// A405: the rows are distinct. Returns whether the linear length convention applies.
fn check_extents(
    ctx: &Ctx,
    program: &Program,
    class: Option<&Class>,
    m: &Method,
    t: &Target,
) -> Result<bool, Diagnostic> {
    let g = t.key.var.as_str();
    let (e1t, e2t) = (print_simple(&t.dims.0), print_simple(&t.dims.1));
    let decl = decl_of(m, g);
    let point = match &decl {
        Some(Decl::Local(_, _, start)) => *start,
        _ => entry_point(m),
    };
    let mut fx = facts_at(program, class, m, Point::Before(point));
    let len = Expr::synth(ExprKind::Field(
        Box::new(Expr::name(g)),
        Ident::synth("length"),
    ));
    let mut first = None;
    let mut linear = false;
    let proven = if let Some(Decl::Local(_, Some(init), _)) = &decl {
        match &init.kind {
            ExprKind::NewArray(_, args) if args.len() == 2 => {
                let goal = Expr::bin(
                    BinOp::And,
                    Expr::bin(BinOp::Eq, args[0].clone(), t.dims.0.clone()),
                    Expr::bin(BinOp::Eq, args[1].clone(), t.dims.1.clone()),
                );
                let a = prove_goal(ctx, &mut fx, &goal);
                let ok = a.is_proved();
                first = Some(a);
                ok
            }
            _ => false,
        }
    } else {
        let lin_goal = Expr::bin(
            BinOp::Eq,
            len.clone(),
            Expr::bin(BinOp::Mul, t.dims.0.clone(), t.dims.1.clone()),
        );
        let a = prove_goal(ctx, &mut fx, &lin_goal);
        if a.is_proved() {
            linear = true;
            true
        } else {
            first = Some(a);
            let goal = Expr::bin(
                BinOp::And,
                Expr::bin(BinOp::Eq, len.clone(), t.dims.0.clone()),
                rows_quant(&t.dims.0, |r| {
                    Expr::bin(
                        BinOp::Eq,
                        Expr::synth(ExprKind::Field(
                            Box::new(Expr::index(Expr::name(g), Expr::name(r))),
                            Ident::synth("length"),
                        )),
                        t.dims.1.clone(),
                    )
                }),
            );
            prove_goal(ctx, &mut fx, &goal).is_proved()
        }
    };
    if !proven {
        let mut d = Diagnostic::error(
            "A402",
            format!(
                "the dimensions {e1t} x {e2t} given for {} do not match the program's facts: neither `{g}.length == {} * {}` nor `{g}.length == {e1t}` with rows of length {e2t} is provable",
                t.key.describe(),
                paren(&e1t),
                paren(&e2t)
            ),
        )
        .with_primary(m.name.span, "this method");
        for c in &m.prefix.clauses {
            if let Some(e) = c.expr() {
                for cj in e.conjuncts() {
                    let mut hit = false;
                    walk_expr(cj, &mut |x| match &x.kind {
                        ExprKind::Field(y, f) if f.name == "length" && y.as_name() == Some(g) => {
                            hit = true
                        }
                        ExprKind::Builtin(Builtin::Matrix | Builtin::Array, a)
                            if a.first().and_then(|a| a.as_name()) == Some(g) =>
                        {
                            hit = true
                        }
                        _ => {}
                    });
                    if hit {
                        d = d.with_secondary(cj.span, "the program's extent fact");
                    }
                }
            }
        }
        if let Some(a) = &first {
            d = with_answer(d, a);
        }
        return Err(d.with_help(format!(
            "give the extents the program uses, or add `context_everywhere {g}.length == {} * {};` (or `\\matrix({g}, {e1t}, {e2t})`)",
            paren(&e1t),
            paren(&e2t)
        )));
    }
    // A405: two rows that are the same array would become two separate ranges of cells.
    if !linear
        && matches!(decl, Some(Decl::Param(..)))
        && !rows_distinct(ctx, &mut fx, m, g, &t.dims.0)
    {
        return Err(Diagnostic::error("A405", format!("the rows of {} may alias", t.key.describe()))
            .with_primary(m.name.span, "this method")
            .with_help(format!(
                "add `context_everywhere \\matrix({g}, {e1t}, {e2t});`, a fact that the rows are distinct, or write permission to every cell"
            )));
    }
    Ok(linear)
}

/// `(\forall int vct_ml_r; 0 <= vct_ml_r && vct_ml_r < rows; body(vct_ml_r))`.
fn rows_quant(rows: &Expr, body: impl Fn(&str) -> Expr) -> Expr {
    let r = "vct_ml_r";
    let range = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Le, Expr::int(0), Expr::name(r)),
        Expr::bin(BinOp::Lt, Expr::name(r), rows.clone()),
    );
    Expr::synth(ExprKind::Quant {
        kind: QuantKind::Forall,
        bindings: vec![Binding {
            ty: Type::int(),
            name: Ident::synth(r),
            range: None,
            span: Span::DUMMY,
        }],
        cond: Some(Box::new(range)),
        body: Box::new(body(r)),
    })
}

/// Rows are distinct: a `\matrix` fact, a provable distinctness fact, or write permission to
/// every cell in the precondition (two equal rows would need two write permissions per cell).
fn rows_distinct(
    ctx: &Ctx,
    fx: &mut crate::analyze::facts::Facts,
    m: &Method,
    g: &str,
    rows: &Expr,
) -> bool {
    let mut found = false;
    for c in &m.prefix.clauses {
        let Some(e) = c.expr() else { continue };
        walk_expr(e, &mut |x| {
            if let ExprKind::Builtin(Builtin::Matrix, a) = &x.kind {
                if a.first().and_then(|a| a.as_name()) == Some(g) {
                    found = true;
                }
            }
        });
        if c.kind.is_pre() {
            for cj in e.conjuncts() {
                if writes_every_cell(cj, g) {
                    found = true;
                }
            }
        }
    }
    if found {
        return true;
    }
    let (r1, r2) = ("vct_ml_r1", "vct_ml_r2");
    let in_range = |r: &str| {
        Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Le, Expr::int(0), Expr::name(r)),
            Expr::bin(BinOp::Lt, Expr::name(r), rows.clone()),
        )
    };
    let goal = Expr::synth(ExprKind::Quant {
        kind: QuantKind::Forall,
        bindings: [r1, r2]
            .iter()
            .map(|n| Binding {
                ty: Type::int(),
                name: Ident::synth(*n),
                range: None,
                span: Span::DUMMY,
            })
            .collect(),
        cond: Some(Box::new(Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::And, in_range(r1), in_range(r2)),
            Expr::bin(BinOp::Ne, Expr::name(r1), Expr::name(r2)),
        ))),
        body: Box::new(Expr::bin(
            BinOp::Ne,
            Expr::index(Expr::name(g), Expr::name(r1)),
            Expr::index(Expr::name(g), Expr::name(r2)),
        )),
    });
    prove_goal(ctx, fx, &goal).is_proved()
}

/// `(\forall* r …; (\forall* c …; Perm(g[r][c], write)))` (the quantifiers possibly merged).
fn writes_every_cell(e: &Expr, g: &str) -> bool {
    match &e.kind {
        ExprKind::Quant { body, .. } => writes_every_cell(body, g),
        ExprKind::Builtin(Builtin::Perm, args) if args.len() == 2 => {
            matches!(&args[0].kind, ExprKind::Index(inner, _)
                if matches!(&inner.kind, ExprKind::Index(a, _) if a.as_name() == Some(g)))
                && matches!(args[1].kind, ExprKind::Write)
        }
        _ => false,
    }
}

/// Build the edits for every method of the plan.
fn rewrite(ctx: &mut Ctx, plan: &Plan, index_fn: bool) -> Outcome {
    let src = ctx.src;
    let program = plan.program;
    let helper = if index_fn {
        Some(ctx.names.name("vct_ml_Idx"))
    } else {
        None
    };
    // Methods in source order, each with its matrices.
    let mut methods: Vec<(Key, Vec<&Target>)> = Vec::new();
    for t in &plan.targets {
        let mk = Key {
            var: String::new(),
            ..t.key.clone()
        };
        match methods.iter_mut().find(|(k, _)| *k == mk) {
            Some((_, v)) => v.push(t),
            None => methods.push((mk, vec![t])),
        }
    }
    methods.sort_by_key(|(k, _)| {
        find_method(program, k.class.as_deref(), &k.method).map_or(0, |(_, m)| m.span.start())
    });
    let consumed: BTreeSet<(usize, usize)> = plan
        .targets
        .iter()
        .filter_map(|t| t.consumed.map(key_span))
        .collect();
    let mut edits = EditSet::new();
    let mut diagnostics = Vec::new();
    let mut helper_classes: BTreeSet<Option<String>> = BTreeSet::new();
    let nl = ctx.layout.newline;
    for (mk, ts) in &methods {
        let Some((class, m)) = find_method(program, mk.class.as_deref(), &mk.method) else {
            continue;
        };
        let mats: BTreeMap<String, Info> = ts
            .iter()
            .map(|t| {
                (
                    t.key.var.clone(),
                    Info {
                        row: t.row,
                        e1: print_simple(&t.dims.0),
                        e2: print_simple(&t.dims.1),
                        linear: t.linear,
                    },
                )
            })
            .collect();
        let mut lin = Lin::new(src, mats, helper.clone());
        for e in &plan.edges {
            if e.caller.class == mk.class && e.caller.method == mk.method {
                lin.allowed_args.insert(key_span(e.arg));
            }
        }
        for t in ts {
            match decl_of(m, &t.key.var) {
                Some(Decl::Param(_, ty)) | Some(Decl::Local(ty, None, _)) => {
                    edits.replace(ty.span, new_type(src, ty))
                }
                Some(Decl::Local(ty, Some(init), _)) => {
                    edits.replace(ty.span, new_type(src, ty));
                    lin.new_inits.insert(key_span(init.span));
                }
                None => {}
            }
        }
        lin.method(m, &mut edits);
        if !lin.bad.is_empty() {
            let mut d = Diagnostic::error(
                "A403",
                format!(
                    "cannot linearize in `{}`: a matrix or one of its rows is used as a value",
                    m.name.name
                ),
            )
            .with_primary(m.name.span, "this method");
            for b in &lin.bad {
                d = d.with_secondary(*b, "used here");
            }
            return Err(vec![d.with_help(
                "access a matrix only as `g[r][c]`, `g.length`, `g[r].length`, in `\\matrix(g, …)`, or pass it whole to a method of this file",
            )]);
        }
        // Pending annotations of the method and of its loops and par blocks.
        pending_annotations(&mut lin, m, &consumed, &mut edits);
        for t in ts {
            if let Some(c) = t.consumed {
                edits.replace(removal_span(src, c), "");
            }
        }
        if !lin.removed.is_empty() {
            let mut d = Diagnostic::note(
                "A406",
                format!("row-level facts removed in `{}`", m.name.name),
            )
            .with_primary(m.name.span, "this method");
            for r in &lin.removed {
                d = d.with_secondary(*r, "removed");
            }
            diagnostics.push(d);
        }
        // New method clauses go before the first clause (or the method itself).
        let clause_anchor = m
            .prefix
            .clauses
            .first()
            .map_or(m.span.start(), |c| c.span.start());
        let ind = indent_at(src, clause_anchor).to_string();
        if let Some(h) = &helper {
            let ck = class.map(|c| c.name.name.clone());
            if helper_classes.insert(ck) {
                let kw = if class.is_some() { "static " } else { "" };
                // Before the method's annotations and contract.
                let start = m.prefix.span.start().min(m.span.start());
                edits.insert(
                    line_start(src, start),
                    format!("{ind}{kw}pure int {h}(int stride, int major, int minor) = major * stride + minor;{nl}{nl}"),
                );
            }
        }
        for t in ts {
            let g = &t.key.var;
            if matches!(decl_of(m, g), Some(Decl::Param(..)))
                && !t.linear
                && !lin.matrix_converted.contains(g)
                && !lin.length_everywhere.contains(g)
            {
                edits.insert(
                    line_start(src, clause_anchor),
                    format!(
                        "{ind}context_everywhere \\array({g}, {} * {});{nl}",
                        paren(&print_simple(&t.dims.0)),
                        paren(&print_simple(&t.dims.1))
                    ),
                );
            }
        }
        if ts.iter().any(|t| t.via.is_some()) {
            let names: Vec<String> = ts.iter().map(|t| format!("`{}`", t.key.var)).collect();
            let mut d = Diagnostic::note(
                "A407",
                format!(
                    "`{}` is rewritten too: {} passed along with the requested matrix",
                    m.name.name,
                    names.join(", ")
                ),
            )
            .with_primary(m.name.span, "rewritten");
            for t in ts {
                if let Some(c) = t.via {
                    d = d.with_secondary(c, "through this call");
                }
            }
            diagnostics.push(d);
        }
    }
    Ok(Applied { edits, diagnostics })
}

/// `T[][]` → `T[]`, `T[X][Y]` → `T[X * Y]`.
fn new_type(src: &str, ty: &Type) -> String {
    let base = ty.base().span.text(src).to_string();
    match &ty.kind {
        TypeKind::Array(inner, Some(y)) => match &inner.kind {
            TypeKind::Array(_, Some(x)) => format!(
                "{base}[{} * {}]",
                paren(x.span.text(src)),
                paren(y.span.text(src))
            ),
            _ => format!("{base}[]"),
        },
        _ => format!("{base}[]"),
    }
}

/// Linearization's substitution applied to the pending annotations of `m` (optimizations.md
/// §5(h)): `gpuopt glob_to_reg g[r] c;` becomes `gpuopt glob_to_reg g (E2 * r + c);`, and matrix
/// accesses or lengths in any other annotation argument are rewritten. A prefetch of the whole
/// matrix (`glob_to_reg g e`) already names cells of the 1-D array (Alpinist applies
/// linearization first) and is left as it is.
fn pending_annotations(
    lin: &mut Lin,
    m: &Method,
    consumed: &BTreeSet<(usize, usize)>,
    edits: &mut EditSet,
) {
    let mut anns: Vec<&Annotation> = m.prefix.annotations.iter().collect();
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| match &st.kind {
                StmtKind::While(l) | StmtKind::For(l) => anns.extend(&l.prefix.annotations),
                StmtKind::RangedFor { prefix, .. } => anns.extend(&prefix.annotations),
                StmtKind::Par(p) => anns.extend(&p.prefix.annotations),
                _ => {}
            });
        }
    }
    for a in anns {
        if consumed.contains(&key_span(a.span)) {
            continue;
        }
        let mut exprs: Vec<&Expr> = Vec::new();
        match &a.kind {
            AnnotKind::Prefetch { array, locations } => {
                if let ExprKind::Index(g, r) = &array.kind {
                    if let Some((gname, info)) = lin.mat(g) {
                        let rt = lin.text(r);
                        let idx: Vec<String> = locations
                            .iter()
                            .map(|l| {
                                let lt = lin.text(l);
                                let i = lin.index(&info, r, l, rt.clone(), lt);
                                paren(&i)
                            })
                            .collect();
                        let end = locations.last().map_or(array.span.end(), |l| l.span.end());
                        edits.replace(
                            Span::new(array.span.start(), end),
                            format!("{gname} {}", idx.join(" ")),
                        );
                        continue;
                    }
                }
                if lin.mat(array).is_none() {
                    exprs.push(array);
                }
                exprs.extend(locations);
            }
            AnnotKind::Linearize { dims, .. } => exprs.extend([&dims.0, &dims.1]),
            AnnotKind::Tile { size, .. } => exprs.push(size),
            _ => {}
        }
        for e in exprs {
            let mut reps = Vec::new();
            lin.collect(e, &mut reps);
            for (s, t) in reps {
                edits.replace(s, t);
            }
        }
    }
}
