//! Every corpus program whose header says `// verifies: yes` runs with all runtime checks
//! passing, for every entry method, on generated inputs.

mod common;

use alpine_rs::sem::{self, RunOptions, Status};
use common::{corpus_dir, files, header, root};

#[test]
fn verified_corpus_programs_pass_all_runtime_checks() {
    let files = files(&corpus_dir(), "pvl");
    let only = std::env::var("SEM_ONLY").ok();
    let mut failures = Vec::new();
    let mut count = 0;
    for f in files {
        let Ok(src) = std::fs::read_to_string(&f) else {
            continue;
        };
        if header(&src, "verifies").as_deref() != Some("yes") {
            continue;
        }
        if only.as_deref().is_some_and(|o| !f.to_string_lossy().contains(o)) {
            continue;
        }
        count += 1;
        let opts = RunOptions { random: 3, seed: 1, ..RunOptions::default() };
        match sem::run_program(&src, &opts) {
            Err(e) => failures.push(format!(
                "{}: {e}\n{}",
                f.display(),
                sem::render(&f.to_string_lossy(), &src, &e.diagnostics())
            )),
            Ok(runs) => {
                for r in runs {
                    if r.status != Status::Ok {
                        failures.push(format!(
                            "{} {} input {} ({:?}): {}\n{}",
                            f.display(),
                            r.method,
                            r.input_id,
                            r.status,
                            r.input.describe(),
                            sem::render(&f.to_string_lossy(), &src, &r.errors)
                        ));
                    }
                }
            }
        }
    }
    assert!(count >= 60 || only.is_some(), "only {count} corpus programs found");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Every corpus program and fixture of ours, but not the fuzzer's regression inputs
/// (`fixtures/fuzz/`, run by tests/fuzz_regressions.rs with a deadline): some are built to make
/// input generation spend Z3's whole timeout on each of its candidates, and these runs have no
/// deadline.
fn programs() -> Vec<std::path::PathBuf> {
    [corpus_dir(), root().join("fixtures")]
        .iter()
        .flat_map(|d| files(d, "pvl"))
        .filter(|p| !p.starts_with(root().join("fixtures").join("fuzz")))
        .collect()
}

/// The interpreter's shortcuts (bulk and range permission moves, column-wise reads, contracts
/// checked for many threads at once) give exactly what the general path gives: the same
/// status, diagnostics (rendered, in order), final values, return value and statement count,
/// on every corpus program and every fixture of ours, under all checks and under races and
/// divergence only, with two schedules.
#[test]
fn shortcuts_change_nothing() {
    let files = programs();
    let light = sem::Checks { contracts: false, perms: false, races: true, divergence: true };
    let mut compared = 0;
    let mut differ = Vec::new();
    // Launches the bulk path ran (with shortcuts): the comparison must cover it.
    let bulk = std::cell::Cell::new(0u32);
    for f in &files {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        for (checks, schedule) in
            [(sem::Checks::default(), sem::Schedule::Forward), (light, sem::Schedule::Reverse)]
        {
            let run = |shortcuts: bool| {
                let opts = RunOptions {
                    random: 2,
                    seed: 3,
                    config: sem::Config { checks, schedule, shortcuts, ..sem::Config::default() },
                    ..RunOptions::default()
                };
                sem::run_program(&src, &opts).map(|runs| {
                    runs.iter()
                        .map(|r| {
                            bulk.set(bulk.get() + r.bulk_launches);
                            format!(
                                "{} {:?} {:?} {:?} {} {} {}\n{}",
                                r.method,
                                r.status,
                                r.ret,
                                r.observables,
                                r.stmts,
                                r.launches,
                                r.race,
                                sem::render("f", &src, &r.errors)
                            )
                        })
                        .collect::<Vec<_>>()
                })
            };
            match (run(true), run(false)) {
                (Ok(a), Ok(b)) => {
                    compared += a.len();
                    if a != b {
                        differ.push(format!("{} ({checks:?})", f.display()));
                    }
                }
                (Err(_), Err(_)) => {}
                _ => differ.push(format!("{}: one side failed to load", f.display())),
            }
        }
    }
    assert!(compared > 200, "only {compared} runs compared");
    assert!(bulk.get() >= 20, "only {} bulk launches", bulk.get());
    assert!(differ.is_empty(), "shortcuts change the result of:\n{}", differ.join("\n"));
}

/// The cost model (semantics.md §9) counts the same whether a launch runs in bulk or on the
/// warp machine (shortcuts on or off), and counting changes nothing in the run itself: on
/// every corpus program and fixture, the cost reports are equal and the runs are those
/// without counting.
#[test]
fn counting_is_exact_on_every_path() {
    let files = programs();
    let mut compared = 0;
    let mut costed = 0;
    let mut differ = Vec::new();
    let bulk = std::cell::Cell::new(0u32);
    for f in &files {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        let run = |shortcuts: bool, cost: bool| {
            let opts = RunOptions {
                random: 1,
                seed: 3,
                config: sem::Config {
                    shortcuts,
                    cost: cost.then(sem::cost::CostConfig::default),
                    ..sem::Config::default()
                },
                ..RunOptions::default()
            };
            sem::run_program(&src, &opts).map(|runs| {
                runs.iter()
                    .map(|r| {
                        if cost && shortcuts {
                            bulk.set(bulk.get() + r.bulk_launches);
                        }
                        let run = format!(
                            "{} {:?} {:?} {:?} {} {}\n{}",
                            r.method,
                            r.status,
                            r.ret,
                            r.observables,
                            r.stmts,
                            r.launches,
                            sem::render("f", &src, &r.errors)
                        );
                        (run, serde_json::to_string(&r.cost).unwrap_or_default())
                    })
                    .collect::<Vec<_>>()
            })
        };
        match (run(true, true), run(false, true), run(true, false)) {
            (Ok(a), Ok(b), Ok(c)) => {
                compared += a.len();
                costed += a.iter().filter(|x| x.1.contains("\"steps\"")).count();
                let runs =
                    |v: &[(String, String)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
                if a != b {
                    differ
                        .push(format!("{}: bulk and warp machine count differently", f.display()));
                } else if runs(&a) != runs(&c) {
                    differ.push(format!("{}: counting changes the run", f.display()));
                }
            }
            (Err(_), Err(_), Err(_)) => {}
            _ => differ.push(format!("{}: one side failed to load", f.display())),
        }
    }
    assert!(compared > 100 && costed > 100, "only {compared} runs compared ({costed} costed)");
    assert!(bulk.get() >= 10, "only {} bulk launches while counting", bulk.get());
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
