//! Invariants of the layout (ARCHITECTURE.md).

mod common;

/// The front end depends on nothing above it in the pipeline: no path into analyze, check, sem,
/// viper, verify, transforms or cli appears in src/front.
#[test]
fn the_front_end_imports_nothing_above_it() {
    let files = common::files(&common::root().join("src/front"), "rs");
    assert!(files.len() >= 10, "src/front not found");
    let above = ["analyze", "check", "sem", "viper", "verify", "transforms", "cli"];
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
    assert!(bad.is_empty(), "src/front reaches up the pipeline:\n{}", bad.join("\n"));
}
