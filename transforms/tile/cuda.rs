//! Tiling a CUDA kernel's thread block. A kernel has no `par` header to rewrite: its thread
//! count is the launch's block size, `blockDim.x`. Inter-tiling by N gives each block N threads,
//! each walking the cells `threadIdx.x + j * N` below the old count T; so T must be a value the
//! kernel can name without `blockDim.x`, which the kernel's contract states as
//! `blockDim.x == T`. The rewrite turns that conjunct into `blockDim.x == N`, every other
//! `blockDim.x` of the kernel into T, and the block size of every launch of the kernel in the
//! file into N.

use diag::Diagnostic;
use front::ast::*;
use front::exprtext::mentions;
use front::span::Span;

/// The name the CUDA front end gives a kernel's block size.
pub(super) const BLOCK_SIZE: &str = "blockDim.x";
/// The name of a kernel's thread index.
const THREAD: &str = "threadIdx.x";

/// What tiling changes in a CUDA kernel besides its contract and body.
pub(super) struct Kernel {
    /// The conjunct `blockDim.x == T` (either side), rewritten to `blockDim.x == N`.
    pub fact: Span,
    /// T, the thread count before tiling.
    pub count: Expr,
    /// Conjuncts of the kernel's other clauses (not per-thread ones) that mention `blockDim.x`.
    pub others: Vec<Expr>,
    /// The block-size argument of every launch of the kernel in the file.
    pub launches: Vec<Span>,
}

/// `Some` when `arm` is a CUDA kernel's thread block; a refusal when it cannot be tiled.
pub(super) fn kernel(
    src: &str,
    program: &Program,
    method: &Method,
    arm: &ParArm,
    inter: bool,
    size: &Expr,
    header: Span,
) -> Result<Option<Kernel>, Vec<Diagnostic>> {
    if !front::looks_like_cuda(src)
        || arm.iters.first().map(|i| i.name.name.as_str()) != Some(THREAD)
    {
        return Ok(None);
    }
    let refuse = |msg: &str, help: &str| {
        Err(vec![Diagnostic::error("A507", format!("cannot tile this CUDA kernel: {msg}"))
            .with_primary(header, "this kernel's threads")
            .with_help(help.to_string())])
    };
    if !inter {
        return refuse(
            "intra-tiling would launch ⌈T/N⌉ threads per block, a count the kernel cannot state linearly",
            "use `--tile-mode inter`: each of N threads walks the cells at its offset (a block-stride loop)",
        );
    }
    if size.as_int().is_none() {
        return refuse(
            "the tile size becomes the launch's block size, so it must be a number",
            "give an integer tile size, e.g. `--tile-size 32`",
        );
    }
    if src[arm.body.span.range()].contains("__shared__") {
        return refuse(
            "the kernel declares `__shared__` memory, which belongs to the block, not to a tile",
            "tile a kernel without shared memory",
        );
    }
    let kernel_wide = front::cuda::written_kernel_clauses(src, method, arm);
    let mut fact = None;
    for c in kernel_wide.iter().copied().chain(arm.contract.iter()) {
        let Some(e) = c.expr() else { continue };
        for x in e.conjuncts() {
            if let Some(count) = front::cuda::size_fact(x, BLOCK_SIZE) {
                let sizes = ["threadIdx.x", "blockIdx.x", BLOCK_SIZE, "gridDim.x"];
                if fact.is_none() && !sizes.iter().any(|v| mentions(count, v)) {
                    fact = Some((x.span, count.clone()));
                }
            }
        }
    }
    let Some((fact, count)) = fact else {
        return refuse(
            "its contract does not name the thread count (`blockDim.x == T`)",
            "state the count the threads cover, e.g. `context_everywhere blockDim.x == n;`: the tiled threads walk the cells below it",
        );
    };
    let mut others = Vec::new();
    for c in &kernel_wide {
        let Some(e) = c.expr() else { continue };
        for x in e.conjuncts() {
            if !x.span.same_place(fact)
                && mentions(x, BLOCK_SIZE)
                && !others.iter().any(|o: &Expr| o.span.same_place(x.span))
            {
                others.push(x.clone());
            }
        }
    }
    let mut launches = Vec::new();
    for (_, m) in program.methods() {
        let MethodBody::Block(b) = &m.body else { continue };
        for s in &b.stmts {
            front::visit::all_exprs(s, &mut |e| {
                if let ExprKind::Call { name, args, recv: None, .. } = &e.kind {
                    if name.name == method.name.name {
                        if let Some(block) = args.last() {
                            launches.push(block.clone());
                        }
                    }
                }
            });
        }
    }
    let mut spans = Vec::new();
    for b in launches {
        if matches!(&b.kind, ExprKind::Call { name, .. } if name.name == "dim3") {
            return Err(vec![Diagnostic::error(
                "A507",
                "cannot tile this CUDA kernel: a launch takes its block size from a `dim3` variable",
            )
            .with_primary(header, "this kernel's threads")
            .with_secondary(b.span, "the block size of this launch")
            .with_help("write the block size in the launch itself (`k<<<g, n>>>(…)`), so that it can become the tile size")]);
        }
        spans.push(b.span);
    }
    Ok(Some(Kernel { fact, count, others, launches: spans }))
}
