//! Floats as VerCors verifies them, as real numbers (`viper/encode/floats.rs`): the kernels and
//! programs of `fixtures/verify_floats/` (C, CUDA and PVL's `float64`) verify and their wrong
//! twins fail; the file name gives the verdict (`*_ok`, `*_bad_*`, `unsupported_*` refused with
//! V-UNSUPPORTED, `rejected_*` with V-TYPE: a float where a boolean or a permission belongs). Every report says that floats were read as reals (V-FLOAT-REAL, a warning),
//! and the interpreter runs them as the same exact rationals. Runs Silicon.

mod common;

use std::path::PathBuf;

fn fixtures() -> Vec<PathBuf> {
    let dir = common::root().join("fixtures/verify_floats");
    let mut files = Vec::new();
    for ext in ["c", "cu", "pvl"] {
        files.extend(common::files(&dir, ext));
    }
    files.sort();
    assert!(files.len() >= 9, "float fixtures missing");
    files
}

#[test]
fn floats_verify_as_reals_and_their_twins_fail() {
    let files = fixtures();
    let reports = common::verify_json(&["--no-cache", "--jobs", "2"], &files);
    let mut wrong = Vec::new();
    for (p, got) in files.iter().zip(&reports) {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let want = if name.starts_with("unsupported_") || name.starts_with("rejected_") {
            "Unsupported"
        } else if name.contains("_bad_") {
            "Failed"
        } else {
            "Verified"
        };
        let codes: Vec<&str> = got["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["code"].as_str())
            .collect();
        if got["verdict"] != want {
            wrong.push(format!("{name}: expected {want}, got {got}"));
        } else if name.starts_with("unsupported_") && codes.first() != Some(&"V-UNSUPPORTED") {
            wrong.push(format!("{name}: expected V-UNSUPPORTED first, got {codes:?}"));
        } else if name.starts_with("rejected_") && codes.first() != Some(&"V-TYPE") {
            wrong.push(format!("{name}: expected V-TYPE first, got {codes:?}"));
        } else if want != "Unsupported" && !codes.contains(&"V-FLOAT-REAL") {
            wrong.push(format!("{name}: the report does not say floats are reals: {codes:?}"));
        }
        if name == "division_bad_zero.c" && !codes.contains(&"V-DIV0") {
            wrong.push(format!("{name}: expected V-DIV0, got {codes:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The interpreter runs floats as exact rationals, as `verify` reads them: the correct
/// programs run clean and the wrong twins fail at run time too (a division by zero shows only
/// on an input that draws it, so that twin is the verifier's alone).
#[test]
fn the_interpreter_runs_floats_as_the_verifier_reads_them() {
    let mut wrong = Vec::new();
    for p in fixtures() {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let skip = ["unsupported_", "rejected_", "division_bad"];
        let want = if skip.iter().any(|k| name.starts_with(k)) {
            continue;
        } else if name.contains("_bad_") {
            1
        } else {
            0
        };
        let (code, out, err) = common::run_cli(&["run", &p.display().to_string()]);
        if code != want {
            wrong.push(format!("{name}: run exit {code}, expected {want}\n{out}{err}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// An optimization of a float kernel declares its temporaries with C's float type (found by
/// `sweep`: prefetching wrote PVL's `float32` into the CUDA text), and its output verifies.
#[test]
fn prefetching_a_float_kernel_writes_c_and_verifies() {
    let f = common::root().join("fixtures/verify_floats/loop_accumulate_ok.cu");
    let f = f.display().to_string();
    let line = std::fs::read_to_string(&f)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("__global__"))
        .expect("a kernel")
        + 1;
    let at = format!("line:{line}");
    let args = ["apply", "--opt", "prefetch", "--at", &at, "--array", "x", "--locations", "t"];
    let (code, out, err) = common::run_cli(&[&args[..], &["--verify", &f]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("float x_reg_0;") && !out.contains("float32"), "{out}");
}
