//! Built-in reverification: PVL → Viper encoding, Silicon runs, and error mapping
//! (`shared/design/verification.md`).
//!
//! ```text
//! PVL AST → encode (with origins) → print (.vpr text + position map) → Silicon → map_errors
//! ```

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]
// The encoder's `Result<_, ()>` means "already reported": the diagnostic is in the encoder's sink.
#![allow(clippy::result_unit_err)]

pub mod ast;
pub mod encode;
pub mod errors;
pub mod print;
mod session;

use analyze::genperms::{self, GenPerms};
use diag::{Diagnostic, SourceFile};
use errors::{SiliconError, SiliconOutcome};
use front::ast::Program;
use front::span::Span;
use print::PosMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use encode::EncodeOptions;
pub use session::Session;

/// The Viper text of one PVL program and its position map.
#[derive(Clone, Debug)]
pub struct Encoded {
    pub vpr: String,
    pub posmap: PosMap,
    /// The Viper AST (without the prelude), e.g. for batching several programs into one file.
    pub program: ast::Program,
}

/// Encode a parsed PVL program into a self-contained Viper file.
pub fn encode(program: &Program, src: &SourceFile) -> Result<Encoded, Vec<Diagnostic>> {
    encode_with(program, src, EncodeOptions::default())
}

/// [`encode`] with options (a name prefix for batching).
pub fn encode_with(
    program: &Program,
    src: &SourceFile,
    opts: EncodeOptions,
) -> Result<Encoded, Vec<Diagnostic>> {
    let mut p = encode::encode_program(program, src, opts)?;
    let unit = p.clone();
    p.prelude = encode::PRELUDE.to_string();
    let (vpr, posmap) = print::print_program(&p);
    Ok(Encoded { vpr, posmap, program: unit })
}

/// Map Silicon's errors on an encoded program to PVL diagnostics, in source order.
pub fn map_errors(enc: &Encoded, errors: &[SiliconError]) -> Vec<Diagnostic> {
    let mut ds: Vec<Diagnostic> =
        errors.iter().map(|e| errors::map_error(&enc.posmap, e, None).diagnostic).collect();
    ds.sort_by_key(errors::sort_key);
    ds
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Verdict {
    Verified,
    Failed,
    Unsupported,
    BackendMissing,
    Timeout,
    Crash,
}

impl Verdict {
    /// Exit code of `alpine-rs verify` (`verification.md` §1; a timeout is inconclusive).
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Verified => 0,
            Verdict::Failed => 1,
            Verdict::Unsupported => 2,
            Verdict::BackendMissing | Verdict::Crash | Verdict::Timeout => 3,
        }
    }
}

/// The command line's time limit per verified file (`verify --timeout`, `apply` and `batch`
/// `--verify-timeout`), in seconds. Finite, so that a run nobody watches (CI, batch systems)
/// cannot keep a JVM and its z3 processes busy for hours: 10 minutes is 5 times the 120 s that
/// the peer and oracle suites allow a file (itself generous for a busy 2-core machine). `0` asks
/// for no limit.
pub const DEFAULT_TIMEOUT_S: u64 = 600;

#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    /// Silicon timeout in seconds (0: none).
    pub timeout_s: u64,
    /// Keep the generated `.vpr` and position map here.
    pub keep_vpr: Option<PathBuf>,
    /// Bypass the result cache.
    pub no_cache: bool,
    /// Leave out the contract-satisfiability checks (VerCors' `--disable-sat`).
    pub no_sat: bool,
    /// The PVL dialect to read the files in (`auto` detects it per file).
    pub dialect: front::DialectChoice,
    /// How many files to verify at once, in one JVM (`--jobs`); 0: the number of cores.
    pub jobs: usize,
    /// Generate permissions for permission-free sequential programs (`--generate-permissions`).
    pub gen_perms: GenPerms,
    /// Set, the Silicon request is withdrawn and the verdict is a crash "cancelled" (the
    /// language server sets it when a newer save or an edit makes the answer stale).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Encoder version, part of the result-cache key (§8.3).
const ENCODER_SALT: &str = concat!("alpine-rs-viper-encoder/", env!("CARGO_PKG_VERSION"), "/1");

/// Why no Silicon verdict came back.
enum RunError {
    Backend(String),
    Timeout,
    Crash(String),
}

type Backend = verify::silicon::Backend;

/// A session's backend, or why there is none (the provisioning message).
type Found = Result<Backend, String>;

/// From this many requests on, the driver JVM is tuned for throughput (full JIT) rather than
/// start-up (C1 + AppCDS): `BackendConfig::throughput` breaks even around 20–30 files. (The
/// backend also tunes a JVM for throughput when the first program it verifies is large.)
const THROUGHPUT_REQUESTS: usize = 24;

/// Finds the backend (Java, Silicon, z3, the driver) for about `requests` requests; starts
/// nothing.
fn discover_backend(opts: &VerifyOptions, requests: usize) -> Found {
    let cfg = verify::backend::BackendConfig {
        result_cache: !opts.no_cache,
        cache_salt: ENCODER_SALT.to_string(),
        jobs: (opts.jobs > 0).then_some(opts.jobs),
        throughput: requests >= THROUGHPUT_REQUESTS,
        ..verify::backend::BackendConfig::default()
    };
    Backend::discover(&cfg).map_err(|e| e.to_string())
}

/// Runs Silicon on Viper text: through `found` (a session's backend), or a backend found for
/// this one request.
fn run_silicon(
    found: Option<&Found>,
    text: &str,
    opts: &VerifyOptions,
) -> Result<SiliconOutcome, RunError> {
    match found {
        Some(Ok(b)) => run_silicon_on(b, text, opts),
        Some(Err(m)) => Err(RunError::Backend(m.clone())),
        None => match discover_backend(opts, 1) {
            Ok(b) => run_silicon_on(&b, text, opts),
            Err(m) => Err(RunError::Backend(m)),
        },
    }
}

fn run_silicon_on(
    backend: &Backend,
    text: &str,
    opts: &VerifyOptions,
) -> Result<SiliconOutcome, RunError> {
    use verify::silicon::Verdict as V;
    let out = match &opts.cancel {
        Some(c) => backend.verify_text_cancellable(text, opts.timeout_s, c),
        None => backend.verify_text(text, opts.timeout_s),
    };
    match out.verdict {
        V::Verified => Ok(SiliconOutcome::Verified),
        V::Timeout => Err(RunError::Timeout),
        V::Crash(m) => Err(RunError::Crash(m)),
        V::Failed(es) => Ok(SiliconOutcome::Failed(
            es.into_iter()
                .map(|e| {
                    let (start, end) =
                        e.pos.map_or(((0, 0), (0, 0)), |p| ((p.l1, p.c1), (p.l2, p.c2)));
                    SiliconError {
                        full_id: Some(e.full_id),
                        message: e.message,
                        start,
                        end,
                        reason: e.reason_pos.map(|p| ((p.l1, p.c1), (p.l2, p.c2))),
                    }
                })
                .collect(),
        )),
    }
}

/// Silicon's errors of a run that produced a verdict (none when it verified).
fn outcome_errors(outcome: Result<SiliconOutcome, RunError>) -> Vec<SiliconError> {
    match outcome {
        Ok(SiliconOutcome::Failed(es)) => es,
        _ => Vec::new(),
    }
}

#[derive(Clone, Debug)]
pub struct VerifyReport {
    pub verdict: Verdict,
    pub diagnostics: Vec<Diagnostic>,
    pub time: Duration,
}

fn write_kept(dir: &Path, stem: &str, enc: &Encoded) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let vpr = dir.join(format!("{stem}.vpr"));
    std::fs::write(&vpr, &enc.vpr)?;
    let map = serde_json::to_string_pretty(&enc.posmap).unwrap_or_default();
    std::fs::write(dir.join(format!("{stem}.posmap.json")), map)?;
    Ok(vpr)
}

/// Parse, encode and verify one PVL program.
pub fn verify_source(src: &SourceFile, opts: &VerifyOptions) -> VerifyReport {
    verify_source_via(None, src, opts)
}

/// [`verify_source`] through a session's backend (`None`: one found for this program).
fn verify_source_via(
    found: Option<&Found>,
    src: &SourceFile,
    opts: &VerifyOptions,
) -> VerifyReport {
    verify_joined_via(found, src, &[0], opts)
}

/// [`verify_source_via`] on the texts of several files joined at offsets `bases` (one offset:
/// one file): a class declared in several of them is merged first (`front::merge`).
fn verify_joined_via(
    found: Option<&Found>,
    src: &SourceFile,
    bases: &[usize],
    opts: &VerifyOptions,
) -> VerifyReport {
    let mut r = verify_source_inner(found, src, bases, opts);
    errors::add_default_help(&mut r.diagnostics);
    r
}

fn verify_source_inner(
    found: Option<&Found>,
    src: &SourceFile,
    bases: &[usize],
    opts: &VerifyOptions,
) -> VerifyReport {
    let start = Instant::now();
    match prepare(src, bases, opts) {
        Ok((enc, note)) => {
            let mut r = verify_encoded(found, src, &enc, opts, start);
            r.diagnostics.extend(note);
            r
        }
        Err(diagnostics) => {
            VerifyReport { verdict: Verdict::Unsupported, diagnostics, time: start.elapsed() }
        }
    }
}

/// Everything `verify` reports before it runs Silicon: syntax, resolution, types, constructs
/// the encoding refuses (V-UNSUPPORTED), and the note on generated permissions. Empty when the
/// program is ready for Silicon. Milliseconds: what an editor shows on every change.
pub fn check_source(src: &SourceFile, opts: &VerifyOptions) -> Vec<Diagnostic> {
    let mut ds = match prepare(src, &[0], opts) {
        Ok((_, note)) => note.into_iter().collect(),
        Err(ds) => ds,
    };
    errors::add_default_help(&mut ds);
    ds
}

/// Parse, merge and encode: the Viper program and the note to add to its report, or the
/// diagnostics that stop the program before Silicon.
fn prepare(
    src: &SourceFile,
    bases: &[usize],
    opts: &VerifyOptions,
) -> Result<(Encoded, Option<Diagnostic>), Vec<Diagnostic>> {
    let mut parsed = front::parse_file_for_verification(
        &src.name,
        &src.text,
        &front::ParseOptions { dialect: opts.dialect },
    );
    if parsed.has_errors() {
        return Err(parsed.errors().cloned().collect());
    }
    if bases.len() > 1 {
        let ds = front::merge::merge_split_classes(&mut parsed.program, &src.text, bases);
        if !ds.is_empty() {
            return Err(ds);
        }
    }
    let (gen_perms, note) = generation(&parsed.program, opts.gen_perms);
    let v2 = parsed.dialect == front::Dialect::V2;
    let enc_opts = EncodeOptions { no_sat: opts.no_sat, gen_perms, v2, ..EncodeOptions::default() };
    match encode_with(&parsed.program, src, enc_opts) {
        Ok(e) => {
            // Floats verified as reals: said once, with the generated-permissions note if any.
            let reals = e.program.reals.map(|at| {
                Diagnostic::warning(
                    "V-FLOAT-REAL",
                    "floats are verified as real numbers, as VerCors does: rounding, overflow, \
                     infinities and NaN are not modelled",
                )
                .with_primary(at, "the first float of the program")
                .with_help("read the verdict as one about real arithmetic (`alpine-rs explain V-FLOAT-REAL`)")
            });
            let note = match (note, reals) {
                (Some(n), Some(r)) => Some(n.with_note(r.message.clone())),
                (n, r) => n.or(r),
            };
            Ok((e, note))
        }
        Err(mut ds) => {
            ds.extend(note);
            Err(ds)
        }
    }
}

/// Whether permissions are generated for `prog` (decided once, here, so that the encoder does
/// not detect the program's shape again), and the note that says so when the user did not ask.
fn generation(prog: &Program, mode: GenPerms) -> (GenPerms, Option<Diagnostic>) {
    if mode != GenPerms::Auto {
        return (mode, None);
    }
    if !genperms::is_global_program(prog) {
        return (GenPerms::Never, None);
    }
    let note = Diagnostic::note(
        "V-GENERATED-PERMS",
        "no permission is stated anywhere in this global program: verified with permissions \
         generated as VeyMont does (write permission to all that each method's objects reach)",
    )
    .with_help(
        "state permissions yourself, or pass --no-generate-permissions to verify it as written",
    );
    (GenPerms::Always, Some(note))
}

/// Run Silicon on an encoded program and map its verdict.
fn verify_encoded(
    found: Option<&Found>,
    src: &SourceFile,
    enc: &Encoded,
    opts: &VerifyOptions,
    start: Instant,
) -> VerifyReport {
    if let Some(d) = &opts.keep_vpr {
        let stem = Path::new(&src.name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into());
        if let Err(e) = write_kept(d, &stem, enc) {
            return VerifyReport {
                verdict: Verdict::Crash,
                diagnostics: vec![Diagnostic::error(
                    "E-IO",
                    format!("cannot write to {}: {e}", d.display()),
                )],
                time: start.elapsed(),
            };
        }
    }
    let outcome = run_silicon(found, &enc.vpr, opts);
    let (verdict, diagnostics) = match outcome {
        Err(RunError::Backend(m)) => {
            (Verdict::BackendMissing, vec![Diagnostic::error("E-BACKEND", m)])
        }
        Err(RunError::Timeout) => (Verdict::Timeout, vec![timeout_diagnostic(opts.timeout_s)]),
        Err(RunError::Crash(m)) => (Verdict::Crash, vec![crash_diagnostic(m)]),
        Ok(SiliconOutcome::Verified) | Ok(SiliconOutcome::Failed(_)) => {
            let (es, unsat) = encode::settle_sat(&enc.posmap, outcome_errors(outcome));
            let mut ds = map_errors(enc, &es);
            ds.extend(unsat.into_iter().map(|m| m.diagnostic));
            ds.sort_by_key(errors::sort_key);
            let internal = ds.iter().any(|d| d.code == "E-INTERNAL");
            let verdict = if ds.is_empty() {
                Verdict::Verified
            } else if internal {
                Verdict::Crash
            } else {
                Verdict::Failed
            };
            (verdict, ds)
        }
        Ok(SiliconOutcome::Crashed(tail)) => (Verdict::Crash, vec![crash_diagnostic(tail)]),
    };
    VerifyReport { verdict, diagnostics, time: start.elapsed() }
}

/// No verdict within the time limit: inconclusive, and saying which limit ran out (the help says
/// how to raise it).
fn timeout_diagnostic(timeout_s: u64) -> Diagnostic {
    let message = if timeout_s > 0 {
        format!("verification timed out after {timeout_s} s; the result is inconclusive")
    } else {
        "verification timed out; the result is inconclusive".to_string()
    };
    Diagnostic::error("V-TIMEOUT", message)
}

/// Silicon ended without a verdict; `why` is what it left (its last words, the exception). A JVM
/// out of memory gets its own help: reinstalling the back end, the default help, would not help.
fn crash_diagnostic(why: String) -> Diagnostic {
    let d = Diagnostic::error("E-BACKEND", "Silicon stopped without a verdict");
    let d = if why.contains("OutOfMemoryError") {
        d.with_help(
            "Silicon's JVM ran out of memory: give it more (e.g. `JAVA_TOOL_OPTIONS=-Xmx8g`, \
             which every JVM reads), or verify fewer or smaller methods at a time",
        )
    } else {
        d
    };
    d.with_note(why)
}

/// Read, parse, encode and verify one file.
pub fn verify_file(path: &Path, opts: &VerifyOptions) -> (SourceFile, VerifyReport) {
    verify_file_via(None, path, opts)
}

fn verify_file_via(
    found: Option<&Found>,
    path: &Path,
    opts: &VerifyOptions,
) -> (SourceFile, VerifyReport) {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let src = SourceFile::new(path.display().to_string(), text);
            let r = verify_source_via(found, &src, opts);
            (src, r)
        }
        Err(e) => (
            SourceFile::new(path.display().to_string(), ""),
            VerifyReport {
                verdict: Verdict::Unsupported,
                diagnostics: vec![Diagnostic::error(
                    "E-IO",
                    format!("cannot read {}: {e}", path.display()),
                )
                .with_help("check the path and the file's permissions; sources must be UTF-8")],
                time: Duration::ZERO,
            },
        ),
    }
}

/// Verify several files as one program, as VerCors treats its inputs: their declarations share
/// one scope (a class of one file may use the classes of the others). Each file is parsed on its
/// own first, so that syntax errors are reported in the file that has them; the program is then
/// the files' texts one after the other, and every diagnostic label is moved back to the file
/// (index into `srcs`) and offset its span comes from.
pub fn verify_program(srcs: &[SourceFile], opts: &VerifyOptions) -> VerifyReport {
    verify_program_via(None, srcs, opts)
}

fn verify_program_via(
    found: Option<&Found>,
    srcs: &[SourceFile],
    opts: &VerifyOptions,
) -> VerifyReport {
    if let [one] = srcs {
        // Joining would add a line break: the text, and so the result cache's key, would
        // differ from `verify FILE`'s.
        return verify_source_via(found, one, opts);
    }
    let start = Instant::now();
    let mut syntax = Vec::new();
    for (i, src) in srcs.iter().enumerate() {
        let parsed = front::parse_file_for_verification(
            &src.name,
            &src.text,
            &front::ParseOptions { dialect: opts.dialect },
        );
        syntax.extend(parsed.errors().cloned().map(|mut d| {
            for l in &mut d.labels {
                l.file = i;
            }
            d
        }));
    }
    if !syntax.is_empty() {
        let mut diagnostics = syntax;
        errors::add_default_help(&mut diagnostics);
        return VerifyReport { verdict: Verdict::Unsupported, diagnostics, time: start.elapsed() };
    }
    let (joined, bases) = join_sources(srcs);
    let mut r = verify_joined_via(found, &joined, &bases, opts);
    for d in &mut r.diagnostics {
        for l in &mut d.labels {
            // `bases` is sorted and starts at 0: the last base at or before the span's start.
            let i = bases.partition_point(|&b| b <= l.span.start()).saturating_sub(1);
            let base = bases.get(i).copied().unwrap_or(0);
            l.file = i;
            l.span = Span::new(l.span.start() - base, l.span.end().saturating_sub(base));
        }
    }
    r.time = start.elapsed();
    r
}

/// The texts of `srcs` one after the other (each followed by a line break, so that a file
/// without a final newline cannot glue its last token to the next file's first), and the
/// offset at which each starts.
fn join_sources(srcs: &[SourceFile]) -> (SourceFile, Vec<usize>) {
    let mut text = String::new();
    let mut bases = Vec::new();
    for s in srcs {
        bases.push(text.len());
        text.push_str(&s.text);
        text.push('\n');
    }
    let name = srcs.first().map(|s| s.name.clone()).unwrap_or_default();
    (SourceFile::new(name, text), bases)
}

/// Verify several programs with one Silicon run: every program is encoded with its own name
/// prefix, all are printed after one shared prelude, and Silicon's errors are split by member.
/// One JVM start instead of one per program is what makes corpus-sized runs affordable.
pub fn verify_batch(srcs: &[SourceFile], opts: &VerifyOptions) -> Vec<VerifyReport> {
    let mut reports = verify_batch_inner(None, srcs, opts);
    for r in &mut reports {
        errors::add_default_help(&mut r.diagnostics);
    }
    reports
}

/// Verify each program as its own Silicon request (its own timeout, so one hard program cannot
/// sink the others), all in one JVM, `opts.jobs` at a time; reports in the order of `srcs`.
pub fn verify_each(srcs: &[SourceFile], opts: &VerifyOptions) -> Vec<VerifyReport> {
    Session::for_requests(opts, srcs.len()).verify_all(srcs)
}

fn verify_batch_inner(
    found: Option<&Found>,
    srcs: &[SourceFile],
    opts: &VerifyOptions,
) -> Vec<VerifyReport> {
    let start = Instant::now();
    let mut reports: Vec<Option<VerifyReport>> = vec![None; srcs.len()];
    let mut notes: Vec<Option<Diagnostic>> = vec![None; srcs.len()];
    let mut units = Vec::new();
    let mut unit_of = Vec::new();
    for (i, src) in srcs.iter().enumerate() {
        let parsed = front::parse_file_for_verification(
            &src.name,
            &src.text,
            &front::ParseOptions { dialect: opts.dialect },
        );
        if parsed.has_errors() {
            reports[i] = Some(VerifyReport {
                verdict: Verdict::Unsupported,
                diagnostics: parsed.errors().cloned().collect(),
                time: Duration::ZERO,
            });
            continue;
        }
        let (gen_perms, note) = generation(&parsed.program, opts.gen_perms);
        notes[i] = note;
        let v2 = parsed.dialect == front::Dialect::V2;
        let opts = EncodeOptions { prefix: format!("u{i}_"), no_sat: opts.no_sat, gen_perms, v2 };
        match encode::encode_program(&parsed.program, src, opts) {
            Ok(p) => {
                units.push(p);
                unit_of.push(i);
            }
            Err(ds) => {
                reports[i] = Some(VerifyReport {
                    verdict: Verdict::Unsupported,
                    diagnostics: ds,
                    time: Duration::ZERO,
                })
            }
        }
    }
    let refs: Vec<&ast::Program> = units.iter().collect();
    let (text, posmap) = print::print_batch(encode::PRELUDE, &refs);
    let fail_all = |reports: &mut Vec<Option<VerifyReport>>, v: Verdict, d: Diagnostic| {
        for &i in &unit_of {
            reports[i] = Some(VerifyReport {
                verdict: v,
                diagnostics: vec![d.clone()],
                time: start.elapsed(),
            });
        }
    };
    if !unit_of.is_empty() {
        if let Some(d) = &opts.keep_vpr {
            let _ = std::fs::create_dir_all(d);
            let _ = std::fs::write(d.join("batch.vpr"), &text);
        }
        let outcome = run_silicon(found, &text, opts);
        match outcome {
            Err(RunError::Backend(m)) => {
                fail_all(&mut reports, Verdict::BackendMissing, Diagnostic::error("E-BACKEND", m))
            }
            Err(RunError::Timeout) => {
                fail_all(&mut reports, Verdict::Timeout, timeout_diagnostic(opts.timeout_s))
            }
            Err(RunError::Crash(m)) => fail_all(&mut reports, Verdict::Crash, crash_diagnostic(m)),
            Ok(SiliconOutcome::Crashed(tail)) => {
                fail_all(&mut reports, Verdict::Crash, crash_diagnostic(tail))
            }
            Ok(outcome @ (SiliconOutcome::Verified | SiliconOutcome::Failed(_))) => {
                let es = outcome_errors(Ok(outcome));
                let (es, unsat) = encode::settle_sat(&posmap, es);
                let mut per: Vec<Vec<Diagnostic>> = vec![Vec::new(); units.len()];
                for m in unsat {
                    if let Some(v) = per.get_mut(m.unit) {
                        v.push(m.diagnostic);
                    }
                }
                for e in &es {
                    let m = errors::map_error(&posmap, e, None);
                    if let Some(v) = per.get_mut(m.unit) {
                        v.push(m.diagnostic);
                    }
                }
                // A parse or type error stops Silicon before verifying anything: no unit of
                // the batch is verified then.
                let rejected = es.iter().any(|e| {
                    errors::error_kind(e) == "internal" || posmap.member_at(e.start.0).is_none()
                });
                for (u, mut ds) in per.into_iter().enumerate() {
                    ds.sort_by_key(errors::sort_key);
                    if rejected && ds.is_empty() {
                        ds.push(Diagnostic::error(
                            "E-INTERNAL",
                            "not verified: Silicon rejected another program of the same batch",
                        ));
                    }
                    let verdict = if ds.is_empty() {
                        Verdict::Verified
                    } else if ds.iter().any(|d| d.code == "E-INTERNAL") {
                        Verdict::Crash
                    } else {
                        Verdict::Failed
                    };
                    reports[unit_of[u]] =
                        Some(VerifyReport { verdict, diagnostics: ds, time: start.elapsed() });
                }
            }
        }
    }
    reports
        .into_iter()
        .zip(notes)
        .map(|(r, note)| {
            let mut r = r.unwrap_or(VerifyReport {
                verdict: Verdict::Crash,
                diagnostics: vec![],
                time: Duration::ZERO,
            });
            r.diagnostics.extend(note);
            r
        })
        .collect()
}
