//! Invariants of the layout (ARCHITECTURE.md): the crate graph is the written stage order, and
//! every crate and module folder is described there.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// ARCHITECTURE.md's text.
fn architecture() -> String {
    std::fs::read_to_string(common::root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// The stage order as ARCHITECTURE.md writes it: the line `Crate order: a → b → … → z`.
fn written_order() -> Vec<String> {
    let text = architecture();
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Crate order:"))
        .expect("ARCHITECTURE.md has a `Crate order:` line");
    line.split('→').map(|c| c.trim().trim_matches('`').to_string()).collect()
}

/// Each workspace crate with the workspace crates it depends on (normal dependencies), from
/// `cargo metadata`: what cargo itself builds, not what the sources say.
fn crate_graph() -> BTreeMap<String, Vec<String>> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(common::root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let ours: Vec<String> =
        packages.iter().filter_map(|p| p["name"].as_str().map(str::to_string)).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|n| ours.iter().any(|o| o == n))
                .map(str::to_string)
                .collect();
            (p["name"].as_str().unwrap_or_default().to_string(), deps)
        })
        .collect()
}

#[test]
fn each_crate_depends_only_on_the_stages_before_it() {
    let order = written_order();
    let graph = crate_graph();
    let rank = |name: &str| order.iter().position(|o| o == name);
    for name in graph.keys() {
        assert!(rank(name).is_some(), "crate `{name}` is missing from ARCHITECTURE.md's order");
    }
    assert_eq!(order.len(), graph.len(), "the written order names crates cargo does not build");
    let mut backwards = Vec::new();
    for (name, deps) in &graph {
        for d in deps {
            if rank(d) >= rank(name) {
                backwards.push(format!("{name} → {d}"));
            }
        }
    }
    assert!(backwards.is_empty(), "dependencies against the stage order: {backwards:?}");
}

/// A folder's name as ARCHITECTURE.md writes it: its path from the repository root, without a
/// crate's `src/` (`crates/front/src/cuda` is `front/cuda`).
fn written_name(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).expect("inside the repository").to_string_lossy().to_string();
    let rel = rel.strip_prefix("crates/").unwrap_or(&rel).replace("/src/", "/");
    rel.strip_suffix("/src").unwrap_or(&rel).to_string()
}

#[test]
fn every_crate_and_module_folder_is_named_in_architecture_md() {
    let root = common::root();
    let text = architecture();
    let mut dirs = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("transforms"), root.join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
                if common::files(&p, "rs").iter().any(|f| f.parent() == Some(p.as_path())) {
                    dirs.push(p);
                }
            }
        }
    }
    assert!(dirs.len() >= 20, "module folders not found");
    // An optimization's folder is described by its registry entry and its spec (ARCHITECTURE.md
    // describes the layout such folders share), so adding one touches no other file.
    let registered = |name: &str| {
        name.strip_prefix("transforms/").is_some_and(|o| {
            alpine_rs::transforms::registry::ALL.iter().any(|opt| opt.meta().name == o)
        })
    };
    let missing: Vec<String> = dirs
        .iter()
        .map(|d| written_name(root, d))
        .filter(|name| !registered(name))
        .filter(|name| {
            !text.contains(&format!("`{name}`")) && !text.contains(&format!("`{name}/`"))
        })
        .collect();
    assert!(missing.is_empty(), "folders ARCHITECTURE.md does not name (as `path`): {missing:?}");
}
