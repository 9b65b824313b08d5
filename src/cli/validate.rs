//! `alpine-rs validate ORIG OPT`: compare two programs on the same inputs (semantics.md §11).

use super::common::json_diags;
use super::common::Format;
use super::run::{print_json, usage_error, ExecArgs, HELP_READ};
use crate::diag::SourceFile;
use crate::sem::{self, ValidateOptions, Verdict};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct ValidateArgs {
    /// The original program.
    pub orig: PathBuf,
    /// The optimized program.
    pub opt: PathBuf,
    /// Entry method: `method`, `Class.method`, or `ORIG_NAME:OPT_NAME`; default: every method
    /// whose declaration differs between the files (every runnable method when none does),
    /// each validated on its own, with a per-method table.
    #[arg(long)]
    pub entry: Option<String>,
    /// Inputs, seed, checks and blocks (as for `run`).
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Number of generated inputs.
    #[arg(long, default_value_t = 20)]
    pub random: usize,
    /// Rerun each race-free run under K extra random warp schedules; a result that changes is
    /// reported (a race the detector missed).
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub schedules: usize,
    /// Also compare ghost state (`seq`/`set`/`bag` values, `given` parameters).
    #[arg(long)]
    pub compare_ghost: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
    /// Input/output map for a changed signature, e.g. `matrix_lin m R rows cols` (several
    /// separated by `;`); default: derived from ORIG's `gpuopt` annotations.
    #[arg(long)]
    pub adapter: Option<String>,
    /// Seconds one method may take, all its runs together; runs still going then are
    /// inconclusive (out of fuel). 0: no limit but the fuel.
    #[arg(long, value_name = "SECONDS", default_value_t = sem::validate::DEFAULT_METHOD_SECS)]
    pub method_time: u64,
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Same => "equivalent",
        Verdict::Different => "different",
        Verdict::BadInput => "bad-input",
        Verdict::Inconclusive => "inconclusive",
    }
}

pub fn main(args: ValidateArgs) -> u8 {
    let json = args.json || args.format == Format::Json;
    // The `--with` files complete both programs.
    let (orig, opt) = match args.exec.read_pair(&args.orig, &args.opt) {
        Ok(x) => x,
        Err(e) => return usage_error(json, &e, HELP_READ),
    };
    let (sel, inputs) = match args.exec.checks_and_inputs(json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let opts = ValidateOptions {
        entry: args.entry.clone(),
        random: args.random,
        seed: args.exec.seed,
        inputs,
        config: args.exec.config(sel),
        schedules: args.schedules,
        compare_ghost: args.compare_ghost,
        adapter: args.adapter.clone(),
        matrix_layout: crate::transforms::registry::matrix_layout(),
        method_time: (args.method_time > 0)
            .then(|| std::time::Duration::from_secs(args.method_time)),
        memo: None,
    };
    let out = sem::validate(&orig, &opt, &opts);
    let code = if out.verdict == Verdict::BadInput { 2 } else { out.verdict.exit_code() };
    let (name, src) = if out.diag_file == 0 {
        (args.orig.display().to_string(), &orig)
    } else {
        (args.opt.display().to_string(), &opt)
    };
    if json {
        let file = SourceFile::new(name, src.clone());
        let mismatch = out.mismatch.as_ref().map(sem::matching::mismatch_json);
        print_json(&serde_json::json!({
            "orig": args.orig.display().to_string(),
            "opt": args.opt.display().to_string(),
            "verdict": verdict_name(out.verdict),
            "exit_code": code,
            "inputs": {
                "equivalent": out.equivalent,
                "skipped": out.skipped,
                "void": out.void_,
                "orig_faulty": out.orig_faulty,
                "inconclusive": out.inconclusive,
                "schedule_dependent": out.schedule_dependent,
            },
            "schedules": args.schedules,
            "mismatch": mismatch,
            "reason": out.reason,
            "methods": sem::matching::table_json(&out.methods),
            "diagnostics": json_diags(&file, &out.diagnostics),
            "summary": out.summary,
        }));
        return code;
    }
    if !out.diagnostics.is_empty() {
        print!("{}", sem::render(&name, src, &out.diagnostics));
    }
    if !out.methods.is_empty() {
        print!("{}", sem::matching::table(&out.methods));
        println!("{}", out.summary);
        return code;
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
    if let Some(r) = &out.reason {
        println!("  reason: {r}");
    }
    code
}
