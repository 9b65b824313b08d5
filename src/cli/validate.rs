//! `alpine-rs validate ORIG OPT`: compare two programs on the same inputs (semantics.md §11).

use crate::sem::{self, Config, ValidateOptions, Verdict};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct ValidateArgs {
    /// The original program.
    pub orig: PathBuf,
    /// The optimized program.
    pub opt: PathBuf,
    /// Entry method: `method`, `Class.method`, or `ORIG_NAME:OPT_NAME`.
    #[arg(long)]
    pub entry: Option<String>,
    /// A YAML/JSON input file (repeatable).
    #[arg(long = "input")]
    pub inputs: Vec<PathBuf>,
    /// Number of generated inputs.
    #[arg(long, default_value_t = 20)]
    pub random: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Comma list of checks (see `run --checks`).
    #[arg(long)]
    pub checks: Option<String>,
    #[arg(long = "block-size")]
    pub block_size: Option<usize>,
    /// Input/output map for a changed signature, e.g. `matrix_lin m R rows cols` (several
    /// separated by `;`); default: derived from ORIG's `gpuopt` annotations.
    #[arg(long)]
    pub adapter: Option<String>,
}

pub fn main(args: ValidateArgs) -> u8 {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let (orig, opt) = match (read(&args.orig), read(&args.opt)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let checks = match super::run::parse_checks(args.checks.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut inputs = Vec::new();
    for p in &args.inputs {
        match read(p).and_then(|t| sem::parse_input(&t, args.seed).map_err(|e| e.to_string())) {
            Ok(i) => inputs.push(i),
            Err(e) => {
                eprintln!("error: input {}: {e}", p.display());
                return 2;
            }
        }
    }
    let opts = ValidateOptions {
        entry: args.entry.clone(),
        random: args.random,
        seed: args.seed,
        inputs,
        config: Config {
            checks,
            block_size: args.block_size,
            ..Config::default()
        },
        adapter: args.adapter.clone(),
    };
    let out = sem::validate(&orig, &opt, &opts);
    if !out.diagnostics.is_empty() {
        let (name, src) = if out.diag_file == 0 {
            (args.orig.display().to_string(), &orig)
        } else {
            (args.opt.display().to_string(), &opt)
        };
        print!("{}", sem::render(&name, src, &out.diagnostics));
    }
    if let Some(m) = &out.mismatch {
        println!(
            "mismatch on input #{} (seed {}): {}",
            m.input_id,
            m.input.seed,
            m.input.describe()
        );
        match m.index {
            Some(i) => println!(
                "  first difference at {}[{i}]: orig {} vs opt {} ({} elements differ)",
                m.path, m.orig, m.opt, m.count
            ),
            None => println!("  {}: orig {} vs opt {}", m.path, m.orig, m.opt),
        }
    }
    println!("{}", out.summary);
    if out.verdict == Verdict::BadInput {
        return 2;
    }
    out.verdict.exit_code()
}
