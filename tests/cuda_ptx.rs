//! CUDA compile checks (issue 23): every `.cu` fixture compiles to PTX with the provisioned nvcc,
//! and nvcc's rejections come back as errors with its message. Without a toolchain (no
//! `alpine-rs backend install --cuda`, no g++) the checks that need nvcc print why they are skipped
//! and pass; `.ci/run` provisions it.
//!
//! A fixture that is not meant to compile (e.g. a parse-error case of the CUDA front end) says so
//! in its header: `// nvcc: skip <reason>`.

mod common;

use alpine_rs::verify::backend::cuda::{
    compile_ptx_source, compile_ptx_with, locate_nvcc, CudaError, NvccToolchain, PtxOptions,
    NVCC_ENV, PTX_ARCH,
};
use alpine_rs::verify::backend::env_from_map;
use common::{files, header, root, run_cli, tmpdir};
use std::ffi::OsString;
use std::io::Write;

/// The toolchain `.ci/run` provisions, or `None` after saying on stderr why the test is skipped.
fn toolchain(test: &str) -> Option<NvccToolchain> {
    let why = match locate_nvcc(None, &|k| std::env::var_os(k).filter(|v| !v.is_empty())) {
        Ok(tc) => return Some(tc),
        Err(CudaError::NotProvisioned) => {
            "nvcc not provisioned (alpine-rs backend install --cuda)".to_string()
        }
        Err(e) => format!("no usable nvcc: {e}"),
    };
    // Written to the stderr handle rather than with eprintln!, which the test harness captures
    // and shows only for failing tests: a skip must be visible in a passing run's log.
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
    None
}

#[test]
fn every_cuda_fixture_compiles_to_ptx() {
    let dir = root().join("fixtures/cuda");
    let fixtures = files(&dir, "cu");
    assert!(!fixtures.is_empty(), "no .cu files under {}", dir.display());
    let Some(tc) = toolchain("every_cuda_fixture_compiles_to_ptx") else { return };
    eprintln!("nvcc {} ({}), -arch={PTX_ARCH}", tc.nvcc.display(), tc.version);
    let mut failures = Vec::new();
    let mut compiled = 0;
    for f in &fixtures {
        let src = std::fs::read_to_string(f).expect("readable fixture");
        if let Some(reason) = header(&src, "nvcc").filter(|h| h.starts_with("skip")) {
            eprintln!("{}: not compiled ({reason})", f.display());
            continue;
        }
        match compile_ptx_with(&tc, f, &PtxOptions::default()) {
            Ok(out) => {
                compiled += 1;
                // A kernel becomes a PTX entry (host-only fixtures have none).
                if src.contains("__global__") && !out.ptx.contains(".entry") {
                    failures.push(format!("{}: PTX without an .entry", f.display()));
                }
                if !out.warnings.is_empty() {
                    eprintln!("{}: nvcc warnings:\n{}", f.display(), out.warnings);
                }
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    eprintln!("{compiled} of {} .cu fixtures compiled to PTX", fixtures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_smoke_fixture_keeps_its_kernels_and_barriers() {
    let Some(tc) = toolchain("the_smoke_fixture_keeps_its_kernels_and_barriers") else { return };
    let out =
        compile_ptx_with(&tc, &root().join("fixtures/cuda/ptx_smoke.cu"), &PtxOptions::default())
            .expect("ptx_smoke.cu compiles");
    assert!(out.ptx.contains(&format!(".target {PTX_ARCH}")), "{}", out.ptx);
    for needle in ["vector_add", "block_sum", "bar.sync", "atom.global.add", ".shared"] {
        assert!(out.ptx.contains(needle), "no {needle} in the PTX:\n{}", out.ptx);
    }
}

#[test]
fn a_type_error_comes_back_with_nvcc_message() {
    let Some(tc) = toolchain("a_type_error_comes_back_with_nvcc_message") else { return };
    let src = "__global__ void k(int *a) {\n  float *p = a;\n  p[threadIdx.x] = 0.0f;\n}\n";
    let err = compile_ptx_source(&tc, "bad.cu", src, &PtxOptions::default()).unwrap_err();
    let CudaError::Compile { file, stderr } = &err else { panic!("not a compile error: {err}") };
    assert_eq!(file.to_str(), Some("bad.cu"));
    // nvcc's own words, with the file name given rather than the temporary file's.
    assert!(stderr.contains("bad.cu(2): error"), "{stderr}");
    assert!(stderr.contains("\"int *\""), "{stderr}");
    assert_eq!(err.exit_code(), 1);

    let err =
        compile_ptx_with(&tc, &root().join("fixtures/cuda/absent.cu"), &PtxOptions::default())
            .unwrap_err();
    assert!(matches!(err, CudaError::Input { .. }), "{err}");
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn a_missing_toolchain_is_exit_code_3_with_the_install_command() {
    let cache = tmpdir("cuda_ptx", "no-toolchain");
    let env =
        env_from_map([("PATH".to_string(), OsString::from("/nonexistent"))].into_iter().collect());
    let err = locate_nvcc(Some(&cache), &env).unwrap_err();
    assert!(matches!(err, CudaError::NotProvisioned), "{err}");
    assert!(err.to_string().contains("alpine-rs backend install --cuda"), "{err}");
    assert_eq!(err.exit_code(), 3);
    let env = env_from_map([(NVCC_ENV.to_string(), OsString::from("/nonexistent/nvcc"))].into());
    let err = locate_nvcc(Some(&cache), &env).unwrap_err();
    assert!(matches!(err, CudaError::Broken { .. }), "{err}");
    assert_eq!(err.exit_code(), 3);

    // The CLI: wheels that are not there, and a release without nvcc wheels, are exit 3.
    let c = cache.to_str().unwrap();
    let (code, _, stderr) =
        run_cli(&["backend", "install", "--cuda", "--cuda-wheels", c, "--cache-dir", c]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("error[E-BACKEND]") && stderr.contains("nvidia_nvvm-"), "{stderr}");
    let (code, stdout, _) = run_cli(&[
        "backend",
        "install",
        "--cuda",
        "--cuda-version",
        "12.9.86",
        "--cache-dir",
        c,
        "--format",
        "json",
    ]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(v["ok"], false);
    assert!(
        v["diagnostics"][0]["message"].as_str().unwrap().contains("only releases 13 and later"),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// scripts/gpu_compare.py needs a GPU to run kernels, but its build step does not: this keeps
/// the script and its example harness compiling with the provisioned toolchain.
#[test]
fn the_gpu_compare_script_builds_its_example() {
    let Some(tc) = toolchain("the_gpu_compare_script_builds_its_example") else { return };
    let kernel = root().join("fixtures/cuda/ptx_smoke.cu");
    let out = std::process::Command::new("python3")
        .arg(root().join("scripts/gpu_compare.py"))
        .args([&kernel, &kernel, &root().join("scripts/gpu_compare_harness.cu")])
        .arg("--compile-only")
        .arg("--nvcc")
        .arg(&tc.nvcc)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "gpu_compare: skipped: cannot run python3: {e}");
            return;
        }
    };
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("built orig:") && text.contains("built opt:"), "{text}");
}
