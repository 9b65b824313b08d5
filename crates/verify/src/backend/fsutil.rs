//! The install lock and small file utilities: atomic writes, self-removing temporary
//! directories, sha256 hashing, executable lookup on `PATH`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::layout::{CacheLayout, EnvLookup};
use super::BackendError;

// ------------------------------------------------------------------------------------------------
// Lock

/// `<cache>/backend/.lock`, held for the whole install (design §2.1).
pub struct InstallLock {
    lock: fd_lock::RwLock<File>,
    path: PathBuf,
}

impl InstallLock {
    pub fn open(layout: &CacheLayout) -> Result<Self, BackendError> {
        let path = layout.lock_file();
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| BackendError::io(format!("cannot open {}", path.display()), e))?;
        Ok(InstallLock { lock: fd_lock::RwLock::new(file), path })
    }

    pub fn acquire(
        &mut self,
        progress: &mut dyn FnMut(&str),
    ) -> Result<fd_lock::RwLockWriteGuard<'_, File>, BackendError> {
        let path = self.path.clone();
        let err = |e| BackendError::io(format!("cannot lock {}", path.display()), e);
        // Two steps so that the user learns why nothing happens while another install runs.
        let busy = match self.lock.try_write() {
            Ok(_) => false,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
            Err(e) => return Err(err(e)),
        };
        if busy {
            progress("waiting for another alpine-rs install to finish…");
        }
        self.lock.write().map_err(err)
    }
}

// ------------------------------------------------------------------------------------------------
// Small file utilities

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) fn unique_suffix() -> String {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{t}", std::process::id())
}

/// Writes `bytes` to `dest` atomically: a temporary file in the same directory, fsync, rename.
/// Readers see either the old file or the complete new one, never a partial one.
pub fn atomic_write(dest: &Path, bytes: &[u8]) -> Result<(), BackendError> {
    atomic_write_with(dest, false, |w| w.write_all(bytes))
}

pub(super) fn atomic_write_with<T>(
    dest: &Path,
    executable: bool,
    fill: impl FnOnce(&mut io::BufWriter<&mut File>) -> io::Result<T>,
) -> Result<T, BackendError> {
    let dir = dest.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| BackendError::io(format!("cannot create {}", dir.display()), e))?;
    let name = dest.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp-{}", unique_suffix()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        let value = {
            let mut w = io::BufWriter::new(&mut file);
            let v = fill(&mut w)?;
            w.flush()?;
            v
        };
        if executable {
            set_executable(&file)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dest)?;
        Ok(value)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        BackendError::io(format!("cannot write {}", dest.display()), e)
    })
}

#[cfg(unix)]
pub(super) fn set_executable(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
pub(super) fn set_executable(_file: &File) -> io::Result<()> {
    Ok(())
}

/// A directory removed (with its contents) when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new_in(parent: &Path, tag: &str) -> Result<TempDir, BackendError> {
        let p = parent.join(format!(".{tag}-{}", unique_suffix()));
        fs::create_dir_all(&p)
            .map_err(|e| BackendError::io(format!("cannot create {}", p.display()), e))?;
        Ok(TempDir(p))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(super) fn which(name: &str, env: EnvLookup) -> Option<PathBuf> {
    let path = env("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

pub(super) fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Test helper: an environment from a map, for [`EnvLookup`] parameters.
pub fn env_from_map(map: BTreeMap<String, OsString>) -> impl Fn(&str) -> Option<OsString> {
    move |k| map.get(k).cloned()
}
