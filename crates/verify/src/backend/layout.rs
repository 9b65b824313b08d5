//! The environment, the cache directory and its file layout (design §2.1), and the install
//! manifest with its file records.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::fsutil::atomic_write;
use super::{BackendError, MANIFEST_FORMAT};

// ------------------------------------------------------------------------------------------------
// Environment and cache directory

/// Reads an environment variable. Discovery takes this as a parameter so that tests can supply
/// their own environment without mutating the process's (which would race between test threads).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The alpine-rs cache directory (design §2.1): `explicit` (the CLI's `--cache-dir`), else
/// `$ALPINE_RS_CACHE`, else `$XDG_CACHE_HOME/alpine-rs`, else the platform cache directory.
pub fn cache_dir(explicit: Option<&Path>) -> Result<PathBuf, BackendError> {
    cache_dir_with(explicit, &process_env)
}

pub fn cache_dir_with(explicit: Option<&Path>, env: EnvLookup) -> Result<PathBuf, BackendError> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env("ALPINE_RS_CACHE") {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = env("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(p).join("alpine-rs"));
    }
    dirs::cache_dir().map(|d| d.join("alpine-rs")).ok_or(BackendError::NoCacheDir)
}

/// The file layout under the cache directory (design §2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLayout {
    pub root: PathBuf,
}

impl CacheLayout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        CacheLayout { root: root.into() }
    }
    pub fn backend_dir(&self) -> PathBuf {
        self.root.join("backend")
    }
    pub fn manifest(&self) -> PathBuf {
        self.backend_dir().join("manifest.json")
    }
    pub fn silicon_jar(&self) -> PathBuf {
        self.backend_dir().join("silicon.jar")
    }
    pub fn z3(&self) -> PathBuf {
        self.backend_dir().join("z3").join("z3")
    }
    /// The Z3 library that alpine-rs's own checks open when the system has none (one of the
    /// places crates/z3-sys looks).
    pub fn libz3(&self) -> PathBuf {
        self.backend_dir().join("z3").join("libz3.so")
    }
    /// The compiled driver of this alpine-rs: one folder per driver source, so that binaries
    /// with different drivers sharing a cache (two checkouts, an upgrade while an older binary
    /// runs) neither recompile each other's driver on every run nor delete the classes of a JVM
    /// that is starting.
    pub fn driver_dir(&self) -> PathBuf {
        let hash = super::fsutil::sha256_hex(super::DRIVER_SOURCE.as_bytes());
        self.backend_dir().join(format!("driver-{}", &hash[..12]))
    }
    pub fn cds_archive(&self) -> PathBuf {
        self.backend_dir().join("silicon.jsa")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.backend_dir().join(".lock")
    }
    /// The CUDA toolchain (`backend install --cuda`), in the layout of NVIDIA's wheels.
    pub fn cuda_dir(&self) -> PathBuf {
        self.root.join("cuda")
    }
    pub fn results_dir(&self) -> PathBuf {
        self.root.join("results")
    }
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }
}

// ------------------------------------------------------------------------------------------------
// Manifest

/// `<cache>/backend/manifest.json`: what `install` put there, with hashes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
// A field missing from an older manifest reads as its default.
#[serde(default)]
pub struct Manifest {
    pub format: u32,
    pub nagini_version: Option<String>,
    pub nagini_wheel_sha256: Option<String>,
    pub silicon: Option<FileRecord>,
    /// First line of `silicon.jar --help`, e.g. `Silicon 1.1-SNAPSHOT (3e24b7a8+)`.
    pub silicon_version: Option<String>,
    /// Only present when install extracted z3 from the wheel.
    pub z3: Option<FileRecord>,
    pub z3_version: Option<String>,
    pub java_path: Option<PathBuf>,
    pub java_version: Option<String>,
    /// The AppCDS archive; its `sha256` field records "<jar sha256> <java version>", the inputs
    /// it is valid for, rather than the archive's own hash.
    pub cds_archive: Option<FileRecord>,
}

/// A file with its hash, plus size and mtime so that the hash need not be recomputed as long as
/// the file is untouched (hashing the 37 MB jar on every run would cost ~0.1–0.3 s).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    pub path: PathBuf,
    pub sha256: String,
    pub size: u64,
    #[serde(default)]
    pub mtime: Option<(u64, u32)>,
}

impl FileRecord {
    pub(super) fn of(path: &Path, sha256: String) -> io::Result<FileRecord> {
        let meta = fs::metadata(path)?;
        Ok(FileRecord {
            path: path.to_path_buf(),
            sha256,
            size: meta.len(),
            mtime: mtime_of(&meta),
        })
    }

    /// Whether `path` still looks like the recorded file (same path, size and mtime).
    pub(super) fn still_matches(&self, path: &Path) -> bool {
        let Ok(meta) = fs::metadata(path) else {
            return false;
        };
        self.path == path
            && self.size == meta.len()
            && self.mtime.is_some()
            && self.mtime == mtime_of(&meta)
    }
}

fn mtime_of(meta: &fs::Metadata) -> Option<(u64, u32)> {
    let d = meta.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    Some((d.as_secs(), d.subsec_nanos()))
}

impl Manifest {
    /// Reads the manifest. A missing or unreadable one counts as empty: everything is then
    /// re-checked (and re-hashed), which is slower but never wrong.
    pub fn load(layout: &CacheLayout) -> Manifest {
        fs::read(layout.manifest())
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            .filter(|m| m.format == MANIFEST_FORMAT)
            .unwrap_or_default()
    }

    pub fn store(&self, layout: &CacheLayout) -> Result<(), BackendError> {
        let mut m = self.clone();
        m.format = MANIFEST_FORMAT;
        let text = serde_json::to_vec_pretty(&m)
            .map_err(|e| BackendError::io("cannot serialize the manifest", e.into()))?;
        atomic_write(&layout.manifest(), &text)
    }
}
