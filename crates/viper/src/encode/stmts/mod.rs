//! Statements, loops, `par` blocks and barriers (`verification.md` §5.7–5.11).
//!
//! Statements, assignments, calls and loops are here; `par` holds `par` blocks (per-thread
//! contracts, thread methods), `barrier` barriers, `vec` v1 vector blocks (lock-step lanes), and
//! `vars` the free variables of Viper expressions and statements.

mod barrier;
mod bounds;
mod jumps;
mod loop_reads;
mod par;
mod region;
mod sendrecv;
mod uniform;
mod vars;
mod vec;
mod wands;

use super::{quant, CallKind, Encoder, R};
use crate::ast::*;
use front::ast::{self, ClauseKind, Expr, ExprKind, SpecKind, StmtKind as P, TypeKind};
use front::span::Span;
use std::collections::HashMap;

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
                let v = op.value_of(target, value, s.span);
                self.assign(target, &v, s.span, out)?
            }
            P::IncDec { target, inc } => {
                let op = if *inc { ast::BinOp::Add } else { ast::BinOp::Sub };
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
            P::RangedFor { prefix, ty, var, lo, hi, body, .. } => {
                self.scopes.push(HashMap::new());
                let r = (|| {
                    let v = self.declare(&var.name, ty, var.span)?;
                    let lo = self.spec(lo)?;
                    let hi = self.spec(hi)?;
                    out.push(Stmt::new(StmtKind::Assign(Exp::var(&v), lo.clone()), o(Role::Code)));
                    let cond = Exp::bin("<", Exp::var(&v), hi.clone());
                    let moving = [var.name.as_str()];
                    let mut invs =
                        self.with_loop_reads(prefix, &[body.as_ref()], &moving, out, |me| {
                            me.loop_invariants(prefix)
                        })?;
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
            P::Parallel { sequential: true, body } => {
                // v2 `sequential { par …; par …; }`: the regions one after the other.
                for (k, st) in body.iter().enumerate() {
                    self.stmt(st, tail && k + 1 == body.len(), out)?;
                }
            }
            P::Parallel { sequential: false, body } => {
                // v2 `parallel { par …; par …; }`: one launch of all arms, as v1's `and`.
                let mut arms = Vec::new();
                for st in body {
                    match &st.kind {
                        P::Par(p) if p.prefix.clauses.is_empty() => {
                            arms.extend(p.arms.iter().cloned())
                        }
                        _ => {
                            self.unsupported(
                                "a `parallel` block holding anything but `par` blocks",
                                st.span,
                            );
                            return Err(());
                        }
                    }
                }
                let p = ast::Par {
                    prefix: ast::Prefix::default(),
                    arms,
                    keyword: s.span,
                    loop_form: false,
                };
                self.par(&p, out)?;
            }
            P::Barrier(b) => self.barrier(b, s.span, out)?,
            P::Invariant { name, resource, body } => {
                let r = self.spec(resource)?;
                self.push_conjuncts(r.clone(), Role::InvariantExhale, resource.span, out, true);
                self.invariants.insert(name.name.clone(), resource.clone());
                self.fence += 1;
                let b = self.block(body, false);
                self.fence -= 1;
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
                self.fence += 1;
                let b = self.block(body, false);
                self.fence -= 1;
                out.extend(b?);
                for (x, sp) in res.into_iter().rev() {
                    self.push_conjuncts(x, Role::InvariantExhale, sp, out, true);
                }
            }
            P::Vec { iter, body } => self.vec_block(iter, body, out)?,
            P::Return(e) => {
                if let Some(e) = e {
                    if self.ret.is_none() {
                        self.bad("`return` with a value in a void method", s.span);
                        return Err(());
                    }
                    let target = Expr::new(ExprKind::Result, e.span);
                    self.assign(&target, e, s.span, out)?;
                }
                if !tail {
                    self.early_return(s.span, out)?;
                }
            }
            P::Spec { kind, expr } => self.spec_stmt(*kind, expr, s.span, out)?,
            P::Ghost(g) => self.stmt(g, tail, out)?,
            P::Annotation(_) => {}
            P::Opaque(op) if op.keyword == "goto" || op.keyword == "label" => {
                self.jump_stmt(op, out)?
            }
            P::Opaque(op) if op.keyword == ast::UNDECLARED_CALL => {
                let name = ast::undeclared_callee(op);
                self.diags.push(
                    diag::Diagnostic::error("V-UNDECLARED", format!("`{name}` is not declared"))
                        .with_primary(s.span, "a call to a function without a declaration")
                        .with_help(format!(
                            "declare `{name}` with a contract saying what it reads and writes; an undeclared function's effect on memory is unknown"
                        )),
                );
                return Err(());
            }
            P::Opaque(op) => {
                if self.sync_stmt(op, out)?
                    || self.wand_stmt(op, out)?
                    || self.sendrecv_stmt(op, out)?
                {
                    return Ok(());
                }
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
            let k = if exhale { StmtKind::Exhale(p) } else { StmtKind::Inhale(p) };
            out.push(Stmt::new(k, Origin::new(role, sp)));
        }
    }

    fn spec_stmt(&mut self, kind: SpecKind, e: &Expr, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        match kind {
            // One exhale for the whole assertion: exhaling `Perm(x.f, 1)` first would leave
            // `x.f == 1` after it unframed (the state before the exhale frames every part).
            SpecKind::Exhale => {
                let parts =
                    e.conjuncts().into_iter().map(|c| self.spec(c)).collect::<R<Vec<Exp>>>()?;
                let x = Exp::and_all(parts);
                let origin = Origin::new(Role::Code, Some(e.span)).with_clause(span);
                out.push(Stmt::new(StmtKind::Exhale(x), origin));
            }
            SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale => {
                for c in e.conjuncts() {
                    let x = self.spec(c)?;
                    let origin = Origin::new(
                        if kind == SpecKind::Assert { Role::UserAssert } else { Role::Code },
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
                // `[π]…[π']p(…)`: the predicate with the product of the amounts.
                let mut inner = e;
                let mut amounts = Vec::new();
                while let ExprKind::Scale(q, r) = &inner.kind {
                    amounts.push(self.perm_amount(q)?);
                    inner = r;
                }
                let amount = amounts.into_iter().reduce(|a, b| Exp::bin("*", a, b));
                let inline = match &inner.kind {
                    ExprKind::Call { recv, name, args, .. } => self
                        .callee(recv.as_deref(), &name.name, args)
                        .is_some_and(|c| c.kind == CallKind::Predicate && c.inline.is_some()),
                    _ => false,
                };
                if inline {
                    // An inline predicate is its body: folding or unfolding it changes nothing,
                    // but the (scaled) body must be held.
                    let mut b = self.spec(inner)?;
                    if let Some(q) = &amount {
                        b = self.scale_by(b, q, span)?;
                    }
                    out.push(Stmt::new(
                        StmtKind::Assert(b),
                        Origin::new(Role::UserAssert, Some(span)),
                    ));
                    return Ok(());
                }
                let what = if kind == SpecKind::Fold { "folded" } else { "unfolded" };
                self.check_not_abstract(inner, what)?;
                let mut p = self.resource_call(inner)?;
                if let Some(q) = amount {
                    p = Exp::new(ExpKind::Acc(Box::new(p), Box::new(q)), Some(span));
                }
                let k =
                    if kind == SpecKind::Fold { StmtKind::Fold(p) } else { StmtKind::Unfold(p) };
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
        if matches!(value.kind, ExprKind::NoneOpt) {
            // `None` takes its element type from the target: the empty sequence of it.
            if let Some(TypeKind::Generic1(ast::Generic1::Option, t)) =
                self.type_of(target).map(|t| t.kind)
            {
                let empty = ExprKind::EmptyCollection(ast::CollKind::Seq, *t);
                return self.assign(target, &Expr::new(empty, value.span), span, out);
            }
        }
        match &value.kind {
            ExprKind::NewArray(t, dims) => {
                // `new T[n][]` (fewer sizes than dimensions) leaves inner arrays null.
                if t.array_dims() > 0 {
                    self.unsupported("an array allocation without all its sizes", value.span);
                    return Err(());
                }
                let Some(m) = self.alloc_method(t, dims.len()) else {
                    self.unsupported("this array allocation", value.span);
                    return Err(());
                };
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
                    StmtKind::Call(vec![tmp.clone()], m, args),
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
            ExprKind::NewObject(_, _, ghost)
                if ghost.then.is_some() || !ghost.yields.is_empty() =>
            {
                self.unsupported("`new` with yielded ghost results (`then`/`yields`)", value.span);
                Err(())
            }
            ExprKind::NewObject(c, args, ghost) => {
                let Some(info) = self.pick_overload(&c.name, "constructor", args) else {
                    if !ghost.is_empty() {
                        self.bad(
                            format!(
                                "class `{}` has no constructor to take ghost arguments",
                                c.name
                            ),
                            value.span,
                        );
                        return Err(());
                    }
                    // A class without constructor: allocate all fields.
                    let Some(ci) = self.classes.get(&c.name).cloned() else {
                        self.bad(format!("unknown class `{}`", c.name), c.span);
                        return Err(());
                    };
                    let tmp = self.temp("obj", Ty::Ref);
                    let fs = ci.fields.keys().map(|f| self.field_name(&c.name, f)).collect();
                    out.push(Stmt::new(StmtKind::New(tmp.clone(), fs), Origin::synthetic()));
                    let lhs = self.lvalue(target)?;
                    out.push(Stmt::new(
                        StmtKind::Assign(lhs, Exp::var(tmp)),
                        Origin::new(Role::Code, Some(span)),
                    ));
                    return Ok(());
                };
                let mut xs = args
                    .iter()
                    .zip(Self::param_types(&info, args.len()))
                    .map(|(a, t)| self.expr_to(a, t.as_ref(), true))
                    .collect::<R<Vec<_>>>()?;
                // A constructor's `given` parameters, from `with { g = e; }` / `given { … }`.
                xs.extend(self.given_args(&info, ghost, value.span, None)?);
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
            ExprKind::Call { recv, name, ghost, args, .. }
                if !ghost.is_empty()
                    || self
                        .callee(recv.as_deref(), &name.name, args)
                        .is_some_and(|c| matches!(c.kind, CallKind::Method)) =>
            {
                let lhs = self.lvalue(target)?;
                self.call_stmt(value, &[lhs], out)
            }
            _ => {
                let want = self.type_of(target);
                let v = self.expr_to(value, want.as_ref(), true)?;
                let lhs = self.lvalue(target)?;
                self.flush(out);
                let role = if matches!(lhs.kind, ExpKind::Field(..)) {
                    Role::HeapWrite
                } else {
                    Role::Code
                };
                out.push(Stmt::new(StmtKind::Assign(lhs, v), Origin::new(role, Some(span))));
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
                        let l = self.lookup(&id.name).map(|l| l.viper.clone()).unwrap_or_default();
                        let local = self.frames.last().is_some_and(|f| {
                            f.decls
                                .iter()
                                .any(|d| matches!(&d.kind, StmtKind::VarDecl(n, _) if *n == l))
                        });
                        if !local {
                            let msg = if self.in_barrier_body {
                                format!("`{}` is declared outside this barrier body, which runs once for all threads, and cannot be assigned in it", id.name)
                            } else {
                                format!("`{}` is a local of the enclosing method and cannot be assigned inside a par block", id.name)
                            };
                            self.bad(msg, target.span);
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
    /// The `given` arguments of a call of `c` (in `c`'s order) from its ghost arguments: v1's
    /// `with { g = e; }` and v2's `given { g = e }`. A `with` assignment to one of the callee's
    /// `yields` goes to `with_yields` where the caller takes them, and is refused elsewhere.
    pub(in crate::encode) fn given_args<'e>(
        &mut self,
        c: &super::Callable,
        ghost: &'e ast::GhostArgs,
        span: Span,
        mut with_yields: Option<&mut Vec<(&'e Expr, &'e ast::Ident, Span)>>,
    ) -> R<Vec<Exp>> {
        let mut given: HashMap<String, Exp> = HashMap::new();
        if let Some(w) = &ghost.with {
            for s in &w.stmts {
                match &s.kind {
                    P::Assign { target: Expr { kind: ExprKind::Name(g), .. }, value }
                        if with_yields.is_some()
                            && !c.given.iter().any(|(n, _)| *n == g.name)
                            && c.yields.iter().any(|(n, _)| *n == g.name)
                            && matches!(value.kind, ExprKind::Name(_)) =>
                    {
                        if let Some(w) = with_yields.as_deref_mut() {
                            w.push((value, g, s.span));
                        }
                    }
                    P::Assign { target: Expr { kind: ExprKind::Name(g), .. }, value } => {
                        let Some((_, t)) = c.given.iter().find(|(n, _)| *n == g.name) else {
                            self.unsupported("this statement in a `with` block", s.span);
                            return Err(());
                        };
                        given.insert(g.name.clone(), self.expr_to(value, Some(t), true)?);
                    }
                    _ => {
                        self.unsupported("this statement in a `with` block", s.span);
                        return Err(());
                    }
                }
            }
        }
        for (g, e2) in &ghost.given {
            let t = c.given.iter().find(|(n, _)| *n == g.name).map(|(_, t)| t.clone());
            given.insert(g.name.clone(), self.expr_to(e2, t.as_ref(), true)?);
        }
        let mut xs = Vec::new();
        for (g, _) in &c.given {
            match given.remove(g) {
                Some(x) => xs.push(x),
                None => {
                    self.bad(format!("the given parameter `{g}` is not supplied"), span);
                    return Err(());
                }
            }
        }
        Ok(xs)
    }

    fn call_stmt(&mut self, e: &Expr, lhs: &[Exp], out: &mut Vec<Stmt>) -> R<()> {
        let ExprKind::Call { recv, name, args, ghost, .. } = &e.kind else {
            return Err(());
        };
        let Some(c) = self.callee(recv.as_deref(), &name.name, args) else {
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
                None | Some(Expr { kind: ExprKind::This, .. }) => Exp::var("this"),
                Some(r) => self.code(r)?,
            });
        }
        for (a, t) in args.iter().zip(Self::param_types(&c, args.len())) {
            xs.push(self.expr_to(a, t.as_ref(), true)?);
        }
        // VerCors 1 also binds a `yields` variable in `with` (`with { P = Q; }`, the callee's
        // name on the left): after the call, the caller's `Q` gets the yielded `P`.
        let mut with_yields: Vec<(&Expr, &ast::Ident, Span)> = Vec::new();
        xs.extend(self.given_args(&c, ghost, e.span, Some(&mut with_yields))?);
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
            yscope.insert(y.clone(), super::Local { viper: tv.clone(), ty: t.clone() });
            targets.push(tv);
        }
        // A kernel's launch (the C front end gives a kernel its launch sizes as parameters):
        // its failures say so.
        let mut origin = Origin::new(Role::Call, Some(e.span));
        if c.param_names.iter().any(|n| n.starts_with("gridDim.")) {
            origin = origin.with_label("launch");
        }
        out.push(Stmt::new(StmtKind::Call(targets, c.viper.clone(), xs), origin));
        out.extend(after);
        if let Some(t) = &ghost.then {
            // `then { x = y; }` stores a yielded value `y` into the caller's `x`: the right
            // side reads the yields, the left side the caller's scope (the same name may
            // stand on both sides).
            for st in &t.stmts {
                let ast::StmtKind::Assign { target, value } = &st.kind else {
                    self.unsupported(
                        "a statement other than an assignment in a `then` block",
                        st.span,
                    );
                    return Err(());
                };
                let want = self.type_of(target);
                self.scopes.push(yscope.clone());
                let v = self.expr_to(value, want.as_ref(), true);
                self.scopes.pop();
                let v = v?;
                let l = self.lvalue(target)?;
                out.push(Stmt::new(StmtKind::Assign(l, v), Origin::new(Role::Code, Some(st.span))));
            }
        }
        // v2 `yields { x = y, … }`: as v1's `then { x = y; }`, the caller's `x` gets the yielded
        // `y`.
        let v2_targets: Vec<Expr> = ghost
            .yields
            .iter()
            .map(|(x, _)| Expr::new(ExprKind::Name(x.clone()), x.span))
            .collect();
        let v2_yields =
            v2_targets.iter().zip(&ghost.yields).map(|(t, (x, y))| (t, y, x.span.to(y.span)));
        for (target, y, span) in with_yields.into_iter().chain(v2_yields) {
            if !yscope.contains_key(&y.name) {
                self.bad(format!("`{}` is not a yielded parameter of the callee", y.name), y.span);
                return Err(());
            }
            let want = self.type_of(target);
            let ye = Expr::synth(ExprKind::Name(y.clone()));
            self.scopes.push(yscope.clone());
            let v = self.expr_to(&ye, want.as_ref(), true);
            self.scopes.pop();
            let v = v?;
            let l = self.lvalue(target)?;
            out.push(Stmt::new(StmtKind::Assign(l, v), Origin::new(Role::Code, Some(span))));
        }
        Ok(())
    }

    fn loop_invariants(&mut self, prefix: &ast::Prefix) -> R<Vec<Contract>> {
        let mut invs: Vec<Contract> = self
            .everywhere
            .iter()
            .map(|c| Contract {
                exp: c.exp.clone(),
                origin: Origin { role: Role::Invariant, ..c.origin.clone() },
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
                ClauseKind::Decreases => match self.measure(c) {
                    Ok(ms) => invs.extend(ms),
                    Err(()) => ok = false,
                },
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

    /// In a thread of a par block: the bounds of the products in the invariants over the
    /// threads' ranged variables (`bounds`: valid arithmetic, which Z3 does not derive), as
    /// invariants before the ones that index with them. A loop inside a kernel indexes with
    /// `blockIdx.x * blockDim.x + i` as its barriers and contracts do.
    fn product_bounds(&mut self, invs: &mut Vec<Contract>) {
        if self.pars.is_empty() {
            return;
        }
        let known: Vec<Exp> = self
            .pars
            .iter()
            .flat_map(|p| p.range.chunks(2))
            .filter_map(|c| match c {
                [lo, hi] => Some(Exp::and(lo.clone(), hi.clone())),
                _ => None,
            })
            .collect();
        let exps: Vec<&Exp> = invs.iter().map(|c| &c.exp).collect();
        let facts = bounds::facts_from(known.iter(), &exps);
        let at = self.everywhere.len().min(invs.len());
        let origin = Origin::new(Role::Invariant, None);
        let facts = facts.into_iter().map(|exp| Contract { exp, origin: origin.clone() });
        invs.splice(at..at, facts);
    }

    fn loop_(&mut self, l: &ast::Loop, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        self.scopes.push(HashMap::new());
        let r = (|| {
            for s in &l.init {
                self.stmt(s, false, out)?;
            }
            let mut stmts: Vec<&ast::Stmt> = vec![&l.body];
            stmts.extend(l.update.iter());
            let mut invs = self
                .with_loop_reads(&l.prefix, &stmts, &[], out, |me| me.loop_invariants(&l.prefix))?;
            self.product_bounds(&mut invs);
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
}
