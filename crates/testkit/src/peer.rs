//! VerCors' own example suites as regression tests (tests/peer.rs: v1.4.1; tests/peer_dev.rs:
//! VerCors 2 at dev). Every row of the suite's verdict table is a program; our exit code is
//! compared with VerCors' verdict (Pass ↔ 0, Fail ↔ 1, Error ↔ 2) and with the exit code
//! recorded for the row in the suite's expectations file under `fixtures/peer/`.
//!
//! The test fails when, compared with the recorded row,
//! - a row that agreed no longer agrees (an agreement lost; a timeout is reported, not failed:
//!   it says the machine is slower than the one that recorded the row),
//! - a program VerCors rejects (Fail or Error) verifies (an unsafe verdict appears), or
//! - Silicon rejects our Viper (an E-INTERNAL appears).
//!
//! By default a share of the rows runs (see [`ci_share`]); `ALPINE_SLOW=1` runs them all.
//! A row that now agrees, or changes between two disagreeing codes, is printed; rewrite the
//! file with `UPDATE_PEER=1` (then review the diff). Runs Silicon: one JVM, two programs at a
//! time. Under CI (`CI` set) a missing ../shared/peer fails the test instead of skipping it.
#![allow(dead_code)] // each suite uses one grouping

use alpine_rs::diag::SourceFile;
use alpine_rs::viper::{Session, VerifyOptions, VerifyReport};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Silicon's time limit per file: generous, so that a slow machine does not turn a verified
/// file into a timeout (which would read as an agreement lost).
const TIMEOUT_S: u64 = 120;
/// The limit for the CI share. A timeout is reported, not failed.
const CI_TIMEOUT_S: u64 = 60;

/// How a suite's table names the other files of a multi-file program.
#[derive(Clone, Copy)]
pub enum Grouping {
    /// v1.4.1: the third column lists the row's test cases; the program is every file of the
    /// row's first case (a file listed in several cases, manual/permissions.pvl, is also a case
    /// on its own, which its verdict is about; .ci/peer.sh groups the same way).
    ByCase,
    /// dev: the fourth column lists the other files of the program.
    Listed,
}

pub struct Suite {
    /// The verdict table under ../shared/peer.
    pub table: &'static str,
    /// The folder under ../shared/peer that the table's paths are relative to.
    pub base: &'static str,
    /// The expectations file, relative to the repository root.
    pub expectations: &'static str,
    pub grouping: Grouping,
    /// Rows whose verdict varies from run to run with the same Viper (Z3's search is not
    /// deterministic across machines and loads): a lost agreement there is reported, not failed.
    pub unstable: &'static [&'static str],
}

pub struct Row {
    pub file: String,
    pub vercors: String,
    pub group: Vec<String>,
    /// The row's key in the expectations file: the file, and for a listed group the group too
    /// (a dev file appears in several programs with different verdicts).
    key: String,
}

impl Row {
    fn key(&self) -> String {
        self.key.clone()
    }
}

pub fn peer_root() -> PathBuf {
    crate::root().join("../shared/peer")
}

fn rows(suite: &Suite, root: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(root.join(suite.table)).expect("verdict table");
    let table: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    let words = |cols: &Vec<&str>, i: usize| -> Vec<String> {
        cols.get(i).map_or(Vec::new(), |c| c.split_whitespace().map(str::to_string).collect())
    };
    table
        .iter()
        .map(|cols| {
            let (group, key) = match suite.grouping {
                Grouping::Listed => {
                    let group = words(cols, 3);
                    let key = std::iter::once(cols[0].to_string())
                        .chain(group.iter().map(|g| format!("+{g}")))
                        .collect::<Vec<_>>()
                        .join(" ");
                    (group, key)
                }
                Grouping::ByCase => {
                    let first = words(cols, 2).into_iter().next();
                    let group = table
                        .iter()
                        .filter(|o| o[0] != cols[0])
                        .filter(|o| first.as_ref().is_some_and(|c| words(o, 2).contains(c)))
                        .map(|o| o[0].to_string())
                        .collect();
                    (group, cols[0].to_string())
                }
            };
            Row { file: cols[0].to_string(), vercors: cols[1].to_string(), group, key }
        })
        .collect()
}

pub fn agrees(vercors: &str, code: u8) -> bool {
    matches!((vercors, code), ("Pass", 0) | ("Fail", 1) | ("Error", 2))
}

/// Our exit code and first diagnostic code for each row.
fn run_all(suite: &Suite, root: &Path, rows: &[Row], timeout_s: u64) -> Vec<(u8, String)> {
    let base = root.join(suite.base);
    let summary = |r: &VerifyReport| {
        let first = r.diagnostics.first().map_or(String::new(), |d| d.code.clone());
        (r.verdict.exit_code(), first)
    };
    // Every row is a program (a case of several files is one program, as `verify --program`
    // makes it).
    let program = |r: &Row| -> Vec<SourceFile> {
        std::iter::once(&r.file)
            .chain(&r.group)
            .map(|f| {
                let text = std::fs::read_to_string(base.join(f)).expect("peer file");
                SourceFile::new(f.clone(), text)
            })
            .collect()
    };
    let programs: Vec<Vec<SourceFile>> = rows.iter().map(program).collect();
    // One JVM, two programs at a time, taken from one queue: a slow row holds up one worker,
    // not a fixed share of the rows.
    let opts = VerifyOptions { timeout_s, jobs: 2, ..VerifyOptions::default() };
    let reports = Session::for_requests(&opts, programs.len()).verify_programs(&programs);
    for (r, report) in rows.iter().zip(&reports) {
        // The slow rows, to keep an eye on what the CI share costs.
        if report.time.as_secs() >= 20 {
            eprintln!("slow: {} {} s", r.file, report.time.as_secs());
        }
    }
    reports.iter().map(summary).collect()
}

/// The recorded exit code and first diagnostic code of each row, by its key.
fn read_expectations(path: &Path) -> BTreeMap<String, (u8, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let first = cols.get(4).map_or(String::new(), |c| c.to_string());
            Some((cols.first()?.to_string(), (cols.get(2)?.parse().ok()?, first)))
        })
        .collect()
}

fn write_expectations(suite: &Suite, path: &Path, rows: &[Row], got: &[(u8, String)]) {
    let mut text = format!(
        "# VerCors' example suite (../shared/peer/{}): VerCors' verdict and our exit code\n\
         # (0 verified, 1 failed, 2 rejected, 3 undecided) with our first diagnostic.\n\
         # Written by `UPDATE_PEER=1 cargo test --test <suite>`; tests/common/peer.rs explains the rules.\n\
         # program (file, then +each other file)\tvercors\tours\tagrees\tfirst diagnostic\n",
        suite.table
    );
    for (r, (code, first)) in rows.iter().zip(got) {
        let agree = if agrees(&r.vercors, *code) { "yes" } else { "no" };
        text.push_str(&format!("{}\t{}\t{code}\t{agree}\t{first}\n", r.key(), r.vercors));
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).expect("fixtures/peer");
    }
    std::fs::write(path, text).expect("writable expectations");
}

/// The rows a default run (CI) verifies: every row VerCors rejects (where an unsafe verdict
/// would appear) and every fourth row it verifies, leaving out the rows recorded as timeouts
/// (two minutes each, for a row that can neither lose an agreement nor become unsafe) and the
/// rows VerCors verifies that we recorded as failing or rejecting. `ALPINE_SLOW=1` (and
/// `UPDATE_PEER=1`) run every row.
///
/// A program of several files is listed once per file, each time with the others as its group;
/// each row verifies the same files again, so among the rows VerCors verifies only the first of
/// each file set runs.
fn ci_share(rows: Vec<Row>, before: &BTreeMap<String, (u8, String)>) -> Vec<Row> {
    let mut passes = 0;
    let mut programs = BTreeSet::new();
    rows.into_iter()
        .filter(|r| {
            let recorded = before.get(&r.key());
            if recorded.is_some_and(|(c, f)| *c == 3 && f == "V-TIMEOUT") {
                return false;
            }
            if r.vercors != "Pass" {
                return true;
            }
            // A row VerCors verifies and we fail (a known incompleteness) can neither lose an
            // agreement nor become unsafe either; these include the slowest rows. A rejection
            // (exit 2) costs nothing and is kept: it shows a front-end regression at once.
            if recorded.is_some_and(|(c, _)| *c == 1) {
                return false;
            }
            if recorded.is_some_and(|(c, _)| *c == 2) {
                return true;
            }
            if !r.group.is_empty() {
                let mut files: Vec<String> =
                    std::iter::once(&r.file).chain(&r.group).cloned().collect();
                files.sort();
                return programs.insert(files);
            }
            passes += 1;
            passes % 4 == 1
        })
        .collect()
}

/// The suite's regression test (see the module comment).
pub fn keep_verdicts(suite: &Suite) {
    let root = peer_root();
    if !root.join(suite.table).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is not there: CI must run with ../shared beside the checkout",
            root.display()
        );
        eprintln!("skipped: {} is not there", root.display());
        return;
    }
    let path = crate::root().join(suite.expectations);
    let before = read_expectations(&path);
    let all =
        std::env::var_os("ALPINE_SLOW").is_some() || std::env::var_os("UPDATE_PEER").is_some();
    let rows = if all { rows(suite, &root) } else { ci_share(rows(suite, &root), &before) };
    let got = run_all(suite, &root, &rows, if all { TIMEOUT_S } else { CI_TIMEOUT_S });
    let mut problems = Vec::new();
    let mut changes = Vec::new();
    for (r, (code, first)) in rows.iter().zip(&got) {
        let key = r.key();
        let recorded = before.get(&key);
        let was = recorded.map(|(c, _)| *c);
        // A problem already recorded is a known one (listed in the note of the issue that
        // records it); one that appears fails the test.
        let unsafe_now = matches!(r.vercors.as_str(), "Fail" | "Error") && *code == 0;
        if unsafe_now && was != Some(0) {
            problems.push(format!("{key}: unsafe: VerCors says {}, we verify it", r.vercors));
        }
        if first == "E-INTERNAL" && recorded.is_none_or(|(_, f)| f != "E-INTERNAL") {
            problems.push(format!("{key}: internal error (Silicon rejected our Viper?)"));
        }
        match was {
            // A timeout says the machine was slower than the one that recorded the row, not
            // that the verdict changed: reported, not failed.
            Some(w) if agrees(&r.vercors, w) && first == "V-TIMEOUT" => {
                changes.push(format!("{key}: {} was {w}, now a timeout", r.vercors))
            }
            Some(w) if w != *code && suite.unstable.contains(&r.file.as_str()) => {
                changes.push(format!("{key}: {} was {w}, now {code} (unstable)", r.vercors))
            }
            Some(w) if agrees(&r.vercors, w) && !agrees(&r.vercors, *code) => problems.push(
                format!("{key}: agreement lost: {} was {w}, now {code} ({first})", r.vercors),
            ),
            Some(w) if w == *code => {}
            _ => changes.push(format!("{key}: {} was {was:?}, now {code} ({first})", r.vercors)),
        }
    }
    let agreed = rows.iter().zip(&got).filter(|(r, (c, _))| agrees(&r.vercors, *c)).count();
    let share = if all { "" } else { " (the CI share; ALPINE_SLOW=1 runs all)" };
    eprintln!("agreement: {agreed}/{} rows{share}", rows.len());
    for c in &changes {
        eprintln!("changed: {c}");
    }
    if std::env::var_os("UPDATE_PEER").is_some() {
        write_expectations(suite, &path, &rows, &got);
        eprintln!("rewrote {}", suite.expectations);
    } else if !changes.is_empty() {
        eprintln!("rows changed without losing an agreement: UPDATE_PEER=1 records them");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
