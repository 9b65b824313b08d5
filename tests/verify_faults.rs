//! Faults around `alpine-rs verify`: the Silicon JVM and its z3 processes die with alpine-rs when
//! it is stopped by a signal, and a timeout, a crash or an out-of-memory is exit 3 with its
//! reason, never a verdict.
//!
//! Most tests run Silicon for real: they need the backend (`alpine-rs backend install`, done by
//! `.ci/run`). Without it `verify` exits 3 before starting a JVM and they fail; they never pass
//! vacuously. `silicon_failures_are_exit_3_with_the_reason` uses a fake back end instead. Linux
//! only: processes are found through /proc.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// 2^30 feasible paths (independent branch conditions): Silicon cannot finish this in hours, and
/// it starts z3 processes early, so a run of it has a full process tree to kill.
fn slow_program() -> String {
    let n = 30;
    let params: Vec<String> = (1..=n).map(|i| format!("boolean b{i}")).collect();
    let mut s = format!(
        "class Slow {{\n  ensures \\result >= 0;\n  int paths({}) {{\n    int r = 0;\n",
        params.join(", ")
    );
    for i in 1..=n {
        s.push_str(&format!("    if (b{i}) {{ r = r + 1; }} else {{ r = r + 2; }}\n"));
    }
    s.push_str("    return r;\n  }\n}\n");
    s
}

/// How long a JVM may take to start Silicon and its first z3 on a busy 2-core machine.
const START_LIMIT: Duration = Duration::from_secs(180);

/// How long the group may take to disappear after alpine-rs is signalled.
const DEATH_LIMIT: Duration = Duration::from_secs(10);

/// Silicon JVMs are big and CPU-hungry; one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

// ------------------------------------------------------------------------------------------------
// Processes, from /proc

/// One process: its pid and start time (together unique, even if the pid is reused), parent,
/// process group, state and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Proc {
    pid: i32,
    start: u64,
    ppid: i32,
    pgid: i32,
    state: char,
    comm: String,
}

fn read_proc(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses: split at the last ')'.
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields after comm, from 0: state, ppid, pgrp, …, starttime (field 22 of the line) at 19.
    Some(Proc {
        pid,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgid: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
        comm,
    })
}

fn all_procs() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter_map(read_proc).collect()
}

/// The descendants of `root`, with their depth below it (1 for a child).
fn descendants(root: i32) -> Vec<(Proc, usize)> {
    let procs = all_procs();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let next: Vec<&Proc> = procs.iter().filter(|p| frontier.contains(&p.ppid)).collect();
        frontier = next.iter().map(|p| p.pid).collect();
        out.extend(next.into_iter().map(|p| (p.clone(), depth)));
    }
    out
}

/// Those of `seen` still running (a zombie has finished; orphans wait for pid 1 to reap them),
/// and any other live member of the process groups they lead. Only groups led by a process seen
/// below alpine-rs count: a short-lived child that stayed in the test's own group (`java
/// -version`) must not make the whole group, test harness included, a "survivor".
fn survivors(seen: &BTreeSet<Proc>) -> Vec<Proc> {
    let groups: BTreeSet<i32> = seen.iter().filter(|p| p.pgid == p.pid).map(|p| p.pgid).collect();
    all_procs()
        .into_iter()
        .filter(|p| p.state != 'Z')
        .filter(|p| {
            seen.iter().any(|s| s.pid == p.pid && s.start == p.start) || groups.contains(&p.pgid)
        })
        .collect()
}

/// A started `alpine-rs`, and every process seen below it. On drop (a failed assertion included)
/// everything still running is killed: a failing test must not leave JVMs behind.
struct Watched {
    child: Child,
    seen: BTreeSet<Proc>,
}

impl Watched {
    fn start(args: &[&str]) -> Watched {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_alpine-rs"));
        // alpine-rs leaves a signal ignored when whoever started it ignores it (as `nohup` and
        // a background job in a script do, and children inherit that); the signals sent here
        // must reach it with their default meaning whatever ran the test suite.
        // SAFETY: signal(2) only, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let child = cmd
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("alpine-rs starts");
        Watched { child, seen: BTreeSet::new() }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Records the current descendants; returns the deepest depth seen now.
    fn poll(&mut self) -> usize {
        let now = descendants(self.pid());
        let deepest = now.iter().map(|(_, d)| *d).max().unwrap_or(0);
        self.seen.extend(now.into_iter().map(|(p, _)| p));
        deepest
    }

    /// Waits until alpine-rs has a grandchild (a z3 of its Silicon JVM).
    fn wait_for_grandchild(&mut self) {
        let t0 = Instant::now();
        while self.poll() < 2 {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("alpine-rs exited ({status}) before starting z3: {}", self.stderr());
            }
            assert!(t0.elapsed() < START_LIMIT, "no z3 after {START_LIMIT:?}: {:?}", self.seen);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for alpine-rs to exit, recording descendants meanwhile.
    fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            self.poll();
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            assert!(t0.elapsed() < limit, "alpine-rs still runs after {limit:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }

    /// Asserts that nothing seen below alpine-rs still runs, after at most [`DEATH_LIMIT`].
    fn assert_no_survivors(&self, what: &str) {
        let t0 = Instant::now();
        let mut left = survivors(&self.seen);
        while !left.is_empty() && t0.elapsed() < DEATH_LIMIT {
            std::thread::sleep(Duration::from_millis(100));
            left = survivors(&self.seen);
        }
        assert!(
            left.is_empty(),
            "{what}: {} of the {} processes started below alpine-rs survive it: {left:#?}",
            left.len(),
            self.seen.len()
        );
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in survivors(&self.seen) {
            // SAFETY: kill(2) on a pid just seen running with the start time we recorded.
            unsafe {
                libc::kill(p.pid, libc::SIGKILL);
            }
        }
    }
}

fn slow_file(name: &str) -> PathBuf {
    let d = common::tmpdir("verify-faults", name);
    let f = d.join("slow.pvl");
    std::fs::write(&f, slow_program()).expect("writable");
    f
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Starts `verify` on the slow program, waits until its JVM runs z3, sends `sig` to alpine-rs
/// alone (as `timeout` and CI runners do), and checks that alpine-rs dies of that signal and
/// takes its whole process tree with it.
fn children_die_with(sig: i32, name: &str) {
    let _serial = serial();
    let f = slow_file(name);
    let mut w = Watched::start(&["verify", "--no-cache", "--timeout", "0", s(&f)]);
    w.wait_for_grandchild();
    let comms: BTreeSet<&str> = w.seen.iter().map(|p| p.comm.as_str()).collect();
    assert!(comms.contains("java"), "no JVM below alpine-rs: {:?}", w.seen);
    // SAFETY: kill(2) on our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(w.pid(), sig) }, 0);
    let status = w.wait(DEATH_LIMIT);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(sig), "alpine-rs must end by the signal itself: {status}");
    w.assert_no_survivors(name);
}

#[test]
fn sigterm_kills_silicon_and_its_z3_processes() {
    children_die_with(libc::SIGTERM, "sigterm");
}

#[test]
fn sigint_kills_silicon_and_its_z3_processes() {
    children_die_with(libc::SIGINT, "sigint");
}

#[test]
fn sighup_kills_silicon_and_its_z3_processes() {
    children_die_with(libc::SIGHUP, "sighup");
}

/// SIGKILL cannot be handled: the JVM still dies, by its parent-death signal. (Its z3 processes
/// are the JVM's children, out of reach of that signal; the test kills any that remain.)
#[test]
fn sigkill_still_kills_the_jvm() {
    let _serial = serial();
    let f = slow_file("sigkill");
    let mut w = Watched::start(&["verify", "--no-cache", "--timeout", "0", s(&f)]);
    w.wait_for_grandchild();
    // SAFETY: kill(2) on our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(w.pid(), libc::SIGKILL) }, 0);
    w.wait(DEATH_LIMIT);
    let jvms = |w: &Watched| -> Vec<Proc> {
        survivors(&w.seen).into_iter().filter(|p| p.comm == "java").collect()
    };
    let t0 = Instant::now();
    while !jvms(&w).is_empty() && t0.elapsed() < DEATH_LIMIT {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(jvms(&w), [], "the JVM survives a SIGKILL of alpine-rs");
    eprintln!("after SIGKILL, still running: {:?}", survivors(&w.seen));
}

/// A file that runs out of time is exit 3 with a V-TIMEOUT naming the limit and how to raise it,
/// never a verdict, and its JVM and z3 processes are gone when alpine-rs exits.
#[test]
fn timeout_is_exit_3_with_the_reason_and_leaves_no_process() {
    let _serial = serial();
    let f = slow_file("timeout");
    let mut w = Watched::start(&["verify", "--no-cache", "--timeout", "3", s(&f)]);
    // Silicon's own limit (3 s) ends it; the wall-clock kill comes 70 s later.
    let status = w.wait(START_LIMIT);
    let err = w.stderr();
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(err.contains("error[V-TIMEOUT]: verification timed out after 3 s"), "{err}");
    assert!(err.contains("verify --timeout S") && err.contains("0 for none"), "{err}");
    assert!(err.contains("inconclusive (timeout)"), "{err}");
    assert!(w.seen.iter().any(|p| p.comm == "java"), "no JVM was seen: {:?}", w.seen);
    w.assert_no_survivors("after a timeout");
}

/// The limit is finite unless asked otherwise.
#[test]
fn the_default_time_limit_is_finite() {
    for (cmd, flag) in [("verify", "--timeout"), ("apply", "--verify-timeout")] {
        let (code, out, err) = common::run_cli(&[cmd, "--help"]);
        assert_eq!(code, 0, "{err}");
        let help = out.split(flag).nth(1).unwrap_or_else(|| panic!("no {flag} in {out}"));
        let default = help.split("[default: ").nth(1).and_then(|d| d.split(']').next());
        assert_eq!(default, Some("600"), "{cmd} {flag}: {help}");
    }
}

// ------------------------------------------------------------------------------------------------
// Silicon failing: a fake back end (no JVM needed)

/// A fake back end in `dir`: `java` answers discovery and, as the batch driver, answers each
/// request the way `$FAKE_SILICON` says (and logs it to `$FAKE_LOG` if set); `javac` "compiles"
/// the driver by touching its class.
fn fake_backend(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let java = r#"#!/bin/sh
case "$1" in
  -version) echo 'openjdk version "17.0.9"' >&2; exit 0;;
  --describe-module) exit 0;;
esac
echo READY
read line
id=$(printf '%s' "$line" | cut -f2)
[ -n "$FAKE_LOG" ] && echo request >> "$FAKE_LOG"
case "$FAKE_SILICON" in
  verified)
    printf 'BEGIN\t%s\nEND\t%s\tVERIFIED\t5\n' "$id" "$id";;
  oom)
    echo 'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space' >&2
    exit 1;;
  crash)
    printf 'BEGIN\t%s\nOTHER\t%s\tdriver.exception\t?\tjava.lang.StackOverflowError\nEND\t%s\tCRASH\t7\n' "$id" "$id" "$id";;
  timeout)
    printf 'BEGIN\t%s\nEND\t%s\tTIMEOUT\t3000\n' "$id" "$id";;
esac
read line
"#;
    let javac = r#"#!/bin/sh
prev=""
for a in "$@"; do
  if [ "$prev" = "-d" ]; then touch "$a/AlpineSilicon.class"; exit 0; fi
  prev="$a"
done
exit 1
"#;
    let z3 = "#!/bin/sh\necho 'Z3 version 4.8.12 - 64 bit'\n";
    for (name, text) in [("java", java), ("javac", javac), ("z3", z3), ("silicon.jar", "fake")] {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("writable");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    vec![
        ("ALPINE_JAVA", dir.join("java")),
        ("ALPINE_Z3", dir.join("z3")),
        ("ALPINE_SILICON_JAR", dir.join("silicon.jar")),
        ("ALPINE_RS_CACHE", dir.join("cache")),
    ]
}

/// A one-method file that verifies, in `d`.
fn verified_file(d: &std::path::Path) -> std::path::PathBuf {
    let f = d.join("ok.pvl");
    std::fs::write(
        &f,
        "class C {\n  ensures \\result == 1;\n  int one() {\n    return 1;\n  }\n}\n",
    )
    .expect("writable");
    f
}

/// A Silicon that runs out of memory, crashes or times out gives exit 3 with the reason, never
/// a verdict.
#[test]
fn silicon_failures_are_exit_3_with_the_reason() {
    let d = common::tmpdir("verify-faults", "fake");
    let env = fake_backend(&d);
    let f = verified_file(&d);
    for (mode, needles) in [
        (
            "oom",
            &[
                "error[E-BACKEND]: Silicon stopped without a verdict",
                "OutOfMemoryError",
                "ran out of memory: give it more (e.g. `JAVA_TOOL_OPTIONS=-Xmx8g`",
            ][..],
        ),
        ("crash", &["error[E-BACKEND]: Silicon stopped without a verdict", "StackOverflowError"]),
        ("timeout", &["error[V-TIMEOUT]: verification timed out after 600 s"]),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
            .args(["verify", "--no-cache", s(&f)])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("FAKE_SILICON", mode)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{mode}: {err}");
        for n in needles {
            assert!(err.contains(n), "{mode}: no {n:?} in {err}");
        }
        let last = err.lines().last().unwrap_or_default();
        assert!(!last.contains(": verified") && !last.contains("verification failed"), "{err}");
    }
}

/// A real Silicon out of memory (its JVM given an 8 MB heap through `JAVA_TOOL_OPTIONS`, which
/// every JVM reads) is exit 3 with the OutOfMemoryError and how to give the JVM more.
#[test]
fn a_real_silicon_out_of_memory_is_exit_3_with_the_reason() {
    let _serial = serial();
    let d = common::tmpdir("verify-faults", "oom");
    let f = verified_file(&d);
    let run = |heap: &str| {
        Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
            .args(["verify", "--no-cache", s(&f)])
            .env("JAVA_TOOL_OPTIONS", format!("-Xmx{heap}"))
            .stdin(Stdio::null())
            .output()
            .expect("runs")
    };
    let out = run("8m");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("OutOfMemoryError") && err.contains("ran out of memory"), "{err}");
    // Control: the same file verifies with a normal heap.
    let out = run("1g");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A damaged result-cache entry (a truncated write, a disk error) is a miss: the file is verified
/// again and the entry rewritten, never read as a verdict.
#[test]
fn a_damaged_result_cache_entry_is_verified_again_and_rewritten() {
    let d = common::tmpdir("verify-faults", "cache");
    let env = fake_backend(&d);
    let f = verified_file(&d);
    let log = d.join("requests");
    let requests = || std::fs::read_to_string(&log).map_or(0, |s| s.lines().count());
    let verify = || {
        let out = Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
            .args(["verify", s(&f)])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("FAKE_SILICON", "verified")
            .env("FAKE_LOG", &log)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains(": verified in"), "{err}");
    };
    verify();
    assert_eq!(requests(), 1);
    verify();
    assert_eq!(requests(), 1, "an intact entry answers without Silicon");
    let results = d.join("cache").join("results");
    let entries: Vec<PathBuf> = std::fs::read_dir(&results)
        .expect("a results folder")
        .flat_map(|sub| std::fs::read_dir(sub.expect("entry").path()).expect("a shard"))
        .map(|e| e.expect("entry").path())
        .collect();
    let [entry] = &entries[..] else { panic!("one cached result: {entries:?}") };
    let intact = std::fs::read(entry).expect("readable");
    for damaged in [&intact[..intact.len() / 2], b"", b"{\"status\": \"verified\""] {
        std::fs::write(entry, damaged).expect("writable");
        let before = requests();
        verify();
        assert_eq!(requests(), before + 1, "a damaged entry is a miss");
        assert_eq!(std::fs::read(entry).expect("readable"), intact, "and is rewritten");
    }
}
