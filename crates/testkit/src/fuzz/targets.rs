//! The fuzz targets: each runs one input through the library in-process and says how far it
//! got or what it found. Every call runs under `catch_unwind` (with the panic's message and
//! location recorded, and the default hook kept quiet), is timed against the target's budget (an
//! input over it is run again, up to five times, and the fastest time counts: the machine is
//! shared), and is watched by a watchdog that ends the process, naming the input, if it has not
//! returned after [`HARD_LIMIT`] (a real hang cannot be interrupted in-process).

use alpine_rs::analyze::sites::sites;
use alpine_rs::cli::apply::{build_step, StepSpec};
use alpine_rs::diag::{render_plain, Diagnostic, SourceFile};
use alpine_rs::front::printer::print_program;
use alpine_rs::front::{looks_like_cuda, parse, Dialect, DialectChoice, ParseOptions};
use alpine_rs::transforms::driver::{apply, CliStep, DriverOptions};
use alpine_rs::transforms::params::{Raw, Spelling};
use alpine_rs::transforms::registry;
use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How far an input got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// Refused by the front end (a syntax error) or as a usage error (a bad parameter).
    Front,
    /// Past the front end, refused or undecided by the target itself.
    Target,
    /// All the way (applied, encoded, ran, compared).
    Done,
}

/// What a failing input found.
#[derive(Clone, Debug)]
pub enum Finding {
    Panic(String),
    /// Still over the budget when run again.
    Hang(Duration),
    /// Internal error diagnostics (`CODE: message`).
    Internal(String),
    /// A promise of the target broken without a panic (an applied output that does not parse).
    Broken(String),
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Panic(m) => write!(f, "panicked: {m}"),
            Finding::Hang(t) => write!(f, "over its time budget: took {t:?}"),
            Finding::Internal(m) => write!(f, "internal error: {m}"),
            Finding::Broken(m) => write!(f, "broken: {m}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Guards: panics, time, hangs
// ---------------------------------------------------------------------------------------------

thread_local! {
    static IN_GUARD: Cell<bool> = const { Cell::new(false) };
}
/// Guards running now, on any thread.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// The last panic seen inside a guard (message and location).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// A panic hook that records panics inside a guard (on the guarded thread or on a thread it
/// started: the parser's worker `alpine-parser`, the interpreter's unnamed big-stack thread)
/// instead of printing them, and hands every other panic to the default hook (a failing
/// assertion of a test: test threads are named after their test).
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let guarded = IN_GUARD.with(Cell::get);
            let helper = ACTIVE.load(Ordering::SeqCst) > 0
                && std::thread::current().name().is_none_or(|n| n.starts_with("alpine-"));
            if guarded || helper {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic".into());
                let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
                *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{msg}{at}"));
                if std::env::var_os("FUZZ_SHOW_PANICS").is_some() {
                    default(info);
                }
            } else {
                default(info);
            }
        }));
    });
}

/// `f()` under `catch_unwind`: a panic becomes [`Finding::Panic`] with its location.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Finding> {
    install_hook();
    *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = None;
    IN_GUARD.with(|g| g.set(true));
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let r = catch_unwind(AssertUnwindSafe(f));
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
    IN_GUARD.with(|g| g.set(false));
    r.map_err(|p| {
        let recorded = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
        Finding::Panic(recorded.unwrap_or_else(|| super::gen::panic_text(&*p)))
    })
}

/// An input still running after this long is a hang the process cannot recover from: the
/// watchdog prints it, saves it and exits.
pub const HARD_LIMIT: Duration = Duration::from_secs(120);

type Watched = HashMap<ThreadId, (Instant, String, String)>;

fn watched() -> &'static Mutex<Watched> {
    static W: OnceLock<Mutex<Watched>> = OnceLock::new();
    W.get_or_init(|| {
        std::thread::Builder::new()
            .name("fuzz watchdog".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_millis(500));
                let w = watched().lock().unwrap_or_else(|e| e.into_inner());
                if let Some((start, what, input)) =
                    w.values().find(|(start, _, _)| start.elapsed() > HARD_LIMIT)
                {
                    let file = std::env::temp_dir().join("alpine-rs-fuzz-hang.txt");
                    let _ = std::fs::write(&file, input);
                    eprintln!(
                        "fuzz: HANG: {what} still running after {:?}; input saved as {}:\n{}",
                        start.elapsed(),
                        file.display(),
                        super::gen::show(input)
                    );
                    std::process::exit(70);
                }
            })
            .expect("the watchdog thread starts");
        Mutex::new(HashMap::new())
    })
}

/// Run `f` watched and timed against `budget`: a run over it is repeated (up to five times)
/// and the fastest time counts; still over is [`Finding::Hang`]. Returns the outcome and the
/// time.
pub fn timed<T>(
    budget: Duration,
    what: &str,
    input: &str,
    f: impl Fn() -> Result<T, Finding>,
) -> (Result<T, Finding>, Duration) {
    let me = std::thread::current().id();
    let watch = |on: bool| {
        let mut w = watched().lock().unwrap_or_else(|e| e.into_inner());
        if on {
            w.insert(me, (Instant::now(), what.to_string(), input.to_string()));
        } else {
            w.remove(&me);
        }
    };
    watch(true);
    let start = Instant::now();
    let mut r = f();
    let mut took = start.elapsed();
    // Up to five more runs, spread over about a second, as tests/front_robustness.rs does: on
    // a loaded machine a descheduled thread is not a slow target, and a target that is really
    // slow on an input is slow every time.
    for attempt in 0..5 {
        if took <= budget || r.is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20 << attempt));
        watch(true);
        let start = Instant::now();
        let again = f();
        let t = start.elapsed();
        if t < took {
            took = t;
            r = again;
        }
    }
    watch(false);
    if took > budget && r.is_ok() {
        return (Err(Finding::Hang(took)), took);
    }
    (r, took)
}

/// The internal errors among `ds`: a code registered with the exit class `internal`, or one
/// that is not registered at all (which [`alpine_rs::codes::exit_code`] also counts as one).
pub fn internal_errors<'d>(ds: impl IntoIterator<Item = &'d Diagnostic>) -> Option<String> {
    let bad: Vec<String> = ds
        .into_iter()
        .filter(|d| d.is_error())
        .filter(|d| {
            alpine_rs::codes::lookup(&d.code)
                .is_none_or(|c| c.exit == alpine_rs::codes::ExitClass::Internal)
        })
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    (!bad.is_empty()).then(|| bad.join("; "))
}

fn check_internal<'d>(ds: impl IntoIterator<Item = &'d Diagnostic>) -> Result<(), Finding> {
    match internal_errors(ds) {
        Some(m) => Err(Finding::Internal(m)),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

/// `parse`: parse, render the diagnostics, print the program; a PVL input without errors must
/// print to a text that parses back to the same program.
pub fn parse_target(src: &str, choice: DialectChoice) -> Result<Reach, Finding> {
    let opts = ParseOptions { dialect: choice };
    let parsed = guarded(|| parse(src, &opts))?;
    guarded(|| render_plain(&[&SourceFile::new("input.pvl", src)], &parsed.diagnostics))?;
    let printed = guarded(|| print_program(&parsed.program, parsed.dialect))?;
    if parsed.has_errors() {
        return Ok(Reach::Front);
    }
    if looks_like_cuda(src) {
        return Ok(Reach::Target);
    }
    let dialect = match parsed.dialect {
        Dialect::V1 => DialectChoice::V1,
        Dialect::V2 => DialectChoice::V2,
    };
    let again = guarded(|| parse(&printed, &ParseOptions { dialect }))?;
    if again.has_errors() || again.program != parsed.program {
        return Err(Finding::Broken(format!(
            "the canonical print does not parse back to the same program:\n{printed}"
        )));
    }
    Ok(Reach::Done)
}

/// `list`: parse with the annotation checks, find the sites, and place each site and its
/// annotations in the text, as `alpine-rs list` does.
pub fn list_target(src: &str, choice: DialectChoice) -> Result<Reach, Finding> {
    guarded(|| {
        let parsed = registry::parse(src, &ParseOptions { dialect: choice });
        let mut diags = parsed.diagnostics.clone();
        diags.extend(registry::check_annotations(src, &parsed));
        check_internal(&diags)?;
        let file = SourceFile::new("input.pvl", src);
        render_plain(&[&file], &diags);
        if parsed.has_errors() {
            return Ok(Reach::Front);
        }
        for s in sites(&parsed.program) {
            let (line, _) = file.line_col(s.keyword.start());
            if line == 0 || line > src.lines().count().max(1) {
                return Err(Finding::Broken(format!("site `{}` at line {line}", s.name)));
            }
            for a in &s.annotations {
                let _ = a.span.text(src);
            }
        }
        Ok(Reach::Done)
    })?
}

/// One `apply` request: command-line steps (`--opt … --at … --flag value`), or none (the
/// file's own annotations) with parameter overrides.
#[derive(Clone, Debug, Default)]
pub struct ApplyRequest {
    pub steps: Vec<StepSpec>,
    pub overrides: Vec<(String, Raw)>,
    pub keep_going: bool,
}

impl ApplyRequest {
    /// The request as `alpine-rs apply` arguments (for reports and fixtures).
    pub fn describe(&self) -> String {
        let mut out = String::from("apply");
        if self.keep_going {
            out.push_str(" --keep-going");
        }
        let raw = |r: &Raw| match r {
            Raw::Text(t) => format!(" {t:?}"),
            Raw::List(v) => v.iter().map(|t| format!(" {t:?}")).collect(),
            Raw::Switch(_) => String::new(),
        };
        for s in &self.steps {
            out.push_str(&format!(" --opt {} --at {}", s.opt, s.at));
            for (k, v) in &s.params {
                out.push_str(&format!(" --{k}{}", raw(v)));
            }
        }
        for (k, v) in &self.overrides {
            out.push_str(&format!(" --{k}{}", raw(v)));
        }
        out
    }
}

/// `apply`: build the steps as the command line does (a bad value is a usage error, exit 2),
/// run the driver, and check its report: no internal error, and an output that applied
/// something parses.
pub fn apply_target(src: &str, req: &ApplyRequest, timeout_ms: u32) -> Result<Reach, Finding> {
    guarded(|| {
        let popts = ParseOptions::default();
        let dialect = registry::parse(src, &popts).dialect;
        let mut steps: Vec<CliStep> = Vec::new();
        for s in &req.steps {
            match build_step(s, Spelling::Flag, dialect) {
                Ok(step) => steps.push(step),
                Err(_) => return Ok(Reach::Front),
            }
        }
        let opts = DriverOptions {
            parse: popts.clone(),
            timeout_ms,
            keep_going: req.keep_going,
            steps,
            overrides: req.overrides.clone(),
        };
        let res = apply("input.pvl", src, &opts);
        check_internal(res.diagnostics().map(|(_, d)| d))?;
        let code = res.exit_code();
        if res.bad_input && code == 2 {
            return Ok(Reach::Front);
        }
        if res.applied > 0 && (code == 0 || req.keep_going) {
            // The output is read in its input's dialect: a rewrite can remove the only v2
            // marker (a ranged `for` becomes a classic one), and a v2 name such as `fuse` is
            // then a v1 keyword under automatic detection.
            let same = ParseOptions {
                dialect: match dialect {
                    alpine_rs::front::Dialect::V1 => alpine_rs::front::DialectChoice::V1,
                    alpine_rs::front::Dialect::V2 => alpine_rs::front::DialectChoice::V2,
                },
            };
            let again = registry::parse(&res.output, &same);
            if again.has_errors() {
                let f = SourceFile::new("output.pvl", res.output.as_str());
                let errs: Vec<Diagnostic> = again.errors().cloned().collect();
                return Err(Finding::Broken(format!(
                    "the applied output does not parse:\n{}\n{}",
                    res.output,
                    render_plain(&[&f], &errs)
                )));
            }
        }
        if res.refused > 0 && code == 0 {
            return Err(Finding::Broken("a refusal with exit code 0".into()));
        }
        Ok(if code == 0 { Reach::Done } else { Reach::Target })
    })?
}

/// `verify`'s encoding step: a program that parses is encoded to Viper or refused with at least
/// one error that is not an internal one. The Viper text comes back for the slow check with
/// Silicon's parser.
pub fn encode_target(src: &str) -> Result<(Reach, Option<String>), Finding> {
    guarded(|| {
        let parsed = parse(src, &ParseOptions::default());
        if parsed.has_errors() {
            return Ok((Reach::Front, None));
        }
        let file = SourceFile::new("input.pvl", src);
        match alpine_rs::viper::encode(&parsed.program, &file) {
            Ok(enc) => Ok((Reach::Done, Some(enc.vpr))),
            Err(ds) => {
                check_internal(&ds)?;
                if !ds.iter().any(|d| d.is_error()) {
                    return Err(Finding::Broken("refused without an error".into()));
                }
                Ok((Reach::Target, None))
            }
        }
    })?
}

/// The interpreter's configuration for fuzzing: little fuel and a deadline, so that every run
/// ends quickly (out of fuel is inconclusive, not a finding).
pub fn small_config(fuel: u64, time: Duration) -> alpine_rs::sem::Config {
    alpine_rs::sem::Config {
        fuel,
        deadline: Some(Instant::now() + time),
        ..alpine_rs::sem::Config::default()
    }
}

/// `run`: load the program and run up to three entry methods on one generated input each, with
/// little fuel. Program errors the interpreter reports are fine; internal errors are not.
pub fn interp_target(src: &str, seed: u64, fuel: u64) -> Result<Reach, Finding> {
    guarded(|| {
        alpine_rs::sem::with_big_stack(|| {
            let l = match alpine_rs::sem::load(src) {
                Ok(l) => l,
                Err(e) => {
                    check_internal(&e.diagnostics())?;
                    return Ok(Reach::Front);
                }
            };
            let Ok(ms) = alpine_rs::sem::entries(&l.prog, None) else {
                return Ok(Reach::Target);
            };
            let cfg = small_config(fuel, Duration::from_secs(1));
            for &m in ms.iter().take(3) {
                let r = alpine_rs::sem::run_generated(&l, m, seed, 0, &cfg);
                check_internal(&r.errors)?;
            }
            Ok(Reach::Done)
        })
    })?
}

/// `validate ORIG OPT`: compare a program with a mutant of itself on two generated inputs per
/// method, with little fuel and time. Any verdict is fine; internal errors are not.
pub fn validate_target(orig: &str, opt: &str, seed: u64, fuel: u64) -> Result<Reach, Finding> {
    let opts = alpine_rs::sem::ValidateOptions {
        random: 2,
        seed,
        config: alpine_rs::sem::Config { fuel, ..alpine_rs::sem::Config::default() },
        method_time: Some(Duration::from_millis(500)),
        ..alpine_rs::validate_options()
    };
    guarded(|| {
        let out = alpine_rs::sem::validate(orig, opt, &opts);
        check_internal(&out.diagnostics)?;
        Ok(match out.verdict {
            alpine_rs::sem::Verdict::BadInput => Reach::Front,
            alpine_rs::sem::Verdict::Inconclusive => Reach::Target,
            _ => Reach::Done,
        })
    })?
}
