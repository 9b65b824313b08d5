//! Stable fuzzing of the interpreter and of `validate` (issue 26): random well-formed programs
//! (`tests/common/fuzz/programs.rs`) and mutants of the small corpus and fixture files run with
//! little fuel; each file that loads is validated against a mutant of itself. Program errors,
//! out-of-fuel and any verdict are fine; a panic, an input over its budget or an internal error
//! is not.

use testkit::fuzz;

use fuzz::programs::program;
use fuzz::targets::{interp_target, timed, validate_target};
use fuzz::{gen, seeds, Reach, Rng, Seeds, Tally};
use std::path::Path;
use std::time::Duration;

const FUEL: u64 = 5_000;

fn tally(target: &'static str) -> Tally {
    Tally {
        save_to: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz")),
        ..Tally::new(target)
    }
}

/// The small seed files the interpreter loads.
fn loadable() -> Vec<(String, String)> {
    seeds(Seeds::Small(2500))
        .into_iter()
        .filter(|(_, s)| alpine_rs::sem::with_big_stack(|| alpine_rs::sem::load(s).is_ok()))
        .collect()
}

/// 300 random programs, each run on one generated input per entry.
#[test]
fn interp_on_random_programs() {
    let mut rng = Rng(0x26_0005);
    let mut t = tally("interp");
    for k in 0..300u64 {
        let p = program(&mut rng);
        let (r, took) = timed(Duration::from_secs(5), "run", &p, || interp_target(&p, k, FUEL));
        t.record("random program", "run", &p, took, r);
    }
    t.assert_clean(300);
    // The generator writes well-formed programs: nearly all of them load and run.
    assert!(t.completed > 250, "only {} of 300 random programs ran", t.completed);
}

/// 300 mutants of loadable files that still load, run.
#[test]
fn interp_on_mutants() {
    let mut rng = Rng(0x26_0006);
    let srcs = loadable();
    assert!(srcs.len() > 40, "only {} loadable seed files", srcs.len());
    let mut t = tally("interp");
    let mut i = 0;
    while t.inputs < 300 {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let m = gen::mutant(&mut rng, src, 2);
        let (r, took) = timed(Duration::from_secs(5), "run", &m, || interp_target(&m, 0, FUEL));
        if !matches!(r, Ok(Reach::Front)) {
            t.record(&format!("mutant of {name}"), "run", &m, took, r);
        }
    }
    t.assert_clean(300);
}

/// 150 loadable files validated against a mutant of themselves that loads.
#[test]
fn validate_against_mutants() {
    let mut rng = Rng(0x26_0007);
    let srcs = loadable();
    let mut t = tally("validate");
    let mut i = 0;
    while t.inputs < 150 {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let m = gen::mutant(&mut rng, src, 1);
        let both = format!("{src}\n// ---- mutant ----\n{m}");
        let (r, took) = timed(Duration::from_secs(10), "validate", &both, || {
            validate_target(src, &m, i as u64, FUEL)
        });
        if !matches!(r, Ok(Reach::Front)) {
            t.record(&format!("{name} against a mutant"), "validate", &both, took, r);
        }
    }
    t.assert_clean(150);
}
