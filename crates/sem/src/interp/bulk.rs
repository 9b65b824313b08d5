//! A `par` launch run in bulk: all threads of a straight-line kernel, 64 at a time, column by
//! column, with no per-thread state but their locals (one column per local).
//!
//! This is a fast path only, for the shape most kernels have between barriers: one iterator,
//! a body of assignments, a contract of permission leaves (`Perm(a[e], p)`, see
//! [`PermLeaf`]) and pure clauses, launched from the host. It either finishes the launch with
//! exactly the effects the warp machine would have (heap, the parent's permissions, the
//! counters that later launches and schedules depend on) and with nothing to report, or gives
//! up with nothing changed, and the warp machine runs the launch and reports. It gives up at
//! the first thing that is not plain: a read or write out of bounds or without permission, a
//! clause that does not hold, a value the column evaluator does not handle, or two threads
//! touching one location where one writes.
//!
//! Why the result is the warp machine's: with no barrier there is one barrier interval, and
//! when no two threads access a location with one of them writing, no thread reads what
//! another wrote, so every interleaving of the threads (the warp machine's schedule, or this
//! chunk-by-chunk order) computes the same values, and the race detector has nothing to
//! report. That is checked on every access, whatever checks are on, ghost code included,
//! except where permissions make it impossible: with permissions checked, each access is one
//! the thread's permission families allow, and when the families of an array all have one
//! offset, no element belongs to two threads.
//!
//! Permissions are kept per family, not per thread: the leaf `Perm(a[tid + k], p)` gives
//! thread `t` the amount `p` of element `lo + t + k`, so the parent gives (and gets back) one
//! range per leaf, and a thread's right to an element is a comparison. The body does not
//! change what a thread holds (no calls, allocations, folds or barriers).

use super::*;

/// The straight-line body of a bulk launch: its assignments, and the local slots they assign.
struct Plan<'c> {
    assigns: Vec<(&'c Target, &'c CE, Span)>,
    slots: Vec<u32>,
}

/// The body starting at `pc`, when it is assignments to locals and array elements only, up to
/// the end of the thread.
fn plan(code: &[Instr], pc: usize) -> Option<Plan<'_>> {
    let mut p = Plan { assigns: Vec::new(), slots: Vec::new() };
    for i in code.get(pc..)? {
        match i {
            Instr::Assign { target, value, span, .. } => {
                match target {
                    Target::Local(s) if !p.slots.contains(s) => p.slots.push(*s),
                    Target::Local(_) | Target::Index(..) => {}
                    Target::Field(..) => return None,
                }
                p.assigns.push((target, value, *span));
            }
            Instr::EndThread => return Some(p),
            _ => return None,
        }
    }
    None
}

/// Who has accessed each location in the launch, to find two threads that conflict.
#[derive(Default)]
struct Owners {
    /// Per object: per element, 0 when untouched, else `(thread + 1) << 2`, bit 0 set when that
    /// thread wrote it, bit 1 set when more than one thread read it (and none wrote).
    objs: Vec<(u32, Vec<u32>)>,
}

impl Owners {
    /// Record an access by thread `t` (at most 2^22 threads); false when it conflicts with an
    /// earlier access by another thread.
    fn access(&mut self, heap: &Heap, t: usize, loc: Loc, write: bool) -> bool {
        let idx = loc.idx() as usize;
        self.of(heap, loc.obj()).get_mut(idx).is_some_and(|e| Owners::mark(e, t, write))
    }

    /// The entries of `obj`.
    fn of(&mut self, heap: &Heap, obj: u32) -> &mut Vec<u32> {
        let k = match self.objs.iter().position(|o| o.0 == obj) {
            Some(k) => k,
            None => {
                self.objs.push((obj, vec![0; heap.len_of(obj)]));
                self.objs.len() - 1
            }
        };
        &mut self.objs[k].1
    }

    /// Record an access by thread `t` in entry `e`; false when it conflicts.
    #[inline]
    fn mark(e: &mut u32, t: usize, write: bool) -> bool {
        let me = (t as u32 + 1) << 2;
        if *e == 0 {
            *e = me | write as u32;
            return true;
        }
        if *e & 2 != 0 {
            return !write;
        }
        if *e >> 2 == me >> 2 {
            *e |= write as u32;
            return true;
        }
        if *e & 1 != 0 || write {
            return false;
        }
        *e |= 2;
        true
    }

    /// Record accesses by threads `t0..t0 + n` to elements `start..start + n` of `obj`, thread
    /// `t0 + l` to element `start + l`; false at the first that conflicts.
    fn access_run(
        &mut self,
        heap: &Heap,
        t0: usize,
        obj: u32,
        start: usize,
        n: usize,
        write: bool,
    ) -> bool {
        match self.of(heap, obj).get_mut(start..start.saturating_add(n)) {
            Some(es) => es.iter_mut().enumerate().all(|(l, e)| Owners::mark(e, t0 + l, write)),
            None => false,
        }
    }
}

/// A permission family: thread `t` (counted from 0) holds `amt` of element `t + off` of
/// array `obj`. The leaf `Perm(a[i + k], p)`, with `i` the launch's iterator starting at `lo`
/// and `a` a local the body does not assign, is the family `(a, lo + k, p)`.
#[derive(Clone, Debug)]
struct Fam {
    obj: u32,
    off: i64,
    amt: Amt,
}

impl Fam {
    /// Is `loc` the element of thread `t`?
    #[inline]
    fn covers(&self, t: usize, loc: Loc) -> bool {
        self.obj == loc.obj() && t as i64 + self.off == loc.idx() as i64
    }
}

/// May thread `t`, holding `fams`, read `loc`? (Amounts are not negative: one positive is
/// enough.)
fn can_read(fams: &[Fam], t: usize, loc: Loc) -> bool {
    fams.iter().any(|f| f.covers(t, loc) && f.amt.can_read())
}

/// May each lane `l` of a run, thread `t0 + l`, read element `base + l` of `obj`? That is
/// one family of `obj` with offset `base - t0` and a positive amount.
fn run_can_read(fams: &[Fam], t0: usize, obj: u32, base: i64) -> bool {
    let off = base.checked_sub(t0 as i64);
    fams.iter().any(|f| f.obj == obj && Some(f.off) == off && f.amt.can_read())
}

/// May each lane `l` of a run, thread `t0 + l`, write element `base + l` of `obj`? That is
/// the families of `obj` with offset `base - t0` summing to a whole.
fn run_can_write(fams: &[Fam], t0: usize, obj: u32, base: i64) -> bool {
    let off = base.checked_sub(t0 as i64);
    let mut sum = Amt::NONE;
    for f in fams.iter().filter(|f| f.obj == obj && Some(f.off) == off) {
        sum.add(&f.amt);
    }
    sum.can_write()
}

/// Who writes a run, and what must allow it.
struct Writer<'a> {
    /// The families of the threads, when permissions are checked.
    fams: Option<&'a [Fam]>,
    /// The accesses so far, when conflicts between threads must be looked for.
    owners: Option<&'a mut Owners>,
    /// The thread of lane 0.
    t0: usize,
}

/// Write `val` to a run: lanes `0..n`, threads `t0..t0 + n`, writing consecutive elements of
/// one array, each lane allowed to by the families of its thread. Then one bounds check and
/// one permission check serve all lanes. `Some(Some(old values))` when written; `Some(None)`
/// (nothing written) when the write is not such a run or not allowed, and the caller writes
/// lane by lane, which reports; `None` when it conflicts with another thread's access (give
/// up: the lane-by-lane write would find the conflict too).
fn write_run(
    heap: &mut Heap,
    who: Writer,
    n: usize,
    arr: &vector::Col,
    idx: &vector::Col,
    val: &vector::Col,
) -> Option<Option<Old>> {
    let (r, base) = (arr.v[0], idx.v[0]);
    if !(0..n).all(|l| arr.v[l] == r && idx.v[l] == base.wrapping_add(l as i64)) {
        return Some(None);
    }
    let (Ok(id), Ok(start)) = (u32::try_from(r), usize::try_from(base)) else {
        return Some(None);
    };
    if who.fams.is_some_and(|fams| !run_can_write(fams, who.t0, id, base)) {
        return Some(None);
    }
    let in_bounds = match heap.objs.get(id as usize) {
        Some(HObj::Array { data, .. }) => start.checked_add(n).is_some_and(|e| e <= data.len()),
        _ => false,
    };
    if !in_bounds {
        return Some(None);
    }
    if let Some(o) = who.owners {
        if !o.access_run(heap, who.t0, id, start, n, true) {
            return None;
        }
    }
    let Some(HObj::Array { data, .. }) = heap.objs.get_mut(id as usize) else {
        return Some(None);
    };
    let slots = &mut data[start..start + n];
    let old = slots.to_vec();
    for (l, s) in slots.iter_mut().enumerate() {
        *s = val.value(l);
    }
    Some(Some(Old::Run(id, start, old)))
}

/// May thread `t`, holding `fams`, write `loc`?
fn can_write(fams: &[Fam], t: usize, loc: Loc) -> bool {
    let mut sum: Option<Amt> = None;
    for f in fams.iter().filter(|f| f.covers(t, loc)) {
        sum = Some(match sum {
            None => f.amt.clone(),
            Some(s) => s.plus(&f.amt),
        });
    }
    sum.is_some_and(|s| s.can_write())
}

/// The pure clauses a bulk launch evaluates (indices into the arm's `pre`/`post` and the
/// `par`'s `everywhere`): those not moved as leaves nor known to hold in every thread.
struct Pending {
    pre: Vec<usize>,
    ev_pre: Vec<usize>,
    post: Vec<usize>,
    ev_post: Vec<usize>,
}

/// What a bulk launch changed, to undo when it gives up.
#[derive(Default)]
struct Undo {
    /// The old values of what was written, in writing order.
    writes: Vec<Old>,
    stmts: u64,
}

/// The old value of one location, or of the elements `start..` of an array (a run).
enum Old {
    One(Loc, Value),
    Run(u32, usize, Vec<Value>),
}

impl Interp {
    /// Run launch `p` (its iterator ranges evaluated in `ranges`) in bulk, when it has the
    /// shape described in the module documentation: true when it ran, false when the warp
    /// machine must run it (nothing has changed then).
    pub(super) fn launch_bulk(
        &mut self,
        w: &mut Warp,
        pl: usize,
        p: &ParC,
        method: u32,
        ranges: &[Vec<(i64, i64)>],
    ) -> bool {
        if !self.cfg.shortcuts || p.arms.len() != 1 || w.atomic.is_some() {
            return false;
        }
        // Counting charges whole warps: each chunk of threads must be whole warps of the
        // launch's groups.
        let ws = self.cfg.warp_size.clamp(1, 64);
        if self.cost.is_some()
            && (!vector::MAX_LANES.is_multiple_of(ws)
                || self.cfg.block_size.is_some_and(|b| !b.is_multiple_of(ws)))
        {
            return false;
        }
        let a = &p.arms[0];
        if a.iters.len() != 1
            || w.lanes[pl].path.is_some()
            || uses_old(&a.post)
            || uses_old(&p.everywhere)
        {
            return false;
        }
        let prog = self.prog.clone();
        let Body::Code(code) = &prog.methods[method as usize].body else {
            return false;
        };
        let Some(plan) = plan(code, a.body_pc) else {
            return false;
        };
        let iter_slot = a.iters[0].0;
        let Some(&(lo, hi)) = ranges.first().and_then(|r| r.first()) else {
            return false;
        };
        let count = match hi.checked_sub(lo) {
            Some(c) if c > 0 && c <= 1 << 22 => c as usize,
            _ => return false,
        };
        if plan.slots.contains(&iter_slot)
            || self.fuel < (count as u64).saturating_mul(plan.assigns.len() as u64)
        {
            return false;
        }
        let Some(fr) = w.lanes[pl].frames.last() else {
            return false;
        };
        let (store, this) = (fr.store.clone(), fr.this.clone());
        // The clauses known to hold in every thread, as the warp machine computes them.
        let mut st = store.clone();
        let pre_skip = self.uniform_true(&a.pre, &a.pre_uniform, &mut st, &this);
        let ev_pre = self.uniform_true(&p.everywhere, &a.ev_uniform_pre, &mut st, &this);
        let post_skip = self.uniform_true(&a.post, &a.post_uniform, &mut st, &this);
        let ev_post = self.uniform_true(&p.everywhere, &a.ev_uniform_post, &mut st, &this);
        // Entry clauses other than leaves read no heap location; exit clauses may.
        let (Some(pre_mask), Some(0), Some(post_mask), Some(0)) = (
            leaf_plan(&a.pre, pre_skip, false),
            leaf_plan(&p.everywhere, ev_pre, false),
            leaf_plan(&a.post, post_skip, true),
            leaf_plan(&p.everywhere, ev_post, true),
        ) else {
            return false;
        };
        let fams = |cl: &[CClause], mask: u64| -> Option<Vec<Fam>> {
            lanes_of(mask)
                .map(|i| {
                    let leaf = cl[i].leaf.as_ref()?;
                    let (s, k) = local_offset(&leaf.index)?;
                    if s != iter_slot || plan.slots.contains(&leaf.array) {
                        return None;
                    }
                    let Some(Value::Ref(obj)) = store.get(leaf.array as usize) else {
                        return None;
                    };
                    let Some(HObj::Array { data, .. }) = self.heap.objs.get(*obj as usize) else {
                        return None;
                    };
                    let off = lo.checked_add(k)?;
                    let end = off.checked_add(count as i64)?;
                    (off >= 0 && end <= data.len() as i64).then(|| Fam {
                        obj: *obj,
                        off,
                        amt: leaf.amt.clone(),
                    })
                })
                .collect()
        };
        let (Some(pre_fams), Some(post_fams)) = (fams(&a.pre, pre_mask), fams(&a.post, post_mask))
        else {
            return false;
        };
        // What each thread still holds after giving back the exit leaves: they must be there.
        let mut rest = pre_fams.clone();
        for f in &post_fams {
            if f.amt.is_zero() {
                continue;
            }
            let mut have = Amt::NONE;
            for r in rest.iter().filter(|r| r.obj == f.obj && r.off == f.off) {
                have.add(&r.amt);
            }
            if have < f.amt {
                return false;
            }
            rest.retain(|r| !(r.obj == f.obj && r.off == f.off));
            have.sub(&f.amt);
            rest.push(Fam { amt: have, ..*f });
        }
        let perms = self.cfg.checks.perms;
        let span = |f: &Fam| (f.obj, f.off as u32, (f.off as usize + count) as u32);
        let Some(parent_h) = w.lanes[pl].holders.last_mut() else {
            return false;
        };
        if perms {
            // Entry: each family moves from the parent as one range.
            for (k, f) in pre_fams.iter().enumerate() {
                let (obj, from, to) = span(f);
                if !parent_h.take_range(obj, from, to, &f.amt) {
                    for g in pre_fams[..k].iter().rev() {
                        let (obj, from, to) = span(g);
                        parent_h.add_range(obj, from, to, &g.amt);
                    }
                    return false;
                }
            }
        }
        let contracts = self.cfg.checks.contracts;
        // The pure clauses still to check: those not moved as leaves nor known to hold.
        let pending = |cl: &[CClause], skip: u64| -> Vec<usize> {
            (0..cl.len())
                .filter(|&i| contracts && skip >> i & 1 == 0 && cl[i].leaf.is_none())
                .collect()
        };
        let pending = Pending {
            pre: pending(&a.pre, pre_skip),
            ev_pre: pending(&p.everywhere, ev_pre),
            post: pending(&a.post, post_skip),
            ev_post: pending(&p.everywhere, ev_post),
        };
        let mut undo = Undo::default();
        // Counting: each warp's counts, starting from the steps of every assignment; the
        // per-access table is restored if the bulk run gives up.
        let mut per_warp = self.cost.is_some().then(|| {
            let steps = plan.assigns.iter().map(|(t, v, _)| super::cost::assign_steps(t, v)).sum();
            vec![crate::cost::Counts { steps, ..Default::default() }; count.div_ceil(ws)]
        });
        let saved = self.cost_bulk_save();
        let ok = self
            .bulk_run(
                a,
                p,
                &plan,
                (lo, count),
                (&store, &this),
                &pre_fams,
                &pending,
                &mut undo,
                per_warp.as_deref_mut(),
            )
            .is_some();
        let parent_h = w.lanes[pl].holders.last_mut().expect("holder");
        if !ok {
            for old in undo.writes.into_iter().rev() {
                match old {
                    Old::One(loc, v) => self.heap.set(loc, v),
                    Old::Run(id, start, vals) => {
                        if let Some(HObj::Array { data, .. }) = self.heap.objs.get_mut(id as usize)
                        {
                            data[start..start + vals.len()].clone_from_slice(&vals);
                        }
                    }
                }
            }
            self.stmts -= undo.stmts;
            self.fuel += undo.stmts;
            self.cost_bulk_restore(saved);
            if perms {
                for f in pre_fams.iter().rev() {
                    let (obj, from, to) = span(f);
                    parent_h.add_range(obj, from, to, &f.amt);
                }
            }
            return false;
        }
        if perms {
            for f in &post_fams {
                let (obj, from, to) = span(f);
                parent_h.add_range(obj, from, to, &f.amt);
            }
        }
        let bs = self.cfg.block_size.unwrap_or(count).max(1);
        if let Some(c) = per_warp {
            self.cost_bulk(p, &c);
        }
        let launch = self.launches;
        self.launches += 1;
        self.bulk_launches += 1;
        self.race.launch_started(launch);
        self.race.launch_completed(launch, true);
        let groups = count.div_ceil(bs);
        self.groups += groups as u32;
        self.groups_run += groups as u64;
        true
    }

    /// The threads of a bulk launch, holding `fams`: the pure entry clauses, the body, then
    /// the pure exit clauses. `None` to give up.
    #[allow(clippy::too_many_arguments)]
    fn bulk_run(
        &mut self,
        a: &ArmC,
        p: &ParC,
        plan: &Plan,
        (lo, count): (i64, usize),
        (store, this): (&[Value], &Value),
        fams: &[Fam],
        pending: &Pending,
        undo: &mut Undo,
        mut per_warp: Option<&mut [crate::cost::Counts]>,
    ) -> Option<()> {
        let perms = self.cfg.checks.perms;
        let iter_slot = a.iters[0].0;
        let mut owners = Owners::default();
        // With permissions checked, every heap access below is one the accessing thread's
        // families allow. When no two families of one array have different offsets, no
        // element belongs to two threads, so no two threads can access one location: the
        // conflict check has nothing to find.
        let disjoint =
            perms && fams.iter().all(|f| fams.iter().all(|g| g.obj != f.obj || g.off == f.off));
        // Each chunk's locals, kept until the exit clauses have been evaluated: those run
        // after every thread has finished, as they do in the warp machine.
        let mut chunks: Vec<Vec<(u32, vector::Col)>> = Vec::new();
        let mut c1 = vector::col();
        let mut c2 = vector::col();
        let mut c3 = vector::col();
        for t0 in (0..count).step_by(vector::MAX_LANES) {
            let n = (count - t0).min(vector::MAX_LANES);
            let mask = full_mask(n);
            let mut tid = vector::Col::splat(Kind::Int, 0);
            for (l, v) in tid.v[..n].iter_mut().enumerate() {
                *v = lo.checked_add((t0 + l) as i64)?;
            }
            let mut cols = vec![(iter_slot, tid)];
            for &s in &plan.slots {
                let (k, x) = vector::classify(store.get(s as usize)?)?;
                cols.push((s, vector::Col::splat(k, x)));
            }
            // Entry clauses: simple (no heap reads), so only the locals matter.
            let locals = vector::Locals::Columns { store, this, cols: &cols };
            let entry = [(&a.pre, &pending.pre), (&p.everywhere, &pending.ev_pre)];
            all_hold(&self.heap, locals, (&none_read, None), mask, entry)?;
            let check = |l: usize, loc: Loc| !perms || can_read(fams, t0 + l, loc);
            let run = |_: u64, obj: u32, base: i64| !perms || run_can_read(fams, t0, obj, base);
            for &(target, value, span) in &plan.assigns {
                self.stmts += n as u64;
                self.fuel -= n as u64;
                undo.stmts += n as u64;
                // Counting needs every read with its lane (runs logged element by element).
                let counting = per_warp.is_some();
                let mut reads = vector::Reads {
                    check: &check,
                    run: Some(&run),
                    log: (!disjoint || counting).then(Vec::new),
                    runs: (!disjoint || counting).then(Vec::new),
                };
                let locals = vector::Locals::Columns { store, this, cols: &cols };
                let h = &self.heap;
                if let Target::Index(ae, ie) = target {
                    vector::eval_reads(h, locals, &mut reads, mask, ae, &mut c2)?;
                    vector::eval_reads(h, locals, &mut reads, mask, ie, &mut c3)?;
                }
                vector::eval_reads(h, locals, &mut reads, mask, value, &mut c1)?;
                for &(l, loc, _) in reads.log.iter().flatten() {
                    if !disjoint && !owners.access(h, t0 + l, loc, false) {
                        return None;
                    }
                }
                for &(obj, start, len, _) in reads.runs.iter().flatten().filter(|_| !disjoint) {
                    if !owners.access_run(h, t0, obj, start, len, false) {
                        return None;
                    }
                }
                if let Some(pw) = per_warp.as_deref_mut() {
                    let writes = matches!(target, Target::Index(..)).then_some((&c2, &c3, span));
                    let log = reads.log.as_deref().unwrap_or(&[]);
                    let runs = reads.runs.as_deref().unwrap_or(&[]);
                    self.cost_bulk_chunk(t0, n, (log, runs), writes, pw);
                }
                match target {
                    Target::Local(s) => {
                        let k = cols.iter().position(|c| c.0 == *s)?;
                        cols[k].1 = c1;
                    }
                    _ => {
                        if c2.kind != Kind::Ref || c3.kind != Kind::Int {
                            return None;
                        }
                        let who = Writer {
                            fams: perms.then_some(fams),
                            owners: (!disjoint).then_some(&mut owners),
                            t0,
                        };
                        if let Some(old) = write_run(&mut self.heap, who, n, &c2, &c3, &c1)? {
                            undo.writes.push(old);
                            continue;
                        }
                        for l in 0..n {
                            let id = u32::try_from(c2.v[l]).ok()?;
                            let idx = u32::try_from(c3.v[l]).ok()?;
                            let HObj::Array { data, .. } = self.heap.objs.get(id as usize)? else {
                                return None;
                            };
                            let old = data.get(idx as usize)?.clone();
                            let loc = Loc::new(id, idx);
                            if perms && !can_write(fams, t0 + l, loc) {
                                return None;
                            }
                            if !disjoint && !owners.access(&self.heap, t0 + l, loc, true) {
                                return None;
                            }
                            undo.writes.push(Old::One(loc, old));
                            self.heap.set(loc, c1.value(l));
                        }
                    }
                }
            }
            chunks.push(cols);
        }
        // Exit: the pure clauses, against what each thread holds.
        for (k, cols) in chunks.iter().enumerate() {
            let t0 = k * vector::MAX_LANES;
            let n = (count - t0).min(vector::MAX_LANES);
            let mask = full_mask(n);
            let locals = vector::Locals::Columns { store, this, cols };
            let check = |l: usize, loc: Loc| !perms || can_read(fams, t0 + l, loc);
            let run = |_: u64, obj: u32, base: i64| !perms || run_can_read(fams, t0, obj, base);
            let exit = [(&a.post, &pending.post), (&p.everywhere, &pending.ev_post)];
            all_hold(&self.heap, locals, (&check, Some(&run)), mask, exit)?;
        }
        Some(())
    }
}

/// Do the clauses `cl[i]`, for each `(cl, idxs)` and `i` in `idxs`, hold in every lane of
/// `mask`? `None` when one does not, or cannot be evaluated column-wise.
fn all_hold(
    heap: &Heap,
    locals: vector::Locals,
    (check, run): (vector::ElemCheck, Option<vector::RunCheck>),
    mask: u64,
    lists: [(&Vec<CClause>, &Vec<usize>); 2],
) -> Option<()> {
    let mut reads = vector::Reads { check, run, log: None, runs: None };
    let mut c = vector::col();
    for (cl, idx) in lists {
        for &i in idx {
            vector::eval_reads(heap, locals, &mut reads, mask, &cl[i].e, &mut c)?;
            if c.kind != Kind::Bool || c.true_mask(mask) != mask {
                return None;
            }
        }
    }
    Some(())
}

/// A read check that allows nothing (for expressions that read no heap location).
fn none_read(_: usize, _: Loc) -> bool {
    false
}
