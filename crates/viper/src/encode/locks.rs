//! Locks and threads in the pattern VerCors documents (docs/commands/verify.md, "Locks and threads").
//!
//! * A class's `resource lock_invariant() = R;` is the resource its lock protects. It is inlined
//!   (VerCors accesses the protected fields after `lock` without unfolding anything): `lock e`
//!   inhales `R[this := e]` and the token `held(e)`; `unlock e` exhales both; `wait e` gives the
//!   invariant away and takes it back (it keeps `held`); `notify e` asserts `held(e)`.
//! * Every constructor of such a class *establishes* the invariant: it is exhaled at the end of
//!   the body, after which the object is shared. A class with a lock invariant and no
//!   constructor is rejected before encoding (V-LOCK-CONSTRUCTOR, `analyze::typeck`); a thread
//!   class without one gets the implicit default constructor (fields at their default values),
//!   which would have to establish an invariant as well if the type checker were skipped.
//! * A class with a `void run()` method is a thread class: its constructors end with the token
//!   `idle(this)`. `fork e` trades `idle(e)` and `run`'s precondition for `running(e)`; `join e`
//!   trades `running(e)` for `run`'s postcondition and `idle(e)`. Both are calls of bodiless Viper
//!   methods generated next to `run` (`C_fork`, `C_join`), so that a class may be forked before
//!   its declaration is encoded.
//!
//! * VerCors 2 states the invariant as a class contract (`lock_invariant R; class C { … }`)
//!   and shares the lock explicitly: `commit e;` exhales `R[this := e]` and makes
//!   `committed(e)` true, which `lock e` needs. Constructors establish nothing of their own
//!   accord, and a class contract needs no constructor. `committed(e)` is knowledge, not a
//!   resource: once committed, an object stays committed, so it is a heap-independent Viper
//!   function (`vct_committed`, no body), assumed at `commit` and asserted at `lock`; a thread
//!   of a `par` block knows it like the other heap-free facts of its method's precondition.
//!
//! The tokens are abstract Viper predicates. Predicate permissions are not bounded by 1 in
//! Viper, which is why every token is exhaled (never only asserted) where it is consumed: a
//! second `fork` of the same object finds no `idle` left.

use super::{CallKind, Callable, Encoder, R};
use crate::ast::*;
use diag::Diagnostic;
use front::ast::{self, Expr, ExprKind, MethodBody, TypeKind};
use front::span::Span;
use front::Dialect;
use std::collections::HashMap;

/// The lock and thread tokens, with the PVL name each stands for.
pub const TOKENS: [(&str, &str); 3] =
    [("held", "vct_held"), ("idle", "vct_idle"), ("running", "vct_running")];

/// The Viper function that stands for VerCors 2's `committed(e)`.
pub(super) const COMMITTED: &str = "vct_committed";

impl Encoder<'_> {
    /// Record a class's lock invariant and thread method, and declare the implicit default
    /// constructor where one is needed (see the module doc).
    pub(super) fn collect_sync(&mut self, c: &ast::Class) {
        let class = c.name.name.clone();
        let contract = c.contract_lock_invariant();
        if let Some(first) = contract.first() {
            let inv = contract[1..]
                .iter()
                .fold((*first).clone(), |acc, e| Expr::bin(ast::BinOp::Star, acc, (*e).clone()));
            self.lock_invs.insert(class.clone(), inv);
            self.committed_locks.insert(class.clone());
        }
        let mut has_ctor = false;
        for m in &c.members {
            let ast::Member::Method(m) = m else { continue };
            if m.kind.is_ctor() {
                has_ctor = true;
            } else if m.name.name == "lock_invariant" && m.is_predicate() && m.params.is_empty() {
                if let MethodBody::Expr(e) = &m.body {
                    self.lock_invs.insert(class.clone(), e.clone());
                }
            } else if m.name.name == "run"
                && m.params.is_empty()
                && matches!(m.ret.kind, TypeKind::Void)
                && !m.has_modifier(ast::Modifier::Static)
                && !m.is_pure()
            {
                self.runnable.insert(class.clone());
            }
        }
        if !has_ctor && (self.lock_invs.contains_key(&class) || self.runnable.contains(&class)) {
            self.callables.insert(
                (class.clone(), "constructor".into()),
                vec![Callable {
                    viper: self.member_name(Some(&class), "constructor"),
                    kind: CallKind::Constructor,
                    is_static: true,
                    params: vec![],
                    ret: ast::Type::new(TypeKind::Class(ast::Ident::synth(&class), vec![])),
                    given: vec![],
                    yields: vec![],
                    inline: None,
                    class: Some(class.clone()),
                    param_names: vec![],
                    read_locs: vec![],
                    // The implicit constructor's body is generated (`default_constructors`).
                    has_body: true,
                    span: c.name.span,
                }],
            );
            self.default_ctors.push((class, c.name.span));
        }
    }

    /// The Viper name of a token predicate, declared on first use.
    fn token(&mut self, pvl: &str) -> String {
        let base = TOKENS.iter().find(|(p, _)| *p == pvl).map_or(pvl, |(_, v)| *v);
        let name = self.member_name(None, base);
        if !self.out.predicates.iter().any(|p| p.name == name) {
            self.out.predicates.push(Predicate {
                name: name.clone(),
                params: vec![("r".into(), Ty::Ref)],
                body: None,
                span: None,
            });
        }
        name
    }

    fn token_acc(&mut self, pvl: &str, recv: Exp, span: Option<Span>) -> Exp {
        let p = self.token(pvl);
        Exp::new(
            ExpKind::Acc(
                Box::new(Exp::new(ExpKind::App(p, vec![recv]), span)),
                Box::new(Exp::synth(ExpKind::Write)),
            ),
            span,
        )
    }

    /// The object a lock statement is about, evaluated once (a variable, or a temporary that
    /// holds it): the statement's parts all refer to the same one.
    fn evaluated_once(&mut self, x: Exp, span: Span, out: &mut Vec<Stmt>) -> Exp {
        if let ExpKind::Var(_) = &x.kind {
            return x;
        }
        let t = self.temp("obj", Ty::Ref);
        out.push(Stmt::new(StmtKind::Assign(Exp::var(&t), x), Origin::new(Role::Code, Some(span))));
        Exp::var(t)
    }

    /// Declare the bodiless function `name(param: Ref): ret` with `posts`, unless it is.
    fn object_function(&mut self, name: &str, param: &str, ret: Ty, posts: Vec<Contract>) {
        if !self.out.functions.iter().any(|f| f.name == name) {
            self.out.functions.push(Function {
                name: name.into(),
                params: vec![(param.into(), Ty::Ref)],
                ret,
                pres: vec![],
                posts,
                body: None,
                span: None,
            });
        }
    }

    /// `vct_committed(recv)` (the function declared on first use).
    fn committed(&mut self, recv: Exp, span: Option<Span>) -> Exp {
        self.object_function(COMMITTED, "r", Ty::Bool, vec![]);
        Exp::new(ExpKind::App(COMMITTED.into(), vec![recv]), span)
    }

    /// The class of `e` when its lock is a VerCors 2 class contract's (`what` names the use).
    fn committed_class(&mut self, e: &Expr, what: &str) -> R<String> {
        let c = self.object_class(e, what)?;
        if !self.committed_locks.contains(&c) {
            self.bad(
                format!("{what} needs an object whose class states `lock_invariant` before `class`, and `{c}` does not"),
                e.span,
            );
            return Err(());
        }
        Ok(c)
    }

    /// The class of an object expression, for the lock and thread statements.
    fn object_class(&mut self, e: &Expr, what: &str) -> R<String> {
        let c = match &e.kind {
            ExprKind::This if !self.is_static => self.class.clone(),
            _ => self.type_of(e).and_then(|t| match t.kind {
                TypeKind::Class(c, _) => Some(c.name),
                _ => None,
            }),
        };
        match c {
            Some(c) if self.classes.contains_key(&c) => Ok(c),
            _ => {
                self.bad(format!("{what} needs an object of a known class"), e.span);
                Err(())
            }
        }
    }

    /// The tokens `idle(e)`, `running(e)` and `held(e)` in a specification.
    pub(super) fn token_builtin(&mut self, name: &str, args: &[Expr], span: Span) -> R<Exp> {
        let [arg] = args else {
            self.bad(format!("`{name}` takes one object"), span);
            return Err(());
        };
        if name == "committed" {
            self.committed_class(arg, "`committed`")?;
            let x = self.spec(arg)?;
            return Ok(self.committed(x, Some(span)));
        }
        let c = self.object_class(arg, &format!("`{name}`"))?;
        if name != "held" && !self.runnable.contains(&c) {
            self.bad(
                format!("`{name}` applies to threads, and class `{c}` has no `void run()` method"),
                span,
            );
            return Err(());
        }
        let x = self.spec(arg)?;
        Ok(self.token_acc(name, x, Some(span)))
    }

    /// The lock invariant of `class` for the object `recv` (`None` when the class has none),
    /// encoded in the class's own scope: the method's locals must not capture its names.
    fn lock_inv(&mut self, class: &str, recv: &Exp) -> R<Option<Exp>> {
        let Some(body) = self.lock_invs.get(class).cloned() else { return Ok(None) };
        let r = self.in_member_scope(Some(class), false, |me| me.spec(&body));
        Ok(Some(r?.subst("this", recv)))
    }

    /// `f` as if inside a member of `class` (static or not): that class's fields, no locals of
    /// the method being encoded (they must not capture the member's names), no enclosing `par`.
    pub(super) fn in_member_scope<T>(
        &mut self,
        class: Option<&str>,
        is_static: bool,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved_class = std::mem::replace(&mut self.class, class.map(str::to_string));
        let saved_static = std::mem::replace(&mut self.is_static, is_static);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        let saved_rd = self.read_var.take();
        let saved_pars = std::mem::take(&mut self.pars);
        let r = f(self);
        self.class = saved_class;
        self.is_static = saved_static;
        self.scopes = saved_scopes;
        self.read_var = saved_rd;
        self.pars = saved_pars;
        r
    }

    fn tok_stmt(kind: StmtKind, token: &str, span: Span) -> Stmt {
        Stmt::new(kind, Origin::new(Role::Token, Some(span)).with_label(token))
    }

    /// `lock e;`, `unlock e;`, `wait e;`, `notify e;`, `fork e;`, `join e;` (opaque to the
    /// front end: the operand is parsed here, at its place in the file).
    pub(super) fn sync_stmt(&mut self, op: &ast::Opaque, out: &mut Vec<Stmt>) -> R<bool> {
        let kw = op.keyword.as_str();
        if !matches!(kw, "lock" | "unlock" | "wait" | "notify" | "fork" | "join" | "commit") {
            return Ok(false);
        }
        let e = self.opaque_operand(op)?;
        if kw == "commit" {
            self.commit(&e, op.span, out)?;
            return Ok(true);
        }
        // Before its constructor ends, an object's lock invariant is not established: taking
        // the lock there would inhale the invariant on top of the fields it protects.
        if self.method_name == "constructor" && matches!(e.kind, ExprKind::This) {
            self.unsupported(&format!("`{kw} this` inside a constructor"), op.span);
            return Err(());
        }
        let class = self.object_class(&e, &format!("`{kw}`"))?;
        let x = self.code(&e)?;
        self.flush_pending(out);
        let obj = self.evaluated_once(x, op.span, out);
        let sp = Some(op.span);
        // No null check, as in VerCors: `lock null` throws, so nothing after it runs, and
        // inhaling the invariant of `null` (`acc(null.f)` is false) makes that code vacuous.
        match kw {
            "lock" => {
                // A class contract's lock is taken only once it is committed.
                if self.committed_locks.contains(&class) {
                    let c = self.committed(obj.clone(), sp);
                    out.push(Self::tok_stmt(StmtKind::Assert(c), "committed", op.span));
                }
                if let Some(inv) = self.lock_inv(&class, &obj)? {
                    out.push(Stmt::new(StmtKind::Inhale(inv), Origin::new(Role::Code, sp)));
                }
                let h = self.token_acc("held", obj, sp);
                out.push(Stmt::new(StmtKind::Inhale(h), Origin::new(Role::Code, sp)));
            }
            "unlock" | "wait" => {
                let h = self.token_acc("held", obj.clone(), sp);
                out.push(Self::tok_stmt(StmtKind::Exhale(h.clone()), "held", op.span));
                let inv = self.lock_inv(&class, &obj)?;
                if let Some(inv) = &inv {
                    self.push_lock_inv(inv.clone(), op.span, out);
                }
                if kw == "wait" {
                    // Woken up: the lock is taken again, with whatever the invariant says.
                    if let Some(inv) = inv {
                        out.push(Stmt::new(StmtKind::Inhale(inv), Origin::new(Role::Code, sp)));
                    }
                    out.push(Stmt::new(StmtKind::Inhale(h), Origin::new(Role::Code, sp)));
                }
            }
            "notify" => {
                let h = self.token_acc("held", obj, sp);
                out.push(Self::tok_stmt(StmtKind::Assert(h), "held", op.span));
            }
            _ => {
                if !self.runnable.contains(&class) {
                    self.bad(
                        format!(
                            "`{kw}` needs a thread, and class `{class}` has no `void run()` method"
                        ),
                        e.span,
                    );
                    return Err(());
                }
                // The thread's `run` is the overload without parameters.
                let run = self
                    .callables
                    .get(&(class.clone(), "run".into()))
                    .and_then(|v| v.iter().find(|c| c.params.is_empty()))
                    .cloned();
                let Some(run) = run else { return Err(()) };
                let mut args = vec![obj.clone()];
                if let Some(have) = self.read_arg(&run, &args)? {
                    // The `read` amount `run` takes at `fork` must be the one `join` gives
                    // back: a fixed positive amount per thread object, chosen at `fork` below
                    // half of what the forking thread holds (`join` may run in another method,
                    // where that is unknown, and must not return more than was given).
                    let rd = self.thread_rd(obj);
                    if kw == "fork" {
                        let bound = Exp::implies(
                            Exp::bin("<", Exp::synth(ExpKind::NoPerm), have.clone()),
                            Exp::bin("<=", rd.clone(), have),
                        );
                        out.push(Stmt::new(StmtKind::Inhale(bound), Origin::synthetic()));
                    }
                    args.push(rd);
                }
                let m = format!("{}_{kw}", run.viper);
                out.push(Stmt::new(
                    StmtKind::Call(vec![], m, args),
                    Origin::new(Role::Call, sp).with_label(kw),
                ));
            }
        }
        Ok(true)
    }

    /// `commit e;`: the invariant of `e`'s class contract is established and given to the lock,
    /// which may be taken from then on.
    fn commit(&mut self, e: &Expr, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        let class = self.committed_class(e, "`commit`")?;
        let x = self.code(e)?;
        self.flush_pending(out);
        let obj = self.evaluated_once(x, span, out);
        if let Some(inv) = self.lock_inv(&class, &obj)? {
            self.push_lock_inv(inv, span, out);
        }
        let c = self.committed(obj, Some(span));
        out.push(Stmt::new(StmtKind::Inhale(c), Origin::new(Role::Code, Some(span))));
        Ok(())
    }

    /// `vct_thread_rd(t)`: the positive `read` amount a thread's `run` holds, fixed per thread
    /// object (declared on first use).
    fn thread_rd(&mut self, t: Exp) -> Exp {
        const NAME: &str = "vct_thread_rd";
        let positive = Contract {
            exp: Exp::bin("<", Exp::synth(ExpKind::NoPerm), Exp::synth(ExpKind::Result)),
            origin: Origin::synthetic(),
        };
        self.object_function(NAME, "t", Ty::Perm, vec![positive]);
        Exp::app(NAME, vec![t])
    }

    /// Exhale an encoded lock invariant, one conjunct at a time.
    fn push_lock_inv(&mut self, inv: Exp, span: Span, out: &mut Vec<Stmt>) {
        let mut parts = Vec::new();
        super::quant::split_and(inv, &mut parts);
        // Pure parts first: they read the heap before anything is given away.
        parts.sort_by_key(|p| p.has_acc());
        for p in parts {
            let sp = p.span.or(Some(span));
            let k = if p.has_acc() { StmtKind::Exhale(p) } else { StmtKind::Assert(p) };
            out.push(Stmt::new(k, Origin::new(Role::LockInvariant, sp).with_clause(span)));
        }
    }

    pub(super) fn flush_pending(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.pending);
    }

    /// The operand of an opaque `kw e;` statement, parsed with its spans in the file.
    pub(super) fn opaque_operand(&mut self, op: &ast::Opaque) -> R<Expr> {
        let body = op.text.strip_prefix(op.keyword.as_str()).unwrap_or("");
        let body = body.trim_end();
        let body = body.strip_suffix(';').unwrap_or(body);
        let text = at_offset(op.span.start() + op.keyword.len(), body);
        let parsed = front::parser::parse_expr_text(&text, Dialect::V1)
            .or_else(|_| front::parser::parse_expr_text(&text, Dialect::V2));
        match parsed {
            Ok(e) => Ok(e),
            Err(_) => {
                self.diags.push(
                    Diagnostic::error(
                        "V-BAD-INPUT",
                        format!("cannot read the operand of `{}`", op.keyword),
                    )
                    .with_primary(op.span, format!("expected `{} EXPRESSION;`", op.keyword)),
                );
                Err(())
            }
        }
    }

    /// Constructor prologue: a thread starts idle.
    pub(super) fn ctor_prologue(&mut self, out: &mut Vec<Stmt>) {
        let Some(c) = self.class.clone() else { return };
        if self.runnable.contains(&c) {
            let t = self.token_acc("idle", Exp::var("this"), None);
            out.push(Stmt::new(StmtKind::Inhale(t), Origin::synthetic()));
        }
    }

    /// Constructor epilogue: the object is shared, so its lock invariant must hold.
    pub(super) fn ctor_epilogue(&mut self, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        let Some(c) = self.class.clone() else { return Ok(()) };
        // A class contract's invariant is established by `commit`, not here.
        if self.committed_locks.contains(&c) {
            return Ok(());
        }
        if let Some(inv) = self.lock_inv(&c, &Exp::var("this"))? {
            self.push_lock_inv(inv, span, out);
        }
        Ok(())
    }

    /// The constructor's extra postconditions: the new object is not null (Viper's `new`
    /// guarantees it; callers compare objects with `null`), and `idle(this)` for a thread class.
    pub(super) fn ctor_posts(&mut self, span: Span, posts: &mut Vec<Contract>) {
        posts.push(Contract {
            exp: Exp::bin("!=", Exp::var("this"), Exp::synth(ExpKind::Null)),
            origin: Origin::new(Role::Post, Some(span)),
        });
        let Some(c) = self.class.clone() else { return };
        if self.runnable.contains(&c) {
            // VerCors 2 users state `ensures idle(this);` themselves: the token is given once.
            let idle = self.token("idle");
            let stated = posts.iter().any(|p| {
                let mut found = false;
                p.exp.visit(&mut |e| {
                    found |= matches!(&e.kind, ExpKind::App(f, xs) if *f == idle
                        && matches!(xs.as_slice(), [x] if matches!(&x.kind, ExpKind::Var(v) if v == "this")));
                });
                found
            });
            if !stated {
                let t = self.token_acc("idle", Exp::var("this"), None);
                posts.push(Contract { exp: t, origin: Origin::new(Role::Post, Some(span)) });
            }
        }
    }

    /// Next to a thread class's `run`: the bodiless `run_fork` and `run_join` methods.
    pub(super) fn thread_methods(
        &mut self,
        m: &ast::Method,
        viper: &str,
        params: &[(String, Ty)],
        rd: Option<&str>,
        pres: &[Contract],
        posts: &[Contract],
    ) -> R<()> {
        let Some(c) = self.class.clone() else { return Ok(()) };
        if !self.runnable.contains(&c) || m.name.name != "run" {
            return Ok(());
        }
        // `\old` in `run`'s postcondition means the state at `fork`, which `join` cannot see.
        if posts.iter().any(|p| has_old(&p.exp)) {
            self.unsupported("`\\old` in the postcondition of a thread's `run`", m.name.span);
            return Err(());
        }
        let sp = Some(m.name.span);
        let idle = self.token_acc("idle", Exp::var("this"), None);
        let running = self.token_acc("running", Exp::var("this"), None);
        let tok = |e: Exp, t: &str| Contract {
            exp: e,
            origin: Origin::new(Role::Token, sp).with_label(t),
        };
        let mut fork_pres = vec![tok(idle.clone(), "idle")];
        fork_pres.extend(pres.iter().cloned());
        // `join`'s postcondition holds `read` amounts too: they are positive.
        let mut join_pres = vec![tok(running.clone(), "running")];
        if let Some(rd) = rd {
            let positive = Exp::bin("<", Exp::synth(ExpKind::NoPerm), Exp::var(rd));
            join_pres.push(Contract { exp: positive, origin: Origin::new(Role::Pre, sp) });
        }
        let mut join_posts: Vec<Contract> = posts.to_vec();
        join_posts.push(tok(idle, "idle"));
        for (kw, pres, posts) in [
            ("fork", fork_pres, vec![tok(running.clone(), "running")]),
            ("join", join_pres, join_posts),
        ] {
            self.out.methods.push(Method {
                name: format!("{viper}_{kw}"),
                params: params.to_vec(),
                returns: vec![],
                pres,
                posts,
                body: None,
                // Not a PVL method of its own: `run`'s contract is checked (and its
                // satisfiability too) on `run` itself.
                kind: MethodKind::Prelude,
                span: sp,
            });
        }
        Ok(())
    }

    /// The implicit default constructors declared by [`Self::collect_sync`].
    pub(super) fn default_constructors(&mut self) {
        for (class, span) in std::mem::take(&mut self.default_ctors) {
            self.reset_member(Some(&class), true, "constructor");
            self.is_static = false;
            self.used.insert("this".into());
            self.vtypes.insert("this".into(), Ty::Ref);
            let fields: Vec<(String, ast::Type)> = self
                .classes
                .get(&class)
                .map(|c| c.fields.iter().map(|(f, t)| (f.clone(), t.clone())).collect())
                .unwrap_or_default();
            let names = fields.iter().map(|(f, _)| self.field_name(&class, f)).collect();
            let mut body =
                vec![Stmt::new(StmtKind::New("this".into(), names), Origin::synthetic())];
            // Fields start at their default values, as in Java.
            for (f, t) in &fields {
                let v = match t.kind {
                    TypeKind::Int => Exp::int(0),
                    TypeKind::Boolean | TypeKind::Bool => Exp::bool(false),
                    _ => continue,
                };
                let lhs = Exp::field(Exp::var("this"), self.field_name(&class, f));
                body.push(Stmt::new(StmtKind::Assign(lhs, v), Origin::synthetic()));
            }
            self.ctor_prologue(&mut body);
            let mut posts = Vec::new();
            self.ctor_posts(span, &mut posts);
            if self.ctor_epilogue(span, &mut body).is_err() {
                continue;
            }
            let viper = self.member_name(Some(&class), "constructor");
            self.out.methods.push(Method {
                name: viper,
                params: vec![],
                returns: vec![("this".into(), Ty::Ref)],
                pres: vec![],
                posts,
                body: Some(body),
                kind: MethodKind::Pvl,
                span: Some(span),
            });
        }
    }
}

fn has_old(e: &Exp) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x.kind, ExpKind::Old(..)));
    found
}

/// `text` preceded by `start` spaces: parsed, its spans are the file's offsets of the text
/// found at `start` (the operands of opaque statements, kept as text).
pub(super) fn at_offset(start: usize, text: &str) -> String {
    format!("{}{text}", " ".repeat(start))
}
