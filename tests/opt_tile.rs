//! Tiling: every corpus file under corpus/tile and every fixture under fixtures/tile
//! does what its `// expect:` header says; outputs and refusals are snapshotted.

mod common;

use common::{driver_agrees, files, root, stepwise_case};

#[test]
fn corpus() {
    let dir = root().join("../shared/corpus/tile");
    let fs = files(&dir);
    assert!(!fs.is_empty(), "no corpus files found in {}", dir.display());
    for p in fs {
        let (name, content) = stepwise_case(common::opt("tile"), &p, "corpus");
        insta::assert_snapshot!(name, content);
    }
}

#[test]
fn fixtures() {
    for p in files(&root().join("fixtures/tile")) {
        let (name, content) = stepwise_case(common::opt("tile"), &p, "fixture");
        insta::assert_snapshot!(name, content);
    }
}

#[test]
fn via_driver() {
    driver_agrees(
        common::opt("tile"),
        &[
            root().join("../shared/corpus/tile"),
            root().join("fixtures/tile"),
        ],
    );
}
