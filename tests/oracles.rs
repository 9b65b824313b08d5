//! The two oracles on every optimization output: each `ok`/`warn` corpus case (and each applied
//! fixture) is optimized through the driver, then the output must validate against its input
//! (same final states on generated inputs) and must verify with Silicon.
//!
//! Verification runs all outputs in one Silicon batch. It needs the backend (`alpine-rs backend
//! install`, which `.ci/run` does first); without it the test fails with the provisioning error.

mod common;

use alpine_rs::diag::SourceFile;
use alpine_rs::transforms::driver::{apply, DriverOptions};
use alpine_rs::transforms::registry;
use common::{corpus_dir, files, header, root};
use std::path::Path;

/// The fixture folders: one per registered optimization, and `chain` (several per run).
fn folders() -> Vec<&'static str> {
    let mut out: Vec<&str> = registry::ALL.iter().map(|o| o.meta().name).collect();
    out.push("chain");
    out
}

/// Outputs the oracles do not accept yet, with the reason. Every entry is a bug or a limitation
/// to fix; the test fails when an entry starts passing (so the list only shrinks) and when
/// anything else fails.
const KNOWN_UNVERIFIED: &[(&str, &str)] = &[];
const KNOWN_INVALID: &[(&str, &str)] = &[];
/// Outputs run through neither oracle, with the reason. These corpus linearization inputs use
/// the linear length convention (`m.length == n * n` for an `int[][] m`, no row permissions):
/// under the language's semantics (and VerCors') ORIG's matrix then has `n * n` rows, not the
/// annotation's `n`, so no input of ORIG is a matrix of the annotated extents and none can be
/// carried over to OPT (`validate` says so, naming the extents); they do not verify either.
const SKIP: &[(&str, &str)] = &[
    ("corpus/linearize/ok_identity_contract.pvl", "linear convention input: ORIG's rows are n * n, the layout's n (no shared input); symbolic extents n x n (timeout)"),
    ("corpus/linearize/ok_mixed_layout_add.pvl", "linear convention input: ORIG's rows are rows * cols, the layout's rows (no shared input); symbolic extents rows x cols (timeout)"),
    ("corpus/linearize/ok_rotate.pvl", "linear convention input: ORIG's rows are n * n, the layout's n (no shared input); symbolic extents n x n (timeout)"),
];
/// Outputs that are validated but not verified: symbolic matrix extents make a cell bound
/// non-linear (`w * r + c < h * w`) where the encoder's product facts (stated for a thread's
/// own range, encode/stmts/bounds.rs) do not reach, and Silicon's Z3 does not prove it. Other
/// symbolic-extent outputs (ok_matrix_fact, ok_colmajor_update, ok_rowmajor_fill) verify.
const SKIP_VERIFY: &[(&str, &str)] = &[
    ("fixtures/linearize/ok_compound_indices.pvl", "symbolic extents (n + 1) x (n + 1): the cell bound (n + 1) * (r + 1) + c - 1 < (n + 1) * (n + 1) is non-linear (timeout)"),
    ("fixtures/linearize/ok_stencil_rows_symbolic.pvl", "symbolic extents h x w: the bound w * r + c + 1 < h * w of the method's quantified postcondition is non-linear (V-OOB)"),
];

fn cases() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for base in [corpus_dir(), root().join("fixtures")] {
        // Not every optimization has fixtures of every kind (there is no fixtures/chain).
        let dirs = folders().into_iter().map(|f| base.join(f)).filter(|d| d.is_dir());
        for f in dirs.flat_map(|d| files(&d, "pvl")) {
            let src = std::fs::read_to_string(&f).expect("readable");
            let args = header(&src, "args");
            let mut opts = DriverOptions::default();
            if args.is_some() {
                continue; // cases needing CLI flags are covered by their own optimization tests
            }
            opts.parse = Default::default();
            let name = rel(&f);
            if SKIP.iter().any(|(k, _)| *k == name) {
                continue;
            }
            let res = apply(&name, &src, &opts);
            if res.exit_code() == 0 && res.output != src {
                out.push((name, src, res.output));
            }
        }
    }
    out
}

fn rel(p: &Path) -> String {
    let s = p.display().to_string();
    match s.find("corpus/") {
        Some(i) => s[i..].to_string(),
        None => s.find("fixtures/").map_or(s.clone(), |i| s[i..].to_string()),
    }
}

#[test]
fn outputs_validate_against_inputs() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} applied cases", cases.len());
    let mut bad = Vec::new();
    for (name, orig, opt) in &cases {
        // No entry: the methods the optimization changed are matched by name and each is
        // compared (a file with several runnable methods needs no `// entry:` header).
        let o = alpine_rs::sem::validate(orig, opt, &alpine_rs::validate_options());
        let ok = matches!(o.verdict, alpine_rs::sem::validate::Verdict::Same);
        let known = KNOWN_INVALID.iter().any(|(k, _)| k == name);
        if ok == known {
            bad.push(format!("{name}: {:?} {}", o.verdict, o.summary));
        }
    }
    assert!(bad.is_empty(), "validate disagrees:\n{}", bad.join("\n"));
}

#[test]
fn outputs_verify() {
    let mut cases = cases();
    cases.retain(|(n, _, _)| !SKIP_VERIFY.iter().any(|(k, _)| k == n));
    let files: Vec<SourceFile> =
        cases.iter().map(|(n, _, o)| SourceFile::new(n.clone(), o.clone())).collect();
    let reports = alpine_rs::viper::verify_each(
        &files,
        &alpine_rs::viper::VerifyOptions { timeout_s: 120, ..Default::default() },
    );
    let mut bad = Vec::new();
    for ((name, _, _), r) in cases.iter().zip(&reports) {
        let ok = matches!(r.verdict, alpine_rs::viper::Verdict::Verified);
        let known = KNOWN_UNVERIFIED.iter().any(|(k, _)| k == name);
        if ok == known {
            let first = r
                .diagnostics
                .first()
                .map(|d| format!("{} {}", d.code, d.message))
                .unwrap_or_default();
            bad.push(format!("{name}: {:?} {first}", r.verdict));
        }
    }
    assert!(bad.is_empty(), "verify disagrees:\n{}", bad.join("\n"));
}
