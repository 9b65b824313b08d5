//! The documentation's shape: the README stays an overview (the reference lives in `docs/`), and
//! every relative link of the README, CONTRIBUTING.md and `docs/**/*.md` points to a file or
//! folder that exists.

mod common;

use common::root;
use std::path::{Path, PathBuf};

/// The README is an overview: at most this many lines.
const README_MAX_LINES: usize = 200;

#[test]
fn readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES}): move reference material to docs/"
    );
}

/// The Markdown files whose links are checked: README.md, CONTRIBUTING.md and docs/**/*.md.
fn markdown_files() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let docs = common::files(&root().join("docs"), "md");
    assert!(!docs.is_empty(), "docs/ has no Markdown files");
    out.extend(docs);
    out
}

/// The targets of the inline links `[text](target)` of `text`, outside fenced code blocks and
/// code spans (a link text may itself hold a code span).
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans, keeping the brackets around them.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end + 1..];
        }
    }
    out
}

/// Every relative link points to an existing file or folder (anchors are not checked).
#[test]
fn relative_links_resolve() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("readable Markdown");
        let dir = file.parent().unwrap_or(Path::new("."));
        for target in link_targets(&text) {
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path = target.split('#').next().unwrap_or_default();
            checked += 1;
            if !dir.join(path).exists() {
                let name = file.strip_prefix(root()).unwrap_or(&file).display().to_string();
                broken.push(format!("{name}: {target}"));
            }
        }
    }
    assert!(checked > 20, "only {checked} relative links found");
    assert!(broken.is_empty(), "links to missing files:\n{}", broken.join("\n"));
}

#[test]
fn link_targets_skip_code() {
    let text = "see [`a`](x.md) and `[b](y.md)`\n```\n[c](z.md)\n```\n[d](w.md#top)";
    assert_eq!(link_targets(text), ["x.md", "w.md#top"]);
}
