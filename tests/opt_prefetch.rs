//! Data prefetching (`glob_to_reg`) on the shared corpus and on the project's own fixtures.
//!
//! Every file's `// expect:` header says what must happen; each file's output and diagnostics are
//! snapshotted. The steps are driven here directly (parse, remove the consumed annotation,
//! re-parse, run the transformation, apply its edits, re-parse the output) so the test does not
//! depend on the driver.

use alpine_rs::analyze::names::NameGen;
use alpine_rs::analyze::sites::sites;
use alpine_rs::diag::{render_plain, Diagnostic, SourceFile};
use alpine_rs::edit::{removal_span, Layout};
use alpine_rs::front::parser::{parse, ParseOptions};
use alpine_rs::front::Dialect;
use alpine_rs::transforms::registry;
use alpine_rs::transforms::{run, Ctx};
use std::path::{Path, PathBuf};

struct Outcome {
    output: String,
    /// Rendered diagnostics of every step, against the text that step ran on.
    rendered: String,
    errors: usize,
    warnings: usize,
}

/// `--dialect v1|v2` in the `// args:` header line selects the dialect, as on the command line.
fn options_for(src: &str) -> ParseOptions {
    let mut opts = ParseOptions::default();
    for args in header(src, "args") {
        let words: Vec<&str> = args.split_whitespace().collect();
        for w in words.windows(2) {
            if w[0] == "--dialect" {
                opts.dialect = w[1].parse().expect("a dialect name after --dialect");
            }
        }
    }
    opts
}

fn apply_all(name: &str, src: &str) -> Outcome {
    let opts = options_for(src);
    let mut cur = src.to_string();
    let mut names = NameGen::for_text(src);
    let mut refused = 0usize;
    let mut rendered = String::new();
    let (mut errors, mut warnings) = (0, 0);
    loop {
        let parsed = parse(&cur, &opts);
        assert!(!parsed.has_errors(), "{name}: input does not parse");
        let all = sites(&parsed.program);
        let found = all
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                registry::requests(&cur, parsed.dialect, s)
                    .into_iter()
                    .map(move |r| (i, r))
            })
            .filter(|(_, r)| r.opt().meta().name == "prefetch")
            .nth(refused);
        let Some((si, req)) = found else { break };
        let (ann, params) = (req.annotation, req.params);
        let rm = removal_span(&cur, ann.span);
        let removed = format!("{}{}", &cur[..rm.start()], &cur[rm.end()..]);
        let parsed2 = parse(&removed, &opts);
        assert!(
            !parsed2.has_errors(),
            "{name}: text without the annotation does not parse"
        );
        let site = sites(&parsed2.program)[si].clone();
        names.add_text(&removed);
        let mut ctx = Ctx {
            src: &removed,
            parsed: &parsed2,
            layout: Layout::detect(&removed),
            names: &mut names,
            timeout_ms: 2000,
            annotation_text: Some(ann.span.text(&cur).to_string()),
        };
        let result = run(&mut ctx, &site, &params);
        let (diags, next): (Vec<Diagnostic>, Option<String>) = match result {
            Ok(applied) => {
                let out = applied.edits.apply(&removed).expect("edits apply");
                (applied.diagnostics, Some(out))
            }
            Err(d) => (d, None),
        };
        errors += diags.iter().filter(|d| d.is_error()).count();
        warnings += diags.iter().filter(|d| !d.is_error()).count();
        let file = SourceFile::new(name, removed.clone());
        rendered.push_str(&render_plain(&[&file], &diags));
        match next {
            Some(out) => {
                let reparsed = parse(&out, &opts);
                assert!(
                    !reparsed.has_errors(),
                    "{name}: output does not parse:\n{out}"
                );
                cur = out;
            }
            None => {
                assert!(
                    diags.iter().any(|d| d.is_error()),
                    "{name}: refusal without an error"
                );
                refused += 1;
            }
        }
    }
    Outcome {
        output: cur,
        rendered,
        errors,
        warnings,
    }
}

fn header(src: &str, field: &str) -> Vec<String> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| {
            let rest = l.trim_start_matches('/').trim();
            let (k, v) = rest.split_once(':')?;
            (k.trim() == field).then(|| v.trim().to_string())
        })
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "pvl"));
    v.sort();
    v
}

fn check_folder(dir: &Path, prefix: &str) -> usize {
    let mut n = 0;
    for path in files(dir) {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let expect = header(&src, "expect").pop().unwrap_or_default();
        let notes = header(&src, "note").join(" ");
        let out = apply_all(&stem, &src);
        if expect.starts_with("reject") {
            assert!(out.errors > 0, "{stem}: expected a refusal");
            assert_eq!(
                out.output, src,
                "{stem}: a refused file must stay untouched"
            );
        } else {
            assert_eq!(expect, "ok", "{stem}: unknown expectation");
            assert_eq!(
                out.errors, 0,
                "{stem}: unexpected refusal:\n{}",
                out.rendered
            );
            assert!(
                !out.output.lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with("gpuopt glob_to_reg") || l.starts_with("gpuopt prefetch")
                }),
                "{stem}: consumed annotation left in the output"
            );
            if stem.starts_with("warn_") || notes.contains("a warning is expected") {
                assert!(out.warnings > 0, "{stem}: a warning is expected");
            }
        }
        let snap = format!("{}\n---- diagnostics ----\n{}", out.output, out.rendered);
        insta::assert_snapshot!(format!("{prefix}__{stem}"), snap);
        n += 1;
    }
    n
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/prefetch");
    let n = check_folder(&dir, "corpus");
    assert!(n >= 12, "corpus folder missing ({n} files)");
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/prefetch");
    check_folder(&dir, "fixture");
}

/// Issue #18: the load guard of `cond ? true : Perm(a[tid], …)` is `!cond`, printed with the
/// parentheses its `||` needs under `&&` and `!` (the old private printer ranked `&&` and `||`
/// equal and wrote `!(tid < 2 || tid > 5 && tid % 2 == 0)`, which VerCors 2 reads differently).
#[test]
fn negated_guard_keeps_its_parentheses_in_both_dialects() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/prefetch");
    for (stem, dialect) in [
        ("ok_negated_or_guard", Dialect::V1),
        ("ok_negated_or_guard_v2", Dialect::V2),
    ] {
        let src = std::fs::read_to_string(dir.join(format!("{stem}.pvl"))).unwrap();
        let out = apply_all(stem, &src);
        assert_eq!(out.errors, 0, "{stem}:\n{}", out.rendered);
        let parsed = parse(&out.output, &options_for(&src));
        assert_eq!(parsed.dialect, dialect, "{stem}");
        assert!(
            parsed.diagnostics.is_empty(),
            "{stem}: the output draws diagnostics (A0010?): {:?}",
            parsed.diagnostics
        );
        let guard = "if (!((tid < 2 || tid > 5) && tid % 2 == 0)) {\n        a_reg_0 = a[tid];";
        assert!(
            out.output.contains(guard),
            "{stem}: guard lost its parentheses:\n{}",
            out.output
        );
    }
}
