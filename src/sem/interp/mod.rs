//! The interpreter: heap, expression evaluation, assertion modes (check / exhale / inhale),
//! the warp machine and the barrier scheduler (semantics.md §3–§7).

use super::compile::*;
use super::race::{thread_vals, Path, PathElem, PathId, RaceDetector, ThreadNames};
use super::value::*;
use super::vector::{self, Kind};
use crate::diag::Diagnostic;
use crate::front::ast::{BinOp, QuantKind};
use crate::front::Span;
use std::rc::Rc;

mod bulk;

#[derive(Clone, Debug)]
pub enum HObj {
    Array { data: Vec<Value>, elem: Ty },
    Object { class: u32, fields: Vec<Value> },
}

#[derive(Clone, Debug, Default)]
pub struct Heap {
    pub objs: Vec<HObj>,
}

impl Heap {
    pub fn alloc_array(&mut self, elem: Ty, data: Vec<Value>) -> u32 {
        self.objs.push(HObj::Array { data, elem });
        (self.objs.len() - 1) as u32
    }
    pub fn alloc_object(&mut self, class: u32, fields: Vec<Value>) -> u32 {
        self.objs.push(HObj::Object { class, fields });
        (self.objs.len() - 1) as u32
    }
    #[inline]
    pub fn len_of(&self, id: u32) -> usize {
        match &self.objs[id as usize] {
            HObj::Array { data, .. } => data.len(),
            HObj::Object { fields, .. } => fields.len(),
        }
    }
    #[inline]
    pub fn get(&self, l: Loc) -> Value {
        match &self.objs[l.obj() as usize] {
            HObj::Array { data, .. } => data[l.idx() as usize].clone(),
            HObj::Object { fields, .. } => fields[l.idx() as usize].clone(),
        }
    }
    #[inline]
    pub fn set(&mut self, l: Loc, v: Value) {
        match &mut self.objs[l.obj() as usize] {
            HObj::Array { data, .. } => data[l.idx() as usize] = v,
            HObj::Object { fields, .. } => fields[l.idx() as usize] = v,
        }
    }
    /// All locations of an object (for granting (1, 0) at allocation).
    pub fn locations(&self, id: u32) -> impl Iterator<Item = Loc> {
        (0..self.len_of(id) as u32).map(move |i| Loc::new(id, i))
    }
}

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

fn err(code: &str, msg: impl Into<String>, span: Span, label: &str) -> Stop {
    Stop::Error(Box::new(
        Diagnostic::error(code, msg).with_primary(span, label.to_string()),
    ))
}

fn inconclusive(code: &str, msg: impl Into<String>, span: Span) -> Stop {
    Stop::Inconclusive(Box::new(
        Diagnostic::error(code, msg).with_primary(span, "here"),
    ))
}

/// What `run` does not execute: the run says nothing.
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
        Checks {
            contracts: true,
            perms: true,
            races: true,
            divergence: true,
        }
    }
}

/// The order in which the warps of a group run within a barrier interval (semantics.md §4.6).
/// Race-free programs give the same result under every order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Ascending warp index.
    #[default]
    Forward,
    /// Descending warp index.
    Reverse,
    /// A fresh pseudo-random permutation for every round of every group, drawn from the seed.
    Random(u64),
}

impl Schedule {
    /// Warp indices in running order for round `round` of the `group`-th group of the run.
    pub fn order(self, n: usize, group: u64, round: u32) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        match self {
            Schedule::Forward => {}
            Schedule::Reverse => v.reverse(),
            Schedule::Random(seed) => {
                let mut rng = Rng::new(
                    seed ^ group.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        ^ (round as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93),
                );
                // Fisher–Yates.
                for i in (1..n).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    v.swap(i, j);
                }
            }
        }
        v
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Forward => write!(f, "forward"),
            Schedule::Reverse => write!(f, "reverse"),
            Schedule::Random(s) => write!(f, "random:{s}"),
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Schedule, String> {
        match s {
            "forward" => Ok(Schedule::Forward),
            "reverse" => Ok(Schedule::Reverse),
            _ => match s.strip_prefix("random:") {
                Some(seed) => seed.parse().map(Schedule::Random).map_err(|_| {
                    format!("bad seed `{seed}` in schedule `{s}` (expected random:<integer>)")
                }),
                None => Err(format!(
                    "unknown schedule `{s}` (expected forward, reverse or random:SEED)"
                )),
            },
        }
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
        }
    }
}

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
        Env {
            store,
            this,
            result,
            old,
            race: None,
            epoch: 0,
            atomic: None,
            in_old: false,
        }
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
    fn can_read(&self, l: Loc) -> bool {
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
    fn can_read_range(&self, obj: u32, lo: u32, hi: u32) -> bool {
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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Check,
    Exhale,
    Inhale,
}

/// One assertion transfer in progress.
pub struct Xfer {
    pub mode: Mode,
    /// Exhale/check: the holder the permissions come from. Inhale: the pool (if `from_pool`).
    pub src: Holder,
    /// Exhale: the destination. Inhale: the lane's holder.
    pub dst: Holder,
    /// Exhale: what has been moved so far, kept separately only when `dst` did not start empty
    /// (otherwise `dst` is exactly that).
    pub taken: Option<Holder>,
    pub scale: Option<Q>,
    pub perms: bool,
    pub pure: bool,
    pub from_pool: bool,
    /// `src` is the environment, which folds predicates on demand.
    pub src_is_env: bool,
    pub fails: Vec<Fail>,
}

#[derive(Clone, Debug)]
pub struct Fail {
    pub perm: bool,
    pub span: Span,
    pub msg: String,
}

impl Xfer {
    pub fn new(mode: Mode, src: Holder, dst: Holder) -> Xfer {
        let taken = (mode == Mode::Exhale && !dst.is_empty()).then(Holder::default);
        Xfer {
            mode,
            src,
            dst,
            taken,
            scale: None,
            perms: true,
            pure: true,
            from_pool: false,
            src_is_env: false,
            fails: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Warps
// ---------------------------------------------------------------------------------------------

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
    fn who(&self) -> Who<'static> {
        match self.path {
            Some(p) => Who::Thread(p),
            None => Who::Text("host"),
        }
    }
}

/// How the failures of a clause list become diagnostics: the codes for a false pure part and
/// for a missing permission, what the list is (for the message), where it is checked, and for
/// whom.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    pub code_pure: &'a str,
    pub code_perm: &'a str,
    pub what: &'a str,
    pub site: Span,
    pub who: Who<'a>,
}

/// Whom a contract check is about, turned into text only when a diagnostic is written.
#[derive(Clone, Copy, Debug)]
pub enum Who<'a> {
    Text(&'a str),
    Thread(PathId),
}

#[derive(Clone, Debug)]
enum Ctl {
    Join { saved: u64 },
    Else { mask: u64, pc: usize },
    Loop { saved: u64, counter: u32 },
}

struct WFrame {
    method: u32,
    pc: usize,
    returned: u64,
    call_mask: u64,
    ret_target: Option<Target>,
    /// `yields` bindings of the call (see `Instr::Call`).
    yields: Vec<(u32, u32)>,
    ctl_base: usize,
    span: Span,
}

pub struct Warp {
    pub lanes: Vec<Lane>,
    frames: Vec<WFrame>,
    ctl: Vec<Ctl>,
    mask: u64,
    finished: u64,
    epoch: u32,
    atomic: Option<u32>,
    kernel: bool,
    pool: Holder,
}

enum WarpStop {
    Finished,
    Barrier(Rc<BarrierC>, Vec<u32>),
    AtomicDone,
}

use vector::lanes as lanes_of;

fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

fn lane_list(mask: u64) -> String {
    let v: Vec<String> = lanes_of(mask).map(|l| l.to_string()).collect();
    v.join(", ")
}

// ---------------------------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------------------------

pub struct Interp {
    pub prog: Rc<CProgram>,
    pub src: Rc<str>,
    pub heap: Heap,
    pub cfg: Config,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub suppressed: usize,
    pub race_found: bool,
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
    preds: FxMap<(u32, u32, Vec<i64>), u32>,
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
}

pub const PRED_SPACE: u32 = u32::MAX;

impl Interp {
    pub fn new(prog: Rc<CProgram>, src: Rc<str>, cfg: Config) -> Interp {
        let ninv = prog.ninvariants as usize;
        Interp {
            prog,
            src,
            heap: Heap::default(),
            fuel: cfg.fuel,
            cfg,
            errors: Vec::new(),
            warnings: Vec::new(),
            suppressed: 0,
            race_found: false,
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
        }
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

    // -----------------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------------

    fn arith(&self, op: BinOp, a: i64, b: i64, span: Span) -> Result<i64, Stop> {
        let r = match op {
            BinOp::Add => a.checked_add(b),
            BinOp::Sub => a.checked_sub(b),
            BinOp::Mul => a.checked_mul(b),
            BinOp::Div | BinOp::Mod => {
                if b == 0 {
                    return Err(err(
                        "R-DIV0",
                        format!("division by zero in `{}`", self.text(span)),
                        span,
                        "the divisor is 0",
                    ));
                }
                // Euclidean, as pvl.md fixes for PVL (semantics.md §4.8).
                if op == BinOp::Div {
                    a.checked_div_euclid(b)
                } else {
                    a.checked_rem_euclid(b)
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
    fn as_int(&self, v: Value, span: Span) -> Result<i64, Stop> {
        match v {
            Value::Int(i) => Ok(i),
            other => Err(inconclusive(
                "R-TYPE",
                format!("expected an integer, found {other:?}"),
                span,
            )),
        }
    }

    #[inline]
    fn as_bool(&self, v: Value, span: Span) -> Result<bool, Stop> {
        match v {
            Value::Bool(b) => Ok(b),
            other => Err(inconclusive(
                "R-TYPE",
                format!("expected a boolean, found {other:?}"),
                span,
            )),
        }
    }

    /// Resolve a location expression (`a[i]`, `o.f`).
    pub fn eval_loc(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Loc, Stop> {
        match e {
            CE::Index(a, i, span) => {
                let av = self.ev(a, env, pv)?;
                let iv = self.ev(i, env, pv)?;
                if let Some(l) = self.in_bounds_elem(&av, &iv) {
                    return Ok(l);
                }
                let idx = self.as_int(iv, *span)?;
                self.index_loc(av, idx, *span)
            }
            CE::Field(o, f, span) => {
                let ov = self.ev(o, env, pv)?;
                self.field_loc(ov, *f, *span)
            }
            other => Err(unsupported(
                format!("not a heap location: {other:?}"),
                Span::DUMMY,
            )),
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

    fn index_loc(&self, av: Value, idx: i64, span: Span) -> Result<Loc, Stop> {
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
            other => Err(inconclusive(
                "R-TYPE",
                format!("indexing a non-array value {other:?}"),
                span,
            )),
        }
    }

    fn field_loc(&self, ov: Value, f: u32, span: Span) -> Result<Loc, Stop> {
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

    fn read(&mut self, l: Loc, span: Span, env: &Env, pv: PV) -> Value {
        if env.in_old {
            if let Some(h) = env.old {
                if (l.obj() as usize) < h.objs.len() {
                    return h.get(l);
                }
            }
            return self.heap.get(l);
        }
        if self.cfg.checks.perms && !pv.can_read(l) {
            let held = pv.amount(l);
            let d = Diagnostic::error(
                "R-PERM-READ",
                format!(
                    "read of {} without permission (held: {held})",
                    self.describe_loc(l)
                ),
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
        }
        self.heap.get(l)
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
        .with_primary(
            r.second_span,
            format!("{} by {}", kind(r.second_write), r.second_thread),
        )
        .with_secondary(
            r.first_span,
            format!("{} by {}", kind(r.first_write), r.first_thread),
        )
        .with_note(format!(
            "no barrier separates these accesses (both in barrier interval {})",
            r.epoch
        ));
        self.report(d);
    }

    /// [`Self::eval`] with the leaves (locals, literals) handled inline: they are about half of
    /// all nodes, and a call of the full evaluator costs more than reading a slot.
    #[inline(always)]
    fn ev(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Value, Stop> {
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
                let idx = self.as_int(iv, *span)?;
                if let Value::Seq(s) = &av {
                    return s
                        .get(idx as usize)
                        .cloned()
                        .filter(|_| idx >= 0)
                        .ok_or_else(|| {
                            err(
                                "R-OOB",
                                format!(
                                    "sequence index {idx} out of bounds for length {}",
                                    s.len()
                                ),
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
                Value::Seq(s) => Value::Int(s.len() as i64),
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
            CE::Neg(x, span) => {
                let v = self.ev(x, env, pv)?;
                let i = self.as_int(v, *span)?;
                Value::Int(self.arith(BinOp::Sub, 0, i, *span)?)
            }
            CE::Bin(op, l, r, span) => return self.binary(*op, l, r, *span, env, pv),
            CE::Cond(c, a, b) => {
                let cv = self.ev(c, env, pv)?;
                if self.as_bool(cv, Span::DUMMY)? {
                    self.ev(a, env, pv)?
                } else {
                    self.ev(b, env, pv)?
                }
            }
            CE::CallPure {
                method,
                recv,
                args,
                span,
            } => return self.call_pure(*method, recv.as_deref(), args, *span, env, pv),
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
                let cv = self.ev(c, env, pv)?;
                Value::Bool(self.matrix_ok(mv, rv, cv))
            }
            CE::Write | CE::Read | CE::NoPerm => {
                return Err(unsupported(
                    "permission amount used as a value",
                    Span::DUMMY,
                ))
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
            CE::Pred {
                pred,
                recv,
                args,
                span,
            } => {
                let l = self.pred_loc(*pred, recv.as_deref(), args, *span, env, pv)?;
                Value::Bool(pv.can_read(l))
            }
            CE::Unfolding(_, x) => self.ev(x, env, PV::Unchecked)?,
            CE::Unsupported(what, span) => {
                return Err(unsupported(format!("unsupported in `run`: {what}"), *span))
            }
        })
    }

    /// [`param_store`] for argument expressions, evaluated in order (all of them, also those
    /// beyond the parameters, for their errors).
    fn arg_store(
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

    /// `\forall`, `\exists` and `\sum` (kept out of [`Self::eval`], whose stack frame they
    /// would enlarge).
    #[inline(never)]
    fn eval_quant(&mut self, e: &CE, env: &mut Env, pv: PV) -> Result<Value, Stop> {
        match e {
            CE::Quant {
                kind,
                binders,
                cond,
                implied,
                body,
                span,
            } => {
                let tuples = self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?;
                let mut res = *kind != QuantKind::Exists;
                let mut from = 0;
                if let [b] = &binders[..] {
                    match self.quant_vector(*kind, b.slot, &tuples, body, env, pv) {
                        Ok(r) => return Ok(Value::Bool(r)),
                        Err(at) => from = at,
                    }
                }
                for t in tuples[from..].chunks(binders.len().max(1)) {
                    for (b, v) in binders.iter().zip(t) {
                        env.store[b.slot as usize] = Value::Int(*v);
                    }
                    let v = self.ev(body, env, pv)?;
                    let b = self.as_bool(v, *span)?;
                    if *kind == QuantKind::Exists && b {
                        res = true;
                        break;
                    }
                    if *kind != QuantKind::Exists && !b {
                        res = false;
                        break;
                    }
                }
                Ok(Value::Bool(res))
            }
            CE::Sum {
                binder,
                cond,
                implied,
                body,
                span,
            } => {
                let binders = std::slice::from_ref(binder);
                let tuples = self.enumerate(binders, Some(cond), *implied, *span, env, pv)?;
                let mut acc = 0i64;
                for t in tuples {
                    env.store[binder.slot as usize] = Value::Int(t);
                    let v = self.ev(body, env, pv)?;
                    let i = self.as_int(v, *span)?;
                    acc = self.arith(BinOp::Add, acc, i, *span)?;
                }
                Ok(Value::Int(acc))
            }
            _ => Err(unsupported("not a quantifier", Span::DUMMY)),
        }
    }

    /// A one-binder `\forall` or `\exists` over `vals`, its body evaluated for up to
    /// [`vector::MAX_LANES`] values at a time (see [`vector::eval_reads`]). `Ok` with the
    /// result, the binder's slot left as the value-by-value loop leaves it; `Err(k)` when the
    /// instances from `vals[k]` on need that loop (all before `k` held, and evaluating them had
    /// no effect). Bodies in code with race recording, or under `\old`, always take the loop.
    fn quant_vector(
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
        let mut reads = vector::Reads {
            check: &check,
            run: Some(&run),
            log: None,
            runs: None,
        };
        let mut col = vector::col();
        for (k, chunk) in vals.chunks(vector::MAX_LANES).enumerate() {
            let start = k * vector::MAX_LANES;
            let mask = full_mask(chunk.len());

            let locals = vector::Locals::Binder {
                store: env.store,
                slot,
                vals: chunk,
            };
            if vector::eval_reads(&self.heap, locals, &mut reads, mask, body, &mut col).is_none()
                || col.kind != Kind::Bool
            {
                return Err(start);
            }
            // The first instance that decides the quantifier, as the loop would stop there.
            let hits = if exists {
                col.true_mask(mask)
            } else {
                mask & !col.true_mask(mask)
            };
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

    fn seq(&mut self, s: &CE, env: &mut Env, pv: PV, span: Span) -> Result<Rc<Vec<Value>>, Stop> {
        match self.ev(s, env, pv)? {
            Value::Seq(v) => Ok(v),
            other => Err(inconclusive(
                "R-TYPE",
                format!("expected a sequence, found {other:?}"),
                span,
            )),
        }
    }

    fn matrix_ok(&self, m: Value, r: Value, c: Value) -> bool {
        let (Value::Ref(id), Value::Int(r), Value::Int(c)) = (m, r, c) else {
            return false;
        };
        let HObj::Array { data, .. } = &self.heap.objs[id as usize] else {
            return false;
        };
        if data.len() as i64 != r {
            return false;
        }
        let mut seen = std::collections::BTreeSet::new();
        data.iter().all(|row| match row {
            Value::Ref(rid) => seen.insert(*rid) && self.heap.len_of(*rid) as i64 == c,
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
            (
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod,
                Value::Int(a),
                Value::Int(b),
            ) => Value::Int(self.arith(op, a, b, span)?),
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
            (op, a, b) => {
                return Err(unsupported(
                    format!("operator `{}` on {a:?} and {b:?}", op.symbol()),
                    span,
                ))
            }
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
        let Body::Expr(body) = &md.body else {
            return Err(unsupported(
                format!("call of abstract function `{}`", md.name),
                span,
            ));
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
            if self.cfg.checks.contracts {
                for c in md.pre.iter().filter(|c| c.pure) {
                    let v = self.ev(&c.e, &mut inner, pv)?;
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
            }
            self.ev(body, &mut inner, pv)
        })();
        self.depth -= 1;
        res
    }

    /// Enumerate quantifier binders over their extracted bounds (semantics.md §5.4). The
    /// tuples are returned flat, `binders.len()` values each. With `implied`, the condition is
    /// known to hold for every value in the bounds and is not evaluated.
    #[allow(clippy::too_many_arguments)]
    fn enumerate(
        &mut self,
        binders: &[Binder],
        cond: Option<&CE>,
        implied: bool,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Vec<i64>, Stop> {
        let cond = if implied { None } else { cond };
        if let ([b], None) = (binders, cond) {
            // One binder and nothing to filter (the usual `0 <= i && i < n`): the tuples are
            // the range itself. The store ends as the recursive enumeration leaves it.
            let (lo, hi) = self.binder_range(b, span, env, pv)?;
            if lo < hi {
                env.store[b.slot as usize] = Value::Int(hi - 1);
            }
            return Ok((lo..hi).collect());
        }
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(binders.len());
        self.enum_rec(binders, 0, cond, span, env, pv, &mut cur, &mut out)?;
        Ok(out)
    }

    /// The range `[lo, hi)` of binder `b`: the largest of its lower bounds and the smallest of
    /// its upper bounds, evaluated in order.
    fn binder_range(
        &mut self,
        b: &Binder,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<(i64, i64), Stop> {
        if b.lows.is_empty() || b.highs.is_empty() {
            return Err(inconclusive(
                "R-QUANT-UNBOUNDED",
                format!(
                    "no {} bound for `{}`",
                    if b.lows.is_empty() { "lower" } else { "upper" },
                    b.name
                ),
                span,
            ));
        }
        let mut lo = i64::MIN;
        for x in &b.lows {
            let v = self.ev(x, env, pv)?;
            lo = lo.max(self.as_int(v, span)?);
        }
        let mut hi = i64::MAX;
        for x in &b.highs {
            let v = self.ev(x, env, pv)?;
            hi = hi.min(self.as_int(v, span)?);
        }
        if hi.saturating_sub(lo) > 10_000_000 {
            return Err(inconclusive(
                "R-QUANT-LIMIT",
                "quantifier domain larger than 10^7",
                span,
            ));
        }
        Ok((lo, hi))
    }

    #[allow(clippy::too_many_arguments)]
    fn enum_rec(
        &mut self,
        binders: &[Binder],
        i: usize,
        cond: Option<&CE>,
        span: Span,
        env: &mut Env,
        pv: PV,
        cur: &mut Vec<i64>,
        out: &mut Vec<i64>,
    ) -> Result<(), Stop> {
        if i == binders.len() {
            let ok = match cond {
                Some(c) => {
                    let v = self.ev(c, env, pv)?;
                    self.as_bool(v, span)?
                }
                None => true,
            };
            if ok {
                out.extend_from_slice(cur);
            }
            return Ok(());
        }
        let b = &binders[i];
        let (lo, hi) = self.binder_range(b, span, env, pv)?;
        for v in lo..hi {
            env.store[b.slot as usize] = Value::Int(v);
            cur.push(v);
            self.enum_rec(binders, i + 1, cond, span, env, pv, cur, out)?;
            cur.pop();
        }
        Ok(())
    }

    fn eval_perm(&mut self, p: &CE, env: &mut Env, pv: PV) -> Result<Amt, Stop> {
        Ok(match p {
            CE::Write => Amt::write(),
            CE::Read => Amt::read(),
            CE::NoPerm => Amt::none(),
            // A literal fraction such as `1\2` needs no evaluation.
            CE::Bin(BinOp::Frac, a, b, span) => match (&**a, &**b) {
                (CE::Int(n), CE::Int(d)) if *d != 0 => Amt {
                    q: Q::frac(*n, *d),
                    k: 0,
                },
                _ => self.eval_frac(a, b, *span, env, pv)?,
            },

            other => {
                let v = self.ev(other, env, pv)?;
                let i = self.as_int(v, Span::DUMMY)?;
                Amt { q: Q::int(i), k: 0 }
            }
        })
    }

    fn eval_frac(
        &mut self,
        a: &CE,
        b: &CE,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Amt, Stop> {
        let a = self.ev(a, env, pv)?;
        let b = self.ev(b, env, pv)?;
        let (a, b) = (self.as_int(a, span)?, self.as_int(b, span)?);
        if b == 0 {
            return Err(err(
                "R-DIV0",
                "zero denominator in a fraction",
                span,
                "here",
            ));
        }
        Ok(Amt {
            q: Q::frac(a, b),
            k: 0,
        })
    }

    /// The receiver of a call or predicate: `recv`'s value, or `this` when there is none.
    fn recv_value(&mut self, recv: Option<&CE>, env: &mut Env, pv: PV) -> Result<Value, Stop> {
        match recv {
            Some(r) => self.ev(r, env, pv),
            None => Ok(env.this.clone()),
        }
    }

    fn pred_loc(
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
        let mut key_args = Vec::new();
        for a in args {
            match self.ev(a, env, pv)? {
                Value::Int(i) => key_args.push(i),
                Value::Bool(b) => key_args.push(b as i64),
                Value::Ref(i) => key_args.push(i as i64),
                _ => key_args.push(-1),
            }
        }
        let key = (rid, pred, key_args);
        let n = self.pred_store.len() as u32;
        let id = *self.preds.entry(key).or_insert(n);
        if id == n {
            self.pred_store.push(Holder::default());
        }
        Ok(Loc::new(PRED_SPACE, id))
    }

    // -----------------------------------------------------------------------------------------
    // Assertions
    // -----------------------------------------------------------------------------------------

    pub fn assertion(&mut self, e: &CE, env: &mut Env, x: &mut Xfer) -> Result<(), Stop> {
        let resource = matches!(e, CE::Perm(..) | CE::PointsTo(..)) || has_resource(e);
        if !resource {
            return self.pure_assertion(e, env, x);
        }
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                self.assertion(l, env, x)?;
                self.assertion(r, env, x)
            }
            CE::Bin(BinOp::Implies, c, a, span) => {
                let v = self.guard(c, env, x, *span)?;
                if v {
                    self.assertion(a, env, x)?;
                }
                Ok(())
            }
            CE::Cond(c, a, b) => {
                if self.guard(c, env, x, Span::DUMMY)? {
                    self.assertion(a, env, x)
                } else {
                    self.assertion(b, env, x)
                }
            }
            CE::Perm(l, p, span) => {
                if !x.perms {
                    return Ok(());
                }
                let (loc, amt) = {
                    let pv = self.pure_view_noself(x);
                    let loc = self.eval_loc(l, env, pv)?;
                    let amt = self.eval_perm(p, env, pv)?;
                    (loc, amt)
                };
                self.transfer(loc, amt, *span, x);
                Ok(())
            }
            CE::PointsTo(l, p, v, span) => {
                if x.perms {
                    let (loc, amt) = {
                        let pv = self.pure_view_noself(x);
                        (self.eval_loc(l, env, pv)?, self.eval_perm(p, env, pv)?)
                    };
                    self.transfer(loc, amt, *span, x);
                }
                if x.pure && self.cfg.checks.contracts {
                    let pv = self.pure_view(x);
                    let loc = self.eval_loc(l, env, pv)?;
                    let want = self.ev(v, env, pv)?;
                    if self.heap.get(loc) != want {
                        x.fails.push(Fail {
                            perm: false,
                            span: *span,
                            msg: format!("{} is not {want:?}", self.describe_loc(loc)),
                        });
                    }
                }
                Ok(())
            }
            CE::Quant {
                kind: QuantKind::ForallStar | QuantKind::Forall,
                binders,
                cond,
                implied,
                body,
                span,
            } => {
                let tuples = {
                    let pv = self.pure_view_noself(x);
                    self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?
                };
                if let [b] = &binders[..] {
                    let mut chain = Vec::new();
                    if perm_chain(body, b.slot, &mut chain) {
                        return self.perm_chain_instances(&chain, b.slot, &tuples, env, x);
                    }
                }
                for t in tuples.chunks(binders.len().max(1)) {
                    for (b, v) in binders.iter().zip(t) {
                        env.store[b.slot as usize] = Value::Int(*v);
                    }
                    self.assertion(body, env, x)?;
                }
                Ok(())
            }
            CE::Let(s, v, b) => {
                let val = {
                    let pv = self.pure_view_noself(x);
                    self.ev(v, env, pv)?
                };
                env.store[*s as usize] = val;
                self.assertion(b, env, x)
            }
            CE::Pred {
                pred,
                recv,
                args,
                span,
            } => {
                if !x.perms {
                    return Ok(());
                }
                let loc = {
                    let pv = self.pure_view_noself(x);
                    self.pred_loc(*pred, recv.as_deref(), args, *span, env, pv)?
                };
                if x.mode == Mode::Exhale && x.src_is_env && !x.src.can_read(loc) {
                    // The environment can provide a predicate instance if it can fold it.
                    self.env_fold(*pred, recv.as_deref(), args, loc, env, x)?;
                }
                self.transfer(loc, Amt::write(), *span, x);
                Ok(())
            }
            other => Err(unsupported(
                format!("resource assertion form {other:?}"),
                Span::DUMMY,
            )),
        }
    }

    /// A resource-free assertion: evaluated (when pure parts are checked), never transferred.
    fn pure_assertion(&mut self, e: &CE, env: &mut Env, x: &mut Xfer) -> Result<(), Stop> {
        if !x.pure || !self.cfg.checks.contracts {
            return Ok(());
        }
        let v = {
            let pv = self.pure_view(x);
            self.ev(e, env, pv)?
        };
        if v != Value::Bool(true) {
            x.fails.push(Fail {
                perm: false,
                span: Span::DUMMY,
                msg: "is false".into(),
            });
        }
        Ok(())
    }

    /// The instances of `\forall* int i; …; Perm(a[e], p) ** Perm(b[f], q) …` (see
    /// [`perm_chain`]), without the assertion walk: the array locals and the amounts do not
    /// depend on `i`, and the indices read only the store. The locations are computed first, in
    /// the order [`Self::assertion`] on the body would compute them, up to the first that fails;
    /// then the permissions move in that order, all at once when the source has them all (an
    /// exhale), one transfer at a time otherwise, so that failures are reported as they would
    /// be. The error, if any, comes last, as it would after the transfers before it.
    fn perm_chain_instances(
        &mut self,
        chain: &[PermLeaf],
        binder: u32,
        tuples: &[i64],
        env: &mut Env,
        x: &mut Xfer,
    ) -> Result<(), Stop> {
        let Some(&last) = tuples.last() else {
            return Ok(());
        };
        if !x.perms || self.chain_ranges(chain, binder, tuples, env, x) {
            // Nothing to move instance by instance (or, without permission tracking, every
            // instance is in bounds, which is all the instance loop would check).
            env.store[binder as usize] = Value::Int(last);
            return Ok(());
        }
        let arrays: Vec<Value> = chain
            .iter()
            .map(|c| env.store[c.array as usize].clone())
            .collect();
        // Without permission tracking the transfers do nothing, but the bounds checks stay.
        let perms = self.cfg.checks.perms;
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        let mut stopped = None;
        // Array ids and lengths, for the bounds check without a call per instance.
        let shapes: Vec<Option<(u32, usize)>> = arrays
            .iter()
            .map(|a| match a {
                Value::Ref(id) => Some((*id, self.heap.len_of(*id))),
                _ => None,
            })
            .collect();
        'tuples: for &i in tuples {
            env.store[binder as usize] = Value::Int(i);
            for ((c, a), shape) in chain.iter().zip(&arrays).zip(&shapes) {
                let idx = match &c.index {
                    CE::Local(s) if *s == binder => Ok(i),
                    e => match local_plus_literal(e, env.store) {
                        Some(k) => Ok(k),
                        None => self
                            .ev(e, env, PV::Unchecked)
                            .and_then(|v| self.as_int(v, c.index_span)),
                    },
                };
                let loc = match (idx, shape) {
                    (Ok(k), Some((id, len))) if k >= 0 && (k as usize) < *len => {
                        Ok(Loc::new(*id, k as u32))
                    }
                    (idx, _) => idx.and_then(|k| self.index_loc(a.clone(), k, c.index_span)),
                };
                match loc {
                    Ok(loc) if perms => moves.push((loc, c.amt.clone())),
                    Ok(_) => {}
                    Err(e) => {
                        stopped = Some(e);
                        break 'tuples;
                    }
                }
            }
        }
        let bulk = self.cfg.shortcuts
            && x.mode == Mode::Exhale
            && x.scale.is_none()
            && take_all(&mut x.src, &moves);
        if bulk {
            for (loc, amt) in &moves {
                x.dst.add(*loc, amt);
                if let Some(t) = &mut x.taken {
                    t.add(*loc, amt);
                }
            }
        } else {
            for (k, (loc, amt)) in moves.iter().enumerate() {
                self.transfer(*loc, amt.clone(), chain[k % chain.len()].span, x);
            }
        }
        self.moves = moves;
        match stopped {
            Some(e) => Err(e),
            None => {
                env.store[binder as usize] = Value::Int(last);
                Ok(())
            }
        }
    }

    /// [`Self::perm_chain_instances`] as whole ranges, when each leaf's index is the binder
    /// plus a literal, the binder's values are consecutive, every instance is in bounds, and the
    /// source holds all of it (an exhale, unscaled): then the moves are one range per leaf,
    /// with the same end state as the instance-by-instance bulk move. Without permission
    /// tracking, true as soon as every instance is known to be in bounds. False (nothing
    /// moved) otherwise.
    fn chain_ranges(
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

    fn env_fold(
        &mut self,
        pred: u32,
        recv: Option<&CE>,
        args: &[CE],
        loc: Loc,
        env: &mut Env,
        x: &mut Xfer,
    ) -> Result<(), Stop> {
        let prog = self.prog.clone();
        let md = &prog.methods[pred as usize];
        let Body::Expr(body) = &md.body else {
            return Ok(());
        };
        let this = self.recv_value(recv, env, PV::Unchecked)?;
        let mut store = self.arg_store(md, args, env, PV::Unchecked)?;
        let null = Value::Null;
        let mut inner = Env::contract(&mut store, &this, &null, None);
        let mut fx = Xfer::new(Mode::Exhale, std::mem::take(&mut x.src), Holder::default());
        self.assertion(body, &mut inner, &mut fx)?;
        x.src = std::mem::take(&mut fx.src);
        x.fails.append(&mut fx.fails);
        self.pred_store[loc.idx() as usize] = fx.dst;
        x.src.add(loc, &Amt::write());
        Ok(())
    }

    fn guard(&mut self, c: &CE, env: &mut Env, x: &Xfer, span: Span) -> Result<bool, Stop> {
        let pv = self.pure_view_noself(x);
        let v = self.ev(c, env, pv)?;
        self.as_bool(v, span)
    }

    fn pure_view<'h>(&self, x: &'h Xfer) -> PV<'h> {
        Self::view(x, self.cfg.checks.perms)
    }
    fn pure_view_noself(&self, x: &Xfer) -> PV<'static> {
        // Reads inside permission expressions (indices, guards) are framed by the same rules,
        // but their failures would duplicate the main check; they are left unchecked.
        let _ = x;
        PV::Unchecked
    }
    fn view(x: &Xfer, perms: bool) -> PV<'_> {
        if !perms {
            return PV::Unchecked;
        }
        match x.mode {
            Mode::Check => PV::One(&x.src),
            Mode::Exhale => PV::Two(&x.src, x.taken.as_ref().unwrap_or(&x.dst)),
            Mode::Inhale => PV::One(&x.dst),
        }
    }

    fn transfer(&mut self, loc: Loc, amt: Amt, span: Span, x: &mut Xfer) {
        let amt = match &x.scale {
            Some(s) => amt.scaled(s),
            None => amt,
        };
        if amt.is_negative() {
            x.fails.push(Fail {
                perm: true,
                span,
                msg: format!("negative permission {amt}"),
            });
            return;
        }
        if !self.cfg.checks.perms {
            return;
        }
        match x.mode {
            Mode::Check => {
                if x.src.amount(loc) < amt {
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "needs {amt} of {}, holds {}",
                            self.describe_loc(loc),
                            x.src.amount(loc)
                        ),
                    });
                }
            }
            Mode::Exhale => {
                if x.src.take(loc, &amt) {
                    x.dst.add(loc, &amt);
                    if let Some(t) = &mut x.taken {
                        t.add(loc, &amt);
                    }
                } else {
                    let have = x.src.amount(loc);
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!("needs {amt} of {}, holds {have}", self.describe_loc(loc)),
                    });
                    // Best effort: move what is there.
                    if !have.is_negative() && !have.is_zero() {
                        x.src.take(loc, &have);
                        x.dst.add(loc, &have);
                        if let Some(t) = &mut x.taken {
                            t.add(loc, &have);
                        }
                    }
                }
            }
            Mode::Inhale => {
                if x.from_pool && !x.src.take(loc, &amt) {
                    let have = x.src.amount(loc);
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "asks for {amt} of {}, the barrier has {have} left",
                            self.describe_loc(loc)
                        ),
                    });
                    return;
                }
                x.dst.add(loc, &amt);
                if x.dst.amount(loc) > Amt::write() {
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "holder exceeds write permission on {}",
                            self.describe_loc(loc)
                        ),
                    });
                }
            }
        }
    }

    /// Run a clause list in one mode for one lane; failures become diagnostics as `rep` says.
    /// Returns whether everything held.
    pub fn clauses(
        &mut self,
        cl: &[CClause],
        env: &mut Env,
        x: &mut Xfer,
        rep: &Report,
    ) -> Result<bool, Stop> {
        self.clauses_skip(cl, 0, env, x, rep)
    }

    /// [`Self::clauses`], leaving out the clauses `i < 64` with bit `i` of `skip` set: pure
    /// clauses already known to hold (they have no effect when they hold), or permission leaves
    /// already moved in bulk.
    pub fn clauses_skip(
        &mut self,
        cl: &[CClause],
        skip: u64,
        env: &mut Env,
        x: &mut Xfer,
        rep: &Report,
    ) -> Result<bool, Stop> {
        let Report {
            code_pure,
            code_perm,
            what,
            site,
            who,
        } = *rep;
        let mut ok = true;
        for (i, c) in cl.iter().enumerate() {
            if i < 64 && skip >> i & 1 == 1 {
                continue;
            }
            let before = x.fails.len();
            // The scale applies to permissions only, which a pure clause has none of.
            if c.pure {
                // What `assertion` does with a resource-free expression, without looking for
                // resources in it again.
                self.pure_assertion(&c.e, env, x)?;
            } else {
                self.assertion(&c.e, env, x)?;
            }
            if x.fails.len() == before {
                continue;
            }
            let who = self.who_text(who);
            let fails: Vec<Fail> = x.fails.drain(before..).collect();
            for f in fails {
                ok = false;
                let (code, msg) = if f.perm {
                    (code_perm, format!("{what}: {} ({who})", f.msg))
                } else {
                    (code_pure, format!("{what} does not hold for {who}"))
                };
                let mut d = Diagnostic::error(code, msg).with_primary(c.span, "this conjunct");
                // `Span`'s `==` is structural (always true): compare positions.
                let placed = !site.is_empty() && !site.same_place(c.span);
                if placed && !site.contains(c.span) {
                    // Checked elsewhere: at a call, an assertion, a barrier.
                    d = d.with_secondary(site, "checked here");
                } else if placed && code_pure.ends_with("POST") && site.end() > 0 {
                    // The clause belongs to the block it is checked for: a postcondition is
                    // checked where the block ends (its closing brace), a precondition where
                    // it starts, which the clause itself shows.
                    let end = Span::new(site.end() - 1, site.end());
                    d = d.with_secondary(end, "checked when the block ends here");
                }
                if !f.span.is_empty() && !f.span.same_place(c.span) && !f.perm {
                    d = d.with_secondary(f.span, f.msg);
                }
                self.report(d);
            }
        }
        Ok(ok)
    }

    /// Which of the `uniform` clauses of `cl` hold in `store`: clauses that read only locals
    /// every thread shares with `store`, so that they hold in every thread. Evaluation errors
    /// count as "not known to hold"; the per-thread check then reports them.
    fn uniform_true(
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

    /// For an arm of `count` threads: the share of the parent's permissions each thread's contract
    /// moves (`1/(count·arms)`), and which clauses of its precondition (`entry`) or
    /// postcondition, and of the launch's `context_everywhere`, hold in every thread alike
    /// ([`Self::uniform_true`] in the parent's `store`). Nothing for an empty arm.
    fn arm_contract_facts(
        &mut self,
        p: &ParC,
        a: &ArmC,
        count: usize,
        entry: bool,
        store: &[Value],
        this: &Value,
    ) -> (Option<Q>, u64, u64) {
        if count == 0 {
            return (None, 0, 0);
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
        (Some(scale), skip, ev_skip)
    }

    /// Which simple clauses of `cl` hold in every lane of `mask` (bit `i` for clause `i`),
    /// evaluated for the whole warp at once.
    fn warp_true(&self, w: &Warp, mask: u64, cl: &[CClause]) -> u64 {
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

    fn who_text(&self, who: Who) -> String {
        match who {
            Who::Text(t) => t.to_string(),
            Who::Thread(p) => self.race.desc(p),
        }
    }

    fn lane_desc(&self, lane: &Lane) -> String {
        self.who_text(lane.who())
    }

    // -----------------------------------------------------------------------------------------
    // Warp machine
    // -----------------------------------------------------------------------------------------

    fn new_lane_env<'s>(
        lane: &'s mut Lane,
        epoch: u32,
        atomic: Option<u32>,
        ghost: bool,
    ) -> (Env<'s>, &'s mut Vec<Holder>) {
        let Lane {
            frames,
            holders,
            path,
        } = lane;
        let fr = frames.last_mut().expect("lane has a frame");
        let LaneFrame {
            store,
            this,
            result,
            old,
            ..
        } = fr;
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
    fn check_lane(
        &mut self,
        w: &mut Warp,
        l: usize,
        cl: &[CClause],
        skip: u64,
        code: &str,
        what: &str,
        site: Span,
    ) -> Result<bool, Stop> {
        let rep = Report {
            code_pure: code,
            code_perm: code,
            what,
            site,
            who: Who::Text(""),
        };
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
        let rep = Report {
            code_pure,
            code_perm,
            what,
            site,
            who: Who::Text(""),
        };
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

    fn run_warp(
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
                Instr::Assign {
                    simple,
                    target,
                    value,
                    span,
                    ghost,
                } => self.exec_assign(w, target, value, *span, *ghost, *simple)?,
                Instr::Alloc {
                    target,
                    elem,
                    dims,
                    span,
                } => self.exec_alloc(w, target, elem, dims, *span)?,
                Instr::NewObj {
                    target,
                    class,
                    ctor,
                    args,
                    span,
                } => {
                    let mask = w.mask;
                    let mut objs = Vec::new();
                    for l in lanes_of(mask) {
                        let c = &prog.classes[*class as usize];
                        let fields = c
                            .fields
                            .iter()
                            .map(|f| default_of(&f.2))
                            .collect::<Vec<_>>();
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
                            self.enter_call(
                                w,
                                *k,
                                None,
                                Some(&objs),
                                args,
                                Some(target.clone()),
                                *span,
                            )?;
                            continue;
                        }
                        None => {
                            for (l, id) in objs {
                                self.store_target(w, l, target, Value::Ref(id), *span)?;
                            }
                        }
                    }
                }
                Instr::Call {
                    target,
                    method,
                    recv,
                    args,
                    yields,
                    span,
                } => {
                    w.frames.last_mut().expect("frame").pc = next;
                    let depth = w.frames.len();
                    self.enter_call(w, *method, recv.as_ref(), None, args, target.clone(), *span)?;
                    if w.frames.len() > depth {
                        w.frames.last_mut().expect("frame").yields = yields.clone();
                    }
                    continue;
                }
                Instr::If {
                    simple,
                    cond,
                    else_pc,
                    span,
                } => {
                    let m = w.mask;
                    let mt = self.true_lanes(w, m, cond, *simple, *span)?;
                    let mf = m & !mt;
                    w.ctl.push(Ctl::Join { saved: m });
                    if mt != 0 && mf != 0 {
                        w.ctl.push(Ctl::Else {
                            mask: mf,
                            pc: *else_pc,
                        });
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
                    w.ctl.push(Ctl::Loop {
                        saved: m,
                        counter: 0,
                    });
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
                Instr::LoopHead {
                    simple,
                    cond,
                    exit_pc,
                    span,
                } => {
                    let m = w.mask;
                    let mut stay = m;
                    if let Some(c) = cond {
                        let leave = m & !self.true_lanes(w, m, c, *simple, *span)?;
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
                    let live = full_mask(w.lanes.len()) & !w.finished;
                    if live != 0 {
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
                        return Ok(WarpStop::Barrier(b.clone(), iters));
                    }
                }
                Instr::Return { value, span } => {
                    let m = w.mask;
                    if let Some(v) = value {
                        for l in lanes_of(m) {
                            let x = self.ev_in_lane(w, l, v)?;
                            w.lanes[l].frames.last_mut().expect("frame").result = x;
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
                    for l in lanes_of(w.mask) {
                        self.launch(w, l, p, method)?;
                    }
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
                        return Err(unsupported("fold of a non-predicate", *span));
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
                        w.lanes[l]
                            .holders
                            .last_mut()
                            .expect("holder")
                            .add(loc, &Amt::write());
                    }
                }
                Instr::Unfold(p, span) => {
                    for l in lanes_of(w.mask) {
                        let (loc, _, _) = self.pred_frame(w, l, p)?;
                        let top = w.lanes[l].holders.last_mut().expect("holder");
                        if !top.take(loc, &Amt::write()) {
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
                Instr::AtomicEnd => {}
                Instr::EndThread => {
                    w.finished |= w.mask;
                    w.mask = 0;
                    return Ok(WarpStop::Finished);
                }
                Instr::EndMethod => {
                    if w.frames.len() == 1 {
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

    /// A lane leaves a loop: its loop holder goes back to the frame.
    /// `e` evaluated in lane `l` of `w`, as code (not ghost code) reads it.
    fn ev_in_lane(&mut self, w: &mut Warp, l: usize, e: &CE) -> Result<Value, Stop> {
        let (epoch, atomic) = (w.epoch, w.atomic);
        let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, atomic, false);
        let pv = self.code_view(holders);
        self.ev(e, &mut env, pv)
    }

    /// The lanes of `m` where the branch or loop condition `cond` holds: by columns when it is
    /// `simple` and shortcuts are on (and the columns have an answer), else lane by lane.
    fn true_lanes(
        &mut self,
        w: &mut Warp,
        m: u64,
        cond: &CE,
        simple: bool,
        span: Span,
    ) -> Result<u64, Stop> {
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

    fn leave_loop(&mut self, lane: &mut Lane) {
        let hs = &mut lane.holders;
        if hs.len() > 1 {
            let mut top = hs.pop().expect("loop holder");
            top.drain_into(hs.last_mut().expect("holder"));
            self.recycle(top);
        }
    }

    /// An empty holder, reusing the allocation of one given back with [`Self::recycle`].
    fn fresh_holder(&mut self) -> Holder {
        self.spare.pop().unwrap_or_default()
    }

    fn recycle(&mut self, mut h: Holder) {
        if self.spare.len() < 256 {
            h.clear();
            self.spare.push(h);
        }
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
        let CE::Pred {
            pred,
            recv,
            args,
            span,
        } = p
        else {
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
        let cl = [CClause {
            e: body.clone(),
            span,
            pure: false,
            simple: false,
            leaf: None,
        }];
        let r = self.clauses(
            &cl,
            &mut env,
            &mut x,
            &Report {
                code_pure: "R-ASSERT",
                code_perm: "R-PERM-TRANSFER",
                what,
                site: span,
                who,
            },
        );
        *top = x.src;
        r?;
        Ok(x.dst)
    }

    fn lane_names(&self, w: &Warp, mask: u64) -> String {
        let v: Vec<String> = lanes_of(mask)
            .take(8)
            .map(|l| self.lane_desc(&w.lanes[l]))
            .collect();
        let more = mask.count_ones() as usize - v.len();
        if more > 0 {
            format!("{} and {more} more", v.join(", "))
        } else {
            v.join(", ")
        }
    }

    fn dead(&self, w: &Warp) -> u64 {
        w.finished | w.frames.last().map_or(0, |f| f.returned)
    }

    fn code_view<'h>(&self, holders: &'h [Holder]) -> PV<'h> {
        if self.cfg.checks.perms {
            PV::One(holders.last().expect("holder"))
        } else {
            PV::Unchecked
        }
    }

    fn exec_assign(
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
        if self.fuel < n {
            return Err(inconclusive("R-FUEL", "out of fuel", span));
        }
        self.fuel -= n;
        if let Target::Local(s) = target {
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

    /// Evaluate `exprs` in order for the lanes of `mask`, column by column, with array reads
    /// checked against each lane's holder: `None` when any of them needs the lane-by-lane
    /// evaluator (see [`vector::eval_reads`]). Otherwise the reads made, for
    /// [`Self::replay_reads`].
    fn vector_reads(
        &self,
        w: &Warp,
        mask: u64,
        exprs: &[&CE],
        out: &mut [vector::Col],
    ) -> Option<Vec<(usize, Loc, Span)>> {
        if !self.cfg.shortcuts || mask == 0 || w.lanes.len() > vector::MAX_LANES {
            return None;
        }
        let perms = self.cfg.checks.perms;
        let check = |l: usize, loc: Loc| {
            !perms || w.lanes[l].holders.last().is_some_and(|h| h.can_read(loc))
        };
        let mut reads = vector::Reads {
            check: &check,
            run: None,
            log: Some(Vec::new()),
            runs: None,
        };
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
    fn replay_reads(&mut self, w: &Warp, mut log: Vec<(usize, Loc, Span)>, ghost: bool) {
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

    fn write_loc(&mut self, w: &Warp, l: usize, loc: Loc, v: Value, span: Span, ghost: bool) {
        let lane = &w.lanes[l];
        if self.cfg.checks.perms {
            let top = lane.holders.last().expect("holder");
            if !top.can_write(loc) {
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

    fn store_target(
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

    fn exec_alloc(
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
            let id = self.alloc_dims(elem, &sizes, w.lanes[l].holders.last_mut().expect("holder"));
            self.store_target(w, l, target, Value::Ref(id), span)?;
        }
        Ok(())
    }

    fn alloc_dims(&mut self, elem: &Ty, sizes: &[usize], holder: &mut Holder) -> u32 {
        let id = if sizes.len() <= 1 {
            let n = sizes.first().copied().unwrap_or(0);
            self.heap
                .alloc_array(elem.clone(), vec![default_of(elem); n])
        } else {
            let rows: Vec<Value> = (0..sizes[0])
                .map(|_| Value::Ref(self.alloc_dims(elem, &sizes[1..], holder)))
                .collect();
            self.heap
                .alloc_array(Ty::Array(Box::new(elem.clone())), rows)
        };
        if self.cfg.checks.perms {
            holder.grant_all(id, self.heap.len_of(id));
        }
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn enter_call(
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
            return Err(unsupported(
                format!("call of abstract method `{}`", md.name),
                span,
            ));
        };
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
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
            let Lane {
                frames, holders, ..
            } = &mut w.lanes[l];
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
            if let Value::Ref(id) = if md.is_ctor {
                fr.this.clone()
            } else {
                Value::Null
            } {
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
        });
        Ok(())
    }

    fn leave_call(&mut self, w: &mut Warp) -> Result<(), Stop> {
        let prog = self.prog.clone();
        let fr = w.frames.pop().expect("frame");
        w.ctl.truncate(fr.ctl_base);
        let md = &prog.methods[fr.method as usize];
        let m = fr.call_mask & !w.finished;
        for l in lanes_of(m) {
            let who = w.lanes[l].who();
            let Lane {
                frames, holders, ..
            } = &mut w.lanes[l];
            let lf = frames.last_mut().expect("frame");
            // Collapse loop holders of the frame into the frame holder.
            collapse_holders(holders, lf.holder_base + 1);
            let frame_h = holders.pop().expect("frame holder");
            let caller = holders.last_mut().expect("caller holder");
            let mut x = Xfer::new(Mode::Exhale, frame_h, std::mem::take(caller));
            let r = self.method_post(md, lf, &mut x, fr.span, who);
            *caller = x.dst;
            r?;
            let lf = frames.pop().expect("frame");
            if let Some(caller) = frames.last_mut() {
                for (to, from) in &fr.yields {
                    if let (Some(v), Some(slot)) = (
                        lf.store.get(*from as usize),
                        caller.store.get_mut(*to as usize),
                    ) {
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

    // -----------------------------------------------------------------------------------------
    // Launches and groups
    // -----------------------------------------------------------------------------------------

    fn launch(&mut self, w: &mut Warp, pl: usize, p: &Rc<ParC>, method: u32) -> Result<(), Stop> {
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
        let snapshot = if any_old {
            Some(Rc::new(self.heap.clone()))
        } else {
            parent_old
        };
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
                let (scale, pre_skip, ev_skip) =
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
                    let leaf = PathElem {
                        launch,
                        group,
                        tid: t as u32,
                        epoch: 0,
                    };
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
                    let Lane {
                        frames, holders, ..
                    } = &mut lane;
                    let fr = frames.last_mut().expect("frame");
                    let mut x = Xfer::new(
                        Mode::Exhale,
                        std::mem::take(&mut parent_h),
                        Holder::default(),
                    );
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
                    let r2 = self.thread_contract(
                        &a.pre,
                        skip,
                        &p.everywhere,
                        ev_skip,
                        &scale,
                        &mut env,
                        &mut x,
                        true,
                        a.span,
                        who,
                    );
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
        // Exit transfer: POST_L(t) back to the parent.
        let res: Result<(), Stop> = (|| {
            for (ai, lanes) in done.iter_mut().enumerate() {
                let a = &p.arms[ai];
                let count = lanes.len();
                let (scale, post_skip, ev_skip) =
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
                    let Lane {
                        frames, holders, ..
                    } = lane;
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
                    let r2 = self.thread_contract(
                        &a.post,
                        skip,
                        &p.everywhere,
                        ev_skip,
                        &scale,
                        &mut env,
                        &mut x,
                        false,
                        a.span,
                        who,
                    );
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

    /// The entry transfers of all `count` threads of arm `a` at once, when every clause of the
    /// thread precondition is a [`PermLeaf`], known to hold (`pre_skip`) or simple, and every
    /// `context_everywhere` clause is known to hold or simple: the leaves' locations are computed
    /// for all threads first, then taken from the parent in thread and clause order. Nothing
    /// else depends on the parent's holder (simple clauses read no heap location), so the result
    /// is the one the thread-by-thread transfers give. When a location cannot be computed or
    /// the parent lacks a permission, everything taken is given back and `None` returned: the
    /// thread-by-thread path then reports the error where it occurs, for the thread it concerns.
    #[allow(clippy::too_many_arguments)]
    fn bulk_entry(
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
    fn leaf_moves(
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
            if let (Some(Value::Ref(id)), Some(idx)) = (
                store.get(leaf.array as usize),
                local_plus_literal(&leaf.index, store),
            ) {
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
    fn threads_true(
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
            || lanes
                .iter()
                .any(|l| l.frames.len() != 1 || l.holders.len() != 1)
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
            let mut reads = vector::Reads {
                check: &check,
                run: None,
                log: None,
                runs: None,
            };
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
    fn exit_checked_first(
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
            let pv = if self.cfg.checks.perms {
                PV::One(th)
            } else {
                PV::Unchecked
            };
            let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, old);
            let rest = post
                .iter()
                .enumerate()
                .filter(|(i, _)| *i >= 64 || skip >> i & 1 == 0)
                .chain(
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

    /// Exhale the postcondition of `md` from the frame `fr` as the call returns.
    fn method_post(
        &mut self,
        md: &CMethod,
        fr: &mut LaneFrame,
        x: &mut Xfer,
        site: Span,
        who: Who,
    ) -> Result<bool, Stop> {
        let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, fr.old.as_deref());
        let what = format!("postcondition of `{}`", md.name);
        let rep = Report {
            code_pure: "R-POST",
            code_perm: "R-PERM-TRANSFER",
            what: &what,
            site,
            who,
        };
        self.clauses(&md.post, &mut env, x, &rep)
    }

    /// One pass of a barrier resolution over the live threads of a group, in linear-id order:
    /// with `pool`, inhale the permission parts of `post` from it (what is left is returned);
    /// without, check the pure parts against each thread's new holdings.
    fn barrier_post(
        &mut self,
        warps: &mut [Warp],
        post: &[CClause],
        site: Span,
        epoch: u32,
        pool: Option<Holder>,
    ) -> Result<Holder, Stop> {
        let perms = pool.is_some();
        let mut pool = pool.unwrap_or_default();
        let rep = Report {
            code_pure: "R-BAR-POST",
            code_perm: if perms {
                "R-BAR-INCONSISTENT"
            } else {
                "R-BAR-POST"
            },
            what: "barrier postcondition",
            site,
            who: Who::Text(""),
        };
        for w in warps.iter_mut() {
            for l in lanes_of(full_mask(w.lanes.len()) & !w.finished) {
                let who = w.lanes[l].who();
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, None, true);
                let top = holders.last_mut().expect("holder");
                let mut x = Xfer::new(Mode::Inhale, std::mem::take(&mut pool), std::mem::take(top));
                x.from_pool = perms;
                x.pure = !perms;
                x.perms = perms;
                let r = self.clauses(post, &mut env, &mut x, &Report { who, ..rep });
                pool = std::mem::take(&mut x.src);
                *top = x.dst;
                r?;
            }
        }
        Ok(pool)
    }

    /// A `par` thread's contract at entry (`entry`) or exit: its own clauses `cl` (less those
    /// in `skip`), then the method's `context_everywhere` with permissions scaled by `scale`
    /// (semantics.md §5.5).
    #[allow(clippy::too_many_arguments)]
    fn thread_contract(
        &mut self,
        cl: &[CClause],
        skip: u64,
        everywhere: &[CClause],
        ev_skip: u64,
        scale: &Option<Q>,
        env: &mut Env,
        x: &mut Xfer,
        entry: bool,
        site: Span,
        who: Who,
    ) -> Result<bool, Stop> {
        let (code_pure, what, what_ev) = if entry {
            ("R-PAR-PRE", "par precondition", "context_everywhere in par")
        } else {
            (
                "R-PAR-POST",
                "par postcondition",
                "context_everywhere after par",
            )
        };
        let rep = Report {
            code_pure,
            code_perm: "R-PERM-TRANSFER",
            what,
            site,
            who,
        };
        let own = self.clauses_skip(cl, skip, env, x, &rep);
        x.scale = scale.clone();
        let ev = own.and_then(|_| {
            self.clauses_skip(
                everywhere,
                ev_skip,
                env,
                x,
                &Report {
                    what: what_ev,
                    ..rep
                },
            )
        })?;
        Ok(ev)
    }

    /// Run one group (thread block) to completion: warp-serial rounds between barriers.
    fn run_group(&mut self, lanes: Vec<Lane>, method: u32, pc: usize) -> Result<Vec<Lane>, Stop> {
        let ws = self.cfg.warp_size.clamp(1, 64);
        let mut warps: Vec<Warp> = Vec::new();
        let mut it = lanes.into_iter().peekable();
        while it.peek().is_some() {
            let chunk: Vec<Lane> = it.by_ref().take(ws).collect();
            let n = chunk.len();
            warps.push(Warp {
                lanes: chunk,
                frames: vec![WFrame {
                    method,
                    pc,
                    returned: 0,
                    call_mask: full_mask(n),
                    ret_target: None,
                    yields: Vec::new(),
                    ctl_base: 0,
                    span: Span::DUMMY,
                }],
                ctl: Vec::new(),
                mask: full_mask(n),
                finished: 0,
                epoch: 0,
                atomic: None,
                kernel: true,
                pool: Holder::default(),
            });
        }
        let mut epoch = 0u32;
        let group = self.groups_run;
        self.groups_run += 1;
        loop {
            let mut arrivals: Vec<Option<(Rc<BarrierC>, Vec<u32>)>> = vec![None; warps.len()];
            for i in self.cfg.schedule.order(warps.len(), group, epoch) {
                if let WarpStop::Barrier(b, it) = self.run_warp(&mut warps[i], None)? {
                    arrivals[i] = Some((b, it));
                }
            }
            let waiting: Vec<usize> = (0..warps.len())
                .filter(|&i| arrivals[i].is_some())
                .collect();
            if waiting.is_empty() {
                break;
            }
            let finished: Vec<usize> = (0..warps.len())
                .filter(|&i| arrivals[i].is_none())
                .collect();
            let first = &arrivals[waiting[0]];
            let (b0, it0) = first.as_ref().expect("waiting");
            if !finished.is_empty() {
                let d = Diagnostic::error(
                    "R-DEADLOCK",
                    format!(
                        "deadlock: warps {:?} wait at a barrier while warps {:?} finished without reaching it",
                        waiting, finished
                    ),
                )
                .with_primary(b0.span, "threads wait here")
                .with_note(format!(
                    "waiting: {}; finished: {}",
                    self.lane_names(&warps[waiting[0]], full_mask(warps[waiting[0]].lanes.len())),
                    self.lane_names(&warps[finished[0]], full_mask(warps[finished[0]].lanes.len()))
                ));
                return Err(Stop::Error(Box::new(d)));
            }
            for &i in &waiting[1..] {
                let (b, iv) = arrivals[i].as_ref().expect("waiting");
                if b.id != b0.id || iv != it0 {
                    let d = Diagnostic::error(
                        "R-DIVERGENCE",
                        format!(
                            "barrier divergence: warp {} is at a barrier (iterations {:?}) while warp {} is at {} (iterations {:?})",
                            waiting[0], it0, i, if b.id != b0.id { "another barrier" } else { "the same barrier" }, iv
                        ),
                    )
                    .with_primary(b0.span, format!("warp {}", waiting[0]))
                    .with_secondary(b.span, format!("warp {i}"));
                    return Err(Stop::Error(Box::new(d)));
                }
            }
            if self.cfg.uniformity {
                self.uniformity(&warps, b0);
            }
            // Resolution: pool all contributions, hand out the barrier postconditions.
            let mut pool = Holder::default();
            for w in warps.iter_mut() {
                std::mem::take(&mut w.pool).drain_into(&mut pool);
            }
            // Permissions first, for every thread; then the pure parts, which may read what
            // other threads' permissions made readable (semantics.md §5.7).
            // What the threads do not take back is discarded (§5.7).
            let _left = self.barrier_post(&mut warps, &b0.post, b0.span, epoch, Some(pool))?;
            if self.cfg.checks.contracts {
                self.barrier_post(&mut warps, &b0.post, b0.span, epoch, None)?;
            }
            epoch += 1;
            for w in warps.iter_mut() {
                w.epoch = epoch;
            }
        }
        Ok(warps.into_iter().flat_map(|w| w.lanes).collect())
    }

    /// The uniformity lint (semantics.md §5.8) at a resolution of barrier `b`: each local of
    /// [`BarrierC::shared`] must have one value in all threads of the group that have not
    /// finished. The first thread in linear-id order with a value different from the first
    /// thread's is named; each variable is reported once per barrier.
    fn uniformity(&mut self, warps: &[Warp], b: &BarrierC) {
        for v in &b.shared {
            if self.nonuniform.contains(&(b.id, v.slot)) {
                continue;
            }
            let mut first: Option<(&Lane, &Value)> = None;
            let mut differ = None;
            'threads: for w in warps {
                for l in lanes_of(full_mask(w.lanes.len()) & !w.finished) {
                    let lane = &w.lanes[l];
                    let Some(x) = lane
                        .frames
                        .last()
                        .and_then(|f| f.store.get(v.slot as usize))
                    else {
                        continue;
                    };
                    match first {
                        None => first = Some((lane, x)),
                        Some((_, x0)) if x0 != x => {
                            differ = Some((lane, x));
                            break 'threads;
                        }
                        Some(_) => {}
                    }
                }
            }
            let (Some((l0, x0)), Some((l1, x1))) = (first, differ) else {
                continue;
            };
            self.nonuniform.insert((b.id, v.slot));
            let (t0, t1) = (self.lane_desc(l0), self.lane_desc(l1));
            let d = Diagnostic::warning(
                "W-NONUNIFORM",
                format!(
                    "`{}` differs between the threads at the barrier: {} in {t0}, {} in {t1}",
                    v.name,
                    show_value(x0),
                    show_value(x1)
                ),
            )
            .with_primary(v.span, format!("`{}` is not uniform", v.name))
            .with_secondary(b.span, "at this barrier")
            .with_help(
                "the barrier's proof assumes every variable of its contract other than the \
                 iterators has one value in all threads; make it depend on uniform values only, \
                 or express the per-thread part through the iterators",
            );
            self.errors.push(d);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Entry
    // -----------------------------------------------------------------------------------------

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
            frames: vec![LaneFrame {
                store,
                this,
                result: Value::Null,
                old,
                holder_base: 0,
            }],
            holders: vec![Holder::default()],
            path: None,
        };
        {
            let Lane {
                frames, holders, ..
            } = &mut lane;
            let fr = frames.last_mut().expect("frame");
            let mut x = Xfer::new(
                Mode::Exhale,
                std::mem::take(&mut self.env_holder),
                Holder::default(),
            );
            x.src_is_env = true;
            let mut env = Env::contract(&mut fr.store, &fr.this, &fr.result, None);
            let before = self.errors.len();
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
            )?;
            self.env_holder = x.src;
            holders[0] = x.dst;
            if !ok {
                self.errors.truncate(before);
                return Ok(None);
            }
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
            }],
            ctl: Vec::new(),
            mask: 1,
            finished: 0,
            epoch: 0,
            atomic: None,
            kernel: false,
            pool: Holder::default(),
        };
        if !matches!(md.body, Body::Code(_)) {
            return Err(unsupported("entry method has no body", md.span));
        }
        self.run_warp(&mut w, None)?;
        let lane = &mut w.lanes[0];
        let Lane {
            frames, holders, ..
        } = lane;
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

/// Permission moves computed for all threads of an arm (see [`Interp::bulk_entry`]).
struct Bulk {
    /// The clauses that are leaves.
    mask: u64,
    /// `mask.count_ones()` moves per thread, threads in order.
    moves: Vec<(Loc, Amt)>,
}

/// The clauses of `cl` that are [`PermLeaf`]s, as a bit mask, when every other clause is in
/// `skip` (known to hold) or pure, and reads no heap location unless `heap_reads` allows it.
/// `None` when some clause is neither (or there are more than 64).
fn leaf_plan(cl: &[CClause], skip: u64, heap_reads: bool) -> Option<u64> {
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
fn local_offset(e: &CE) -> Option<(u32, i64)> {
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
fn local_plus_literal(e: &CE, store: &[Value]) -> Option<i64> {
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
fn all_in(n: usize, skip: u64) -> bool {
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
fn only_pure(cl: &[CClause], skip: u64) -> bool {
    cl.iter()
        .enumerate()
        .all(|(i, c)| c.pure || i < 64 && skip >> i & 1 == 1)
}

/// Take each amount from `h` in order; if one is not there, give back what was taken (amounts
/// are exact, so `h` holds what it held before) and return false.
fn take_all(h: &mut Holder, moves: &[(Loc, Amt)]) -> bool {
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

/// Is `e` a `**`/`&&` chain of [`PermLeaf`]s over arrays other than the binder slot? The
/// leaves are collected in evaluation order.
fn perm_chain(e: &CE, binder: u32, out: &mut Vec<PermLeaf>) -> bool {
    match e {
        CE::Bin(BinOp::Star | BinOp::And, l, r, _) => {
            perm_chain(l, binder, out) && perm_chain(r, binder, out)
        }
        _ => match PermLeaf::of(e) {
            Some(leaf) if leaf.array != binder => {
                out.push(leaf);
                true
            }
            _ => false,
        },
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
/// ignored, missing ones stay `null`).
fn param_store(md: &CMethod, args: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut store = vec![Value::Null; md.nslots as usize];
    for (p, v) in md.params.iter().zip(args) {
        store[p.0 as usize] = v;
    }
    store
}

/// A value as PVL would write it, for messages.
fn show_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Ref(id) => format!("object #{id}"),
        Value::Seq(s) => {
            let v: Vec<String> = s.iter().map(show_value).collect();
            format!("[{}]", v.join(", "))
        }
        Value::Unit => "()".into(),
    }
}

pub fn default_of(t: &Ty) -> Value {
    match t {
        Ty::Int => Value::Int(0),
        Ty::Bool => Value::Bool(false),
        Ty::Seq(_) => Value::Seq(Rc::new(Vec::new())),
        _ => Value::Null,
    }
}

fn ce_uses_old(e: &CE) -> bool {
    match e {
        CE::Old(_) => true,
        CE::Field(x, _, _) | CE::Length(x, _) | CE::Not(x) | CE::Neg(x, _) => ce_uses_old(x),
        CE::Head(x, _) | CE::Tail(x, _) => ce_uses_old(x),
        CE::Index(a, b, _) | CE::Bin(_, a, b, _) | CE::Let(_, a, b) | CE::Unfolding(a, b) => {
            ce_uses_old(a) || ce_uses_old(b)
        }
        CE::Cond(a, b, c) | CE::MatrixShape(a, b, c) | CE::SeqUpdate(a, b, c, _) => {
            ce_uses_old(a) || ce_uses_old(b) || ce_uses_old(c)
        }
        CE::PointsTo(a, b, c, _) => ce_uses_old(a) || ce_uses_old(b) || ce_uses_old(c),
        CE::Perm(a, b, _) | CE::ArrayShape(a, b) | CE::SeqRange(a, b) => {
            ce_uses_old(a) || ce_uses_old(b)
        }
        CE::CallPure { args, recv, .. } | CE::Pred { args, recv, .. } => {
            args.iter().any(ce_uses_old) || recv.as_ref().is_some_and(|r| ce_uses_old(r))
        }
        CE::Quant {
            cond,
            body,
            binders,
            ..
        } => {
            cond.as_ref().is_some_and(|c| ce_uses_old(c))
                || ce_uses_old(body)
                || binders
                    .iter()
                    .any(|b| b.lows.iter().chain(&b.highs).any(ce_uses_old))
        }
        CE::Sum { cond, body, .. } => ce_uses_old(cond) || ce_uses_old(body),
        CE::SeqLit(v) => v.iter().any(ce_uses_old),
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
                        || a.iters
                            .iter()
                            .any(|it| ce_uses_old(&it.2) || ce_uses_old(&it.3))
                })
        }
        Instr::Assert(cl) | Instr::Assume(cl) | Instr::Inhale(cl) | Instr::Exhale(cl) => {
            uses_old(cl)
        }
        Instr::Fold(e, _) | Instr::Unfold(e, _) => ce_uses_old(e),
        Instr::Else { .. }
        | Instr::EndIf
        | Instr::AtomicBegin { .. }
        | Instr::AtomicEnd
        | Instr::EndThread
        | Instr::EndMethod
        | Instr::InvExit { .. }
        | Instr::Unsupported(..) => false,
    })
}

/// Negative-check helper used by tests.
pub fn amt_is_negative(a: &Amt) -> bool {
    a.q.is_negative()
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn schedules_are_permutations_and_reproducible() {
        assert_eq!(Schedule::Forward.order(4, 0, 0), [0, 1, 2, 3]);
        assert_eq!(Schedule::Reverse.order(4, 0, 0), [3, 2, 1, 0]);
        let r = Schedule::Random(7);
        let mut seen = std::collections::BTreeSet::new();
        for round in 0..20 {
            let o = r.order(9, 3, round);
            assert_eq!(o, r.order(9, 3, round));
            let mut s = o.clone();
            s.sort_unstable();
            assert_eq!(s, (0..9).collect::<Vec<_>>());
            seen.insert(o);
        }
        // Rounds draw different orders.
        assert!(seen.len() > 10);
    }

    #[test]
    fn schedules_parse_and_print() {
        for s in [
            "forward",
            "reverse",
            "random:0",
            "random:18446744073709551615",
        ] {
            let p: Schedule = s.parse().expect("parses");
            assert_eq!(p.to_string(), s);
        }
        assert!("random:-1".parse::<Schedule>().is_err());
        assert!("backward".parse::<Schedule>().is_err());
    }
}
