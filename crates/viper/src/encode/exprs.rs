//! Expressions, permissions and quantifiers (`verification.md` §5.3–5.5).

use super::coerce::{is_perm, is_set_or_bag};
use super::maps::is_map;
use super::typing::{elem, is_array, is_seq, REF_FIELD};
use super::{quant, CallKind, Encoder, R};
use crate::ast::{Exp, ExpKind, Ty};
use front::ast::{self, BinOp, Builtin, CollKind, Expr, ExprKind, QuantKind, Type, TypeKind, UnOp};
use front::span::Span;

impl Encoder<'_> {
    /// A specification (pure) expression.
    pub fn spec(&mut self, e: &Expr) -> R<Exp> {
        self.expr(e, false)
    }

    /// A code expression: calls of non-pure methods are hoisted into `self.pending`.
    pub fn code(&mut self, e: &Expr) -> R<Exp> {
        self.expr(e, true)
    }

    /// The receiver argument (`this` or the encoded receiver) for an instance member.
    pub(super) fn recv_arg(&mut self, recv: Option<&Expr>, code: bool, span: Span) -> R<Exp> {
        match recv {
            None | Some(Expr { kind: ExprKind::This, .. }) => {
                if self.is_static {
                    self.bad("an instance member is used in a static context", span);
                    return Err(());
                }
                Ok(Exp::var("this"))
            }
            Some(r) => self.expr(r, code),
        }
    }

    fn name(&mut self, id: &ast::Ident, span: Span) -> R<Exp> {
        if let Some(l) = self.lookup(&id.name) {
            return Ok(Exp::new(ExpKind::Var(l.viper.clone()), Some(span)));
        }
        if let Some(c) = self.class.clone() {
            if self.field_type(&c, &id.name).is_some() {
                if self.is_static {
                    self.bad(format!("field `{}` used in a static context", id.name), span);
                    return Err(());
                }
                let f = self.field_name(&c, &id.name);
                return Ok(Exp::new(ExpKind::Field(Box::new(Exp::var("this")), f), Some(span)));
            }
        }
        self.bad(format!("unknown name `{}`", id.name), span);
        Err(())
    }

    pub fn expr(&mut self, e: &Expr, code: bool) -> R<Exp> {
        let sp = Some(e.span);
        let k = match &e.kind {
            ExprKind::Int(v) => ExpKind::Int(v.clone()),
            ExprKind::Bool(b) => ExpKind::Bool(*b),
            ExprKind::Null => ExpKind::App("anull".into(), vec![]),
            ExprKind::This => {
                if self.is_static {
                    self.bad("`this` in a static context", e.span);
                    return Err(());
                }
                ExpKind::Var("this".into())
            }
            ExprKind::Write => ExpKind::Write,
            ExprKind::Read => ExpKind::Wildcard,
            ExprKind::NoPerm => ExpKind::NoPerm,
            ExprKind::Result => {
                if self.in_function {
                    ExpKind::Result
                } else {
                    ExpKind::Var(self.ret_var.clone())
                }
            }
            ExprKind::Name(id) => return self.name(id, e.span),
            ExprKind::Opaque(_) if super::floats::literal(e).is_some() => {
                let (n, d) = super::floats::literal(e).ok_or(())?;
                self.note_float(e.span);
                return Ok(super::floats::real(n, d).with_span(sp));
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a, code)?;
                ExpKind::Unary(if *op == UnOp::Not { "!" } else { "-" }, Box::new(a))
            }
            ExprKind::Binary(op, a, b) => return self.binary(*op, a, b, code, e.span),
            ExprKind::Cond(c, a, b) => {
                // Both branches get the type of the whole (an integer beside a permission is
                // a permission, `null` beside an object is Viper's `null`).
                let want = self.type_of(e);
                let (ta, tb) = (self.type_of(a), self.type_of(b));
                let (wa, wb) = match &want {
                    Some(t) if is_perm(t) => (want.clone(), want.clone()),
                    _ => (tb, ta),
                };
                ExpKind::Cond(
                    Box::new(self.expr(c, code)?),
                    Box::new(self.expr_to(a, wa.as_ref(), code)?),
                    Box::new(self.expr_to(b, wb.as_ref(), code)?),
                )
            }
            ExprKind::TupleLit(ty, a, b) => return self.tuple_lit(ty, a, b, code, e.span),
            ExprKind::Field(o, f) if self.is_tuple_proj(o, &f.name) => {
                return self.tuple_proj(o, &f.name, code, e.span);
            }
            ExprKind::Field(o, f) if self.enum_const(o, &f.name).is_some() => {
                let (x, _) = self.enum_const(o, &f.name).ok_or(())?;
                return Ok(x.with_span(Some(e.span)));
            }
            ExprKind::Field(o, f) => {
                let ot = self.type_of(o);
                if f.name == "length" && ot.as_ref().is_some_and(is_array) {
                    ExpKind::App("alen".into(), vec![self.expr(o, code)?])
                } else if f.name == "length" && ot.as_ref().is_some_and(is_seq) {
                    ExpKind::Len(Box::new(self.expr(o, code)?))
                } else {
                    let Some(c) = self.recv_class(Some(o)) else {
                        self.bad(format!("cannot resolve the field `{}`", f.name), e.span);
                        return Err(());
                    };
                    if self.field_type(&c, &f.name).is_none() {
                        self.bad(format!("unknown field `{}`", f.name), f.span);
                        return Err(());
                    }
                    let fname = self.field_name(&c, &f.name);
                    ExpKind::Field(Box::new(self.expr(o, code)?), fname)
                }
            }
            ExprKind::Index(a, i) => {
                let at = self.type_of(a);
                let ax = self.expr(a, code)?;
                if let Some(t) = at.as_ref().filter(|t| is_map(t)) {
                    let k = self.map_get(ax, i, t, code)?;
                    return Ok(Exp::new(k, sp));
                }
                let ix = self.expr(i, code)?;
                match at {
                    Some(t) if is_array(&t) => {
                        let et = elem(&t);
                        let Some(f) = et.as_ref().and_then(|et| self.array_field(et)) else {
                            let what = match et {
                                Some(et) => format!("an array of `{}`", self.src_text(et.span)),
                                None => "this array".to_string(),
                            };
                            self.unsupported(&what, e.span);
                            return Err(());
                        };
                        if f == REF_FIELD && !self.out.fields.iter().any(|(n, _)| n == REF_FIELD) {
                            self.out.fields.push((REF_FIELD.to_string(), Ty::Ref));
                        }
                        // A symbolic stride goes through `vct_stride`, as in quantifiers.
                        let ix = quant::wrap_index(ix);
                        if matches!(&ix.kind, ExpKind::App(f, _) if f == quant::STRIDE_FN) {
                            self.use_stride();
                        }
                        let loc = Exp::new(ExpKind::App("aloc".into(), vec![ax, ix]), sp);
                        ExpKind::Field(Box::new(loc), f)
                    }
                    Some(t) if is_seq(&t) => ExpKind::SeqIndex(Box::new(ax), Box::new(ix)),
                    _ => {
                        self.bad("cannot determine the type of the indexed expression", a.span);
                        return Err(());
                    }
                }
            }
            ExprKind::Slice(s, lo, hi) => ExpKind::SeqSlice(
                Box::new(self.expr(s, code)?),
                match lo {
                    Some(x) => Some(Box::new(self.expr(x, code)?)),
                    None => None,
                },
                match hi {
                    Some(x) => Some(Box::new(self.expr(x, code)?)),
                    None => None,
                },
            ),
            ExprKind::SeqUpdate(s, i, v) => ExpKind::SeqUpdate(
                Box::new(self.expr(s, code)?),
                Box::new(self.expr(i, code)?),
                Box::new(self.expr(v, code)?),
            ),
            ExprKind::Length(a) => {
                let at = self.type_of(a);
                let ax = self.expr(a, code)?;
                if at.as_ref().is_some_and(is_array) {
                    ExpKind::App("alen".into(), vec![ax])
                } else {
                    ExpKind::Len(Box::new(ax))
                }
            }
            ExprKind::Call { recv, name, args, ghost, null_safe } => {
                // `given { g = e }` of a pure function: its ghost parameters. Other ghost
                // arguments (`then`, `yields`) have no meaning in an expression.
                let given_only = ghost.then.is_none() && ghost.yields.is_empty();
                let function = given_only
                    && self
                        .callee(recv.as_deref(), &name.name, args)
                        .is_some_and(|c| c.kind == CallKind::Function && !c.given.is_empty());
                if !ghost.is_empty() && !function {
                    self.unsupported("ghost arguments (`with`/`then`) in an expression", e.span);
                    return Err(());
                }
                let call = self.call_expr(recv.as_deref(), name, args, ghost, code, e.span)?;
                // `x->P(…)` (v1) of a predicate or a boolean function: `x != null ==> x.P(…)`,
                // a call on a possibly-null receiver. Other results keep the plain call.
                if let (true, Some(r)) = (*null_safe, recv.as_deref()) {
                    let guarded = self.callee(Some(r), &name.name, args).is_some_and(|c| {
                        matches!(c.kind, CallKind::Predicate)
                            || (matches!(c.kind, CallKind::Function)
                                && matches!(c.ret.kind, TypeKind::Bool))
                    });
                    if guarded {
                        let rx = self.expr(r, code)?;
                        let nonnull = Exp::bin("!=", rx, Exp::synth(ExpKind::Null));
                        return Ok(Exp::implies(nonnull, call));
                    }
                }
                return Ok(call);
            }
            ExprKind::Builtin(b, args) => return self.builtin(*b, args, code, e.span),
            ExprKind::Old(x, label) => {
                if label.is_some() {
                    self.unsupported("labelled `\\old`", e.span);
                    return Err(());
                }
                ExpKind::Old(None, Box::new(self.expr(x, code)?))
            }
            ExprKind::Quant { kind, bindings, cond, body } => {
                // `(\forall* x; c1; (\forall* y; c2; R))` is one iterated conjunction over
                // (x, y): encode it as one quantifier so the grid re-indexing can prove it
                // injective (nested quantified permissions are not, for Silicon). Nested pure
                // `\forall`s are merged the same way, so that a cell `w * x + y` is re-indexed
                // over both variables at once and gets a trigger (an inner quantifier
                // re-indexed alone leaves the outer variable without one).
                if matches!(kind, QuantKind::ForallStar | QuantKind::Forall) {
                    if let ExprKind::Quant {
                        kind: inner_kind,
                        bindings: inner_b,
                        cond: inner_c,
                        body: inner_body,
                    } = &body.kind
                    {
                        if inner_kind != kind {
                            return self.quant(*kind, bindings, cond.as_deref(), body, e.span);
                        }
                        let clash = inner_b
                            .iter()
                            .any(|ib| bindings.iter().any(|ob| ob.name.name == ib.name.name));
                        if !clash {
                            let mut all = bindings.clone();
                            all.extend(inner_b.iter().cloned());
                            let c = match (cond.as_deref(), inner_c.as_deref()) {
                                (Some(a), Some(b)) => {
                                    Some(Expr::bin(BinOp::And, a.clone(), b.clone()))
                                }
                                (a, b) => a.or(b).cloned(),
                            };
                            return self.quant(*kind, &all, c.as_ref(), inner_body, e.span);
                        }
                    }
                }
                return self.quant(*kind, bindings, cond.as_deref(), body, e.span);
            }
            ExprKind::Let { ty, name, value, body } => {
                let v = self.expr_to(value, Some(ty), code)?;
                self.scopes.push(Default::default());
                let n = self.fresh_name(&name.name);
                self.bind_name(&name.name, &n, ty);
                let b = self.expr(body, code);
                self.scopes.pop();
                ExpKind::Let(n, Box::new(v), Box::new(b?))
            }
            ExprKind::Collection { kind, elem_ty, elems } => {
                let et = match self.elem_type(elem_ty.as_ref(), elems) {
                    Some(t) => self.viper_ty(&t)?,
                    None => Ty::Int,
                };
                let xs = elems.iter().map(|x| self.expr(x, code)).collect::<R<Vec<_>>>()?;
                match kind {
                    CollKind::Seq => ExpKind::SeqLit(et, xs),
                    CollKind::Set => ExpKind::SetLit(et, xs),
                    CollKind::Bag => ExpKind::MultisetLit(et, xs),
                }
            }
            ExprKind::MapLit { key_ty, val_ty, entries } => {
                self.map_lit(key_ty, val_ty, entries, code)?
            }
            ExprKind::EmptyCollection(kind, t) => {
                let et = self.viper_ty(t)?;
                match kind {
                    CollKind::Seq => ExpKind::SeqLit(et, vec![]),
                    CollKind::Set => ExpKind::SetLit(et, vec![]),
                    CollKind::Bag => ExpKind::MultisetLit(et, vec![]),
                }
            }
            ExprKind::Range(CollKind::Seq, lo, hi) => {
                ExpKind::Range(Box::new(self.expr(lo, code)?), Box::new(self.expr(hi, code)?))
            }
            ExprKind::Unfolding(p, b) => {
                self.check_not_abstract(p, "unfolded")?;
                let pe = self.resource_call(p)?;
                ExpKind::Unfolding(Box::new(pe), Box::new(self.expr(b, code)?))
            }
            ExprKind::Scale(p, r) => return self.scaled(p, r, e.span),
            ExprKind::Trigger(tag, x) => {
                let t = self.expr(x, code)?;
                self.record_pattern(*tag, &t);
                return Ok(t);
            }
            ExprKind::Labelled(_, x) => return self.expr(x, code),
            ExprKind::SetComprehension(c) => return self.set_comprehension(c, code, e.span),
            ExprKind::Sum { ty, name, cond, body } => {
                return self.sum(ty, name, cond, body, e.span)
            }
            ExprKind::NewArray(..) | ExprKind::NewObject(..) => {
                self.unsupported("allocation inside an expression", e.span);
                return Err(());
            }
            _ => {
                let what = match &e.kind {
                    ExprKind::Tuple(_) => "a tuple".to_string(),
                    ExprKind::Binary(BinOp::Wand, ..) => "a magic wand".to_string(),
                    _ => format!("the expression `{}`", self.src_text(e.span)),
                };
                self.unsupported(&what, e.span);
                return Err(());
            }
        };
        Ok(Exp::new(k, sp))
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, code: bool, span: Span) -> R<Exp> {
        let sp = Some(span);
        if op == BinOp::Wand {
            // A resource, as Viper's `A --* B` (packaged by `create`, used by `apply`).
            if code {
                self.unsupported("a magic wand outside a specification", span);
                return Err(());
            }
            let (x, y) = (self.expr(a, false)?, self.expr(b, false)?);
            return Ok(Exp::new(ExpKind::Binary(crate::ast::WAND, Box::new(x), Box::new(y)), sp));
        }
        if op == BinOp::Frac {
            let e = Expr::new(ExprKind::Binary(op, Box::new(a.clone()), Box::new(b.clone())), span);
            return self.perm_amount(&e);
        }
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            if let Some(same) = self.typeof_test(a, b).or_else(|| self.typeof_test(b, a)) {
                let same = same?;
                return Ok(Exp::new(ExpKind::Bool(same == (op == BinOp::Eq)), sp));
            }
            // `o == None`: the option is empty (`None` alone has no element type to encode).
            let other = match (&a.kind, &b.kind) {
                (ExprKind::NoneOpt, _) => Some(b),
                (_, ExprKind::NoneOpt) => Some(a),
                _ => None,
            };
            if let Some(o) = other {
                let ox = self.expr(o, code)?;
                let len = Exp::synth(ExpKind::Len(Box::new(ox)));
                let cmp = if op == BinOp::Eq { "==" } else { "!=" };
                return Ok(Exp::bin(cmp, len, Exp::int(0)).with_span(sp));
            }
        }
        if op == BinOp::In {
            if let ExprKind::Range(CollKind::Set, lo, hi) = &b.kind {
                // `x in {lo .. hi}`: Viper has no set range; membership is the bounds check.
                let x = self.expr(a, code)?;
                let lo = self.expr(lo, code)?;
                let hi = self.expr(hi, code)?;
                return Ok(
                    Exp::and(Exp::bin("<=", lo, x.clone()), Exp::bin("<", x, hi)).with_span(sp)
                );
            }
            let s = self.expr(b, code)?;
            let x = self.expr(a, code)?;
            return Ok(Exp::new(ExpKind::Binary("in", Box::new(x), Box::new(s)), sp));
        }
        if op == BinOp::Cons {
            let x = self.expr(a, code)?;
            let s = self.expr(b, code)?;
            let et = match self.type_of(a) {
                Some(t) => self.viper_ty(&t)?,
                None => Ty::Int,
            };
            return Ok(Exp::new(
                ExpKind::Binary(
                    "++",
                    Box::new(Exp::synth(ExpKind::SeqLit(et, vec![x]))),
                    Box::new(s),
                ),
                sp,
            ));
        }
        if op == BinOp::Concat {
            if let Some(e) = self.map_concat(a, b, code, span) {
                return e;
            }
            // VerCors reads `s ++ x` with an element `x` as appending it (and `x ++ s` as
            // prepending it); Viper's `++` joins two sequences only.
            let (ta, tb) = (self.type_of(a), self.type_of(b));
            // `t` is an element of the sequence type `other`: not a sequence itself, or exactly
            // its element type (`ss ++ s` with `ss: seq<seq<int>>`, `s: seq<int>`).
            let elem_of = |t: &Option<Type>, other: &Option<Type>| match (t, other) {
                (Some(t), Some(o)) if is_seq(o) => !is_seq(t) || elem(o).as_ref() == Some(t),
                _ => false,
            };
            if elem_of(&tb, &ta) || elem_of(&ta, &tb) {
                let l = self.expr(a, code)?;
                let r = self.expr(b, code)?;
                let wrap = |me: &mut Self, t: &Option<Type>, x: Exp| -> R<Exp> {
                    let et = match t {
                        Some(t) => me.viper_ty(t)?,
                        None => Ty::Int,
                    };
                    Ok(Exp::synth(ExpKind::SeqLit(et, vec![x])))
                };
                let (l, r) = if elem_of(&tb, &ta) {
                    (l, wrap(self, &tb, r)?)
                } else {
                    (wrap(self, &ta, l)?, r)
                };
                return Ok(Exp::new(ExpKind::Binary("++", Box::new(l), Box::new(r)), sp));
            }
        }
        let ta = self.type_of(a);
        let tb = self.type_of(b);
        if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
            && (ta.as_ref().is_some_and(is_set_or_bag) || tb.as_ref().is_some_and(is_set_or_bag))
        {
            return self.inclusion(op, a, b, code, span);
        }
        // Viper has no implicit `Int` → `Perm`: with a permission on either side, both sides
        // are permissions (`Perm / Int` stays, it is Viper's permission division). Comparing
        // with `null` takes the other side's type (objects' `null` is not arrays' `anull()`).
        let perm = (op.is_comparison() || op.is_arith())
            && (ta.as_ref().is_some_and(is_perm) || tb.as_ref().is_some_and(is_perm));
        // With a float on a side, an integer on the other becomes a float (`none + i/1`, typed
        // on its own); else a fraction (`i/1`, typed by the permission beside it).
        let float = ta.iter().chain(tb.iter()).any(super::floats::is_float);
        let frac = Type::new(if float { TypeKind::Float64 } else { TypeKind::Frac });
        // A permission divided by C's `/` is the same permission division.
        let op = if perm { op.euclidean() } else { op };
        if perm && matches!(op, BinOp::Mod) {
            self.unsupported("`%` on floats or fractions", span);
            return Err(());
        }
        if matches!(op, BinOp::TruncDiv | BinOp::TruncMod) {
            return self.truncated(op, a, b, code, span);
        }
        let (want_a, want_b) = match op {
            _ if perm && op == BinOp::Div => (Some(&frac), None),
            _ if perm => (Some(&frac), Some(&frac)),
            BinOp::Eq | BinOp::Ne => (tb.as_ref(), ta.as_ref()),
            _ => (None, None),
        };
        let seqish = ta.as_ref().is_some_and(|t| matches!(t.kind, TypeKind::Generic1(..)));
        let setish = ta.as_ref().is_some_and(|t| {
            matches!(t.kind, TypeKind::Generic1(ast::Generic1::Set | ast::Generic1::Bag, _))
        });
        if setish && matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            // Set and bag inclusion: Viper's `subset`; the strict forms also differ.
            let l = self.expr(a, code)?;
            let r = self.expr(b, code)?;
            let (small, big) = if matches!(op, BinOp::Lt | BinOp::Le) { (l, r) } else { (r, l) };
            let sub = Exp::bin("subset", small.clone(), big.clone());
            let e = if matches!(op, BinOp::Lt | BinOp::Gt) {
                Exp::and(sub, Exp::bin("!=", small, big))
            } else {
                sub
            };
            return Ok(e.with_span(sp));
        }
        let sym: &'static str = match op {
            // Spelled in Viper as in PVL.
            BinOp::Implies | BinOp::Or | BinOp::Mod | BinOp::Concat => op.symbol(),
            _ if op.is_comparison() => op.symbol(),
            BinOp::And | BinOp::Star => "&&",
            BinOp::Add if seqish && ta.as_ref().is_some_and(is_seq) => "++",
            BinOp::Add if seqish => "union",
            BinOp::Add => "+",
            BinOp::Sub if seqish => "setminus",
            BinOp::Sub => "-",
            BinOp::Mul if seqish => "intersection",
            BinOp::Mul => "*",
            BinOp::Div if perm => "/",
            BinOp::Div => "\\",
            _ => {
                self.unsupported(&format!("the operator `{}`", op.symbol()), span);
                return Err(());
            }
        };
        let l = self.expr_to(a, want_a, code)?;
        let r = self.expr_to(b, want_b, code)?;
        Ok(Exp::new(ExpKind::Binary(sym, Box::new(l), Box::new(r)), sp))
    }

    /// A permission amount: `write`, `read`, `none`, `p\q`, an integer or a fraction variable.
    pub fn perm_amount(&mut self, e: &Expr) -> R<Exp> {
        match &e.kind {
            ExprKind::Int(_) => Ok(Exp::new(
                ExpKind::Binary("/", Box::new(self.spec(e)?), Box::new(Exp::int(1))),
                Some(e.span),
            )),
            ExprKind::Binary(BinOp::Frac, a, b) => {
                // `/` in Viper is permission division: `Int / Int` is already a fraction.
                let l = if self.type_of(a).is_some_and(|t| matches!(t.kind, TypeKind::Int)) {
                    self.spec(a)?
                } else {
                    self.perm_amount(a)?
                };
                Ok(Exp::new(
                    ExpKind::Binary("/", Box::new(l), Box::new(self.spec(b)?)),
                    Some(e.span),
                ))
            }
            _ => {
                let x = self.spec(e)?;
                Ok(self.coerce(x, self.type_of(e), Some(&Type::new(TypeKind::Frac))))
            }
        }
    }

    /// The heap location of `Perm(loc, …)`: an array element or a field, as `r.f`.
    pub(super) fn location(&mut self, loc: &Expr) -> R<Exp> {
        match &loc.kind {
            // A trigger marker `{: e :}` around the location: the quantifier's triggers are
            // chosen by `quant`, so the marker only names the location.
            ExprKind::Trigger(_, x) => self.location(x),
            ExprKind::Index(..) | ExprKind::Field(..) | ExprKind::Name(_) => {
                let x = self.spec(loc)?;
                if matches!(x.kind, ExpKind::Field(..)) {
                    Ok(x)
                } else {
                    self.bad(
                        "`Perm` needs a heap location (an array element or a field)",
                        loc.span,
                    );
                    Err(())
                }
            }
            _ => {
                self.bad("`Perm` needs a heap location (an array element or a field)", loc.span);
                Err(())
            }
        }
    }

    fn builtin(&mut self, b: Builtin, args: &[Expr], code: bool, span: Span) -> R<Exp> {
        let sp = Some(span);
        match (b, args) {
            (Builtin::Held | Builtin::Committed | Builtin::Idle | Builtin::Running, _) => {
                self.token_builtin(b.name(), args, span)
            }
            (Builtin::Perm, [l, p]) => {
                if let Some(q) = Self::all_elements(l, p, span) {
                    return self.spec(&q);
                }
                let loc = self.location(l)?;
                let p = match (&p.kind, &self.read_var) {
                    (ExprKind::Read, Some(rd)) => Exp::var(rd.clone()),
                    _ => self.perm_amount(p)?,
                };
                Ok(Exp::new(ExpKind::Acc(Box::new(loc), Box::new(p)), sp))
            }
            (Builtin::PointsTo, [l, p, v]) => {
                let loc = self.location(l)?;
                let p = self.perm_amount(p)?;
                let v = self.spec(v)?;
                Ok(Exp::and(
                    Exp::new(ExpKind::Acc(Box::new(loc.clone()), Box::new(p)), sp),
                    Exp::bin("==", loc, v),
                ))
            }
            (Builtin::PermOf, [l]) => {
                let loc = self.location(l)?;
                Ok(Exp::new(ExpKind::PermOf(Box::new(loc)), sp))
            }
            (Builtin::Value, [l]) => {
                let loc = self.location(l)?;
                Ok(Exp::new(
                    ExpKind::Acc(Box::new(loc), Box::new(Exp::synth(ExpKind::Wildcard))),
                    sp,
                ))
            }
            (Builtin::Array, [a, n]) => {
                let a = self.expr(a, code)?;
                let n = self.expr(n, code)?;
                Ok(Exp::and(
                    Exp::bin("!=", a.clone(), Exp::app("anull", vec![])),
                    Exp::bin("==", Exp::app("alen", vec![a]), n),
                ))
            }
            (Builtin::Matrix, [m, x, y]) => {
                let m = self.expr(m, code)?;
                let x = self.expr(x, code)?;
                let y = self.expr(y, code)?;
                Ok(self.matrix_shape(&m, &x, Some(&y)))
            }
            (Builtin::Head, [s]) => {
                let s = self.expr(s, code)?;
                Ok(Exp::new(ExpKind::SeqIndex(Box::new(s), Box::new(Exp::int(0))), sp))
            }
            (Builtin::Tail, [s]) => {
                let s = self.expr(s, code)?;
                Ok(Exp::new(ExpKind::SeqSlice(Box::new(s), Some(Box::new(Exp::int(1))), None), sp))
            }
            (Builtin::Some, [x]) => {
                let Some(t) = self.type_of(x) else {
                    self.bad("cannot determine the type of the argument of `Some`", x.span);
                    return Err(());
                };
                let et = self.viper_ty(&t)?;
                let x = self.expr(x, code)?;
                Ok(Exp::new(ExpKind::SeqLit(et, vec![x]), sp))
            }
            (Builtin::Values, [a, lo, hi]) => self.values(a, lo, hi, code, span),
            (Builtin::LengthFn, [s]) => {
                let s = self.expr(s, code)?;
                Ok(Exp::new(ExpKind::Len(Box::new(s)), sp))
            }
            _ => {
                self.unsupported(&format!("`{}`", b.name()), span);
                Err(())
            }
        }
    }

    /// Refuses to fold or unfold (`what`) an abstract predicate: it has no body to expose, and
    /// Silicon rejects the whole program for it.
    pub(super) fn check_not_abstract(&mut self, e: &Expr, what: &str) -> R<()> {
        if let ExprKind::Call { recv, name, args, .. } = &e.kind {
            if let Some(c) = self.callee(recv.as_deref(), &name.name, args) {
                if c.kind == CallKind::Predicate && !c.has_body {
                    self.bad(
                        format!("the abstract predicate `{}` cannot be {what}", name.name),
                        e.span,
                    );
                    return Err(());
                }
            }
        }
        Ok(())
    }

    /// `Perm(a[*], p)` (v1): permission `p` on every element of `a`, that is
    /// `(\forall* int i; 0 <= i && i < a.length; Perm(a[i], p))`. The bound variable's name
    /// occurs nowhere in `a` or `p`, so that it captures none of their names.
    fn all_elements(loc: &Expr, p: &Expr, span: Span) -> Option<Expr> {
        let ExprKind::Index(a, star) = &loc.kind else {
            return None;
        };
        if !matches!(star.kind, ExprKind::Wildcard) {
            return None;
        }
        // The debug form names every identifier of both trees, also of synthesized ones.
        let text = format!("{a:?} {p:?}");
        let mut name = "i".to_string();
        while text.contains(name.as_str()) {
            name.push('_');
        }
        let iv = || Expr::new(ExprKind::Name(ast::Ident::new(name.clone(), span)), span);
        let len = Expr::new(ExprKind::Field(a.clone(), ast::Ident::new("length", span)), span);
        let cond = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Le, Expr::int(0), iv()),
            Expr::bin(BinOp::Lt, iv(), len),
        );
        let elem = Expr::new(ExprKind::Index(a.clone(), Box::new(iv())), loc.span);
        let body = Expr::new(ExprKind::Builtin(Builtin::Perm, vec![elem, p.clone()]), span);
        let binding = ast::Binding {
            ty: Type::int(),
            name: ast::Ident::new(name.clone(), span),
            range: None,
            span,
        };
        Some(Expr::new(
            ExprKind::Quant {
                kind: QuantKind::ForallStar,
                bindings: vec![binding],
                cond: Some(Box::new(cond)),
                body: Box::new(body),
            },
            span,
        ))
    }

    /// `[p]R`: `R` with every permission amount in it multiplied by `p` (pure parts unchanged).
    pub fn scaled(&mut self, p: &Expr, r: &Expr, span: Span) -> R<Exp> {
        let q = self.perm_amount(p)?;
        let body = self.spec(r)?;
        self.scale_by(body, &q, span)
    }

    /// Multiply every `acc` amount in `e` by `q`. A wildcard amount is refused: `p * wildcard`
    /// is not Viper, and keeping the wildcard would grant a permission even when `p` is zero.
    pub fn scale_by(&mut self, e: Exp, q: &Exp, span: Span) -> R<Exp> {
        let mut wildcard = false;
        let out = e.map(&mut |x| match x.kind {
            ExpKind::Acc(loc, a) => {
                let a = match a.kind {
                    ExpKind::Write => q.clone(),
                    ExpKind::Wildcard => {
                        wildcard = true;
                        *a
                    }
                    _ => Exp::bin("*", q.clone(), *a),
                };
                Exp::new(ExpKind::Acc(loc, Box::new(a)), x.span)
            }
            k => Exp::new(k, x.span),
        });
        if wildcard {
            self.unsupported("scaling `[p]R` of a `read` (wildcard) permission", span);
            return Err(());
        }
        Ok(out.with_span(Some(span)))
    }

    fn quant(
        &mut self,
        kind: QuantKind,
        bindings: &[ast::Binding],
        cond: Option<&Expr>,
        body: &Expr,
        span: Span,
    ) -> R<Exp> {
        self.scopes.push(Default::default());
        self.patterns.push(Vec::new());
        // `read` under a quantifier stays a wildcard (see `Callable::read_locs`).
        let saved_rd = self.read_var.take();
        let mut vars_seen = Vec::new();
        let r = (|| {
            let mut vars = Vec::new();
            let mut tys = Vec::new();
            let mut guards = Vec::new();
            for b in bindings {
                tys.push(self.viper_ty(&b.ty)?);
                let v = self.fresh_name(&b.name.name);
                self.bind_name(&b.name.name, &v, &b.ty);
                if let Some((lo, hi)) = &b.range {
                    let lo = self.spec(lo)?;
                    let hi = self.spec(hi)?;
                    guards.push(Exp::bin("<=", lo, Exp::var(&v)));
                    guards.push(Exp::bin("<", Exp::var(&v), hi));
                }
                vars.push(v);
            }
            vars_seen.clone_from(&vars);
            if let Some(c) = cond {
                quant::split_and(self.spec(c)?, &mut guards);
            }
            let b = self.spec(body)?;
            if tys.iter().any(|t| *t != Ty::Int) {
                // Over other types: a plain quantifier, Silicon chooses the triggers. The
                // re-indexing of `quant` reads the variables as integers, and quantified
                // permissions need it.
                if kind == QuantKind::ForallStar || b.has_acc() {
                    self.unsupported("a quantified permission over a non-`int` variable", span);
                    return Err(());
                }
                let typed = vars.into_iter().zip(tys).collect();
                return Ok(match kind {
                    QuantKind::Exists => Exp::synth(ExpKind::Exists(
                        typed,
                        vec![],
                        Box::new(Exp::and(Exp::and_all(guards), b)),
                    )),
                    _ => Exp::synth(ExpKind::Forall(
                        typed,
                        vec![],
                        Box::new(Exp::implies(Exp::and_all(guards), b)),
                    )),
                });
            }
            Ok(match kind {
                QuantKind::Exists => Exp::synth(ExpKind::Exists(
                    vars.into_iter().map(|v| (v, Ty::Int)).collect(),
                    vec![],
                    Box::new(Exp::and(Exp::and_all(guards), b)),
                )),
                _ if kind == QuantKind::ForallStar || b.has_acc() => {
                    let q = quant::quantify(self, vars, guards, b);
                    if !self.v2 {
                        super::inject::assume_injective(self, q)
                    } else {
                        q
                    }
                }
                _ => quant::quantify(self, vars, guards, b),
            })
        })();
        self.read_var = saved_rd;
        self.scopes.pop();
        let pats = self.patterns.pop().unwrap_or_default();
        r.map(|e| self.user_triggers(e, &vars_seen, pats).with_span(Some(span)))
    }
}

/// Half the least amount held of the locations `locs` (`perm(l) / 2`, the smallest by `?:`), the
/// `read` amount a callee or a loop takes; `None` for no location.
pub(super) fn half_least_held(locs: Vec<Exp>) -> Option<Exp> {
    let half = |l: Exp| Exp::bin("/", Exp::synth(ExpKind::PermOf(Box::new(l))), Exp::int(2));
    locs.into_iter().map(half).reduce(|m, x| {
        Exp::synth(ExpKind::Cond(
            Box::new(Exp::bin("<", x.clone(), m.clone())),
            Box::new(x),
            Box::new(m),
        ))
    })
}
