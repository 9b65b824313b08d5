//! Generated permissions for VeyMont's permission-free global programs
//! (`crates/analyze/src/genperms`), verified with Silicon. The programs are in
//! `fixtures/verify_genperms/`: `global_ok` verifies (roles built in a constructor, run in a
//! loop and side by side in `par` arms); each `global_bad_*` breaks it in one way and must fail
//! (a wrong postcondition, a race between arms, a role left null, a property the callee does
//! not promise to keep); `plain_unframed` is not a global program, so nothing is generated
//! and it fails as written. The flags force or disable the generation.

mod common;

use common::root;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/verify_genperms").join(name)
}

fn codes(v: &serde_json::Value) -> Vec<String> {
    v["diagnostics"]
        .as_array()
        .map(|ds| ds.iter().filter_map(|d| d["code"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
fn global_programs_verify_with_generated_permissions_and_their_violations_fail() {
    let cases = [
        ("global_ok.pvl", "Verified", ""),
        ("global_bad_post.pvl", "Failed", "V-POST"),
        ("global_bad_race.pvl", "Failed", "V-PAR-PRE"),
        ("global_bad_null.pvl", "Failed", "V-POST"),
        ("global_bad_frame.pvl", "Failed", "V-POST"),
        ("plain_unframed.pvl", "Failed", "V-UNFRAMED"),
    ];
    let paths: Vec<PathBuf> = cases.iter().map(|(n, _, _)| fixture(n)).collect();
    let results = common::verify_json(&["--no-cache"], &paths);
    for ((name, verdict, code), got) in cases.iter().zip(&results) {
        assert_eq!(got["verdict"], *verdict, "{name}: {got}");
        let cs = codes(got);
        if !code.is_empty() {
            assert_eq!(cs.first().map(String::as_str), Some(*code), "{name}: {got}");
        }
        // The note says when permissions were generated without being asked for.
        let global = name.starts_with("global_");
        assert_eq!(cs.iter().any(|c| c == "V-GENERATED-PERMS"), global, "{name}: {got}");
    }
}

#[test]
fn the_flags_force_or_disable_the_generation() {
    let forced = common::verify_json(
        &["--no-cache", "--generate-permissions"],
        &[fixture("plain_unframed.pvl")],
    );
    assert_eq!(forced[0]["verdict"], "Verified", "{}", forced[0]);
    // Asked for: no note.
    assert!(!codes(&forced[0]).iter().any(|c| c == "V-GENERATED-PERMS"), "{}", forced[0]);

    let off = common::verify_json(
        &["--no-cache", "--no-generate-permissions"],
        &[fixture("global_ok.pvl")],
    );
    assert_eq!(off[0]["verdict"], "Failed", "{}", off[0]);
    assert_eq!(codes(&off[0]).first().map(String::as_str), Some("V-UNFRAMED"), "{}", off[0]);

    let (code, _, err) = common::run_cli(&[
        "verify",
        "--generate-permissions",
        "--no-generate-permissions",
        fixture("global_ok.pvl").to_str().unwrap_or_default(),
    ]);
    assert_eq!(code, 2, "{err}");
}
