//! The expression evaluator (semantics.md §4.7, §4.8): one lane's expression against the
//! heap and its store, each heap read checked against the lane's permissions ([`PV`]) and
//! recorded for the race detector. It only reads (permissions move in `assertion`); it is
//! apart from the statements that use it because it is the hot path of every run.
//! Quantifiers are in `quant`.

use super::*;

/// Evaluation environment of one lane.
pub struct Env<'s> {
    pub store: &'s mut Vec<Value>,
    pub this: &'s Value,
    pub result: &'s Value,
    pub old: Option<&'s Heap>,
    pub race: Option<PathId>,
    pub epoch: u32,
    pub atomic: Option<u32>,
    pub in_old: bool,
}

impl<'s> Env<'s> {
    /// An environment for contracts: their reads are not accesses of the program, so nothing
    /// is recorded for the race detector (which is all that the epoch and the atomic block
    /// are for).
    pub fn contract(
        store: &'s mut Vec<Value>,
        this: &'s Value,
        result: &'s Value,
        old: Option<&'s Heap>,
    ) -> Env<'s> {
        Env { store, this, result, old, race: None, epoch: 0, atomic: None, in_old: false }
    }
}

/// How heap reads are permission-checked.
#[derive(Clone, Copy)]
pub enum PV<'h> {
    Unchecked,
    One(&'h Holder),
    /// The state before an exhale began: what is left plus what was taken.
    Two(&'h Holder, &'h Holder),
}

impl PV<'_> {
    #[inline]
    pub(super) fn can_read(&self, l: Loc) -> bool {
        match self {
            PV::Unchecked => true,
            PV::One(h) => h.can_read(l),
            // Holders never hold negative amounts (only non-negative amounts move, and a take
            // never goes below zero), so the sum is positive exactly when one part is.
            PV::Two(a, b) => a.can_read(l) || b.can_read(l),
        }
    }
    /// May every element of `lo..hi` of `obj` be read? False may also mean "not known at once"
    /// (two holders that each have part of the range).
    pub(super) fn can_read_range(&self, obj: u32, lo: u32, hi: u32) -> bool {
        match self {
            PV::Unchecked => true,
            PV::One(h) => h.can_read_range(obj, lo, hi),
            PV::Two(a, b) => a.can_read_range(obj, lo, hi) || b.can_read_range(obj, lo, hi),
        }
    }
    fn amount(&self, l: Loc) -> Amt {
        match self {
            PV::Unchecked => Amt::write(),
            PV::One(h) => h.amount(l),
            PV::Two(a, b) => {
                let mut x = a.amount(l);
                x.add(&b.amount(l));
                x
            }
        }
    }
}

impl Interp {
    pub(super) fn arith(&self, op: BinOp, a: i64, b: i64, span: Span) -> Result<i64, Stop> {
        let r = match op {
            BinOp::Add => a.checked_add(b),
            BinOp::Sub => a.checked_sub(b),
            BinOp::Mul => a.checked_mul(b),
            _ if op.is_division() => {
                if b == 0 {
                    return Err(err(
                        "R-DIV0",
                        format!("division by zero in `{}`", self.text(span)),
                        span,
                        "the divisor is 0",
                    ));
                }
                match op {
                    // Euclidean, as pvl.md fixes for PVL (semantics.md §4.8).
                    BinOp::Div => a.checked_div_euclid(b),
                    BinOp::Mod => a.checked_rem_euclid(b),
                    // C's operators truncate toward zero, as Rust's do.
                    BinOp::TruncDiv => a.checked_div(b),
                    _ => a.checked_rem(b),
                }
            }
            _ => None,
        };
        r.ok_or_else(|| {
            inconclusive(
                "R-INT-RANGE",
                format!("integer overflow in `{}` (i64 range)", self.text(span)),
                span,
            )
        })
    }

    #[inline]
    pub(super) fn as_int(&self, v: Value, span: Span) -> Result<i64, Stop> {
        match v {
            Value::Int(i) => Ok(i),
            other => {
                Err(inconclusive("R-TYPE", format!("expected an integer, found {other:?}"), span))
            }
        }
    }

    #[inline]
    pub(super) fn as_bool(&self, v: Value, span: Span) -> Result<bool, Stop> {
        match v {
            Value::Bool(b) => Ok(b),
            other => {
                Err(inconclusive("R-TYPE", format!("expected a boolean, found {other:?}"), span))
            }
        }
    }

    /// Resolve a location expression (`a[i]`, `o.f`).
    pub fn eval_loc(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Loc, Stop> {
        match e {
            CE::Index(a, i, span) => {
                let av = self.ev(a, env, pv)?;
                let iv = self.ev(i, env, pv)?;
                // The in-bounds test written out here rather than through `in_bounds_elem`:
                // this is the hottest path of a kernel's writes, and the `sem` bench measured
                // the call 8% slower on the loop kernel.
                if let (Value::Ref(id), Value::Int(idx)) = (&av, &iv) {
                    if let Some(HObj::Array { data, .. }) = self.heap.objs.get(*id as usize) {
                        if *idx >= 0 && (*idx as usize) < data.len() {
                            return Ok(Loc::new(*id, *idx as u32));
                        }
                    }
                }
                let idx = self.as_int(iv, *span)?;
                self.index_loc(av, idx, *span)
            }
            CE::Field(o, f, span) => {
                let ov = self.ev(o, env, pv)?;
                self.field_loc(ov, *f, *span)
            }
            other => Err(unsupported(format!("not a heap location: {other:?}"), Span::DUMMY)),
        }
    }

    /// The common case of `a[i]`, an in-bounds element of an array, found without the checks of
    /// [`Self::index_loc`].
    #[inline]
    fn in_bounds_elem(&self, av: &Value, iv: &Value) -> Option<Loc> {
        if let (Value::Ref(id), Value::Int(idx)) = (av, iv) {
            if let Some(HObj::Array { data, .. }) = self.heap.objs.get(*id as usize) {
                if *idx >= 0 && (*idx as usize) < data.len() {
                    return Some(Loc::new(*id, *idx as u32));
                }
            }
        }
        None
    }

    pub(super) fn index_loc(&self, av: Value, idx: i64, span: Span) -> Result<Loc, Stop> {
        match av {
            Value::Ref(id) => {
                let len = self.heap.len_of(id);
                if idx < 0 || idx as usize >= len {
                    return Err(err(
                        "R-OOB",
                        format!(
                            "index {idx} out of bounds for length {len} in `{}`",
                            self.text(span)
                        ),
                        span,
                        "out of bounds",
                    ));
                }
                Ok(Loc::new(id, idx as u32))
            }
            Value::Null => Err(err(
                "R-NULL",
                format!("access through null in `{}`", self.text(span)),
                span,
                "null array",
            )),
            other => {
                Err(inconclusive("R-TYPE", format!("indexing a non-array value {other:?}"), span))
            }
        }
    }

    pub(super) fn field_loc(&self, ov: Value, f: u32, span: Span) -> Result<Loc, Stop> {
        match ov {
            Value::Ref(id) => match &self.heap.objs[id as usize] {
                HObj::Object { class, .. } => {
                    match self.prog.classes[*class as usize].field_slot(f) {
                        Some(s) => Ok(Loc::new(id, s)),
                        None => Err(inconclusive(
                            "R-TYPE",
                            format!("no field `{}`", self.prog.field_names[f as usize]),
                            span,
                        )),
                    }
                }
                HObj::Array { .. } => Err(inconclusive("R-TYPE", "field of an array", span)),
            },
            _ => Err(err(
                "R-NULL",
                format!("access through null in `{}`", self.text(span)),
                span,
                "null object",
            )),
        }
    }

    pub(super) fn read(&mut self, l: Loc, span: Span, env: &Env, pv: PV) -> Value {
        if env.in_old {
            if let Some(h) = env.old {
                if (l.obj() as usize) < h.objs.len() {
                    return h.get(l);
                }
            }
            return self.heap.get(l);
        }
        let denied =
            self.cfg.checks.perms && !pv.can_read(l) && !self.heap.readable_rows.contains(&l.obj());
        if denied && self.muted() {
            self.suppressed += 1;
        } else if denied {
            let held = pv.amount(l);
            let d = Diagnostic::error(
                "R-PERM-READ",
                format!("read of {} without permission (held: {held})", self.describe_loc(l)),
            )
            .with_primary(span, format!("reads `{}`", self.text(span)));
            self.report(d);
        }
        if let Some(p) = env.race {
            if self.cfg.checks.races {
                if let Some(r) = self.race.access(l, false, span, p, env.epoch, env.atomic) {
                    self.race_diag(r);
                }
            }
            if self.cost.is_some() {
                self.cost_note(span, l, Some(p), false);
            }
        }
        self.heap.get(l)
    }

    /// [`Self::eval`] with the leaves (locals, literals) handled inline: they are about half of
    /// all nodes, and a call of the full evaluator costs more than reading a slot.
    #[inline(always)]
    pub(super) fn ev(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Value, Stop> {
        match e {
            CE::Local(s) => Ok(env.store[*s as usize].clone()),
            CE::Int(i) => Ok(Value::Int(*i)),
            _ => self.eval(e, env, pv),
        }
    }

    #[inline(never)]
    pub fn eval(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Value, Stop> {
        Ok(match e {
            CE::Int(i) => Value::Int(*i),
            CE::Bool(b) => Value::Bool(*b),
            CE::Null => Value::Null,
            CE::Local(s) => env.store[*s as usize].clone(),
            CE::This => env.this.clone(),
            CE::Result => env.result.clone(),
            CE::Field(o, f, span) => {
                let ov = self.ev(o, env, pv)?;
                let l = self.field_loc(ov, *f, *span)?;
                self.read(l, *span, env, pv)
            }
            CE::Index(a, i, span) => {
                let av = self.ev(a, env, pv)?;
                let iv = self.ev(i, env, pv)?;
                if let Some(l) = self.in_bounds_elem(&av, &iv) {
                    return Ok(self.read(l, *span, env, pv));
                }
                if let Value::Map(m) = &av {
                    return Ok(m.get(&iv));
                }
                let idx = self.as_int(iv, *span)?;
                if let Value::Seq(s) = &av {
                    return s.get(idx as usize).cloned().filter(|_| idx >= 0).ok_or_else(|| {
                        err(
                            "R-OOB",
                            format!("sequence index {idx} out of bounds for length {}", s.len()),
                            *span,
                            "out of bounds",
                        )
                    });
                }
                let l = self.index_loc(av, idx, *span)?;
                self.read(l, *span, env, pv)
            }
            CE::Length(x, span) => match self.ev(x, env, pv)? {
                Value::Ref(id) => Value::Int(self.heap.len_of(id) as i64),
                Value::Seq(s) | Value::Set(s) | Value::Bag(s) => Value::Int(s.len() as i64),
                Value::Map(m) => Value::Int(m.entries.len() as i64),
                _ => {
                    return Err(err(
                        "R-NULL",
                        format!("length of null in `{}`", self.text(*span)),
                        *span,
                        "null",
                    ))
                }
            },
            CE::Not(x) => {
                let v = self.ev(x, env, pv)?;
                Value::Bool(!self.as_bool(v, Span::DUMMY)?)
            }
            CE::Neg(x, span) => match self.ev(x, env, pv)? {
                Value::Perm(a) => Value::perm(a.negated()),
                Value::Big(b) => Value::big(-(*b).clone()),
                v => {
                    let i = self.as_int(v, *span)?;
                    Value::Int(self.arith(BinOp::Sub, 0, i, *span)?)
                }
            },
            CE::Bin(op, l, r, span) => return self.binary(*op, l, r, *span, env, pv),
            CE::Cond(c, a, b) => {
                let cv = self.ev(c, env, pv)?;
                if self.as_bool(cv, Span::DUMMY)? {
                    self.ev(a, env, pv)?
                } else {
                    self.ev(b, env, pv)?
                }
            }
            CE::CallPure { method, recv, args, span } => {
                return self.call_pure(*method, recv.as_deref(), args, *span, env, pv)
            }
            CE::Old(x) => {
                let saved = env.in_old;
                env.in_old = true;
                let v = self.ev(x, env, pv);
                env.in_old = saved;
                v?
            }
            CE::Quant { .. } | CE::Sum { .. } => return self.eval_quant(e, env, pv),
            CE::Let(s, v, b) => {
                let x = self.ev(v, env, pv)?;
                env.store[*s as usize] = x;
                self.ev(b, env, pv)?
            }
            CE::Perm(l, p, _) => {
                let loc = self.eval_loc(l, env, pv)?;
                let amt = self.eval_perm(p, env, pv)?;
                Value::Bool(pv.amount(loc) >= amt)
            }
            CE::PointsTo(l, p, v, _) => {
                let loc = self.eval_loc(l, env, pv)?;
                let amt = self.eval_perm(p, env, pv)?;
                let want = self.ev(v, env, pv)?;
                Value::Bool(pv.amount(loc) >= amt && self.heap.get(loc) == want)
            }
            CE::ArrayShape(a, n) => {
                let av = self.ev(a, env, pv)?;
                let nv = self.ev(n, env, pv)?;
                match (av, nv) {
                    (Value::Ref(id), Value::Int(n)) => {
                        Value::Bool(self.heap.len_of(id) as i64 == n)
                    }
                    _ => Value::Bool(false),
                }
            }
            CE::MatrixShape(m, r, c) => {
                let mv = self.ev(m, env, pv)?;
                let rv = self.ev(r, env, pv)?;
                let cv = match c {
                    Some(c) => Some(self.ev(c, env, pv)?),
                    None => None,
                };
                let ok = self.matrix_ok(&mv, rv, cv);
                // VerCors gives every member that states the shape read access to the rows
                // (verification.md §5): once the shape holds, its rows may be read without a
                // stated permission (writes still need one).
                if let (true, Value::Ref(id)) = (ok, &mv) {
                    self.heap.readable_rows.insert(*id);
                }
                Value::Bool(ok)
            }
            CE::Write => Value::perm(Amt::write()),
            CE::Read => Value::perm(Amt::read()),
            CE::NoPerm => Value::perm(Amt::none()),
            CE::Const(v) => v.clone(),
            CE::Ghost(op, args, span) => return self.ghost(*op, args, *span, env, pv),
            CE::Comp { gens, cond, body, span } => {
                return self.comprehension(gens, cond.as_deref(), body, *span, env, pv)
            }
            CE::PermOf(l, span) => {
                if matches!(pv, PV::Unchecked) || env.in_old {
                    // No holder to ask (an `unfolding` body, a check without permissions) or
                    // an old state whose permissions are not kept.
                    return Err(unsupported("`perm(…)` where no permissions are tracked", *span));
                }
                let loc = self.eval_loc(l, env, pv)?;
                Value::perm(pv.amount(loc))
            }
            CE::SeqLit(v) => {
                let mut out = Vec::with_capacity(v.len());
                for x in v {
                    out.push(self.ev(x, env, pv)?);
                }
                Value::Seq(Rc::new(out))
            }
            CE::SeqRange(lo, hi) => {
                let lo = self.ev(lo, env, pv)?;
                let hi = self.ev(hi, env, pv)?;
                let (lo, hi) = (self.as_int(lo, Span::DUMMY)?, self.as_int(hi, Span::DUMMY)?);
                Value::Seq(Rc::new((lo..hi).map(Value::Int).collect()))
            }
            CE::Slice(s, lo, hi, span) => {
                let sv = self.seq(s, env, pv, *span)?;
                let lo = match lo {
                    Some(x) => {
                        let v = self.ev(x, env, pv)?;
                        self.as_int(v, *span)?
                    }
                    None => 0,
                };
                let hi = match hi {
                    Some(x) => {
                        let v = self.ev(x, env, pv)?;
                        self.as_int(v, *span)?
                    }
                    None => sv.len() as i64,
                };
                if lo < 0 || hi < lo || hi as usize > sv.len() {
                    return Err(err("R-OOB", "sequence slice out of bounds", *span, "here"));
                }
                Value::Seq(Rc::new(sv[lo as usize..hi as usize].to_vec()))
            }
            CE::SeqUpdate(s, i, v, span) => {
                let sv = self.seq(s, env, pv, *span)?;
                let iv = self.ev(i, env, pv)?;
                let i = self.as_int(iv, *span)?;
                let val = self.ev(v, env, pv)?;
                if i < 0 || i as usize >= sv.len() {
                    return Err(err("R-OOB", "sequence update out of bounds", *span, "here"));
                }
                let mut out = (*sv).clone();
                out[i as usize] = val;
                Value::Seq(Rc::new(out))
            }
            CE::Head(s, span) => {
                let sv = self.seq(s, env, pv, *span)?;
                sv.first()
                    .cloned()
                    .ok_or_else(|| err("R-OOB", "head of an empty sequence", *span, "here"))?
            }
            CE::Tail(s, span) => {
                let sv = self.seq(s, env, pv, *span)?;
                Value::Seq(Rc::new(sv.iter().skip(1).cloned().collect()))
            }
            CE::Pred { pred, recv, args, span } => {
                let l = self.pred_loc(*pred, recv.as_deref(), args, *span, env, pv)?;
                Value::Bool(pv.can_read(l))
            }
            CE::Unfolding(_, x) => self.ev(x, env, PV::Unchecked)?,
            CE::Scale(..) => {
                return Err(unsupported("a scaled resource used as a value", Span::DUMMY))
            }
            CE::Unsupported(what, span) => {
                return Err(unsupported(format!("unsupported in `run`: {what}"), *span))
            }
        })
    }

    /// [`param_store`] for argument expressions, evaluated in order (all of them, also those
    /// beyond the parameters, for their errors).
    pub(super) fn arg_store(
        &mut self,
        md: &CMethod,
        args: &[CE],
        env: &mut Env,
        pv: PV,
    ) -> Result<Vec<Value>, Stop> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.ev(a, env, pv)?);
        }
        Ok(param_store(md, vals))
    }

    fn seq(&mut self, s: &CE, env: &mut Env, pv: PV, span: Span) -> Result<Rc<Vec<Value>>, Stop> {
        match self.ev(s, env, pv)? {
            Value::Seq(v) => Ok(v),
            other => {
                Err(inconclusive("R-TYPE", format!("expected a sequence, found {other:?}"), span))
            }
        }
    }

    fn matrix_ok(&self, m: &Value, r: Value, c: Option<Value>) -> bool {
        let (Value::Ref(id), Value::Int(r)) = (m, r) else {
            return false;
        };
        let c = match c {
            Some(Value::Int(c)) => Some(c),
            None => None,
            Some(_) => return false,
        };
        let HObj::Array { data, .. } = &self.heap.objs[*id as usize] else {
            return false;
        };
        if data.len() as i64 != r {
            return false;
        }
        let mut seen = std::collections::BTreeSet::new();
        data.iter().all(|row| match row {
            Value::Ref(rid) => {
                seen.insert(*rid) && c.is_none_or(|c| self.heap.len_of(*rid) as i64 == c)
            }
            _ => false,
        })
    }

    fn binary(
        &mut self,
        op: BinOp,
        l: &CE,
        r: &CE,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Value, Stop> {
        match op {
            BinOp::And | BinOp::Star => {
                let a = self.ev(l, env, pv)?;
                if !self.as_bool(a, span)? {
                    return Ok(Value::Bool(false));
                }
                let b = self.ev(r, env, pv)?;
                return Ok(Value::Bool(self.as_bool(b, span)?));
            }
            BinOp::Or => {
                let a = self.ev(l, env, pv)?;
                if self.as_bool(a, span)? {
                    return Ok(Value::Bool(true));
                }
                let b = self.ev(r, env, pv)?;
                return Ok(Value::Bool(self.as_bool(b, span)?));
            }
            BinOp::Implies => {
                let a = self.ev(l, env, pv)?;
                if !self.as_bool(a, span)? {
                    return Ok(Value::Bool(true));
                }
                let b = self.ev(r, env, pv)?;
                return Ok(Value::Bool(self.as_bool(b, span)?));
            }
            _ => {}
        }
        let a = self.ev(l, env, pv)?;
        let b = self.ev(r, env, pv)?;
        Ok(match (op, a, b) {
            (BinOp::Eq, a, b) => Value::Bool(a == b),
            (BinOp::Ne, a, b) => Value::Bool(a != b),
            (BinOp::Lt, Value::Int(a), Value::Int(b)) => Value::Bool(a < b),
            (BinOp::Le, Value::Int(a), Value::Int(b)) => Value::Bool(a <= b),
            (BinOp::Gt, Value::Int(a), Value::Int(b)) => Value::Bool(a > b),
            (BinOp::Ge, Value::Int(a), Value::Int(b)) => Value::Bool(a >= b),
            (_, Value::Int(a), Value::Int(b)) if op.is_int_arith() => {
                Value::Int(self.arith(op, a, b, span)?)
            }
            (BinOp::In, x, Value::Seq(s)) => Value::Bool(s.contains(&x)),
            (BinOp::Concat | BinOp::Add, Value::Seq(a), Value::Seq(b)) => {
                let mut v = (*a).clone();
                v.extend(b.iter().cloned());
                Value::Seq(Rc::new(v))
            }
            (BinOp::Cons, x, Value::Seq(b)) => {
                let mut v = vec![x];
                v.extend(b.iter().cloned());
                Value::Seq(Rc::new(v))
            }
            (op, a, b) => return self.binary_other(op, a, b, span),
        })
    }

    fn call_pure(
        &mut self,
        m: u32,
        recv: Option<&CE>,
        args: &[CE],
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Value, Stop> {
        let prog = self.prog.clone();
        let md = &prog.methods[m as usize];
        let this = self.recv_value(recv, env, pv)?;
        let mut store = self.arg_store(md, args, env, pv)?;
        if self.depth > 10_000 {
            return Err(unsupported("recursion deeper than 10 000 calls", span));
        }
        self.tick(1, span)?;
        let Body::Expr(body) = &md.body else {
            return self.call_abstract_pure(md, this, store, span, pv);
        };
        self.depth += 1;
        let null = Value::Null;
        let res = (|| {
            let mut inner = Env {
                store: &mut store,
                this: &this,
                result: &null,
                old: env.old,
                race: env.race,
                epoch: env.epoch,
                atomic: env.atomic,
                in_old: env.in_old,
            };
            self.check_pure_pre(md, span, &mut inner, pv)?;
            self.ev(body, &mut inner, pv)
        })();
        self.depth -= 1;
        res
    }

    /// The pure part of `md`'s precondition at a call (function or abstract method): each false
    /// conjunct is an R-PRE, and the call goes on.
    pub(super) fn check_pure_pre(
        &mut self,
        md: &CMethod,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<(), Stop> {
        if !self.cfg.checks.contracts {
            return Ok(());
        }
        for c in md.pre.iter().filter(|c| c.pure) {
            let v = self.ev(&c.e, env, pv)?;
            if v != Value::Bool(true) {
                let d = Diagnostic::error(
                    "R-PRE",
                    format!("precondition of `{}` does not hold", md.name),
                )
                .with_primary(span, "in this call")
                .with_secondary(c.span, "this conjunct is false");
                self.report(d);
            }
        }
        Ok(())
    }

    pub(super) fn eval_perm(&mut self, p: &CE, env: &mut Env, pv: PV) -> Result<Amt, Stop> {
        Ok(match p {
            CE::Write => Amt::write(),
            CE::Read => Amt::read(),
            CE::NoPerm => Amt::none(),
            // A literal fraction such as `1\2` needs no evaluation.
            CE::Bin(BinOp::Frac, a, b, span) => match (&**a, &**b) {
                (CE::Int(n), CE::Int(d)) if *d != 0 => Amt { q: Q::frac(*n, *d), k: 0 },
                _ => match (self.ev(a, env, pv)?, self.ev(b, env, pv)?) {
                    (Value::Int(n), Value::Int(d)) if d != 0 => Amt { q: Q::frac(n, d), k: 0 },
                    (x, y) => {
                        let v = self.binary_other(BinOp::Frac, x, y, *span)?;
                        self.as_amount(v, *span)?
                    }
                },
            },
            other => {
                let v = self.ev(other, env, pv)?;
                self.as_amount(v, Span::DUMMY)?
            }
        })
    }

    /// A number as a permission amount.
    fn as_amount(&self, v: Value, span: Span) -> Result<Amt, Stop> {
        match v {
            Value::Int(i) => Ok(Amt { q: Q::int(i), k: 0 }),
            Value::Perm(a) => Ok((*a).clone()),
            v => Err(inconclusive(
                "R-TYPE",
                format!("expected a permission amount, found {v:?}"),
                span,
            )),
        }
    }

    /// The receiver of a call or predicate: `recv`'s value, or `this` when there is none.
    pub(super) fn recv_value(
        &mut self,
        recv: Option<&CE>,
        env: &mut Env,
        pv: PV,
    ) -> Result<Value, Stop> {
        match recv {
            Some(r) => self.ev(r, env, pv),
            None => Ok(env.this.clone()),
        }
    }

    pub(super) fn pred_loc(
        &mut self,
        pred: u32,
        recv: Option<&CE>,
        args: &[CE],
        _span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Loc, Stop> {
        let r = self.recv_value(recv, env, pv)?;
        let rid = match r {
            Value::Ref(i) => i,
            _ => u32::MAX,
        };
        // Instances differ when an argument's value does (`state(1\2)` is not `state(write)`).
        let mut key_args = Vec::with_capacity(args.len());
        for a in args {
            key_args.push(self.ev(a, env, pv)?);
        }
        let key = (rid, pred, key_args);
        let n = self.pred_store.len() as u32;
        let id = *self.preds.entry(key).or_insert(n);
        if id == n {
            self.pred_store.push(Holder::default());
        }
        Ok(Loc::new(PRED_SPACE, id))
    }
}
