//! What a user waits for: `alpine-rs apply`, `parse` and `list` as processes (issues 26 and 56).
//!
//! - `apply FILE` (the file's own `gpuopt` annotations) on every program of ../shared/corpus
//!   that has one (those refused included: a refusal is an answer too);
//! - `apply --opt unroll --factor 1 --at line:N FILE` on the first loop of every PVL file of
//!   ../shared/peer that has one (programs written by others; `list --format json` finds it);
//! - `parse FILE` on the same corpus programs, `list FILE` on every PVL file of ../shared/peer.
//!
//! Each file runs `APPLY_BENCH_REPS` times (default 5); a file's time is its median wall time,
//! and the report gives the median and the maximum over files. `APPLY_BENCH_BASELINE=BIN` runs
//! another build (e.g. the previous commit's `alpine-rs`) interleaved with this one, run for run,
//! so that both see the same machine load, and prints the ratios. Outputs are compared too: an
//! `apply` whose output or exit code differs from the baseline's is listed.
//!
//! `cargo bench --bench apply` (release build of the binary under test).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One command to time: its arguments, the file last.
type Item = (Vec<String>, PathBuf);

/// One run: wall milliseconds, exit code, stdout.
fn run(bin: &Path, args: &[String], file: &Path) -> (f64, i32, Vec<u8>) {
    let t = Instant::now();
    let out = Command::new(bin).args(args).arg(file).output();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    match out {
        Ok(o) => (ms, o.status.code().unwrap_or(-1), o.stdout),
        Err(e) => panic!("cannot run {}: {e}", bin.display()),
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

struct Stats {
    median: f64,
    max: f64,
    slowest: Vec<(f64, PathBuf)>,
}

fn stats(per_file: &[(f64, PathBuf)]) -> Stats {
    let mut t: Vec<f64> = per_file.iter().map(|(t, _)| *t).collect();
    let max = t.iter().copied().fold(0.0, f64::max);
    let mut slowest = per_file.to_vec();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    slowest.truncate(3);
    Stats { median: median(&mut t), max, slowest }
}

/// Times each item with each binary; returns per binary the per-file medians, and the files
/// whose output or exit code differ between the binaries.
fn measure(
    bins: &[PathBuf],
    items: &[Item],
    reps: usize,
) -> (Vec<Vec<(f64, PathBuf)>>, Vec<PathBuf>) {
    let mut per_bin = vec![Vec::new(); bins.len()];
    let mut differ = Vec::new();
    for (args, f) in items {
        let mut times = vec![Vec::new(); bins.len()];
        let mut outs = Vec::new();
        for rep in 0..reps {
            // Which binary goes first alternates: the first run after another file's is slower
            // (measured: the same binary as its own baseline came out 10% apart).
            let order: Vec<usize> = if rep % 2 == 0 {
                (0..bins.len()).collect()
            } else {
                (0..bins.len()).rev().collect()
            };
            for i in order {
                let b = &bins[i];
                let (ms, code, out) = run(b, args, f);
                times[i].push(ms);
                if rep == 0 {
                    outs.push((code, out));
                }
            }
        }
        if outs.windows(2).any(|w| w[0] != w[1]) {
            differ.push(f.clone());
        }
        for (i, mut t) in times.into_iter().enumerate() {
            per_bin[i].push((median(&mut t), f.clone()));
        }
    }
    (per_bin, differ)
}

fn report(what: &str, bins: &[PathBuf], per_bin: &[Vec<(f64, PathBuf)>], differ: &[PathBuf]) {
    let s: Vec<Stats> = per_bin.iter().map(|p| stats(p)).collect();
    for (b, st) in bins.iter().zip(&s) {
        println!(
            "{what:5} {:>4} files  median {:6.1} ms  max {:6.1} ms   ({})",
            per_bin[0].len(),
            st.median,
            st.max,
            b.display()
        );
        for (t, f) in &st.slowest {
            println!("        {t:6.1} ms  {}", f.display());
        }
    }
    if s.len() == 2 {
        println!(
            "{what:5} ratio baseline/this: median {:.2}x, max {:.2}x",
            s[1].median / s[0].median,
            s[1].max / s[0].max
        );
        if differ.is_empty() {
            println!("{what:5} outputs and exit codes identical on every file");
        } else {
            println!("{what:5} outputs differ on {} files:", differ.len());
            for f in differ {
                println!("        {}", f.display());
            }
        }
    }
}

fn main() {
    // `APPLY_BENCH_BIN` times another binary as "this": copies of both on one file system
    // compare fairly (the same binary ran 12% faster from /tmp than from the build folder).
    let this = std::env::var_os("APPLY_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_alpine-rs")), PathBuf::from);
    let mut bins = vec![this];
    if let Some(b) = std::env::var_os("APPLY_BENCH_BASELINE") {
        bins.push(PathBuf::from(b));
    }
    let reps: usize =
        std::env::var("APPLY_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5).max(1);

    let annotated: Vec<PathBuf> = testkit::files(&testkit::corpus_dir(), "pvl")
        .into_iter()
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("gpuopt")))
        .collect();
    let with = |args: &[&str], files: &[PathBuf]| -> Vec<Item> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        files.iter().map(|f| (args.clone(), f.clone())).collect()
    };
    let (per_bin, differ) = measure(&bins, &with(&["apply"], &annotated), reps);
    report("apply", &bins, &per_bin, &differ);

    let peer_files = testkit::files(&testkit::root().join("../shared/peer"), "pvl");
    let loops: Vec<Item> = peer_files.iter().filter_map(|f| first_loop(&bins[0], f)).collect();
    let (per_bin, differ) = measure(&bins, &loops, reps);
    report("peer ", &bins, &per_bin, &differ);

    let (per_bin, differ) = measure(&bins, &with(&["parse"], &annotated), reps);
    report("parse", &bins, &per_bin, &differ);
    let (per_bin, differ) = measure(&bins, &with(&["list"], &peer_files), reps);
    report("list", &bins, &per_bin, &differ);
}

/// `apply --opt unroll --factor 1 --at line:N FILE` at the file's first `for` or `while` loop.
fn first_loop(bin: &Path, file: &Path) -> Option<Item> {
    let out = Command::new(bin).args(["list", "--format", "json"]).arg(file).output().ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let site = v["sites"]
        .as_array()?
        .iter()
        .find(|s| matches!(s["kind"].as_str(), Some("for" | "while")))?;
    let line = site["line"].as_u64()?;
    let args = ["apply", "--opt", "unroll", "--factor", "1", "--at"].map(String::from);
    let mut args = args.to_vec();
    args.push(format!("line:{line}"));
    Some((args, file.to_path_buf()))
}
