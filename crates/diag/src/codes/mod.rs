//! The registry of diagnostic codes: every code alpine-rs emits, with its severity, what it
//! means for the exit status, a title and an explanation (`alpine-rs explain CODE`, in the style
//! of `rustc --explain`).
//!
//! The registry is written as Markdown, one file per area (`crates/diag/src/codes/*.md`), compiled into the
//! binary and read on first use. Each code is a section:
//!
//! ```text
//! ## A603: the kernels run over different thread ranges
//! - severity: error
//! - exit: no
//! - reserved            (only for a documented code nothing emits yet)
//!
//! The explanation, with a small example and what makes the diagnostic go away.
//! ```
//!
//! A test (tests/codes.rs) checks that every code emitted in the sources is registered and every
//! registered code is emitted somewhere or marked reserved.

use crate::Severity;
use std::sync::OnceLock;

/// The areas' files, in the order `explain --list` shows them.
static SOURCES: &[&str] = &[
    include_str!("front.md"),
    include_str!("optimize.md"),
    include_str!("batch.md"),
    include_str!("verify.md"),
    include_str!("run.md"),
    include_str!("backend.md"),
];

/// What a diagnostic of a code means for the exit status of the command that reports it (the
/// project-wide rule: 0 success; 1 the tool worked but the answer is no; 2 bad input or usage;
/// 3 could not decide).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExitClass {
    /// Information only (warnings and notes): the exit status does not change.
    None,
    /// The answer is no: a refusal, a failed verification, different behaviour (exit 1).
    No,
    /// Bad input or usage, an unsupported construct (exit 2).
    BadInput,
    /// Could not decide: a timeout, a missing backend, an inconclusive run (exit 3).
    Undecided,
    /// A bug in alpine-rs (exit 3, reported as such).
    Internal,
}

impl ExitClass {
    /// The exit status it stands for.
    pub fn code(self) -> u8 {
        match self {
            ExitClass::None => 0,
            ExitClass::No => 1,
            ExitClass::BadInput => 2,
            ExitClass::Undecided | ExitClass::Internal => 3,
        }
    }

    fn parse(s: &str) -> Option<ExitClass> {
        Some(match s {
            "none" => ExitClass::None,
            "no" => ExitClass::No,
            "bad-input" => ExitClass::BadInput,
            "undecided" => ExitClass::Undecided,
            "internal" => ExitClass::Internal,
            _ => return None,
        })
    }
}

/// The exit status of a combined result, the one rule of every subcommand: the most severe of
/// two statuses, in the order bad input (2) over a definite no (1) over could not decide (3)
/// over success (0). Bad input comes first because nothing else about it is meaningful until
/// the input is fixed; a definite "no" beats "could not decide" because it is an answer.
pub fn combine(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        3 => 1,
        1 => 2,
        _ => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// The exit status that `diagnostics` call for: [`combine`] over the registered class of each
/// error (an unregistered code counts as an internal error; warnings and notes count for
/// nothing).
pub fn exit_code<'d>(diagnostics: impl IntoIterator<Item = &'d crate::Diagnostic>) -> u8 {
    diagnostics
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| lookup(&d.code).map_or(3, |c| c.exit.code()))
        .fold(0, combine)
}

/// One registered code.
#[derive(Debug)]
pub struct Code {
    pub code: &'static str,
    pub severity: Severity,
    pub exit: ExitClass,
    /// One line: what happened.
    pub title: &'static str,
    /// Markdown: what it means, a small example, and what makes it go away.
    pub explanation: &'static str,
    /// Registered for a documented use that nothing emits yet.
    pub reserved: bool,
}

/// One area's codes.
#[derive(Debug)]
pub struct Area {
    pub name: &'static str,
    pub codes: Vec<Code>,
    /// Lines of the file that are not part of a well-formed section (empty for a sound file).
    pub malformed: Vec<&'static str>,
}

/// Every area, in order.
pub fn tables() -> &'static [Area] {
    static TABLES: OnceLock<Vec<Area>> = OnceLock::new();
    TABLES.get_or_init(|| SOURCES.iter().map(|s| parse(s)).collect())
}

/// Every registered code.
pub fn all() -> impl Iterator<Item = &'static Code> {
    tables().iter().flat_map(|a| a.codes.iter())
}

/// The entry of a code, if registered.
pub fn lookup(code: &str) -> Option<&'static Code> {
    all().find(|c| c.code == code)
}

/// Read one area file; a section whose header or attributes do not read is reported in
/// `malformed` instead of being guessed.
fn parse(text: &'static str) -> Area {
    let mut area = Area { name: "", codes: Vec::new(), malformed: Vec::new() };
    let mut rest = text;
    if let Some(first) = rest.lines().next() {
        if let Some(name) = first.strip_prefix("# ") {
            area.name = name.trim();
            rest = &rest[first.len()..];
        }
    }
    for section in rest.split("\n## ").skip(1) {
        let (header, body) = section.split_once('\n').unwrap_or((section, ""));
        let Some((code, title)) = header.split_once(": ") else {
            area.malformed.push(header);
            continue;
        };
        let mut severity = None;
        let mut exit = None;
        let mut reserved = false;
        let mut lines = body.split_inclusive('\n');
        let mut used = 0;
        for line in lines.by_ref() {
            let Some(attr) = line.trim_end().strip_prefix("- ") else {
                break;
            };
            used += line.len();
            match attr.split_once(": ") {
                Some(("severity", s)) => {
                    severity = match s {
                        "error" => Some(Severity::Error),
                        "warning" => Some(Severity::Warning),
                        "note" => Some(Severity::Note),
                        _ => None,
                    }
                }
                Some(("exit", e)) => exit = ExitClass::parse(e),
                None if attr == "reserved" => reserved = true,
                _ => area.malformed.push(line),
            }
        }
        match (severity, exit) {
            (Some(severity), Some(exit)) => area.codes.push(Code {
                code: code.trim(),
                severity,
                exit,
                title: title.trim(),
                explanation: body[used..].trim(),
                reserved,
            }),
            _ => area.malformed.push(header),
        }
    }
    area
}
