//! [`Backend`]: a discovered back end that verifies files and texts, in batch mode (through the
//! driver) or per-file mode, with the result cache in front.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::cache::ResultCache;
use super::driver::{BatchResult, DriverProcess};
use super::output::verdict_from_cli;
use super::process::run_with_deadline;
use super::verdict::{RunMode, Verdict, VerifyOutcome};
use crate::backend::{
    self, discover_components, process_env, BackendConfig, BackendError, Components, EnvLookup,
};

// ------------------------------------------------------------------------------------------------
// Backend

/// A discovered, runnable back end. Holds at most one driver JVM (started on first use, stopped on
/// drop), shared by every thread that verifies through it: up to `jobs` requests (see
/// [`BackendConfig::jobs`]) are verified at once, in that JVM, and further calls wait for a slot.
pub struct Backend {
    components: Components,
    cfg: BackendConfig,
    mode: RunMode,
    driver: Mutex<Option<Arc<DriverProcess>>>,
    slots: Slots,
    cache: Option<ResultCache>,
}

/// A counting semaphore: the requests in flight, at most `jobs`. The driver JVM runs that many at
/// once; a request never waits in its queue, so its wall-clock limit counts only its own run.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

struct Slot<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Slots {
        Slots { free: Mutex::new(n.max(1)), freed: Condvar::new() }
    }

    fn acquire(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.freed.notify_one();
    }
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
        let mode = if components.driver.is_some() { RunMode::Batch } else { RunMode::PerFile };
        let cache = cfg.result_cache.then(|| ResultCache::new(&components, cfg));
        let slots = Slots::new(cfg.jobs());
        Ok(Backend { components, cfg: cfg.clone(), mode, driver: Mutex::new(None), slots, cache })
    }

    /// How many requests are verified at once.
    pub fn jobs(&self) -> usize {
        self.cfg.jobs()
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

    /// Verifies each file, one at a time, in order. `timeout_s` is Silicon's `--timeout` (0 =
    /// none); the wall-clock limit per file is `timeout_s + 10` s, plus 60 s for the files sent
    /// before a JVM's first answer (start-up and JIT warm-up must not turn into timeouts on a
    /// busy machine).
    pub fn verify_files(&self, files: &[PathBuf], timeout_s: u64) -> Vec<VerifyOutcome> {
        files.iter().map(|f| self.verify_file(f, timeout_s)).collect()
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
        self.verify_cached(&text, Some(file), timeout_s, t0, None)
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
        self.verify_cached(vpr, None, timeout_s, Instant::now(), None)
    }

    /// [`Backend::verify_text`] that stops when `cancel` is set: the request is withdrawn (in
    /// batch mode the JVM stops its Z3 processes and stays in service) and the verdict is a
    /// crash that says "cancelled", which is not cached.
    pub fn verify_text_cancellable(
        &self,
        vpr: &str,
        timeout_s: u64,
        cancel: &AtomicBool,
    ) -> VerifyOutcome {
        self.verify_cached(vpr, None, timeout_s, Instant::now(), Some(cancel))
    }

    fn verify_cached(
        &self,
        text: &str,
        file: Option<&Path>,
        timeout_s: u64,
        t0: Instant,
        cancel: Option<&AtomicBool>,
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
            Some(f) => self.run(f, timeout_s, cancel),
            None => self.run_text(text, timeout_s, cancel),
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

    fn run_text(&self, text: &str, timeout_s: u64, cancel: Option<&AtomicBool>) -> (Verdict, u64) {
        let dir = self.components.layout.tmp_dir();
        let tmp = match backend::TempDir::new_in(&dir, "vpr") {
            Ok(t) => t,
            Err(e) => return (Verdict::Crash(e.to_string()), 0),
        };
        let path = tmp.path().join("input.vpr");
        // For debugging the encoding: `ALPINE_RS_DUMP_VIPER=FILE` keeps a copy of what Silicon
        // is given (the last one when several files are verified).
        if let Some(keep) = std::env::var_os("ALPINE_RS_DUMP_VIPER") {
            let _ = fs::write(keep, text);
        }
        if let Err(e) = fs::write(&path, text) {
            return (Verdict::Crash(format!("cannot write {}: {e}", path.display())), 0);
        }
        self.run(&path, timeout_s, cancel)
    }

    fn run(&self, file: &Path, timeout_s: u64, cancel: Option<&AtomicBool>) -> (Verdict, u64) {
        // Silicon resolves the path against its own working directory; make it independent.
        let file = fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        match self.mode {
            RunMode::Batch => self.run_batch(&file, timeout_s, cancel),
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
        let _slot = self.slots.acquire();
        let t0 = Instant::now();
        let c = &self.components;
        let mut cmd = Command::new(&c.java.path);
        if throughput_for(&self.cfg, file) {
            cmd.args(THROUGHPUT_JVM_ARGS);
        } else {
            per_file_jvm_args(&mut cmd, c.cds_archive.as_deref());
        }
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

    fn run_batch(
        &self,
        file: &Path,
        timeout_s: u64,
        cancel: Option<&AtomicBool>,
    ) -> (Verdict, u64) {
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
        let z3 = &self.components.z3.path;
        let _slot = self.slots.acquire();
        // A request that finds the shared JVM dead (another request saw it die) was never sent:
        // it goes to the fresh JVM that replaces it.
        for _ in 0..2 {
            let driver = match self.shared_driver(file) {
                Ok(d) => d,
                Err(msg) => return (Verdict::Crash(msg), elapsed_ms(t0)),
            };
            match driver.verify(path, timeout_s, z3, cancel) {
                BatchResult::Done { verdict, ms } => return (verdict, ms),
                BatchResult::Cancelled => return (cancelled(), elapsed_ms(t0)),
                BatchResult::Closed => self.retire(&driver),
                BatchResult::TimedOut => {
                    self.retire(&driver);
                    return (Verdict::Timeout, elapsed_ms(t0));
                }
                BatchResult::Died { message, retry } => {
                    self.retire(&driver);
                    if !retry {
                        return (Verdict::Crash(message), elapsed_ms(t0));
                    }
                    // Not known to be the culprit: one more try, on a JVM of its own, so that the
                    // file that did kill the JVM cannot take this one down with it again.
                    return self.run_alone(path, timeout_s, t0);
                }
            }
        }
        (Verdict::Crash("the driver JVM kept exiting before it was sent the file".into()), 0)
    }

    /// The shared driver JVM, started if there is none (tuned for `first`, the file of the
    /// request that starts it; see [`throughput_for`]).
    fn shared_driver(&self, first: &Path) -> Result<Arc<DriverProcess>, String> {
        let mut slot = self.lock_driver();
        if let Some(d) = slot.as_ref() {
            return Ok(Arc::clone(d));
        }
        let d = Arc::new(DriverProcess::start(
            &self.components,
            &self.silicon_options(),
            &self.cfg,
            self.jobs(),
            throughput_for(&self.cfg, first),
        )?);
        *slot = Some(Arc::clone(&d));
        Ok(d)
    }

    /// Kills `driver` (in an unknown state, or dead) and, if it is still the shared one, forgets
    /// it, so that the next request starts a fresh one.
    fn retire(&self, driver: &Arc<DriverProcess>) {
        {
            let mut slot = self.lock_driver();
            if slot.as_ref().is_some_and(|d| Arc::ptr_eq(d, driver)) {
                *slot = None;
            }
        }
        driver.kill();
    }

    /// Verifies one file on a JVM started for it alone (the retry of a request whose shared JVM
    /// died under it).
    fn run_alone(&self, path: &str, timeout_s: u64, t0: Instant) -> (Verdict, u64) {
        let throughput = throughput_for(&self.cfg, Path::new(path));
        let d = match DriverProcess::start(
            &self.components,
            &self.silicon_options(),
            &self.cfg,
            1,
            throughput,
        ) {
            Ok(d) => d,
            Err(msg) => return (Verdict::Crash(msg), elapsed_ms(t0)),
        };
        let out = match d.verify(path, timeout_s, &self.components.z3.path, None) {
            BatchResult::Done { verdict, ms } => {
                d.quit();
                return (verdict, ms);
            }
            BatchResult::TimedOut => Verdict::Timeout,
            BatchResult::Died { message, .. } => Verdict::Crash(message),
            BatchResult::Closed => Verdict::Crash("the driver JVM exited".into()),
            BatchResult::Cancelled => cancelled(),
        };
        d.kill();
        (out, elapsed_ms(t0))
    }

    fn lock_driver(&self) -> MutexGuard<'_, Option<Arc<DriverProcess>>> {
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

/// The verdict of a cancelled request (a crash: never cached, never shown as the program's).
fn cancelled() -> Verdict {
    Verdict::Crash("cancelled".into())
}

fn elapsed_ms(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// JVM flags for a short-lived Silicon JVM (§3.1): C1 only and the AppCDS archive shorten
/// start-up, which dominates for one file (and for a driver serving a few files).
/// Viper programs from this size on verify faster on a JVM tuned for throughput (full JIT)
/// than for start-up (C1 only): measured one run each on the dumped Viper of five programs,
/// C1 was 1.4× faster on 2–6 KB programs (about 2.5 s of start-up), even at 8 KB, and 1.7×
/// slower on a 54 KB one (62 s against 36 s).
const THROUGHPUT_BYTES: u64 = 32 * 1024;

/// Whether a JVM that starts with `first` (a Viper file) is tuned for throughput: when the
/// configuration says so (many requests), or when that program is large.
fn throughput_for(cfg: &BackendConfig, first: &Path) -> bool {
    cfg.throughput || fs::metadata(first).is_ok_and(|m| m.len() >= THROUGHPUT_BYTES)
}

/// The JVM options of a JVM tuned for throughput: full JIT, no class-data archive (the archive
/// was dumped by a C1-only JVM).
pub const THROUGHPUT_JVM_ARGS: [&str; 2] = ["-Xss256m", "-XX:+UseSerialGC"];

pub fn per_file_jvm_args(cmd: &mut Command, cds: Option<&Path>) {
    // Silicon's recursion over a long method needs a deep stack (AlpineSilicon.java says why).
    cmd.args(["-Xss256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]);
    if let Some(jsa) = cds {
        // A stale archive is rejected by the JVM with a warning and ignored (§2.4).
        cmd.arg(format!("-XX:SharedArchiveFile={}", jsa.display()));
        cmd.arg("-Xshare:auto");
    }
}
