//! The diagnostic registry (crates/diag/src/codes/): every code the sources emit is registered, every
//! registered code is emitted somewhere or marked reserved, and `explain` knows every code a
//! refusal of the corpus or of our fixtures shows.

mod common;

use alpine_rs::codes;
use alpine_rs::transforms::driver::{apply, DriverOptions};
use common::root;
use std::collections::BTreeSet;

/// Whether a string literal's content has the shape of a code: `A` and 3 or 4 digits, or an area
/// letter, `-`, and upper-case words (`V-POST`, `R-BAR-PRE`, `E-IO`). Prefixes that the sources
/// complete at run time (`"R-BAR-"`) end with `-` and are not codes.
fn is_code(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() == Some(&b'A') && (4..=5).contains(&b.len()) {
        return b[1..].iter().all(u8::is_ascii_digit);
    }
    b.len() > 2
        && matches!(b[0], b'V' | b'R' | b'W' | b'E')
        && b[1] == b'-'
        && !s.ends_with('-')
        && s[2..].bytes().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'-')
}

/// The code literals of the sources (the registry's own tables aside).
fn emitted() -> BTreeSet<String> {
    let mut files = common::files(&root().join("src"), "rs");
    files.extend(common::files(&root().join("crates"), "rs"));
    files.extend(common::files(&root().join("transforms"), "rs"));
    let mut out = BTreeSet::new();
    for f in files {
        if f.starts_with(root().join("crates/diag/src/codes")) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable");
        for (i, part) in text.split('"').enumerate() {
            if i % 2 == 1 && is_code(part) {
                out.insert(part.to_string());
            }
        }
    }
    out
}

#[test]
fn every_emitted_code_is_registered_and_every_registered_one_is_emitted_or_reserved() {
    let emitted = emitted();
    assert!(emitted.len() > 100, "found only {} codes", emitted.len());
    let unregistered: Vec<&String> =
        emitted.iter().filter(|c| codes::lookup(c).is_none()).collect();
    assert!(unregistered.is_empty(), "emitted but not registered: {unregistered:?}");
    let unused: Vec<&str> =
        codes::all().filter(|c| !c.reserved && !emitted.contains(c.code)).map(|c| c.code).collect();
    assert!(unused.is_empty(), "registered, never emitted, not reserved: {unused:?}");
    let reserved_but_emitted: Vec<&str> =
        codes::all().filter(|c| c.reserved && emitted.contains(c.code)).map(|c| c.code).collect();
    assert!(
        reserved_but_emitted.is_empty(),
        "marked reserved but emitted: {reserved_but_emitted:?}"
    );
}

#[test]
fn the_registry_is_well_formed() {
    let mut seen = BTreeSet::new();
    for area in codes::tables() {
        assert!(!area.name.is_empty(), "an area file without its `# ` title");
        assert!(area.malformed.is_empty(), "{}: malformed lines {:?}", area.name, area.malformed);
        let mut last = "";
        for c in &area.codes {
            assert!(seen.insert(c.code), "{} registered twice", c.code);
            assert!(is_code(c.code), "{}: not a code", c.code);
            assert!(c.code > last, "{}: {} is out of order", area.name, c.code);
            last = c.code;
            assert!(!c.title.is_empty() && !c.title.ends_with('.'), "{}: title", c.code);
            assert!(c.explanation.trim().len() > 80, "{}: explanation too short", c.code);
        }
    }
}

/// `explain` works for every code the refusals of the corpus and of our fixtures show.
#[test]
fn explain_knows_every_code_a_refusal_shows() {
    let mut files = common::files(&common::corpus_dir(), "pvl");
    files.extend(common::files(&root().join("fixtures"), "pvl"));
    let mut shown = BTreeSet::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable");
        let res = apply("f.pvl", &src, &DriverOptions::default());
        for (_, d) in res.diagnostics() {
            shown.insert(d.code.clone());
        }
    }
    assert!(shown.len() > 20, "only {} codes shown", shown.len());
    for code in &shown {
        let (status, out, err) = common::run_cli(&["explain", code]);
        assert_eq!(status, 0, "explain {code}: {err}");
        assert!(out.starts_with(&format!("{code}: ")), "{out}");
    }
    let (status, _, err) = common::run_cli(&["explain", "Z9999"]);
    assert_eq!(status, 2, "{err}");
}

/// The table of diagnostic codes in docs/codes.md, generated from the registry.
fn codes_table() -> String {
    let mut out = String::from("| code | severity | exit | what it means |\n|---|---|---|---|\n");
    for area in codes::tables() {
        for c in &area.codes {
            let exit = match c.exit {
                codes::ExitClass::None => "—".to_string(),
                e => format!("{} ({e:?})", e.code()),
            };
            let reserved = if c.reserved { " (reserved)" } else { "" };
            out.push_str(&format!(
                "| `{}` | {:?} | {exit} | {}{reserved} |\n",
                c.code,
                c.severity,
                c.title.replace('|', "\\|")
            ));
        }
    }
    out
}

/// docs/codes.md lists every code as the registry has it (`UPDATE_DOCS=1 cargo test --test codes`
/// rewrites the table between its markers).
#[test]
fn the_docs_codes_table_is_the_registry() {
    let path = root().join("docs/codes.md");
    let doc = std::fs::read_to_string(&path).expect("docs/codes.md");
    let (begin, end) = ("<!-- codes:begin -->\n", "<!-- codes:end -->");
    let start = doc.find(begin).expect("the codes table markers in docs/codes.md") + begin.len();
    let stop = doc[start..].find(end).expect("the end marker in docs/codes.md") + start;
    let table = codes_table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &doc[..start], &doc[stop..]);
        std::fs::write(&path, updated).expect("writable docs/codes.md");
        return;
    }
    assert_eq!(
        &doc[start..stop],
        table,
        "the table of codes in docs/codes.md is stale: run UPDATE_DOCS=1 cargo test --test codes"
    );
}
