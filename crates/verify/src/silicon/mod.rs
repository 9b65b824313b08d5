//! Running Viper's Silicon and parsing its results (design `shared/design/verification.md` §3),
//! plus the result cache (§8.3).
//!
//! Two modes:
//! - **batch** (default): one long-lived JVM running the embedded `AlpineSilicon` driver, which
//!   verifies one file per request, several requests at once, and answers with tab-separated
//!   protocol lines (§3.2). This pays Silicon's start-up and JIT warm-up once.
//! - **per-file** (fallback when no Java compiler exists): one `java -jar silicon.jar` per file,
//!   whose human-readable output is parsed (§3.1). It has no error ids and no reason positions;
//!   ids are recovered from the message texts of the pinned Silicon.
//!
//! - `verdict`: the result types ([`RunMode`], [`ViperPos`], [`SiliconError`], [`Verdict`],
//!   [`VerifyOutcome`]);
//! - `runner`: [`Backend`], which runs files in either mode and consults the result cache;
//! - `driver`: the batch driver's JVM and its line protocol;
//! - `process`: processes run with a deadline, killed with their process group;
//! - `output`: parsing of the per-file output, and error ids recovered from message texts;
//! - `cache`: the result cache (§8.3).
//!
//! Everything public is re-exported, so paths are `silicon::Item` whatever the file.

mod cache;
mod driver;
mod output;
mod process;
mod runner;
#[cfg(test)]
mod tests;
mod verdict;

pub use output::{infer_full_id, parse_cli_output, CliResult};
pub use process::run_with_deadline;
pub use runner::per_file_jvm_args;
pub use runner::Backend;
pub use verdict::{RunMode, SiliconError, Verdict, VerifyOutcome, ViperPos};

/// A method that verifies; used by `doctor` and for the AppCDS archive.
pub const TRIVIAL_VPR: &str = "method alpine_trivial(x: Int) returns (y: Int)\n  \
                               ensures y == x + 1\n{\n  y := x + 1\n}\n";
