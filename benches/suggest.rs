//! What a user of the advisor waits for (issue 55): `alpine-rs suggest FILE --json` as a process
//! on every kernel of fixtures/cost and on every positive CUDA fixture (`ok_*`, `*_ok`), with the
//! wall time, the rows, and how many of them are measured. The target: at least one measured
//! row on every kernel of fixtures/cost and every CUDA fixture with a loop, in at most 10 s
//! each; the files that miss it are listed at the end.
//!
//! `SUGGEST_BENCH_REPS` runs per file (default 1; the median is reported),
//! `SUGGEST_BENCH_BIN` another binary. `cargo bench --bench suggest`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const LIMIT_S: f64 = 10.0;

struct Row {
    seconds: f64,
    code: i32,
    rows: usize,
    measured: usize,
    has_loop: bool,
}

fn suggest(bin: &Path, file: &Path, reps: usize) -> Row {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let out = Command::new(bin)
            .args(["suggest", "--json"])
            .arg(file)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
        times.push(t.elapsed().as_secs_f64());
        last = Some(out);
    }
    times.sort_by(f64::total_cmp);
    let out = last.expect("at least one run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let rows = doc["suggestions"].as_array().cloned().unwrap_or_default();
    let text = std::fs::read_to_string(file).unwrap_or_default();
    Row {
        seconds: times[times.len() / 2],
        code: out.status.code().unwrap_or(-1),
        rows: rows.len(),
        measured: rows.iter().filter(|r| r["measured"] == true).count(),
        has_loop: code_has_loop(&text),
    }
}

/// A `for` or `while` in the code (not in a comment or an annotation).
fn code_has_loop(text: &str) -> bool {
    let mut in_block = false;
    text.lines().any(|l| {
        let l = l.trim_start();
        if in_block {
            in_block = !l.contains("*/");
            return false;
        }
        if l.starts_with("/*") {
            in_block = !l.contains("*/");
            return false;
        }
        if l.starts_with("//") || l.starts_with("loop_invariant") {
            return false;
        }
        l.starts_with("for ")
            || l.starts_with("for(")
            || l.starts_with("while ")
            || l.starts_with("while(")
    })
}

fn positive(p: &Path) -> bool {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    stem.starts_with("ok_") || stem.ends_with("_ok")
}

fn main() {
    let bin = std::env::var_os("SUGGEST_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_alpine-rs")), PathBuf::from);
    let reps: usize =
        std::env::var("SUGGEST_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
    let root = testkit::root();
    let cost = testkit::files(&root.join("fixtures/cost"), "pvl");
    let cuda: Vec<PathBuf> = testkit::files(&root.join("fixtures/cuda"), "cu")
        .into_iter()
        .filter(|p| positive(p))
        .collect();
    let mut misses = Vec::new();
    let mut all = Vec::new();
    for (group, files, every) in [("cost", &cost, true), ("cuda", &cuda, false)] {
        println!("{group}: {} files", files.len());
        for f in files {
            let r = suggest(&bin, f, reps);
            let shown = f.strip_prefix(&root).unwrap_or(f);
            println!(
                "  {:6.1} s  exit {}  rows {:2}  measured {:2}  {}{}",
                r.seconds,
                r.code,
                r.rows,
                r.measured,
                shown.display(),
                if r.has_loop { "  (loop)" } else { "" }
            );
            let wanted = every || r.has_loop;
            if r.seconds > LIMIT_S || (wanted && r.measured == 0) {
                misses.push(format!(
                    "{} ({:.1} s, {} measured rows)",
                    shown.display(),
                    r.seconds,
                    r.measured
                ));
            }
            all.push(r);
        }
    }
    let mut t: Vec<f64> = all.iter().map(|r| r.seconds).collect();
    t.sort_by(f64::total_cmp);
    let total: f64 = t.iter().sum();
    println!(
        "suggest: {} files, median {:.1} s, max {:.1} s, total {:.0} s; {} with a measured row",
        all.len(),
        t[t.len() / 2],
        t.last().copied().unwrap_or_default(),
        total,
        all.iter().filter(|r| r.measured > 0).count()
    );
    if misses.is_empty() {
        println!("target met: every cost kernel and every CUDA fixture with a loop has a measured row within {LIMIT_S} s");
    } else {
        println!("target missed on {} files:", misses.len());
        for m in misses {
            println!("  {m}");
        }
    }
}
