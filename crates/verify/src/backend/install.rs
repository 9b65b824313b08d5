//! `alpine-rs backend install` (design §2.3): the Silicon jar from the nagini wheel (pip or
//! `--from-wheel`), z3 from the z3-solver wheel when none is found, the batch driver, and the
//! AppCDS archive.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::discover::{
    check_z3, compile_driver, find_java, find_javac, find_z3, installed_driver, DriverInfo,
    JavaInfo, Origin, SiliconInfo, Z3Info,
};
use super::fsutil::{atomic_write_with, hex, last_lines, sha256_file, InstallLock, TempDir};
use super::layout::{cache_dir_with, process_env, CacheLayout, EnvLookup, FileRecord, Manifest};
use super::{
    BackendError, NAGINI_VERSION, NAGINI_WHEEL_MB, NAGINI_WHEEL_SHA256, SILICON_JAR_MEMBER,
    SILICON_JAR_SHA256, Z3_4870_LINUX_X64_SHA256, Z3_SOLVER_VERSION,
};

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
    /// The Z3 library alpine-rs's own checks open (crates/z3-sys).
    pub libz3: super::Libz3Report,
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
    ctx.say(&format!("using java {} at {}", java.version, java.path.display()));

    let (silicon, silicon_step) = ctx.silicon()?;
    // Stored now so that a failure in a later step does not lose the (expensive) jar.
    ctx.manifest.store(&ctx.layout)?;
    let (z3, z3_step) = ctx.z3()?;
    let libz3 = super::install_libz3(&opts.python, ctx.progress, env)?;
    ctx.warnings.extend(libz3.warnings.iter().cloned());
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
        libz3,
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
                let size =
                    if self.pinned() { format!(" ({NAGINI_WHEEL_MB} MB)") } else { String::new() };
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
            self.warn(format!("no pinned hashes for nagini {version}; the jar was not checked"));
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
                let what = if z.origin == Origin::Cache { "already installed" } else { "found" };
                self.say(&format!("z3 {what}: {} ({})", z.path.display(), z.version_line));
                self.manifest.z3_version = Some(z.version_line.clone());
                return Ok((z, Step::Kept));
            }
            // An explicit choice that does not work is reported, not silently replaced.
            Err(e) if (self.env)("ALPINE_Z3").is_some() => return Err(e),
            Err(_) => {}
        }
        let tmp = TempDir::new_in(&self.layout.backend_dir(), "download")?;
        let version = self.opts.z3_version.clone();
        let size = if version == Z3_SOLVER_VERSION { " (19 MB)" } else { "" };
        self.say(&format!("no suitable z3 found; downloading z3-solver {version}{size} with pip…"));
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
pub(super) fn pip_download(
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
        .args(["--no-input", "--disable-pip-version-check", "--progress-bar", "off"])
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
        let code = out.status.code().map_or_else(|| "killed".to_string(), |c| c.to_string());
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
pub(super) fn extract_member(
    wheel: &Path,
    pick: impl Fn(&str) -> bool,
    dest: &Path,
    executable: bool,
) -> Result<Option<String>, BackendError> {
    let zip_err = |source| BackendError::Zip { path: wheel.to_path_buf(), source };
    let file = File::open(wheel)
        .map_err(|e| BackendError::io(format!("cannot open {}", wheel.display()), e))?;
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(zip_err)?;
    let name =
        archive.file_names().filter_map(Result::ok).find(|n| pick(n)).map(|n| n.into_owned());
    let Some(name) = name else {
        return Ok(None);
    };
    let mut member = archive.by_name(&name).map_err(zip_err)?;
    let sha = atomic_write_with(dest, executable, |w| {
        let mut hasher = HashingWriter { inner: w, hasher: Sha256::new() };
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
    fs::write(&vpr, crate::silicon::TRIVIAL_VPR).map_err(|e| e.to_string())?;
    let tmp_jsa = work.path().join("silicon.jsa");
    let mut cmd = Command::new(&java.path);
    cmd.arg(format!("-XX:ArchiveClassesAtExit={}", tmp_jsa.display()));
    crate::silicon::per_file_jvm_args(&mut cmd, None);
    cmd.arg("-jar")
        .arg(&silicon.path)
        .arg("--z3Exe")
        .arg(&z3.path)
        .arg(&vpr)
        .current_dir(work.path());
    let out = crate::silicon::run_with_deadline(cmd, Some(Duration::from_secs(300)))
        .map_err(|e| e.to_string())?;
    let Some(out) = out else {
        return Err("the Silicon run timed out".into());
    };
    if !out.stdout.contains("Silicon finished verification successfully") {
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
