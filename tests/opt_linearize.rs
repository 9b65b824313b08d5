//! Tiling: every corpus file under corpus/linearize and every fixture under fixtures/linearize does what
//! its `// expect:` header says; outputs and refusals are snapshotted.

use alpine_rs::analyze::names::NameGen;
use alpine_rs::analyze::sites::sites;
use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::{removal_span, EditSet, Layout};
use alpine_rs::front::ast::OptKind;
use alpine_rs::front::parser::{parse, ParseOptions};
use alpine_rs::transforms::{run, Ctx, Params};
use std::path::{Path, PathBuf};

const KIND: OptKind = OptKind::Linearize;

/// Apply every annotation of `KIND` in source order, one re-parsed step at a time.
/// Ok(output, notes) or Err(rendered refusal).
fn apply_all(name: &str, src: &str) -> Result<(String, String), String> {
    let mut text = src.to_string();
    let mut names = NameGen::for_text(src);
    let mut notes = String::new();
    loop {
        let parsed = parse(&text, &ParseOptions::default());
        assert!(!parsed.has_errors(), "{name}: input does not parse");
        let found = sites(&parsed.program).into_iter().find_map(|s| {
            s.annotations
                .iter()
                .find(|a| a.kind.opt() == KIND)
                .cloned()
                .map(|a| (s, a))
        });
        let Some((site, ann)) = found else {
            return Ok((text, notes));
        };
        let params = Params::from_annotation(&ann);
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

fn expect_of(src: &str) -> String {
    src.lines()
        .find_map(|l| l.strip_prefix("// expect:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "pvl"));
    v.sort();
    v
}

fn check_dir(dir: &Path, prefix: &str) -> usize {
    let mut n = 0;
    for p in files(dir) {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&p).unwrap();
        let expect = expect_of(&src);
        let stem = format!("{prefix}_{}", name.trim_end_matches(".pvl"));
        match apply_all(&name, &src) {
            Ok((out, notes)) => {
                assert!(
                    expect.starts_with("ok") || expect.starts_with("warn"),
                    "{name}: applied but expected `{expect}`"
                );
                assert!(
                    !out.contains(&format!("gpuopt {}", KIND.alpinist_name())),
                    "{name}: annotation left"
                );
                insta::assert_snapshot!(stem, format!("{out}\n---- notes ----\n{notes}"));
            }
            Err(diag) => {
                assert!(
                    expect.starts_with("reject"),
                    "{name}: refused but expected `{expect}`:\n{diag}"
                );
                insta::assert_snapshot!(stem, diag);
            }
        }
        n += 1;
    }
    n
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/linearize");
    assert!(
        check_dir(&dir, "corpus") > 0,
        "no corpus files found in {}",
        dir.display()
    );
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/linearize");
    check_dir(&dir, "fixture");
}
