//! The tiled kernel: fewer threads, each running a sequential loop over its cells with the
//! per-thread contract quantified over those cells and carried by loop invariants; the method
//! contract's quantifiers over the threads nested to match; the ceiling helper when needed.

use super::check::Plan;
use crate::{Applied, Ctx, Outcome};
use diag::Diagnostic;
use edit::{indent_at, line_start, reindent, EditSet};
use front::ast::*;
use front::exprtext::{collect, is_atomic, mentions, paren, splice, subst_fn, subst_var};
use front::span::Span;
use front::visit::{stmt_exprs, walk_expr, walk_stmts};

/// Body of the ceiling helper (§1.5); an existing definition with this text is reused.
const CEIL_BODY: &str = "n / d + (n % d == 0 ? 0 : 1)";

pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    let Plan {
        class,
        method,
        arm,
        size,
        size_text,
        t_text,
        mut fx,
        inter,
        keep_method_contract,
        cuda,
    } = plan;
    let size = &size;
    let src = ctx.src;
    let parsed = ctx.parsed;
    let it = &arm.iters[0];
    let t = it.name.name.as_str();
    // ---- names ----
    let existing_helper = class.and_then(|c| find_helper(src, c));
    let ceil = match &existing_helper {
        Some(n) => n.clone(),
        None => ctx.names.name("vct_tile_ceiling"),
    };
    let x = ctx.names.name("vct_tile_counter");
    let j = ctx.names.name("vct_i");
    let n = paren(&size_text);
    let hi = cuda.as_ref().map_or(&it.hi, |k| &k.count);
    let tt = if is_atomic(src, hi) { t_text.clone() } else { paren(&t_text) };
    // In a CUDA kernel `blockDim.x` becomes N: every other mention of the old count is T.
    let block_size = cuda.as_ref().map(|_| (super::cuda::BLOCK_SIZE, tt.clone()));
    // `name := with` for the thread variable, and `blockDim.x := T` in a CUDA kernel.
    let subst = |e: &Expr, with: &str| -> Vec<(Span, String)> {
        let mut reps = Vec::new();
        let mut f = subst_fn(src, t, with);
        let mut g = block_size.as_ref().map(|(b, tt)| subst_fn(src, b, tt));
        // `\gtid` and `\ltid` are single tokens for a sum of launch indices (every part has
        // the token's span): the token is replaced by that sum written out, substituted.
        let h = |x: &Expr, _: bool| -> Option<String> {
            let (_, tt) = block_size.as_ref()?;
            let tok = x.span.text(src);
            if tok != "\\gtid" && tok != "\\ltid" {
                return None;
            }
            let written = front::exprtext::print_simple(x)
                .replace(t, &paren(with))
                .replace(super::cuda::BLOCK_SIZE, tt);
            Some(paren(&written))
        };
        let mut both = |x: &Expr, d: bool| {
            h(x, d).or_else(|| f(x, d)).or_else(|| g.as_mut().and_then(|g| g(x, d)))
        };
        collect(e, true, &mut both, &mut reps);
        reps
    };
    // The text of conjuncts sharing one span (the CUDA front end spells `\pointer_index(a, i, p)`
    // as bounds and a `Perm`, all with the span of the written atom), substituted.
    let subst_group = |group: &[&Expr], with: &str| -> String {
        let mut reps: Vec<(Span, String)> = group.iter().flat_map(|c| subst(c, with)).collect();
        // One written name, several synthetic contexts: the written one is an argument of the
        // atom (delimited), so the unparenthesised replacement is kept.
        reps.sort_by_key(|(s, t)| (s.start(), s.end(), t.len()));
        reps.dedup_by_key(|(s, _)| (s.start(), s.end()));
        splice(src, group[0].span, reps)
    };
    let ceiling = format!("{ceil}({t_text}, {size_text})");

    // Cell of bound variable `v`, range predicates.
    let cell = |v: &str| {
        if inter {
            format!("{t} + {v} * {n}")
        } else {
            v.to_string()
        }
    };
    // With a symbolic N, the inter ranges bound j by `j < T` instead of `j < ⌈T/N⌉`: both follow
    // from `t + j * N < T` (t >= 0, N >= 1), but proving the ceiling bound, or the loop bound
    // `x <= ⌈T/N⌉`, needs non-linear division, which the verifier's arithmetic does not do. An
    // explicit bound is still needed: the interpreter enumerates the quantified cells.
    // A CUDA kernel takes the same forms (with a literal N): they need no helper function, which
    // would have to be a ghost declaration in the `.cu` file.
    let symbolic = size.as_int().is_none() || cuda.is_some();
    let chunk_bound = |v: &str| {
        if symbolic {
            format!(" && {v} < {tt}")
        } else {
            format!(" && {v} < {ceiling}")
        }
    };
    let all = |v: &str| {
        if inter {
            format!("0 <= {v}{} && {t} + {v} * {n} < {tt}", chunk_bound(v))
        } else {
            format!("{t} * {n} <= {v} && {v} < ({t} + 1) * {n} && {v} < {tt}")
        }
    };
    let done = |v: &str| {
        if inter {
            format!("0 <= {v} && {v} < {x} && {t} + {v} * {n} < {tt}")
        } else {
            format!("{t} * {n} <= {v} && {v} < {x} && {v} < {tt}")
        }
    };
    let todo = |v: &str| format!("{x} <= {v} && {}", all(v));

    let mut edits = EditSet::new();
    // 1. thread range
    match &cuda {
        // A kernel's thread count is its launches' block size, which its contract states.
        Some(k) => {
            edits.replace(k.fact, format!("{} == {size_text}", super::cuda::BLOCK_SIZE));
            for l in &k.launches {
                edits.replace(*l, size_text.clone());
            }
            for c in &k.others {
                edits.replace(c.span, subst_group(&[c], t));
            }
        }
        None => {
            let new_hi = if inter { size_text.clone() } else { ceiling.clone() };
            edits.replace(it.hi.span, new_hi);
        }
    }

    // 2. contract, 3. invariants
    let resource_fns = resource_functions(&parsed.program);
    let is_resource = |e: &Expr| is_resource_expr(e, &resource_fns);
    let mut inv_plain: Vec<String> = Vec::new();
    let mut inv_res: Vec<String> = Vec::new();
    let mut inv_fun: Vec<String> = Vec::new();
    let mut inv_old: Vec<String> = Vec::new();
    // A symbolic tile size must be known positive inside the kernel: the ceiling helper requires
    // it, and the thread's cells `t + j * N` are distinct only when N != 0. Γ proved `2 <= N` at
    // the `par` statement, but a method precondition does not reach the threads, so the fact is
    // restated as a per-thread precondition (and loop invariant).
    if size.as_int().is_none() {
        let fact = format!("{n} > 0");
        inv_plain.push(fact.clone());
        let nl = ctx.layout.newline;
        match arm.contract.first() {
            Some(first) => {
                let ind = indent_at(src, first.span.start()).to_string();
                edits.insert(
                    line_start(src, first.span.start()),
                    format!("{ind}requires {fact};{nl}"),
                );
            }
            None => {
                let b = arm.body.span.start();
                let ls = line_start(src, b);
                if src[ls..b].trim().is_empty() {
                    let ind = format!("{}{}", indent_at(src, b), ctx.layout.unit);
                    edits.insert(ls, format!("{ind}requires {fact};{nl}"));
                } else {
                    edits.insert(b, format!("requires {fact}; "));
                }
            }
        }
    }
    let cj = cell(&j);
    for clause in &arm.contract {
        let Some(e) = clause.expr() else { continue };
        let pre = clause.kind.is_pre();
        let post = clause.kind.is_post();
        for group in span_groups(e.conjuncts()) {
            let c = group[0];
            if cuda.as_ref().is_some_and(|k| k.fact.same_place(c.span)) {
                continue; // rewritten to `blockDim.x == N` above
            }
            if !group.iter().any(|c| mentions(c, t)) {
                if pre && clause.kind != ClauseKind::ContextEverywhere {
                    inv_plain.push(subst_group(&group, t));
                }
                if block_size.is_some()
                    && group.iter().any(|c| mentions(c, super::cuda::BLOCK_SIZE))
                {
                    edits.replace(c.span, subst_group(&group, t));
                }
                continue;
            }
            let body = subst_group(&group, &cj);
            let res = group.iter().any(|c| is_resource(c));
            let q = if res { "\\forall*" } else { "\\forall" };
            edits.replace(c.span, format!("({q} int {j}; {}; {body})", all(&j)));
            if clause.kind == ClauseKind::ContextEverywhere {
                continue; // holds inside the loop by itself
            }
            match (res, pre, post) {
                (true, true, true) => {
                    inv_res.push(format!("(\\forall* int {j}; {}; {body})", all(&j)))
                }
                (true, true, false) => {
                    inv_res.push(format!("(\\forall* int {j}; {}; {body})", todo(&j)))
                }
                (true, false, true) => {
                    inv_res.push(format!("(\\forall* int {j}; {}; {body})", done(&j)))
                }
                (false, true, _) => {
                    inv_fun.push(format!("(\\forall int {j}; {}; {body})", todo(&j)))
                }
                _ => {}
            }
            if !res && post {
                inv_fun.push(format!("(\\forall int {j}; {}; {body})", done(&j)));
            }
            if post {
                // \old values of cells not yet handled are preserved.
                // An \old under a quantifier of the clause keeps that quantifier's binding
                // (`(\forall int c; 0 <= c && c < 6; m[t][c] == 3 * \old(m[t][c]))`).
                let mut olds = Vec::new();
                group
                    .iter()
                    .for_each(|c| old_frames(c, &mut Vec::new(), &mut Vec::new(), &mut olds));
                // A cell framed without a guard somewhere needs no guarded frame as well.
                let unguarded: Vec<String> = olds
                    .iter()
                    .filter(|f| f.guards.is_empty())
                    .map(|f| subst_group(&[f.inner], &cj))
                    .collect();
                for OldFrame { inner, binders, mut guards } in olds {
                    let it_text = subst_group(&[inner], &cj);
                    if unguarded.contains(&it_text) {
                        guards.clear();
                    }
                    let mut frame = format!("{it_text} == \\old({it_text})");
                    if !guards.is_empty() {
                        let conds: Vec<String> =
                            guards.iter().map(|g| format!("({})", subst_group(&[g], &cj))).collect();
                        frame = format!("{} ==> {frame}", conds.join(" && "));
                    }
                    for b in binders.iter().rev() {
                        let Some(wrapped) =
                            wrap_binder(b, &frame, src, &mut |e| subst_group(&[e], &cj))
                        else {
                            frame.clear();
                            break;
                        };
                        frame = wrapped;
                    }
                    if frame.is_empty() {
                        continue;
                    }
                    let inv = format!("(\\forall int {j}; {}; {frame})", todo(&j));
                    if !inv_old.contains(&inv) {
                        inv_old.push(inv);
                    }
                }
            }
        }
    }
    let bounds = if inter && symbolic {
        format!("0 <= {x}")
    } else if inter {
        format!("0 <= {x} && {x} <= {ceiling}")
    } else {
        format!("{t} * {n} <= {x} && {x} <= ({t} + 1) * {n}")
    };
    let (start, guard) = if inter {
        ("0".to_string(), format!("{t} + {x} * {n} < {tt}"))
    } else {
        (format!("{t} * {n}"), format!("{x} < ({t} + 1) * {n} && {x} < {tt}"))
    };

    // Body text with t := cell(x).
    let body = &arm.body;
    let mut reps = Vec::new();
    let cx = cell(&x);
    walk_stmts(body, &mut |s| {
        stmt_exprs(s, &mut |e| reps.extend(subst(e, &cx)));
    });
    reps.sort_by_key(|(s, _)| s.start());
    reps.dedup_by_key(|(s, _)| (s.start(), s.end()));
    let body_text = splice(src, body.span, reps);
    let nl = ctx.layout.newline;
    let unit = ctx.layout.unit.clone();
    let p_ind = indent_at(src, body.span.start()).to_string();
    let in1 = format!("{p_ind}{unit}");
    let loop_body = if matches!(body.kind, StmtKind::Block(_)) {
        reindent(&body_text, &p_ind, &in1)
    } else {
        format!("{{{nl}{in1}{unit}{}{nl}{in1}}}", reindent(&body_text, &p_ind, &in1))
    };
    let mut out = format!("{{{nl}");
    let invs =
        std::iter::once(bounds).chain(inv_plain).chain(inv_res).chain(inv_fun).chain(inv_old);
    for inv in invs {
        out.push_str(&format!("{in1}loop_invariant {inv};{nl}"));
    }
    out.push_str(&format!(
        "{in1}for (int {x} = {start}; {guard}; {x} = {x} + 1) {loop_body}{nl}{p_ind}}}"
    ));
    edits.replace(body.span, out);

    // 4. method contract
    let mut diagnostics = Vec::new();
    if !keep_method_contract {
        let callers = analyze::scope::calls_of(&parsed.program, &method.name.name);
        if !callers.is_empty() {
            let mut d = Diagnostic::note(
                "A506",
                "the method contract is kept: the method has callers in the file",
            )
            .with_primary(method.name.span, "contract kept");
            for c in callers {
                d = d.with_secondary(c, "call");
            }
            diagnostics.push(d);
        } else {
            let vt = ctx.names.name("vct_t");
            let scope_ok = {
                let assigned = analyze::scope::assigned_vars(&Stmt {
                    kind: StmtKind::Block(match &method.body {
                        MethodBody::Block(b) => b.clone(),
                        _ => Block { stmts: vec![], span: Span::DUMMY },
                    }),
                    span: Span::DUMMY,
                });
                let mut ok = true;
                walk_expr(&it.hi, &mut |e| {
                    if let ExprKind::Name(id) = &e.kind {
                        if assigned.iter().any(|a| a == &id.name) {
                            ok = false;
                        }
                    }
                });
                ok
            };
            let mut nested = 0;
            if scope_ok {
                for clause in &method.prefix.clauses {
                    if !matches!(
                        clause.kind,
                        ClauseKind::Requires | ClauseKind::Ensures | ClauseKind::Context
                    ) {
                        continue;
                    }
                    let Some(e) = clause.expr() else { continue };
                    for c in e.conjuncts() {
                        let Some((k, body_e)) =
                            full_range_quant(&mut fx, c, &it.hi, ctx.timeout_ms)
                        else {
                            continue;
                        };
                        let kind = match &c.kind {
                            ExprKind::Quant { kind, .. } => kind.symbol(),
                            _ => continue,
                        };
                        let (outer_hi, inner_range, cellk) = if inter {
                            let inner =
                                format!("0 <= {j}{} && {vt} + {j} * {n} < {tt}", chunk_bound(&j));
                            (size_text.clone(), inner, format!("{vt} + {j} * {n}"))
                        } else {
                            let inner = format!(
                                "{vt} * {n} <= {j} && {j} < ({vt} + 1) * {n} && {j} < {tt}"
                            );
                            (ceiling.clone(), inner, j.clone())
                        };
                        let b = subst_var(src, body_e, &k, &cellk);
                        edits.replace(
                            c.span,
                            format!(
                                "({kind} int {vt}; 0 <= {vt} && {vt} < {outer_hi}; ({kind} int {j}; {inner_range}; {b}))"
                            ),
                        );
                        nested += 1;
                    }
                }
            }
            if nested > 0 {
                diagnostics.push(
                    Diagnostic::note(
                        "A506",
                        format!("{nested} method-contract quantifier(s) over [0, {t_text}) nested to match the tiles"),
                    )
                    .with_primary(method.name.span, "contract nested"),
                );
            }
        }
    }

    // 5. helper (not used by inter-tiling with a symbolic size)
    if existing_helper.is_none() && !(inter && symbolic) {
        let anchor = method_anchor(method);
        let ls = line_start(src, anchor);
        let ind = indent_at(src, anchor).to_string();
        let static_kw = if class.is_some() { "static " } else { "" };
        edits.insert(
            ls,
            format!(
                "{ind}requires d > 0;{nl}{ind}{static_kw}pure int {ceil}(int n, int d) = {CEIL_BODY};{nl}{nl}"
            ),
        );
    }
    Ok(Applied { edits, diagnostics })
}

/// Where the method's text starts (its prefix, i.e. first clause, or the header).
fn method_anchor(m: &Method) -> usize {
    let mut a = m.span.start();
    if let Some(c) = m.prefix.clauses.first() {
        a = a.min(c.span.start());
    }
    a
}

/// Names of predicates (resource-valued methods) of the program.
fn resource_functions(p: &Program) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |m: &Method| {
        if m.is_predicate() {
            out.push(m.name.name.clone());
        }
    };
    p.methods().for_each(|(_, m)| add(m));
    out
}

fn is_resource_expr(e: &Expr, preds: &[String]) -> bool {
    let mut res = false;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Builtin(b, _)
            if b.is_resource() || matches!(b, Builtin::Array | Builtin::Matrix) =>
        {
            res = true
        }
        ExprKind::Call { name, .. } if preds.contains(&name.name) => res = true,
        _ => {}
    });
    res
}

/// An existing `vct_tile_ceiling` helper with our body, reused instead of a second copy.
fn find_helper(src: &str, c: &Class) -> Option<String> {
    for m in &c.members {
        if let Member::Method(m) = m {
            if m.name.name.starts_with("vct_tile_ceiling") {
                if let MethodBody::Expr(e) = &m.body {
                    let norm = |s: &str| s.split_whitespace().collect::<String>();
                    if norm(e.span.text(src)) == norm(CEIL_BODY) && m.params.len() == 2 {
                        return Some(m.name.name.clone());
                    }
                }
            }
        }
    }
    None
}

/// `(\forall[*] int k; lo <= k && k < hi; B)` (or the ranged form) whose range is provably
/// `[0, T)`: returns `k` and `B`.
fn full_range_quant<'e>(
    fx: &mut analyze::facts::Facts,
    e: &'e Expr,
    t_hi: &Expr,
    timeout: u32,
) -> Option<(String, &'e Expr)> {
    let ExprKind::Quant { kind: QuantKind::Forall | QuantKind::ForallStar, bindings, cond, body } =
        &e.kind
    else {
        return None;
    };
    if bindings.len() != 1 {
        return None;
    }
    let k = bindings[0].name.name.clone();
    let (lo, hi) = if let Some((lo, hi)) = &bindings[0].range {
        if cond.is_some() {
            return None;
        }
        ((**lo).clone(), (**hi).clone())
    } else {
        let c = cond.as_deref()?;
        let parts = c.conjuncts();
        if parts.len() != 2 {
            return None;
        }
        let lo = match &parts[0].kind {
            ExprKind::Binary(BinOp::Le, l, r) if r.as_name() == Some(&k) => (**l).clone(),
            _ => return None,
        };
        let hi = match &parts[1].kind {
            ExprKind::Binary(BinOp::Lt, l, r) if l.as_name() == Some(&k) => (**r).clone(),
            _ => return None,
        };
        (lo, hi)
    };
    if mentions(&lo, &k) || mentions(&hi, &k) {
        return None;
    }
    let goal = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Eq, lo, Expr::int(0)),
        Expr::bin(BinOp::Eq, hi, t_hi.clone()),
    );
    let g = fx.tr.bool(&goal).ok()?;
    if check::holds(&fx.facts, &g, timeout) {
        Some((k, body))
    } else {
        None
    }
}

/// Conjuncts grouped by span: consecutive ones with one span come from one written atom.
fn span_groups(conjuncts: Vec<&Expr>) -> Vec<Vec<&Expr>> {
    let mut out: Vec<Vec<&Expr>> = Vec::new();
    for c in conjuncts {
        match out.last_mut() {
            Some(g) if g[0].span.same_place(c.span) && c.span.end() != 0 => g.push(c),
            _ => out.push(vec![c]),
        }
    }
    out
}

/// An `\old(e)` of a clause, with the quantifiers it stands under (outermost first) and the
/// guards of the implications it stands under.
struct OldFrame<'a> {
    inner: &'a Expr,
    binders: Vec<&'a Expr>,
    guards: Vec<&'a Expr>,
}

/// Every `\old(e)` in `e` with its quantifiers and guards. The guards matter: under
/// `i < n ==> y[i] == … \old(y[i])` the cell `y[i]` exists only when `i < n`, and a frame
/// `y[i] == \old(y[i])` without the guard reads out of bounds (V-OOB on a grid kernel whose
/// last block runs past the array).
fn old_frames<'a>(
    e: &'a Expr,
    binders: &mut Vec<&'a Expr>,
    guards: &mut Vec<&'a Expr>,
    out: &mut Vec<OldFrame<'a>>,
) {
    match &e.kind {
        ExprKind::Old(inner, None) => {
            out.push(OldFrame { inner, binders: binders.clone(), guards: guards.clone() })
        }
        ExprKind::Quant { .. } => {
            binders.push(e);
            front::visit::for_each_child(e, &mut |c, _| old_frames(c, binders, guards, out));
            binders.pop();
        }
        ExprKind::Binary(BinOp::Implies, cond, rhs) => {
            old_frames(cond, binders, guards, out);
            guards.push(cond);
            old_frames(rhs, binders, guards, out);
            guards.pop();
        }
        _ => front::visit::for_each_child(e, &mut |c, _| old_frames(c, binders, guards, out)),
    }
}

/// `body` under the bindings of the quantifier `q` (as `\forall`s, one per binding, the innermost
/// with its condition and ranged bindings as conditions), `text` giving the substituted text of a
/// sub-expression; `None` for a binding without a written type.
fn wrap_binder(
    q: &Expr,
    body: &str,
    src: &str,
    text: &mut dyn FnMut(&Expr) -> String,
) -> Option<String> {
    let ExprKind::Quant { bindings, cond, .. } = &q.kind else { return None };
    let mut decls = Vec::new();
    let mut conds = Vec::new();
    for b in bindings {
        let ty = src.get(b.ty.span.range()).filter(|t| !t.is_empty())?;
        let x = &b.name.name;
        decls.push(format!("{ty} {x}"));
        if let Some((lo, hi)) = &b.range {
            conds.push(format!("{} <= {x} && {x} < {}", text(lo), text(hi)));
        }
    }
    if let Some(c) = cond {
        conds.push(text(c));
    }
    let cond = if conds.is_empty() { "true".to_string() } else { conds.join(" && ") };
    let mut out = body.to_string();
    for (n, d) in decls.iter().enumerate().rev() {
        let c = if n + 1 == decls.len() { cond.as_str() } else { "true" };
        out = format!("(\\forall {d}; {c}; {out})");
    }
    Some(out)
}
