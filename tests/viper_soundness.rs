//! Soundness of `verify` on clauses that must never be dropped: a termination measure is
//! checked by Silicon (a wrong one fails), and a clause the encoder cannot check is refused with
//! V-UNSUPPORTED (exit 2) instead of being ignored, so a program that breaks it never verifies.
//! Runs Silicon (the backend `.ci/run` installs).

mod common;

use common::{run_cli, tmpdir};

const CASES: &[(&str, &str, &str)] = &[
    (
        "wrong_function_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  pure int f(int n) = n == 0 ? 0 : f(n + 1);\n}\n",
        "Failed",
    ),
    (
        "function_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  pure int f(int n) = n == 0 ? 0 : f(n - 1);\n}\n",
        "Verified",
    ),
    (
        "wrong_method_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  void m(int n) {\n    if (n > 0) { m(n); }\n  }\n}\n",
        "Failed",
    ),
    (
        "wrong_loop_measure.pvl",
        "class C {\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i;\n    decreases n - i;\n    while (i < n) {\n      i = i - 1;\n    }\n  }\n}\n",
        "Failed",
    ),
    (
        "loop_measure.pvl",
        "class C {\n  requires n >= 0;\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    decreases n - i;\n    while (i < n) {\n      i = i + 1;\n    }\n  }\n}\n",
        "Verified",
    ),
    (
        "no_measure.pvl",
        "class C {\n  decreases;\n  void m(int n) { }\n}\n",
        "Unsupported",
    ),
    (
        "modifies.pvl",
        "class C {\n  int x;\n  modifies x;\n  void m() { }\n}\n",
        "Unsupported",
    ),
    (
        "accessible.pvl",
        "class C {\n  int x;\n  accessible x;\n  void m() { }\n}\n",
        "Unsupported",
    ),
];

#[test]
fn termination_is_checked_and_unencodable_clauses_are_refused() {
    let d = tmpdir("viper-soundness", "cases");
    let mut args = vec!["verify".to_string(), "--format".into(), "json".into()];
    for (name, text, _) in CASES {
        let p = d.join(name);
        std::fs::write(&p, text).expect("writable");
        args.push(p.to_string_lossy().into_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, out, err) = run_cli(&args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"));
    let files = v.as_array().expect("one result per file");
    assert_eq!(files.len(), CASES.len());
    for ((name, _, expected), got) in CASES.iter().zip(files) {
        assert_eq!(got["verdict"], *expected, "{name}: {got}");
        if *expected == "Failed" {
            assert_eq!(got["diagnostics"][0]["code"], "V-TERMINATION", "{name}: {got}");
        }
        if *expected == "Unsupported" {
            assert_eq!(got["diagnostics"][0]["code"], "V-UNSUPPORTED", "{name}: {got}");
        }
    }
}
