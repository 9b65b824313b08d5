//! Kernel fusion over the shared corpus and the project's own fixtures.
//!
//! Each file's `// expect:` header says what must happen; outputs and refusals are snapshotted.

use alpine_rs::analyze::names::NameGen;
use alpine_rs::analyze::sites::{sites, SiteKind};
use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::{removal_span, EditSet, Layout};
use alpine_rs::front::parser::{parse, ParseOptions};
use alpine_rs::transforms::params::{value, Raw};
use alpine_rs::transforms::registry::{self, Request};
use alpine_rs::transforms::{run, Ctx};
use std::path::Path;

struct Run {
    ok: bool,
    output: String,
    rendered: String,
}

fn header(src: &str, field: &str) -> Option<String> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| {
            l.strip_prefix(&format!("// {field}:"))
                .map(|s| s.trim().to_string())
        })
}

fn fuse_file(name: &str, src: &str) -> Run {
    let parsed = parse(src, &ParseOptions::default());
    let errs: Vec<_> = parsed.errors().cloned().collect();
    assert!(
        errs.is_empty(),
        "{name}: input does not parse:\n{}",
        render_plain(&[&SourceFile::new(name, src)], &errs)
    );
    let (
        site,
        Request {
            annotation: ann,
            mut params,
        },
    ) = sites(&parsed.program)
        .into_iter()
        .filter(|s| s.kind == SiteKind::Par)
        .find_map(|s| {
            registry::requests(src, parsed.dialect, &s)
                .into_iter()
                .find(|r| r.opt().meta().name == "fuse")
                .map(|r| (s, r))
        })
        .expect("a fuse annotation");
    // `// args: --block-size TS` / `--blocks B`.
    if let Some(args) = header(src, "args") {
        let words: Vec<&str> = args.split_whitespace().collect();
        for w in words.windows(2) {
            let Some(flag) = w[0].strip_prefix("--") else {
                continue;
            };
            if let Some(p) = params.opt.meta().params.iter().find(|p| p.flag == flag) {
                let v = value(p, &Raw::Text(w[1].into()), flag, parsed.dialect).expect("value");
                params.set(p.key, v);
            }
        }
    }
    // Remove the annotation first, as the driver does.
    let mut rm = EditSet::new();
    rm.replace(removal_span(src, ann.span), "");
    let text = rm.apply(src).expect("removal");
    let parsed2 = parse(&text, &ParseOptions::default());
    let site2 = sites(&parsed2.program)
        .into_iter()
        .find(|s| {
            s.kind == SiteKind::Par
                && s.method == site.method
                && s.keyword.start() + ann_len(src, &ann) == site.keyword.start()
        })
        .expect("site after removal");
    let mut names = NameGen::for_text(&text);
    let mut ctx = Ctx {
        src: &text,
        parsed: &parsed2,
        layout: Layout::detect(&text),
        names: &mut names,
        timeout_ms: 2000,
        annotation_text: Some(ann.span.text(src).to_string()),
    };
    let file = SourceFile::new(name, text.clone());
    match run(&mut ctx, &site2, &params) {
        Ok(applied) => {
            let out = applied.edits.apply(&text).expect("edits apply");
            let reparsed = parse(&out, &ParseOptions::default());
            let errs: Vec<_> = reparsed.errors().cloned().collect();
            assert!(
                errs.is_empty(),
                "{name}: output does not re-parse:\n{out}\n{}",
                render_plain(&[&SourceFile::new(name, out.clone())], &errs)
            );
            Run {
                ok: true,
                output: out,
                rendered: render_plain(&[&file], &applied.diagnostics),
            }
        }
        Err(diags) => Run {
            ok: false,
            output: String::new(),
            rendered: render_plain(&[&file], &diags),
        },
    }
}

fn ann_len(src: &str, ann: &alpine_rs::front::ast::Annotation) -> usize {
    removal_span(src, ann.span).len()
}

fn check_dir(dir: &Path, prefix: &str) {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pvl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&p).expect("read");
        let expect = header(&src, "expect").expect("expect header");
        let r = fuse_file(&name, &src);
        let snap = format!("{prefix}__{}", name.trim_end_matches(".pvl"));
        if expect.starts_with("ok") {
            assert!(r.ok, "{name}: expected ok, got:\n{}", r.rendered);
            assert!(
                !r.output.contains("gpuopt fuse"),
                "{name}: annotation left behind"
            );
            insta::assert_snapshot!(
                snap,
                format!("{}\n---- diagnostics ----\n{}", r.output, r.rendered)
            );
        } else if expect.starts_with("reject") {
            assert!(!r.ok, "{name}: expected a refusal, got:\n{}", r.output);
            assert!(r.rendered.contains("error["), "{name}: no error diagnostic");
            insta::assert_snapshot!(snap, r.rendered);
        }
    }
}

#[test]
fn corpus() {
    check_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/fuse"),
        "corpus",
    );
}

#[test]
fn fixtures() {
    check_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuse"),
        "fixture",
    );
}
