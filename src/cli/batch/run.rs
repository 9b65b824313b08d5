//! Running the checked jobs: files optimized in parallel (one fresh thread each), the verify
//! jobs' pairs through one JVM, the validate jobs' pairs compared in parallel, and the outputs
//! whose checks passed written atomically.

use super::plan::{Input, Job};
use super::BatchArgs;

use crate::cli::apply::{
    build_step, validate_code, validate_pair, worst, write_atomic, VerifyPair,
};
use crate::cli::pool::pool;
use crate::diag::{Diagnostic, SourceFile};
use crate::front::ParseOptions;
use crate::transforms::driver::{apply as drive, CliStep, DriverOptions, Report};
use crate::transforms::params::Spelling;
use crate::viper::{self, Verdict, VerifyOptions, VerifyReport};
use std::path::PathBuf;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Running

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Outcome {
    Applied,
    Unchanged,
    Refused,
    Error,
}

impl Outcome {
    pub(super) fn name(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Unchanged => "unchanged",
            Outcome::Refused => "refused",
            Outcome::Error => "error",
        }
    }
}

pub(super) struct FileRun {
    pub(super) input: SourceFile,
    pub(super) output: Option<String>,
    pub(super) outcome: Outcome,
    pub(super) applied: usize,
    pub(super) refused: usize,
    pub(super) reports: Vec<Report>,
    pub(super) time: Duration,
    pub(super) verify: Option<VerifyPair>,
    pub(super) validate: Option<crate::sem::ValidateOutcome>,
    pub(super) written: Option<PathBuf>,
}

impl FileRun {
    fn failed(input: SourceFile, d: Diagnostic, time: Duration) -> FileRun {
        FileRun {
            reports: vec![Report { file: input.clone(), diagnostics: vec![d] }],
            input,
            output: None,
            outcome: Outcome::Error,
            applied: 0,
            refused: 0,
            time,
            verify: None,
            validate: None,
            written: None,
        }
    }

    /// The file's exit status by the project's one rule: the registered class of its errors (1
    /// a refusal, 2 bad input such as a file that does not parse, 3 a bug of ours or no
    /// decision), combined with the checks' verdicts.
    pub(super) fn code(&self) -> u8 {
        let mut c = crate::codes::exit_code(self.reports.iter().flat_map(|r| &r.diagnostics));
        if c == 0 && matches!(self.outcome, Outcome::Refused | Outcome::Error) {
            c = 1;
        }
        if let Some(v) = &self.verify {
            c = worst(c, v.exit_code());
        }
        if let Some(v) = &self.validate {
            c = worst(c, validate_code(v.verdict));
        }
        c
    }
}

/// Test hook: `ALPINE_RS_TEST_PANIC=NAME` makes the optimization of every input whose file name
/// is NAME panic, so that `tests/cli_batch.rs` can check that a panic stays with its file (A0099)
/// without a real bug to trigger it. Debug builds only (those `cargo test` runs): a release binary
/// has no such switch.
#[cfg(debug_assertions)]
fn test_panic_hook(input: &Input) {
    if let Some(name) = std::env::var_os("ALPINE_RS_TEST_PANIC") {
        if input.path.file_name() == Some(name.as_os_str()) {
            panic!("ALPINE_RS_TEST_PANIC: a panic while optimizing `{}`", input.shown);
        }
    }
}

/// Optimize one file (the parallel part).
fn optimize(job: &Job, input: &Input, z3_timeout: u32) -> FileRun {
    let t0 = Instant::now();
    #[cfg(debug_assertions)]
    test_panic_hook(input);
    let text = match std::fs::read(&input.path).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            return FileRun::failed(
                SourceFile::new(&input.shown, ""),
                Diagnostic::error("A0001", format!("`{}` is not valid UTF-8", input.shown))
                    .with_help("PVL files are UTF-8 text"),
                t0.elapsed(),
            )
        }
        Err(e) => {
            return FileRun::failed(
                SourceFile::new(&input.shown, ""),
                Diagnostic::error("A0000", format!("cannot read `{}`: {e}", input.shown))
                    .with_help("check the path and its permissions"),
                t0.elapsed(),
            )
        }
    };
    let file = SourceFile::new(&input.shown, text);
    let popts = ParseOptions { dialect: job.dialect };
    let dialect = crate::front::parse(&file.text, &popts).dialect;
    let steps: Result<Vec<CliStep>, String> = job
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            build_step(s, Spelling::Key, dialect)
                .map_err(|e| format!("step {}: {}", i + 1, e.message(&s.opt, |f| format!("`{f}`"))))
        })
        .collect();
    let steps = match steps {
        Ok(s) => s,
        Err(m) => {
            return FileRun::failed(
                file,
                Diagnostic::error("A0703", m).with_help(format!(
                    "the file is read as PVL {}; expressions in steps must parse in it",
                    dialect.name()
                )),
                t0.elapsed(),
            )
        }
    };
    let opts = DriverOptions {
        parse: popts,
        timeout_ms: z3_timeout,
        keep_going: job.keep_going,
        steps,
        overrides: Vec::new(),
    };
    let res = drive(&file.name, &file.text, &opts);
    let outcome = if res.bad_input {
        Outcome::Error
    } else if res.refused > 0 {
        Outcome::Refused
    } else if res.output == file.text {
        Outcome::Unchanged
    } else {
        Outcome::Applied
    };
    let emit = !res.bad_input && (res.refused == 0 || job.keep_going);
    FileRun {
        output: emit.then(|| res.output.clone()),
        outcome,
        applied: res.applied,
        refused: res.refused,
        reports: res.reports,
        time: t0.elapsed(),
        input: file,
        verify: None,
        validate: None,
        written: None,
    }
}

fn internal_error(input: &Input) -> FileRun {
    FileRun::failed(
        SourceFile::new(&input.shown, ""),
        Diagnostic::internal(format!("a panic while processing `{}`", input.shown))
            .with_note("no output was written for this file"),
        Duration::ZERO,
    )
}

pub(super) fn run_jobs(jobs: &[Job], args: &BatchArgs, workers: usize) -> Vec<Vec<FileRun>> {
    let units: Vec<(usize, usize)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(ji, j)| (0..j.files.len()).map(move |fi| (ji, fi)))
        .collect();
    let mut runs: Vec<FileRun> = pool(
        units.len(),
        workers,
        |i| {
            let (ji, fi) = units[i];
            optimize(&jobs[ji], &jobs[ji].files[fi], args.z3_timeout)
        },
        |i| internal_error(&jobs[units[i].0].files[units[i].1]),
    );
    // Verification: every pair of the verify jobs through one JVM, several at a time.
    let to_verify: Vec<usize> =
        (0..units.len()).filter(|&i| jobs[units[i].0].verify && runs[i].output.is_some()).collect();
    if !to_verify.is_empty() {
        let mut srcs = Vec::new();
        for &i in &to_verify {
            let r = &runs[i];
            srcs.push(r.input.clone());
            srcs.push(SourceFile::new(
                format!("{} (optimized)", r.input.name),
                r.output.clone().unwrap_or_default(),
            ));
        }
        // One JVM for all, `workers` programs at a time.
        let opts = VerifyOptions {
            timeout_s: args.verify_timeout,
            jobs: workers,
            ..VerifyOptions::default()
        };
        let mut reports = viper::verify_each(&srcs, &opts).into_iter();
        let mut next = || {
            reports.next().unwrap_or(VerifyReport {
                verdict: Verdict::Crash,
                diagnostics: vec![Diagnostic::error("E-BACKEND", "no verdict came back")],
                time: Duration::ZERO,
            })
        };
        for &i in &to_verify {
            let (input, output) = (next(), next());
            runs[i].verify = Some(VerifyPair { input, output });
        }
    }
    // Validation, in parallel.
    let to_validate: Vec<usize> = (0..units.len())
        .filter(|&i| jobs[units[i].0].validate && runs[i].output.is_some())
        .collect();
    let outcomes = pool(
        to_validate.len(),
        workers,
        |k| {
            let i = to_validate[k];
            let r = &runs[i];
            Some(validate_pair(
                &r.input.text,
                r.output.as_deref().unwrap_or_default(),
                jobs[units[i].0].entry.as_deref(),
            ))
        },
        |_| None,
    );
    for (k, o) in outcomes.into_iter().enumerate() {
        let i = to_validate[k];
        match o {
            Some(o) => runs[i].validate = Some(o),
            None => {
                runs[i].outcome = Outcome::Error;
                let file = runs[i].input.clone();
                runs[i].reports.push(Report {
                    file,
                    diagnostics: vec![Diagnostic::internal("a panic while validating")
                        .with_note("no output was written for this file")],
                });
            }
        }
    }
    // Writing: only outputs whose checks passed.
    for (i, r) in runs.iter_mut().enumerate() {
        let (ji, fi) = units[i];
        let Some(target) = &jobs[ji].files[fi].target else {
            continue;
        };
        let Some(out) = &r.output else { continue };
        if r.code() != 0 && r.outcome != Outcome::Refused {
            r.reports.push(Report {
                file: r.input.clone(),
                diagnostics: vec![Diagnostic::note(
                    "A0709",
                    format!("`{}` was not written because a check did not pass", target.display()),
                )],
            });
            continue;
        }
        if jobs[ji].in_place && r.outcome == Outcome::Unchanged {
            continue;
        }
        let res = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p),
            _ => Ok(()),
        }
        .and_then(|_| write_atomic(target, out));
        match res {
            Ok(()) => r.written = Some(target.clone()),
            Err(e) => {
                r.outcome = Outcome::Error;
                r.reports.push(Report {
                    file: r.input.clone(),
                    diagnostics: vec![Diagnostic::error(
                        "A0000",
                        format!("cannot write `{}`: {e}", target.display()),
                    )
                    .with_help("nothing was written for this file (writes are atomic)")],
                });
            }
        }
    }
    let mut by_job: Vec<Vec<FileRun>> = jobs.iter().map(|_| Vec::new()).collect();
    for (r, (ji, _)) in runs.into_iter().zip(units) {
        by_job[ji].push(r);
    }
    by_job
}
