//! Expressions to [`CE`] trees: names resolved to slots, fields to ids, pure calls to
//! method ids, inline predicates expanded, quantifier bounds extracted; and the properties
//! of compiled expressions the interpreter relies on ([`is_simple`], [`has_resource`]).

use super::*;

impl<'a> Compiler<'a> {
    /// The body of the `inline` predicate `m` applied to `args` (on the current receiver),
    /// as `let`s binding fresh slots to the arguments around the body: VerCors expands an
    /// inline predicate where it is used, so its permissions move like written-out ones.
    /// `None` for a predicate that is not inline, has no body, or is being expanded already.
    fn inline_predicate(&mut self, m: u32, args: &[CE]) -> Option<CE> {
        let md = *self.asts.get(m as usize)?;
        let MethodBody::Expr(body) = &md.body else {
            return None;
        };
        if !md.has_modifier(Modifier::Inline)
            || self.expanding.contains(&m)
            || md.params.len() != args.len()
        {
            return None;
        }
        self.expanding.push(m);
        self.scope.push();
        let slots: Vec<u32> = md
            .params
            .iter()
            .map(|p| self.scope.declare(&p.name.name, Ty::from_ast(&p.ty)))
            .collect();
        let inner = self.expr(body, &mut None);
        self.scope.pop();
        self.expanding.pop();
        let mut e = inner;
        for (slot, arg) in slots.into_iter().zip(args.iter()).rev() {
            e = CE::Let(slot, Box::new(arg.clone()), Box::new(e));
        }
        Some(e)
    }

    pub(super) fn bx(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> Box<CE> {
        Box::new(self.expr(e, pre))
    }

    /// Lower an expression. `pre` receives hoisted non-pure calls (statement context); in
    /// specifications it is `None` and such calls are unsupported.
    pub(super) fn expr(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> CE {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(v) => match v.to_i64() {
                Some(i) => CE::Int(i),
                None => CE::Const(Value::big(v.clone())),
            },
            ExprKind::Bool(b) => CE::Bool(*b),
            ExprKind::Opaque(_) if front::exprtext::float_literal(e).is_some() => {
                let zero = (0.into(), 1.into());
                let (n, d) = front::exprtext::float_literal(e).unwrap_or(zero);
                let q = crate::value::Q::from_big(num_rational::BigRational::new(n, d));
                CE::Const(Value::perm(Amt { q, k: 0 }))
            }
            ExprKind::Null => CE::Null,
            ExprKind::This => CE::This,
            ExprKind::Write => CE::Write,
            ExprKind::Read => CE::Read,
            ExprKind::NoPerm => CE::NoPerm,
            ExprKind::Result => CE::Result,
            ExprKind::Name(id) => {
                if let Some((s, t)) = self.scope.lookup(&id.name) {
                    return to_rat(t.is_rational(), CE::Local(s), span);
                }
                let cls = &self.out.classes[self.cur_class as usize];
                if let Some(f) = cls.fields.iter().find(|f| f.1 == id.name) {
                    let rat = f.2.is_rational();
                    let fid = self.field_id(&id.name);
                    return to_rat(rat, CE::Field(Box::new(CE::This), fid, span), span);
                }
                self.errors.push(
                    Diagnostic::error("R-NAME", format!("unknown name `{}`", id.name))
                        .with_primary(span, "not a local, parameter or field"),
                );
                CE::Unsupported(format!("unknown name `{}`", id.name), span)
            }
            ExprKind::Unary(UnOp::Not, x) => CE::Not(self.bx(x, pre)),
            ExprKind::Unary(UnOp::Neg, x) => CE::Neg(self.bx(x, pre), span),
            ExprKind::Binary(op @ (BinOp::Eq | BinOp::Ne), l, r)
                if self.typeof_test(l, r).or_else(|| self.typeof_test(r, l)).is_some() =>
            {
                let same = self.typeof_test(l, r).or_else(|| self.typeof_test(r, l));
                CE::Bool(same == Some(*op == BinOp::Eq))
            }
            ExprKind::Binary(op, l, r) => {
                // `/` of floats divides the rationals they are (`\`); on fractions `/` stays
                // the integer operator it is in PVL.
                let float_div = matches!(op, BinOp::Div | BinOp::TruncDiv)
                    && (self.may_be_real(l) || self.may_be_real(r));
                let op = if float_div { &BinOp::Frac } else { op };
                let (l, r) = (self.bx(l, pre), self.bx(r, pre));
                match op {
                    // A magic wand is a ghost resource the interpreter does not track: its
                    // footprint stays with its holder (`create` and `apply` run nothing), so
                    // the program's values are the same and no permission is lost.
                    BinOp::Wand => CE::Bool(true),
                    BinOp::Pow => CE::Unsupported(format!("operator `{}`", op.symbol()), span),
                    _ => CE::Bin(*op, l, r, span),
                }
            }
            ExprKind::Cond(c, a, b) => CE::Cond(self.bx(c, pre), self.bx(a, pre), self.bx(b, pre)),
            ExprKind::Field(obj, f) => {
                let o = self.bx(obj, pre);
                let class_field =
                    |n: &str| self.out.classes.iter().any(|c| c.fields.iter().any(|x| x.1 == n));
                if f.name == "length" {
                    CE::Length(o, span)
                } else if matches!(f.name.as_str(), "fst" | "snd") && !class_field(&f.name) {
                    // v2 tuple projections (no class declares a field of that name).
                    let op = if f.name == "fst" { GOp::Fst } else { GOp::Snd };
                    CE::Ghost(op, vec![*o], span)
                } else {
                    // A field some class declares rational (extra conversions are harmless).
                    let rat = self
                        .out
                        .classes
                        .iter()
                        .any(|c| c.fields.iter().any(|x| x.1 == f.name && x.2.is_rational()));
                    let fid = self.field_id(&f.name);
                    to_rat(rat, CE::Field(o, fid, span), span)
                }
            }
            ExprKind::Index(a, i) => CE::Index(self.bx(a, pre), self.bx(i, pre), span),
            ExprKind::Slice(s, lo, hi) => {
                let s = self.bx(s, pre);
                let lo = lo.as_ref().map(|x| self.bx(x, pre));
                let hi = hi.as_ref().map(|x| self.bx(x, pre));
                CE::Slice(s, lo, hi, span)
            }
            ExprKind::SeqUpdate(s, i, v) => {
                CE::SeqUpdate(self.bx(s, pre), self.bx(i, pre), self.bx(v, pre), span)
            }
            ExprKind::Length(x) => CE::Length(self.bx(x, pre), span),
            ExprKind::Old(x, None) => CE::Old(self.bx(x, pre)),
            ExprKind::Call { recv, name, args, null_safe, .. } => {
                let Some(m) = self.resolve_call(recv.as_deref(), &name.name, args.len()) else {
                    if let Some(d) =
                        recv.is_none().then(|| prelude_call(&name.name, args)).flatten()
                    {
                        return self.expr(&d, pre);
                    }
                    if let Some(op) =
                        recv.is_none().then(|| library_op(&name.name, args.len())).flatten()
                    {
                        let a = args.iter().map(|x| self.expr(x, pre)).collect();
                        return CE::Ghost(op, a, span);
                    }
                    // A receiver of a class no file given declares: the class lives elsewhere.
                    let elsewhere = match recv.as_deref().map(|r| &r.kind) {
                        Some(ExprKind::Name(id)) => match self.scope.lookup(&id.name) {
                            Some((_, Ty::Class(c)))
                                if !self.out.classes.iter().any(|k| k.name == *c) =>
                            {
                                Some(c.clone())
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    let mut d =
                        Diagnostic::error("R-NAME", format!("unknown method `{}`", name.name))
                            .with_primary(name.span, "no such method");
                    if let Some(c) = elsewhere {
                        d = d.with_help(format!(
                            "class `{c}` is declared in no file given: pass the file that declares it with --with FILE"
                        ));
                    }
                    self.errors.push(d);
                    return CE::Unsupported(format!("unknown method `{}`", name.name), span);
                };
                // Function and predicate calls count as calls too: validation compares the
                // callers of a changed function.
                if !self.cur_calls.contains(&m) {
                    self.cur_calls.push(m);
                }
                let md = &self.out.methods[m as usize];
                let (is_pure, is_pred) = (md.is_pure, md.is_predicate);
                let rat = md.ret.is_rational();
                if !is_pure && !is_pred {
                    return match pre {
                        Some(p) => {
                            let t = self.scope.temp();
                            let mut inner = Vec::new();
                            let saved = std::mem::take(&mut self.code);
                            self.call_stmt(Some(Target::Local(t)), e, span);
                            inner.extend(std::mem::replace(&mut self.code, saved));
                            p.extend(inner);
                            CE::Local(t)
                        }
                        None => CE::Unsupported(
                            format!("call of non-pure method `{}` in a specification", name.name),
                            span,
                        ),
                    };
                }
                let r = match recv.as_deref() {
                    Some(r) if !self.is_class_name(r) => Some(self.bx(r, pre)),
                    _ => None,
                };
                let mut a: Vec<CE> = args.iter().map(|x| self.expr(x, pre)).collect();
                if !is_pred {
                    a.extend(self.given_args(m, e, pre));
                }
                if is_pred && r.is_none() {
                    if let Some(e) = self.inline_predicate(m, &a) {
                        return e;
                    }
                }
                if is_pred {
                    match r {
                        // `x->p()` (v1) / `x?.p()` (v2): `x != null ==> x.p()`.
                        Some(r) if *null_safe => {
                            let nn = CE::Bin(BinOp::Ne, r.clone(), Box::new(CE::Null), span);
                            let p = CE::Pred { pred: m, recv: Some(r), args: a, span };
                            CE::Bin(BinOp::Implies, Box::new(nn), Box::new(p), span)
                        }
                        r => CE::Pred { pred: m, recv: r, args: a, span },
                    }
                } else {
                    to_rat(rat, CE::CallPure { method: m, recv: r, args: a, span }, span)
                }
            }
            ExprKind::Builtin(b @ (Builtin::Perm | Builtin::Value | Builtin::PointsTo), args)
                if whole_array(args).is_some() =>
            {
                let d = whole_array(args).map(|(a, rest)| every_cell(*b, a, rest));
                match d {
                    Some(d) => self.expr(&d, pre),
                    None => CE::Unsupported("`a[*]`".into(), span),
                }
            }
            ExprKind::Builtin(b, args) => {
                let mut a: Vec<CE> = args.iter().map(|x| self.expr(x, pre)).collect();
                match (b, a.len()) {
                    (Builtin::Perm, 2) => {
                        let p = a.pop().unwrap_or(CE::NoPerm);
                        let l = location(a.pop().unwrap_or(CE::Null));
                        CE::Perm(Box::new(l), Box::new(p), span)
                    }
                    (Builtin::PointsTo, 3) => {
                        let v = a.pop().unwrap_or(CE::Null);
                        let p = a.pop().unwrap_or(CE::NoPerm);
                        let l = location(a.pop().unwrap_or(CE::Null));
                        CE::PointsTo(Box::new(l), Box::new(p), Box::new(v), span)
                    }
                    (Builtin::Value, 1) => {
                        let l = location(a.pop().unwrap_or(CE::Null));
                        CE::Perm(Box::new(l), Box::new(CE::Read), span)
                    }
                    (Builtin::Array, 2) => {
                        let n = a.pop().unwrap_or(CE::Null);
                        let x = a.pop().unwrap_or(CE::Null);
                        CE::ArrayShape(Box::new(x), Box::new(n))
                    }
                    (Builtin::Matrix, 3) => {
                        let c = a.pop().unwrap_or(CE::Null);
                        let r = a.pop().unwrap_or(CE::Null);
                        let m = a.pop().unwrap_or(CE::Null);
                        CE::MatrixShape(Box::new(m), Box::new(r), Some(Box::new(c)))
                    }
                    (Builtin::LengthFn, 1) => CE::Length(Box::new(a.remove(0)), span),
                    (Builtin::Head, 1) => CE::Head(Box::new(a.remove(0)), span),
                    (Builtin::Tail, 1) => CE::Tail(Box::new(a.remove(0)), span),
                    (Builtin::Values, 3) => CE::Ghost(GOp::ArrayValues, a, span),
                    (Builtin::Held | Builtin::Idle | Builtin::Running, 1) => {
                        self.token(*b, a.remove(0), span)
                    }
                    (Builtin::Some, 1) => CE::Ghost(GOp::Some, a, span),
                    (Builtin::PermOf, 1) => CE::PermOf(Box::new(location(a.remove(0))), span),
                    _ => CE::Unsupported(format!("built-in `{}`", b.name()), span),
                }
            }
            ExprKind::Quant { kind, bindings, cond, body } => {
                self.scope.push();
                let mut binders = Vec::new();
                for b in bindings {
                    let s = self.scope.declare(&b.name.name, Ty::from_ast(&b.ty));
                    let mut binder = Binder {
                        slot: s,
                        name: b.name.name.clone(),
                        lows: Vec::new(),
                        highs: Vec::new(),
                        members: Vec::new(),
                    };
                    if let Some((lo, hi)) = &b.range {
                        binder.lows.push(self.expr(lo, &mut None));
                        binder.highs.push(self.expr(hi, &mut None));
                    }
                    binders.push(binder);
                }
                // `\forall int i; lo <= i && i < hi ==> body` states its range in the body:
                // the same formula as `\forall int i; lo <= i && i < hi; body`.
                let (cond, body) = match (cond, &body.kind) {
                    (None, ExprKind::Binary(BinOp::Implies, l, r))
                        if matches!(kind, QuantKind::Forall | QuantKind::ForallStar) =>
                    {
                        (Some(l), r)
                    }
                    _ => (cond.as_ref(), body),
                };
                let c = cond.map(|c| self.expr(c, &mut None));
                let implied = match &c {
                    Some(c) => extract_bounds(c, &mut binders),
                    None => true,
                };
                let body = self.expr(body, &mut None);
                // A binder the condition does not bound may still range over a collection the
                // formula implies (see `domain`).
                let slots: Vec<u32> = binders.iter().map(|b| b.slot).collect();
                for b in binders.iter_mut() {
                    if b.members.is_empty() && (b.lows.is_empty() || b.highs.is_empty()) {
                        let d =
                            super::domain::implied_domain(*kind, c.as_ref(), &body, b.slot, &slots);
                        b.members.extend(d);
                    }
                }
                self.scope.pop();
                CE::Quant {
                    kind: *kind,
                    binders,
                    implied,
                    cond: c.map(Box::new),
                    body: Box::new(body),
                    span,
                }
            }
            ExprKind::Sum { ty, name, cond, body } => {
                self.scope.push();
                let s = self.scope.declare(&name.name, Ty::from_ast(ty));
                let mut binders = vec![Binder {
                    slot: s,
                    name: name.name.clone(),
                    lows: Vec::new(),
                    highs: Vec::new(),
                    members: Vec::new(),
                }];
                let c = self.expr(cond, &mut None);
                let implied = extract_bounds(&c, &mut binders);
                let b = self.expr(body, &mut None);
                self.scope.pop();
                let binder = binders.remove(0);
                CE::Sum { binder, implied, cond: Box::new(c), body: Box::new(b), span }
            }
            ExprKind::Let { ty, name, value, body } => {
                let mut v = self.bx(value, pre);
                // A float bound to an integer truncates, as in an assignment (C's `(int) x`
                // is read as such a binding).
                if Ty::from_ast(ty) == Ty::Int && self.may_be_real(value) {
                    v = Box::new(CE::Ghost(GOp::Trunc, vec![*v], e.span));
                }
                self.scope.push();
                let s = self.scope.declare(&name.name, Ty::from_ast(ty));
                let b = self.bx(body, pre);
                self.scope.pop();
                CE::Let(s, v, b)
            }
            ExprKind::Collection { kind: CollKind::Seq, elems, .. } => {
                CE::SeqLit(elems.iter().map(|x| self.expr(x, pre)).collect())
            }
            ExprKind::EmptyCollection(CollKind::Seq, _) => CE::SeqLit(Vec::new()),
            ExprKind::Range(CollKind::Seq, lo, hi) => {
                CE::SeqRange(self.bx(lo, pre), self.bx(hi, pre))
            }
            ExprKind::Collection { kind, elems, .. } => {
                let op = if *kind == CollKind::Set { GOp::SetLit } else { GOp::BagLit };
                CE::Ghost(op, elems.iter().map(|x| self.expr(x, pre)).collect(), span)
            }
            ExprKind::EmptyCollection(kind, _) => CE::Const(if *kind == CollKind::Set {
                Value::set(Vec::new())
            } else {
                Value::bag(Vec::new())
            }),
            ExprKind::Range(CollKind::Set, lo, hi) => {
                CE::Ghost(GOp::SetRange, vec![self.expr(lo, pre), self.expr(hi, pre)], span)
            }
            ExprKind::MapLit { val_ty, entries, .. } => {
                let dflt = crate::heap::default_of(&Ty::from_ast(val_ty));
                let mut a = vec![CE::Const(dflt)];
                for (k, v) in entries {
                    a.push(self.expr(k, pre));
                    a.push(self.expr(v, pre));
                }
                CE::Ghost(GOp::MapLit, a, span)
            }
            ExprKind::Tuple(elems) => {
                CE::Ghost(GOp::Tuple, elems.iter().map(|x| self.expr(x, pre)).collect(), span)
            }
            ExprKind::TupleLit(_, a, b) => {
                CE::Ghost(GOp::Tuple, vec![self.expr(a, pre), self.expr(b, pre)], span)
            }
            ExprKind::NoneOpt => CE::Const(Value::Opt(None)),
            ExprKind::SetComprehension(c) => self.comprehension(c, span),
            ExprKind::Unfolding(p, x) => CE::Unfolding(self.bx(p, pre), self.bx(x, pre)),
            ExprKind::Scale(p, r) => CE::Scale(self.bx(p, pre), self.bx(r, pre)),
            ExprKind::Trigger(_, x) => self.expr(x, pre),
            ExprKind::Labelled(_, x) => self.expr(x, pre),
            ExprKind::NewArray(..) | ExprKind::NewObject(..) => {
                CE::Unsupported("allocation inside an expression".into(), span)
            }
            // `*` as a permission amount: some positive amount, as `read`.
            ExprKind::Wildcard => CE::Read,
            ExprKind::ThreadId(s) => CE::Unsupported(format!("`{s}`"), span),
            other => CE::Unsupported(format!("expression {}", short_kind(other)), span),
        }
    }
}

impl Compiler<'_> {
    /// `set<T>{body | T x <- s, T y; cond}`: each generator binds a fresh slot and ranges over
    /// its source, or over the bounds the condition gives it (as a quantifier's binder); the
    /// condition is evaluated for every tuple.
    fn comprehension(&mut self, c: &front::ast_comp::Comprehension, span: Span) -> CE {
        self.scope.push();
        let mut gens = Vec::new();
        for g in &c.gens {
            // A source is evaluated before its binder is in scope.
            let source = g.source.as_ref().map(|x| self.expr(x, &mut None));
            let slot = self.scope.declare(&g.name.name, Ty::from_ast(&g.ty));
            let binder = Binder {
                slot,
                name: g.name.name.clone(),
                lows: Vec::new(),
                highs: Vec::new(),
                members: Vec::new(),
            };
            gens.push(CompGen { binder, source });
        }
        let cond = c.cond.as_ref().map(|x| self.expr(x, &mut None));
        if let Some(cond) = &cond {
            let mut binders: Vec<Binder> = gens.iter().map(|g| g.binder.clone()).collect();
            extract_bounds(cond, &mut binders);
            for (g, b) in gens.iter_mut().zip(binders) {
                g.binder = b;
            }
        }
        let body = self.expr(&c.body, &mut None);
        self.scope.pop();
        CE::Comp { gens, cond: cond.map(Box::new), body: Box::new(body), span }
    }
}

/// A location argument (of `Perm`, `PointsTo`, `Value`, `perm`): the field or cell itself,
/// without the conversion of a rational field's value.
fn location(e: CE) -> CE {
    match e {
        CE::Ghost(GOp::ToRat, mut v, _) if v.len() == 1 => v.remove(0),
        e => e,
    }
}

/// `e`, converted to a rational when `rat` (see [`GOp::ToRat`]).
fn to_rat(rat: bool, e: CE, span: Span) -> CE {
    if rat {
        CE::Ghost(GOp::ToRat, vec![e], span)
    } else {
        e
    }
}

/// VerCors' library functions on options and maps that are not methods of the program.
/// (`equalsMap` is `==`, `cardMap` is `|m|`: see [`prelude_call`].)
fn library_op(name: &str, arity: usize) -> Option<GOp> {
    Some(match (name, arity) {
        ("getOption", 1) => GOp::GetOption,
        ("getOrElseOption", 2) => GOp::GetOrElse,
        ("getFromMap", 2) => GOp::MapGet,
        ("buildMap", 3) => GOp::MapBuild,
        ("removeFromMap", 2) => GOp::MapRemove,
        ("keysMap", 1) => GOp::Keys,
        ("valuesMap", 1) => GOp::Values,
        ("itemsMap", 1) => GOp::Items,
        ("disjointMap", 2) => GOp::Disjoint,
        _ => return None,
    })
}

/// `tuple<A,B>{a, b}`, which the parser keeps as text: its elements parsed as the tuple
/// `(a, b)`, at their places in the file (the text before them blanked), so that their spans
/// are the source's.
fn short_kind(k: &ExprKind) -> String {
    let s = format!("{k:?}");
    s.split(['(', ' ', '{']).next().unwrap_or("?").to_string()
}

/// Is `e` a function of the store alone, without side effects? Literals, locals, `this`,
/// operators, conditionals, lengths and `\array` shapes (array lengths never change), but no
/// heap contents, calls, quantifiers or `\old`. Such expressions read no location, so they need
/// no permission and take no part in race detection.
pub fn is_simple(e: &CE) -> bool {
    match e {
        CE::Int(_) | CE::Bool(_) | CE::Null | CE::Local(_) | CE::This => true,
        CE::Not(x) | CE::Neg(x, _) | CE::Length(x, _) => is_simple(x),
        CE::Bin(op, l, r, _) => {
            !matches!(op, BinOp::Frac | BinOp::Wand | BinOp::Pow) && is_simple(l) && is_simple(r)
        }
        CE::Cond(c, a, b) => is_simple(c) && is_simple(a) && is_simple(b),
        CE::ArrayShape(a, n) => is_simple(a) && is_simple(n),
        _ => false,
    }
}

/// Does a compiled assertion carry permissions (and so must be transferred, not just checked)?
pub fn has_resource(e: &CE) -> bool {
    match e {
        CE::Perm(..) | CE::PointsTo(..) | CE::Pred { .. } | CE::Scale(..) => true,
        CE::Bin(_, l, r, _) => has_resource(l) || has_resource(r),
        CE::Cond(c, a, b) => has_resource(c) || has_resource(a) || has_resource(b),
        CE::Quant { body, .. } => has_resource(body),
        CE::Let(_, v, b) => has_resource(v) || has_resource(b),
        _ => false,
    }
}

pub(super) fn mentions(e: &CE, slot: u32) -> bool {
    match e {
        CE::Local(s) => *s == slot,
        CE::Int(_) | CE::Bool(_) | CE::Null | CE::This | CE::Result => false,
        CE::Field(x, _, _) | CE::Length(x, _) | CE::Not(x) | CE::Neg(x, _) | CE::Old(x) => {
            mentions(x, slot)
        }
        CE::Head(x, _) | CE::Tail(x, _) => mentions(x, slot),
        CE::Index(a, b, _) | CE::Bin(_, a, b, _) => mentions(a, slot) || mentions(b, slot),
        CE::Cond(a, b, c) => mentions(a, slot) || mentions(b, slot) || mentions(c, slot),
        CE::ArrayShape(a, n) => mentions(a, slot) || mentions(n, slot),
        CE::CallPure { recv, args, .. } => {
            recv.as_ref().is_some_and(|r| mentions(r, slot))
                || args.iter().any(|a| mentions(a, slot))
        }
        CE::SeqLit(v) | CE::Ghost(_, v, _) => v.iter().any(|a| mentions(a, slot)),
        CE::Write | CE::Read | CE::NoPerm | CE::Const(_) => false,
        // Conservative: anything else may mention it.
        _ => true,
    }
}

/// Quantifier bound extraction (semantics.md §5.4): bounds of each binder from the top-level
/// `&&` conjuncts of the condition, not mentioning the binder itself or a later binder.
/// Returns whether every conjunct became a bound with a simple expression: then the condition
/// holds for every enumerated tuple (the bound is evaluated in the same state, and a simple
/// expression has no side effect that skipping its second evaluation could lose).
fn extract_bounds(cond: &CE, binders: &mut [Binder]) -> bool {
    let mut conj = Vec::new();
    fn split<'c>(e: &'c CE, out: &mut Vec<&'c CE>) {
        if let CE::Bin(BinOp::And, l, r, _) = e {
            split(l, out);
            split(r, out);
        } else {
            out.push(e);
        }
    }
    split(cond, &mut conj);
    let mut used = vec![false; conj.len()];
    let slots: Vec<u32> = binders.iter().map(|b| b.slot).collect();
    for (bi, b) in binders.iter_mut().enumerate() {
        let later = &slots[bi..];
        let ok = |e: &CE| later.iter().all(|&s| !mentions(e, s));
        let is_x = |e: &CE| matches!(e, CE::Local(s) if *s == b.slot);
        let plus1 =
            |e: &CE| CE::Bin(BinOp::Add, Box::new(e.clone()), Box::new(CE::Int(1)), Span::DUMMY);
        for (ci, c) in conj.iter().enumerate() {
            if let CE::Bin(op, l, r, _) = c {
                let bound = match op {
                    BinOp::Le if is_x(r) && ok(l) => Some((&mut b.lows, (**l).clone())),
                    BinOp::Ge if is_x(l) && ok(r) => Some((&mut b.lows, (**r).clone())),
                    BinOp::Lt if is_x(r) && ok(l) => Some((&mut b.lows, plus1(l))),
                    BinOp::Gt if is_x(l) && ok(r) => Some((&mut b.lows, plus1(r))),
                    BinOp::Lt if is_x(l) && ok(r) => Some((&mut b.highs, (**r).clone())),
                    BinOp::Gt if is_x(r) && ok(l) => Some((&mut b.highs, (**l).clone())),
                    BinOp::Le if is_x(l) && ok(r) => Some((&mut b.highs, plus1(r))),
                    BinOp::Ge if is_x(r) && ok(l) => Some((&mut b.highs, plus1(l))),
                    // A membership is a domain, not a bound: the condition is still evaluated.
                    BinOp::In if is_x(l) && ok(r) => {
                        b.members.push((**r).clone());
                        None
                    }
                    _ => None,
                };
                if let Some((list, e)) = bound {
                    used[ci] |= is_simple(&e);
                    list.push(e);
                }
            }
        }
    }
    used.iter().all(|u| *u)
}

impl Compiler<'_> {
    /// `\typeof(this) == C` (the encoder's rule, `typeof_test` in viper/encode/exprs.rs): PVL
    /// classes have no subclasses, so it holds exactly when `C` is the enclosing class. `None`
    /// when `a == b` is no such test (other `\typeof` operands stay unknown names).
    fn typeof_test(&self, a: &Expr, b: &Expr) -> Option<bool> {
        let ExprKind::Builtin(Builtin::TypeOf, args) = &a.kind else {
            return None;
        };
        if !matches!(args.as_slice(), [Expr { kind: ExprKind::This, .. }]) {
            return None;
        }
        let ExprKind::Name(c) = &b.kind else { return None };
        if self.scope.lookup(&c.name).is_some()
            || !self.out.classes.iter().any(|k| k.name == c.name)
        {
            return None;
        }
        Some(self.out.classes.get(self.cur_class as usize)?.name == c.name)
    }
}

/// VerCors' built-in functions on sequences that are not methods of the program, as the
/// expressions they stand for: `isEmpty(s)` is `|s| == 0`, `removeAt(s, i)` is
/// `s[..i] ++ s[i + 1..]`.
fn prelude_call(name: &str, args: &[Expr]) -> Option<Expr> {
    match (name, args) {
        ("isEmpty", [s]) => Some(Expr::bin(
            BinOp::Eq,
            Expr::synth(ExprKind::Length(Box::new(s.clone()))),
            Expr::int(0),
        )),
        // `equalsMap(a, b)` is `a == b` (maps are equal when their entries are), `cardMap(m)`
        // is `|m|`.
        ("equalsMap", [a, b]) => Some(Expr::bin(BinOp::Eq, a.clone(), b.clone())),
        ("cardMap", [m]) => Some(Expr::synth(ExprKind::Length(Box::new(m.clone())))),
        ("removeAt", [s, i]) => {
            let next = Expr::bin(BinOp::Add, i.clone(), Expr::int(1));
            Some(Expr::bin(
                BinOp::Concat,
                Expr::synth(ExprKind::Slice(Box::new(s.clone()), None, Some(Box::new(i.clone())))),
                Expr::synth(ExprKind::Slice(Box::new(s.clone()), Some(Box::new(next)), None)),
            ))
        }
        _ => None,
    }
}

/// `Perm(a[*], p)` (and `Value`, `PointsTo`): the array and the other arguments.
fn whole_array(args: &[Expr]) -> Option<(&Expr, &[Expr])> {
    let (first, rest) = args.split_first()?;
    match &first.kind {
        ExprKind::Index(a, i) if matches!(i.kind, ExprKind::Wildcard) => Some((a, rest)),
        _ => None,
    }
}

/// VerCors' `a[*]` in a permission: every cell, `(\forall* int k; 0 <= k && k < a.length;
/// Perm(a[k], p))`. The bound name cannot clash with a program name (`$` is not an identifier
/// character in PVL).
fn every_cell(b: Builtin, a: &Expr, rest: &[Expr]) -> Expr {
    let k = "$cell";
    let cell = Expr::synth(ExprKind::Index(Box::new(a.clone()), Box::new(Expr::name(k))));
    let len = Expr::synth(ExprKind::Field(Box::new(a.clone()), Ident::synth("length")));
    let mut args = vec![cell];
    args.extend(rest.iter().cloned());
    Expr::synth(ExprKind::Quant {
        kind: QuantKind::ForallStar,
        bindings: vec![Binding {
            ty: Type::int(),
            name: Ident::synth(k),
            range: None,
            span: front::span::Span::DUMMY,
        }],
        cond: Some(Box::new(Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Le, Expr::int(0), Expr::name(k)),
            Expr::bin(BinOp::Lt, Expr::name(k), len),
        ))),
        body: Box::new(Expr::synth(ExprKind::Builtin(b, args))),
    })
}
