//! Iteration merging on the shared corpus and the project's own fixtures: every file does what its
//! `// expect:` header says, and every output / refusal is snapshotted.

mod common;

use common::{driver_case, files, root};

const OPT: &str = "iter_merge";
const KEYWORDS: &[&str] = &["iter_merge", "merge"];

#[test]
fn corpus() {
    let dir = root().join("../shared/corpus/merge");
    let fs = files(&dir);
    assert!(!fs.is_empty(), "corpus not found at {}", dir.display());
    for f in fs {
        let (snap, content) = driver_case(&f, "corpus", OPT, KEYWORDS);
        insta::assert_snapshot!(snap, content);
    }
}

#[test]
fn fixtures() {
    for f in files(&root().join("fixtures/merge")) {
        let (snap, content) = driver_case(&f, "fixture", OPT, KEYWORDS);
        insta::assert_snapshot!(snap, content);
    }
}
