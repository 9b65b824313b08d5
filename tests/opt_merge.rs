//! Iteration merging on the shared corpus and the project's own fixtures: every file does
//! what its `// expect:` header says, and every output / refusal is snapshotted.

use alpine_rs::diag::render_plain;
use alpine_rs::front::{parse, ParseOptions};
use alpine_rs::transforms::driver::{apply, DriverOptions};
use std::path::{Path, PathBuf};

const OPT: &str = "iter_merge";
const KEYWORDS: &[&str] = &["iter_merge", "merge"];

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "pvl"));
    v.sort();
    v
}

fn header(src: &str, field: &str) -> Option<String> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.trim_start_matches('/').trim().split_once(':'))
        .find(|(k, _)| k.trim() == field)
        .map(|(_, v)| v.trim().to_string())
}

fn check(path: &Path, prefix: &str) {
    let src = std::fs::read_to_string(path).expect("readable");
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let expect = header(&src, "expect").unwrap_or_else(|| panic!("{name}: no expect header"));
    let res = apply(&name, &src, &DriverOptions::default());
    let diags: Vec<_> = res.diagnostics().collect();
    let rendered: String = diags
        .iter()
        .map(|(f, d)| render_plain(&[*f], &[(*d).clone()]))
        .collect::<Vec<_>>()
        .join("\n");
    let snap = format!("{prefix}__{}", name.trim_end_matches(".pvl"));
    if expect == "ok" {
        assert_eq!(res.exit_code(), 0, "{name}: expected ok, got\n{rendered}");
        assert_ne!(res.output, src, "{name}: nothing changed");
        let re = parse(&res.output, &ParseOptions::default());
        assert!(
            !re.has_errors(),
            "{name}: output does not parse\n{}",
            res.output
        );
        for line in res.output.lines() {
            let t = line.trim_start();
            assert!(
                !(t.starts_with("gpuopt")
                    && KEYWORDS.iter().any(|k| t.contains(&format!(" {k} ")))),
                "{name}: consumed annotation left: {line}"
            );
        }
        let mut out = res.output.clone();
        if !rendered.is_empty() {
            out.push_str("\n// ---- diagnostics ----\n");
            out.push_str(&rendered);
        }
        insta::assert_snapshot!(snap, out);
    } else if let Some(rest) = expect.strip_prefix("reject ") {
        let opt = rest.split_whitespace().next().unwrap_or("");
        assert_eq!(opt, OPT, "{name}: reject of another optimization");
        assert_eq!(
            res.exit_code(),
            1,
            "{name}: expected a refusal, got\n{rendered}\n{}",
            res.output
        );
        assert_eq!(res.output, src, "{name}: refused file must stay unchanged");
        assert!(
            diags.iter().any(|(_, d)| d.is_error()),
            "{name}: no error diagnostic"
        );
        insta::assert_snapshot!(snap, rendered);
    } else {
        panic!("{name}: unexpected expectation {expect}");
    }
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/merge");
    let fs = files(&dir);
    assert!(!fs.is_empty(), "corpus not found at {}", dir.display());
    for f in fs {
        check(&f, "corpus");
    }
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/merge");
    for f in files(&dir) {
        check(&f, "fixture");
    }
}
