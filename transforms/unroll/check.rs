//! Applicability of peeling: the loop's shape, and Z3's proof from the facts at loop entry that
//! the guard holds for the first K values of the iteration variable and the step makes progress.
//! Also the pieces iteration merging shares (step and trip checks, the ranged-`for` detour).

use crate::{Ctx, Params, MAX_FACTOR};
use analyze::loops::{self, guard_at, upd_pow, Entry, LoopShape, UpdOp};
use analyze::sites::{stmt_at, Site};
use check::{holds, prove, Answer};
use diag::Diagnostic;
use front::ast::*;
use front::span::Span;

/// The loop at a site, analysed: its method, statement, shape, and the facts at its entry.
pub struct LoopSite<'a> {
    pub class: Option<&'a Class>,
    pub method: &'a Method,
    pub stmt: &'a Stmt,
    pub shape: LoopShape,
    pub entry: Entry,
}

/// Find and analyse the loop at `site` (iteration variable `var`, inferred when `None`).
pub fn loop_site<'a>(
    ctx: &Ctx<'a>,
    site: &Site,
    var: Option<&str>,
) -> Result<LoopSite<'a>, Vec<Diagnostic>> {
    let header = site.keyword;
    let parsed: &'a front::Parsed = ctx.parsed;
    let program = &parsed.program;
    let Some((class, method)) =
        analyze::sites::find_method(program, site.class.as_deref(), &site.method)
    else {
        return Err(vec![internal(header, "cannot find the method of this loop")]);
    };
    let Some(stmt) = stmt_at(method, site.span.start()) else {
        return Err(vec![internal(header, "cannot find this loop")]);
    };
    let shape = loops::analyze(stmt, var, header)?;
    let entry = loops::entry_facts(program, class, method, stmt, &shape)
        .map_err(|m| vec![unsupported(header, &m)])?;
    Ok(LoopSite { class, method, stmt, shape, entry })
}

/// A factor that would leave the loop as it is: the refusal `d`, labelled at the loop `header`.
pub fn unchanged(d: Diagnostic, header: Span, note: &str, help: &str) -> Vec<Diagnostic> {
    vec![d.with_primary(header, "loop left unchanged").with_note(note).with_help(help)]
}

/// A checked peeling: the loop, its shape and the factor.
pub struct Plan<'a> {
    pub(super) stmt: &'a Stmt,
    pub(super) shape: LoopShape,
    pub(super) k: u64,
    /// Warnings found while checking.
    pub(super) diagnostics: Vec<Diagnostic>,
}

pub(super) fn check<'a>(
    ctx: &mut Ctx<'a>,
    site: &Site,
    params: &Params,
) -> Result<Plan<'a>, Vec<Diagnostic>> {
    let (var, k, header) = (params.name("var"), params.count("factor"), site.keyword);
    if k < 1 {
        return Err(unchanged(
            Diagnostic::error("A109", "cannot unroll 0 iterations: the factor must be at least 1"),
            header,
            "peeling 0 iterations would not change the loop",
            "use a factor K >= 1, or remove the annotation",
        ));
    }
    if k > MAX_FACTOR {
        return Err(unchanged(
            Diagnostic::error(
                "A109",
                format!("cannot unroll {k} iterations: the factor must be at most {MAX_FACTOR}"),
            ),
            header,
            &format!("peeling {k} iterations would write {k} copies of the loop body"),
            &format!("use a factor between 1 and {MAX_FACTOR}, or remove the annotation"),
        ));
    }
    let LoopSite { stmt, shape, mut entry, .. } = loop_site(ctx, site, var)?;
    // Both conditions in one query when they hold; each on its own only to explain a refusal.
    if !steps_and_trip_hold(ctx, &mut entry, &shape, k) {
        check_steps(ctx, &mut entry, &shape, header)?;
        check_trip(ctx, &mut entry, &shape, header, k, "unroll", "loop_unroll")?;
    }
    let mut diagnostics = Vec::new();
    if !has_tightened_bound(&shape) {
        diagnostics.push(
            Diagnostic::warning("A108", "no bound conjunct of the iteration variable to tighten")
                .with_primary(header, "the residual loop keeps its invariants unchanged"),
        );
    }
    Ok(Plan { stmt, shape, k, diagnostics })
}

pub fn internal(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::internal(msg).with_primary(at, "here")
}

pub fn unsupported(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::error("A0020", format!("cannot decide applicability: {msg}"))
        .with_primary(at, "loop")
        .with_help("simplify the guard, step or facts so that they can be encoded")
}

/// The conditions of [`check_steps`] and [`check_trip`] together, proved in one query; `false`
/// when they are not (or cannot be encoded), and the two checks then say why.
fn steps_and_trip_hold(ctx: &Ctx, entry: &mut Entry, shape: &LoopShape, k: u64) -> bool {
    let z = check::ctx();
    let min = if matches!(shape.op, UpdOp::Add | UpdOp::Sub) { 1 } else { 2 };
    let mut all = vec![entry.step.ge(&z3::ast::Int::from_i64(z, min))];
    for j in 0..k {
        let v = upd_pow(shape.op, &entry.i0, &entry.step, j);
        match guard_at(&mut entry.facts, shape, &v) {
            Ok(g) => all.push(g),
            Err(_) => return false,
        }
    }
    let refs: Vec<&z3::ast::Bool<'static>> = all.iter().collect();
    holds(&entry.facts.facts, &z3::ast::Bool::and(z, &refs), ctx.timeout_ms)
}

/// A105: the step is at least 1 (`+`, `-`) or 2 (`*`, `/`).
pub fn check_steps(
    ctx: &Ctx,
    entry: &mut Entry,
    shape: &LoopShape,
    header: Span,
) -> Result<(), Vec<Diagnostic>> {
    let min = if matches!(shape.op, UpdOp::Add | UpdOp::Sub) { 1 } else { 2 };
    let goal = entry.step.ge(&z3::ast::Int::from_i64(check::ctx(), min));
    match prove(&entry.facts.tr, &entry.facts.facts, &goal, ctx.timeout_ms) {
        Answer::Proved => Ok(()),
        other => {
            let mut d = Diagnostic::error(
                "A105",
                format!("the step of `{}` is not provably at least {min}", shape.var),
            )
            .with_primary(header, "loop")
            .with_secondary(shape.step.span, "step");
            if let Answer::Refuted(cx) = other {
                d = d
                    .with_note(format!("counterexample: {} (at loop entry)", clean_cx(&cx, shape)));
            }
            Err(
                vec![d.with_help(format!("add a fact such as `requires c >= {min};` for the step"))],
            )
        }
    }
}

/// A107: prove that the guard holds for the first `k` values of the iteration variable.
pub fn check_trip(
    ctx: &Ctx,
    entry: &mut Entry,
    shape: &LoopShape,
    header: Span,
    k: u64,
    verb: &str,
    keyword: &str,
) -> Result<(), Vec<Diagnostic>> {
    // One query for the usual case; the instances one by one only to explain a failure.
    let mut all = Vec::new();
    for j in 0..k {
        let v = upd_pow(shape.op, &entry.i0, &entry.step, j);
        all.push(guard_at(&mut entry.facts, shape, &v).map_err(|m| vec![unsupported(header, &m)])?);
    }
    let refs: Vec<&z3::ast::Bool<'static>> = all.iter().collect();
    let conj = z3::ast::Bool::and(check::ctx(), &refs);
    if holds(&entry.facts.facts, &conj, ctx.timeout_ms) {
        return Ok(());
    }
    let mut provable = 0u64;
    let mut failure = None;
    for j in 0..k {
        let v = upd_pow(shape.op, &entry.i0, &entry.step, j);
        let g = guard_at(&mut entry.facts, shape, &v).map_err(|m| vec![unsupported(header, &m)])?;
        match prove(&entry.facts.tr, &entry.facts.facts, &g, ctx.timeout_ms) {
            Answer::Proved => provable += 1,
            other => {
                failure = Some(other);
                break;
            }
        }
    }
    let Some(fail) = failure else { return Ok(()) };
    let times = |n: u64| match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    };
    let mut d = match &fail {
        Answer::Unknown(why) => Diagnostic::error(
            "A0020",
            format!("cannot {verb} {k} iterations: the solver could not decide whether the loop runs {} ({why})", times(k)),
        ),
        _ => Diagnostic::error(
            "A107",
            format!("cannot {verb} {k} iterations: the loop may run fewer than {k} times"),
        ),
    }
    .with_primary(header, format!("loop whose first {k} iterations would be peeled"))
    .with_secondary(
        shape.guard.span,
        format!("this guard can be false before iteration {}", provable + 1),
    );
    if let Answer::Refuted(cx) = &fail {
        d = d.with_note(format!(
            "counterexample: {cx} (at loop entry): the loop then {}",
            if provable == 0 {
                "does not run at all".to_string()
            } else {
                format!("runs only {}", times(provable))
            },
            cx = clean_cx(cx, shape)
        ));
    }
    if provable >= 1 {
        d = d.with_note(format!(
            "the loop provably runs at least {}; `gpuopt {keyword} {} {provable};` would be accepted",
            times(provable),
            shape.var
        ));
    }
    Err(vec![d.with_help(format!(
        "add a fact that makes the guard hold {} (e.g. a `requires` bounding the loop's limit), or lower the factor",
        times(k)
    ))])
}

/// The counterexample with variable versions folded into plain names (the last version wins).
/// An array's own reference value (`a = 0` next to `a.length = 2`) says nothing to the user and
/// is dropped, and so is the length of an array that neither the guard nor the step reads.
pub fn clean_cx(cx: &check::Counterexample, shape: &LoopShape) -> String {
    let mut relevant = loops::expr_names(&shape.guard);
    relevant.extend(loops::expr_names(&shape.step));
    relevant.insert(shape.var.clone());
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in &cx.values {
        let name = k.split(" (version").next().unwrap_or(k).to_string();
        out.retain(|(n, _)| n != &name);
        out.push((name, v.clone()));
    }
    let lengths: Vec<String> =
        out.iter().filter_map(|(n, _)| n.strip_suffix(".length").map(str::to_string)).collect();
    out.iter()
        .filter(|(n, _)| match n.strip_suffix(".length") {
            Some(array) => relevant.contains(array),
            None => !lengths.iter().any(|l| l == n),
        })
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn has_tightened_bound(shape: &LoopShape) -> bool {
    shape.bounds.iter().any(|b| b.lower == matches!(shape.op, UpdOp::Add | UpdOp::Mul))
}
