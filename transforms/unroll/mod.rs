//! Loop unrolling = peeling the first K iterations (optimizations.md §2, paper §5.1).
//!
//! The loop variable's initialisation is hoisted, K copies of the body follow (each but the last
//! followed by `assert`s of the loop invariants, as in the paper's template), then the residual
//! loop with its bound invariants tightened by the K updates. Applicability: Z3 proves from Γ at
//! loop entry that the guard holds for the first K values of the iteration variable.

use super::{Ctx, Outcome, Params};
use crate::analyze::loops::{self, as_loop, guard_at, lit_pow, upd_pow, Entry, LoopShape, UpdOp};
use crate::analyze::sites::sites;
use crate::analyze::sites::{stmt_at, Site};
use crate::check::{holds, prove, Answer};
use crate::diag::Diagnostic;
use crate::edit::{alone_on_line, indent_at, reindent, removal_span, EditSet};
use crate::front::ast::*;
use crate::front::span::Span;
use crate::front::visit::walk_expr;
use crate::front::{parse, Dialect, DialectChoice, ParseOptions};

pub fn apply(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let Params::Unroll { var, factor } = params else {
        return super::not_available(params);
    };
    let k = *factor;
    let header = site.keyword;
    if let Some(out) = via_desugared(ctx, site, params, apply) {
        return out;
    }
    if k < 1 {
        return Err(vec![Diagnostic::error(
            "A109",
            "cannot unroll 0 iterations: the factor must be at least 1",
        )
        .with_primary(header, "loop left unchanged")
        .with_note("peeling 0 iterations would not change the loop")
        .with_help("use a factor K >= 1, or remove the annotation")]);
    }
    let program = ctx.program();
    let Some((class, method)) = ctx.method_of(site) else {
        return Err(vec![internal(
            header,
            "cannot find the method of this loop",
        )]);
    };
    let Some(stmt) = stmt_at(method, site.span.start()) else {
        return Err(vec![internal(header, "cannot find this loop")]);
    };
    let shape = loops::analyze(stmt, var.as_deref(), header)?;
    let mut entry = loops::entry_facts(program, class, method, stmt, &shape)
        .map_err(|m| vec![unsupported(header, &m)])?;
    // Both conditions in one query when they hold; each on its own only to explain a refusal.
    if !steps_and_trip_hold(ctx, &mut entry, &shape, k) {
        check_steps(ctx, &mut entry, &shape, header)?;
        check_trip(ctx, &mut entry, &shape, header, k, "unroll", "loop_unroll")?;
    }
    let mut diagnostics = Vec::new();
    if !has_tightened_bound(&shape) {
        diagnostics.push(
            Diagnostic::warning(
                "A108",
                "no bound conjunct of the iteration variable to tighten",
            )
            .with_primary(header, "the residual loop keeps its invariants unchanged"),
        );
    }
    let gen = Gen::new(ctx, stmt, &shape, OptKind::Unroll);
    let ind = gen.ind.clone();
    let inner = if gen.wraps {
        format!("{ind}{}", ctx.layout.unit)
    } else {
        ind.clone()
    };
    let mut out: Vec<String> = Vec::new();
    out.extend(gen.init_lines(&inner));
    for j in 0..k {
        out.extend(gen.copy_lines(&inner, true, None));
        if j + 1 < k {
            out.extend(gen.assert_lines(&inner));
        }
    }
    out.push(gen.residual(&inner, &tighten_edits(ctx.src, &shape, k), None, None, &[]));
    let text = gen.finish(out);
    let mut edits = EditSet::new();
    edits.replace(stmt.span, text);
    Ok(super::Applied { edits, diagnostics })
}

/// For a v2 ranged `for`: run `f` on the loop rewritten in explicit form (optimizations.md §1.4)
/// and express the result over the original text. `None` for any other loop.
pub(crate) fn via_desugared(
    ctx: &mut Ctx,
    site: &Site,
    params: &Params,
    f: fn(&mut Ctx, &Site, &Params) -> Outcome,
) -> Option<Outcome> {
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
    Some(match f(&mut inner, &site1, params) {
        Err(diags) => Err(map(diags)),
        Ok(applied) => match applied.edits.apply(&d.text) {
            Err(e) => Err(vec![internal(site.keyword, &e.to_string())]),
            Ok(out) => {
                // One replacement of the region that differs (the loop statement).
                let src = ctx.src;
                let pre = src
                    .bytes()
                    .zip(out.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
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
                let (mut lo, mut hi) = (
                    pre.min(stmt_span.start()),
                    (src.len() - suf).max(stmt_span.end()),
                );
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
                Ok(super::Applied {
                    edits,
                    diagnostics: map(applied.diagnostics),
                })
            }
        },
    })
}

pub(crate) fn internal(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::error("A0004", msg.to_string())
        .with_primary(at, "here")
        .with_help("report this as a bug")
}

pub(crate) fn unsupported(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::error("A0020", format!("cannot decide applicability: {msg}"))
        .with_primary(at, "loop")
        .with_help("simplify the guard, step or facts so that they can be encoded")
}

/// The conditions of [`check_steps`] and [`check_trip`] together, proved in one query; `false`
/// when they are not (or cannot be encoded), and the two checks then say why.
fn steps_and_trip_hold(ctx: &Ctx, entry: &mut Entry, shape: &LoopShape, k: u64) -> bool {
    let z = crate::check::ctx();
    let min = if matches!(shape.op, UpdOp::Add | UpdOp::Sub) {
        1
    } else {
        2
    };
    let mut all = vec![entry.step.ge(&z3::ast::Int::from_i64(z, min))];
    for j in 0..k {
        let v = upd_pow(shape.op, &entry.i0, &entry.step, j);
        match guard_at(&mut entry.facts, shape, &v) {
            Ok(g) => all.push(g),
            Err(_) => return false,
        }
    }
    let refs: Vec<&z3::ast::Bool<'static>> = all.iter().collect();
    holds(
        &entry.facts.facts,
        &z3::ast::Bool::and(z, &refs),
        ctx.timeout_ms,
    )
}

/// A105: the step is at least 1 (`+`, `-`) or 2 (`*`, `/`).
pub(crate) fn check_steps(
    ctx: &Ctx,
    entry: &mut Entry,
    shape: &LoopShape,
    header: Span,
) -> Result<(), Vec<Diagnostic>> {
    let min = if matches!(shape.op, UpdOp::Add | UpdOp::Sub) {
        1
    } else {
        2
    };
    let goal = entry
        .step
        .ge(&z3::ast::Int::from_i64(crate::check::ctx(), min));
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
                d = d.with_note(format!(
                    "counterexample: {} (at loop entry)",
                    clean_cx(&cx, shape)
                ));
            }
            Err(vec![d.with_help(format!(
                "add a fact such as `requires c >= {min};` for the step"
            ))])
        }
    }
}

/// A107: prove that the guard holds for the first `k` values of the iteration variable.
pub(crate) fn check_trip(
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
    let conj = z3::ast::Bool::and(crate::check::ctx(), &refs);
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
pub(crate) fn clean_cx(cx: &crate::check::Counterexample, shape: &LoopShape) -> String {
    let mut relevant = loops::expr_names(&shape.guard);
    relevant.extend(loops::expr_names(&shape.step));
    relevant.insert(shape.var.clone());
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in &cx.values {
        let name = k.split(" (version").next().unwrap_or(k).to_string();
        out.retain(|(n, _)| n != &name);
        out.push((name, v.clone()));
    }
    let lengths: Vec<String> = out
        .iter()
        .filter_map(|(n, _)| n.strip_suffix(".length").map(str::to_string))
        .collect();
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
    shape
        .bounds
        .iter()
        .any(|b| b.lower == matches!(shape.op, UpdOp::Add | UpdOp::Mul))
}

/// Edits over the source that tighten the bound conjuncts for `k` updates.
pub(crate) fn tighten_edits(src: &str, shape: &LoopShape, k: u64) -> Vec<(Span, String)> {
    let mut out = Vec::new();
    if k == 0 {
        return out;
    }
    let step_text = shape.step.span.text(src).to_string();
    for b in &shape.bounds {
        let applies = b.lower == matches!(shape.op, UpdOp::Add | UpdOp::Mul);
        if !applies || b.expr.span.is_empty() {
            continue;
        }
        let moved = if b.strict && shape.op == UpdOp::Div {
            strict_div_bound(src, &b.expr, shape, &step_text, k)
        } else {
            bound_after(src, &b.expr, shape, &step_text, k)
        };
        out.push((b.expr.span, moved));
    }
    out
}

/// A strict upper bound `i < U` moved by `k` divisions. `U / c^k` would be wrong (`5 < 6` but not
/// `5 / 4 < 6 / 4`): `i < U` is `i <= U - 1`, which floor division preserves, so the bound
/// becomes `(U - 1) / c^k + 1`.
fn strict_div_bound(src: &str, e: &Expr, shape: &LoopShape, step_text: &str, k: u64) -> String {
    let lit = e.as_int().and_then(|v| i64::try_from(v.clone()).ok());
    if let (Some(u), Some(c)) = (lit, shape.step_lit) {
        if let Some(f) = lit_pow(c, k) {
            return ((u - 1).div_euclid(f) + 1).to_string();
        }
    }
    let text = e.span.text(src).trim();
    // An arithmetic `U` needs only the outer parentheses; a conditional needs its own.
    let minus_one = if matches!(e.kind, ExprKind::Cond(..)) {
        format!("(({text}) - 1)")
    } else {
        format!("({text} - 1)")
    };
    let divisor = match shape.step_lit.and_then(|c| lit_pow(c, k)) {
        Some(f) => f.to_string(),
        None if k == 1 => loops::paren_if_complex(step_text),
        None => format!(
            "({})",
            vec![loops::paren_if_complex(step_text); k as usize].join(" * ")
        ),
    };
    format!("{minus_one} / {divisor} + 1")
}

/// The text of bound `e` moved by `k` updates (`L + c*k`, `L * c^k`, `U - c*k`, `U / c^k`).
pub(crate) fn bound_after(
    src: &str,
    e: &Expr,
    shape: &LoopShape,
    step_text: &str,
    k: u64,
) -> String {
    let text = e.span.text(src).trim().to_string();
    let lit = e.as_int().and_then(|v| i64::try_from(v.clone()).ok());
    let needs_paren = |e: &Expr| {
        !matches!(
            e.kind,
            ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Index(..)
                | ExprKind::Call { .. }
                | ExprKind::Field(..)
                | ExprKind::Length(_)
        )
    };
    match (shape.op, shape.step_lit) {
        (UpdOp::Add | UpdOp::Sub, Some(c)) => {
            let Some(amt) = c.checked_mul(k as i64) else {
                return format!("{} {} {k} * {c}", paren_cond(&text, e), shape.op.symbol());
            };
            let amt = if shape.op == UpdOp::Add { amt } else { -amt };
            if let Some(v) = lit {
                return (v + amt).to_string();
            }
            // `X + a` / `X - a` with a literal `a` fold into one literal.
            if let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), x, a) = &e.kind {
                if let Some(a) = a.as_int().and_then(|v| i64::try_from(v.clone()).ok()) {
                    let total = if *op == BinOp::Add { a + amt } else { -a + amt };
                    let xt = x.span.text(src).trim();
                    return match total.cmp(&0) {
                        std::cmp::Ordering::Equal => xt.to_string(),
                        std::cmp::Ordering::Greater => format!("{xt} + {total}"),
                        std::cmp::Ordering::Less => format!("{xt} - {}", -total),
                    };
                }
            }
            if amt >= 0 {
                format!("{} + {amt}", paren_cond(&text, e))
            } else {
                format!("{} - {}", paren_cond(&text, e), -amt)
            }
        }
        (UpdOp::Mul | UpdOp::Div, Some(c)) => {
            let Some(f) = lit_pow(c, k) else {
                return format!(
                    "{} {} ({})",
                    paren_if(&text, needs_paren(e)),
                    shape.op.symbol(),
                    vec![c.to_string(); k as usize].join(" * ")
                );
            };
            if let Some(v) = lit {
                return if shape.op == UpdOp::Mul {
                    v.checked_mul(f)
                        .map_or_else(|| format!("{v} * {f}"), |x| x.to_string())
                } else {
                    v.div_euclid(f).to_string()
                };
            }
            format!(
                "{} {} {f}",
                paren_if(&text, needs_paren(e)),
                shape.op.symbol()
            )
        }
        (op, None) => {
            let c = loops::paren_if_complex(step_text);
            let amount = if k == 1 {
                c.clone()
            } else if matches!(op, UpdOp::Add | UpdOp::Sub) {
                format!("{k} * {c}")
            } else {
                format!("({})", vec![c.clone(); k as usize].join(" * "))
            };
            if lit == Some(0) && op == UpdOp::Add {
                return amount;
            }
            match op {
                UpdOp::Add | UpdOp::Sub => {
                    format!("{} {} {amount}", paren_cond(&text, e), op.symbol())
                }
                _ => format!(
                    "{} {} {amount}",
                    paren_if(&text, needs_paren(e)),
                    op.symbol()
                ),
            }
        }
    }
}

fn paren_if(t: &str, yes: bool) -> String {
    if yes {
        format!("({t})")
    } else {
        t.to_string()
    }
}

/// Additive contexts only need parentheses around conditionals.
fn paren_cond(t: &str, e: &Expr) -> String {
    paren_if(t, matches!(e.kind, ExprKind::Cond(..)))
}

/// The guard's text with the iteration variable replaced by `repl` (parenthesised where needed).
pub(crate) fn guard_text_with(src: &str, guard: &Expr, var: &str, repl: &str) -> String {
    if repl == var {
        return guard.span.text(src).to_string();
    }
    let mut edits: Vec<(Span, String)> = Vec::new();
    // Occurrences directly under a comparison need no parentheses (arithmetic binds tighter).
    let mut bare = Vec::new();
    walk_expr(guard, &mut |e| {
        if let ExprKind::Binary(op, l, r) = &e.kind {
            if op.is_comparison() {
                for x in [l, r] {
                    if x.as_name() == Some(var) {
                        bare.push(x.span);
                    }
                }
            }
        }
    });
    if guard.as_name() == Some(var) {
        bare.push(guard.span);
    }
    walk_expr(guard, &mut |e| {
        if e.as_name() == Some(var) {
            let r = if bare.iter().any(|s| s.same_place(e.span)) {
                repl.to_string()
            } else {
                format!("({repl})")
            };
            edits.push((e.span, r));
        }
    });
    splice(src, guard.span, edits)
}

/// The text of `span` with the given inner replacements (spans inside `span`, non-overlapping).
pub(crate) fn splice(src: &str, span: Span, mut edits: Vec<(Span, String)>) -> String {
    edits.sort_by_key(|(s, _)| (s.start(), s.end()));
    let mut out = String::new();
    let mut pos = span.start();
    for (s, t) in edits {
        if s.start() < pos || s.end() > span.end() {
            continue;
        }
        out.push_str(&src[pos..s.start()]);
        out.push_str(&t);
        pos = s.end();
    }
    out.push_str(&src[pos..span.end()]);
    out
}

/// Shared text generation for peeled and merged loops.
pub(crate) struct Gen<'a> {
    pub src: &'a str,
    pub newline: String,
    pub unit: String,
    /// Indentation of the loop statement.
    pub ind: String,
    pub stmt: &'a Stmt,
    pub lp: &'a Loop,
    pub shape: &'a LoopShape,
    /// The result is wrapped in `{ }` because the `for` initialiser declares variables.
    pub wraps: bool,
    /// The loop's own annotation of this optimization, when it is still in the text (the
    /// driver's rounds leave it there): the residual loop drops it, with the rest of its line.
    pub consumed: Option<Span>,
    /// What the driver's removal of `consumed` leaves in front of the statement (comments that
    /// followed the annotation, with their line breaks): the result starts with it.
    pub lead: String,
}

/// How a round drops the annotation at `ann` from a loop statement starting at `stmt_start`, so
/// that the result is the one a single step gives (the driver removes `removal_span(ann)` and
/// the statement then starts at the next token, at `next`). Returns the span to drop from the
/// statement and the text to put in front of the result.
fn consumed_annotation(
    src: &str,
    ann: Span,
    next: usize,
    stmt_start: usize,
) -> (Option<Span>, String) {
    let removal = removal_span(src, ann);
    if ann.start() != stmt_start {
        // Inside the statement's prefix: the comments after it stay where they are, and the
        // statement keeps its start.
        if !alone_on_line(src, ann) {
            return (Some(removal), String::new());
        }
        let rest = &src[ann.end()..];
        let ws = rest.len() - rest.trim_start().len();
        return (Some(Span::new(ann.start(), ann.end() + ws)), String::new());
    }
    // The annotation starts the statement: everything up to the next token goes, and what the
    // single step keeps of it (comments, line breaks) comes first.
    let kept = &src[removal.end().max(ann.end())..next];
    let lead = if alone_on_line(src, ann) {
        // The whole line went: the kept text starts at the next line's indentation, which the
        // statement's own position supplies.
        let indent = &src[removal.start()..ann.start()];
        kept.strip_prefix(indent).unwrap_or(kept)
    } else {
        kept
    };
    (Some(Span::new(ann.start(), next)), lead.to_string())
}

impl<'a> Gen<'a> {
    pub fn new(ctx: &'a Ctx, stmt: &'a Stmt, shape: &'a LoopShape, kind: OptKind) -> Gen<'a> {
        let lp = as_loop(stmt)
            .map(|x| x.0)
            .expect("analysed loops are loops");
        let wraps = lp
            .init
            .iter()
            .any(|s| matches!(s.kind, StmtKind::Decl { .. }));
        let (consumed, lead) = lp
            .prefix
            .annotations
            .iter()
            .find(|a| a.kind.opt() == kind)
            .map_or((None, String::new()), |a| {
                // The next token: the next prefix item, else the loop keyword.
                let p = &lp.prefix;
                let next = (p.annotations.iter().map(|x| x.span.start()))
                    .chain(p.clauses.iter().map(|c| c.span.start()))
                    .filter(|&s| s >= a.span.end())
                    .chain([lp.keyword.start()])
                    .min()
                    .unwrap_or(a.span.end());
                consumed_annotation(ctx.src, a.span, next, stmt.span.start())
            });
        Gen {
            src: ctx.src,
            newline: ctx.layout.newline.to_string(),
            unit: ctx.layout.unit.clone(),
            ind: indent_at(ctx.src, stmt.span.start()).to_string(),
            stmt,
            lp,
            shape,
            wraps,
            consumed,
            lead,
        }
    }

    /// Source text of a statement re-indented to `to` (every line, the first included).
    pub fn stmt_text(&self, span: Span, to: &str) -> String {
        let from = indent_at(self.src, span.start());
        format!("{to}{}", reindent(span.text(self.src), from, to))
    }

    /// The `for` initialiser as statements.
    pub fn init_lines(&self, to: &str) -> Vec<String> {
        self.lp
            .init
            .iter()
            .map(|s| {
                let t = s.span.text(self.src).trim_end();
                format!("{to}{}{}", t, if t.ends_with(';') { "" } else { ";" })
            })
            .collect()
    }

    /// The `for` update statements.
    pub fn update_lines(&self, to: &str) -> Vec<String> {
        self.lp
            .update
            .iter()
            .map(|s| {
                let t = s.span.text(self.src).trim_end();
                format!("{to}{}{}", t, if t.ends_with(';') { "" } else { ";" })
            })
            .collect()
    }

    /// `assert E;` for every loop invariant.
    pub fn assert_lines(&self, to: &str) -> Vec<String> {
        self.lp
            .prefix
            .clauses
            .iter()
            .filter(|c| c.kind == ClauseKind::LoopInvariant)
            .filter_map(|c| c.expr())
            .map(|e| {
                let from = indent_at(self.src, e.span.start());
                format!("{to}assert {};", reindent(e.span.text(self.src), from, to))
            })
            .collect()
    }

    /// One copy of the body (spliced, or as a block when it declares locals), plus the `for`
    /// update when `with_update`, plus `extra` (e.g. the ghost counter increment).
    pub fn copy_lines(&self, to: &str, with_update: bool, extra: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let declares = |b: &Block| {
            b.stmts
                .iter()
                .any(|s| matches!(s.kind, StmtKind::Decl { .. }))
        };
        match &self.lp.body.kind {
            StmtKind::Block(b) if !declares(b) => {
                // The inside of the braces, comments included (those before the first and
                // after the last statement belong to the body too).
                let text = b.span.text(self.src);
                match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    Some(inner) if !b.stmts.is_empty() => {
                        let lo = b.span.start() + 1 + (inner.len() - inner.trim_start().len());
                        let hi = b.span.start() + 1 + inner.trim_end().len();
                        out.push(self.stmt_text(Span::new(lo, hi), to));
                    }
                    _ => {
                        if let (Some(f), Some(l)) = (b.stmts.first(), b.stmts.last()) {
                            out.push(self.stmt_text(f.span.to(l.span), to));
                        }
                    }
                }
            }
            StmtKind::Block(b) => out.push(self.stmt_text(b.span, to)),
            _ => out.push(self.stmt_text(self.lp.body.span, to)),
        }
        if with_update {
            out.extend(self.update_lines(to));
        }
        if let Some(x) = extra {
            out.push(format!("{to}{x}"));
        }
        out
    }

    /// The loop with the given changes: `init` removed, inner `edits` applied, optionally a new
    /// guard text, a new body text, and extra invariant lines in front of the prefix.
    pub fn residual(
        &self,
        to: &str,
        edits: &[(Span, String)],
        guard: Option<String>,
        body: Option<String>,
        extra_invariants: &[String],
    ) -> String {
        let mut e: Vec<(Span, String)> = edits.to_vec();
        if let (Some(f), Some(l)) = (self.lp.init.first(), self.lp.init.last()) {
            e.push((f.span.to(l.span), String::new()));
        }
        if let Some(g) = guard {
            e.push((self.shape.guard.span, g));
        }
        if let Some(b) = body {
            e.push((self.lp.body.span, b));
        }
        if let Some(c) = self.consumed {
            e.push((c, String::new()));
        }
        let text = splice(self.src, self.stmt.span, e);

        let mut out = String::new();
        for x in extra_invariants {
            out.push_str(&format!("{to}loop_invariant {x};{}", self.newline));
        }
        out.push_str(&format!("{to}{}", reindent(&text, &self.ind, to)));
        out
    }

    /// A block body `{ … }` whose statement lines are `lines`, closing at indentation `to`.
    pub fn block(&self, to: &str, lines: &[String]) -> String {
        let mut out = format!("{{{}", self.newline);
        for l in lines {
            out.push_str(l);
            out.push_str(&self.newline);
        }
        out.push_str(to);
        out.push('}');
        out
    }

    /// Join the generated lines into the replacement text for the loop statement (the first line
    /// continues at the loop's column, so its indentation is dropped).
    pub fn finish(&self, lines: Vec<String>) -> String {
        let body = lines.join(&self.newline);
        let text = if self.wraps {
            format!("{{{}{}{}{}}}", self.newline, body, self.newline, self.ind)
        } else {
            body.strip_prefix(self.ind.as_str())
                .unwrap_or(&body)
                .to_string()
        };
        format!("{}{text}", self.lead)
    }
}
