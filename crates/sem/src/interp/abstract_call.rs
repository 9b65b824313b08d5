//! Calls of abstract methods and functions (no body): run from the contract. The
//! precondition is checked (and, for a method, its permissions taken) as for any call; the
//! heap stays as it is; `\result` is chosen from the postcondition; then the postcondition is
//! checked with that result (and, for a method, its permissions go to the caller).
//!
//! The choice is deterministic, so two programs that call the same abstract method in the
//! same state get the same result: the values that `\result == e` conjuncts name (also under
//! a true `c ==>`), for a sequence or array the one that `|\result| == n` (`\result.length ==
//! n`) and `\forall int i; …; \result[i] == e(i)` describe, then the type's default and a few
//! small values (a new object or array for a result that must not be null). The first that
//! satisfies the postcondition is taken. When none does, or the postcondition gives
//! permissions the precondition did not take, the run is inconclusive (R-ABSTRACT): nothing
//! the abstract method could do is known, so the run says nothing.

use super::*;

/// A possible result: a value, or an object or array that the call would allocate.
enum Cand {
    Val(Value),
    Array(Ty, Vec<Value>),
    Object(u32),
}

/// Who asks for a result: a method (it may allocate one; `\old` reads the heap given when the
/// call changed fields) or a pure function.
#[derive(Clone, Copy)]
enum Caller<'h> {
    Method(Option<&'h Heap>),
    Function,
}

/// What a postcondition says about `\result`.
#[derive(Default)]
struct Said {
    vals: Vec<Value>,
    len: Option<i64>,
    /// A length a bound allows (`n <= \result.length`, as `\pointer(\result, n, p)` says): the
    /// smallest such array, when no equation fixes the length.
    len_bound: Option<i64>,
    elems: Vec<(i64, Value)>,
}

/// The value next to a bound `x op k`, closest to it: `x > k` gives `k + 1`, `x < k` gives
/// `k - 1`, `x <= k` and `x >= k` give `k`.
pub(super) fn next_to(op: BinOp, k: i64) -> Option<i64> {
    match op {
        BinOp::Gt => k.checked_add(1),
        BinOp::Lt => k.checked_sub(1),
        _ => Some(k),
    }
}

pub(super) fn mentions_result(e: &CE) -> bool {
    if matches!(e, CE::Result) {
        return true;
    }
    let mut found = false;
    e.for_each_sub(&mut |x| found |= mentions_result(x));
    found
}

fn is_result_len(e: &CE) -> bool {
    matches!(e, CE::Length(x, _) if matches!(**x, CE::Result))
}

/// `\result[i] == e` or `e == \result[i]` with `i` the local `slot`: `e`.
fn elem_def(body: &CE, slot: u32) -> Option<&CE> {
    let CE::Bin(BinOp::Eq, a, b, _) = body else { return None };
    let at = |x: &CE| matches!(x, CE::Index(r, i, _) if matches!(**r, CE::Result) && matches!(**i, CE::Local(s) if s == slot));
    if at(a) && !mentions_result(b) {
        Some(b)
    } else if at(b) && !mentions_result(a) {
        Some(a)
    } else {
        None
    }
}

impl Interp {
    /// `e` evaluated, failures (errors, missing permissions) read as "no value": the
    /// diagnostics it would report are dropped.
    pub(super) fn quiet_ev(
        &mut self,
        e: &CE,
        env: &mut Env,
        pv: PV,
    ) -> Result<Option<Value>, Stop> {
        let before = (self.errors.len(), self.suppressed);
        let r = self.ev(e, env, pv);
        let clean = self.errors.len() == before.0 && self.suppressed == before.1;
        self.errors.truncate(before.0);
        self.suppressed = before.1;
        match r {
            Ok(v) if clean => Ok(Some(v)),
            Ok(_) | Err(Stop::Error(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Gather what the postcondition conjunct `e` says about `\result`.
    fn said(&mut self, e: &CE, env: &mut Env, pv: PV, out: &mut Said) -> Result<(), Stop> {
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                self.said(l, env, pv, out)?;
                self.said(r, env, pv, out)
            }
            CE::Bin(BinOp::Implies, c, b, _) if !mentions_result(c) => {
                if self.quiet_ev(c, env, pv)? == Some(Value::Bool(true)) {
                    self.said(b, env, pv, out)?;
                }
                Ok(())
            }
            CE::Bin(BinOp::Eq, a, b, _) => {
                for (x, y) in [(a, b), (b, a)] {
                    if mentions_result(y) {
                        continue;
                    }
                    if matches!(**x, CE::Result) {
                        if let Some(v) = self.quiet_ev(y, env, pv)? {
                            out.vals.push(v);
                        }
                    } else if is_result_len(x) {
                        if let Some(Value::Int(n)) = self.quiet_ev(y, env, pv)? {
                            out.len = out.len.or(Some(n));
                        }
                    }
                }
                Ok(())
            }
            // A bound: the value next to it (`\result > e` gives `e + 1`).
            CE::Bin(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), a, b, _) => {
                let len_side = match (&**a, &**b) {
                    (x, e) if is_result_len(x) => Some((*op, e)),
                    (e, x) if is_result_len(x) => Some((op.converse(), e)),
                    _ => None,
                };
                if let Some((op, e)) = len_side {
                    if !mentions_result(e) {
                        if let Some(Value::Int(k)) = self.quiet_ev(e, env, pv)? {
                            out.len_bound = out.len_bound.or(next_to(op, k));
                        }
                    }
                    return Ok(());
                }
                let (op, e) = match (&**a, &**b) {
                    (CE::Result, e) => (*op, e),
                    (e, CE::Result) => (op.converse(), e),
                    _ => return Ok(()),
                };
                if mentions_result(e) {
                    return Ok(());
                }
                if let Some(Value::Int(k)) = self.quiet_ev(e, env, pv)? {
                    out.vals.extend(next_to(op, k).map(Value::Int));
                }
                Ok(())
            }
            CE::Quant { kind: QuantKind::Forall, binders, cond, implied, body, span } => {
                let [b] = &binders[..] else { return Ok(()) };
                let Some(def) = elem_def(body, b.slot) else { return Ok(()) };
                let before = (self.errors.len(), self.suppressed);
                let tuples = self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv);
                self.errors.truncate(before.0);
                self.suppressed = before.1;
                let Ok(tuples) = tuples else { return Ok(()) };
                for i in tuples {
                    env.store[b.slot as usize] = Value::Int(i);
                    if let Some(v) = self.quiet_ev(def, env, pv)? {
                        out.elems.push((i, v));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The results to try for abstract `md`, in order.
    fn candidates(
        &mut self,
        md: &CMethod,
        store: &mut Vec<Value>,
        this: &Value,
        pv: PV,
    ) -> Result<Vec<Cand>, Stop> {
        let mut said = Said::default();
        {
            let null = Value::Null;
            let mut env = Env::contract(store, this, &null, None);
            for c in &md.post {
                self.said(&c.e, &mut env, pv, &mut said)?;
            }
        }
        let mut out: Vec<Cand> = said.vals.into_iter().map(Cand::Val).collect();
        let elems = |elem: &Ty| -> Option<Vec<Value>> {
            let n = match said.len.or(said.len_bound) {
                Some(n) => n,
                // Without a length: the indices the quantifier fills, if they are 0 .. k.
                None => {
                    let k = said.elems.len() as i64;
                    let mut idx: Vec<i64> = said.elems.iter().map(|e| e.0).collect();
                    idx.sort_unstable();
                    idx.dedup();
                    if k == 0 || idx != (0..k).collect::<Vec<_>>() {
                        return None;
                    }
                    k
                }
            };
            if !(0..=1 << 20).contains(&n) {
                return None;
            }
            let mut v = vec![default_of(elem); n as usize];
            for (i, x) in &said.elems {
                if (0..n).contains(i) {
                    v[*i as usize] = x.clone();
                }
            }
            Some(v)
        };
        match &md.ret {
            Ty::Seq(elem) => {
                if let Some(v) = elems(elem) {
                    out.push(Cand::Val(Value::Seq(Rc::new(v))));
                }
            }
            Ty::Array(elem) => {
                if let Some(v) = elems(elem) {
                    out.push(Cand::Array((**elem).clone(), v));
                }
            }
            _ => {}
        }
        // Null first, except without permission checks: a program written without permissions
        // (VeyMont's) dereferences what its abstract methods return with no contract saying
        // it is not null, and a verified one cannot tell a fresh object from null without one.
        let fresh_first = !self.cfg.checks.perms;
        let with_null = |out: &mut Vec<Cand>, fresh: Cand| {
            if fresh_first {
                out.extend([fresh, Cand::Val(Value::Null)]);
            } else {
                out.extend([Cand::Val(Value::Null), fresh]);
            }
        };
        match &md.ret {
            Ty::Int => out.extend([0, 1, -1, 2, -2, 3].map(|i| Cand::Val(Value::Int(i)))),
            Ty::Bool => out.extend([false, true].map(|b| Cand::Val(Value::Bool(b)))),
            Ty::Class(c) => match self.prog.classes.iter().position(|k| k.name == *c) {
                Some(k) => with_null(&mut out, Cand::Object(k as u32)),
                None => out.push(Cand::Val(Value::Null)),
            },
            Ty::Array(elem) => with_null(&mut out, Cand::Array((**elem).clone(), Vec::new())),
            t => out.push(Cand::Val(default_of(t))),
        }
        Ok(out)
    }

    /// The first clause of `post` that is false with `result`: its span (`None`: all hold).
    /// Only truth is checked here, not permissions.
    pub(super) fn post_false(
        &mut self,
        post: &[CClause],
        store: &mut Vec<Value>,
        this: &Value,
        result: &Value,
        view: &Holder,
        old: Option<&Heap>,
    ) -> Result<Option<Span>, Stop> {
        let before = (self.errors.len(), self.suppressed);
        let mut env = Env::contract(store, this, result, old);
        // The resource clauses walk the assertion with a copy of the view, made when one
        // comes; the pure ones are evaluated against the view itself.
        let mut x: Option<Xfer> = None;
        let mut bad = None;
        for c in post {
            let r = if c.pure {
                let pv = if self.cfg.checks.perms { PV::One(view) } else { PV::Unchecked };
                self.ev(&c.e, &mut env, pv).map(|v| v == Value::Bool(true))
            } else {
                let x = x.get_or_insert_with(|| {
                    let mut x = Xfer::new(Mode::Check, view.clone(), Holder::default());
                    x.perms = false;
                    x
                });
                self.assertion(&c.e, &mut env, x).map(|()| x.fails.is_empty())
            };
            match r {
                Ok(true) => {}
                Ok(false) | Err(Stop::Error(_)) => {
                    // A clause that is false because it reads what the callee may not read is
                    // the contract's fault, not the choice's: the run ends with the read.
                    let unreadable =
                        self.errors[before.0..].iter().find(|d| d.code == "R-PERM-READ").cloned();
                    if let Some(d) = unreadable {
                        self.errors.truncate(before.0);
                        self.suppressed = before.1;
                        return Err(Stop::Error(Box::new(d)));
                    }
                    bad = Some(c.span);
                    break;
                }
                Err(e) => {
                    self.errors.truncate(before.0);
                    self.suppressed = before.1;
                    return Err(e);
                }
            }
        }
        self.errors.truncate(before.0);
        self.suppressed = before.1;
        Ok(bad)
    }

    fn line_of(&self, s: Span) -> usize {
        let lo = (s.lo as usize).min(self.src.len());
        self.src.get(..lo).map_or(0, |t| t.matches('\n').count()) + 1
    }

    /// Choose the result of abstract `md` (see the module documentation); `callee` holds what
    /// the precondition took, and receives the permissions of what the choice allocates.
    fn choose_result(
        &mut self,
        md: &CMethod,
        store: &mut Vec<Value>,
        this: &Value,
        callee: &mut Holder,
        caller: Caller,
        span: Span,
    ) -> Result<Value, Stop> {
        let cands = self.candidates(md, store, this, PV::One(callee))?;
        let old = match caller {
            Caller::Method(old) => old,
            Caller::Function => None,
        };
        let mut first_bad = None;
        for c in cands {
            let v = match c {
                Cand::Val(v) => v,
                _ if matches!(caller, Caller::Function) => continue,
                Cand::Array(elem, data) => {
                    let id = self.heap.alloc_array(elem, data);
                    callee.grant_all(id, self.heap.len_of(id));
                    Value::Ref(id)
                }
                Cand::Object(class) => {
                    let c = &self.prog.classes[class as usize];
                    let fields = c.fields.iter().map(|f| default_of(&f.2)).collect();
                    let id = self.heap.alloc_object(class, fields);
                    callee.grant_all(id, self.heap.len_of(id));
                    Value::Ref(id)
                }
            };
            match self.post_false(&md.post, store, this, &v, callee, old)? {
                None => return Ok(v),
                Some(s) => first_bad = first_bad.or(Some(s)),
            }
        }
        let line = first_bad.map_or(String::new(), |s| format!(" (line {})", self.line_of(s)));
        Err(inconclusive(
            "R-ABSTRACT",
            format!(
                "abstract method `{}`: the chosen result does not satisfy its postcondition{line}",
                md.name
            ),
            first_bad.unwrap_or(span),
        ))
    }

    /// An abstract constructor's object is new: its fields take the values that `f == e`
    /// conjuncts of the postcondition name (the object's other fields keep their defaults).
    fn ctor_fields(
        &mut self,
        md: &CMethod,
        store: &mut Vec<Value>,
        this: &Value,
    ) -> Result<(), Stop> {
        let Value::Ref(id) = *this else { return Ok(()) };
        let null = Value::Null;
        let mut sets = Vec::new();
        {
            let mut env = Env::contract(store, this, &null, None);
            let mut conj = Vec::new();
            for c in &md.post {
                c.e.conjuncts(&mut conj);
            }
            for e in conj {
                let CE::Bin(BinOp::Eq, a, b, _) = e else { continue };
                for (x, y) in [(a, b), (b, a)] {
                    let CE::Field(o, f, span) = &**x else { continue };
                    if !matches!(**o, CE::This) || mentions_result(y) {
                        continue;
                    }
                    let Ok(loc) = self.field_loc(this.clone(), *f, *span) else { continue };
                    if let Some(v) = self.quiet_ev(y, &mut env, PV::Unchecked)? {
                        sets.push((loc, v));
                        break;
                    }
                }
            }
        }
        for (loc, v) in sets {
            if loc.obj() == id {
                self.heap.set(loc, v);
            }
        }
        Ok(())
    }

    /// A statement call of the abstract method `method` (arguments as for `enter_call`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_abstract(
        &mut self,
        w: &mut Warp,
        method: u32,
        recv: Option<&CE>,
        new_objs: Option<&[(usize, u32)]>,
        args: &[CE],
        target: Option<Target>,
        span: Span,
    ) -> Result<(), Stop> {
        let prog = self.prog.clone();
        let md = &prog.methods[method as usize];
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
        let (epoch, atomic) = (w.epoch, w.atomic);
        for l in lanes_of(m) {
            let (this, mut store) = {
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
                let pv = self.code_view(holders);
                let this = match (new_objs, recv) {
                    (Some(objs), _) => objs
                        .iter()
                        .find(|(k, _)| *k == l)
                        .map_or(Value::Null, |(_, id)| Value::Ref(*id)),
                    (None, Some(r)) => self.ev(r, &mut env, pv)?,
                    (None, None) => env.this.clone(),
                };
                if !md.is_static && this == Value::Null {
                    return Err(err(
                        "R-NULL",
                        format!("call of `{}` on null", md.name),
                        span,
                        "null receiver",
                    ));
                }
                (this.clone(), self.arg_store(md, args, &mut env, pv)?)
            };
            let who = w.lanes[l].who();
            // The precondition, from the caller into the callee's holder.
            let top = w.lanes[l].holders.last_mut().expect("holder");
            let mut x = Xfer::new(Mode::Exhale, std::mem::take(top), Holder::default());
            let what = format!("precondition of `{}`", md.name);
            let r = {
                let null = Value::Null;
                let mut env = Env::contract(&mut store, &this, &null, None);
                let rep = Report {
                    code_pure: "R-PRE",
                    code_perm: "R-PERM-TRANSFER",
                    what: &what,
                    site: span,
                    who,
                };
                self.clauses(&md.pre, &mut env, &mut x, &rep)
            };
            *w.lanes[l].holders.last_mut().expect("holder") = x.src;
            let mut callee = x.dst;
            r?;
            if let (true, Value::Ref(id)) = (md.is_ctor, &this) {
                for loc in self.heap.locations(*id).collect::<Vec<_>>() {
                    callee.add(loc, &Amt::write());
                }
            }
            if md.is_ctor {
                self.ctor_fields(md, &mut store, &this)?;
            }
            let from = self.heap.objs.len();
            let result = self.abstract_effect(md, &mut store, &this, &mut callee, span)?;
            // Arrays the call creates are this lane's allocation (for the cost model's memory
            // spaces: a CUDA block's `__shared__` allocator is such a call).
            self.cost_alloc(from, w.lanes[l].path, span);
            if md.is_ctor {
                self.ctor_epilogue(&this, &mut callee, span, who)?;
            }
            // The postcondition's permissions go to the caller.
            let before = (self.errors.len(), self.suppressed);
            let top = w.lanes[l].holders.last_mut().expect("holder");
            let mut x = Xfer::new(Mode::Exhale, callee, std::mem::take(top));
            let mut short = None;
            {
                let mut env = Env::contract(&mut store, &this, &result, None);
                for c in &md.post {
                    let r = self.assertion(&c.e, &mut env, &mut x);
                    if r.is_err() || x.fails.iter().any(|f| f.perm) {
                        short = Some(c.span);
                        break;
                    }
                }
            }
            self.errors.truncate(before.0);
            self.suppressed = before.1;
            let caller = w.lanes[l].holders.last_mut().expect("holder");
            *caller = x.dst;
            if md.is_ctor {
                self.ctor_tokens(&this, caller);
            }
            if let Some(s) = short {
                return Err(inconclusive(
                    "R-ABSTRACT",
                    format!(
                        "abstract method `{}`: its postcondition gives permissions its precondition did not take (line {})",
                        md.name,
                        self.line_of(s)
                    ),
                    s,
                ));
            }
            if let Some(t) = &target {
                let v = if md.is_ctor { this } else { result };
                self.store_target(w, l, t, v, span)?;
            }
        }
        Ok(())
    }

    /// What an abstract method call does: the result it returns, with the heap it leaves. The
    /// heap stays as it is if the postcondition allows that; else, when the callee may write
    /// whole arrays, the arrays sorted ascending and then descending are tried (the usual
    /// abstract `sort`); the first state whose postcondition holds is kept.
    fn abstract_effect(
        &mut self,
        md: &CMethod,
        store: &mut Vec<Value>,
        this: &Value,
        callee: &mut Holder,
        span: Span,
    ) -> Result<Value, Stop> {
        let search = md.is_ctor || md.ret == Ty::Void;
        let old = self.abstract_fields(&md.post, store, this, callee, search)?;
        let old = old.as_ref();
        let attempt = |me: &mut Self,
                       store: &mut Vec<Value>,
                       callee: &mut Holder|
         -> Result<Value, Stop> {
            Ok(if md.is_ctor || md.ret == Ty::Void {
                match me.post_false(&md.post, store, this, &Value::Null, callee, old)? {
                    None => Value::Null,
                    Some(s) => {
                        let line = me.line_of(s);
                        return Err(inconclusive(
                            "R-ABSTRACT",
                            format!(
                                "abstract method `{}`: its postcondition does not hold of the unchanged heap (line {line})",
                                md.name
                            ),
                            s,
                        ));
                    }
                }
            } else {
                me.choose_result(md, store, this, callee, Caller::Method(old), span)?
            })
        };
        let writable = self.writable_arrays(callee);
        let variants = if writable.is_empty() { 1 } else { 3 };
        for v in 0..variants {
            let saved: Vec<(u32, Vec<Value>)> = match v {
                0 => Vec::new(),
                _ => writable.iter().filter_map(|&a| self.sort_array(a, v == 1)).collect(),
            };
            match attempt(self, store, callee) {
                Err(Stop::Inconclusive(_)) if v + 1 < variants => {
                    for (a, data) in saved {
                        if let HObj::Array { data: d, .. } = &mut self.heap.objs[a as usize] {
                            *d = data;
                        }
                    }
                }
                r => return r,
            }
        }
        Err(inconclusive("R-ABSTRACT", format!("abstract method `{}`", md.name), span))
    }

    /// Arrays every cell of which `h` may write.
    fn writable_arrays(&self, h: &Holder) -> Vec<u32> {
        let mut objs: Vec<u32> = h.entries().map(|(l, _)| l.obj()).collect();
        objs.sort_unstable();
        objs.dedup();
        objs.retain(|&o| match &self.heap.objs[o as usize] {
            HObj::Array { data, .. } => {
                !data.is_empty() && (0..data.len() as u32).all(|i| h.can_write(Loc::new(o, i)))
            }
            HObj::Object { .. } => false,
        });
        objs
    }

    /// Sort array `a` (ascending or descending); its old contents, if it changed.
    fn sort_array(&mut self, a: u32, ascending: bool) -> Option<(u32, Vec<Value>)> {
        let HObj::Array { data, .. } = &mut self.heap.objs[a as usize] else { return None };
        let old = data.clone();
        data.sort();
        if !ascending {
            data.reverse();
        }
        (old != *data).then_some((a, old))
    }

    /// A call of the abstract function `md` on `this` with the argument store `store`: its
    /// precondition checked, the result chosen from its postcondition (see the module
    /// documentation), reads framed by the caller's view `pv`.
    pub(super) fn call_abstract_pure(
        &mut self,
        md: &CMethod,
        this: Value,
        mut store: Vec<Value>,
        span: Span,
        pv: PV,
    ) -> Result<Value, Stop> {
        {
            let null = Value::Null;
            let mut env = Env::contract(&mut store, &this, &null, None);
            self.check_pure_pre(md, span, &mut env, pv)?;
        }
        // What the caller may read is what the function may read (without permission checks,
        // the view is not consulted).
        let mut callee = match pv {
            PV::One(h) => h.clone(),
            PV::Two(a, b) => {
                let mut h = a.clone();
                for (loc, amt) in b.entries() {
                    h.add(loc, amt);
                }
                h
            }
            PV::Unchecked => Holder::default(),
        };
        self.choose_result(md, &mut store, &this, &mut callee, Caller::Function, span)
    }
}
