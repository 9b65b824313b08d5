//! The CUDA toolchain for compile checks (issue 23): `nvcc` from NVIDIA's PyPI wheels, provisioned
//! into `<cache>/cuda/` by `alpine-rs backend install --cuda`, found like the verifier's
//! components, and [`compile_ptx`], which compiles a `.cu` file to PTX without a GPU.
//!
//! Which wheels, and why: the `nvidia-cuda-nvcc-cu12` wheels (12.0 to 12.9) hold only `ptxas`
//! and libnvvm (they serve JAX), not the `nvcc` driver. From CUDA 13 on the toolkit is split into
//! `nvidia-cuda-nvcc` (nvcc, cudafe++, ptxas, fatbinary, nvlink), `nvidia-nvvm` (cicc, the device
//! front end that `nvcc -ptx` runs), `nvidia-cuda-crt` (`crt/*.h`, included by every kernel) and
//! `nvidia-cuda-runtime` (`cuda.h`, `cuda_runtime.h`, `libcudart_static.a`). All four unpack
//! under `nvidia/cu13/` into the layout that nvcc's own `nvcc.profile` expects (`bin/`,
//! `nvvm/bin/`, `include/`, `lib/`); the cache keeps that layout, so nvcc finds cicc and the
//! headers by itself.
//!
//! nvcc runs the host compiler's preprocessor even for `-ptx` (`gcc -E -x c++`), so `g++` must be
//! installed; neither a GPU nor a driver is needed to produce PTX. Executables (for
//! `scripts/gpu_compare.sh`) link `libcudart_static.a` from the runtime wheel and need a driver
//! for CUDA 13 (≥ 580) only when they run.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::discover::{BackendConfig, Origin};
use super::doctor::ComponentStatus;
use super::fsutil::{
    atomic_write, is_executable, last_lines, set_executable, sha256_file, unique_suffix, which,
    InstallLock, TempDir,
};
use super::install::{pip_download, Step};
use super::layout::{cache_dir_with, process_env, CacheLayout, EnvLookup};
use super::BackendError;
use crate::silicon::run_with_deadline;

// ------------------------------------------------------------------------------------------------
// Pins

/// The CUDA release whose wheels are installed. Every wheel of a release carries the same version.
pub const CUDA_VERSION: &str = "13.5.37";

/// The architecture PTX checks compile for: the oldest one CUDA 13 accepts (it dropped sm_70), so
/// that the check means "compiles for any GPU this toolkit supports".
pub const PTX_ARCH: &str = "sm_75";

/// The environment variable naming an nvcc to use instead of the cache's or PATH's.
pub const NVCC_ENV: &str = "ALPINE_RS_NVCC";

/// One wheel of the toolchain.
#[derive(Debug, Clone, Copy)]
pub struct CudaWheel {
    /// The PyPI project.
    pub package: &'static str,
    /// Size of the pinned wheel, for the progress message only.
    pub mb: u32,
    /// sha256 of the pinned `manylinux x86_64` wheel. pip checks the index's hashes already; this
    /// pin notices a re-published wheel. Other platforms get other wheels and are not checked.
    pub linux_x64_sha256: &'static str,
}

/// The wheels of [`CUDA_VERSION`], in download order (the big ones first, so that a network
/// failure shows before the small ones are fetched for nothing).
pub const CUDA_WHEELS: [CudaWheel; 4] = [
    CudaWheel {
        package: "nvidia-nvvm",
        mb: 75,
        linux_x64_sha256: "c41bfa362e407405163f103c2229f0765f8cc2ed7d148b754dc77f228bf7e070",
    },
    CudaWheel {
        package: "nvidia-cuda-nvcc",
        mb: 47,
        linux_x64_sha256: "f5c4f7ead5d964fb4af42bbf1e6d3ec3c1e6e9d83b53749f691d387e7fcaa3a7",
    },
    CudaWheel {
        package: "nvidia-cuda-runtime",
        mb: 3,
        linux_x64_sha256: "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
    },
    CudaWheel {
        package: "nvidia-cuda-crt",
        mb: 1,
        linux_x64_sha256: "e898b7f73d3035fa89915a3f7bf3b54a73e90249746111aed295822c4729bb29",
    },
];

/// Members under the wheel root that are not extracted: libnvvm (74 MB) serves JIT users such as
/// NVRTC and numba; nvcc runs cicc, a static executable, instead.
const SKIPPED_MEMBERS: &[&str] = &["lib/libnvvm.so"];

const CUDA_MANIFEST_FORMAT: u32 = 1;

/// Default limit for one nvcc run. A cold cicc takes about a second on an idle machine; the limit
/// only stops a hung compiler.
const NVCC_TIMEOUT: Duration = Duration::from_secs(120);

/// The kernel compiled by the install and doctor smoke checks: the constructs the CUDA front end
/// emits (shared memory, barriers, atomics, the runtime header) and a contract in a comment.
pub const SMOKE_KERNEL: &str = r#"#include <cuda_runtime.h>

/*@ context \pointer_index(out, 0, write); @*/
__global__ void alpine_smoke(const float *a, float *out, int n) {
  __shared__ float buf[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}
"#;

// ------------------------------------------------------------------------------------------------
// Errors

/// What can keep a `.cu` file from being compiled to PTX.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    #[error(
        "nvcc not found. Run 'alpine-rs backend install --cuda' (needs pip and network access to \
         PyPI), put a CUDA toolkit's nvcc on PATH, or set {NVCC_ENV}."
    )]
    NotProvisioned,

    #[error("nvcc at {path} ({origin}) does not work: {detail}. {hint}")]
    Broken { path: PathBuf, origin: String, detail: String, hint: String },

    #[error(
        "no host C++ compiler: nvcc runs g++'s preprocessor even to produce PTX. Install g++ \
         (apt-get install g++)."
    )]
    NoHostCompiler,

    #[error(
        "CUDA {version} has no nvcc on PyPI: only releases 13 and later publish it (the -cu12 \
         nvcc wheels hold ptxas alone). Use --cuda-version {CUDA_VERSION}."
    )]
    NoNvccWheel { version: String },

    #[error(
        "no {pattern} in {dir}: fetch it with 'pip download --no-deps --only-binary=:all: \
         {requirement} -d {dir}'"
    )]
    WheelMissing { dir: PathBuf, pattern: String, requirement: String },

    #[error("nvcc rejected {file}:\n{stderr}")]
    Compile { file: PathBuf, stderr: String },

    #[error("nvcc did not finish compiling {file} within {secs} s")]
    Timeout { file: PathBuf, secs: u64 },

    #[error("cannot read {path}: {source}")]
    Input { path: PathBuf, source: io::Error },

    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl CudaError {
    /// Exit code of the CLI: 3 when the toolchain is missing, broken or hangs (no answer); 1 when
    /// nvcc rejects the source (the tool worked and the answer is no, like an output that fails to
    /// verify); 2 when the input cannot be read.
    pub fn exit_code(&self) -> i32 {
        match self {
            CudaError::Compile { .. } => 1,
            CudaError::Input { .. } => 2,
            _ => 3,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Discovery

/// A working nvcc and what goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccToolchain {
    pub nvcc: PathBuf,
    /// `<root>/include` when it holds `cuda_runtime.h`; passed as `-I` because an nvcc named by
    /// `$ALPINE_RS_NVCC` may come without a profile that adds it (a standard toolkit's does).
    pub include_dir: Option<PathBuf>,
    /// `<root>/lib64` or `<root>/lib` when it holds cudart: where executables link it from.
    pub lib_dir: Option<PathBuf>,
    /// The last line of `nvcc --version`, e.g. `Cuda compilation tools, release 13.5, V13.5.37`.
    pub version: String,
    /// The `g++` nvcc will run.
    pub host_compiler: PathBuf,
    pub origin: Origin,
}

/// The nvcc to use, or `None`; [`locate_nvcc`] says why not.
pub fn find_nvcc(cfg: &BackendConfig) -> Option<NvccToolchain> {
    locate_nvcc(cfg.cache_dir.as_deref(), &process_env).ok()
}

/// Finds nvcc: `$ALPINE_RS_NVCC` (reported, not replaced, when it does not work), else
/// `<cache>/cuda/bin/nvcc` (reported when broken, with the repair command), else `nvcc` on PATH.
/// Then checks for `g++`, without which nvcc cannot even preprocess.
pub fn locate_nvcc(cache_dir: Option<&Path>, env: EnvLookup) -> Result<NvccToolchain, CudaError> {
    let (nvcc, origin, hint) = if let Some(p) = env(NVCC_ENV) {
        (PathBuf::from(p), Origin::Env(NVCC_ENV), format!("Fix or unset ${NVCC_ENV}."))
    } else if let Some(p) = cache_dir_with(cache_dir, env)
        .ok()
        .map(|root| CacheLayout::new(root).cuda_dir().join("bin").join("nvcc"))
        .filter(|p| p.exists())
    {
        (p, Origin::Cache, "Run 'alpine-rs backend install --cuda' to repair it.".to_string())
    } else if let Some(p) = which("nvcc", env) {
        (p, Origin::Path, format!("Fix that toolkit, or set {NVCC_ENV}."))
    } else {
        return Err(CudaError::NotProvisioned);
    };
    let version = nvcc_version(&nvcc).map_err(|detail| CudaError::Broken {
        path: nvcc.clone(),
        origin: origin.to_string(),
        detail,
        hint,
    })?;
    let host_compiler = which("g++", env).ok_or(CudaError::NoHostCompiler)?;
    let root = nvcc.parent().and_then(Path::parent).map(Path::to_path_buf);
    let include_dir =
        root.as_ref().map(|r| r.join("include")).filter(|d| d.join("cuda_runtime.h").is_file());
    let lib_dir = root.as_ref().and_then(|r| {
        ["lib64", "lib"]
            .iter()
            .map(|l| r.join(l))
            .find(|d| d.join("libcudart_static.a").is_file() || d.join("libcudart.so").is_file())
    });
    Ok(NvccToolchain { nvcc, include_dir, lib_dir, version, host_compiler, origin })
}

/// Runs `nvcc --version` and returns its release line.
fn nvcc_version(nvcc: &Path) -> Result<String, String> {
    if !is_executable(nvcc) {
        return Err("not an executable file".into());
    }
    let mut cmd = Command::new(nvcc);
    cmd.arg("--version");
    let out = run_with_deadline(cmd, Some(Duration::from_secs(30)))
        .map_err(|e| format!("cannot run it: {e}"))?
        .ok_or("`nvcc --version` did not finish within 30 s")?;
    let text = format!("{}{}", out.stdout, out.stderr);
    if !out.status.success() {
        return Err(format!("`nvcc --version` failed: {}", last_lines(&text, 2)));
    }
    text.lines()
        .rev()
        .find(|l| l.contains("release"))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| format!("unexpected `nvcc --version` output: {}", last_lines(&text, 2)))
}

// ------------------------------------------------------------------------------------------------
// Compiling to PTX

#[derive(Debug, Clone)]
pub struct PtxOptions {
    /// `-arch`; [`PTX_ARCH`] by default.
    pub arch: String,
    /// More nvcc arguments, placed before the file (e.g. `-DN=256`, `-std=c++17`).
    pub extra_args: Vec<String>,
    pub timeout: Duration,
}

impl Default for PtxOptions {
    fn default() -> Self {
        PtxOptions { arch: PTX_ARCH.into(), extra_args: Vec::new(), timeout: NVCC_TIMEOUT }
    }
}

/// A successful compile.
#[derive(Debug, Clone)]
pub struct PtxOutcome {
    pub ptx: String,
    /// nvcc's stderr: warnings, empty when clean.
    pub warnings: String,
    pub arch: String,
    pub elapsed: Duration,
}

/// Compiles `path` to PTX for [`PTX_ARCH`] with the nvcc [`locate_nvcc`] finds in the default
/// cache. `Err(CudaError::Compile)` carries nvcc's messages.
pub fn compile_ptx(path: &Path) -> Result<PtxOutcome, CudaError> {
    let tc = locate_nvcc(None, &process_env)?;
    compile_ptx_with(&tc, path, &PtxOptions::default())
}

/// `nvcc -ptx -arch=ARCH [-I<include>] EXTRA FILE -o <tmp>/out.ptx`.
pub fn compile_ptx_with(
    tc: &NvccToolchain,
    path: &Path,
    opts: &PtxOptions,
) -> Result<PtxOutcome, CudaError> {
    // nvcc's own message for a missing file ("Don't know what to do with ...") hides the cause.
    File::open(path).map_err(|source| CudaError::Input { path: path.to_path_buf(), source })?;
    let work = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-nvcc")?;
    let out = work.path().join("out.ptx");
    let mut cmd = Command::new(&tc.nvcc);
    cmd.arg("-ptx").arg(format!("-arch={}", opts.arch));
    if let Some(inc) = &tc.include_dir {
        let mut flag = OsString::from("-I");
        flag.push(inc);
        cmd.arg(flag);
    }
    cmd.args(&opts.extra_args).arg(path).arg("-o").arg(&out);
    // nvcc's intermediate files go to TMPDIR: in the work directory, a killed run leaves none.
    cmd.env("TMPDIR", work.path());
    let t0 = Instant::now();
    let run = run_with_deadline(cmd, Some(opts.timeout)).map_err(|e| CudaError::Broken {
        path: tc.nvcc.clone(),
        origin: tc.origin.to_string(),
        detail: format!("cannot run it: {e}"),
        hint: String::new(),
    })?;
    let Some(run) = run else {
        return Err(CudaError::Timeout { file: path.to_path_buf(), secs: opts.timeout.as_secs() });
    };
    let elapsed = t0.elapsed();
    let stderr = format!("{}{}", run.stdout, run.stderr).trim_end().to_string();
    if !run.status.success() {
        // A missing or unusable host compiler is the toolchain's fault, not the source's.
        if stderr.contains("Failed to preprocess host compiler properties")
            || stderr.contains("failed to execute gcc")
        {
            return Err(CudaError::Broken {
                path: tc.nvcc.clone(),
                origin: tc.origin.to_string(),
                detail: format!("it cannot run the host compiler: {}", last_lines(&stderr, 2)),
                hint: "Install g++ (apt-get install g++).".into(),
            });
        }
        return Err(CudaError::Compile { file: path.to_path_buf(), stderr });
    }
    let ptx = fs::read_to_string(&out).map_err(|e| CudaError::Broken {
        path: tc.nvcc.clone(),
        origin: tc.origin.to_string(),
        detail: format!("it succeeded but left no readable PTX ({e})"),
        hint: String::new(),
    })?;
    Ok(PtxOutcome { ptx, warnings: stderr, arch: opts.arch.clone(), elapsed })
}

/// Compiles CUDA text to PTX. `name` (e.g. `kernel.cu`) stands for the temporary file in errors
/// and warnings, so that nvcc's `file(line): error` messages point at something meaningful.
pub fn compile_ptx_source(
    tc: &NvccToolchain,
    name: &str,
    source: &str,
    opts: &PtxOptions,
) -> Result<PtxOutcome, CudaError> {
    let work = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-cu")?;
    let file_name =
        Path::new(name).file_name().map_or_else(|| "kernel.cu".into(), |n| n.to_owned());
    let path = work.path().join(file_name);
    fs::write(&path, source)
        .map_err(|e| BackendError::io(format!("cannot write {}", path.display()), e))?;
    let shown = path.display().to_string();
    let rename = |s: String| s.replace(&shown, name);
    match compile_ptx_with(tc, &path, opts) {
        Ok(o) => Ok(PtxOutcome { warnings: rename(o.warnings), ..o }),
        Err(CudaError::Compile { stderr, .. }) => {
            Err(CudaError::Compile { file: PathBuf::from(name), stderr: rename(stderr) })
        }
        Err(CudaError::Timeout { secs, .. }) => {
            Err(CudaError::Timeout { file: PathBuf::from(name), secs })
        }
        Err(e) => Err(e),
    }
}

// ------------------------------------------------------------------------------------------------
// Install

#[derive(Debug, Clone)]
pub struct CudaInstallOptions {
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--cuda-version`: the release of all four wheels; only [`CUDA_VERSION`] has pinned hashes.
    pub version: String,
    /// `--cuda-wheels DIR`: the wheels downloaded elsewhere (no pip, no network).
    pub wheel_dir: Option<PathBuf>,
    /// The Python used for `python3 -m pip download`.
    pub python: PathBuf,
}

impl Default for CudaInstallOptions {
    fn default() -> Self {
        CudaInstallOptions {
            cache_dir: None,
            version: CUDA_VERSION.into(),
            wheel_dir: None,
            python: PathBuf::from("python3"),
        }
    }
}

/// One wheel as installed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WheelRecord {
    pub file: String,
    pub sha256: String,
    pub size: u64,
}

/// `<cache>/cuda/manifest.json`: written last into the staging directory, so that a cache
/// directory with a manifest is a complete install.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
struct CudaManifest {
    format: u32,
    version: String,
    wheels: Vec<WheelRecord>,
    nvcc_version: String,
}

impl CudaManifest {
    fn load(dir: &Path) -> Option<CudaManifest> {
        let bytes = fs::read(dir.join("manifest.json")).ok()?;
        serde_json::from_slice::<CudaManifest>(&bytes)
            .ok()
            .filter(|m| m.format == CUDA_MANIFEST_FORMAT)
    }
}

#[derive(Debug, Clone)]
pub struct CudaInstallReport {
    pub cache_dir: PathBuf,
    /// `<cache>/cuda`.
    pub dir: PathBuf,
    pub nvcc: PathBuf,
    /// nvcc's release line.
    pub nvcc_version: String,
    pub step: Step,
    pub wheels: Vec<WheelRecord>,
    /// Time of the PTX compile of [`SMOKE_KERNEL`]; `None` when it could not run (see warnings).
    pub smoke: Option<Duration>,
    /// Hash mismatches, a missing g++, a failed smoke compile.
    pub warnings: Vec<String>,
    pub elapsed: Duration,
}

/// `alpine-rs backend install --cuda`: downloads the four wheels with pip (or takes them from
/// `wheel_dir`), unpacks them into `<cache>/cuda/` (staged, then renamed: an interrupted install
/// leaves the previous one intact) and compiles [`SMOKE_KERNEL`]. Idempotent: a complete install
/// of the same version whose nvcc runs is kept. Serialized with the verifier's install by
/// `<cache>/backend/.lock`.
pub fn install_cuda(
    opts: &CudaInstallOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<CudaInstallReport, CudaError> {
    install_cuda_with_env(opts, progress, &process_env)
}

pub fn install_cuda_with_env(
    opts: &CudaInstallOptions,
    progress: &mut dyn FnMut(&str),
    env: EnvLookup,
) -> Result<CudaInstallReport, CudaError> {
    let t0 = Instant::now();
    let wheel_root = wheel_root(&opts.version)?;
    let layout = CacheLayout::new(cache_dir_with(opts.cache_dir.as_deref(), env)?);
    let backend = layout.backend_dir();
    fs::create_dir_all(&backend)
        .map_err(|e| BackendError::io(format!("cannot create {}", backend.display()), e))?;
    let mut lock = InstallLock::open(&layout)?;
    let _guard = lock.acquire(progress)?;
    let dir = layout.cuda_dir();
    let nvcc = dir.join("bin").join("nvcc");
    let mut warnings = Vec::new();

    let kept = CudaManifest::load(&dir)
        .filter(|m| m.version == opts.version)
        .and_then(|m| nvcc_version(&nvcc).ok().map(|v| (m, v)));
    let (manifest, step) = match kept {
        Some((m, v)) => {
            progress(&format!("nvcc already installed ({v})"));
            (CudaManifest { nvcc_version: v, ..m }, Step::Kept)
        }
        None => {
            let step = if opts.wheel_dir.is_some() { Step::FromWheel } else { Step::Downloaded };
            let m = fetch_and_unpack(opts, &layout, &wheel_root, progress, &mut warnings)?;
            (m, step)
        }
    };
    progress(&format!("nvcc: {} ({})", nvcc.display(), manifest.nvcc_version));

    let smoke = match locate_nvcc(Some(&layout.root), &|k| {
        // The cache's nvcc is checked, whatever $ALPINE_RS_NVCC says.
        if k == NVCC_ENV {
            None
        } else {
            env(k)
        }
    }) {
        Ok(tc) => {
            progress("compiling a test kernel to PTX…");
            match compile_ptx_source(&tc, "alpine_smoke.cu", SMOKE_KERNEL, &PtxOptions::default()) {
                Ok(o) => Some(o.elapsed),
                Err(e) => {
                    warnings.push(format!("the test kernel does not compile: {e}"));
                    None
                }
            }
        }
        Err(e) => {
            warnings.push(e.to_string());
            None
        }
    };
    for w in &warnings {
        progress(&format!("warning: {w}"));
    }
    progress(&format!(
        "CUDA toolchain installed in {} ({:.1} s)",
        dir.display(),
        t0.elapsed().as_secs_f64()
    ));
    Ok(CudaInstallReport {
        cache_dir: layout.root.clone(),
        dir,
        nvcc,
        nvcc_version: manifest.nvcc_version,
        step,
        wheels: manifest.wheels,
        smoke,
        warnings,
        elapsed: t0.elapsed(),
    })
}

/// `nvidia/cu<major>/`, where the wheels of a release put everything; releases before 13 have
/// no nvcc wheel.
fn wheel_root(version: &str) -> Result<String, CudaError> {
    let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    if major < 13 {
        return Err(CudaError::NoNvccWheel { version: version.to_string() });
    }
    Ok(format!("nvidia/cu{major}/"))
}

fn fetch_and_unpack(
    opts: &CudaInstallOptions,
    layout: &CacheLayout,
    wheel_root: &str,
    progress: &mut dyn FnMut(&str),
    warnings: &mut Vec<String>,
) -> Result<CudaManifest, CudaError> {
    let version = &opts.version;
    let download = TempDir::new_in(&layout.root, "cuda-download")?;
    let staging = TempDir::new_in(&layout.root, "cuda-staging")?;
    let pinned = version == CUDA_VERSION;
    let hint = format!(
        "Download the wheels elsewhere ('pip download --no-deps {}' with =={version} each) and \
         run 'alpine-rs backend install --cuda --cuda-wheels DIR'.",
        CUDA_WHEELS.map(|w| w.package).join(" ")
    );
    let mut wheels = Vec::new();
    for w in CUDA_WHEELS {
        let prefix = format!("{}-{version}-", w.package.replace('-', "_"));
        let wheel = match &opts.wheel_dir {
            Some(d) => {
                progress(&format!("using {} {version} from {}", w.package, d.display()));
                find_wheel(d, &prefix)?.ok_or_else(|| CudaError::WheelMissing {
                    dir: d.clone(),
                    pattern: format!("{prefix}*.whl"),
                    requirement: format!("{}=={version}", w.package),
                })?
            }
            None => {
                let size = if pinned { format!(" ({} MB)", w.mb) } else { String::new() };
                progress(&format!("downloading {} {version}{size} with pip…", w.package));
                let req = format!("{}=={version}", w.package);
                pip_download(&opts.python, &req, &prefix, download.path(), &hint)?
            }
        };
        let sha256 = sha256_file(&wheel)
            .map_err(|e| BackendError::io(format!("cannot read {}", wheel.display()), e))?;
        if pinned
            && cfg!(all(target_os = "linux", target_arch = "x86_64"))
            && sha256 != w.linux_x64_sha256
        {
            warnings.push(format!(
                "{} has sha256 {sha256}, expected {} for {} {CUDA_VERSION}",
                wheel.display(),
                w.linux_x64_sha256,
                w.package
            ));
        }
        progress(&format!("unpacking {}…", w.package));
        let n = unpack(&wheel, wheel_root, staging.path())?;
        if n == 0 {
            return Err(BackendError::WheelMember {
                wheel: wheel.clone(),
                member: format!("{wheel_root}*"),
                expected: format!("{} {version}", w.package),
            }
            .into());
        }
        let size = fs::metadata(&wheel).map(|m| m.len()).unwrap_or(0);
        let file = wheel.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        wheels.push(WheelRecord { file, sha256, size });
    }
    if !pinned {
        warnings.push(format!("no pinned hashes for CUDA {version}; the wheels were not checked"));
    }
    // Checked before the swap, so that a bad download never replaces a working install.
    let nvcc_version =
        nvcc_version(&staging.path().join("bin").join("nvcc")).map_err(|detail| {
            CudaError::Broken {
                path: layout.cuda_dir().join("bin").join("nvcc"),
                origin: "the downloaded wheels".into(),
                detail,
                hint: "Is this platform one NVIDIA publishes nvcc wheels for (Linux x86_64 or \
                   aarch64)?"
                    .into(),
            }
        })?;
    let manifest = CudaManifest {
        format: CUDA_MANIFEST_FORMAT,
        version: version.clone(),
        wheels,
        nvcc_version,
    };
    let text = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| BackendError::io("cannot serialize the CUDA manifest", e.into()))?;
    atomic_write(&staging.path().join("manifest.json"), &text)?;
    swap_into_place(staging.path(), &layout.cuda_dir(), &layout.root)?;
    Ok(manifest)
}

fn find_wheel(dir: &Path, prefix: &str) -> Result<Option<PathBuf>, BackendError> {
    let entries = fs::read_dir(dir)
        .map_err(|e| BackendError::io(format!("cannot list {}", dir.display()), e))?;
    Ok(entries.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".whl"))
    }))
}

/// Extracts the members under `root` (without that prefix) into `dest`, keeping their executable
/// bits; returns how many files were written.
fn unpack(wheel: &Path, root: &str, dest: &Path) -> Result<usize, BackendError> {
    let zip_err = |source| BackendError::Zip { path: wheel.to_path_buf(), source };
    let io_err = |what: &Path, e| BackendError::io(format!("cannot write {}", what.display()), e);
    let file = File::open(wheel)
        .map_err(|e| BackendError::io(format!("cannot open {}", wheel.display()), e))?;
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(zip_err)?;
    let mut written = 0;
    for i in 0..archive.len() {
        let mut member = archive.by_index(i).map_err(zip_err)?;
        // `enclosed_name` refuses absolute names and `..`: a wheel cannot write outside `dest`.
        let Some(name) = member.enclosed_name() else { continue };
        let Ok(rel) = name.strip_prefix(root) else { continue };
        let rel_str = rel.to_string_lossy();
        if member.is_dir()
            || rel.as_os_str().is_empty()
            || SKIPPED_MEMBERS.iter().any(|s| rel_str.starts_with(s))
        {
            continue;
        }
        let out = dest.join(rel);
        if let Some(parent) = out.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        let mut f = File::create(&out).map_err(|e| io_err(&out, e))?;
        io::copy(&mut member, &mut f).map_err(|e| io_err(&out, e))?;
        if member.unix_mode().is_some_and(|m| m & 0o111 != 0) {
            set_executable(&f).map_err(|e| io_err(&out, e))?;
        }
        written += 1;
    }
    Ok(written)
}

/// Replaces `dest` by `staged` with renames: the old install moves aside first and is deleted
/// after, so that `dest` is either the old or the new install, never a mix.
fn swap_into_place(staged: &Path, dest: &Path, root: &Path) -> Result<(), BackendError> {
    let old = root.join(format!(".cuda-old-{}", unique_suffix()));
    if dest.exists() {
        fs::rename(dest, &old)
            .map_err(|e| BackendError::io(format!("cannot move {} aside", dest.display()), e))?;
    }
    fs::rename(staged, dest).map_err(|e| {
        // Put the old install back: a failed install must not lose a working one.
        let _ = fs::rename(&old, dest);
        BackendError::io(format!("cannot move the new toolchain to {}", dest.display()), e)
    })?;
    let _ = fs::remove_dir_all(&old);
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Doctor

/// The `nvcc` line of `alpine-rs backend doctor`, with a PTX compile of [`SMOKE_KERNEL`]. An
/// absent or broken toolchain is a problem only when `required` (`doctor --cuda`); otherwise it
/// is a note, and a broken one also a warning.
pub fn doctor_component(
    cache_dir: Option<&Path>,
    env: EnvLookup,
    required: bool,
) -> (ComponentStatus, Vec<String>) {
    let mut status = ComponentStatus {
        component: "nvcc",
        path: None,
        version: None,
        sha256: None,
        problem: None,
        note: String::new(),
    };
    let mut warnings = Vec::new();
    let mut fail = |status: &mut ComponentStatus, msg: String| {
        if required {
            status.problem = Some(msg);
        } else {
            warnings.push(format!("nvcc: {msg}"));
        }
    };
    match locate_nvcc(cache_dir, env) {
        Ok(tc) => {
            status.path = Some(tc.nvcc.clone());
            status.version = Some(tc.version.clone());
            match compile_ptx_source(&tc, "alpine_smoke.cu", SMOKE_KERNEL, &PtxOptions::default()) {
                Ok(o) => {
                    status.note = format!(
                        "{}, test kernel compiled to PTX ({}) in {:.2} s",
                        tc.origin,
                        o.arch,
                        o.elapsed.as_secs_f64()
                    );
                }
                Err(e) => {
                    status.note = tc.origin.to_string();
                    fail(&mut status, format!("the test kernel does not compile: {e}"));
                }
            }
        }
        Err(CudaError::NotProvisioned) if !required => {
            status.note = "absent: optional, for CUDA compile checks (alpine-rs backend \
                           install --cuda)"
                .into();
        }
        Err(e) => {
            status.note = "unusable".into();
            fail(&mut status, e.to_string());
        }
    }
    (status, warnings)
}
