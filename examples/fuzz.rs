//! The release-mode fuzz driver (issue 26) for runs too big for `cargo test`:
//!
//! ```text
//! nice cargo run --release --example fuzz -- --parse 1000000 --apply 100000 --seed 1
//! ```
//!
//! Flags: `--parse N`, `--list N`, `--apply N`, `--encode N`, `--interp N`, `--validate N`
//! (inputs per target, 0 by default), `--seed S` (default 1), `--save DIR` (failing inputs are
//! written there; default `target/fuzz-findings`), `--z3-ms MS` (Z3's time per query in `apply`,
//! default 1000). It prints, per target, the inputs run, how many got past the front end and
//! how many went all the way, the panics, hangs (inputs over the target's budget), internal
//! errors and broken outputs found, the slowest input and the wall time; the exit status is 1
//! when anything was found. The targets and generators are the stable suites' own
//! (`tests/common/fuzz/`), so a finding here reproduces there.

use testkit::fuzz;

use alpine_rs::front::DialectChoice;
use fuzz::plan::apply_requests;
use fuzz::programs::program;
use fuzz::targets::{
    apply_target, encode_target, interp_target, list_target, parse_target, timed, validate_target,
};
use fuzz::{gen, seeds, Reach, Rng, Seeds, Tally};
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct Args {
    counts: [(&'static str, usize); 6],
    seed: u64,
    save: PathBuf,
    z3_ms: u32,
}

fn args() -> Args {
    let mut a = Args {
        counts: [
            ("parse", 0),
            ("list", 0),
            ("apply", 0),
            ("encode", 0),
            ("interp", 0),
            ("validate", 0),
        ],
        seed: 1,
        save: fuzz::root().join("target/fuzz-findings"),
        z3_ms: 1000,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let v = it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let num = || v.parse::<u64>().unwrap_or_else(|_| usage(&format!("{flag} {v}")));
        match flag.trim_start_matches("--") {
            "seed" => a.seed = num(),
            "save" => a.save = PathBuf::from(v),
            "z3-ms" => a.z3_ms = num() as u32,
            name => match a.counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c = num() as usize,
                None => usage(&format!("unknown flag {flag}")),
            },
        }
    }
    a
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "fuzz: {msg}\nusage: fuzz [--parse N] [--list N] [--apply N] [--encode N] [--interp N] \
         [--validate N] [--seed S] [--save DIR] [--z3-ms MS]"
    );
    std::process::exit(2)
}

fn choice(rng: &mut Rng) -> DialectChoice {
    *rng.pick(&[DialectChoice::Auto, DialectChoice::V1, DialectChoice::V2])
}

fn main() {
    let a = args();
    let all = seeds(Seeds::All);
    let small = seeds(Seeds::Small(2500));
    eprintln!("fuzz: seed {}, {} seed files ({} small)", a.seed, all.len(), small.len());
    let mut found = 0;
    for (k, &(target, n)) in a.counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let mut rng = Rng(a.seed.wrapping_mul(0x9e37_79b9).wrapping_add(k as u64));
        let mut t = Tally { save_to: Some(a.save.clone()), ..Tally::new(target) };
        let start = Instant::now();
        let mut last_report = Instant::now();
        let mut i = 0usize;
        while t.inputs < n {
            let (name, src) = if target == "parse" || target == "list" {
                &all[i % all.len()]
            } else {
                &small[i % small.len()]
            };
            i += 1;
            let label = format!("mutant of {name}");
            match target {
                "parse" => {
                    let (label, input) = match rng.below(10) {
                        0 => ("token soup".to_string(), gen::token_soup(&mut rng, 300)),
                        1 => ("random bytes".to_string(), gen::random_bytes(&mut rng, 400)),
                        _ => (label, gen::mutant(&mut rng, src, 3)),
                    };
                    let c = choice(&mut rng);
                    let (r, took) = timed(Duration::from_millis(100), "parse", &input, || {
                        parse_target(&input, c)
                    });
                    t.record(&label, "parse", &input, took, r);
                }
                "list" => {
                    let m = gen::mutant(&mut rng, src, 3);
                    let c = choice(&mut rng);
                    let (r, took) =
                        timed(Duration::from_millis(200), "list", &m, || list_target(&m, c));
                    t.record(&label, "list", &m, took, r);
                }
                "apply" => {
                    let m = gen::mutant(&mut rng, src, 2);
                    for req in apply_requests(&mut rng, &m, 3, 40) {
                        let what = req.describe();
                        let (r, took) = timed(Duration::from_secs(10), &what, &m, || {
                            apply_target(&m, &req, a.z3_ms)
                        });
                        t.record(&label, &what, &m, took, r);
                    }
                }
                "encode" => {
                    let m = gen::mutant(&mut rng, src, 2);
                    let (r, took) = timed(Duration::from_secs(1), "encode", &m, || {
                        encode_target(&m).map(|(reach, _)| reach)
                    });
                    if !matches!(r, Ok(Reach::Front)) {
                        t.record(&label, "encode", &m, took, r);
                    }
                }
                "interp" => {
                    let (label, p) = if rng.below(2) == 0 {
                        ("random program".to_string(), program(&mut rng))
                    } else {
                        (label, gen::mutant(&mut rng, src, 2))
                    };
                    let seed = rng.next();
                    let (r, took) =
                        timed(Duration::from_secs(3), "run", &p, || interp_target(&p, seed, 5_000));
                    if !matches!(r, Ok(Reach::Front)) {
                        t.record(&label, "run", &p, took, r);
                    }
                }
                _ => {
                    let m = gen::mutant(&mut rng, src, 1);
                    let both = format!("{src}\n// ---- mutant ----\n{m}");
                    let seed = rng.next();
                    let (r, took) = timed(Duration::from_secs(5), "validate", &both, || {
                        validate_target(src, &m, seed, 5_000)
                    });
                    if !matches!(r, Ok(Reach::Front)) {
                        t.record(&format!("{name} against a mutant"), "validate", &both, took, r);
                    }
                }
            }
            if last_report.elapsed() > Duration::from_secs(60) {
                last_report = Instant::now();
                eprintln!("  … {} after {:.0?}", t.summary(), start.elapsed());
            }
        }
        println!("{}; wall {:.1?}", t.summary(), start.elapsed());
        for f in &t.failures {
            println!("{f}\n");
        }
        found += t.findings();
    }
    std::process::exit(i32::from(found > 0));
}
