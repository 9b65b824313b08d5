//! The fact context Γ(P) of a program point (optimizations.md §1.3).
//!
//! A light symbolic execution from method entry to the point: straight-line assignments to
//! scalars create new variable versions, earlier loops/branches/par blocks havoc what they assign
//! and contribute their invariants / postconditions, enclosing constructs contribute their
//! guards, ranges and contracts. Everything that cannot be encoded is dropped (facts may be
//! weakened, never strengthened).

use super::scope::{assigned_arrays, assigned_vars, field_key, may_change_heap};
use check::translate::Term;
use check::translate::{Translator, Z3Bool};
use front::ast::*;
use front::span::Span;
use std::collections::HashMap;
use std::sync::Arc;
use z3::ast::Ast;

/// Facts at a program point, with the translator state (variable versions) valid there.
pub struct Facts {
    pub tr: Translator,
    pub facts: Vec<Z3Bool>,
    /// The enclosing par arms, innermost last (thread variables and ranges).
    pub enclosing_par: Vec<ParArm>,
    /// The enclosing loops, innermost last.
    pub enclosing_loops: Vec<Stmt>,
}

impl Facts {
    pub fn push(&mut self, f: Option<Z3Bool>) {
        if let Some(f) = f {
            self.facts.push(f);
        }
    }

    /// Add the pure consequences of an assertion.
    pub fn assume(&mut self, e: &Expr) {
        let f = self.tr.fact(e);
        self.push(f);
        self.take_axioms();
    }

    /// Move the translator's axioms about the values made so far into Γ (valid facts).
    pub fn take_axioms(&mut self) {
        let axioms = std::mem::take(&mut self.tr.axioms);
        self.facts.extend(axioms);
    }
}

/// Where the walk stops.
#[derive(Clone, Copy, Debug)]
pub enum Point {
    /// Right before the statement whose span starts at this offset (its prefix included): the
    /// state on entry to a loop or par block, before its `for` initialiser runs.
    Before(usize),
}

/// Collect Γ at `point` inside `method` (whose class is `class`, if any).
pub fn facts_at(program: &Program, class: Option<&Class>, method: &Method, point: Point) -> Facts {
    let mut tr = Translator::new();
    // Types: fields of the class, parameters; pure functions for calls.
    if let Some(c) = class {
        for m in &c.members {
            if let Member::Field(f) = m {
                for n in &f.names {
                    tr.declare(&n.name, &f.ty);
                }
            }
        }
    }
    let fresh;
    let tables = match program.memo.get_or_init(|| FunctionTables::of(program)) {
        Some(tables) => tables,
        None => {
            fresh = FunctionTables::of(program);
            &fresh
        }
    };
    tr.functions = tables.for_class(class);
    tr.field_types = tables.fields.clone();
    tr.class_methods = tables.members.clone();
    for p in &method.params {
        tr.declare(&p.name.name, &p.ty);
    }
    // Ghost parameters (`given seq<int> s;`) are typed like the others: untyped, a sequence
    // read as an integer gave Z3 terms of mismatched sorts.
    for c in &method.prefix.clauses {
        if let (ClauseKind::Given | ClauseKind::Yields, ClauseBody::Decl(ty, n)) = (c.kind, &c.body)
        {
            tr.declare(&n.name, ty);
        }
    }
    let mut facts =
        Facts { tr, facts: Vec::new(), enclosing_par: Vec::new(), enclosing_loops: Vec::new() };
    // Sized parameter types give length facts; lengths are non-negative.
    for p in &method.params {
        if let TypeKind::Array(_, Some(n)) = &p.ty.kind {
            let e = Expr::bin(
                BinOp::Eq,
                Expr::synth(ExprKind::Field(
                    Box::new(Expr::name(&p.name.name)),
                    Ident::synth("length"),
                )),
                (**n).clone(),
            );
            facts.assume(&e);
        }
        if p.ty.array_dims() > 0 {
            let len = facts.tr.length(&p.name.name);
            let zero = z3::ast::Int::from_i64(check::ctx(), 0);
            facts.facts.push(len.ge(&zero));
        }
    }
    for c in &method.prefix.clauses {
        if c.kind.is_pre() {
            if let Some(e) = c.expr() {
                facts.assume(e);
            }
        }
    }
    facts.tr.old = Some(facts.tr.env.clone());
    if let MethodBody::Block(b) = &method.body {
        let Point::Before(off) = point;
        let everywhere: Vec<Expr> = method
            .prefix
            .clauses_of(ClauseKind::ContextEverywhere)
            .filter_map(|c| c.expr().cloned())
            .collect();
        walk_block(&mut facts, &b.stmts, off, &everywhere);
    }
    facts
}

/// The methods a translator may call, per class (class members, then top-level methods, which
/// win on a name clash), computed once per parse: copying every contract of the file at every
/// program point made fact collection grow with the size of the file.
#[derive(Debug, Default)]
pub struct FunctionTables {
    /// Keyed by the address of the class in the program's items (stable while the program,
    /// which owns this table, lives); `None` for code outside classes.
    tables: HashMap<Option<usize>, Arc<HashMap<String, Method>>>,
    /// Every class's field types, by (class, field): `o.f` on objects of any class.
    pub fields: Arc<HashMap<(String, String), Type>>,
    /// Every class's methods (signatures), by (class, name): `o.m(…)`.
    pub members: Arc<HashMap<(String, String), Method>>,
}

impl FunctionTables {
    fn of(program: &Program) -> FunctionTables {
        let top: Vec<Method> = program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Method(m) => Some(signature(m)),
                _ => None,
            })
            .collect();
        let table = |members: &[Member]| {
            let mut t = HashMap::new();
            for m in members {
                if let Member::Method(m) = m {
                    t.insert(m.name.name.clone(), signature(m));
                }
            }
            for m in &top {
                t.insert(m.name.name.clone(), m.clone());
            }
            Arc::new(t)
        };
        let mut tables = HashMap::new();
        tables.insert(None, table(&[]));
        let mut fields = HashMap::new();
        let mut members = HashMap::new();
        for item in &program.items {
            if let Item::Class(c) = item {
                tables.insert(Some(std::ptr::from_ref(c) as usize), table(&c.members));
                for m in &c.members {
                    match m {
                        Member::Field(f) => {
                            for n in &f.names {
                                fields.insert((c.name.name.clone(), n.name.clone()), f.ty.clone());
                            }
                        }
                        Member::Method(m) => {
                            members
                                .insert((c.name.name.clone(), m.name.name.clone()), signature(m));
                        }
                    }
                }
            }
        }
        FunctionTables { tables, fields: Arc::new(fields), members: Arc::new(members) }
    }

    fn for_class(&self, class: Option<&Class>) -> Arc<HashMap<String, Method>> {
        let key = class.map(|c| std::ptr::from_ref(c) as usize);
        match self.tables.get(&key) {
            Some(t) => t.clone(),
            // A class that is not an item of this program (a copy, or a synthesized one).
            None => {
                let mut t = (*self.tables.get(&None).cloned().unwrap_or_default()).clone();
                for m in class.map_or(&[][..], |c| &c.members[..]) {
                    if let Member::Method(m) = m {
                        t.entry(m.name.name.clone()).or_insert_with(|| signature(m));
                    }
                }
                Arc::new(t)
            }
        }
    }
}

/// A method as the translator needs it: contract and signature. A block body is left out: the
/// translator never reads it, and copying every method body at every program point made fact
/// collection cost as much as the rest of an optimization step on large files.
fn signature(m: &Method) -> Method {
    Method {
        prefix: m.prefix.clone(),
        modifiers: m.modifiers.clone(),
        kind: m.kind,
        ret: m.ret.clone(),
        name: m.name.clone(),
        type_params: m.type_params.clone(),
        params: m.params.clone(),
        body: match &m.body {
            MethodBody::Block(_) => MethodBody::Abstract,
            b => b.clone(),
        },
        span: m.span,
    }
}

/// Walk statements in order until the one containing `off`; returns true when found.
fn walk_block(f: &mut Facts, stmts: &[Stmt], off: usize, everywhere: &[Expr]) -> bool {
    for s in stmts {
        if s.span.start() == off {
            return true;
        }
        // A par statement of a front end's kernel form may be named by other text than the
        // arms it holds (a CUDA kernel's block-level par sits at the kernel's name): its arms
        // say where it is.
        let inside = s.span.contains_offset(off)
            || matches!(&s.kind, StmtKind::Par(p) if p.arms.iter().any(|a| a.span.contains_offset(off)));
        if inside {
            return descend(f, s, off, everywhere);
        }
        execute(f, s, everywhere);
    }
    false
}

/// Enter the statement `s` that contains the point.
fn descend(f: &mut Facts, s: &Stmt, off: usize, everywhere: &[Expr]) -> bool {
    match &s.kind {
        StmtKind::Block(b) => walk_block(f, &b.stmts, off, everywhere),
        StmtKind::Ghost(inner) => descend_or_at(f, inner, off, everywhere),
        StmtKind::If { cond, then, els } => {
            if then.span.contains_offset(off) {
                f.assume(cond);
                descend_or_at(f, then, off, everywhere)
            } else if let Some(e) = els {
                let neg = Expr::not(cond.clone());
                f.assume(&neg);
                descend_or_at(f, e, off, everywhere)
            } else {
                false
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            enter_loop(f, s, l, everywhere);
            if let Some(g) = &l.cond {
                f.assume(g);
            }
            f.enclosing_loops.push(s.clone());
            descend_or_at(f, &l.body, off, everywhere)
        }
        StmtKind::Par(p) => {
            let Some(arm) = p.arms.iter().find(|a| a.span.contains_offset(off)) else {
                return false;
            };
            enter_par(f, arm, everywhere);
            f.enclosing_par.push(arm.clone());
            descend_or_at(f, &arm.body, off, everywhere)
        }
        StmtKind::Invariant { body, .. } | StmtKind::Atomic { body, .. } => {
            walk_block(f, &body.stmts, off, everywhere)
        }
        _ => false,
    }
}

fn descend_or_at(f: &mut Facts, s: &Stmt, off: usize, everywhere: &[Expr]) -> bool {
    if s.span.start() == off {
        return true;
    }
    descend(f, s, off, everywhere)
}

/// Facts inside a par arm: iterator ranges, per-thread preconditions, context_everywhere.
pub fn enter_par(f: &mut Facts, arm: &ParArm, everywhere: &[Expr]) {
    f.tr.old = Some(f.tr.env.clone());
    for it in &arm.iters {
        f.tr.declare(&it.name.name, &it.ty);
        f.tr.havoc(&it.name.name);
        let lo = Expr::bin(BinOp::Le, it.lo.clone(), Expr::name(&it.name.name));
        let hi = Expr::bin(BinOp::Lt, Expr::name(&it.name.name), it.hi.clone());
        f.assume(&lo);
        f.assume(&hi);
    }
    for c in &arm.contract {
        if c.kind.is_pre() {
            if let Some(e) = c.expr() {
                f.assume(e);
            }
        }
    }
    for e in everywhere {
        f.assume(e);
    }
}

/// A loop statement `s` (of loop `l`) reached: its initialisation runs, what it assigns is
/// forgotten, and its invariants (and `context_everywhere`) hold, as at any iteration.
fn enter_loop(f: &mut Facts, s: &Stmt, l: &Loop, everywhere: &[Expr]) {
    for i in &l.init {
        execute(f, i, everywhere);
    }
    havoc_loop(f, s);
    for c in &l.prefix.clauses {
        if let Some(e) = c.expr() {
            f.assume(e);
        }
    }
    for e in everywhere {
        f.assume(e);
    }
}

/// Forget what the loop statement `s` may change: its variables, its arrays and fields, and the
/// whole heap when it calls a method or allocates.
pub fn havoc_loop(f: &mut Facts, s: &Stmt) {
    for v in assigned_vars(s) {
        f.tr.havoc(&v);
    }
    for a in assigned_arrays(s) {
        f.tr.havoc_heap(&a);
    }
    if may_change_heap(s, &|n| f.tr.functions.get(n).is_some_and(Method::is_pure)) {
        f.tr.havoc_all_heap();
    }
}

/// Symbolically execute a statement that lies before the point.
fn execute(f: &mut Facts, s: &Stmt, everywhere: &[Expr]) {
    // A method call (or `new`) may change any heap location before the point.
    if !matches!(s.kind, StmtKind::Block(_) | StmtKind::Ghost(_))
        && may_change_heap(s, &|n| f.tr.functions.get(n).is_some_and(Method::is_pure))
    {
        f.tr.havoc_all_heap();
    }
    match &s.kind {
        StmtKind::Decl { ty, vars } => {
            for d in vars {
                f.tr.declare(&d.name.name, ty);
                assign(f, &d.name.name, d.init.as_ref());
            }
        }
        StmtKind::Assign { target, value } => match &target.kind {
            ExprKind::Name(id) => assign(f, &id.name, Some(value)),
            // `o.f = v`: the field gets a new version, at which `o.f == v` (other objects'
            // `f` are forgotten with it: `o` may alias them).
            ExprKind::Field(..) if field_key(target).is_some() => {
                let v = f.tr.term(value).ok();
                if let Some(key) = field_key(target) {
                    f.tr.havoc_heap(&key);
                }
                let cur = f.tr.term(target).ok();
                if let (Some(cur), Some(v)) = (cur, v) {
                    let eq = match (cur, v) {
                        (Term::Int(a), Term::Int(b)) => Some(a._eq(&b)),
                        (Term::Bool(a), Term::Bool(b)) => Some(a._eq(&b)),
                        (a, b) => check::values::equal(&a, &b),
                    };
                    f.push(eq);
                }
                f.take_axioms();
            }
            _ => {
                for a in assigned_arrays(s) {
                    f.tr.havoc_heap(&a);
                }
            }
        },
        StmtKind::IncDec { target, inc } => {
            if let ExprKind::Name(id) = &target.kind {
                let op = if *inc { BinOp::Add } else { BinOp::Sub };
                let v = Expr::bin(op, Expr::name(&id.name), Expr::int(1));
                assign(f, &id.name, Some(&v));
            }
        }
        StmtKind::CompoundAssign { target, op, value } => {
            if let ExprKind::Name(id) = &target.kind {
                let v = Expr::bin(op.bin_op(), Expr::name(&id.name), value.clone());
                assign(f, &id.name, Some(&v));
            } else {
                for a in assigned_arrays(s) {
                    f.tr.havoc_heap(&a);
                }
            }
        }
        StmtKind::Block(b) => {
            for st in &b.stmts {
                execute(f, st, everywhere);
            }
        }
        StmtKind::Ghost(inner) => execute(f, inner, everywhere),
        StmtKind::Spec { kind: SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale, expr } => {
            f.assume(expr);
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            enter_loop(f, s, l, everywhere);
            if let Some(g) = &l.cond {
                let neg = Expr::not(g.clone());
                f.assume(&neg);
            }
        }
        StmtKind::Par(p) => {
            let before = f.tr.env.clone();
            for a in assigned_arrays(s) {
                f.tr.havoc_heap(&a);
            }
            for v in assigned_vars(s) {
                f.tr.havoc(&v);
            }
            // ∀ t ∈ [lo, hi): post(t), with \old meaning the state before the block.
            let saved_old = f.tr.old.replace(before);
            for arm in &p.arms {
                let mut post: Vec<Expr> = arm
                    .contract
                    .iter()
                    .filter(|c| c.kind.is_post())
                    .filter_map(|c| c.expr().cloned())
                    .collect();
                if post.is_empty() {
                    continue;
                }
                let body = post
                    .drain(..)
                    .reduce(|a, b| Expr::bin(BinOp::And, a, b))
                    .unwrap_or_else(|| Expr::synth(ExprKind::Bool(true)));
                let bindings: Vec<Binding> = arm
                    .iters
                    .iter()
                    .map(|it| Binding {
                        ty: it.ty.clone(),
                        name: it.name.clone(),
                        range: Some((Box::new(it.lo.clone()), Box::new(it.hi.clone()))),
                        span: Span::DUMMY,
                    })
                    .collect();
                let q = if bindings.is_empty() {
                    body
                } else {
                    Expr::synth(ExprKind::Quant {
                        kind: QuantKind::ForallStar,
                        bindings,
                        cond: None,
                        body: Box::new(body),
                    })
                };
                f.assume(&q);
            }
            f.tr.old = saved_old;
        }
        StmtKind::If { .. } | StmtKind::Invariant { .. } | StmtKind::Atomic { .. } => {
            for v in assigned_vars(s) {
                f.tr.havoc(&v);
            }
            for a in assigned_arrays(s) {
                f.tr.havoc_heap(&a);
            }
        }
        StmtKind::Expr(_) | StmtKind::Opaque(_) => {
            // A call or an opaque statement may change any heap location.
            f.tr.havoc_all_heap();
        }
        StmtKind::Barrier(b) => {
            for a in assigned_arrays(s) {
                f.tr.havoc_heap(&a);
            }
            f.tr.havoc_all_heap();
            for c in &b.contract {
                if c.kind.is_post() {
                    if let Some(e) = c.expr() {
                        f.assume(e);
                    }
                }
            }
        }
        _ => {}
    }
}

fn assign(f: &mut Facts, name: &str, value: Option<&Expr>) {
    let v = value.and_then(|e| f.tr.term(e).ok());
    f.tr.havoc(name);
    if let Some(v) = v {
        let cur = f.tr.var(name);
        let eq = match (cur, v) {
            (Term::Int(a), Term::Int(b)) => Some(a._eq(&b)),
            (Term::Bool(a), Term::Bool(b)) => Some(a._eq(&b)),
            (a @ Term::Val(..), b) => check::values::equal(&a, &b),
            _ => None,
        };
        f.push(eq);
        f.take_axioms();
    }
}
