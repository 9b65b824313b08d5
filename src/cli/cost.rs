//! `alpine-rs cost ORIG OPT` (semantics.md §9.8): both programs on the same inputs, counted
//! with the cost model, and a verdict per method. Also the cost flags that `run --cost` and
//! `apply --cost` share ([`CostArgs`]) and the tables they print.

use super::common::Format;
use super::run::HELP_READ;
use super::run::{print_json, usage_error, ExecArgs};
use crate::sem::cost::{CostConfig, CostReport, CostVerdict, Counts, Profile, Space, METRICS};
use crate::sem::{self, Config, ValidateOptions, ValidateOutcome, Verdict};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The cost model's settings (semantics.md §9.1, §3.2).
#[derive(clap::Args, Debug, Clone)]
pub struct CostArgs {
    /// Machine profile of the cost model: racuda (default), fermi-l1, or a YAML file
    /// (`base: racuda` then any of warp_size, sector_bytes, banks, bank_width, issue_width).
    #[arg(long, default_value = "racuda", value_name = "NAME|FILE")]
    pub profile: String,
    /// Memory space of the arrays bound to a parameter, field or local (repeatable):
    /// `--space As=shared`. Default: entry arguments and host allocations are global, arrays a
    /// thread allocates are local to it, or shared once its nested threads use them.
    #[arg(long = "space", value_name = "NAME=SPACE")]
    pub spaces: Vec<String>,
}

impl CostArgs {
    pub fn config(&self) -> Result<CostConfig, String> {
        let profile = Profile::load(&self.profile)?;
        let mut spaces = Vec::new();
        for s in &self.spaces {
            let (n, sp) = s
                .split_once('=')
                .ok_or_else(|| format!("`--space {s}`: expected NAME=global|shared|local"))?;
            spaces.push((n.trim().to_string(), sp.trim().parse::<Space>()?));
        }
        Ok(CostConfig { profile, spaces })
    }
}

pub const HELP_COST: &str =
    "--profile takes racuda, fermi-l1 or a YAML file; --space takes NAME=global|shared|local";

#[derive(clap::Args, Debug, Clone)]
pub struct CostCmdArgs {
    /// The original program.
    pub orig: PathBuf,
    /// The optimized program.
    pub opt: PathBuf,
    /// Entry method: `method`, `Class.method`, or `ORIG_NAME:OPT_NAME`; default: every method
    /// whose declaration differs between the files.
    #[arg(long)]
    pub entry: Option<String>,
    /// Inputs, seed, checks, sizes (`--set n=32768`) and blocks (as for `run`).
    #[command(flatten)]
    pub exec: ExecArgs,
    #[command(flatten)]
    pub cost: CostArgs,
    /// Number of generated inputs.
    #[arg(long, default_value_t = 20)]
    pub random: usize,
    /// The headline metric, whose verdict comes first: sectors, conflicts, divwarps, steps or
    /// time (T = W/P + S).
    #[arg(long, default_value = "time", value_parser = ["sectors", "conflicts", "divwarps", "steps", "time"])]
    pub objective: String,
    /// Exit 1 when the headline metric regresses.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Input/output map for a changed signature (as for `validate`).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

/// The comparison of one method (semantics.md §9.8 steps 3–5).
#[derive(Clone, Debug, serde::Serialize)]
pub struct MethodCost {
    pub method: String,
    pub inputs: usize,
    pub orig: Counts,
    pub opt: Counts,
    pub orig_time: f64,
    pub opt_time: f64,
    /// The Pareto verdict on the sums.
    pub verdict: CostVerdict,
    /// The headline metric's verdict.
    pub objective: CostVerdict,
    /// Per-input Pareto verdicts: improved, regressed, trade-off, unchanged.
    pub per_input: [usize; 4],
    /// Why there is nothing to compare, or why the optimization is invalid.
    pub note: Option<String>,
}

/// Sum the costs of `out`'s inputs and judge them (`objective`: the headline metric).
pub fn judge(method: &str, out: &ValidateOutcome, objective: &str) -> MethodCost {
    let mut m = MethodCost {
        method: method.to_string(),
        inputs: out.costs.len(),
        orig: Counts::default(),
        opt: Counts::default(),
        orig_time: 0.0,
        opt_time: 0.0,
        verdict: CostVerdict::Unchanged,
        objective: CostVerdict::Unchanged,
        per_input: [0; 4],
        note: None,
    };
    for (_, a, b) in &out.costs {
        m.orig.add(&a.total);
        m.opt.add(&b.total);
        m.orig_time += a.time;
        m.opt_time += b.time;
        let k = match CostVerdict::of(&a.total, &b.total) {
            CostVerdict::Improved => 0,
            CostVerdict::Regressed => 1,
            CostVerdict::TradeOff => 2,
            _ => 3,
        };
        m.per_input[k] += 1;
    }
    m.verdict = CostVerdict::of(&m.orig, &m.opt);
    let pick = |c: &Counts, t: f64| match objective {
        "sectors" => c.sectors as f64,
        "conflicts" => c.conflicts as f64,
        "divwarps" => c.divwarps as f64,
        "steps" => c.steps as f64,
        _ => t,
    };
    m.objective = CostVerdict::of_metric(pick(&m.orig, m.orig_time), pick(&m.opt, m.opt_time));
    if out.verdict == Verdict::Different {
        m.verdict = CostVerdict::InvalidOptimization;
        m.objective = CostVerdict::InvalidOptimization;
        m.note = Some(
            out.mismatch
                .as_ref()
                .map(|x| {
                    format!("OPT behaves differently: {} orig {} vs opt {}", x.path, x.orig, x.opt)
                })
                .unwrap_or_else(|| "OPT behaves differently".into()),
        );
    } else if m.inputs == 0 {
        m.note = Some(out.reason.clone().unwrap_or_else(|| "no input ran on both programs".into()));
    }
    m
}

/// The table of one method's comparison.
pub fn render_method(m: &MethodCost, objective: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}: {} inputs", m.method, m.inputs);
    if let Some(n) = &m.note {
        let _ = writeln!(s, "  {n}");
    }
    if m.inputs > 0 {
        let _ = writeln!(
            s,
            "  {:<10} {:>12} {:>12} {:>12} {:>8}",
            "metric", "orig", "opt", "delta", "ratio"
        );
        let (a, b) = (m.orig.as_array(), m.opt.as_array());
        for (i, name) in METRICS.iter().enumerate() {
            let _ = writeln!(s, "{}", row(name, a[i] as f64, b[i] as f64));
        }
        let _ = writeln!(s, "{}", row("time", m.orig_time, m.opt_time));
        let [i, r, t, u] = m.per_input;
        let _ = writeln!(
            s,
            "  verdict: {} on {objective}; {} over all metrics (inputs: {i} improved, {r} regressed, {t} trade-off, {u} unchanged)",
            m.objective.name(),
            m.verdict.name()
        );
    } else if m.verdict == CostVerdict::InvalidOptimization {
        let _ = writeln!(s, "  verdict: invalid-optimization");
    }
    s
}

fn row(name: &str, a: f64, b: f64) -> String {
    let ratio = if a == 0.0 {
        if b == 0.0 {
            "1.00".to_string()
        } else {
            "inf".to_string()
        }
    } else {
        format!("{:.2}", b / a)
    };
    let fmt = |x: f64| if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x:.2}") };
    format!("  {:<10} {:>12} {:>12} {:>12} {:>8}", name, fmt(a), fmt(b), fmt(b - a), ratio)
}

/// The launch tables of ORIG and OPT on the first compared input, matched by label, then by
/// order (semantics.md §9.8 step 6).
pub fn render_launches(a: &CostReport, b: &CostReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  launches (first input):");
    let mut used = vec![false; b.sites.len()];
    for x in &a.sites {
        let j = (0..b.sites.len())
            .find(|&j| !used[j] && b.sites[j].label == x.label)
            .or_else(|| (0..b.sites.len()).find(|&j| !used[j]));
        let other = j.map(|j| {
            used[j] = true;
            &b.sites[j]
        });
        let o = other.map_or("-".to_string(), |y| {
            format!("{} (line {}): {} warps, {} steps", y.label, y.line, y.warps, y.counts.steps)
        });
        let _ = writeln!(
            s,
            "    {} (line {}): {} warps, {} steps  ->  {o}",
            x.label, x.line, x.warps, x.counts.steps
        );
    }
    for (j, y) in b.sites.iter().enumerate().filter(|(j, _)| !used[*j]) {
        let _ = j;
        let _ = writeln!(
            s,
            "    -  ->  {} (line {}): {} warps, {} steps",
            y.label, y.line, y.warps, y.counts.steps
        );
    }
    s
}

/// `apply --cost`: input and output on a few generated inputs, judged per compared method.
pub fn cost_pair(orig: &str, opt: &str, entry: Option<&str>, cost: CostConfig) -> Vec<MethodCost> {
    let opts = ValidateOptions {
        entry: entry.map(str::to_string),
        random: 5,
        config: Config { cost: Some(cost), ..Config::default() },
        ..crate::validate_options()
    };
    let out = sem::validate(orig, opt, &opts);
    outcomes(&out, entry).iter().map(|(m, o)| judge(m, o, "time")).collect()
}

/// One outcome per compared method: the per-method rows, or the one comparison of `--entry`.
pub fn outcomes<'a>(
    out: &'a ValidateOutcome,
    entry: Option<&str>,
) -> Vec<(String, &'a ValidateOutcome)> {
    let mut per: Vec<(String, &ValidateOutcome)> = Vec::new();
    if out.methods.is_empty() {
        per.push((entry.unwrap_or("entry").to_string(), out));
    }
    for r in &out.methods {
        if let Some(o) = &r.outcome {
            per.push((r.method.clone(), o));
        }
    }
    per
}

pub fn main(args: CostCmdArgs) -> u8 {
    let json = args.json || args.format == Format::Json;
    let (orig, opt) = match args.exec.read_pair(&args.orig, &args.opt) {
        Ok(x) => x,
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
    let profile = cost.profile.name.clone();
    let opts = ValidateOptions {
        entry: args.entry.clone(),
        random: args.random,
        seed: args.exec.seed,
        inputs,
        config: Config { cost: Some(cost), ..args.exec.config(sel) },
        adapter: args.adapter.clone(),
        ..crate::validate_options()
    };
    let out = sem::validate(&orig, &opt, &opts);
    if out.verdict == Verdict::BadInput {
        let (name, src) = if out.diag_file == 0 { (&args.orig, &orig) } else { (&args.opt, &opt) };
        if json {
            print_json(&serde_json::json!({
                "status": "bad-input",
                "message": out.summary,
            }));
        } else {
            eprint!("{}", sem::render(&name.display().to_string(), src, &out.diagnostics));
            eprintln!("error: {}", out.summary);
        }
        return 2;
    }
    let per = outcomes(&out, args.entry.as_deref());
    let judged: Vec<MethodCost> = per.iter().map(|(m, o)| judge(m, o, &args.objective)).collect();
    let invalid = judged.iter().any(|m| m.verdict == CostVerdict::InvalidOptimization);
    let regressed = judged.iter().any(|m| m.objective == CostVerdict::Regressed);
    let code = if invalid || (args.fail_on_regression && regressed) {
        1
    } else if judged.iter().all(|m| m.inputs == 0) {
        3
    } else {
        0
    };
    if json {
        let first = per.iter().find_map(|(_, o)| o.costs.first());
        print_json(&serde_json::json!({
            "orig": args.orig.display().to_string(),
            "opt": args.opt.display().to_string(),
            "profile": profile,
            "objective": args.objective,
            "exit_code": code,
            "methods": judged,
            "first_input": first.map(|(id, a, b)| serde_json::json!({
                "input_id": id, "orig": a, "opt": b,
            })),
        }));
        return code;
    }
    println!(
        "cost {} -> {} (profile {profile}, objective {})",
        args.orig.display(),
        args.opt.display(),
        args.objective
    );
    for ((_, o), m) in per.iter().zip(&judged) {
        print!("{}", render_method(m, &args.objective));
        if let Some((_, a, b)) = o.costs.first() {
            print!("{}", render_launches(a, b));
        }
    }
    code
}

/// A `--set` size and its double: (name, value, doubled value).
pub type Doubled = (String, i64, i64);

/// Every `--set` value doubled, the other bounds kept.
pub fn doubled_bounds(
    sets: &[sem::InputBound],
    bounds: &[sem::InputBound],
) -> Vec<sem::InputBound> {
    let mut out: Vec<sem::InputBound> = sets
        .iter()
        .map(|b| sem::InputBound { name: b.name.clone(), lo: b.lo * 2, hi: b.hi * 2 })
        .collect();
    out.extend(bounds.iter().filter(|b| !sets.iter().any(|s| s.name == b.name)).cloned());
    out
}

/// The runs of `opts` again with every `--set` value doubled (the other bounds kept): the
/// doubled sizes and the runs, or `None` when they cannot run.
pub fn doubled_runs(
    src: &str,
    opts: &sem::RunOptions,
    sets: &[sem::InputBound],
) -> Option<(Vec<Doubled>, Vec<sem::RunResult>)> {
    let bounds = doubled_bounds(sets, &opts.config.bounds);
    let o2 = sem::RunOptions { config: Config { bounds, ..opts.config.clone() }, ..opts.clone() };
    let runs = sem::run_program(src, &o2).ok()?;
    let sizes = sets.iter().map(|b| (b.name.clone(), b.lo, b.lo * 2)).collect();
    Some((sizes, runs))
}

/// Per metric: the value at the `--set` sizes, at the doubled sizes, and the growth per 32 of
/// the first size ("sectors: 12 per 32 of n").
fn growth_rows(a: &CostReport, b: &CostReport, unit: i64) -> Vec<(&'static str, u64, u64, f64)> {
    let (x, y) = (a.total.as_array(), b.total.as_array());
    METRICS
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let per = if unit > 0 { (y[i] as f64 - x[i] as f64) * 32.0 / unit as f64 } else { 0.0 };
            (*m, x[i], y[i], per)
        })
        .collect()
}

pub fn render_growth(
    runs: &[sem::RunResult],
    doubled: &[sem::RunResult],
    sizes: &[Doubled],
) -> String {
    let mut s = String::new();
    let what: Vec<String> = sizes.iter().map(|(n, a, b)| format!("{n} = {a} -> {b}")).collect();
    let (unit_name, unit) = sizes.first().map_or(("n", 0), |(n, a, _)| (n.as_str(), *a));
    for (r1, r2) in runs.iter().zip(doubled) {
        let (Some(a), Some(b)) = (&r1.cost, &r2.cost) else {
            let _ = writeln!(
                s,
                "growth of {}: the doubled run has no cost ({})",
                r1.method,
                super::run::status_name(r2.status)
            );
            continue;
        };
        let _ = writeln!(s, "growth of {} when the sizes double ({}):", r1.method, what.join(", "));
        for (m, x, y, per) in growth_rows(a, b, unit) {
            let _ = writeln!(
                s,
                "  {m:<10} {x:>10} -> {y:>10}   {} per 32 of {unit_name}",
                fmt_per(per)
            );
        }
    }
    s
}

fn fmt_per(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub fn growth_json(
    runs: &[sem::RunResult],
    doubled: &[sem::RunResult],
    sizes: &[Doubled],
) -> serde_json::Value {
    let unit = sizes.first().map_or(0, |s| s.1);
    let rows: Vec<serde_json::Value> = runs
        .iter()
        .zip(doubled)
        .filter_map(|(r1, r2)| {
            let (a, b) = (r1.cost.as_ref()?, r2.cost.as_ref()?);
            let m: serde_json::Map<String, serde_json::Value> = growth_rows(a, b, unit)
                .into_iter()
                .map(|(m, x, y, per)| {
                    (m.to_string(), serde_json::json!({"at": x, "doubled": y, "per_32": per}))
                })
                .collect();
            Some(serde_json::json!({"method": r1.method, "metrics": m}))
        })
        .collect();
    serde_json::json!({
        "sizes": sizes.iter().map(|(n, a, b)| serde_json::json!({"name": n, "at": a, "doubled": b})).collect::<Vec<_>>(),
        "methods": rows,
    })
}
