//! The fused `par` block: the first kernel's iterators, the fused contract (permissions grouped
//! per array, then carried resources, then functional clauses) and the kernels' bodies with
//! generated barriers between them.

use super::check::Plan;
use super::model::{self, Kernel};
use crate::{Applied, Ctx, Outcome};
use edit::{indent_at, EditSet};
use front::ast::*;
use front::span::Span;

pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    let Plan { pars, label, need_label, mut fused, fused_count, warnings } = plan;
    let src = ctx.src;
    // ---- print the fused par block over the first `fused_count` kernels
    let label = match (&label, need_label) {
        (Some(l), _) => Some(l.clone()),
        (None, true) => Some(ctx.names.name("vct_fused_kernels")),
        (None, false) => None,
    };
    let label_text = label.clone().unwrap_or_default();
    for line in &mut fused.body {
        *line = line.replace("\u{0}LABEL", &label_text);
    }
    let ind = indent_at(src, pars[0].span.start()).to_string();
    let unit = ctx.layout.unit.clone();
    let nl = ctx.layout.newline;
    let mut out = String::new();
    out.push_str(&format!(
        "par {}({}){nl}",
        label.as_ref().map(|l| format!("{l} ")).unwrap_or_default(),
        fused.iter_text
    ));
    for l in print_contract(&fused) {
        out.push_str(&format!("{ind}{unit}{} {};{nl}", l.kw, l.text));
    }
    out.push_str(&format!("{ind}{{{nl}"));
    for line in &fused.body {
        if line.trim().is_empty() {
            out.push_str(nl);
        } else {
            // `\u{1}` marks one extra level (generated barrier contracts).
            let extra = line.chars().take_while(|c| *c == '\u{1}').count();
            let line = line.trim_start_matches('\u{1}');
            out.push_str(&format!("{ind}{unit}{}{line}{nl}", unit.repeat(extra)));
        }
    }
    out.push_str(&format!("{ind}}}"));

    let start = match &pars[0].kind {
        StmtKind::Par(p) => p.keyword.start(),
        _ => pars[0].span.start(),
    };
    let end = pars[fused_count - 1].span.end();
    let mut edits = EditSet::new();
    edits.replace(Span::new(start, end), out);
    Ok(Applied { edits, diagnostics: warnings })
}

/// One printed contract clause.
pub(super) struct Line {
    pub(super) kw: &'static str,
    pub(super) text: String,
    /// The array of a permission clause.
    pub(super) perm_array: Option<String>,
}

/// The fused contract: permission clauses grouped per array, then carried resources, then
/// functional clauses; what is both pre and post prints as `context`.
pub(super) fn print_contract(k: &Kernel) -> Vec<Line> {
    let mut out = Vec::new();
    for arr in k.arrays() {
        let of = |atoms: &[model::Atom]| -> Vec<String> {
            atoms.iter().filter(|a| a.array == arr).map(model::Atom::print).collect()
        };
        let (pre, post) = (of(&k.pre), of(&k.post));
        both_lists(&pre, &post, Some(&arr), &mut out);
    }
    let cp: Vec<String> = k.carried_pre.iter().map(|f| f.text.clone()).collect();
    let cq: Vec<String> = k.carried_post.iter().map(|f| f.text.clone()).collect();
    both_lists(&cp, &cq, None, &mut out);
    let fp: Vec<String> = k.fpre.iter().map(|f| f.text.clone()).collect();
    let fq: Vec<String> = k.fpost.iter().map(|f| f.text.clone()).collect();
    both_lists(&fp, &fq, None, &mut out);
    out
}

fn both_lists(pre: &[String], post: &[String], arr: Option<&String>, out: &mut Vec<Line>) {
    let line = |kw, text: &String| Line { kw, text: text.clone(), perm_array: arr.cloned() };
    for p in pre {
        out.push(line(if post.contains(p) { "context" } else { "requires" }, p));
    }
    for q in post {
        if !pre.contains(q) {
            out.push(line("ensures", q));
        }
    }
}
