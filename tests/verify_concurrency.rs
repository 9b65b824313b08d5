//! `alpine-rs verify a b c` shares one Silicon JVM between its files and verifies several at a
//! time: the output does not depend on `--jobs`, and a file that crashes Silicon, or kills its
//! JVM, costs no other file its verdict.
//!
//! The tests that verify run Silicon for real: they need the backend (`alpine-rs backend
//! install`); without it `verify` exits 3 and they fail, never passing vacuously.
//! `one_jvm_serves_every_file` uses a fake back end instead. Linux only, as tests/verify_faults.rs.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// Silicon JVMs are big and CPU-hungry; one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

const VERIFIES: &str =
    "class C {\n  ensures \\result == 1;\n  int one() {\n    return 1;\n  }\n}\n";

const VERIFIES_TOO: &str = "class D {\n  requires n >= 0;\n  ensures \\result == n + 2;\n  \
                            int two(int n) {\n    int r = n;\n    r = r + 2;\n    return r;\n  \
                            }\n}\n";

const FAILS: &str = "class E {\n  ensures \\result == 2;\n  int one() {\n    return 1;\n  }\n}\n";

const DOES_NOT_PARSE: &str = "class F {\n  int one( {\n    return 1;\n  }\n}\n";

/// Writes `(name, text)` files into a fresh folder; returns their paths, in order.
fn write_files(test: &str, files: &[(&str, &str)]) -> Vec<PathBuf> {
    let d = common::tmpdir("verify-concurrency", test);
    files
        .iter()
        .map(|(name, text)| {
            let p = d.join(name);
            std::fs::write(&p, text).expect("writable");
            p
        })
        .collect()
}

fn verify(args: &[&str], files: &[PathBuf], env: &[(&str, &Path)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
        .arg("verify")
        .args(args)
        .args(files)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The text report without its times (`… verified in 3.2s`).
fn without_times(err: &str) -> String {
    err.lines()
        .map(|l| match l.rsplit_once(" in ") {
            Some((head, t)) if t.ends_with('s') && t[..t.len() - 1].parse::<f64>().is_ok() => head,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON report without its times.
fn json_without_times(out: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(out).expect("JSON on stdout");
    for r in v.as_array_mut().expect("an array") {
        r.as_object_mut().expect("an object").remove("time_ms");
    }
    v
}

/// The verdict lines (`FILE: verdict`), in the order printed.
fn verdict_lines(err: &str, files: &[PathBuf]) -> Vec<String> {
    without_times(err)
        .lines()
        .filter(|l| files.iter().any(|f| l.starts_with(&format!("{}: ", f.display()))))
        .map(str::to_string)
        .collect()
}

/// Files of every verdict, verified one at a time and two at a time (in one JVM): the same
/// report, in the order of the arguments, and the same exit code.
#[test]
fn jobs_1_and_jobs_2_verify_to_the_same_output_in_argument_order() {
    let _serial = serial();
    let files = write_files(
        "order",
        &[
            ("a_fails.pvl", FAILS),
            ("b_ok.pvl", VERIFIES),
            ("c_bad.pvl", DOES_NOT_PARSE),
            ("d_ok.pvl", VERIFIES_TOO),
        ],
    );
    let (c1, _, e1) = verify(&["--no-cache", "--jobs", "1"], &files, &[]);
    let (c2, _, e2) = verify(&["--no-cache", "--jobs", "2"], &files, &[]);
    assert_eq!(c1, 2, "a file that does not parse is exit 2: {e1}");
    assert_eq!(c1, c2, "{e1}\n---\n{e2}");
    assert_eq!(without_times(&e1), without_times(&e2));
    let shown = |f: &PathBuf, what: &str| format!("{}: {what}", f.display());
    assert_eq!(
        verdict_lines(&e2, &files),
        [
            shown(&files[0], "verification failed"),
            shown(&files[1], "verified"),
            shown(&files[2], "not verified (unsupported or invalid input)"),
            shown(&files[3], "verified"),
        ]
    );
    let (j1, o1, _) = verify(&["--no-cache", "--jobs", "1", "--format", "json"], &files, &[]);
    let (j2, o2, _) = verify(&["--no-cache", "--jobs", "2", "--format", "json"], &files, &[]);
    assert_eq!((j1, j2), (c1, c1));
    assert_eq!(json_without_times(&o1), json_without_times(&o2));
}

/// `--jobs 0` is a usage error, before anything runs.
#[test]
fn jobs_0_is_a_usage_error() {
    let files = write_files("jobs0", &[("ok.pvl", VERIFIES)]);
    let (code, _, err) = verify(&["--jobs", "0"], &files, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--jobs must be at least 1"), "{err}");
}

/// Among files verified two at a time in one JVM, one makes Silicon throw (its request fails, the
/// JVM lives on) and one kills the JVM (the debug builds' test hook `ALPINE_RS_TEST_DRIVER_FAULTS`
/// halts it, as a JVM crash would). Those two are exit 3 with the reason; every other file still
/// gets its own, right verdict (the requests in flight with the crash are verified again on a
/// fresh JVM).
#[test]
fn a_file_that_crashes_silicon_costs_no_other_file_its_verdict() {
    let _serial = serial();
    let throws = VERIFIES.replace("one()", "alpine_test_throw()").replace("class C", "class T");
    let halts = VERIFIES.replace("one()", "alpine_test_halt()").replace("class C", "class H");
    let files = write_files(
        "crash",
        &[
            ("a_ok.pvl", VERIFIES),
            ("b_throws.pvl", &throws),
            ("c_ok.pvl", VERIFIES_TOO),
            ("d_halts.pvl", &halts),
            ("e_fails.pvl", FAILS),
            ("f_ok.pvl", VERIFIES),
        ],
    );
    let flag = Path::new("1");
    let (code, _, err) =
        verify(&["--no-cache", "--jobs", "2"], &files, &[("ALPINE_RS_TEST_DRIVER_FAULTS", flag)]);
    let shown = |f: &PathBuf, what: &str| format!("{}: {what}", f.display());
    let crash = "not verified (backend or encoder error)";
    assert_eq!(
        verdict_lines(&err, &files),
        [
            shown(&files[0], "verified"),
            shown(&files[1], crash),
            shown(&files[2], "verified"),
            shown(&files[3], crash),
            shown(&files[4], "verification failed"),
            shown(&files[5], "verified"),
        ],
        "{err}"
    );
    // A verification failure outranks the crashes (exit 3) in the combined code.
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("StackOverflowError: alpine test fault"), "{err}");
    assert!(err.contains("the driver JVM exited") && err.contains("halting the JVM"), "{err}");
}

/// A fake back end whose `java` serves any number of requests per start, logging each start and
/// each request to `$FAKE_LOG`: `verify` of three files starts one JVM.
#[test]
fn one_jvm_serves_every_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = common::tmpdir("verify-concurrency", "fake");
    let java = r#"#!/bin/sh
case "$1" in
  -version) echo 'openjdk version "17.0.9"' >&2; exit 0;;
  --describe-module) exit 0;;
esac
echo start >> "$FAKE_LOG"
echo READY
while read line; do
  [ "$line" = QUIT ] && exit 0
  id=$(printf '%s' "$line" | cut -f2)
  echo request >> "$FAKE_LOG"
  printf 'BEGIN\t%s\nEND\t%s\tVERIFIED\t5\n' "$id" "$id"
done
"#;
    let javac =
        "#!/bin/sh\nprev=\"\"\nfor a in \"$@\"; do\n  if [ \"$prev\" = \"-d\" ]; then touch \
                 \"$a/AlpineSilicon.class\"; exit 0; fi\n  prev=\"$a\"\ndone\nexit 1\n";
    let z3 = "#!/bin/sh\necho 'Z3 version 4.8.12 - 64 bit'\n";
    for (name, text) in [("java", java), ("javac", javac), ("z3", z3), ("silicon.jar", "fake")] {
        let p = d.join(name);
        std::fs::write(&p, text).expect("writable");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let files: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let p = d.join(format!("{n}.pvl"));
            std::fs::write(&p, VERIFIES.replace("one()", &format!("{n}()"))).expect("writable");
            p
        })
        .collect();
    let log = d.join("log");
    let (java, z3, jar, cache) =
        (d.join("java"), d.join("z3"), d.join("silicon.jar"), d.join("cache"));
    let env = [
        ("ALPINE_JAVA", java.as_path()),
        ("ALPINE_Z3", z3.as_path()),
        ("ALPINE_SILICON_JAR", jar.as_path()),
        ("ALPINE_RS_CACHE", cache.as_path()),
        ("FAKE_LOG", log.as_path()),
    ];
    let (code, _, err) = verify(&["--no-cache", "--jobs", "2"], &files, &env);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict_lines(&err, &files).len(), 3, "{err}");
    let log = std::fs::read_to_string(&log).expect("a log");
    let count = |w: &str| log.lines().filter(|l| *l == w).count();
    assert_eq!((count("start"), count("request")), (1, 3), "{log}");
}
