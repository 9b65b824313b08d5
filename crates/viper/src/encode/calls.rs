//! Calls in expressions: pure functions (their `given` arguments too), methods called for
//! their result, predicate instances, inline predicates and functions, VerCors' library
//! functions on collections, and `\typeof` tests.

use super::exprs::half_least_held;
use super::typing::is_seq;
use super::{CallKind, Encoder, R};
use crate::ast::{Exp, ExpKind, Origin, Role, Stmt, StmtKind};
use front::ast::{self, Builtin, Expr, ExprKind, Type, TypeKind};
use front::span::Span;

impl Encoder<'_> {
    /// `p(args)` in a resource position or after fold/unfold: the predicate instance.
    pub fn resource_call(&mut self, e: &Expr) -> R<Exp> {
        if let ExprKind::Call { recv, name, args, .. } = &e.kind {
            if let Some(c) = self.callee(recv.as_deref(), &name.name, args) {
                if c.kind == CallKind::Predicate && c.inline.is_none() {
                    let mut xs = Vec::new();
                    if !c.is_static {
                        xs.push(self.recv_arg(recv.as_deref(), false, e.span)?);
                    }
                    for (a, t) in args.iter().zip(Self::param_types(&c, args.len())) {
                        xs.push(self.expr_to(a, t.as_ref(), false)?);
                    }
                    return Ok(Exp::new(ExpKind::App(c.viper.clone(), xs), Some(e.span)));
                }
            }
        }
        self.bad("expected a (non-inline) predicate instance", e.span);
        Err(())
    }

    pub(super) fn call_expr(
        &mut self,
        recv: Option<&Expr>,
        name: &ast::Ident,
        args: &[Expr],
        ghost: &ast::GhostArgs,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        if let Some(app) = self.adt_call(recv, name, args, code, span) {
            return app;
        }
        let Some(c) = self.callee(recv, &name.name, args) else {
            if recv.is_none() {
                if let Some(e) = self.library_call(&name.name, args, code, span) {
                    return e;
                }
                // VerCors 2 resources this encoding does not have: refused by name.
                if UNENCODED_BUILTINS.contains(&name.name.as_str()) {
                    self.unsupported(&format!("VerCors' `{}`", name.name), span);
                    return Err(());
                }
            }
            self.bad(format!("unknown method or function `{}`", name.name), name.span);
            return Err(());
        };
        match c.kind {
            CallKind::Predicate => {
                if let Some((ps, body)) = &c.inline {
                    // Inline predicates are macros: substitute the arguments.
                    let mut xs = Vec::new();
                    for (a, t) in args.iter().zip(Self::param_types(&c, args.len())) {
                        xs.push(self.expr_to(a, t.as_ref(), false)?);
                    }
                    let this =
                        if c.is_static { None } else { Some(self.recv_arg(recv, false, span)?) };
                    // A recursive inline predicate cannot be expanded (its expansion recursed
                    // until the stack overflowed; found by the fuzzer, `fixtures/fuzz/`).
                    if self.expanding.contains(&c.viper) {
                        let msg = format!("the inline predicate `{}` uses itself", name.name);
                        self.bad(format!("{msg}: it cannot be expanded"), name.span);
                        return Err(());
                    }
                    // The body means its own class's fields, of the receiver, and none of the
                    // caller's locals.
                    self.expanding.push(c.viper.clone());
                    let b = self.in_member_scope(c.class.as_deref(), c.is_static, |me| {
                        me.spec_with_params(ps, &c.params, body)
                    });
                    self.expanding.pop();
                    let mut b = b?;
                    // `this` first: the arguments may mention the caller's own `this`.
                    if let Some(r) = this {
                        b = b.subst("this", &r);
                    }
                    for (p, x) in ps.iter().zip(xs) {
                        b = b.subst(&format!("%{p}"), &x);
                    }
                    return Ok(b);
                }
                let inst = self.resource_call(&Expr::new(
                    ExprKind::Call {
                        recv: recv.map(|r| Box::new(r.clone())),
                        name: name.clone(),
                        args: args.to_vec(),
                        ghost: Default::default(),
                        null_safe: false,
                    },
                    span,
                ))?;
                Ok(Exp::new(
                    ExpKind::Acc(Box::new(inst), Box::new(Exp::synth(ExpKind::Write))),
                    Some(span),
                ))
            }
            CallKind::Function if c.inline.is_some() => {
                self.expand_inline(&c, recv, args, code, span)
            }
            CallKind::Function => {
                let mut xs = Vec::new();
                if !c.is_static {
                    xs.push(self.recv_arg(recv, code, span)?);
                }
                for (a, t) in args.iter().zip(Self::param_types(&c, args.len())) {
                    xs.push(self.expr_to(a, t.as_ref(), code)?);
                }
                // Ghost parameters after the others, as the function declares them.
                if !c.given.is_empty() {
                    xs.extend(self.given_args(&c, ghost, span, None)?);
                }
                Ok(Exp::new(ExpKind::App(c.viper.clone(), xs), Some(span)))
            }
            CallKind::Method | CallKind::Constructor => {
                if !code {
                    self.bad(
                        format!("the non-pure method `{}` is called in a specification", name.name),
                        span,
                    );
                    return Err(());
                }
                if !c.given.is_empty() || !c.yields.is_empty() {
                    self.unsupported("a call with ghost parameters inside an expression", span);
                    return Err(());
                }
                let mut xs = Vec::new();
                if !c.is_static {
                    xs.push(self.recv_arg(recv, code, span)?);
                }
                for (a, t) in args.iter().zip(Self::param_types(&c, args.len())) {
                    xs.push(self.expr_to(a, t.as_ref(), code)?);
                }
                if let Some(rd) = self.read_arg(&c, &xs)? {
                    xs.push(rd);
                }
                let ty = self.viper_ty(&c.ret)?;
                let t = self.temp("tmp", ty);
                self.pending.push(Stmt::new(
                    StmtKind::Call(vec![t.clone()], c.viper.clone(), xs),
                    Origin::new(Role::Call, Some(span)),
                ));
                Ok(Exp::new(ExpKind::Var(t), Some(span)))
            }
        }
    }

    /// The declared types of a callee's first `n` parameters (`None` past its arity: a wrong
    /// argument count is the type checker's to report).
    pub(super) fn param_types(c: &super::Callable, n: usize) -> Vec<Option<Type>> {
        (0..n).map(|i| c.params.get(i).cloned()).collect()
    }

    /// VerCors' library functions on collections, when the program defines no function of that
    /// name: `isEmpty(xs)` (`|xs| == 0`) and `removeAt(xs, i)` (`xs[..i] ++ xs[i + 1..]`).
    fn library_call(
        &mut self,
        name: &str,
        args: &[Expr],
        code: bool,
        span: Span,
    ) -> Option<R<Exp>> {
        let sp = Some(span);
        let coll = |me: &Self, e: &Expr| {
            me.type_of(e).is_some_and(|t| {
                matches!(
                    t.kind,
                    TypeKind::Generic1(
                        ast::Generic1::Seq | ast::Generic1::Set | ast::Generic1::Bag,
                        _
                    )
                )
            })
        };
        if let Some(e) = self.map_call(name, args, code, span) {
            return Some(e);
        }
        match (name, args) {
            ("isEmpty", [s]) if coll(self, s) => Some(self.expr(s, code).map(|s| {
                Exp::bin("==", Exp::new(ExpKind::Len(Box::new(s)), sp), Exp::int(0)).with_span(sp)
            })),
            ("removeAt", [s, i]) if self.type_of(s).as_ref().is_some_and(is_seq) => Some((|| {
                let s = self.expr(s, code)?;
                let i = self.expr(i, code)?;
                let front = ExpKind::SeqSlice(Box::new(s.clone()), None, Some(Box::new(i.clone())));
                let back = ExpKind::SeqSlice(
                    Box::new(s),
                    Some(Box::new(Exp::bin("+", i, Exp::int(1)))),
                    None,
                );
                Ok(Exp::new(
                    ExpKind::Binary("++", Box::new(Exp::synth(front)), Box::new(Exp::synth(back))),
                    sp,
                ))
            })(
            )),
            ("getOption", [o]) if self.is_option(o) => Some(
                self.expr(o, code)
                    .map(|o| Exp::new(ExpKind::SeqIndex(Box::new(o), Box::new(Exp::int(0))), sp)),
            ),
            ("getOrElseOption", [o, d]) if self.is_option(o) => Some((|| {
                let o = self.expr(o, code)?;
                let d = self.expr(d, code)?;
                let full =
                    Exp::bin(">", Exp::synth(ExpKind::Len(Box::new(o.clone()))), Exp::int(0));
                let x = Exp::synth(ExpKind::SeqIndex(Box::new(o), Box::new(Exp::int(0))));
                Ok(Exp::new(ExpKind::Cond(Box::new(full), Box::new(x), Box::new(d)), sp))
            })()),
            _ => None,
        }
    }

    /// `\typeof(this) == C` (or `== \type(C)`): PVL classes have no subclasses, so the dynamic
    /// type of `this` is its class. `None` when `a == b` is no such test; other `\typeof` operands (which may be
    /// `null`) are refused.
    pub(super) fn typeof_test(&mut self, a: &Expr, b: &Expr) -> Option<R<bool>> {
        let ExprKind::Builtin(Builtin::TypeOf, args) = &a.kind else {
            return None;
        };
        let this = matches!(args.as_slice(), [Expr { kind: ExprKind::This, .. }]);
        let class = match &b.kind {
            ExprKind::Name(c) if self.lookup(&c.name).is_none() => {
                self.classes.contains_key(&c.name).then(|| c.name.clone())
            }
            // VerCors 2's type value `\type(C)` of a class.
            ExprKind::Opaque(o) if o.keyword == "\\type" => {
                let inner = o.text.trim().strip_prefix("\\type").map(str::trim);
                let name =
                    inner.and_then(|t| t.strip_prefix('(')?.strip_suffix(')')).map(str::trim);
                name.filter(|n| self.classes.contains_key(*n)).map(str::to_string)
            }
            _ => None,
        };
        match (this && !self.is_static, class, self.class.clone()) {
            (true, Some(c), Some(own)) => Some(Ok(c == own)),
            _ => {
                self.unsupported("`\\typeof` other than `\\typeof(this) == Class`", a.span);
                Some(Err(()))
            }
        }
    }

    fn is_option(&self, e: &Expr) -> bool {
        self.type_of(e)
            .is_some_and(|t| matches!(t.kind, TypeKind::Generic1(ast::Generic1::Option, _)))
    }

    /// The permission argument for a callee's `read`: half of the least amount the caller
    /// holds of the read locations. If that is zero, the callee's `none < rd` fails, which is
    /// the right error (the caller lacks permission).
    pub(super) fn read_arg(&mut self, c: &super::Callable, args: &[Exp]) -> R<Option<Exp>> {
        if c.read_locs.is_empty() {
            return Ok(None);
        }
        let saved_class = std::mem::replace(&mut self.class, c.class.clone());
        let saved_static = std::mem::replace(&mut self.is_static, c.is_static);
        let locs: R<Vec<Exp>> = self.with_placeholders(&c.param_names, &c.params, |me| {
            c.read_locs.iter().map(|l| me.spec(l)).collect()
        });
        self.class = saved_class;
        self.is_static = saved_static;
        let (recv, rest) =
            if c.is_static { (None, args) } else { (args.first(), &args[1.min(args.len())..]) };
        let mut amounts = Vec::new();
        for l in locs? {
            let mut l = l;
            for (p, a) in c.param_names.iter().zip(rest) {
                l = l.subst(&format!("%{p}"), a);
            }
            if let Some(r) = recv {
                l = l.subst("this", r);
            }
            amounts.push(l);
        }
        Ok(half_least_held(amounts))
    }

    /// An inline function call: its body with the arguments for the parameters. The body is
    /// encoded in the callee's own context (class, static-ness) with only its parameters in
    /// scope, so that the caller's locals cannot capture its names.
    fn expand_inline(
        &mut self,
        c: &super::Callable,
        recv: Option<&Expr>,
        args: &[Expr],
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let Some((ps, body)) = &c.inline else { return Err(()) };
        let own = matches!(recv, None | Some(Expr { kind: ExprKind::This, .. }));
        if self.expanding.contains(&c.viper) || (!c.is_static && !own) {
            let what = if c.is_static || own {
                "a recursive inline function"
            } else {
                "an inline instance function called on another object"
            };
            self.unsupported(what, span);
            return Err(());
        }
        let xs = args.iter().map(|a| self.expr(a, code)).collect::<R<Vec<_>>>()?;
        let scopes = std::mem::take(&mut self.scopes);
        let class = std::mem::replace(&mut self.class, c.class.clone());
        let body_static = c.is_static || self.is_static;
        let is_static = std::mem::replace(&mut self.is_static, body_static);
        self.expanding.push(c.viper.clone());
        let b = self.with_placeholders(ps, &c.params, |me| me.expr(body, code));
        self.expanding.pop();
        self.scopes = scopes;
        self.class = class;
        self.is_static = is_static;
        let mut b = b?;
        for (p, x) in ps.iter().zip(xs) {
            b = b.subst(&format!("%{p}"), &x);
        }
        Ok(b.with_span(Some(span)))
    }

    /// Encode an inline predicate body with its parameters as placeholders `%p`.
    fn spec_with_params(&mut self, ps: &[String], tys: &[Type], body: &Expr) -> R<Exp> {
        self.with_placeholders(ps, tys, |me| me.spec(body))
    }
}

/// VerCors 2's built-in resources and functions that the encoding does not have (`AutoValue(x)`:
/// the permission to read `x` that a frame keeps automatically).
const UNENCODED_BUILTINS: &[&str] = &["AutoValue"];
