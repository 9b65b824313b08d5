//! The warp machine (semantics.md §4.5): the lanes of a warp run one instruction at a time in
//! lock-step under an active mask, with a reconvergence stack for branches and loops, loop
//! invariants, barrier arrival, atomics, folds and the other annotation statements. What a
//! statement does to each lane's state is in `exec`; launches are in `launch`, barrier
//! resolution in `sched`.

use super::*;

pub struct LaneFrame {
    pub store: Vec<Value>,
    pub this: Value,
    pub result: Value,
    pub old: Option<Rc<Heap>>,
    pub holder_base: usize,
}

pub struct Lane {
    pub frames: Vec<LaneFrame>,
    pub holders: Vec<Holder>,
    pub path: Option<PathId>,
}

impl Lane {
    pub(super) fn who(&self) -> Who<'static> {
        match self.path {
            Some(p) => Who::Thread(p),
            None => Who::Text("host"),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) enum Ctl {
    Join { saved: u64 },
    Else { mask: u64, pc: usize },
    Loop { saved: u64, counter: u32 },
}

pub(super) struct WFrame {
    pub(super) method: u32,
    pub(super) pc: usize,
    pub(super) returned: u64,
    pub(super) call_mask: u64,
    pub(super) ret_target: Option<Target>,
    /// `yields` bindings of the call (see `Instr::Call`).
    pub(super) yields: Vec<(u32, u32)>,
    pub(super) ctl_base: usize,
    pub(super) span: Span,
    /// The number of the `fork` that runs this frame as a thread's `run` (0: a call).
    pub(super) fork: u32,
}

pub struct Warp {
    pub lanes: Vec<Lane>,
    pub(super) frames: Vec<WFrame>,
    pub(super) ctl: Vec<Ctl>,
    pub(super) mask: u64,
    pub(super) finished: u64,
    pub(super) epoch: u32,
    pub(super) atomic: Option<u32>,
    pub(super) kernel: bool,
    pub(super) pool: Holder,
    /// The cost model's counts of this warp, and its running span σ (semantics.md §9.6).
    pub(super) cost: crate::cost::Counts,
    pub(super) sigma: u64,
    /// A forked thread's own warp (see `threads`): its `run` frame is its bottom frame, and a
    /// `wait` suspends it.
    pub(super) thread: bool,
    /// A thread's open lock regions, innermost last: the frame depth and `LockEnd` pc of each,
    /// the object, and the atomic section it replaced.
    pub(super) regions: Vec<(usize, usize, u32, Option<u32>)>,
}

pub(super) enum WarpStop {
    Finished,
    Barrier(Rc<BarrierC>, Vec<u32>),
    AtomicDone,
    /// A forked thread waits on the lock of this object (its lock given back).
    Wait(u32),
}

fn lane_list(mask: u64) -> String {
    let v: Vec<String> = lanes_of(mask).map(|l| l.to_string()).collect();
    v.join(", ")
}

impl Interp {
    pub(super) fn new_lane_env<'s>(
        lane: &'s mut Lane,
        epoch: u32,
        atomic: Option<u32>,
        ghost: bool,
    ) -> (Env<'s>, &'s mut Vec<Holder>) {
        let Lane { frames, holders, path } = lane;
        let fr = frames.last_mut().expect("lane has a frame");
        let LaneFrame { store, this, result, old, .. } = fr;
        (
            Env {
                store,
                this,
                result,
                old: old.as_deref(),
                race: if ghost { None } else { *path },
                epoch,
                atomic,
                in_old: false,
            },
            holders,
        )
    }

    /// Run the clauses against one lane's top holder in check mode.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_lane(
        &mut self,
        w: &mut Warp,
        l: usize,
        cl: &[CClause],
        skip: u64,
        code: &str,
        what: &str,
        site: Span,
    ) -> Result<bool, Stop> {
        let rep = Report { code_pure: code, code_perm: code, what, site, who: Who::Text("") };
        let (r, _) = self.lane_clauses(w, l, cl, skip, Mode::Check, Holder::default(), rep);
        r
    }

    /// Exhale clauses from a lane's top holder into a new holder (returned). Clauses with their
    /// bit set in `skip` are known to hold (see [`Self::warp_true`]).
    #[allow(clippy::too_many_arguments)]
    fn exhale_lane(
        &mut self,
        w: &mut Warp,
        l: usize,
        cl: &[CClause],
        skip: u64,
        code_pure: &str,
        code_perm: &str,
        what: &str,
        site: Span,
    ) -> Result<Holder, Stop> {
        if !self.cfg.checks.perms && !self.cfg.checks.contracts {
            return Ok(Holder::default());
        }
        let rep = Report { code_pure, code_perm, what, site, who: Who::Text("") };
        let dst = self.fresh_holder();
        let (r, dst) = self.lane_clauses(w, l, cl, skip, Mode::Exhale, dst, rep);
        r?;
        Ok(dst)
    }

    /// [`Self::clauses_skip`] for lane `l` of `w` (reported as that thread), from its top
    /// holder into `dst` (returned with what it received).
    #[allow(clippy::too_many_arguments)]
    fn lane_clauses(
        &mut self,
        w: &mut Warp,
        l: usize,
        cl: &[CClause],
        skip: u64,
        mode: Mode,
        dst: Holder,
        rep: Report,
    ) -> (Result<bool, Stop>, Holder) {
        let who = w.lanes[l].who();
        let (epoch, atomic) = (w.epoch, w.atomic);
        let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, true);
        let top = holders.last_mut().expect("holder");
        let mut x = Xfer::new(mode, std::mem::take(top), dst);
        let r = self.clauses_skip(cl, skip, &mut env, &mut x, &Report { who, ..rep });
        *top = x.src;
        (r, x.dst)
    }

    pub(super) fn run_warp(
        &mut self,
        w: &mut Warp,
        stop_at: Option<(usize, usize)>,
    ) -> Result<WarpStop, Stop> {
        let prog = self.prog.clone();
        loop {
            let depth = w.frames.len();
            let fr = w.frames.last().expect("warp frame");
            let pc = fr.pc;
            if let Some((d, p)) = stop_at {
                if d == depth && p == pc {
                    return Ok(WarpStop::AtomicDone);
                }
            }
            let Body::Code(code) = &prog.methods[fr.method as usize].body else {
                return Err(unsupported("method without a body", fr.span));
            };
            let instr = &code[pc];
            let mut next = pc + 1;
            match instr {
                Instr::Assign { simple, target, value, span, ghost } => {
                    let c = !*ghost && self.cost_begin(w);
                    self.exec_assign(w, target, value, *span, *ghost, *simple)?;
                    if c {
                        self.cost_end(w, cost::assign_steps(target, value), false);
                    }
                }
                Instr::Alloc { target, elem, dims, span } => {
                    let c = self.cost_begin(w);
                    self.exec_alloc(w, target, elem, dims, *span)?;
                    if c {
                        self.cost_end(w, 1 + dims.iter().map(cost::steps_of).sum::<u64>(), false);
                    }
                }
                // Every lane has returned (the warp runs on to the method's end with none):
                // nothing to call, and entering the callee would recurse without end.
                Instr::Call { .. } | Instr::NewObj { .. } if w.mask == 0 => {}
                Instr::NewObj { target, class, ctor, args, span } => {
                    let mask = w.mask;
                    let mut objs = Vec::new();
                    for l in lanes_of(mask) {
                        let c = &prog.classes[*class as usize];
                        let fields = c.fields.iter().map(|f| default_of(&f.2)).collect::<Vec<_>>();
                        let id = self.heap.alloc_object(*class, fields);
                        if ctor.is_none() {
                            let locs: Vec<Loc> = self.heap.locations(id).collect();
                            let top = w.lanes[l].holders.last_mut().expect("holder");
                            for loc in locs {
                                top.add(loc, &Amt::write());
                            }
                        }
                        objs.push((l, id));
                    }
                    match ctor {
                        Some(k) => {
                            w.frames.last_mut().expect("frame").pc = next;
                            let c = self.cost_begin(w);
                            self.enter_call(
                                w,
                                *k,
                                None,
                                Some(&objs),
                                args,
                                Some(target.clone()),
                                *span,
                            )?;
                            if c {
                                self.cost_end(w, cost::call_steps(args), false);
                            }
                            continue;
                        }
                        None => {
                            if self.cost_begin(w) {
                                self.cost_end(w, 1, false);
                            }
                            for (l, id) in objs {
                                self.new_without_ctor(w, l, id, *span)?;
                                self.store_target(w, l, target, Value::Ref(id), *span)?;
                            }
                        }
                    }
                }
                Instr::Call { target, method, recv, args, yields, span } => {
                    w.frames.last_mut().expect("frame").pc = next;
                    let depth = w.frames.len();
                    let c = self.cost_begin(w);
                    self.enter_call(w, *method, recv.as_ref(), None, args, target.clone(), *span)?;
                    if c {
                        self.cost_end(w, cost::call_steps(args), false);
                    }
                    if w.frames.len() > depth {
                        w.frames.last_mut().expect("frame").yields = yields.clone();
                    }
                    continue;
                }
                Instr::If { simple, cond, else_pc, span } => {
                    let m = w.mask;
                    let c = self.cost_begin(w);
                    let mt = self.true_lanes(w, m, cond, *simple, *span)?;
                    let mf = m & !mt;
                    if c {
                        // M^if, and M^div when the warp splits (semantics.md §9.5).
                        self.cost_end(w, cost::steps_of(cond) + 1, mt != 0 && mf != 0);
                    }
                    w.ctl.push(Ctl::Join { saved: m });
                    if mt != 0 && mf != 0 {
                        w.ctl.push(Ctl::Else { mask: mf, pc: *else_pc });
                        w.mask = mt;
                    } else if mt != 0 {
                        w.mask = mt;
                    } else {
                        w.mask = mf;
                        next = *else_pc;
                    }
                }
                Instr::Else { end_pc } => match w.ctl.last() {
                    Some(Ctl::Else { mask, pc }) => {
                        w.mask = *mask & !self.dead(w);
                        next = *pc;
                        w.ctl.pop();
                    }
                    _ => next = *end_pc,
                },
                Instr::EndIf => {
                    if let Some(Ctl::Join { saved }) = w.ctl.pop() {
                        w.mask = saved & !self.dead(w);
                    }
                }
                Instr::LoopEnter { inv, span } => {
                    let m = w.mask;
                    w.ctl.push(Ctl::Loop { saved: m, counter: 0 });
                    let known = self.warp_true(w, m, inv);
                    for l in lanes_of(m) {
                        let h = self.exhale_lane(
                            w,
                            l,
                            inv,
                            known,
                            "R-INV-ENTRY",
                            "R-INV-ENTRY",
                            "loop invariant on entry",
                            *span,
                        )?;
                        w.lanes[l].holders.push(h);
                    }
                }
                Instr::LoopHead { simple, cond, exit_pc, span } => {
                    let m = w.mask;
                    self.spend(m.count_ones() as u64, *span)?;
                    let mut stay = m;
                    if let Some(c) = cond {
                        let costed = self.cost_begin(w);
                        let leave = m & !self.true_lanes(w, m, c, *simple, *span)?;
                        if costed {
                            let split = leave != 0 && leave != m;
                            self.cost_end(w, cost::steps_of(c) + 1, split);
                        }
                        for l in lanes_of(leave) {
                            self.leave_loop(&mut w.lanes[l]);
                        }
                        stay &= !leave;
                        self.stmts += m.count_ones() as u64;
                    }
                    if stay == 0 {
                        if let Some(Ctl::Loop { saved, .. }) = w.ctl.pop() {
                            w.mask = saved & !self.dead(w);
                        }
                        next = *exit_pc;
                    } else {
                        w.mask = stay;
                    }
                }
                Instr::LoopBack { head_pc, inv, span } => {
                    let counter = match w.ctl.last_mut() {
                        Some(Ctl::Loop { counter, .. }) => {
                            *counter += 1;
                            *counter
                        }
                        _ => 0,
                    };
                    let skip = !self.cfg.checks.perms && !self.cfg.checks.contracts;
                    if !skip && w.mask != 0 {
                        let what = format!("loop invariant after iteration {counter}");
                        let known = self.warp_true(w, w.mask, inv);
                        for l in lanes_of(w.mask) {
                            let h = self.exhale_lane(
                                w,
                                l,
                                inv,
                                known,
                                "R-INV-KEEP",
                                "R-INV-KEEP",
                                &what,
                                *span,
                            )?;
                            // The rest of the old loop holder is discarded (§5.6).
                            let old = std::mem::replace(
                                w.lanes[l].holders.last_mut().expect("holder"),
                                h,
                            );
                            self.recycle(old);
                        }
                    }
                    next = *head_pc;
                }
                Instr::Barrier(b) => {
                    // The body runs at the resolution (`barrier_body`), not in each thread.
                    next = b.body.map_or(next, |(_, end)| end);
                    // Every thread of the warp must reach the barrier: one that has returned
                    // (even from inside a loop, where no branch is left to blame) never will.
                    let live = full_mask(w.lanes.len());
                    if live & !w.finished != 0 {
                        if w.mask != live {
                            let d = Diagnostic::error(
                                "R-DIVERGENCE",
                                format!(
                                    "barrier divergence: barrier reached by lanes [{}] of a warp while lanes [{}] are inactive",
                                    lane_list(w.mask),
                                    lane_list(live & !w.mask)
                                ),
                            )
                            .with_primary(b.span, "barrier under a divergent branch or loop")
                            .with_note(format!(
                                "threads at the barrier: {}; threads not at it: {}",
                                self.lane_names(w, w.mask),
                                self.lane_names(w, live & !w.mask)
                            ));
                            return Err(Stop::Error(Box::new(d)));
                        }
                        // Arrival: each thread gives its barrier precondition to the pool.
                        let known = self.warp_true(w, w.mask, &b.pre);
                        for l in lanes_of(w.mask) {
                            let h = self.exhale_lane(
                                w,
                                l,
                                &b.pre,
                                known,
                                "R-BAR-PRE",
                                "R-PERM-TRANSFER",
                                "barrier precondition",
                                b.span,
                            )?;
                            for (loc, a) in h.entries() {
                                w.pool.add(loc, a);
                            }
                            self.recycle(h);
                        }
                        let iters: Vec<u32> = w
                            .ctl
                            .iter()
                            .filter_map(|c| match c {
                                Ctl::Loop { counter, .. } => Some(*counter),
                                _ => None,
                            })
                            .collect();
                        w.frames.last_mut().expect("frame").pc = next;
                        // M^sync.
                        if self.cost_begin(w) {
                            self.cost_end(w, 1, false);
                        }
                        return Ok(WarpStop::Barrier(b.clone(), iters));
                    }
                }
                Instr::Return { value, span } => {
                    let m = w.mask;
                    if let Some(v) = value {
                        let c = self.cost_begin(w);
                        for l in lanes_of(m) {
                            let x = self.ev_in_lane(w, l, v)?;
                            w.lanes[l].frames.last_mut().expect("frame").result = x;
                        }
                        if c {
                            self.cost_end(w, cost::steps_of(v) + 1, false);
                        }
                        self.stmts += m.count_ones() as u64;
                    }
                    let _ = span;
                    if w.kernel && w.frames.len() == 1 {
                        w.finished |= m;
                    } else {
                        w.frames.last_mut().expect("frame").returned |= m;
                    }
                    w.mask = 0;
                }
                Instr::Par(p) => {
                    let method = fr.method;
                    let saved = self.cost_par_begin();
                    for l in lanes_of(w.mask) {
                        self.launch(w, l, p, method)?;
                    }
                    self.cost_par_end(w, saved);
                    next = p.next_pc;
                }
                Instr::Assert(cl) => {
                    let known = self.warp_true(w, w.mask, cl);
                    for l in lanes_of(w.mask) {
                        self.check_lane(w, l, cl, known, "R-ASSERT", "assertion", Span::DUMMY)?;
                    }
                }
                Instr::Assume(cl) => {
                    for l in lanes_of(w.mask) {
                        let before = self.errors.len();
                        let ok =
                            self.check_lane(w, l, cl, 0, "R-ASSUME", "assumption", Span::DUMMY)?;
                        if !ok {
                            self.errors.truncate(before);
                            let sp = cl.first().map_or(Span::DUMMY, |c| c.span);
                            return Err(Stop::Infeasible(sp));
                        }
                    }
                }
                Instr::Inhale(cl) => {
                    for l in lanes_of(w.mask) {
                        let who = w.lanes[l].who();
                        let (epoch, atomic) = (w.epoch, w.atomic);
                        let (mut env, holders) =
                            Self::new_lane_env(&mut w.lanes[l], epoch, atomic, true);
                        let top = holders.last_mut().expect("holder");
                        let mut x = Xfer::new(Mode::Inhale, Holder::default(), std::mem::take(top));
                        let r = self.clauses(
                            cl,
                            &mut env,
                            &mut x,
                            &Report {
                                code_pure: "R-ASSUME",
                                code_perm: "R-PERM-OVERFLOW",
                                what: "inhale",
                                site: Span::DUMMY,
                                who,
                            },
                        );
                        *top = x.dst;
                        r?;
                    }
                }
                Instr::Exhale(cl) => {
                    for l in lanes_of(w.mask) {
                        self.exhale_lane(
                            w,
                            l,
                            cl,
                            0,
                            "R-ASSERT",
                            "R-PERM-TRANSFER",
                            "exhale",
                            Span::DUMMY,
                        )?;
                    }
                }
                Instr::Fold(p, span) => {
                    let CE::Pred { pred, .. } = p else {
                        self.fold_inline(w, p, *span, "fold")?;
                        w.frames.last_mut().expect("frame").pc = next;
                        continue;
                    };
                    let prog2 = self.prog.clone();
                    let md = &prog2.methods[*pred as usize];
                    let Body::Expr(body) = &md.body else {
                        return Err(unsupported("fold of an abstract predicate", *span));
                    };
                    for l in lanes_of(w.mask) {
                        let (loc, store, this) = self.pred_frame(w, l, p)?;
                        let h = self.exhale_body(w, l, body, store, this, *span, "fold")?;
                        self.pred_store[loc.idx() as usize] = h;
                        w.lanes[l].holders.last_mut().expect("holder").add(loc, &Amt::write());
                    }
                }
                Instr::Unfold(p, span) => {
                    if !matches!(p, CE::Pred { .. }) {
                        self.fold_inline(w, p, *span, "unfold")?;
                        w.frames.last_mut().expect("frame").pc = next;
                        continue;
                    }
                    for l in lanes_of(w.mask) {
                        let (loc, _, _) = self.pred_frame(w, l, p)?;
                        let top = w.lanes[l].holders.last_mut().expect("holder");
                        // Without permission checks, contracts move no predicate instances,
                        // so a missing one says nothing about the program.
                        if !top.take(loc, &Amt::write()) && self.cfg.checks.perms {
                            let d = Diagnostic::error(
                                "R-PERM-TRANSFER",
                                "unfold of a predicate instance that is not held",
                            )
                            .with_primary(*span, "here");
                            self.report(d);
                        }
                        let mut h = std::mem::take(&mut self.pred_store[loc.idx() as usize]);
                        h.drain_into(w.lanes[l].holders.last_mut().expect("holder"));
                    }
                }
                Instr::InvEnter { id, res, span } => {
                    for l in lanes_of(w.mask) {
                        let h = self.exhale_lane(
                            w,
                            l,
                            res,
                            0,
                            "R-INVARIANT",
                            "R-PERM-TRANSFER",
                            "invariant on entry",
                            *span,
                        )?;
                        self.invs[*id as usize] = h;
                    }
                }
                Instr::InvExit { id, span } => {
                    for l in lanes_of(w.mask) {
                        let mut h = std::mem::take(&mut self.invs[*id as usize]);
                        h.drain_into(w.lanes[l].holders.last_mut().expect("holder"));
                        let _ = span;
                    }
                }
                Instr::AtomicBegin { inv, end_pc, span } => {
                    let m = w.mask;
                    let res = inv.and_then(|i| self.find_inv_res(i));
                    for l in lanes_of(m) {
                        w.mask = 1 << l;
                        w.atomic = *inv;
                        if let (Some(i), Some(res)) = (inv, &res) {
                            // Acquire: the invariant's resources move to the lane.
                            let mut h = std::mem::take(&mut self.invs[*i as usize]);
                            h.drain_into(w.lanes[l].holders.last_mut().expect("holder"));
                            let _ = res;
                        }
                        w.frames.last_mut().expect("frame").pc = pc + 1;
                        self.run_warp(w, Some((depth, *end_pc)))?;
                        if let (Some(i), Some(res)) = (inv, &res) {
                            let h = self.exhale_lane(
                                w,
                                l,
                                res,
                                0,
                                "R-INVARIANT",
                                "R-PERM-TRANSFER",
                                "invariant at the end of atomic",
                                *span,
                            )?;
                            self.invs[*i as usize] = h;
                        }
                        w.atomic = None;
                    }
                    w.mask = m;
                    w.frames.last_mut().expect("frame").pc = end_pc + 1;
                    continue;
                }
                Instr::LockEnd { span } if w.thread => self.thread_unlock(w, depth, pc, *span)?,
                Instr::AtomicEnd | Instr::LockEnd { .. } => {}
                Instr::Sync { op, obj, span } => {
                    // A `fork` enters the thread's `run` like a call.
                    w.frames.last_mut().expect("frame").pc = next;
                    if w.mask != 0 {
                        if let Some(o) = self.exec_sync(w, *op, obj, *span)? {
                            return Ok(WarpStop::Wait(o));
                        }
                    }
                    continue;
                }
                Instr::LockBegin { obj, end_pc, span } if w.thread => {
                    self.thread_lock(w, obj, *end_pc, *span, depth)?;
                }
                Instr::LockBegin { obj, end_pc, span } => {
                    self.lock_region(w, obj, *end_pc, *span, depth, pc)?;
                    continue;
                }
                Instr::Goto { pc: to, exits, span } => {
                    if w.mask != 0 {
                        next = self.exec_goto(w, *to, exits, *span)?;
                    }
                }
                Instr::Vec(v) => {
                    let method = fr.method;
                    for l in lanes_of(w.mask) {
                        self.launch_vec(w, l, v, method)?;
                    }
                    next = v.next_pc;
                }
                Instr::EndThread => {
                    w.finished |= w.mask;
                    w.mask = 0;
                    return Ok(WarpStop::Finished);
                }
                Instr::EndMethod => {
                    if w.frames.len() == 1 {
                        // A thread's `run` ends like a call: its postcondition waits for `join`.
                        if w.thread {
                            self.leave_call(w)?;
                        }
                        return Ok(WarpStop::Finished);
                    }
                    self.leave_call(w)?;
                    continue;
                }
                Instr::Unsupported(what, span) => {
                    if w.mask != 0 {
                        return Err(unsupported(format!("unsupported in `run`: {what}"), *span));
                    }
                }
            }
            w.frames.last_mut().expect("frame").pc = next;
        }
    }

    /// `e` evaluated in lane `l` of `w`, as code (not ghost code) reads it.
    #[inline]
    pub(super) fn ev_in_lane(&mut self, w: &mut Warp, l: usize, e: &CE) -> Result<Value, Stop> {
        let (epoch, atomic) = (w.epoch, w.atomic);
        let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
        let pv = self.code_view(holders);
        self.ev(e, &mut env, pv)
    }

    /// The lanes of `m` where the branch or loop condition `cond` holds: by columns when it is
    /// `simple` and shortcuts are on (and the columns have an answer), else lane by lane.
    #[inline]
    fn true_lanes(
        &mut self,
        w: &mut Warp,
        m: u64,
        cond: &CE,
        simple: bool,
        span: Span,
    ) -> Result<u64, Stop> {
        // A simple condition reads no heap location: nothing for the cost model to see.
        if simple && self.cfg.shortcuts {
            let fast = vector::eval(&self.heap, &w.lanes, m, cond).filter(|c| c.kind == Kind::Bool);
            if let Some(c) = fast {
                return Ok(c.true_mask(m));
            }
        }
        let mut mt = 0u64;
        for l in lanes_of(m) {
            let v = self.ev_in_lane(w, l, cond)?;
            if self.as_bool(v, span)? {
                mt |= 1 << l;
            }
        }
        Ok(mt)
    }

    /// A lane leaves a loop: its loop holder goes back to the frame.
    pub(super) fn leave_loop(&mut self, lane: &mut Lane) {
        let hs = &mut lane.holders;
        if hs.len() > 1 {
            let mut top = hs.pop().expect("loop holder");
            top.drain_into(hs.last_mut().expect("holder"));
            self.recycle(top);
        }
    }

    /// An empty holder, reusing the allocation of one given back with [`Self::recycle`].
    pub(super) fn fresh_holder(&mut self) -> Holder {
        self.spare.pop().unwrap_or_default()
    }

    pub(super) fn recycle(&mut self, mut h: Holder) {
        if self.spare.len() < 256 {
            h.clear();
            self.spare.push(h);
        }
    }

    /// Run the body of barrier `b` once, in the first live thread of `w`, holding `pool` (all
    /// threads' barrier preconditions) and the resources of the invariants `b` names, as an
    /// `atomic` over them would; the invariants are given back at its end, and what the body
    /// holds then is returned as the pool the postconditions are taken from.
    pub(super) fn barrier_body(
        &mut self,
        w: &mut Warp,
        b: &BarrierC,
        pool: Holder,
    ) -> Result<Holder, Stop> {
        let Some((start, end)) = b.body else { return Ok(pool) };
        let live = full_mask(w.lanes.len()) & !w.finished;
        let Some(l) = lanes_of(live).next() else { return Ok(pool) };
        let own = std::mem::replace(w.lanes[l].holders.last_mut().expect("holder"), pool);
        for &i in &b.invariants {
            let mut h = std::mem::take(&mut self.invs[i as usize]);
            h.drain_into(w.lanes[l].holders.last_mut().expect("holder"));
        }
        let (mask, atomic) = (w.mask, w.atomic);
        w.mask = 1 << l;
        w.atomic = b.invariants.first().copied();
        let depth = w.frames.len();
        w.frames.last_mut().expect("frame").pc = start;
        let r = self.run_warp(w, Some((depth, end)));
        w.mask = mask;
        w.atomic = atomic;
        match r? {
            WarpStop::AtomicDone => {}
            _ => {
                return Err(unsupported("a barrier body that does not run to its end", b.span));
            }
        }
        for &i in b.invariants.iter().rev() {
            let Some(res) = self.find_inv_res(i) else { continue };
            let h = self.exhale_lane(
                w,
                l,
                &res,
                0,
                "R-INVARIANT",
                "R-PERM-TRANSFER",
                "invariant at the end of a barrier body",
                b.span,
            )?;
            self.invs[i as usize] = h;
        }
        Ok(std::mem::replace(w.lanes[l].holders.last_mut().expect("holder"), own))
    }

    fn find_inv_res(&self, id: u32) -> Option<Rc<Vec<CClause>>> {
        for m in &self.prog.methods {
            if let Body::Code(code) = &m.body {
                for i in code {
                    if let Instr::InvEnter { id: k, res, .. } = i {
                        if *k == id {
                            return Some(res.clone());
                        }
                    }
                }
            }
        }
        None
    }

    fn pred_frame(
        &mut self,
        w: &mut Warp,
        l: usize,
        p: &CE,
    ) -> Result<(Loc, Vec<Value>, Value), Stop> {
        let CE::Pred { pred, recv, args, span } = p else {
            return Err(unsupported("not a predicate", Span::DUMMY));
        };
        let prog = self.prog.clone();
        let md = &prog.methods[*pred as usize];
        let (epoch, atomic) = (w.epoch, w.atomic);
        let (mut env, _) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, true);
        let loc = self.pred_loc(*pred, recv.as_deref(), args, *span, &mut env, PV::Unchecked)?;
        let this = self.recv_value(recv.as_deref(), &mut env, PV::Unchecked)?;
        let store = self.arg_store(md, args, &mut env, PV::Unchecked)?;
        Ok((loc, store, this))
    }

    #[allow(clippy::too_many_arguments)]
    fn exhale_body(
        &mut self,
        w: &mut Warp,
        l: usize,
        body: &CE,
        mut store: Vec<Value>,
        this: Value,
        span: Span,
        what: &str,
    ) -> Result<Holder, Stop> {
        let null = Value::Null;
        let who = w.lanes[l].who();
        let top = w.lanes[l].holders.last_mut().expect("holder");
        let mut env = Env::contract(&mut store, &this, &null, None);
        let mut x = Xfer::new(Mode::Exhale, std::mem::take(top), Holder::default());
        let cl = [CClause { e: body.clone(), span, pure: false, simple: false, leaf: None }];
        let r = self.clauses(
            &cl,
            &mut env,
            &mut x,
            &Report { code_pure: "R-ASSERT", code_perm: "R-PERM-TRANSFER", what, site: span, who },
        );
        *top = x.src;
        r?;
        Ok(x.dst)
    }

    pub(super) fn lane_names(&self, w: &Warp, mask: u64) -> String {
        let v: Vec<String> = lanes_of(mask).take(8).map(|l| self.lane_desc(&w.lanes[l])).collect();
        let more = mask.count_ones() as usize - v.len();
        if more > 0 {
            format!("{} and {more} more", v.join(", "))
        } else {
            v.join(", ")
        }
    }

    pub(super) fn dead(&self, w: &Warp) -> u64 {
        w.finished | w.frames.last().map_or(0, |f| f.returned)
    }

    pub(super) fn code_view<'h>(&self, holders: &'h [Holder]) -> PV<'h> {
        if self.cfg.checks.perms {
            PV::One(holders.last().expect("holder"))
        } else {
            PV::Unchecked
        }
    }
}
