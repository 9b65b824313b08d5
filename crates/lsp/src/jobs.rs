//! Long jobs the server runs beside the editor: `alpine-rs suggest` and `alpine-rs run --cost`
//! as child processes of the server's own executable (as rust-analyzer runs `cargo check`), on a
//! snapshot of the document. A child can be killed when a newer edit makes its answer stale, and
//! an interpreter that runs away cannot take the server with it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A flag a job polls; set, the job kills its child and returns.
pub type Cancel = Arc<AtomicBool>;

/// Set a job's flag: the job stops.
pub fn cancel(c: &Cancel) {
    c.store(true, Ordering::Relaxed);
}

/// A fresh flag for the job of `key`, cancelling the job it replaces.
pub fn replace<K: std::hash::Hash + Eq>(
    jobs: &mut std::collections::HashMap<K, Cancel>,
    key: K,
) -> Cancel {
    let fresh: Cancel = Arc::new(AtomicBool::new(false));
    if let Some(old) = jobs.insert(key, Arc::clone(&fresh)) {
        cancel(&old);
    }
    fresh
}

/// Runs `exe ARGS… SNAPSHOT` where SNAPSHOT is a temporary file holding `text` under a name
/// with `ext`, and reads its stdout as JSON. `Err` says why there is no answer.
pub fn run_json(
    exe: &Path,
    args: &[&str],
    text: &str,
    ext: &str,
    cancel: &Cancel,
    limit: Duration,
) -> Result<serde_json::Value, String> {
    let snap = Snapshot::new(text, ext).map_err(|e| format!("cannot write a snapshot: {e}"))?;
    let mut child = Command::new(exe)
        .args(args)
        .arg(&snap.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    // Read stdout on a thread, so that a child with a large answer never blocks on its pipe.
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let t0 = Instant::now();
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if cancel.load(Ordering::Relaxed) || t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(if cancel.load(Ordering::Relaxed) {
                "cancelled".into()
            } else {
                format!("no answer within {} s", limit.as_secs())
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stdout = reader.join().unwrap_or_default();
    serde_json::from_str(&stdout).map_err(|e| format!("unreadable output: {e}"))
}

/// A temporary copy of a document, removed on drop.
struct Snapshot(PathBuf);

impl Snapshot {
    fn new(text: &str, ext: &str) -> std::io::Result<Snapshot> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!("alpine-lsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("snapshot-{n}.{ext}"));
        std::fs::write(&path, text)?;
        Ok(Snapshot(path))
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        // The server's folder goes with its last snapshot (a removal fails while others live).
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The extension of a document's name (`pvl` when it has none).
pub fn extension(name: &str) -> &str {
    Path::new(name).extension().and_then(|e| e.to_str()).unwrap_or("pvl")
}
