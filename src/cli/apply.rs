//! `alpine-rs apply`: run optimizations and emit the result (stdout, -o, --in-place, --diff,
//! --check), optionally checked by re-verification (`--verify`) and differential execution
//! (`--validate`) before anything is written.

use super::common::{json_diags, read_source, report_one, write_diff, ColorArg, Format};
use super::paramflags::ParamFlags;
use crate::diag::{self, Diagnostic, SourceFile};
use crate::front::{Dialect, DialectChoice, ParseOptions};
use crate::review::{annotation_ranges, review, Hunk};
use crate::sem;
use crate::transforms::driver::{apply_cli_or_annotations, CliStep, DriverOptions};
pub use crate::transforms::driver::{build_step, StepSpec};
use crate::transforms::params::{Raw, Spelling};
use crate::transforms::registry;
use crate::viper::{self, Verdict, VerifyOptions, VerifyReport};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// The PVL file to optimize.
    pub file: PathBuf,
    /// Optimization to apply (repeatable; each `--opt` starts a group with its own flags):
    /// unroll, merge, prefetch, linearize, tile, fuse (or the Alpinist names).
    #[arg(long = "opt")]
    pub opt: Vec<String>,
    /// Where the optimization applies: line:N or line:N:COL of the input file (one per --opt).
    #[arg(long = "at")]
    pub at: Vec<String>,
    /// The optimizations' parameters (generated from their schemas; see the registry).
    #[command(flatten)]
    pub params: ParamFlags,
    /// Write the output to FILE.
    #[arg(short = 'o', long = "output", conflicts_with_all = ["in_place", "check"])]
    pub output: Option<PathBuf>,
    /// Rewrite the input file (atomically).
    #[arg(long = "in-place", conflicts_with = "check")]
    pub in_place: bool,
    /// Print a unified diff of input and output instead of the output.
    #[arg(long, conflicts_with_all = ["in_place", "output"])]
    pub diff: bool,
    /// Exit 1 and print the diff when the file would change.
    #[arg(long)]
    pub check: bool,
    /// With --diff or --check: show only the hunks that change annotations (contracts,
    /// invariants, barrier contracts, assertions, ghost code, gpuopt lines).
    #[arg(long)]
    pub annotations_only: bool,
    /// Colour of the diff.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,
    /// Verify input and output with the Viper/Silicon backend (exit 1 if the output fails,
    /// 3 if there is no verdict). The output is written or printed only when it verifies.
    #[arg(long, conflicts_with = "check")]
    pub verify: bool,
    /// Silicon time limit per program for --verify, in seconds (0: none); past it the result is
    /// inconclusive (exit 3).
    #[arg(long = "verify-timeout", default_value_t = crate::viper::DEFAULT_TIMEOUT_S, value_name = "S")]
    pub verify_timeout: u64,
    /// Run input and output on the same generated inputs and compare their final states (exit 1
    /// if they differ, 3 if nothing could be compared). The output is written or printed only
    /// when they agree.
    #[arg(long, conflicts_with = "check")]
    pub validate: bool,
    /// Entry method for --validate and --cost (`method`, `Class.method`, or `ORIG:OPT`).
    #[arg(long)]
    pub entry: Option<String>,
    /// Count the cost model's metrics of input and output on the same generated inputs and
    /// print the before/after table (semantics.md §9.8; `alpine-rs cost` has more options). An
    /// output that behaves differently is reported and not written (exit 1).
    #[arg(long, conflicts_with = "check")]
    pub cost: bool,
    #[command(flatten)]
    pub cost_model: super::cost::CostArgs,
    /// Skip refused steps and apply the rest (exit code still 1).
    #[arg(long)]
    pub keep_going: bool,
    /// Per-query Z3 timeout in milliseconds.
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    #[arg(long, default_value = "auto")]
    pub dialect: DialectChoice,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// A usage error of `apply` (exit 2), as a diagnostic with a help line; in JSON mode as apply's
/// report on stderr.
fn usage(args: &ApplyArgs, msg: impl std::fmt::Display, help: &str) -> u8 {
    let name = args.file.display().to_string();
    let d = Diagnostic::error("A0000", msg.to_string()).with_help(help);
    let json = serde_json::json!({
        "file": name,
        "applied": 0,
        "refused": 0,
        "changed": false,
        "written": null,
        "exit": 2,
    });
    report_one(&SourceFile::new(name, String::new()), &d, args.format, json, true);
    2
}

/// The `--opt` groups of the command line as step specs. Each `--opt` takes the next unused
/// value of every parameter flag it uses, in order, and every switch it uses; a flag value no
/// group takes is an error, as is a parameter flag without any `--opt` when the file's own
/// annotations cannot take it (see [`crate::transforms::driver::overrides_fit`]).
fn specs(args: &ApplyArgs) -> Result<Vec<StepSpec>, String> {
    if args.opt.len() != args.at.len() {
        return Err(format!(
            "every --opt needs its own --at line:N ({} --opt, {} --at)",
            args.opt.len(),
            args.at.len()
        ));
    }
    let mut used: Vec<usize> = vec![0; args.params.values.len()];
    let mut out = Vec::new();
    for (o, at) in args.opt.iter().zip(&args.at) {
        let mut s = StepSpec { opt: o.clone(), at: at.clone(), params: Vec::new() };
        if let Some(opt) = registry::lookup(o) {
            for p in opt.meta().params {
                if let Some(i) = args.params.values.iter().position(|(f, _)| f == p.flag) {
                    let vals = &args.params.values[i].1;
                    if p.is_switch() {
                        if !vals.is_empty() {
                            used[i] = vals.len();
                            s.params.push((p.flag.to_string(), Raw::Switch(true)));
                        }
                    } else if let Some(v) = vals.get(used[i]) {
                        used[i] += 1;
                        s.params.push((p.flag.to_string(), Raw::Text(v.clone())));
                    }
                }
            }
        }
        out.push(s);
    }
    if !args.opt.is_empty() {
        for (i, (flag, vals)) in args.params.values.iter().enumerate() {
            if used[i] < vals.len() {
                let opts: Vec<&str> = args.opt.iter().map(String::as_str).collect();
                return Err(format!(
                    "--{flag} does not apply to {} (or is given more often than the --opt that take it)",
                    opts.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Build the command-line steps; `Err` is a usage message.
fn steps(args: &ApplyArgs, dialect: Dialect) -> Result<Vec<CliStep>, String> {
    specs(args)?
        .iter()
        .map(|s| {
            build_step(s, Spelling::Flag, dialect)
                .map_err(|e| e.message(&format!("--opt {}", s.opt), |f| format!("--{f}")))
        })
        .collect()
}

/// `validate --adapter` for the command line's steps that change a signature (linearization:
/// `--array g --layout row --dims rows,cols` is `matrix_lin g R (rows) (cols)`). The file's own
/// annotations give theirs to validation directly; `None` when no step changes a signature.
fn cli_adapter(args: &ApplyArgs) -> Option<String> {
    let mut parts = Vec::new();
    for s in specs(args).ok()? {
        if registry::lookup(&s.opt).and_then(|o| o.meta().adapter).is_none() {
            continue;
        }
        let text = |k: &str| {
            s.params.iter().find(|(n, _)| n == k).and_then(|(_, v)| match v {
                Raw::Text(t) => Some(t.clone()),
                Raw::List(l) => Some(l.join(",")),
                Raw::Switch(_) => None,
            })
        };
        let (array, layout, dims) = (text("array")?, text("layout")?, text("dims")?);
        let row_major = !matches!(layout.as_str(), "col" | "C");
        let (d0, d1) = dims.split_once(',')?;
        parts.push(crate::transforms::linearize::adapter_spec(
            &array,
            row_major,
            d0.trim(),
            d1.trim(),
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Parameter flags given without `--opt`: they apply to the file's own annotations.
fn overrides(args: &ApplyArgs) -> Vec<(String, Raw)> {
    if !args.opt.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (flag, vals) in &args.params.values {
        let switch = registry::ALL
            .iter()
            .flat_map(|o| o.meta().params)
            .any(|p| p.flag == flag.as_str() && p.is_switch());
        match (switch, vals.as_slice()) {
            (_, []) => {}
            (true, _) => out.push((flag.clone(), Raw::Switch(true))),
            (false, [one]) => out.push((flag.clone(), Raw::Text(one.clone()))),
            (false, many) => out.push((flag.clone(), Raw::List(many.to_vec()))),
        }
    }
    out
}

/// The classified hunks of the change from `a` to `b` (both must parse; a side that does not
/// gets no annotation ranges, so its lines count as code).
pub fn review_hunks(a: &str, b: &str, popts: &ParseOptions) -> Vec<Hunk> {
    let ranges = |t: &str| {
        let p = crate::front::parse(t, popts);
        if p.has_errors() {
            Vec::new()
        } else {
            annotation_ranges(&p.program)
        }
    };
    review(a, &ranges(a), b, &ranges(b), 3)
}

/// Write `text` to `path` atomically: a temporary file beside it, then a rename. On any error
/// the original file is untouched and the temporary file is removed. An existing file keeps its
/// permissions.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let fname = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    // Unique per process and call: batch jobs write into the same directory in parallel.
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{fname}.{}-{n}.alpine-rs.tmp", std::process::id()));
    let res = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// The verdicts of `--verify` on the input and the output.
#[derive(Clone, Debug)]
pub struct VerifyPair {
    pub input: VerifyReport,
    pub output: VerifyReport,
}

impl VerifyPair {
    /// 0 the output verifies, 1 it fails, 3 no verdict (backend missing, timeout, crash, or a
    /// construct the encoder does not support).
    pub fn exit_code(&self) -> u8 {
        match self.output.verdict {
            Verdict::Verified => 0,
            Verdict::Failed => 1,
            _ => 3,
        }
    }
}

/// Verify input and output in one Silicon JVM, each as its own request.
pub fn verify_pair(input: &SourceFile, output: &SourceFile, timeout_s: u64) -> VerifyPair {
    let opts = VerifyOptions { timeout_s, ..VerifyOptions::default() };
    let mut reports = viper::verify_each(&[input.clone(), output.clone()], &opts).into_iter();
    let missing = || VerifyReport {
        verdict: Verdict::Crash,
        diagnostics: vec![Diagnostic::error("E-BACKEND", "no verdict came back")
            .with_help("run `alpine-rs backend doctor`")],
        time: std::time::Duration::ZERO,
    };
    VerifyPair {
        input: reports.next().unwrap_or_else(missing),
        output: reports.next().unwrap_or_else(missing),
    }
}

/// 0 same behaviour on every compared input, 1 different, 3 nothing could be decided (no input
/// could be compared, or the interpreter cannot load a program or pick its entry).
pub fn validate_code(v: sem::Verdict) -> u8 {
    match v {
        sem::Verdict::Same => 0,
        sem::Verdict::Different => 1,
        sem::Verdict::BadInput | sem::Verdict::Inconclusive => 3,
    }
}

/// Compare ORIG and OPT under the interpreter. Without an entry, the methods are matched by
/// class and name and those that differ are validated (`sem::matching`); the most severe
/// verdict counts.
pub fn validate_pair(orig: &str, opt: &str, entry: Option<&str>) -> sem::ValidateOutcome {
    validate_pair_with(orig, opt, entry, None)
}

/// [`validate_pair`] with an input/output map for a changed signature (`validate --adapter`);
/// `None` derives it from ORIG's annotations.
pub fn validate_pair_with(
    orig: &str,
    opt: &str,
    entry: Option<&str>,
    adapter: Option<&str>,
) -> sem::ValidateOutcome {
    let opts = sem::ValidateOptions {
        entry: entry.map(str::to_string),
        adapter: adapter.map(str::to_string),
        ..crate::validate_options()
    };
    sem::validate(orig, opt, &opts)
}

/// JSON of one verification report.
pub fn verify_json(file: &SourceFile, r: &VerifyReport) -> serde_json::Value {
    serde_json::json!({
        "verdict": r.verdict,
        "time_ms": r.time.as_millis() as u64,
        "diagnostics": json_diags(file, &r.diagnostics),
    })
}

/// JSON of a validation outcome; `files` are ORIG and OPT.
pub fn validate_json(files: [&SourceFile; 2], v: &sem::ValidateOutcome) -> serde_json::Value {
    let file = files[v.diag_file.min(1)];
    serde_json::json!({
        "verdict": format!("{:?}", v.verdict).to_lowercase(),
        "equivalent": v.equivalent,
        "skipped": v.skipped,
        "inconclusive": v.inconclusive,
        "mismatch": v.mismatch.as_ref().map(|m| serde_json::json!({
            "input": m.input_id,
            "seed": m.input.seed,
            "path": m.path,
            "index": m.index,
            "orig": m.orig,
            "opt": m.opt,
        })),
        "summary": v.summary,
        "reason": v.reason,
        "methods": sem::matching::table_json(&v.methods),
        "diagnostics": json_diags(file, &v.diagnostics),
    })
}

/// The most severe of two exit codes (the project's one rule, [`crate::codes::combine`]).
pub fn worst(a: u8, b: u8) -> u8 {
    crate::codes::combine(a, b)
}

fn stderr_stream() -> StandardStream {
    let choice =
        if std::io::stderr().is_terminal() { ColorChoice::Auto } else { ColorChoice::Never };
    StandardStream::stderr(choice)
}

pub fn main(args: ApplyArgs) -> u8 {
    if args.annotations_only && !(args.diff || args.check) {
        return usage(
            &args,
            "--annotations-only needs --diff or --check",
            "add --diff (show the changes) or --check (show them and exit 1 if there are any)",
        );
    }
    let cost_cfg = match args.cost.then(|| args.cost_model.config()).transpose() {
        Ok(c) => c,
        Err(e) => return usage(&args, e, super::cost::HELP_COST),
    };
    let file = match read_source(&args.file) {
        Ok(f) => f,
        Err(e) => {
            // Same shape as apply's other JSON reports (on stderr: stdout carries the program).
            let json = serde_json::json!({
                "file": e.file.name,
                "applied": 0,
                "refused": 0,
                "changed": false,
                "written": null,
                "exit": 2,
            });
            e.report(args.format, json, true);
            return 2;
        }
    };
    let popts = ParseOptions { dialect: args.dialect };
    let dialect = crate::front::parse(&file.text, &popts).dialect;
    let steps = match steps(&args, dialect) {
        Ok(s) => s,
        Err(m) => {
            return usage(
                &args,
                m,
                "see `alpine-rs apply --help` for the flags each optimization takes",
            )
        }
    };
    let opts = DriverOptions {
        parse: popts.clone(),
        timeout_ms: args.z3_timeout,
        keep_going: args.keep_going,
        steps,
        overrides: overrides(&args),
    };
    let res = apply_cli_or_annotations(&file.name, &file.text, &opts);
    let mut code = res.exit_code();
    let json = args.format == Format::Json;
    let mut report = serde_json::json!({
        "file": file.name,
        "applied": res.applied,
        "refused": res.refused,
        "changed": res.output != file.text,
    });
    let mut all = Vec::new();
    if json {
        for r in &res.reports {
            all.extend(json_diags(&r.file, &r.diagnostics));
        }
    } else {
        let mut err = stderr_stream();
        for r in &res.reports {
            diag::render(&mut err, &[&r.file], &r.diagnostics);
        }
    }
    let finish = |mut report: serde_json::Value, all: Vec<serde_json::Value>, code: u8| {
        if json {
            report["exit"] = code.into();
            report["diagnostics"] = all.into();
            eprintln!("{report}");
        }
        code
    };
    if res.bad_input {
        return finish(report, all, code);
    }
    let changed = res.output != file.text;
    let name = args.file.display().to_string();
    let show_diff = |hunks: Vec<Hunk>| -> u8 {
        let shown: Vec<Hunk> =
            hunks.into_iter().filter(|h| !args.annotations_only || h.is_annotation()).collect();
        let mut out = args.color.stdout();
        match write_diff(&mut out, &format!("a/{name}"), &format!("b/{name}"), &shown) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("error[A0000]: cannot write the diff: {e}");
                2
            }
            _ => 0,
        }
    };
    if args.check {
        if changed {
            let c = show_diff(review_hunks(&file.text, &res.output, &popts));
            return finish(report, all, worst(1, c));
        }
        return finish(report, all, code);
    }
    let ok_to_emit = code == 0 || args.keep_going;
    // The checks run on the text that would be emitted, before anything is written.
    let mut checks = 0u8;
    let out_name = match (&args.output, args.in_place) {
        (Some(o), _) => o.display().to_string(),
        (None, true) => format!("{name} (rewritten)"),
        (None, false) => format!("{name} (optimized)"),
    };
    let out_file = SourceFile::new(out_name, res.output.clone());
    if ok_to_emit && args.verify {
        let pair = verify_pair(&file, &out_file, args.verify_timeout);
        checks = worst(checks, pair.exit_code());
        if json {
            report["verify"] = serde_json::json!({
                "input": verify_json(&file, &pair.input),
                "output": verify_json(&out_file, &pair.output),
            });
        } else {
            print_verify(&file, &out_file, &pair);
        }
    }
    if ok_to_emit && args.validate {
        let adapter = cli_adapter(&args);
        let v =
            validate_pair_with(&file.text, &res.output, args.entry.as_deref(), adapter.as_deref());
        checks = worst(checks, validate_code(v.verdict));
        if json {
            report["validate"] = validate_json([&file, &out_file], &v);
        } else {
            print_validate([&file, &out_file], &v);
        }
    }
    if let (true, Some(cc)) = (ok_to_emit, cost_cfg) {
        let ms = super::cost::cost_pair(&file.text, &res.output, args.entry.as_deref(), cc);
        if ms.iter().any(|m| m.verdict == crate::sem::cost::CostVerdict::InvalidOptimization) {
            checks = worst(checks, 1);
        }
        if json {
            report["cost"] = serde_json::json!(ms);
        } else {
            for m in &ms {
                eprint!("cost of {}", super::cost::render_method(m, "time"));
            }
        }
    }
    code = if code == 0 { checks } else { worst(code, checks) };
    let mut written = serde_json::Value::Null;
    if args.diff {
        code = worst(code, show_diff(review_hunks(&file.text, &res.output, &popts)));
    } else if let Some(target) = args.output.as_ref().or(args.in_place.then_some(&args.file)) {
        // With --verify/--validate a file is written only when the checks passed: a rewrite
        // whose proof or behaviour is in doubt must not replace anything.
        if ok_to_emit && checks == 0 && (changed || !args.in_place) {
            match write_atomic(target, &res.output) {
                Ok(()) => written = target.display().to_string().into(),
                Err(e) => {
                    let unchanged = if args.in_place { "; the file is unchanged" } else { "" };
                    let d = Diagnostic::error(
                        "A0000",
                        format!("cannot write `{}`: {e}{unchanged}", target.display()),
                    )
                    .with_help("check that the folder exists and is writable");
                    if json {
                        all.extend(json_diags(&file, std::slice::from_ref(&d)));
                    } else {
                        diag::render(&mut stderr_stream(), &[&file], &[d]);
                    }
                    code = 2;
                }
            }
        } else if ok_to_emit && checks != 0 && !json {
            eprintln!("note: `{}` was not written because a check did not pass", target.display());
        }
    } else if ok_to_emit && checks == 0 {
        print!("{}", res.output);
    } else if ok_to_emit && !json {
        // As for files: an output whose proof or behaviour is in doubt is not emitted.
        eprintln!(
            "note: the output was not printed because a check did not pass (--diff shows it)"
        );
    }
    report["written"] = written;
    finish(report, all, code)
}

fn print_verify(input: &SourceFile, output: &SourceFile, pair: &VerifyPair) {
    let mut err = stderr_stream();
    // The output's failures are what the user must look at; the input's explain a shared cause.
    diag::render(&mut err, &[output], &pair.output.diagnostics);
    let line = |r: &VerifyReport| {
        format!(
            "{} in {:.1}s",
            match r.verdict {
                Verdict::Verified => "verified",
                Verdict::Failed => "FAILED",
                Verdict::Unsupported => "not verified (unsupported construct)",
                Verdict::BackendMissing => "not verified (backend missing)",
                Verdict::Timeout => "inconclusive (timeout)",
                Verdict::Crash => "not verified (backend error)",
            },
            r.time.as_secs_f64()
        )
    };
    eprintln!("verify: input {}; output {}", line(&pair.input), line(&pair.output));
    if pair.output.verdict == Verdict::Failed && pair.input.verdict == Verdict::Failed {
        eprintln!("note: the input does not verify either (`alpine-rs verify {}`)", input.name);
    } else if pair.output.verdict == Verdict::Unsupported && pair.input.verdict == Verdict::Verified
    {
        // The rewrite introduced a construct the encoder refuses: a limit of the verifier, not
        // of the backend; the output is not known to verify.
        eprintln!(
            "note: the optimized program uses a construct `alpine-rs verify` does not encode \
             (above), so it is not re-verified; the input is"
        );
    } else if matches!(pair.output.verdict, Verdict::BackendMissing | Verdict::Crash)
        && !pair.output.diagnostics.is_empty()
    {
        eprintln!("help: `alpine-rs backend doctor` shows what the verifier needs");
    }
}

fn print_validate(files: [&SourceFile; 2], v: &sem::ValidateOutcome) {
    if !v.diagnostics.is_empty() {
        let f = files[v.diag_file.min(1)];
        eprint!("{}", sem::render(&f.name, &f.text, &v.diagnostics));
    }
    if let Some(m) = &v.mismatch {
        match m.index {
            Some(i) => eprintln!(
                "validate: input #{} (seed {}): first difference at {}[{i}]: orig {} vs opt {}",
                m.input_id, m.input.seed, m.path, m.orig, m.opt
            ),
            None => eprintln!(
                "validate: input #{} (seed {}): {}: orig {} vs opt {}",
                m.input_id, m.input.seed, m.path, m.orig, m.opt
            ),
        }
    }
    if !v.methods.is_empty() {
        eprint!("{}", sem::matching::table(&v.methods));
    }
    eprintln!("{}", v.summary);
}
