//! Kernel fusion over the shared corpus and the project's own fixtures.
//!
//! Each file's `// expect:` header says what must happen; outputs and refusals are snapshotted.

mod common;

use common::{header, opt, stepwise, Steps};
use std::path::Path;

fn fuse_case(path: &Path, prefix: &str) -> (String, String) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let src = std::fs::read_to_string(path).expect("read");
    let expect = header(&src, "expect").expect("expect header");
    // `// args: --block-size TS` / `--blocks B` set the parameters.
    let r = stepwise(&name, &src, Steps::only(opt("fuse")));
    let snap = format!("{prefix}__{}", name.trim_end_matches(".pvl"));
    if expect.starts_with("ok") {
        assert_eq!(r.refused, 0, "{name}: expected ok, got:\n{}", r.rendered);
        assert!(!r.output.contains("gpuopt fuse"), "{name}: annotation left behind");
        (snap, format!("{}\n---- diagnostics ----\n{}", r.output, r.rendered))
    } else {
        assert!(expect.starts_with("reject"), "{name}: expects `{expect}`");
        assert!(r.refused > 0, "{name}: expected a refusal, got:\n{}", r.output);
        assert!(r.rendered.contains("error["), "{name}: no error diagnostic");
        (snap, r.rendered)
    }
}

common::snapshot_tests!("fuse", fuse_case);
