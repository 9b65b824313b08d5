//! Running items on fresh threads, a few at a time (`batch`, `sweep`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Stack of the thread that handles one item: the transformations and the Z3 translation recurse
/// over the syntax tree, as they do on the main thread of `apply`.
pub(crate) const ITEM_STACK: usize = 64 << 20;

/// The number of workers `--jobs` asks for (the machine's parallelism when not given); `Err` with
/// the usage exit code for `--jobs 0`, reported here.
pub(crate) fn workers(jobs: Option<usize>) -> Result<usize, u8> {
    match jobs {
        Some(0) => {
            eprintln!("error[A0000]: --jobs must be at least 1");
            Err(2)
        }
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Run `f` on every index below `n`, `workers` at a time; results in index order.
///
/// Each item runs on a fresh thread. Z3's context is per thread and keeps the history of every
/// query made in it, which steers the models it returns; a fresh thread gives each file the same
/// fresh context that `alpine-rs apply` would, so results (counterexamples included) do not depend
/// on the number of workers or on which worker picked the file. A panic in one item becomes that
/// item's `on_panic` result instead of taking the others down.
pub(crate) fn pool<T: Send>(
    n: usize,
    workers: usize,
    f: impl Fn(usize) -> T + Sync,
    on_panic: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = std::thread::scope(|item| {
                    std::thread::Builder::new()
                        .name(format!("alpine-item-{i}"))
                        .stack_size(ITEM_STACK)
                        .spawn_scoped(item, || f(i))
                        .ok()
                        .and_then(|h| h.join().ok())
                })
                .unwrap_or_else(|| on_panic(i));
                if let Ok(mut v) = slots.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| on_panic(i)))
        .collect()
}
