//! The batch driver (design §3.2): one long-lived JVM running `AlpineSilicon`, its requests and
//! the tab-separated protocol lines it answers with.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::process::GroupChild;
use super::runner::per_file_jvm_args;
use super::verdict::{SiliconError, Verdict, ViperPos};
use crate::verify::backend::{self, BackendConfig, BackendError, Components};

/// Lines of the driver's stderr kept for crash reports.
const STDERR_TAIL: usize = 60;
// ------------------------------------------------------------------------------------------------
// Driver process

pub(super) struct DriverProcess {
    /// Killed with its z3 processes when dropped.
    child: GroupChild,
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

pub(super) struct BatchResult {
    pub(super) verdict: Verdict,
    pub(super) ms: Option<u64>,
    /// The driver is in an unknown state and must be replaced.
    pub(super) restart: bool,
}

impl DriverProcess {
    pub(super) fn start(
        c: &Components,
        silicon_opts: &[String],
        cfg: &BackendConfig,
    ) -> Result<DriverProcess, String> {
        let Some(driver) = &c.driver else {
            return Err("the batch driver is not compiled".into());
        };
        let sep = if cfg!(windows) { ";" } else { ":" };
        let cp = format!("{}{sep}{}", c.silicon.path.display(), driver.class_dir.display());
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
        let mut child = GroupChild::spawn(cmd)
            .map_err(|e| format!("cannot start {}: {e}", c.java.path.display()))?;
        let pipes = child.child_mut();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (pipes.stdin.take(), pipes.stdout.take(), pipes.stderr.take())
        else {
            // Dropping `child` kills it.
            return Err("cannot connect to the driver's pipes".into());
        };
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
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

    pub(super) fn verify(&mut self, path: &str, timeout_s: u64, z3: &Path) -> BatchResult {
        let id = self.next_id;
        self.next_id += 1;
        let crash =
            |msg: String| BatchResult { verdict: Verdict::Crash(msg), ms: None, restart: true };
        let request = format!("VERIFY\t{id}\t{path}\t{timeout_s}\n");
        if let Err(e) = self.stdin.write_all(request.as_bytes()).and_then(|_| self.stdin.flush()) {
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
                None => self.lines.recv().map_err(|_| RecvTimeoutError::Disconnected),
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
                    return BatchResult { verdict: Verdict::Timeout, ms: None, restart: true }
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

    pub(super) fn quit(mut self) {
        let _ = self.stdin.write_all(b"QUIT\n").and_then(|_| self.stdin.flush());
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }

    pub(super) fn kill(mut self) {
        self.child.kill();
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
