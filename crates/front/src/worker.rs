//! The parser's thread.
//!
//! The parser recurses once per nesting level (up to its depth limit), which needs more stack
//! than a test thread has in an unoptimised build, so it runs on a thread of its own with a large
//! reserved stack. That thread is kept for the life of the thread that asked (one per calling
//! thread, so parallel batch jobs still parse in parallel): starting one per parse made every
//! parse of a large file fault in fresh pages for its allocator, a fifth of the parse. The same
//! thread also frees trees that are no longer needed ([`dispose`]), while its caller goes on; the
//! memory then returns to the heap the next parse allocates from.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;

/// Stack size of the parser's thread (reserved, not committed). Unoptimised builds use tens of
/// KiB per statement level (`parse_stmt_inner` alone has a 28 KiB frame).
const STACK: usize = 256 << 20;

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    // Dropping the sender when the calling thread ends stops the worker.
    static WORKER: RefCell<Option<mpsc::Sender<Job>>> = const { RefCell::new(None) };
    // Whether this thread is a parser's thread (its stack is large enough to parse on).
    static IS_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// Hand `job` to this thread's worker, starting it if needed; the job back if there is none.
fn submit(job: Job) -> Result<(), Job> {
    let sent = WORKER.try_with(|w| {
        let mut w = w.borrow_mut();
        let mut job = job;
        // A worker that is gone (it cannot be, short of an abort) is replaced once.
        for _ in 0..2 {
            let tx = match w.as_ref() {
                Some(tx) => tx.clone(),
                None => match start() {
                    Some(tx) => {
                        *w = Some(tx.clone());
                        tx
                    }
                    None => return Err(job),
                },
            };
            match tx.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(j)) => {
                    job = j;
                    *w = None;
                }
            }
        }
        Err(job)
    });
    match sent {
        Ok(r) => r,
        // Thread-local storage is being torn down: no worker.
        Err(_) => Err(Box::new(|| {})),
    }
}

fn start() -> Option<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("alpine-parser".into())
        .stack_size(STACK)
        .spawn(move || {
            IS_WORKER.with(|w| w.set(true));
            while let Ok(job) = rx.recv() {
                job();
            }
        })
        .ok()
        .map(|_| tx)
}

/// Run `f` on the parser's thread and wait for its result; on the current thread if no thread
/// can be started. A panic in `f` is passed on to the caller.
pub fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    // Already on a large stack (the command line runs all of a command here, `cli::main`):
    // no round trip, and one heap for the trees and the rest of the work.
    if IS_WORKER.try_with(Cell::get).unwrap_or(false) {
        return f();
    }
    type Outcome<T> = Result<T, Box<dyn Any + Send>>;
    let (tx, rx) = mpsc::sync_channel::<Outcome<T>>(1);
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let theirs = slot.clone();
    let job: Job = Box::new(move || {
        let f = theirs.lock().ok().and_then(|mut g| g.take());
        if let Some(f) = f {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        }
    });
    if submit(job).is_ok() {
        match rx.recv() {
            Ok(Ok(v)) => return v,
            Ok(Err(p)) => resume_unwind(p),
            // The job was dropped unrun: `f` is still in its slot.
            Err(_) => {}
        }
    }
    let f = slot.lock().ok().and_then(|mut g| g.take());
    match f {
        Some(f) => f(),
        None => unreachable!("the parser job neither ran nor left its closure"),
    }
}

/// Drop `value` on the parser's thread, without waiting (on the current thread if there is no
/// worker).
pub fn dispose<T: Send + 'static>(value: T) {
    let _ = submit(Box::new(move || drop(value)));
}
