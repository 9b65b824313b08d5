//! Applicability of prefetching: per segment of each `par` body (`segments.rs`), which
//! accesses match a requested location (Z3 proves `e == p` under the facts of the segment
//! start), under which condition the thread holds a permission for the cell (`perms.rs`), and
//! whether two requested cells may alias (`analyse.rs`).

use super::analyse::{analyse, Request, SegResult, Segment};
use super::perms::{clean_model, ArrPath};
use super::segments::split;
use crate::{Ctx, Params};
use analyze::facts::{facts_at, Point};
use analyze::scope::assigned_vars;
use analyze::sites::{stmt_at, Site, SiteKind};
use check::{prove, Answer};
use diag::{Diagnostic, Severity};
use front::ast::*;
use front::exprtext::subst_names;
use front::printer::print_expr;
use front::span::Span;
use front::visit::{walk_expr, walk_stmts};
use front::Dialect;
use std::collections::{BTreeMap, BTreeSet};
use z3::ast::Ast;

/// A checked prefetch: registers, and per par arm the analysed segments.
pub struct Plan {
    pub(super) arr_text: String,
    pub(super) elem_ty: String,
    pub(super) loc_texts: Vec<String>,
    pub(super) regs: Vec<String>,
    pub(super) arms: Vec<ArmPlan>,
    pub(super) warnings: Vec<Diagnostic>,
}

/// One par arm: the first statement of its body (where registers first loaded in a nested
/// segment are declared) and its segments in text order.
pub(super) struct ArmPlan {
    pub(super) body_first: Span,
    pub(super) segs: Vec<SegPlan>,
}

/// One segment: its first and last statement, and the locations used there.
pub(super) struct SegPlan {
    pub(super) first: Span,
    pub(super) last: Span,
    /// 0 for a segment of the par body's own statement list.
    pub(super) depth: usize,
    /// The segment is an unbraced branch or loop body: added text needs braces around it.
    pub(super) unbraced: bool,
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

    // The array: a side-effect-free access path (a name, `this.name`, or a row `m[i]`).
    let Some(arr) = ArrPath::of(array) else {
        return Err(vec![Diagnostic::error(
            "A301",
            format!("{requested}: the array must be a name, a field or a row `m[i]`"),
        )
        .with_primary(site.keyword, "prefetching requested here")
        .with_help("name an array variable or field, or a row of an array of arrays, e.g. `gpuopt glob_to_reg a tid;`")]);
    };
    let Some(arr_text) = print(array, ctx.dialect()) else {
        return Err(vec![unprintable(site, &requested)]);
    };
    let dims = if arr.row.is_some() { 2 } else { 1 };
    let Some(elem_ty) = element_type(ctx, class.as_ref(), &method, &arr.base, dims) else {
        let what = if dims == 1 { "a one-dimensional array" } else { "an array of arrays" };
        return Err(vec![Diagnostic::error(
            "A301",
            format!("{requested}: `{}` is not {what} of this method", arr.base),
        )
        .with_primary(site.keyword, "prefetching requested here")
        .with_help(
            "prefetch a parameter, field or local of type `T[]`, or a row of one of type `T[][]`",
        )]);
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
    let invariants = method_invariants(&method);

    // Register names: k counts the locations of all prefetch annotations of the method, in order
    // (§1.5). Earlier annotations have already been applied, so their registers are in the text.
    let k0 = next_register_index(ctx.text(method.span));
    // A name quoted because it is a keyword (`` `in` ``) gives `in_reg_0`, not `_in__reg_0`.
    let base = sanitize(arr_text.trim_matches('`'));
    let regs: Vec<String> =
        (0..locations.len()).map(|i| ctx.names.name(&format!("{base}_reg_{}", k0 + i))).collect();

    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut arms: Vec<ArmPlan> = Vec::new();
    let mut uses = vec![0usize; locations.len()];
    let mut written = vec![false; locations.len()];
    let mut forall_only = vec![false; locations.len()];
    // Segments refused for lack of permission (A303), per location: warnings when another
    // segment takes the location, errors when none does.
    let mut unpermitted: Vec<Vec<Diagnostic>> = vec![Vec::new(); locations.len()];

    for par_stmt in &pars {
        let StmtKind::Par(par) = &par_stmt.kind else {
            continue;
        };
        // A301: no part of the access path may be assigned in the block.
        if let Some(why) = path_assigned(par_stmt, &arr) {
            errors.push(
                Diagnostic::error("A301", format!("{requested}: {why} in the par block"))
                    .with_primary(par.keyword, "this par block changes the array path")
                    .with_help("prefetch an array whose path is not reassigned inside the kernel"),
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
            let Some(body_first) = body.stmts.first() else { continue };
            let pre: Vec<&Clause> = arm.contract.iter().filter(|c| c.kind.is_pre()).collect();
            let iters: Vec<&str> = arm.iters.iter().map(|i| i.name.name.as_str()).collect();
            let runs = match split(body, pre, &iters, &requested, par.keyword) {
                Ok(r) => r,
                Err(ds) => {
                    errors.extend(ds);
                    continue;
                }
            };
            let rq = Request {
                ctx,
                requested: &requested,
                class: class.as_ref(),
                method: &method,
                arr: &arr,
                arr_text: &arr_text,
                par_kw: par.keyword,
                invariants: &invariants,
            };

            // Names the requested locations read: a segment that declares one of them first
            // loads the register after that declaration.
            let mut loc_names = std::collections::BTreeSet::new();
            for p in locations.iter() {
                front::visit::walk_expr(p, &mut |e| {
                    if let ExprKind::Name(id) = &e.kind {
                        loc_names.insert(id.name.clone());
                    }
                });
            }
            let mut segs = Vec::new();
            for run in &runs {
                let skip = leading_index_decls(&run.stmts, &loc_names, &arr.base);
                let stmts = &run.stmts[skip..];
                let first = stmts[0];
                let last = stmts[stmts.len() - 1];
                let seg = Segment { stmts, pre: &run.pre, first_off: first.span.start() };
                let mut seg_matches: Vec<(usize, bool)> = Vec::new();
                let mut results = Vec::new();
                for (li, p) in locations.iter().enumerate() {
                    let res = match analyse(&rq, &regs[li], p, &seg) {
                        Ok(Some(res)) => res,
                        Ok(None) => continue,
                        Err(r) if r.segment_only => {
                            unpermitted[li].push(r.diag);
                            continue;
                        }
                        Err(r) => {
                            errors.push(r.diag);
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
                segs.push(SegPlan {
                    first: first.span,
                    last: last.span,
                    depth: run.depth,
                    unbraced: run.unbraced,
                    results,
                });
            }
            arms.push(ArmPlan { body_first: body_first.span, segs });
        }
    }

    // A303 refuses a location only where no segment takes it; elsewhere it is a warning.
    for (li, ds) in unpermitted.into_iter().enumerate() {
        if uses[li] == 0 {
            errors.extend(ds);
            continue;
        }
        for mut d in ds {
            d.severity = Severity::Warning;
            d.message = d.message.replacen(
                "no permission for",
                "not prefetched in one segment: no permission for",
                1,
            );
            d.notes.push(
                "the other segments use the register; this one accesses the array directly"
                    .to_string(),
            );
            warnings.push(d);
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

/// The `invariant name(resource)` declarations of the method, by name.
fn method_invariants(method: &Method) -> BTreeMap<String, Expr> {
    let mut out = BTreeMap::new();
    if let MethodBody::Block(b) = &method.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if let StmtKind::Invariant { name, resource, .. } = &st.kind {
                    out.insert(name.name.clone(), resource.clone());
                }
            });
        }
    }
    out
}

/// Why the access path is not fixed in the par block `s`: the array variable is assigned, a
/// variable of the row index is, or a row of the array of arrays is.
fn path_assigned(s: &Stmt, arr: &ArrPath) -> Option<String> {
    let vars = assigned_vars(s);
    if vars.contains(&arr.base) {
        return Some(format!("`{}` is assigned", arr.base));
    }
    let row = arr.row.as_ref()?;
    let mut names = BTreeSet::new();
    walk_expr(row, &mut |e| {
        if let Some(n) = e.as_name() {
            names.insert(n.to_string());
        }
    });
    if let Some(v) = names.iter().find(|n| vars.contains(*n)) {
        return Some(format!("the row index `{v}` is assigned"));
    }
    let mut row_write = false;
    walk_stmts(s, &mut |st| {
        if let StmtKind::Assign { target, .. }
        | StmtKind::CompoundAssign { target, .. }
        | StmtKind::IncDec { target, .. } = &st.kind
        {
            if let ExprKind::Index(m, _) = &target.kind {
                row_write |= ArrPath::of(m).is_some_and(|p| p.base == arr.base && p.row.is_none());
            }
        }
    });
    row_write.then(|| format!("a row of `{}` is assigned", arr.base))
}

/// The element type of an array `arr` (parameter, field or local) of `dims` dimensions.
fn element_type(
    ctx: &Ctx,
    class: Option<&Class>,
    method: &Method,
    arr: &str,
    dims: usize,
) -> Option<String> {
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
    let mut inner = &ty;
    for _ in 0..dims {
        let TypeKind::Array(x, _) = &inner.kind else {
            return None;
        };
        inner = x;
    }
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

/// A name part for `s`: `a` stays `a`, `m[i]` becomes `m_i`, `this.a` becomes `this_a`.
fn sanitize(s: &str) -> String {
    let mapped: String =
        s.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect();
    let parts: Vec<&str> = mapped.split('_').filter(|p| !p.is_empty()).collect();
    if !s.contains('[') || parts.is_empty() {
        mapped
    } else {
        parts.join("_")
    }
}

// ---------------------------------------------------------------------------------------------
// Generated text (locations, guards): substitution on the tree, printed by the canonical printer.
// ---------------------------------------------------------------------------------------------

/// The canonical text of `e` in `dialect`; None for the forms [`subst`] refuses.
pub(super) fn print(e: &Expr, dialect: Dialect) -> Option<String> {
    subst_names(e, &BTreeMap::new()).map(|e| print_expr(&e, dialect))
}

/// How many statements at the start of a segment to leave before the register loads: through
/// the last of its leading declarations that declares a name the locations read (`int i =
/// blockIdx.x * blockDim.x + threadIdx.x;`, the first line of most CUDA kernels), so that the
/// load reads the cell the segment uses. Only declarations whose initialisers call nothing and
/// do not mention the array are passed over (loading later then reads the same value); 0 when
/// no location needs it, which leaves the load where it always was.
fn leading_index_decls(
    stmts: &[&Stmt],
    loc_names: &std::collections::BTreeSet<String>,
    arr: &str,
) -> usize {
    let mut skip = 0;
    for (k, s) in stmts.iter().enumerate() {
        let StmtKind::Decl { vars, .. } = &s.kind else { break };
        let mut plain = true;
        for v in vars {
            if let Some(init) = &v.init {
                front::visit::walk_expr(init, &mut |e| match &e.kind {
                    ExprKind::Call { .. } => plain = false,
                    ExprKind::Name(id) if id.name == arr => plain = false,
                    _ => {}
                });
            }
        }
        if !plain {
            break;
        }
        if vars.iter().any(|v| loc_names.contains(&v.name.name)) {
            skip = k + 1;
        }
    }
    if skip >= stmts.len() {
        0
    } else {
        skip
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use front::parser::parse_expr_text;

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
