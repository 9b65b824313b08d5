//! The Z3 library that alpine-rs's own checks open (crates/z3-sys): the system's when it has
//! one, else `libz3.so` from the z3-solver wheel, extracted into `<cache>/backend/z3/libz3.so`,
//! one of the places z3-sys looks. Step 5 of `backend install`, or alone with `--libz3`.

use super::doctor::ComponentStatus;
use super::install::{extract_member, pip_download};
use super::{cache_dir_with, BackendError, CacheLayout, EnvLookup, Step, TempDir};
use super::{LIBZ3_48120_LINUX_X64_SHA256, LIBZ3_SOLVER_VERSION};
use std::path::{Path, PathBuf};

/// Where the library is, whether this run put it there, and what to tell the user about it
/// (a hash that is not the pinned one).
#[derive(Debug, Clone)]
pub struct Libz3Report {
    pub path: PathBuf,
    pub step: Step,
    pub warnings: Vec<String>,
}

/// The member of the z3-solver wheel that holds the library.
const WHEEL_MEMBER: &str = "z3/lib/libz3.so";

/// Provisions the library if no candidate opens, from the z3-solver wheel
/// [`LIBZ3_SOLVER_VERSION`], into the cache z3-sys looks in first (`ALPINE_RS_CACHE`, else
/// `$XDG_CACHE_HOME/alpine-rs`, else `~/.cache/alpine-rs`). A `--cache-dir` is not used for
/// it: a library put there would never be found.
pub fn install_libz3(
    python: &Path,
    progress: &mut dyn FnMut(&str),
    env: EnvLookup,
) -> Result<Libz3Report, BackendError> {
    let version = LIBZ3_SOLVER_VERSION;
    let tried = match z3_sys::origin() {
        Ok(from) => {
            progress(&format!("Z3 library found: {from}"));
            return Ok(Libz3Report {
                path: PathBuf::from(from),
                step: Step::Kept,
                warnings: Vec::new(),
            });
        }
        Err(e) => e,
    };
    if env("ALPINE_RS_LIBZ3").is_some() {
        return Err(BackendError::Libz3 { detail: tried.to_string() });
    }
    let layout = CacheLayout::new(cache_dir_with(None, env)?);
    let dest = layout.libz3();
    let dir = layout.backend_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| BackendError::io(format!("cannot create {}", dir.display()), e))?;
    let tmp = TempDir::new_in(&dir, "download")?;
    progress(&format!("no Z3 library found; downloading z3-solver {version} (33 MB) with pip…"));
    let hint =
        "Install the system's Z3 library (e.g. apt-get install libz3-4), or set ALPINE_RS_LIBZ3.";
    let wheel =
        pip_download(python, &format!("z3-solver=={version}"), "z3_solver-", tmp.path(), hint)?;
    progress("extracting libz3.so…");
    let sha = extract_member(&wheel, |n| n == WHEEL_MEMBER, &dest, false)?.ok_or_else(|| {
        BackendError::WheelMember {
            wheel: wheel.clone(),
            member: WHEEL_MEMBER.into(),
            expected: format!("z3-solver {version}"),
        }
    })?;
    let mut warnings = Vec::new();
    // Other platforms get other wheels: only Linux x86-64's library is pinned.
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) && sha != LIBZ3_48120_LINUX_X64_SHA256
    {
        warnings.push(format!(
            "the extracted libz3.so has sha256 {sha}, expected {LIBZ3_48120_LINUX_X64_SHA256}"
        ));
    }
    // SAFETY: libz3's initialisers only set up its own globals; the handle is closed at once.
    if let Err(e) = unsafe { libloading::Library::new(&dest) } {
        return Err(BackendError::Libz3 {
            detail: format!("the extracted {} does not open: {e}", dest.display()),
        });
    }
    Ok(Libz3Report { path: dest, step: Step::Downloaded, warnings })
}

/// The doctor's line for the library.
pub fn libz3_status() -> ComponentStatus {
    let (path, problem, note) = match z3_sys::origin() {
        Ok(from) => {
            let cached = from.contains('/');
            let note = if cached { "opened from this path" } else { "the system's" };
            (Some(PathBuf::from(from)), None, note.to_string())
        }
        Err(e) => (
            None,
            Some(format!(
                "{e}\nRun 'alpine-rs backend install --libz3', install the system's Z3 library, \
                 or set ALPINE_RS_LIBZ3."
            )),
            String::new(),
        ),
    };
    ComponentStatus { component: "libz3", path, version: None, sha256: None, problem, note }
}
