//! Applicability of prefetching: per barrier-separated segment of each `par` body, which
//! accesses match a requested location (Z3 proves `e == p` under the facts of the segment
//! start), under which condition the thread holds a permission for the cell, and whether two
//! requested cells may alias.

use crate::analyze::exprtext::subst_names;
use crate::analyze::facts::{facts_at, Facts, Point};
use crate::analyze::scope::{assigned_arrays, assigned_vars};
use crate::analyze::sites::{stmt_at, Site, SiteKind};
use crate::check::{prove, Answer};
use crate::diag::Diagnostic;
use crate::edit::{indent_at, line_end_incl};
use crate::front::ast::*;
use crate::front::printer::print_expr;
use crate::front::span::Span;
use crate::front::visit::{stmt_exprs, walk_expr, walk_stmts};
use crate::front::Dialect;
use crate::transforms::{Ctx, Params};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::collections::{BTreeMap, BTreeSet};
use z3::ast::Ast;

/// A checked prefetch: registers, and per par arm the analysed segments.
pub struct Plan {
    pub(super) arr_text: String,
    pub(super) elem_ty: String,
    pub(super) loc_texts: Vec<String>,
    pub(super) regs: Vec<String>,
    pub(super) arms: Vec<Vec<SegPlan>>,
    pub(super) warnings: Vec<Diagnostic>,
}

/// One barrier-separated segment: its first and last statement, and the locations used there.
pub(super) struct SegPlan {
    pub(super) first: Span,
    pub(super) last: Span,
    pub(super) results: Vec<(usize, SegResult)>,
}

pub(super) fn check(ctx: &mut Ctx, site: &Site, params: &Params) -> Result<Plan, Vec<Diagnostic>> {
    let Some(array) = params.expr("array") else {
        return Err(vec![unprintable(site, "the prefetch request")]);
    };
    let locations = params.exprs("locations");
    let requested =
        ctx.annotation_text.clone().unwrap_or_else(|| "the prefetch request".to_string());
    let Some((class, method)) = ctx.method_of(site) else {
        return Err(vec![Diagnostic::error("A0004", "prefetching needs a method or a par block")
            .with_primary(site.keyword, "not inside a method")
            .with_help("place `gpuopt glob_to_reg` before a method contract or a par block")]);
    };
    let class = class.cloned();
    let method = method.clone();

    // The array: a name (or `this.name`) that is an array.
    let arr = match &array.kind {
        ExprKind::Name(id) => id.name.clone(),
        ExprKind::Field(r, f) if matches!(r.kind, ExprKind::This) => f.name.clone(),
        _ => {
            return Err(vec![Diagnostic::error(
                "A301",
                format!("{requested}: the array must be a name"),
            )
            .with_primary(site.keyword, "prefetching requested here")
            .with_help("name an array variable or field, e.g. `gpuopt glob_to_reg a tid;`")])
        }
    };
    let Some(arr_text) = print(array, ctx.dialect()) else {
        return Err(vec![unprintable(site, &requested)]);
    };
    let Some(elem_ty) = element_type(ctx, class.as_ref(), &method, &arr) else {
        return Err(vec![Diagnostic::error(
            "A301",
            format!("{requested}: `{arr}` is not a one-dimensional array of this method"),
        )
        .with_primary(site.keyword, "prefetching requested here")
        .with_help("prefetch a parameter, field or local of type `T[]`")]);
    };
    let mut loc_texts = Vec::new();
    for p in locations {
        match print(p, ctx.dialect()) {
            Some(t) => loc_texts.push(t),
            None => return Err(vec![unprintable(site, &requested)]),
        }
    }

    // The par blocks: the selected one, or all (outermost) par blocks of the method.
    let mut pars: Vec<Stmt> = Vec::new();
    match site.kind {
        SiteKind::Par => {
            if let Some(s) = stmt_at(&method, site.span.start()) {
                if matches!(s.kind, StmtKind::Par(_)) {
                    pars.push(s.clone());
                }
            }
        }
        _ => {
            if let MethodBody::Block(b) = &method.body {
                for s in &b.stmts {
                    walk_stmts(s, &mut |st| {
                        if matches!(st.kind, StmtKind::Par(_))
                            && !pars.iter().any(|p: &Stmt| p.span.contains(st.span))
                        {
                            pars.push(st.clone());
                        }
                    });
                }
            }
        }
    }

    // Register names: k counts the locations of all prefetch annotations of the method, in order
    // (§1.5). Earlier annotations have already been applied, so their registers are in the text.
    let k0 = next_register_index(ctx.text(method.span));
    let base = sanitize(&arr_text);
    let regs: Vec<String> =
        (0..locations.len()).map(|i| ctx.names.name(&format!("{base}_reg_{}", k0 + i))).collect();

    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut arms: Vec<Vec<SegPlan>> = Vec::new();
    let mut uses = vec![0usize; locations.len()];
    let mut written = vec![false; locations.len()];
    let mut forall_only = vec![false; locations.len()];

    for par_stmt in &pars {
        let StmtKind::Par(par) = &par_stmt.kind else {
            continue;
        };
        // A301: the array variable itself must not be reassigned in the block.
        if assigned_vars(par_stmt).contains(&arr) {
            errors.push(
                Diagnostic::error(
                    "A301",
                    format!("{requested}: `{arr}` is assigned in the par block"),
                )
                .with_primary(par.keyword, "this par block reassigns the array")
                .with_help("prefetch an array that is not reassigned inside the kernel"),
            );
            continue;
        }
        for arm in &par.arms {
            let StmtKind::Block(body) = &arm.body.kind else {
                errors.push(
                    Diagnostic::error("A0004", format!("{requested}: the par body is not a block"))
                        .with_primary(par.keyword, "par block without `{ … }` body")
                        .with_help("write the par body as a block"),
                );
                continue;
            };
            // Segments, split at top-level barriers (A306 for nested ones).
            let mut segments: Vec<(Vec<&Stmt>, Vec<&Clause>)> = Vec::new();
            let mut cur: Vec<&Stmt> = Vec::new();
            let mut pre: Vec<&Clause> = arm.contract.iter().filter(|c| c.kind.is_pre()).collect();
            for s in &body.stmts {
                if let StmtKind::Barrier(b) = &s.kind {
                    segments.push((std::mem::take(&mut cur), pre));
                    pre = b.contract.iter().filter(|c| c.kind.is_post()).collect();
                    continue;
                }
                walk_stmts(s, &mut |st| {
                    if let StmtKind::Barrier(b) = &st.kind {
                        errors.push(
                            Diagnostic::error(
                                "A306",
                                format!(
                                    "{requested}: barrier not at the top level of the par body"
                                ),
                            )
                            .with_primary(par.keyword, "prefetching requested for this par block")
                            .with_secondary(b.keyword, "nested barrier")
                            .with_help("move the barrier to the top level of the par body"),
                        );
                    }
                });
                cur.push(s);
            }
            segments.push((cur, pre));

            let mut arm_plan = Vec::new();
            for (stmts, pre) in &segments {
                let Some(first) = stmts.first() else { continue };
                let last = stmts[stmts.len() - 1];
                let seg = Segment { stmts, pre, first_off: first.span.start() };
                let mut seg_matches: Vec<(usize, bool)> = Vec::new();
                let mut results = Vec::new();
                for (li, p) in locations.iter().enumerate() {
                    let r = analyse(
                        ctx,
                        &regs[li],
                        &requested,
                        class.as_ref(),
                        &method,
                        &arr,
                        p,
                        &seg,
                        par.keyword,
                    );
                    let res = match r {
                        Ok(Some(res)) => res,
                        Ok(None) => continue,
                        Err(d) => {
                            errors.push(d);
                            continue;
                        }
                    };
                    uses[li] += res.matches.len();
                    if res.forall_only {
                        forall_only[li] = true;
                    }
                    let any_write = res.matches.iter().any(|m| m.write);
                    written[li] |= any_write;
                    seg_matches.push((li, any_write));
                    results.push((li, res));
                }
                // Two requested locations of this array, one written here, must be distinct (A308).
                for (i, &(la, wa)) in seg_matches.iter().enumerate() {
                    for &(lb, wb) in &seg_matches[i + 1..] {
                        if !(wa || wb) {
                            continue;
                        }
                        let mut f = facts_at(
                            ctx.program(),
                            class.as_ref(),
                            &method,
                            Point::Before(seg.first_off),
                        );
                        let (Ok(x), Ok(y)) = (f.tr.int(&locations[la]), f.tr.int(&locations[lb]))
                        else {
                            continue;
                        };
                        let goal = x._eq(&y).not();
                        let why = match prove(&f.tr, &f.facts, &goal, ctx.timeout_ms) {
                            Answer::Proved => None,
                            Answer::Refuted(cx) => {
                                Some(format!("counterexample: {}", clean_model(&cx.to_string())))
                            }
                            Answer::Unknown(r) => Some(format!("the solver could not decide: {r}")),
                        };
                        if let Some(cx) = why {
                            errors.push(
                                Diagnostic::error(
                                    "A308",
                                    format!(
                                        "{requested}: `{arr_text}[{}]` and `{arr_text}[{}]` may be the same cell, and one of them is written",
                                        loc_texts[la], loc_texts[lb]
                                    ),
                                )
                                .with_primary(par.keyword, "prefetching requested for this par block")
                                .with_secondary(first.span, "segment where both are used")
                                .with_note(cx)
                                .with_help("request only one of the two locations, or add a fact that keeps them apart"),
                            );
                        }
                    }
                }
                arm_plan.push(SegPlan { first: first.span, last: last.span, results });
            }
            arms.push(arm_plan);
        }
    }

    for (li, lt) in loc_texts.iter().enumerate() {
        let loc = format!("{arr_text}[{lt}]");
        if uses[li] == 0 {
            warnings.push(
                Diagnostic::warning(
                    "A302",
                    format!("{requested}: `{loc}` is never used; nothing to prefetch"),
                )
                .with_primary(site.keyword, "no access to this location here")
                .with_help("check the index expression of the location"),
            );
        } else if uses[li] == 1 && !written[li] {
            warnings.push(
                Diagnostic::warning(
                    "A307",
                    format!("{requested}: `{loc}` is read only once; a register brings no benefit"),
                )
                .with_primary(site.keyword, "prefetched here")
                .with_note("the location was prefetched anyway; the output is equivalent")
                .with_help(format!(
                    "leave `{lt}` out of the request to keep the single direct read"
                )),
            );
        }
        if forall_only[li] {
            warnings.push(
                Diagnostic::warning(
                    "A309",
                    format!("{requested}: the permission for `{loc}` comes only from a quantified permission (\\forall*)"),
                )
                .with_primary(site.keyword, "prefetched here")
                .with_note("the load guard was derived by instantiating the quantifier's domain at the location")
                .with_help(format!("state `Perm({loc}, …)` in the per-thread contract to make the register's permission explicit")),
            );
        }
    }

    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Plan { arr_text, elem_ty, loc_texts, regs, arms, warnings })
}

fn unprintable(site: &Site, requested: &str) -> Diagnostic {
    Diagnostic::error(
        "A0003",
        format!("{requested}: the location uses a form that cannot be rewritten"),
    )
    .with_primary(site.keyword, "prefetching requested here")
    .with_help("write locations with names, numbers and arithmetic, e.g. `tid + 1`")
}

struct Segment<'a> {
    stmts: &'a [&'a Stmt],
    pre: &'a [&'a Clause],
    first_off: usize,
}

pub(super) struct Occ {
    pub(super) span: Span,
    idx: Expr,
    pub(super) write: bool,
    /// The index mentions a variable bound by an enclosing quantifier or `\let`.
    bound_dep: bool,
}

pub(super) struct SegResult {
    pub(super) matches: Vec<Occ>,
    pub(super) guard: Option<String>,
    forall_only: bool,
    pub(super) loop_invariants: Vec<(usize, String)>,
}

/// Analyse one location in one segment. `Ok(None)`: the location is not used there.
// One diagnostic per call, built on a cold path; boxing it would only add noise.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn analyse(
    ctx: &Ctx,
    reg: &str,
    requested: &str,
    class: Option<&Class>,
    method: &Method,
    arr: &str,
    p: &Expr,
    seg: &Segment,
    par_kw: Span,
) -> Result<Option<SegResult>, Diagnostic> {
    let mut occs = Vec::new();
    for s in seg.stmts {
        collect_occs(s, arr, &mut occs);
    }
    if occs.is_empty() {
        return Ok(None);
    }
    let p_text = print(p, ctx.dialect()).unwrap_or_default();
    let loc_text = format!("{arr}[{p_text}]");
    // A304: the index must not depend on anything assigned in the segment.
    let mut vars = BTreeSet::new();
    let mut arrays = BTreeSet::new();
    for s in seg.stmts {
        vars.extend(assigned_vars(s));
        arrays.extend(assigned_arrays(s));
    }
    let mut p_names = BTreeSet::new();
    walk_expr(p, &mut |e| {
        if let ExprKind::Name(id) = &e.kind {
            p_names.insert(id.name.clone());
        }
    });
    if let Some(v) = p_names.iter().find(|n| vars.contains(*n) || arrays.contains(*n)) {
        let mut d = Diagnostic::error(
            "A304",
            format!("{requested}: the location `{loc_text}` depends on `{v}`, which changes inside the segment"),
        )
        .with_primary(par_kw, "prefetching requested for this par block");
        if let Some(sp) = assignment_of(seg.stmts, v) {
            d = d.with_secondary(sp, format!("`{v}` is assigned here"));
        }
        return Err(d
            .with_note("one register can only stand for one cell for the whole segment")
            .with_help("prefetch a location whose index is fixed for the whole segment"));
    }
    // A305: the permission must stay with the thread.
    for s in seg.stmts {
        let mut bad = None;
        walk_stmts(s, &mut |st| {
            let hit = match &st.kind {
                StmtKind::Spec { kind: SpecKind::Exhale, expr } => mentions(expr, arr),
                StmtKind::Expr(e) => mentions(e, arr),
                StmtKind::Invariant { resource, .. } => mentions(resource, arr),
                StmtKind::Atomic { body, .. } => body.stmts.iter().any(|x| stmt_mentions(x, arr)),
                _ => false,
            };
            if hit && bad.is_none() {
                bad = Some(st.span);
            }
        });
        if let Some(sp) = bad {
            return Err(Diagnostic::error(
                "A305",
                format!("{requested}: the permission for `{loc_text}` may leave the thread within the segment"),
            )
            .with_primary(par_kw, "prefetching requested for this par block")
            .with_secondary(sp, "this statement may give the permission away")
            .with_help("move the statement out of the segment, or do not prefetch this location"));
        }
    }

    let mut f = facts_at(ctx.program(), class, method, Point::Before(seg.first_off));
    let Ok(pt) = f.tr.int(p) else {
        return Err(Diagnostic::error(
            "A0020",
            format!("{requested}: the location `{loc_text}` cannot be encoded for the solver"),
        )
        .with_primary(par_kw, "prefetching requested for this par block")
        .with_help("write the location with integer arithmetic over names in scope"));
    };

    // Permission and load guard from the segment precondition.
    let mut cands: Vec<(Vec<Expr>, bool)> = Vec::new();
    let mut opaque: Vec<Span> = Vec::new();
    for c in seg.pre {
        if let Some(e) = c.expr() {
            perm_atoms(e, arr, &mut Vec::new(), &mut |conds, atom| match cover(
                &mut f, ctx, atom, p, &pt, conds,
            ) {
                Cover::Yes(g, q) => cands.push((g, q)),
                Cover::NotInvertible(idx) => opaque.push(idx.span),
                Cover::No => {}
            });
        }
    }
    // Computed before the havoc below, so the guard is judged in the state at the segment start.
    let guard = if cands.is_empty() {
        None
    } else {
        simplify_guard(&mut f, ctx.timeout_ms, ctx.dialect(), &cands)
    };
    let forall_only = cands.iter().all(|(_, q)| *q);

    // Havoc what the segment assigns, then classify the occurrences.
    for v in &vars {
        f.tr.havoc(v);
    }
    for a in &arrays {
        f.tr.havoc_heap(a);
    }
    let mut matches = Vec::new();
    let mut aliases = Vec::new();
    for o in occs {
        let et = if o.bound_dep { None } else { f.tr.int(&o.idx).ok() };
        let Some(et) = et else {
            aliases.push((o, String::from("the index cannot be compared with the location")));
            continue;
        };
        let eq = et._eq(&pt);
        match prove(&f.tr, &f.facts, &eq, ctx.timeout_ms) {
            Answer::Proved => matches.push(o),
            Answer::Refuted(_) => match prove(&f.tr, &f.facts, &eq.not(), ctx.timeout_ms) {
                Answer::Proved => {}
                Answer::Refuted(cx) => aliases.push((
                    o,
                    format!(
                        "counterexample where both indices coincide: {}",
                        clean_model(&cx.to_string())
                    ),
                )),
                Answer::Unknown(r) => {
                    aliases.push((o, format!("the solver could not decide: {r}")))
                }
            },
            Answer::Unknown(r) => aliases.push((o, format!("the solver could not decide: {r}"))),
        }
    }
    if matches.is_empty() {
        return Ok(None);
    }
    if cands.is_empty() {
        let mut d = Diagnostic::error(
            "A303",
            format!("{requested}: no permission for `{loc_text}` in the segment precondition"),
        )
        .with_primary(par_kw, "prefetching requested for this par block");
        for c in seg.pre {
            d = d.with_secondary(c.span, "precondition of the segment");
        }
        for sp in &opaque {
            d = d.with_secondary(
                *sp,
                "a quantified permission whose index cannot be solved for its variable",
            );
        }
        if !opaque.is_empty() {
            d = d.with_note(
                "a `\\forall*` permission covers the location only when its index is `c * k + d` in the bound variable k (c and d free of k)",
            );
        }
        return Err(d.with_help(format!(
            "add a (conditional) `Perm({loc_text}, …)` to the segment precondition"
        )));
    }
    let any_write = matches.iter().any(|m| m.write);
    if let Some((o, why)) = aliases.iter().find(|(o, _)| o.write || any_write) {
        return Err(Diagnostic::error(
            "A308",
            format!("{requested}: an access to `{arr}` may alias `{loc_text}`, and one of them is written"),
        )
        .with_primary(par_kw, "prefetching requested for this par block")
        .with_secondary(o.span, "possible alias")
        .with_note(why.clone())
        .with_help("make the index provably equal to or different from the location, or do not prefetch it"));
    }

    // Loops of the segment that read the register get `a[p] == r` (when they hold the permission).
    let mut loop_invariants = Vec::new();
    for s in seg.stmts {
        walk_stmts(s, &mut |st| {
            let (StmtKind::While(l) | StmtKind::For(l)) = &st.kind else {
                return;
            };
            let inside: Vec<&Occ> = matches.iter().filter(|m| st.span.contains(m.span)).collect();
            if inside.is_empty() || inside.iter().any(|m| m.write) {
                return;
            }
            // Writes to the register anywhere in the segment inside this loop also rule it out.
            let invs: Vec<&Clause> = l.prefix.clauses_of(ClauseKind::LoopInvariant).collect();
            let Some(last_inv) = invs.last() else { return };
            let mut lc = Vec::new();
            for c in &invs {
                if let Some(e) = c.expr() {
                    perm_atoms(e, arr, &mut Vec::new(), &mut |conds, atom| {
                        if let Cover::Yes(g, q) = cover(&mut f, ctx, atom, p, &pt, conds) {
                            lc.push((g, q));
                        }
                    });
                }
            }
            if lc.is_empty() {
                // The loop does not hold the cell; framing keeps its value across the loop.
                return;
            }
            let lg = simplify_guard(&mut f, ctx.timeout_ms, ctx.dialect(), &lc);
            let g = match (&guard, &lg) {
                (None, None) => None,
                (Some(a), None) | (None, Some(a)) => Some(a.clone()),
                (Some(a), Some(b)) => Some(format!("{} && {}", paren(a), paren(b))),
            };
            let body = match g {
                Some(g) => format!("loop_invariant {} ==> {loc_text} == {reg};", paren(&g)),
                None => format!("loop_invariant {loc_text} == {reg};"),
            };
            let end = last_inv.span.end();
            let le = line_end_incl(ctx.src, end);
            if ctx.src[end..le].trim().is_empty() && ctx.src[end..le].ends_with('\n') {
                let ind = indent_at(ctx.src, last_inv.span.start());
                loop_invariants.push((le, format!("{ind}{body}{}", ctx.layout.newline)));
            } else {
                loop_invariants.push((end, format!(" {body}")));
            }
        });
    }
    Ok(Some(SegResult { matches, guard, forall_only, loop_invariants }))
}

/// A model for users: versioned names (`tid (version 1002)`) read as the plain name, the last
/// version wins, and bare array references (`a = 0`) are dropped.
fn clean_model(m: &str) -> String {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in m.split(", ") {
        let Some((k, v)) = part.split_once(" = ") else {
            continue;
        };
        let k = k.split(" (version").next().unwrap_or(k).to_string();
        out.retain(|(x, _)| *x != k);
        out.push((k, v.to_string()));
    }
    out.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
}

fn paren(s: &str) -> String {
    if s.contains(' ') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// The guard `g` (disjunction of the candidates' conjunctions), with conjuncts that the facts
/// already prove dropped; `None` when the guard is provably true.
fn simplify_guard(
    f: &mut Facts,
    timeout: u32,
    dialect: Dialect,
    cands: &[(Vec<Expr>, bool)],
) -> Option<String> {
    let mut disj = Vec::new();
    for (conds, _) in cands {
        let mut kept = Vec::new();
        for c in conds {
            for cj in c.conjuncts() {
                let proved =
                    f.tr.bool(cj)
                        .map(|b| crate::check::holds(&f.facts, &b, timeout))
                        .unwrap_or(false);
                if !proved {
                    kept.push(cj.clone());
                }
            }
        }
        if kept.is_empty() {
            return None;
        }
        // A conjunct prefetching does not rewrite stands as `false`: no load under it.
        let conj = kept
            .iter()
            .map(|e| {
                subst_names(e, &BTreeMap::new())
                    .unwrap_or_else(|| Expr::synth(ExprKind::Bool(false)))
            })
            .reduce(|a, b| Expr::bin(BinOp::And, a, b))?;
        disj.push(print_expr(&conj, dialect));
    }
    disj.dedup();
    if disj.len() == 1 {
        disj.pop()
    } else {
        Some(disj.iter().map(|d| format!("({d})")).collect::<Vec<_>>().join(" || "))
    }
}

/// Atoms giving permission to cells of `arr`: `(conditions, atom)`.
enum Atom<'a> {
    /// `Perm(arr[e], π)` (or PointsTo / Value).
    Direct(&'a Expr),
    /// `(\forall* int k; cond; Perm(arr[k + d], π))`.
    Forall { var: String, domain: Vec<Expr>, idx: &'a Expr },
}

fn perm_atoms<'a>(
    e: &'a Expr,
    arr: &str,
    conds: &mut Vec<Expr>,
    out: &mut dyn FnMut(&[Expr], Atom<'a>),
) {
    match &e.kind {
        ExprKind::Binary(BinOp::And | BinOp::Star, l, r) => {
            perm_atoms(l, arr, conds, out);
            perm_atoms(r, arr, conds, out);
        }
        ExprKind::Binary(BinOp::Implies, l, r) => {
            conds.push((**l).clone());
            perm_atoms(r, arr, conds, out);
            conds.pop();
        }
        ExprKind::Cond(c, a, b) => {
            conds.push((**c).clone());
            perm_atoms(a, arr, conds, out);
            conds.pop();
            conds.push(Expr::not((**c).clone()));
            perm_atoms(b, arr, conds, out);
            conds.pop();
        }
        ExprKind::Builtin(Builtin::Perm | Builtin::PointsTo | Builtin::Value, args) => {
            if let Some(ExprKind::Index(a, i)) = args.first().map(|x| &x.kind) {
                if is_array(a, arr) {
                    out(conds, Atom::Direct(i));
                }
            }
        }
        ExprKind::Quant { kind: QuantKind::ForallStar, bindings, cond, body }
            if bindings.len() == 1 =>
        {
            let b = &bindings[0];
            let mut domain = Vec::new();
            if let Some((lo, hi)) = &b.range {
                domain.push(Expr::bin(BinOp::Le, (**lo).clone(), Expr::name(&b.name.name)));
                domain.push(Expr::bin(BinOp::Lt, Expr::name(&b.name.name), (**hi).clone()));
            }
            if let Some(c) = cond {
                domain.push((**c).clone());
            }
            let mut inner = Vec::new();
            perm_atoms(body, arr, &mut inner, &mut |ic, atom| {
                if let Atom::Direct(idx) = atom {
                    let mut d = domain.clone();
                    d.extend(ic.iter().cloned());
                    out(conds, Atom::Forall { var: b.name.name.clone(), domain: d, idx });
                }
            });
        }
        _ => {}
    }
}

/// What an atom says about `arr[p]`.
enum Cover<'a> {
    /// Permission under these conditions (and whether they come from a quantifier).
    Yes(Vec<Expr>, bool),
    No,
    /// A quantified permission whose index cannot be solved for its bound variable.
    NotInvertible(&'a Expr),
}

/// Does `atom` (under `conds`) give permission for `arr[p]`? For a quantified permission the
/// location is solved for the bound variable (`a[2 * k]` covers `a[p]` where `p % 2 == 0`, with
/// `k = p / 2` in the domain).
fn cover<'a>(
    f: &mut Facts,
    ctx: &Ctx,
    atom: Atom<'a>,
    p: &Expr,
    pt: &crate::check::translate::Z3Int,
    conds: &[Expr],
) -> Cover<'a> {
    match atom {
        Atom::Direct(e) => {
            let Ok(et) = f.tr.int(e) else {
                return Cover::No;
            };
            if crate::check::holds(&f.facts, &et._eq(pt), ctx.timeout_ms) {
                Cover::Yes(conds.to_vec(), false)
            } else {
                Cover::No
            }
        }
        Atom::Forall { var, domain, idx } => {
            // Solve idx(k) == p for the bound variable: idx = c * k + d (c and d free of k).
            let Some((c, d)) = affine(idx, &var) else {
                return Cover::NotInvertible(idx);
            };
            let minus = |a: Expr, b: Option<Expr>| match b {
                Some(b) => Expr::bin(BinOp::Sub, a, b),
                None => a,
            };
            let mut extra = Vec::new();
            let k_val = match c.as_int().and_then(|v| v.to_i64()) {
                Some(1) => minus(p.clone(), d),
                Some(-1) => minus(d.unwrap_or_else(|| Expr::int(0)), Some(p.clone())),
                Some(0) => return Cover::NotInvertible(idx),
                lit => {
                    // k = (p - d) / c, when c divides p - d (and c != 0 for a symbolic c).
                    let diff = minus(p.clone(), d);
                    if lit.is_none() {
                        extra.push(Expr::bin(BinOp::Ne, c.clone(), Expr::int(0)));
                    }
                    extra.push(Expr::bin(
                        BinOp::Eq,
                        Expr::bin(BinOp::Mod, diff.clone(), c.clone()),
                        Expr::int(0),
                    ));
                    Expr::bin(BinOp::Div, diff, c)
                }
            };
            let mut map = BTreeMap::new();
            map.insert(var.clone(), k_val);
            let mut out = conds.to_vec();
            for (e, m) in extra
                .iter()
                .map(|e| (e, BTreeMap::new()))
                .chain(domain.iter().map(|e| (e, map.clone())))
            {
                let Some(e) = subst_names(e, &m) else {
                    return Cover::No;
                };
                out.push(e);
            }
            Cover::Yes(out, true)
        }
    }
}

/// `e` as `c * k + d` with `c` and `d` free of `k` (`d` absent when 0); None when `e` is not
/// affine in `k` (`k * k`, `k / 2`, `f(k)`).
fn affine(e: &Expr, k: &str) -> Option<(Expr, Option<Expr>)> {
    use ExprKind as K;
    if !mentions_name(e, k) {
        return Some((Expr::int(0), Some(e.clone())));
    }
    let add = |a: Option<Expr>, b: Option<Expr>, sub: bool| match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) if sub => Some(Expr::synth(K::Unary(UnOp::Neg, Box::new(b)))),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(Expr::bin(if sub { BinOp::Sub } else { BinOp::Add }, a, b)),
    };
    let lit = |e: &Expr| e.as_int().cloned();
    let coef = |a: Expr, b: Expr, sub: bool| match (lit(&a), lit(&b)) {
        (Some(x), Some(y)) => Expr::synth(K::Int(if sub { x - y } else { x + y })),
        (Some(x), _) if x == BigInt::from(0) && !sub => b,
        (_, Some(y)) if y == BigInt::from(0) => a,
        _ => Expr::bin(if sub { BinOp::Sub } else { BinOp::Add }, a, b),
    };
    match &e.kind {
        K::Name(id) if id.name == k => Some((Expr::int(1), None)),
        K::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) => {
            let sub = *op == BinOp::Sub;
            let (cl, dl) = affine(l, k)?;
            let (cr, dr) = affine(r, k)?;
            let dl = dl.filter(|d| lit(d) != Some(BigInt::from(0)));
            let dr = dr.filter(|d| lit(d) != Some(BigInt::from(0)));
            Some((coef(cl, cr, sub), add(dl, dr, sub)))
        }
        K::Binary(BinOp::Mul, l, r) => {
            let (x, f) = if mentions_name(l, k) && !mentions_name(r, k) {
                (l, r)
            } else if mentions_name(r, k) && !mentions_name(l, k) {
                (r, l)
            } else {
                return None;
            };
            let (c, d) = affine(x, k)?;
            let scale = |v: Expr| match (lit(&v), lit(f)) {
                (Some(a), Some(b)) => Expr::synth(K::Int(a * b)),
                (Some(a), _) if a == BigInt::from(1) => (**f).clone(),
                _ => Expr::bin(BinOp::Mul, v, (**f).clone()),
            };
            Some((scale(c), d.map(scale)))
        }
        K::Unary(UnOp::Neg, x) => {
            let (c, d) = affine(x, k)?;
            let neg = |v: Expr| match lit(&v) {
                Some(a) => Expr::synth(K::Int(-a)),
                None => Expr::synth(K::Unary(UnOp::Neg, Box::new(v))),
            };
            Some((neg(c), d.map(neg)))
        }
        _ => None,
    }
}

fn is_array(a: &Expr, arr: &str) -> bool {
    match &a.kind {
        ExprKind::Name(id) => id.name == arr,
        ExprKind::Field(r, f) => matches!(r.kind, ExprKind::This) && f.name == arr,
        _ => false,
    }
}

fn mentions_name(e: &Expr, n: &str) -> bool {
    let mut hit = false;
    walk_expr(e, &mut |x| {
        if x.as_name() == Some(n) {
            hit = true;
        }
    });
    hit
}

fn mentions(e: &Expr, arr: &str) -> bool {
    let mut hit = false;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Name(id) if id.name == arr => hit = true,
        ExprKind::Field(_, f) if f.name == arr => hit = true,
        _ => {}
    });
    hit
}

fn stmt_mentions(s: &Stmt, arr: &str) -> bool {
    let mut hit = false;
    walk_stmts(s, &mut |st| stmt_exprs(st, &mut |e| hit |= mentions(e, arr)));
    hit
}

/// The first statement of the segment that declares or assigns `v`.
fn assignment_of(stmts: &[&Stmt], v: &str) -> Option<Span> {
    let mut found = None;
    for s in stmts {
        walk_stmts(s, &mut |st| {
            if found.is_some() {
                return;
            }
            match &st.kind {
                StmtKind::Decl { vars, .. } => {
                    if let Some(d) = vars.iter().find(|d| d.name.name == v) {
                        found = Some(d.span);
                    }
                }
                StmtKind::Assign { target, .. }
                | StmtKind::CompoundAssign { target, .. }
                | StmtKind::IncDec { target, .. }
                    if target.as_name() == Some(v) =>
                {
                    found = Some(st.span);
                }
                _ => {}
            }
        });
    }
    found
}

/// Occurrences `arr[e]` in `s`: code, asserts, loop invariants and guards; not inside `\old`,
/// not as the location argument of a permission predicate, not in par or barrier contracts.
fn collect_occs(s: &Stmt, arr: &str, out: &mut Vec<Occ>) {
    walk_stmts(s, &mut |st| {
        if matches!(st.kind, StmtKind::Par(_) | StmtKind::Barrier(_)) {
            return;
        }
        let target = match &st.kind {
            StmtKind::Assign { target, .. }
            | StmtKind::CompoundAssign { target, .. }
            | StmtKind::IncDec { target, .. } => Some(target.span),
            _ => None,
        };
        stmt_exprs(st, &mut |root| {
            let mut excluded: Vec<Span> = Vec::new();
            let mut binders: Vec<(Span, Vec<String>)> = Vec::new();
            walk_expr(root, &mut |e| match &e.kind {
                ExprKind::Old(..) => excluded.push(e.span),
                ExprKind::Builtin(
                    Builtin::Perm
                    | Builtin::PointsTo
                    | Builtin::Value
                    | Builtin::HPerm
                    | Builtin::APerm,
                    args,
                ) => {
                    if let Some(a) = args.first() {
                        excluded.push(a.span);
                    }
                }
                ExprKind::Quant { bindings, .. } => {
                    binders.push((e.span, bindings.iter().map(|b| b.name.name.clone()).collect()))
                }
                ExprKind::Let { name, .. } | ExprKind::Sum { name, .. } => {
                    binders.push((e.span, vec![name.name.clone()]))
                }
                _ => {}
            });
            walk_expr(root, &mut |e| {
                let ExprKind::Index(a, i) = &e.kind else {
                    return;
                };
                if !is_array(a, arr) || excluded.iter().any(|x| x.contains(e.span)) {
                    return;
                }
                let bound_dep = binders.iter().any(|(sp, names)| {
                    sp.contains(e.span) && names.iter().any(|n| mentions_name(i, n))
                });
                let write = target.is_some_and(|t| t.lo == e.span.lo && t.hi == e.span.hi);
                out.push(Occ { span: e.span, idx: (**i).clone(), write, bound_dep });
            });
        });
    });
}

/// The element type of a one-dimensional array `arr` (parameter, field or local).
fn element_type(ctx: &Ctx, class: Option<&Class>, method: &Method, arr: &str) -> Option<String> {
    let mut ty: Option<Type> =
        method.params.iter().find(|p| p.name.name == arr).map(|p| p.ty.clone());
    if ty.is_none() {
        if let MethodBody::Block(b) = &method.body {
            for s in &b.stmts {
                walk_stmts(s, &mut |st| {
                    if let StmtKind::Decl { ty: t, vars } = &st.kind {
                        if ty.is_none() && vars.iter().any(|d| d.name.name == arr) {
                            ty = Some(t.clone());
                        }
                    }
                });
            }
        }
    }
    if ty.is_none() {
        if let Some(c) = class {
            for m in &c.members {
                if let Member::Field(f) = m {
                    if f.names.iter().any(|n| n.name == arr) {
                        ty = Some(f.ty.clone());
                    }
                }
            }
        }
    }
    let ty = ty?;
    let TypeKind::Array(inner, _) = &ty.kind else {
        return None;
    };
    if inner.array_dims() > 0 {
        return None;
    }
    Some(match inner.kind {
        TypeKind::Int => "int".to_string(),
        TypeKind::Boolean => "boolean".to_string(),
        TypeKind::Bool => "bool".to_string(),
        TypeKind::Float32 => "float32".to_string(),
        TypeKind::Float64 => "float64".to_string(),
        TypeKind::Rational => "rational".to_string(),
        _ => {
            let t = ctx.text(inner.span).trim();
            if t.is_empty() {
                return None;
            }
            t.to_string()
        }
    })
}

/// 1 + the largest `k` of identifiers `…_reg_<k>` in the method text (0 if none).
fn next_register_index(text: &str) -> usize {
    let mut next = 0;
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if let Some(pos) = w.rfind("_reg_") {
            if pos > 0 {
                if let Ok(k) = w[pos + 5..].parse::<usize>() {
                    next = next.max(k + 1);
                }
            }
        }
    }
    next
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

// ---------------------------------------------------------------------------------------------
// Generated text (locations, guards): substitution on the tree, printed by the canonical printer.
// ---------------------------------------------------------------------------------------------

/// The canonical text of `e` in `dialect`; None for the forms [`subst`] refuses.
fn print(e: &Expr, dialect: Dialect) -> Option<String> {
    subst_names(e, &BTreeMap::new()).map(|e| print_expr(&e, dialect))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::parser::parse_expr_text;

    fn e(s: &str, d: Dialect) -> Expr {
        parse_expr_text(s, d).expect("parses")
    }

    #[test]
    fn substitution_keeps_precedence() {
        for d in [Dialect::V1, Dialect::V2] {
            assert_eq!(print(&e("(tid + 1)", d), d).unwrap(), "tid + 1");
            assert_eq!(
                print(&e("3 * (tid + 1) - (a - b)", d), d).unwrap(),
                "3 * (tid + 1) - (a - b)"
            );
            let mut m = BTreeMap::new();
            m.insert("k".to_string(), e("p - 1", d));
            let s = subst_names(&e("0 <= k && 2 * k < n", d), &m).unwrap();
            assert_eq!(print_expr(&s, d), "0 <= p - 1 && 2 * (p - 1) < n");
            // A negated guard keeps the grouping of its `||` (the issue #18 reproducer).
            let g = Expr::not(e("(tid < 2 || tid > 5) && tid % 2 == 0", d));
            assert_eq!(print(&g, d).unwrap(), "!((tid < 2 || tid > 5) && tid % 2 == 0)");
            // Forms prefetching does not rewrite are refused, not printed.
            assert_eq!(print(&e("\\old(x) + 1", d), d), None);
        }
    }

    #[test]
    fn register_index() {
        assert_eq!(next_register_index("int x_reg_0 = x[t]; y"), 1);
        assert_eq!(next_register_index("nothing"), 0);
    }
}
