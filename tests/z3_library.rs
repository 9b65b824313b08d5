//! Z3 is opened when the first query is asked, not linked (crates/z3-sys, issue 56): commands
//! that ask nothing work without the library, and a command that asks reports E-Z3 with exit 3
//! ("could not decide") and writes nothing.

mod common;

use common::{root, tmpdir};
use std::process::Command;

const PROGRAM: &str = "../shared/corpus/merge/ok_mul_update.pvl";
const OTHER: &str = "../shared/corpus/merge/ok_sub_update.pvl";

/// Runs the binary with `ALPINE_RS_LIBZ3` pointing nowhere: (exit code, stdout, stderr).
fn without_z3(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .args(args)
        .env("ALPINE_RS_LIBZ3", "/nonexistent/libz3.so")
        .current_dir(root())
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn commands_that_ask_nothing_work_without_the_library() {
    for args in [
        vec!["parse", PROGRAM],
        vec!["list", PROGRAM],
        vec!["explain", "E-Z3"],
        vec!["diff", PROGRAM, OTHER],
        vec!["--version"],
    ] {
        let (code, out, err) = without_z3(&args);
        // `diff` says "they differ" with 1, as diff(1) does.
        let expected = if args[0] == "diff" { 1 } else { 0 };
        assert_eq!(code, expected, "{args:?}: {err}");
        // `parse` is silent when the file parses.
        assert!(args[0] == "parse" || !out.is_empty(), "{args:?} printed nothing");
        assert!(!err.contains("E-Z3"), "{args:?}: {err}");
    }
}

#[test]
fn a_query_without_the_library_is_undecided_and_writes_nothing() {
    let dir = tmpdir("z3_library", "apply");
    let out = dir.join("out.pvl");
    let out_arg = out.to_string_lossy().into_owned();
    let (code, stdout, err) = without_z3(&["apply", PROGRAM, "-o", &out_arg]);
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(err.contains("error[E-Z3]"), "{err}");
    assert!(err.contains("tried /nonexistent/libz3.so"), "every place tried is named: {err}");
    assert!(err.contains("help:"), "{err}");
    assert!(!out.exists(), "no output is written when nothing was decided");
}

#[test]
fn the_library_found_on_the_system_or_in_the_cache_answers() {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .args(["apply", PROGRAM])
        .env_remove("ALPINE_RS_LIBZ3")
        .current_dir(root())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("loop_invariant"));
}

/// The binary does not name libz3 among the libraries the loader maps at start (checked with
/// binutils' `readelf` where it is installed).
#[test]
fn the_binary_does_not_link_libz3() {
    let Ok(out) = Command::new("readelf").args(["-d", env!("CARGO_BIN_EXE_alpine-rs")]).output()
    else {
        eprintln!("readelf not installed: the NEEDED entries are not checked");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(NEEDED)"), "readelf printed no dynamic section: {text}");
    assert!(!text.contains("libz3"), "{text}");
    assert!(!text.contains("libstdc++"), "{text}");
}
