//! `alpine-rs suggest FILE [--json]` (issue 24): every optimization that applies at a site of
//! the file, with the cost model's counts before and after on the same generated inputs, ranked
//! by the objective's improvement, each with the `apply` command that performs it.
//!
//! The attempts are `sweep`'s (the same candidates, the same in-process driver on a fresh thread
//! under `catch_unwind`); each applied output is measured against the file as `alpine-rs cost`
//! measures two files (`sem::validate` with counting on, [`super::cost::judge`] per method, the
//! methods' sums judged together). Rows are ranked by the relative change of the objective
//! (largest decrease first); invalid optimizations, then candidates whose cost could not be
//! measured, come last. Refused attempts are listed below the table, one line per site and
//! optimization. Nothing is written to disk, except with `--apply K`: row K's own command then
//! runs with both oracles (`apply --verify --validate`), which emits the output only when they
//! pass.
//!
//! Exit codes: 0 the table was produced (also when nothing applies); 2 bad input (a file that
//! cannot be read or parsed, bad flags, an original the interpreter cannot run); 3 some
//! candidates applied but none could be measured (e.g. no valid input), with the reason.
//!
//! - `report`: the ranked table, the refusals and the JSON document.

mod accesses;
mod report;

use super::common::{emit, json_diags, read_source, Format};
use super::cost::{judge, CostArgs, MethodCost, HELP_COST};
use super::run::HELP_READ;
use super::run::{print_json, usage_error, ExecArgs};
use super::sweep::{attempt, candidates, internal, Attempt, Candidate, Outcome};
use crate::diag::{Diagnostic, SourceFile};
use crate::front::ParseOptions;
use crate::sem::cost::{CostVerdict, Counts};
use crate::sem::{self, Config, ValidateOptions, Verdict};
use crate::transforms::registry;
use report::{refusals, Report, Row};
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct SuggestArgs {
    /// The PVL file.
    pub file: PathBuf,
    /// Entry method of the measurement (`method` or `Class.method`); default: every method an
    /// optimization changes.
    #[arg(long)]
    pub entry: Option<String>,
    /// Inputs, seed, checks, sizes (`--set n=64`) and blocks of the measurement (as for `cost`).
    #[command(flatten)]
    pub exec: ExecArgs,
    #[command(flatten)]
    pub cost: CostArgs,
    /// Number of generated inputs each candidate is measured on.
    #[arg(long, default_value_t = 5)]
    pub random: usize,
    /// The metric the ranking follows: sectors, conflicts, divwarps, steps or time (T = W/P + S).
    #[arg(long, default_value = "time", value_parser = ["sectors", "conflicts", "divwarps", "steps", "time"])]
    pub objective: String,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Output format (`--format json` is the same as `--json`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Attempts (and measurements) run at the same time (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Per-query Z3 timeout in milliseconds (passed on to the printed `apply` commands).
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    /// Perform the suggestion of rank K: its `apply` command with `--verify --validate`, so the
    /// output is printed (or written with -o/--in-place) only when it verifies with Silicon and
    /// behaves as the file does; exit 1 otherwise, and nothing is written.
    #[arg(long = "apply", value_name = "K")]
    pub apply: Option<usize>,
    /// With --apply: write the output to FILE.
    #[arg(short = 'o', long = "output", requires = "apply", conflicts_with = "in_place")]
    pub output: Option<PathBuf>,
    /// With --apply: rewrite the file (atomically).
    #[arg(long = "in-place", requires = "apply")]
    pub in_place: bool,
    /// With --apply: Silicon's time limit per program, in seconds (0: none).
    #[arg(long = "verify-timeout", value_name = "S", requires = "apply", default_value_t = crate::viper::DEFAULT_TIMEOUT_S)]
    pub verify_timeout: u64,
}

const HELP_MEASURE: &str = "the reason above says what was missing: widen the generated inputs \
with --bound/--set, or look at one candidate with `alpine-rs cost FILE OPT` or `alpine-rs run FILE --cost`";

/// The cost of one applied candidate: the sums over its compared methods and inputs.
struct Measure {
    inputs: usize,
    orig: Counts,
    opt: Counts,
    orig_time: f64,
    opt_time: f64,
    /// The Pareto verdict; `None`: not measured.
    verdict: Option<CostVerdict>,
    /// The objective's verdict.
    objective: CostVerdict,
    /// Why it is not measured or invalid, or what was left out.
    note: Option<String>,
    /// The accesses that changed, on the first input of each compared method.
    accesses: Vec<accesses::AccessChange>,
    /// The interpreter cannot run the original (or the flags do not fit it): the summary and
    /// the diagnostics, in ORIG.
    orig_bad: Option<(String, Vec<Diagnostic>)>,
}

impl Measure {
    fn unmeasured(note: String) -> Measure {
        Measure {
            inputs: 0,
            orig: Counts::default(),
            opt: Counts::default(),
            orig_time: 0.0,
            opt_time: 0.0,
            verdict: None,
            objective: CostVerdict::Unchanged,
            note: Some(note),
            accesses: Vec::new(),
            orig_bad: None,
        }
    }

    fn measured(&self) -> bool {
        self.verdict.is_some_and(|v| v != CostVerdict::InvalidOptimization)
    }

    fn invalid(&self) -> bool {
        self.verdict == Some(CostVerdict::InvalidOptimization)
    }

    /// The objective's relative change, (opt - orig) / orig; `None` when not measured or when
    /// the original's value is 0 and the optimized one is not.
    fn change(&self, objective: &str) -> Option<f64> {
        if !self.measured() {
            return None;
        }
        let (a, b) = (
            pick(&self.orig, self.orig_time, objective),
            pick(&self.opt, self.opt_time, objective),
        );
        match (a == 0.0, b == 0.0) {
            (true, true) => Some(0.0),
            (true, false) => None,
            _ => Some((b - a) / a),
        }
    }

    /// The ranking class: measured, invalid, unmeasured.
    fn class(&self) -> u8 {
        if self.measured() {
            0
        } else if self.invalid() {
            1
        } else {
            2
        }
    }
}

fn pick(c: &Counts, time: f64, objective: &str) -> f64 {
    match objective {
        "sectors" => c.sectors as f64,
        "conflicts" => c.conflicts as f64,
        "divwarps" => c.divwarps as f64,
        "steps" => c.steps as f64,
        _ => time,
    }
}

/// Measure `out` (the applied output) against `orig`, as `alpine-rs cost ORIG OUT` does.
fn measure(
    orig: &str,
    out: &str,
    c: &Candidate,
    base: &ValidateOptions,
    objective: &str,
) -> Measure {
    let opts = ValidateOptions { adapter: c.adapter.clone(), ..base.clone() };
    let v = sem::validate(orig, out, &opts);
    if v.verdict == Verdict::BadInput {
        let mut m = Measure::unmeasured(format!("cannot run: {}", v.summary));
        if v.diag_file == 0 && c.adapter.is_none() {
            m.orig_bad = Some((v.summary.clone(), v.diagnostics.clone()));
        }
        return m;
    }
    let mut per: Vec<MethodCost> = Vec::new();
    let mut changes = Vec::new();
    let mut count = |name: &str, o: &sem::ValidateOutcome| {
        per.push(judge(name, o, objective));
        if let Some((_, a, b)) = o.costs.first() {
            changes.extend(accesses::changed(&a.accesses, &b.accesses));
        }
    };
    if v.methods.is_empty() {
        count(base.entry.as_deref().unwrap_or("entry"), &v);
    }
    for r in &v.methods {
        if let Some(o) = &r.outcome {
            count(&r.method, o);
        }
    }
    let mut m = Measure { note: None, accesses: changes, ..Measure::unmeasured(String::new()) };
    for j in &per {
        if j.verdict == CostVerdict::InvalidOptimization {
            m.verdict = Some(CostVerdict::InvalidOptimization);
            m.objective = CostVerdict::InvalidOptimization;
            m.note = Some(format!("{}: {}", j.method, j.note.clone().unwrap_or_default()));
            return m;
        }
        if j.inputs == 0 {
            let why = j.note.clone().unwrap_or_else(|| "no input ran on both programs".into());
            m.note.get_or_insert(format!("{}: {why}", j.method));
            continue;
        }
        m.inputs += j.inputs;
        m.orig.add(&j.orig);
        m.opt.add(&j.opt);
        m.orig_time += j.orig_time;
        m.opt_time += j.opt_time;
    }
    if m.inputs == 0 {
        if m.note.is_none() {
            m.note = Some(v.reason.clone().unwrap_or_else(|| "no method was compared".into()));
        }
        return m;
    }
    m.verdict = Some(CostVerdict::of(&m.orig, &m.opt));
    m.objective = CostVerdict::of_metric(
        pick(&m.orig, m.orig_time, objective),
        pick(&m.opt, m.opt_time, objective),
    );
    m
}

/// The `apply` command line that performs candidate `c` on `file` (the parameters as flags, and
/// the Z3 limit it was attempted with, so that the command reproduces the row).
fn command(c: &Candidate, file: &str, z3: u32) -> Vec<String> {
    let meta = c.opt.meta();
    let mut v: Vec<String> =
        vec!["alpine-rs".into(), "apply".into(), "--opt".into(), meta.name.into()];
    v.extend(["--at".to_string(), format!("line:{}:{}", c.line, c.col)]);
    v.extend(crate::transforms::sweep::apply_flags(
        c.opt,
        c.params.iter().map(|(k, val)| (*k, val.as_str())),
    ));
    v.extend(["--z3-timeout".to_string(), z3.to_string()]);
    v.push(file.to_string());
    v
}

pub fn main(args: SuggestArgs) -> u8 {
    let json = args.json || args.format == Format::Json;
    if json && args.apply.is_some() && args.output.is_none() && !args.in_place {
        return usage_error(
            json,
            "--json with --apply needs -o FILE or --in-place (standard output carries the report)",
            "add -o FILE to write the output there, or --in-place to rewrite the file",
        );
    }
    let t0 = std::time::Instant::now();
    let workers = match super::pool::workers(args.jobs) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let file = match read_source(&args.file) {
        Ok(f) => f,
        Err(e) => {
            return usage_error(json, &e.diag.message, e.diag.help.as_deref().unwrap_or(HELP_READ))
        }
    };
    let suffix = match args.exec.joined("") {
        Ok(s) => s,
        Err(e) => return usage_error(json, &e, HELP_READ),
    };
    let (sel, inputs) = match args.exec.checks_and_inputs(json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let cost = match args.cost.config() {
        Ok(c) => c,
        Err(e) => return usage_error(json, &e, HELP_COST),
    };
    let parsed = registry::parse(&file.text, &ParseOptions::default());
    if parsed.has_errors() {
        let errors: Vec<Diagnostic> = parsed.errors().cloned().collect();
        return bad_input(json, &file, "the file does not parse", &errors);
    }
    let profile = cost.profile.name.clone();
    let base = ValidateOptions {
        entry: args.entry.clone(),
        random: args.random,
        seed: args.exec.seed,
        inputs,
        config: Config { cost: Some(cost), ..args.exec.config(sel) },
        // Every candidate is measured against the file on the same inputs: drawn and run once.
        memo: Some(std::sync::Arc::default()),
        ..crate::validate_options()
    };
    // The attempts, as `sweep` makes them.
    let (cands, skipped) = candidates(&file.text, &parsed);
    let (dialect, z3) = (parsed.dialect, args.z3_timeout);
    let attempts: Vec<Attempt> = super::pool::pool(
        cands.len(),
        workers,
        |k| attempt(0, &file, dialect, &cands[k], z3),
        |k| internal(0, &cands[k], "the attempt's thread stopped without a result".into()),
    );
    // The measurements of the applied ones.
    let applied: Vec<&Attempt> =
        attempts.iter().filter(|a| a.outcome == Outcome::Applied).collect();
    let orig = format!("{}{suffix}", file.text);
    let measures: Vec<Measure> = super::pool::pool(
        applied.len(),
        workers,
        |k| {
            let out = format!("{}{suffix}", applied[k].output.as_deref().unwrap_or_default());
            measure(&orig, &out, &applied[k].cand, &base, &args.objective)
        },
        |_| Measure::unmeasured("internal error: a panic while measuring".into()),
    );
    if let Some((summary, diags)) = measures.iter().find_map(|m| m.orig_bad.as_ref()) {
        let f = SourceFile::new(file.name.clone(), orig.clone());
        return bad_input(json, &f, &format!("the original cannot be measured: {summary}"), diags);
    }
    let name = args.file.display().to_string();
    let mut rows: Vec<Row> = applied
        .iter()
        .zip(measures)
        .map(|(a, m)| Row {
            attempt: a,
            measure: m,
            argv: command(&a.cand, &name, z3),
            doubled: None,
        })
        .collect();
    let key = |r: &Row| r.measure.change(&args.objective).unwrap_or(f64::INFINITY);
    rows.sort_by(|a, b| {
        a.measure.class().cmp(&b.measure.class()).then_with(|| key(a).total_cmp(&key(b)))
    });
    let grown = growth(&args, &orig, &suffix, &mut rows, &base, workers);
    let refused = refusals(&attempts);
    let decided = rows.iter().any(|r| r.measure.measured() || r.measure.invalid());
    let code = if !rows.is_empty() && !decided { 3 } else { 0 };
    let why =
        (code == 3).then(|| rows.iter().find_map(|r| r.measure.note.clone()).unwrap_or_default());
    if let Some(k) = args.apply {
        return perform(&args, &rows, k, json);
    }
    let report = Report {
        name: &name,
        profile: &profile,
        args: &args,
        rows: &rows,
        refused: &refused,
        skipped: &skipped,
        grown: &grown,
    };
    if json {
        report.json(code, why.as_deref());
    } else {
        report.text();
        if let Some(w) = &why {
            eprintln!("error: no candidate's cost could be measured: {w}");
            eprintln!("help: {HELP_MEASURE}");
        }
        eprintln!(
            "suggest: {} attempts, {} applied, {} measured in {:.1}s",
            attempts.len(),
            rows.len(),
            rows.iter().filter(|r| r.measure.measured()).count(),
            t0.elapsed().as_secs_f64()
        );
    }
    code
}

/// How many of the best rows are measured again at doubled sizes.
const GROWN_ROWS: usize = 3;

/// With `--set` sizes: the best measured rows measured again with every `--set` value doubled
/// (as `run --cost` reports growth), so that a row shows whether its gain holds as the sizes
/// grow. Returns the sizes, (name, value, doubled value); empty without `--set`.
fn growth(
    args: &SuggestArgs,
    orig: &str,
    suffix: &str,
    rows: &mut [Row],
    base: &ValidateOptions,
    workers: usize,
) -> Vec<super::cost::Doubled> {
    let sets = &args.exec.sets;
    if sets.is_empty() || args.apply.is_some() {
        return Vec::new();
    }
    let bounds = super::cost::doubled_bounds(sets, &base.config.bounds);
    let twice =
        ValidateOptions { config: Config { bounds, ..base.config.clone() }, ..base.clone() };
    let picked: Vec<usize> =
        (0..rows.len()).filter(|&i| rows[i].measure.measured()).take(GROWN_ROWS).collect();
    let changes: Vec<Option<f64>> = super::pool::pool(
        picked.len(),
        workers,
        |k| {
            let r = &rows[picked[k]];
            let out = format!("{}{suffix}", r.attempt.output.as_deref().unwrap_or_default());
            measure(orig, &out, &r.attempt.cand, &twice, &args.objective).change(&args.objective)
        },
        |_| None,
    );
    for (i, ch) in picked.into_iter().zip(changes) {
        rows[i].doubled = Some(ch);
    }
    sets.iter().map(|b| (b.name.clone(), b.lo, b.lo * 2)).collect()
}

/// `--apply K`: run row K's command with both oracles (apply writes or prints nothing unless
/// they pass) and return its exit code.
fn perform(args: &SuggestArgs, rows: &[Row], k: usize, json: bool) -> u8 {
    let Some(row) = k.checked_sub(1).and_then(|i| rows.get(i)) else {
        let have = match rows.len() {
            0 => "no optimization applies to the file".to_string(),
            1 => "there is 1 suggestion".to_string(),
            n => format!("there are {n} suggestions"),
        };
        return usage_error(
            json,
            &format!("--apply {k}: {have}"),
            "run `alpine-rs suggest FILE` without --apply to see the ranked suggestions",
        );
    };
    let mut argv: Vec<String> = row.argv.clone();
    argv.extend(["--verify".into(), "--validate".into()]);
    argv.extend(["--verify-timeout".into(), args.verify_timeout.to_string()]);
    if let Some(o) = &args.output {
        argv.extend(["-o".into(), o.display().to_string()]);
    } else if args.in_place {
        argv.push("--in-place".into());
    }
    if json {
        argv.extend(["--format".into(), "json".into()]);
    }
    let c = &row.attempt.cand;
    let change = row
        .measure
        .change(&args.objective)
        .map(|x| format!(", {} {:+.1}%", args.objective, x * 100.0));
    eprintln!(
        "suggest: applying #{k}, {} at {}:{}{}: {}",
        c.opt.meta().name,
        c.line,
        c.col,
        change.unwrap_or_default(),
        argv.join(" ")
    );
    match <super::Cli as clap::Parser>::try_parse_from(&argv) {
        Ok(super::Cli { command: super::Command::Apply(a) }) => super::apply::main(a),
        // The command is ours: that it does not parse is an internal error.
        Ok(_) | Err(_) => {
            eprintln!(
                "error[A0099]: internal error: suggestion #{k}'s command does not parse: {}",
                argv.join(" ")
            );
            3
        }
    }
}

/// Exit 2 for a file that does not parse or an original that cannot run.
fn bad_input(json: bool, file: &SourceFile, message: &str, diags: &[Diagnostic]) -> u8 {
    if json {
        print_json(&json!({
            "file": file.name,
            "status": "bad-input",
            "message": message,
            "diagnostics": json_diags(file, diags),
        }));
    } else {
        emit(file, diags);
        eprintln!("error: {}: {message}", file.name);
    }
    2
}
