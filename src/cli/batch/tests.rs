//! Unit tests of the plan: spans of YAML nodes, pattern bases and the mirroring root, and plan
//! errors pointing into the YAML.

use super::locate::{locate, Seg};
use super::plan::{common_ancestor, load_plan, normalize, pattern_base};
use crate::front::span::Span;
use std::path::{Path, PathBuf};

const PLAN: &str = "\
# a comment
jobs:
  - name: first
    files: [\"a/*.pvl\", 'b/one.pvl']
    steps:
      - { opt: unroll, at: \"line:12\", factor: 2 }
      - opt: fuse
        at: line:30
        kernels: 2
";

fn text_of(path: &[Seg], key: bool) -> String {
    locate(PLAN, path, key).map(|s| PLAN[s.range()].to_string()).unwrap_or_default()
}

#[test]
fn locates_keys_and_values_in_block_and_flow_style() {
    use Seg::{Index as I, Key as K};
    let in_job = |rest: &[Seg<'static>]| [&[K("jobs"), I(0)], rest].concat();
    let cases = [
        (in_job(&[K("name")]), true, "name"),
        (in_job(&[K("name")]), false, "first"),
        (in_job(&[K("files")]), false, "[\"a/*.pvl\", 'b/one.pvl']"),
        (in_job(&[K("files"), I(1)]), false, "'b/one.pvl'"),
        (in_job(&[K("steps"), I(0), K("factor")]), false, "2"),
        (in_job(&[K("steps"), I(0), K("at")]), false, "\"line:12\""),
        (in_job(&[K("steps"), I(1), K("kernels")]), true, "kernels"),
        (in_job(&[K("steps"), I(1), K("at")]), false, "line:30"),
        // Missing nodes are not found.
        (vec![K("jobs"), I(3)], false, ""),
        (in_job(&[K("output")]), true, ""),
    ];
    for (path, key, want) in cases {
        assert_eq!(text_of(&path, key), want, "{path:?} (key: {key})");
    }
}

#[test]
fn pattern_bases_and_mirroring_root() {
    assert_eq!(pattern_base(Path::new("/p/kernels/**/*.pvl")), PathBuf::from("/p/kernels"));
    assert_eq!(pattern_base(Path::new("/p/extra/one.pvl")), PathBuf::from("/p/extra"));
    assert_eq!(
        common_ancestor(&[PathBuf::from("/p/kernels"), PathBuf::from("/p/extra")]),
        PathBuf::from("/p")
    );
    assert_eq!(normalize(Path::new("/p/q/../r/./s.pvl")), PathBuf::from("/p/r/s.pvl"));
    assert_eq!(normalize(Path::new("./../../w/x/../y.pvl")), PathBuf::from("../../w/y.pvl"));
    assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
}

#[test]
fn plan_errors_point_into_the_yaml() {
    let dir = std::env::temp_dir().join(format!("alpine-rs-plan-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.pvl"), "class A { }\n").unwrap();
    let plan = dir.join("plan.yaml");
    let check = |text: &str| -> Vec<(String, String)> {
        match load_plan(&plan, text) {
            Ok(_) => Vec::new(),
            Err(ds) => ds
                .iter()
                .map(|d| {
                    let sp = d.primary_span().unwrap_or(Span::new(0, 0));
                    (d.code.clone(), text[sp.range()].to_string())
                })
                .collect(),
        }
    };
    assert_eq!(check("jobs:\n  - files: [k.pvl]\n"), vec![]);
    let unknown =
        check("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: unroll, at: 3, factr: 2 }\n");
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].0, "A0701");
    assert!(unknown[0].1.starts_with("factr"), "{unknown:?}");
    // Each plan, the one code it draws, and the text its primary label covers.
    let cases: &[(&str, &str, &str)] = &[
        ("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: vectorize, at: 3 }\n", "A0702", "vectorize"),
        ("jobs:\n  - files: [k.pvl, \"nothing/*.pvl\"]\n", "A0704", "\"nothing/*.pvl\""),
        ("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: tile, at: 3, mode: inter, tile_size: 4, factor: 2 }\n", "A0703", "factor"),
        ("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: merge, at: 3, factor: 2, mode: fast }\n", "A0703", "fast"),
        ("jobs:\n  - files: k.pvl\n    output: out\n    in_place: true\n", "A0706", "in_place"),
        ("jobs:\n  - files: k.pvl\n    output: .\n", "A0707", "output"),
        ("jobs:\n  - files: k.pvl\n    output: o\n  - files: k.pvl\n    output: o\n", "A0707", "output"),
    ];
    for (text, code, token) in cases {
        assert_eq!(check(text), vec![(code.to_string(), token.to_string())], "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
