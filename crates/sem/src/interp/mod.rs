//! The interpreter: heap, expression evaluation, assertion modes (check / exhale / inhale),
//! the warp machine and the barrier scheduler (semantics.md §3–§7).
//!
//! This file holds the interpreter's state ([`Interp`]) and configuration, how a run stops
//! ([`Stop`]), diagnostics, and the entry call ([`Interp::run_entry`]). The rest is one
//! `impl Interp` block per concern, each in its own file:
//!
//! * `eval`: expressions of one lane, heap reads checked for permission and races;
//! * `quant`: `\forall`, `\exists`, `\sum` and the enumeration of their binders;
//! * `assertion`: assertions checked, exhaled or inhaled as permission transfers;
//! * `warp`: the warp machine, lanes in lock-step under a mask, one instruction at a time;
//! * `exec`: what assignments, allocations and calls do for each lane;
//! * `launch`: `par` launches, the threads' contracts at entry and exit;
//! * `sched`: groups run warp by warp between barriers, barrier resolution, the schedules;
//! * `fast` and `bulk`: the shortcuts behind [`Config::shortcuts`], which give the general
//!   path's results faster or decline.

use super::compile::*;
use super::heap::{default_of, HObj, Heap};
use super::perm::Holder;
use super::race::{thread_vals, Path, PathElem, PathId, RaceDetector, ThreadNames};
use super::value::*;
use super::vector::{self, Kind};
use diag::Diagnostic;
use front::ast::{BinOp, QuantKind};
use front::Span;
use std::rc::Rc;

mod abstract_call;
mod abstract_fields;
mod assertion;
mod blocks;
mod bulk;
mod coll;
mod cost;
mod eval;
mod exec;
mod fast;
mod launch;
mod num;
mod quant;
mod sched;
mod sync;
mod threads;
mod warp;

pub use assertion::{Fail, Mode, Report, Who, Xfer};
pub use cost::CostState;
pub use eval::{Env, PV};
use fast::{all_in, leaf_plan, local_offset, local_plus_literal, only_pure, take_all};
pub use sched::Schedule;
use sync::LockState;
use warp::{Ctl, WFrame, WarpStop};
pub use warp::{Lane, LaneFrame, Warp};

/// Why a run stopped early.
#[derive(Debug)]
pub enum Stop {
    /// A semantic error (R-OOB, R-DIV0, R-DIVERGENCE, …): the run ends. Boxed so that the
    /// evaluator's `Result`s stay small on the hot path.
    Error(Box<Diagnostic>),
    /// The run says nothing (fuel, integer range, unbounded quantifier, unsupported).
    Inconclusive(Box<Diagnostic>),
    /// `assume false`.
    Infeasible(Span),
}

#[cold]
fn err(code: &str, msg: impl Into<String>, span: Span, label: &str) -> Stop {
    Stop::Error(Box::new(Diagnostic::error(code, msg).with_primary(span, label.to_string())))
}

#[cold]
fn inconclusive(code: &str, msg: impl Into<String>, span: Span) -> Stop {
    Stop::Inconclusive(Box::new(Diagnostic::error(code, msg).with_primary(span, "here")))
}

/// What `run` does not execute: the run says nothing.
#[cold]
fn unsupported(msg: impl Into<String>, span: Span) -> Stop {
    inconclusive("R-UNSUPPORTED", msg, span)
}

#[derive(Clone, Copy, Debug)]
pub struct Checks {
    pub contracts: bool,
    pub perms: bool,
    pub races: bool,
    pub divergence: bool,
}

impl Default for Checks {
    fn default() -> Self {
        Checks { contracts: true, perms: true, races: true, divergence: true }
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub checks: Checks,
    /// The `uniformity` lint (semantics.md §5.8, W-NONUNIFORM). It is kept out of [`Checks`]
    /// because it only warns: it never changes a run's status.
    pub uniformity: bool,
    /// Warp order within a barrier interval.
    pub schedule: Schedule,
    pub block_size: Option<usize>,
    pub fuel: u64,
    pub max_errors: usize,
    pub warp_size: usize,
    /// The interpreter's shortcuts: bulk and range permission moves, column-wise evaluation of
    /// reads, contracts checked for many threads at once. Each gives the result the general
    /// path gives (same state, same diagnostics in the same order); turning them off is for
    /// differential tests that check exactly that.
    pub shortcuts: bool,
    /// `--bound x=lo..hi` / `--set x=v`: ranges for generated inputs (semantics.md §10.2).
    pub bounds: Vec<crate::inputs::InputBound>,
    /// A wall-clock limit: a run still going at this instant stops as out of fuel (`validate`
    /// bounds the time spent on one method with it).
    pub deadline: Option<std::time::Instant>,
    /// Count the cost model's metrics (semantics.md §9; `run --cost`, `cost`).
    pub cost: Option<crate::cost::CostConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            checks: Checks::default(),
            uniformity: true,
            schedule: Schedule::Forward,
            block_size: None,
            fuel: 100_000_000,
            max_errors: 20,
            warp_size: 32,
            shortcuts: true,
            bounds: Vec::new(),
            deadline: None,
            cost: None,
        }
    }
}

use vector::lanes as lanes_of;

fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

pub struct Interp {
    pub prog: Rc<CProgram>,
    pub src: Rc<str>,
    pub heap: Heap,
    pub cfg: Config,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub suppressed: usize,
    pub race_found: bool,
    /// Where the entry precondition rejected the input (the first failing clause), if it did.
    pub pre_rejected: Option<front::Span>,
    /// While the entry precondition is checked: the entry's `given` parameter slots, which a
    /// conjunct `g == E` sets to `E` (see `assertion::clauses_skip`).
    pub derive_givens: Vec<u32>,
    pub fuel: u64,
    /// Lane-statements executed (the benchmark's "simple statements").
    pub stmts: u64,
    pub launches: u32,
    /// Launches run by the bulk path (see `bulk`).
    pub bulk_launches: u32,
    groups: u32,
    race: RaceDetector,
    depth: u32,
    invs: Vec<Holder>,
    preds: FxMap<(u32, u32, Vec<Value>), u32>,
    pred_store: Vec<Holder>,
    pub env_holder: Holder,
    scratch: Vec<(usize, Value, Value, Value)>,
    /// Emptied holders whose allocations are reused.
    spare: Vec<Holder>,
    /// Groups run so far (each random schedule round draws from its group's number).
    groups_run: u64,
    /// (barrier id, slot) pairs already reported as W-NONUNIFORM: a barrier in a loop would
    /// otherwise repeat the same warning at every resolution.
    nonuniform: std::collections::BTreeSet<(u32, u32)>,
    /// Scratch list of permission moves (quantified chains).
    moves: Vec<(Loc, Amt)>,
    /// The locks of the objects whose lock invariant is established (see `sync`).
    locks: FxMap<u32, LockState>,
    /// The postconditions of forked threads that have not been joined, by thread object.
    joinable: FxMap<u32, Holder>,
    /// Forked threads that wait (see `threads`), in the order they stopped.
    waiting: Vec<threads::Waiting>,
    /// `fork`s so far (each forked thread's number).
    fork_serial: u32,
    /// Work done (fuel spent, quantifier values enumerated, function calls), and the amount
    /// at which the deadline is next compared with the clock.
    work: u64,
    next_clock: u64,
    /// The cost counters, when [`Config::cost`] asks for them.
    pub cost: Option<Box<CostState>>,
}

/// How much fuel may be spent between two looks at the clock (see [`Config::deadline`]).
const CLOCK_EVERY: u64 = 1 << 16;

pub const PRED_SPACE: u32 = u32::MAX;

impl Interp {
    pub fn new(prog: Rc<CProgram>, src: Rc<str>, mut cfg: Config) -> Interp {
        let ninv = prog.ninvariants as usize;
        let cost = cfg.cost.clone().map(|c| {
            cfg.warp_size = c.profile.warp_size;
            Box::new(CostState::new(c))
        });
        Interp {
            prog,
            src,
            heap: Heap::default(),
            fuel: cfg.fuel,
            work: 0,
            next_clock: CLOCK_EVERY,
            cfg,
            errors: Vec::new(),
            warnings: Vec::new(),
            suppressed: 0,
            race_found: false,
            pre_rejected: None,
            derive_givens: Vec::new(),
            stmts: 0,
            launches: 0,
            bulk_launches: 0,
            groups: 0,
            race: RaceDetector::default(),
            depth: 0,
            invs: vec![Holder::default(); ninv],
            preds: FxMap::default(),
            pred_store: Vec::new(),
            env_holder: Holder::default(),
            scratch: Vec::new(),
            spare: Vec::new(),
            groups_run: 0,
            nonuniform: Default::default(),
            moves: Vec::new(),
            locks: FxMap::default(),
            joinable: FxMap::default(),
            waiting: Vec::new(),
            fork_serial: 0,
            cost,
        }
    }

    /// Are checker errors beyond the limit (so that a new one is only counted)?
    #[inline]
    pub(super) fn muted(&self) -> bool {
        self.errors.len() >= self.cfg.max_errors
    }

    /// The run is out of fuel, or out of time (see [`Config::deadline`]).
    #[cold]
    fn out_of_fuel(&self, span: Span) -> Stop {
        let steps = self.cfg.fuel - self.fuel;
        let why = if self.fuel > 0 { " (the time allowed for the method is spent)" } else { "" };
        inconclusive("R-FUEL", format!("out of fuel after {steps} steps{why}"), span)
    }

    /// Spend `n` units of fuel (lane-statements), looking at the clock now and then.
    #[inline]
    pub(super) fn spend(&mut self, n: u64, span: Span) -> Result<(), Stop> {
        if self.fuel < n {
            self.fuel = 0;
            return Err(self.out_of_fuel(span));
        }
        self.fuel -= n;
        self.tick(n, span)
    }

    /// Count `n` units of work (see [`Config::deadline`]): past the deadline, the run stops.
    #[inline]
    pub(super) fn tick(&mut self, n: u64, span: Span) -> Result<(), Stop> {
        self.work += n;
        if self.work >= self.next_clock {
            self.next_clock = self.work + CLOCK_EVERY;
            if self.cfg.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Err(self.out_of_fuel(span));
            }
        }
        Ok(())
    }

    /// Record a checker error; the run continues (semantics.md §4.7).
    pub fn report(&mut self, d: Diagnostic) {
        if self.errors.len() < self.cfg.max_errors {
            self.errors.push(d);
        } else {
            self.suppressed += 1;
        }
    }

    fn text(&self, s: Span) -> &str {
        self.src.get(s.range()).unwrap_or("?")
    }

    pub fn describe_loc(&self, l: Loc) -> String {
        if l.obj() == PRED_SPACE {
            return format!("predicate instance #{}", l.idx());
        }
        match self.heap.objs.get(l.obj() as usize) {
            Some(HObj::Array { .. }) => format!("element {} of array #{}", l.idx(), l.obj()),
            Some(HObj::Object { class, .. }) => {
                let c = &self.prog.classes[*class as usize];
                let f = c.fields.get(l.idx() as usize).map_or("?", |f| f.1.as_str());
                format!("field `{}` of {}#{}", f, c.name, l.obj())
            }
            None => "?".into(),
        }
    }

    fn race_diag(&mut self, r: super::race::RaceReport) {
        self.race_found = true;
        let kind = |w: bool| if w { "write" } else { "read" };
        let d = Diagnostic::error(
            "R-RACE",
            format!(
                "data race on {} ({}/{})",
                self.describe_loc(r.loc),
                kind(r.first_write),
                kind(r.second_write)
            ),
        )
        .with_primary(r.second_span, format!("{} by {}", kind(r.second_write), r.second_thread))
        .with_secondary(r.first_span, format!("{} by {}", kind(r.first_write), r.first_thread))
        .with_note(format!(
            "no barrier separates these accesses (both in barrier interval {})",
            r.epoch
        ));
        self.report(d);
    }

    fn who_text(&self, who: Who) -> String {
        match who {
            Who::Text(t) => t.to_string(),
            Who::Thread(p) => self.race.desc(p),
        }
    }

    fn lane_desc(&self, lane: &Lane) -> String {
        self.who_text(lane.who())
    }

    /// Run `method` as the entry point with the given receiver and arguments; the environment
    /// holder must already hold the input's locations. Returns `Ok(None)` when the input does
    /// not satisfy the precondition.
    pub fn run_entry(
        &mut self,
        method: u32,
        this: Value,
        args: Vec<Value>,
    ) -> Result<Option<Value>, Stop> {
        let prog = self.prog.clone();
        let md = &prog.methods[method as usize];
        let store = param_store(md, args);
        // A snapshot only for a method that can read it: it copies the whole heap.
        let old = (uses_old(&md.post) || md_uses_old(md)).then(|| Rc::new(self.heap.clone()));
        let mut lane = Lane {
            frames: vec![LaneFrame { store, this, result: Value::Null, old, holder_base: 0 }],
            holders: vec![Holder::default()],
            path: None,
        };
        self.input_tokens();
        {
            let Lane { frames, holders, .. } = &mut lane;
            let fr = frames.last_mut().expect("frame");
            let mut x =
                Xfer::new(Mode::Exhale, std::mem::take(&mut self.env_holder), Holder::default());
            x.src_is_env = true;
            let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, None);
            let before = self.errors.len();
            // A ghost input the precondition defines (`given seq<int> orig; requires orig ==
            // as_seq(list)`) is what any caller must pass: it is computed, not drawn.
            self.derive_givens = md.params[md.given_from..].iter().map(|p| p.0).collect();
            let ok = self.clauses(
                &md.pre,
                &mut env,
                &mut x,
                &Report {
                    code_pure: "R-PRE",
                    code_perm: "R-PRE",
                    what: "entry precondition",
                    site: md.span,
                    who: Who::Text("the input"),
                },
            );
            self.derive_givens.clear();
            // A precondition that cannot even be evaluated for the input (an index out of
            // bounds, null) is one the input does not meet: no caller could establish it.
            let ok = match ok {
                Err(Stop::Error(d)) => {
                    self.pre_rejected = d.primary_span();
                    self.errors.truncate(before);
                    return Ok(None);
                }
                r => r?,
            };
            self.env_holder = x.src;
            holders[0] = x.dst;
            // A constructor run as the entry starts with write permission to every field of
            // its fresh object, as at `new` (see `exec`).
            if let (true, Value::Ref(id)) = (md.is_ctor, &fr.this) {
                for loc in self.heap.locations(*id).collect::<Vec<_>>() {
                    if self.env_holder.take(loc, &Amt::write()) {
                        holders[0].add(loc, &Amt::write());
                    }
                }
            }
            if !ok {
                self.pre_rejected = self.errors[before..].iter().find_map(|d| d.primary_span());
                self.errors.truncate(before);
                return Ok(None);
            }
        }
        if !self.input_locks()? {
            return Ok(None);
        }
        let mut w = Warp {
            lanes: vec![lane],
            frames: vec![WFrame {
                method,
                pc: 0,
                returned: 0,
                call_mask: 1,
                ret_target: None,
                yields: Vec::new(),
                ctl_base: 0,
                span: md.span,
                fork: 0,
            }],
            ctl: Vec::new(),
            mask: 1,
            finished: 0,
            epoch: 0,
            atomic: None,
            kernel: false,
            pool: Holder::default(),
            cost: Default::default(),
            sigma: 0,
            thread: false,
            regions: Vec::new(),
        };
        if !matches!(md.body, Body::Code(_)) {
            return Err(unsupported("entry method has no body", md.span));
        }
        self.run_warp(&mut w, None)?;
        let lane = &mut w.lanes[0];
        let Lane { frames, holders, .. } = lane;
        collapse_holders(holders, 1);
        let fr = frames.last_mut().expect("frame");
        let mut x = Xfer::new(
            Mode::Exhale,
            std::mem::take(&mut holders[0]),
            std::mem::take(&mut self.env_holder),
        );
        let r = self.method_post(md, fr, &mut x, md.span, Who::Text("the entry call"));
        self.env_holder = x.dst;
        r?;
        Ok(Some(fr.result.clone()))
    }
}

/// Fold the holders above the first `keep` into the one below them (loop holders into the
/// frame holder).
fn collapse_holders(holders: &mut Vec<Holder>, keep: usize) {
    while holders.len() > keep.max(1) {
        let mut h = holders.pop().expect("more than one holder");
        h.drain_into(holders.last_mut().expect("a holder below"));
    }
}

/// A fresh store for method `md` with its parameters set to `args` (extra arguments are
/// ignored, missing ones stay `null`). `yields` variables no argument sets (a call's: the
/// caller passes none) start at their type's default, as declared locals do (VerCors leaves
/// them unknown); `null` would stop a callee that never assigns one at its postcondition.
fn param_store(md: &CMethod, args: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut store = vec![Value::Null; md.nslots as usize];
    for (slot, _, ty) in &md.yields {
        store[*slot as usize] = crate::heap::default_of(ty);
    }
    // An entry method's `yields` variables follow its parameters (see `CMethod::yields`).
    for (p, v) in md.params.iter().chain(&md.yields).zip(args) {
        store[p.0 as usize] = v;
    }
    store
}

fn ce_uses_old(e: &CE) -> bool {
    match e {
        CE::Old(_) => true,
        CE::Field(x, _, _) | CE::Length(x, _) | CE::Not(x) | CE::Neg(x, _) => ce_uses_old(x),
        CE::Head(x, _) | CE::Tail(x, _) => ce_uses_old(x),
        CE::Index(a, b, _)
        | CE::Bin(_, a, b, _)
        | CE::Let(_, a, b)
        | CE::Unfolding(a, b)
        | CE::Scale(a, b) => ce_uses_old(a) || ce_uses_old(b),
        CE::MatrixShape(a, b, c) => {
            ce_uses_old(a) || ce_uses_old(b) || c.as_deref().is_some_and(ce_uses_old)
        }
        CE::Cond(a, b, c) | CE::SeqUpdate(a, b, c, _) => {
            ce_uses_old(a) || ce_uses_old(b) || ce_uses_old(c)
        }
        CE::PointsTo(a, b, c, _) => ce_uses_old(a) || ce_uses_old(b) || ce_uses_old(c),
        CE::Perm(a, b, _) | CE::ArrayShape(a, b) | CE::SeqRange(a, b) => {
            ce_uses_old(a) || ce_uses_old(b)
        }
        CE::CallPure { args, recv, .. } | CE::Pred { args, recv, .. } => {
            args.iter().any(ce_uses_old) || recv.as_ref().is_some_and(|r| ce_uses_old(r))
        }
        CE::Quant { cond, body, binders, .. } => {
            cond.as_ref().is_some_and(|c| ce_uses_old(c))
                || ce_uses_old(body)
                || binders.iter().any(|b| b.lows.iter().chain(&b.highs).any(ce_uses_old))
        }
        CE::Sum { cond, body, .. } => ce_uses_old(cond) || ce_uses_old(body),
        CE::SeqLit(v) | CE::Ghost(_, v, _) => v.iter().any(ce_uses_old),
        CE::Comp { .. } | CE::PermOf(..) => {
            let mut any = false;
            e.for_each_sub(&mut |x| any |= ce_uses_old(x));
            any
        }
        CE::Slice(s, a, b, _) => {
            ce_uses_old(s)
                || a.as_ref().is_some_and(|x| ce_uses_old(x))
                || b.as_ref().is_some_and(|x| ce_uses_old(x))
        }
        _ => false,
    }
}

pub fn uses_old(cl: &[CClause]) -> bool {
    cl.iter().any(|c| ce_uses_old(&c.e))
}

/// Does the body of `md` mention `\old` anywhere (code, annotations, kernel contracts)? Only
/// then does a call need a snapshot of the heap at entry.
fn md_uses_old(md: &CMethod) -> bool {
    let Body::Code(code) = &md.body else {
        return false;
    };
    let any = |es: &[CE]| es.iter().any(ce_uses_old);
    code.iter().any(|i| match i {
        Instr::Assign { value, .. } => ce_uses_old(value),
        Instr::Alloc { dims, .. } => any(dims),
        Instr::NewObj { args, .. } => any(args),
        Instr::Call { recv, args, .. } => recv.as_ref().is_some_and(ce_uses_old) || any(args),
        Instr::If { cond, .. } => ce_uses_old(cond),
        Instr::LoopHead { cond, .. } => cond.as_ref().is_some_and(ce_uses_old),
        Instr::LoopEnter { inv, .. } | Instr::LoopBack { inv, .. } => uses_old(inv),
        Instr::InvEnter { res, .. } => uses_old(res),
        Instr::Barrier(b) => uses_old(&b.pre) || uses_old(&b.post),
        Instr::Return { value, .. } => value.as_ref().is_some_and(ce_uses_old),
        Instr::Par(p) => {
            uses_old(&p.region_pre)
                || uses_old(&p.region_post)
                || uses_old(&p.everywhere)
                || p.arms.iter().any(|a| {
                    uses_old(&a.pre)
                        || uses_old(&a.post)
                        || a.iters.iter().any(|it| ce_uses_old(&it.2) || ce_uses_old(&it.3))
                })
        }
        Instr::Assert(cl) | Instr::Assume(cl) | Instr::Inhale(cl) | Instr::Exhale(cl) => {
            uses_old(cl)
        }
        Instr::Fold(e, _) | Instr::Unfold(e, _) => ce_uses_old(e),
        Instr::Sync { obj, .. } | Instr::LockBegin { obj, .. } => ce_uses_old(obj),
        Instr::Vec(v) => ce_uses_old(&v.lo) || ce_uses_old(&v.hi),
        Instr::Else { .. }
        | Instr::EndIf
        | Instr::AtomicBegin { .. }
        | Instr::AtomicEnd
        | Instr::EndThread
        | Instr::EndMethod
        | Instr::InvExit { .. }
        | Instr::LockEnd { .. }
        | Instr::Goto { .. }
        | Instr::Unsupported(..) => false,
    })
}

/// Negative-check helper used by tests.
pub fn amt_is_negative(a: &Amt) -> bool {
    a.q.is_negative()
}
