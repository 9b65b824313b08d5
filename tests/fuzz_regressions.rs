//! The fuzzers' findings, fixed (issue 26): every file of `fixtures/fuzz/` is the minimized
//! input of one finding, run through the target that found it, which must now find nothing.
//!
//! Each file starts with its header:
//!
//! ```text
//! // fuzz: apply --opt unroll --at line:5 --factor 0
//! // found: what the fuzzer found, and where the fix is
//! ```
//!
//! `fuzz:` names the target (`parse`, `list`, `apply`, `encode`, `interp`, `validate`) and its
//! arguments: for `parse` and `list` `--dialect v1|v2`; for `apply` the command line's `--opt`,
//! `--at`, parameter flags (values with spaces in double quotes) and `--keep-going`; for
//! `validate` `--mutant FILE`, the other program (in the same folder). A finding of the slow
//! Silicon check (the encoder wrote Viper that Silicon rejects) is now refused before Silicon:
//! its `// expect: CODE` header names the refusal the encoder must give.

use testkit::fuzz;

use alpine_rs::cli::apply::StepSpec;
use alpine_rs::front::DialectChoice;
use alpine_rs::transforms::params::Raw;
use alpine_rs::transforms::registry;
use fuzz::targets::{
    apply_target, encode_target, interp_target, list_target, parse_target, timed, validate_target,
    ApplyRequest,
};
use fuzz::Finding;
use std::time::Duration;

/// Words of an argument line; double quotes group words.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// The `apply` request of `args` (the command line's flags after `apply`).
fn apply_request(args: &[String]) -> ApplyRequest {
    let mut req = ApplyRequest::default();
    let mut i = 0;
    let switch = |flag: &str| {
        registry::ALL.iter().flat_map(|o| o.meta().params).any(|p| p.flag == flag && p.is_switch())
    };
    while i < args.len() {
        let flag = args[i].trim_start_matches("--");
        i += 1;
        match flag {
            "keep-going" => req.keep_going = true,
            "opt" => {
                req.steps.push(StepSpec { opt: args[i].clone(), ..StepSpec::default() });
                i += 1;
            }
            "at" => {
                req.steps.last_mut().expect("--at after --opt").at = args[i].clone();
                i += 1;
            }
            f if switch(f) => push(&mut req, f, Raw::Switch(true)),
            f => {
                push(&mut req, f, Raw::Text(args[i].clone()));
                i += 1;
            }
        }
    }
    req
}

fn push(req: &mut ApplyRequest, flag: &str, v: Raw) {
    match req.steps.last_mut() {
        Some(s) => s.params.push((flag.to_string(), v)),
        None => req.overrides.push((flag.to_string(), v)),
    }
}

fn dialect(args: &[String]) -> DialectChoice {
    match args.iter().position(|a| a == "--dialect") {
        Some(i) => args[i + 1].parse().expect("a dialect"),
        None => DialectChoice::Auto,
    }
}

/// Run one fixture through its target.
fn run(path: &std::path::Path) -> Result<(), Finding> {
    let src = std::fs::read_to_string(path).expect("readable");
    let line = src
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix("// fuzz:"))
        .unwrap_or_else(|| panic!("{}: no `// fuzz:` header", path.display()));
    assert!(src.contains("// found:"), "{}: no `// found:` header", path.display());
    let w = words(line);
    let (target, args) = w.split_first().expect("a target");
    // Tight enough that the hangs found come back as failures (the interpreter's runs have a
    // deadline of one second, `small_config`; the slowest `apply` finding took 12 s in debug).
    let budget =
        Duration::from_secs(if matches!(target.as_str(), "interp" | "apply") { 5 } else { 20 });
    let (r, _) = timed(budget, target, &src, || match target.as_str() {
        "parse" => parse_target(&src, dialect(args)).map(drop),
        "list" => list_target(&src, dialect(args)).map(drop),
        "apply" => apply_target(&src, &apply_request(args), 2000).map(drop),
        "encode" => encode_target(&src).map(drop),
        "interp" => interp_target(&src, 0, 100_000).map(drop),
        "validate" => {
            let i = args.iter().position(|a| a == "--mutant").expect("--mutant FILE");
            let other = path.with_file_name(&args[i + 1]);
            let opt = std::fs::read_to_string(&other).expect("the mutant");
            validate_target(&src, &opt, 0, 100_000).map(drop)
        }
        t => panic!("{}: unknown target {t}", path.display()),
    });
    r?;
    if let Some(code) = src.lines().find_map(|l| l.strip_prefix("// expect:")) {
        let code = code.trim();
        let parsed = alpine_rs::front::parse(&src, &Default::default());
        let file = alpine_rs::diag::SourceFile::new("input.pvl", src.as_str());
        let codes: Vec<String> = match alpine_rs::viper::encode(&parsed.program, &file) {
            Ok(_) => vec!["(encoded)".into()],
            Err(ds) => ds.iter().map(|d| d.code.clone()).collect(),
        };
        if !codes.iter().any(|c| c == code) {
            return Err(Finding::Broken(format!(
                "expected the encoder to refuse with {code}, got {codes:?}"
            )));
        }
    }
    Ok(())
}

#[test]
fn findings_stay_fixed() {
    let dir = fuzz::root().join("fixtures/fuzz");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).expect("fixtures/fuzz") {
        let p = e.expect("entry").path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        // A `validate` finding's second program is read through its fixture.
        if (name.ends_with(".pvl") || name.ends_with(".cu")) && !name.contains(".mutant.") {
            files.push(p);
        }
    }
    files.sort();
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| run(p).err().map(|f| format!("{}: {f}", p.display())))
        .collect();
    eprintln!("{} findings checked", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn argument_lines_read_like_the_command_line() {
    let req =
        apply_request(&words(r#"--opt tile --at line:4 --tile-size "n / 2" --tile-mode inter"#));
    assert_eq!(req.steps.len(), 1);
    assert_eq!(req.steps[0].at, "line:4");
    assert_eq!(req.steps[0].params[0], ("tile-size".to_string(), Raw::Text("n / 2".into())));
    assert_eq!(
        req.describe(),
        r#"apply --opt tile --at line:4 --tile-size "n / 2" --tile-mode "inter""#
    );
}
