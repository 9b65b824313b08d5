//! The result types: how Silicon is run, Viper positions, Silicon's errors, the verdict on a
//! file and the outcome of one verification.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

// ------------------------------------------------------------------------------------------------
// Result types

/// How Silicon is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunMode {
    /// Batch when the driver is available, else per-file.
    Auto,
    /// One JVM for many files (§3.2); an error if the driver cannot be compiled.
    Batch,
    /// One JVM per file (§3.1).
    PerFile,
}

impl fmt::Display for RunMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunMode::Auto => "auto",
            RunMode::Batch => "batch (AlpineSilicon driver)",
            RunMode::PerFile => "per-file (java -jar silicon.jar)",
        })
    }
}

/// A Viper source range as Silicon prints it: 1-based lines and columns, end column exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ViperPos {
    pub l1: u32,
    pub c1: u32,
    pub l2: u32,
    pub c2: u32,
}

impl ViperPos {
    pub fn new(l1: u32, c1: u32, l2: u32, c2: u32) -> Self {
        ViperPos { l1, c1, l2, c2 }
    }

    /// The key of the encoder's position map (design §4.1).
    pub fn as_tuple(&self) -> (u32, u32, u32, u32) {
        (self.l1, self.c1, self.l2, self.c2)
    }

    /// Parses `file@l.c--l.c` or `file@l.c` (a point: end = start); `?` and `<no position>` give
    /// `None`. The file name is dropped: every position refers to the verified file.
    pub fn parse(s: &str) -> Option<ViperPos> {
        let (_, range) = s.rsplit_once('@')?;
        let (start, end) = match range.split_once("--") {
            Some((a, b)) => (a, Some(b)),
            None => (range, None),
        };
        let lc = |t: &str| -> Option<(u32, u32)> {
            let (l, c) = t.trim().split_once('.')?;
            Some((l.parse().ok()?, c.parse().ok()?))
        };
        let (l1, c1) = lc(start)?;
        let (l2, c2) = match end {
            Some(e) => lc(e)?,
            None => (l1, c1),
        };
        Some(ViperPos { l1, c1, l2, c2 })
    }
}

impl fmt::Display for ViperPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}--{}.{}", self.l1, self.c1, self.l2, self.c2)
    }
}

/// One error reported by Silicon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiliconError {
    /// `error:reason` for verification errors, e.g. `assignment.failed:insufficient.permission`;
    /// a single id for others (`parser.error`, `typechecker.error`, `consistency.error`, …).
    #[serde(rename = "fullId")]
    pub full_id: String,
    /// Silicon's readable message, without id and position.
    pub message: String,
    /// Position of the error node.
    pub pos: Option<ViperPos>,
    /// Position of the reason's node (batch mode only; per-file output does not print it).
    #[serde(rename = "reasonPos")]
    pub reason_pos: Option<ViperPos>,
}

impl SiliconError {
    /// The error part of the id, e.g. `assignment.failed`.
    pub fn error_id(&self) -> &str {
        self.full_id.split_once(':').map_or(self.full_id.as_str(), |(e, _)| e)
    }

    /// The reason part of the id, e.g. `insufficient.permission`.
    pub fn reason_id(&self) -> Option<&str> {
        self.full_id.split_once(':').map(|(_, r)| r)
    }

    /// A verification error (`error:reason`), as opposed to a parse, type, or consistency error.
    pub fn is_verification_error(&self) -> bool {
        self.full_id.contains(':')
    }

    /// An error that means the generated Viper is malformed: an encoder bug, reported as
    /// E-INTERNAL (design §3.1, §4.2).
    pub fn is_internal(&self) -> bool {
        !self.is_verification_error()
            || self.message.contains("Parse error")
            || self.message.contains("is not a valid Trigger")
    }
}

/// The verdict on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Verified,
    /// Verification errors, or parse/type/consistency errors (see [`SiliconError::is_internal`]).
    Failed(Vec<SiliconError>),
    /// Silicon's `--timeout` or the wall-clock limit (timeout + 10 s) was hit: inconclusive.
    Timeout,
    /// The back end itself failed (could not start z3, JVM died, …).
    Crash(String),
}

impl Verdict {
    /// One line for humans.
    pub fn summary(&self) -> String {
        match self {
            Verdict::Verified => "verified".into(),
            Verdict::Failed(e) => {
                format!("failed ({} error{})", e.len(), if e.len() == 1 { "" } else { "s" })
            }
            Verdict::Timeout => "timeout".into(),
            Verdict::Crash(m) => format!("backend crash: {m}"),
        }
    }

    /// The CLI exit code for this verdict alone (design §1): internal errors and crashes are 3.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Verified => 0,
            Verdict::Failed(errs) if errs.iter().any(SiliconError::is_internal) => 3,
            Verdict::Failed(_) => 1,
            Verdict::Timeout => 4,
            Verdict::Crash(_) => 3,
        }
    }
}

/// The result of verifying one file or text.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    /// The verified file; `None` for [`Backend::verify_text`](super::Backend::verify_text).
    pub file: Option<PathBuf>,
    pub verdict: Verdict,
    /// Wall-clock time of this call (a cache hit is fast).
    pub elapsed: Duration,
    /// Silicon's own time in ms as reported (batch mode), or the run time (per-file mode); for a
    /// cache hit, the time of the original run.
    pub silicon_ms: u64,
    /// Served from the result cache.
    pub cached: bool,
}
