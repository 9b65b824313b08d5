//! `alpine-rs batch PLAN.yaml`: run optimization jobs over many files.
//!
//! ```yaml
//! jobs:
//!   - name: kernels                  # optional, for the summary
//!     files: ["kernels/**/*.pvl", "extra/one.pvl"]
//!     steps:                         # optional: without steps, each file's own annotations
//!       - { opt: unroll, at: "line:12", factor: 2 }
//!     output: out/                   # or: in_place: true; neither: report only
//!     verify: false
//!     validate: false
//! ```
//!
//! Paths are relative to the plan file. `output: DIR` mirrors the input tree: each file goes to
//! `DIR/<its path below the deepest directory that holds every pattern's fixed prefix>`.
//! The plan is checked completely before anything runs (exit 2, with diagnostics pointing into
//! the YAML). Then files are optimized in parallel (`--jobs N`); the verifier then checks every
//! input/output pair of the `verify` jobs in one JVM, the interpreter compares the pairs of the
//! `validate` jobs (in parallel again), and only then are outputs written, atomically, and only
//! those whose checks passed. A failing file or job never stops the others.
//!
//! Exit codes: 0 every job succeeded; 1 a job failed (a refusal, an error, a failed check);
//! 2 the plan is invalid; 3 nothing failed but a check could not decide.
//!
//! - `plan`: the plan as written (YAML), and its checks (A07xx) into the jobs to run;
//! - `locate`: spans of YAML nodes, for diagnostics that point into the plan;
//! - `run`: running the jobs: parallel optimization, verification, validation, writes;
//! - `report`: the summary table and the JSON objects.

mod locate;
mod plan;
mod report;
mod run;
#[cfg(test)]
mod tests;

use plan::load_plan;
use report::{file_json, print_table};
use run::{run_jobs, FileRun, Outcome};

use super::apply::worst;
use super::common::{json_diags, Format};
use crate::diag::{self, SourceFile};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct BatchArgs {
    /// The plan (YAML).
    pub plan: PathBuf,
    /// Files optimized (and programs verified, in one JVM) at the same time (default: the number
    /// of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Per-query Z3 timeout in milliseconds.
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    /// Silicon time limit per program for `verify` jobs, in seconds (0: none); past it the result
    /// is inconclusive (exit 3).
    #[arg(long = "verify-timeout", default_value_t = crate::viper::DEFAULT_TIMEOUT_S, value_name = "S")]
    pub verify_timeout: u64,
    /// text: diagnostics on stderr and a summary table; json: one JSON object per job per line.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(args: BatchArgs) -> u8 {
    let workers = match super::pool::workers(args.jobs) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let plan = match super::common::read_source(&args.plan) {
        Ok(f) => f,
        Err(e) => {
            let json = serde_json::json!({ "plan": e.file.name, "exit": 2 });
            e.report(args.format, json, false);
            return 2;
        }
    };
    let json = args.format == Format::Json;
    let jobs = match load_plan(&args.plan, &plan.text) {
        Ok(j) => j,
        Err(diags) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "plan": plan.name,
                        "exit": 2,
                        "diagnostics": json_diags(&plan, &diags),
                    })
                );
            } else {
                let choice = if std::io::stderr().is_terminal() {
                    ColorChoice::Auto
                } else {
                    ColorChoice::Never
                };
                diag::render(&mut StandardStream::stderr(choice), &[&plan], &diags);
            }
            return 2;
        }
    };
    let runs = run_jobs(&jobs, &args, workers);
    let mut code = 0u8;
    let mut failed_jobs = 0;
    for (j, rs) in jobs.iter().zip(&runs) {
        let jc = rs.iter().fold(0, |c, r| worst(c, r.code()));
        if jc == 1 {
            failed_jobs += 1;
        }
        code = worst(code, jc);
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "job": j.name,
                    "output": j.output.as_ref().map(|p| p.display().to_string()),
                    "in_place": j.in_place,
                    "ok": jc == 0,
                    "exit": jc,
                    "files": rs.iter().map(file_json).collect::<Vec<_>>(),
                })
            );
        }
    }
    if !json {
        let choice =
            if std::io::stderr().is_terminal() { ColorChoice::Auto } else { ColorChoice::Never };
        let mut err = StandardStream::stderr(choice);
        for r in runs.iter().flatten() {
            for rep in &r.reports {
                diag::render(&mut err, &[&rep.file], &rep.diagnostics);
            }
            if let Some(v) = &r.verify {
                let out_file = SourceFile::new(
                    format!("{} (optimized)", r.input.name),
                    r.output.clone().unwrap_or_default(),
                );
                diag::render(&mut err, &[&out_file], &v.output.diagnostics);
            }
            if let Some(v) = &r.validate {
                if v.verdict != crate::sem::Verdict::Same {
                    eprintln!("{}: {}", r.input.name, v.summary);
                }
            }
        }
        print_table(&jobs, &runs);
        let all: Vec<&FileRun> = runs.iter().flatten().collect();
        let count = |o: Outcome| all.iter().filter(|r| r.outcome == o).count();
        println!(
            "{} job{}, {failed_jobs} failed; {} file{}: {} applied, {} unchanged, {} refused, {} error{}; {} written (*)",
            jobs.len(),
            if jobs.len() == 1 { "" } else { "s" },
            all.len(),
            if all.len() == 1 { "" } else { "s" },
            count(Outcome::Applied),
            count(Outcome::Unchanged),
            count(Outcome::Refused),
            count(Outcome::Error),
            if count(Outcome::Error) == 1 { "" } else { "s" },
            all.iter().filter(|r| r.written.is_some()).count(),
        );
    }
    code
}
