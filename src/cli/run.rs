//! `alpine-rs run FILE`: execute a PVL program with runtime checks (semantics.md §1).

use super::common::{json_diags, Format};
use crate::diag::{to_json, Diagnostic, SourceFile};
use crate::sem::{self, Checks, Config, InputBound, RunOptions, RunResult, Schedule, Status};
use std::path::PathBuf;

/// What `run` and `validate` execute with.
#[derive(clap::Args, Debug, Clone)]
pub struct ExecArgs {
    /// A YAML/JSON input file (repeatable); each adds one input.
    #[arg(long = "input")]
    pub inputs: Vec<PathBuf>,
    /// Global seed for input generation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Comma list from contracts,perms,races,divergence,uniformity (default: all).
    #[arg(long)]
    pub checks: Option<String>,
    /// Split each thread range into blocks of this many threads (barrier scope = block).
    #[arg(long = "block-size")]
    pub block_size: Option<usize>,
    /// Range of a generated input, both ends included (repeatable): `n=1..64`, `this.f=0..3`,
    /// `a.length=32..32`, `|xs|=0..4`.
    #[arg(long = "bound", value_name = "NAME=LO..HI")]
    pub bounds: Vec<InputBound>,
    /// Fix a generated input (repeatable): `--set n=32768` is `--bound n=32768..32768`.
    #[arg(long = "set", value_name = "NAME=V", value_parser = parse_set)]
    pub sets: Vec<InputBound>,
    /// Another file of the same program (repeatable): classes the file uses that live
    /// elsewhere. Its text is joined after the file's, as `verify --program` joins files.
    #[arg(long = "with", value_name = "FILE")]
    pub with: Vec<PathBuf>,
}

impl ExecArgs {
    /// `src` with the `--with` files joined after it (each after a line break).
    pub fn joined(&self, src: &str) -> Result<String, String> {
        let mut out = src.to_string();
        for p in &self.with {
            let t = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            out.push('\n');
            out.push_str(&t);
        }
        Ok(out)
    }

    /// ORIG and OPT read, each with the `--with` files joined (`validate`, `cost`).
    pub fn read_pair(
        &self,
        orig: &std::path::Path,
        opt: &std::path::Path,
    ) -> Result<(String, String), String> {
        let read = |p: &std::path::Path| {
            std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))
                .and_then(|t| self.joined(&t))
        };
        Ok((read(orig)?, read(opt)?))
    }

    /// The checks `--checks` selects and the `--input` files parsed; a bad list or an input
    /// that cannot be read is a usage error, reported, whose exit code is the `Err`.
    pub fn checks_and_inputs(&self, json: bool) -> Result<(Selected, Vec<sem::Input>), u8> {
        let sel =
            parse_checks(self.checks.as_deref()).map_err(|e| usage_error(json, &e, HELP_CHECKS))?;
        // `read_inputs` names the file already.
        let read = |p: &PathBuf| std::fs::read_to_string(p).map_err(|e| e.to_string());
        Ok((sel, read_inputs(json, &self.inputs, self.seed, read)?))
    }

    /// The interpreter's configuration for these flags and the selected checks (blocks,
    /// input bounds; the rest as by default).
    pub fn config(&self, sel: Selected) -> Config {
        Config {
            checks: sel.checks,
            uniformity: sel.uniformity,
            block_size: self.block_size,
            bounds: self.input_bounds(),
            ..Config::default()
        }
    }

    /// The `--bound` and `--set` ranges (a `--set` wins over a `--bound` of the same name).
    pub fn input_bounds(&self) -> Vec<InputBound> {
        let mut v = self.sets.clone();
        v.extend(
            self.bounds.iter().filter(|b| !self.sets.iter().any(|s| s.name == b.name)).cloned(),
        );
        v
    }
}

/// Parse a `--set` value: one integer, not a range.
fn parse_set(s: &str) -> Result<InputBound, String> {
    if s.contains("..") {
        return Err(format!("`{s}`: --set takes one value; use --bound NAME=LO..HI for a range"));
    }
    s.parse()
}

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The PVL file to run.
    pub file: PathBuf,
    /// Entry method (`Class.method` or `method`); default: the unique kernel method, else every
    /// non-pure method.
    #[arg(long)]
    pub entry: Option<String>,
    /// Inputs, seed, checks and blocks (shared with `validate`).
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Number of generated inputs (default 1, or 0 when inputs are given).
    #[arg(long)]
    pub random: Option<usize>,
    /// Cap on lane-statement executions.
    #[arg(long, default_value_t = 100_000_000)]
    pub fuel: u64,
    /// Warp order within a barrier interval: forward, reverse or random:SEED.
    #[arg(long, default_value = "forward", value_parser = parse_schedule)]
    pub schedule: Schedule,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
    /// Count the cost model's metrics (global sectors, shared bank conflicts, divergent warps,
    /// steps; semantics.md §9) per launch and in total. With `--set`, a second run with every
    /// `--set` value doubled shows how each metric grows.
    #[arg(long)]
    pub cost: bool,
    #[command(flatten)]
    pub cost_model: super::cost::CostArgs,
}

/// Parse a `--schedule` value (for clap).
pub fn parse_schedule(s: &str) -> Result<Schedule, String> {
    s.parse()
}

/// The checks `--checks` selects: the four that report errors, and the uniformity lint, which
/// only warns (semantics.md §5.8).
#[derive(Clone, Copy, Debug)]
pub struct Selected {
    pub checks: Checks,
    pub uniformity: bool,
}

/// Parse a `--checks` list.
pub fn parse_checks(s: Option<&str>) -> Result<Selected, String> {
    let all = Selected { checks: Checks::default(), uniformity: true };
    let Some(s) = s else {
        return Ok(all);
    };
    let mut c = Selected {
        checks: Checks { contracts: false, perms: false, races: false, divergence: false },
        uniformity: false,
    };
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match w {
            "contracts" => c.checks.contracts = true,
            "perms" => c.checks.perms = true,
            "races" => c.checks.races = true,
            "divergence" => c.checks.divergence = true,
            "uniformity" => c.uniformity = true,
            "all" => c = all,
            other => return Err(format!("unknown check `{other}`")),
        }
    }
    Ok(c)
}

/// The `--input` files (`read` gives a file's text or why not), parsed with `seed`; one that
/// cannot be read or parsed is a usage error, whose exit code is the `Err`.
pub fn read_inputs(
    json: bool,
    paths: &[PathBuf],
    seed: u64,
    read: impl Fn(&PathBuf) -> Result<String, String>,
) -> Result<Vec<sem::Input>, u8> {
    let mut inputs = Vec::new();
    for p in paths {
        match read(p).and_then(|t| sem::parse_input(&t, seed).map_err(|e| e.to_string())) {
            Ok(i) => inputs.push(i),
            Err(e) => {
                let msg = format!("input {}: {e}", p.display());
                return Err(usage_error(json, &msg, HELP_INPUT));
            }
        }
    }
    Ok(inputs)
}

/// Report a usage problem (exit 2): a JSON object on stdout in JSON mode, a line on stderr
/// otherwise.
pub fn usage_error(json: bool, msg: &str, help: &str) -> u8 {
    let d = Diagnostic::error("R-USAGE", msg).with_help(help);
    if json {
        print_json(&serde_json::json!({
            "status": "bad-input",
            "diagnostics": [to_json(&[], &d)],
        }));
    } else {
        eprint!("{}", crate::diag::render_plain(&[], &[d]));
    }
    2
}

/// Help lines of the usage errors shared by `run` and `validate`.
pub const HELP_READ: &str = "check the path and the file's permissions";
pub const HELP_CHECKS: &str =
    "--checks takes a comma list of contracts, perms, races, divergence, uniformity";
pub const HELP_INPUT: &str =
    "an input file is a YAML or JSON map from parameter names to values (see `alpine-rs run --help`)";

/// Print a JSON document (pretty, deterministic: object keys are sorted).
pub fn print_json(v: &serde_json::Value) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("error: cannot write JSON: {e}"),
    }
}

/// The JSON spelling of a run status (semantics.md §8).
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Error => "error",
        Status::Inconclusive => "inconclusive",
        Status::Infeasible => "infeasible",
        Status::InvalidInput => "invalid-input",
    }
}

fn check_counts(r: &RunResult) -> [usize; 5] {
    let count = |c: &str| r.errors.iter().filter(|d| d.code.starts_with(c)).count();
    [
        count("R-PRE")
            + count("R-POST")
            + count("R-PAR-")
            + count("R-INV-")
            + count("R-INVARIANT")
            + count("R-ASSERT")
            + count("R-BAR-")
            + count("R-LOCK")
            + count("R-THREAD"),
        count("R-PERM-"),
        count("R-RACE"),
        count("R-DIVERGENCE") + count("R-DEADLOCK"),
        count("W-NONUNIFORM"),
    ]
}

/// One run as a JSON object.
pub fn run_json(file: &SourceFile, r: &RunResult, sel: Selected) -> serde_json::Value {
    let checks = sel.checks;
    let [contracts, perms, races, divergence, nonuniform] = check_counts(r);
    let verdict = |on: bool, n: usize| -> serde_json::Value {
        match (on, n) {
            (false, _) => "off".into(),
            (true, 0) => "pass".into(),
            (true, n) => serde_json::json!({ "failed": n }),
        }
    };
    serde_json::json!({
        "method": r.method,
        "input_id": r.input_id,
        "seed": r.input.seed,
        "status": status_name(r.status),
        "input": r.input.to_json(),
        "result": r.ret.as_ref().map(|v| v.to_json()),
        "final_state": r.observables.iter().map(|o| serde_json::json!({
            "path": o.path,
            "value": o.value.to_json(),
            "ghost": o.ghost,
        })).collect::<Vec<_>>(),
        "race": r.race,
        "checks": {
            "contracts": verdict(checks.contracts, contracts),
            "permissions": verdict(checks.perms, perms),
            "races": verdict(checks.races, races),
            "divergence": verdict(checks.divergence, divergence),
            "uniformity": match (sel.uniformity, nonuniform) {
                (false, _) => serde_json::Value::from("off"),
                (true, 0) => "pass".into(),
                (true, n) => serde_json::json!({ "warnings": n }),
            },
        },
        "statements": r.stmts,
        "launches": r.launches,
        "cost": r.cost,
        "diagnostics": json_diags(file, &r.errors),
    })
}

pub fn main(args: RunArgs) -> u8 {
    let json = args.json || args.format == Format::Json;
    let name = args.file.display().to_string();
    let src = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => return usage_error(json, &format!("cannot read {name}: {e}"), HELP_READ),
    };
    let src = match args.exec.joined(&src) {
        Ok(s) => s,
        Err(e) => return usage_error(json, &e, HELP_READ),
    };
    let (sel, inputs) = match args.exec.checks_and_inputs(json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let checks = sel.checks;
    let cost = if args.cost {
        match args.cost_model.config() {
            Ok(c) => Some(c),
            Err(e) => return usage_error(json, &e, super::cost::HELP_COST),
        }
    } else {
        None
    };
    let opts = RunOptions {
        entry: args.entry.clone(),
        random: args.random.unwrap_or(if inputs.is_empty() { 1 } else { 0 }),
        inputs,
        seed: args.exec.seed,
        config: Config {
            checks,
            uniformity: sel.uniformity,
            schedule: args.schedule,
            block_size: args.exec.block_size,
            fuel: args.fuel,
            bounds: args.exec.input_bounds(),
            cost,
            ..Config::default()
        },
    };
    let file = SourceFile::new(name.clone(), src.clone());
    let runs = match sem::run_program(&src, &opts) {
        Ok(r) => r,
        Err(e) => {
            if json {
                print_json(&serde_json::json!({
                    "file": name,
                    "status": "bad-input",
                    "message": e.to_string(),
                    "diagnostics": json_diags(&file, &e.diagnostics()),
                }));
            } else {
                eprint!("{}", sem::render(&name, &src, &e.diagnostics()));
                eprintln!("error: {e}");
            }
            return 2;
        }
    };
    let mut code = 0u8;
    for r in &runs {
        let c = match r.status {
            Status::Ok | Status::Infeasible => 0,
            Status::Error => 1,
            Status::InvalidInput => 2,
            Status::Inconclusive => 3,
        };
        code = crate::codes::combine(code, c);
    }
    // How the costs grow: the same runs with every `--set` size doubled.
    let growth = if args.cost && !args.exec.sets.is_empty() {
        super::cost::doubled_runs(&src, &opts, &args.exec.sets)
    } else {
        None
    };
    if json {
        let mut doc = serde_json::json!({
            "file": name,
            "schedule": args.schedule.to_string(),
            "exit_code": code,
            "runs": runs.iter().map(|r| run_json(&file, r, sel)).collect::<Vec<_>>(),
        });
        if let Some((sets, doubled)) = &growth {
            doc["growth"] = super::cost::growth_json(&runs, doubled, sets);
        }
        print_json(&doc);
        return code;
    }
    for r in &runs {
        let status = match r.status {
            Status::InvalidInput => "input violates precondition",
            s => status_name(s),
        };
        println!("run {} input #{} (seed {}): {status}", r.method, r.input_id, r.input.seed);
        println!("  input: {}", r.input.describe());
        if let Some(v) = &r.ret {
            println!("  result: {v}");
        }
        for o in &r.observables {
            println!("  final {} = {}", o.path, o.value);
        }
        if !r.errors.is_empty() {
            print!("{}", sem::render(&name, &src, &r.errors));
        }
        let [contracts, perms, races, divergence, nonuniform] = check_counts(r);
        let uniformity = match (sel.uniformity, nonuniform) {
            (false, _) => "off".to_string(),
            (true, 0) => "pass".to_string(),
            (true, n) => format!("{n} warned"),
        };
        println!(
            "  checks: contracts {}, permissions {}, races {}, divergence {}, uniformity {uniformity} ({} statements, {} launches)",
            verdict(checks.contracts, contracts),
            verdict(checks.perms, perms),
            verdict(checks.races, races),
            verdict(checks.divergence, divergence),
            r.stmts,
            r.launches
        );
        if let Some(c) = &r.cost {
            print!("{}", indent(&c.render()));
        }
    }
    if let Some((sets, doubled)) = &growth {
        print!("{}", indent(&super::cost::render_growth(&runs, doubled, sets)));
    }
    code
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

fn verdict(on: bool, n: usize) -> String {
    match (on, n) {
        (false, _) => "off".into(),
        (true, 0) => "pass".into(),
        (true, n) => format!("{n} failed"),
    }
}
