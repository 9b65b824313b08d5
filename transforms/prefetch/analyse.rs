//! One location in one segment: its occurrences, which of them match (Z3 proves the indices
//! equal under the facts of the segment start), possible aliases, whether the permission stays
//! with the thread, and the load guard (optimizations.md §4(d)).

use super::check::print;
use super::perms::{
    clean_model, cover, mentions_name, paren, perm_atoms, simplify_guard, ArrPath, Cover,
};
use super::segments::Alt;
use crate::Ctx;
use analyze::facts::{facts_at, Point};
use analyze::scope::{assigned_arrays, assigned_vars};
use check::{prove, Answer};
use diag::Diagnostic;
use edit::{indent_at, line_end_incl};
use front::ast::*;
use front::span::Span;
use front::visit::{stmt_exprs, walk_expr, walk_stmts};
use std::collections::{BTreeMap, BTreeSet};

pub(super) struct Segment<'a, 'b> {
    pub(super) stmts: &'b [&'a Stmt],
    pub(super) pre: &'b [Alt<'a>],
    pub(super) first_off: usize,
}

/// What `analyse` asks of its caller: the request (array, location) and where it stands.
pub(super) struct Request<'r> {
    pub(super) ctx: &'r Ctx<'r>,
    pub(super) requested: &'r str,
    pub(super) class: Option<&'r Class>,
    pub(super) method: &'r Method,
    pub(super) arr: &'r ArrPath,
    pub(super) arr_text: &'r str,
    pub(super) par_kw: Span,
    /// `invariant name(resource)` declarations of the method, by name.
    pub(super) invariants: &'r BTreeMap<String, Expr>,
}

/// A refusal of one location in one segment; `segment_only` ones (no permission there, A303)
/// leave the other segments prefetched.
pub(super) struct Refusal {
    pub(super) diag: Diagnostic,
    pub(super) segment_only: bool,
}

impl From<Diagnostic> for Refusal {
    fn from(diag: Diagnostic) -> Refusal {
        Refusal { diag, segment_only: false }
    }
}

pub(super) struct Occ {
    pub(super) span: Span,
    idx: Expr,
    /// The row index of an access to a row path (`m[row][idx]`).
    row: Option<Expr>,
    pub(super) write: bool,
    /// The index mentions a variable bound by an enclosing quantifier or `\let`.
    bound_dep: bool,
}

pub(super) struct SegResult {
    pub(super) matches: Vec<Occ>,
    pub(super) guard: Option<String>,
    pub(super) forall_only: bool,
    pub(super) loop_invariants: Vec<(usize, String)>,
}

/// Analyse one location in one segment. `Ok(None)`: the location is not used there.
// One diagnostic per call, built on a cold path; boxing it would only add noise.
#[allow(clippy::result_large_err)]
pub(super) fn analyse(
    rq: &Request,
    reg: &str,
    p: &Expr,
    seg: &Segment,
) -> Result<Option<SegResult>, Refusal> {
    let Request { ctx, requested, class, method, arr, arr_text, par_kw, invariants } = *rq;
    let mut occs = Vec::new();
    for s in seg.stmts {
        collect_occs(s, arr, &mut occs);
    }
    if occs.is_empty() {
        return Ok(None);
    }
    let p_text = print(p, ctx.dialect()).unwrap_or_default();
    let loc_text = format!("{arr_text}[{p_text}]");
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
            .with_help("prefetch a location whose index is fixed for the whole segment")
            .into());
    }
    // A305: the permission must stay with the thread.
    for s in seg.stmts {
        if let Some(sp) = gives_away(s, &arr.base, invariants) {
            return Err(Diagnostic::error(
                "A305",
                format!("{requested}: the permission for `{loc_text}` may leave the thread within the segment"),
            )
            .with_primary(par_kw, "prefetching requested for this par block")
            .with_secondary(sp, "this statement may give the permission away")
            .with_help("move the statement out of the segment, or do not prefetch this location")
            .into());
        }
    }

    let mut f = facts_at(ctx.program(), class, method, Point::Before(seg.first_off));
    let Ok(pt) = f.tr.int(p) else {
        return Err(Diagnostic::error(
            "A0020",
            format!("{requested}: the location `{loc_text}` cannot be encoded for the solver"),
        )
        .with_primary(par_kw, "prefetching requested for this par block")
        .with_help("write the location with integer arithmetic over names in scope")
        .into());
    };

    // Permission and load guard from the segment precondition: every way of reaching the
    // segment (alternative) must give the cell; the guard is the conjunction of theirs.
    let mut alt_guards: Vec<Option<Option<String>>> = Vec::new();
    let mut opaque: Vec<Span> = Vec::new();
    let mut forall_only = true;
    for alt in seg.pre {
        let mut cands: Vec<(Vec<Expr>, bool)> = Vec::new();
        if still_holds(alt, p, &arr.base, invariants) {
            for c in &alt.clauses {
                if let Some(e) = c.expr() {
                    perm_atoms(e, arr, &mut Vec::new(), &mut |conds, atom| match cover(
                        &mut f, ctx, arr, atom, p, &pt, conds,
                    ) {
                        Cover::Yes(g, q) => cands.push((g, q)),
                        Cover::NotInvertible(idx) => opaque.push(idx.span),
                        Cover::No => {}
                    });
                }
            }
        }
        forall_only &= cands.iter().all(|(_, q)| *q);
        // Computed before the havoc below, so the guard is judged in the state at the start.
        alt_guards.push(if cands.is_empty() {
            None
        } else {
            Some(simplify_guard(&mut f, ctx.timeout_ms, ctx.dialect(), &cands))
        });
    }
    let covered = !seg.pre.is_empty() && alt_guards.iter().all(|g| g.is_some());
    let mut parts: Vec<String> = alt_guards.into_iter().flatten().flatten().collect();
    parts.dedup();
    let guard = match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(parts.iter().map(|g| paren(g)).collect::<Vec<_>>().join(" && ")),
    };

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
        let eq = if o.bound_dep { None } else { arr.cell_eq(&mut f, o.row.as_ref(), &o.idx, &pt) };
        let Some(eq) = eq else {
            aliases.push((o, String::from("the index cannot be compared with the location")));
            continue;
        };
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
    if !covered {
        let mut d = Diagnostic::error(
            "A303",
            format!("{requested}: no permission for `{loc_text}` in the segment precondition"),
        )
        .with_primary(par_kw, "prefetching requested for this par block")
        .with_secondary(seg.stmts[0].span, "segment that uses the location");
        for alt in seg.pre {
            for c in &alt.clauses {
                d = d.with_secondary(c.span, "precondition of the segment");
            }
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
        let d = d.with_help(format!(
            "add a (conditional) `Perm({loc_text}, …)` to the segment precondition"
        ));
        return Err(Refusal { diag: d, segment_only: true });
    }
    let any_write = matches.iter().any(|m| m.write);
    if let Some((o, why)) = aliases.iter().find(|(o, _)| o.write || any_write) {
        return Err(Diagnostic::error(
            "A308",
            format!("{requested}: an access to `{arr_text}` may alias `{loc_text}`, and one of them is written"),
        )
        .with_primary(par_kw, "prefetching requested for this par block")
        .with_secondary(o.span, "possible alias")
        .with_note(why.clone())
        .with_help("make the index provably equal to or different from the location, or do not prefetch it")
        .into());
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
                        if let Cover::Yes(g, q) = cover(&mut f, ctx, arr, atom, p, &pt, conds) {
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

/// Does `e` name the array `arr`, as a variable or as a field?
fn mentions(e: &Expr, arr: &str) -> bool {
    front::visit::any_expr(e, &mut |x| match &x.kind {
        ExprKind::Name(id) => id.name == arr,
        ExprKind::Field(_, f) => f.name == arr,
        _ => false,
    })
}

/// The first statement in `s` that may give a permission for `base`'s cells away: an `exhale`
/// or a call mentioning it, a `fold` of a predicate over it, an `invariant` whose resource
/// mentions it, or an `atomic` block whose invariant does (an invariant the method does not
/// declare counts when the block mentions the array).
pub(super) fn gives_away(
    s: &Stmt,
    base: &str,
    invariants: &BTreeMap<String, Expr>,
) -> Option<Span> {
    let mut bad = None;
    walk_stmts(s, &mut |st| {
        let hit = match &st.kind {
            StmtKind::Spec { kind: SpecKind::Exhale | SpecKind::Fold, expr } => {
                mentions(expr, base)
            }
            StmtKind::Expr(e) => mentions(e, base),
            StmtKind::Invariant { resource, .. } => mentions(resource, base),
            StmtKind::Atomic { names, body } => {
                names.iter().any(|n| match invariants.get(&n.name) {
                    Some(res) => mentions(res, base),
                    None => body.stmts.iter().any(|x| stmt_mentions(x, base)),
                })
            }
            _ => false,
        };
        if hit && bad.is_none() {
            bad = Some(st.span);
        }
    });
    bad
}

/// Whether what `alt`'s clauses say still holds at the end of the statements it crossed (as
/// far as the location is concerned): they assign none of the clauses' or the location's
/// variables and give no permission for the array away.
fn still_holds(alt: &Alt, p: &Expr, base: &str, invariants: &BTreeMap<String, Expr>) -> bool {
    if alt.crossed.is_empty() {
        return true;
    }
    let mut names = BTreeSet::new();
    let mut note = |e: &Expr| {
        walk_expr(e, &mut |x| {
            if let Some(n) = x.as_name() {
                names.insert(n.to_string());
            }
        })
    };
    note(p);
    for c in &alt.clauses {
        if let Some(e) = c.expr() {
            note(e);
        }
    }
    alt.crossed.iter().all(|s| {
        gives_away(s, base, invariants).is_none()
            && assigned_vars(s).is_disjoint(&names)
            // Writing the array's own cells changes no permission.
            && assigned_arrays(s).iter().all(|a| a == base || !names.contains(a))
    })
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
fn collect_occs(s: &Stmt, arr: &ArrPath, out: &mut Vec<Occ>) {
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
                let Some(row) = arr.row_of(a) else { return };
                if excluded.iter().any(|x| x.contains(e.span)) {
                    return;
                }
                let bound_dep = binders.iter().any(|(sp, names)| {
                    sp.contains(e.span)
                        && names.iter().any(|n| {
                            mentions_name(i, n) || row.is_some_and(|r| mentions_name(r, n))
                        })
                });
                let write = target.is_some_and(|t| t.lo == e.span.lo && t.hi == e.span.hi);
                let row = row.cloned();
                out.push(Occ { span: e.span, idx: (**i).clone(), row, write, bound_dep });
            });
        });
    });
}
