//! Unit tests of running Silicon: positions, per-file output, ids from messages, the driver's
//! kill/restart/crash paths with a fake JVM, and the batch protocol.

use super::driver::BatchReply;
use super::*;
use crate::backend::BackendConfig;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn positions() {
    assert_eq!(ViperPos::parse("post.vpr@3.11--3.17"), Some(ViperPos::new(3, 11, 3, 17)));
    assert_eq!(ViperPos::parse("a@b.vpr@4.1"), Some(ViperPos::new(4, 1, 4, 1)));
    assert_eq!(ViperPos::parse("?"), None);
    assert_eq!(ViperPos::parse("<no position>"), None);
}

#[test]
fn cli_output() {
    let out = "Silicon 1.1-SNAPSHOT (3e24b7a8+)\nSilicon found 3 errors in 5.02s:\n  \
            [0] Assignment might fail. There might be insufficient permission to access x.f \
            (multi.vpr@6.3--6.11)\n\n  [1] Postcondition of m2 might not hold. Assertion r > a \
            might not hold. (multi.vpr@10.11--10.16)\n\n  [2] Assignment might fail. Divisor a \
            might be zero. (multi.vpr@18.3--18.14)\n\n";
    let CliResult::Errors(e) = parse_cli_output(out) else { panic!("no errors parsed") };
    let ids: Vec<_> = e.iter().map(|e| e.full_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "assignment.failed:insufficient.permission",
            "postcondition.violated:assertion.false",
            "assignment.failed:division.by.zero"
        ]
    );
    assert_eq!(e[1].pos, Some(ViperPos::new(10, 11, 10, 16)));
    assert_eq!(e[1].message, "Postcondition of m2 might not hold. Assertion r > a might not hold.");
    assert_eq!(
        parse_cli_output("Silicon finished verification successfully in 6.00s.\n"),
        CliResult::Verified
    );
    let t = "Silicon found 1 error in 5.56s:\n  [0] Timeout occurred after 3 second(s)\n";
    let CliResult::Errors(e) = parse_cli_output(t) else { panic!() };
    assert_eq!(e[0].full_id, "timeout.error");
    assert_eq!(e[0].pos, None);
    assert_eq!(parse_cli_output("Command-line interface: x\n"), CliResult::Nothing);
}

#[test]
fn ids_from_messages() {
    let cases = [
        ("Parse error: Expected (parens | atom):4:1, found \"}\\n\".", true, "parser.error"),
        ("found incompatible type `Int`, expected `Bool`", true, "typechecker.error"),
        (
            "Loop invariant 0 <= k might not be preserved. Assertion k <= m might not hold.",
            true,
            "invariant.not.preserved:assertion.false",
        ),
        (
            "Precondition of function aloc might not hold. Assertion i < alen(a) might not hold.",
            true,
            "application.precondition:assertion.false",
        ),
        (
            "Exhale might fail. Quantified resource aloc(a, i).int_val might not be injective.",
            true,
            "exhale.failed:qp.not.injective",
        ),
        (
            "Contract might not be well-formed. There might be insufficient permission to \
                 access aloc(b, tid).int_val",
            true,
            "not.wellformed:insufficient.permission",
        ),
        ("Assert might fail. Something new.", true, "assert.failed:unknown"),
    ];
    for (msg, pos, id) in cases {
        assert_eq!(infer_full_id(msg, pos), id, "{msg}");
    }
}

/// A fake `java` that compiles the "driver" by touching the class file and, as the driver,
/// hangs on its first start (wall-clock kill), answers once on its second start and then
/// exits (crash). Exercises the kill, restart and crash paths without a real JVM.
#[cfg(unix)]
#[test]
fn driver_kill_restart_and_crash() {
    use crate::backend::{env_from_map, TempDir};
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-fake-jvm").unwrap();
    let d = dir.path();
    let state = d.join("starts");
    let java = d.join("java");
    let script = format!(
        r#"#!/bin/sh
case "$1" in
  -version) echo 'openjdk version "17.0.9"' >&2; exit 0;;
  --describe-module) exit 0;;
esac
prev=""
for a in "$@"; do
  if [ "$prev" = "-d" ]; then touch "$a/AlpineSilicon.class"; exit 0; fi
  prev="$a"
done
n=$(cat '{state}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{state}'
echo READY
read line
id=$(printf '%s' "$line" | cut -f2)
if [ $n -eq 1 ]; then sleep 600; fi
printf 'BEGIN\t%s\nEND\t%s\tVERIFIED\t5\n' "$id" "$id"
read line
echo 'java.lang.OutOfMemoryError: simulated' >&2
exit 1
"#,
        state = state.display()
    );
    fs::write(&java, script).unwrap();
    let z3 = d.join("z3");
    fs::write(&z3, "#!/bin/sh\necho 'Z3 version 4.8.12 - 64 bit'\n").unwrap();
    for f in [&java, &z3] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let jar = d.join("silicon.jar");
    fs::write(&jar, b"fake").unwrap();
    let vpr = d.join("a.vpr");
    fs::write(&vpr, "method m() {}\n").unwrap();
    let env = env_from_map(
        [
            ("ALPINE_JAVA", java.as_os_str()),
            ("ALPINE_Z3", z3.as_os_str()),
            ("ALPINE_SILICON_JAR", jar.as_os_str()),
            ("PATH", std::ffi::OsStr::new("/nonexistent")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_os_string()))
        .collect(),
    );
    let cfg = BackendConfig {
        cache_dir: Some(d.join("cache")),
        mode: RunMode::Batch,
        result_cache: false,
        grace: Duration::from_millis(300),
        startup_grace: Duration::from_millis(700),
        ..BackendConfig::default()
    };
    let b = Backend::discover_with_env(&cfg, &env).unwrap();
    assert_eq!(b.mode(), RunMode::Batch);
    assert_eq!(b.warnings().len(), 1, "unpinned jar: {:?}", b.warnings());

    // 1st start hangs: killed after timeout + grace + startup grace (1 + 0.3 + 0.7 s).
    let t0 = Instant::now();
    let o = b.verify_file(&vpr, 1);
    assert_eq!(o.verdict, Verdict::Timeout);
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    assert!(waited < Duration::from_secs(30), "{waited:?}");
    // 2nd start answers.
    let o = b.verify_file(&vpr, 1);
    assert_eq!(o.verdict, Verdict::Verified, "{o:?}");
    assert_eq!(o.silicon_ms, 5);
    // ... then dies: a crash with the JVM's last words.
    let o = b.verify_file(&vpr, 1);
    let Verdict::Crash(msg) = &o.verdict else { panic!("{o:?}") };
    assert!(msg.contains("exited") && msg.contains("OutOfMemoryError"), "{msg}");
    assert_eq!(fs::read_to_string(&state).unwrap().trim(), "2");
}

#[test]
fn protocol() {
    let mut r = BatchReply::new(7);
    for l in [
        "BEGIN\t7",
        "Silicon found 1 error",
        "ERR\t6\tx:y\t?\t?\tstale",
        "ERR\t7\tassignment.failed:insufficient.permission\tperm.vpr@6.3--6.11\tperm.vpr@6.3--6.6\tAssignment might fail. A\\tB\\\\C",
        "OTHER\t7\tparser.error\tp.vpr@4.1--4.1\tParse error: x (p.vpr@4.1--4.1)",
    ] {
        assert!(r.feed(l).is_none());
    }
    let done = r.feed("END\t7\tFAILED\t1018").expect("END");
    assert_eq!(done.ms, 1018);
    let Verdict::Failed(e) = done.into_verdict(Path::new("z3")) else { panic!() };
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].full_id, "parser.error");
    assert_eq!(e[0].message, "Parse error: x");
    assert!(e[0].is_internal());
    assert_eq!(e[1].message, "Assignment might fail. A\tB\\C");
    assert_eq!(e[1].reason_pos, Some(ViperPos::new(6, 3, 6, 6)));
    assert!(!e[1].is_internal());
    assert_eq!(e[1].error_id(), "assignment.failed");
    assert_eq!(e[1].reason_id(), Some("insufficient.permission"));

    let mut r = BatchReply::new(1);
    r.feed("OTHER\t1\tdriver.exception\t?\tviper.silicon.reporting.ExternalToolError: Cannot run prover at location");
    let v = r.feed("END\t1\tCRASH\t10").unwrap().into_verdict(Path::new("/x/z3"));
    assert_eq!(v, Verdict::Crash("Silicon could not start z3 at /x/z3.".into()));
}

/// A process that exits and leaves a child behind (Silicon ending while one of its z3 processes
/// still runs): the child is killed with the group as soon as the leader is seen to exit, so the
/// run ends at once (the orphan held the output pipe open) and nothing is left running.
#[cfg(target_os = "linux")]
#[test]
fn an_exited_leader_takes_its_group_with_it() {
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.args(["-c", "sleep 600 & echo $!"]);
    let t0 = Instant::now();
    let out = run_with_deadline(cmd, Some(Duration::from_secs(300))).unwrap().expect("no timeout");
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(out.status.success(), "{out:?}");
    let orphan = out.stdout.trim().to_string();
    let running = || {
        fs::read_to_string(format!("/proc/{orphan}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
            .is_some_and(|zombie| !zombie)
    };
    let t0 = Instant::now();
    while running() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!running(), "the orphan {orphan} still runs");
}

/// A fake `java` in a fresh folder: discovery and the driver's "compilation" as in
/// [`driver_kill_restart_and_crash`], then `body` as the driver, with `$STARTS` (a file to which
/// every start appends a line) and `answer LINE` (answers a request VERIFIED, with 1 ms for
/// `a.vpr` and 2 ms for any other file, so that a result shows which file it was for). Returns
/// the folder and a batch-mode back end running two requests at a time.
#[cfg(unix)]
fn fake_driver(body: &str) -> (crate::backend::TempDir, Backend) {
    use crate::backend::{env_from_map, TempDir};
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-fake-jvm").unwrap();
    let d = dir.path();
    let java = d.join("java");
    let script = format!(
        r#"#!/bin/sh
case "$1" in
  -version) echo 'openjdk version "17.0.9"' >&2; exit 0;;
  --describe-module) exit 0;;
esac
prev=""
for a in "$@"; do
  if [ "$prev" = "-d" ]; then touch "$a/AlpineSilicon.class"; exit 0; fi
  prev="$a"
done
STARTS='{starts}'
echo start >> "$STARTS"
n=$(wc -l < "$STARTS")
answer() {{
  id=$(printf '%s' "$1" | cut -f2)
  case "$(printf '%s' "$1" | cut -f3)" in *a.vpr) ms=1;; *) ms=2;; esac
  printf 'BEGIN\t%s\nEND\t%s\tVERIFIED\t%s\n' "$id" "$id" "$ms"
}}
echo READY
{body}
while read l; do [ "$l" = QUIT ] && exit 0; answer "$l"; done
"#,
        starts = d.join("starts").display()
    );
    fs::write(&java, script).unwrap();
    let z3 = d.join("z3");
    fs::write(&z3, "#!/bin/sh\necho 'Z3 version 4.8.12 - 64 bit'\n").unwrap();
    for f in [&java, &z3] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let jar = d.join("silicon.jar");
    fs::write(&jar, b"fake").unwrap();
    for f in ["a.vpr", "b.vpr"] {
        fs::write(d.join(f), "method m() {}\n").unwrap();
    }
    let env = env_from_map(
        [
            ("ALPINE_JAVA", java.as_os_str()),
            ("ALPINE_Z3", z3.as_os_str()),
            ("ALPINE_SILICON_JAR", jar.as_os_str()),
            ("PATH", std::ffi::OsStr::new("/nonexistent")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_os_string()))
        .collect(),
    );
    let cfg = BackendConfig {
        cache_dir: Some(d.join("cache")),
        mode: RunMode::Batch,
        result_cache: false,
        jobs: Some(2),
        grace: Duration::from_secs(30),
        startup_grace: Duration::from_secs(30),
        ..BackendConfig::default()
    };
    let b = Backend::discover_with_env(&cfg, &env).unwrap();
    (dir, b)
}

/// Verifies a.vpr and b.vpr of `dir` from two threads at once.
#[cfg(unix)]
fn verify_two(b: &Backend, dir: &Path) -> (VerifyOutcome, VerifyOutcome) {
    std::thread::scope(|s| {
        let a = s.spawn(|| b.verify_file(&dir.join("a.vpr"), 60));
        let o = b.verify_file(&dir.join("b.vpr"), 60);
        (a.join().unwrap(), o)
    })
}

#[cfg(unix)]
fn starts(dir: &Path) -> usize {
    fs::read_to_string(dir.join("starts")).map_or(0, |s| s.lines().count())
}

/// Two requests in flight in one JVM, answered in the reverse order: each gets its own answer.
#[cfg(unix)]
#[test]
fn answers_are_routed_by_id_whatever_their_order() {
    let (dir, b) = fake_driver(r#"read l1; read l2; answer "$l2"; answer "$l1""#);
    let (a, o) = verify_two(&b, dir.path());
    assert_eq!((a.verdict, a.silicon_ms), (Verdict::Verified, 1));
    assert_eq!((o.verdict, o.silicon_ms), (Verdict::Verified, 2));
    assert_eq!(starts(dir.path()), 1, "one JVM for both");
}

/// The JVM dies with two requests in flight: neither is known to be the cause, so each is
/// verified again, on a JVM of its own; both get their answers.
#[cfg(unix)]
#[test]
fn requests_in_flight_when_the_jvm_dies_are_retried_once_on_fresh_jvms() {
    let (dir, b) = fake_driver(
        r#"if [ "$n" -eq 1 ]; then read l1; read l2; echo 'simulated crash' >&2; exit 1; fi"#,
    );
    let (a, o) = verify_two(&b, dir.path());
    assert_eq!((a.verdict, a.silicon_ms), (Verdict::Verified, 1));
    assert_eq!((o.verdict, o.silicon_ms), (Verdict::Verified, 2));
    assert_eq!(starts(dir.path()), 3, "the shared JVM, then one for each retry");
    // The next request starts a fresh shared JVM.
    let again = b.verify_file(&dir.path().join("a.vpr"), 60);
    assert_eq!(again.verdict, Verdict::Verified);
    assert_eq!(starts(dir.path()), 4);
}

/// A JVM that keeps dying: the retry is the only one, and the result is a crash with the JVM's
/// last words, never a verdict.
#[cfg(unix)]
#[test]
fn a_retry_that_dies_again_is_a_crash() {
    let (dir, b) =
        fake_driver(r#"read l1; [ "$n" -eq 1 ] && read l2; echo "simulated crash $n" >&2; exit 1"#);
    let (a, o) = verify_two(&b, dir.path());
    for r in [a, o] {
        let Verdict::Crash(msg) = &r.verdict else { panic!("{r:?}") };
        assert!(msg.contains("exited") && msg.contains("simulated crash"), "{msg}");
    }
    assert_eq!(starts(dir.path()), 3);
}
