//! The optimizations, listed once.
//!
//! Each optimization is a folder `transforms/<name>/` with one line in `transforms/lib.rs`'s
//! `optimizations!` list, which declares the module and puts its type in [`ALL`], in Alpinist's
//! application order (optimizations.md §8). Everything else about it is in its folder's `META`
//! (see ARCHITECTURE.md, "How to add an optimization"); nothing else names it.

use super::params::{read_annotation, Params};
use super::{Meta, Opt, Registered};
use analyze::sites::{sites, Site, SiteKind};
use diag::Diagnostic;
use front::ast::*;
use front::visit::walk_stmts;
use front::{Dialect, Parsed};

/// Every optimization, in application order.
pub static ALL: &[&dyn Registered] = super::REGISTERED;

/// The optimization a word names: its command-line name or its Alpinist keyword.
pub fn lookup(word: &str) -> Option<Opt> {
    ALL.iter().copied().find(|o| o.meta().name == word || o.meta().keyword == word)
}

/// The matrix-layout reader validation needs for outputs whose entry changed signature.
pub fn matrix_layout() -> Option<super::MatrixLayout> {
    ALL.iter().find_map(|o| o.meta().adapter)
}

/// Position in the application order.
pub fn rank(opt: Opt) -> usize {
    ALL.iter().position(|o| *o == opt).unwrap_or(ALL.len())
}

/// "unroll, merge, …" for messages: the command-line names, then the Alpinist keywords that
/// differ from them.
pub fn known_names() -> String {
    format!(
        "{} (or {})",
        words(|m| m.name, false).join(", "),
        words(|m| m.keyword, true).join(", ")
    )
}

/// One word of every optimization in order (only of those whose keyword and name differ, with
/// `renamed`).
fn words(word: fn(&Meta) -> &'static str, renamed: bool) -> Vec<&'static str> {
    ALL.iter().map(|o| o.meta()).filter(|m| !renamed || m.keyword != m.name).map(word).collect()
}

/// The name of a site kind, for messages ("loop", "par block", "method").
pub fn site_name(k: SiteKind) -> &'static str {
    match k {
        SiteKind::Loop => "loop",
        SiteKind::Par => "par block",
        SiteKind::Method => "method",
    }
}

/// What an optimization's targets are called: "loop", "par block or method".
pub fn target_name(opt: Opt) -> String {
    opt.meta().sites.iter().map(|k| site_name(*k)).collect::<Vec<_>>().join(" or ")
}

/// An annotation with its optimization and parameters.
#[derive(Clone, Debug)]
pub struct Request {
    pub annotation: Annotation,
    pub params: Params,
}

impl Request {
    pub fn opt(&self) -> Opt {
        self.params.opt
    }
}

/// Read one annotation: its optimization and parameters, or why it is not one.
pub fn read(src: &str, dialect: Dialect, ann: &Annotation) -> Result<Params, Vec<Diagnostic>> {
    let word = ann.keyword.name.as_str();
    let Some(opt) = lookup(word) else {
        let found = if word.is_empty() {
            match src.get(ann.end.start()..ann.end.end()) {
                Some(t) if !t.is_empty() => format!("`{t}`"),
                _ => "end of file".to_string(),
            }
        } else {
            format!("`{word}`")
        };
        let keywords = words(|m| m.keyword, false);
        let synonyms = words(|m| m.name, true);
        let span = if word.is_empty() { ann.end } else { ann.keyword.span };
        return Err(vec![Diagnostic::error("A0003", format!("unknown optimization {found}"))
            .with_primary(span, "not an optimization")
            .with_note(format!(
                "known: {} (and the synonyms {})",
                keywords.join(", "),
                synonyms.join(", ")
            ))
            .with_help("use one of the known optimization names")]);
    };
    read_annotation(opt, src, dialect, ann)
}

/// The requests of a site's annotations that read without error, in source order.
pub fn requests(src: &str, dialect: Dialect, site: &Site) -> Vec<Request> {
    site.annotations
        .iter()
        .filter_map(|a| {
            read(src, dialect, a).ok().map(|params| Request { annotation: a.clone(), params })
        })
        .collect()
}

/// Check every `gpuopt` annotation of a parsed file (optimizations.md §1.1): its operands
/// (A0003), its placement (A0002 dangling, A0004 wrong construct, A0006 two exclusive
/// annotations on one construct). Sorted by position.
pub fn check_annotations(src: &str, parsed: &Parsed) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let program = &parsed.program;
    // An unterminated annotation is a syntax error the front end reports.
    let read = |a: &Annotation, diags: &mut Vec<Diagnostic>| match read(src, parsed.dialect, a) {
        Ok(p) => Some(p.opt),
        Err(_) if !a.terminated => None,
        Err(ds) => {
            diags.extend(ds);
            None
        }
    };
    for site in sites(program) {
        let what = format!("a {}", site_name(site.kind));
        let mut exclusive: Vec<&Annotation> = Vec::new();
        for a in &site.annotations {
            let Some(opt) = read(a, &mut diags) else {
                continue;
            };
            let meta = opt.meta();
            if meta.exclusive {
                exclusive.push(a);
            }
            if meta.sites.contains(&site.kind) {
                continue;
            }
            let mut d = Diagnostic::error(
                "A0004",
                format!("`gpuopt {}` cannot annotate {what}", a.keyword.name),
            )
            .with_primary(a.span, format!("misplaced {} annotation", meta.keyword))
            .with_secondary(site.keyword, format!("this is {what}"));
            if site.kind == SiteKind::Par {
                d = d.with_note(format!(
                    "only {} may annotate a par block (VerCors 1.4: \"Only fusion allowed for parallel regions.\")",
                    par_annotations()
                ));
            }
            d = d.with_help(format!("place `gpuopt {}` {}", a.keyword.name, meta.placement));
            diags.push(d);
        }
        if exclusive.len() > 1 {
            let kind = site_name(site.kind);
            diags.push(
                Diagnostic::error("A0006", format!("two {kind} annotations on one {kind}"))
                    .with_primary(exclusive[1].span, "second annotation")
                    .with_secondary(exclusive[0].span, "first annotation")
                    .with_help("keep one; to combine them, run alpine-rs twice"),
            );
        }
    }
    // Dangling annotations: statements that are annotations.
    let mut dangling = |s: &Stmt| {
        walk_stmts(s, &mut |st| {
            if let StmtKind::Annotation(a) = &st.kind {
                let Some(opt) = read(a, &mut diags) else {
                    return;
                };
                diags.push(
                    Diagnostic::error(
                        "A0002",
                        format!("`gpuopt {}` has nothing to attach to", a.keyword.name),
                    )
                    .with_primary(a.span, "dangling annotation")
                    .with_help(opt.meta().dangling_help),
                );
            }
        })
    };
    for (_, m) in program.methods() {
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                dangling(s);
            }
        }
    }
    if parsed.has_errors() {
        // Placement on a partial tree would only add noise; operand errors stand on their own.
        diags.retain(|d| d.code == "A0003" || d.code == "A0001");
    }
    diags.sort_by_key(|d| d.primary_span().map_or(0, |s| s.lo));
    diags
}

/// Parse `src` and check its annotations ([`check_annotations`]): the front end of every
/// command that optimizes or lists, with all diagnostics in one list, in source order.
pub fn parse(src: &str, opts: &front::ParseOptions) -> Parsed {
    let mut parsed = front::parse(src, opts);
    let more = check_annotations(src, &parsed);
    if !more.is_empty() {
        parsed.diagnostics.extend(more);
        parsed.diagnostics.sort_by_key(|d| (d.primary_span().map_or(0, |s| s.lo), !d.is_error()));
    }
    parsed
}

/// "`gpuopt fuse`, `glob_to_reg` and `tile`": the annotations a par block takes.
fn par_annotations() -> String {
    let words: Vec<String> = ALL
        .iter()
        .filter(|o| o.meta().sites.contains(&SiteKind::Par))
        .enumerate()
        .map(|(i, o)| {
            if i == 0 {
                format!("`gpuopt {}`", o.meta().keyword)
            } else {
                format!("`{}`", o.meta().keyword)
            }
        })
        .collect();
    match words.as_slice() {
        [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => words.concat(),
    }
}
