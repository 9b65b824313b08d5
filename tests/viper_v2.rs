//! VerCors 2 constructs through both oracles (issue 25): each program in `fixtures/verify_v2/`
//! (and `fixtures/verify_barriers/`)
//! says in its header what `verify` must answer (`// expect: verifies`, `fails [CODE]` or
//! `refused CODE`, CODE being the first diagnostic's) and, with a `// run:` line, what the
//! interpreter must answer (`ok`, or `error [CODE]`). Runs Silicon (the backend `.ci/run`
//! installs).
//!
//! Covered: generic classes and methods (monomorphised), `run` blocks of thread classes,
//! `parallel`/`sequential` regions, call-site `given {…}` / `yields {…}`, range binders and
//! numbered triggers, `[e, …]` and `[t: T]` literals, `\let`, members named like the Viper
//! prelude's parameters, ADTs (Viper domains; the interpreter refuses them), generic code with
//! no instance (verified over abstract types), the value types' built-in members (`xs.head`,
//! `m.keys`), class contracts with `commit`/`committed`, `decreases;`, `\old` in par contracts;
//! refused by name: `model`, `prover_type`, tuples, `either`, generic code called without type
//! arguments; a class the program does not declare is bad input.

mod common;

use common::{files, header, root, run_cli};
use std::path::PathBuf;

/// The programs: VerCors 2's constructs, and barriers (thread-dependent locals in barrier
/// contracts, barriers that only some threads reach; verification.md §5.10 (d)).
fn programs() -> Vec<PathBuf> {
    let mut out = files(&root().join("fixtures/verify_v2"), "pvl");
    out.extend(files(&root().join("fixtures/verify_barriers"), "pvl"));
    out
}

fn expected_verdict(expect: &str) -> (&'static str, Option<&str>) {
    let mut words = expect.split_whitespace();
    let verdict = match words.next() {
        Some("verifies") => "Verified",
        Some("fails") => "Failed",
        Some("refused") => "Unsupported",
        other => panic!("unknown expectation {other:?}"),
    };
    (verdict, words.next())
}

#[test]
fn v2_constructs_verify_fail_or_are_refused_as_their_headers_say() {
    let paths = programs();
    assert!(paths.len() >= 20, "fixtures missing");
    let results = common::verify_json(&["--no-cache"], &paths);
    let mut wrong = Vec::new();
    for (path, got) in paths.iter().zip(&results) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let src = std::fs::read_to_string(path).unwrap();
        let expect = header(&src, "expect").unwrap_or_else(|| panic!("{name}: no expect header"));
        let (verdict, code) = expected_verdict(&expect);
        if got["verdict"] != verdict {
            wrong.push(format!("{name}: expected {verdict}, got {got}"));
        } else if let Some(code) = code {
            if got["diagnostics"][0]["code"] != code {
                wrong.push(format!("{name}: expected first code {code}, got {got}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn v2_constructs_run_as_their_headers_say() {
    let mut checked = 0;
    for path in programs() {
        let src = std::fs::read_to_string(&path).unwrap();
        let Some(want) = header(&src, "run") else { continue };
        let name = path.display().to_string();
        let (code, out, err) = run_cli(&["run", &name]);
        let all = format!("{out}{err}");
        let mut words = want.split_whitespace();
        match words.next() {
            Some("ok") => assert_eq!(code, 0, "{name}: expected a clean run:\n{all}"),
            Some("unsupported") => {
                assert_eq!(code, 2, "{name}: expected a refusal:\n{all}");
                assert!(all.contains("[R-UNSUPPORTED]"), "{name}: expected R-UNSUPPORTED:\n{all}");
            }
            Some("error") => {
                assert_eq!(code, 1, "{name}: expected an error:\n{all}");
                if let Some(c) = words.next() {
                    assert!(all.contains(&format!("[{c}]")), "{name}: expected {c}:\n{all}");
                }
            }
            other => panic!("{name}: unknown run expectation {other:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 8, "run expectations missing");
}

/// `verify --dialect` chooses the reading of a dialect-sensitive contract: `a || b && c` is
/// `(a || b) && c` in VerCors 1.4 and `a || (b && c)` in VerCors 2.
#[test]
fn verify_reads_the_dialect_it_is_given() {
    let dir = common::tmpdir("viper_v2", "dialect");
    let f = dir.join("mixed_or_and.pvl");
    std::fs::write(
        &f,
        "requires a || b && c;\nensures \\result;\nboolean f(boolean a, boolean b, boolean c) { return (a || b) && c; }\n",
    )
    .unwrap();
    let path = f.to_string_lossy().into_owned();
    let (v1, out1, err1) = run_cli(&["verify", "--no-cache", "--dialect", "v1", &path]);
    assert_eq!(v1, 0, "v1 reading should verify:\n{out1}{err1}");
    let (v2, out2, err2) = run_cli(&["verify", "--no-cache", "--dialect", "v2", &path]);
    assert_eq!(v2, 1, "v2 reading should fail:\n{out2}{err2}");
    assert!(format!("{out2}{err2}").contains("V-POST"), "{out2}{err2}");
}
