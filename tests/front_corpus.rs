//! The shared corpus through the front end.
//!
//! * Every `.pvl` outside `syntax/bad/` parses without errors.
//! * Every file in `syntax/bad/` is refused: its first error's primary label is on the line its
//!   `// error-at: N` header names, and the rendered diagnostics (exactly what a user sees) are
//!   pinned by an insta snapshot in `tests/snapshots/`.

mod common;

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::front::ParseOptions;
// The front end with the optimizations' annotation checks (operands and placement), as every
// command that optimizes or lists reads a file.
use alpine_rs::transforms::registry::parse;
use common::{corpus_dir, files, header};
use std::path::Path;

/// The corpus-relative name, as diagnostics show it (independent of where the checkout is).
fn rel(p: &Path) -> String {
    p.strip_prefix(corpus_dir()).unwrap().to_string_lossy().replace('\\', "/")
}

#[test]
fn every_good_file_parses_without_errors() {
    let files = files(&corpus_dir(), "pvl");
    let bad_dir = corpus_dir().join("syntax/bad");
    let good: Vec<_> = files.iter().filter(|p| !p.starts_with(&bad_dir)).collect();
    assert!(good.len() >= 80, "corpus not found or shrunk: {} files", good.len());
    let mut failures = String::new();
    for p in good {
        let src = std::fs::read_to_string(p).unwrap();
        let parsed = parse(&src, &ParseOptions::default());
        if parsed.has_errors() {
            let file = SourceFile::new(rel(p), src.as_str());
            failures.push_str(&render_plain(&[&file], &parsed.diagnostics));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

/// Parse a bad file, check the line of its first error, and return what a user sees.
fn refused(name: &str) -> String {
    let path = corpus_dir().join("syntax/bad").join(name);
    let src = std::fs::read_to_string(&path).unwrap();
    let line: usize = header(&src, "error-at")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name}: no `// error-at: N` header"));
    let parsed = parse(&src, &ParseOptions::default());
    let file = SourceFile::new(rel(&path), src.as_str());
    let rendered = render_plain(&[&file], &parsed.diagnostics);
    let first = parsed
        .errors()
        .next()
        .unwrap_or_else(|| panic!("{name}: accepted, expected an error on line {line}"));
    let span = first
        .primary_span()
        .unwrap_or_else(|| panic!("{name}: the first error has no primary label"));
    assert_eq!(
        file.line_col(span.start()).0,
        line,
        "{name}: first error on the wrong line:\n{rendered}"
    );
    redact_known_optimizations(rendered)
}

/// The list of known optimizations in A0003's note, as the registry gives it, stands for itself
/// in snapshots: adding an optimization changes no snapshot, while a note that disagrees with
/// the registry is left as it is and shows in the snapshot diff.
fn redact_known_optimizations(text: String) -> String {
    use alpine_rs::transforms::registry::ALL;
    let metas: Vec<_> = ALL.iter().map(|o| o.meta()).collect();
    let keywords: Vec<&str> = metas.iter().map(|m| m.keyword).collect();
    let synonyms: Vec<&str> =
        metas.iter().filter(|m| m.keyword != m.name).map(|m| m.name).collect();
    let list = format!("known: {} (and the synonyms {})", keywords.join(", "), synonyms.join(", "));
    text.replace(&list, "known: <every optimization of transforms/registry.rs>")
}

macro_rules! bad_file_tests {
    ($($name:ident,)*) => {
        $(
            #[test]
            fn $name() {
                let text = refused(concat!(stringify!($name), ".pvl"));
                insta::assert_snapshot!(concat!("bad_", stringify!($name)), text);
            }
        )*

        #[test]
        fn every_bad_file_is_listed() {
            let listed = [$(concat!(stringify!($name), ".pvl"),)* NOT_A_PARSE_ERROR];
            let files = files(&corpus_dir().join("syntax/bad"), "pvl");
            let missing: Vec<String> = files
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .filter(|f| !listed.contains(&f.as_str()))
                .collect();
            assert!(missing.is_empty(), "add these files to the list: {missing:?}");
        }
    };
}

/// Parsed fine by the parser on purpose: the VerCors 1.4 grammar accepts it, and its error
/// (A0004, an annotation attached to a site it cannot apply to) comes from the front checks,
/// which are tested with them.
const NOT_A_PARSE_ERROR: &str = "misplaced_gpuopt_on_par.pvl";

bad_file_tests! {
    bad_gpuopt_args,
    bad_matrix_major,
    bad_tile_mode,
    fuse_missing_number,
    glob_to_reg_no_location,
    missing_semicolon,
    negative_factor,
    par_without_range,
    reserved_word_identifier,
    unbalanced_braces,
    unknown_optimization,
    unterminated_comment,
}
