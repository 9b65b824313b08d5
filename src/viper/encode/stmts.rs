//! Statements, loops, `par` blocks and barriers (`verification.md` §5.7–5.11).

use super::{quant, CallKind, Encoder, Frame, ParFrame, R};
use crate::front::ast::{self, ClauseKind, Expr, ExprKind, SpecKind, StmtKind as P, TypeKind};
use crate::front::span::Span;
use crate::viper::ast::*;
use std::collections::{HashMap, HashSet};

/// An abstract stand-in for one `\\old(e)` in a barrier-consistency method: (text of e,
/// function name, parameters, result type).
type OldFn = (String, String, Vec<(String, Ty)>, Ty);

/// Free variables of an expression, in order of first occurrence.
pub fn exp_vars(e: &Exp, bound: &mut Vec<String>, out: &mut Vec<String>) {
    match &e.kind {
        ExpKind::Var(n) => {
            if !bound.contains(n) && !out.contains(n) {
                out.push(n.clone());
            }
        }
        ExpKind::Forall(vs, trs, b) | ExpKind::Exists(vs, trs, b) => {
            let k = bound.len();
            bound.extend(vs.iter().map(|(n, _)| n.clone()));
            for t in trs.iter().flatten() {
                exp_vars(t, bound, out);
            }
            exp_vars(b, bound, out);
            bound.truncate(k);
        }
        ExpKind::Let(n, v, b) => {
            exp_vars(v, bound, out);
            bound.push(n.clone());
            exp_vars(b, bound, out);
            bound.pop();
        }
        _ => e.for_each_child(false, &mut |k| exp_vars(k, bound, out)),
    }
}

pub fn stmt_vars(s: &Stmt, out: &mut Vec<String>) {
    let mut b = Vec::new();
    let push = |n: &String, out: &mut Vec<String>| {
        if !out.contains(n) {
            out.push(n.clone());
        }
    };
    match &s.kind {
        StmtKind::VarDecl(..) | StmtKind::Label(_) | StmtKind::Comment(_) => {}
        StmtKind::Assign(l, r) => {
            exp_vars(l, &mut b, out);
            exp_vars(r, &mut b, out);
        }
        StmtKind::Call(ts, _, args) => {
            for t in ts {
                push(t, out);
            }
            for a in args {
                exp_vars(a, &mut b, out);
            }
        }
        StmtKind::New(x, _) => push(x, out),
        StmtKind::Inhale(e)
        | StmtKind::Exhale(e)
        | StmtKind::Assert(e)
        | StmtKind::Assume(e)
        | StmtKind::Fold(e)
        | StmtKind::Unfold(e) => exp_vars(e, &mut b, out),
        StmtKind::If(c, t, e) => {
            exp_vars(c, &mut b, out);
            t.iter().chain(e).for_each(|s| stmt_vars(s, out));
        }
        StmtKind::While(c, invs, body) => {
            exp_vars(c, &mut b, out);
            invs.iter().for_each(|i| exp_vars(&i.exp, &mut b, out));
            body.iter().for_each(|s| stmt_vars(s, out));
        }
    }
}

fn replace_old(e: Exp, label: &str) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::Old(None, x) => Exp {
            kind: ExpKind::Old(Some(label.to_string()), x),
            span: n.span,
        },
        k => Exp {
            kind: k,
            span: n.span,
        },
    })
}

/// Multiply every accessibility predicate's amount by `n` (all threads together).
fn scale(e: Exp, n: &Exp) -> Exp {
    e.map(&mut |x| match x.kind {
        ExpKind::Acc(l, p) if !matches!(p.kind, ExpKind::Wildcard) => Exp {
            kind: ExpKind::Acc(l, Box::new(Exp::bin("*", n.clone(), *p))),
            span: x.span,
        },
        k => Exp {
            kind: k,
            span: x.span,
        },
    })
}

/// One conjunct of a per-thread (or barrier) contract.
#[derive(Clone)]
struct Conj {
    exp: Exp,
    span: Span,
    clause: Span,
}

impl Encoder<'_> {
    fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.pending);
    }

    pub fn block(&mut self, b: &ast::Block, tail: bool) -> R<Vec<Stmt>> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        let mut ok = true;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            if self.stmt(s, tail && i + 1 == n, &mut out).is_err() {
                ok = false;
            }
        }
        self.scopes.pop();
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    fn sub(&mut self, s: &ast::Stmt, tail: bool) -> R<Vec<Stmt>> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        let r = self.stmt(s, tail, &mut out);
        self.scopes.pop();
        r.map(|_| out)
    }

    fn stmt(&mut self, s: &ast::Stmt, tail: bool, out: &mut Vec<Stmt>) -> R<()> {
        let o = |r: Role| Origin::new(r, Some(s.span));
        match &s.kind {
            P::Block(b) => out.extend(self.block(b, tail)?),
            P::Decl { ty, vars } => {
                let mut ok = true;
                for d in vars {
                    let v = self.declare(&d.name.name, ty, d.span)?;
                    if let Some(init) = &d.init {
                        let target = Expr::new(ExprKind::Name(d.name.clone()), d.name.span);
                        if self.assign(&target, init, d.span, out).is_err() {
                            ok = false;
                        }
                    } else {
                        let _ = v;
                    }
                }
                if !ok {
                    return Err(());
                }
            }
            P::Assign { target, value } => self.assign(target, value, s.span, out)?,
            P::CompoundAssign { target, op, value } => {
                let v = Expr::new(
                    ExprKind::Binary(
                        op.bin_op(),
                        Box::new(target.clone()),
                        Box::new(value.clone()),
                    ),
                    s.span,
                );
                self.assign(target, &v, s.span, out)?
            }
            P::IncDec { target, inc } => {
                let op = if *inc {
                    ast::BinOp::Add
                } else {
                    ast::BinOp::Sub
                };
                let v = Expr::new(
                    ExprKind::Binary(op, Box::new(target.clone()), Box::new(Expr::int(1))),
                    s.span,
                );
                self.assign(target, &v, s.span, out)?
            }
            P::Expr(e) => match &e.kind {
                ExprKind::Call { .. } => self.call_stmt(e, &[], out)?,
                _ => {
                    self.unsupported("an expression statement that is not a call", s.span);
                    return Err(());
                }
            },
            P::If { cond, then, els } => {
                let c = self.code(cond)?;
                self.flush(out);
                let t = self.sub(then, tail);
                let e = match els {
                    Some(e) => self.sub(e, tail),
                    None => Ok(vec![]),
                };
                out.push(Stmt::new(StmtKind::If(c, t?, e?), o(Role::Code)));
            }
            P::While(l) | P::For(l) => self.loop_(l, s.span, out)?,
            P::RangedFor {
                prefix,
                ty,
                var,
                lo,
                hi,
                body,
                ..
            } => {
                self.scopes.push(HashMap::new());
                let r = (|| {
                    let v = self.declare(&var.name, ty, var.span)?;
                    let lo = self.spec(lo)?;
                    let hi = self.spec(hi)?;
                    out.push(Stmt::new(
                        StmtKind::Assign(Exp::var(&v), lo.clone()),
                        o(Role::Code),
                    ));
                    let cond = Exp::bin("<", Exp::var(&v), hi.clone());
                    let mut invs = self.loop_invariants(prefix)?;
                    invs.insert(
                        0,
                        Contract {
                            exp: Exp::and(
                                Exp::bin("<=", lo, Exp::var(&v)),
                                Exp::bin("<=", Exp::var(&v), hi),
                            ),
                            origin: Origin::new(Role::Invariant, Some(var.span)),
                        },
                    );
                    let mut b = self.sub(body, false)?;
                    b.push(Stmt::new(
                        StmtKind::Assign(Exp::var(&v), Exp::bin("+", Exp::var(&v), Exp::int(1))),
                        Origin::synthetic(),
                    ));
                    out.push(Stmt::new(StmtKind::While(cond, invs, b), o(Role::Code)));
                    Ok(())
                })();
                self.scopes.pop();
                r?
            }
            P::Par(p) => self.par(p, out)?,
            P::Parallel { .. } => {
                self.unsupported("`parallel`/`sequential` blocks", s.span);
                return Err(());
            }
            P::Barrier(b) => self.barrier(b, s.span, out)?,
            P::Invariant {
                name,
                resource,
                body,
            } => {
                let r = self.spec(resource)?;
                self.push_conjuncts(r.clone(), Role::InvariantExhale, resource.span, out, true);
                self.invariants.insert(name.name.clone(), resource.clone());
                let b = self.block(body, false);
                self.invariants.remove(&name.name);
                out.extend(b?);
                out.push(Stmt::new(StmtKind::Inhale(r), o(Role::Synthetic)));
            }
            P::Atomic { names, body } => {
                let mut res = Vec::new();
                for n in names {
                    let Some(r) = self.invariants.get(&n.name).cloned() else {
                        self.bad(format!("no enclosing `invariant {}`", n.name), n.span);
                        return Err(());
                    };
                    let x = self.spec(&r)?;
                    out.push(Stmt::new(StmtKind::Inhale(x.clone()), o(Role::Synthetic)));
                    res.push((x, r.span));
                }
                out.extend(self.block(body, false)?);
                for (x, sp) in res.into_iter().rev() {
                    self.push_conjuncts(x, Role::InvariantExhale, sp, out, true);
                }
            }
            P::Return(e) => {
                if !tail {
                    self.unsupported("`return` before the end of the method", s.span);
                    return Err(());
                }
                if let Some(e) = e {
                    if self.ret.is_none() {
                        self.bad("`return` with a value in a void method", s.span);
                        return Err(());
                    }
                    let target = Expr::new(ExprKind::Result, e.span);
                    self.assign(&target, e, s.span, out)?;
                }
            }
            P::Spec { kind, expr } => self.spec_stmt(*kind, expr, s.span, out)?,
            P::Ghost(g) => self.stmt(g, tail, out)?,
            P::Annotation(_) => {}
            P::Opaque(op) => {
                self.unsupported(&format!("the `{}` statement", op.keyword), s.span);
                return Err(());
            }
        }
        Ok(())
    }

    /// Emit one `exhale` (after `assert`s of the pure parts, which read the heap before
    /// anything is removed) or `inhale` per conjunct of an encoded expression.
    fn push_conjuncts(
        &mut self,
        e: Exp,
        role: Role,
        span: Span,
        out: &mut Vec<Stmt>,
        exhale: bool,
    ) {
        let mut parts = Vec::new();
        quant::split_and(e, &mut parts);
        if exhale {
            let (perms, pure): (Vec<Exp>, Vec<Exp>) = parts.into_iter().partition(|p| p.has_acc());
            for p in pure {
                let sp = p.span.or(Some(span));
                out.push(Stmt::new(StmtKind::Assert(p), Origin::new(role, sp)));
            }
            parts = perms;
        }
        for p in parts {
            let sp = p.span.or(Some(span));
            let k = if exhale {
                StmtKind::Exhale(p)
            } else {
                StmtKind::Inhale(p)
            };
            out.push(Stmt::new(k, Origin::new(role, sp)));
        }
    }

    fn spec_stmt(&mut self, kind: SpecKind, e: &Expr, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        match kind {
            SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale | SpecKind::Exhale => {
                for c in e.conjuncts() {
                    let x = self.spec(c)?;
                    let origin = Origin::new(
                        if kind == SpecKind::Assert {
                            Role::UserAssert
                        } else {
                            Role::Code
                        },
                        Some(c.span),
                    )
                    .with_clause(span);
                    let k = match kind {
                        SpecKind::Assert => StmtKind::Assert(x),
                        SpecKind::Assume if !x.has_acc() => StmtKind::Assume(x),
                        SpecKind::Assume | SpecKind::Inhale => StmtKind::Inhale(x),
                        _ => StmtKind::Exhale(x),
                    };
                    out.push(Stmt::new(k, origin));
                }
            }
            SpecKind::Fold | SpecKind::Unfold => {
                let p = self.resource_call(e)?;
                let k = if kind == SpecKind::Fold {
                    StmtKind::Fold(p)
                } else {
                    StmtKind::Unfold(p)
                };
                out.push(Stmt::new(k, Origin::new(Role::Code, Some(span))));
            }
            SpecKind::Witness => {}
            _ => {
                self.unsupported(&format!("`{}`", kind.keyword()), span);
                return Err(());
            }
        }
        Ok(())
    }

    /// `target = value;` including allocation and method calls on the right.
    fn assign(&mut self, target: &Expr, value: &Expr, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        match &value.kind {
            ExprKind::NewArray(t, dims) => {
                let (m, field_ok) = match (&t.kind, dims.len()) {
                    (TypeKind::Int, 1) => ("new_int_array", true),
                    (TypeKind::Boolean | TypeKind::Bool, 1) => ("new_bool_array", true),
                    (TypeKind::Int, 2) => ("new_int_matrix", true),
                    _ => ("", false),
                };
                if !field_ok {
                    self.unsupported("this array allocation", value.span);
                    return Err(());
                }
                let args = dims.iter().map(|d| self.code(d)).collect::<R<Vec<_>>>()?;
                self.flush(out);
                let tmp = self.temp("arr", Ty::Arr);
                // Freshness: distinct from every array variable in scope (§5.2).
                let others: Vec<String> = self
                    .frames
                    .last()
                    .map(|f| {
                        f.names
                            .iter()
                            .filter(|n| **n != tmp && self.vtypes.get(*n) == Some(&Ty::Arr))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(Stmt::new(
                    StmtKind::Call(vec![tmp.clone()], m.into(), args),
                    Origin::new(Role::Call, Some(value.span)),
                ));
                for o in others {
                    out.push(Stmt::new(
                        StmtKind::Inhale(Exp::bin("!=", Exp::var(&tmp), Exp::var(o))),
                        Origin::synthetic(),
                    ));
                }
                let lhs = self.lvalue(target)?;
                out.push(Stmt::new(
                    StmtKind::Assign(lhs, Exp::var(tmp)),
                    Origin::new(Role::Code, Some(span)),
                ));
                Ok(())
            }
            ExprKind::NewObject(c, args) => {
                let Some(info) = self
                    .callables
                    .get(&(c.name.clone(), "constructor".to_string()))
                    .cloned()
                else {
                    // A class without constructor: allocate all fields.
                    let Some(ci) = self.classes.get(&c.name).cloned() else {
                        self.bad(format!("unknown class `{}`", c.name), c.span);
                        return Err(());
                    };
                    let tmp = self.temp("obj", Ty::Ref);
                    let fs = ci
                        .fields
                        .keys()
                        .map(|f| self.field_name(&c.name, f))
                        .collect();
                    out.push(Stmt::new(
                        StmtKind::New(tmp.clone(), fs),
                        Origin::synthetic(),
                    ));
                    let lhs = self.lvalue(target)?;
                    out.push(Stmt::new(
                        StmtKind::Assign(lhs, Exp::var(tmp)),
                        Origin::new(Role::Code, Some(span)),
                    ));
                    return Ok(());
                };
                let xs = args.iter().map(|a| self.code(a)).collect::<R<Vec<_>>>()?;
                self.flush(out);
                let tmp = self.temp("obj", Ty::Ref);
                out.push(Stmt::new(
                    StmtKind::Call(vec![tmp.clone()], info.viper, xs),
                    Origin::new(Role::Call, Some(value.span)),
                ));
                let lhs = self.lvalue(target)?;
                out.push(Stmt::new(
                    StmtKind::Assign(lhs, Exp::var(tmp)),
                    Origin::new(Role::Code, Some(span)),
                ));
                Ok(())
            }
            ExprKind::Call {
                recv, name, ghost, ..
            } if !ghost.is_empty()
                || self
                    .callee(recv.as_deref(), &name.name)
                    .is_some_and(|c| matches!(c.kind, CallKind::Method)) =>
            {
                let lhs = self.lvalue(target)?;
                self.call_stmt(value, &[lhs], out)
            }
            _ => {
                let v = self.code(value)?;
                let lhs = self.lvalue(target)?;
                self.flush(out);
                let role = if matches!(lhs.kind, ExpKind::Field(..)) {
                    Role::HeapWrite
                } else {
                    Role::Code
                };
                out.push(Stmt::new(
                    StmtKind::Assign(lhs, v),
                    Origin::new(role, Some(span)),
                ));
                Ok(())
            }
        }
    }

    fn lvalue(&mut self, target: &Expr) -> R<Exp> {
        match &target.kind {
            ExprKind::Name(_) | ExprKind::Index(..) | ExprKind::Field(..) | ExprKind::Result => {
                if let ExprKind::Name(id) = &target.kind {
                    if self.lookup(&id.name).is_some() && !self.pars.is_empty() {
                        // Locals of the enclosing method are parameters in a thread method.
                        let l = self
                            .lookup(&id.name)
                            .map(|l| l.viper.clone())
                            .unwrap_or_default();
                        let local = self.frames.last().is_some_and(|f| {
                            f.decls
                                .iter()
                                .any(|d| matches!(&d.kind, StmtKind::VarDecl(n, _) if *n == l))
                        });
                        if !local {
                            self.bad(
                                format!("`{}` is a local of the enclosing method and cannot be assigned inside a par block", id.name),
                                target.span,
                            );
                            return Err(());
                        }
                    }
                }
                self.code(target)
            }
            _ => {
                self.bad("this cannot be assigned to", target.span);
                Err(())
            }
        }
    }

    /// A method call as a statement, with optional assignment targets for its results.
    fn call_stmt(&mut self, e: &Expr, lhs: &[Exp], out: &mut Vec<Stmt>) -> R<()> {
        let ExprKind::Call {
            recv,
            name,
            args,
            ghost,
            ..
        } = &e.kind
        else {
            return Err(());
        };
        let Some(c) = self.callee(recv.as_deref(), &name.name) else {
            self.bad(format!("unknown method `{}`", name.name), name.span);
            return Err(());
        };
        if c.kind != CallKind::Method {
            // A pure function or predicate call as a statement: evaluate for its value only.
            let v = self.code(e)?;
            self.flush(out);
            if let Some(l) = lhs.first() {
                out.push(Stmt::new(
                    StmtKind::Assign(l.clone(), v),
                    Origin::new(Role::Code, Some(e.span)),
                ));
            }
            return Ok(());
        }
        let mut xs = Vec::new();
        if !c.is_static {
            xs.push(match recv.as_deref() {
                None
                | Some(Expr {
                    kind: ExprKind::This,
                    ..
                }) => Exp::var("this"),
                Some(r) => self.code(r)?,
            });
        }
        for a in args {
            xs.push(self.code(a)?);
        }
        // Ghost arguments: `with { g = e; }` supplies given parameters.
        let mut given: HashMap<String, Exp> = HashMap::new();
        if let Some(w) = &ghost.with {
            for s in &w.stmts {
                match &s.kind {
                    P::Assign {
                        target:
                            Expr {
                                kind: ExprKind::Name(g),
                                ..
                            },
                        value,
                    } if c.given.iter().any(|(n, _)| *n == g.name) => {
                        given.insert(g.name.clone(), self.code(value)?);
                    }
                    _ => {
                        self.unsupported("this statement in a `with` block", s.span);
                        return Err(());
                    }
                }
            }
        }
        for (g, e2) in &ghost.given {
            given.insert(g.name.clone(), self.code(e2)?);
        }
        for (g, _) in &c.given {
            match given.remove(g) {
                Some(x) => xs.push(x),
                None => {
                    self.bad(format!("the given parameter `{g}` is not supplied"), e.span);
                    return Err(());
                }
            }
        }
        let plain = xs.clone();
        if let Some(rd) = self.read_arg(&c, &plain[..plain.len() - c.given.len()])? {
            xs.push(rd);
        }
        self.flush(out);
        let mut targets = Vec::new();
        let mut after = Vec::new();
        if !matches!(c.ret.kind, TypeKind::Void) {
            let ty = self.viper_ty(&c.ret)?;
            let t = self.temp("res", ty);
            if let Some(l) = lhs.first() {
                after.push(Stmt::new(
                    StmtKind::Assign(l.clone(), Exp::var(&t)),
                    Origin::new(Role::Code, Some(e.span)),
                ));
            }
            targets.push(t);
        }
        let mut yscope = HashMap::new();
        for (y, t) in &c.yields {
            let vt = self.viper_ty(t)?;
            let tv = self.temp(y, vt);
            yscope.insert(
                y.clone(),
                super::Local {
                    viper: tv.clone(),
                    ty: t.clone(),
                },
            );
            targets.push(tv);
        }
        out.push(Stmt::new(
            StmtKind::Call(targets, c.viper.clone(), xs),
            Origin::new(Role::Call, Some(e.span)),
        ));
        out.extend(after);
        if let Some(t) = &ghost.then {
            self.scopes.push(yscope);
            let r = self.block(t, false);
            self.scopes.pop();
            out.extend(r?);
        }
        if let Some((l, y)) = ghost.yields.first() {
            self.unsupported("v2 `yields { … }` call arguments", l.span.to(y.span));
            return Err(());
        }
        Ok(())
    }

    fn loop_invariants(&mut self, prefix: &ast::Prefix) -> R<Vec<Contract>> {
        let mut invs: Vec<Contract> = self
            .everywhere
            .iter()
            .map(|c| Contract {
                exp: c.exp.clone(),
                origin: Origin {
                    role: Role::Invariant,
                    ..c.origin.clone()
                },
            })
            .collect();
        let mut ok = true;
        for c in &prefix.clauses {
            match c.kind {
                ClauseKind::LoopInvariant => {
                    let Some(e) = c.expr() else { continue };
                    match self.conjuncts(e, c.span) {
                        Ok(cs) => invs.extend(cs.into_iter().map(|(x, s)| Contract {
                            exp: x,
                            origin: Origin::new(Role::Invariant, Some(s)).with_clause(c.span),
                        })),
                        Err(()) => ok = false,
                    }
                }
                ClauseKind::Decreases => {}
                _ => {
                    self.unsupported(&format!("`{}` on a loop", c.kind.keyword()), c.span);
                    ok = false;
                }
            }
        }
        if ok {
            Ok(invs)
        } else {
            Err(())
        }
    }

    fn loop_(&mut self, l: &ast::Loop, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        self.scopes.push(HashMap::new());
        let r = (|| {
            for s in &l.init {
                self.stmt(s, false, out)?;
            }
            let invs = self.loop_invariants(&l.prefix)?;
            let cond = match &l.cond {
                Some(c) => self.code(c)?,
                None => Exp::bool(true),
            };
            if !self.pending.is_empty() {
                self.pending.clear();
                self.unsupported(
                    "a method call in a loop condition",
                    l.cond.as_ref().map_or(span, |c| c.span),
                );
                return Err(());
            }
            let mut body = self.sub(&l.body, false)?;
            for u in &l.update {
                self.stmt(u, false, &mut body)?;
            }
            out.push(Stmt::new(
                StmtKind::While(cond, invs, body),
                Origin::new(Role::Code, Some(l.keyword)),
            ));
            Ok(())
        })();
        self.scopes.pop();
        r
    }

    // ------------------------------------------------------------------------------------------
    // par blocks
    // ------------------------------------------------------------------------------------------

    fn contract_conjs(&mut self, clauses: &[ast::Clause], pre: bool) -> R<Vec<Conj>> {
        let mut out = Vec::new();
        let mut ok = true;
        for c in clauses {
            let wanted = if pre {
                c.kind.is_pre()
            } else {
                c.kind.is_post()
            };
            if !wanted {
                continue;
            }
            let Some(e) = c.expr() else { continue };
            match self.conjuncts(e, c.span) {
                Ok(cs) => out.extend(cs.into_iter().map(|(exp, span)| Conj {
                    exp,
                    span,
                    clause: c.span,
                })),
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    fn check_clauses(&mut self, clauses: &[ast::Clause], what: &str) -> R<()> {
        for c in clauses {
            if !matches!(
                c.kind,
                ClauseKind::Requires
                    | ClauseKind::Ensures
                    | ClauseKind::Context
                    | ClauseKind::ContextEverywhere
            ) {
                self.unsupported(&format!("`{}` on {what}", c.kind.keyword()), c.span);
                return Err(());
            }
        }
        Ok(())
    }

    /// Quantify a per-thread conjunct over all threads (§5.9(b)).
    fn all_threads(&mut self, iters: &[String], range: &[Exp], n_threads: &Exp, e: Exp) -> Exp {
        let unused: Vec<usize> = (0..iters.len())
            .filter(|k| !e.mentions_var(&iters[*k]))
            .collect();
        if !unused.is_empty()
            && unused.len() < iters.len()
            && e.has_acc()
            && range.len() == 2 * iters.len()
        {
            // A resource that depends on some thread variables only (a row `Perm(g[r], read)`
            // in a 2-D block over (r, c)) is held once per value of the others: quantify over
            // the variables it mentions and scale by the extents of the rest. Quantifying over
            // all of them would give a receiver that is not injective.
            let mut vars = Vec::new();
            let mut guards = Vec::new();
            let mut factor: Option<Exp> = None;
            for (k, v) in iters.iter().enumerate() {
                let (lo, hi) = (&range[2 * k], &range[2 * k + 1]);
                if unused.contains(&k) {
                    let (ExpKind::Binary("<=", l, _), ExpKind::Binary("<", _, h)) =
                        (&lo.kind, &hi.kind)
                    else {
                        return quant::quantify(self, iters.to_vec(), range.to_vec(), e);
                    };
                    let extent = Exp::bin("-", (**h).clone(), (**l).clone());
                    factor = Some(match factor {
                        Some(f) => Exp::bin("*", f, extent),
                        None => extent,
                    });
                } else {
                    vars.push(v.clone());
                    guards.push(lo.clone());
                    guards.push(hi.clone());
                }
            }
            let scaled = match factor {
                Some(f) => scale(e, &f),
                None => e,
            };
            return quant::quantify(self, vars, guards, scaled);
        }
        if iters.iter().any(|v| e.mentions_var(v)) {
            quant::quantify(self, iters.to_vec(), range.to_vec(), e)
        } else if e.has_acc() {
            scale(e, n_threads)
        } else {
            e
        }
    }

    fn par(&mut self, p: &ast::Par, out: &mut Vec<Stmt>) -> R<()> {
        if !p.prefix.clauses.is_empty() {
            self.unsupported("a region contract before `par`", p.prefix.span);
            return Err(());
        }
        let mut sites = Vec::new();
        for arm in &p.arms {
            sites.push(self.par_arm(arm)?);
        }
        for (label, _, _, _) in &sites {
            out.push(Stmt::new(
                StmtKind::Label(label.clone()),
                Origin::synthetic(),
            ));
        }
        for (_, guard, pre, _) in &mut sites {
            out.push(Stmt::new(
                StmtKind::If(guard.clone(), std::mem::take(pre), vec![]),
                Origin::new(Role::Synthetic, Some(p.keyword)),
            ));
        }
        for (_, guard, _, post) in sites {
            out.push(Stmt::new(
                StmtKind::If(guard, post, vec![]),
                Origin::new(Role::Synthetic, Some(p.keyword)),
            ));
        }
        Ok(())
    }

    /// Encode one arm: its thread method, and its call-site (label, guard, exhales, inhales).
    fn par_arm(&mut self, arm: &ast::ParArm) -> R<(String, Exp, Vec<Stmt>, Vec<Stmt>)> {
        self.check_clauses(&arm.contract, "a par block")?;
        self.par_counter += 1;
        let label = match &arm.label {
            Some(l) => l.name.clone(),
            None => format!("par{}", self.par_counter),
        };
        let host = self.frames_method_name().unwrap_or_else(|| {
            self.member_name(self.class.clone().as_deref(), &self.method_name.clone())
        });
        let mut mname = format!("{host}_{label}");
        while self.out.methods.iter().any(|m| m.name == mname) {
            mname.push('_');
        }
        let pre_label = self.fresh_name(&format!("{label}_pre"));
        // Everything visible here: the enclosing method's names, and for a nested par block,
        // also the names the enclosing thread method captures in turn.
        let outer_names: Vec<String> = self
            .frames
            .iter()
            .flat_map(|f| f.names.iter().cloned())
            .collect();

        // Bounds are evaluated in the enclosing method.
        let mut bounds = Vec::new();
        for it in &arm.iters {
            if !matches!(it.ty.kind, TypeKind::Int) {
                self.unsupported("a non-`int` iterator", it.span);
                return Err(());
            }
            let lo = self.spec(&it.lo)?;
            let hi = self.spec(&it.hi)?;
            bounds.push((lo, hi));
        }

        self.scopes.push(HashMap::new());
        self.frames.push(Frame::default());
        let saved_every = self.everywhere.len();
        let r = (|| {
            let mut iters = Vec::new();
            let mut range = Vec::new();
            let mut params = Vec::new();
            let mut pres = Vec::new();
            for (it, (lo, hi)) in arm.iters.iter().zip(&bounds) {
                let (v, t) = self.bind_param(&it.name.name, &it.ty)?;
                range.push(Exp::bin("<=", lo.clone(), Exp::var(&v)));
                range.push(Exp::bin("<", Exp::var(&v), hi.clone()));
                pres.push(Contract {
                    exp: Exp::and(
                        Exp::bin("<=", lo.clone(), Exp::var(&v)),
                        Exp::bin("<", Exp::var(&v), hi.clone()),
                    ),
                    origin: Origin::new(Role::ThreadPre, Some(it.span)),
                });
                params.push((v.clone(), t));
                iters.push(v);
            }
            let n_threads = bounds
                .iter()
                .map(|(lo, hi)| Exp::bin("-", hi.clone(), lo.clone()))
                .reduce(|a, b| Exp::bin("*", a, b))
                .unwrap_or_else(|| Exp::int(1));
            let nonempty = Exp::and_all(
                bounds
                    .iter()
                    .map(|(lo, hi)| Exp::bin("<", lo.clone(), hi.clone())),
            );

            // context_everywhere of the method (pure parts) holds in every thread.
            let every: Vec<Contract> = self
                .everywhere
                .iter()
                .filter(|c| !c.exp.has_acc())
                .cloned()
                .collect();
            let arm_pre = self.contract_conjs(&arm.contract, true)?;
            let arm_post = self.contract_conjs(&arm.contract, false)?;
            for c in &arm.contract {
                if c.kind == ClauseKind::ContextEverywhere {
                    if let Some(e) = c.expr() {
                        for (x, s) in self.conjuncts(e, c.span)? {
                            self.everywhere.push(Contract {
                                exp: x,
                                origin: Origin::new(Role::Invariant, Some(s)).with_clause(c.span),
                            });
                        }
                    }
                }
            }
            // Order: the method's facts and the thread-independent preconditions first, then
            // the thread ranges, then the rest. A range bound may need those facts to be
            // well-defined (`tid < vct_tile_ceiling(n, s)` needs `s > 0`), and the
            // thread-dependent preconditions need the ranges.
            let ranges = std::mem::take(&mut pres);
            for c in &every {
                pres.push(Contract {
                    exp: c.exp.clone(),
                    origin: Origin {
                        role: Role::ThreadPre,
                        ..c.origin.clone()
                    },
                });
            }
            let arm_pre_contract = |c: &Conj| Contract {
                exp: c.exp.clone(),
                origin: Origin::new(Role::ThreadPre, Some(c.span))
                    .with_clause(c.clause)
                    .with_label(&label),
            };
            let free = |c: &&Conj| !iters.iter().any(|v| c.exp.mentions_var(v));
            pres.extend(arm_pre.iter().filter(free).map(arm_pre_contract));
            pres.extend(ranges);
            pres.extend(arm_pre.iter().filter(|c| !free(c)).map(arm_pre_contract));
            let mut posts: Vec<Contract> = every
                .iter()
                .map(|c| Contract {
                    exp: c.exp.clone(),
                    origin: Origin {
                        role: Role::ThreadPost,
                        ..c.origin.clone()
                    },
                })
                .collect();
            posts.extend(arm_post.iter().map(|c| {
                Contract {
                    exp: c.exp.clone(),
                    origin: Origin::new(Role::ThreadPost, Some(c.span))
                        .with_clause(c.clause)
                        .with_label(&label),
                }
            }));

            // The thread's own range holds everywhere in its body (loops, nested par blocks).
            for (it, r) in arm.iters.iter().zip(range.chunks(2)) {
                self.everywhere.push(Contract {
                    exp: Exp::and_all(r.iter().cloned()),
                    origin: Origin::new(Role::Invariant, Some(it.span)),
                });
            }
            self.pars.push(ParFrame {
                label: label.clone(),
                iters: iters.clone(),
                range: range.clone(),
                method: mname.clone(),
                barriers: 0,
            });
            let body = self.sub(&arm.body, false);
            self.pars.pop();
            let body = body?;
            let frame = self.frames.last().cloned().unwrap_or_default();
            let mut stmts = frame.decls.clone();
            stmts.extend(body);

            // Captured values: what the thread mentions from the enclosing method.
            let mut used = Vec::new();
            let mut b = Vec::new();
            for c in pres.iter().chain(&posts) {
                exp_vars(&c.exp, &mut b, &mut used);
            }
            for s in &stmts {
                stmt_vars(s, &mut used);
            }
            let used: HashSet<String> = used.into_iter().collect();
            for n in &outer_names {
                if used.contains(n) {
                    if let Some(t) = self.vtypes.get(n) {
                        params.push((n.clone(), t.clone()));
                    }
                }
            }
            self.out.methods.push(Method {
                name: mname.clone(),
                params,
                returns: vec![],
                pres,
                posts,
                body: Some(stmts),
                kind: MethodKind::Thread,
                span: Some(arm.span),
            });

            // Call site.
            let mut pre_stmts = Vec::new();
            let mut pure = Vec::new();
            let mut perms = Vec::new();
            for c in &every {
                pure.push((
                    c.exp.clone(),
                    c.origin.span.unwrap_or(arm.span),
                    c.origin.clause,
                ));
            }
            for c in &arm_pre {
                let q = self.all_threads(&iters, &range, &n_threads, c.exp.clone());
                if c.exp.has_acc() {
                    perms.push((q, c.span, Some(c.clause)));
                } else {
                    pure.push((q, c.span, Some(c.clause)));
                }
            }
            for (q, s, cl) in pure {
                let mut o = Origin::new(Role::ParPre, Some(s)).with_label(&label);
                o.clause = cl;
                pre_stmts.push(Stmt::new(StmtKind::Assert(q), o));
            }
            for (q, s, cl) in perms {
                let mut o = Origin::new(Role::ParPre, Some(s)).with_label(&label);
                o.clause = cl;
                pre_stmts.push(Stmt::new(StmtKind::Exhale(q), o));
            }
            let mut post_stmts = Vec::new();
            let mut later = Vec::new();
            for c in &arm_post {
                let q = self.all_threads(&iters, &range, &n_threads, c.exp.clone());
                let q = replace_old(q, &pre_label);
                let o = Origin::new(Role::ParPost, Some(c.span))
                    .with_clause(c.clause)
                    .with_label(&label);
                if c.exp.has_acc() {
                    post_stmts.push(Stmt::new(StmtKind::Inhale(q), o));
                } else {
                    later.push(Stmt::new(StmtKind::Inhale(q), o));
                }
            }
            post_stmts.extend(later);
            Ok((pre_label.clone(), nonempty, pre_stmts, post_stmts))
        })();
        self.everywhere.truncate(saved_every);
        self.frames.pop();
        self.scopes.pop();
        r
    }

    /// The Viper name of the method currently being built, when it is a thread method.
    fn frames_method_name(&self) -> Option<String> {
        self.pars.last().map(|p| p.method.clone())
    }

    // ------------------------------------------------------------------------------------------
    // Barriers
    // ------------------------------------------------------------------------------------------

    fn barrier(&mut self, b: &ast::Barrier, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        self.check_clauses(&b.contract, "a barrier")?;
        let Some(pi) = self.pars.iter().rposition(|p| p.label == b.label.name) else {
            self.bad(
                format!("no enclosing par block labelled `{}`", b.label.name),
                b.label.span,
            );
            return Err(());
        };
        if pi + 1 != self.pars.len() {
            self.unsupported("a barrier of an outer par block inside a nested one", span);
            return Err(());
        }
        if let Some(body) = &b.body {
            if !body.stmts.is_empty() {
                self.unsupported("a barrier with a non-empty body", body.span);
                return Err(());
            }
        }
        let pre = self.contract_conjs(&b.contract, true)?;
        let post = self.contract_conjs(&b.contract, false)?;
        let frame = self.pars[pi].clone();
        if let Some(p) = self.pars.get_mut(pi) {
            p.barriers += 1;
        }
        let k = frame.barriers + 1;
        let lbl = b.label.name.clone();
        let mk = |role: Role, c: &Conj| {
            Origin::new(role, Some(c.span))
                .with_clause(c.clause)
                .with_label(&lbl)
        };

        // Enactment in this thread.
        out.push(Stmt::new(
            StmtKind::Comment(format!("barrier({lbl}) #{k}")),
            Origin::synthetic(),
        ));
        for c in pre.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(
                StmtKind::Assert(c.exp.clone()),
                mk(Role::BarrierPre, c),
            ));
        }
        for c in pre.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(
                StmtKind::Exhale(c.exp.clone()),
                mk(Role::BarrierPre, c),
            ));
        }
        for c in post.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(
                StmtKind::Inhale(c.exp.clone()),
                mk(Role::BarrierPost, c),
            ));
        }
        for c in post.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(
                StmtKind::Inhale(c.exp.clone()),
                mk(Role::BarrierPost, c),
            ));
        }

        // Consistency obligation: all threads' postconditions follow from, and take no more
        // permission than, all threads' preconditions.
        let iters = frame.iters.clone();
        let range = frame.range.clone();
        let mut nonempty = Vec::new();
        for pair in range.chunks(2) {
            if let [lo_le, lt_hi] = pair {
                if let (ExpKind::Binary(_, lo, _), ExpKind::Binary(_, _, hi)) =
                    (&lo_le.kind, &lt_hi.kind)
                {
                    nonempty.push(Exp::bin("<", (**lo).clone(), (**hi).clone()));
                }
            }
        }
        let one = Exp::int(1);
        let mut pres = vec![Contract {
            exp: Exp::and_all(nonempty),
            origin: Origin::new(Role::BarrierConsPre, Some(b.keyword)),
        }];
        // The thread's own range is quantified below, not a fact about one value of `tid`.
        for c in self
            .everywhere
            .iter()
            .filter(|c| !c.exp.has_acc() && !iters.iter().any(|v| c.exp.mentions_var(v)))
        {
            pres.push(Contract {
                exp: c.exp.clone(),
                origin: Origin {
                    role: Role::BarrierConsPre,
                    ..c.origin.clone()
                },
            });
        }
        // `\old` is not allowed in Viper preconditions. The consistency method must hold for
        // every pre-state, so each `\old(e)` becomes an abstract function of e's variables:
        // requires and ensures then talk about the same (arbitrary) old values.
        let mut olds: Vec<OldFn> = Vec::new();
        let method_name = frame.method.clone();
        let vtypes = self.vtypes.clone();
        let mut abstract_old = |e: Exp| -> Exp {
            e.map(&mut |n| match n.kind {
                ExpKind::Old(None, inner) => {
                    let key = quant::text(&inner);
                    let mut bound = Vec::new();
                    let mut vars = Vec::new();
                    exp_vars(&inner, &mut bound, &mut vars);
                    vars.sort();
                    let params: Vec<(String, Ty)> = vars
                        .iter()
                        .map(|v| (v.clone(), vtypes.get(v).cloned().unwrap_or(Ty::Int)))
                        .collect();
                    let ret = if key.contains("bool_val") {
                        Ty::Bool
                    } else {
                        Ty::Int
                    };
                    let fname = match olds.iter().find(|(t, ..)| *t == key) {
                        Some((_, f, ..)) => f.clone(),
                        None => {
                            let f = format!("{method_name}_barrier{k}_old{}", olds.len());
                            olds.push((key, f.clone(), params, ret));
                            f
                        }
                    };
                    let args = vars.into_iter().map(Exp::var).collect();
                    Exp {
                        kind: Exp::app(fname, args).kind,
                        span: n.span,
                    }
                }
                kind => Exp { kind, span: n.span },
            })
        };
        let pre: Vec<Conj> = pre
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.exp = abstract_old(c.exp);
                c
            })
            .collect();
        let post: Vec<Conj> = post
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.exp = abstract_old(c.exp);
                c
            })
            .collect();
        for (_, name, params, ret) in olds {
            self.out.functions.push(crate::viper::ast::Function {
                name,
                params,
                ret,
                pres: vec![],
                posts: vec![],
                body: None,
                span: None,
            });
        }
        let mut later = Vec::new();
        for c in &pre {
            let q = self.all_threads(&iters, &range, &one, c.exp.clone());
            let ct = Contract {
                exp: q,
                origin: mk(Role::BarrierConsPre, c),
            };
            if c.exp.has_acc() {
                pres.push(ct);
            } else {
                later.push(ct);
            }
        }
        pres.extend(later);
        let mut posts = Vec::new();
        let mut later = Vec::new();
        for c in &post {
            let q = self.all_threads(&iters, &range, &one, c.exp.clone());
            let ct = Contract {
                exp: q,
                origin: mk(Role::BarrierConsPost, c),
            };
            if c.exp.has_acc() {
                posts.push(ct);
            } else {
                later.push(ct);
            }
        }
        posts.extend(later);
        let mut used = Vec::new();
        let mut bound = Vec::new();
        for c in pres.iter().chain(&posts) {
            exp_vars(&c.exp, &mut bound, &mut used);
        }
        let params: Vec<(String, Ty)> = used
            .into_iter()
            .filter_map(|n| self.vtypes.get(&n).map(|t| (n, t.clone())))
            .collect();
        self.out.methods.push(Method {
            name: format!("{}_barrier{k}", frame.method),
            params,
            returns: vec![],
            pres,
            posts,
            body: Some(vec![]),
            kind: MethodKind::BarrierConsistency,
            span: Some(b.keyword),
        });
        Ok(())
    }
}
