//! Statements to instructions (semantics.md §4.5): each method body becomes a flat list of
//! [`Instr`] with explicit join points (branches, loops, `par` arms, barriers), so that a warp
//! can stop at a barrier and resume later without an interpreter stack to save.

use super::*;

impl<'a> Compiler<'a> {
    pub(super) fn block(&mut self, b: &Block, ghost: bool) {
        self.scope.push();
        self.stmt_list(&b.stmts, ghost);
        self.scope.pop();
    }

    fn pc(&self) -> usize {
        self.code.len()
    }

    fn target(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> Option<Target> {
        match &e.kind {
            ExprKind::Name(id) => {
                if let Some((s, _)) = self.scope.lookup(&id.name) {
                    return Some(Target::Local(s));
                }
                let fid = self.field_id(&id.name);
                Some(Target::Field(CE::This, fid))
            }
            ExprKind::Field(obj, f) => {
                let o = self.expr(obj, pre);
                let fid = self.field_id(&f.name);
                Some(Target::Field(o, fid))
            }
            ExprKind::Index(a, i) => {
                let a = self.expr(a, pre);
                let i = self.expr(i, pre);
                Some(Target::Index(a, i))
            }
            _ => None,
        }
    }

    fn target_read(t: &Target, span: Span) -> CE {
        match t {
            Target::Local(s) => CE::Local(*s),
            Target::Field(o, f) => CE::Field(Box::new(o.clone()), *f, span),
            Target::Index(a, i) => CE::Index(Box::new(a.clone()), Box::new(i.clone()), span),
        }
    }

    /// `es` compiled in order, the instructions their calls need emitted first.
    fn hoisted_exprs(&mut self, es: &[Expr]) -> Vec<CE> {
        let mut pre = Vec::new();
        let out = es.iter().map(|e| self.expr(e, &mut Some(&mut pre))).collect();
        self.code.extend(pre);
        out
    }

    /// Assignment of `value` (an AST expression) to `target`, with calls and allocations as
    /// their own instructions.
    fn assign(&mut self, target: Target, value: &Expr, span: Span, ghost: bool) {
        self.assign_to(target, value, span, ghost, false)
    }

    /// [`Self::assign`]; `int`: the target holds an integer, so a float value is truncated
    /// toward zero on the way in (C's `int k = x;`).
    fn assign_to(&mut self, target: Target, value: &Expr, span: Span, ghost: bool, int: bool) {
        match &value.kind {
            ExprKind::NewArray(t, dims) => {
                let d = self.hoisted_exprs(dims);
                self.code.push(Instr::Alloc { target, elem: Ty::from_ast(t), dims: d, span });
            }
            ExprKind::NewObject(_, _, ghost)
                if ghost.then.is_some() || !ghost.yields.is_empty() =>
            {
                self.code.push(Instr::Unsupported("`yields` of a constructor".into(), value.span))
            }
            ExprKind::NewObject(c, args, _) => {
                let mut a = self.hoisted_exprs(args);
                match self.out.classes.iter().position(|k| k.name == c.name) {
                    Some(ci) => {
                        let ctor = self.out.classes[ci].ctor;
                        // The constructor's `given` parameters follow its own (`with`/`given`).
                        if let Some(k) = ctor {
                            let mut pre = Vec::new();
                            a.extend(self.given_args(k, value, &mut Some(&mut pre)));
                            self.code.extend(pre);
                        }
                        if let Some(k) = ctor {
                            self.cur_calls.push(k);
                        }
                        self.code.push(Instr::NewObj {
                            target,
                            class: ci as u32,
                            ctor,
                            args: a,
                            span,
                        });
                    }
                    None => self
                        .code
                        .push(Instr::Unsupported(
                            format!(
                                "unknown class `{}` (if another file declares it, pass that file with --with FILE)",
                                c.name
                            ),
                            span,
                        )),
                }
            }
            ExprKind::Call { .. } if self.nonpure_call(value).is_some() => {
                self.call_stmt(Some(target), value, span);
            }
            _ => {
                let mut pre = Vec::new();
                let mut v = self.expr(value, &mut Some(&mut pre));
                if int && self.may_be_real(value) {
                    v = CE::Ghost(GOp::Trunc, vec![v], span);
                }
                self.code.extend(pre);
                self.code.push(Instr::Assign { simple: false, target, value: v, span, ghost });
            }
        }
    }

    /// Whether `e` may have a float value: a float literal, or a local or array cell of a
    /// float type (`rational`, which floats are here, `Ty::from_ast`) in it.
    pub(super) fn may_be_real(&self, e: &Expr) -> bool {
        let rational = |t: Option<(u32, &Ty)>| match t {
            Some((_, Ty::Array(el))) => **el == Ty::Rational,
            Some((_, t)) => *t == Ty::Rational,
            None => false,
        };
        front::visit::any_expr(e, &mut |x| match &x.kind {
            ExprKind::Name(n) => rational(self.scope.lookup(&n.name)),
            ExprKind::Opaque(_) => front::exprtext::float_literal(x).is_some(),
            _ => false,
        })
    }

    /// Whether an assignment target holds integers (a local, or a cell of an array local).
    fn int_target(&self, target: &Expr) -> bool {
        let name = match &target.kind {
            ExprKind::Name(n) => n,
            ExprKind::Index(a, _) => match &a.kind {
                ExprKind::Name(n) => {
                    return matches!(self.scope.lookup(&n.name), Some((_, Ty::Array(el))) if **el == Ty::Int)
                }
                _ => return false,
            },
            _ => return false,
        };
        matches!(self.scope.lookup(&name.name), Some((_, Ty::Int)))
    }

    pub(super) fn call_stmt(&mut self, target: Option<Target>, e: &Expr, span: Span) {
        let ExprKind::Call { recv, name, args, .. } = &e.kind else {
            return;
        };
        let Some(m) = self.resolve_call(recv.as_deref(), &name.name, args.len()) else {
            self.code.push(Instr::Unsupported(format!("unknown method `{}`", name.name), span));
            return;
        };
        let mut pre = Vec::new();
        let r = match recv.as_deref() {
            Some(r) if !self.is_class_name(r) => Some(self.expr(r, &mut Some(&mut pre))),
            _ => None,
        };
        let mut a: Vec<CE> = args.iter().map(|x| self.expr(x, &mut Some(&mut pre))).collect();
        a.extend(self.given_args(m, e, &mut Some(&mut pre)));
        let yields = self.yield_bindings(m, e);
        self.code.extend(pre);
        self.cur_calls.push(m);
        self.code.push(Instr::Call { target, method: m, recv: r, args: a, yields, span });
    }

    pub(super) fn stmt(&mut self, s: &Stmt, ghost: bool) {
        let span = s.span;
        match &s.kind {
            StmtKind::Block(b) => self.block(b, ghost),
            StmtKind::Decl { ty, vars } => {
                let t = Ty::from_ast(ty);
                for d in vars {
                    let slot = self.scope.declare(&d.name.name, t.clone());
                    match &d.init {
                        Some(init) => {
                            self.assign_to(Target::Local(slot), init, d.span, ghost, t == Ty::Int)
                        }
                        None => {
                            let v = default_value(&t);
                            self.code.push(Instr::Assign {
                                simple: false,
                                target: Target::Local(slot),
                                value: v,
                                span: d.span,
                                ghost: true,
                            });
                        }
                    }
                }
            }
            StmtKind::Assign { target, value } => {
                let mut pre = Vec::new();
                match self.target(target, &mut Some(&mut pre)) {
                    Some(t) => {
                        self.code.extend(pre);
                        let int = self.int_target(target);
                        self.assign_to(t, value, span, ghost, int)
                    }
                    None => {
                        self.code.push(Instr::Unsupported("assignment target".into(), target.span))
                    }
                }
            }
            StmtKind::CompoundAssign { target, op, value } => {
                let mut pre = Vec::new();
                let Some(t) = self.target(target, &mut Some(&mut pre)) else {
                    self.code.push(Instr::Unsupported("assignment target".into(), target.span));
                    return;
                };
                let v = self.expr(value, &mut Some(&mut pre));
                self.code.extend(pre);
                let cur = Self::target_read(&t, target.span);
                self.code.push(Instr::Assign {
                    simple: false,
                    target: t,
                    value: CE::Bin(op.bin_op(), Box::new(cur), Box::new(v), span),
                    span,
                    ghost,
                });
            }
            StmtKind::IncDec { target, inc } => {
                let mut pre = Vec::new();
                let Some(t) = self.target(target, &mut Some(&mut pre)) else {
                    self.code.push(Instr::Unsupported("increment target".into(), target.span));
                    return;
                };
                self.code.extend(pre);
                let cur = Self::target_read(&t, target.span);
                let op = if *inc { BinOp::Add } else { BinOp::Sub };
                self.code.push(Instr::Assign {
                    simple: false,
                    target: t,
                    value: CE::Bin(op, Box::new(cur), Box::new(CE::Int(1)), span),
                    span,
                    ghost,
                });
            }
            StmtKind::Expr(e) => {
                if self.nonpure_call(e).is_some() {
                    self.call_stmt(None, e, span);
                } else if let ExprKind::NewObject(..) = &e.kind {
                    let t = self.scope.temp();
                    self.assign(Target::Local(t), e, span, ghost);
                } else {
                    // A pure expression statement: evaluate for its checks only.
                    let t = self.scope.temp();
                    self.assign(Target::Local(t), e, span, true);
                }
            }
            StmtKind::If { cond, then, els } => {
                let mut pre = Vec::new();
                let c = self.expr(cond, &mut Some(&mut pre));
                self.code.extend(pre);
                let if_pc = self.pc();
                self.code.push(Instr::If { simple: false, cond: c, else_pc: 0, span: cond.span });
                self.scope.push();
                self.jumps.enter(Some(Exit::If));
                self.stmt(then, ghost);
                self.jumps.leave();
                self.scope.pop();
                let else_instr = self.pc();
                self.code.push(Instr::Else { end_pc: 0 });
                let else_pc = self.pc();
                if let Some(e) = els {
                    self.scope.push();
                    self.jumps.enter(Some(Exit::If));
                    self.stmt(e, ghost);
                    self.jumps.leave();
                    self.scope.pop();
                }
                let end = self.pc();
                self.code.push(Instr::EndIf);
                if let Instr::If { else_pc: ep, .. } = &mut self.code[if_pc] {
                    *ep = else_pc;
                }
                if let Instr::Else { end_pc } = &mut self.code[else_instr] {
                    *end_pc = end;
                }
            }
            StmtKind::While(l) | StmtKind::For(l) => {
                self.scope.push();
                for i in &l.init {
                    self.stmt(i, ghost);
                }
                let inv = self.loop_invariants(&l.prefix);
                let cond = l.cond.as_ref().map(|c| self.expr(c, &mut None));
                self.emit_loop(inv, cond, l.keyword, |me| {
                    me.scope.push();
                    me.stmt(&l.body, ghost);
                    me.scope.pop();
                    for u in &l.update {
                        me.stmt(u, ghost);
                    }
                });
                self.scope.pop();
            }
            StmtKind::RangedFor { prefix, keyword, ty, var, lo, hi, body } => {
                self.scope.push();
                let slot = self.scope.declare(&var.name, Ty::from_ast(ty));
                let lo_c = self.expr(lo, &mut None);
                self.code.push(Instr::Assign {
                    simple: false,
                    target: Target::Local(slot),
                    value: lo_c,
                    span: var.span,
                    ghost,
                });
                let hi_c = self.expr(hi, &mut None);
                // The implicit invariant `lo <= i && i <= hi` that VerCors (and the encoder) add
                // to a ranged loop: a range with `hi < lo` fails it on entry.
                let name = || Box::new(Expr::new(ExprKind::Name(var.clone()), *keyword));
                let bound = Expr::new(
                    ExprKind::Binary(
                        BinOp::And,
                        Box::new(Expr::new(
                            ExprKind::Binary(BinOp::Le, Box::new(lo.clone()), name()),
                            *keyword,
                        )),
                        Box::new(Expr::new(
                            ExprKind::Binary(BinOp::Le, name(), Box::new(hi.clone())),
                            *keyword,
                        )),
                    ),
                    *keyword,
                );
                let mut inv = self.clauses(&bound);
                inv.extend(self.loop_invariants(prefix).iter().cloned());
                let inv = std::rc::Rc::new(inv);
                let cond = CE::Bin(BinOp::Lt, Box::new(CE::Local(slot)), Box::new(hi_c), var.span);
                self.emit_loop(inv, Some(cond), var.span, |me| {
                    me.scope.push();
                    me.stmt(body, ghost);
                    me.scope.pop();
                    me.code.push(Instr::Assign {
                        simple: false,
                        target: Target::Local(slot),
                        value: CE::Bin(
                            BinOp::Add,
                            Box::new(CE::Local(slot)),
                            Box::new(CE::Int(1)),
                            var.span,
                        ),
                        span: var.span,
                        ghost,
                    });
                });
                self.scope.pop();
            }
            StmtKind::Par(p) => self.par(p, span),
            StmtKind::Parallel { sequential, body } => {
                if *sequential {
                    for s in body {
                        self.stmt(s, ghost);
                    }
                } else {
                    // A v2 `parallel { par…; par…; }` is one `and`-launch.
                    let mut arms = Vec::new();
                    for s in body {
                        match &s.kind {
                            StmtKind::Par(p) => arms.extend(p.arms.iter().cloned()),
                            _ => self.code.push(Instr::Unsupported(
                                "a `parallel` block holding anything but `par` blocks".into(),
                                s.span,
                            )),
                        }
                    }
                    let p =
                        Par { prefix: Prefix::default(), arms, keyword: span, loop_form: false };
                    self.par(&p, span);
                }
            }
            StmtKind::Barrier(b) => self.barrier(b),
            StmtKind::Return(v) => {
                let mut pre = Vec::new();
                let val = v.as_ref().map(|e| {
                    if matches!(e.kind, ExprKind::NewObject(..) | ExprKind::NewArray(..)) {
                        // `return new C(…);`: the allocation is a statement of its own.
                        let t = self.scope.temp();
                        self.assign(Target::Local(t), e, e.span, ghost);
                        CE::Local(t)
                    } else if self.nonpure_call(e).is_some() {
                        let t = self.scope.temp();
                        self.call_stmt(Some(Target::Local(t)), e, e.span);
                        CE::Local(t)
                    } else {
                        self.expr(e, &mut Some(&mut pre))
                    }
                });
                self.code.extend(pre);
                self.code.push(Instr::Return { value: val, span });
            }
            StmtKind::Spec { kind, expr } => match kind {
                SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale | SpecKind::Exhale => {
                    let c = self.clauses(expr);
                    self.code.push(match kind {
                        SpecKind::Assert => Instr::Assert(c),
                        SpecKind::Assume => Instr::Assume(c),
                        SpecKind::Inhale => Instr::Inhale(c),
                        _ => Instr::Exhale(c),
                    });
                }
                SpecKind::Fold | SpecKind::Unfold => {
                    let e = self.expr(expr, &mut None);
                    self.code.push(if *kind == SpecKind::Fold {
                        Instr::Fold(e, span)
                    } else {
                        Instr::Unfold(e, span)
                    });
                }
                SpecKind::Witness => {}
                other => self.code.push(Instr::Unsupported(format!("`{}`", other.keyword()), span)),
            },
            StmtKind::Ghost(inner) => self.stmt(inner, true),
            StmtKind::Annotation(_) => {}
            StmtKind::Invariant { name, resource, body } => {
                let id = self.out.ninvariants;
                self.out.ninvariants += 1;
                let res = Rc::new(self.clauses(resource));
                self.code.push(Instr::InvEnter { id, res, span: name.span });
                self.inv_names.push((name.name.clone(), id));
                self.jumps.enter(None);
                self.block(body, ghost);
                self.jumps.leave();
                self.inv_names.pop();
                self.code.push(Instr::InvExit { id, span: name.span });
            }
            StmtKind::Atomic { names, body } => {
                let inv = names.first().and_then(|n| {
                    self.inv_names.iter().rev().find(|(k, _)| *k == n.name).map(|(_, id)| *id)
                });
                let begin = self.pc();
                self.code.push(Instr::AtomicBegin { inv, end_pc: 0, span });
                self.jumps.enter(None);
                self.block(body, ghost);
                self.jumps.leave();
                let end = self.pc();
                self.code.push(Instr::AtomicEnd);
                if let Instr::AtomicBegin { end_pc, .. } = &mut self.code[begin] {
                    *end_pc = end;
                }
            }
            StmtKind::Vec { iter, body } => self.vec_block(iter, body, span),
            StmtKind::Opaque(o) => match o.keyword.as_str() {
                "label" => self.label_stmt(o),
                "goto" => self.goto_stmt(o),
                "lock" | "unlock" | "wait" | "notify" | "fork" | "join" => self.sync_stmt(o),
                // Ghost: packaging and applying a magic wand change no program state (wands
                // are not tracked, see `expr.rs`).
                "create" | "apply" => {}
                front::ast::UNDECLARED_CALL => self.code.push(Instr::Unsupported(
                    format!(
                        "a call to `{}`, which is not declared",
                        front::ast::undeclared_callee(o)
                    ),
                    span,
                )),
                _ => self.code.push(Instr::Unsupported(format!("`{}` statement", o.keyword), span)),
            },
        }
    }

    fn emit_loop(
        &mut self,
        inv: Rc<Vec<CClause>>,
        cond: Option<CE>,
        span: Span,
        body: impl FnOnce(&mut Self),
    ) {
        self.code.push(Instr::LoopEnter { inv: inv.clone(), span });
        let head = self.pc();
        self.code.push(Instr::LoopHead { simple: false, cond, exit_pc: 0, span });
        self.jumps.enter(Some(Exit::Loop));
        body(self);
        self.jumps.leave();
        self.code.push(Instr::LoopBack { head_pc: head, inv, span });
        let exit = self.pc();
        if let Instr::LoopHead { exit_pc, .. } = &mut self.code[head] {
            *exit_pc = exit;
        }
    }

    pub(super) fn par(&mut self, p: &Par, span: Span) {
        // An arm that waits for others (v1 `and b(int j = …; a(j))`) runs after them: the arms
        // in stages (see `staged_par`).
        if let Some(w) = p.arms.iter().find_map(|a| a.wait.as_ref()) {
            if !self.staged_par(p, span) {
                let what = "a `par` arm's wait list that names no arm of the block, or a cycle";
                self.code.push(Instr::Unsupported(what.into(), w.span));
            }
            return;
        }
        self.cur_contains_par = true;
        let (region_pre, region_post) = self.pre_post(&p.prefix.clauses, |_, _, _| {});
        let par_pc = self.pc();
        self.code.push(Instr::EndThread); // placeholder, replaced below
        let mut arms = Vec::new();
        for a in &p.arms {
            self.scope.push();
            let mut iters = Vec::new();
            for it in &a.iters {
                let lo = self.expr(&it.lo, &mut None);
                let hi = self.expr(&it.hi, &mut None);
                let s = self.scope.declare(&it.name.name, Ty::Int);
                iters.push((s, it.name.name.clone(), lo, hi));
            }
            let (pre, post) = self.pre_post(&a.contract, |_, _, _| {});
            self.par_labels.push(a.label.as_ref().map(|l| l.name.clone()));
            let iters_base = self.par_iters.len();
            self.par_iters.extend(iters.iter().map(|it| it.0));
            let names: Vec<String> = iters.iter().map(|it| it.1.clone()).collect();
            self.par_uniform.push((Rc::new(analyze::uniform::analyze(&a.body, &names)), names));
            let body_pc = self.pc();
            self.scope.push();
            self.jumps.enter(None);
            self.stmt(&a.body, false);
            self.jumps.leave();
            self.scope.pop();
            self.code.push(Instr::EndThread);
            self.par_iters.truncate(iters_base);
            self.par_uniform.pop();
            self.par_labels.pop();
            self.scope.pop();
            let iter_slots: Vec<u32> = iters.iter().map(|it| it.0).collect();
            let mut assigned = iter_slots.clone();
            assigned_slots(&self.code[body_pc..], &mut assigned);
            let uniform = |cl: &[CClause], avoid: &[u32]| -> Vec<bool> {
                cl.iter().map(|c| c.simple && avoid.iter().all(|&s| !mentions(&c.e, s))).collect()
            };
            let everywhere = self.everywhere.clone();
            arms.push(ArmC {
                label: a.label.as_ref().map(|l| l.name.clone()),
                iters,
                pre_uniform: uniform(&pre, &iter_slots),
                ev_uniform_pre: uniform(&everywhere, &iter_slots),
                post_uniform: uniform(&post, &assigned),
                ev_uniform_post: uniform(&everywhere, &assigned),
                pre,
                post,
                body_pc,
                span: a.span,
            });
        }
        let next_pc = self.pc();
        self.code[par_pc] = Instr::Par(Rc::new(ParC {
            arms,
            region_pre,
            region_post,
            everywhere: self.everywhere.clone(),
            next_pc,
            span: p.keyword.to(span),
        }));
    }

    fn barrier(&mut self, b: &Barrier) {
        match self.par_labels.last() {
            None => {
                self.errors.push(
                    Diagnostic::error("R-BARRIER-SCOPE", "barrier outside of any `par` block")
                        .with_primary(b.keyword, "this barrier"),
                );
                return;
            }
            Some(Some(l)) if *l != b.label.name => {
                self.errors.push(
                    Diagnostic::error(
                        "R-BARRIER-SCOPE",
                        format!(
                            "barrier label `{}` does not name the innermost par block `{l}`",
                            b.label.name
                        ),
                    )
                    .with_primary(b.label.span, "this label"),
                );
                return;
            }
            _ => {}
        }
        let mut shared = Vec::new();
        let (mut pre, mut post) = self.pre_post(&b.contract, |me, c, _| {
            if let Some(e) = c.expr() {
                me.shared_locals(e, &mut shared);
            }
        });
        if let Some((u, iters)) = self.par_uniform.last() {
            shared.retain(|s| {
                let name = Expr::new(ExprKind::Name(Ident::new(&s.name, s.span)), s.span);
                !u.tainted.contains(&s.name)
                    || analyze::uniform::inline_thread_locals(&name, u, iters).is_err()
            });
        }
        let ev = self.propagated_everywhere();
        pre.extend(ev.iter().cloned());
        post.extend(ev);
        let id = self.out.nbarriers;
        self.out.nbarriers += 1;
        let invariants = b
            .tags
            .iter()
            .filter_map(|t| {
                self.inv_names.iter().rev().find(|(k, _)| *k == t.name).map(|(_, id)| *id)
            })
            .collect();
        let at = self.pc();
        // Replaced below, once the body's extent is known.
        self.code.push(Instr::AtomicEnd);
        let body = b.body.as_ref().filter(|body| !body.stmts.is_empty()).map(|body| {
            self.jumps.enter(None);
            self.block(body, false);
            self.jumps.leave();
            (at + 1, self.pc())
        });
        self.code[at] = Instr::Barrier(Rc::new(BarrierC {
            id,
            label: b.label.name.clone(),
            pre,
            post,
            span: b.keyword,
            shared,
            body,
            invariants,
        }));
    }

    /// Add to `out` the locals of the current scope that `e` mentions, other than `par`
    /// iterators, with the span of their first mention. Names that a quantifier, `\let` or
    /// `\sum` inside `e` binds are left out wherever they occur: such a name may shadow a local,
    /// and a binder's values differ by design.
    fn shared_locals(&self, e: &Expr, out: &mut Vec<SharedLocal>) {
        let mut bound: Vec<&str> = Vec::new();
        front::visit::walk_expr(e, &mut |x| match &x.kind {
            ExprKind::Quant { bindings, .. } => {
                bound.extend(bindings.iter().map(|b| b.name.name.as_str()))
            }
            ExprKind::Let { name, .. } | ExprKind::Sum { name, .. } => bound.push(&name.name),
            _ => {}
        });
        front::visit::walk_expr(e, &mut |x| {
            let ExprKind::Name(id) = &x.kind else { return };
            if bound.contains(&id.name.as_str()) {
                return;
            }
            let Some((slot, _)) = self.scope.lookup(&id.name) else {
                return;
            };
            if self.par_iters.contains(&slot) || out.iter().any(|s| s.slot == slot) {
                return;
            }
            out.push(SharedLocal { slot, name: id.name.clone(), span: x.span });
        });
    }
}

fn default_value(t: &Ty) -> CE {
    match t {
        Ty::Int => CE::Int(0),
        Ty::Bool => CE::Bool(false),
        Ty::Seq(_) => CE::SeqLit(Vec::new()),
        t => match crate::heap::default_of(t) {
            Value::Null => CE::Null,
            v => CE::Const(v),
        },
    }
}

/// Mark the instructions whose expression is simple (see [`is_simple`]).
pub(super) fn mark_simple(code: &mut [Instr]) {
    for i in code {
        match i {
            Instr::Assign { simple, value, .. } => *simple = is_simple(value),
            Instr::If { simple, cond, .. } => *simple = is_simple(cond),
            Instr::LoopHead { simple, cond: Some(c), .. } => *simple = is_simple(c),
            _ => {}
        }
    }
}

/// The local slots that `code` may assign (in the frame it runs in).
fn assigned_slots(code: &[Instr], out: &mut Vec<u32>) {
    for i in code {
        let t = match i {
            Instr::Assign { target, .. }
            | Instr::Alloc { target, .. }
            | Instr::NewObj { target, .. } => Some(target),
            Instr::Call { target, .. } => target.as_ref(),
            _ => None,
        };
        if let Some(Target::Local(s)) = t {
            if !out.contains(s) {
                out.push(*s);
            }
        }
    }
}
