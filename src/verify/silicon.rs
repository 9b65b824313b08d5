//! Running Viper's Silicon and parsing its results (design `shared/design/verification.md` §3),
//! plus the result cache (§8.3).
//!
//! Two modes:
//! - **batch** (default): one long-lived JVM running the embedded `AlpineSilicon` driver, which
//!   verifies one file per request and answers with tab-separated protocol lines (§3.2). This
//!   pays Silicon's start-up and JIT warm-up once.
//! - **per-file** (fallback when no Java compiler exists): one `java -jar silicon.jar` per file,
//!   whose human-readable output is parsed (§3.1). It has no error ids and no reason positions;
//!   ids are recovered from the message texts of the pinned Silicon.

use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::backend::{
    self, discover_components, hex, process_env, BackendConfig, BackendError, CacheLayout,
    Components, EnvLookup,
};

/// A method that verifies; used by `doctor` and for the AppCDS archive.
pub const TRIVIAL_VPR: &str = "method alpine_trivial(x: Int) returns (y: Int)\n  \
                               ensures y == x + 1\n{\n  y := x + 1\n}\n";

/// Lines of the driver's stderr kept for crash reports.
const STDERR_TAIL: usize = 60;

// ------------------------------------------------------------------------------------------------
// Result types

/// How Silicon is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunMode {
    /// Batch when the driver is available, else per-file.
    Auto,
    /// One JVM for many files (§3.2); an error if the driver cannot be compiled.
    Batch,
    /// One JVM per file (§3.1).
    PerFile,
}

impl fmt::Display for RunMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunMode::Auto => "auto",
            RunMode::Batch => "batch (AlpineSilicon driver)",
            RunMode::PerFile => "per-file (java -jar silicon.jar)",
        })
    }
}

/// A Viper source range as Silicon prints it: 1-based lines and columns, end column exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ViperPos {
    pub l1: u32,
    pub c1: u32,
    pub l2: u32,
    pub c2: u32,
}

impl ViperPos {
    pub fn new(l1: u32, c1: u32, l2: u32, c2: u32) -> Self {
        ViperPos { l1, c1, l2, c2 }
    }

    /// The key of the encoder's position map (design §4.1).
    pub fn as_tuple(&self) -> (u32, u32, u32, u32) {
        (self.l1, self.c1, self.l2, self.c2)
    }

    /// Parses `file@l.c--l.c` or `file@l.c` (a point: end = start); `?` and `<no position>` give
    /// `None`. The file name is dropped: every position refers to the verified file.
    pub fn parse(s: &str) -> Option<ViperPos> {
        let (_, range) = s.rsplit_once('@')?;
        let (start, end) = match range.split_once("--") {
            Some((a, b)) => (a, Some(b)),
            None => (range, None),
        };
        let lc = |t: &str| -> Option<(u32, u32)> {
            let (l, c) = t.trim().split_once('.')?;
            Some((l.parse().ok()?, c.parse().ok()?))
        };
        let (l1, c1) = lc(start)?;
        let (l2, c2) = match end {
            Some(e) => lc(e)?,
            None => (l1, c1),
        };
        Some(ViperPos { l1, c1, l2, c2 })
    }
}

impl fmt::Display for ViperPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}--{}.{}", self.l1, self.c1, self.l2, self.c2)
    }
}

/// One error reported by Silicon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiliconError {
    /// `error:reason` for verification errors, e.g. `assignment.failed:insufficient.permission`;
    /// a single id for others (`parser.error`, `typechecker.error`, `consistency.error`, …).
    #[serde(rename = "fullId")]
    pub full_id: String,
    /// Silicon's readable message, without id and position.
    pub message: String,
    /// Position of the error node.
    pub pos: Option<ViperPos>,
    /// Position of the reason's node (batch mode only; per-file output does not print it).
    #[serde(rename = "reasonPos")]
    pub reason_pos: Option<ViperPos>,
}

impl SiliconError {
    /// The error part of the id, e.g. `assignment.failed`.
    pub fn error_id(&self) -> &str {
        self.full_id
            .split_once(':')
            .map_or(self.full_id.as_str(), |(e, _)| e)
    }

    /// The reason part of the id, e.g. `insufficient.permission`.
    pub fn reason_id(&self) -> Option<&str> {
        self.full_id.split_once(':').map(|(_, r)| r)
    }

    /// A verification error (`error:reason`), as opposed to a parse, type, or consistency error.
    pub fn is_verification_error(&self) -> bool {
        self.full_id.contains(':')
    }

    /// An error that means the generated Viper is malformed: an encoder bug, reported as
    /// E-INTERNAL (design §3.1, §4.2).
    pub fn is_internal(&self) -> bool {
        !self.is_verification_error()
            || self.message.contains("Parse error")
            || self.message.contains("is not a valid Trigger")
    }
}

/// The verdict on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Verified,
    /// Verification errors, or parse/type/consistency errors (see [`SiliconError::is_internal`]).
    Failed(Vec<SiliconError>),
    /// Silicon's `--timeout` or the wall-clock limit (timeout + 10 s) was hit: inconclusive.
    Timeout,
    /// The back end itself failed (could not start z3, JVM died, …).
    Crash(String),
}

impl Verdict {
    /// One line for humans.
    pub fn summary(&self) -> String {
        match self {
            Verdict::Verified => "verified".into(),
            Verdict::Failed(e) => format!(
                "failed ({} error{})",
                e.len(),
                if e.len() == 1 { "" } else { "s" }
            ),
            Verdict::Timeout => "timeout".into(),
            Verdict::Crash(m) => format!("backend crash: {m}"),
        }
    }

    /// The CLI exit code for this verdict alone (design §1): internal errors and crashes are 3.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Verified => 0,
            Verdict::Failed(errs) if errs.iter().any(SiliconError::is_internal) => 3,
            Verdict::Failed(_) => 1,
            Verdict::Timeout => 4,
            Verdict::Crash(_) => 3,
        }
    }
}

/// The result of verifying one file or text.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    /// The verified file; `None` for [`Backend::verify_text`].
    pub file: Option<PathBuf>,
    pub verdict: Verdict,
    /// Wall-clock time of this call (a cache hit is fast).
    pub elapsed: Duration,
    /// Silicon's own time in ms as reported (batch mode), or the run time (per-file mode); for a
    /// cache hit, the time of the original run.
    pub silicon_ms: u64,
    /// Served from the result cache.
    pub cached: bool,
}

// ------------------------------------------------------------------------------------------------
// Backend

/// A discovered, runnable back end. Holds at most one driver JVM (started on first use, stopped on
/// drop). Calls are serialized; for parallel verification create one `Backend` per worker.
pub struct Backend {
    components: Components,
    cfg: BackendConfig,
    mode: RunMode,
    driver: Mutex<Option<DriverProcess>>,
    cache: Option<ResultCache>,
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backend")
            .field("components", &self.components)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Backend {
    /// Finds Java, Silicon and z3 (design §2.2) without starting Silicon.
    pub fn discover(cfg: &BackendConfig) -> Result<Backend, BackendError> {
        Self::discover_with_env(cfg, &process_env)
    }

    /// [`Backend::discover`] with an explicit environment (for tests).
    pub fn discover_with_env(cfg: &BackendConfig, env: EnvLookup) -> Result<Backend, BackendError> {
        let components = discover_components(cfg, env)?;
        let mode = if components.driver.is_some() {
            RunMode::Batch
        } else {
            RunMode::PerFile
        };
        let cache = cfg.result_cache.then(|| ResultCache::new(&components, cfg));
        Ok(Backend {
            components,
            cfg: cfg.clone(),
            mode,
            driver: Mutex::new(None),
            cache,
        })
    }

    /// The mode in use: `Batch` or `PerFile`.
    pub fn mode(&self) -> RunMode {
        self.mode
    }

    pub fn components(&self) -> &Components {
        &self.components
    }

    /// Non-fatal problems found by discovery (unpinned jar, no driver, …).
    pub fn warnings(&self) -> &[String] {
        &self.components.warnings
    }

    /// Verifies each file, in order. `timeout_s` is Silicon's `--timeout` (0 = none); the wall-clock
    /// limit per file is `timeout_s + 10` s, plus 60 s for a JVM's first file (start-up and JIT
    /// warm-up must not turn into timeouts on a busy machine).
    pub fn verify_files(&self, files: &[PathBuf], timeout_s: u64) -> Vec<VerifyOutcome> {
        files
            .iter()
            .map(|f| self.verify_file(f, timeout_s))
            .collect()
    }

    /// Verifies one file.
    pub fn verify_file(&self, file: &Path, timeout_s: u64) -> VerifyOutcome {
        let t0 = Instant::now();
        let text = match fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                return VerifyOutcome {
                    file: Some(file.to_path_buf()),
                    verdict: Verdict::Crash(format!("cannot read {}: {e}", file.display())),
                    elapsed: t0.elapsed(),
                    silicon_ms: 0,
                    cached: false,
                }
            }
        };
        self.verify_cached(&text, Some(file), timeout_s, t0)
    }

    /// Looks up a cached result for `text` (e.g. one verification unit, design §8.2); `None` on a
    /// miss or when the cache is off. Returns the verdict and the original run's Silicon time.
    pub fn cache_lookup(&self, text: &str) -> Option<(Verdict, u64)> {
        let c = self.cache.as_ref()?;
        c.get(&c.key(text))
    }

    /// Stores a result for `text`, for callers that split one Silicon run into units (design
    /// §8.2). Only definite results are stored: timeouts, crashes and internal errors are ignored.
    pub fn cache_store(&self, text: &str, verdict: &Verdict, silicon_ms: u64) {
        if let Some(c) = &self.cache {
            // A cache that cannot be written only costs time later.
            let _ = c.put(&c.key(text), verdict, silicon_ms);
        }
    }

    /// Where the result for `vpr` is (or would be) cached; `None` when the cache is off.
    pub fn result_cache_path(&self, vpr: &str) -> Option<PathBuf> {
        self.cache.as_ref().map(|c| c.path(&c.key(vpr)))
    }

    /// Verifies Viper source text (written to a temporary file under `<cache>/tmp`).
    pub fn verify_text(&self, vpr: &str, timeout_s: u64) -> VerifyOutcome {
        self.verify_cached(vpr, None, timeout_s, Instant::now())
    }

    fn verify_cached(
        &self,
        text: &str,
        file: Option<&Path>,
        timeout_s: u64,
        t0: Instant,
    ) -> VerifyOutcome {
        let key = self.cache.as_ref().map(|c| c.key(text));
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            if let Some((verdict, ms)) = cache.get(key) {
                return VerifyOutcome {
                    file: file.map(Path::to_path_buf),
                    verdict,
                    elapsed: t0.elapsed(),
                    silicon_ms: ms,
                    cached: true,
                };
            }
        }
        let (verdict, ms) = match file {
            Some(f) => self.run(f, timeout_s),
            None => self.run_text(text, timeout_s),
        };
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            // A cache that cannot be written only costs time later.
            let _ = cache.put(key, &verdict, ms);
        }
        VerifyOutcome {
            file: file.map(Path::to_path_buf),
            verdict,
            elapsed: t0.elapsed(),
            silicon_ms: ms,
            cached: false,
        }
    }

    fn run_text(&self, text: &str, timeout_s: u64) -> (Verdict, u64) {
        let dir = self.components.layout.tmp_dir();
        let tmp = match backend::TempDir::new_in(&dir, "vpr") {
            Ok(t) => t,
            Err(e) => return (Verdict::Crash(e.to_string()), 0),
        };
        let path = tmp.path().join("input.vpr");
        if let Err(e) = fs::write(&path, text) {
            return (
                Verdict::Crash(format!("cannot write {}: {e}", path.display())),
                0,
            );
        }
        self.run(&path, timeout_s)
    }

    fn run(&self, file: &Path, timeout_s: u64) -> (Verdict, u64) {
        // Silicon resolves the path against its own working directory; make it independent.
        let file = fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        match self.mode {
            RunMode::Batch => self.run_batch(&file, timeout_s),
            _ => self.run_per_file(&file, timeout_s),
        }
    }

    fn parallel_verifiers(&self) -> usize {
        self.cfg
            .parallel_verifiers
            .unwrap_or_else(|| thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1)
    }

    /// Options after `--z3Exe` common to both modes.
    fn silicon_options(&self) -> Vec<String> {
        let mut v = vec![
            "--z3Exe".to_string(),
            self.components.z3.path.to_string_lossy().into_owned(),
            "--numberOfParallelVerifiers".to_string(),
            self.parallel_verifiers().to_string(),
        ];
        v.extend(self.cfg.silicon_args.iter().cloned());
        v
    }

    // -------------------------------------------------------------------------------------------
    // Per-file mode (§3.1)

    fn run_per_file(&self, file: &Path, timeout_s: u64) -> (Verdict, u64) {
        let t0 = Instant::now();
        let c = &self.components;
        let mut cmd = Command::new(&c.java.path);
        per_file_jvm_args(&mut cmd, c.cds_archive.as_deref());
        cmd.arg("-jar").arg(&c.silicon.path);
        let mut opts = self.silicon_options();
        if timeout_s > 0 {
            opts.splice(2..2, ["--timeout".to_string(), timeout_s.to_string()]);
        }
        cmd.args(&opts).arg(file);
        let limit = (timeout_s > 0)
            .then(|| Duration::from_secs(timeout_s) + self.cfg.grace + self.cfg.startup_grace);
        let out = match run_with_deadline(cmd, limit) {
            Ok(Some(out)) => out,
            Ok(None) => return (Verdict::Timeout, elapsed_ms(t0)),
            Err(e) => {
                return (
                    Verdict::Crash(format!("cannot run {}: {e}", c.java.path.display())),
                    elapsed_ms(t0),
                )
            }
        };
        let verdict = verdict_from_cli(&out, &c.z3.path);
        (verdict, elapsed_ms(t0))
    }

    // -------------------------------------------------------------------------------------------
    // Batch mode (§3.2)

    fn run_batch(&self, file: &Path, timeout_s: u64) -> (Verdict, u64) {
        let t0 = Instant::now();
        let Some(path) = file.to_str().filter(|p| !p.contains(['\t', '\n', '\r'])) else {
            return (
                Verdict::Crash(format!(
                    "the path {} is not valid UTF-8 or contains a tab or newline",
                    file.display()
                )),
                0,
            );
        };
        let mut slot = self.lock_driver();
        if slot.is_none() {
            match DriverProcess::start(&self.components, &self.silicon_options(), &self.cfg) {
                Ok(d) => *slot = Some(d),
                Err(msg) => return (Verdict::Crash(msg), elapsed_ms(t0)),
            }
        }
        let Some(driver) = slot.as_mut() else {
            return (Verdict::Crash("driver not started".into()), 0);
        };
        let result = driver.verify(path, timeout_s, &self.components.z3.path);
        let ms = result.ms.unwrap_or_else(|| elapsed_ms(t0));
        if result.restart {
            if let Some(d) = slot.take() {
                d.kill();
            }
        }
        (result.verdict, ms)
    }

    fn lock_driver(&self) -> MutexGuard<'_, Option<DriverProcess>> {
        // A panic while holding the lock leaves at worst a dead driver, which is restarted.
        self.driver.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops the driver JVM, if running. Also done on drop.
    pub fn shutdown(&self) {
        if let Some(d) = self.lock_driver().take() {
            d.quit();
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn elapsed_ms(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// JVM flags for a short-lived Silicon JVM (§3.1): C1 only and the AppCDS archive shorten
/// start-up, which dominates for one file (and for a driver serving a few files).
pub(crate) fn per_file_jvm_args(cmd: &mut Command, cds: Option<&Path>) {
    cmd.args(["-Xss32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]);
    if let Some(jsa) = cds {
        // A stale archive is rejected by the JVM with a warning and ignored (§2.4).
        cmd.arg(format!("-XX:SharedArchiveFile={}", jsa.display()));
        cmd.arg("-Xshare:auto");
    }
}

// ------------------------------------------------------------------------------------------------
// Driver process

struct DriverProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_thread: thread::JoinHandle<()>,
    next_id: u64,
    /// Whether a request has completed; the first one pays the JVM warm-up.
    warm: bool,
    grace: Duration,
    startup_grace: Duration,
}

struct BatchResult {
    verdict: Verdict,
    ms: Option<u64>,
    /// The driver is in an unknown state and must be replaced.
    restart: bool,
}

impl DriverProcess {
    fn start(
        c: &Components,
        silicon_opts: &[String],
        cfg: &BackendConfig,
    ) -> Result<DriverProcess, String> {
        let Some(driver) = &c.driver else {
            return Err("the batch driver is not compiled".into());
        };
        let sep = if cfg!(windows) { ";" } else { ":" };
        let cp = format!(
            "{}{sep}{}",
            c.silicon.path.display(),
            driver.class_dir.display()
        );
        let mut cmd = Command::new(&c.java.path);
        if cfg.throughput {
            cmd.args(["-Xss32m", "-XX:+UseSerialGC"]);
        } else {
            // A typical alpine-rs run sends one to a few requests: start-up dominates (§8.1).
            per_file_jvm_args(&mut cmd, c.cds_archive.as_deref());
        }
        cmd.args(["-cp", &cp])
            .arg(backend::DRIVER_CLASS)
            .args(silicon_opts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        new_process_group(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", c.java.path.display()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_tree(&mut child);
            return Err("cannot connect to the driver's pipes".into());
        };
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let line = String::from_utf8_lossy(&buf)
                    .trim_end_matches(['\n', '\r'])
                    .to_string();
                buf.clear();
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Silicon's own reporter output goes to stderr (the driver redirects it); it must be
        // drained or the JVM blocks. The tail is kept for crash reports.
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let tail = Arc::clone(&stderr_tail);
        let stderr_thread = thread::spawn(move || drain_into_tail(stderr, &tail));
        let d = DriverProcess {
            child,
            stdin,
            lines,
            stderr_tail,
            stderr_thread,
            next_id: 1,
            warm: false,
            grace: cfg.grace,
            startup_grace: cfg.startup_grace,
        };
        let deadline = Instant::now() + cfg.startup_grace;
        loop {
            match d.next_line(deadline) {
                Ok(l) if l == "READY" => return Ok(d),
                Ok(_) => continue,
                Err(e) => {
                    let why = match e {
                        RecvTimeoutError::Timeout => "no READY in time",
                        RecvTimeoutError::Disconnected => "the JVM exited",
                    };
                    let msg = format!("the driver did not start ({why}): {}", d.tail());
                    d.kill();
                    return Err(msg);
                }
            }
        }
    }

    fn next_line(&self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        self.lines.recv_timeout(wait)
    }

    fn tail(&self) -> String {
        let t = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        let v: Vec<&str> = t.iter().map(String::as_str).collect();
        backend::last_lines(&v.join("\n"), 8)
    }

    fn verify(&mut self, path: &str, timeout_s: u64, z3: &Path) -> BatchResult {
        let id = self.next_id;
        self.next_id += 1;
        let crash = |msg: String| BatchResult {
            verdict: Verdict::Crash(msg),
            ms: None,
            restart: true,
        };
        let request = format!("VERIFY\t{id}\t{path}\t{timeout_s}\n");
        if let Err(e) = self
            .stdin
            .write_all(request.as_bytes())
            .and_then(|_| self.stdin.flush())
        {
            return crash(format!("cannot send to the driver: {e}; {}", self.tail()));
        }
        let deadline = (timeout_s > 0).then(|| {
            let mut limit = Duration::from_secs(timeout_s) + self.grace;
            if !self.warm {
                limit += self.startup_grace;
            }
            Instant::now() + limit
        });
        let mut reply = BatchReply::new(id);
        loop {
            let line = match deadline {
                Some(d) => self.next_line(d),
                None => self
                    .lines
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
            };
            match line {
                Ok(l) => {
                    if let Some(done) = reply.feed(&l) {
                        self.warm = true;
                        let ms = done.ms;
                        return BatchResult {
                            verdict: done.into_verdict(z3),
                            ms: Some(ms),
                            restart: false,
                        };
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return BatchResult {
                        verdict: Verdict::Timeout,
                        ms: None,
                        restart: true,
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The JVM's last words (e.g. an OutOfMemoryError) may still be in the pipe.
                    let t0 = Instant::now();
                    while !self.stderr_thread.is_finished() && t0.elapsed() < Duration::from_secs(2)
                    {
                        thread::sleep(Duration::from_millis(10));
                    }
                    return crash(format!("the driver JVM exited: {}", self.tail()));
                }
            }
        }
    }

    fn quit(mut self) {
        let _ = self
            .stdin
            .write_all(b"QUIT\n")
            .and_then(|_| self.stdin.flush());
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }

    fn kill(mut self) {
        kill_tree(&mut self.child);
    }
}

fn drain_into_tail(stream: impl Read, tail: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stream);
    let mut buf = Vec::new();
    while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        buf.clear();
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }
}

/// Accumulates the protocol lines of one request.
#[derive(Debug)]
struct BatchReply {
    id: String,
    errors: Vec<SiliconError>,
    others: Vec<SiliconError>,
}

#[derive(Debug)]
struct BatchDone {
    status: String,
    ms: u64,
    errors: Vec<SiliconError>,
    others: Vec<SiliconError>,
}

impl BatchReply {
    fn new(id: u64) -> Self {
        BatchReply {
            id: id.to_string(),
            errors: Vec::new(),
            others: Vec::new(),
        }
    }

    /// Feeds one stdout line; returns the result at `END`. Lines for other ids and anything that is
    /// not a protocol line are ignored.
    fn feed(&mut self, line: &str) -> Option<BatchDone> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 2 || f[1] != self.id {
            return None;
        }
        match (f[0], f.len()) {
            ("ERR", 6) => self.errors.push(SiliconError {
                full_id: unescape(f[2]),
                pos: ViperPos::parse(f[3]),
                reason_pos: ViperPos::parse(f[4]),
                message: unescape(f[5]),
            }),
            ("OTHER", 5) => {
                let mut message = unescape(f[4]);
                // Non-verification errors repeat their position at the end of the message.
                if let Some((_, raw)) = f[3].rsplit_once('@') {
                    if let Some(m) = message.strip_suffix(')') {
                        if let Some((head, p)) = m.rsplit_once(" (") {
                            if p.ends_with(raw) {
                                message = head.to_string();
                            }
                        }
                    }
                }
                self.others.push(SiliconError {
                    full_id: unescape(f[2]),
                    pos: ViperPos::parse(f[3]),
                    reason_pos: None,
                    message,
                });
            }
            ("END", 4) => {
                return Some(BatchDone {
                    status: f[2].to_string(),
                    ms: f[3].parse().unwrap_or(0),
                    errors: std::mem::take(&mut self.errors),
                    others: std::mem::take(&mut self.others),
                })
            }
            _ => {}
        }
        None
    }
}

impl BatchDone {
    fn into_verdict(self, z3: &Path) -> Verdict {
        match self.status.as_str() {
            "VERIFIED" if self.errors.is_empty() && self.others.is_empty() => Verdict::Verified,
            "TIMEOUT" => Verdict::Timeout,
            "FAILED" => {
                let mut all = self.others;
                all.extend(self.errors);
                Verdict::Failed(all)
            }
            _ => Verdict::Crash(crash_message(
                &self
                    .others
                    .iter()
                    .map(|e| format!("{}: {}", e.full_id, e.message))
                    .collect::<Vec<_>>()
                    .join("; "),
                z3,
            )),
        }
    }
}

/// Undoes the driver's escaping of `\`, TAB, LF and CR.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn crash_message(detail: &str, z3: &Path) -> String {
    if detail.contains("Cannot run prover") {
        // Design §2.4.
        return BackendError::Z3CannotStart {
            path: z3.to_path_buf(),
        }
        .to_string();
    }
    if detail.is_empty() {
        "Silicon failed without a message".into()
    } else {
        detail.to_string()
    }
}

// ------------------------------------------------------------------------------------------------
// Processes with a deadline

/// Output of a finished process.
#[derive(Debug)]
pub(crate) struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion, capturing stdout and stderr. With a limit, the process group is
/// killed when it is exceeded and `Ok(None)` is returned.
pub(crate) fn run_with_deadline(
    mut cmd: Command,
    limit: Option<Duration>,
) -> io::Result<Option<Captured>> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    new_process_group(&mut cmd);
    let mut child = cmd.spawn()?;
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        kill_tree(&mut child);
        return Err(io::Error::other("cannot capture the output"));
    };
    let read_all = |mut s: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut v = Vec::new();
            let _ = s.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out_t = read_all(Box::new(out));
    let err_t = read_all(Box::new(err));
    let deadline = limit.map(|l| Instant::now() + l);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            kill_tree(&mut child);
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(25));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Some(Captured {
        status,
        stdout,
        stderr,
    }))
}

/// Puts the child in its own process group, so that killing the group also kills the z3
/// processes Silicon started.
fn new_process_group(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = cmd;
}

fn kill_tree(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group `pid`, which the child
        // leads (it was spawned with process_group(0)); no memory is involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

// ------------------------------------------------------------------------------------------------
// Per-file output parsing (§3.1)

fn verdict_from_cli(out: &Captured, z3: &Path) -> Verdict {
    let both = format!("{}\n{}", out.stdout, out.stderr);
    if both.contains("Cannot run prover") {
        return Verdict::Crash(crash_message("Cannot run prover", z3));
    }
    let parsed = parse_cli_output(&out.stdout);
    match parsed {
        CliResult::Verified => Verdict::Verified,
        CliResult::Errors(errs) => {
            if errs.iter().any(|e| e.full_id == "timeout.error") {
                Verdict::Timeout
            } else if let Some(e) = errs.iter().find(|e| e.full_id == "exceptional.error") {
                Verdict::Crash(e.message.clone())
            } else {
                Verdict::Failed(errs)
            }
        }
        CliResult::Nothing => {
            let detail = both
                .lines()
                .find(|l| l.contains("Verification aborted exceptionally"))
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| backend::last_lines(&both, 4));
            Verdict::Crash(format!("Silicon exited with {}: {detail}", out.status))
        }
    }
}

/// What the per-file output says.
#[derive(Debug, PartialEq, Eq)]
pub enum CliResult {
    Verified,
    Errors(Vec<SiliconError>),
    /// Neither a success nor an error list (crash, bad options).
    Nothing,
}

/// Parses the stdout of `java -jar silicon.jar FILE` (design §3.1). Error ids are recovered from the
/// message texts ([`infer_full_id`]); reason positions are not printed.
pub fn parse_cli_output(stdout: &str) -> CliResult {
    let mut entries: Vec<String> = Vec::new();
    let mut in_list = false;
    let mut open = false;
    for line in stdout.lines() {
        let t = line.trim();
        if t.starts_with("Silicon finished verification successfully") {
            return CliResult::Verified;
        }
        if t.starts_with("Silicon found ") && t.ends_with(':') {
            in_list = true;
            continue;
        }
        if !in_list {
            continue;
        }
        if let Some(rest) = strip_entry_number(t) {
            entries.push(rest.to_string());
            open = true;
        } else if t.is_empty() {
            open = false;
        } else if open {
            // A message that spans lines; the position is at the end of the last one.
            if let Some(last) = entries.last_mut() {
                last.push('\n');
                last.push_str(t);
            }
        }
    }
    if !in_list {
        return CliResult::Nothing;
    }
    CliResult::Errors(entries.iter().map(|e| parse_cli_entry(e)).collect())
}

/// `[3] rest` → `rest`.
fn strip_entry_number(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('[')?;
    let close = rest.find("] ")?;
    rest[..close]
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| &rest[close + 2..])
}

/// `message (file@l.c--l.c)` → error; the position is optional (timeouts have none).
fn parse_cli_entry(entry: &str) -> SiliconError {
    let (message, pos) = match entry.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
        Some((msg, p)) if p.contains('@') => match ViperPos::parse(p) {
            Some(pos) => (msg, Some(pos)),
            None => (entry, None),
        },
        _ => (entry, None),
    };
    SiliconError {
        full_id: infer_full_id(message, pos.is_some()),
        message: message.to_string(),
        pos,
        reason_pos: None,
    }
}

/// Error texts of the pinned Silicon (viper.silver.verifier.errors): (prefix, suffix, id), from
/// `silicon_errors.tsv`. The suffix ends the error part when the text embeds a name or an
/// expression.
fn error_texts() -> &'static [(&'static str, &'static str, &'static str)] {
    static TEXTS: std::sync::OnceLock<Vec<(&str, &str, &str)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| text_table(include_str!("silicon_errors.tsv")))
}

/// The rows of a table of message texts: `prefix <TAB> suffix <TAB> id`, `#` lines aside.
fn text_table(tsv: &'static str) -> Vec<(&'static str, &'static str, &'static str)> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?, f.next()?))
        })
        .collect()
}

/// Reason texts (viper.silver.verifier.reasons): (prefix, suffix, id), from
/// `silicon_reasons.tsv`.
fn reason_texts() -> &'static [(&'static str, &'static str, &'static str)] {
    static TEXTS: std::sync::OnceLock<Vec<(&str, &str, &str)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| text_table(include_str!("silicon_reasons.tsv")))
}

/// Other errors (viper.silver.verifier): message prefix → id.
const OTHER_TEXTS: &[(&str, &str)] = &[
    ("Parse error", "parser.error"),
    ("Parse warning", "parser.warning"),
    ("Consistency error", "consistency.error"),
    ("Timeout occurred after", "timeout.error"),
    ("Verification aborted exceptionally", "exceptional.error"),
    ("Dependency not found", "dependencynotfound.error"),
    ("Command-line interface", "clioption.error"),
];

/// Recovers the id Silicon would report from a readable message (per-file mode has no ids).
/// Unknown reasons give `error:unknown`; a message with a position that matches nothing is a
/// type-checker error (their messages have no fixed prefix); otherwise `unknown`.
pub fn infer_full_id(message: &str, has_pos: bool) -> String {
    for &(prefix, suffix, id) in error_texts() {
        let Some(rest) = message.strip_prefix(prefix) else {
            continue;
        };
        let reason = if suffix.is_empty() {
            Some(rest)
        } else {
            rest.find(suffix).map(|i| &rest[i + suffix.len()..])
        };
        let Some(reason) = reason else { continue };
        let reason = reason.trim();
        let rid = reason_texts()
            .iter()
            .find(|(p, s, _)| reason.starts_with(p) && (s.is_empty() || reason.ends_with(s)))
            .map_or("unknown", |r| r.2);
        return format!("{id}:{rid}");
    }
    if let Some((_, id)) = OTHER_TEXTS.iter().find(|(p, _)| message.starts_with(p)) {
        return (*id).to_string();
    }
    if has_pos {
        "typechecker.error".into()
    } else {
        "unknown".into()
    }
}

// ------------------------------------------------------------------------------------------------
// Result cache (§8.3)

/// `<cache>/results/ab/<sha256>.json`. Only definite results (verified, failed) are stored.
struct ResultCache {
    dir: PathBuf,
    /// Everything but the text that determines the result: salt (encoder version), jar hash, z3
    /// version, options.
    key_prefix: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct CachedResult {
    status: String,
    errors: Vec<SiliconError>,
    ms: u64,
}

impl ResultCache {
    fn new(c: &Components, cfg: &BackendConfig) -> ResultCache {
        let mut p = Vec::new();
        for part in [
            "alpine-rs result cache v1",
            &cfg.cache_salt,
            &c.silicon.sha256,
            &c.z3.version_line,
            &cfg.silicon_args.join("\u{1f}"),
        ] {
            p.extend_from_slice(part.as_bytes());
            p.push(0);
        }
        ResultCache {
            dir: CacheLayout::new(c.layout.root.clone()).results_dir(),
            key_prefix: p,
        }
    }

    fn key(&self, text: &str) -> String {
        let mut h = Sha256::new();
        h.update(&self.key_prefix);
        h.update(text.as_bytes());
        hex(&h.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn get(&self, key: &str) -> Option<(Verdict, u64)> {
        let bytes = fs::read(self.path(key)).ok()?;
        let r: CachedResult = serde_json::from_slice(&bytes).ok()?;
        match r.status.as_str() {
            "verified" => Some((Verdict::Verified, r.ms)),
            "failed" if !r.errors.is_empty() => Some((Verdict::Failed(r.errors), r.ms)),
            _ => None,
        }
    }

    fn put(&self, key: &str, verdict: &Verdict, ms: u64) -> Result<(), BackendError> {
        let (status, errors) = match verdict {
            Verdict::Verified => ("verified", Vec::new()),
            // Internal errors are kept out: the .vpr is kept for debugging and the user will rerun.
            Verdict::Failed(e) if !e.iter().any(SiliconError::is_internal) => ("failed", e.clone()),
            _ => return Ok(()),
        };
        let bytes = serde_json::to_vec(&CachedResult {
            status: status.into(),
            errors,
            ms,
        })
        .map_err(|e| BackendError::io("cannot serialize a cache entry", e.into()))?;
        backend::atomic_write(&self.path(key), &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        assert_eq!(
            ViperPos::parse("post.vpr@3.11--3.17"),
            Some(ViperPos::new(3, 11, 3, 17))
        );
        assert_eq!(
            ViperPos::parse("a@b.vpr@4.1"),
            Some(ViperPos::new(4, 1, 4, 1))
        );
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
        let CliResult::Errors(e) = parse_cli_output(out) else {
            panic!("no errors parsed")
        };
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
        assert_eq!(
            e[1].message,
            "Postcondition of m2 might not hold. Assertion r > a might not hold."
        );
        assert_eq!(
            parse_cli_output("Silicon finished verification successfully in 6.00s.\n"),
            CliResult::Verified
        );
        let t = "Silicon found 1 error in 5.56s:\n  [0] Timeout occurred after 3 second(s)\n";
        let CliResult::Errors(e) = parse_cli_output(t) else {
            panic!()
        };
        assert_eq!(e[0].full_id, "timeout.error");
        assert_eq!(e[0].pos, None);
        assert_eq!(
            parse_cli_output("Command-line interface: x\n"),
            CliResult::Nothing
        );
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
        use crate::verify::backend::{env_from_map, TempDir};
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
        let Verdict::Crash(msg) = &o.verdict else {
            panic!("{o:?}")
        };
        assert!(
            msg.contains("exited") && msg.contains("OutOfMemoryError"),
            "{msg}"
        );
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
        let Verdict::Failed(e) = done.into_verdict(Path::new("z3")) else {
            panic!()
        };
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
        let v = r
            .feed("END\t1\tCRASH\t10")
            .unwrap()
            .into_verdict(Path::new("/x/z3"));
        assert_eq!(
            v,
            Verdict::Crash("Silicon could not start z3 at /x/z3.".into())
        );
    }
}
