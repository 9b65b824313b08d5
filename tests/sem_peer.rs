//! The interpreter runs what the verifier accepts (issue 21): every VerCors example that our
//! `verify` verifies (exit 0 in fixtures/peer/expectations.tsv, written by tests/peer.rs) is
//! run on generated inputs, and no run may stop at a construct the interpreter does not
//! support (R-UNSUPPORTED). Other outcomes (a fault the verifier missed, a precondition no
//! generated input meets, a run out of time) are not this test's business. A case of several
//! files (../shared/peer/verdicts.tsv's last column) runs as one program, its texts joined as
//! `verify --program` joins them. The files are read from ../shared/peer at test time.

mod common;

use alpine_rs::sem::{self, Config, RunOptions};

#[test]
fn verified_peer_programs_run_without_unsupported_constructs() {
    let peer = common::root().join("../shared/peer/vercors-v1.4.1");
    if !peer.is_dir() {
        eprintln!("../shared/peer is not there: nothing to run");
        return;
    }
    let table = std::fs::read_to_string(common::root().join("fixtures/peer/expectations.tsv"))
        .expect("fixtures/peer/expectations.tsv");
    // The other files of a file's case.
    let verdicts = std::fs::read_to_string(common::root().join("../shared/peer/verdicts.tsv"))
        .unwrap_or_default();
    let group = |file: &str| -> Vec<String> {
        verdicts
            .lines()
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .find(|c| c.first() == Some(&file))
            .and_then(|c| c.get(3).map(|g| g.split_whitespace().map(String::from).collect()))
            .unwrap_or_default()
    };
    let programs: Vec<(&str, String)> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let (Some(file), Some(&"0")) = (cols.first(), cols.get(2)) else { return None };
            let mut src = std::fs::read_to_string(peer.join(file)).ok()?;
            for other in group(file) {
                src.push('\n');
                src.push_str(&std::fs::read_to_string(peer.join(&other)).unwrap_or_default());
            }
            Some((*file, src))
        })
        .collect();
    // One program per thread at a time; each is single-threaded and some run to the deadline.
    let outcomes = common::par_map(&programs, |(file, src)| {
        let opts = RunOptions {
            random: 2,
            seed: 1,
            // A file's runs stop after 10 s (inconclusive, R-FUEL): run time is not the point.
            config: Config {
                deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(10)),
                ..Config::default()
            },
            ..RunOptions::default()
        };
        let runs = sem::run_program(src, &opts).ok()?;
        let bad = runs.iter().find_map(|r| {
            let d = r.errors.iter().find(|d| d.code == "R-UNSUPPORTED")?;
            Some(format!("{file} {}: {}", r.method, d.message))
        });
        Some(bad)
    });
    let ran = outcomes.iter().flatten().count();
    let bad: Vec<String> = outcomes.into_iter().flatten().flatten().collect();
    eprintln!("{ran} verified peer programs run");
    assert!(ran >= 60, "only {ran} verified peer programs could be run");
    assert!(bad.is_empty(), "runs stopped at unsupported constructs:\n{}", bad.join("\n"));
}
