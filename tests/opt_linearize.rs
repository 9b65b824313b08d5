//! Matrix linearization: every corpus file under corpus/linearize and every fixture under fixtures/linearize
//! does what its `// expect:` header says; outputs and refusals are snapshotted.

mod common;

use alpine_rs::front::parser::{parse, ParseOptions};
use alpine_rs::transforms::driver::{apply, DriverOptions};
use common::{driver_agrees, files, root, stepwise_case};

common::snapshot_tests!("linearize", |p, prefix| stepwise_case(
    common::opt("linearize"),
    p,
    prefix
));

/// Whether a file carries annotations of other optimizations too.
fn mixed(src: &str) -> bool {
    let parsed = parse(src, &ParseOptions::default());
    alpine_rs::analyze::sites::sites(&parsed.program).iter().flat_map(|s| &s.annotations).any(|a| {
        alpine_rs::transforms::registry::lookup(&a.keyword.name) != Some(common::opt("linearize"))
    })
}

#[test]
fn via_driver() {
    driver_agrees(common::opt("linearize"), &[root().join("../shared/corpus/linearize")]);
    // Fixtures with annotations of other kinds go through the whole driver; the others must
    // come out exactly as the step-by-step linearization does.
    let dir = root().join("fixtures/linearize");
    let tmp = std::env::temp_dir().join(format!("alpine-lin-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for p in files(&dir, "pvl") {
        let src = std::fs::read_to_string(&p).unwrap();
        if !mixed(&src) {
            std::fs::copy(&p, tmp.join(p.file_name().unwrap())).unwrap();
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let res = apply(&name, &src, &DriverOptions::default());
        assert_eq!(res.exit_code(), 0, "{name}: the driver refused");
        assert!(
            !res.output.lines().any(|l| l.trim_start().starts_with("gpuopt")),
            "{name}: an annotation is left"
        );
        insta::assert_snapshot!(format!("driver_{}", name.trim_end_matches(".pvl")), res.output);
    }
    driver_agrees(common::opt("linearize"), std::slice::from_ref(&tmp));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A linearization step on the plain (2-D convention) fixture leaves the pending prefetch
/// annotation in terms of the 1-D cell.
#[test]
fn pending_prefetch_follows_the_matrix() {
    let p = root().join("fixtures/linearize/ok_prefetch_pending.pvl");
    let src = std::fs::read_to_string(p).unwrap();
    let (out, _) =
        common::stepwise_apply(common::opt("linearize"), "ok_prefetch_pending.pvl", &src).unwrap();
    assert!(out.contains("gpuopt glob_to_reg g (8 * r + c);"), "{out}");
}

/// `--index-fn` (command line): the helper is inserted once per class, before the first rewritten
/// method, and every rewritten method (the caller too) indexes through it.
#[test]
fn index_fn_helper_once_per_class() {
    use alpine_rs::front::Dialect;
    use alpine_rs::transforms::driver::{At, CliStep};
    use alpine_rs::transforms::params::{build, Raw, Spelling};
    let src =
        std::fs::read_to_string(root().join("fixtures/linearize/ok_rowscale_caller.pvl")).unwrap();
    let line = src.lines().position(|l| l.contains("void scale(")).expect("kernel") + 1;
    let opts = DriverOptions {
        steps: vec![CliStep {
            params: build(
                common::opt("linearize"),
                &[
                    ("array".into(), Raw::Text("m".into())),
                    ("layout".into(), Raw::Text("row".into())),
                    ("dims".into(), Raw::Text("3, 5".into())),
                    ("index_fn".into(), Raw::Switch(true)),
                ],
                Spelling::Key,
                Dialect::V1,
            )
            .expect("valid parameters"),
            at: At { line, col: None },
        }],
        ..Default::default()
    };
    let res = apply("ok_rowscale_caller.pvl", &src, &opts);
    assert_eq!(res.exit_code(), 0, "{:?}", res.reports);
    let out = &res.output;
    assert_eq!(out.matches("pure int vct_ml_Idx(").count(), 1, "{out}");
    assert!(out.contains("m[vct_ml_Idx(5, r, c)]"), "{out}");
    assert!(out.contains("g[vct_ml_Idx(5, r, c)]"), "{out}");
    let helper = out.find("pure int vct_ml_Idx(").unwrap();
    let first_contract = out.find("context_everywhere").unwrap();
    assert!(helper < first_contract, "{out}");
    assert!(!parse(out, &ParseOptions::default()).has_errors(), "{out}");
}
