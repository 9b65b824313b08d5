//! Provisioning of the Viper back end: cache directory, discovery of Java, Silicon and Z3, the
//! install manifest, `alpine-rs backend install` and `alpine-rs backend doctor`.
//!
//! Design: `shared/design/verification.md` §2 (provisioning) and §8.3 (result cache location).
//! Running Silicon and parsing its output live in [`super::silicon`].

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::silicon::{RunMode, Verdict};

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
/// Oldest accepted Java major version.
pub const MIN_JAVA_MAJOR: u32 = 17;
/// Oldest accepted z3 (major, minor).
pub const MIN_Z3: (u32, u32) = (4, 8);

/// The batch driver, compiled at install time (design §3.2).
pub(crate) const DRIVER_SOURCE: &str = include_str!("AlpineSilicon.java");
pub(crate) const DRIVER_CLASS: &str = "AlpineSilicon";

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
    SiliconUnreadable {
        path: PathBuf,
        origin: String,
        source: io::Error,
    },

    #[error(
        "the installed silicon.jar at {path} does not match its manifest (sha256 {actual}, \
         expected {expected}). Run 'alpine-rs backend install' to repair it."
    )]
    SiliconCorrupt {
        path: PathBuf,
        actual: String,
        expected: String,
    },

    #[error("could not download {requirement} with pip ({detail}). {hint}")]
    Pip {
        requirement: String,
        detail: String,
        hint: String,
    },

    #[error(
        "No z3 executable found. Run 'alpine-rs backend install', install the 'z3' package, or \
         set ALPINE_Z3."
    )]
    Z3Missing,

    #[error("z3 at {path} reports version {version}; {}.{} or newer is required.", MIN_Z3.0, MIN_Z3.1)]
    Z3TooOld { path: PathBuf, version: String },

    #[error("Silicon could not start z3 at {path}.")]
    Z3CannotStart { path: PathBuf },

    #[error("{wheel} has no member {member}; is it the right wheel ({expected})?")]
    WheelMember {
        wheel: PathBuf,
        member: String,
        expected: String,
    },

    #[error("cannot read the wheel {path}: {source}")]
    Zip {
        path: PathBuf,
        source: zip::result::ZipError,
    },

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

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        BackendError::Io {
            context: context.into(),
            source,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Environment and cache directory

/// Reads an environment variable. Discovery takes this as a parameter so that tests can supply
/// their own environment without mutating the process's (which would race between test threads).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

pub(crate) fn process_env(name: &str) -> Option<OsString> {
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
    dirs::cache_dir()
        .map(|d| d.join("alpine-rs"))
        .ok_or(BackendError::NoCacheDir)
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
    pub fn driver_dir(&self) -> PathBuf {
        self.backend_dir().join("driver")
    }
    pub fn cds_archive(&self) -> PathBuf {
        self.backend_dir().join("silicon.jsa")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.backend_dir().join(".lock")
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
pub struct Manifest {
    pub format: u32,
    #[serde(default)]
    pub nagini_version: Option<String>,
    #[serde(default)]
    pub nagini_wheel_sha256: Option<String>,
    #[serde(default)]
    pub silicon: Option<FileRecord>,
    /// First line of `silicon.jar --help`, e.g. `Silicon 1.1-SNAPSHOT (3e24b7a8+)`.
    #[serde(default)]
    pub silicon_version: Option<String>,
    /// Only present when install extracted z3 from the wheel.
    #[serde(default)]
    pub z3: Option<FileRecord>,
    #[serde(default)]
    pub z3_version: Option<String>,
    #[serde(default)]
    pub java_path: Option<PathBuf>,
    #[serde(default)]
    pub java_version: Option<String>,
    /// The AppCDS archive; its `sha256` field records "<jar sha256> <java version>", the inputs
    /// it is valid for, rather than the archive's own hash.
    #[serde(default)]
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
    fn of(path: &Path, sha256: String) -> io::Result<FileRecord> {
        let meta = fs::metadata(path)?;
        Ok(FileRecord {
            path: path.to_path_buf(),
            sha256,
            size: meta.len(),
            mtime: mtime_of(&meta),
        })
    }

    /// Whether `path` still looks like the recorded file (same path, size and mtime).
    fn still_matches(&self, path: &Path) -> bool {
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
    let d = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
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

// ------------------------------------------------------------------------------------------------
// Components

/// Where a component was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An environment variable (its name).
    Env(&'static str),
    /// `$JAVA_HOME/bin/java`.
    JavaHome,
    /// Next to the chosen `java`.
    NextToJava,
    /// The executable search path.
    Path,
    /// The alpine-rs cache directory.
    Cache,
    /// The JVM's own `jdk.compiler` module (`java -m jdk.compiler/com.sun.tools.javac.Main`).
    JvmModule,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Env(v) => write!(f, "${v}"),
            Origin::JavaHome => f.write_str("$JAVA_HOME"),
            Origin::NextToJava => f.write_str("next to java"),
            Origin::Path => f.write_str("PATH"),
            Origin::Cache => f.write_str("cache"),
            Origin::JvmModule => f.write_str("the JVM's jdk.compiler module"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaInfo {
    pub path: PathBuf,
    /// The quoted version of `java -version`, e.g. `17.0.15`.
    pub version: String,
    pub major: u32,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiliconInfo {
    pub path: PathBuf,
    pub sha256: String,
    /// Whether the hash equals the pinned nagini 1.2.0 jar.
    pub pinned: bool,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Z3Info {
    pub path: PathBuf,
    /// The whole first line of `z3 --version`, e.g. `Z3 version 4.8.7 - 64 bit`. It is part of
    /// the result-cache key.
    pub version_line: String,
    pub version: (u32, u32, u32),
    pub origin: Origin,
}

/// How the driver is compiled: a `javac` executable, or the JVM's compiler module (present in
/// Debian's `openjdk-17-jre-headless`, which has no `javac`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavacInfo {
    pub program: PathBuf,
    /// Arguments that precede the javac arguments (for the module form).
    pub prefix_args: Vec<String>,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverInfo {
    /// Directory holding `AlpineSilicon.class`; goes on the class path after silicon.jar.
    pub class_dir: PathBuf,
}

/// Knobs for [`Backend::discover`](super::silicon::Backend::discover).
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// `--cache-dir`; overrides the environment (§2.1).
    pub cache_dir: Option<PathBuf>,
    /// Batch (driver), per-file, or automatic (batch when the driver is available).
    pub mode: RunMode,
    /// Look up and store results in `<cache>/results` (§8.3). `--no-cache` turns it off.
    pub result_cache: bool,
    /// Extra input to the result-cache key, e.g. the encoder version (§8.3).
    pub cache_salt: String,
    /// Silicon's `--numberOfParallelVerifiers`; `None` = number of available cores (§3.1).
    pub parallel_verifiers: Option<usize>,
    /// Extra Silicon options, passed to every run; also part of the result-cache key.
    pub silicon_args: Vec<String>,
    /// Use the AppCDS archive when it exists (§3.1).
    pub use_cds: bool,
    /// Tune the driver JVM for many files (full tiered JIT) instead of start-up (C1 only +
    /// AppCDS). Measured on a busy 2-core machine, C1 + AppCDS halves the CPU time up to ~10
    /// small files and breaks even around 20–30; set this for corpus runs.
    pub throughput: bool,
    /// Added to the timeout for the wall-clock limit, after which the JVM is killed (§3.1: 10 s).
    pub grace: Duration,
    /// Extra wall-clock allowance for a fresh JVM (start-up and JIT warm-up: 4–8 s on the
    /// reference machine, 40 s seen on a busy one), so that a cold start is not a timeout.
    pub startup_grace: Duration,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            cache_dir: None,
            mode: RunMode::Auto,
            result_cache: true,
            cache_salt: String::new(),
            parallel_verifiers: None,
            silicon_args: Vec::new(),
            use_cds: true,
            throughput: false,
            grace: Duration::from_secs(10),
            startup_grace: Duration::from_secs(60),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Discovery (design §2.2)

/// Finds Java ≥ 17: `$ALPINE_JAVA` (must be acceptable if set), `$JAVA_HOME/bin/java`, `java` on
/// PATH.
pub fn find_java(env: EnvLookup) -> Result<JavaInfo, BackendError> {
    if let Some(p) = env("ALPINE_JAVA") {
        let path = PathBuf::from(p);
        return match probe_java(&path) {
            Ok((version, major)) if major >= MIN_JAVA_MAJOR => Ok(JavaInfo {
                path,
                version,
                major,
                origin: Origin::Env("ALPINE_JAVA"),
            }),
            Ok((version, _)) => Err(BackendError::Java {
                found: format!("{version} at {} from $ALPINE_JAVA", path.display()),
            }),
            Err(e) => Err(BackendError::Java {
                found: format!("$ALPINE_JAVA={}: {e}", path.display()),
            }),
        };
    }
    let mut candidates = Vec::new();
    if let Some(home) = env("JAVA_HOME") {
        candidates.push((
            PathBuf::from(home).join("bin").join("java"),
            Origin::JavaHome,
        ));
    }
    if let Some(p) = which("java", env) {
        candidates.push((p, Origin::Path));
    }
    let mut found = Vec::new();
    for (path, origin) in candidates {
        match probe_java(&path) {
            Ok((version, major)) if major >= MIN_JAVA_MAJOR => {
                return Ok(JavaInfo {
                    path,
                    version,
                    major,
                    origin,
                })
            }
            Ok((version, _)) => found.push(format!("{version} at {}", path.display())),
            Err(e) => found.push(format!("{} ({e})", path.display())),
        }
    }
    Err(BackendError::Java {
        found: if found.is_empty() {
            "no java on PATH, JAVA_HOME unset".to_string()
        } else {
            found.join("; ")
        },
    })
}

/// Runs `java -version` and returns (version string, major).
fn probe_java(path: &Path) -> Result<(String, u32), String> {
    let out = Command::new(path)
        .arg("-version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    // `java -version` writes to stderr; some wrappers use stdout.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    parse_java_version(&text).ok_or_else(|| {
        let first = text.lines().next().unwrap_or("").trim();
        format!("unparsable `java -version` output: {first:?}")
    })
}

/// Parses `openjdk version "17.0.15" 2025-04-15` → ("17.0.15", 17), and the pre-9 scheme
/// `java version "1.8.0_292"` → ("1.8.0_292", 8).
pub fn parse_java_version(text: &str) -> Option<(String, u32)> {
    let line = text.lines().find(|l| l.contains(" version \""))?;
    let start = line.find('"')? + 1;
    let len = line[start..].find('"')?;
    let version = &line[start..start + len];
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let first: u32 = parts.next()?.parse().ok()?;
    let major = if first == 1 {
        parts.next()?.parse().ok()?
    } else {
        first
    };
    Some((version.to_string(), major))
}

/// Finds the Silicon jar: `$ALPINE_SILICON_JAR` (user-supplied: a hash mismatch is a warning),
/// else `<cache>/backend/silicon.jar` (a mismatch with the manifest is an error).
/// Returns the jar and warnings.
pub fn find_silicon(
    layout: &CacheLayout,
    manifest: &Manifest,
    env: EnvLookup,
) -> Result<(SiliconInfo, Vec<String>), BackendError> {
    let mut warnings = Vec::new();
    if let Some(p) = env("ALPINE_SILICON_JAR") {
        let path = PathBuf::from(p);
        let sha256 = sha256_file(&path).map_err(|source| BackendError::SiliconUnreadable {
            path: path.clone(),
            origin: "$ALPINE_SILICON_JAR".into(),
            source,
        })?;
        let pinned = sha256 == SILICON_JAR_SHA256;
        if !pinned {
            warnings.push(format!(
                "$ALPINE_SILICON_JAR={} has sha256 {sha256}, not the pinned nagini {NAGINI_VERSION} \
                 jar ({SILICON_JAR_SHA256}); error ids and messages may differ",
                path.display()
            ));
        }
        return Ok((
            SiliconInfo {
                path,
                sha256,
                pinned,
                origin: Origin::Env("ALPINE_SILICON_JAR"),
            },
            warnings,
        ));
    }
    let path = layout.silicon_jar();
    if !path.is_file() {
        return Err(BackendError::SiliconMissing);
    }
    let sha256 = match &manifest.silicon {
        Some(rec) if rec.still_matches(&path) => rec.sha256.clone(),
        _ => sha256_file(&path).map_err(|source| BackendError::SiliconUnreadable {
            path: path.clone(),
            origin: "cache".into(),
            source,
        })?,
    };
    // The expected hash is the manifest's (install may have pinned another nagini version), else
    // the built-in pin.
    let expected = manifest
        .silicon
        .as_ref()
        .map(|r| r.sha256.clone())
        .unwrap_or_else(|| SILICON_JAR_SHA256.to_string());
    if sha256 != expected {
        return Err(BackendError::SiliconCorrupt {
            path,
            actual: sha256,
            expected,
        });
    }
    let pinned = sha256 == SILICON_JAR_SHA256;
    if !pinned {
        warnings.push(format!(
            "the installed silicon.jar is not the pinned nagini {NAGINI_VERSION} jar; error ids \
             and messages may differ"
        ));
    }
    Ok((
        SiliconInfo {
            path,
            sha256,
            pinned,
            origin: Origin::Cache,
        },
        warnings,
    ))
}

/// Finds z3 ≥ 4.8: `$ALPINE_Z3` (must be acceptable if set), `z3` on PATH, `<cache>/backend/z3/z3`.
pub fn find_z3(layout: &CacheLayout, env: EnvLookup) -> Result<Z3Info, BackendError> {
    if let Some(p) = env("ALPINE_Z3") {
        let path = PathBuf::from(p);
        return check_z3(&path, Origin::Env("ALPINE_Z3"));
    }
    let mut first_err = None;
    let candidates = which("z3", env)
        .map(|p| (p, Origin::Path))
        .into_iter()
        .chain(std::iter::once((layout.z3(), Origin::Cache)));
    for (path, origin) in candidates {
        if !path.is_file() {
            continue;
        }
        match check_z3(&path, origin) {
            Ok(info) => return Ok(info),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or(BackendError::Z3Missing))
}

fn check_z3(path: &Path, origin: Origin) -> Result<Z3Info, BackendError> {
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    let text = match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(BackendError::Z3Missing),
        Err(e) => {
            return Err(BackendError::Z3TooOld {
                path: path.to_path_buf(),
                version: format!("nothing (cannot run it: {e})"),
            })
        }
    };
    let line = text.lines().next().unwrap_or("").trim().to_string();
    match parse_z3_version(&line) {
        Some(v) if (v.0, v.1) >= MIN_Z3 => Ok(Z3Info {
            path: path.to_path_buf(),
            version_line: line,
            version: v,
            origin,
        }),
        _ => Err(BackendError::Z3TooOld {
            path: path.to_path_buf(),
            version: if line.is_empty() {
                "nothing".into()
            } else {
                format!("{line:?}")
            },
        }),
    }
}

/// Parses `Z3 version 4.8.12 - 64 bit` → (4, 8, 12).
pub fn parse_z3_version(line: &str) -> Option<(u32, u32, u32)> {
    let rest = line.trim().strip_prefix("Z3 version ")?;
    let ver = rest.split_whitespace().next()?;
    let mut it = ver.split('.').map(|p| p.parse::<u32>());
    let major = it.next()?.ok()?;
    let minor = it.next()?.ok()?;
    let patch = it.next().and_then(|r| r.ok()).unwrap_or(0);
    Some((major, minor, patch))
}

/// Finds a Java compiler: `javac` next to the chosen `java` (also after resolving symlinks), on
/// PATH, or the JVM's `jdk.compiler` module. `None` means per-file mode only.
pub fn find_javac(java: &JavaInfo, env: EnvLookup) -> Option<JavacInfo> {
    let mut next_to = Vec::new();
    if let Some(dir) = java.path.parent() {
        next_to.push(dir.join("javac"));
    }
    if let Ok(real) = fs::canonicalize(&java.path) {
        if let Some(dir) = real.parent() {
            next_to.push(dir.join("javac"));
        }
    }
    for p in next_to {
        if is_executable(&p) {
            return Some(JavacInfo {
                program: p,
                prefix_args: Vec::new(),
                origin: Origin::NextToJava,
            });
        }
    }
    if let Some(p) = which("javac", env) {
        return Some(JavacInfo {
            program: p,
            prefix_args: Vec::new(),
            origin: Origin::Path,
        });
    }
    // A JRE without javac may still carry the compiler module (Debian's jre-headless does).
    let ok = Command::new(&java.path)
        .args(["--describe-module", "jdk.compiler"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then(|| JavacInfo {
        program: java.path.clone(),
        prefix_args: vec!["-m".into(), "jdk.compiler/com.sun.tools.javac.Main".into()],
        origin: Origin::JvmModule,
    })
}

/// Stamp written next to the compiled driver so that a changed driver source or jar triggers a
/// recompile.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct DriverStamp {
    source_sha256: String,
    jar_sha256: String,
}

const DRIVER_STAMP: &str = "alpine-driver.json";

fn expected_stamp(silicon: &SiliconInfo) -> DriverStamp {
    DriverStamp {
        source_sha256: sha256_hex(DRIVER_SOURCE.as_bytes()),
        jar_sha256: silicon.sha256.clone(),
    }
}

/// The compiled driver, if it is present and up to date.
pub fn installed_driver(layout: &CacheLayout, silicon: &SiliconInfo) -> Option<DriverInfo> {
    let dir = layout.driver_dir();
    let stamp: DriverStamp = fs::read(dir.join(DRIVER_STAMP))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())?;
    (stamp == expected_stamp(silicon) && dir.join(format!("{DRIVER_CLASS}.class")).is_file())
        .then_some(DriverInfo { class_dir: dir })
}

/// Compiles the embedded driver into `<cache>/backend/driver` (atomically: a fresh directory is
/// renamed into place). The caller holds the install lock.
pub fn compile_driver(
    layout: &CacheLayout,
    javac: &JavacInfo,
    silicon: &SiliconInfo,
) -> Result<DriverInfo, BackendError> {
    let backend = layout.backend_dir();
    let work = TempDir::new_in(&backend, "driver-build")?;
    let src = work.path().join(format!("{DRIVER_CLASS}.java"));
    fs::write(&src, DRIVER_SOURCE)
        .map_err(|e| BackendError::io(format!("cannot write {}", src.display()), e))?;
    let classes = work.path().join("classes");
    fs::create_dir_all(&classes)
        .map_err(|e| BackendError::io(format!("cannot create {}", classes.display()), e))?;
    let out = Command::new(&javac.program)
        .args(&javac.prefix_args)
        .args(["-nowarn", "-encoding", "UTF-8", "--release", "17", "-cp"])
        .arg(&silicon.path)
        .arg("-d")
        .arg(&classes)
        .arg(&src)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| BackendError::DriverUnavailable {
            reason: format!("cannot run {}: {e}", javac.program.display()),
        })?;
    if !out.status.success() {
        return Err(BackendError::DriverUnavailable {
            reason: format!(
                "{} failed ({}): {}",
                javac.program.display(),
                out.status,
                last_lines(&String::from_utf8_lossy(&out.stderr), 5)
            ),
        });
    }
    let stamp = serde_json::to_vec(&expected_stamp(silicon))
        .map_err(|e| BackendError::io("cannot serialize the driver stamp", e.into()))?;
    fs::write(classes.join(DRIVER_STAMP), stamp)
        .map_err(|e| BackendError::io("cannot write the driver stamp", e))?;
    let dest = layout.driver_dir();
    if dest.exists() {
        fs::remove_dir_all(&dest)
            .map_err(|e| BackendError::io(format!("cannot remove {}", dest.display()), e))?;
    }
    fs::rename(&classes, &dest)
        .map_err(|e| BackendError::io(format!("cannot create {}", dest.display()), e))?;
    Ok(DriverInfo { class_dir: dest })
}

/// Everything discovery found, before any process is started.
#[derive(Debug, Clone)]
pub struct Components {
    pub layout: CacheLayout,
    pub java: JavaInfo,
    pub silicon: SiliconInfo,
    pub z3: Z3Info,
    /// `None`: per-file mode only.
    pub driver: Option<DriverInfo>,
    /// The AppCDS archive, when present and enabled.
    pub cds_archive: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// Discovers all components (design §2.2). The driver is compiled on the spot when it is missing
/// or stale (e.g. after an alpine-rs upgrade) and a compiler is available; failing that, `Auto`
/// mode falls back to per-file mode with a warning, and `Batch` mode is an error.
pub fn discover_components(
    cfg: &BackendConfig,
    env: EnvLookup,
) -> Result<Components, BackendError> {
    let layout = CacheLayout::new(cache_dir_with(cfg.cache_dir.as_deref(), env)?);
    let manifest = Manifest::load(&layout);
    let java = find_java(env)?;
    let (silicon, mut warnings) = find_silicon(&layout, &manifest, env)?;
    let z3 = find_z3(&layout, env)?;
    let driver = if cfg.mode == RunMode::PerFile {
        None
    } else {
        match ensure_driver(&layout, &java, &silicon, env) {
            Ok(d) => Some(d),
            Err(e) if cfg.mode == RunMode::Batch => return Err(e),
            Err(e) => {
                warnings.push(format!("{e}; using the slower per-file mode"));
                None
            }
        }
    };
    let cds = layout.cds_archive();
    let cds_archive = (cfg.use_cds && cds.is_file()).then_some(cds);
    Ok(Components {
        layout,
        java,
        silicon,
        z3,
        driver,
        cds_archive,
        warnings,
    })
}

fn ensure_driver(
    layout: &CacheLayout,
    java: &JavaInfo,
    silicon: &SiliconInfo,
    env: EnvLookup,
) -> Result<DriverInfo, BackendError> {
    if let Some(d) = installed_driver(layout, silicon) {
        return Ok(d);
    }
    let javac = find_javac(java, env).ok_or_else(|| BackendError::DriverUnavailable {
        reason: "no javac and no jdk.compiler module".into(),
    })?;
    fs::create_dir_all(layout.backend_dir()).map_err(|e| {
        BackendError::io(
            format!("cannot create {}", layout.backend_dir().display()),
            e,
        )
    })?;
    let mut lock = InstallLock::open(layout)?;
    let _guard = lock.acquire(&mut |_| {})?;
    // Another process may have compiled it while we waited.
    if let Some(d) = installed_driver(layout, silicon) {
        return Ok(d);
    }
    compile_driver(layout, &javac, silicon)
}

// ------------------------------------------------------------------------------------------------
// Install (design §2.3)

#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--nagini`; only 1.2.0 has pinned hashes.
    pub nagini_version: String,
    /// `--z3`: the z3-solver wheel version, used only when no suitable z3 is found.
    pub z3_version: String,
    /// `--from-wheel`: a nagini wheel downloaded elsewhere (no pip, no network).
    pub from_wheel: Option<PathBuf>,
    /// The Python used for `python3 -m pip`.
    pub python: PathBuf,
    /// Compile the batch driver (needs javac or the jdk.compiler module).
    pub compile_driver: bool,
    /// Create the AppCDS archive for per-file mode (one Silicon run, a few seconds).
    pub create_cds: bool,
}

impl Default for InstallOptions {
    fn default() -> Self {
        InstallOptions {
            cache_dir: None,
            nagini_version: NAGINI_VERSION.into(),
            z3_version: Z3_SOLVER_VERSION.into(),
            from_wheel: None,
            python: PathBuf::from("python3"),
            compile_driver: true,
            create_cds: true,
        }
    }
}

/// What install did with one component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Already present with the right hash.
    Kept,
    /// Downloaded with pip and extracted.
    Downloaded,
    /// Extracted from the `--from-wheel` file.
    FromWheel,
    /// Built locally (driver, AppCDS archive).
    Built,
    /// Not needed (z3 found elsewhere) or not possible (no compiler).
    Skipped,
}

#[derive(Debug, Clone)]
pub struct InstallReport {
    pub cache_dir: PathBuf,
    pub silicon: PathBuf,
    pub silicon_sha256: String,
    pub silicon_step: Step,
    pub z3: PathBuf,
    pub z3_version: String,
    pub z3_step: Step,
    pub driver: Option<PathBuf>,
    pub driver_step: Step,
    pub cds_step: Step,
    /// Hash mismatches and skipped optional steps.
    pub warnings: Vec<String>,
    pub elapsed: Duration,
}

/// `alpine-rs backend install`: provisions Silicon (and z3 if none is found) into the cache
/// directory. Idempotent; concurrent installs are serialized by `<cache>/backend/.lock`.
/// `progress` receives one human-readable line per step (the CLI prints them on stderr).
pub fn install(
    opts: &InstallOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<InstallReport, BackendError> {
    install_with_env(opts, progress, &process_env)
}

pub fn install_with_env(
    opts: &InstallOptions,
    progress: &mut dyn FnMut(&str),
    env: EnvLookup,
) -> Result<InstallReport, BackendError> {
    let t0 = Instant::now();
    let layout = CacheLayout::new(cache_dir_with(opts.cache_dir.as_deref(), env)?);
    let backend = layout.backend_dir();
    fs::create_dir_all(&backend)
        .map_err(|e| BackendError::io(format!("cannot create {}", backend.display()), e))?;
    let mut lock = InstallLock::open(&layout)?;
    let _guard = lock.acquire(progress)?;
    let mut ctx = Installer {
        opts,
        env,
        manifest: Manifest::load(&layout),
        layout,
        progress,
        warnings: Vec::new(),
    };

    // Java is needed for the driver and the smoke run, not for the download; checking it first
    // reports a missing JDK before a 68 MB download.
    let java = find_java(env)?;
    ctx.say(&format!(
        "using java {} at {}",
        java.version,
        java.path.display()
    ));

    let (silicon, silicon_step) = ctx.silicon()?;
    // Stored now so that a failure in a later step does not lose the (expensive) jar.
    ctx.manifest.store(&ctx.layout)?;
    let (z3, z3_step) = ctx.z3()?;
    ctx.manifest.java_path = Some(java.path.clone());
    ctx.manifest.java_version = Some(java.version.clone());
    ctx.manifest.store(&ctx.layout)?;
    let (driver, driver_step) = ctx.driver(&java, &silicon);
    let cds_step = ctx.cds(&java, &silicon, &z3);
    if ctx.manifest.silicon_version.is_none() || silicon_step != Step::Kept {
        ctx.manifest.silicon_version = silicon_version(&java, &silicon.path);
    }
    ctx.manifest.store(&ctx.layout)?;
    ctx.say(&format!(
        "backend installed in {} ({:.1} s)",
        backend.display(),
        t0.elapsed().as_secs_f64()
    ));

    Ok(InstallReport {
        cache_dir: ctx.layout.root.clone(),
        silicon: silicon.path,
        silicon_sha256: silicon.sha256,
        silicon_step,
        z3: z3.path,
        z3_version: z3.version_line,
        z3_step,
        driver: driver.map(|d| d.class_dir),
        driver_step,
        cds_step,
        warnings: ctx.warnings,
        elapsed: t0.elapsed(),
    })
}

/// State shared by the install steps.
struct Installer<'a> {
    opts: &'a InstallOptions,
    env: EnvLookup<'a>,
    layout: CacheLayout,
    manifest: Manifest,
    progress: &'a mut dyn FnMut(&str),
    warnings: Vec<String>,
}

impl Installer<'_> {
    fn say(&mut self, line: &str) {
        (self.progress)(line);
    }

    fn warn(&mut self, msg: String) {
        (self.progress)(&format!("warning: {msg}"));
        self.warnings.push(msg);
    }

    fn pinned(&self) -> bool {
        self.opts.nagini_version == NAGINI_VERSION
    }

    /// Step 1: `silicon.jar` from the nagini wheel (pip, or `--from-wheel`).
    fn silicon(&mut self) -> Result<(SiliconInfo, Step), BackendError> {
        let jar = self.layout.silicon_jar();
        let expected = expected_jar_sha(self.opts, &self.manifest);
        let current = if jar.is_file() {
            match &self.manifest.silicon {
                Some(rec) if rec.still_matches(&jar) => Some(rec.sha256.clone()),
                _ => sha256_file(&jar).ok(),
            }
        } else {
            None
        };
        let (sha, step) = match (current, expected) {
            (Some(have), Some(want)) if have == want => {
                self.say("silicon.jar already installed (sha256 ok)");
                (have, Step::Kept)
            }
            _ => self.fetch_silicon(&jar)?,
        };
        self.manifest.nagini_version = Some(self.opts.nagini_version.clone());
        self.manifest.nagini_wheel_sha256 = self.pinned().then(|| NAGINI_WHEEL_SHA256.to_string());
        self.manifest.silicon = Some(
            FileRecord::of(&jar, sha.clone())
                .map_err(|e| BackendError::io(format!("cannot stat {}", jar.display()), e))?,
        );
        let info = SiliconInfo {
            path: jar,
            pinned: sha == SILICON_JAR_SHA256,
            sha256: sha,
            origin: Origin::Cache,
        };
        Ok((info, step))
    }

    fn fetch_silicon(&mut self, jar: &Path) -> Result<(String, Step), BackendError> {
        let tmp = TempDir::new_in(&self.layout.backend_dir(), "download")?;
        let version = self.opts.nagini_version.clone();
        let (wheel, step) = match &self.opts.from_wheel {
            Some(w) => {
                self.say(&format!("using the nagini wheel {}", w.display()));
                (w.clone(), Step::FromWheel)
            }
            None => {
                let size = if self.pinned() {
                    format!(" ({NAGINI_WHEEL_MB} MB)")
                } else {
                    String::new()
                };
                self.say(&format!("downloading nagini {version}{size} with pip…"));
                let hint = "Download the wheel elsewhere and run 'alpine-rs backend install \
                            --from-wheel FILE'.";
                let w = pip_download(
                    &self.opts.python,
                    &format!("nagini=={version}"),
                    "nagini-",
                    tmp.path(),
                    hint,
                )?;
                (w, Step::Downloaded)
            }
        };
        if self.pinned() {
            self.say("checking the wheel's sha256…");
            let wsha = sha256_file(&wheel)
                .map_err(|e| BackendError::io(format!("cannot read {}", wheel.display()), e))?;
            if wsha != NAGINI_WHEEL_SHA256 {
                self.warn(format!(
                    "{} has sha256 {wsha}, expected {NAGINI_WHEEL_SHA256} for nagini \
                     {NAGINI_VERSION}",
                    wheel.display()
                ));
            }
        }
        self.say("extracting silicon.jar…");
        let sha =
            extract_member(&wheel, |n| n == SILICON_JAR_MEMBER, jar, false)?.ok_or_else(|| {
                BackendError::WheelMember {
                    wheel: wheel.clone(),
                    member: SILICON_JAR_MEMBER.into(),
                    expected: format!("nagini-{version}"),
                }
            })?;
        if !self.pinned() {
            self.warn(format!(
                "no pinned hashes for nagini {version}; the jar was not checked"
            ));
        } else if sha != SILICON_JAR_SHA256 {
            self.warn(format!(
                "the extracted silicon.jar has sha256 {sha}, expected {SILICON_JAR_SHA256}"
            ));
        }
        Ok((sha, step))
    }

    /// Step 2: z3 from the z3-solver wheel, only if no suitable z3 is found.
    fn z3(&mut self) -> Result<(Z3Info, Step), BackendError> {
        match find_z3(&self.layout, self.env) {
            Ok(z) => {
                let what = if z.origin == Origin::Cache {
                    "already installed"
                } else {
                    "found"
                };
                self.say(&format!(
                    "z3 {what}: {} ({})",
                    z.path.display(),
                    z.version_line
                ));
                self.manifest.z3_version = Some(z.version_line.clone());
                return Ok((z, Step::Kept));
            }
            // An explicit choice that does not work is reported, not silently replaced.
            Err(e) if (self.env)("ALPINE_Z3").is_some() => return Err(e),
            Err(_) => {}
        }
        let tmp = TempDir::new_in(&self.layout.backend_dir(), "download")?;
        let version = self.opts.z3_version.clone();
        let size = if version == Z3_SOLVER_VERSION {
            " (19 MB)"
        } else {
            ""
        };
        self.say(&format!(
            "no suitable z3 found; downloading z3-solver {version}{size} with pip…"
        ));
        let hint = "Install the 'z3' package (e.g. apt-get install z3), or set ALPINE_Z3.";
        let wheel = pip_download(
            &self.opts.python,
            &format!("z3-solver=={version}"),
            "z3_solver-",
            tmp.path(),
            hint,
        )?;
        self.say("extracting z3…");
        let dest = self.layout.z3();
        let sha = extract_member(&wheel, is_z3_member, &dest, true)?.ok_or_else(|| {
            BackendError::WheelMember {
                wheel: wheel.clone(),
                member: "*.data/data/bin/z3".into(),
                expected: format!("z3-solver {version}"),
            }
        })?;
        if version == Z3_SOLVER_VERSION
            && cfg!(all(target_os = "linux", target_arch = "x86_64"))
            && sha != Z3_4870_LINUX_X64_SHA256
        {
            self.warn(format!(
                "the extracted z3 has sha256 {sha}, expected {Z3_4870_LINUX_X64_SHA256}"
            ));
        }
        let z = check_z3(&dest, Origin::Cache)?;
        self.manifest.z3 = Some(
            FileRecord::of(&dest, sha)
                .map_err(|e| BackendError::io(format!("cannot stat {}", dest.display()), e))?,
        );
        self.manifest.z3_version = Some(z.version_line.clone());
        Ok((z, Step::Downloaded))
    }

    /// Step 3: the batch driver. Optional: without a compiler, per-file mode is used.
    fn driver(&mut self, java: &JavaInfo, silicon: &SiliconInfo) -> (Option<DriverInfo>, Step) {
        if !self.opts.compile_driver {
            return (None, Step::Skipped);
        }
        if let Some(d) = installed_driver(&self.layout, silicon) {
            self.say("driver already compiled");
            return (Some(d), Step::Kept);
        }
        let Some(javac) = find_javac(java, self.env) else {
            self.warn(
                "no javac (and no jdk.compiler module) found: batch mode is unavailable, the \
                 slower per-file mode will be used"
                    .into(),
            );
            return (None, Step::Skipped);
        };
        self.say(&format!(
            "compiling the driver with {} ({})…",
            javac.program.display(),
            javac.origin
        ));
        match compile_driver(&self.layout, &javac, silicon) {
            Ok(d) => (Some(d), Step::Built),
            Err(e) => {
                self.warn(e.to_string());
                (None, Step::Skipped)
            }
        }
    }

    /// Step 4: the AppCDS archive for per-file mode; also a smoke test of the whole chain.
    fn cds(&mut self, java: &JavaInfo, silicon: &SiliconInfo, z3: &Z3Info) -> Step {
        if !self.opts.create_cds {
            return Step::Skipped;
        }
        let cds = self.layout.cds_archive();
        // The archive is only valid for the jar and JVM it was dumped from.
        let built_for = format!("{} {}", silicon.sha256, java.version);
        if let Some(rec) = &self.manifest.cds_archive {
            if rec.still_matches(&cds) && rec.sha256 == built_for {
                self.say("AppCDS archive already present");
                return Step::Kept;
            }
        }
        self.say("creating the AppCDS archive (one Silicon run)…");
        match create_cds_archive(&self.layout, java, silicon, z3) {
            Ok(()) => {
                self.manifest.cds_archive = FileRecord::of(&cds, built_for).ok();
                Step::Built
            }
            Err(msg) => {
                self.warn(format!(
                    "AppCDS archive not created ({msg}); per-file mode starts slower"
                ));
                self.manifest.cds_archive = None;
                Step::Skipped
            }
        }
    }
}

fn expected_jar_sha(opts: &InstallOptions, manifest: &Manifest) -> Option<String> {
    if opts.nagini_version == NAGINI_VERSION {
        return Some(SILICON_JAR_SHA256.to_string());
    }
    // Unpinned version: trust what a previous install of that same version recorded.
    (manifest.nagini_version.as_deref() == Some(opts.nagini_version.as_str()))
        .then(|| manifest.silicon.as_ref().map(|r| r.sha256.clone()))
        .flatten()
}

fn is_z3_member(name: &str) -> bool {
    // z3-solver wheels keep the executable at `z3_solver-<v>.data/data/bin/z3`.
    name.ends_with(".data/data/bin/z3") || name.ends_with("/bin/z3")
}

/// `python3 -m pip download --no-deps --only-binary=:all: REQ -d DIR`; returns the wheel.
fn pip_download(
    python: &Path,
    requirement: &str,
    wheel_prefix: &str,
    dir: &Path,
    hint: &str,
) -> Result<PathBuf, BackendError> {
    let fail = |detail: String| BackendError::Pip {
        requirement: requirement.to_string(),
        detail,
        hint: hint.to_string(),
    };
    let out = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        // Not interactive, quiet about pip upgrades: CI runs without a terminal.
        .args([
            "--no-input",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
        ])
        .arg(requirement)
        .arg("-d")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run {}: {e}", python.display())))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        let code = out
            .status
            .code()
            .map_or_else(|| "killed".to_string(), |c| c.to_string());
        return Err(fail(format!("exit {code}: {last}")));
    }
    let entries = fs::read_dir(dir)
        .map_err(|e| BackendError::io(format!("cannot list {}", dir.display()), e))?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.starts_with(wheel_prefix) && n.ends_with(".whl"))
        })
        .ok_or_else(|| fail("pip reported success but left no wheel".into()))
}

/// Extracts the first member accepted by `pick` to `dest`, atomically, and returns its sha256;
/// `Ok(None)` if no member matches.
fn extract_member(
    wheel: &Path,
    pick: impl Fn(&str) -> bool,
    dest: &Path,
    executable: bool,
) -> Result<Option<String>, BackendError> {
    let zip_err = |source| BackendError::Zip {
        path: wheel.to_path_buf(),
        source,
    };
    let file = File::open(wheel)
        .map_err(|e| BackendError::io(format!("cannot open {}", wheel.display()), e))?;
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(zip_err)?;
    let name = archive
        .file_names()
        .filter_map(Result::ok)
        .find(|n| pick(n))
        .map(|n| n.into_owned());
    let Some(name) = name else {
        return Ok(None);
    };
    let mut member = archive.by_name(&name).map_err(zip_err)?;
    let sha = atomic_write_with(dest, executable, |w| {
        let mut hasher = HashingWriter {
            inner: w,
            hasher: Sha256::new(),
        };
        io::copy(&mut member, &mut hasher)?;
        Ok(hex(&hasher.hasher.finalize()))
    })?;
    Ok(Some(sha))
}

struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Runs Silicon once on a trivial file with `-XX:ArchiveClassesAtExit` (JDK ≥ 13), writing the
/// archive to a temporary name first.
fn create_cds_archive(
    layout: &CacheLayout,
    java: &JavaInfo,
    silicon: &SiliconInfo,
    z3: &Z3Info,
) -> Result<(), String> {
    let work = TempDir::new_in(&layout.backend_dir(), "cds").map_err(|e| e.to_string())?;
    let vpr = work.path().join("trivial.vpr");
    fs::write(&vpr, super::silicon::TRIVIAL_VPR).map_err(|e| e.to_string())?;
    let tmp_jsa = work.path().join("silicon.jsa");
    let mut cmd = Command::new(&java.path);
    cmd.arg(format!("-XX:ArchiveClassesAtExit={}", tmp_jsa.display()));
    super::silicon::per_file_jvm_args(&mut cmd, None);
    cmd.arg("-jar")
        .arg(&silicon.path)
        .arg("--z3Exe")
        .arg(&z3.path)
        .arg(&vpr)
        .current_dir(work.path());
    let out = super::silicon::run_with_deadline(cmd, Some(Duration::from_secs(300)))
        .map_err(|e| e.to_string())?;
    let Some(out) = out else {
        return Err("the Silicon run timed out".into());
    };
    if !out
        .stdout
        .contains("Silicon finished verification successfully")
    {
        return Err(format!(
            "the trivial file did not verify: {}",
            last_lines(&format!("{}{}", out.stdout, out.stderr), 3)
        ));
    }
    if !tmp_jsa.is_file() {
        return Err("the JVM wrote no archive".into());
    }
    fs::rename(&tmp_jsa, layout.cds_archive()).map_err(|e| e.to_string())
}

/// First line of `java -jar silicon.jar --help`, e.g. `Silicon 1.1-SNAPSHOT (3e24b7a8+)`.
pub fn silicon_version(java: &JavaInfo, jar: &Path) -> Option<String> {
    let out = Command::new(&java.path)
        .args(["-XX:TieredStopAtLevel=1", "-jar"])
        .arg(jar)
        .arg("--help")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .filter(|l| l.starts_with("Silicon"))
        .map(|l| l.trim().to_string())
}

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
        self.components
            .iter()
            .all(|c| c.problem.is_none() || c.component == "javac")
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
            let path = c
                .path
                .as_ref()
                .map_or_else(|| "-".to_string(), |p| p.display().to_string());
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
    let mut components = Vec::new();
    let mut warnings = Vec::new();
    let layout = match cache_dir_with(cfg.cache_dir.as_deref(), env) {
        Ok(d) => CacheLayout::new(d),
        Err(_) => {
            return DoctorReport {
                cache_dir: None,
                components,
                mode: None,
                smoke: None,
                warnings,
            }
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
                "not compiled yet (compiled on first use when a compiler exists)".into()
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

    let mut mode = None;
    let mut smoke = None;
    if java.is_ok() && silicon.is_ok() && z3.is_ok() {
        let smoke_cfg = BackendConfig {
            result_cache: false,
            ..cfg.clone()
        };
        match super::silicon::Backend::discover_with_env(&smoke_cfg, env) {
            Ok(b) => {
                mode = Some(b.mode());
                warnings.extend(b.warnings().iter().cloned());
                let out = b.verify_text(super::silicon::TRIVIAL_VPR, 120);
                smoke = Some((out.verdict, out.elapsed));
            }
            Err(e) => warnings.push(e.to_string()),
        }
    }
    DoctorReport {
        cache_dir: Some(layout.root),
        components,
        mode,
        smoke,
        warnings,
    }
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

// ------------------------------------------------------------------------------------------------
// Lock

/// `<cache>/backend/.lock`, held for the whole install (design §2.1).
pub(crate) struct InstallLock {
    lock: fd_lock::RwLock<File>,
    path: PathBuf,
}

impl InstallLock {
    pub(crate) fn open(layout: &CacheLayout) -> Result<Self, BackendError> {
        let path = layout.lock_file();
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| BackendError::io(format!("cannot open {}", path.display()), e))?;
        Ok(InstallLock {
            lock: fd_lock::RwLock::new(file),
            path,
        })
    }

    pub(crate) fn acquire(
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

fn unique_suffix() -> String {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{t}", std::process::id())
}

/// Writes `bytes` to `dest` atomically: a temporary file in the same directory, fsync, rename.
/// Readers see either the old file or the complete new one, never a partial one.
pub(crate) fn atomic_write(dest: &Path, bytes: &[u8]) -> Result<(), BackendError> {
    atomic_write_with(dest, false, |w| w.write_all(bytes))
}

fn atomic_write_with<T>(
    dest: &Path,
    executable: bool,
    fill: impl FnOnce(&mut io::BufWriter<&mut File>) -> io::Result<T>,
) -> Result<T, BackendError> {
    let dir = dest.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| BackendError::io(format!("cannot create {}", dir.display()), e))?;
    let name = dest
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
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
fn set_executable(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_file: &File) -> io::Result<()> {
    Ok(())
}

/// A directory removed (with its contents) when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new_in(parent: &Path, tag: &str) -> Result<TempDir, BackendError> {
        let p = parent.join(format!(".{tag}-{}", unique_suffix()));
        fs::create_dir_all(&p)
            .map_err(|e| BackendError::io(format!("cannot create {}", p.display()), e))?;
        Ok(TempDir(p))
    }
    pub(crate) fn path(&self) -> &Path {
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

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn which(name: &str, env: EnvLookup) -> Option<PathBuf> {
    let path = env("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
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

pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Test helper: an environment from a map, for [`EnvLookup`] parameters.
pub fn env_from_map(map: BTreeMap<String, OsString>) -> impl Fn(&str) -> Option<OsString> {
    move |k| map.get(k).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_versions() {
        let t = "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment";
        assert_eq!(parse_java_version(t), Some(("17.0.15".into(), 17)));
        let t = "java version \"1.8.0_292\"\nJava(TM) SE Runtime";
        assert_eq!(parse_java_version(t), Some(("1.8.0_292".into(), 8)));
        let t = "Picked up JAVA_TOOL_OPTIONS: -Xmx1g\nopenjdk version \"21\" 2023-09-19";
        assert_eq!(parse_java_version(t), Some(("21".into(), 21)));
        assert_eq!(parse_java_version("bash: java: not found"), None);
    }

    #[test]
    fn z3_versions() {
        assert_eq!(
            parse_z3_version("Z3 version 4.8.12 - 64 bit"),
            Some((4, 8, 12))
        );
        assert_eq!(
            parse_z3_version("Z3 version 4.13.0 - 64 bit"),
            Some((4, 13, 0))
        );
        assert_eq!(parse_z3_version("Z3 version 4.5"), Some((4, 5, 0)));
        assert_eq!(parse_z3_version("z3: command not found"), None);
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        env_from_map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), OsString::from(v)))
                .collect(),
        )
    }

    #[test]
    fn cache_dir_order() {
        let e = env(&[("ALPINE_RS_CACHE", "/a"), ("XDG_CACHE_HOME", "/x")]);
        assert_eq!(cache_dir_with(None, &e).ok(), Some(PathBuf::from("/a")));
        assert_eq!(
            cache_dir_with(Some(Path::new("/cli")), &e).ok(),
            Some(PathBuf::from("/cli"))
        );
        let e = env(&[("XDG_CACHE_HOME", "/x")]);
        assert_eq!(
            cache_dir_with(None, &e).ok(),
            Some(PathBuf::from("/x/alpine-rs"))
        );
    }

    #[test]
    fn missing_components_have_actionable_messages() {
        let dir = std::env::temp_dir().join(format!("alpine-rs-test-{}", unique_suffix()));
        let layout = CacheLayout::new(&dir);
        let e = env(&[("PATH", "/nonexistent")]);
        let err = find_silicon(&layout, &Manifest::default(), &e).unwrap_err();
        assert!(
            err.to_string().contains("alpine-rs backend install"),
            "{err}"
        );
        let err = find_z3(&layout, &e).unwrap_err();
        assert!(matches!(err, BackendError::Z3Missing), "{err}");
        assert!(err.to_string().contains("ALPINE_Z3"));
        let err = find_java(&e).unwrap_err();
        assert!(err.to_string().contains("Java 17 or newer"), "{err}");
        let e = env(&[("ALPINE_Z3", "/bin/true")]);
        let err = find_z3(&layout, &e).unwrap_err();
        assert!(matches!(err, BackendError::Z3TooOld { .. }), "{err}");
        assert_eq!(err.exit_code(), 3);
    }

    #[test]
    fn atomic_write_leaves_no_temporaries() {
        let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-test").unwrap();
        let dest = dir.path().join("sub").join("f.txt");
        atomic_write(&dest, b"one").unwrap();
        atomic_write(&dest, b"two").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dest.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("f.txt")]);
    }

    /// Writes an executable shell script (fake java / z3 for install tests).
    #[cfg(unix)]
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        let f = File::open(&p).unwrap();
        set_executable(&f).unwrap();
        p
    }

    fn fake_wheel(path: &Path, members: &[(&str, &[u8])]) {
        let mut w = zip::ZipWriter::new(File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, data) in members {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap();
    }

    /// Install from a (fake) wheel with fake java and z3: no network, no JVM.
    #[cfg(unix)]
    #[test]
    fn install_from_wheel_is_atomic_idempotent_and_checks_pins() {
        let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-install-test").unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        let java = script(
            &bin,
            "java",
            "echo 'openjdk version \"17.0.9\" 2023-10-17' >&2",
        );
        let z3 = script(&bin, "z3", "echo 'Z3 version 4.8.12 - 64 bit'");
        let wheel = dir.path().join("nagini-1.2.0-py3-none-any.whl");
        fake_wheel(
            &wheel,
            &[
                ("nagini/__init__.py", b""),
                (SILICON_JAR_MEMBER, b"not really a jar"),
            ],
        );
        let cache = dir.path().join("cache");
        let e = env(&[
            ("ALPINE_JAVA", java.to_str().unwrap()),
            ("ALPINE_Z3", z3.to_str().unwrap()),
            ("PATH", "/nonexistent"),
        ]);
        let opts = InstallOptions {
            cache_dir: Some(cache.clone()),
            from_wheel: Some(wheel.clone()),
            compile_driver: false,
            create_cds: false,
            ..InstallOptions::default()
        };
        let mut lines = Vec::new();
        let r = install_with_env(&opts, &mut |l| lines.push(l.to_string()), &e).unwrap();
        assert_eq!(r.silicon_step, Step::FromWheel);
        assert_eq!(r.z3_step, Step::Kept);
        assert_eq!(r.z3, z3);
        let layout = CacheLayout::new(&cache);
        assert_eq!(fs::read(layout.silicon_jar()).unwrap(), b"not really a jar");
        assert_eq!(r.silicon_sha256, sha256_hex(b"not really a jar"));
        // Both pins mismatch: warnings, not errors.
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(
            lines.iter().any(|l| l == "extracting silicon.jar…"),
            "{lines:?}"
        );
        let m = Manifest::load(&layout);
        assert_eq!(
            m.silicon.as_ref().map(|s| s.sha256.as_str()),
            Some(r.silicon_sha256.as_str())
        );
        assert_eq!(m.z3_version.as_deref(), Some("Z3 version 4.8.12 - 64 bit"));
        // No temporaries left behind.
        let leftovers: Vec<_> = fs::read_dir(layout.backend_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.') && n != ".lock")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");

        // Discovery accepts the installed jar (its hash matches the manifest) but it is not the
        // pinned one.
        let (s, w) = find_silicon(&layout, &m, &e).unwrap();
        assert!(!s.pinned);
        assert_eq!(w.len(), 1);
        // A corrupted jar is an error, with the repair command.
        fs::write(layout.silicon_jar(), b"corrupted").unwrap();
        let err = find_silicon(&layout, &Manifest::load(&layout), &e).unwrap_err();
        assert!(matches!(err, BackendError::SiliconCorrupt { .. }), "{err}");
        assert!(err.to_string().contains("alpine-rs backend install"));

        // The fake jar does not have the pinned hash, so a rerun extracts it again (repair).
        let r = install_with_env(&opts, &mut |_| {}, &e).unwrap();
        assert_eq!(r.silicon_step, Step::FromWheel);
        assert_eq!(fs::read(layout.silicon_jar()).unwrap(), b"not really a jar");

        // A wheel without the member is reported as such.
        let bad = dir.path().join("other.whl");
        fake_wheel(&bad, &[("x.txt", b"x")]);
        let err = install_with_env(
            &InstallOptions {
                from_wheel: Some(bad),
                ..opts.clone()
            },
            &mut |_| {},
            &e,
        )
        .unwrap_err();
        assert!(matches!(err, BackendError::WheelMember { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn install_reports_pip_failures_with_the_offline_alternative() {
        let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-install-test").unwrap();
        let java = script(dir.path(), "java", "echo 'openjdk version \"17.0.9\"' >&2");
        let python = script(
            dir.path(),
            "python3",
            "echo 'ERROR: No matching distribution' >&2; exit 1",
        );
        let e = env(&[
            ("ALPINE_JAVA", java.to_str().unwrap()),
            ("PATH", "/nonexistent"),
        ]);
        let opts = InstallOptions {
            cache_dir: Some(dir.path().join("cache")),
            python,
            ..InstallOptions::default()
        };
        let mut lines = Vec::new();
        let err = install_with_env(&opts, &mut |l| lines.push(l.to_string()), &e).unwrap_err();
        assert_eq!(
            err.to_string(),
            "could not download nagini==1.2.0 with pip (exit 1: ERROR: No matching distribution). \
             Download the wheel elsewhere and run 'alpine-rs backend install --from-wheel FILE'."
        );
        assert!(lines.contains(&"downloading nagini 1.2.0 (68 MB) with pip…".to_string()));
        // Too old a Java is refused before anything is downloaded.
        let old = script(
            dir.path(),
            "oldjava",
            "echo 'java version \"1.8.0_292\"' >&2",
        );
        let e = env(&[("ALPINE_JAVA", old.to_str().unwrap())]);
        let err = install_with_env(&opts, &mut |_| {}, &e).unwrap_err();
        assert!(
            err.to_string().starts_with("Java 17 or newer is required"),
            "{err}"
        );
        assert!(err.to_string().contains("1.8.0_292"), "{err}");
    }

    #[test]
    fn hashing() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
