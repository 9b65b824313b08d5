//! Per-query time limits without a timer per query.
//!
//! Z3's own `timeout` parameter starts a timer for every `check` and, in the Z3 4.8 series,
//! spins on `sched_yield` to stop it: on a file with a hundred small queries that was a tenth of
//! the run. Instead one watchdog thread per process keeps the deadlines of the queries running
//! now and interrupts a query's context when its deadline passes. A query is unregistered, under
//! the same lock the watchdog interrupts with, before its thread does anything else, so no
//! interrupt is sent after it. But `Z3_interrupt` (Z3 4.8) cancels the context, not only the
//! check in progress: one that lands between the check and the end of the query (while the
//! model is read) leaves the context cancelled, and the next non-check call (`simplify`) fails
//! and makes the `z3` crate panic. [`Guard::finish`] says whether the interrupt was sent, and the
//! caller then clears it (a check clears it).

use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};
use z3::{Context, ContextHandle};

struct Entry {
    id: u64,
    deadline: Instant,
    handle: ContextHandle<'static>,
    fired: bool,
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Vec<Entry>,
    /// When the watchdog wakes next by itself (`None`: it is not waiting). A query whose
    /// deadline is later needs no wake-up: waking the thread for each of a file's hundred
    /// queries was most of the process's context switches.
    wakes_at: Option<Instant>,
}

struct Watchdog {
    state: Mutex<State>,
    wake: Condvar,
}

fn watchdog() -> Option<&'static Watchdog> {
    static W: OnceLock<Option<&'static Watchdog>> = OnceLock::new();
    *W.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("alpine-z3-watchdog".into())
            .spawn(move || w.run())
            .ok()
            .map(|_| w)
    })
}

impl Watchdog {
    fn run(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        loop {
            let now = Instant::now();
            for e in st.running.iter_mut() {
                if !e.fired && e.deadline <= now {
                    e.handle.interrupt();
                    e.fired = true;
                }
            }
            let next = st.running.iter().filter(|e| !e.fired).map(|e| e.deadline).min();
            let wait = next
                .map_or(Duration::from_secs(3600), |d| d.saturating_duration_since(Instant::now()));
            st.wakes_at = Instant::now().checked_add(wait);
            st = match self.wake.wait_timeout(st, wait) {
                Ok((g, _)) => g,
                Err(_) => return,
            };
            st.wakes_at = None;
        }
    }
}

/// A registered query; unregisters when dropped (also on unwinding, so that the watchdog never
/// holds the handle of a context that is gone).
pub struct Guard {
    id: Option<u64>,
}

impl Guard {
    /// Unregisters the query; whether the watchdog interrupted its context.
    pub fn finish(mut self) -> bool {
        self.unregister()
    }

    /// Whether the watchdog has interrupted the context (the query's time is up).
    pub fn fired(&self) -> bool {
        let (Some(id), Some(w)) = (self.id, watchdog()) else {
            return false;
        };
        w.state.lock().is_ok_and(|st| st.running.iter().any(|e| e.id == id && e.fired))
    }

    fn unregister(&mut self) -> bool {
        let (Some(id), Some(w)) = (self.id.take(), watchdog()) else {
            return false;
        };
        let Ok(mut st) = w.state.lock() else {
            return false;
        };
        let fired = st.running.iter().any(|e| e.id == id && e.fired);
        st.running.retain(|e| e.id != id);
        fired
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// Interrupt the checks on `ctx` still running `limit` from now, until the guard is dropped.
/// Without a watchdog thread (none could be started) queries run without a limit.
pub fn watch(ctx: &'static Context, limit: Duration) -> Guard {
    let Some(w) = watchdog() else {
        return Guard { id: None };
    };
    let Ok(mut st) = w.state.lock() else {
        return Guard { id: None };
    };
    st.next_id += 1;
    let id = st.next_id;
    let deadline = Instant::now() + limit;
    st.running.push(Entry { id, deadline, handle: ctx.handle(), fired: false });
    // The watchdog looks at every entry when it wakes; it only has to be woken sooner when this
    // deadline comes before its own (or it is between two waits, holding no lock: it then sees
    // the entry before it waits again, so `None` needs no wake-up either).
    if st.wakes_at.is_some_and(|t| deadline < t) {
        w.wake.notify_one();
    }
    Guard { id: Some(id) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> &'static Context {
        Box::leak(Box::new(Context::new(&z3::Config::new())))
    }

    /// The watchdog is only woken for a deadline earlier than the one it sleeps until: a short
    /// query registered while a long one runs is still interrupted on time, and the long one is
    /// not.
    #[test]
    fn a_shorter_deadline_wakes_the_watchdog() {
        let long = watch(fresh(), Duration::from_secs(60));
        // Let the watchdog settle into its wait for the long deadline.
        std::thread::sleep(Duration::from_millis(50));
        let short = watch(fresh(), Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(300));
        assert!(short.fired(), "the short query's deadline passed");
        let later = watch(fresh(), Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!long.fired() && !later.fired());
        assert!(short.finish());
        assert!(!long.finish() && !later.finish());
    }
}
