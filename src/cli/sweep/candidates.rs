//! What `sweep` tries: for every site of a file and every optimization whose registered site
//! kinds admit it, the parameters to try (issue 22). The optimizations, the constructs they
//! apply to and the values worth trying come from the registry (`Meta::candidates`, each
//! optimization's `sweep.rs`); an optimization without a rule is tried with its defaults.

use crate::analyze::sites::{sites, Site};
use crate::front::span::LineIndex;
use crate::front::Parsed;
use crate::transforms::registry;
use crate::transforms::sweep::{self, SweepSite};
use crate::transforms::Opt;

/// One attempt to make: an optimization at a site with parameters (plan keys and values).
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub(crate) opt: Opt,
    pub(super) site: Site,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) params: Vec<(&'static str, String)>,
    /// Why these values (a symbolic thread count, the dimensions' source), for the report.
    pub(crate) note: Option<String>,
    /// `validate --adapter` for the output (a linearized signature).
    pub(crate) adapter: Option<String>,
}

/// A site and optimization that got no attempt, with the reason.
#[derive(Clone, Debug)]
pub(crate) struct Skipped {
    pub(crate) opt: &'static str,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) reason: String,
}

/// Everything to try on one parsed file, in source order of the sites and registry order of
/// the optimizations.
pub(crate) fn candidates(src: &str, parsed: &Parsed) -> (Vec<Candidate>, Vec<Skipped>) {
    let lines = LineIndex::new(src);
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for site in sites(&parsed.program) {
        let (line, col) = lines.line_col(src, site.keyword.start());
        for &opt in registry::ALL {
            let meta = opt.meta();
            if !sweep::admits(meta, &parsed.program, &site) {
                continue;
            }
            match sweep::candidates(&SweepSite { src, parsed, site: &site, opt }) {
                Ok(choices) => out.extend(choices.into_iter().map(|c| Candidate {
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
