//! Harnesses shared by the per-optimization tests. Snapshots are asserted by the callers, so
//! every snapshot keeps the name of its own test binary.
#![allow(dead_code)] // each test binary uses a subset

use alpine_rs::analyze::names::NameGen;
use alpine_rs::analyze::sites::sites;
use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::{removal_span, EditSet, Layout};
use alpine_rs::front::parser::{parse, ParseOptions};
use alpine_rs::transforms::driver::{apply, DriverOptions};
use alpine_rs::transforms::registry;
use alpine_rs::transforms::{run, Ctx, Opt};
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

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.pvl` files of a folder, sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "pvl"));
    v.sort();
    v
}

/// A `// field: value` line of the file header.
pub fn header(src: &str, field: &str) -> Option<String> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.trim_start_matches('/').trim().split_once(':'))
        .find(|(k, _)| k.trim() == field)
        .map(|(_, v)| v.trim().to_string())
}

/// Apply every annotation of `kind` in source order, one re-parsed step at a time.
/// Ok(output, notes) or Err(rendered refusal).
/// The registered optimization named `name`.
pub fn opt(name: &str) -> Opt {
    registry::lookup(name).unwrap_or_else(|| panic!("`{name}` is not registered"))
}

pub fn stepwise_apply(kind: Opt, name: &str, src: &str) -> Result<(String, String), String> {
    let mut text = src.to_string();
    let mut names = NameGen::for_text(src);
    let mut notes = String::new();
    loop {
        let parsed = parse(&text, &ParseOptions::default());
        assert!(!parsed.has_errors(), "{name}: input does not parse");
        let found = sites(&parsed.program).into_iter().find_map(|s| {
            registry::requests(&text, parsed.dialect, &s)
                .into_iter()
                .find(|r| r.opt() == kind)
                .map(|r| (s, r))
        });
        let Some((site, req)) = found else {
            return Ok((text, notes));
        };
        let (ann, params) = (req.annotation, req.params);
        let rm = removal_span(&text, ann.span);
        let mut es = EditSet::new();
        es.replace(rm, "");
        let removed = es.apply(&text).unwrap();
        let shift = rm.len();
        let parsed2 = parse(&removed, &ParseOptions::default());
        assert!(
            !parsed2.has_errors(),
            "{name}: text without the annotation does not parse"
        );
        let key = site.keyword.start() - shift;
        let site2 = sites(&parsed2.program)
            .into_iter()
            .find(|s| s.keyword.start() == key && s.kind == site.kind)
            .expect("site after removal");
        let mut ctx = Ctx {
            src: &removed,
            parsed: &parsed2,
            layout: Layout::detect(&removed),
            names: &mut names,
            timeout_ms: 2000,
            annotation_text: Some(ann.span.text(&text).to_string()),
        };
        let file = SourceFile::new(name, removed.clone());
        match run(&mut ctx, &site2, &params) {
            Ok(applied) => {
                let out = applied.edits.apply(&removed).expect("edits apply");
                if !applied.diagnostics.is_empty() {
                    notes.push_str(&render_plain(&[&file], &applied.diagnostics));
                }
                let reparsed = parse(&out, &ParseOptions::default());
                let errs: Vec<_> = reparsed.errors().collect();
                assert!(
                    errs.is_empty(),
                    "{name}: output does not parse: {errs:?}\n{out}"
                );
                text = out;
            }
            Err(diags) => {
                assert!(
                    diags.iter().any(|d| d.is_error()),
                    "{name}: refusal without an error"
                );
                return Err(render_plain(&[&file], &diags));
            }
        }
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
        for p in files(dir) {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let src = std::fs::read_to_string(&p).unwrap();
            let opts = DriverOptions {
                timeout_ms: 2000,
                ..Default::default()
            };
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
        assert!(
            !re.has_errors(),
            "{name}: output does not parse\n{}",
            res.output
        );
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
        assert!(
            diags.iter().any(|(_, d)| d.is_error()),
            "{name}: no error diagnostic"
        );
        (snap, rendered)
    } else {
        panic!("{name}: unexpected expectation {expect}");
    }
}
