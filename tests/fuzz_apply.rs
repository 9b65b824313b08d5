//! Stable fuzzing of `list` and `apply` (issue 26), in-process, deterministic (fixed seeds),
//! within the CI budget of a debug build.
//!
//! Inputs are mutants of the small corpus, fixture and peer files (structure-keeping edits
//! mostly, so that many still parse: a number replaced by 0, -1 or 2^63, an operator by
//! another, a name by another; and arbitrary token edits). `list` runs on each mutant; `apply`
//! runs every registered optimization at the line of every site of the mutant (and at random
//! lines), with random parameters (counts 0, 1, negative, 2^31, 2^63, 2^64; unknown names;
//! expressions with edge-case numbers), and on the mutant's own annotations. A panic, an input
//! over its time budget, an internal error, or an applied output that does not parse fails the
//! test, listing the inputs (saved under `$CARGO_TARGET_TMPDIR/fuzz/`). The release driver
//! (`examples/fuzz.rs`) runs the same targets for the big runs; the regressions are in
//! `tests/fuzz_regressions.rs`.

use testkit::fuzz;

use alpine_rs::front::DialectChoice;
use fuzz::plan::apply_requests;
use fuzz::targets::{apply_target, list_target, timed};
use fuzz::{gen, seeds, Rng, Seeds, Tally};
use std::path::Path;
use std::time::{Duration, Instant};

/// Z3's time per query in `apply` (a timeout is "could not decide", not a finding).
const Z3_MS: u32 = 500;

fn tally(target: &'static str) -> Tally {
    Tally {
        save_to: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz")),
        ..Tally::new(target)
    }
}

/// 5 000 `list` inputs: mutants of every seed file in turn.
#[test]
fn list_on_mutants() {
    let mut rng = Rng(0x26_0001);
    let srcs = seeds(Seeds::All);
    let mut t = tally("list");
    let mut i = 0;
    while t.inputs < 5000 {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let m = gen::mutant(&mut rng, src, 3);
        let choice = *rng.pick(&[DialectChoice::Auto, DialectChoice::V1, DialectChoice::V2]);
        let (r, took) = timed(Duration::from_millis(500), "list", &m, || list_target(&m, choice));
        t.record(&format!("mutant of {name}"), "list", &m, took, r);
    }
    t.assert_clean(5000);
    assert!(t.completed > 1000, "only {} mutants listed", t.completed);
}

/// 10 000 `apply` inputs on mutants of the small seed files (at most 1 500 bytes, so that a
/// debug build stays within the CI budget): at most 12 requests per mutant.
#[test]
fn apply_on_mutants() {
    let start = Instant::now();
    let mut rng = Rng(0x26_0002);
    let srcs = seeds(Seeds::Small(1500));
    assert!(srcs.len() > 100, "only {} small seed files", srcs.len());
    let mut t = tally("apply");
    let mut i = 0;
    while t.inputs < 10_000 {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let m = gen::mutant(&mut rng, src, 2);
        for req in apply_requests(&mut rng, &m, 2, 12) {
            let what = req.describe();
            let (r, took) =
                timed(Duration::from_secs(10), &what, &m, || apply_target(&m, &req, Z3_MS));
            t.record(&format!("mutant of {name}"), &what, &m, took, r);
        }
    }
    eprintln!("apply: {:?}", start.elapsed());
    t.assert_clean(10_000);
    // Most requests are refused (wrong construct, bad parameter); enough must get through.
    assert!(t.reached > 2000, "only {} requests reached an optimization", t.reached);
    assert!(t.completed > 200, "only {} requests applied", t.completed);
}
