//! What the integration tests share: fixture folders and their `// key: value` headers, the
//! `alpine-rs` binary, and one step-by-step harness for the optimizations. Snapshots are asserted
//! in the test binaries (see [`snapshot_tests`]), so every snapshot keeps its binary's name.
#![allow(dead_code, unused_imports, unused_macros)] // each test binary uses a subset

use alpine_rs::analyze::names::NameGen;
use alpine_rs::analyze::sites::{sites, Site};
use alpine_rs::check::DEFAULT_TIMEOUT_MS;
use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::{removal_span, EditSet, Layout};
use alpine_rs::front::parser::{parse, ParseOptions, Parsed};
use alpine_rs::front::Span;
use alpine_rs::transforms::driver::{apply, DriverOptions};
use alpine_rs::transforms::params::{value, Params, Raw};
use alpine_rs::transforms::registry::{self, Request};
use alpine_rs::transforms::{run, Ctx, Opt};
use std::cmp::Reverse;
use std::path::{Path, PathBuf};

/// Run the `alpine-rs` binary: (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh, empty temporary folder for test `name` of `suite`.
pub fn tmpdir(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("alpine-rs-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

// The fixture helpers every suite shares, and the benchmarks too.
pub use testkit::{corpus_dir, files, header, headers};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Verify every `ext` file of the fixture folder `dir` (relative to the repository) in one run
/// and check each verdict against its name: `unsupported_*` and `rejected_*` are refused
/// (exit 2) with the codes `refused` gives for them, `*_bad*` fails, every other file verifies.
pub fn assert_named_verdicts(dir: &str, ext: &str, unsupported: &str, rejected: &str) {
    let files = files(&root().join(dir), ext);
    assert!(files.len() >= 10, "fixtures missing in {dir}");
    let results = verify_json(&["--no-cache"], &files);
    for (path, got) in files.iter().zip(&results) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let (verdict, code) = if name.starts_with("unsupported_") {
            ("Unsupported", Some(unsupported))
        } else if name.starts_with("rejected_") {
            ("Unsupported", Some(rejected))
        } else if name.contains("_bad") {
            ("Failed", None)
        } else {
            ("Verified", None)
        };
        assert_eq!(got["verdict"], verdict, "{name}: {got}");
        if let Some(code) = code {
            assert_eq!(got["diagnostics"][0]["code"], code, "{name}: {got}");
        }
    }
}

/// The words of the `// args:` header lines: command-line arguments the case needs.
fn args(src: &str) -> Vec<String> {
    headers(src, "args")
        .iter()
        .flat_map(|a| a.split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect()
}

/// `--dialect v1|v2` in the `// args:` header selects the dialect, as on the command line.
pub fn parse_options(src: &str) -> ParseOptions {
    let mut opts = ParseOptions::default();
    for w in args(src).windows(2) {
        if w[0] == "--dialect" {
            opts.dialect = w[1].parse().expect("a dialect name after --dialect");
        }
    }
    opts
}

/// `--flag value` in the `// args:` header sets the parameter of `params`' optimization with
/// that flag, as on the command line.
fn override_params(params: &mut Params, args: &[String], dialect: alpine_rs::front::Dialect) {
    for w in args.windows(2) {
        let Some(flag) = w[0].strip_prefix("--") else {
            continue;
        };
        if let Some(p) = params.opt.meta().params.iter().find(|p| p.flag == flag) {
            let v = value(p, &Raw::Text(w[1].clone()), flag, dialect).expect("a valid value");
            params.set(p.key, v);
        }
    }
}

/// The registered optimization named `name`.
pub fn opt(name: &str) -> Opt {
    registry::lookup(name).unwrap_or_else(|| panic!("`{name}` is not registered"))
}

/// What [`stepwise`] applies.
#[derive(Clone, Copy, Default)]
pub struct Steps {
    /// Only the annotations of this optimization; `None`: those of every optimization.
    pub only: Option<Opt>,
    /// Go on after a refusal (the refused annotation stays in place); otherwise stop there.
    pub keep_going: bool,
}

impl Steps {
    /// The annotations of `opt`, up to the first refusal.
    pub fn only(opt: Opt) -> Steps {
        Steps { only: Some(opt), keep_going: false }
    }
}

/// What [`stepwise`] did.
#[derive(Default)]
pub struct Outcome {
    pub output: String,
    /// The diagnostics of every step, rendered against the text the step ran on, in step order.
    pub rendered: String,
    /// The same, of the applied steps only.
    pub notes: String,
    /// The same, of the refused steps only.
    pub refusals: String,
    pub errors: usize,
    /// Diagnostics that are not errors (warnings and notes).
    pub warnings: usize,
    /// The codes of the error diagnostics, in step order.
    pub codes: Vec<String>,
    pub applied: usize,
    pub refused: usize,
}

/// `off`, an offset of the text before removing `removal`, in the text after it.
fn shifted(off: usize, removal: Span) -> usize {
    if off >= removal.end() {
        off - removal.len()
    } else {
        off
    }
}

fn assert_parses(name: &str, what: &str, text: &str, parsed: &Parsed) {
    let errs: Vec<_> = parsed.errors().cloned().collect();
    assert!(
        errs.is_empty(),
        "{name}: {what} does not parse:\n{text}\n{}",
        render_plain(&[&SourceFile::new(name, text)], &errs)
    );
}

/// The reference for the driver (optimizations.md §8): apply the annotations one step at a time,
/// each on a fresh parse, through the public API only. The next annotation is the first in the
/// driver's order (registry rank, innermost site first, then source position) that was not
/// refused; its parameters are read from it, with `--flag value` overrides from the `// args:`
/// header (and `--dialect` from there too). A step removes the annotation, re-parses, finds the
/// site again, runs the optimization, applies its edits and re-parses the output, which must
/// parse. `name` names the file in the rendered diagnostics.
pub fn stepwise(name: &str, src: &str, steps: Steps) -> Outcome {
    let opts = parse_options(src);
    let args = args(src);
    let mut text = src.to_string();
    let mut parsed = parse(&text, &opts);
    assert_parses(name, "the input", &text, &parsed);
    let mut names = NameGen::for_text(src);
    // Offsets (in `text`) of the annotations that were refused: they stay in place.
    let mut refused: Vec<usize> = Vec::new();
    let mut out = Outcome::default();
    // Each step consumes or skips one annotation; the bound guards against a step that would
    // re-create annotations forever.
    for _ in 0..10_000 {
        let mut pending: Vec<(Site, Request)> = sites(&parsed.program)
            .into_iter()
            .flat_map(|s| {
                registry::requests(&text, parsed.dialect, &s)
                    .into_iter()
                    .map(move |r| (s.clone(), r))
            })
            .filter(|(_, r)| steps.only.is_none_or(|o| r.opt() == o))
            .filter(|(_, r)| !refused.contains(&r.annotation.span.start()))
            .collect();
        pending.sort_by_key(|(s, r)| {
            (registry::rank(r.opt()), Reverse(s.depth), r.annotation.span.start())
        });
        let Some((site, Request { annotation: ann, mut params })) = pending.into_iter().next()
        else {
            out.output = text;
            return out;
        };
        override_params(&mut params, &args, parsed.dialect);
        let removal = removal_span(&text, ann.span);
        let mut es = EditSet::new();
        es.replace(removal, "");
        let removed = es.apply(&text).expect("the removal applies");
        let parsed1 = parse(&removed, &opts);
        assert_parses(name, "the text without the annotation", &removed, &parsed1);
        let key = shifted(site.keyword.start(), removal);
        let site1 = sites(&parsed1.program)
            .into_iter()
            .find(|s| s.keyword.start() == key && s.kind == site.kind)
            .expect("the site after removal");
        names.add_text(&removed);
        let mut ctx = Ctx {
            src: &removed,
            parsed: &parsed1,
            layout: Layout::detect(&removed),
            names: &mut names,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            annotation_text: Some(ann.span.text(&text).to_string()),
        };
        let result = run(&mut ctx, &site1, &params);
        let diags = match &result {
            Ok(applied) => &applied.diagnostics,
            Err(diags) => diags,
        };
        let rendered = render_plain(&[&SourceFile::new(name, removed.clone())], diags);
        out.rendered.push_str(&rendered);
        out.errors += diags.iter().filter(|d| d.is_error()).count();
        out.warnings += diags.iter().filter(|d| !d.is_error()).count();
        out.codes.extend(diags.iter().filter(|d| d.is_error()).map(|d| d.code.to_string()));
        match result {
            Ok(applied) => {
                let output = applied.edits.apply(&removed).expect("the edits apply");
                parsed = parse(&output, &opts);
                assert_parses(name, "the output", &output, &parsed);
                refused = refused
                    .iter()
                    .filter_map(|&o| applied.edits.map_offset(shifted(o, removal)))
                    .collect();
                out.notes.push_str(&rendered);
                out.applied += 1;
                text = output;
            }
            Err(diags) => {
                assert!(diags.iter().any(|d| d.is_error()), "{name}: refusal without an error");
                out.refusals.push_str(&rendered);
                out.refused += 1;
                refused.push(ann.span.start());
                if !steps.keep_going {
                    out.output = text;
                    return out;
                }
            }
        }
    }
    panic!("{name}: the steps do not end");
}

/// The annotations of `kind` applied step by step ([`stepwise`]), up to the first refusal:
/// Ok(output, rendered notes) or Err(rendered refusal).
pub fn stepwise_apply(kind: Opt, name: &str, src: &str) -> Result<(String, String), String> {
    let o = stepwise(name, src, Steps::only(kind));
    if o.refused > 0 {
        Err(o.refusals)
    } else {
        Ok((o.output, o.notes))
    }
}

/// Apply `kind` step by step to one file and check its `// expect:` header; returns the
/// snapshot name and content.
pub fn stepwise_case(kind: Opt, path: &Path, prefix: &str) -> (String, String) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let src = std::fs::read_to_string(path).unwrap();
    let expect = header(&src, "expect").unwrap_or_default();
    let stem = format!("{prefix}_{}", name.trim_end_matches(".pvl"));
    match stepwise_apply(kind, &name, &src) {
        Ok((out, notes)) => {
            assert!(
                expect.starts_with("ok") || expect.starts_with("warn"),
                "{name}: applied but expected `{expect}`"
            );
            assert!(
                !out.contains(&format!("gpuopt {}", kind.meta().keyword)),
                "{name}: annotation left"
            );
            (stem, format!("{out}\n---- notes ----\n{notes}"))
        }
        Err(diag) => {
            assert!(
                expect.starts_with("reject"),
                "{name}: refused but expected `{expect}`:\n{diag}"
            );
            (stem, diag)
        }
    }
}

/// The driver (annotation removal, §8 order, re-parse) agrees with the step-by-step harness.
pub fn driver_agrees(kind: Opt, dirs: &[PathBuf]) {
    for dir in dirs {
        for p in files(dir, "pvl") {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let src = std::fs::read_to_string(&p).unwrap();
            let opts = DriverOptions { timeout_ms: 2000, ..Default::default() };
            let res = apply(&name, &src, &opts);
            match stepwise_apply(kind, &name, &src) {
                Ok((out, _)) => {
                    assert_eq!(res.exit_code(), 0, "{name}: driver refused");
                    assert_eq!(res.output, out, "{name}: driver output differs");
                }
                Err(_) => {
                    assert_eq!(res.exit_code(), 1, "{name}: driver did not refuse");
                    assert_eq!(res.output, src, "{name}: refused but rewritten");
                }
            }
        }
    }
}

/// The cases of an optimization's folder `folder`: with `prefix` "corpus" those of the shared
/// corpus, with "fixture" the project's own. `case(path, prefix)` checks one file and gives its
/// snapshot name and content. The folder must not be empty.
pub fn cases<'a>(
    prefix: &'a str,
    folder: &str,
    case: impl Fn(&Path, &str) -> (String, String) + 'a,
) -> impl Iterator<Item = (String, String)> + 'a {
    let dir = match prefix {
        "corpus" => corpus_dir(),
        _ => root().join("fixtures"),
    }
    .join(folder);
    let fs = files(&dir, "pvl");
    assert!(!fs.is_empty(), "no cases in {}", dir.display());
    fs.into_iter().map(move |p| case(&p, prefix))
}

/// The `corpus` and `fixtures` tests of an optimization's test binary: every case of the
/// optimization's folder (see [`cases`]) goes through `$case` and its snapshot is asserted. A
/// macro so that `insta::assert_snapshot!` expands in the test binary, whose name prefixes the
/// snapshot files.
macro_rules! snapshot_tests {
    ($folder:expr, $case:expr) => {
        #[test]
        fn corpus() {
            for (name, content) in common::cases("corpus", $folder, $case) {
                insta::assert_snapshot!(name, content);
            }
        }

        #[test]
        fn fixtures() {
            for (name, content) in common::cases("fixture", $folder, $case) {
                insta::assert_snapshot!(name, content);
            }
        }
    };
}
pub(crate) use snapshot_tests;

/// Run the driver on one file and check it against its `// expect:` header; returns the
/// snapshot name and content for the caller to assert (snapshot names stay per test binary).
pub fn driver_case(path: &Path, prefix: &str, opt: &str, keywords: &[&str]) -> (String, String) {
    let src = std::fs::read_to_string(path).expect("readable");
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let expect = header(&src, "expect").unwrap_or_else(|| panic!("{name}: no expect header"));
    let res = apply(&name, &src, &DriverOptions::default());
    let diags: Vec<_> = res.diagnostics().collect();
    let rendered: String = diags
        .iter()
        .map(|(f, d)| render_plain(&[*f], &[(*d).clone()]))
        .collect::<Vec<_>>()
        .join("\n");
    let snap = format!("{prefix}__{}", name.trim_end_matches(".pvl"));
    if expect == "ok" {
        assert_eq!(res.exit_code(), 0, "{name}: expected ok, got\n{rendered}");
        assert_ne!(res.output, src, "{name}: nothing changed");
        let re = parse(&res.output, &ParseOptions::default());
        assert!(!re.has_errors(), "{name}: output does not parse\n{}", res.output);
        for line in res.output.lines() {
            let t = line.trim_start();
            assert!(
                !(t.starts_with("gpuopt")
                    && keywords.iter().any(|k| t.contains(&format!(" {k} ")))),
                "{name}: consumed annotation left: {line}"
            );
        }
        let mut out = res.output.clone();
        if !rendered.is_empty() {
            out.push_str("\n// ---- diagnostics ----\n");
            out.push_str(&rendered);
        }
        (snap, out)
    } else if let Some(rest) = expect.strip_prefix("reject ") {
        let rest_opt = rest.split_whitespace().next().unwrap_or("");
        assert_eq!(opt, rest_opt, "{name}: reject of another optimization");
        assert_eq!(
            res.exit_code(),
            1,
            "{name}: expected a refusal, got\n{rendered}\n{}",
            res.output
        );
        assert_eq!(res.output, src, "{name}: refused file must stay unchanged");
        assert!(diags.iter().any(|(_, d)| d.is_error()), "{name}: no error diagnostic");
        (snap, rendered)
    } else {
        panic!("{name}: unexpected expectation {expect}");
    }
}

/// `alpine-rs verify --format json` with `extra` flags on `paths`, in one run: one JSON object
/// per file, in order.
pub fn verify_json(extra: &[&str], paths: &[PathBuf]) -> Vec<serde_json::Value> {
    let mut args = vec!["verify".to_string(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(paths.iter().map(|p| p.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, out, err) = run_cli(&args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"));
    let files = v.as_array().expect("one result per file").clone();
    assert_eq!(files.len(), paths.len(), "{out}");
    files
}

/// Write each case `(file, text, verdict, code)` into a fresh folder of `suite`, verify them
/// all in one run, and fail naming each case whose verdict differs, or whose first diagnostic
/// is not `code` (when `code` is not empty).
pub fn assert_cases<S: AsRef<str>>(suite: &str, cases: &[(&str, S, &str, &str)]) {
    let wrong = verify_cases(suite, cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The cases of [`assert_cases`] that do not come out as expected, described.
pub fn verify_cases<S: AsRef<str>>(suite: &str, cases: &[(&str, S, &str, &str)]) -> Vec<String> {
    let d = tmpdir(suite, "cases");
    let paths: Vec<PathBuf> = cases
        .iter()
        .map(|(name, text, _, _)| {
            let p = d.join(name);
            std::fs::write(&p, text.as_ref()).expect("writable");
            p
        })
        .collect();
    let files = verify_json(&[], &paths);
    cases
        .iter()
        .zip(&files)
        .filter(|((_, _, verdict, code), got)| {
            got["verdict"] != *verdict
                || (!code.is_empty() && got["diagnostics"][0]["code"] != *code)
        })
        .map(|((name, _, verdict, code), got)| {
            format!("{name}: expected {verdict} {code}, got {got}")
        })
        .collect()
}

/// `f` on every item, on as many threads as the machine has cores, results in item order. For
/// suites that run one long computation per file (the interpreter, `validate`): one thread would
/// leave the other cores idle, and the test harness runs a binary's tests in parallel only when
/// it has several. Each thread gets the stack the interpreter has on the command line's main
/// thread.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(items.len());
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (next, f) = (&next, &f);
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(s, move || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(item) = items.get(i) else { break };
                            mine.push((i, f(item)));
                        }
                        mine
                    })
                    .expect("a worker thread")
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a worker panicked")).collect()
    });
    for (i, r) in done.into_iter().flatten() {
        out[i] = Some(r);
    }
    out.into_iter().map(|r| r.expect("every item ran")).collect()
}
