//! Members, contracts and statements: scopes, conditions, assignments, calls and returns.

use super::{Checker, Ty};
use diag::Diagnostic;
use front::ast::{
    self, ClauseBody, ClauseKind, Expr, ExprKind, MethodBody, SpecKind, Stmt, StmtKind as S,
};
use front::span::Span;

impl Checker {
    pub fn program(&mut self, prog: &ast::Program) {
        for (c, m) in prog.methods() {
            self.member(c.map(|c| c.name.name.as_str()), m);
        }
        if let Some(b) = &prog.main {
            self.class = None;
            self.scopes = vec![Default::default()];
            self.ret = Ty::Void;
            self.block(b);
        }
    }

    fn member(&mut self, class: Option<&str>, m: &ast::Method) {
        self.class = class.map(str::to_string);
        self.lenient = false;
        self.ret = if !m.kind.is_ctor() { Ty::of(&m.ret) } else { Ty::Void };
        // Given and yields parameters are in an outer scope (a local may hide them: VerCors'
        // examples do); parameters share the scope of the body's outer block, so a local there
        // with a parameter's name is a duplicate, as in Java.
        self.scopes = vec![Default::default()];
        for c in &m.prefix.clauses {
            if let ClauseBody::Decl(t, n) = &c.body {
                self.declare(n, Ty::of(t), true);
            }
        }
        self.scopes.push(Default::default());
        for p in &m.params {
            self.declare(&p.name, Ty::of(&p.ty), true);
        }
        self.clauses(&m.prefix.clauses);
        match &m.body {
            MethodBody::Block(b) => self.stmts(&b.stmts),
            MethodBody::Abstract => {}
            MethodBody::Expr(e) => {
                let t = self.ty(e);
                let want = self.ret.clone();
                if want == Ty::Resource {
                    self.resource(e, "a predicate's body");
                } else {
                    self.expect(e.span, &want, &t, "the body of a function");
                }
            }
        }
    }

    pub fn clauses(&mut self, cs: &[ast::Clause]) {
        for c in cs {
            match (&c.body, c.kind) {
                (ClauseBody::Expr(e), k) if is_assertion(k) => {
                    self.resource(e, &format!("a `{}` clause", k.keyword()))
                }
                (ClauseBody::Expr(e), _) | (ClauseBody::Signals(_, _, e), _) => {
                    self.ty(e);
                }
                (ClauseBody::List(es), _) => {
                    for e in es {
                        self.ty(e);
                    }
                }
                (ClauseBody::Decl(..) | ClauseBody::DecreasesAssume, _) => {}
            }
        }
    }

    fn block(&mut self, b: &ast::Block) {
        self.scopes.push(Default::default());
        self.stmts(&b.stmts);
        self.scopes.pop();
    }

    fn stmts(&mut self, ss: &[Stmt]) {
        for s in ss {
            self.stmt(s);
        }
    }

    /// A statement in a scope of its own (a branch or a loop body that is not a block).
    fn sub(&mut self, s: &Stmt) {
        self.scopes.push(Default::default());
        self.stmt(s);
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            S::Block(b) => self.block(b),
            S::Decl { ty, vars } => {
                let t = Ty::of(ty);
                for d in vars {
                    if let Some(init) = &d.init {
                        let ti = self.ty(init);
                        self.expect(init.span, &t, &ti, &format!("the value of `{}`", d.name.name));
                    }
                    self.declare(&d.name, t.clone(), true);
                }
            }
            S::Assign { target, value } => {
                let tt = self.target(target);
                let tv = self.ty(value);
                self.expect(value.span, &tt, &tv, "the assigned value");
            }
            S::CompoundAssign { target, value, .. } => {
                let tt = self.target(target);
                let tv = self.ty(value);
                for (t, sp) in [(tt, target.span), (tv, value.span)] {
                    if !t.numeric() && !t.collection() {
                        self.expect(sp, &Ty::Int, &t, "a compound assignment");
                    }
                }
            }
            S::IncDec { target, .. } => {
                let t = self.target(target);
                self.expect(target.span, &Ty::Int, &t, "`++`/`--`");
            }
            S::Expr(e) => {
                self.ty(e);
                if let ExprKind::Call { recv, name, ghost, .. } = &e.kind {
                    self.ghost(recv.as_deref(), &name.name, ghost);
                }
            }
            S::If { cond, then, els } => {
                self.boolean(cond, "the condition of `if`");
                self.sub(then);
                if let Some(e) = els {
                    self.sub(e);
                }
            }
            S::While(l) | S::For(l) => {
                self.scopes.push(Default::default());
                self.stmts(&l.init);
                if let Some(c) = &l.cond {
                    self.boolean(c, "a loop condition");
                }
                self.clauses(&l.prefix.clauses);
                self.stmts(&l.update);
                self.sub(&l.body);
                self.scopes.pop();
            }
            S::RangedFor { prefix, ty, var, lo, hi, body, .. } => {
                for x in [lo, hi] {
                    let t = self.ty(x);
                    self.expect(x.span, &Ty::Int, &t, "a loop bound");
                }
                self.scopes.push(Default::default());
                self.declare(var, Ty::of(ty), false);
                self.clauses(&prefix.clauses);
                self.sub(body);
                self.scopes.pop();
            }
            S::Par(p) => {
                self.clauses(&p.prefix.clauses);
                for arm in &p.arms {
                    self.scopes.push(Default::default());
                    for it in &arm.iters {
                        for x in [&it.lo, &it.hi] {
                            let t = self.ty(x);
                            self.expect(x.span, &Ty::Int, &t, "a thread range bound");
                        }
                        self.declare(&it.name, Ty::of(&it.ty), false);
                    }
                    self.clauses(&arm.contract);
                    self.sub(&arm.body);
                    self.scopes.pop();
                }
            }
            S::Parallel { body, .. } => {
                self.scopes.push(Default::default());
                self.stmts(body);
                self.scopes.pop();
            }
            // Checked like a `par` arm (its body went unchecked: `ar[j] = c > c;` and a bound
            // that is an array reached Silicon, found by the encoder fuzzer with Silicon).
            S::Vec { iter, body } => {
                self.scopes.push(Default::default());
                for x in [&iter.lo, &iter.hi] {
                    let t = self.ty(x);
                    self.expect(x.span, &Ty::Int, &t, "a `vec` range bound");
                }
                self.declare(&iter.name, Ty::of(&iter.ty), false);
                self.block(body);
                self.scopes.pop();
            }
            S::Barrier(b) => {
                self.clauses(&b.contract);
                if let Some(body) = &b.body {
                    self.block(body);
                }
            }
            S::Invariant { resource, body, .. } => {
                self.resource(resource, "a resource invariant");
                self.block(body);
            }
            S::Atomic { body, .. } => self.block(body),
            S::Return(e) => self.ret_stmt(e.as_ref(), s.span),
            S::Spec { kind, expr } => match kind {
                SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale | SpecKind::Exhale => {
                    self.resource(expr, &format!("`{}`", kind.keyword()))
                }
                _ => {
                    self.ty(expr);
                }
            },
            S::Ghost(g) => self.stmt(g),
            S::Annotation(_) => {}
            // Statements kept as text, and kinds added later by other front-end work: they may
            // declare names, so from here on in this member unresolved names are no errors.
            #[allow(unreachable_patterns)]
            _ => self.lenient = true,
        }
    }

    fn ret_stmt(&mut self, e: Option<&Expr>, span: Span) {
        let want = self.ret.clone();
        match e {
            Some(e) => {
                let t = self.ty(e);
                if want == Ty::Void {
                    self.mismatch(
                        e.span,
                        "`return` with a value in a `void` method".into(),
                        "this value is returned".into(),
                        "remove the value, or declare a return type",
                    );
                } else {
                    self.expect(e.span, &want, &t, "the returned value");
                }
            }
            None if !matches!(want, Ty::Void | Ty::Unknown) => self.mismatch(
                span,
                format!("`return` without a value in a method returning `{}`", want.name()),
                "a value is needed here".into(),
                "return a value of the method's type",
            ),
            None => {}
        }
    }

    /// The type of an assignment target, after checking that it can be assigned.
    fn target(&mut self, target: &Expr) -> Ty {
        match &target.kind {
            ExprKind::Name(id) => {
                if let Some(v) = self.lookup(&id.name).cloned() {
                    if !v.assignable {
                        self.not_assignable(target.span, &format!("`{}` is bound", id.name));
                    }
                    return v.ty;
                }
                let class = self.class.as_deref().and_then(|c| self.env.classes.get(c));
                let is_field = class.is_some_and(|c| c.fields.contains_key(&id.name));
                if !is_field && self.env.methods(self.class.as_deref(), &id.name).is_some() {
                    self.not_assignable(target.span, &format!("`{}` is a method", id.name));
                    return Ty::Unknown;
                }
                self.ty(target)
            }
            ExprKind::Index(..) | ExprKind::Field(..) | ExprKind::Result => self.ty(target),
            ExprKind::Opaque(_) => Ty::Unknown,
            _ => {
                self.ty(target);
                self.not_assignable(target.span, "it is not a variable, field or array element");
                Ty::Unknown
            }
        }
    }

    fn not_assignable(&mut self, span: Span, why: &str) {
        self.diags.push(
            Diagnostic::error("V-NOT-ASSIGNABLE", format!("this cannot be assigned to: {why}"))
                .with_primary(span, "not assignable")
                .with_help("assign to a local variable, a parameter, a field or an array element"),
        );
    }

    /// `with { g = e; }` names the callee's given parameters; `then { x = y; }` reads its
    /// yields. Checked against the callee when it is known.
    fn ghost(&mut self, recv: Option<&Expr>, name: &str, ghost: &ast::GhostArgs) {
        let class = match recv {
            None | Some(Expr { kind: ExprKind::This, .. }) => self.class.clone(),
            Some(r) => match self.ty(r) {
                Ty::Class(c) => Some(c),
                _ => None,
            },
        };
        let sig = match recv {
            None => self.env.methods(class.as_deref(), name),
            Some(_) => class.as_deref().and_then(|c| self.env.classes.get(c)?.methods.get(name)),
        };
        let Some([sig]) = sig.map(Vec::as_slice) else { return };
        let sig = sig.clone();
        if let Some(w) = &ghost.with {
            for s in &w.stmts {
                if let S::Assign { target: Expr { kind: ExprKind::Name(g), .. }, value } = &s.kind {
                    let tv = self.ty(value);
                    match sig.given.iter().find(|(n, _)| *n == g.name) {
                        Some((_, t)) => self.expect(value.span, t, &tv, "a given argument"),
                        // VerCors 1 binds a yields variable in `with` too: `with { y = x; }`
                        // stores the yielded `y` into the caller's `x`.
                        None if sig.yields.iter().any(|(n, _)| *n == g.name)
                            && matches!(value.kind, ExprKind::Name(_)) => {}
                        None => self.undeclared(
                            g.span,
                            format!("`{name}` has no given parameter `{}`", g.name),
                            "supply only the callee's `given` parameters",
                        ),
                    }
                }
            }
        }
        for (g, v) in &ghost.given {
            let tv = self.ty(v);
            if let Some((_, t)) = sig.given.iter().find(|(n, _)| *n == g.name) {
                self.expect(v.span, t, &tv, "a given argument");
            }
        }
        // In `then { x = y; }` the target is the caller's and the value reads the yields.
        if let Some(t) = &ghost.then {
            let mut yields = std::collections::HashMap::new();
            for (y, ty) in &sig.yields {
                let var = super::Var { ty: ty.clone(), span: t.span, assignable: false };
                yields.insert(y.clone(), var);
            }
            for s in &t.stmts {
                if let S::Assign { target, value } = &s.kind {
                    let tt = self.target(target);
                    self.scopes.push(yields.clone());
                    let tv = self.ty(value);
                    self.scopes.pop();
                    self.expect(value.span, &tt, &tv, "the assigned value");
                } else {
                    self.scopes.push(yields.clone());
                    self.stmt(s);
                    self.scopes.pop();
                }
            }
        }
    }
}

/// Clauses whose expression is asserted (a boolean or a resource).
fn is_assertion(k: ClauseKind) -> bool {
    matches!(
        k,
        ClauseKind::Requires
            | ClauseKind::Ensures
            | ClauseKind::Context
            | ClauseKind::ContextEverywhere
            | ClauseKind::LoopInvariant
    )
}
