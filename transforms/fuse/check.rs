//! Applicability of fusion: F consecutive top-level `par` blocks over provably equal thread
//! ranges, each junction's permission hand-over answered by Z3 ([`super::junction`]) and
//! self-checked; across thread blocks, no kernel may read what another block wrote.

use super::junction::{junction, JunctionError};
use super::model::{self, has_token, kernel_model, Kernel};
use super::solver::{self, Analysis, Threads};
use crate::{Ctx, Params};
use analyze::facts::{facts_at, Point};
use analyze::sites::Site;
use check::translate::{Term, Z3Int};
use check::{self, ctx as z3ctx};
use diag::Diagnostic;
use front::ast::*;
use front::span::Span;
use z3::ast::{Ast, Bool, Int};

/// A checked fusion: the kernels, and the fused kernel over the first `fused_count` of them.
pub struct Plan<'a> {
    pub(super) pars: Vec<&'a Stmt>,
    /// The first kernel's label.
    pub(super) label: Option<String>,
    /// The fused body has a barrier, which needs a label.
    pub(super) need_label: bool,
    pub(super) fused: Kernel,
    pub(super) fused_count: usize,
    pub(super) warnings: Vec<Diagnostic>,
}

pub(super) fn check<'a>(
    ctx: &mut Ctx<'a>,
    site: &Site,
    params: &Params,
) -> Result<Plan<'a>, Vec<Diagnostic>> {
    let f = params.count("kernels");
    let blocks = &params.count_opt("blocks");
    let block_size = params.expr("block_size");
    let head = site.keyword;
    if f < 2 {
        return Err(vec![Diagnostic::error(
            "A0004",
            format!("cannot fuse {f} kernel(s): at least 2 are needed"),
        )
        .with_primary(head, "fusion requested here")
        .with_help("use `gpuopt fuse F B;` with F >= 2 (or `--opt fuse --kernels F`)")]);
    }
    if blocks == &Some(0) {
        return Err(vec![Diagnostic::error(
            "A0004",
            "the number of thread blocks must be at least 1",
        )
        .with_primary(head, "fusion requested here")
        .with_help("use `gpuopt fuse F B;` with B >= 1 (with `--opt fuse`, leave out `--blocks` for one block)")]);
    }
    let parsed: &'a front::Parsed = ctx.parsed;
    let src = ctx.src;
    let Some((class, method)) =
        analyze::sites::find_method(&parsed.program, site.class.as_deref(), &site.method)
    else {
        return Err(vec![refuse_shape(head, "the selected par block is not inside a method")]);
    };
    let MethodBody::Block(body) = &method.body else {
        return Err(vec![refuse_shape(head, "the method has no body")]);
    };
    // Kernels are taken from the method's top-level block (as in the paper). `Span`'s `==`
    // ignores positions (ASTs compare up to spans), so the selected par is found by place.
    let Some(first) = body.stmts.iter().position(|s| {
        matches!(&s.kind, StmtKind::Par(p) if p.keyword.same_place(site.keyword))
            || s.span.start() == site.span.start()
    }) else {
        return Err(vec![Diagnostic::error(
            "A609",
            "only par blocks at the top level of a method body can be fused",
        )
        .with_primary(head, "this par block is nested")
        .with_help("move the kernels to the top level of the method body")]);
    };

    let pars = collect_kernels(&body.stmts[first..], f as usize, *blocks, head)?;
    let arms = kernel_shapes(&pars, head)?;
    old_after_writes(&arms, head)?;
    let dims = arms[0].1.iters.len();
    let several_blocks = block_size.is_some() || blocks.is_some_and(|b| b > 1);
    if dims > 1 && several_blocks {
        return Err(vec![Diagnostic::error(
            "A610",
            format!("cannot check thread blocks of {dims}-dimensional kernels"),
        )
        .with_primary(head, "fusion requested here")
        .with_secondary(arms[0].0.keyword, format!("this kernel has {dims} iterators"))
        .with_help(
            "fuse multi-dimensional kernels as one thread block (omit the block count and size)",
        )]);
    }

    // ---- facts and thread ranges (A603)
    let mut facts = facts_at(&parsed.program, class, method, Point::Before(pars[0].span.start()));
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    for it in &arms[0].1.iters {
        match (facts.tr.int(&it.lo), facts.tr.int(&it.hi)) {
            (Ok(a), Ok(b)) => {
                lo.push(a);
                hi.push(b);
            }
            _ => {
                return Err(vec![refuse_shape(
                    it.span,
                    "the thread range cannot be encoded for the solver",
                )])
            }
        }
    }
    for (k, (_, arm)) in arms.iter().enumerate().skip(1) {
        for (d, it) in arm.iters.iter().enumerate() {
            let goal = match (facts.tr.int(&it.lo), facts.tr.int(&it.hi)) {
                (Ok(a), Ok(b)) => Some(Bool::and(z3ctx(), &[&a._eq(&lo[d]), &b._eq(&hi[d])])),
                _ => None,
            };
            let same = match &goal {
                Some(g) => check::prove(&facts.tr, &facts.facts, g, ctx.timeout_ms),
                None => check::Answer::Unknown("the range cannot be encoded".into()),
            };
            if !same.is_proved() {
                let it1 = &arms[0].1.iters[d];
                let which = if dims > 1 {
                    format!("iterator {} of kernel {}", d + 1, k + 1)
                } else {
                    format!("kernel {}", k + 1)
                };
                let mut diag = Diagnostic::error(
                    "A603",
                    format!(
                        "{which} runs over a thread range that is not provably equal to kernel 1's"
                    ),
                )
                .with_primary(head, "fusion requested here")
                .with_secondary(it1.span, "kernel 1's threads")
                .with_secondary(it.span, format!("kernel {}'s threads", k + 1));
                if let (check::Answer::Refuted(_), Some(g)) = (&same, &goal) {
                    // The values of the names in the two ranges, and the ranges, made canonical.
                    let texts = [it1.span.text(src), it.span.text(src)].join(" ");
                    let mut obj: Vec<(String, Z3Int)> = facts
                        .tr
                        .visible
                        .iter()
                        .filter_map(|(label, t)| match t {
                            Term::Int(i)
                                if has_token(&texts, label.trim_end_matches(".length")) =>
                            {
                                Some((label.clone(), i.clone()))
                            }
                            _ => None,
                        })
                        .collect();
                    let names = obj.len();
                    let mut extra = vec![g.not()];
                    let bounds = [&lo[d], &hi[d]];
                    for (label, e) in ["kernel 1 from", "kernel 1 to"].iter().zip(bounds) {
                        let v = solver::named_int(&mut facts.tr, label);
                        extra.push(v._eq(e));
                        obj.push((label.to_string(), v));
                    }
                    if let (Ok(a), Ok(b)) = (facts.tr.int(&it.lo), facts.tr.int(&it.hi)) {
                        for (label, e) in ["kernel k from", "kernel k to"].iter().zip([a, b]) {
                            let v = solver::named_int(&mut facts.tr, label);
                            extra.push(v._eq(&e));
                            obj.push((label.to_string(), v));
                        }
                    }
                    if let Ok(Some(cx)) =
                        solver::canonical(&facts.tr, &facts.facts, &extra, &obj, ctx.timeout_ms)
                    {
                        let get = |l: &str| cx.get(l).unwrap_or("?").to_string();
                        let vals: Vec<String> =
                            obj[..names].iter().map(|(l, _)| format!("{l} = {}", get(l))).collect();
                        let with = if vals.is_empty() {
                            String::new()
                        } else {
                            format!("with {}, ", vals.join(", "))
                        };
                        diag = diag.with_note(format!(
                            "counterexample: {with}kernel 1 runs {} .. {} and kernel {} runs {} .. {}",
                            get("kernel 1 from"),
                            get("kernel 1 to"),
                            k + 1,
                            get("kernel k from"),
                            get("kernel k to"),
                        ));
                    }
                }
                let d = diag;
                return Err(vec![d.with_help(
                    "fuse only kernels over the same threads, or add a fact that makes the ranges equal",
                )]);
            }
        }
    }

    // ---- thread variables: kernel 1's, unless renaming another kernel's would capture a name
    let dialect = ctx.dialect();
    let t1: Vec<String> = arms[0].1.iters.iter().map(|i| i.name.name.clone()).collect();
    let capture = arms.iter().skip(1).any(|(p, arm)| {
        let own: Vec<&str> = arm.iters.iter().map(|i| i.name.name.as_str()).collect();
        let text = ctx.text(Span::new(p.keyword.start(), arm.span.end()));
        t1.iter().any(|t| !own.contains(&t.as_str()) && has_token(text, t))
    });
    let tvars: Vec<String> = if capture {
        (0..dims).map(|_| ctx.names.name("vct_fused_tid")).collect()
    } else {
        t1.clone()
    };

    let predicates: Vec<String> = ctx
        .parsed
        .program
        .methods()
        .filter(|(_, m)| m.is_predicate())
        .map(|(_, m)| m.name.name.clone())
        .collect();
    let mut models: Vec<Kernel> = Vec::new();
    for (p, arm) in &arms {
        let model = kernel_model(src, dialect, p.keyword, arm, &tvars, &predicates);
        models.push(model.map_err(|d| vec![d])?);
    }

    // ---- the solver context: thread range over the fused thread variables
    let tr = &mut facts.tr;
    let block_expr: Option<Z3Int> = match (block_size, blocks) {
        (Some(e), _) => Some(
            tr.int(e).map_err(|_| vec![refuse_shape(head, "the block size cannot be encoded")])?,
        ),
        (None, Some(b)) if *b > 1 => {
            let b = Int::from_i64(z3ctx(), *b as i64);
            let n = Int::sub(z3ctx(), &[&hi[0], &lo[0]]);
            // ⌈T/B⌉
            Some(Int::add(z3ctx(), &[&n, &b, &Int::from_i64(z3ctx(), -1)]).div(&b))
        }
        _ => None,
    };
    let rename: Vec<(String, String)> = t1.iter().cloned().zip(tvars.iter().cloned()).collect();
    let th = Threads {
        names: tvars.clone(),
        lo,
        hi,
        lo_text: arms[0]
            .1
            .iters
            .iter()
            .map(|i| model::rename_tokens(i.lo.span.text(src), &rename))
            .collect(),
        hi_text: arms[0]
            .1
            .iters
            .iter()
            .map(|i| model::rename_tokens(i.hi.span.text(src), &rename))
            .collect(),
    };
    let mut an = Analysis {
        tr,
        facts: facts.facts.clone(),
        th,
        dialect,
        timeout: ctx.timeout_ms,
        pending: Default::default(),
    };

    let mut fused = models[0].clone();
    let mut warnings = Vec::new();
    let mut fused_count = 1usize;
    let mut need_label = models[0].body.iter().any(|l| l.contains("barrier"));
    for (k, next) in models.iter().enumerate().skip(1) {
        let n1 =
            if k == 1 { "kernel 1".to_string() } else { format!("the fusion of kernels 1 to {k}") };
        let n2 = format!("kernel {}", k + 1);
        match junction(&mut an, &fused, next, (&n1, &n2), block_expr.as_ref()) {
            Ok((j, dp)) => {
                need_label |= dp || next.body.iter().any(|l| l.contains("barrier"));
                fused = j;
                fused_count += 1;
            }
            Err(JunctionError::Diag(d)) => {
                return Err(vec![d.with_primary(head, "fusion requested here")])
            }
            Err(JunctionError::InterBlock(msg, note)) => {
                let d = |sev: fn(&str, String) -> Diagnostic| {
                    sev("A607", format!("kernel {} depends on kernel {} across thread blocks: {msg}", k + 1, k))
                        .with_primary(head, "fusion requested here")
                        .with_secondary(arms[k].0.keyword, "this kernel reads what another thread block wrote")
                        .with_note(note.clone())
                        .with_help("a barrier synchronises only one thread block; use one block (omit the block size) or a larger block size")
                };
                if fused_count == 1 {
                    return Err(vec![d(Diagnostic::error)]);
                }
                warnings.push(d(Diagnostic::warning).with_note(format!(
                    "the first {fused_count} kernels were fused; the rest stay unfused"
                )));
                break;
            }
        }
    }

    Ok(Plan { pars, label: models[0].label.clone(), need_label, fused, fused_count, warnings })
}

/// `f` consecutive `par` statements at the start of `stmts` (A601 / A602). `blocks` is only
/// echoed in the suggested annotation.
fn collect_kernels(
    stmts: &[Stmt],
    f: usize,
    blocks: Option<u64>,
    head: Span,
) -> Result<Vec<&Stmt>, Vec<Diagnostic>> {
    let mut pars: Vec<&Stmt> = Vec::new();
    for (idx, s) in stmts.iter().enumerate() {
        if pars.len() == f {
            break;
        }
        if matches!(s.kind, StmtKind::Par(_)) {
            pars.push(s);
            continue;
        }
        if stmts[idx..].iter().any(|t| matches!(t.kind, StmtKind::Par(_))) {
            return Err(vec![Diagnostic::error(
                "A602",
                format!(
                    "a statement lies between kernel {} and kernel {} of the group to fuse",
                    pars.len(),
                    pars.len() + 1
                ),
            )
            .with_primary(head, "fusion requested here")
            .with_secondary(s.span, "this statement separates the kernels")
            .with_help("move the statement before or after the group of kernels; only consecutive par blocks can be fused")]);
        }
        break;
    }
    if pars.len() < f {
        let mut d = Diagnostic::error(
            "A601",
            format!(
                "cannot fuse {f} kernels: only {} consecutive par block(s) start here",
                pars.len()
            ),
        )
        .with_primary(head, format!("`fuse {f}` requested here"));
        if let Some(StmtKind::Par(p)) = pars.last().filter(|_| pars.len() > 1).map(|s| &s.kind) {
            d = d.with_secondary(p.keyword, "the group ends with this par block");
        }
        let help = if pars.len() >= 2 {
            // The annotation grammar needs both numbers (`gpuopt fuse F B;`), so the suggestion
            // keeps the requested block count rather than printing a form that does not parse.
            format!(
                "found {} consecutive par blocks; use `gpuopt fuse {} {};` (or `--kernels {}`)",
                pars.len(),
                pars.len(),
                blocks.unwrap_or(1),
                pars.len()
            )
        } else {
            "fusion needs at least two consecutive par blocks".to_string()
        };
        return Err(vec![d.with_help(help)]);
    }
    Ok(pars)
}

/// Each kernel: one arm, no region contract, a block body, the same iterator structure as
/// kernel 1 (A609).
fn kernel_shapes<'a>(
    pars: &[&'a Stmt],
    head: Span,
) -> Result<Vec<(&'a Par, &'a ParArm)>, Vec<Diagnostic>> {
    let mut arms: Vec<(&Par, &ParArm)> = Vec::new();
    for s in pars {
        let StmtKind::Par(p) = &s.kind else { continue };
        if p.arms.len() != 1 {
            return Err(vec![refuse_kernel(
                head,
                "only single-arm par blocks can be fused",
                (p.keyword, format!("this par block has {} arms joined by `and`", p.arms.len())),
                "split the arms into consecutive par blocks if they are independent",
            )]);
        }
        if let Some(c) = p.prefix.clauses.first() {
            return Err(vec![refuse_kernel(
                head,
                "a par block with a region contract cannot be fused",
                (c.span, "this region contract belongs to one par block".into()),
                "move the region contract into the per-thread contract, or before the group of kernels",
            )]);
        }
        let arm = &p.arms[0];
        if arm.iters.is_empty() || arm.wait.is_some() {
            return Err(vec![refuse_kernel(
                head,
                "only par blocks with thread iterators and no wait list can be fused",
                (p.keyword, "this par block has no iterator or a wait list".into()),
                "give every kernel the same thread iterators",
            )]);
        }
        if let Some((p1, a1)) = arms.first() {
            if a1.iters.len() != arm.iters.len() {
                let d = refuse_kernel(
                    head,
                    &format!(
                        "the kernels have different iterator structures ({} and {} iterators)",
                        a1.iters.len(),
                        arm.iters.len()
                    ),
                    (p1.keyword, format!("{} iterator(s)", a1.iters.len())),
                    "fuse only kernels over the same thread space (same number of iterators, equal ranges)",
                );
                return Err(vec![
                    d.with_secondary(p.keyword, format!("{} iterator(s)", arm.iters.len()))
                ]);
            }
        }
        // A range that mentions another iterator is not a product space.
        let names: Vec<&str> = arm.iters.iter().map(|i| i.name.name.as_str()).collect();
        if let Some(it) = arm.iters.iter().find(|it| {
            names.iter().any(|n| {
                front::exprtext::mentions(&it.lo, n) || front::exprtext::mentions(&it.hi, n)
            })
        }) {
            return Err(vec![refuse_kernel(
                head,
                "a thread range depends on another iterator",
                (it.span, "this range mentions an iterator".into()),
                "fusion needs rectangular thread spaces",
            )]);
        }
        if !matches!(arm.body.kind, StmtKind::Block(_)) {
            return Err(vec![refuse_shape(p.keyword, "the kernel body is not a block")]);
        }
        arms.push((p, arm));
    }
    Ok(arms)
}

/// A later kernel's `\old(e)` is `e` when that kernel starts; in the fused kernel it would be
/// `e` before the first one, a different value when an earlier kernel writes what `e` reads
/// (a postcondition `z[t] == \old(y[t]) * 2` after a kernel that increments `y[t]` would claim
/// the value before the increment). Refused then (A609); `\old` of what no earlier kernel
/// writes means the same in both places.
fn old_after_writes(arms: &[(&Par, &ParArm)], head: Span) -> Result<(), Vec<Diagnostic>> {
    let mut written: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (k, (p, arm)) in arms.iter().enumerate() {
        if k > 0 {
            let mut bad: Option<(Span, String)> = None;
            let mut look = |e: &Expr| {
                front::visit::walk_expr(e, &mut |x| {
                    if let ExprKind::Old(inner, _) = &x.kind {
                        if let Some(n) = written.iter().find(|n| front::exprtext::mentions(inner, n)) {
                            bad.get_or_insert((x.span, n.clone()));
                        }
                    }
                })
            };
            arm.contract.iter().filter_map(|c| c.expr()).for_each(&mut look);
            front::visit::all_exprs(&arm.body, &mut look);
            if let Some((at, name)) = bad {
                return Err(vec![refuse_kernel(
                    head,
                    &format!(
                        "kernel {} reads `{name}` under `\\old`, and an earlier kernel writes `{name}`",
                        k + 1
                    ),
                    (at, "fused, this `\\old` would be the value before the first kernel".into()),
                    "state this kernel's contract without `\\old` (in terms of what the earlier kernel ensures), or fuse only the earlier kernels",
                )
                .with_secondary(p.keyword, "this kernel")]);
            }
        }
        written.extend(analyze::scope::assigned_arrays(&arm.body));
        written.extend(analyze::scope::assigned_vars(&arm.body));
    }
    Ok(())
}

/// A kernel that breaks one of [`kernel_shapes`]' rules: the annotation at `head`, the part of
/// the kernel that breaks it (`at`), and the way out.
fn refuse_kernel(head: Span, msg: &str, at: (Span, String), help: &str) -> Diagnostic {
    Diagnostic::error("A609", msg)
        .with_primary(head, "fusion requested here")
        .with_secondary(at.0, at.1)
        .with_help(help)
}

pub(super) fn refuse_shape(span: Span, msg: &str) -> Diagnostic {
    Diagnostic::error("A609", format!("cannot fuse: {msg}"))
        .with_primary(span, "here")
        .with_help("fusion needs single-arm par blocks with thread iterators and block bodies")
}
