//! Provisioning of the Viper back end: cache directory, discovery of Java, Silicon and Z3, the
//! install manifest, `alpine-rs backend install` and `alpine-rs backend doctor`.
//!
//! Design: `shared/design/verification.md` §2 (provisioning) and §8.3 (result cache location).
//! Running Silicon and parsing its output live in [`super::silicon`].
//!
//! - `layout`: the environment, the cache directory and its layout, the install manifest;
//! - `discover`: the components (Java, Silicon, z3, javac, the batch driver) and how they are
//!   found, the driver compiled on demand;
//! - `install`: `alpine-rs backend install` (pip download, wheel extraction, AppCDS archive);
//! - `doctor`: `alpine-rs backend doctor` and `--clear-cache`;
//! - `cuda`: the CUDA toolchain for compile checks (`backend install --cuda`, nvcc from PyPI
//!   wheels) and compiling `.cu` files to PTX;
//! - `fsutil`: the install lock, atomic writes, temporary directories, hashing, `PATH` lookup.
//!
//! The pins and [`BackendError`] are here; everything public is re-exported, so paths are
//! `backend::Item` whatever the file.

pub mod cuda;
mod discover;
mod doctor;
mod fsutil;
mod install;
mod layout;
mod libz3;
#[cfg(test)]
mod tests;

pub use discover::{
    compile_driver, discover_components, find_java, find_javac, find_silicon, find_z3,
    installed_driver, parse_java_version, parse_z3_version, BackendConfig, Components, DriverInfo,
    JavaInfo, JavacInfo, Origin, SiliconInfo, Z3Info,
};
pub use doctor::{
    clear_result_cache, doctor, doctor_with, doctor_with_env, ComponentStatus, DoctorReport,
};
pub use fsutil::{atomic_write, hex, last_lines, TempDir};
pub use fsutil::{env_from_map, sha256_file, sha256_hex};
pub use install::{
    install, install_with_env, silicon_version, InstallOptions, InstallReport, Step,
};
pub use layout::process_env;
pub use layout::{cache_dir, cache_dir_with, CacheLayout, EnvLookup, FileRecord, Manifest};
pub use libz3::{install_libz3, libz3_status, Libz3Report};

use std::io;
use std::path::PathBuf;

// ------------------------------------------------------------------------------------------------
// Pins (design §2.3)

/// The nagini release whose wheel carries the Silicon jar. 1.3.x is refused by the index.
pub const NAGINI_VERSION: &str = "1.2.0";
/// sha256 of `nagini-1.2.0-py3-none-any.whl`.
pub const NAGINI_WHEEL_SHA256: &str =
    "284c29fbfa19f08327dceb134a276d988f97fa37b63dd3fe476b4cde1c09be78";
/// sha256 of `silicon.jar` as extracted from the pinned wheel (Silicon 1.1-SNAPSHOT (3e24b7a8+)).
pub const SILICON_JAR_SHA256: &str =
    "bece2bc20f4579f4440125c680ad002ba204a19f84625e3042907762ab412461";
/// Size of the pinned wheel, for the progress message only.
const NAGINI_WHEEL_MB: u32 = 68;
/// Member of the nagini wheel that is the Silicon jar.
pub const SILICON_JAR_MEMBER: &str = "nagini_translation/resources/backends/silicon.jar";
/// The z3-solver release nagini pins; only downloaded when no suitable z3 is found.
pub const Z3_SOLVER_VERSION: &str = "4.8.7.0";
/// sha256 of the `z3` binary inside `z3_solver-4.8.7.0-py2.py3-none-manylinux1_x86_64.whl`.
/// Other platforms get other wheels, so a mismatch there is expected and not reported.
const Z3_4870_LINUX_X64_SHA256: &str =
    "7723e0a7e522fa04876159814fac5ed8de04ec8067ddf20a5c282abe378926e0";
/// The z3-solver release whose `libz3.so` `backend install` puts in the cache when the system
/// has no Z3 library: 4.8.12, the Z3 of Debian 12's `libz3-4`, with which the tests' expected
/// counterexamples were recorded (4.8.7's library gives up on some non-linear queries that
/// 4.8.12 answers). Independent of the z3 executable Silicon runs.
pub const LIBZ3_SOLVER_VERSION: &str = "4.8.12.0";
/// sha256 of `z3/lib/libz3.so` inside `z3_solver-4.8.12.0-py2.py3-none-manylinux1_x86_64.whl`.
const LIBZ3_48120_LINUX_X64_SHA256: &str =
    "888f6910b063e8561720d034719330f45fd7efd00218ac7ac205a3161f167548";
/// Oldest accepted Java major version.
pub const MIN_JAVA_MAJOR: u32 = 17;
/// Oldest accepted z3 (major, minor).
pub const MIN_Z3: (u32, u32) = (4, 8);

/// The batch driver, compiled at install time (design §3.2).
pub const DRIVER_SOURCE: &str = include_str!("../AlpineSilicon.java");
pub const DRIVER_CLASS: &str = "AlpineSilicon";

const MANIFEST_FORMAT: u32 = 1;

// ------------------------------------------------------------------------------------------------
// Errors

/// Everything that can keep the back end from being provisioned or started. Each message says what
/// is missing and how to fix it (design §2.4); the CLI maps all of them to exit code 3.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(
        "Java {MIN_JAVA_MAJOR} or newer is required to run the Viper verifier (found: {found}). \
         Install a JDK/JRE {MIN_JAVA_MAJOR} or set ALPINE_JAVA."
    )]
    Java { found: String },

    #[error(
        "Viper/Silicon is not installed. Run 'alpine-rs backend install' (needs pip and network \
         access to PyPI), or set ALPINE_SILICON_JAR."
    )]
    SiliconMissing,

    #[error("cannot read the Silicon jar {path} ({origin}): {source}")]
    SiliconUnreadable { path: PathBuf, origin: String, source: io::Error },

    #[error(
        "the installed silicon.jar at {path} does not match its manifest (sha256 {actual}, \
         expected {expected}). Run 'alpine-rs backend install' to repair it."
    )]
    SiliconCorrupt { path: PathBuf, actual: String, expected: String },

    #[error("could not download {requirement} with pip ({detail}). {hint}")]
    Pip { requirement: String, detail: String, hint: String },

    #[error(
        "No z3 executable found. Run 'alpine-rs backend install', install the 'z3' package, or \
         set ALPINE_Z3."
    )]
    Z3Missing,

    #[error("z3 at {path} reports version {version}; {}.{} or newer is required.", MIN_Z3.0, MIN_Z3.1)]
    Z3TooOld { path: PathBuf, version: String },

    /// The z3 that `install` extracted into the cache does not run or does not say its version:
    /// damaged (truncated, overwritten), not too old, since install checked it.
    #[error(
        "the installed z3 at {path} is damaged: {detail}. Run 'alpine-rs backend install' to \
         repair it."
    )]
    Z3Damaged { path: PathBuf, detail: String },

    /// Neither the system nor the cache has a Z3 library that opens, and `ALPINE_RS_LIBZ3`
    /// names one that does not (an explicit choice is reported, not replaced by a download).
    #[error("{detail}")]
    Libz3 { detail: String },

    #[error("Silicon could not start z3 at {path}.")]
    Z3CannotStart { path: PathBuf },

    #[error("{wheel} has no member {member}; is it the right wheel ({expected})?")]
    WheelMember { wheel: PathBuf, member: String, expected: String },

    #[error("cannot read the wheel {path}: {source}")]
    Zip { path: PathBuf, source: zip::result::ZipError },

    #[error(
        "the batch driver is not available ({reason}). Install a JDK {MIN_JAVA_MAJOR} (javac) and \
         run 'alpine-rs backend install', or use the per-file mode."
    )]
    DriverUnavailable { reason: String },

    #[error(
        "cannot determine a cache directory (no home directory). Set ALPINE_RS_CACHE or pass \
         --cache-dir."
    )]
    NoCacheDir,

    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
}

impl BackendError {
    /// Exit code of the CLI for this error (design §1: backend missing or crashed).
    pub fn exit_code(&self) -> i32 {
        3
    }

    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        BackendError::Io { context: context.into(), source }
    }
}
