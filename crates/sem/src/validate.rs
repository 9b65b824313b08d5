//! `validate ORIG OPT` (semantics.md §11): run both programs on the same inputs and compare the
//! observables (return value, arrays reachable from the arguments, fields of `this`).

use super::inputs::{self, InVal, Input};
use super::interp::Schedule;
pub use super::matching::{MethodRow, RowKind};
use super::reject::Rejections;
use super::value::input_seed;
use super::{entries, load, run_one, Config, Loaded, RunResult, SemError, Status};
use diag::Diagnostic;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// `method`, `Class.method`, or `ORIG_NAME:OPT_NAME`.
    pub entry: Option<String>,
    pub random: usize,
    pub seed: u64,
    pub inputs: Vec<Input>,
    pub config: Config,
    /// Rerun every race-free run under this many extra random warp schedules; the results must
    /// not change (a self-check of the race detector, semantics.md §11.1).
    pub schedules: usize,
    /// Compare ghost state too (semantics.md §11.2).
    pub compare_ghost: bool,
    /// `--adapter SPEC` (semantics.md §11.3); None: derived from ORIG's annotations.
    pub adapter: Option<String>,
    /// How to read a `matrix_lin` layout from ORIG's annotations (the linearization transform's
    /// own reader, passed in: `transforms::registry::matrix_layout`). `None`: no matrix
    /// parameter can change type between ORIG and OPT.
    pub matrix_layout: Option<super::adapter::MatrixLayout>,
    /// The time one method may take, all its runs together: runs still going when it is spent
    /// stop as out of fuel (inconclusive). `None`: no limit but the fuel.
    pub method_time: Option<std::time::Duration>,
    /// ORIG's drawn inputs and runs, shared by validations of one file against several
    /// outputs (`suggest`); `None`: each validation draws and runs its own.
    pub memo: Option<Arc<super::memo::RunMemo>>,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            entry: None,
            random: 20,
            seed: 0,
            inputs: Vec::new(),
            config: Config::default(),
            schedules: 0,
            compare_ghost: false,
            adapter: None,
            matrix_layout: None,
            method_time: Some(std::time::Duration::from_secs(DEFAULT_METHOD_SECS)),
            memo: None,
        }
    }
}

/// The default of [`ValidateOptions::method_time`], in seconds.
pub const DEFAULT_METHOD_SECS: u64 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// All compared inputs equivalent (exit 0).
    Same,
    /// A mismatch, or OPT errs where ORIG does not (exit 1).
    Different,
    /// Usage, parse or entry problems (exit 2).
    BadInput,
    /// Nothing could be compared (exit 3).
    Inconclusive,
}

impl Verdict {
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Same => 0,
            Verdict::Different => 1,
            Verdict::BadInput => 2,
            Verdict::Inconclusive => 3,
        }
    }
}

/// OPT may use this many times ORIG's fuel (statements, loop heads, calls, quantifier steps) (at least [`OPT_FUEL_FLOOR`]) before it is
/// taken not to end.
const OPT_FUEL_FACTOR: u64 = 100;
const OPT_FUEL_FLOOR: u64 = 100_000;

#[derive(Clone, Debug)]
pub struct Mismatch {
    pub input_id: u64,
    pub input: Input,
    pub path: String,
    pub index: Option<usize>,
    pub orig: String,
    pub opt: String,
    pub count: usize,
}

#[derive(Clone, Debug)]
pub struct ValidateOutcome {
    pub verdict: Verdict,
    pub equivalent: usize,
    pub skipped: usize,
    pub void_: usize,
    pub orig_faulty: usize,
    pub inconclusive: usize,
    /// Runs whose result changed under another warp schedule although no race was reported.
    pub schedule_dependent: usize,
    pub mismatch: Option<Mismatch>,
    /// Diagnostics explaining a failure (OPT's errors, or load errors).
    pub diagnostics: Vec<Diagnostic>,
    /// Which program the diagnostics refer to: 0 = ORIG, 1 = OPT.
    pub diag_file: usize,
    pub summary: String,
    /// Why the verdict is inconclusive (no valid input, ORIG faulty on every input, …).
    pub reason: Option<String>,
    /// Per-method rows when methods were matched (no `--entry`); empty with `--entry`.
    pub methods: Vec<MethodRow>,
    /// With counting on ([`Config::cost`]): the costs of ORIG and OPT on each input where
    /// both ran and were equivalent (`alpine-rs cost`, semantics.md §9.8).
    pub costs: Vec<(u64, super::cost::CostReport, super::cost::CostReport)>,
}

impl ValidateOutcome {
    /// No case counted yet.
    pub(super) fn start(verdict: Verdict, diagnostics: Vec<Diagnostic>, diag_file: usize) -> Self {
        ValidateOutcome {
            verdict,
            equivalent: 0,
            skipped: 0,
            void_: 0,
            orig_faulty: 0,
            inconclusive: 0,
            schedule_dependent: 0,
            mismatch: None,
            diagnostics,
            diag_file,
            summary: String::new(),
            reason: None,
            methods: Vec::new(),
            costs: Vec::new(),
        }
    }

    /// Inputs run on both programs (or that ended the comparison): every counted case but the
    /// skipped ones.
    pub fn inputs_executed(&self) -> usize {
        self.equivalent
            + self.void_
            + self.orig_faulty
            + self.inconclusive
            + self.schedule_dependent
            + usize::from(self.verdict == Verdict::Different)
    }

    pub(super) fn bad(e: SemError, file: usize) -> ValidateOutcome {
        ValidateOutcome {
            summary: format!("validate: {e}"),
            ..Self::start(Verdict::BadInput, e.diagnostics(), file)
        }
    }
}

/// Compare two programs on `opts.random` generated inputs (from ORIG's precondition) plus the
/// user inputs.
pub fn validate(orig_src: &str, opt_src: &str, opts: &ValidateOptions) -> ValidateOutcome {
    super::with_big_stack(|| validate_here(orig_src, opt_src, opts))
}

fn validate_here(orig_src: &str, opt_src: &str, opts: &ValidateOptions) -> ValidateOutcome {
    let lo = match load(orig_src) {
        Ok(l) => l,
        Err(e) => return ValidateOutcome::bad(e, 0),
    };
    let lp = match load(opt_src) {
        Ok(l) => l,
        Err(e) => return ValidateOutcome::bad(e, 1),
    };
    let Some(entry) = opts.entry.as_deref() else {
        return super::matching::validate_matched(&lo, &lp, orig_src, opt_src, opts);
    };
    let (on, pn) = match entry.split_once(':') {
        Some((a, b)) => (a.to_string(), Some(b.to_string())),
        None => (entry.to_string(), None),
    };
    let mo = match entries(&lo.prog, Some(&on)) {
        Ok(v) => v[0],
        Err(e) => return ValidateOutcome::bad(e, 0),
    };
    let opt_name = pn.unwrap_or_else(|| lo.prog.qualified(mo));
    let mp = match entries(&lp.prog, Some(&opt_name))
        .or_else(|_| entries(&lp.prog, Some(&lo.prog.methods[mo as usize].name)))
    {
        Ok(v) => v[0],
        Err(e) => return ValidateOutcome::bad(e, 1),
    };
    compare_methods(&lo, &lp, mo, mp, orig_src, opts)
}

/// Compare method `mo` of ORIG with method `mp` of OPT.
///
/// When no input could be compared, ORIG failing its own checks each time for want of a
/// permission among other faults (or stopping undecided after such a fault), the comparison is
/// run again without permission checks (races, contracts, null and bounds checks and divergence
/// still hold: an input with another fault stays ORIG-faulty), and its result says so. Such a program is
/// written without permissions, as VeyMont's global programs are (VerCors generates theirs);
/// what it computes is still defined, and that is what validation compares.
pub(super) fn compare_methods(
    lo: &Loaded,
    lp: &Loaded,
    mo: u32,
    mp: u32,
    orig_src: &str,
    opts: &ValidateOptions,
) -> ValidateOutcome {
    let (out, perm_only) = compare_methods_with(lo, lp, mo, mp, orig_src, opts);
    let nothing_compared = out.verdict == Verdict::Inconclusive && out.equivalent == 0;
    if !(nothing_compared && perm_only && opts.config.checks.perms) {
        return out;
    }
    let mut config = opts.config.clone();
    config.checks.perms = false;
    let relaxed = ValidateOptions { config, ..opts.clone() };
    let (mut again, _) = compare_methods_with(lo, lp, mo, mp, orig_src, &relaxed);
    let why = format!(
        "compared without permission checks: ORIG holds no permission for what it reads or \
         writes on every input{}",
        out.reason
            .as_ref()
            .and_then(|r| r.split_once("; the first: "))
            .map_or(String::new(), |(_, f)| format!(" (the first: {f})"))
    );
    again.reason = Some(match again.reason.take() {
        Some(r) if again.verdict != Verdict::Same => format!("{r}; {why}"),
        Some(r) => format!("{why}; {r}"),
        None => why,
    });
    again.summary = format!("{} ({})", again.summary, "without permission checks");
    again
}

/// [`compare_methods`] with the checks of `opts`; also says whether every run in which ORIG
/// failed its own checks lacked a permission (to read, to write, or to hand over), and some
/// failed or undecided run did.
fn compare_methods_with(
    lo: &Loaded,
    lp: &Loaded,
    mo: u32,
    mp: u32,
    orig_src: &str,
    opts: &ValidateOptions,
) -> (ValidateOutcome, bool) {
    let (mut perm_only, mut perm_seen) = (true, false);
    let adapter = match super::adapter::Adapter::between(
        (orig_src, &lp.src),
        &lo.prog,
        mo,
        &lp.prog,
        mp,
        opts.adapter.as_deref(),
        opts.matrix_layout,
    ) {
        Ok(a) => a,
        Err(e) => {
            return (ValidateOutcome::bad(SemError::Entry(format!("adapter: {e}")), 1), false)
        }
    };
    let mut out = ValidateOutcome::start(Verdict::Same, Vec::new(), 1);
    // Every run of this method (both programs, every input) stops at the method's deadline.
    let deadline = opts.method_time.map(|t| std::time::Instant::now() + t);
    let cfg = Config { deadline, ..opts.config.clone() };
    let opts = &ValidateOptions { config: cfg, ..opts.clone() };
    let mut rejections = Rejections::default();
    let mut undecided: Option<String> = None;
    let mut faulty: Option<String> = None;
    // Inputs the adapter could not carry over to OPT: how many, and the first reason.
    let mut unadapted: (usize, Option<String>) = (0, None);
    let mut cases: Vec<(u64, Option<Input>)> = (0..opts.random as u64).map(|i| (i, None)).collect();
    for (k, i) in opts.inputs.iter().enumerate() {
        cases.push((opts.random as u64 + k as u64, Some(i.clone())));
    }
    let n_cases = cases.len();
    for (k, (id, user)) in cases.into_iter().enumerate() {
        // ORIG's run gets a share of the time left (a quarter, or less when fewer runs are
        // left), so that inputs whose runs never end in time (a method without contract run on
        // large values) leave time to the others.
        let share = (n_cases - k).clamp(1, 4) as u32;
        let small = out.inconclusive > 0 && k % 2 == 1;
        let (ro, input) = match user {
            Some(i) => {
                let i = Arc::new(i);
                (run_one(lo, mo, &i, id, &time_share(&opts.config, share)), i)
            }
            // Once a run did not end in time, every other input is drawn with small values.
            None => {
                let key = super::memo::Key {
                    src: &lo.src,
                    method: mo,
                    seed: opts.seed,
                    id,
                    small,
                    cfg: &opts.config,
                };
                let kept = opts.memo.as_ref().and_then(|m| m.get(&key));
                let drawn = kept.or_else(|| {
                    let x = generate_valid(
                        lo,
                        mo,
                        opts.seed,
                        id,
                        &opts.config,
                        (small, share),
                        &mut rejections,
                    )?;
                    if let Some(m) = &opts.memo {
                        m.put(&key, &x.0, &x.1);
                    }
                    Some(x)
                });
                match drawn {
                    Some(x) => x,
                    None => {
                        out.skipped += 1;
                        continue;
                    }
                }
            }
        };
        match ro.status {
            Status::InvalidInput | Status::Infeasible => {
                out.skipped += 1;
                continue;
            }
            Status::Error if !ro.race => {
                perm_only &= lacks_perm(&ro);
                perm_seen |= lacks_perm(&ro);
                out.orig_faulty += 1;
                faulty = faulty.or_else(|| first_error_at(&ro, &lo.src));
                continue;
            }
            Status::Inconclusive => {
                perm_seen |= lacks_perm(&ro);
                out.inconclusive += 1;
                undecided = undecided.or_else(|| first_error(&ro, "ORIG"));
                continue;
            }
            _ => {}
        }
        // OPT runs on the adapted input; its observables are mapped back (identity adapter:
        // unchanged).
        let opt_input = match adapter.forward(&input) {
            Ok(x) => x,
            Err(e) => {
                out.skipped += 1;
                unadapted.0 += 1;
                unadapted.1.get_or_insert_with(|| e.to_string());
                continue;
            }
        };
        // OPT gets a budget relative to what ORIG needed: an optimization changes the number
        // of statements by a small factor, so OPT still running after `OPT_FUEL_FACTOR` times
        // ORIG's statements has diverged (a loop that no longer ends), which is a difference.
        let budget = ro.fuel_used.saturating_mul(OPT_FUEL_FACTOR).max(OPT_FUEL_FLOOR);
        let cfg = Config { fuel: opts.config.fuel.min(budget), ..opts.config.clone() };
        let mut rp = run_one(lp, mp, &Arc::new(opt_input), id, &cfg);
        adapter.backward(&input, &mut rp.observables);
        let out_of_fuel = rp.errors.iter().any(|d| d.code == "R-FUEL");
        // Only the budget spent counts, not the method's time limit (a loaded machine).
        let spent = rp.fuel_used >= cfg.fuel;
        if rp.status == Status::Inconclusive && out_of_fuel && spent && cfg.fuel < opts.config.fuel
        {
            out.verdict = Verdict::Different;
            out.diagnostics = rp.errors.clone();
            out.mismatch = Some(Mismatch {
                input_id: id,
                input: (*input).clone(),
                path: "(termination)".into(),
                index: None,
                orig: format!("ends after {} steps", ro.fuel_used),
                opt: format!("still running after {} steps", cfg.fuel),
                count: 0,
            });
            break;
        }
        if rp.status == Status::Inconclusive {
            out.inconclusive += 1;
            undecided = undecided.or_else(|| first_error(&rp, "OPT"));
            continue;
        }
        if rp.status == Status::Error && !rp.race {
            out.verdict = Verdict::Different;
            out.diagnostics = rp.errors.clone();
            out.mismatch = Some(Mismatch {
                input_id: id,
                input: (*input).clone(),
                path: "(run)".into(),
                index: None,
                orig: "ok".into(),
                opt: "error".into(),
                count: 0,
            });
            break;
        }
        if ro.race || rp.race {
            out.void_ += 1;
            if rp.race && !ro.race {
                out.verdict = Verdict::Different;
                out.diagnostics = rp.errors.clone();
                break;
            }
            continue;
        }
        // The self-check: each race-free run again under random warp orders.
        let mut stable = true;
        for (file, l, m, r) in [(0, lo, mo, &ro), (1, lp, mp, &rp)] {
            if let Some(d) = schedule_check(l, m, &input, id, r, opts) {
                // Diagnostics refer to one file: the first program found unstable.
                if out.diagnostics.is_empty() {
                    out.diag_file = file;
                }
                if out.diag_file == file {
                    out.diagnostics.push(d);
                }
                stable = false;
            }
        }
        if !stable {
            out.schedule_dependent += 1;
            continue;
        }
        match compare(&ro, &rp, opts.compare_ghost) {
            None => {
                out.equivalent += 1;
                if let (Some(a), Some(b)) = (ro.cost, rp.cost) {
                    out.costs.push((id, a, b));
                }
            }
            Some(mut m) => {
                m.input_id = id;
                m.input = (*input).clone();
                out.mismatch = Some(m);
                out.verdict = Verdict::Different;
                break;
            }
        }
    }
    if out.verdict == Verdict::Same && (out.equivalent == 0 || out.schedule_dependent > 0) {
        out.verdict = Verdict::Inconclusive;
        out.reason = Some(match unadapted {
            (n, Some(e)) if out.equivalent == 0 && out.schedule_dependent == 0 && n > 0 => format!(
                "{n} inputs could not be carried over to OPT's signature: {e} (give the layout with --adapter \"matrix_lin M R|C ROWS COLS\")"
            ),
            _ => inconclusive_reason(&out, undecided.or(faulty), &rejections, &lo.src),
        });
    } else if out.verdict == Verdict::Same && out.inconclusive > 0 {
        // Equivalent where both ran; the runs that could not be decided are said too (an OPT
        // that stops at a construct ORIG does not use would hide a difference there).
        let why = undecided.map(|w| format!(": {w}")).unwrap_or_default();
        out.reason = Some(format!("{} runs undecided{why}", out.inconclusive));
    }
    let total = out.equivalent
        + out.skipped
        + out.void_
        + out.orig_faulty
        + out.inconclusive
        + out.schedule_dependent;
    let sched = if opts.schedules > 0 {
        format!(
            ", {} schedule-dependent ({} extra schedules)",
            out.schedule_dependent, opts.schedules
        )
    } else {
        String::new()
    };
    out.summary = format!(
        "validate: {} inputs ({} skipped: invalid), {} equivalent, {} mismatch, {} void, {} orig-faulty, {} inconclusive{sched} — {}",
        total + usize::from(out.verdict == Verdict::Different),
        out.skipped,
        out.equivalent,
        usize::from(out.mismatch.is_some()),
        out.void_,
        out.orig_faulty,
        out.inconclusive,
        match out.verdict {
            Verdict::Same => "EQUIVALENT on all tested inputs",
            Verdict::Different => "DIFFERENT",
            Verdict::BadInput => "bad input",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    );
    (out, perm_only && perm_seen)
}

/// Did the run report a missing permission (to read, to write, or to hand over)?
fn lacks_perm(r: &RunResult) -> bool {
    r.errors
        .iter()
        .any(|d| matches!(d.code.as_str(), "R-PERM-READ" | "R-PERM-WRITE" | "R-PERM-TRANSFER"))
}

/// The first error of a run that failed its own checks, as `CODE message (line N)`.
fn first_error_at(r: &RunResult, src: &str) -> Option<String> {
    let d = r.errors.iter().find(|d| d.is_error())?;
    let line = d
        .labels
        .first()
        .map(|l| {
            format!(
                " (line {})",
                src[..l.span.lo.min(src.len() as u32) as usize].lines().count().max(1)
            )
        })
        .unwrap_or_default();
    Some(format!("{} {}{line}", d.code, d.message))
}

/// Why a run is undecided, as `PROGRAM: CODE message`: the diagnostic that stopped it, which
/// comes after the checker errors found before.
fn first_error(r: &RunResult, which: &str) -> Option<String> {
    r.errors
        .iter()
        .rev()
        .find(|d| d.is_error())
        .map(|d| format!("{which}: {} {}", d.code, d.message))
}

/// Why a comparison with no mismatch is inconclusive, in words.
fn inconclusive_reason(
    out: &ValidateOutcome,
    undecided: Option<String>,
    rej: &Rejections,
    src: &str,
) -> String {
    if out.schedule_dependent > 0 {
        return format!(
            "{} inputs give results that depend on the warp schedule",
            out.schedule_dependent
        );
    }
    if out.inconclusive > 0 {
        let why = undecided.map(|w| format!(": {w}")).unwrap_or_default();
        return format!("{} runs could not be decided{why}", out.inconclusive);
    }
    if out.orig_faulty > 0 {
        let first = undecided.map(|w| format!("; the first: {w}")).unwrap_or_default();
        return format!(
            "ORIG fails its own checks on every valid input ({} inputs): nothing to compare{first}",
            out.orig_faulty
        );
    }
    if out.void_ > 0 {
        return format!("every run races ({} inputs): equivalence is undefined", out.void_);
    }
    rej.reason(src).unwrap_or_else(|| "no input was compared".into())
}

fn generate_valid(
    l: &Loaded,
    m: u32,
    seed: u64,
    id: u64,
    cfg: &Config,
    (small, share): (bool, u32),
    rej: &mut Rejections,
) -> Option<(RunResult, Arc<Input>)> {
    let s = input_seed(seed, id);
    for attempt in 0..50 {
        // Past the method's deadline, stop drawing: each candidate may cost Z3 its timeout (as
        // in `sem::run_generated`; found by the fuzzer, `fixtures/fuzz/`).
        if attempt > 0 && cfg.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return None;
        }
        let input = match inputs::generate(&l.prog, m, s, attempt, id, inputs::Draw::of(cfg, small))
        {
            Ok(i) => Arc::new(i),
            Err(e) => {
                rej.unsat = Some(e);
                return None;
            }
        };
        let r = run_one(l, m, &input, id, &time_share(cfg, share));
        rej.add(&r);
        if r.status != Status::InvalidInput {
            return Some((r, input));
        }
    }
    None
}

/// `cfg` with its deadline brought forward to `1 / share` of the time left before it (drawing
/// inputs keeps the whole time; a run gets its share when it starts).
fn time_share(cfg: &Config, share: u32) -> Config {
    let deadline = cfg.deadline.map(|d| {
        let now = std::time::Instant::now();
        now + d.saturating_duration_since(now) / share.max(1)
    });
    Config { deadline, ..cfg.clone() }
}

/// Rerun `r` (a run of method `m` of `l` on `input`) under `opts.schedules` random warp orders.
/// A race-free `ok` run must give the same result under every order; a difference means the
/// race detector missed a race, and is returned as a diagnostic.
fn schedule_check(
    l: &Loaded,
    m: u32,
    input: &Arc<Input>,
    id: u64,
    r: &RunResult,
    opts: &ValidateOptions,
) -> Option<Diagnostic> {
    if r.race || r.status != Status::Ok {
        return None;
    }
    for k in 0..opts.schedules as u64 {
        let schedule = Schedule::Random(input_seed(opts.seed ^ 0x5C4E_D01E, id * 1_000 + k));
        let cfg = Config { schedule, ..opts.config.clone() };
        let r2 = run_one(l, m, input, id, &cfg);
        let what = if r2.status != r.status || r2.race {
            Some(format!(
                "the run is {} under schedule {schedule}",
                if r2.race {
                    "racy".to_string()
                } else {
                    format!("{:?}", r2.status).to_lowercase()
                }
            ))
        } else {
            compare(r, &r2, true).map(|d| match d.index {
                Some(i) => format!(
                    "{}[{i}] is {} under schedule {} and {} under schedule {schedule}",
                    d.path, d.orig, opts.config.schedule, d.opt
                ),
                None => format!(
                    "{} is {} under schedule {} and {} under schedule {schedule}",
                    d.path, d.orig, opts.config.schedule, d.opt
                ),
            })
        };
        if let Some(what) = what {
            let mut d = Diagnostic::error(
                "R-SCHEDULE",
                format!(
                    "{} on input #{id}: the result depends on the warp schedule although no race was reported",
                    r.method
                ),
            )
            .with_primary(l.prog.methods[m as usize].span, "entry method")
            .with_note(what)
            .with_note(format!(
                "input seed {}; rerun with `run --schedule {schedule}` to see the other result",
                input.seed
            ))
            .with_help(
                "a race-free program gives the same result under every warp order: this is a \
                 missed race (or races are not checked: see --checks)",
            );
            if let Some(e) = r2.errors.first().and_then(|e| e.primary_span()) {
                d = d.with_secondary(e, "first error under the other schedule");
            }
            return Some(d);
        }
    }
    None
}

fn compare(a: &RunResult, b: &RunResult, ghost: bool) -> Option<Mismatch> {
    if a.ret != b.ret && (ghost || !a.ret_ghost) {
        return Some(mismatch("\\result", None, fmt(&a.ret), fmt(&b.ret), 1));
    }
    for oa in a.observables.iter().filter(|o| ghost || !o.ghost) {
        let vb = b.observables.iter().find(|o| o.path == oa.path).map(|x| &x.value);
        let Some(vb) = vb else { continue };
        if let Some(m) = diff(&oa.path, &oa.value, vb) {
            return Some(m);
        }
    }
    None
}

fn fmt(v: &Option<InVal>) -> String {
    v.as_ref().map_or_else(|| "(none)".into(), |x| x.to_string())
}

fn mismatch(path: &str, index: Option<usize>, orig: String, opt: String, count: usize) -> Mismatch {
    Mismatch { input_id: 0, input: Input::default(), path: path.into(), index, orig, opt, count }
}

fn diff(path: &str, a: &InVal, b: &InVal) -> Option<Mismatch> {
    match (a, b) {
        (InVal::Array(_, xa), InVal::Array(_, xb)) if xa.len() == xb.len() => {
            let mut first = None;
            let mut count = 0;
            for (i, (x, y)) in xa.iter().zip(xb).enumerate() {
                if x != y {
                    count += 1;
                    if first.is_none() {
                        first = Some(match diff(&format!("{path}[{i}]"), x, y) {
                            Some(m) if matches!(x, InVal::Array(..)) => m,
                            _ => mismatch(path, Some(i), x.to_string(), y.to_string(), 0),
                        });
                    }
                }
            }
            first.map(|mut m| {
                m.count = count;
                m
            })
        }
        (InVal::Object(ca, fa), InVal::Object(cb, fb)) if ca == cb && fa.len() == fb.len() => {
            fa.iter().zip(fb).find_map(|((n, x), (_, y))| diff(&format!("{path}.{n}"), x, y))
        }
        _ if a != b => Some(mismatch(path, None, a.to_string(), b.to_string(), 1)),
        _ => None,
    }
}
