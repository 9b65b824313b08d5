//! Measuring helpers shared by the benches (`mod common;` in each).

#![allow(dead_code)] // each bench uses the helpers it needs

use std::time::{Duration, Instant};

// The allocator of the `alpine-rs` binary (src/main.rs), so that a bench measures the tool.
#[global_allocator]
static ALLOCATOR: alpine_rs::allocator::Allocator = alpine_rs::allocator::Allocator;

/// CPU time (user + system) of the whole process so far, all threads included, from
/// `/proc/self/stat` (Linux; clock ticks of 10 ms). `None` elsewhere. On a loaded machine it is
/// steadier than wall-clock time.
pub fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Median wall-clock time of `f` over `runs` runs.
pub fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}
