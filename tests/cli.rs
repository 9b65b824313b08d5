//! End-to-end tests of the command line: exit codes, output modes, diagnostics.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_cli(args)
}

/// Runs the CLI with `args`, expecting exit `code` and each of `needles` in what it writes to
/// stderr.
fn expect_err(args: &[&str], code: i32, needles: &[&str]) {
    let (got, _, err) = run(args);
    assert_eq!(got, code, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

fn tmpdir(name: &str) -> PathBuf {
    common::tmpdir("cli", name)
}

/// A fresh directory for test `name` holding one file, `file`, with `text` in it: the directory
/// and the file.
fn tmpfile(name: &str, file: &str, text: impl AsRef<[u8]>) -> (PathBuf, PathBuf) {
    let d = tmpdir(name);
    let f = d.join(file);
    std::fs::write(&f, text).unwrap();
    (d, f)
}

const PLAIN: &str = "class A {\n  requires n >= 0;\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    while (i < n) {\n      i = i + 1;\n    }\n  }\n}\n";

#[test]
fn parse_exit_codes() {
    let ok = corpus().join("syntax/loops.pvl");
    let bad = corpus().join("syntax/bad/missing_semicolon.pvl");
    assert_eq!(run(&["parse", ok.to_str().unwrap()]).0, 0);
    expect_err(
        &["parse", ok.to_str().unwrap(), bad.to_str().unwrap()],
        2,
        &["error[A0001]", "missing_semicolon.pvl:14:"],
    );
    assert_eq!(run(&["parse", "/no/such/file.pvl"]).0, 2);
    assert_eq!(run(&["parse", "--bogus-flag", ok.to_str().unwrap()]).0, 2);
}

#[test]
fn misplaced_annotation_is_bad_input() {
    let f = corpus().join("syntax/bad/misplaced_gpuopt_on_par.pvl");
    expect_err(&["parse", f.to_str().unwrap()], 2, &["error[A0004]", ":10:5"]);
    let (code, _, _) = run(&["apply", f.to_str().unwrap()]);
    assert_eq!(code, 2);
}

#[test]
fn list_sites_with_annotations() {
    let f = corpus().join("chain/ok_fuse_unroll_prefetch.pvl");
    let (code, out, _) = run(&["list", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("par mark gpuopt fuse 2 1;"), "{out}");
    assert!(
        out.lines().any(|l| l.contains(" for ") && l.ends_with("gpuopt loop_unroll k 1;")),
        "{out}"
    );
    let (code, out, _) = run(&["list", "--format", "json", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["sites"].as_array().is_some_and(|s| s.len() >= 4));
}

#[test]
fn list_places_a_ranged_for_at_its_keyword() {
    // Every loop site is reported at its keyword; the v2 `for (int i = lo .. hi)` was reported
    // at its variable, so its column disagreed with the C-style `for`.
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/unroll/ok_v2_ranged_for.pvl");
    let (code, out, _) = run(&["list", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.starts_with("20:5 for ")), "{out}");
}

#[test]
fn apply_without_annotations_is_identity_and_check_passes() {
    let (_, f) = tmpfile("identity", "plain.pvl", PLAIN);
    let (code, out, _) = run(&["apply", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(out, PLAIN);
    let (code, out, _) = run(&["apply", "--check", f.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""));
    let (code, out, _) = run(&["apply", "--diff", f.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn at_that_matches_nothing_is_a_usage_error() {
    let (_, f) = tmpfile("at", "plain.pvl", PLAIN);
    let (code, _, err) =
        run(&["apply", "--opt", "unroll", "--at", "line:2", "--factor", "1", f.to_str().unwrap()]);
    // line 2 is inside the method: the innermost loop is not there, the method has one loop below.
    assert!(code == 2 || code == 0 || code == 1, "{err}");
    expect_err(
        &[
            "apply",
            "--opt",
            "tile",
            "--at",
            "line:6",
            "--tile-mode",
            "inter",
            "--tile-size",
            "4",
            f.to_str().unwrap(),
        ],
        2,
        &["A0005"],
    );
    let (code, _, _) = run(&["apply", "--opt", "vectorize", "--at", "line:6", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    let (code, _, _) =
        run(&["apply", "--opt", "unroll", "--at", "six", "--factor", "1", f.to_str().unwrap()]);
    assert_eq!(code, 2);
}

#[test]
fn failed_write_leaves_no_file() {
    let (d, f) = tmpfile("write", "plain.pvl", PLAIN);
    let target = d.join("no/such/dir/out.pvl");
    let (code, _, err) = run(&["apply", "-o", target.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(&f).unwrap(), PLAIN);
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples")
}

fn copy_example(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(examples().join(name), &to).expect("copy example");
    to
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn apply_output_modes_agree() {
    let d = tmpdir("modes");
    let f = copy_example(&d, "bump.pvl");
    let orig = std::fs::read_to_string(&f).unwrap();
    let (code, stdout, err) = run(&["apply", s(&f)]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(stdout, orig);
    assert!(!stdout.contains("gpuopt"), "{stdout}");
    // -o writes exactly what stdout shows.
    let o = d.join("out.pvl");
    assert_eq!(run(&["apply", "-o", s(&o), s(&f)]).0, 0);
    assert_eq!(std::fs::read_to_string(&o).unwrap(), stdout);
    // --diff is a unified diff of the two, and leaves the file alone.
    let (code, diff, _) = run(&["apply", "--diff", s(&f)]);
    assert_eq!(code, 0);
    assert!(diff.starts_with(&format!("--- a/{}\n+++ b/{}\n@@ ", s(&f), s(&f))), "{diff}");
    assert!(diff.contains("-      gpuopt loop_unroll r 3;\n"), "{diff}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), orig);
    // --check: exit 1 and the same diff while the file would change…
    let (code, check, _) = run(&["apply", "--check", s(&f)]);
    assert_eq!((code, check.as_str()), (1, diff.as_str()));
    // …--in-place rewrites it atomically (no temporary file left)…
    assert_eq!(run(&["apply", "--in-place", s(&f)]).0, 0);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), stdout);
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // …after which there is nothing left to do.
    assert_eq!(run(&["apply", "--check", s(&f)]), (0, String::new(), String::new()));
}

/// Runs `alpine-rs` with a file-size limit of `limit` bytes: any write past it fails with EFBIG
/// (the SIGXFSZ that would kill the process is ignored, as a shell's `ulimit -f` user would see).
/// Unlike a read-only directory this also fails for root, which the tests may run as.
fn run_with_file_size_limit(args: &[&str], limit: u64) -> (i32, String, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = bin();
    cmd.args(args);
    // SAFETY: only async-signal-safe libc calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim =
                libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: libc::RLIM_INFINITY };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn in_place_leaves_the_original_intact_when_the_write_fails() {
    let d = tmpdir("inplace-fail");
    let f = copy_example(&d, "bump.pvl");
    let orig = std::fs::read_to_string(&f).unwrap();
    // The write really fails half-way: the temporary file gets 64 bytes, then EFBIG.
    let (code, stdout, err) = run_with_file_size_limit(&["apply", "--in-place", s(&f)], 64);
    assert_eq!(code, 2, "{err}");
    assert!(stdout.is_empty());
    assert!(err.contains("cannot write") && err.contains("the file is unchanged"), "{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), orig);
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["bump.pvl".to_string()], "temporary file left behind");
    // Control: with room for the output the same command rewrites the file.
    let (code, _, err) = run_with_file_size_limit(&["apply", "--in-place", s(&f)], 1 << 20);
    assert_eq!(code, 0, "{err}");
    assert_ne!(std::fs::read_to_string(&f).unwrap(), orig);
}

/// `alpine-rs apply --in-place` on `file`, killed by the kernel the moment it writes past `limit`
/// bytes into any file: SIGXFSZ keeps its default action (terminate), unlike in
/// [`run_with_file_size_limit`]. No core file is written.
fn in_place_killed_at_file_size(file: &Path, limit: u64) -> std::process::ExitStatus {
    use std::os::unix::process::CommandExt;
    let mut cmd = bin();
    cmd.args(["apply", "--in-place", s(file)]);
    // SAFETY: only async-signal-safe libc calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let fsize =
                libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: libc::RLIM_INFINITY };
            let core = libc::rlimit { rlim_cur: 0, rlim_max: libc::RLIM_INFINITY };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &fsize) != 0
                || libc::setrlimit(libc::RLIMIT_CORE, &core) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.output().expect("runs").status
}

/// A process killed while it writes the new text (here by SIGXFSZ, at several points of the
/// write) leaves the file as it was; one that finishes the write leaves the new text: never a
/// partial file. What a kill can leave is the hidden temporary file beside it.
#[test]
fn in_place_killed_during_the_write_leaves_the_old_or_the_new_file() {
    use std::os::unix::process::ExitStatusExt;
    let d = tmpdir("inplace-killed");
    let f = copy_example(&d, "bump.pvl");
    let orig = std::fs::read_to_string(&f).unwrap();
    let (code, new, err) = run(&["apply", s(&f)]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(new, orig);
    let len = new.len() as u64;
    let temporaries = || -> Vec<(String, u64)> {
        std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "bump.pvl")
            .map(|n| {
                let size = std::fs::metadata(d.join(&n)).map_or(0, |m| m.len());
                (n, size)
            })
            .collect()
    };
    for limit in [1, 64, len / 2, len - 1] {
        let status = in_place_killed_at_file_size(&f, limit);
        assert_eq!(status.signal(), Some(libc::SIGXFSZ), "limit {limit}: {status}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), orig, "killed at byte {limit}");
        // The kill came in the middle of the write: the temporary file holds `limit` bytes.
        let tmp = temporaries();
        assert!(
            matches!(&tmp[..], [(n, size)] if n.starts_with(".bump.pvl.") && n.ends_with(".tmp") && *size == limit),
            "limit {limit}: {tmp:?}"
        );
        std::fs::remove_file(d.join(&tmp[0].0)).unwrap();
    }
    // Room for exactly the new text: the write completes and the file is replaced.
    let status = in_place_killed_at_file_size(&f, len);
    assert_eq!(status.code(), Some(0), "{status}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), new);
    assert_eq!(temporaries(), []);
}

#[test]
fn apply_verify_reports_both_verdicts_and_times() {
    let d = tmpdir("verify-ok");
    let f = copy_example(&d, "bump.pvl");
    let o = d.join("out.pvl");
    let (code, _, err) = run(&["apply", "--verify", "--format", "json", "-o", s(&o), s(&f)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("json report");
    for side in ["input", "output"] {
        assert_eq!(v["verify"][side]["verdict"], "Verified", "{v}");
        assert!(v["verify"][side]["time_ms"].is_u64(), "{v}");
    }
    assert_eq!(v["written"], s(&o));
    assert!(o.exists());
    // Text mode names both verdicts.
    let (code, _, err) = run(&["apply", "--verify", "--diff", s(&f)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("verify: input verified in") && err.contains("; output verified in"),
        "{err}"
    );
}

const WRONG_POST: &str = "class A {\n  requires n >= 0;\n  ensures \\result == n + 1;\n  int m(int n) {\n    return n;\n  }\n}\n";

#[test]
fn apply_verify_exit_codes_and_no_write_on_failure() {
    let (d, f) = tmpfile("verify-fail", "wrong.pvl", WRONG_POST);
    let o = d.join("out.pvl");
    // Nothing to optimize, so the output is the input, and it does not verify: exit 1.
    expect_err(
        &["apply", "--verify", "-o", s(&o), s(&f)],
        1,
        &["output FAILED", "the input does not verify either"],
    );
    assert!(!o.exists(), "an output that fails verification must not be written");
    // No backend: no verdict, exit 3, nothing written either.
    let empty = tmpdir("verify-nobackend-cache");
    let out = bin()
        .args(["apply", "--verify", "-o", s(&o), s(&copy_example(&d, "bump.pvl"))])
        .env("ALPINE_RS_CACHE", &empty)
        .env_remove("ALPINE_SILICON_JAR")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("backend missing"), "{err}");
    assert!(!o.exists());
}

#[test]
fn apply_validate_compares_input_and_output() {
    let d = tmpdir("validate");
    let f = copy_example(&d, "pipeline.pvl");
    let (code, _, err) = run(&["apply", "--validate", "--format", "json", "--diff", s(&f)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("json report");
    assert_eq!(v["validate"]["verdict"], "same", "{v}");
    // Both kernels of the file changed and were compared (each on its own), on generated inputs.
    assert!(v["validate"]["equivalent"].as_u64().unwrap_or(0) >= 2, "{v}");
    let methods = v["validate"]["methods"].as_array().expect("per-method rows");
    for m in ["Pipeline.accumulate", "Pipeline.axpy"] {
        let row = methods.iter().find(|r| r["method"] == m).unwrap_or_else(|| panic!("{m}: {v}"));
        assert_eq!(row["verdict"], "equivalent", "{v}");
    }
    // A precondition no input satisfies: nothing can be compared, exit 3, nothing written.
    let g = d.join("never.pvl");
    std::fs::write(
        &g,
        "class A {\n  requires n > 0 && n < 0;\n  int m(int n) {\n    return n;\n  }\n}\n",
    )
    .unwrap();
    let o = d.join("never.out.pvl");
    expect_err(
        &["apply", "--validate", "-o", s(&o), s(&g)],
        3,
        &["INCONCLUSIVE", "was not written"],
    );
    assert!(!o.exists());
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("`{needle}` not in the fixture"))
}

#[test]
fn three_annotations_in_one_run_equal_three_opt_groups() {
    let f = examples().join("pipeline.pvl");
    let text = std::fs::read_to_string(&f).unwrap();
    let kinds: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("gpuopt "))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(kinds, vec!["glob_to_reg", "loop_unroll", "tile"]);
    let (code, by_annotations, err) = run(&["apply", s(&f)]);
    assert_eq!(code, 0, "{err}");
    // All three applied: no request left, a register, two peeled iterations, tiles of 32.
    assert!(!by_annotations.contains("gpuopt"), "{by_annotations}");
    assert!(by_annotations.contains("int w_reg_0 = w[tid];"), "{by_annotations}");
    assert!(by_annotations.contains("loop_invariant 2 <= r && r <= reps;"), "{by_annotations}");
    assert!(by_annotations.contains("par scale (int tid = 0 .. 32)"), "{by_annotations}");
    // The same three steps from the command line, in Alpinist's order, every --at a line of the
    // input file (later steps are located through the edits of the earlier ones).
    let at = |needle: &str| format!("line:{}", line_of(&text, needle));
    let (m, p, l) = (at("void accumulate"), at("par scale"), at("for (int r = 0"));
    let (code, by_flags, err) = run(&[
        "apply",
        "--opt",
        "prefetch",
        "--at",
        &m,
        "--array",
        "w",
        "--locations",
        "tid",
        "--opt",
        "tile",
        "--at",
        &p,
        "--tile-mode",
        "inter",
        "--tile-size",
        "32",
        "--opt",
        "unroll",
        "--at",
        &l,
        "--factor",
        "2",
        s(&f),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_flags, by_annotations);
}

/// Every diagnostic object has a code, a severity, a message, and spans with file, line, column.
fn check_diagnostics(v: &serde_json::Value) {
    for d in v["diagnostics"].as_array().expect("diagnostics array") {
        assert!(d["code"].is_string() && d["message"].is_string(), "{d}");
        assert!(
            ["error", "warning", "note"].contains(&d["severity"].as_str().unwrap_or("")),
            "{d}"
        );
        for sp in d["spans"].as_array().expect("spans") {
            assert!(sp["file"].is_string(), "{sp}");
            assert!(sp["line"].as_u64().is_some_and(|l| l >= 1), "{sp}");
            assert!(sp["column"].as_u64().is_some_and(|c| c >= 1), "{sp}");
        }
    }
}

#[test]
fn json_on_every_command() {
    let d = tmpdir("json");
    let bad = corpus().join("syntax/bad/missing_semicolon.pvl");
    let ok = examples().join("maxsum.pvl");
    // parse: an array of file objects.
    let (code, out, _) = run(&["parse", "--format", "json", s(&ok), s(&bad)]);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&out).expect("parse json");
    assert_eq!(v[1]["ok"], false);
    check_diagnostics(&v[1]);
    assert_eq!(v[1]["diagnostics"][0]["spans"][0]["line"], 14);
    // list.
    let (_, out, _) = run(&["list", "--format", "json", s(&ok)]);
    check_diagnostics(&serde_json::from_str(&out).expect("list json"));
    // apply: the report on stderr (stdout carries the program).
    let refused = corpus().join("unroll/reject_k_zero.pvl");
    let (code, _, err) = run(&["apply", "--format", "json", s(&refused)]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("apply json");
    assert_eq!(v["refused"], 1);
    check_diagnostics(&v);
    // diff.
    let o = d.join("o.pvl");
    assert_eq!(run(&["apply", "-o", s(&o), s(&ok)]).0, 0);
    let (code, out, _) = run(&["diff", "--format", "json", s(&ok), s(&o)]);
    assert_eq!(code, 1);
    check_diagnostics(&serde_json::from_str(&out).expect("diff json"));
    // verify and backend doctor without a backend: answers, as JSON, exit 3.
    let empty = tmpdir("json-nobackend");
    let no_backend = |args: &[&str]| {
        let out = bin()
            .args(args)
            .env("ALPINE_RS_CACHE", &empty)
            .env_remove("ALPINE_SILICON_JAR")
            .output()
            .expect("runs");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (code, out) = no_backend(&["verify", "--format", "json", s(&ok)]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("verify json");
    assert_eq!(v[0]["verdict"], "BackendMissing");
    check_diagnostics(&v[0]);
    let (code, out) = no_backend(&["backend", "doctor", "--format", "json"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("doctor json");
    assert_eq!(v["ok"], false);
    check_diagnostics(&v);
    assert!(v["diagnostics"].as_array().is_some_and(|a| !a.is_empty()), "{v}");
    // batch: one object per job per line.
    let plan = d.join("plan.yaml");
    std::fs::write(
        &plan,
        format!("jobs:\n  - files: \"{}\"\n  - files: \"{}\"\n", s(&ok), s(&refused)),
    )
    .unwrap();
    let (code, out, _) = run(&["batch", "--format", "json", s(&plan)]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("batch json line")).collect();
    assert_eq!(lines.len(), 2);
    for f in lines.iter().flat_map(|j| j["files"].as_array().cloned().unwrap_or_default()) {
        check_diagnostics(&f);
    }
}

/// `--opt tile --at` a method's only `par` block supersedes a `gpuopt tile` written on the method
/// (A0031): the command-line parameters win and the annotation does not survive in the output.
#[test]
fn opt_supersedes_a_method_level_tile_annotation() {
    let text = std::fs::read_to_string(examples().join("pipeline.pvl")).unwrap();
    // Move the tile request from the par block to the method contract.
    let moved = text
        .replace("    gpuopt tile inter 32;\n", "")
        .replace("  void axpy(", "  gpuopt tile inter 32;\n  void axpy(");
    assert_ne!(moved, text);
    let (d, f) = tmpfile("supersede", "p.pvl", &moved);
    let at = format!("line:{}", line_of(&moved, "par scale"));
    let (code, out, err) = run(&[
        "apply",
        "--opt",
        "tile",
        "--at",
        &at,
        "--tile-mode",
        "intra",
        "--tile-size",
        "16",
        s(&f),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("gpuopt tile"), "{out}");
    assert!(out.contains("gpuopt loop_unroll r 2;"), "other requests stay: {out}");
    assert!(err.contains("A0031"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A file that cannot be read (missing, a directory, not UTF-8) is bad input on every command:
/// exit 2, a diagnostic with a code and a help line, and with `--format json` that diagnostic as
/// JSON (in the command's own report shape), not a bare text line.
#[test]
fn unreadable_files_are_diagnostics_on_every_command() {
    let d = tmpdir("unreadable");
    let missing = d.join("missing.pvl");
    let latin1 = d.join("latin1.pvl");
    std::fs::write(&latin1, b"// caf\xe9\nclass A { }\n").unwrap();
    let ok = examples().join("maxsum.pvl");
    let (m, l, dir) = (s(&missing), s(&latin1), s(&d));
    // (arguments, whether the JSON report goes to stderr)
    let cases: Vec<(Vec<&str>, bool)> = vec![
        (vec!["parse", m], false),
        (vec!["list", l], false),
        (vec!["apply", m], true),
        (vec!["apply", l], true),
        (vec!["apply", dir], true),
        (vec!["diff", s(&ok), l], false),
        (vec!["batch", m], false),
        (vec!["run", m], false),
        (vec!["validate", s(&ok), m], false),
    ];
    for (args, on_stderr) in cases {
        let v = bad_input_in_text_and_json(&args, "error[", on_stderr);
        // `parse` reports an array of per-file objects.
        let report = if v.is_array() { v[0].clone() } else { v };
        check_diagnostics(&report);
        let diag = &report["diagnostics"][0];
        assert!(diag["code"].is_string(), "{args:?}: {report}");
        assert!(diag["help"].is_string(), "{args:?}: {report}");
    }
    // Invalid UTF-8 is located at the first bad byte (line 1, column 7).
    let (_, out, _) = run(&["list", "--format", "json", l]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sp = &v["diagnostics"][0]["spans"][0];
    assert_eq!((sp["line"].as_u64(), sp["column"].as_u64()), (Some(1), Some(7)), "{v}");
}

/// `args` is bad input: exit 2 and a diagnostic (its text contains `error`, e.g. `error[A0000]`)
/// with a help line; with `--format json` after the command, exit 2 too and the report in JSON
/// (on stderr if `json_on_stderr`, else on stdout), which is returned.
fn bad_input_in_text_and_json(
    args: &[&str],
    error: &str,
    json_on_stderr: bool,
) -> serde_json::Value {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(error) && err.contains("= help:"), "{args:?}: {err}");
    let mut json_args = args.to_vec();
    json_args.splice(1..1, ["--format", "json"]);
    let (code, out, err) = run(&json_args);
    assert_eq!(code, 2, "{json_args:?}");
    let text = if json_on_stderr { err } else { out };
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{json_args:?}: {e}: {text}"))
}

/// `--opt fuse --at` a par block that is not the method's first starts the group there: the
/// earlier kernel stays as it is, and a group that runs out of kernels is refused.
#[test]
fn fuse_at_a_later_par_block_starts_the_group_there() {
    let f = root_fixture("fuse/ok_middle_of_three.pvl");
    let text = std::fs::read_to_string(&f).unwrap();
    let plain = text.replace("    gpuopt fuse 2 1;\n", "");
    let (_, p) = tmpfile("fuse-at", "three.pvl", &plain);
    let at = |needle: &str| format!("line:{}", line_of(&plain, needle));
    let (code, out, err) = run(&["apply", "--opt", "fuse", "--at", &at("par shift"), s(&p)]);
    assert_eq!(code, 0, "{err}");
    // The first kernel is untouched, the other two became one.
    assert!(out.contains("par scale") && out.contains("par shift"), "{out}");
    assert!(!out.contains("par triple"), "{out}");
    let scale = |t: &str| t[t.find("par scale").unwrap()..t.find("par shift").unwrap()].to_string();
    assert_eq!(scale(&out), scale(&plain));
    // From the last kernel there is nothing to fuse with.
    expect_err(&["apply", "--opt", "fuse", "--at", &at("par triple"), s(&p)], 1, &["A601"]);
}

fn root_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel)
}

/// Usage errors and write failures of `apply` are diagnostics with a help line, reported in the
/// JSON report in JSON mode; `--diff` cannot be combined with a write (it used to win silently).
#[test]
fn apply_usage_and_write_errors_carry_help() {
    let d = tmpdir("apply-usage");
    let f = copy_example(&d, "maxsum.pvl");
    let before = std::fs::read_to_string(&f).unwrap();
    let missing_dir = d.join("no/such/dir/out.pvl");
    let cases: [&[&str]; 3] = [
        &["apply", "--opt", "unroll", "--at", "line:1", s(&f)],
        &["apply", "--annotations-only", s(&f)],
        &["apply", "-o", s(&missing_dir), s(&f)],
    ];
    for args in cases {
        let v = bad_input_in_text_and_json(args, "error[A0000]", true);
        assert_eq!(v["exit"], 2, "{v}");
        let diag = v["diagnostics"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["code"] == "A0000"))
            .unwrap_or_else(|| panic!("{v}"));
        assert!(diag["help"].is_string(), "{v}");
    }
    for both in [["--diff", "--in-place"], ["--diff", "-o"]] {
        let mut args = vec!["apply", both[0], both[1]];
        if both[1] == "-o" {
            args.push(s(&missing_dir));
        }
        args.push(s(&f));
        let (code, out, _) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), before);
}

/// A refused `--opt` step on a construct that also carries an in-source annotation of the same
/// kind: the annotation is labelled as superseded (not as the request), and a `--var` that the
/// guard does not mention is not said to be what the guard depends on.
#[test]
fn refused_opt_step_labels_the_superseded_annotation() {
    let f = corpus().join("unroll/ok_while_add_const.pvl");
    let text = std::fs::read_to_string(&f).unwrap();
    let at = format!("line:{}", line_of(&text, "while ("));
    let (code, out, err) =
        run(&["apply", "--opt", "unroll", "--at", &at, "--factor", "1", "--var", "nosuch", s(&f)]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("A102"), "{err}");
    assert!(err.contains("in-source annotation, superseded by --opt"), "{err}");
    assert!(!err.contains("requested here"), "{err}");
    assert!(err.contains("the guard does not mention `nosuch`"), "{err}");
}

/// A parameter flag without `--opt` applies to the in-source annotations it fits, and the result
/// is checked with it; a flag that fits no annotation, or that an annotation states itself, is a
/// usage error. (It used to be ignored: `--block-size 32` fused as if there were one block.)
#[test]
fn parameter_flags_without_opt_apply_to_the_annotations_or_are_usage_errors() {
    let f = corpus().join("fuse/reject_cross_block_dependency.pvl");
    let path = f.to_str().unwrap();
    // The same refusal as `--opt fuse --at line:16 --block-size 32`.
    expect_err(&["apply", "--block-size", "32", path], 1, &["A607"]);
    expect_err(
        &["apply", "--opt", "fuse", "--at", "line:16", "--block-size", "32", path],
        1,
        &["A607"],
    );
    // Without it, one thread block: the fusion applies.
    let (code, _, err) = run(&["apply", path]);
    assert_eq!(code, 0, "{err}");
    // No annotation of the file takes `--tile-size`.
    expect_err(&["apply", "--tile-size", "4", path], 2, &["--tile-size applies to no annotation"]);
    // The annotation states the number of kernels itself.
    expect_err(&["apply", "--kernels", "3", path], 2, &["--kernels is stated by"]);
    // With --opt, a flag that no --opt takes is a usage error too.
    expect_err(
        &["apply", "--opt", "fuse", "--at", "line:16", "--factor", "2", path],
        2,
        &["--factor does not apply to fuse"],
    );
}

/// A generated name that the file already uses gets a suffix, and a note says so (A0030).
#[test]
fn a_suffixed_generated_name_is_noted() {
    let d = tmpdir("suffix");
    let f = d.join("k.pvl");
    std::fs::write(
        &f,
        "class C {\n  context_everywhere a != null && a.length == 64;\n  context (\\forall* int k; 0 <= k && k < 64; Perm(a[k], write));\n  void clear(int[] a) {\n    int vct_tile_counter = 0;\n    gpuopt tile intra 16;\n    par lanes (int tid = 0 .. 64)\n      context Perm(a[tid], write);\n    {\n      a[tid] = vct_tile_counter;\n    }\n  }\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(&["apply", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("vct_tile_counter_1"), "{out}");
    assert!(err.contains("note[A0030]") && err.contains("`vct_tile_counter_1`"), "{err}");
}

/// `apply --opt linearize … --validate` on a file without a `matrix_lin` annotation: the
/// command line's parameters give validation its input map (before: "no layout is known for
/// it", exit 3, so `suggest --apply` could not write a linearization).
#[test]
fn validate_of_a_command_line_linearization_maps_the_matrix() {
    let src = std::fs::read_to_string(common::corpus_dir().join("linearize/ok_rowmajor_fill.pvl"))
        .expect("corpus file");
    let plain: String =
        src.lines().filter(|l| !l.contains("gpuopt")).map(|l| format!("{l}\n")).collect();
    let d = common::tmpdir("cli", "lin_validate");
    let f = d.join("fill.pvl");
    std::fs::write(&f, &plain).expect("write");
    let line = plain.lines().position(|l| l.contains("void fill")).expect("the method") + 1;
    let at = format!("line:{line}");
    for layout in ["row", "col"] {
        let (code, out, err) = run(&[
            "apply",
            "--opt",
            "linearize",
            "--at",
            &at,
            "--array",
            "g",
            "--layout",
            layout,
            "--dims",
            "rows,cols",
            "--validate",
            f.to_str().expect("path"),
        ]);
        assert_eq!(code, 0, "{layout}: {err}");
        assert!(err.contains("equivalent"), "{layout}: {err}");
        assert!(out.contains("int[] g"), "{layout}: {out}");
    }
}
