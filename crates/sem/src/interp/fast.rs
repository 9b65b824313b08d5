//! Shortcuts of the warp machine, all behind [`Config::shortcuts`]: column-wise evaluation
//! (through [`vector`]) of quantifier bodies, of the reads of assignments and of contract
//! clauses; permission moves of whole ranges; and the permission leaves of `par` contracts
//! computed for all threads at once. Each gives exactly the general path's result (state,
//! diagnostics and their order) or declines with nothing changed; they are apart so that the
//! general semantics reads without them. Bulk launches are in `bulk`. (The index helpers at
//! the end also serve `assertion`'s instance loop for `\forall*` permission chains.)

use super::*;

impl Interp {
    /// A one-binder `\forall` or `\exists` over `vals`, its body evaluated for up to
    /// [`vector::MAX_LANES`] values at a time (see [`vector::eval_reads`]). `Ok` with the
    /// result, the binder's slot left as the value-by-value loop leaves it; `Err(k)` when the
    /// instances from `vals[k]` on need that loop (all before `k` held, and evaluating them had
    /// no effect). Bodies in code with race recording, or under `\old`, always take the loop.
    pub(super) fn quant_vector(
        &self,
        kind: QuantKind,
        slot: u32,
        vals: &[i64],
        body: &CE,
        env: &mut Env,
        pv: PV,
    ) -> Result<bool, usize> {
        let exists = kind == QuantKind::Exists;
        if !self.cfg.shortcuts || vals.len() < 8 || env.race.is_some() || env.in_old {
            return Err(0);
        }
        let perms = self.cfg.checks.perms;
        let check = |_: usize, loc: Loc| !perms || pv.can_read(loc);
        let run = |mask: u64, obj: u32, base: i64| {
            let n = mask.count_ones() as i64;
            !perms
                || (u32::try_from(base).is_ok()
                    && u32::try_from(base + n)
                        .is_ok_and(|hi| pv.can_read_range(obj, base as u32, hi)))
        };
        let mut reads = vector::Reads { check: &check, run: Some(&run), log: None, runs: None };
        let mut col = vector::col();
        for (k, chunk) in vals.chunks(vector::MAX_LANES).enumerate() {
            let start = k * vector::MAX_LANES;
            let mask = full_mask(chunk.len());

            let locals = vector::Locals::Binder { store: env.store, slot, vals: chunk };
            if vector::eval_reads(&self.heap, locals, &mut reads, mask, body, &mut col).is_none()
                || col.kind != Kind::Bool
            {
                return Err(start);
            }
            // The first instance that decides the quantifier, as the loop would stop there.
            let hits = if exists { col.true_mask(mask) } else { mask & !col.true_mask(mask) };
            if hits != 0 {
                let l = hits.trailing_zeros() as usize;
                env.store[slot as usize] = Value::Int(chunk[l]);
                return Ok(exists);
            }
        }
        if let Some(&last) = vals.last() {
            env.store[slot as usize] = Value::Int(last);
        }
        Ok(!exists)
    }

    /// [`Self::perm_chain_instances`] as whole ranges, when each leaf's index is the binder
    /// plus a literal, the binder's values are consecutive, every instance is in bounds, and the
    /// source holds all of it (an exhale, unscaled): then the moves are one range per leaf,
    /// with the same end state as the instance-by-instance bulk move. Without permission
    /// tracking, true as soon as every instance is known to be in bounds. False (nothing
    /// moved) otherwise.
    pub(super) fn chain_ranges(
        &self,
        chain: &[PermLeaf],
        binder: u32,
        tuples: &[i64],
        env: &Env,
        x: &mut Xfer,
    ) -> bool {
        let (Some(&first), Some(&last)) = (tuples.first(), tuples.last()) else {
            return false;
        };
        let perms = self.cfg.checks.perms;
        if !self.cfg.shortcuts
            || perms && (x.mode != Mode::Exhale || x.scale.is_some())
            || tuples.windows(2).any(|w| w[1] != w[0] + 1)
        {
            return false;
        }
        let mut ranges = Vec::with_capacity(chain.len());
        for c in chain {
            let Some(k) = binder_offset(&c.index, binder) else {
                return false;
            };
            let Some(Value::Ref(id)) = env.store.get(c.array as usize) else {
                return false;
            };
            let Some(HObj::Array { data, .. }) = self.heap.objs.get(*id as usize) else {
                return false;
            };
            let (Some(lo), Some(hi)) = (first.checked_add(k), last.checked_add(k)) else {
                return false;
            };
            if lo < 0 || hi >= data.len() as i64 {
                return false;
            }
            ranges.push((*id, lo as u32, hi as u32 + 1, &c.amt));
        }
        if !perms {
            return true;
        }
        for (n, (id, lo, hi, amt)) in ranges.iter().enumerate() {
            if !x.src.take_range(*id, *lo, *hi, amt) {
                for (id, lo, hi, amt) in ranges[..n].iter().rev() {
                    x.src.add_range(*id, *lo, *hi, amt);
                }
                return false;
            }
        }
        for (id, lo, hi, amt) in &ranges {
            x.dst.add_range(*id, *lo, *hi, amt);
            if let Some(t) = &mut x.taken {
                t.add_range(*id, *lo, *hi, amt);
            }
        }
        true
    }

    /// Which simple clauses of `cl` hold in every lane of `mask` (bit `i` for clause `i`),
    /// evaluated for the whole warp at once.
    pub(super) fn warp_true(&self, w: &Warp, mask: u64, cl: &[CClause]) -> u64 {
        let mut skip = 0;
        if !self.cfg.shortcuts || !self.cfg.checks.contracts || mask == 0 {
            return skip;
        }
        for (i, c) in cl.iter().enumerate().take(64) {
            if c.simple {
                if let Some(col) = vector::eval(&self.heap, &w.lanes, mask, &c.e) {
                    if col.kind == Kind::Bool && col.true_mask(mask) == mask {
                        skip |= 1 << i;
                    }
                }
            }
        }
        skip
    }

    /// Evaluate `exprs` in order for the lanes of `mask`, column by column, with array reads
    /// checked against each lane's holder: `None` when any of them needs the lane-by-lane
    /// evaluator (see [`vector::eval_reads`]). Otherwise the reads made, for
    /// [`Self::replay_reads`].
    pub(super) fn vector_reads(
        &self,
        w: &Warp,
        mask: u64,
        exprs: &[&CE],
        out: &mut [vector::Col],
    ) -> Option<Vec<(usize, Loc, Span)>> {
        if !self.code_fast() || mask == 0 || w.lanes.len() > vector::MAX_LANES {
            return None;
        }
        let perms = self.cfg.checks.perms;
        let check = |l: usize, loc: Loc| {
            !perms || w.lanes[l].holders.last().is_some_and(|h| h.can_read(loc))
        };
        let mut reads =
            vector::Reads { check: &check, run: None, log: Some(Vec::new()), runs: None };
        for (e, col) in exprs.iter().zip(out.iter_mut()) {
            vector::eval_reads(
                &self.heap,
                vector::Locals::Lanes(&w.lanes),
                &mut reads,
                mask,
                e,
                col,
            )?;
        }
        reads.log
    }

    /// Record the reads of a column-wise evaluation for the race detector, in the order the
    /// lane-by-lane evaluation would have made them: lane by lane, each lane's in evaluation
    /// order (a stable sort by lane).
    pub(super) fn replay_reads(&mut self, w: &Warp, mut log: Vec<(usize, Loc, Span)>, ghost: bool) {
        if ghost || !self.cfg.checks.races {
            return;
        }
        log.sort_by_key(|r| r.0);
        for (l, loc, span) in log {
            if let Some(p) = w.lanes[l].path {
                if let Some(r) = self.race.access(loc, false, span, p, w.epoch, w.atomic) {
                    self.race_diag(r);
                }
            }
        }
    }

    /// The entry transfers of all `count` threads of arm `a` at once, when every clause of the
    /// thread precondition is a [`PermLeaf`], known to hold (`pre_skip`) or simple, and every
    /// `context_everywhere` clause is known to hold or simple: the leaves' locations are computed
    /// for all threads first, then taken from the parent in thread and clause order. Nothing
    /// else depends on the parent's holder (simple clauses read no heap location), so the result
    /// is the one the thread-by-thread transfers give. When a location cannot be computed or
    /// the parent lacks a permission, everything taken is given back and `None` returned: the
    /// thread-by-thread path then reports the error where it occurs, for the thread it concerns.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bulk_entry(
        &mut self,
        a: &ArmC,
        ranges: &[(i64, i64)],
        count: usize,
        pre_skip: u64,
        everywhere: &[CClause],
        ev_skip: u64,
        parent_store: &[Value],
        parent_this: &Value,
        parent_h: &mut Holder,
    ) -> Option<Bulk> {
        if !self.cfg.shortcuts {
            return None;
        }
        let mask = leaf_plan(&a.pre, pre_skip, false)?;
        leaf_plan(everywhere, ev_skip, false).filter(|m| *m == 0)?;
        let mut store = parent_store.to_vec();
        let mut vals = vec![0i64; ranges.len()];
        let mut moves = Vec::with_capacity(count * mask.count_ones() as usize);
        for t in 0..count {
            thread_vals(ranges, t, &mut vals);
            for (k, (slot, _, _, _)) in a.iters.iter().enumerate() {
                store[*slot as usize] = Value::Int(vals[k]);
            }
            if !self.leaf_moves(&a.pre, mask, &mut store, parent_this, &mut moves) {
                return None;
            }
        }
        if self.cfg.checks.perms && !take_all(parent_h, &moves) {
            return None;
        }
        Some(Bulk { mask, moves })
    }

    /// Append the location and amount of each leaf of `cl` in `mask`, in clause order, as the
    /// store gives them; false when an index cannot be evaluated or is out of bounds.
    pub(super) fn leaf_moves(
        &mut self,
        cl: &[CClause],
        mask: u64,
        store: &mut Vec<Value>,
        this: &Value,
        out: &mut Vec<(Loc, Amt)>,
    ) -> bool {
        for c in lanes_of(mask).map(|i| &cl[i]) {
            let Some(leaf) = &c.leaf else { return false };
            // The common shapes `a[i]` (a local index) and `a[i + k]` without the evaluator.
            if let (Some(Value::Ref(id)), Some(idx)) =
                (store.get(leaf.array as usize), local_plus_literal(&leaf.index, store))
            {
                let len = self.heap.len_of(*id);
                if idx < 0 || idx as usize >= len {
                    return false;
                }
                out.push((Loc::new(*id, idx as u32), leaf.amt.clone()));
                continue;
            }
            let null = Value::Null;
            let mut env = Env::contract(store, this, &null, None);
            let av = env.store[leaf.array as usize].clone();
            let loc = self
                .ev(&leaf.index, &mut env, PV::Unchecked)
                .and_then(|iv| self.as_int(iv, leaf.index_span))
                .and_then(|i| self.index_loc(av, i, leaf.index_span));
            match loc {
                Ok(l) => out.push((l, leaf.amt.clone())),
                Err(_) => return false,
            }
        }
        true
    }

    /// For each of the finished threads `lanes`, the pure clauses of `post` (outside
    /// `post_skip`) and of `everywhere` (outside `ev_skip`) that hold in it, as bit masks,
    /// evaluated column-wise for up to [`vector::MAX_LANES`] threads at a time against each
    /// thread's holder (see [`vector::eval_reads`]). A clause that cannot be evaluated that way,
    /// or does not hold, has its bit clear: the thread-by-thread exit then evaluates it and
    /// reports. Evaluating contract clauses has no effect, so a clause whose bit is set can be
    /// left out of the exit without changing what it does. Empty when contracts are not checked.
    pub(super) fn threads_true(
        &self,
        lanes: &[Lane],
        post: &[CClause],
        post_skip: u64,
        everywhere: &[CClause],
        ev_skip: u64,
    ) -> Vec<(u64, u64)> {
        let candidates = |cl: &[CClause], skip: u64| -> Vec<usize> {
            (0..cl.len().min(64))
                .filter(|&i| skip >> i & 1 == 0 && cl[i].pure && !ce_uses_old(&cl[i].e))
                .collect()
        };
        let (cp, ce) = (candidates(post, post_skip), candidates(everywhere, ev_skip));
        // Only threads back to their one frame and one holder, as every thread is at exit
        // unless it ended inside a loop.
        if !self.cfg.shortcuts
            || !self.cfg.checks.contracts
            || cp.is_empty() && ce.is_empty()
            || lanes.iter().any(|l| l.frames.len() != 1 || l.holders.len() != 1)
        {
            return Vec::new();
        }
        let perms = self.cfg.checks.perms;
        let mut known = vec![(0u64, 0u64); lanes.len()];
        let mut col = vector::col();
        for (k, chunk) in lanes.chunks(vector::MAX_LANES).enumerate() {
            let base = k * vector::MAX_LANES;
            let mask = full_mask(chunk.len());
            let check = |l: usize, loc: Loc| !perms || chunk[l].holders[0].can_read(loc);
            let mut reads = vector::Reads { check: &check, run: None, log: None, runs: None };
            for (which, cl, idx) in [(0, post, &cp), (1, everywhere, &ce)] {
                for &i in idx {
                    let locals = vector::Locals::Lanes(chunk);
                    let ok = vector::eval_reads(
                        &self.heap, locals, &mut reads, mask, &cl[i].e, &mut col,
                    );
                    if ok.is_none() || col.kind != Kind::Bool {
                        continue;
                    }
                    for l in lanes_of(col.true_mask(mask)) {
                        let e = &mut known[base + l];
                        if which == 0 {
                            e.0 |= 1 << i;
                        } else {
                            e.1 |= 1 << i;
                        }
                    }
                }
            }
        }
        known
    }

    /// A thread's exit when its postcondition is leaves (`moves`, computed) and pure clauses:
    /// the pure clauses outside `skip` / `ev_skip` are evaluated first, against the thread's
    /// whole holder (the view they have on the clause-by-clause path, where they see what is
    /// left plus what was taken), and only when all of them hold, without any diagnostic, and
    /// the thread has every leaf, do the leaves move to `parent`. Then nothing was reported on
    /// either path and the holders end the same. False, with nothing changed, otherwise: the
    /// clause-by-clause path then runs and reports.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exit_checked_first(
        &mut self,
        post: &[CClause],
        skip: u64,
        everywhere: &[CClause],
        ev_skip: u64,
        fr: &mut LaneFrame,
        old: Option<&Heap>,
        th: &mut Holder,
        moves: &[(Loc, Amt)],
        parent: &mut Holder,
    ) -> bool {
        if !self.cfg.shortcuts {
            return false;
        }
        let marks = (self.errors.len(), self.suppressed);
        if self.cfg.checks.contracts {
            let pv = if self.cfg.checks.perms { PV::One(th) } else { PV::Unchecked };
            let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, old);
            let rest =
                post.iter().enumerate().filter(|(i, _)| *i >= 64 || skip >> i & 1 == 0).chain(
                    everywhere
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i >= 64 || ev_skip >> i & 1 == 0),
                );
            for (_, c) in rest {
                let holds = c.pure && matches!(self.ev(&c.e, &mut env, pv), Ok(Value::Bool(true)));
                if !holds || (self.errors.len(), self.suppressed) != marks {
                    self.errors.truncate(marks.0);
                    self.suppressed = marks.1;
                    return false;
                }
            }
        }
        if self.cfg.checks.perms {
            if !take_all(th, moves) {
                return false;
            }
            for (loc, amt) in moves {
                parent.add(*loc, amt);
            }
        }
        true
    }
}

/// Permission moves computed for all threads of an arm (see [`Interp::bulk_entry`]).
pub(super) struct Bulk {
    /// The clauses that are leaves.
    pub(super) mask: u64,
    /// `mask.count_ones()` moves per thread, threads in order.
    pub(super) moves: Vec<(Loc, Amt)>,
}

/// The clauses of `cl` that are [`PermLeaf`]s, as a bit mask, when every other clause is in
/// `skip` (known to hold) or pure, and reads no heap location unless `heap_reads` allows it.
/// `None` when some clause is neither (or there are more than 64).
pub(super) fn leaf_plan(cl: &[CClause], skip: u64, heap_reads: bool) -> Option<u64> {
    if cl.len() > 64 {
        return None;
    }
    let mut mask = 0;
    for (i, c) in cl.iter().enumerate() {
        if c.leaf.is_some() {
            mask |= 1 << i;
        } else if skip >> i & 1 == 0 && !(c.simple || heap_reads && c.pure) {
            return None;
        }
    }
    Some(mask)
}

/// `(s, k)` when `e` is `s`, `s + k`, `k + s` or `s - k` for a local slot `s` and a literal `k`
/// (`k` negated for `-`): the index shapes the shortcuts handle without the evaluator.
pub(super) fn local_offset(e: &CE) -> Option<(u32, i64)> {
    match e {
        CE::Local(s) => Some((*s, 0)),
        CE::Bin(BinOp::Add, l, r, _) => match (&**l, &**r) {
            (CE::Local(s), CE::Int(k)) | (CE::Int(k), CE::Local(s)) => Some((*s, *k)),
            _ => None,
        },
        CE::Bin(BinOp::Sub, l, r, _) => match (&**l, &**r) {
            (CE::Local(s), CE::Int(k)) => Some((*s, k.checked_neg()?)),
            _ => None,
        },
        _ => None,
    }
}

/// The value in `store` of an index [`local_offset`] recognizes, its local an int; `None`
/// otherwise or on overflow (the evaluator then reports).
pub(super) fn local_plus_literal(e: &CE, store: &[Value]) -> Option<i64> {
    let (s, k) = local_offset(e)?;
    match store.get(s as usize) {
        Some(Value::Int(v)) => v.checked_add(k),
        _ => None,
    }
}

/// `k` when `e` is the binder slot `b` plus the literal `k` (see [`local_offset`]).
fn binder_offset(e: &CE, b: u32) -> Option<i64> {
    local_offset(e).filter(|(s, _)| *s == b).map(|(_, k)| k)
}

/// Are all of `n` clauses in the mask `skip`?
pub(super) fn all_in(n: usize, skip: u64) -> bool {
    match n {
        0 => true,
        1..=63 => {
            let m = (1u64 << n) - 1;
            skip & m == m
        }
        64 => skip == u64::MAX,
        _ => false,
    }
}

/// Are the clauses of `cl` outside `skip` all pure?
pub(super) fn only_pure(cl: &[CClause], skip: u64) -> bool {
    cl.iter().enumerate().all(|(i, c)| c.pure || i < 64 && skip >> i & 1 == 1)
}

/// Take each amount from `h` in order; if one is not there, give back what was taken (amounts
/// are exact, so `h` holds what it held before) and return false.
pub(super) fn take_all(h: &mut Holder, moves: &[(Loc, Amt)]) -> bool {
    for (k, (loc, amt)) in moves.iter().enumerate() {
        if !h.take(*loc, amt) {
            for (l, a) in moves[..k].iter().rev() {
                h.add(*l, a);
            }
            return false;
        }
    }
    true
}
