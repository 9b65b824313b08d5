//! The optimizations on CUDA kernels (issue 23): every fixture under `fixtures/cuda/<opt>/` is
//! applied as its `// apply:` header says. An `ok` case must be written, keep every untouched
//! byte, verify with Silicon (input and output; all in one `verify` run), behave like its input under the interpreter
//! (`// adapter:` for linearized matrices) and compile to PTX when nvcc is provisioned; its output
//! is a reviewed snapshot. A `refused CODE` case must be refused with that code and write nothing.
//!
//! In `// apply:`, `annotations` applies the file's own `gpuopt` annotations; `line:@NAME` is the line of the `// @NAME` marker and `@COL` the column of the
//! last `{` on it (a kernel's thread block is named by its body's brace).

mod common;
use alpine_rs::transforms::registry;
use alpine_rs::verify::backend::cuda::{compile_ptx_with, locate_nvcc, PtxOptions};
use common::{files, header, root, run_cli, tmpdir};
use std::path::{Path, PathBuf};

/// The `apply` arguments of a fixture: the optimization, then `--flag value…` groups (a value may
/// hold spaces: `--locations blockIdx.x * blockDim.x + threadIdx.x`).
fn apply_args(src: &str) -> Vec<String> {
    let line = header(src, "apply").expect("an `// apply:` header");
    let mut line = line.clone();
    for (n, text) in src.lines().enumerate() {
        if let Some(at) = text.find("// @") {
            let marker = text[at + 4..].trim();
            let col = text.rfind('{').map_or(1, |c| c + 1);
            line = line.replace(&format!("line:@{marker}:@COL"), &format!("line:{}:{col}", n + 1));
            line = line.replace(&format!("line:@{marker}"), &format!("line:{}", n + 1));
        }
    }
    // `annotations`: the file's own `gpuopt` annotations, as `alpine-rs apply FILE` applies them.
    if line.trim() == "annotations" {
        return vec!["apply".to_string()];
    }
    let mut groups = line.split(" --");
    let mut args = vec!["apply".to_string(), "--opt".to_string()];
    args.push(groups.next().expect("an optimization").trim().to_string());
    for g in groups {
        let (flag, value) = g.split_once(' ').unwrap_or((g, ""));
        args.push(format!("--{flag}"));
        if !value.trim().is_empty() {
            args.push(value.trim().to_string());
        }
    }
    args
}

/// Applies fixture `f` and checks all but verification; an applied case gives its output text
/// and path (the input and the output are verified together at the end).
fn check_fixture(
    f: &Path,
    out_dir: &Path,
    name: &str,
) -> Result<Option<(String, PathBuf)>, String> {
    let src = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
    let expect = header(&src, "expect").expect("an `// expect:` header");
    let out = out_dir.join(format!("{name}.cu"));
    let mut args = apply_args(&src);
    let (o, p) = (out.display().to_string(), f.display().to_string());
    args.extend(["-o".to_string(), o.clone(), p.clone()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run_cli(&argv);
    if let Some(codeword) = expect.strip_prefix("refused ") {
        if !(code == 1 || code == 2) || !stderr.contains(&format!("[{codeword}]")) || out.exists() {
            return Err(format!(
                "expected a refusal {codeword}, got exit {code}:\n{stdout}{stderr}"
            ));
        }
        return Ok(None);
    }
    if code != 0 {
        return Err(format!("apply exit {code}:\n{stdout}{stderr}"));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    // The contract's text and everything before the first edit stay as they were (except
    // where the optimization rewrites the contract: linearization, tiling).
    let first_diff = src.bytes().zip(text.bytes()).take_while(|(a, b)| a == b).count();
    let contract_end = src.find("@*/").unwrap_or(0);
    let rewrites_contract = header(&src, "apply").is_some_and(|a| {
        registry::ALL.iter().any(|o| o.meta().rewrites_contract && a.starts_with(o.meta().name))
    });
    if first_diff < contract_end && !rewrites_contract {
        return Err(format!("an edit inside the contract:\n{text}"));
    }
    let mut validate = vec!["validate".to_string()];
    if let Some(a) = header(&src, "adapter") {
        validate.extend(["--adapter".to_string(), a]);
    }
    validate.extend([p.clone(), o.clone()]);
    let argv: Vec<&str> = validate.iter().map(String::as_str).collect();
    let (code, so, se) = run_cli(&argv);
    if code != 0 {
        return Err(format!("output does not validate (exit {code}):\n{so}{se}"));
    }
    if let Ok(tc) = locate_nvcc(None, &|k| std::env::var_os(k).filter(|v| !v.is_empty())) {
        compile_ptx_with(&tc, &out, &PtxOptions::default())
            .map_err(|e| format!("output does not compile to PTX: {e}\n{text}"))?;
    }
    Ok(Some((text, out)))
}

/// Verifies `files` with one `verify` run (one JVM, two at a time); the files that do not
/// verify, each with the report's lines about it.
fn unverified(files: &[PathBuf]) -> Vec<String> {
    let mut args = vec!["verify".to_string(), "--jobs".into(), "2".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, so, se) = run_cli(&argv);
    let report = format!("{so}{se}");
    let mut bad = Vec::new();
    for f in files {
        let shown = format!("{}: ", f.display());
        let verified = report
            .lines()
            .any(|l| l.strip_prefix(&shown).is_some_and(|rest| rest.starts_with("verified")));
        if !verified {
            let about: Vec<&str> = report.lines().filter(|l| l.contains(&*shown)).collect();
            bad.push(format!(
                "{} does not verify (exit {code}):\n{}",
                f.display(),
                about.join("\n")
            ));
        }
    }
    if !bad.is_empty() {
        bad.push(format!("the whole report:\n{report}"));
    }
    bad
}

#[test]
fn optimizations_on_cuda_fixtures() {
    let dir = tmpdir("cuda_opts", "all");
    let mut failures = Vec::new();
    let mut seen = std::collections::BTreeMap::<String, (usize, usize)>::new();
    let mut to_verify = Vec::new();
    for opt in registry::ALL.iter().map(|o| o.meta().name) {
        for f in files(&root().join("fixtures/cuda").join(opt), "cu") {
            let name = format!("{opt}__{}", f.file_stem().and_then(|s| s.to_str()).unwrap_or("?"));
            match check_fixture(&f, &dir, &name) {
                Ok(Some((text, out))) => {
                    seen.entry(opt.into()).or_default().0 += 1;
                    insta::assert_snapshot!(name, text);
                    to_verify.extend([f.clone(), out]);
                }
                Ok(None) => seen.entry(opt.into()).or_default().1 += 1,
                Err(e) => failures.push(format!("{}: {e}", f.display())),
            }
        }
    }
    failures.extend(unverified(&to_verify));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Each optimization applies to two kernels at least, and has a refused case.
    for opt in registry::ALL.iter().map(|o| o.meta().name) {
        assert!(seen.get(opt).is_some_and(|(ok, _)| *ok >= 2), "{opt}: {seen:?}");
    }
    for opt in registry::ALL.iter().map(|o| o.meta().name) {
        assert!(seen.get(opt).is_some_and(|(_, no)| *no >= 1), "{opt}: {seen:?}");
    }
}
