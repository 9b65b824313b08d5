//! The fuzz harness (issue 26), shared by the stable fuzz suites (`tests/fuzz_*.rs`), the
//! release driver (`examples/fuzz.rs`) and the cargo-fuzz targets (`fuzz/`):
//!
//! * [`gen`]: deterministic inputs (a PRNG, token-level mutations, token soup, random bytes);
//! * [`plan`]: `apply` requests (every optimization at every site line, random parameters);
//! * [`programs`]: random well-formed programs for the interpreter;
//! * [`targets`]: one function per target (parse, list, apply, encode, interp, validate) that
//!   runs one input in-process, under `catch_unwind`, timed, and says what it found;
//! * [`Tally`]: counts per target, and the failures with their inputs.
//!
//! A finding is a panic, an input over the target's time budget (a hang), an internal error (a
//! diagnostic whose registered exit class is `internal`, or an unregistered code: A0099,
//! E-INTERNAL), or a broken promise of the target (an applied output that does not parse, a
//! refusal without an error). A timeout of Z3 or of the interpreter's fuel is not a finding.
#![allow(dead_code)] // each user takes a subset

pub mod gen;
pub mod plan;
pub mod programs;
pub mod targets;

use std::path::{Path, PathBuf};
use std::time::Duration;

#[allow(unused_imports)]
pub use gen::Rng;
#[allow(unused_imports)]
pub use targets::{Finding, Reach};

pub use crate::root;

/// The files with extension `ext` under `dir` (recursively), sorted; none if it is missing.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Where seed inputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeds {
    /// `../shared/corpus`, `fixtures/**` (PVL and CUDA) and `../shared/peer` (VerCors'
    /// examples, read at run time only).
    All,
    /// The same, only files of at most this many bytes (cheap inputs for debug builds).
    Small(usize),
}

/// The seed files: (name relative to the repository root, text), in a fixed order.
pub fn seeds(which: Seeds) -> Vec<(String, String)> {
    let root = root();
    let mut paths = Vec::new();
    files(&root.join("../shared/corpus"), "pvl", &mut paths);
    files(&root.join("fixtures"), "pvl", &mut paths);
    files(&root.join("fixtures"), "cu", &mut paths);
    files(&root.join("../shared/peer"), "pvl", &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            if let Seeds::Small(max) = which {
                if text.len() > max {
                    return None;
                }
            }
            let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            Some((name, text))
        })
        .collect()
}

/// Counts of one target and the failures found, with their inputs.
#[derive(Default)]
pub struct Tally {
    pub target: &'static str,
    pub inputs: usize,
    /// Inputs that got past the front end (parsed, built) to the target's own work.
    pub reached: usize,
    /// Inputs that the target finished completely (applied, encoded, ran, compared).
    pub completed: usize,
    pub panics: usize,
    pub hangs: usize,
    pub internals: usize,
    pub broken: usize,
    pub slowest: Duration,
    pub failures: Vec<String>,
    /// Folder the failing inputs are written to (for reproduction and minimisation).
    pub save_to: Option<PathBuf>,
}

/// Failures described in full (more are counted).
const MAX_SHOWN: usize = 10;

impl Tally {
    pub fn new(target: &'static str) -> Tally {
        Tally { target, ..Tally::default() }
    }

    /// Count one input's outcome; `label` says where it came from, `what` how it was run.
    pub fn record(
        &mut self,
        label: &str,
        what: &str,
        input: &str,
        took: Duration,
        r: Result<Reach, Finding>,
    ) {
        self.inputs += 1;
        self.slowest = self.slowest.max(took);
        let f = match r {
            Ok(reach) => {
                self.reached += usize::from(reach >= Reach::Target);
                self.completed += usize::from(reach == Reach::Done);
                return;
            }
            Err(f) => f,
        };
        match f {
            Finding::Panic(_) => self.panics += 1,
            Finding::Hang(_) => self.hangs += 1,
            Finding::Internal(_) => self.internals += 1,
            Finding::Broken(_) => self.broken += 1,
        }
        let saved = self.save(input).map_or(String::new(), |p| format!("\n  saved as {p}"));
        if self.failures.len() < MAX_SHOWN {
            self.failures.push(format!(
                "{}: {f}\n  how: {what}\n  input ({label}): {}{saved}",
                self.target,
                gen::show(input)
            ));
        } else if self.failures.len() == MAX_SHOWN {
            self.failures.push("… (further failures not shown)".into());
        }
    }

    fn save(&self, input: &str) -> Option<String> {
        let dir = self.save_to.as_ref()?;
        std::fs::create_dir_all(dir).ok()?;
        let n = self.panics + self.hangs + self.internals + self.broken;
        let p = dir.join(format!("{}-{n}.txt", self.target));
        std::fs::write(&p, input).ok()?;
        Some(p.display().to_string())
    }

    pub fn findings(&self) -> usize {
        self.panics + self.hangs + self.internals + self.broken
    }

    /// One line of figures.
    pub fn summary(&self) -> String {
        format!(
            "{:<9} {:>9} inputs, {:>9} reached, {:>9} completed; panics {}, hangs {}, internal errors {}, broken {}; slowest {:?}",
            self.target,
            self.inputs,
            self.reached,
            self.completed,
            self.panics,
            self.hangs,
            self.internals,
            self.broken,
            self.slowest
        )
    }

    /// Fail (panic) if anything was found or fewer than `min` inputs ran.
    pub fn assert_clean(&self, min: usize) {
        eprintln!("{}", self.summary());
        assert!(
            self.failures.is_empty(),
            "{}: {} finding(s):\n\n{}",
            self.target,
            self.findings(),
            self.failures.join("\n\n")
        );
        assert!(self.inputs >= min, "{}: only {} inputs (want {min})", self.target, self.inputs);
    }
}
