//! One exit-code rule for every subcommand (`alpine_rs::codes::combine`): 0 success, 1 the
//! answer is no, 2 bad input or usage, 3 could not decide; a combined result takes the most
//! severe in the order 2 > 1 > 3 > 0. One case per subcommand mixes outcomes.

mod common;

use alpine_rs::codes::combine;
use common::{run_cli, tmpdir};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writable");
    p.to_string_lossy().into_owned()
}

#[test]
fn the_order_is_bad_input_then_no_then_undecided() {
    assert_eq!(combine(0, 0), 0);
    assert_eq!(combine(1, 3), 1);
    assert_eq!(combine(3, 1), 1);
    assert_eq!(combine(2, 1), 2);
    assert_eq!(combine(1, 2), 2);
    assert_eq!(combine(3, 2), 2);
    assert_eq!(combine(0, 3), 3);
    assert_eq!([1, 3, 0, 2, 1].into_iter().fold(0, combine), 2);
}

/// A program that verifies, one that fails, one that does not parse.
const GOOD: &str =
    "class C {\n  requires x > 0;\n  ensures \\result > 0;\n  int m(int x) { return x; }\n}\n";
const FAILS: &str = "class C {\n  ensures \\result > 0;\n  int m(int x) { return x; }\n}\n";
const BROKEN: &str = "class C {\n  void m( {\n}\n";

/// An unroll by 0 (refused, A109) and a fusion of one kernel (a bad parameter, A0004).
const UNROLL_0_AND_FUSE_1: &str =
    "class C {\n  context_everywhere a != null && a.length == 4;\n  context (\\forall* int k; 0 <= k && k < 4; Perm(a[k], write));\n  void m(int[] a) {\n    gpuopt fuse 1 1;\n    par p (int t = 0 .. 4) context Perm(a[t], write); { a[t] = 0; }\n    int i = 0;\n    gpuopt loop_unroll i 0;\n    loop_invariant 0 <= i && i <= 4;\n    while (i < 4) { i = i + 1; }\n  }\n}\n";

/// A method that asserts its positive argument is below 5.
const ASSERTS_BELOW_5: &str =
    "class C {\n  requires x > 0;\n  void m(int x) {\n    assert x < 5;\n  }\n}\n";

/// An unroll by 0: refused (A109).
const UNROLL_0: &str =
    "class C {\n  void m() {\n    int i = 0;\n    gpuopt loop_unroll i 0;\n    loop_invariant 0 <= i && i <= 4;\n    while (i < 4) { i = i + 1; }\n  }\n}\n";

#[test]
fn parse_and_list() {
    let d = tmpdir("exit", "parse");
    let (good, broken) = (write(&d, "good.pvl", GOOD), write(&d, "broken.pvl", BROKEN));
    assert_eq!(run_cli(&["parse", &good, &broken]).0, 2);
    assert_eq!(run_cli(&["parse", &good]).0, 0);
    // A misplaced annotation is bad input.
    let misplaced =
        write(&d, "misplaced.pvl", "class C {\n  gpuopt loop_unroll i 2;\n  void m() { }\n}\n");
    assert_eq!(run_cli(&["list", &misplaced]).0, 2);
}

#[test]
fn apply_mixes_a_refusal_and_bad_parameters() {
    let d = tmpdir("exit", "apply");
    // The unroll factor 0 is refused (A109, exit 1); fusing one kernel is a bad parameter
    // (A0004, exit 2): together 2.
    let f = write(&d, "k.pvl", UNROLL_0_AND_FUSE_1);
    let (code, _, err) = run_cli(&["apply", "--keep-going", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("A109") && err.contains("A0004"), "{err}");
}

#[test]
fn run_mixes_a_failed_check_and_an_invalid_input() {
    let d = tmpdir("exit", "run");
    let f = write(&d, "m.pvl", ASSERTS_BELOW_5);
    let fails = write(&d, "seven.yaml", "args:\n  x: 7\n");
    let invalid = write(&d, "minus.yaml", "args:\n  x: -1\n");
    assert_eq!(run_cli(&["run", &f, "--input", &fails]).0, 1);
    assert_eq!(run_cli(&["run", &f, "--input", &invalid]).0, 2);
    assert_eq!(run_cli(&["run", &f, "--input", &fails, "--input", &invalid]).0, 2);
}

#[test]
fn batch_mixes_a_refusal_and_a_file_that_does_not_parse() {
    let d = tmpdir("exit", "batch");
    write(&d, "refused.pvl", UNROLL_0);
    write(&d, "broken.pvl", BROKEN);
    let plan = write(&d, "plan.yaml", "jobs:\n  - files: [refused.pvl, broken.pvl]\n");
    let (code, _, err) = run_cli(&["batch", &plan]);
    assert_eq!(code, 2, "{err}");
    let plan = write(&d, "refused.yaml", "jobs:\n  - files: [refused.pvl]\n");
    assert_eq!(run_cli(&["batch", &plan]).0, 1);
}

#[test]
fn sweep_mixes_refusals_and_a_file_that_does_not_parse() {
    let d = tmpdir("exit", "sweep");
    let refused = write(&d, "refused.pvl", UNROLL_0);
    let broken = write(&d, "broken.pvl", BROKEN);
    // Refusals are results of a sweep, not failures: 0; a file that does not parse: 2.
    assert_eq!(run_cli(&["sweep", &refused]).0, 0);
    let (code, _, err) = run_cli(&["sweep", &refused, &broken]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn verify_mixes_a_failure_and_a_file_that_does_not_parse() {
    let d = tmpdir("exit", "verify");
    let (fails, broken) = (write(&d, "fails.pvl", FAILS), write(&d, "broken.pvl", BROKEN));
    let (code, _, err) = run_cli(&["verify", &fails, &broken]);
    // Without the backend every file is undecided (3); with it, 1 and 2 give 2.
    if err.contains("E-BACKEND") {
        assert_eq!(code, 2, "{err}");
    } else {
        assert_eq!(code, 2, "{err}");
        assert_eq!(run_cli(&["verify", &fails]).0, 1);
    }
}

#[test]
fn validate_diff_and_explain() {
    let d = tmpdir("exit", "validate");
    let (good, broken) = (write(&d, "good.pvl", GOOD), write(&d, "broken.pvl", BROKEN));
    assert_eq!(run_cli(&["validate", &good, &broken]).0, 2);
    assert_eq!(run_cli(&["diff", &good, &broken]).0, 2);
    assert_eq!(run_cli(&["explain", "A9999"]).0, 2);
    assert_eq!(run_cli(&["explain", "A109"]).0, 0);
}

/// A kernel doubling each cell, written with `body` (`a[t] = …;`).
fn doubling(body: &str) -> String {
    format!(
        "class D {{\n  context_everywhere a != null && a.length == n;\n  context n > 0 && n <= 64;\n  context (\\forall* int k; 0 <= k && k < n; Perm(a[k], write));\n  void m(int n, int[] a) {{\n    par p (int t = 0 .. n) context Perm(a[t], write); {{ {body} }}\n  }}\n}}\n"
    )
}

#[test]
fn cost_and_suggest() {
    let d = tmpdir("exit", "cost");
    let cheap = write(&d, "cheap.pvl", &doubling("a[t] = 2 * a[t];"));
    // One more read of `a[t]`: more sectors and steps.
    let dear = write(&d, "dear.pvl", &doubling("a[t] = a[t] + a[t];"));
    let wrong = write(&d, "wrong.pvl", &doubling("a[t] = a[t] + 1;"));
    let broken = write(&d, "broken.pvl", BROKEN);
    let none = write(&d, "none.pvl", &doubling("a[t] = 2 * a[t];").replace("n > 0 &&", "n < 0 &&"));
    let cost = |args: &[&str]| {
        let mut v = vec!["cost", "--random", "2"];
        v.extend(args);
        run_cli(&v)
    };
    assert_eq!(cost(&[&cheap, &dear]).0, 0);
    assert_eq!(cost(&[&dear, &cheap, "--fail-on-regression"]).0, 0);
    let (code, out, _) = cost(&[&cheap, &dear, "--fail-on-regression"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("regressed"), "{out}");
    let (code, out, _) = cost(&[&cheap, &wrong]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("invalid-optimization"), "{out}");
    assert_eq!(cost(&[&cheap, &broken]).0, 2);
    assert_eq!(cost(&[&cheap, &dear, "--profile", "no-such-profile"]).0, 2);
    assert_eq!(cost(&[&cheap, &dear, "--space", "a=registers"]).0, 2);
    assert_eq!(cost(&[&none, &none]).0, 3);
    assert_eq!(run_cli(&["suggest", &broken]).0, 2);
    assert_eq!(run_cli(&["run", &cheap, "--cost", "--profile", "no-such-profile"]).0, 2);
}
