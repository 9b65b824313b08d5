//! A minimal per-file Silicon runner (`verification.md` §3.1), used until the shared backend
//! (`crate::verify`) provides the batch driver.

use super::errors::{parse_output, SiliconOutcome};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("Viper/Silicon is not installed. Run 'alpine-rs backend install' (needs pip and network access to PyPI), or set ALPINE_SILICON_JAR.")]
    NoSilicon,
    #[error("No z3 executable found. Run 'alpine-rs backend install', install the 'z3' package, or set ALPINE_Z3.")]
    NoZ3,
    #[error("could not run java: {0}. Install a JDK/JRE 17 or set ALPINE_JAVA.")]
    NoJava(String),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Paths of the backend components.
#[derive(Clone, Debug)]
pub struct Backend {
    pub java: PathBuf,
    pub silicon: PathBuf,
    pub z3: PathBuf,
}

fn cache_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("ALPINE_RS_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("alpine-rs"));
    }
    std::env::var("HOME")
        .ok()
        .map(|h| PathBuf::from(h).join(".cache").join("alpine-rs"))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl Backend {
    /// Find java, silicon.jar and z3 (§2.2 discovery order).
    pub fn discover() -> Result<Backend, BackendError> {
        let java = std::env::var("ALPINE_JAVA")
            .ok()
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var("JAVA_HOME")
                    .ok()
                    .map(|h| PathBuf::from(h).join("bin").join("java"))
                    .filter(|p| p.is_file())
            })
            .or_else(|| on_path("java"))
            .ok_or_else(|| BackendError::NoJava("not found".into()))?;
        let silicon = std::env::var("ALPINE_SILICON_JAR")
            .ok()
            .map(PathBuf::from)
            .or_else(|| cache_dir().map(|c| c.join("backend").join("silicon.jar")))
            .filter(|p| p.is_file())
            .ok_or(BackendError::NoSilicon)?;
        let z3 = std::env::var("ALPINE_Z3")
            .ok()
            .map(PathBuf::from)
            .or_else(|| on_path("z3"))
            .or_else(|| cache_dir().map(|c| c.join("backend").join("z3").join("z3")))
            .filter(|p| p.is_file())
            .ok_or(BackendError::NoZ3)?;
        Ok(Backend { java, silicon, z3 })
    }

    /// Verify one `.vpr` file. `None` means the wall-clock limit was hit.
    pub fn verify_file(&self, file: &Path, timeout_s: u64) -> Result<Option<SiliconOutcome>, BackendError> {
        let mut cmd = Command::new(&self.java);
        cmd.arg("-Xss32m")
            .arg("-XX:+UseSerialGC")
            .arg("-XX:TieredStopAtLevel=1")
            .arg("-jar")
            .arg(&self.silicon)
            .arg("--z3Exe")
            .arg(&self.z3);
        if timeout_s > 0 {
            cmd.arg("--timeout").arg(timeout_s.to_string());
        }
        cmd.arg(file).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| BackendError::NoJava(e.to_string()))?;
        let mut stdout = child.stdout.take();
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(o) = stdout.as_mut() {
                let _ = o.read_to_string(&mut s);
            }
            s
        });
        let limit = Duration::from_secs(if timeout_s > 0 { timeout_s + 10 } else { 24 * 3600 });
        let start = Instant::now();
        loop {
            if child.try_wait()?.is_some() {
                break;
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = reader.join().unwrap_or_default();
        Ok(Some(parse_output(&out)))
    }
}
