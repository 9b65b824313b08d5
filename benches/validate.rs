//! Validation time per optimized pair (issue 21 bounds the median at 1 s on the corpus).
//!
//! Every `ok`/`warn` corpus program and optimization fixture that applies without CLI flags is
//! optimized through the driver, and `sem::validate(ORIG, OPT)` is timed on the pair with the
//! default options (20 inputs per compared method, no `--entry`), as `alpine-rs validate` runs
//! it. Prints the pair count, the verdicts, the median, the 90th percentile and the slowest
//! pairs. `VALIDATE_BENCH_FILTER=text` keeps the pairs whose name contains `text`.
//!
//! Run with `cargo bench --bench validate`.

use alpine_rs::sem::validate::{validate, Verdict};
use alpine_rs::transforms::driver::{apply, DriverOptions};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const FOLDERS: &[&str] = &["unroll", "merge", "prefetch", "linearize", "tile", "fuse", "chain"];

fn main() {
    let filter = std::env::var("VALIDATE_BENCH_FILTER").unwrap_or_default();
    let mut pairs = Vec::new();
    for base in [testkit::corpus_dir(), testkit::root().join("fixtures")] {
        for dir in FOLDERS.iter().map(|f| base.join(f)).filter(|d| d.is_dir()) {
            for f in testkit::files(&dir, "pvl") {
                let name = f.display().to_string();
                let src = std::fs::read_to_string(&f).unwrap_or_default();
                if testkit::header(&src, "args").is_some() || !name.contains(&filter) {
                    continue;
                }
                let res = apply(&name, &src, &DriverOptions::default());
                if res.exit_code() == 0 && res.output != src {
                    pairs.push((name, src, res.output));
                }
            }
        }
    }
    let opts = alpine_rs::validate_options();
    let mut times: Vec<(Duration, String)> = Vec::new();
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    let mut judged_otherwise = Vec::new();
    for (name, orig, opt) in &pairs {
        let t = Instant::now();
        let out = validate(orig, opt, &opts);
        times.push((t.elapsed(), name.clone()));
        let v = match out.verdict {
            Verdict::Same => "equivalent",
            Verdict::Different => "different",
            Verdict::Inconclusive => "inconclusive",
            Verdict::BadInput => "bad input",
        };
        *verdicts.entry(v.to_string()).or_default() += 1;
        if out.verdict != Verdict::Same {
            judged_otherwise.push(format!("{v}: {name}: {}", out.reason.unwrap_or_default()));
        }
    }
    if times.is_empty() {
        println!("no pair");
        return;
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].0;
    let total: Duration = times.iter().map(|t| t.0).sum();
    println!("validate: {} pairs, verdicts {verdicts:?}", times.len());
    println!(
        "  median {:.3} s, p90 {:.3} s, max {:.3} s, total {:.1} s",
        at(0.5).as_secs_f64(),
        at(0.9).as_secs_f64(),
        at(1.0).as_secs_f64(),
        total.as_secs_f64()
    );
    for j in &judged_otherwise {
        println!("  {j}");
    }
    println!("  slowest:");
    for (d, n) in times.iter().rev().take(5) {
        let short = n.rsplit_once("/corpus/").or_else(|| n.rsplit_once("/fixtures/"));
        println!("    {:.3} s  {}", d.as_secs_f64(), short.map_or(n.as_str(), |s| s.1));
    }
}
