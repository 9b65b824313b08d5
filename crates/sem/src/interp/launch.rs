//! `par` launches (semantics.md §4.4, §5.5): the threads of each arm are built and their
//! preconditions exhaled from the parent lane, their groups run (`sched`), and their
//! postconditions given back. The shortcuts a launch tries first are in `fast` (contract
//! leaves moved for all threads at once) and `bulk` (the whole launch column by column).

use super::*;

impl Interp {
    pub(super) fn launch(
        &mut self,
        w: &mut Warp,
        pl: usize,
        p: &Rc<ParC>,
        method: u32,
    ) -> Result<(), Stop> {
        let (epoch, atomic) = (w.epoch, w.atomic);
        // Iterator ranges, evaluated by the parent lane.
        let mut ranges: Vec<Vec<(i64, i64)>> = Vec::new();
        {
            let (mut env, holders) = Self::new_lane_env(&mut w.lanes[pl], epoch, atomic, false);
            let pv = self.code_view(holders);
            for a in &p.arms {
                let mut r = Vec::new();
                for (_, _, lo, hi) in &a.iters {
                    let lo = self.ev(lo, &mut env, pv)?;
                    let hi = self.ev(hi, &mut env, pv)?;
                    r.push((self.as_int(lo, a.span)?, self.as_int(hi, a.span)?));
                }
                ranges.push(r);
            }
        }
        if self.cfg.checks.contracts && !p.region_pre.is_empty() {
            self.check_lane(
                w,
                pl,
                &p.region_pre,
                0,
                "R-PAR-PRE",
                "par region precondition",
                p.span,
            )?;
        }
        if self.launch_bulk(w, pl, p, method, &ranges) {
            return self.region_post(w, pl, p);
        }
        let launch = self.launches;
        self.launches += 1;
        self.race.launch_started(launch);
        let parent = &w.lanes[pl];
        let parent_store = parent.frames.last().expect("frame").store.clone();
        let parent_this = parent.frames.last().expect("frame").this.clone();
        let parent_old = parent.frames.last().expect("frame").old.clone();
        let parent_path = parent.path;
        let top_level = parent_path.is_none();
        let any_old = p.arms.iter().any(|a| uses_old(&a.post));
        let snapshot = if any_old { Some(Rc::new(self.heap.clone())) } else { parent_old };
        // Build the threads of every arm and exhale their preconditions.
        let mut arm_lanes: Vec<Vec<Lane>> = Vec::new();
        let mut parent_h = std::mem::take(w.lanes[pl].holders.last_mut().expect("holder"));
        let res: Result<(), Stop> = (|| {
            for (ai, a) in p.arms.iter().enumerate() {
                let r = &ranges[ai];
                let count: i64 = r.iter().map(|(lo, hi)| (hi - lo).max(0)).product();
                if count > 1 << 22 {
                    return Err(unsupported("too many threads", a.span));
                }
                let count = count.max(0) as usize;
                let names = Rc::new(ThreadNames {
                    label: a.label.clone().unwrap_or_else(|| "par".into()),
                    iters: a.iters.iter().map(|it| it.1.clone()).collect(),
                    ranges: r.clone(),
                });
                // The levels above this launch's threads, shared by all of them.
                let prefix: Rc<[PathElem]> = match parent_path {
                    Some(pp) => self.race.path(pp).with_epoch(epoch),
                    None => Rc::new([]),
                };
                let (side, pre_skip, ev_skip) =
                    self.arm_contract_facts(p, a, count, true, &parent_store, &parent_this);
                let bs = self.cfg.block_size.unwrap_or(count.max(1)).max(1);
                let mut lanes = Vec::with_capacity(count);
                let bulk = if count > 0 {
                    self.bulk_entry(
                        a,
                        r,
                        count,
                        pre_skip,
                        &p.everywhere,
                        ev_skip,
                        &parent_store,
                        &parent_this,
                        &mut parent_h,
                    )
                } else {
                    None
                };
                let nleaves = bulk.as_ref().map_or(0, |b| b.mask.count_ones() as usize);
                // With neither contracts nor permissions checked, what is left of the entry
                // contract once the leaves' locations are known to be in bounds (the bulk plan
                // computed them all) is pure clauses, which are not evaluated: no thread needs
                // the contract walk.
                let quiet = !self.cfg.checks.contracts
                    && !self.cfg.checks.perms
                    && bulk.as_ref().is_some_and(|b| {
                        only_pure(&a.pre, b.mask | pre_skip) && only_pure(&p.everywhere, ev_skip)
                    });
                // Every clause moved in bulk or known to hold: the contract walk would do
                // nothing either.
                let covered = bulk.as_ref().is_some_and(|b| {
                    all_in(a.pre.len(), b.mask | pre_skip) && all_in(p.everywhere.len(), ev_skip)
                });
                let mut vals = vec![0i64; r.len()];
                for t in 0..count {
                    let mut store = parent_store.clone();
                    thread_vals(r, t, &mut vals);
                    for (k, (slot, _, _, _)) in a.iters.iter().enumerate() {
                        store[*slot as usize] = Value::Int(vals[k]);
                    }
                    let group = self.groups + (t / bs) as u32;
                    let leaf = PathElem { launch, group, tid: t as u32, epoch: 0 };
                    let mut lane = Lane {
                        frames: vec![LaneFrame {
                            store,
                            this: parent_this.clone(),
                            result: Value::Null,
                            old: snapshot.clone(),
                            holder_base: 0,
                        }],
                        holders: vec![Holder::default()],
                        path: Some(self.race.add_path(Path {
                            prefix: prefix.clone(),
                            leaf,
                            names: names.clone(),
                        })),
                    };
                    if quiet {
                        lanes.push(lane);
                        continue;
                    }
                    if covered {
                        // Nothing but the leaves, which have moved: they go to the thread.
                        if let Some(b) = bulk.as_ref().filter(|_| self.cfg.checks.perms) {
                            let h = &mut lane.holders[0];
                            for (loc, amt) in &b.moves[t * nleaves..(t + 1) * nleaves] {
                                h.add(*loc, amt);
                            }
                        }
                        lanes.push(lane);
                        continue;
                    }
                    // Entry transfer: PRE_L(t) from the parent's holder.
                    let who = lane.who();
                    let Lane { frames, holders, .. } = &mut lane;
                    let fr = frames.last_mut().expect("frame");
                    let mut x =
                        Xfer::new(Mode::Exhale, std::mem::take(&mut parent_h), Holder::default());
                    let mut skip = pre_skip;
                    if let Some(b) = &bulk {
                        // The leaves have moved already (if permissions are tracked); they go
                        // to the thread in clause order.
                        skip |= b.mask;
                        if self.cfg.checks.perms {
                            for (loc, amt) in &b.moves[t * nleaves..(t + 1) * nleaves] {
                                x.dst.add(*loc, amt);
                            }
                        }
                    }
                    let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, None);
                    let r2 = self.thread_contract(&side, skip, ev_skip, &mut env, &mut x, who);
                    parent_h = std::mem::take(&mut x.src);
                    holders[0] = x.dst;
                    r2?;
                    lanes.push(lane);
                }
                self.groups += count.div_ceil(bs).max(1) as u32;
                arm_lanes.push(lanes);
            }
            Ok(())
        })();
        if let Err(e) = res {
            *w.lanes[pl].holders.last_mut().expect("holder") = parent_h;
            return Err(e);
        }
        // Run the groups: arms one after another, blocks within an arm one after another.
        self.cost_launch_begin(p);
        let mut done: Vec<Vec<Lane>> = Vec::new();
        for (ai, lanes) in arm_lanes.into_iter().enumerate() {
            let a = &p.arms[ai];
            let bs = self.cfg.block_size.unwrap_or(lanes.len().max(1)).max(1);
            let mut all = Vec::with_capacity(lanes.len());
            let mut it = lanes.into_iter().peekable();
            while it.peek().is_some() {
                let block: Vec<Lane> = it.by_ref().take(bs).collect();
                let out = self.run_group(block, method, a.body_pc);
                match out {
                    Ok(l) => all.extend(l),
                    Err(e) => {
                        *w.lanes[pl].holders.last_mut().expect("holder") = parent_h;
                        return Err(e);
                    }
                }
            }
            done.push(all);
        }
        self.cost_launch_end();
        // Exit transfer: POST_L(t) back to the parent.
        let res: Result<(), Stop> = (|| {
            for (ai, lanes) in done.iter_mut().enumerate() {
                let a = &p.arms[ai];
                let count = lanes.len();
                let (side, post_skip, ev_skip) =
                    self.arm_contract_facts(p, a, count, false, &parent_store, &parent_this);
                // Leaves of the thread postcondition move without the general assertion walk
                // when the other clauses are pure and `context_everywhere` is known to hold.
                let leaves = leaf_plan(&a.post, post_skip, true).filter(|_| {
                    self.cfg.shortcuts && leaf_plan(&p.everywhere, ev_skip, true) == Some(0)
                });
                // As at entry: with neither contracts nor permissions checked, a thread whose
                // leaves are in bounds has nothing else to do at exit.
                let quiet = self.cfg.shortcuts
                    && !self.cfg.checks.contracts
                    && !self.cfg.checks.perms
                    && leaves.is_some_and(|m| {
                        only_pure(&a.post, m | post_skip) && only_pure(&p.everywhere, ev_skip)
                    });
                // The pure clauses that hold, per thread, evaluated for many threads at once.
                let known = if quiet {
                    Vec::new()
                } else {
                    self.threads_true(lanes, &a.post, post_skip, &p.everywhere, ev_skip)
                };
                let mut moves = Vec::new();
                for (t, lane) in lanes.iter_mut().enumerate() {
                    let who = lane.who();
                    let Lane { frames, holders, .. } = lane;
                    collapse_holders(holders, 1);
                    let fr = frames.first_mut().expect("frame");
                    let mut th = std::mem::take(&mut holders[0]);
                    let (kp, ke) = known.get(t).copied().unwrap_or((0, 0));
                    let (post_skip, ev_skip) = (post_skip | kp, ev_skip | ke);
                    let mut skip = post_skip;
                    let mut taken = None;
                    if let Some(mask) = leaves {
                        moves.clear();
                        let found =
                            self.leaf_moves(&a.post, mask, &mut fr.store, &fr.this, &mut moves);
                        if found && quiet {
                            continue;
                        }
                        if found
                            && self.exit_checked_first(
                                &a.post,
                                mask | post_skip,
                                &p.everywhere,
                                ev_skip,
                                fr,
                                snapshot.as_deref(),
                                &mut th,
                                &moves,
                                &mut parent_h,
                            )
                        {
                            continue;
                        }
                        if found && (!self.cfg.checks.perms || take_all(&mut th, &moves)) {
                            // The pure clauses still run below, against what is left plus
                            // what was taken: the view they have on the thread-by-thread path.
                            let mut tk = self.fresh_holder();
                            if self.cfg.checks.perms {
                                for (loc, amt) in &moves {
                                    parent_h.add(*loc, amt);
                                    tk.add(*loc, amt);
                                }
                            }
                            skip |= mask;
                            taken = Some(tk);
                        }
                    }
                    let mut x = Xfer::new(Mode::Exhale, th, std::mem::take(&mut parent_h));
                    if taken.is_some() {
                        x.taken = taken;
                    }
                    let mut env =
                        Env::contract(&mut fr.store, &fr.this, &fr.result, snapshot.as_deref());
                    let r2 = self.thread_contract(&side, skip, ev_skip, &mut env, &mut x, who);
                    parent_h = x.dst;
                    if let Some(tk) = x.taken.take() {
                        self.recycle(tk);
                    }
                    r2?;
                }
            }
            Ok(())
        })();
        *w.lanes[pl].holders.last_mut().expect("holder") = parent_h;
        res?;
        self.race.launch_completed(launch, top_level);
        self.region_post(w, pl, p)
    }

    /// After a launch: the `par` region's postcondition, checked by the parent lane `pl`.
    fn region_post(&mut self, w: &mut Warp, pl: usize, p: &ParC) -> Result<(), Stop> {
        if self.cfg.checks.contracts && !p.region_post.is_empty() {
            self.check_lane(
                w,
                pl,
                &p.region_post,
                0,
                "R-PAR-POST",
                "par region postcondition",
                p.span,
            )?;
        }
        Ok(())
    }

    /// A `par` thread's contract at one `side` of the launch: its own clauses (less those in
    /// `skip`), then the method's `context_everywhere` (less those in `ev_skip`) with
    /// permissions scaled by the side's scale (semantics.md §5.5).
    fn thread_contract(
        &mut self,
        side: &ArmSide,
        skip: u64,
        ev_skip: u64,
        env: &mut Env,
        x: &mut Xfer,
        who: Who,
    ) -> Result<bool, Stop> {
        let ArmSide { p, a, entry, scale } = side;
        let cl = if *entry { &a.pre } else { &a.post };
        let (code_pure, what, what_ev) = if *entry {
            ("R-PAR-PRE", "par precondition", "context_everywhere in par")
        } else {
            ("R-PAR-POST", "par postcondition", "context_everywhere after par")
        };
        let rep = Report { code_pure, code_perm: "R-PERM-TRANSFER", what, site: a.span, who };
        let own = self.clauses_skip(cl, skip, env, x, &rep);
        x.scale = scale.clone();
        let ev = own.and_then(|_| {
            self.clauses_skip(&p.everywhere, ev_skip, env, x, &Report { what: what_ev, ..rep })
        })?;
        Ok(ev)
    }

    /// Which of the `uniform` clauses of `cl` hold in `store`: clauses that read only locals
    /// every thread shares with `store`, so that they hold in every thread. Evaluation errors
    /// count as "not known to hold"; the per-thread check then reports them.
    pub(super) fn uniform_true(
        &mut self,
        cl: &[CClause],
        uniform: &[bool],
        store: &mut Vec<Value>,
        this: &Value,
    ) -> u64 {
        let mut skip = 0;
        if !self.cfg.checks.contracts {
            return skip;
        }
        let null = Value::Null;
        for (i, c) in cl.iter().enumerate().take(64) {
            if uniform.get(i).copied().unwrap_or(false) {
                let mut env = Env::contract(store, this, &null, None);
                if let Ok(Value::Bool(true)) = self.ev(&c.e, &mut env, PV::Unchecked) {
                    skip |= 1 << i;
                }
            }
        }
        skip
    }

    /// For an arm of `count` threads, at entry (`entry`) or exit: its [`ArmSide`], whose scale is
    /// the share of the parent's permissions each thread's contract moves (`1/(count·arms)`),
    /// and which clauses of its precondition or postcondition, and of the launch's
    /// `context_everywhere`, hold in every thread alike ([`Self::uniform_true`] in the
    /// parent's `store`). No scale and nothing known for an empty arm.
    fn arm_contract_facts<'c>(
        &mut self,
        p: &'c ParC,
        a: &'c ArmC,
        count: usize,
        entry: bool,
        store: &[Value],
        this: &Value,
    ) -> (ArmSide<'c>, u64, u64) {
        if count == 0 {
            return (ArmSide { p, a, entry, scale: None }, 0, 0);
        }
        let scale = Q::frac(1, (count * p.arms.len().max(1)) as i64);
        let (cl, uniform, ev_uniform) = if entry {
            (&a.pre, &a.pre_uniform, &a.ev_uniform_pre)
        } else {
            (&a.post, &a.post_uniform, &a.ev_uniform_post)
        };
        let mut st = store.to_vec();
        let skip = self.uniform_true(cl, uniform, &mut st, this);
        let ev_skip = self.uniform_true(&p.everywhere, ev_uniform, &mut st, this);
        (ArmSide { p, a, entry, scale: Some(scale) }, skip, ev_skip)
    }
}

/// One side of a `par` arm's contract, alike for all its threads: the precondition at entry
/// (`entry`) or the postcondition at exit, with the launch's `context_everywhere`, whose
/// permissions move scaled by `scale`.
struct ArmSide<'c> {
    p: &'c ParC,
    a: &'c ArmC,
    entry: bool,
    scale: Option<Q>,
}
