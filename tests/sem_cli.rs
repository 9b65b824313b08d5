//! `run` and `validate` on the command line: warp schedules, the schedule self-check, ghost
//! state, JSON output and exit codes.

mod common;

use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sem").join(name).display().to_string()
}

fn alpine(args: &[&str]) -> (i32, String, String) {
    common::run_cli(args)
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// Run with `args` (ending in `--json`), check the exit code and return the JSON on stdout.
fn alpine_json(code: i32, args: &[&str]) -> serde_json::Value {
    let (got, out, err) = alpine(args);
    assert_eq!(got, code, "{err}");
    json(&out)
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("alpine-rs-sem-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    let p = d.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// The element of the JSON array `list` whose `key` is `value`.
fn entry<'v>(list: &'v serde_json::Value, key: &str, value: &str) -> &'v serde_json::Value {
    let items = list.as_array().unwrap_or_else(|| panic!("not an array: {list}"));
    items.iter().find(|o| o[key] == value).unwrap_or_else(|| panic!("no {key} {value} in {list}"))
}

/// The final contents of `sum` in `run --json` output.
fn final_sum(v: &serde_json::Value) -> Vec<i64> {
    let run = &v["runs"][0];
    let obs = entry(&run["final_state"], "path", "sum");
    obs["value"].as_array().expect("array").iter().map(|x| x.as_i64().expect("int")).collect()
}

fn run_scan(file: &str, schedule: &str, checks: &str) -> serde_json::Value {
    let (code, out, err) = alpine(&[
        "run",
        &fixture(file),
        "--input",
        &fixture("scan64.yaml"),
        "--checks",
        checks,
        "--schedule",
        schedule,
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["exit_code"].as_i64(), Some(code as i64), "{err}");
    v
}

#[test]
fn a_race_free_kernel_gives_the_same_result_under_every_schedule() {
    let expected: Vec<i64> = (1..=64).collect();
    for s in ["forward", "reverse", "random:1", "random:99"] {
        let v = run_scan("scan.pvl", s, "all");
        assert_eq!(v["runs"][0]["status"], "ok", "{s}: {v}");
        assert_eq!(v["schedule"], s);
        assert_eq!(final_sum(&v), expected, "{s}");
    }
}

#[test]
fn a_racy_kernel_depends_on_the_schedule_and_the_race_is_reported_under_each() {
    let fwd = run_scan("scan_race.pvl", "forward", "races,divergence");
    let rev = run_scan("scan_race.pvl", "reverse", "races,divergence");
    // semantics.md V5: with warp 0 first, sum[32] = 49 instead of 33.
    assert_eq!(final_sum(&fwd)[32], 49);
    assert_ne!(final_sum(&fwd), final_sum(&rev));
    for v in [&fwd, &rev] {
        assert_eq!(v["exit_code"], 1);
        let run = &v["runs"][0];
        assert_eq!(run["race"], true);
        assert_eq!(run["checks"]["races"]["failed"].as_u64().map(|n| n > 0), Some(true));
        let d = &run["diagnostics"][0];
        assert_eq!(d["code"], "R-RACE");
        assert_eq!(d["severity"], "error");
        let span = &d["spans"][0];
        assert!(span["file"].as_str().is_some_and(|f| f.ends_with("scan_race.pvl")));
        assert!(span["line"].as_u64().is_some_and(|l| l > 1));
        assert!(span["column"].as_u64().is_some_and(|c| c >= 1));
    }
}

#[test]
fn run_rejects_a_bad_schedule() {
    let (code, _, err) = alpine(&["run", &fixture("scan.pvl"), "--schedule", "sideways"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown schedule"), "{err}");
    let (code, _, err) = alpine(&["run", &fixture("scan.pvl"), "--schedule", "random:x"]);
    assert_eq!(code, 2);
    assert!(err.contains("bad seed"), "{err}");
}

#[test]
fn validate_schedules_passes_a_race_free_pair() {
    let (code, out, _) = alpine(&[
        "validate",
        &fixture("scan.pvl"),
        &fixture("scan.pvl"),
        "--random",
        "2",
        "--input",
        &fixture("scan64.yaml"),
        "--schedules",
        "3",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 schedule-dependent (3 extra schedules)"), "{out}");
}

#[test]
fn validate_schedules_reports_a_result_that_depends_on_the_schedule() {
    // With races unchecked, nothing reports the missing barrier; the schedule self-check does.
    let args = [
        "validate",
        &fixture("scan_race.pvl"),
        &fixture("scan_race.pvl"),
        "--random",
        "0",
        "--input",
        &fixture("scan64.yaml"),
        "--checks",
        "divergence",
        "--schedules",
        "2",
    ];
    let (code, out, _) = alpine(&args);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("error[R-SCHEDULE]"), "{out}");
    assert!(out.contains("sum[32] is 49 under schedule forward"), "{out}");
    let mut with_json = args.to_vec();
    with_json.push("--format");
    with_json.push("json");
    let (code, out, _) = alpine(&with_json);
    let v = json(&out);
    assert_eq!(code, 3);
    assert_eq!(v["verdict"], "inconclusive");
    assert_eq!(v["inputs"]["schedule_dependent"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "R-SCHEDULE");
    assert!(v["diagnostics"][0]["help"].as_str().is_some());
    // Without the self-check the same call finds the programs equivalent.
    let (code, out, _) = alpine(&args[..args.len() - 2]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn ghost_state_is_compared_only_on_request() {
    let (a, b) = (fixture("ghost_log.pvl"), fixture("ghost_log_other.pvl"));
    let (code, out, _) = alpine(&["validate", &a, &b, "--random", "3"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = alpine(&["validate", &a, &b, "--random", "3", "--compare-ghost"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("this.log: orig"), "{out}");
    let v = alpine_json(1, &["validate", &a, &b, "--random", "3", "--compare-ghost", "--json"]);
    assert_eq!(v["verdict"], "different");
    assert_eq!(v["mismatch"]["path"], "this.log");
    // The run output marks the ghost field.
    let (_, out, _) = alpine(&["run", &a, "--json"]);
    let v = json(&out);
    let log = entry(&v["runs"][0]["final_state"], "path", "this.log").clone();
    assert_eq!(log["ghost"], true);
}

#[test]
fn run_json_reports_each_run_with_its_diagnostics() {
    let v = alpine_json(
        1,
        &[
            "run",
            &fixture("invariant_iter3.pvl"),
            "--random",
            "2",
            "--seed",
            "7",
            "--format",
            "json",
        ],
    );
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let r = &runs[0];
    assert_eq!(r["status"], "error");
    assert!(r["input"]["args"].is_object());
    assert!(r["statements"].as_u64().is_some());
    let d = entry(&r["diagnostics"], "code", "R-INV-KEEP");
    assert!(d["message"].as_str().is_some_and(|m| m.contains("after iteration 3")));
    assert!(d["spans"].as_array().is_some_and(|s| !s.is_empty()));
}

#[test]
fn json_mode_reports_bad_input_as_json() {
    let broken = tmp("broken.pvl", "class A { void m() { int x = ; } }\n");
    let v = alpine_json(2, &["run", broken.to_str().expect("utf-8 path"), "--json"]);
    assert_eq!(v["status"], "bad-input");
    let d = &v["diagnostics"][0];
    assert!(d["code"].as_str().is_some());
    assert_eq!(d["spans"][0]["line"], 1);

    let (code, out, _) = alpine(&["run", "/no/such/file.pvl", "--json"]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["diagnostics"][0]["code"], "R-USAGE");

    let v = alpine_json(
        2,
        &["validate", &fixture("scan.pvl"), broken.to_str().expect("utf-8 path"), "--json"],
    );
    assert_eq!(v["verdict"], "bad-input");
    assert!(v["diagnostics"][0]["spans"][0]["file"]
        .as_str()
        .is_some_and(|f| f.ends_with("broken.pvl")));
}

#[test]
fn validate_json_on_an_equivalent_pair() {
    let v = alpine_json(
        0,
        &[
            "validate",
            &fixture("loop_orig.pvl"),
            &fixture("loop_peeled.pvl"),
            "--random",
            "4",
            "--seed",
            "3",
            "--json",
        ],
    );
    assert_eq!(v["verdict"], "equivalent");
    assert_eq!(v["exit_code"], 0);
    assert!(v["inputs"]["equivalent"].as_u64().is_some_and(|n| n >= 1));
    assert!(v["mismatch"].is_null());
    assert!(v["diagnostics"].as_array().is_some_and(|d| d.is_empty()));
}

#[test]
fn the_uniformity_lint_warns_without_failing_the_run() {
    let file = fixture("nonuniform_barrier.pvl");
    let (code, out, err) = alpine(&["run", &file, "--seed", "3", "--json"]);
    assert_eq!(code, 0, "a warning does not change the exit code: {err}");
    let v = json(&out);
    let r = &v["runs"][0];
    assert_eq!(r["status"], "ok");
    assert_eq!(r["checks"]["uniformity"]["warnings"], 1);
    assert_eq!(r["checks"]["contracts"], "pass");
    let d = &r["diagnostics"][0];
    assert_eq!(d["code"], "W-NONUNIFORM");
    assert_eq!(d["severity"], "warning");

    // Selected alone, it runs (no "not implemented" notice); left out, it is off.
    let (code, out, err) = alpine(&["run", &file, "--checks", "uniformity", "--json"]);
    assert_eq!(code, 0);
    assert!(!err.contains("not implemented"), "{err}");
    assert_eq!(json(&out)["runs"][0]["checks"]["uniformity"]["warnings"], 1);
    let (code, out, _) = alpine(&["run", &file, "--checks", "races,divergence", "--json"]);
    assert_eq!(code, 0);
    let r = &json(&out)["runs"][0];
    assert_eq!(r["checks"]["uniformity"], "off");
    assert!(r["diagnostics"].as_array().is_some_and(|d| d.is_empty()));

    // Text mode: the codespan rendering with the help line, and the summary.
    let (code, out, err) = alpine(&["run", &file]);
    assert_eq!(code, 0);
    let text = format!("{out}{err}");
    assert!(text.contains("warning[W-NONUNIFORM]"), "{text}");
    assert!(text.contains("help:"), "{text}");
    assert!(text.contains("uniformity 1 warned"), "{text}");
}

/// A class declared in another file: `--with FILE` joins that file to the program, for `run`
/// and for both programs of `validate`; without it the run names the flag.
#[test]
fn classes_of_other_files_come_with_with() {
    let main = tmp(
        "with_main.pvl",
        "class Main {\n  ensures \\result == 2 * x;\n  int go(int x) {\n    Helper h = new Helper();\n    return h.twice(x);\n  }\n}\n",
    );
    let helper = tmp(
        "with_helper.pvl",
        "class Helper {\n  ensures \\result == y + y;\n  int twice(int y) {\n    return y + y;\n  }\n}\n",
    );
    let (m, h) = (main.to_str().unwrap(), helper.to_str().unwrap());
    let (code, out, err) = alpine(&["run", m, "--entry", "go"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(format!("{out}{err}").contains("--with"), "{out}{err}");
    let (code, out, err) = alpine(&["run", m, "--entry", "go", "--with", h]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = alpine(&["validate", m, m, "--with", h]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Main.go") && out.contains("equivalent"), "{out}");
}

/// An abstract allocator that only bounds its result's length from below (`n <= \result.length`,
/// what CUDA's `\pointer(\result, n, write)` spells out) gets the smallest such array; before,
/// every run stopped at R-ABSTRACT (VerCors' GPGPU-Example.cu models `cudaMalloc` this way).
#[test]
fn an_abstract_allocator_returns_an_array_of_the_bounded_length() {
    let f = fixture("abstract_allocator.pvl");
    let v = alpine_json(0, &["run", &f, "--entry", "fill", "--json"]);
    let text = v.to_string();
    assert!(!text.contains("R-ABSTRACT"), "{v:#}");
}

/// Issue 55: a vector add whose arrays' lengths the contract ties to `n`, counted at the size
/// the user asks for. The default cap on generated lengths (4096) made `--set n=32768`
/// unsatisfiable; semantics.md §12's figures: 12,288 sectors, no conflicts, 12 per 32 of n.
#[test]
fn cost_at_the_size_the_user_sets() {
    let f = fixture("vadd_tied_lengths.pvl");
    let (code, out, err) = alpine(&["run", &f, "--cost", "--set", "n=32768"]);
    assert_eq!(code, 0, "{out}{err}");
    let total = out.lines().find(|l| l.trim_start().starts_with("total")).unwrap_or_default();
    let cols: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(cols.get(1..3), Some(&["12288", "0"][..]), "{out}");
    assert!(out.contains("12 per 32 of n"), "{out}");
}

/// A size the user sets reaches the arrays through the contract's arithmetic: addSub2's
/// `B.length == 64 * h` at `--set h=128` needs 8,192 cells, past the default cap of 4,096,
/// which then yields (before, R-NO-INPUT: "unsatisfiable within the bounds").
#[test]
fn cost_at_a_size_the_contract_multiplies() {
    let f = common::root().join("fixtures/cost/addSub2.pvl");
    let f = f.to_str().expect("UTF-8 path");
    let (code, out, err) = alpine(&["run", f, "--cost", "--set", "h=128"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("(8128 more)"), "B has 64 shown and 8128 more cells: {out}");
    let total = out.lines().find(|l| l.trim_start().starts_with("total")).unwrap_or_default();
    assert_eq!(total.split_whitespace().nth(1), Some("3072"), "{out}");
    assert!(out.contains("768 per 32 of h"), "{out}");
}

/// A `--set` or `--bound` that names no input is an error (exit 2, the inputs listed), never
/// ignored: a misspelt size would otherwise run with generated values the user thinks fixed.
#[test]
fn a_set_naming_no_input_is_refused() {
    let f = fixture("vadd_tied_lengths.pvl");
    let (code, out, err) = alpine(&["run", &f, "--set", "nn=32"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("`nn` is not an input") && err.contains("n"), "{err}");
    for ok in ["n=8", "x.length=8"] {
        let (code, out, err) = alpine(&["run", &f, "--set", ok]);
        assert_ne!(code, 2, "{ok}: {out}{err}");
    }
}
