//! `alpine-rs apply`: run optimizations and emit the result (stdout, -o, --in-place, --diff,
//! --check), optionally checked by re-verification (`--verify`) and differential execution
//! (`--validate`) before anything is written.

use super::common::{json_diags, read_source, report_one, write_diff, ColorArg, Format};
use crate::diag::{self, Diagnostic, SourceFile};
use crate::front::ast::{Layout as MatLayout, OptKind, TileMode};
use crate::front::parser::parse_expr_text;
use crate::front::{Dialect, DialectChoice, ParseOptions};
use crate::review::{annotation_ranges, review, Hunk};
use crate::sem;
use crate::transforms::driver::{apply_cli_or_annotations, At, CliStep, DriverOptions};
use crate::transforms::{MergeMode, Params};
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
    /// unroll: iterations to peel; merge: iterations per merged body (one per unroll/merge group).
    #[arg(long)]
    pub factor: Vec<u64>,
    /// unroll, merge: the iteration variable (inferred when omitted).
    #[arg(long)]
    pub var: Vec<String>,
    /// merge: code shape.
    #[arg(long, default_value = "auto")]
    pub mode: String,
    /// prefetch, linearize: the array or matrix.
    #[arg(long)]
    pub array: Vec<String>,
    /// prefetch: locations separated by `;`, e.g. "tid; tid+1".
    #[arg(long)]
    pub locations: Vec<String>,
    /// linearize: row or col.
    #[arg(long)]
    pub layout: Vec<String>,
    /// linearize: E1,E2 (rows, row length).
    #[arg(long)]
    pub dims: Vec<String>,
    /// linearize: use an index helper function.
    #[arg(long)]
    pub index_fn: bool,
    /// tile: inter or intra.
    #[arg(long = "tile-mode")]
    pub tile_mode: Vec<String>,
    /// tile: tile size (literal or expression).
    #[arg(long = "tile-size")]
    pub tile_size: Vec<String>,
    /// tile: do not rewrite method-level quantifiers.
    #[arg(long)]
    pub keep_method_contract: bool,
    /// fuse: number of consecutive par blocks (default 2).
    #[arg(long)]
    pub kernels: Vec<u64>,
    /// fuse: number of thread blocks.
    #[arg(long)]
    pub blocks: Option<u64>,
    /// fuse: threads per block, for the cross-block dependency check.
    #[arg(long = "block-size")]
    pub block_size: Option<String>,
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
    /// 3 if there is no verdict). Files are written only when the output verifies.
    #[arg(long, conflicts_with = "check")]
    pub verify: bool,
    /// Silicon timeout per program for --verify, in seconds (0: none).
    #[arg(long = "verify-timeout", default_value_t = 0, value_name = "S")]
    pub verify_timeout: u64,
    /// Run input and output on the same generated inputs and compare their final states (exit 1
    /// if they differ, 3 if nothing could be compared). Files are written only when they agree.
    #[arg(long, conflicts_with = "check")]
    pub validate: bool,
    /// Entry method for --validate (`method`, `Class.method`, or `ORIG:OPT`).
    #[arg(long)]
    pub entry: Option<String>,
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
    report_one(
        &SourceFile::new(name, String::new()),
        &d,
        args.format,
        json,
        true,
    );
    2
}

/// One optimization request in a neutral form: what `--opt … --at …` with its flags, or one
/// step of a batch plan, asks for. Validated and built by [`build_step`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepSpec {
    pub opt: String,
    pub at: String,
    pub factor: Option<u64>,
    pub var: Option<String>,
    /// merge: auto, exact or remainder; tile: inter or intra.
    pub mode: Option<String>,
    pub array: Option<String>,
    pub locations: Vec<String>,
    pub layout: Option<String>,
    /// linearize: the two dimension expressions.
    pub dims: Vec<String>,
    pub index_fn: bool,
    pub tile_size: Option<String>,
    pub keep_method_contract: bool,
    pub kernels: Option<u64>,
    pub blocks: Option<u64>,
    pub block_size: Option<String>,
}

/// Why a [`StepSpec`] is not a valid step; `field` names the offending parameter in plan-key
/// form (`tile_size`), callers turn it into their own spelling (`--tile-size`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    UnknownOpt(String),
    /// A parameter the optimization needs is missing.
    Missing {
        field: &'static str,
    },
    /// A parameter has a bad value; the message reads after the parameter's name.
    Invalid {
        field: &'static str,
        message: String,
    },
    /// A parameter that the optimization does not take.
    NotApplicable {
        field: &'static str,
    },
}

impl StepError {
    pub fn field(&self) -> &'static str {
        match self {
            StepError::UnknownOpt(_) => "opt",
            StepError::Missing { field }
            | StepError::Invalid { field, .. }
            | StepError::NotApplicable { field } => field,
        }
    }

    /// The message with parameter names spelt by `name` (e.g. `--tile-size` or `tile_size`).
    pub fn message(&self, opt: &str, name: impl Fn(&str) -> String) -> String {
        match self {
            StepError::UnknownOpt(o) => format!(
                "unknown optimization `{o}` (known: unroll, merge, prefetch, linearize, tile, fuse)"
            ),
            StepError::Missing { field } => format!("{opt} needs {}", name(field)),
            StepError::Invalid { field, message } => format!("{} {message}", name(field)),
            StepError::NotApplicable { field } => {
                format!("{} does not apply to {opt}", name(field))
            }
        }
    }
}

/// The parameters each optimization takes besides `opt` and `at`.
pub fn step_fields(kind: OptKind) -> &'static [&'static str] {
    match kind {
        OptKind::Unroll => &["factor", "var"],
        OptKind::Merge => &["factor", "var", "mode"],
        OptKind::Prefetch => &["array", "locations"],
        OptKind::Linearize => &["array", "layout", "dims", "index_fn"],
        OptKind::Tile => &["mode", "tile_size", "keep_method_contract"],
        OptKind::Fuse => &["kernels", "blocks", "block_size"],
    }
}

impl StepSpec {
    /// The parameters that are set (besides `opt` and `at`).
    pub fn set_fields(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |on: bool, f: &'static str| {
            if on {
                v.push(f)
            }
        };
        add(self.factor.is_some(), "factor");
        add(self.var.is_some(), "var");
        add(self.mode.is_some(), "mode");
        add(self.array.is_some(), "array");
        add(!self.locations.is_empty(), "locations");
        add(self.layout.is_some(), "layout");
        add(!self.dims.is_empty(), "dims");
        add(self.index_fn, "index_fn");
        add(self.tile_size.is_some(), "tile_size");
        add(self.keep_method_contract, "keep_method_contract");
        add(self.kernels.is_some(), "kernels");
        add(self.blocks.is_some(), "blocks");
        add(self.block_size.is_some(), "block_size");
        v
    }
}

/// Validate a step and build it for a file of `dialect` (expressions are parsed in it).
pub fn build_step(spec: &StepSpec, dialect: Dialect) -> Result<CliStep, StepError> {
    let kind =
        OptKind::from_word(&spec.opt).ok_or_else(|| StepError::UnknownOpt(spec.opt.clone()))?;
    let at: At = spec.at.parse().map_err(|m: String| StepError::Invalid {
        field: "at",
        message: format!("must be line:N or line:N:COL, not {m}"),
    })?;
    let expr = |field: &'static str, s: &str| -> Result<crate::front::ast::Expr, StepError> {
        parse_expr_text(s, dialect).map_err(|_| StepError::Invalid {
            field,
            message: format!("`{s}` is not a PVL expression"),
        })
    };
    let need = |field: &'static str, v: Option<&String>| -> Result<String, StepError> {
        v.cloned().ok_or(StepError::Missing { field })
    };
    let params = match kind {
        OptKind::Unroll | OptKind::Merge => {
            let factor = spec.factor.ok_or(StepError::Missing { field: "factor" })?;
            let var = spec.var.clone();
            if kind == OptKind::Unroll {
                Params::Unroll { var, factor }
            } else {
                let mode = match spec.mode.as_deref().unwrap_or("auto") {
                    "auto" => MergeMode::Auto,
                    "exact" => MergeMode::Exact,
                    "remainder" => MergeMode::Remainder,
                    m => {
                        return Err(StepError::Invalid {
                            field: "mode",
                            message: format!("must be auto, exact or remainder, not `{m}`"),
                        })
                    }
                };
                Params::Merge { var, factor, mode }
            }
        }
        OptKind::Prefetch => {
            let array = need("array", spec.array.as_ref())?;
            let locations = spec
                .locations
                .iter()
                .flat_map(|l| l.split(';'))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| expr("locations", l))
                .collect::<Result<Vec<_>, _>>()?;
            if locations.is_empty() {
                return Err(StepError::Missing { field: "locations" });
            }
            Params::Prefetch {
                array: expr("array", &array)?,
                locations,
            }
        }
        OptKind::Linearize => {
            let matrix = need("array", spec.array.as_ref())?;
            let layout = match spec.layout.as_deref() {
                Some("row") | Some("R") => MatLayout::Row,
                Some("col") | Some("C") => MatLayout::Col,
                Some(l) => {
                    return Err(StepError::Invalid {
                        field: "layout",
                        message: format!("must be row or col, not `{l}`"),
                    })
                }
                None => return Err(StepError::Missing { field: "layout" }),
            };
            let parts: Vec<String> = match spec.dims.as_slice() {
                [] => return Err(StepError::Missing { field: "dims" }),
                [one] => split_top(one, ','),
                many => many.to_vec(),
            };
            if parts.len() != 2 {
                return Err(StepError::Invalid {
                    field: "dims",
                    message: format!(
                        "needs two expressions (rows, row length), got `{}`",
                        spec.dims.join(", ")
                    ),
                });
            }
            Params::Linearize {
                matrix,
                layout,
                dims: (expr("dims", &parts[0])?, expr("dims", &parts[1])?),
                index_fn: spec.index_fn,
            }
        }
        OptKind::Tile => {
            let mode = match spec.mode.as_deref() {
                Some("inter") => TileMode::Inter,
                Some("intra") => TileMode::Intra,
                Some(m) => {
                    return Err(StepError::Invalid {
                        field: "mode",
                        message: format!("must be inter or intra, not `{m}`"),
                    })
                }
                None => return Err(StepError::Missing { field: "mode" }),
            };
            let size = need("tile_size", spec.tile_size.as_ref())?;
            Params::Tile {
                mode,
                size: expr("tile_size", &size)?,
                keep_method_contract: spec.keep_method_contract,
            }
        }
        OptKind::Fuse => Params::Fuse {
            kernels: spec.kernels.unwrap_or(2),
            blocks: spec.blocks,
            block_size: match &spec.block_size {
                Some(b) => Some(expr("block_size", b)?),
                None => None,
            },
        },
    };
    Ok(CliStep { params, at })
}

/// The command-line spelling of a step parameter.
fn flag(kind: Option<OptKind>, field: &str) -> String {
    match (kind, field) {
        (Some(OptKind::Tile), "mode") => "--tile-mode".into(),
        (_, "opt") => "--opt".into(),
        (_, "array") => "--array".into(),
        (_, f) => format!("--{}", f.replace('_', "-")),
    }
}

/// The `--opt` groups of the command line as step specs. Each `--opt` takes the next unused
/// value of every per-step flag it uses, in order.
fn specs(args: &ApplyArgs) -> Result<Vec<StepSpec>, String> {
    if args.opt.len() != args.at.len() {
        return Err(format!(
            "every --opt needs its own --at line:N ({} --opt, {} --at)",
            args.opt.len(),
            args.at.len()
        ));
    }
    fn next<T: Clone>(v: &[T], i: &mut usize) -> Option<T> {
        let x = v.get(*i).cloned();
        if x.is_some() {
            *i += 1;
        }
        x
    }
    let (mut fi, mut vi, mut ai, mut li, mut lay, mut di, mut tm, mut ts, mut ki) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0);
    let mut out = Vec::new();
    for (o, at) in args.opt.iter().zip(&args.at) {
        let mut s = StepSpec {
            opt: o.clone(),
            at: at.clone(),
            ..StepSpec::default()
        };
        match OptKind::from_word(o) {
            Some(OptKind::Unroll) | Some(OptKind::Merge) => {
                s.factor = next(&args.factor, &mut fi);
                s.var = next(&args.var, &mut vi);
                if OptKind::from_word(o) == Some(OptKind::Merge) {
                    s.mode = Some(args.mode.clone());
                }
            }
            Some(OptKind::Prefetch) => {
                s.array = next(&args.array, &mut ai);
                s.locations = next(&args.locations, &mut li).into_iter().collect();
            }
            Some(OptKind::Linearize) => {
                s.array = next(&args.array, &mut ai);
                s.layout = next(&args.layout, &mut lay);
                s.dims = next(&args.dims, &mut di).into_iter().collect();
                s.index_fn = args.index_fn;
            }
            Some(OptKind::Tile) => {
                s.mode = next(&args.tile_mode, &mut tm);
                s.tile_size = next(&args.tile_size, &mut ts);
                s.keep_method_contract = args.keep_method_contract;
            }
            Some(OptKind::Fuse) => {
                s.kernels = next(&args.kernels, &mut ki);
                s.blocks = args.blocks;
                s.block_size = args.block_size.clone();
            }
            None => {}
        }
        out.push(s);
    }
    Ok(out)
}

/// Build the command-line steps; `Err` is a usage message.
fn steps(args: &ApplyArgs, dialect: Dialect) -> Result<Vec<CliStep>, String> {
    specs(args)?
        .iter()
        .map(|s| {
            build_step(s, dialect).map_err(|e| {
                let kind = OptKind::from_word(&s.opt);
                e.message(&format!("--opt {}", s.opt), |f| flag(kind, f))
            })
        })
        .collect()
}

/// Split at top-level occurrences of `sep` (outside brackets).
fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if ch == sep && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    out.push(cur.trim().to_string());
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
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fname = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and call: batch jobs write into the same directory in parallel.
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{fname}.{}-{n}.alpine-rs.tmp", std::process::id()));
    let res = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
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
    let opts = VerifyOptions {
        timeout_s,
        ..VerifyOptions::default()
    };
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

/// Compare ORIG and OPT under the interpreter. Without an entry, a file with several runnable
/// methods has each compared on its own (`validate` alone would ask which one), and the worst
/// verdict counts: different over could-not-decide over same.
pub fn validate_pair(orig: &str, opt: &str, entry: Option<&str>) -> sem::ValidateOutcome {
    let one = |entry: Option<&str>| {
        let opts = sem::ValidateOptions {
            entry: entry.map(str::to_string),
            ..sem::ValidateOptions::default()
        };
        sem::validate(orig, opt, &opts)
    };
    if entry.is_some() {
        return one(entry);
    }
    let names: Vec<String> = match sem::load(orig) {
        Ok(l) => match sem::entries(&l.prog, None) {
            Ok(ms) if ms.len() > 1 => ms.iter().map(|&m| l.prog.qualified(m)).collect(),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    };
    if names.is_empty() {
        return one(None);
    }
    let rank = |v: sem::Verdict| match v {
        sem::Verdict::Same => 0,
        sem::Verdict::Inconclusive => 1,
        sem::Verdict::BadInput => 2,
        sem::Verdict::Different => 3,
    };
    let mut merged: Option<sem::ValidateOutcome> = None;
    let mut summary = Vec::new();
    for n in &names {
        let o = one(Some(n));
        summary.push(format!("{n}: {}", o.summary));
        merged = Some(match merged {
            None => o,
            Some(mut m) => {
                m.equivalent += o.equivalent;
                m.skipped += o.skipped;
                m.void_ += o.void_;
                m.orig_faulty += o.orig_faulty;
                m.inconclusive += o.inconclusive;
                if rank(o.verdict) > rank(m.verdict) {
                    m.verdict = o.verdict;
                    m.diagnostics = o.diagnostics;
                    m.diag_file = o.diag_file;
                }
                if m.mismatch.is_none() {
                    m.mismatch = o.mismatch;
                }
                m
            }
        });
    }
    let mut m = merged.unwrap_or_else(|| one(None));
    m.summary = summary.join("\n");
    m
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
        "diagnostics": json_diags(file, &v.diagnostics),
    })
}

/// The most severe of two exit codes: bad input (2) over a definite no (1) over could not
/// decide (3) over success.
pub fn worst(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        3 => 1,
        1 => 2,
        _ => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

fn stderr_stream() -> StandardStream {
    let choice = if std::io::stderr().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
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
    let popts = ParseOptions {
        dialect: args.dialect,
    };
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
        let shown: Vec<Hunk> = hunks
            .into_iter()
            .filter(|h| !args.annotations_only || h.is_annotation())
            .collect();
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
        let v = validate_pair(&file.text, &res.output, args.entry.as_deref());
        checks = worst(checks, validate_code(v.verdict));
        if json {
            report["validate"] = validate_json([&file, &out_file], &v);
        } else {
            print_validate([&file, &out_file], &v);
        }
    }
    code = if code == 0 {
        checks
    } else {
        worst(code, checks)
    };
    let mut written = serde_json::Value::Null;
    if args.diff {
        code = worst(
            code,
            show_diff(review_hunks(&file.text, &res.output, &popts)),
        );
    } else if let Some(target) = args.output.as_ref().or(args.in_place.then_some(&args.file)) {
        // With --verify/--validate a file is written only when the checks passed: a rewrite
        // whose proof or behaviour is in doubt must not replace anything.
        if ok_to_emit && checks == 0 && (changed || !args.in_place) {
            match write_atomic(target, &res.output) {
                Ok(()) => written = target.display().to_string().into(),
                Err(e) => {
                    let unchanged = if args.in_place {
                        "; the file is unchanged"
                    } else {
                        ""
                    };
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
            eprintln!(
                "note: `{}` was not written because a check did not pass",
                target.display()
            );
        }
    } else if ok_to_emit {
        print!("{}", res.output);
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
    eprintln!(
        "verify: input {}; output {}",
        line(&pair.input),
        line(&pair.output)
    );
    if pair.output.verdict == Verdict::Failed && pair.input.verdict == Verdict::Failed {
        eprintln!(
            "note: the input does not verify either (`alpine-rs verify {}`)",
            input.name
        );
    } else if pair.output.verdict != Verdict::Verified
        && pair.output.verdict != Verdict::Failed
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
    eprintln!("{}", v.summary);
}
