//! `alpine-rs run FILE`: execute a PVL program with runtime checks (semantics.md §1).

use crate::sem::{self, Checks, Config, RunOptions, Status};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The PVL file to run.
    pub file: PathBuf,
    /// Entry method (`Class.method` or `method`); default: the unique kernel method, else every
    /// non-pure method.
    #[arg(long)]
    pub entry: Option<String>,
    /// A YAML/JSON input file (repeatable); each adds one input.
    #[arg(long = "input")]
    pub inputs: Vec<PathBuf>,
    /// Number of generated inputs (default 1, or 0 when inputs are given).
    #[arg(long)]
    pub random: Option<usize>,
    /// Global seed for input generation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Comma list from contracts,perms,races,divergence,uniformity (default: all).
    #[arg(long)]
    pub checks: Option<String>,
    /// Split each thread range into blocks of this many threads (barrier scope = block).
    #[arg(long = "block-size")]
    pub block_size: Option<usize>,
    /// Cap on lane-statement executions.
    #[arg(long, default_value_t = 100_000_000)]
    pub fuel: u64,
}

/// Parse a `--checks` list.
pub fn parse_checks(s: Option<&str>) -> Result<Checks, String> {
    let Some(s) = s else {
        return Ok(Checks::default());
    };
    let mut c = Checks {
        contracts: false,
        perms: false,
        races: false,
        divergence: false,
    };
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match w {
            "contracts" => c.contracts = true,
            "perms" => c.perms = true,
            "races" => c.races = true,
            "divergence" => c.divergence = true,
            // Accepted for compatibility; the uniformity lint is not implemented yet.
            "uniformity" => {}
            "all" => c = Checks::default(),
            other => return Err(format!("unknown check `{other}`")),
        }
    }
    Ok(c)
}

pub fn main(args: RunArgs) -> u8 {
    let name = args.file.display().to_string();
    let src = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return 2;
        }
    };
    let checks = match parse_checks(args.checks.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut inputs = Vec::new();
    for p in &args.inputs {
        let parsed = std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| sem::parse_input(&t, args.seed).map_err(|e| e.to_string()));
        match parsed {
            Ok(i) => inputs.push(i),
            Err(e) => {
                eprintln!("error: input {}: {e}", p.display());
                return 2;
            }
        }
    }
    let opts = RunOptions {
        entry: args.entry.clone(),
        random: args.random.unwrap_or(if inputs.is_empty() { 1 } else { 0 }),
        inputs,
        seed: args.seed,
        config: Config {
            checks,
            block_size: args.block_size,
            fuel: args.fuel,
            ..Config::default()
        },
    };
    let runs = match sem::run_program(&src, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprint!("{}", sem::render(&name, &src, &e.diagnostics()));
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut code = 0u8;
    for r in &runs {
        let status = match r.status {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Inconclusive => "inconclusive",
            Status::Infeasible => "infeasible",
            Status::InvalidInput => "input violates precondition",
        };
        println!(
            "run {} input #{} (seed {}): {status}",
            r.method, r.input_id, r.input.seed
        );
        println!("  input: {}", r.input.describe());
        if let Some(v) = &r.ret {
            println!("  result: {v}");
        }
        for (p, v) in &r.observables {
            println!("  final {p} = {v}");
        }
        if !r.errors.is_empty() {
            print!("{}", sem::render(&name, &src, &r.errors));
        }
        let count = |c: &str| r.errors.iter().filter(|d| d.code.starts_with(c)).count();
        println!(
            "  checks: contracts {}, permissions {}, races {}, divergence {} ({} statements, {} launches)",
            verdict(checks.contracts, count("R-PRE") + count("R-POST") + count("R-PAR-") + count("R-INV") + count("R-ASSERT") + count("R-BAR-")),
            verdict(checks.perms, count("R-PERM")),
            verdict(checks.races, count("R-RACE")),
            verdict(checks.divergence, count("R-DIVERGENCE") + count("R-DEADLOCK")),
            r.stmts,
            r.launches
        );
        let c = match r.status {
            Status::Ok | Status::Infeasible => 0,
            Status::Error => 1,
            Status::InvalidInput => 2,
            Status::Inconclusive => 3,
        };
        code = merge(code, c);
    }
    code
}

fn verdict(on: bool, n: usize) -> String {
    match (on, n) {
        (false, _) => "off".into(),
        (true, 0) => "pass".into(),
        (true, n) => format!("{n} failed"),
    }
}

/// Combine exit codes: an error (1) dominates, then bad input (2), then inconclusive (3).
fn merge(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        1 => 3,
        2 => 2,
        3 => 1,
        _ => 0,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}
