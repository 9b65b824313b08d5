//! The encoder and the type checker over every PVL file we have (VerCors' examples in
//! ../shared/peer, the corpus, our fixtures), without Silicon: encoding never panics nor reports
//! an internal error, and the type checker rejects no file that VerCors accepts (its verdict
//! Pass or Fail in ../shared/peer/verdicts.tsv) nor any corpus program or fixture.

mod common;

use alpine_rs::analyze::typeck;
use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::viper;
use common::root;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn peer_dir() -> PathBuf {
    root().join("../shared/peer")
}

/// VerCors' verdict of each file of verdicts.tsv, by path relative to vercors-v1.4.1/.
fn verdicts() -> HashMap<String, String> {
    let text = std::fs::read_to_string(peer_dir().join("verdicts.tsv")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut cols = l.split('\t');
            Some((cols.next()?.to_string(), cols.next()?.to_string()))
        })
        .collect()
}

fn all_files() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let peer = peer_dir().join("vercors-v1.4.1");
    for (dir, base) in [(peer.clone(), peer), (common::corpus_dir(), common::corpus_dir())]
        .into_iter()
        .chain([(root().join("fixtures"), root().join("fixtures"))])
    {
        if !dir.is_dir() {
            continue;
        }
        for f in common::files(&dir, "pvl") {
            let rel = f.strip_prefix(&base).unwrap_or(&f).display().to_string();
            out.push((f, rel));
        }
    }
    out
}

fn parse(path: &Path, rel: &str) -> Option<(SourceFile, alpine_rs::front::ast::Program)> {
    let text = std::fs::read_to_string(path).ok()?;
    let src = SourceFile::new(rel.to_string(), text);
    let parsed = alpine_rs::front::parse(&src.text, &Default::default());
    if parsed.has_errors() {
        return None;
    }
    Some((src, parsed.program))
}

#[test]
fn encoding_every_pvl_file_neither_panics_nor_reports_an_internal_error() {
    let files = all_files();
    assert!(files.len() > 100, "found only {} PVL files", files.len());
    let mut bad = Vec::new();
    for (path, rel) in &files {
        let Some((src, prog)) = parse(path, rel) else { continue };
        // The encoder only reads the program; a panic leaves nothing half-updated behind.
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| viper::encode(&prog, &src)));
        match r {
            Err(_) => bad.push(format!("{rel}: the encoder panicked")),
            Ok(Err(ds)) if ds.iter().any(|d| d.code.starts_with("E-") || d.code == "A0099") => {
                bad.push(format!("{rel}:\n{}", render_plain(&[&src], &ds)))
            }
            Ok(_) => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The other files of the peer program `rel` belongs to (the group column of verdicts.tsv).
fn groups() -> HashMap<String, Vec<String>> {
    let text = std::fs::read_to_string(peer_dir().join("verdicts.tsv")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let group = cols.get(3)?.split_whitespace().map(str::to_string).collect();
            Some((cols.first()?.to_string(), group))
        })
        .collect()
}

#[test]
fn the_type_checker_accepts_every_program_vercors_accepts() {
    let verdicts = verdicts();
    let groups = groups();
    let peer = peer_dir().join("vercors-v1.4.1");
    let mut bad = Vec::new();
    for (path, rel) in all_files() {
        // Files VerCors rejects (verdict Error) may be rejected; the rest must not be. The
        // syntax fixtures exercise the parser and printer only (`assert a || b && c` on an
        // array), not the meaning of programs; the fuzzers' findings (fixtures/fuzz) are
        // minimized inputs, some ill-typed on purpose.
        let syntax = path.starts_with(root().join("fixtures/syntax"))
            || path.starts_with(root().join("fixtures/fuzz"));
        if verdicts.get(&rel).is_some_and(|v| v == "Error") || syntax {
            continue;
        }
        let Some((src, mut prog)) = parse(&path, &rel) else { continue };
        // A program of several files is checked as one (classes of the others resolve).
        for other in groups.get(&rel).into_iter().flatten() {
            if let Some((_, p)) = parse(&peer.join(other), other) {
                prog.items.extend(p.items);
            }
        }
        // Peer files outside verdicts.tsv state their verdict in a `//::` header; those checked
        // with another tool than Silicon, or with options (witnesses, VeyMont, …), are in
        // another dialect than the one VerCors checks by default.
        let header = |l: &str| src.text.lines().any(|x| x.trim().starts_with(l));
        let other_tool = src.text.lines().any(|x| {
            let x = x.trim();
            (x.starts_with("//:: tool") && !x.contains("silicon")) || x.starts_with("//:: option")
        });
        if header("//:: verdict Error") || (other_tool && !verdicts.contains_key(&rel)) {
            continue;
        }
        let ds = typeck::check(&prog);
        if ds.iter().any(|d| d.is_error()) {
            bad.push(format!("{rel}:\n{}", render_plain(&[&src], &ds)));
        }
    }
    assert!(bad.is_empty(), "{} file(s) rejected:\n{}", bad.len(), bad.join("\n"));
}
