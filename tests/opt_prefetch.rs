//! Data prefetching (`glob_to_reg`) on the shared corpus and on the project's own fixtures.
//!
//! Every file's `// expect:` header says what must happen; each file's output and diagnostics are
//! snapshotted. The steps are driven here directly (parse, remove the consumed annotation,
//! re-parse, run the transformation, apply its edits, re-parse the output) so the test does not
//! depend on the driver.

mod common;

use alpine_rs::front::parser::parse;
use alpine_rs::front::Dialect;
use common::{files, header, headers, opt, parse_options, root, stepwise, Outcome, Steps};
use std::path::Path;

/// Every prefetch annotation, one step at a time; a refused one stays and the others go on.
fn apply_all(name: &str, src: &str) -> Outcome {
    stepwise(name, src, Steps { only: Some(opt("prefetch")), keep_going: true })
}

/// Check one file against its `// expect:` header; the snapshot name and content.
fn prefetch_case(path: &Path, prefix: &str) -> (String, String) {
    let stem = path.file_stem().unwrap().to_string_lossy().to_string();
    let src = std::fs::read_to_string(path).unwrap();
    let expect = header(&src, "expect").unwrap_or_default();
    let notes = headers(&src, "note").join(" ");
    let out = apply_all(&stem, &src);
    if expect.starts_with("reject") {
        assert!(out.errors > 0, "{stem}: expected a refusal");
        assert_eq!(out.output, src, "{stem}: a refused file must stay untouched");
    } else {
        assert_eq!(expect, "ok", "{stem}: unknown expectation");
        assert_eq!(out.errors, 0, "{stem}: unexpected refusal:\n{}", out.rendered);
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
    (
        format!("{prefix}__{stem}"),
        format!("{}\n---- diagnostics ----\n{}", out.output, out.rendered),
    )
}

common::snapshot_tests!("prefetch", prefetch_case);

#[test]
fn corpus_is_complete() {
    let n = files(&root().join("../shared/corpus/prefetch"), "pvl").len();
    assert!(n >= 12, "corpus folder missing ({n} files)");
}

/// Issue #18: the load guard of `cond ? true : Perm(a[tid], …)` is `!cond`, printed with the
/// parentheses its `||` needs under `&&` and `!` (the old private printer ranked `&&` and `||`
/// equal and wrote `!(tid < 2 || tid > 5 && tid % 2 == 0)`, which VerCors 2 reads differently).
#[test]
fn negated_guard_keeps_its_parentheses_in_both_dialects() {
    let dir = root().join("fixtures/prefetch");
    for (stem, dialect) in
        [("ok_negated_or_guard", Dialect::V1), ("ok_negated_or_guard_v2", Dialect::V2)]
    {
        let src = std::fs::read_to_string(dir.join(format!("{stem}.pvl"))).unwrap();
        let out = apply_all(stem, &src);
        assert_eq!(out.errors, 0, "{stem}:\n{}", out.rendered);
        let parsed = parse(&out.output, &parse_options(&src));
        assert_eq!(parsed.dialect, dialect, "{stem}");
        assert!(
            parsed.diagnostics.is_empty(),
            "{stem}: the output draws diagnostics (A0010?): {:?}",
            parsed.diagnostics
        );
        let guard = "if (!((tid < 2 || tid > 5) && tid % 2 == 0)) {\n        a_reg_0 = a[tid];";
        assert!(out.output.contains(guard), "{stem}: guard lost its parentheses:\n{}", out.output);
    }
}
