//! [`Session`]: one verifier JVM for every request of a command (`verify a b c`, `apply --verify`,
//! `batch`, `sweep`), which verifies several programs at a time.

use super::{
    discover_backend, verify_file_via, verify_program_via, verify_source_via, Found, Verdict,
    VerifyOptions, VerifyReport,
};
use diag::{Diagnostic, SourceFile};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Stack of a thread that parses and encodes one program: both recurse over the syntax tree, as
/// they do on the main thread of `alpine-rs verify`.
const ITEM_STACK: usize = 64 << 20;

/// One verifier JVM for many requests, made one after the other or from several threads at once
/// (up to `VerifyOptions::jobs` are verified at once; further requests wait).
pub struct Session {
    opts: VerifyOptions,
    /// `Err`: the backend is missing, with the provisioning message.
    found: Found,
}

impl Session {
    /// Find the backend (nothing starts before the first request).
    pub fn new(opts: &VerifyOptions) -> Session {
        Session::for_requests(opts, 1)
    }

    /// [`Session::new`] for about `requests` requests: many are worth a JVM tuned for
    /// throughput rather than start-up.
    pub fn for_requests(opts: &VerifyOptions, requests: usize) -> Session {
        Session { opts: opts.clone(), found: discover_backend(opts, requests) }
    }

    /// Why there is no backend, if there is none.
    pub fn missing(&self) -> Option<&str> {
        self.found.as_ref().err().map(String::as_str)
    }

    /// How many requests are verified at once.
    pub fn jobs(&self) -> usize {
        match &self.found {
            Ok(b) => b.jobs(),
            Err(_) => 1,
        }
    }

    /// Verify one program as its own request, encoded as `alpine-rs verify FILE` encodes it (so
    /// that either finds the other's result in the result cache).
    pub fn verify(&self, src: &SourceFile) -> VerifyReport {
        verify_source_via(Some(&self.found), src, &self.opts)
    }

    /// [`Session::verify`] that stops when `cancel` is set (the verdict is then a crash that
    /// says "cancelled"); the JVM stays in service for the next request.
    pub fn verify_cancellable(
        &self,
        src: &SourceFile,
        cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> VerifyReport {
        let opts = VerifyOptions { cancel: Some(cancel), ..self.opts.clone() };
        verify_source_via(Some(&self.found), src, &opts)
    }

    /// Verify several files as one program, as [`super::verify_program`] does.
    pub fn verify_program(&self, srcs: &[SourceFile]) -> VerifyReport {
        verify_program_via(Some(&self.found), srcs, &self.opts)
    }

    /// [`Session::verify_program`] for each program, [`Session::jobs`] at a time; reports in the
    /// order of `programs`.
    pub fn verify_programs(&self, programs: &[Vec<SourceFile>]) -> Vec<VerifyReport> {
        self.each(programs, |p| self.verify_program(p))
    }

    /// [`Session::verify`] for each program, [`Session::jobs`] at a time; reports in the order
    /// of `srcs`, whatever the order they finish in.
    pub fn verify_all(&self, srcs: &[SourceFile]) -> Vec<VerifyReport> {
        self.each(srcs, |s| self.verify(s))
    }

    /// `verify` on each item, [`Session::jobs`] at a time; reports in item order.
    fn each<T: Sync>(
        &self,
        items: &[T],
        verify: impl Fn(&T) -> VerifyReport + Sync,
    ) -> Vec<VerifyReport> {
        let mut out = Vec::with_capacity(items.len());
        ordered(items.len(), self.jobs(), |i| verify(&items[i]), panicked, |_, r| out.push(r));
        out
    }

    /// Read, parse, encode and verify one file, as [`super::verify_file`] does.
    pub fn verify_file(&self, path: &Path) -> (SourceFile, VerifyReport) {
        verify_file_via(Some(&self.found), path, &self.opts)
    }

    /// [`Session::verify_file`] for each file, [`Session::jobs`] at a time. `sink` is called on
    /// the calling thread in the order of `paths` (as soon as a file and all before it are
    /// done), so what it prints does not depend on the parallelism.
    pub fn verify_files(
        &self,
        paths: &[PathBuf],
        mut sink: impl FnMut(usize, SourceFile, VerifyReport),
    ) {
        ordered(
            paths.len(),
            self.jobs(),
            |i| self.verify_file(&paths[i]),
            |i| (SourceFile::new(paths[i].display().to_string(), ""), panicked(i)),
            |i, (src, r)| sink(i, src, r),
        );
    }
}

/// The report of a request whose thread panicked.
fn panicked(_: usize) -> VerifyReport {
    VerifyReport {
        verdict: Verdict::Crash,
        diagnostics: vec![Diagnostic::internal("a panic while verifying this program")],
        time: Duration::ZERO,
    }
}

/// Runs `f(i)` for every `i < n`, `workers` at a time, and hands each result to `sink` on the
/// calling thread, in index order. A panic in `f(i)` becomes `on_panic(i)` instead of taking the
/// other items down.
fn ordered<T: Send>(
    n: usize,
    workers: usize,
    f: impl Fn(usize) -> T + Sync,
    on_panic: impl Fn(usize) -> T + Sync,
    mut sink: impl FnMut(usize, T),
) {
    let next = AtomicUsize::new(0);
    let mut pending: BTreeMap<usize, T> = BTreeMap::new();
    let mut due = 0;
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        for w in 0..workers.clamp(1, n.max(1)) {
            let tx = tx.clone();
            let (next, f, on_panic) = (&next, &f, &on_panic);
            let worker = move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = catch_unwind(AssertUnwindSafe(|| f(i))).unwrap_or_else(|_| on_panic(i));
                if tx.send((i, r)).is_err() {
                    break;
                }
            };
            // A worker that cannot be started leaves its items to the others (or to the loop
            // after this scope).
            let _ = std::thread::Builder::new()
                .name(format!("alpine-verify-{w}"))
                .stack_size(ITEM_STACK)
                .spawn_scoped(s, worker);
        }
        drop(tx);
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&due) {
                sink(due, r);
                due += 1;
            }
        }
    });
    // Only when no worker could be started: the items left, on this thread.
    for i in due..n {
        let r = pending.remove(&i).unwrap_or_else(|| f(i));
        sink(i, r);
    }
}

#[cfg(test)]
mod tests {
    use super::ordered;

    #[test]
    fn results_come_in_index_order_whatever_the_workers() {
        for workers in [1, 2, 5] {
            let mut seen = Vec::new();
            ordered(
                20,
                workers,
                |i| {
                    // Later items finish first.
                    std::thread::sleep(std::time::Duration::from_millis((20 - i as u64) * 2));
                    if i == 7 {
                        panic!("item 7");
                    }
                    i * 10
                },
                |_| usize::MAX,
                |i, r| seen.push((i, r)),
            );
            let want: Vec<(usize, usize)> =
                (0..20).map(|i| (i, if i == 7 { usize::MAX } else { i * 10 })).collect();
            assert_eq!(seen, want, "{workers} workers");
        }
    }
}
