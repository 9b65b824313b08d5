//! Uniformity of a thread block (verification.md §5.10 (d)): which locals of a `par` body may
//! hold different values in different threads, and under which conditions each barrier is
//! reached.
//!
//! A barrier's consistency check treats the locals its contract names as one value shared by
//! all threads, and assumes every thread of the block arrives. Both are unsound for a local that
//! depends on the thread (`int k = tid;`) and for a barrier inside a branch that only some
//! threads take (`if (tid < 2) { barrier … }`). The encoder asks this analysis and writes such a
//! local as its definition over the thread variables where it can, and makes the verifier prove
//! that a barrier's branch conditions hold for every thread.
//!
//! Taint starts at the block's thread variables and flows through assignments, through the
//! conditions a statement is under (and, after a jump under a tainted condition, into
//! everything that follows it), and from allocations and calls (a fresh object per thread).
//! Reading a cell at an untainted index is untainted: a cell one thread writes, another cannot
//! read before the next barrier.

use front::ast::*;
use front::visit::{any_expr, map_expr};
use std::collections::{BTreeMap, BTreeSet};

/// What the analysis finds in one `par` body.
#[derive(Debug, Default)]
pub struct Uniformity {
    /// Locals that may differ between threads.
    pub tainted: BTreeSet<String>,
    /// Locals written anywhere in the body (declarations with a value included).
    pub assigned: BTreeSet<String>,
    /// Locals declared once with a value and never written again: their definition.
    pub definitions: BTreeMap<String, Expr>,
    /// Per barrier (by the start of its keyword), the conditions that may differ between
    /// threads on the way to it, each with the branch taken (`true`: the condition holds). A
    /// `None` condition: a jump under such a condition came before, or a loop whose guard may
    /// differ holds the barrier (how often a thread arrives differs).
    pub barrier_conds: BTreeMap<usize, Vec<Option<(Expr, bool)>>>,
}

impl Uniformity {
    /// Does `e` mention a local that may differ between threads (or a thread variable)?
    pub fn is_tainted(&self, e: &Expr) -> bool {
        any_expr(e, &mut |x| x.as_name().is_some_and(|n| self.tainted.contains(n)))
    }
}

/// The uniformity of `body`, the body of a `par` arm over the thread variables `iters`.
/// Nested `par` blocks are left out: their barriers belong to them.
pub fn analyze(body: &Stmt, iters: &[String]) -> Uniformity {
    let mut u = Uniformity { tainted: iters.iter().cloned().collect(), ..Default::default() };
    let mut decls: BTreeMap<String, (usize, Option<Expr>)> = BTreeMap::new();
    collect_writes(body, &mut u.assigned, &mut decls);
    for (name, (writes, init)) in decls {
        if let (1, Some(e)) = (writes, init) {
            u.definitions.insert(name, e);
        }
    }
    // Taint grows monotonically; a few passes reach the fixpoint (loops carry taint back).
    loop {
        let before = u.tainted.len();
        let mut w = Walk { u: &mut u, conds: Vec::new(), barriers: BTreeMap::new() };
        w.stmt(body);
        let barriers = w.barriers;
        if u.tainted.len() == before {
            u.barrier_conds = barriers;
            return u;
        }
    }
}

/// Every local written in `s` and, for the locals declared there, how often they are written
/// and their initial value.
fn collect_writes(
    s: &Stmt,
    out: &mut BTreeSet<String>,
    decls: &mut BTreeMap<String, (usize, Option<Expr>)>,
) {
    front::visit::walk_stmts(s, &mut |st| {
        let target = match &st.kind {
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    let n = usize::from(d.init.is_some());
                    decls.insert(d.name.name.clone(), (n, d.init.clone()));
                    if d.init.is_some() {
                        out.insert(d.name.name.clone());
                    }
                }
                None
            }
            StmtKind::Assign { target, .. }
            | StmtKind::CompoundAssign { target, .. }
            | StmtKind::IncDec { target, .. } => target.as_name(),
            StmtKind::RangedFor { var, .. } => Some(var.name.as_str()),
            _ => None,
        };
        if let Some(n) = target {
            out.insert(n.to_string());
            if let Some(d) = decls.get_mut(n) {
                d.0 += 1;
            }
        }
    });
}

/// How deep definitions may refer to other thread-dependent locals (`int j = k + 1;`).
const DEPTH: usize = 8;

/// `e` with its thread-dependent locals (other than the thread variables `iters`) replaced by
/// their definitions; `Err(name)` names one that has none usable: written more than once, or
/// defined from a value that may change before the barrier (a variable written again, a heap
/// location), or that calls or allocates.
pub fn inline_thread_locals(e: &Expr, u: &Uniformity, iters: &[String]) -> Result<Expr, String> {
    let mut e = e.clone();
    for _ in 0..DEPTH {
        let mut names = Vec::new();
        any_expr(&e, &mut |x| {
            if let Some(n) = x.as_name() {
                if u.tainted.contains(n) && !iters.iter().any(|i| i == n) {
                    names.push(n.to_string());
                }
            }
            false
        });
        if names.is_empty() {
            return Ok(e);
        }
        let mut defs = BTreeMap::new();
        for n in names {
            let def = u.definitions.get(&n).ok_or_else(|| n.clone())?;
            let moving = |x: &Expr| {
                x.as_name().is_some_and(|m| {
                    u.assigned.contains(m)
                        && !u.tainted.contains(m)
                        && !iters.iter().any(|i| i == m)
                })
            };
            if effects(def) || reads_heap(def) || any_expr(def, &mut |x| moving(x)) || binds(&e, &n)
            {
                return Err(n);
            }
            defs.insert(n, def.clone());
        }
        map_expr(&mut e, &mut |x| match x.as_name().and_then(|n| defs.get(n)) {
            Some(d) => {
                *x = d.clone();
                true
            }
            None => false,
        });
    }
    Err(String::new())
}

/// Does a quantifier or `\let` in `e` bind `name` (which substitution would then capture)?
fn binds(e: &Expr, name: &str) -> bool {
    any_expr(e, &mut |x| match &x.kind {
        ExprKind::Quant { bindings, .. } => bindings.iter().any(|b| b.name.name == name),
        ExprKind::Let { name: n, .. } => n.name == name,
        _ => false,
    })
}

/// Does `e` read a heap location (a cell or a field other than an array's length)? Such a
/// definition's value can change before the barrier (`int v = a[t]; a[t] = 0;`).
fn reads_heap(e: &Expr) -> bool {
    any_expr(e, &mut |x| match &x.kind {
        ExprKind::Index(..) => true,
        ExprKind::Field(_, f) => f.name != "length",
        _ => false,
    })
}

/// Does `e` allocate or call?
pub fn effects(e: &Expr) -> bool {
    any_expr(e, &mut |x| {
        matches!(x.kind, ExprKind::NewObject(..) | ExprKind::NewArray(..) | ExprKind::Call { .. })
    })
}

struct Walk<'u> {
    u: &'u mut Uniformity,
    /// The conditions the current statement is under that may differ between threads.
    conds: Vec<Option<(Expr, bool)>>,
    barriers: BTreeMap<usize, Vec<Option<(Expr, bool)>>>,
}

impl Walk<'_> {
    /// A value that may differ between threads: it names a tainted local, allocates, or calls
    /// (a method may return a fresh object; the analysis does not tell functions apart).
    fn varies(&self, e: &Expr) -> bool {
        self.u.is_tainted(e) || effects(e)
    }

    fn write(&mut self, name: Option<&str>, value: Option<&Expr>) {
        let Some(n) = name else { return };
        if !self.conds.is_empty() || value.is_some_and(|v| self.varies(v)) {
            self.u.tainted.insert(n.to_string());
        }
    }

    /// Walk `s`; `true` when it may jump out (return, break, continue, goto) under a condition
    /// that differs between threads, after which the rest of the enclosing blocks runs only in
    /// some threads.
    fn stmt(&mut self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Block(b) => self.block(&b.stmts),
            StmtKind::Decl { vars, .. } => {
                for d in vars {
                    self.write(Some(&d.name.name), d.init.as_ref());
                }
                false
            }
            StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
                self.write(target.as_name(), Some(value));
                false
            }
            StmtKind::IncDec { target, .. } => {
                self.write(target.as_name(), None);
                false
            }
            StmtKind::If { cond, then, els } => {
                let varies = self.varies(cond);
                let mut jumped = false;
                for (branch, taken) in [(Some(then.as_ref()), true), (els.as_deref(), false)] {
                    let Some(b) = branch else { continue };
                    if varies {
                        self.conds.push(Some((cond.clone(), taken)));
                    }
                    jumped |= self.stmt(b);
                    if varies {
                        self.conds.pop();
                    }
                }
                jumped
            }
            StmtKind::While(l) | StmtKind::For(l) => {
                l.init.iter().for_each(|i| {
                    self.stmt(i);
                });
                let varies = l.cond.as_ref().is_some_and(|c| self.varies(c));
                if varies {
                    self.conds.push(None);
                }
                let jumped = self.stmt(&l.body);
                l.update.iter().for_each(|i| {
                    self.stmt(i);
                });
                if varies {
                    self.conds.pop();
                }
                jumped
            }
            StmtKind::RangedFor { var, lo, hi, body, .. } => {
                let varies = self.varies(lo) || self.varies(hi);
                if varies {
                    self.u.tainted.insert(var.name.clone());
                    self.conds.push(None);
                }
                let jumped = self.stmt(body);
                if varies {
                    self.conds.pop();
                }
                jumped
            }
            StmtKind::Barrier(b) => {
                self.barriers.insert(b.keyword.start(), self.conds.clone());
                false
            }
            StmtKind::Ghost(inner) => self.stmt(inner),
            StmtKind::Atomic { body, .. } | StmtKind::Invariant { body, .. } => {
                self.block(&body.stmts)
            }
            StmtKind::Return(_) => !self.conds.is_empty(),
            StmtKind::Opaque(o) if matches!(o.keyword.as_str(), "break" | "continue" | "goto") => {
                !self.conds.is_empty()
            }
            // Nested par blocks have barriers of their own; `vec` and `parallel` blocks hold
            // no barrier of this block.
            _ => false,
        }
    }

    /// A statement list: after a jump under a varying condition, the rest runs in some threads.
    /// After `if (c) { … return; }` it runs where `c` is false: that condition, which the
    /// verifier then proves false in every thread (a guard no thread takes is no divergence).
    fn block(&mut self, stmts: &[Stmt]) -> bool {
        let depth = self.conds.len();
        let mut jumped = false;
        for s in stmts {
            if self.stmt(s) && !jumped {
                jumped = true;
                let skipped = match &s.kind {
                    StmtKind::If { cond, els: None, .. } if self.varies(cond) => {
                        Some((cond.clone(), false))
                    }
                    _ => None,
                };
                self.conds.push(skipped);
            }
        }
        self.conds.truncate(depth);
        jumped
    }
}
