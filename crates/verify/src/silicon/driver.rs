//! The batch driver (design §3.2): one long-lived JVM running `AlpineSilicon`, its requests and
//! the tab-separated protocol lines it answers with.
//!
//! The JVM verifies up to `workers` requests at once. Requests may be sent from several threads:
//! a reader thread routes each answer line to the request with its id (answers come in the order
//! requests finish), and each request keeps its own wall-clock deadline.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::process::GroupChild;
use super::runner::per_file_jvm_args;
use super::verdict::{SiliconError, Verdict, ViperPos};
use crate::backend::{self, BackendConfig, BackendError, Components};

/// Lines of the driver's stderr kept for crash reports.
const STDERR_TAIL: usize = 60;

/// Debug builds pass the driver's test hook through when this is set (see `AlpineSilicon.java`).
#[cfg(debug_assertions)]
const TEST_FAULTS_ENV: &str = "ALPINE_RS_TEST_DRIVER_FAULTS";

// ------------------------------------------------------------------------------------------------
// Driver process

/// Where the reader thread sends each request's answer lines.
#[derive(Default)]
struct Routes {
    waiting: HashMap<u64, Sender<String>>,
    /// The JVM's stdout has closed: no answer will come, and no request may be added.
    closed: bool,
    /// Requests in flight when stdout closed: with one, that request is what killed the JVM (or
    /// was alone to see it die); with several, it is unknown which.
    in_flight_at_close: usize,
    /// The JVM was killed by alpine-rs (a request passed its deadline): the other requests in
    /// flight were innocent.
    killed: bool,
}

pub(super) struct DriverProcess {
    /// Killed with its z3 processes when dropped.
    child: Mutex<GroupChild>,
    stdin: Mutex<ChildStdin>,
    routes: Arc<Mutex<Routes>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_thread: thread::JoinHandle<()>,
    next_id: AtomicU64,
    /// Whether a request has completed; the requests sent before pay the JVM warm-up.
    warm: AtomicBool,
    grace: Duration,
    startup_grace: Duration,
}

/// How one request ended.
pub(super) enum BatchResult {
    /// An answer, with Silicon's time.
    Done { verdict: Verdict, ms: u64 },
    /// The JVM had already died (seen by another request): this request never reached it.
    Closed,
    /// This request passed its wall-clock deadline. The JVM is in an unknown state and must be
    /// killed (which the other requests in flight see as [`BatchResult::Died`] with `retry`).
    TimedOut,
    /// The JVM died, or could not be written to, before answering. `retry`: the request is not
    /// known to be the cause (others were in flight, or alpine-rs killed the JVM), so it deserves
    /// one more try on a fresh JVM; otherwise its crash is the result.
    Died { message: String, retry: bool },
    /// The caller cancelled the request: the JVM was asked to stop it and stays in service.
    Cancelled,
}

/// How often a cancellable request looks at its flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data stays consistent whatever panicked while holding the lock.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DriverProcess {
    /// Starts a driver JVM verifying up to `workers` requests at once, and waits for its READY.
    pub(super) fn start(
        c: &Components,
        silicon_opts: &[String],
        cfg: &BackendConfig,
        workers: usize,
        throughput: bool,
    ) -> Result<DriverProcess, String> {
        let Some(driver) = &c.driver else {
            return Err("the batch driver is not compiled".into());
        };
        let sep = if cfg!(windows) { ";" } else { ":" };
        let cp = format!("{}{sep}{}", c.silicon.path.display(), driver.class_dir.display());
        let mut cmd = Command::new(&c.java.path);
        if throughput {
            cmd.args(super::runner::THROUGHPUT_JVM_ARGS);
        } else {
            // A typical alpine-rs run sends one to a few requests: start-up dominates (§8.1).
            per_file_jvm_args(&mut cmd, c.cds_archive.as_deref());
        }
        cmd.arg(format!("-Dalpine.workers={}", workers.max(1)));
        #[cfg(debug_assertions)]
        if std::env::var_os(TEST_FAULTS_ENV).is_some() {
            cmd.arg("-Dalpine.testFaults=true");
        }
        cmd.args(["-cp", &cp])
            .arg(backend::DRIVER_CLASS)
            .args(silicon_opts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = GroupChild::spawn(cmd)
            .map_err(|e| format!("cannot start {}: {e}", c.java.path.display()))?;
        let pipes = child.child_mut();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (pipes.stdin.take(), pipes.stdout.take(), pipes.stderr.take())
        else {
            // Dropping `child` kills it.
            return Err("cannot connect to the driver's pipes".into());
        };
        let routes = Arc::new(Mutex::new(Routes::default()));
        let (ready_tx, ready) = mpsc::channel();
        let r = Arc::clone(&routes);
        thread::spawn(move || route_answers(stdout, &r, ready_tx));
        // Silicon's own reporter output goes to stderr (the driver redirects it); it must be
        // drained or the JVM blocks. The tail is kept for crash reports.
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let tail = Arc::clone(&stderr_tail);
        let stderr_thread = thread::spawn(move || drain_into_tail(stderr, &tail));
        let d = DriverProcess {
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            routes,
            stderr_tail,
            stderr_thread,
            next_id: AtomicU64::new(1),
            warm: AtomicBool::new(false),
            grace: cfg.grace,
            startup_grace: cfg.startup_grace,
        };
        match ready.recv_timeout(cfg.startup_grace) {
            Ok(()) => Ok(d),
            Err(e) => {
                let why = match e {
                    RecvTimeoutError::Timeout => "no READY in time",
                    RecvTimeoutError::Disconnected => "the JVM exited",
                };
                d.wait_for_last_words();
                let msg = format!("the driver did not start ({why}): {}", d.tail());
                d.kill();
                Err(msg)
            }
        }
    }

    fn tail(&self) -> String {
        let t = lock(&self.stderr_tail);
        let v: Vec<&str> = t.iter().map(String::as_str).collect();
        backend::last_lines(&v.join("\n"), 8)
    }

    /// The JVM's last words (e.g. an OutOfMemoryError) may still be in the pipe.
    fn wait_for_last_words(&self) {
        let t0 = Instant::now();
        while !self.stderr_thread.is_finished() && t0.elapsed() < Duration::from_secs(2) {
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Verifies one file; may be called from several threads at once. When `cancel` is set
    /// while the request runs, the JVM is told to stop it and [`BatchResult::Cancelled`] is
    /// returned at once (its late answer is dropped).
    pub(super) fn verify(
        &self,
        path: &str,
        timeout_s: u64,
        z3: &Path,
        cancel: Option<&AtomicBool>,
    ) -> BatchResult {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, answers) = mpsc::channel();
        {
            let mut r = lock(&self.routes);
            if r.closed {
                return BatchResult::Closed;
            }
            r.waiting.insert(id, tx);
        }
        let deadline = (timeout_s > 0).then(|| {
            let mut limit = Duration::from_secs(timeout_s) + self.grace;
            if !self.warm.load(Ordering::Relaxed) {
                limit += self.startup_grace;
            }
            Instant::now() + limit
        });
        let request = format!("VERIFY\t{id}\t{path}\t{timeout_s}\n");
        let sent = {
            let mut stdin = lock(&self.stdin);
            stdin.write_all(request.as_bytes()).and_then(|_| stdin.flush())
        };
        if let Err(e) = sent {
            lock(&self.routes).waiting.remove(&id);
            let retry = self.others_to_blame();
            return BatchResult::Died {
                message: format!("cannot send to the driver: {e}; {}", self.tail()),
                retry,
            };
        }
        let mut reply = BatchReply::new(id);
        loop {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                lock(&self.routes).waiting.remove(&id);
                let mut stdin = lock(&self.stdin);
                let _ = stdin
                    .write_all(format!("CANCEL\t{id}\n").as_bytes())
                    .and_then(|_| stdin.flush());
                return BatchResult::Cancelled;
            }
            // With a cancel flag, wake up now and then to look at it.
            let poll = cancel.map(|_| Instant::now() + CANCEL_POLL);
            let wake = match (deadline, poll) {
                (Some(d), Some(p)) => Some(d.min(p)),
                (d, p) => d.or(p),
            };
            let line = match wake {
                Some(w) => answers.recv_timeout(w.saturating_duration_since(Instant::now())),
                None => answers.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            if matches!(line, Err(RecvTimeoutError::Timeout))
                && deadline.is_none_or(|d| Instant::now() < d)
            {
                continue; // a poll of the cancel flag, not the deadline
            }
            match line {
                Ok(l) => {
                    if let Some(done) = reply.feed(&l) {
                        self.warm.store(true, Ordering::Relaxed);
                        let ms = done.ms;
                        return BatchResult::Done { verdict: done.into_verdict(z3), ms };
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    lock(&self.routes).waiting.remove(&id);
                    return BatchResult::TimedOut;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.wait_for_last_words();
                    return BatchResult::Died {
                        message: format!("the driver JVM exited: {}", self.tail()),
                        retry: self.others_to_blame(),
                    };
                }
            }
        }
    }

    /// Whether a request that saw the JVM die may have been innocent.
    fn others_to_blame(&self) -> bool {
        let r = lock(&self.routes);
        r.killed || r.in_flight_at_close > 1
    }

    /// Asks the JVM to exit once its answers are written; kills it after 2 s.
    pub(super) fn quit(&self) {
        let _ = {
            let mut stdin = lock(&self.stdin);
            stdin.write_all(b"QUIT\n").and_then(|_| stdin.flush())
        };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if matches!(lock(&self.child).try_wait(), Ok(Some(_))) {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }

    /// Kills the JVM and its z3 processes; the requests in flight see it die, innocent.
    pub(super) fn kill(&self) {
        {
            // Only a kill before the JVM died clears the requests that see it die.
            let mut r = lock(&self.routes);
            r.killed |= !r.closed;
        }
        lock(&self.child).kill();
    }
}

/// The reader thread: routes each answer line to its request by id; signals READY.
fn route_answers(stdout: impl Read, routes: &Mutex<Routes>, ready: Sender<()>) {
    let mut ready = Some(ready);
    let mut r = BufReader::new(stdout);
    let mut buf = Vec::new();
    while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
        let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
        buf.clear();
        if line == "READY" {
            if let Some(tx) = ready.take() {
                let _ = tx.send(());
            }
            continue;
        }
        let mut f = line.splitn(3, '\t');
        let (Some(kind), Some(id)) = (f.next(), f.next().and_then(|i| i.parse::<u64>().ok()))
        else {
            continue;
        };
        let end = kind == "END";
        let mut rs = lock(routes);
        let Some(tx) = rs.waiting.get(&id) else { continue };
        // A request that gave up (deadline) has dropped its receiver; nothing to do then.
        let _ = tx.send(line);
        if end {
            rs.waiting.remove(&id);
        }
    }
    let mut rs = lock(routes);
    rs.closed = true;
    rs.in_flight_at_close = rs.waiting.len();
    // Dropping the senders wakes every waiting request.
    rs.waiting.clear();
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
pub(super) struct BatchReply {
    id: String,
    errors: Vec<SiliconError>,
    others: Vec<SiliconError>,
}

#[derive(Debug)]
pub(super) struct BatchDone {
    status: String,
    pub(super) ms: u64,
    errors: Vec<SiliconError>,
    others: Vec<SiliconError>,
}

impl BatchReply {
    pub(super) fn new(id: u64) -> Self {
        BatchReply { id: id.to_string(), errors: Vec::new(), others: Vec::new() }
    }

    /// Feeds one stdout line; returns the result at `END`. Lines for other ids and anything that is
    /// not a protocol line are ignored.
    pub(super) fn feed(&mut self, line: &str) -> Option<BatchDone> {
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
    pub(super) fn into_verdict(self, z3: &Path) -> Verdict {
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

pub(super) fn crash_message(detail: &str, z3: &Path) -> String {
    if detail.contains("Cannot run prover") {
        // Design §2.4.
        return BackendError::Z3CannotStart { path: z3.to_path_buf() }.to_string();
    }
    if detail.is_empty() {
        "Silicon failed without a message".into()
    } else {
        detail.to_string()
    }
}
