//! The statement executor: what assignments, allocations, calls and returns do for each
//! active lane of a warp, heap writes checked for permission and races, contracts exhaled at
//! calls and returns. Apart from the warp machine, which decides which lanes run which
//! instruction.

use super::*;

/// How deep statement calls may nest (as pure function calls, see `eval`).
const MAX_CALL_DEPTH: usize = 10_000;

impl Interp {
    pub(super) fn exec_assign(
        &mut self,
        w: &mut Warp,
        target: &Target,
        value: &CE,
        span: Span,
        ghost: bool,
        simple: bool,
    ) -> Result<(), Stop> {
        let m = w.mask;
        let n = m.count_ones() as u64;
        self.stmts += n;
        self.spend(n, span)?;
        if let Target::Local(s) = target {
            // Simple values read no heap location: nothing for the cost model to see.
            if simple && self.cfg.shortcuts {
                if let Some(c) = vector::eval(&self.heap, &w.lanes, m, value) {
                    for l in lanes_of(m) {
                        if let Some(fr) = w.lanes[l].frames.last_mut() {
                            fr.store[*s as usize] = c.value(l);
                        }
                    }
                    return Ok(());
                }
            }
        }
        self.exec_assign_general(w, target, value, span, ghost)
    }

    /// [`Self::exec_assign`] past its fast path (a simple value into a local): kept out of
    /// line so that the fast path's frame stays small (columns are 520 bytes each).
    #[inline(never)]
    fn exec_assign_general(
        &mut self,
        w: &mut Warp,
        target: &Target,
        value: &CE,
        span: Span,
        ghost: bool,
    ) -> Result<(), Stop> {
        let m = w.mask;
        let (epoch, atomic) = (w.epoch, w.atomic);
        if let Target::Local(s) = target {
            let mut cv = vector::col();
            if let Some(log) = self.vector_reads(w, m, &[value], std::slice::from_mut(&mut cv)) {
                self.replay_reads(w, log, ghost);
                for l in lanes_of(m) {
                    if let Some(fr) = w.lanes[l].frames.last_mut() {
                        fr.store[*s as usize] = cv.value(l);
                    }
                }
                return Ok(());
            }
            for l in lanes_of(m) {
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, ghost);
                let pv = self.code_view(holders);
                let v = self.ev(value, &mut env, pv)?;
                env.store[*s as usize] = v;
            }
            return Ok(());
        }
        // Phase 1: every lane evaluates what it reads; phase 2: checks and writes, lane order.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // Phase 1 for the whole warp at once when it can be (see `vector_reads`).
        let mut cols = [vector::col(), vector::col(), vector::col()];
        let vectored = match target {
            Target::Index(a, i) => self.vector_reads(w, m, &[a, i, value], &mut cols),
            Target::Field(o, _) => self.vector_reads(w, m, &[o, value], &mut cols[..2]),
            Target::Local(_) => None,
        };
        let did = vectored.is_some();
        if let Some(log) = vectored {
            self.replay_reads(w, log, ghost);
            for l in lanes_of(m) {
                scratch.push(match target {
                    Target::Field(_, f) => {
                        (l, cols[0].value(l), Value::Int(*f as i64), cols[1].value(l))
                    }
                    _ => (l, cols[0].value(l), cols[1].value(l), cols[2].value(l)),
                });
            }
        }
        for l in lanes_of(m).filter(|_| !did) {
            let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, ghost);
            let pv = self.code_view(holders);
            let (base, idx) = match target {
                Target::Index(a, i) => (self.ev(a, &mut env, pv)?, self.ev(i, &mut env, pv)?),
                Target::Field(o, f) => (self.ev(o, &mut env, pv)?, Value::Int(*f as i64)),
                Target::Local(_) => unreachable!("handled above"),
            };
            let v = self.ev(value, &mut env, pv)?;
            scratch.push((l, base, idx, v));
        }
        for (l, base, idx, v) in scratch.drain(..) {
            let loc = match target {
                Target::Index(..) => {
                    let i = self.as_int(idx, span)?;
                    self.index_loc(base, i, span)?
                }
                _ => {
                    let f = self.as_int(idx, span)? as u32;
                    self.field_loc(base, f, span)?
                }
            };
            self.write_loc(w, l, loc, v, span, ghost);
        }
        self.scratch = scratch;
        Ok(())
    }

    fn write_loc(&mut self, w: &Warp, l: usize, loc: Loc, v: Value, span: Span, ghost: bool) {
        if !ghost {
            self.cost_note(span, loc, w.lanes[l].path, true);
        }
        let lane = &w.lanes[l];
        if self.cfg.checks.perms {
            let top = lane.holders.last().expect("holder");
            if !top.can_write(loc) && self.muted() {
                self.suppressed += 1;
            } else if !top.can_write(loc) {
                let d = Diagnostic::error(
                    "R-PERM-WRITE",
                    format!(
                        "write to {} without write permission (held: {}) by {}",
                        self.describe_loc(loc),
                        top.amount(loc),
                        self.lane_desc(lane)
                    ),
                )
                .with_primary(span, "this write");
                self.report(d);
            }
        }
        if !ghost && self.cfg.checks.races {
            if let Some(p) = lane.path {
                if let Some(r) = self.race.access(loc, true, span, p, w.epoch, w.atomic) {
                    self.race_diag(r);
                }
            }
        }
        self.heap.set(loc, v);
    }

    pub(super) fn store_target(
        &mut self,
        w: &mut Warp,
        l: usize,
        target: &Target,
        v: Value,
        span: Span,
    ) -> Result<(), Stop> {
        let (epoch, atomic) = (w.epoch, w.atomic);
        match target {
            Target::Local(s) => {
                w.lanes[l].frames.last_mut().expect("frame").store[*s as usize] = v;
            }
            Target::Index(a, i) => {
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
                let pv = self.code_view(holders);
                let av = self.ev(a, &mut env, pv)?;
                let iv = self.ev(i, &mut env, pv)?;
                let idx = self.as_int(iv, span)?;
                let loc = self.index_loc(av, idx, span)?;
                self.write_loc(w, l, loc, v, span, false);
            }
            Target::Field(o, f) => {
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
                let pv = self.code_view(holders);
                let ov = self.ev(o, &mut env, pv)?;
                let loc = self.field_loc(ov, *f, span)?;
                self.write_loc(w, l, loc, v, span, false);
            }
        }
        Ok(())
    }

    pub(super) fn exec_alloc(
        &mut self,
        w: &mut Warp,
        target: &Target,
        elem: &Ty,
        dims: &[CE],
        span: Span,
    ) -> Result<(), Stop> {
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
        for l in lanes_of(m) {
            let (epoch, atomic) = (w.epoch, w.atomic);
            let mut sizes = Vec::new();
            {
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
                let pv = self.code_view(holders);
                for d in dims {
                    let v = self.ev(d, &mut env, pv)?;
                    let n = self.as_int(v, span)?;
                    if n < 0 {
                        return Err(err(
                            "R-NEG-SIZE",
                            format!("array size {n} is negative"),
                            span,
                            "here",
                        ));
                    }
                    if n > 1 << 26 {
                        return Err(unsupported("array too large", span));
                    }
                    sizes.push(n as usize);
                }
            }
            let from = self.heap.objs.len();
            let id = self.alloc_dims(elem, &sizes, w.lanes[l].holders.last_mut().expect("holder"));
            self.cost_alloc(from, w.lanes[l].path, span);
            self.store_target(w, l, target, Value::Ref(id), span)?;
        }
        Ok(())
    }

    fn alloc_dims(&mut self, elem: &Ty, sizes: &[usize], holder: &mut Holder) -> u32 {
        let id = if sizes.len() <= 1 {
            let n = sizes.first().copied().unwrap_or(0);
            self.heap.alloc_array(elem.clone(), vec![default_of(elem); n])
        } else {
            let rows: Vec<Value> = (0..sizes[0])
                .map(|_| Value::Ref(self.alloc_dims(elem, &sizes[1..], holder)))
                .collect();
            self.heap.alloc_array(Ty::Array(Box::new(elem.clone())), rows)
        };
        if self.cfg.checks.perms {
            holder.grant_all(id, self.heap.len_of(id));
        }
        id
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn enter_call(
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
        if md.is_pure || md.is_predicate {
            return Err(unsupported("statement call of a pure function", span));
        }
        let Body::Code(_) = &md.body else {
            return self.call_abstract(w, method, recv, new_objs, args, target, span);
        };
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
        self.spend(m.count_ones() as u64, span)?;
        if w.frames.len() > MAX_CALL_DEPTH {
            return Err(unsupported("recursion deeper than 10 000 calls", span));
        }
        let (epoch, atomic) = (w.epoch, w.atomic);
        let mut frames = Vec::new();
        for l in lanes_of(m) {
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
            let store = self.arg_store(md, args, &mut env, pv)?;
            let old = if uses_old(&md.post) || md_uses_old(md) {
                Some(Rc::new(self.heap.clone()))
            } else {
                None
            };
            frames.push((l, store, this, old));
        }
        for (l, store, this, old) in frames {
            // Exhale the precondition from the caller into the new frame holder.
            let base = w.lanes[l].holders.len();
            w.lanes[l].frames.push(LaneFrame {
                store,
                this,
                result: Value::Null,
                old,
                holder_base: base,
            });
            let who = w.lanes[l].who();
            let Lane { frames, holders, .. } = &mut w.lanes[l];
            let fr = frames.last_mut().expect("frame");
            let top = holders.last_mut().expect("holder");
            let mut x = Xfer::new(Mode::Exhale, std::mem::take(top), Holder::default());
            let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, None);
            let what = format!("precondition of `{}`", md.name);
            let r = self.clauses(
                &md.pre,
                &mut env,
                &mut x,
                &Report {
                    code_pure: "R-PRE",
                    code_perm: "R-PERM-TRANSFER",
                    what: &what,
                    site: span,
                    who,
                },
            );
            *top = x.src;
            // A constructor starts with write permission to every field of the new object.
            if let Value::Ref(id) = if md.is_ctor { fr.this.clone() } else { Value::Null } {
                for loc in self.heap.locations(id).collect::<Vec<_>>() {
                    x.dst.add(loc, &Amt::write());
                }
            }
            holders.push(x.dst);
            r?;
        }
        w.frames.push(WFrame {
            method,
            pc: 0,
            returned: 0,
            call_mask: m,
            ret_target: target,
            yields: Vec::new(),
            ctl_base: w.ctl.len(),
            span,
            fork: 0,
        });
        Ok(())
    }

    pub(super) fn leave_call(&mut self, w: &mut Warp) -> Result<(), Stop> {
        let prog = self.prog.clone();
        let fr = w.frames.pop().expect("frame");
        w.ctl.truncate(fr.ctl_base);
        let md = &prog.methods[fr.method as usize];
        let m = fr.call_mask & !w.finished;
        for l in lanes_of(m) {
            let who = w.lanes[l].who();
            let Lane { frames, holders, .. } = &mut w.lanes[l];
            let lf = frames.last_mut().expect("frame");
            // Collapse loop holders of the frame into the frame holder.
            collapse_holders(holders, lf.holder_base + 1);
            let mut frame_h = holders.pop().expect("frame holder");
            if md.is_ctor {
                // The object is shared from here: its lock invariant goes to the lock.
                self.ctor_epilogue(&lf.this, &mut frame_h, fr.span, who)?;
            }
            let caller = holders.last_mut().expect("caller holder");
            // A forked thread's postcondition waits for `join`.
            let to = if fr.fork != 0 { Holder::default() } else { std::mem::take(caller) };
            let mut x = Xfer::new(Mode::Exhale, frame_h, to);
            let r = self.method_post(md, lf, &mut x, fr.span, who);
            if fr.fork != 0 {
                self.forked(&lf.this, x.dst, caller);
            } else {
                *caller = x.dst;
            }
            if md.is_ctor {
                self.ctor_tokens(&lf.this, caller);
            }
            r?;
            let lf = frames.pop().expect("frame");
            if let Some(caller) = frames.last_mut() {
                for (to, from) in &fr.yields {
                    if let (Some(v), Some(slot)) =
                        (lf.store.get(*from as usize), caller.store.get_mut(*to as usize))
                    {
                        *slot = v.clone();
                    }
                }
            }
            if let Some(t) = &fr.ret_target {
                let v = if md.is_ctor { lf.this } else { lf.result };
                self.store_target(w, l, t, v, fr.span)?;
            }
        }
        w.mask = m;
        Ok(())
    }

    /// Exhale the postcondition of `md` from the frame `fr` as the call returns.
    pub(super) fn method_post(
        &mut self,
        md: &CMethod,
        fr: &mut LaneFrame,
        x: &mut Xfer,
        site: Span,
        who: Who,
    ) -> Result<bool, Stop> {
        let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, fr.old.as_deref());
        let what = format!("postcondition of `{}`", md.name);
        let rep =
            Report { code_pure: "R-POST", code_perm: "R-PERM-TRANSFER", what: &what, site, who };
        self.clauses(&md.post, &mut env, x, &rep)
    }
}
