//! The merged loop: exact mode peels `I mod M` iterations and runs M copies per pass with a
//! ghost counter relating the iteration variable to the completed iterations; remainder mode
//! runs a merged loop while M more iterations are due, then the original loop. The loop
//! invariants are asserted before each peeled copy and between the copies of the merged body.

use super::check::{Plan, Trip};
use crate::unroll::{tighten_edits, Gen};
use crate::{Applied, Ctx, Outcome};
use analyze::loops::{LoopShape, UpdOp};
use edit::EditSet;
use front::ast::*;

pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    match plan {
        Plan::Exact { stmt, shape, m, trip } => {
            Ok(Applied { edits: exact(ctx, stmt, &shape, m, &trip), diagnostics: Vec::new() })
        }
        Plan::Remainder { stmt, shape, m, guard, diagnostics } => {
            Ok(Applied { edits: remainder(ctx, stmt, &shape, m, guard), diagnostics })
        }
    }
}

/// The ghost relation for a multiplicative update in closed form: the value of `var` at each
/// loop-head value of the counter `g` (`k`, `k + M`, …, `I`), as a conditional chain.
///
/// The paper states it as `i == a * c^g` (or `b / c^g`) with a recursive power function. Silicon
/// unfolds a recursive function one level per application, so neither the entry value (`g = k`
/// after `k` peeled copies) nor the M-fold step of the merged body, nor the exit argument (`g = I`
/// makes the guard false) can be established from it. Exact mode has literal `a`, `c` and `I`, so
/// the finitely many head values can be listed instead; they are as many as the passes of the
/// merged loop plus one, at most 32 for an i64 simulation (the values grow or shrink
/// geometrically).
fn closed_form(var: &str, g: &str, t: &Trip, k: u64, m: u64) -> String {
    let heads: Vec<(u64, i64)> = (k..=t.count)
        .step_by(m as usize)
        .filter_map(|j| t.values.get(j as usize).map(|v| (j, *v)))
        .collect();
    let Some((&(_, last), init)) = heads.split_last() else {
        return format!("{var} == {}", t.v0);
    };
    let mut chain = String::new();
    for (j, v) in init {
        chain.push_str(&format!("{g} == {j} ? {v} : "));
    }
    chain.push_str(&last.to_string());
    if init.is_empty() {
        format!("{var} == {chain}")
    } else {
        format!("{var} == ({chain})")
    }
}

/// Exact mode: peel `I mod M` iterations, then M copies per pass with a ghost counter.
fn exact(ctx: &mut Ctx, stmt: &Stmt, shape: &LoopShape, m: u64, t: &Trip) -> EditSet {
    let i_count = t.count;
    let k = i_count % m;
    let mut edits = EditSet::new();
    let g = ctx.names.name("vct_mi_l");
    let var = shape.var.clone();
    let rel = match shape.op {
        UpdOp::Add | UpdOp::Sub => {
            let term = if t.step == 1 { g.clone() } else { format!("{} * {g}", t.step) };
            match (t.v0, shape.op) {
                (0, UpdOp::Add) => format!("{var} == {term}"),
                (v0, UpdOp::Add) => format!("{var} == {v0} + {term}"),
                (v0, _) => format!("{var} == {v0} - {term}"),
            }
        }
        UpdOp::Mul | UpdOp::Div => closed_form(&var, &g, t, k, m),
    };
    let gen = Gen::new(ctx, stmt, shape);
    let (ind, inner, body_ind) = (gen.ind.clone(), gen.inner(), gen.body_ind());
    let incr = format!("{g} = {g} + 1;");
    let mut out: Vec<String> = Vec::new();
    out.extend(gen.init_lines(&inner));
    out.push(format!("{inner}int {g} = 0;"));
    for _ in 0..k {
        out.extend(gen.assert_lines(&inner));
        out.extend(gen.copy_lines(&inner, true, Some(&incr)));
    }
    // The merged body, written at the loop's original indentation (the residual re-indents it).
    let lines = merged_body(&gen, shape, m, &body_ind, Some(&incr));
    let body = gen.block(&ind, &lines);
    let invs = vec![format!("{k} <= {g} && {g} <= {i_count}"), format!("{g} % {m} == {k}"), rel];
    out.push(gen.residual(&inner, &tighten_edits(ctx.src, shape, k), None, Some(body), &invs));
    edits.replace(stmt.span, gen.finish(out));
    edits
}

/// Remainder mode: the merged loop (guard `gm`), then the original loop for the rest.
fn remainder(ctx: &Ctx, stmt: &Stmt, shape: &LoopShape, m: u64, gm: String) -> EditSet {
    let gen = Gen::new(ctx, stmt, shape);
    let (ind, inner, body_ind) = (gen.ind.clone(), gen.inner(), gen.body_ind());
    let lines = merged_body(&gen, shape, m, &body_ind, None);
    let body = gen.block(&ind, &lines);
    let mut out: Vec<String> = Vec::new();
    out.extend(gen.init_lines(&inner));
    out.push(gen.residual(&inner, &[], Some(gm), Some(body), &[]));
    out.push(gen.residual(&inner, &[], None, None, &[]));
    let mut edits = EditSet::new();
    edits.replace(stmt.span, gen.finish(out));
    edits
}

/// M copies of the body, the loop invariants asserted between each two: each copy is one
/// iteration of the original loop, after which they hold. Without these steps the prover must
/// carry quantified invariants across all M copies at once, which fails (V-INV-KEEP) or runs
/// past any time limit on loops whose invariants other quantified facts depend on (sorting
/// with a permutation, prefix sums over a recursive function).
fn merged_body(gen: &Gen, shape: &LoopShape, m: u64, ind: &str, extra: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    for c in 0..m {
        if c > 0 {
            lines.extend(gen.assert_lines(ind));
        }
        lines.extend(gen.copy_lines(ind, shape.is_for && c + 1 < m, extra));
    }
    lines
}
