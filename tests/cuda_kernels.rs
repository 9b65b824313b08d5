//! Kernels as GPU programmers write them, annotated as a VerCors user would, through both
//! oracles: `fixtures/cuda/kernels/` holds CUDA (`.cu`) and OpenCL (`.cl`) kernels that use
//! shared memory and barriers (static and dynamic `__shared__` arrays, OpenCL `local`
//! parameters, barriers that redistribute cells between the threads of a block through an
//! injective index map), each with wrong twins.
//!
//! The file name gives the verifier's verdict (`*_ok` verifies, `*_bad_*` fails); the
//! `// run:` header the interpreter's (`ok`: exit 0 with every check passing, `error`: exit 1),
//! with the `// run-args:` header's arguments (a size at which the twin's fault shows).
//! Runs Silicon (the backend `.ci/run` installs).

mod common;
use common::{header, run_cli};
use std::path::PathBuf;

fn kernels() -> Vec<PathBuf> {
    let dir = common::root().join("fixtures/cuda/kernels");
    let mut files = common::files(&dir, "cu");
    files.extend(common::files(&dir, "cl"));
    files
}

fn name(p: &std::path::Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string()
}

#[test]
fn kernels_verify_and_their_twins_fail() {
    let files = kernels();
    assert!(files.len() >= 12, "kernel fixtures missing");
    let reports = common::verify_json(&["--jobs", "2", "--no-cache"], &files);
    let mut wrong = Vec::new();
    for (p, got) in files.iter().zip(&reports) {
        let n = name(p);
        let want = if n.contains("_bad_") { "Failed" } else { "Verified" };
        if got["verdict"] != want {
            wrong.push(format!("{n}: expected {want}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn kernels_run_with_races_and_barriers_checked() {
    let files = kernels();
    let outcomes = common::par_map(&files, |p| {
        let src = std::fs::read_to_string(p).expect("readable fixture");
        let want = header(&src, "run").expect("a `// run:` header");
        let mut args = vec!["run".to_string(), p.display().to_string()];
        args.extend(
            header(&src, "run-args").unwrap_or_default().split_whitespace().map(String::from),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run_cli(&args);
        let ok = match want.as_str() {
            "ok" => code == 0 && out.contains("races pass") && out.contains("divergence pass"),
            "error" => code == 1 && (out.contains("error[R-") || err.contains("error[R-")),
            other => panic!("{}: unknown run expectation `{other}`", name(p)),
        };
        (!ok).then(|| format!("{}: expected run {want}, exit {code}\n{out}{err}", name(p)))
    });
    let wrong: Vec<String> = outcomes.into_iter().flatten().collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
