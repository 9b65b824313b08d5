//! Segments of a `par` body (optimizations.md §4(c)): every barrier ends a segment wherever it
//! stands. The body is split into *runs*, maximal lists of consecutive statements that contain
//! no barrier; a statement that contains one (a barrier, a block, a uniform `if`, a loop with a
//! uniform guard) separates runs and is entered. Each run is a segment: its registers are
//! loaded at its first statement and written back after its last one, so a register is stored
//! before every barrier on every path that reaches it and reloaded right after it, and a loop
//! whose body contains a barrier reloads at the top of each iteration and stores at its end.
//!
//! A barrier under a condition that may differ between the threads of the block (one that
//! mentions a thread variable, a variable assigned from one or under such a condition, a heap
//! read or a call) is refused (A306), as is one inside any other construct.

use diag::Diagnostic;
use front::ast::*;
use front::span::Span;
use front::visit::walk_stmts;
use std::collections::BTreeSet;

/// Where the permissions at the start of a run come from: a clause list (the par contract's
/// preconditions, a barrier's postconditions, a loop's invariants) and the statements executed
/// since those clauses held (`crossed`: earlier runs reached without a barrier in between).
#[derive(Clone)]
pub(super) struct Alt<'a> {
    pub(super) clauses: Vec<&'a Clause>,
    pub(super) crossed: Vec<&'a Stmt>,
}

impl<'a> Alt<'a> {
    fn new(clauses: Vec<&'a Clause>) -> Alt<'a> {
        Alt { clauses, crossed: Vec::new() }
    }
}

/// One segment: consecutive statements of one statement list, without a barrier.
pub(super) struct Run<'a> {
    pub(super) stmts: Vec<&'a Stmt>,
    /// One alternative per way of reaching the run (the two branches of an `if` before it, …):
    /// the thread holds a cell at the start of the run if every alternative gives it.
    pub(super) pre: Vec<Alt<'a>>,
    /// 0 for a run of the par body itself; more inside a block, branch or loop body.
    pub(super) depth: usize,
    /// The run is the single statement of an unbraced branch or loop body: text added around
    /// it needs braces.
    pub(super) unbraced: bool,
}

/// Split a par arm's body into runs (A306 for barriers that cannot end a segment).
pub(super) fn split<'a>(
    body: &'a Block,
    pre: Vec<&'a Clause>,
    iters: &[&str],
    requested: &str,
    par_kw: Span,
) -> Result<Vec<Run<'a>>, Vec<Diagnostic>> {
    let tainted = thread_dependent(body, iters);
    let mut sp = Splitter { tainted, runs: Vec::new(), errors: Vec::new(), requested, par_kw };
    sp.list(body.stmts.iter().collect(), vec![Alt::new(pre)], 0, false);
    if sp.errors.is_empty() {
        Ok(sp.runs)
    } else {
        Err(sp.errors)
    }
}

struct Splitter<'a, 'r> {
    tainted: BTreeSet<String>,
    runs: Vec<Run<'a>>,
    errors: Vec<Diagnostic>,
    requested: &'r str,
    par_kw: Span,
}

impl<'a> Splitter<'a, '_> {
    /// The runs of one statement list entered with `pre`; returns the alternatives at its end.
    fn list(
        &mut self,
        stmts: Vec<&'a Stmt>,
        mut pre: Vec<Alt<'a>>,
        depth: usize,
        unbraced: bool,
    ) -> Vec<Alt<'a>> {
        let mut cur: Vec<&'a Stmt> = Vec::new();
        for s in stmts {
            if !carries(s) {
                cur.push(s);
                continue;
            }
            self.flush(&mut cur, &mut pre, depth, unbraced);
            pre = match &s.kind {
                StmtKind::Barrier(b) => {
                    vec![Alt::new(b.contract.iter().filter(|c| c.kind.is_post()).collect())]
                }
                StmtKind::Block(b) => self.list(b.stmts.iter().collect(), pre, depth + 1, false),
                StmtKind::If { cond, then, els } => {
                    self.uniform_or_refuse(s, cond);
                    let mut out = self.branch(then, pre.clone(), depth + 1);
                    match els {
                        Some(e) => out.extend(self.branch(e, pre, depth + 1)),
                        None => out.extend(pre),
                    }
                    out
                }
                StmtKind::While(l) | StmtKind::For(l) => {
                    if let Some(c) = &l.cond {
                        self.uniform_or_refuse(s, c);
                    }
                    let inv = invariants(&l.prefix);
                    self.branch(&l.body, vec![Alt::new(inv.clone())], depth + 1);
                    vec![Alt::new(inv)]
                }
                StmtKind::RangedFor { prefix, var, lo, hi, body, .. } => {
                    if self.tainted.contains(&var.name) {
                        let both = Expr::bin(BinOp::And, lo.clone(), hi.clone());
                        self.uniform_or_refuse(s, &both);
                    }
                    let inv = invariants(prefix);
                    self.branch(body, vec![Alt::new(inv.clone())], depth + 1);
                    vec![Alt::new(inv)]
                }
                _ => {
                    self.refuse(s, None, "a barrier inside this statement cannot end a segment");
                    Vec::new()
                }
            };
        }
        self.flush(&mut cur, &mut pre, depth, unbraced);
        pre
    }

    fn branch(&mut self, s: &'a Stmt, pre: Vec<Alt<'a>>, depth: usize) -> Vec<Alt<'a>> {
        match &s.kind {
            StmtKind::Block(b) => self.list(b.stmts.iter().collect(), pre, depth, false),
            _ => self.list(vec![s], pre, depth, true),
        }
    }

    fn flush(
        &mut self,
        cur: &mut Vec<&'a Stmt>,
        pre: &mut [Alt<'a>],
        depth: usize,
        unbraced: bool,
    ) {
        if cur.is_empty() {
            return;
        }
        self.runs.push(Run { stmts: cur.clone(), pre: pre.to_vec(), depth, unbraced });
        for alt in pre.iter_mut() {
            alt.crossed.extend(cur.iter().copied());
        }
        cur.clear();
    }

    fn uniform_or_refuse(&mut self, s: &Stmt, cond: &Expr) {
        if !uniform(cond, &self.tainted) {
            self.refuse(s, Some(cond.span), "this condition may differ between the threads");
        }
    }

    fn refuse(&mut self, s: &Stmt, cond: Option<Span>, why: &str) {
        let mut d = Diagnostic::error(
            "A306",
            format!(
                "{}: barrier under a condition that may differ between the threads",
                self.requested
            ),
        )
        .with_primary(self.par_kw, "prefetching requested for this par block");
        match cond {
            Some(c) => d = d.with_secondary(c, why),
            None => d = d.with_secondary(s.span, why),
        }
        if let Some(b) = first_barrier(s) {
            d = d.with_secondary(b, "barrier");
        }
        self.errors.push(
            d.with_note("a barrier ends a segment only under conditions that are the same for every thread (no thread variable, heap read or call)")
                .with_help("make the condition uniform across the block, or do not prefetch in this block"),
        );
    }
}

fn invariants(prefix: &Prefix) -> Vec<&Clause> {
    prefix
        .clauses
        .iter()
        .filter(|c| matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Context))
        .collect()
}

/// Whether `s` contains a barrier.
pub(super) fn carries(s: &Stmt) -> bool {
    first_barrier(s).is_some()
}

fn first_barrier(s: &Stmt) -> Option<Span> {
    let mut hit = None;
    walk_stmts(s, &mut |st| {
        if let StmtKind::Barrier(b) = &st.kind {
            hit = hit.or(Some(b.keyword));
        }
    });
    hit
}

/// Variables whose value may differ between the threads of the block: the thread variables,
/// and (to a fixed point) variables assigned from a non-uniform value or under a non-uniform
/// condition.
fn thread_dependent(body: &Block, iters: &[&str]) -> BTreeSet<String> {
    let mut t: BTreeSet<String> = iters.iter().map(|s| s.to_string()).collect();
    loop {
        let before = t.len();
        for s in &body.stmts {
            taint(s, false, &mut t);
        }
        if t.len() == before {
            return t;
        }
    }
}

fn taint(s: &Stmt, ctrl: bool, t: &mut BTreeSet<String>) {
    let set = |t: &mut BTreeSet<String>, target: &Expr, dep: bool| {
        if dep {
            if let Some(n) = target.as_name() {
                t.insert(n.to_string());
            }
            if let ExprKind::Field(r, f) = &target.kind {
                if matches!(r.kind, ExprKind::This) {
                    t.insert(f.name.clone());
                }
            }
        }
    };
    match &s.kind {
        StmtKind::Decl { vars, .. } => {
            for d in vars {
                if ctrl || d.init.as_ref().is_some_and(|e| !uniform(e, t)) {
                    t.insert(d.name.name.clone());
                }
            }
        }
        StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
            let dep = ctrl || !uniform(value, t);
            set(t, target, dep);
        }
        StmtKind::IncDec { target, .. } => set(t, target, ctrl),
        StmtKind::Block(b) => b.stmts.iter().for_each(|x| taint(x, ctrl, t)),
        StmtKind::If { cond, then, els } => {
            let c = ctrl || !uniform(cond, t);
            taint(then, c, t);
            if let Some(e) = els {
                taint(e, c, t);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            l.init.iter().for_each(|x| taint(x, ctrl, t));
            let c = ctrl || l.cond.as_ref().is_some_and(|g| !uniform(g, t));
            l.update.iter().for_each(|x| taint(x, c, t));
            taint(&l.body, c, t);
        }
        StmtKind::RangedFor { var, lo, hi, body, .. } => {
            let c = ctrl || !uniform(lo, t) || !uniform(hi, t);
            if c {
                t.insert(var.name.clone());
            }
            taint(body, c, t);
        }
        StmtKind::Ghost(inner) => taint(inner, ctrl, t),
        // Anything else assigning a variable (atomic bodies, nested blocks of other kinds):
        // conservatively thread-dependent.
        _ => t.extend(analyze::scope::assigned_vars(s)),
    }
}

/// `e` has the same value in every thread: no thread-dependent name, no heap read other than
/// an array length, no call.
fn uniform(e: &Expr, t: &BTreeSet<String>) -> bool {
    let mut ok = true;
    front::visit::walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Name(id) if t.contains(&id.name) => ok = false,
        // An array's length is the same for every thread when the array is (`n < a.length`).
        ExprKind::Field(r, f) if f.name == "length" && r.as_name().is_some() => {}
        ExprKind::Field(r, f) if !matches!(r.kind, ExprKind::This) || t.contains(&f.name) => {
            ok = false
        }
        ExprKind::Index(..)
        | ExprKind::Call { .. }
        | ExprKind::ThreadId(_)
        | ExprKind::NewObject(..)
        | ExprKind::NewArray(..)
        | ExprKind::Opaque(_) => ok = false,
        _ => {}
    });
    ok
}
