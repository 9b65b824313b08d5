//! The registry of diagnostic codes: every code alpine-rs emits, with its severity, what it
//! means for the exit status, a title and an explanation (`alpine-rs explain CODE`, in the style
//! of `rustc --explain`). The tables are per area; a test checks that every code emitted in the
//! sources is registered and every registered code is emitted somewhere or marked reserved.

mod backend;
mod batch;
mod front;
mod optimize;
mod run;
mod verify;

use crate::diag::Severity;

/// What a diagnostic of a code means for the exit status of the command that reports it
/// (the project-wide rule: 0 success; 1 the tool worked but the answer is no; 2 bad input or
/// usage; 3 could not decide).
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

/// Every table, by area.
pub static TABLES: &[(&str, &[Code])] = &[
    ("front end and annotations", front::CODES),
    ("optimizations", optimize::CODES),
    ("batch plans", batch::CODES),
    ("verification", verify::CODES),
    ("execution and validation", run::CODES),
    ("backend and input/output", backend::CODES),
];

/// Every registered code.
pub fn all() -> impl Iterator<Item = &'static Code> {
    TABLES.iter().flat_map(|(_, t)| t.iter())
}

/// The entry of a code, if registered.
pub fn lookup(code: &str) -> Option<&'static Code> {
    all().find(|c| c.code == code)
}
