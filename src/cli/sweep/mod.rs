//! `alpine-rs sweep FILE... [--oracles] [--json]`: try every optimization the registry admits at
//! every site of the files, with a few parameter choices each (issue 22), and report what
//! applied, what was refused (with the diagnostic codes) and what broke.
//!
//! Each attempt goes through the same in-process driver as `apply --opt KIND --at line:L:C`,
//! on a fresh thread (a fresh Z3 context, as a separate `apply` would have), inside
//! `catch_unwind`: a panic is one attempt's internal error, not the end of the sweep. With
//! `--oracles`, every original that has an applied attempt is verified once, and every applied
//! output of an original that verifies is verified (one Silicon JVM for the whole sweep) and
//! validated against its original (the interpreter, as `apply --validate` does). An output that
//! fails an oracle its original passes is an UNSOUND finding; an inconclusive check is not.
//!
//! Exit codes: 0 no finding; 1 an UNSOUND finding or an internal error; 2 (when nothing is
//! worse) a file that cannot be read or parsed (the other files are still swept); 3 `--oracles`
//! without a verifier backend. Nothing is written to disk.
//!
//! - `candidates`: what to try at each site (registry site kinds, parameter choices);
//! - `report`: the text table and the JSON document.

pub(crate) mod report;

use super::apply::{build_step, validate_pair_with, StepSpec};
use super::common::{emit, read_source, Format};
use super::pool::pool;
use crate::analyze::sites::Site;
use crate::diag::{Diagnostic, SourceFile};
use crate::front::{Dialect, DialectChoice, ParseOptions};
use crate::sem;
use crate::transforms::driver::{apply as drive, resolve_at, At, DriverOptions, DriverResult};
use crate::transforms::params::{Raw, Spelling};
use crate::transforms::registry;
pub(crate) use crate::transforms::sweep::{
    file_candidates as candidates, SiteChoice as Candidate, Skipped,
};
use crate::viper::{self, VerifyOptions, VerifyReport};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The PVL files to sweep.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Verify each applied output whose original verifies (Silicon) and validate it against
    /// the original (the interpreter); a failure its original does not have is UNSOUND.
    #[arg(long)]
    pub oracles: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Output format (`--format json` is the same as `--json`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Attempts (and validations, and verifications in one JVM) run at the same time (default:
    /// the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Per-query Z3 timeout in milliseconds.
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    /// Silicon timeout per program with --oracles, in seconds (0: none); a timeout is no finding.
    #[arg(long = "verify-timeout", default_value_t = 60, value_name = "S")]
    pub verify_timeout: u64,
}

/// What became of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Applied,
    Refused,
    Internal,
}

impl Outcome {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Refused => "refused",
            Outcome::Internal => "internal",
        }
    }
}

/// An applied output that fails an oracle its original passes, or an internal error.
#[derive(Clone, Debug)]
struct Finding {
    /// `unsound` or `internal`.
    kind: &'static str,
    /// `verify`, `validate` or `apply`.
    oracle: &'static str,
    detail: String,
}

pub(crate) struct Attempt {
    file: usize,
    pub(crate) cand: Candidate,
    pub(crate) outcome: Outcome,
    /// The error codes of a refusal (in order, each once), or of an internal error.
    pub(crate) codes: Vec<String>,
    pub(crate) message: Option<String>,
    pub(crate) output: Option<String>,
    verify: Option<&'static str>,
    validate: Option<&'static str>,
    finding: Option<Finding>,
}

struct FileRun {
    name: String,
    /// The file could not be read or parsed.
    bad_input: bool,
    diagnostics: Vec<serde_json::Value>,
    sites: usize,
    skipped: Vec<Skipped>,
    /// The original's verdict, when `--oracles` verified it.
    verify: Option<&'static str>,
}

pub fn main(args: SweepArgs) -> u8 {
    let workers = match super::pool::workers(args.jobs) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let json = args.json || args.format == Format::Json;
    let t0 = std::time::Instant::now();
    let session = if args.oracles {
        let opts = VerifyOptions {
            timeout_s: args.verify_timeout,
            jobs: workers,
            ..VerifyOptions::default()
        };
        let s = viper::Session::new(&opts);
        if let Some(why) = s.missing() {
            let d = Diagnostic::error("E-BACKEND", format!("no verifier backend: {why}"))
                .with_help("run `alpine-rs backend install`, or sweep without --oracles");
            report::backend_missing(&d, json);
            return 3;
        }
        Some(s)
    } else {
        None
    };
    let mut files = Vec::new();
    let mut texts: Vec<(SourceFile, Dialect)> = Vec::new();
    let mut cands: Vec<(usize, Candidate)> = Vec::new();
    for path in &args.files {
        let i = files.len();
        let file = match read_source(path) {
            Ok(f) => f,
            Err(e) => {
                if !json {
                    e.report(Format::Text, serde_json::Value::Null, true);
                }
                files.push(FileRun::bad(e.file.name.clone(), e.json_diags()));
                texts.push((e.file, Dialect::V1));
                continue;
            }
        };
        let parsed = registry::parse(&file.text, &ParseOptions::default());
        if parsed.has_errors() {
            let errors: Vec<Diagnostic> = parsed.errors().cloned().collect();
            if !json {
                emit(&file, &errors);
            }
            files.push(FileRun::bad(file.name.clone(), super::common::json_diags(&file, &errors)));
            texts.push((file, parsed.dialect));
            continue;
        }
        let (cs, skipped) = candidates(&file.text, &parsed);
        files.push(FileRun {
            name: file.name.clone(),
            bad_input: false,
            diagnostics: Vec::new(),
            sites: crate::analyze::sites::sites(&parsed.program).len(),
            skipped,
            verify: None,
        });
        cands.extend(cs.into_iter().map(|c| (i, c)));
        texts.push((file, parsed.dialect));
    }
    let z3 = args.z3_timeout;
    let mut attempts: Vec<Attempt> = pool(
        cands.len(),
        workers,
        |k| {
            let (fi, c) = &cands[k];
            let (file, dialect) = &texts[*fi];
            attempt(*fi, file, *dialect, c, z3)
        },
        |k| {
            let (fi, c) = &cands[k];
            internal(*fi, c, "the attempt's thread stopped without a result".into())
        },
    );
    if let Some(session) = &session {
        oracles(session, &mut files, &texts, &mut attempts, workers);
    }
    let code = exit_code(&files, &attempts);
    if json {
        report::print_json(&files, &attempts, code);
    } else {
        report::print_text(&files, &attempts);
        eprintln!("sweep: {} attempts in {:.1}s", attempts.len(), t0.elapsed().as_secs_f64());
    }
    code
}

impl FileRun {
    fn bad(name: String, diagnostics: Vec<serde_json::Value>) -> FileRun {
        FileRun { name, bad_input: true, diagnostics, sites: 0, skipped: Vec::new(), verify: None }
    }
}

/// 1 for a finding (unsound or internal), 2 for a file that is bad input, combined by the
/// project's one rule ([`crate::codes::combine`]: bad input first); else 0.
fn exit_code(files: &[FileRun], attempts: &[Attempt]) -> u8 {
    let finding = if attempts.iter().any(|a| a.finding.is_some()) { 1 } else { 0 };
    let bad = if files.iter().any(|f| f.bad_input) { 2 } else { 0 };
    crate::codes::combine(finding, bad)
}

pub(crate) fn internal(file: usize, cand: &Candidate, message: String) -> Attempt {
    Attempt {
        file,
        cand: cand.clone(),
        outcome: Outcome::Internal,
        codes: vec!["A0099".into()],
        finding: Some(Finding { kind: "internal", oracle: "apply", detail: message.clone() }),
        message: Some(message),
        output: None,
        verify: None,
        validate: None,
    }
}

/// One attempt: `apply --opt KIND --at line:L:C` with the candidate's parameters, through the
/// driver, with a panic caught as an internal error.
pub(crate) fn attempt(
    fi: usize,
    file: &SourceFile,
    dialect: Dialect,
    c: &Candidate,
    z3: u32,
) -> Attempt {
    let spec = StepSpec {
        opt: c.opt.meta().name.to_string(),
        at: format!("line:{}:{}", c.line, c.col),
        params: c.params.iter().map(|(k, v)| (k.to_string(), Raw::Text(v.clone()))).collect(),
    };
    let step = match build_step(&spec, Spelling::Key, dialect) {
        Ok(s) => s,
        Err(e) => {
            let m = e.message(c.opt.meta().name, |f| format!("`{f}`"));
            return internal(fi, c, format!("the sweep built parameters that do not build: {m}"));
        }
    };
    let choice = match dialect {
        Dialect::V1 => DialectChoice::V1,
        Dialect::V2 => DialectChoice::V2,
    };
    let opts = DriverOptions {
        parse: ParseOptions { dialect: choice },
        timeout_ms: z3,
        keep_going: false,
        steps: vec![step],
        overrides: Vec::new(),
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        // `--at line:L:C` must select the site itself, or the sweep would test another one.
        let parsed = registry::parse(&file.text, &opts.parse);
        let at = At { line: c.line, col: Some(c.col) };
        match resolve_at(&file.text, &parsed, c.opt, &at) {
            Ok(s) if same_site(&s, &c.site) => Ok(drive(&file.name, &file.text, &opts)),
            Ok(s) => Err(format!(
                "--at {} selects the {:?} at byte {}",
                spec.at,
                s.kind,
                s.keyword.start()
            )),
            Err(d) => Err(format!("--at {} selects nothing: {}", spec.at, d.message)),
        }
    }));
    match run {
        Ok(Ok(res)) => classify(fi, c, res, &file.text),
        Ok(Err(m)) => internal(fi, c, m),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            internal(fi, c, format!("panic: {msg}"))
        }
    }
}

fn same_site(a: &Site, b: &Site) -> bool {
    a.kind == b.kind && a.keyword.same_place(b.keyword)
}

fn classify(fi: usize, c: &Candidate, res: DriverResult, input: &str) -> Attempt {
    let errors: Vec<&Diagnostic> =
        res.diagnostics().map(|(_, d)| d).filter(|d| d.is_error()).collect();
    // A step that changes nothing (a prefetch of a cell no plain read names, A302) is no
    // candidate: measured, it would rank as "unchanged" among the real ones.
    if res.output == input {
        let warned: Vec<String> = res
            .diagnostics()
            .map(|(_, d)| d.code.clone())
            .filter(|code| code.starts_with('A'))
            .collect();
        let message = res.diagnostics().next().map(|(_, d)| d.message.clone());
        return Attempt {
            file: fi,
            cand: c.clone(),
            outcome: Outcome::Refused,
            message: message.or_else(|| Some("the step changes nothing".into())),
            codes: if warned.is_empty() { vec!["?".into()] } else { warned },
            output: None,
            verify: None,
            validate: None,
            finding: None,
        };
    }
    if let Some(d) = errors.iter().find(|d| d.code == "A0099" || d.code == "E-INTERNAL") {
        let mut a = internal(fi, c, d.message.clone());
        a.codes = vec![d.code.clone()];
        return a;
    }
    let mut codes: Vec<String> = Vec::new();
    for d in &errors {
        if !codes.contains(&d.code) {
            codes.push(d.code.clone());
        }
    }
    let applied = res.applied > 0 && res.refused == 0 && !res.bad_input && errors.is_empty();
    Attempt {
        file: fi,
        cand: c.clone(),
        outcome: if applied { Outcome::Applied } else { Outcome::Refused },
        message: errors.first().map(|d| d.message.clone()),
        codes: if applied || !codes.is_empty() { codes } else { vec!["?".into()] },
        output: applied.then_some(res.output),
        verify: None,
        validate: None,
        finding: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Oracles

fn verify_name(v: viper::Verdict) -> &'static str {
    match v {
        viper::Verdict::Verified => "verified",
        viper::Verdict::Failed => "failed",
        viper::Verdict::Unsupported => "unsupported",
        viper::Verdict::BackendMissing => "backend-missing",
        viper::Verdict::Timeout => "timeout",
        viper::Verdict::Crash => "crash",
    }
}

fn validate_name(v: sem::Verdict) -> &'static str {
    match v {
        sem::Verdict::Same => "equivalent",
        sem::Verdict::Different => "different",
        sem::Verdict::BadInput => "bad-input",
        sem::Verdict::Inconclusive => "inconclusive",
    }
}

/// The first error of a report, with its line in `file`: `V-POST at line 12: …`.
fn first_error(file: &SourceFile, diags: &[Diagnostic]) -> String {
    match diags.iter().find(|d| d.is_error()) {
        Some(d) => match d.primary_span() {
            Some(sp) => {
                format!("{} at line {}: {}", d.code, file.line_col(sp.start()).0, d.message)
            }
            None => format!("{}: {}", d.code, d.message),
        },
        None => "no diagnostic".into(),
    }
}

/// Verify the originals with an applied attempt, then (one JVM) the outputs of those that
/// verify, while the interpreter validates the same outputs against their originals.
fn oracles(
    session: &viper::Session,
    files: &mut [FileRun],
    texts: &[(SourceFile, Dialect)],
    attempts: &mut [Attempt],
    workers: usize,
) {
    let originals: Vec<usize> = (0..files.len())
        .filter(|&fi| attempts.iter().any(|a| a.file == fi && a.outcome == Outcome::Applied))
        .collect();
    let srcs: Vec<SourceFile> = originals.iter().map(|&fi| texts[fi].0.clone()).collect();
    for (&fi, r) in originals.iter().zip(session.verify_all(&srcs)) {
        files[fi].verify = Some(verify_name(r.verdict));
    }
    let todo: Vec<usize> = (0..attempts.len())
        .filter(|&k| {
            attempts[k].output.is_some() && files[attempts[k].file].verify == Some("verified")
        })
        .collect();
    let outputs: Vec<SourceFile> = todo
        .iter()
        .map(|&k| {
            let a = &attempts[k];
            let name = format!(
                "{} ({} at {}:{})",
                files[a.file].name,
                a.cand.opt.meta().name,
                a.cand.line,
                a.cand.col
            );
            SourceFile::new(name, a.output.clone().unwrap_or_default())
        })
        .collect();
    let (verified, validated): (Vec<VerifyReport>, Vec<Option<sem::ValidateOutcome>>) =
        std::thread::scope(|s| {
            let shared: &[Attempt] = attempts;
            let v = s.spawn(|| {
                pool(
                    todo.len(),
                    workers,
                    |j| {
                        let a = &shared[todo[j]];
                        let orig = &texts[a.file].0.text;
                        let out = a.output.as_deref().unwrap_or_default();
                        catch_unwind(AssertUnwindSafe(|| {
                            validate_pair_with(orig, out, None, a.cand.adapter.as_deref())
                        }))
                        .ok()
                    },
                    |_| None,
                )
            });
            let verified: Vec<VerifyReport> = session.verify_all(&outputs);
            (verified, v.join().unwrap_or_default())
        });
    for (j, &k) in todo.iter().enumerate() {
        let a = &mut attempts[k];
        let out = &outputs[j];
        if let Some(r) = verified.get(j) {
            a.verify = Some(verify_name(r.verdict));
            let internal = r.diagnostics.iter().any(|d| d.code == "E-INTERNAL");
            if r.verdict == viper::Verdict::Failed {
                a.finding = Some(Finding {
                    kind: "unsound",
                    oracle: "verify",
                    detail: first_error(out, &r.diagnostics),
                });
            } else if internal {
                a.finding = Some(Finding {
                    kind: "internal",
                    oracle: "verify",
                    detail: first_error(out, &r.diagnostics),
                });
            }
        }
        match validated.get(j) {
            Some(Some(v)) => {
                a.validate = Some(validate_name(v.verdict));
                if v.verdict == sem::Verdict::Different && a.finding.is_none() {
                    let detail = match &v.mismatch {
                        Some(m) => format!(
                            "input #{} (seed {}): {}{}: orig {} vs opt {}",
                            m.input_id,
                            m.input.seed,
                            m.path,
                            m.index.map(|i| format!("[{i}]")).unwrap_or_default(),
                            m.orig,
                            m.opt
                        ),
                        None => v.summary.clone(),
                    };
                    a.finding = Some(Finding { kind: "unsound", oracle: "validate", detail });
                }
            }
            _ => {
                a.validate = Some("internal");
                if a.finding.is_none() {
                    a.finding = Some(Finding {
                        kind: "internal",
                        oracle: "validate",
                        detail: "a panic while validating".into(),
                    });
                }
            }
        }
    }
}
