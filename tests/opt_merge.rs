//! Iteration merging on the shared corpus and the project's own fixtures: every file does what its
//! `// expect:` header says, and every output / refusal is snapshotted.

mod common;

common::snapshot_tests!("merge", |p, prefix| common::driver_case(
    p,
    prefix,
    "iter_merge",
    &["iter_merge", "merge"]
));

mod rounds {
    //! The driver applies loop steps in different methods in rounds on one parse; the output and
    //! the refusals must be those of one step at a time (optimizations.md §8.3), here computed
    //! by the reference loop over the public API ([`super::common::stepwise`]).

    use super::common::{files, header, root, stepwise, Steps};
    use alpine_rs::transforms::driver::{apply, DriverOptions};

    /// Every unroll and merge case of the corpus and the fixtures in one file, one class each
    /// (renamed apart), so that many methods carry loop annotations.
    fn combined() -> String {
        let mut out = String::new();
        let mut n = 0;
        for dir in [
            root().join("../shared/corpus/unroll"),
            root().join("../shared/corpus/merge"),
            root().join("fixtures/unroll"),
            root().join("fixtures/merge"),
        ] {
            for f in files(&dir, "pvl") {
                let src = std::fs::read_to_string(&f).expect("readable");
                // Cases needing command-line flags are not in-source runs.
                if header(&src, "args").is_some() {
                    continue;
                }
                n += 1;
                let renamed: String = src
                    .lines()
                    .map(|l| match l.strip_prefix("class ") {
                        Some(rest) => {
                            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                            format!("class {name}{n} {tail}\n")
                        }
                        None => format!("{l}\n"),
                    })
                    .collect();
                out.push_str(&renamed);
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn rounds_agree_with_single_steps() {
        let src = combined();
        assert!(src.matches("gpuopt").count() >= 40, "too few annotations");
        let res =
            apply("combined.pvl", &src, &DriverOptions { keep_going: true, ..Default::default() });
        let reference = stepwise("combined.pvl", &src, Steps { only: None, keep_going: true });
        let (expected, mut expected_codes) = (reference.output, reference.codes);
        assert!(
            res.output == expected,
            "the driver's output differs from one step at a time:\n{}",
            similar::TextDiff::from_lines(&expected, &res.output)
                .unified_diff()
                .context_radius(4)
                .header("one step at a time", "driver")
        );
        let mut codes: Vec<String> = res
            .diagnostics()
            .filter(|(_, d)| d.is_error())
            .map(|(_, d)| d.code.to_string())
            .collect();
        codes.sort();
        expected_codes.sort();
        assert_eq!(codes, expected_codes, "the refusals differ");
        assert!(!expected_codes.is_empty(), "the combined file has no refusal");
    }
}
