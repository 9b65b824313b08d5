//! fixtures/cost: RaCUDA's benchmark kernels (addSub0–3, vectorAdd, reduce0–3, matMul,
//! matMulTrans) in PVL, each with its launch in the header (`// args: --set …`). Their counts
//! are snapshots (reviewed); where RaCUDA states a bound or a comparison, it is asserted:
//! vectorAdd's 12 sectors per warp and at most one divergent warp, and addSub's rewrite from
//! the divergent version to the coalesced one. `suggest` on the fixtures lists an applicable
//! optimization with its cost change, and the command it prints works.

mod common;

use alpine_rs::sem::cost::{CostConfig, CostReport};
use alpine_rs::sem::{self, Config, InputBound, RunOptions, Status};
use common::{files, header, root, run_cli, tmpdir};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    files(&root().join("fixtures/cost"), "pvl")
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/cost").join(name)
}

/// The `--set NAME=V` flags of a fixture's `// args:` header.
fn sets(src: &str) -> Vec<InputBound> {
    let args = header(src, "args").unwrap_or_default();
    let words: Vec<&str> = args.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[0] == "--set")
        .map(|w| w[1].parse().unwrap_or_else(|e| panic!("bad --set {}: {e}", w[1])))
        .collect()
}

/// The cost of one run of a fixture at its header's sizes.
fn cost(path: &Path) -> CostReport {
    let src = std::fs::read_to_string(path).expect("read fixture");
    let opts = RunOptions {
        random: 1,
        config: Config {
            bounds: sets(&src),
            cost: Some(CostConfig::default()),
            ..Config::default()
        },
        ..RunOptions::default()
    };
    let mut runs = sem::run_program(&src, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs.len(), 1, "{}: one entry method", path.display());
    let r = runs.remove(0);
    let name = path.display().to_string();
    assert_eq!(r.status, Status::Ok, "{}", sem::render(&name, &src, &r.errors));
    r.cost.expect("counting was on")
}

#[test]
fn every_fixture_runs_clean_and_its_counts_are_reviewed() {
    let all = fixtures();
    assert!(all.len() >= 11, "only {} cost fixtures", all.len());
    for f in all {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        let r = cost(&f);
        assert!(r.total.steps > 0, "{stem}: nothing counted");
        insta::assert_snapshot!(format!("cost_{stem}"), r.render());
    }
}

#[test]
fn vector_add_meets_racudas_bounds() {
    // RaCUDA: 12 sectors per warp (three int arrays, four sectors each), at most one
    // divergent warp (the one holding element n).
    let src = std::fs::read_to_string(fixture("vectorAdd.pvl")).expect("read");
    let n = sets(&src).iter().find(|b| b.name == "n").map(|b| b.lo).expect("n is set");
    let r = cost(&fixture("vectorAdd.pvl"));
    let warps = (n as u64).div_ceil(32);
    assert!(r.total.sectors <= 12 * warps, "{} sectors > 12 x {warps}", r.total.sectors);
    assert!(r.total.divwarps <= 1, "{} divergent warps", r.total.divwarps);
    assert_eq!(r.total.conflicts, 0);
}

#[test]
fn addsub_coalesced_rewrite_has_fewer_sectors_and_divergent_warps() {
    let a0 = cost(&fixture("addSub0.pvl"));
    let a2 = cost(&fixture("addSub2.pvl"));
    assert!(a2.total.sectors < a0.total.sectors, "{:?} vs {:?}", a0.total, a2.total);
    assert!(a2.total.divwarps < a0.total.divwarps, "{:?} vs {:?}", a0.total, a2.total);
    // addSub1 removes the branch (no divergence) but keeps the uncoalesced accesses.
    let a1 = cost(&fixture("addSub1.pvl"));
    assert_eq!(a1.total.divwarps, 0);
    assert!(a1.total.sectors > a2.total.sectors);
}

/// `suggest` on a fixture: at least one row with a cost change, and its printed command, run,
/// applies.
fn suggest_works(name: &str) {
    let path = fixture(name);
    let src = std::fs::read_to_string(&path).expect("read");
    let args = header(&src, "args").unwrap_or_default();
    let file = path.to_str().expect("UTF-8 path");
    let mut argv = vec!["suggest", file, "--random", "1", "--json"];
    argv.extend(args.split_whitespace());
    let (code, out, err) = run_cli(&argv);
    // With --json the reason for an exit 3 (nothing measured) is in the document's `message`.
    assert_eq!(code, 0, "{name}: {err}\n{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("suggest --json");
    let rows = doc["suggestions"].as_array().cloned().unwrap_or_default();
    let measured: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["measured"] == true && r["before"]["steps"].as_u64().is_some())
        .collect();
    assert!(!measured.is_empty(), "{name}: no measured suggestion in {out}");
    let best = measured[0];
    let cmd: Vec<String> = best["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .map(|a| a.as_str().expect("string").to_string())
        .collect();
    assert_eq!(cmd.get(1).map(String::as_str), Some("apply"), "{cmd:?}");
    assert!(best["change"].as_f64().is_some(), "{name}: no cost change");
    // Write the output elsewhere: the fixture must stay as it is.
    let out_file = tmpdir("cost_fixtures", name).join("opt.pvl");
    let mut run: Vec<&str> = cmd[1..].iter().map(String::as_str).collect();
    run.extend(["-o", out_file.to_str().expect("UTF-8 path")]);
    let (code, _, err) = run_cli(&run);
    assert_eq!(code, 0, "{name}: `{}` failed: {err}", run.join(" "));
    assert!(out_file.exists());
}

#[test]
fn suggest_lists_a_measured_optimization_with_a_working_command() {
    // Three kernels of different shapes in CI; every fixture with ALPINE_SLOW=1.
    let slow = std::env::var("ALPINE_SLOW").is_ok();
    let names: Vec<String> = if slow {
        fixtures()
            .iter()
            .filter_map(|f| f.file_name().and_then(|s| s.to_str()).map(str::to_string))
            .collect()
    } else {
        vec!["reduce0.pvl".into(), "vectorAdd.pvl".into(), "matMul.pvl".into()]
    };
    for n in &names {
        suggest_works(n);
    }
}
