//! Every corpus program whose header says `// verifies: yes` must verify with Silicon; the
//! `unsure` ones are recorded. All programs go through Silicon in one batch file (one JVM).
//!
//! Runs Silicon for real: needs the backend (`alpine-rs backend install`, done by `.ci/run`);
//! without it the test fails with the provisioning message.

mod common;

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::viper::{self, Verdict, VerifyOptions};
use common::{corpus_dir, files, header};
use std::path::PathBuf;

#[test]
fn corpus_verifies() {
    let filter = std::env::var("VIPER_FILTER").unwrap_or_default();
    let root = corpus_dir();
    let mut srcs = Vec::new();
    let mut beliefs = Vec::new();
    for f in files(&root, "pvl") {
        let text = std::fs::read_to_string(&f).unwrap();
        let belief = header(&text, "verifies").unwrap_or_default();
        if belief.starts_with("no") {
            continue;
        }
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        if !name.contains(&filter) {
            continue;
        }
        beliefs.push(belief);
        srcs.push(SourceFile::new(name, text));
    }
    let opts = VerifyOptions {
        timeout_s: 0,
        keep_vpr: std::env::var("VIPER_KEEP").ok().map(PathBuf::from),
        // Always run Silicon for real, never from the result cache.
        no_cache: true,
        ..VerifyOptions::default()
    };
    let t = std::time::Instant::now();
    let reports = viper::verify_batch(&srcs, &opts);
    let mut failures = Vec::new();
    for ((src, belief), r) in srcs.iter().zip(&beliefs).zip(&reports) {
        let sure = belief.starts_with("yes");
        println!("{:?}\t{}\t{}", r.verdict, if sure { "yes" } else { "unsure" }, src.name);
        if r.verdict != Verdict::Verified {
            println!("{}", render_plain(&[src], &r.diagnostics));
            if sure {
                failures.push(src.name.clone());
            }
        }
    }
    println!("total Silicon batch time: {:.1}s", t.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "corpus programs that do not verify: {failures:#?}");
}
