//! Applicability of tiling: a `par` block with one iterator from 0, no barrier or `return` in
//! its body, and a tile size N with 2 <= N < T proved from the facts at the block.

use crate::{Ctx, Params};
use analyze::facts::{facts_at, Facts, Point};
use analyze::sites::{stmt_at, Site, SiteKind};
use check::{prove, Answer};
use diag::Diagnostic;
use front::ast::*;
use front::exprtext::{mentions, paren};
use front::span::Span;
use front::visit::walk_stmts;

/// The `mode` value of inter-tiling.
pub(super) const INTER: &str = "inter";

/// A checked tiling.
pub struct Plan<'a> {
    pub(super) class: Option<&'a Class>,
    pub(super) method: &'a Method,
    pub(super) arm: &'a ParArm,
    pub(super) size: Expr,
    pub(super) size_text: String,
    pub(super) t_text: String,
    /// The facts before the `par` block.
    pub(super) fx: Facts,
    pub(super) inter: bool,
    pub(super) keep_method_contract: bool,
    /// What tiling a CUDA kernel changes besides its contract and body.
    pub(super) cuda: Option<super::cuda::Kernel>,
}

pub(super) fn check<'a>(
    ctx: &mut Ctx<'a>,
    site: &Site,
    params: &Params,
) -> Result<Plan<'a>, Vec<Diagnostic>> {
    let inter = params.word("mode") == INTER;
    let keep_method_contract = params.switch("keep_method_contract");
    let Some(size) = params.expr("tile_size").cloned() else {
        return Err(vec![Diagnostic::internal("no tile size")]);
    };
    let size = &size;
    let parsed: &'a front::Parsed = ctx.parsed;
    let Some((class, method)) =
        analyze::sites::find_method(&parsed.program, site.class.as_deref(), &site.method)
    else {
        return Err(vec![Diagnostic::error("A501", "cannot find the method of this site")
            .with_primary(site.keyword, "here")]);
    };
    // The par statement: the site itself, or the only par of the method.
    let par_stmt = match site.kind {
        SiteKind::Par => stmt_at(method, site.span.start()),
        SiteKind::Method => {
            let pars = method_pars(method);
            if pars.len() != 1 {
                let mut d = Diagnostic::error(
                    "A501",
                    format!(
                        "tiling before a method contract needs exactly one `par` block in the method; `{}` has {}",
                        method.name.name,
                        pars.len()
                    ),
                )
                .with_primary(method.name.span, "this method")
                .with_help("place `gpuopt tile …;` right before the intended `par` block");
                for p in pars {
                    d = d.with_secondary(par_keyword(p), "a `par` block");
                }
                return Err(vec![d]);
            }
            Some(pars[0])
        }
        SiteKind::Loop => None,
    };
    let Some(stmt) = par_stmt else {
        return Err(vec![Diagnostic::error("A0004", "tiling applies to a `par` block")
            .with_primary(site.keyword, "not a `par` block")
            .with_help("place `gpuopt tile …;` right before a `par` block")]);
    };
    let StmtKind::Par(par) = &stmt.kind else {
        return Err(vec![Diagnostic::error("A0004", "tiling applies to a `par` block")
            .with_primary(site.keyword, "not a `par` block")
            .with_help("place `gpuopt tile …;` right before a `par` block")]);
    };
    let src = ctx.src;
    let header = par.keyword;

    // ---- shape (A501, A504) ----
    if par.arms.len() != 1 || par.arms[0].iters.len() != 1 || par.arms[0].wait.is_some() {
        return Err(vec![Diagnostic::error(
            "A501",
            "tiling needs a `par` block with exactly one iterator, no `and` arms and no wait list",
        )
        .with_primary(header, "this `par` block")
        .with_help("tile a `par` block of the form `par L (int t = 0 .. T)`")]);
    }
    let arm = &par.arms[0];
    let it = &arm.iters[0];
    let t = it.name.name.as_str();
    let mut blockers = Vec::new();
    walk_stmts(&arm.body, &mut |s| match &s.kind {
        StmtKind::Barrier(b) => blockers.push((b.keyword, "a barrier")),
        StmtKind::Return(_) => blockers.push((s.span, "a `return`")),
        _ => {}
    });
    // A CUDA kernel's early exit (`if (i >= n) return;`) is lowered to a guard with no text of
    // its own, `if (!(i >= n)) { rest }`, which the walk above does not take for a `return`; in
    // a tile loop it would skip the thread's later cells.
    walk_stmts(&arm.body, &mut |s| {
        if let StmtKind::If { cond, .. } = &s.kind {
            if s.span.is_dummy() {
                if let ExprKind::Unary(UnOp::Not, c) = &cond.kind {
                    blockers.push((c.span, "a `return`"));
                }
            }
        }
    });
    if let Some((sp, what)) = blockers.first() {
        return Err(vec![Diagnostic::error(
            "A504",
            format!("cannot tile a `par` block whose body contains {what}"),
        )
        .with_primary(header, "this `par` block")
        .with_secondary(*sp, "serialising threads would break this")
        .with_help(if *what == "a `return`" {
            "write the exit as a guard around the rest of the body (`if (i < n) { … }`): a tile loop must go on to the thread's next cell"
        } else {
            "tiling applies to barrier-free kernels; split the kernel at the barrier first"
        })]);
    }
    if mentions(size, t) {
        return Err(vec![Diagnostic::error(
            "A505",
            "the tile size depends on the thread variable",
        )
        .with_primary(header, "this `par` block")
        .with_help(format!("use a tile size that does not mention `{t}`"))]);
    }

    // A CUDA kernel's thread count is the count its contract gives `blockDim.x` (A507).
    let cuda = super::cuda::kernel(src, &parsed.program, method, arm, inter, size, header)?;
    let hi = cuda.as_ref().map_or(&it.hi, |k| &k.count);

    // ---- applicability: lo == 0 and 2 <= N < T under Γ at the par (A502, A503) ----
    let size_text = size_text(size);
    let t_text = hi.span.text(src).to_string();
    let mut fx = facts_at(&parsed.program, class, method, Point::Before(stmt.span.start()));
    let zero = Expr::int(0);
    let goals = [
        (
            Expr::bin(BinOp::Eq, it.lo.clone(), zero.clone()),
            "A502",
            format!("the thread range of `{t}` does not provably start at 0"),
        ),
        (
            Expr::bin(BinOp::Le, Expr::int(2), size.clone()),
            "A503",
            if size.as_int().is_some() {
                format!("the tile size {size_text} is below 2; a tile size below 2 gives no tiling")
            } else {
                format!("the tile size {size_text} is not provably at least 2; a tile size below 2 gives no tiling")
            },
        ),
        (
            Expr::bin(BinOp::Lt, size.clone(), hi.clone()),
            "A503",
            format!(
                "the tile size {size_text} is not provably smaller than the thread count {t_text}"
            ),
        ),
    ];
    for (goal, code, msg) in goals {
        let answer = match fx.tr.bool(&goal) {
            Ok(g) => prove(&fx.tr, &fx.facts, &g, ctx.timeout_ms),
            Err(u) => Answer::Unknown(format!("cannot encode: {}", u.0)),
        };
        if answer.is_proved() {
            continue;
        }
        let mut d = Diagnostic::error(code, msg).with_primary(header, "this `par` block");
        d = if code == "A502" {
            d.with_secondary(it.lo.span, "lower bound")
        } else {
            d.with_secondary(hi.span, "thread count")
        };
        let literal_low = goal_is_lower(&goal) && size.as_int().is_some();
        match &answer {
            // A literal size below 2 is wrong in every state: a counterexample says nothing.
            Answer::Refuted(cx) if !cx.values.is_empty() && !literal_low => {
                d = d.with_note(format!("counterexample: {cx}"))
            }
            Answer::Unknown(why) => d = d.with_note(format!("not proven: {why}")),
            _ => {}
        }
        d = match code {
            "A502" => d.with_help(format!("rewrite the block as `par (int {t} = 0 .. …)`")),
            _ if goal_is_lower(&goal) => d.with_help("use a tile size of at least 2"),
            _ => d.with_help(format!(
                "add a fact bounding the thread count, e.g. `context_everywhere {} > {};`, or use a smaller tile size",
                paren(&t_text),
                size_text
            )),
        };
        return Err(vec![d]);
    }

    Ok(Plan {
        class,
        method,
        arm,
        size: size.clone(),
        size_text,
        t_text,
        fx,
        inter,
        // A kernel's method contract is derived from its per-thread one: nothing to nest.
        keep_method_contract: keep_method_contract || cuda.is_some(),
        cuda,
    })
}

fn goal_is_lower(g: &Expr) -> bool {
    matches!(&g.kind, ExprKind::Binary(BinOp::Le, l, _) if l.as_int().is_some())
}

/// The tile size as it appears in messages and generated code.
fn size_text(e: &Expr) -> String {
    front::exprtext::print_simple(e)
}

fn method_pars(m: &Method) -> Vec<&Stmt> {
    let mut out = Vec::new();
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if matches!(st.kind, StmtKind::Par(_)) {
                    out.push(st);
                }
            });
        }
    }
    out
}

fn par_keyword(s: &Stmt) -> Span {
    match &s.kind {
        StmtKind::Par(p) => p.keyword,
        _ => s.span,
    }
}
