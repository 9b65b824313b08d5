//! Launch sizes in the kernel form (`lower.rs`): OpenCL's work-item functions in CUDA's
//! terms, dimensions the contract fixes to size 1 dropped, and sizes it fixes to numbers
//! replaced by them, for the verifier.

use super::lower::{bin, map_kernel, name, shared_name, size_of, walk_kernel, INDICES};
use crate::ast::*;
use crate::span::Span;

/// OpenCL's work-item function `name` of dimension `dim` (0, 1 or 2) in CUDA's terms:
/// `get_local_id(1)` is `threadIdx.y`, `get_global_id(0)` the global index along x.
pub(super) fn work_item(name: &str, dim: usize, span: Span) -> Option<Expr> {
    let axis = ["x", "y", "z"].get(dim)?;
    let at = |base: &str| self::name(&format!("{base}.{axis}"), span);
    Some(match name {
        "get_local_id" => at("threadIdx"),
        "get_group_id" => at("blockIdx"),
        "get_local_size" => at("blockDim"),
        "get_num_groups" => at("gridDim"),
        "get_global_id" => bin(
            BinOp::Add,
            bin(BinOp::Mul, at("blockIdx"), at("blockDim"), span),
            at("threadIdx"),
            span,
        ),
        "get_global_size" => bin(BinOp::Mul, at("blockDim"), at("gridDim"), span),
        _ => return None,
    })
}

/// A work-item call of a specification (`get_local_size(1)`) in CUDA's terms (the code's are
/// converted when read).
pub(super) fn work_item_call(e: &mut Expr) -> bool {
    let ExprKind::Call { recv: None, name: f, args, .. } = &e.kind else { return false };
    let [arg] = args.as_slice() else { return false };
    let Some(d) = arg.as_int().and_then(|d| usize::try_from(d.clone()).ok()) else {
        return false;
    };
    match work_item(&f.name, d, e.span) {
        Some(w) => {
            *e = w;
            true
        }
        None => false,
    }
}

/// Launch sizes (`blockDim.x`, …) that a `context_everywhere` conjunct `size == K` fixes to an
/// integer literal K.
fn fixed_sizes(clauses: &[Clause]) -> Vec<(&'static str, Expr)> {
    let mut out: Vec<(&'static str, Expr)> = Vec::new();
    for c in clauses.iter().filter(|c| c.kind == ClauseKind::ContextEverywhere) {
        let Some(e) = c.expr() else { continue };
        for x in e.conjuncts() {
            for n in INDICES.iter().map(|v| size_of(v)) {
                let value = super::size_fact(x, n).filter(|b| b.as_int().is_some());
                if let Some(b) = value.filter(|_| !out.iter().any(|(m, _)| *m == n)) {
                    out.push((n, Expr::new(b.kind.clone(), Span::DUMMY)));
                }
            }
        }
    }
    out
}

/// For the verifier: in a kernel whose blocks are independent (no barrier, no shared memory),
/// a dimension `d` (y or z) whose sizes the contract fixes to 1 (VerCors' kernels state
/// `get_local_size(1) == 1 && get_num_groups(1) == 1` for a one-dimensional launch) has only
/// index 0: its names become their values (`threadIdx.y` 0, `blockDim.y` 1, …), so that the
/// kernel is one-dimensional and gets the flat form. A size the contract leaves free counts
/// only if the kernel names neither it nor its index. A launch with another size in that
/// dimension stays refused (`launch_dimensions`: a dimension the kernel does not index must be
/// 1). Kernels with barriers keep their dimensions (the flat form is not theirs).
pub(super) fn unit_dimensions(m: &mut Method) {
    let MethodBody::Block(b) = &m.body else { return };
    let mut blocks_share = false;
    for st in &b.stmts {
        crate::visit::walk_stmts(st, &mut |s| {
            blocks_share |= matches!(s.kind, StmtKind::Barrier(_)) || shared_name(s).is_some();
        });
    }
    if blocks_share {
        return;
    }
    let mut fixed: Vec<&'static str> = Vec::new();
    for c in &m.prefix.clauses {
        if !matches!(
            c.kind,
            ClauseKind::Requires | ClauseKind::Context | ClauseKind::ContextEverywhere
        ) {
            continue;
        }
        let Some(e) = c.expr() else { continue };
        for x in e.conjuncts() {
            for size in ["blockDim.y", "blockDim.z", "gridDim.y", "gridDim.z"] {
                let one = super::size_fact(x, size).and_then(|v| v.as_int());
                if one.is_some_and(|v| *v == 1.into()) {
                    fixed.push(size);
                }
            }
        }
    }
    let mut named: Vec<String> = Vec::new();
    walk_kernel(m, &mut |e: &Expr| {
        if let ExprKind::Name(n) = &e.kind {
            if !named.contains(&n.name) {
                named.push(n.name.clone());
            }
        }
    });
    let mut values: Vec<(String, i64)> = Vec::new();
    // z first: y goes only if z went too (dimensions count up from x).
    for d in ["z", "y"] {
        let unit = |size: &str, index: &str| {
            fixed.contains(&size) || !named.iter().any(|n| n == size || n == index)
        };
        let bd = format!("blockDim.{d}");
        let gd = format!("gridDim.{d}");
        let t = format!("threadIdx.{d}");
        let bi = format!("blockIdx.{d}");
        if !unit(&bd, &t) || !unit(&gd, &bi) {
            break;
        }
        values.extend([(bd, 1), (gd, 1), (t, 0), (bi, 0)]);
    }
    if values.is_empty() {
        return;
    }
    map_kernel(m, &mut |e: &mut Expr| {
        if let ExprKind::Name(n) = &e.kind {
            if let Some((_, v)) = values.iter().find(|(k, _)| *k == n.name) {
                *e = Expr::new(ExprKind::Int((*v).into()), e.span);
                return true;
            }
        }
        false
    });
}

/// For the verifier: a launch size that the kernel's contract fixes to a number (`blockDim.x
/// == 64`) is that number everywhere but in the conjunct that fixes it (which each launch must
/// establish). Equivalent under the contract; the threads' ranges and indices become linear in
/// the other variables (`threadIdx.y * 8 + threadIdx.x`, a tiled cell `t + j * 32`), which the
/// verifier's rules for quantified permissions need to see the stride.
pub(super) fn fix_sizes(m: &mut Method) {
    let fixed = fixed_sizes(&m.prefix.clauses);
    if fixed.is_empty() {
        return;
    }
    let mut f = |e: &mut Expr| {
        if defining(e, &fixed) {
            return true;
        }
        if let ExprKind::Name(n) = &e.kind {
            if let Some((_, k)) = fixed.iter().find(|(s, _)| n.name == *s) {
                *e = Expr { span: e.span, ..k.clone() };
                return true;
            }
        }
        false
    };
    map_kernel(m, &mut f);
    if let MethodBody::Block(b) = &mut m.body {
        b.stmts.iter_mut().for_each(|s| fix_iters(s, &fixed));
    }
}

/// The par ranges below a fixed launch size (statements' iterators are not expressions
/// `map_stmt` visits).
fn fix_iters(s: &mut Stmt, fixed: &[(&'static str, Expr)]) {
    match &mut s.kind {
        StmtKind::Par(p) => {
            for a in &mut p.arms {
                for it in &mut a.iters {
                    if let Some((_, k)) = fixed.iter().find(|(n, _)| it.hi.as_name() == Some(n)) {
                        it.hi = Expr { span: it.hi.span, ..k.clone() };
                    }
                }
                fix_iters(&mut a.body, fixed);
            }
        }
        StmtKind::Block(b) => b.stmts.iter_mut().for_each(|s| fix_iters(s, fixed)),
        _ => {}
    }
}

/// `size == K` (either side) for a fixed size: the conjunct that fixes it.
fn defining(e: &Expr, fixed: &[(&'static str, Expr)]) -> bool {
    fixed.iter().any(|(n, _)| super::size_fact(e, n).is_some_and(|b| b.as_int().is_some()))
}
