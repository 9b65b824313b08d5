//! Tiling: every corpus file under corpus/tile and every fixture under fixtures/tile
//! does what its `// expect:` header says; outputs and refusals are snapshotted.

mod common;

use common::{driver_agrees, opt, root, stepwise_case};

common::snapshot_tests!("tile", |p, prefix| stepwise_case(opt("tile"), p, prefix));

#[test]
fn via_driver() {
    driver_agrees(
        opt("tile"),
        &[root().join("../shared/corpus/tile"), root().join("fixtures/tile")],
    );
}
