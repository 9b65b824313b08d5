//! The prefetched kernel: per segment, a register per location loaded at the start (guarded by
//! the condition under which the thread holds a permission for the cell), every matched access
//! replaced by the register, and a write-back at the end when the segment writes it.

use super::check::{Plan, SegPlan};
use crate::{Applied, Ctx, Outcome};
use edit::line_start as body_line;
use edit::{indent_at, line_end_incl, line_start, EditSet};
use front::span::Span;

pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    let mut edits = EditSet::new();
    for arm in &plan.arms {
        // Registers are declared once per par arm, at their first load; one first loaded in a
        // nested segment (a loop body, a branch) is declared at the top of the par body, where
        // every later segment sees it.
        let mut declared = vec![false; plan.regs.len()];
        let mut top = Vec::new();
        for (li, reg) in plan.regs.iter().enumerate() {
            let first = arm.segs.iter().find(|s| s.results.iter().any(|(l, _)| *l == li));
            if first.is_some_and(|s| s.depth > 0) {
                top.push(format!("{} {reg};", plan.elem_ty));
                declared[li] = true;
            }
        }
        if !top.is_empty() {
            let at = arm.body_first.start();
            let ls = body_line(ctx.src, at);
            let nl = ctx.layout.newline;
            if ctx.src[ls..at].trim().is_empty() {
                let ind = indent_at(ctx.src, at);
                edits.insert(ls, top.iter().map(|l| format!("{ind}{l}{nl}")).collect::<String>());
            } else {
                edits.insert(at, format!("{} ", top.join(" ")));
            }
        }
        for seg in &arm.segs {
            segment(ctx, &plan, seg, &mut declared, &mut edits);
        }
    }
    Ok(Applied { edits, diagnostics: plan.warnings })
}

fn segment(ctx: &Ctx, plan: &Plan, seg: &SegPlan, declared: &mut [bool], edits: &mut EditSet) {
    let mut prologue: Vec<String> = Vec::new();
    let mut epilogue: Vec<String> = Vec::new();
    let ind = indent_at(ctx.src, seg.first.start()).to_string();
    let unit = ctx.layout.unit.clone();
    let elem_ty = &plan.elem_ty;
    for (li, res) in &seg.results {
        let li = *li;
        let reg = &plan.regs[li];
        let loc = format!("{}[{}]", plan.arr_text, plan.loc_texts[li]);
        let any_write = res.matches.iter().any(|m| m.write);
        // Load (and declare once per par arm).
        match &res.guard {
            None if !declared[li] => prologue.push(format!("{elem_ty} {reg} = {loc};")),
            None => prologue.push(format!("{reg} = {loc};")),
            Some(g) => {
                if !declared[li] {
                    prologue.push(format!("{elem_ty} {reg};"));
                }
                prologue.push(format!("if ({g}) {{"));
                prologue.push(format!("{unit}{reg} = {loc};"));
                prologue.push("}".to_string());
            }
        }
        declared[li] = true;
        for m in &res.matches {
            edits_push_unique(edits, m.span, reg);
        }
        if any_write {
            match &res.guard {
                None => epilogue.push(format!("{loc} = {reg};")),
                Some(g) => {
                    epilogue.push(format!("if ({g}) {{"));
                    epilogue.push(format!("{unit}{loc} = {reg};"));
                    epilogue.push("}".to_string());
                }
            }
        }
        for inv in &res.loop_invariants {
            edits.insert(inv.0, inv.1.clone());
        }
    }
    let nl = ctx.layout.newline;
    if seg.unbraced && !prologue.is_empty() {
        // The single statement of an unbraced branch or loop body: brace it.
        let mut open = prologue.join(" ");
        open.insert_str(0, "{ ");
        edits.insert(edit::code_point(ctx.src, seg.first.start(), false), format!("{open} "));
        let close =
            if epilogue.is_empty() { String::new() } else { format!(" {}", epilogue.join(" ")) };
        edits.insert(edit::code_point(ctx.src, seg.last.end(), true), format!("{close} }}"));
        return;
    }
    if !prologue.is_empty() {
        // Before a ghost statement of a C file: before its comment.
        let at = edit::code_point(ctx.src, seg.first.start(), false);
        let ls = line_start(ctx.src, at);
        if ctx.src[ls..at].trim().is_empty() {
            let text: String = prologue.iter().map(|l| format!("{ind}{l}{nl}")).collect();
            edits.insert(ls, text);
        } else {
            edits.insert(at, format!("{} ", prologue.join(" ")));
        }
    }
    if !epilogue.is_empty() {
        let end = edit::code_point(ctx.src, seg.last.end(), true);
        let le = line_end_incl(ctx.src, end);
        if ctx.src[end..le].trim().is_empty() && ctx.src[end..le].ends_with('\n') {
            let text: String = epilogue.iter().map(|l| format!("{ind}{l}{nl}")).collect();
            edits.insert(le, text);
        } else {
            edits.insert(end, format!(" {}", epilogue.join(" ")));
        }
    }
}

/// Replacement of an occurrence by the register, ignoring occurrences nested inside another
/// replaced occurrence (e.g. `a[a[t]]`): the outer replacement already covers them.
fn edits_push_unique(edits: &mut EditSet, span: Span, reg: &str) {
    let overlaps =
        edits.edits().iter().any(|e| e.lo != e.hi && e.lo < span.end() && span.start() < e.hi);
    if !overlaps {
        edits.replace(span, reg.to_string());
    }
}
