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

/// The language server without the library: it says so once, offers no rewrites, still
/// publishes the parse's diagnostics, and the session ends normally.
#[test]
fn the_language_server_goes_on_without_the_library() {
    use std::io::{Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .args(["lsp", "--stdio"])
        .env("ALPINE_RS_LIBZ3", "/nonexistent/libz3.so")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("runs");
    let text = std::fs::read_to_string(root().join(PROGRAM)).expect("readable");
    let uri = "file:///tmp/z3-library-test.pvl";
    let frame = |v: serde_json::Value| {
        let body = v.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let mut input = String::new();
    input.push_str(&frame(serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})));
    input.push_str(&frame(serde_json::json!({"jsonrpc":"2.0","method":"initialized","params":{}})));
    input.push_str(&frame(
        serde_json::json!({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{
        "textDocument":{"uri":uri,"languageId":"pvl","version":1,"text":text}}}),
    ));
    let loop_line = text.lines().position(|l| l.trim_start().starts_with("while")).expect("a loop");
    input.push_str(&frame(
        serde_json::json!({"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{
        "textDocument":{"uri":uri},
        "range":{"start":{"line":loop_line,"character":0},"end":{"line":loop_line,"character":0}},
        "context":{"diagnostics":[]}}}),
    ));
    input.push_str(&frame(serde_json::json!({"jsonrpc":"2.0","id":3,"method":"shutdown"})));
    input.push_str(&frame(serde_json::json!({"jsonrpc":"2.0","method":"exit"})));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("written");
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().expect("stdout").read_to_string(&mut out).expect("read");
    let status = child.wait().expect("ends");
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.contains("offers no rewrites (E-Z3)"), "{out}");
    assert!(out.contains("textDocument/publishDiagnostics"), "{out}");
    assert!(out.contains(r#"{"id":2,"jsonrpc":"2.0","result":[]}"#), "{out}");
}
