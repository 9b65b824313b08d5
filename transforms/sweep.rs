//! What `sweep` and `suggest` try: each optimization declares, in its folder's `sweep.rs`, the
//! parameter values worth trying at a site (`Meta::candidates`). This module holds the types
//! and the helpers those rules share; the command line walks the sites and the registry.

use crate::{Meta, Opt};
use analyze::sites::{find_method, sites, Site, SiteKind};
use front::ast::*;
use front::span::LineIndex;
use front::visit::walk_stmts;
use front::Parsed;

/// One set of parameter values to try, as plan keys and values.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    pub params: Vec<(&'static str, String)>,
    /// Why these values (a symbolic thread count, the dimensions' source), for the report.
    pub note: Option<String>,
    /// `validate --adapter` for the output (a linearized signature).
    pub adapter: Option<String>,
}

impl Choice {
    pub fn new(params: Vec<(&'static str, String)>, note: Option<String>) -> Choice {
        Choice { params, note, adapter: None }
    }
}

/// What an optimization's rule sees: the file, its parse, the site, and the optimization.
pub struct SweepSite<'a> {
    pub src: &'a str,
    pub parsed: &'a Parsed,
    pub site: &'a Site,
    pub opt: Opt,
}

/// The choices at a site, or why nothing is tried there.
pub type Candidates = Result<Vec<Choice>, String>;

/// The choices of an optimization at a site: its own rule, or else its defaults when they
/// suffice.
pub fn candidates(s: &SweepSite) -> Candidates {
    let meta: &Meta = s.opt.meta();
    match meta.candidates {
        Some(rule) => rule(s),
        None if meta.params.iter().all(|p| !p.required || p.default.is_some()) => {
            Ok(vec![Choice::new(Vec::new(), Some("default parameters".into()))])
        }
        None => Err("no rule for its required parameters".into()),
    }
}

/// Does the optimization apply to this site at all (its site kinds, and on a method the rule
/// for `par` blocks: one with `--at` semantics is tried at the block itself, one without when
/// the method has several)?
pub fn admits(meta: &Meta, program: &Program, site: &Site) -> bool {
    if !meta.sites.contains(&site.kind) {
        return false;
    }
    !(site.kind == SiteKind::Method
        && meta.sites.contains(&SiteKind::Par)
        && (meta.method_par != crate::MethodPar::None || outer_pars(program, site).len() < 2))
}

/// The values of a choice parameter, with their annotation words (`row`/`R`, `col`/`C`).
pub fn choices(opt: Opt, key: &str) -> Vec<(&'static str, &'static str)> {
    opt.meta()
        .params
        .iter()
        .filter(|p| p.key == key)
        .flat_map(|p| match p.kind {
            crate::params::Kind::Choice(cs) => cs.iter().map(|c| (c.value, c.word)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// An expression as an annotation operand (a literal or name as is, anything else in
/// parentheses).
pub fn operand(text: &str) -> String {
    if text.chars().all(|c| c.is_alphanumeric() || c == '_') {
        text.to_string()
    } else {
        format!("({text})")
    }
}

pub fn method_of<'p>(program: &'p Program, site: &Site) -> Option<&'p Method> {
    find_method(program, site.class.as_deref(), &site.method).map(|(_, m)| m)
}

/// The outermost par statements of the site's method.
pub fn outer_pars<'p>(program: &'p Program, site: &Site) -> Vec<&'p Stmt> {
    let mut pars: Vec<&Stmt> = Vec::new();
    if let Some(MethodBody::Block(b)) = method_of(program, site).map(|m| &m.body) {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if matches!(st.kind, StmtKind::Par(_))
                    && !pars.iter().any(|p| p.span.contains(st.span))
                {
                    pars.push(st);
                }
            });
        }
    }
    pars
}

/// The par statements a site stands for: the block itself, or the method's outermost ones.
pub fn pars_of<'p>(program: &'p Program, site: &Site) -> Vec<&'p Stmt> {
    match site.kind {
        SiteKind::Par => outer_pars(program, site)
            .into_iter()
            .flat_map(|p| {
                let mut found = Vec::new();
                walk_stmts(p, &mut |st| {
                    if st.span.same_place(site.span) && matches!(st.kind, StmtKind::Par(_)) {
                        found.push(st);
                    }
                });
                found
            })
            .take(1)
            .collect(),
        _ => outer_pars(program, site),
    }
}

// ---------------------------------------------------------------------------------------------
// Every site of a file (`sweep`, `suggest`, the language server's code actions)

/// One attempt to make: an optimization at a site with parameters (plan keys and values).
#[derive(Clone, Debug)]
pub struct SiteChoice {
    pub opt: Opt,
    pub site: Site,
    pub line: usize,
    pub col: usize,
    pub params: Vec<(&'static str, String)>,
    /// Why these values (a symbolic thread count, the dimensions' source), for the report.
    pub note: Option<String>,
    /// `validate --adapter` for the output (a linearized signature).
    pub adapter: Option<String>,
}

/// A site and optimization that got no attempt, with the reason.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub opt: &'static str,
    pub line: usize,
    pub col: usize,
    pub reason: String,
}

/// Everything to try on one parsed file, in source order of the sites and registry order of
/// the optimizations.
pub fn file_candidates(src: &str, parsed: &Parsed) -> (Vec<SiteChoice>, Vec<Skipped>) {
    let lines = LineIndex::new(src);
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for site in sites(&parsed.program) {
        let (line, col) = lines.line_col(src, site.keyword.start());
        for &opt in crate::registry::ALL {
            let meta = opt.meta();
            if !admits(meta, &parsed.program, &site) {
                continue;
            }
            match candidates(&SweepSite { src, parsed, site: &site, opt }) {
                Ok(choices) => out.extend(choices.into_iter().map(|c| SiteChoice {
                    opt,
                    site: site.clone(),
                    line,
                    col,
                    params: c.params,
                    note: c.note,
                    adapter: c.adapter,
                })),
                Err(reason) => skipped.push(Skipped { opt: meta.name, line, col, reason }),
            }
        }
    }
    (out, skipped)
}

/// The `apply` flags that ask for `opt` with `params` (plan keys and values): `--factor 2`, a
/// switch as its bare flag when true. What `suggest` prints and the language server's actions
/// name, so that the command a user runs is the attempt that was measured.
pub fn apply_flags<'a>(
    opt: Opt,
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<String> {
    let meta = opt.meta();
    let mut out = Vec::new();
    for (k, val) in params {
        let Some(p) = meta.params.iter().find(|p| p.is_named(k, crate::params::Spelling::Key))
        else {
            continue;
        };
        if p.is_switch() {
            if val == "true" {
                out.push(format!("--{}", p.flag));
            }
        } else {
            out.extend([format!("--{}", p.flag), val.to_string()]);
        }
    }
    out
}
