//! Invariants of the layout (ARCHITECTURE.md).

use std::path::Path;

/// Every `.rs` file below `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable directory") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The front end depends on nothing above it in the pipeline: no path into analyze, check, sem,
/// viper, verify, transforms or cli appears in src/front.
#[test]
fn the_front_end_imports_nothing_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/front"), &mut files);
    assert!(files.len() >= 10, "src/front not found");
    let above = [
        "analyze",
        "check",
        "sem",
        "viper",
        "verify",
        "transforms",
        "cli",
    ];
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        for (n, line) in text.lines().enumerate() {
            for m in above {
                if line.contains(&format!("crate::{m}::")) || line.contains(&format!("crate::{m};"))
                {
                    bad.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "src/front reaches up the pipeline:\n{}",
        bad.join("\n")
    );
}
