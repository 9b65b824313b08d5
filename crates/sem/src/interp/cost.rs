//! Counting the cost model's metrics while a program runs (semantics.md §9), when
//! [`Config::cost`] asks for it. Charges are per warp instruction: the warp machine brackets
//! each instruction that costs something with [`Interp::cost_begin`] / [`Interp::cost_end`];
//! in between, the evaluator notes every heap access of kernel code ([`Interp::cost_note`]),
//! and the end of the instruction turns the lanes' addresses into sectors (global), conflict
//! degrees (shared) or one step (local). Steps of operators, literals and variable reads are
//! counted from the expression's shape: lock-step lanes evaluate both sides of `&&` and `?:`
//! predicated, so the static count is what a warp issues.
//!
//! Counting turns off the shortcut that evaluates heap reads of code for many lanes at once
//! (`vector_reads`: it reads the heap without the evaluator); simple expressions read no heap
//! location, contracts cost nothing, and bulk launches count for themselves.

use super::*;
use crate::cost::{AccessCost, CostConfig, CostReport, Counts, SiteCost, Space};
use std::collections::BTreeMap;

/// One heap access of the current warp instruction: where, in which space, and the unit it
/// touches (a sector for global memory, a word for shared memory; `(object, unit)`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Touch {
    site: (u32, u32, bool),
    space: Space,
    obj: u32,
    unit: u64,
}

/// A read of a bulk launch: (lane, location, span of the access); see `vector::Reads::log`.
type ReadLog = (usize, Loc, Span);
/// Reads of consecutive elements: (array, first element, lanes, span); see `vector::Reads::runs`.
type ReadRun = (u32, usize, usize, Span);

/// A launch in progress: its warps' costs as its groups complete.
#[derive(Default)]
struct LaunchAcc {
    site: (u32, u32),
    label: String,
    warps: u64,
    counts: Counts,
    warp_max: Counts,
    work: u64,
    span: u64,
}

#[derive(Default)]
pub struct CostState {
    pub cfg: CostConfig,
    /// Accesses are being noted (inside a costed warp instruction).
    rec: bool,
    pending: Vec<Touch>,
    /// Spaces fixed by `--space` or by the first access of a nested group (semantics.md §3.2).
    fixed: FxMap<u32, Space>,
    /// Arrays allocated by a kernel thread, by that thread's path.
    alloc_by: FxMap<u32, PathId>,
    stack: Vec<LaunchAcc>,
    /// The largest span among the launches of the current `par` instruction's lanes.
    child_span: u64,
    sites: BTreeMap<(u32, u32), SiteCost>,
    access: BTreeMap<(u32, u32, bool), AccessCost>,
    /// S of the whole run: the host's launches one after another.
    run_span: u64,
}

impl CostState {
    pub fn new(cfg: CostConfig) -> CostState {
        CostState { cfg, ..CostState::default() }
    }

    #[inline]
    fn space(&mut self, obj: u32, by: PathId) -> Space {
        // Most programs fix no space and allocate nothing in kernels: no lookup at all.
        if self.fixed.is_empty() && self.alloc_by.is_empty() {
            return Space::Global;
        }
        if let Some(s) = self.fixed.get(&obj) {
            return *s;
        }
        match self.alloc_by.get(&obj) {
            None => Space::Global,
            // The allocating thread itself: private until a nested thread touches it.
            Some(a) if *a == by => Space::Local,
            Some(_) => {
                self.fixed.insert(obj, Space::Shared);
                Space::Shared
            }
        }
    }

    fn note(&mut self, heap: &Heap, span: Span, l: Loc, by: PathId, write: bool) {
        let obj = l.obj();
        if obj as usize >= heap.objs.len() {
            return;
        }
        let space = self.space(obj, by);
        // Element sizes (semantics.md §3.2); an object field is a 4-byte scalar at the
        // object's base address (§9.2).
        let byte = match &heap.objs[obj as usize] {
            HObj::Array { elem, .. } => l.idx() as u64 * elem_size(elem),
            HObj::Object { .. } => 0,
        };
        let p = &self.cfg.profile;
        let unit = match space {
            Space::Global => byte / p.sector_bytes,
            Space::Shared => byte / p.bank_width,
            Space::Local => 0,
        };
        self.pending.push(Touch { site: (span.lo, span.hi, write), space, obj, unit });
    }

    /// Reads of the consecutive elements `first..=last` of `obj` by a bulk launch's warp (in
    /// lane order): a global array touches every sector in between when an element is no
    /// larger than a sector, so those are noted, not each element.
    fn note_range(&mut self, heap: &Heap, span: Span, obj: u32, (first, last): (u32, u32)) {
        let size = match heap.objs.get(obj as usize) {
            Some(HObj::Array { elem, .. }) => elem_size(elem),
            _ => return,
        };
        let space = self.space(obj, PathId::MAX);
        let s = self.cfg.profile.sector_bytes;
        if space == Space::Global && size <= s {
            let site = (span.lo, span.hi, false);
            for unit in first as u64 * size / s..=last as u64 * size / s {
                self.pending.push(Touch { site, space, obj, unit });
            }
        } else {
            for i in first..=last {
                self.note(heap, span, Loc::new(obj, i), PathId::MAX, false);
            }
        }
    }

    /// The charges of the accesses noted since the instruction began, into `c`, and into the
    /// per-access table.
    fn settle(&mut self, c: &mut Counts, src: &str) {
        if self.pending.is_empty() {
            return;
        }
        // A bulk launch notes its accesses site by site in ascending addresses: already sorted.
        if !self.pending.is_sorted() {
            self.pending.sort_unstable();
        }
        self.pending.dedup();
        let banks = self.cfg.profile.banks.max(1);
        let mut i = 0;
        while i < self.pending.len() {
            let site = self.pending[i].site;
            let space = self.pending[i].space;
            let mut j = i;
            while j < self.pending.len() && self.pending[j].site == site {
                j += 1;
            }
            let run = &self.pending[i..j];
            // Distinct units per access (dedup above made them distinct).
            let (sectors, conflicts, steps, worst) = match space {
                Space::Global => {
                    let n = run.len() as u64;
                    (n, 0, n, n)
                }
                Space::Shared => {
                    let mut per_bank: FxMap<u64, u64> = FxMap::default();
                    for t in run {
                        *per_bank.entry(t.unit % banks).or_default() += 1;
                    }
                    let d = per_bank.values().copied().max().unwrap_or(1);
                    (0, d - 1, d, d)
                }
                Space::Local => (0, 0, 1, 1),
            };
            c.sectors += sectors;
            c.conflicts += conflicts;
            c.steps += steps;
            let a = self.access.entry(site).or_insert_with(|| {
                let sp = Span { lo: site.0, hi: site.1 };
                AccessCost {
                    span: sp,
                    line: crate::cost::line_of(src, sp),
                    text: access_text(src, sp, site.2),
                    write: site.2,
                    space: Some(space),
                    ..AccessCost::default()
                }
            });
            a.execs += 1;
            a.sectors += sectors;
            a.conflicts += conflicts;
            a.worst = a.worst.max(worst);
            i = j;
        }
        self.pending.clear();
    }

    /// The report of the run so far.
    pub fn report(&self) -> CostReport {
        let mut total = Counts::default();
        let mut work = 0;
        let sites: Vec<SiteCost> = self.sites.values().cloned().collect();
        for s in &sites {
            total.add(&s.counts);
            work += s.work;
        }
        let p = self.cfg.profile.issue_width.max(1);
        CostReport {
            profile: self.cfg.profile.name.clone(),
            sites,
            total,
            work,
            span: self.run_span,
            time: work as f64 / p as f64 + self.run_span as f64,
            accesses: self.access.values().cloned().collect(),
        }
    }
}

fn elem_size(t: &Ty) -> u64 {
    match t {
        Ty::Bool => 1,
        Ty::Array(_) => 8,
        _ => 4,
    }
}

/// The source text of an access (one line, shortened); for a write, the assignment's target.
fn access_text(src: &str, sp: Span, write: bool) -> String {
    let mut t = src.get(sp.range()).unwrap_or("?");
    if write {
        t = assigned(t);
    }
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 40 {
        format!("{}…", t.chars().take(39).collect::<String>())
    } else {
        t
    }
}

/// The target of an assignment statement's text (`a[i] = e;` gives `a[i]`; `a[i] += e;` too).
fn assigned(stmt: &str) -> &str {
    let b = stmt.as_bytes();
    for i in 0..b.len() {
        let next_eq = b.get(i + 1) == Some(&b'=');
        let prev_op = i > 0 && b"<>!=".contains(&b[i - 1]);
        if b[i] == b'=' && !next_eq && !prev_op {
            let lhs = stmt[..i].trim_end();
            // A compound assignment's operator belongs to neither side.
            return lhs.trim_end_matches(['+', '-', '*', '/', '%']).trim_end();
        }
    }
    stmt
}

/// Steps of an expression evaluated by a warp (semantics.md §9.4): one per literal, variable
/// read, operator and call; heap accesses are charged from the addresses instead. The array
/// or object an access goes through is an address, not a read, when it is a name.
pub(super) fn steps_of(e: &CE) -> u64 {
    match e {
        CE::Int(_) | CE::Bool(_) | CE::Null | CE::Const(_) | CE::Local(_) | CE::This => 1,
        CE::Result => 1,
        CE::Field(o, _, _) => base_steps(o),
        CE::Index(a, i, _) => base_steps(a) + steps_of(i),
        CE::Length(x, _) => base_steps(x) + 1,
        CE::Not(x) | CE::Neg(x, _) | CE::Head(x, _) | CE::Tail(x, _) => 1 + steps_of(x),
        CE::Bin(_, l, r, _) => 1 + steps_of(l) + steps_of(r),
        CE::Cond(c, a, b) => 1 + steps_of(c) + steps_of(a) + steps_of(b),
        CE::CallPure { recv, args, .. } => {
            1 + recv.as_deref().map_or(0, base_steps) + args.iter().map(steps_of).sum::<u64>()
        }
        CE::Old(x) => steps_of(x),
        CE::Let(_, v, b) => 1 + steps_of(v) + steps_of(b),
        CE::SeqLit(v) | CE::Ghost(_, v, _) => 1 + v.iter().map(steps_of).sum::<u64>(),
        CE::SeqRange(a, b) => 1 + steps_of(a) + steps_of(b),
        CE::SeqUpdate(a, b, c, _) => 1 + steps_of(a) + steps_of(b) + steps_of(c),
        CE::Slice(a, b, c, _) => {
            1 + steps_of(a) + b.as_deref().map_or(0, steps_of) + c.as_deref().map_or(0, steps_of)
        }
        // Specification-only forms cost nothing (ghost code, §9.4).
        _ => 0,
    }
}

fn base_steps(e: &CE) -> u64 {
    match e {
        CE::Local(_) | CE::This | CE::Field(..) => 0,
        _ => steps_of(e),
    }
}

/// Steps of an assignment, apart from its heap accesses.
pub(super) fn assign_steps(target: &Target, value: &CE) -> u64 {
    steps_of(value)
        + match target {
            // M^vwrite.
            Target::Local(_) => 1,
            // An array write charges no separate M^vwrite (RaCUDA's rules).
            Target::Index(a, i) => base_steps(a) + steps_of(i),
            Target::Field(o, _) => base_steps(o),
        }
}

/// Steps of a call's arguments: each is evaluated and bound (semantics.md §9.4).
pub(super) fn call_steps(args: &[CE]) -> u64 {
    args.iter().map(|a| steps_of(a) + 1).sum()
}

impl Interp {
    /// Counting is on and `w` is a kernel warp with active lanes: note the instruction's
    /// accesses from now on.
    #[inline(always)]
    pub(super) fn cost_begin(&mut self, w: &Warp) -> bool {
        if self.cost.is_none() {
            return false;
        }
        self.cost_begin_slow(w)
    }

    /// [`Self::cost_begin`] with counting on: out of line, so that the warp machine's loop
    /// stays as small as it is without counting.
    #[inline(never)]
    fn cost_begin_slow(&mut self, w: &Warp) -> bool {
        match self.cost.as_deref_mut() {
            Some(cs) if w.kernel && w.mask != 0 => {
                cs.rec = true;
                cs.pending.clear();
                true
            }
            _ => false,
        }
    }

    /// End of a costed instruction: `steps` from its shape, one divergence if `div`, and the
    /// accesses noted since [`Self::cost_begin`].
    #[inline(never)]
    pub(super) fn cost_end(&mut self, w: &mut Warp, steps: u64, div: bool) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        cs.rec = false;
        let mut c = Counts { steps, ..Counts::default() };
        if div {
            c.steps += 1;
            c.divwarps += 1;
        }
        cs.settle(&mut c, &self.src);
        w.cost.add(&c);
        w.sigma += c.steps;
    }

    /// A heap access by kernel code (`by` is the thread), while an instruction is costed.
    #[inline(never)]
    pub(super) fn cost_note(&mut self, span: Span, l: Loc, by: Option<PathId>, write: bool) {
        if let Some(cs) = self.cost.as_deref_mut() {
            if let (true, Some(p)) = (cs.rec, by) {
                cs.note(&self.heap, span, l, p, write);
            }
        }
    }

    /// Arrays `from..` of the heap were just allocated by a lane (`by`: its thread path, if a
    /// kernel thread) at the statement `span`: remember who, and apply `--space NAME=…` for
    /// the local the statement assigns.
    pub(super) fn cost_alloc(&mut self, from: usize, by: Option<PathId>, span: Span) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        let to = self.heap.objs.len();
        let text = self.src.get(span.range()).unwrap_or("");
        let name = text.split('=').next().and_then(|l| l.split_whitespace().last()).unwrap_or("");
        let forced = cs.cfg.spaces.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
        for id in from..to {
            if let Some(p) = by {
                cs.alloc_by.insert(id as u32, p);
            }
            if let Some(s) = forced {
                cs.fixed.insert(id as u32, s);
            }
        }
    }

    /// `--space NAME=…` for an input: the array `v` (and its rows) bound to `name`.
    pub fn cost_input_space(&mut self, name: &str, v: &Value) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        let Some(s) = cs.cfg.spaces.iter().find(|(n, _)| n == name).map(|(_, s)| *s) else {
            return;
        };
        let mut todo = vec![v.clone()];
        while let Some(Value::Ref(id)) = todo.pop() {
            if cs.fixed.insert(id, s).is_some() {
                continue;
            }
            if let Some(HObj::Array { data, .. }) = self.heap.objs.get(id as usize) {
                todo.extend(data.iter().filter(|x| matches!(x, Value::Ref(_))).cloned());
            }
        }
    }

    /// A launch of `p` begins running its groups.
    pub(super) fn cost_launch_begin(&mut self, p: &ParC) {
        if let Some(cs) = self.cost.as_deref_mut() {
            let label =
                p.arms.first().and_then(|a| a.label.clone()).unwrap_or_else(|| "par".into());
            cs.stack.push(LaunchAcc {
                site: (p.span.lo, p.span.hi),
                label,
                ..LaunchAcc::default()
            });
        }
    }

    /// A launch has run all its groups: its costs go to its site; its span to the launching
    /// lane's `par` instruction (see [`Self::cost_par_begin`]).
    pub(super) fn cost_launch_end(&mut self) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        let Some(acc) = cs.stack.pop() else { return };
        let src = &self.src;
        let site = cs.sites.entry(acc.site).or_insert_with(|| {
            let sp = Span { lo: acc.site.0, hi: acc.site.1 };
            SiteCost {
                label: acc.label.clone(),
                span: sp,
                line: crate::cost::line_of(src, sp),
                ..SiteCost::default()
            }
        });
        site.launches += 1;
        site.warps += acc.warps;
        site.counts.add(&acc.counts);
        site.warp_max.max_with(&acc.warp_max);
        site.work += acc.work;
        site.span_steps += acc.span;
        cs.child_span = cs.child_span.max(acc.span);
    }

    /// A group has finished: its warps' counts go to the launch (semantics.md §9.6).
    pub(super) fn cost_group_done(&mut self, warps: &[Warp]) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        let Some(acc) = cs.stack.last_mut() else { return };
        let mut s = 0;
        for w in warps {
            acc.warps += 1;
            acc.counts.add(&w.cost);
            acc.warp_max.max_with(&w.cost);
            acc.work += w.cost.steps;
            s = s.max(w.sigma);
        }
        // Groups run in parallel: the launch's span is its longest group's.
        acc.span = acc.span.max(s);
    }

    /// At a barrier resolution, the warps have waited for the slowest.
    pub(super) fn cost_barrier(&mut self, warps: &mut [Warp]) {
        if self.cost.is_none() {
            return;
        }
        let m = warps.iter().map(|w| w.sigma).max().unwrap_or(0);
        for w in warps {
            w.sigma = m;
        }
    }

    /// Before the lanes of a warp launch a `par`: returns the enclosing instruction's value
    /// for [`Self::cost_par_end`].
    pub(super) fn cost_par_begin(&mut self) -> u64 {
        self.cost.as_deref_mut().map_or(0, |cs| std::mem::take(&mut cs.child_span))
    }

    /// After the lanes of `w` launched a `par`: the launches ran side by side (a kernel
    /// thread's nested blocks) or, from the host, one after the other.
    pub(super) fn cost_par_end(&mut self, w: &mut Warp, saved: u64) {
        let Some(cs) = self.cost.as_deref_mut() else { return };
        let s = std::mem::replace(&mut cs.child_span, saved);
        if w.kernel {
            w.sigma += s;
        } else {
            cs.run_span += s;
        }
    }

    /// Before a bulk launch: the per-access table, to restore if it gives up.
    pub(super) fn cost_bulk_save(&self) -> Option<BTreeMap<(u32, u32, bool), AccessCost>> {
        self.cost.as_ref().map(|c| c.access.clone())
    }

    pub(super) fn cost_bulk_restore(
        &mut self,
        saved: Option<BTreeMap<(u32, u32, bool), AccessCost>>,
    ) {
        if let (Some(cs), Some(a)) = (self.cost.as_deref_mut(), saved) {
            cs.access = a;
        }
    }

    /// One assignment of a bulk launch for the threads `t0 .. t0 + n` (whole warps): the
    /// reads `log` (lane, location, span) and, for an array write, the written cells (array
    /// and index columns, and the statement's span), charged warp by warp into `per_warp`, as
    /// the warp machine charges one instruction per warp.
    pub(super) fn cost_bulk_chunk(
        &mut self,
        t0: usize,
        n: usize,
        (log, runs): (&[ReadLog], &[ReadRun]),
        writes: Option<(&vector::Col, &vector::Col, Span)>,
        per_warp: &mut [Counts],
    ) {
        let ws = self.cfg.warp_size.clamp(1, 64);
        let Some(cs) = self.cost.as_deref_mut() else { return };
        for lo in (0..n).step_by(ws) {
            let hi = (lo + ws).min(n);
            cs.pending.clear();
            // Bulk launches start from the host: no thread allocated these arrays. The write
            // first: its site (the statement) starts before the reads' (see `settle`).
            if let Some((arr, idx, sp)) = writes {
                for l in lo..hi {
                    if let (Ok(id), Ok(i)) = (u32::try_from(arr.v[l]), u32::try_from(idx.v[l])) {
                        cs.note(&self.heap, sp, Loc::new(id, i), PathId::MAX, true);
                    }
                }
            }
            for &(_, loc, sp) in log.iter().filter(|x| (lo..hi).contains(&x.0)) {
                cs.note(&self.heap, sp, loc, PathId::MAX, false);
            }
            // Runs: lane `l` read element `start + l`.
            for &(obj, start, len, sp) in runs.iter().filter(|r| r.2 > lo) {
                let (a, b) = (start + lo, start + hi.min(len) - 1);
                cs.note_range(&self.heap, sp, obj, (a as u32, b as u32));
            }
            if let Some(c) = per_warp.get_mut((t0 + lo) / ws) {
                cs.settle(c, &self.src);
            }
        }
    }

    /// A launch of `p` run in bulk (a straight-line body, no barrier, launched from the host)
    /// has finished: its warps' counts (see [`Self::cost_bulk_chunk`]) go to its site.
    pub(super) fn cost_bulk(&mut self, p: &ParC, per_warp: &[Counts]) {
        self.cost_launch_begin(p);
        if let Some(acc) = self.cost.as_deref_mut().and_then(|cs| cs.stack.last_mut()) {
            for c in per_warp {
                acc.warps += 1;
                acc.counts.add(c);
                acc.warp_max.max_with(c);
                acc.work += c.steps;
                // No barrier: the span is the longest warp.
                acc.span = acc.span.max(c.steps);
            }
        }
        self.cost_launch_end();
    }

    /// The column shortcuts of the warp machine read the heap without the evaluator, so
    /// counting turns them off (bulk launches count for themselves, see [`Self::cost_bulk`]).
    #[inline]
    pub(super) fn code_fast(&self) -> bool {
        self.cfg.shortcuts && self.cost.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_steps_follow_the_charging_table() {
        // `g[tid * 4] = 0`: tid, 4, *, 0 (the write is charged from its addresses).
        let idx = CE::Bin(BinOp::Mul, Box::new(CE::Local(0)), Box::new(CE::Int(4)), Span::DUMMY);
        let t = Target::Index(CE::Local(1), idx);
        assert_eq!(assign_steps(&t, &CE::Int(0)), 4);
        // `i = i + 1`: i, 1, +, vwrite.
        let v = CE::Bin(BinOp::Add, Box::new(CE::Local(0)), Box::new(CE::Int(1)), Span::DUMMY);
        assert_eq!(assign_steps(&Target::Local(0), &v), 4);
    }
}
