//! Loops in their explicit form (optimizations.md §1.4): an optimization that rewrites loops
//! (`Meta::explicit_loops`) sees a v2 ranged `for (int i = lo .. hi)` as the `for` with an
//! initialiser, a guard and an update it stands for; its edits are then expressed over the
//! original text as one replacement of the region that differs.

use super::{Applied, Ctx, Outcome, Params};
use analyze::loops;
use analyze::sites::{sites, stmt_at, Site};
use diag::Diagnostic;
use edit::EditSet;
use front::span::Span;
use front::{parse, Dialect, DialectChoice, ParseOptions};

fn internal(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::internal(msg).with_primary(at, "here")
}

/// For a v2 ranged `for`: run `f` on the loop rewritten in explicit form (optimizations.md §1.4)
/// and express the result over the original text. `None` for any other loop.
pub(super) fn via_explicit_form(ctx: &mut Ctx, site: &Site, params: &Params) -> Option<Outcome> {
    let (_, method) = ctx.method_of(site)?;
    let stmt = stmt_at(method, site.span.start())?;
    let stmt_span = stmt.span;
    let d = match loops::desugar_ranged(ctx.src, stmt, ctx.layout.newline) {
        Ok(d) => d?,
        Err(m) => return Some(Err(vec![internal(site.keyword, &m)])),
    };
    let opts = ParseOptions {
        dialect: match ctx.dialect() {
            Dialect::V1 => DialectChoice::V1,
            Dialect::V2 => DialectChoice::V2,
        },
    };
    let parsed = parse(&d.text, &opts);
    let site1 = sites(&parsed.program)
        .into_iter()
        .find(|s| s.kind == site.kind && s.span.start() == site.span.start());
    let (false, Some(site1)) = (parsed.has_errors(), site1) else {
        return Some(Err(vec![internal(
            site.keyword,
            "the explicit form of this ranged loop does not parse",
        )]));
    };
    let mut inner = Ctx {
        src: &d.text,
        parsed: &parsed,
        layout: ctx.layout.clone(),
        names: &mut *ctx.names,
        timeout_ms: ctx.timeout_ms,
        annotation_text: ctx.annotation_text.clone(),
    };
    let map = |mut diags: Vec<Diagnostic>| {
        for dg in &mut diags {
            for l in &mut dg.labels {
                l.span = d.map_span(l.span);
            }
        }
        diags
    };
    Some(match params.opt.apply(&mut inner, &site1, params) {
        Err(diags) => Err(map(diags)),
        Ok(applied) => match applied.edits.apply(&d.text) {
            Err(e) => Err(vec![internal(site.keyword, &e.to_string())]),
            Ok(out) => {
                // One replacement of the region that differs (the loop statement).
                let src = ctx.src;
                let pre = src.bytes().zip(out.bytes()).take_while(|(a, b)| a == b).count();
                let max_suf = src.len().min(out.len()) - pre;
                let suf = src
                    .bytes()
                    .rev()
                    .zip(out.bytes().rev())
                    .take(max_suf)
                    .take_while(|(a, b)| a == b)
                    .count();
                // The region covers at least the loop statement (its annotation included), and
                // its cut stays on character boundaries (the texts agree outside the region).
                let (mut lo, mut hi) =
                    (pre.min(stmt_span.start()), (src.len() - suf).max(stmt_span.end()));
                while !src.is_char_boundary(lo) || !out.is_char_boundary(lo) {
                    lo -= 1;
                }
                let mut out_hi = out.len() - (src.len() - hi);
                while !src.is_char_boundary(hi) || !out.is_char_boundary(out_hi) {
                    hi += 1;
                    out_hi += 1;
                }
                let mut edits = EditSet::new();
                edits.replace(Span::new(lo, hi), &out[lo..out_hi]);
                Ok(Applied { edits, diagnostics: map(applied.diagnostics) })
            }
        },
    })
}
