//! The result cache (design §8.3): definite verdicts stored under `<cache>/results`, keyed by the
//! Viper text, the Silicon jar, the z3 version, the options and a salt.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::verdict::{SiliconError, Verdict};
use crate::backend::{self, hex, BackendConfig, BackendError, CacheLayout, Components};

// ------------------------------------------------------------------------------------------------
// Result cache (§8.3)

/// `<cache>/results/ab/<sha256>.json`. Only definite results (verified, failed) are stored.
pub(super) struct ResultCache {
    dir: PathBuf,
    /// Everything but the text that determines the result: salt (encoder version), jar hash, z3
    /// version, options.
    key_prefix: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct CachedResult {
    status: String,
    errors: Vec<SiliconError>,
    ms: u64,
}

impl ResultCache {
    pub(super) fn new(c: &Components, cfg: &BackendConfig) -> ResultCache {
        let mut p = Vec::new();
        for part in [
            "alpine-rs result cache v1",
            &cfg.cache_salt,
            &c.silicon.sha256,
            &c.z3.version_line,
            &cfg.silicon_args.join("\u{1f}"),
        ] {
            p.extend_from_slice(part.as_bytes());
            p.push(0);
        }
        ResultCache { dir: CacheLayout::new(c.layout.root.clone()).results_dir(), key_prefix: p }
    }

    pub(super) fn key(&self, text: &str) -> String {
        let mut h = Sha256::new();
        h.update(&self.key_prefix);
        h.update(text.as_bytes());
        hex(&h.finalize())
    }

    pub(super) fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    pub(super) fn get(&self, key: &str) -> Option<(Verdict, u64)> {
        let bytes = fs::read(self.path(key)).ok()?;
        let r: CachedResult = serde_json::from_slice(&bytes).ok()?;
        match r.status.as_str() {
            "verified" => Some((Verdict::Verified, r.ms)),
            "failed" if !r.errors.is_empty() => Some((Verdict::Failed(r.errors), r.ms)),
            _ => None,
        }
    }

    pub(super) fn put(&self, key: &str, verdict: &Verdict, ms: u64) -> Result<(), BackendError> {
        let (status, errors) = match verdict {
            Verdict::Verified => ("verified", Vec::new()),
            // Internal errors are kept out: the .vpr is kept for debugging and the user will rerun.
            Verdict::Failed(e) if !e.iter().any(SiliconError::is_internal) => ("failed", e.clone()),
            _ => return Ok(()),
        };
        let bytes = serde_json::to_vec(&CachedResult { status: status.into(), errors, ms })
            .map_err(|e| BackendError::io("cannot serialize a cache entry", e.into()))?;
        backend::atomic_write(&self.path(key), &bytes)
    }
}
