//! Iteration merging on the shared corpus and the project's own fixtures: every file does what its
//! `// expect:` header says, and every output / refusal is snapshotted.

mod common;

use common::{driver_case, files, root};

const OPT: &str = "iter_merge";
const KEYWORDS: &[&str] = &["iter_merge", "merge"];

#[test]
fn corpus() {
    let dir = root().join("../shared/corpus/merge");
    let fs = files(&dir);
    assert!(!fs.is_empty(), "corpus not found at {}", dir.display());
    for f in fs {
        let (snap, content) = driver_case(&f, "corpus", OPT, KEYWORDS);
        insta::assert_snapshot!(snap, content);
    }
}

#[test]
fn fixtures() {
    for f in files(&root().join("fixtures/merge")) {
        let (snap, content) = driver_case(&f, "fixture", OPT, KEYWORDS);
        insta::assert_snapshot!(snap, content);
    }
}

mod rounds {
    //! The driver applies loop steps in different methods in rounds on one parse; the output and
    //! the refusals must be those of one step at a time (optimizations.md §8.3), here computed
    //! by a plain reference loop over the public API.

    use super::common::{files, root};
    use alpine_rs::analyze::names::NameGen;
    use alpine_rs::analyze::sites::{sites, Site};
    use alpine_rs::edit::{removal_span, EditSet, Layout};
    use alpine_rs::front::{parse, ParseOptions};
    use alpine_rs::transforms::driver::{apply, DriverOptions};
    use alpine_rs::transforms::registry::{self, Request};
    use alpine_rs::transforms::{run, Ctx};
    use std::cmp::Reverse;

    /// One annotation per step: remove it, re-parse, optimize, apply, re-parse.
    fn one_step_at_a_time(src: &str) -> (String, Vec<String>) {
        let opts = ParseOptions::default();
        let mut text = src.to_string();
        let mut names = NameGen::for_text(src);
        let mut refused: Vec<usize> = Vec::new();
        let mut codes = Vec::new();
        loop {
            let parsed = parse(&text, &opts);
            let mut pend: Vec<(Site, Request)> = sites(&parsed.program)
                .into_iter()
                .flat_map(|s| {
                    registry::requests(&text, parsed.dialect, &s)
                        .into_iter()
                        .map(move |r| (s.clone(), r))
                })
                .filter(|(_, r)| !refused.contains(&r.annotation.span.start()))
                .collect();
            pend.sort_by_key(|(s, r)| {
                (
                    registry::rank(r.opt()),
                    Reverse(s.depth),
                    r.annotation.span.start(),
                )
            });
            let Some((
                site,
                Request {
                    annotation: ann,
                    params,
                },
            )) = pend.into_iter().next()
            else {
                return (text, codes);
            };
            let removal = removal_span(&text, ann.span);
            let mut es = EditSet::new();
            es.replace(removal, "");
            let text1 = es.apply(&text).expect("removal applies");
            let parsed1 = parse(&text1, &opts);
            let key = if site.keyword.start() >= removal.end() {
                site.keyword.start() - removal.len()
            } else {
                site.keyword.start()
            };
            let site1 = sites(&parsed1.program)
                .into_iter()
                .find(|s| s.keyword.start() == key && s.kind == site.kind)
                .expect("the site after removal");
            let mut ctx = Ctx {
                src: &text1,
                parsed: &parsed1,
                layout: Layout::detect(&text1),
                names: &mut names,
                timeout_ms: alpine_rs::check::DEFAULT_TIMEOUT_MS,
                annotation_text: Some(ann.span.text(&text).to_string()),
            };
            match run(&mut ctx, &site1, &params) {
                Ok(a) => {
                    let out = a.edits.apply(&text1).expect("edits apply");
                    refused = refused
                        .iter()
                        .filter_map(|&o| {
                            let o = if o >= removal.end() {
                                o - removal.len()
                            } else {
                                o
                            };
                            a.edits.map_offset(o)
                        })
                        .collect();
                    names.add_text(&out);
                    text = out;
                }
                Err(diags) => {
                    codes.extend(
                        diags
                            .iter()
                            .filter(|d| d.is_error())
                            .map(|d| d.code.to_string()),
                    );
                    refused.push(ann.span.start());
                }
            }
        }
    }

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
            for f in files(&dir) {
                let src = std::fs::read_to_string(&f).expect("readable");
                // Cases needing command-line flags are not in-source runs.
                if src.lines().any(|l| l.starts_with("// args:")) {
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
        let res = apply(
            "combined.pvl",
            &src,
            &DriverOptions {
                keep_going: true,
                ..Default::default()
            },
        );
        let (expected, mut expected_codes) = one_step_at_a_time(&src);
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
        assert!(
            !expected_codes.is_empty(),
            "the combined file has no refusal"
        );
    }
}
