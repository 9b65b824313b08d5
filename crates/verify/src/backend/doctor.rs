//! `alpine-rs backend doctor`: every component with path, version and hash, and a smoke test;
//! `--clear-cache` empties the result cache.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cuda::doctor_component;
use super::discover::{
    find_java, find_javac, find_silicon, find_z3, installed_driver, BackendConfig, Origin,
};
use super::fsutil::{sha256_file, sha256_hex};
use super::install::silicon_version;
use super::layout::{cache_dir_with, process_env, CacheLayout, EnvLookup, Manifest};
use super::{BackendError, DRIVER_SOURCE, NAGINI_VERSION};
use crate::silicon::{RunMode, Verdict};

// ------------------------------------------------------------------------------------------------
// Doctor

/// One line of `alpine-rs backend doctor`.
#[derive(Debug, Clone)]
pub struct ComponentStatus {
    pub component: &'static str,
    pub path: Option<PathBuf>,
    pub version: Option<String>,
    pub sha256: Option<String>,
    /// `None` when the component is usable, else what is wrong and how to fix it.
    pub problem: Option<String>,
    /// Where it was found, or other remarks.
    pub note: String,
}

#[derive(Debug, Clone)]
pub struct DoctorReport {
    pub cache_dir: Option<PathBuf>,
    pub components: Vec<ComponentStatus>,
    /// The mode verification would use.
    pub mode: Option<RunMode>,
    /// The end-to-end run of a trivial file, when every component is usable.
    pub smoke: Option<(Verdict, Duration)>,
    pub warnings: Vec<String>,
}

impl DoctorReport {
    /// Everything needed is present and the trivial file verified.
    pub fn ok(&self) -> bool {
        self.components.iter().all(|c| c.problem.is_none() || c.component == "javac")
            && matches!(self.smoke, Some((Verdict::Verified, _)))
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cache_dir {
            Some(d) => writeln!(f, "cache       {}", d.display())?,
            None => writeln!(f, "cache       (none: {})", BackendError::NoCacheDir)?,
        }
        for c in &self.components {
            let path = c.path.as_ref().map_or_else(|| "-".to_string(), |p| p.display().to_string());
            write!(f, "{:<11} {path}", c.component)?;
            if let Some(v) = &c.version {
                write!(f, "  [{v}]")?;
            }
            if !c.note.is_empty() {
                write!(f, "  ({})", c.note)?;
            }
            writeln!(f)?;
            if let Some(s) = &c.sha256 {
                writeln!(f, "            sha256 {s}")?;
            }
            if let Some(p) = &c.problem {
                writeln!(f, "            problem: {p}")?;
            }
        }
        if let Some(m) = self.mode {
            writeln!(f, "mode        {m}")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        match &self.smoke {
            Some((v, t)) => writeln!(f, "smoke test  {} in {:.2} s", v.summary(), t.as_secs_f64())?,
            None => writeln!(f, "smoke test  not run (a component is missing)")?,
        }
        write!(f, "{}", if self.ok() { "OK" } else { "NOT OK" })
    }
}

/// `alpine-rs backend doctor`: each component with path, version and hash, then a trivial `.vpr`
/// verified end to end. Never fails: problems are reported in the result.
pub fn doctor(cfg: &BackendConfig) -> DoctorReport {
    doctor_with_env(cfg, &process_env)
}

pub fn doctor_with_env(cfg: &BackendConfig, env: EnvLookup) -> DoctorReport {
    doctor_with(cfg, false, env)
}

/// The doctor, with the CUDA toolchain required (`doctor --cuda`) or only reported.
pub fn doctor_with(cfg: &BackendConfig, cuda_required: bool, env: EnvLookup) -> DoctorReport {
    let mut components = Vec::new();
    let mut warnings = Vec::new();
    let layout = match cache_dir_with(cfg.cache_dir.as_deref(), env) {
        Ok(d) => CacheLayout::new(d),
        Err(_) => {
            return DoctorReport { cache_dir: None, components, mode: None, smoke: None, warnings }
        }
    };
    let manifest = Manifest::load(&layout);

    let java = find_java(env);
    components.push(match &java {
        Ok(j) => ComponentStatus {
            component: "java",
            path: Some(j.path.clone()),
            version: Some(j.version.clone()),
            sha256: None,
            problem: None,
            note: j.origin.to_string(),
        },
        Err(e) => missing("java", e),
    });

    let silicon = find_silicon(&layout, &manifest, env);
    components.push(match &silicon {
        Ok((s, w)) => {
            warnings.extend(w.iter().cloned());
            let version = match (&java, &manifest.silicon_version) {
                (_, Some(v)) if s.origin == Origin::Cache => Some(v.clone()),
                (Ok(j), _) => silicon_version(j, &s.path),
                _ => None,
            };
            ComponentStatus {
                component: "silicon",
                path: Some(s.path.clone()),
                version,
                sha256: Some(s.sha256.clone()),
                problem: None,
                note: format!(
                    "{}{}",
                    s.origin,
                    if s.pinned {
                        format!(", pinned nagini {NAGINI_VERSION} jar")
                    } else {
                        ", NOT the pinned jar".into()
                    }
                ),
            }
        }
        Err(e) => missing("silicon", e),
    });

    let z3 = find_z3(&layout, env);
    components.push(match &z3 {
        Ok(z) => ComponentStatus {
            component: "z3",
            path: Some(z.path.clone()),
            version: Some(z.version_line.clone()),
            sha256: sha256_file(&z.path).ok(),
            problem: None,
            note: z.origin.to_string(),
        },
        Err(e) => missing("z3", e),
    });
    components.push(super::libz3_status());

    if let Ok(j) = &java {
        components.push(match find_javac(j, env) {
            Some(c) => ComponentStatus {
                component: "javac",
                path: Some(c.program.clone()),
                version: None,
                sha256: None,
                problem: None,
                note: c.origin.to_string(),
            },
            None => ComponentStatus {
                component: "javac",
                path: None,
                version: None,
                sha256: None,
                problem: Some("not found (optional): only the per-file mode is available".into()),
                note: String::new(),
            },
        });
    }
    if let Ok((s, _)) = &silicon {
        let d = installed_driver(&layout, s);
        components.push(ComponentStatus {
            component: "driver",
            path: d.as_ref().map(|d| d.class_dir.clone()),
            version: None,
            sha256: Some(sha256_hex(DRIVER_SOURCE.as_bytes())),
            problem: None,
            note: if d.is_some() {
                "compiled, up to date".into()
            } else {
                "not compiled, out of date or damaged (compiled on first use when a compiler exists)"
                    .into()
            },
        });
    }
    let cds = layout.cds_archive();
    components.push(ComponentStatus {
        component: "appcds",
        path: cds.is_file().then(|| cds.clone()),
        version: None,
        sha256: None,
        problem: None,
        note: if cds.is_file() {
            "used in per-file mode".into()
        } else {
            "absent (optional)".into()
        },
    });

    let (nvcc, nvcc_warnings) = doctor_component(Some(&layout.root), env, cuda_required);
    components.push(nvcc);
    warnings.extend(nvcc_warnings);

    let mut mode = None;
    let mut smoke = None;
    if java.is_ok() && silicon.is_ok() && z3.is_ok() {
        let smoke_cfg = BackendConfig { result_cache: false, ..cfg.clone() };
        match crate::silicon::Backend::discover_with_env(&smoke_cfg, env) {
            Ok(b) => {
                mode = Some(b.mode());
                warnings.extend(b.warnings().iter().cloned());
                let out = b.verify_text(crate::silicon::TRIVIAL_VPR, 120);
                smoke = Some((out.verdict, out.elapsed));
            }
            Err(e) => warnings.push(e.to_string()),
        }
    }
    DoctorReport { cache_dir: Some(layout.root), components, mode, smoke, warnings }
}

fn missing(component: &'static str, e: &BackendError) -> ComponentStatus {
    ComponentStatus {
        component,
        path: None,
        version: None,
        sha256: None,
        problem: Some(e.to_string()),
        note: String::new(),
    }
}

/// `alpine-rs backend doctor --clear-cache`: removes `<cache>/results`. Returns the number of
/// entries removed.
pub fn clear_result_cache(cache_dir: Option<&Path>) -> Result<usize, BackendError> {
    let layout = CacheLayout::new(cache_dir_with(cache_dir, &process_env)?);
    let dir = layout.results_dir();
    if !dir.exists() {
        return Ok(0);
    }
    let mut n = 0;
    for sub in fs::read_dir(&dir)
        .map_err(|e| BackendError::io(format!("cannot list {}", dir.display()), e))?
        .flatten()
    {
        if let Ok(entries) = fs::read_dir(sub.path()) {
            n += entries.count();
        }
    }
    fs::remove_dir_all(&dir)
        .map_err(|e| BackendError::io(format!("cannot remove {}", dir.display()), e))?;
    Ok(n)
}
