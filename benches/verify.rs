//! Verification time per corpus file, and what batching saves.
//!
//! Runs the `verifies: yes` corpus programs three ways and prints wall times:
//! 1. per file, a fresh JVM each (`verify_source`-style: one `verify_batch` call per file);
//! 2. per file in one JVM, as many at a time as there are cores (`verify_each`);
//! 3. all programs in one Silicon file (`verify_batch`);
//!
//! and the median time per file of way 2 (what issue 20 bounds: at most +10%; with several files
//! at a time, each file's time includes its share of the machine).
//!
//! Needs the backend (`alpine-rs backend install`). `VERIFY_BENCH_N` limits the file count.

// The corpus helpers of the integration tests (this bench uses none of `benches/common`).

use alpine_rs::diag::SourceFile;
use alpine_rs::viper::{verify_batch, verify_each, Verdict, VerifyOptions};
use std::time::Instant;

fn main() {
    let mut files = Vec::new();
    for p in testkit::files(&testkit::corpus_dir(), "pvl") {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        if testkit::header(&text, "verifies").is_some_and(|v| v.starts_with("yes")) {
            files.push(SourceFile::new(p.display().to_string(), text));
        }
    }
    let n: usize =
        std::env::var("VERIFY_BENCH_N").ok().and_then(|v| v.parse().ok()).unwrap_or(files.len());
    files.truncate(n);
    let opts = VerifyOptions { timeout_s: 300, no_cache: true, ..VerifyOptions::default() };

    let t = Instant::now();
    let mut ok = 0;
    for f in &files {
        let r = verify_batch(std::slice::from_ref(f), &opts);
        ok += r.iter().filter(|r| r.verdict == Verdict::Verified).count();
    }
    let fresh = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let each = verify_each(&files, &opts);
    let one_jvm = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let batch = verify_batch(&files, &opts);
    let one_file = t.elapsed().as_secs_f64();
    let nf = files.len() as f64;
    println!(
        "{} programs ({} verified per file, {} in one JVM, {} in one batch)",
        files.len(),
        ok,
        each.iter().filter(|r| r.verdict == Verdict::Verified).count(),
        batch.iter().filter(|r| r.verdict == Verdict::Verified).count()
    );
    println!("fresh JVM per file : {fresh:8.1} s total, {:6.2} s per file", fresh / nf);
    println!(
        "one JVM, per file  : {one_jvm:8.1} s total, {:6.2} s per file ({:.1}x faster)",
        one_jvm / nf,
        fresh / one_jvm
    );
    println!(
        "one batch file     : {one_file:8.1} s total, {:6.2} s per file ({:.1}x faster)",
        one_file / nf,
        fresh / one_file
    );
    let mut times: Vec<f64> = each.iter().map(|r| r.time.as_secs_f64()).collect();
    times.sort_by(f64::total_cmp);
    if let Some(m) = times.get(times.len() / 2) {
        println!("median per file, one JVM: {:.3} s", m);
    }
}
