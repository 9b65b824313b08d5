//! The harnesses the slow suites share: the fuzzer ([`fuzz`]: generators, `apply` plans, random
//! programs, one in-process target per command) and VerCors' example suites as regression tests
//! ([`peer`]). The integration tests (`tests/fuzz_*.rs`, `tests/peer*.rs`), the release fuzz
//! driver (`examples/fuzz.rs`) and the cargo-fuzz targets (`fuzz/`) use them as this crate,
//! which comes after the command line in the crate order (it drives the whole tool).

pub mod fuzz;
pub mod peer;

use std::path::{Path, PathBuf};

/// The repository root (this crate lives in `crates/testkit`).
pub fn root() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    d.canonicalize().unwrap_or(d)
}

/// The shared corpus (`../shared/corpus`).
pub fn corpus_dir() -> PathBuf {
    root().join("../shared/corpus")
}

/// The files with extension `ext` in `dir` and in all its subfolders, sorted by path (component
/// by component: a folder's entries in name order, a subfolder's files where its name sorts).
/// A folder that cannot be read is a broken checkout: it panics.
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap_or_else(|e| panic!("{}: {e}", d.display())).path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The values of the `// key: value` lines of the file header (the `//` lines the file starts
/// with), in order. Any number of slashes and spaces may precede the key, and spaces may
/// surround it: `//key:`, `/// key :` count.
pub fn headers(src: &str, key: &str) -> Vec<String> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.trim_start_matches('/').trim().split_once(':'))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
        .collect()
}

/// The first `// key: value` line of the file header (see [`headers`]).
pub fn header(src: &str, key: &str) -> Option<String> {
    headers(src, key).into_iter().next()
}
