//! `alpine-rs sweep`: every registered optimization at every site, with its outcome; and, with
//! `--oracles`, every applied output verified and validated (a failure the original does not
//! have is an UNSOUND finding).
//!
//! In CI: the sweep without oracles over the corpus and VerCors' verifying examples (no panic,
//! no internal error), and the oracles over one corpus program of merge and of unroll (the
//! backend is needed, as for `tests/oracles.rs`). With `ALPINE_SLOW=1`: the oracles over the
//! whole corpus (about 14 minutes with a cold verification cache on a 2-core machine) and over VerCors'
//! examples that we verify.

mod common;

use common::{corpus_dir, files, root, run_cli, tmpdir};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// `site optimization params outcome codes` per attempt, from the JSON report.
fn rows(report: &serde_json::Value) -> Vec<String> {
    report["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .map(|a| {
            let params: Vec<String> = a["params"]
                .as_object()
                .expect("params")
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("?")))
                .collect();
            let codes: Vec<&str> =
                a["codes"].as_array().expect("codes").iter().filter_map(|c| c.as_str()).collect();
            let file = a["file"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("");
            format!(
                "{file} {} {} {} {} {}",
                a["site"].as_str().unwrap_or(""),
                a["optimization"].as_str().unwrap_or(""),
                params.join(" "),
                a["outcome"].as_str().unwrap_or(""),
                codes.join(",")
            )
            .trim_end()
            .to_string()
        })
        .collect()
}

#[test]
fn sweep_lists_applied_and_refused_attempts() {
    let between = corpus_dir().join("fuse/reject_statement_between.pvl");
    let chain = corpus_dir().join("chain/ok_fuse_unroll_prefetch.pvl");
    let (code, out, err) = run_cli(&["sweep", "--format", "json", s(&between), s(&chain)]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    let want = [
        "reject_statement_between.pvl 14:5 fuse kernels=2 refused A602",
        "reject_statement_between.pvl 14:5 tile mode=inter tile_size=2 refused A503",
        "reject_statement_between.pvl 14:5 tile mode=intra tile_size=2 refused A503",
        "reject_statement_between.pvl 21:5 tile mode=inter tile_size=2 refused A503",
        "reject_statement_between.pvl 21:5 tile mode=intra tile_size=2 refused A503",
        "ok_fuse_unroll_prefetch.pvl 21:8 prefetch array=y locations=tid applied",
        // `a[tid - 1]`, which the loop of `tally` reads on every iteration (reads as executed).
        "ok_fuse_unroll_prefetch.pvl 21:8 prefetch array=a locations=tid - 1 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 fuse kernels=2 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=inter tile_size=2 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=inter tile_size=32 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=inter tile_size=3 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=intra tile_size=2 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=intra tile_size=32 applied",
        "ok_fuse_unroll_prefetch.pvl 23:5 tile mode=intra tile_size=3 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 prefetch array=y locations=tid applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 prefetch array=a locations=tid - 1 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=inter tile_size=2 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=inter tile_size=32 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=inter tile_size=3 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=intra tile_size=2 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=intra tile_size=32 applied",
        "ok_fuse_unroll_prefetch.pvl 30:5 tile mode=intra tile_size=3 applied",
        "ok_fuse_unroll_prefetch.pvl 44:7 merge factor=2 applied",
        "ok_fuse_unroll_prefetch.pvl 44:7 merge factor=3 applied",
        "ok_fuse_unroll_prefetch.pvl 44:7 unroll factor=1 applied",
        "ok_fuse_unroll_prefetch.pvl 44:7 unroll factor=2 applied",
    ];
    assert_eq!(rows(&report), want, "{out}");
    // The summary counts per optimization, in the registry's order, with the refusal codes.
    let summary = report["summary"].as_array().expect("summary");
    let names: Vec<&str> = summary.iter().filter_map(|c| c["optimization"].as_str()).collect();
    assert_eq!(names, ["fuse", "merge", "prefetch", "tile", "unroll"]);
    assert_eq!(summary[2]["applied"], 4);
    let tile = &summary[3];
    assert_eq!((tile["applied"].as_u64(), tile["refused"].as_u64()), (Some(12), Some(4)));
    assert_eq!(tile["refusal_codes"][0]["code"], "A503");
    assert_eq!(report["findings"], 0);
    assert_eq!(report["exit"], 0);
    // The text table has the same rows, the counts and no finding.
    let (code, text, _) = run_cli(&["sweep", s(&between), s(&chain)]);
    assert_eq!(code, 0);
    assert!(text.contains("refused A602"), "{text}");
    assert!(text.contains("A503 x4"), "{text}");
    assert!(text.contains("2 files (0 bad input), 26 attempts"), "{text}");
    // Deterministic: the same report twice.
    assert_eq!(run_cli(&["sweep", s(&between), s(&chain)]).1, text);
}

#[test]
fn sweep_reports_missing_and_unparsable_files_and_goes_on() {
    let good = corpus_dir().join("fuse/reject_statement_between.pvl");
    let bad = corpus_dir().join("syntax/bad/missing_semicolon.pvl");
    let (code, out, err) = run_cli(&["sweep", "--json", "/no/such/file.pvl", s(&bad), s(&good)]);
    assert_eq!(code, 2, "{err}");
    let report = json(&out);
    let files = report["files"].as_array().expect("files");
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["bad_input"], true);
    assert_eq!(files[0]["diagnostics"][0]["code"], "A0000");
    assert_eq!(files[1]["bad_input"], true);
    assert_eq!(files[1]["diagnostics"][0]["code"], "A0001");
    assert_eq!(files[2]["bad_input"], false);
    assert_eq!(report["attempts"].as_array().map(Vec::len), Some(5));
    assert_eq!(report["exit"], 2);
    let (code, _, err) = run_cli(&["sweep", "/no/such/file.pvl"]);
    assert_eq!(code, 2);
    assert!(err.contains("error[A0000]"), "{err}");
    // Usage errors.
    assert_eq!(run_cli(&["sweep"]).0, 2);
    assert_eq!(run_cli(&["sweep", "--jobs", "0", s(&good)]).0, 2);
}

#[test]
fn sweep_of_a_file_without_sites_is_an_empty_table() {
    let d = tmpdir("sweep", "nosites");
    let f = d.join("fields.pvl");
    std::fs::write(&f, "class Cell {\n  int value;\n}\n").expect("write");
    let (code, out, err) = run_cli(&["sweep", s(&f)]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("FILE") && lines[0].contains("OUTCOME"), "{out}");
    assert_eq!(lines[1], "", "no attempt rows: {out}");
    assert!(out.contains("1 file (0 bad input), 0 attempts"), "{out}");
    let (code, out, _) = run_cli(&["sweep", "--json", s(&f)]);
    assert_eq!(code, 0);
    let report = json(&out);
    assert_eq!(report["attempts"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["files"][0]["sites"], 0);
    // Nothing was written beside the input.
    assert_eq!(std::fs::read_dir(&d).expect("dir").count(), 1);
    let _ = std::fs::remove_dir_all(&d);
}

/// The corpus files that parse (not `syntax/bad`).
fn corpus_files() -> Vec<PathBuf> {
    files(&corpus_dir(), "pvl").into_iter().filter(|p| !s(p).contains("/syntax/bad/")).collect()
}

/// VerCors' examples in `parallel`, `arrays` and `basic` that we verify (our exit code 0 in
/// `fixtures/peer/expectations.tsv`).
fn peer_files() -> Vec<PathBuf> {
    let tsv = std::fs::read_to_string(root().join("fixtures/peer/expectations.tsv"))
        .expect("fixtures/peer/expectations.tsv");
    let base = root().join("../shared/peer/vercors-v1.4.1");
    tsv.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let folder = cols.first()?.split('/').next()?;
            let ours = cols.get(2)?;
            (["parallel", "arrays", "basic"].contains(&folder) && *ours == "0")
                .then(|| base.join(cols[0]))
        })
        .collect()
}

/// Sweep with the oracles; fails naming every finding (UNSOUND or internal).
fn sweep_oracles(paths: &[PathBuf]) {
    let mut args = vec!["sweep", "--oracles", "--json"];
    args.extend(paths.iter().map(|p| s(p)));
    let (code, out, err) = run_cli(&args);
    let report = json(&out);
    let findings: Vec<String> = report["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .filter(|a| !a["finding"].is_null())
        .map(|a| {
            format!(
                "{} {} at {} {}: {} ({}): {}",
                a["file"],
                a["optimization"],
                a["site"],
                a["params"],
                a["finding"]["kind"],
                a["finding"]["oracle"],
                a["finding"]["detail"]
            )
        })
        .collect();
    assert!(findings.is_empty(), "findings:\n{}", findings.join("\n"));
    assert_eq!(code, 0, "{err}");
    // The oracles ran: some output was verified and validated.
    let checked = report["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .filter(|a| a["verify"] == "verified" && a["validate"] == "equivalent")
        .count();
    assert!(checked > 0, "no output went through both oracles: {out}");
}

/// Every attempt over the corpus and VerCors' verifying examples ends applied or refused with a
/// code: no panic, no internal error.
#[test]
fn sweep_has_no_internal_errors() {
    let mut paths = corpus_files();
    paths.extend(peer_files());
    let mut args = vec!["sweep", "--json"];
    args.extend(paths.iter().map(|p| s(p)));
    let (code, out, err) = run_cli(&args);
    let report = json(&out);
    let attempts = report["attempts"].as_array().expect("attempts");
    let internal: Vec<String> = attempts
        .iter()
        .filter(|a| a["outcome"] != "applied" && a["outcome"] != "refused")
        .map(|a| {
            format!("{} {} at {} {}: {}", a["file"], a["optimization"], a["site"], a["params"], a)
        })
        .collect();
    assert!(internal.is_empty(), "internal errors:\n{}", internal.join("\n"));
    assert!(attempts.len() > 400, "only {} attempts", attempts.len());
    assert_eq!(code, 0, "{err}");
}

/// The oracles over one corpus program each of iteration merging and unrolling (the whole
/// corpus: `ALPINE_SLOW=1`). CI time: every output of every optimization's own annotations goes
/// through both oracles in tests/oracles.rs; this test is about `sweep --oracles` end to end and
/// the outputs at sites and parameters no annotation names.
#[test]
fn sweep_oracles_corpus() {
    let mut paths = corpus_files();
    if std::env::var_os("ALPINE_SLOW").is_none() {
        let mut seen = std::collections::BTreeSet::new();
        paths.retain(|p| {
            let folder = p.parent().map(|d| d.display().to_string()).unwrap_or_default();
            let name = p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let chosen = ["merge", "unroll"].iter().any(|f| folder.ends_with(f));
            name.starts_with("ok_") && chosen && seen.insert(folder)
        });
        assert_eq!(paths.len(), 2, "one program each of merge and unroll: {paths:?}");
    }
    sweep_oracles(&paths);
}

#[test]
fn sweep_oracles_peer() {
    if std::env::var_os("ALPINE_SLOW").is_none() {
        eprintln!("skipped: set ALPINE_SLOW=1 to sweep VerCors' examples with the oracles");
        return;
    }
    let peer = peer_files();
    assert!(peer.len() >= 30, "expected the verifying examples, got {}", peer.len());
    sweep_oracles(&peer);
}
