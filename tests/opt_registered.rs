//! The fixtures of every registered optimization do what their `// expect:` headers say. An
//! optimization whose cases need more than the driver has a test binary of its own
//! (`tests/opt_<name>.rs`, which checks them there); every other one is checked here, through
//! the driver, with reviewed snapshots. So a new optimization is tested by adding its folder's
//! fixtures: nothing else names it (ARCHITECTURE.md, "How to add an optimization").

mod common;

use alpine_rs::transforms::registry::ALL;
use common::root;

#[test]
fn fixtures_of_optimizations_without_a_test_binary_of_their_own() {
    let mut checked = Vec::new();
    for opt in ALL {
        let (name, keyword) = (opt.meta().name, opt.meta().keyword);
        if root().join(format!("tests/opt_{name}.rs")).exists() {
            continue;
        }
        let case = |p: &std::path::Path, prefix: &str| {
            common::driver_case(p, prefix, keyword, &[keyword, name])
        };
        for (snap, content) in common::cases("fixture", name, case) {
            insta::assert_snapshot!(format!("{name}__{snap}"), content);
        }
        checked.push(name);
    }
    // Every optimization of the registry is checked somewhere.
    for opt in ALL {
        let name = opt.meta().name;
        assert!(
            checked.contains(&name) || root().join(format!("tests/opt_{name}.rs")).exists(),
            "{name}: no fixtures checked"
        );
    }
}
