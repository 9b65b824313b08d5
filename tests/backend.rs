//! End-to-end tests of the Viper back end: real Silicon runs on hand-written Viper programs, in
//! batch mode (the AlpineSilicon driver) and per-file mode.
//!
//! They need the back end provisioned with `alpine-rs backend install` (CI runs it before the
//! tests). Without it they fail with the provisioning error; they never pass vacuously.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

use alpine_rs::verify::backend::{self, BackendConfig, JavacInfo, Origin};
use alpine_rs::verify::silicon::{Backend, RunMode, SiliconError, Verdict, ViperPos};

// ------------------------------------------------------------------------------------------------
// Programs. Line and column numbers below are those Silicon reports: 1-based, end exclusive.

const VERIFIES: &str = "\
field f: Int

method inc(x: Ref)
  requires acc(x.f, write)
  ensures acc(x.f, write) && x.f == old(x.f) + 1
{
  x.f := x.f + 1
}
";

const POST_FAILS: &str = "\
method add(a: Int, b: Int) returns (r: Int)
  requires a >= 0 && b >= 0
  ensures r >= a
  ensures r == a + b + 1
{
  r := a + b
}
";

const PERM_FAILS: &str = "\
field f: Int

method half(x: Ref)
  requires acc(x.f, 1/2)
{
  x.f := 3
}
";

const PARSE_ERROR: &str = "\
method broken(x: Int)
{
  var y: Int :=
}
";

/// The encoder's array prelude (design §5.2) and an out-of-bounds read: the reason must point
/// into the prelude's `aloc` precondition (`i < alen(a)`), as §4.2 relies on for V-OOB. Returns
/// the program, the position of the read and that of the precondition's `i < alen(a)`.
fn out_of_bounds() -> (String, Option<ViperPos>, Option<ViperPos>) {
    let prelude = alpine_rs::viper::encode::PRELUDE;
    let text = format!(
        "{prelude}\nmethod read_past_end(a: Arr, n: Int) returns (r: Int)\n  \
         requires a != anull() && alen(a) == n && n > 0\n  \
         requires forall i: Int :: {{ aloc(a, i) }} 0 <= i && i < n ==> acc(aloc(a, i).int_val, 1/2)\n\
         {{\n  r := aloc(a, n).int_val\n}}\n"
    );
    // 1-based line and column of `needle` in the line that contains `line_has`.
    let find = |line_has: &str, needle: &str, after: usize| -> Option<ViperPos> {
        let (l, line) = text
            .lines()
            .enumerate()
            .skip(after)
            .find(|(_, l)| l.contains(line_has))
            .expect("the line");
        let c = line.find(needle).expect("the text") + 1;
        let (l, c) = (l as u32 + 1, c as u32);
        pos(l, c, l, c + needle.len() as u32)
    };
    let aloc = text.lines().position(|l| l.starts_with("function aloc")).expect("aloc");
    let reason = find("requires 0 <= i", "i < alen(a)", aloc);
    let read = find("r := aloc(a, n)", "aloc(a, n)", 0);
    (text, read, reason)
}

/// Independent failures in three methods: all are reported (design §4.2).
const THREE_METHODS: &str = "\
field f: Int

method m1(x: Ref)
  requires acc(x.f, 1/2)
{
  x.f := 3
}

method m2(a: Int) returns (r: Int)
  ensures r > a
{
  r := a
}

method m3(a: Int)
{
  var z: Int
  z := 10 \\ a
}
";

/// 2^30 feasible paths (independent branch conditions): Silicon cannot finish this in seconds.
/// (Conditions on one variable, like `a > 1`, `a > 2`, …, are pruned by Silicon and verify fast.)
fn slow_program() -> String {
    let params: Vec<String> = (1..=30).map(|i| format!("b{i}: Bool")).collect();
    let mut s = format!(
        "method paths({}) returns (r: Int)\n  ensures r >= 0\n{{\n  r := 0\n",
        params.join(", ")
    );
    for i in 1..=30 {
        s.push_str(&format!("  if (b{i}) {{ r := r + 1 }} else {{ r := r + 2 }}\n"));
    }
    s.push_str("}\n");
    s
}

/// Generous: the first file in a fresh JVM on a busy 2-core machine has taken 40 s.
const TIMEOUT_S: u64 = 180;

// ------------------------------------------------------------------------------------------------
// Helpers

/// Silicon JVMs are big (~400 MB) and CPU-hungry; run one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn discover(mode: RunMode, result_cache: bool, salt: &str) -> Backend {
    let cfg = BackendConfig {
        mode,
        result_cache,
        cache_salt: salt.to_string(),
        ..BackendConfig::default()
    };
    match Backend::discover(&cfg) {
        Ok(b) => b,
        Err(e) => panic!(
            "\n\nthe Viper back end is not available for {mode:?} mode:\n  {e}\n\
             (provision it with `cargo run --release -- backend install`; CI does this before \
             the tests)\n\n"
        ),
    }
}

/// One batch back end (one driver JVM) shared by the batch tests.
fn batch() -> &'static Backend {
    static B: OnceLock<Backend> = OnceLock::new();
    B.get_or_init(|| {
        let b = discover(RunMode::Batch, false, "");
        assert_eq!(b.mode(), RunMode::Batch);
        b
    })
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir()
            .join(format!("alpine-rs-backend-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("create a scratch directory");
        Scratch(d)
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        fs::write(&p, text).expect("write a test program");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn pos(l1: u32, c1: u32, l2: u32, c2: u32) -> Option<ViperPos> {
    Some(ViperPos::new(l1, c1, l2, c2))
}

fn errors(v: &Verdict, what: &str) -> Vec<SiliconError> {
    match v {
        Verdict::Failed(e) => {
            let mut e = e.clone();
            e.sort_by_key(|e| e.pos.map(|p| p.as_tuple()));
            e
        }
        other => panic!("{what}: expected a failure, got {other:?}"),
    }
}

/// Checks the verdicts on the standard programs; `reasons` tells whether reason positions are
/// available (batch mode only).
fn check_standard(backend: &Backend, dir: &Path, reasons: bool) {
    let (oob, oob_read, oob_reason) = out_of_bounds();
    let names = [
        ("verifies.vpr", VERIFIES),
        ("post.vpr", POST_FAILS),
        ("perm.vpr", PERM_FAILS),
        ("parse.vpr", PARSE_ERROR),
        ("oob.vpr", oob.as_str()),
        ("three.vpr", THREE_METHODS),
    ];
    let files: Vec<PathBuf> = names
        .iter()
        .map(|(n, t)| {
            let p = dir.join(n);
            fs::write(&p, t).expect("write a test program");
            p
        })
        .collect();
    let out = backend.verify_files(&files, TIMEOUT_S);
    assert_eq!(out.len(), files.len());
    for (o, f) in out.iter().zip(&files) {
        assert_eq!(o.file.as_deref(), Some(f.as_path()));
        assert!(!o.cached);
    }
    let r = |p: Option<ViperPos>| if reasons { p } else { None };

    assert_eq!(out[0].verdict, Verdict::Verified, "verifies.vpr");
    assert_eq!(out[0].verdict.exit_code(), 0);

    let e = errors(&out[1].verdict, "post.vpr");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].full_id, "postcondition.violated:assertion.false");
    assert_eq!(e[0].pos, pos(4, 11, 4, 25));
    assert_eq!(e[0].reason_pos, r(pos(4, 11, 4, 25)));
    assert_eq!(
        e[0].message,
        "Postcondition of add might not hold. Assertion r == a + b + 1 might not hold."
    );
    assert!(!e[0].is_internal());
    assert_eq!(out[1].verdict.exit_code(), 1);

    let e = errors(&out[2].verdict, "perm.vpr");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].full_id, "assignment.failed:insufficient.permission");
    assert_eq!(e[0].error_id(), "assignment.failed");
    assert_eq!(e[0].reason_id(), Some("insufficient.permission"));
    assert_eq!(e[0].pos, pos(6, 3, 6, 11));
    assert_eq!(e[0].reason_pos, r(pos(6, 3, 6, 6)));

    let e = errors(&out[3].verdict, "parse.vpr");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].full_id, "parser.error");
    assert_eq!(e[0].pos, pos(4, 1, 4, 1));
    assert!(e[0].message.starts_with("Parse error: "), "{}", e[0].message);
    assert!(e[0].is_internal());
    assert_eq!(out[3].verdict.exit_code(), 3);

    let e = errors(&out[4].verdict, "oob.vpr");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].full_id, "application.precondition:assertion.false");
    assert_eq!(e[0].pos, oob_read);
    assert_eq!(e[0].reason_pos, r(oob_reason));
    assert!(oob_reason.is_some() && oob_read.is_some());

    let e = errors(&out[5].verdict, "three.vpr");
    let got: Vec<_> = e.iter().map(|e| (e.full_id.as_str(), e.pos, e.reason_pos)).collect();
    assert_eq!(
        got,
        [
            ("assignment.failed:insufficient.permission", pos(6, 3, 6, 11), r(pos(6, 3, 6, 6))),
            ("postcondition.violated:assertion.false", pos(10, 11, 10, 16), r(pos(10, 11, 10, 16))),
            ("assignment.failed:division.by.zero", pos(18, 3, 18, 14), r(pos(18, 13, 18, 14))),
        ]
    );
}

// ------------------------------------------------------------------------------------------------
// Tests

#[test]
fn batch_mode_verdicts_and_positions() {
    let _g = serial();
    let dir = Scratch::new("batch");
    check_standard(batch(), &dir.0, true);
}

#[test]
fn per_file_mode_verdicts_and_positions() {
    let _g = serial();
    let b = discover(RunMode::PerFile, false, "");
    assert_eq!(b.mode(), RunMode::PerFile);
    let dir = Scratch::new("perfile");
    check_standard(&b, &dir.0, false);
}

#[test]
fn batch_mode_timeout_then_recovers() {
    let _g = serial();
    let dir = Scratch::new("timeout");
    let slow = dir.file("slow.vpr", &slow_program());
    let ok = dir.file("ok.vpr", VERIFIES);
    let out = batch().verify_file(&slow, 3);
    assert_eq!(out.verdict, Verdict::Timeout, "{out:?}");
    assert_eq!(out.verdict.exit_code(), 4);
    // Silicon reports its own timeout ~3 s in; the wall-clock limit (timeout + 10 s, plus the
    // start-up allowance of a fresh JVM) is only a backstop.
    assert!(out.elapsed.as_secs() < 3 + 10 + 60, "{:?}", out.elapsed);
    let out = batch().verify_file(&ok, TIMEOUT_S);
    assert_eq!(out.verdict, Verdict::Verified, "the driver must survive a timeout");
}

#[test]
fn batch_mode_cancel_withdraws_a_request_and_keeps_the_jvm() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let _g = serial();
    let b = batch();
    // A warm JVM first, so that the times below are Silicon's, not the JVM's start.
    assert_eq!(b.verify_text(VERIFIES, TIMEOUT_S).verdict, Verdict::Verified);
    let cancel = Arc::new(AtomicBool::new(false));
    let theirs = Arc::clone(&cancel);
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        theirs.store(true, Ordering::Relaxed);
    });
    let out = b.verify_text_cancellable(&slow_program(), TIMEOUT_S, &cancel);
    canceller.join().unwrap();
    assert_eq!(out.verdict, Verdict::Crash("cancelled".into()), "{out:?}");
    // Without the cancel it runs into the 180 s limit; cancelled 2 s in, it returns at once.
    assert!(out.elapsed.as_secs() < 20, "{:?}", out.elapsed);
    // The same JVM serves the next request.
    let out = b.verify_text(POST_FAILS, TIMEOUT_S);
    assert!(matches!(out.verdict, Verdict::Failed(_)), "{out:?}");
}

#[test]
fn per_file_mode_timeout() {
    let _g = serial();
    let b = discover(RunMode::PerFile, false, "");
    let dir = Scratch::new("pf-timeout");
    let slow = dir.file("slow.vpr", &slow_program());
    let o = b.verify_file(&slow, 3);
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
}

#[test]
fn result_cache_and_verify_text() {
    let _g = serial();
    // A fresh salt keeps this test's entries apart from real ones; they are removed at the end.
    let salt = format!("backend-test-{}-{:?}", std::process::id(), std::time::SystemTime::now());
    let b = discover(RunMode::Batch, true, &salt);
    let entry = b.result_cache_path(POST_FAILS).expect("cache enabled");
    let first = b.verify_text(POST_FAILS, TIMEOUT_S);
    assert!(!first.cached);
    assert!(entry.is_file(), "no cache entry at {}", entry.display());
    let second = b.verify_text(POST_FAILS, TIMEOUT_S);
    assert!(second.cached);
    assert_eq!(first.verdict, second.verdict);
    let e = errors(&second.verdict, "cached post");
    assert_eq!(e[0].pos, pos(4, 11, 4, 25));
    assert_eq!(e[0].reason_pos, pos(4, 11, 4, 25));
    assert_eq!(second.silicon_ms, first.silicon_ms);

    // Internal errors and timeouts are not cached.
    let parse_entry = b.result_cache_path(PARSE_ERROR).expect("cache enabled");
    let p = b.verify_text(PARSE_ERROR, TIMEOUT_S);
    assert!(matches!(p.verdict, Verdict::Failed(_)));
    assert!(!parse_entry.exists());

    // Explicit lookups and stores, for callers that cache per verification unit (§8.2).
    assert_eq!(b.cache_lookup(POST_FAILS), Some((first.verdict.clone(), first.silicon_ms)));
    let unit = format!("// unit {salt}\n{VERIFIES}");
    assert_eq!(b.cache_lookup(&unit), None);
    b.cache_store(&unit, &Verdict::Timeout, 5);
    assert_eq!(b.cache_lookup(&unit), None, "timeouts are not cached");
    b.cache_store(&unit, &Verdict::Verified, 5);
    assert_eq!(b.cache_lookup(&unit), Some((Verdict::Verified, 5)));
    let _ = fs::remove_file(b.result_cache_path(&unit).expect("cache enabled"));

    // A different salt (e.g. a new encoder version) is a different key.
    let other = discover(RunMode::PerFile, true, "another salt");
    assert_ne!(other.result_cache_path(POST_FAILS), Some(entry.clone()));
    let _ = fs::remove_file(&entry);
}

#[test]
fn doctor_runs_a_trivial_file() {
    let _g = serial();
    let report =
        backend::doctor(&BackendConfig { mode: RunMode::Batch, ..BackendConfig::default() });
    let text = report.to_string();
    assert!(report.ok(), "doctor is not happy:\n{text}");
    assert!(matches!(report.smoke, Some((Verdict::Verified, _))), "{text}");
    let silicon =
        report.components.iter().find(|c| c.component == "silicon").expect("silicon line");
    assert!(silicon.sha256.as_deref().is_some_and(|s| s.len() == 64), "{text}");
    assert!(text.contains("java") && text.contains("z3"), "{text}");
}

/// Debian's `openjdk-17-jre-headless` has no javac but carries the jdk.compiler module; batch mode
/// then compiles the driver with `java -m jdk.compiler/com.sun.tools.javac.Main`.
#[test]
fn driver_compiles_with_the_jvm_compiler_module() {
    let _g = serial();
    let cfg =
        BackendConfig { mode: RunMode::PerFile, result_cache: false, ..BackendConfig::default() };
    let c = backend::discover_components(&cfg, &|k| std::env::var_os(k)).unwrap_or_else(|e| {
        panic!("\n\nthe Viper back end is not available:\n  {e}\n\n");
    });
    let has_module = std::process::Command::new(&c.java.path)
        .args(["--describe-module", "jdk.compiler"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_module {
        eprintln!("this JVM has no jdk.compiler module; nothing to test");
        return;
    }
    let dir = Scratch::new("module-javac");
    let layout = backend::CacheLayout::new(&dir.0);
    fs::create_dir_all(layout.backend_dir()).expect("create backend dir");
    let javac = JavacInfo {
        program: c.java.path.clone(),
        prefix_args: vec!["-m".into(), "jdk.compiler/com.sun.tools.javac.Main".into()],
        origin: Origin::JvmModule,
    };
    let d = backend::compile_driver(&layout, &javac, &c.silicon).expect("compile the driver");
    assert!(d.class_dir.join("AlpineSilicon.class").is_file());
    assert_eq!(backend::installed_driver(&layout, &c.silicon), Some(d));
}
