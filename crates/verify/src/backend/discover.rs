//! The components of the back end (Java, Silicon, z3, a Java compiler, the batch driver) and
//! their discovery (design §2.2), including compiling the driver when it is missing or stale.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::fsutil::{
    is_executable, last_lines, sha256_file, sha256_hex, which, InstallLock, TempDir,
};
use super::layout::{cache_dir_with, CacheLayout, EnvLookup, Manifest};
use super::{
    BackendError, DRIVER_CLASS, DRIVER_SOURCE, MIN_JAVA_MAJOR, MIN_Z3, NAGINI_VERSION,
    SILICON_JAR_SHA256,
};
use crate::silicon::RunMode;

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

/// Knobs for [`Backend::discover`](crate::silicon::Backend::discover).
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
    /// How many files (requests) one `Backend` verifies at once, all in its one driver JVM (or
    /// as that many per-file JVMs); `None` = number of available cores.
    pub jobs: Option<usize>,
    /// Extra Silicon options, passed to every run; also part of the result-cache key.
    pub silicon_args: Vec<String>,
    /// Use the AppCDS archive when it exists (§3.1).
    pub use_cds: bool,
    /// Tune the driver JVM for many files (full tiered JIT) instead of start-up (C1 only +
    /// AppCDS). Measured on a busy 2-core machine, C1 + AppCDS halves the CPU time up to ~10
    /// small files and breaks even around 20–30; set this for corpus runs. A JVM whose first
    /// program is large (`runner::THROUGHPUT_BYTES`) is tuned for throughput anyway.
    pub throughput: bool,
    /// Added to the timeout for the wall-clock limit, after which the JVM is killed (§3.1: 10 s).
    pub grace: Duration,
    /// Extra wall-clock allowance for a fresh JVM (start-up and JIT warm-up: 4–8 s on the
    /// reference machine, 40 s seen on a busy one), so that a cold start is not a timeout.
    pub startup_grace: Duration,
}

impl BackendConfig {
    /// [`BackendConfig::jobs`], resolved: at least 1.
    pub fn jobs(&self) -> usize {
        self.jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            cache_dir: None,
            mode: RunMode::Auto,
            result_cache: true,
            cache_salt: String::new(),
            parallel_verifiers: None,
            jobs: None,
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
            Ok((version, major)) if major >= MIN_JAVA_MAJOR => {
                Ok(JavaInfo { path, version, major, origin: Origin::Env("ALPINE_JAVA") })
            }
            Ok((version, _)) => Err(BackendError::Java {
                found: format!("{version} at {} from $ALPINE_JAVA", path.display()),
            }),
            Err(e) => {
                Err(BackendError::Java { found: format!("$ALPINE_JAVA={}: {e}", path.display()) })
            }
        };
    }
    let mut candidates = Vec::new();
    if let Some(home) = env("JAVA_HOME") {
        candidates.push((PathBuf::from(home).join("bin").join("java"), Origin::JavaHome));
    }
    if let Some(p) = which("java", env) {
        candidates.push((p, Origin::Path));
    }
    let mut found = Vec::new();
    for (path, origin) in candidates {
        match probe_java(&path) {
            Ok((version, major)) if major >= MIN_JAVA_MAJOR => {
                return Ok(JavaInfo { path, version, major, origin })
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
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
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
    let major = if first == 1 { parts.next()?.parse().ok()? } else { first };
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
            SiliconInfo { path, sha256, pinned, origin: Origin::Env("ALPINE_SILICON_JAR") },
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
        return Err(BackendError::SiliconCorrupt { path, actual: sha256, expected });
    }
    let pinned = sha256 == SILICON_JAR_SHA256;
    if !pinned {
        warnings.push(format!(
            "the installed silicon.jar is not the pinned nagini {NAGINI_VERSION} jar; error ids \
             and messages may differ"
        ));
    }
    Ok((SiliconInfo { path, sha256, pinned, origin: Origin::Cache }, warnings))
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
        let cached = origin == Origin::Cache;
        match check_z3(&path, origin) {
            Ok(info) => return Ok(info),
            Err(BackendError::Z3TooOld { path, version }) if cached => {
                first_err.get_or_insert(BackendError::Z3Damaged {
                    path,
                    detail: format!("it reports version {version}"),
                });
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or(BackendError::Z3Missing))
}

pub(super) fn check_z3(path: &Path, origin: Origin) -> Result<Z3Info, BackendError> {
    let out = Command::new(path).arg("--version").stdin(Stdio::null()).output();
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
        Some(v) if (v.0, v.1) >= MIN_Z3 => {
            Ok(Z3Info { path: path.to_path_buf(), version_line: line, version: v, origin })
        }
        _ => Err(BackendError::Z3TooOld {
            path: path.to_path_buf(),
            version: if line.is_empty() { "nothing".into() } else { format!("{line:?}") },
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
        return Some(JavacInfo { program: p, prefix_args: Vec::new(), origin: Origin::Path });
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
/// recompile, and so does a damaged class file.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct DriverStamp {
    source_sha256: String,
    jar_sha256: String,
    /// The sha256 of each class file, by name. Without it a truncated or overwritten class passes
    /// for installed, and every run fails with a ClassFormatError that `backend install` (which
    /// keeps an installed driver) does not repair. Stamps written before this field existed read
    /// as empty, so their drivers are compiled once more.
    #[serde(default)]
    classes: BTreeMap<String, String>,
}

const DRIVER_STAMP: &str = "alpine-driver.json";

/// The sha256 of each `*.class` file in `dir`, by file name.
fn class_hashes(dir: &Path) -> io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".class") {
            out.insert(name.clone(), sha256_file(&dir.join(&name))?);
        }
    }
    Ok(out)
}

/// The compiled driver, if it is present, up to date and undamaged (a few kB of class files are
/// hashed on each discovery).
pub fn installed_driver(layout: &CacheLayout, silicon: &SiliconInfo) -> Option<DriverInfo> {
    let dir = layout.driver_dir();
    let stamp: DriverStamp =
        fs::read(dir.join(DRIVER_STAMP)).ok().and_then(|b| serde_json::from_slice(&b).ok())?;
    let up_to_date = stamp.source_sha256 == sha256_hex(DRIVER_SOURCE.as_bytes())
        && stamp.jar_sha256 == silicon.sha256
        && stamp.classes.contains_key(&format!("{DRIVER_CLASS}.class"))
        && class_hashes(&dir).is_ok_and(|h| h == stamp.classes);
    up_to_date.then_some(DriverInfo { class_dir: dir })
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
    let hashes = class_hashes(&classes)
        .map_err(|e| BackendError::io("cannot hash the compiled driver", e))?;
    let stamp = DriverStamp {
        source_sha256: sha256_hex(DRIVER_SOURCE.as_bytes()),
        jar_sha256: silicon.sha256.clone(),
        classes: hashes,
    };
    let stamp = serde_json::to_vec(&stamp)
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
    Ok(Components { layout, java, silicon, z3, driver, cds_archive, warnings })
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
        BackendError::io(format!("cannot create {}", layout.backend_dir().display()), e)
    })?;
    let mut lock = InstallLock::open(layout)?;
    let _guard = lock.acquire(&mut |_| {})?;
    // Another process may have compiled it while we waited.
    if let Some(d) = installed_driver(layout, silicon) {
        return Ok(d);
    }
    compile_driver(layout, &javac, silicon)
}
