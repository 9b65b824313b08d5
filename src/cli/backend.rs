//! `alpine-rs backend install|doctor`: provisioning of the Viper/Silicon verifier.

use super::common::Format;
use crate::verify::backend::cuda::{self, CudaInstallOptions, CudaInstallReport, CUDA_VERSION};
use crate::verify::backend::{self, BackendConfig, DoctorReport, InstallOptions, InstallReport};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct BackendArgs {
    #[command(subcommand)]
    pub action: BackendAction,
    /// Cache directory (default: $ALPINE_RS_CACHE, $XDG_CACHE_HOME/alpine-rs or ~/.cache/alpine-rs).
    #[arg(long = "cache-dir", global = true)]
    pub cache_dir: Option<PathBuf>,
    /// text, or json: one JSON object on stdout (progress stays on stderr).
    #[arg(long, value_enum, default_value = "text", global = true)]
    pub format: Format,
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// A backend problem as a diagnostic object, like every other command's.
fn error_json(message: &str, help: &str) -> serde_json::Value {
    serde_json::json!({
        "code": "E-BACKEND",
        "severity": "error",
        "message": message,
        "spans": [],
        "notes": [],
        "help": help,
    })
}

fn install_json(r: &InstallReport) -> serde_json::Value {
    let step = |s: &backend::Step| format!("{s:?}").to_lowercase();
    serde_json::json!({
        "action": "install",
        "ok": true,
        "cache_dir": path(&r.cache_dir),
        "silicon": {"path": path(&r.silicon), "sha256": r.silicon_sha256, "step": step(&r.silicon_step)},
        "z3": {"path": path(&r.z3), "version": r.z3_version, "step": step(&r.z3_step)},
        "libz3": {"path": path(&r.libz3.path), "step": step(&r.libz3.step)},
        "driver": {"path": r.driver.as_deref().map(path), "step": step(&r.driver_step)},
        "cds": {"step": step(&r.cds_step)},
        "warnings": r.warnings,
        "time_ms": r.elapsed.as_millis() as u64,
        "diagnostics": [],
    })
}

fn cuda_install_json(r: &CudaInstallReport) -> serde_json::Value {
    serde_json::json!({
        "action": "install",
        "component": "cuda",
        "ok": true,
        "cache_dir": path(&r.cache_dir),
        "nvcc": {"path": path(&r.nvcc), "version": r.nvcc_version, "step": format!("{:?}", r.step).to_lowercase()},
        "wheels": r.wheels.iter().map(|w| serde_json::json!({
            "file": w.file, "sha256": w.sha256, "size": w.size,
        })).collect::<Vec<_>>(),
        "smoke_ms": r.smoke.map(|d| d.as_millis() as u64),
        "warnings": r.warnings,
        "time_ms": r.elapsed.as_millis() as u64,
        "diagnostics": [],
    })
}

fn doctor_json(r: &DoctorReport) -> serde_json::Value {
    let problems: Vec<serde_json::Value> = r
        .components
        .iter()
        .filter_map(|c| {
            let fix = if c.component == "nvcc" {
                "run `alpine-rs backend install --cuda`"
            } else {
                "run `alpine-rs backend install`"
            };
            c.problem.as_ref().map(|p| error_json(&format!("{}: {p}", c.component), fix))
        })
        .collect();
    serde_json::json!({
        "action": "doctor",
        "ok": r.ok(),
        "cache_dir": r.cache_dir.as_deref().map(path),
        "components": r.components.iter().map(|c| serde_json::json!({
            "component": c.component,
            "path": c.path.as_deref().map(path),
            "version": c.version,
            "sha256": c.sha256,
            "problem": c.problem,
            "note": c.note,
        })).collect::<Vec<_>>(),
        "mode": r.mode.map(|m| m.to_string()),
        "smoke": r.smoke.as_ref().map(|(v, t)| serde_json::json!({
            "verdict": v.summary(),
            "time_ms": t.as_millis() as u64,
        })),
        "warnings": r.warnings,
        "diagnostics": problems,
    })
}

#[derive(clap::Subcommand, Debug)]
pub enum BackendAction {
    /// Download Silicon (from the nagini wheel) and, if needed, a z3 binary into the cache; with
    /// --cuda, the CUDA toolchain (nvcc, for PTX compile checks) instead.
    Install {
        /// nagini wheel version holding silicon.jar.
        #[arg(long, default_value = "1.2.0")]
        nagini: String,
        /// z3-solver wheel version, used only when no z3 ≥ 4.8 is found.
        #[arg(long, default_value = "4.8.7.0")]
        z3: String,
        /// Use a nagini wheel downloaded elsewhere.
        #[arg(long = "from-wheel", conflicts_with = "cuda")]
        from_wheel: Option<PathBuf>,
        /// Install the CUDA toolchain (nvcc and the runtime headers from NVIDIA's PyPI wheels)
        /// into <cache>/cuda instead of the verifier. Needs g++ to compile.
        #[arg(long)]
        cuda: bool,
        /// Release of the CUDA wheels (13 or later: earlier nvcc wheels hold no nvcc).
        #[arg(long = "cuda-version", default_value = CUDA_VERSION, requires = "cuda")]
        cuda_version: String,
        /// Use the CUDA wheels in this folder (downloaded elsewhere) instead of pip.
        #[arg(long = "cuda-wheels", requires = "cuda")]
        cuda_wheels: Option<PathBuf>,
        /// Only the Z3 library that apply, run and the other checks open: the system's if it has
        /// one, else libz3.so from the z3-solver 4.8.12.0 wheel into the cache (no Java needed).
        #[arg(long, conflicts_with_all = ["cuda", "from_wheel"])]
        libz3: bool,
    },
    /// Show each component (path, version, hash) and verify a trivial file end to end.
    Doctor {
        /// Treat a missing or broken CUDA toolchain as a problem (it is optional otherwise).
        #[arg(long)]
        cuda: bool,
    },
}

/// Reports an install outcome in the requested format; exit code 0 or 3.
fn report_install<R>(
    result: Result<R, String>,
    format: Format,
    to_json: impl Fn(&R) -> serde_json::Value,
    done: &str,
) -> u8 {
    match (result, format) {
        (Ok(r), Format::Json) => {
            println!("{}", to_json(&r));
            0
        }
        (Ok(_), Format::Text) => {
            eprintln!("{done}");
            0
        }
        (Err(e), Format::Json) => {
            println!(
                "{}",
                serde_json::json!({
                    "action": "install",
                    "ok": false,
                    "diagnostics": [error_json(&e, "`alpine-rs backend doctor` shows what is there")],
                })
            );
            3
        }
        (Err(e), Format::Text) => {
            eprintln!("error[E-BACKEND]: {e}");
            3
        }
    }
}

pub fn main(args: BackendArgs) -> u8 {
    let mut progress = |m: &str| eprintln!("{m}");
    match args.action {
        BackendAction::Install { libz3: true, .. } => {
            let result = crate::verify::backend::install_libz3(
                std::path::Path::new("python3"),
                &mut progress,
                &crate::verify::backend::process_env,
            )
            .map_err(|e| e.to_string());
            let json = |r: &crate::verify::backend::Libz3Report| {
                serde_json::json!({
                    "action": "install",
                    "component": "libz3",
                    "ok": true,
                    "libz3": {"path": path(&r.path), "step": format!("{:?}", r.step).to_lowercase()},
                    "warnings": r.warnings,
                    "diagnostics": [],
                })
            };
            report_install(result, args.format, json, "Z3 library ready")
        }
        BackendAction::Install { cuda: true, cuda_version, cuda_wheels, .. } => {
            let opts = CudaInstallOptions {
                cache_dir: args.cache_dir,
                version: cuda_version,
                wheel_dir: cuda_wheels,
                ..CudaInstallOptions::default()
            };
            let result = cuda::install_cuda(&opts, &mut progress).map_err(|e| e.to_string());
            report_install(result, args.format, cuda_install_json, "CUDA toolchain installed")
        }
        BackendAction::Install { nagini, z3, from_wheel, .. } => {
            let opts = InstallOptions {
                cache_dir: args.cache_dir,
                nagini_version: nagini,
                z3_version: z3,
                from_wheel,
                ..InstallOptions::default()
            };
            let result = backend::install(&opts, &mut progress).map_err(|e| e.to_string());
            report_install(result, args.format, install_json, "backend installed")
        }
        BackendAction::Doctor { cuda } => {
            let cfg = BackendConfig { cache_dir: args.cache_dir, ..BackendConfig::default() };
            let report = backend::doctor_with(&cfg, cuda, &crate::verify::backend::process_env);
            match args.format {
                Format::Json => println!("{}", doctor_json(&report)),
                Format::Text => print!("{report}"),
            }
            if report.ok() {
                0
            } else {
                3
            }
        }
    }
}
