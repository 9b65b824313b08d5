//! Kernel fusion (optimizations.md §7; paper §5.7–5.9, Algorithms 1–4).
//!
//! `F` consecutive top-level `par` blocks are fused pairwise, left to right. Each kernel's
//! contract is split into permission atoms and functional conjuncts ([`model`]); the permission
//! questions of the paper (same pattern? fits the budget? writes? claims nothing it did not take?) are answered
//! symbolically with Z3 over the thread range ([`solver`]), so no concrete array length or thread
//! count is needed. Each junction ([`junction`]) hands permissions over per cell and is
//! self-checked before anything is emitted.
//!
//! Everything is worked on as text: conjuncts are copied from the source (with the thread
//! variables renamed token by token) and re-parsed standalone for the solver, so untouched
//! conjuncts keep their exact spelling.
//!
//! Before:
//! ```pvl
//! class Stages {
//!   context_everywhere x != null && y != null && x.length == 32 && y.length == 32;
//!   context (\forall* int k; 0 <= k && k < 32; Perm(x[k], write));
//!   context (\forall* int k; 0 <= k && k < 32; Perm(y[k], write));
//!   void stages(int[] x, int[] y) {
//!     gpuopt fuse 2 1;
//!     par first (int tid = 0 .. 32)
//!       context Perm(x[tid], write);
//!       ensures x[tid] == tid;
//!     {
//!       x[tid] = tid;
//!     }
//!     par second (int tid = 0 .. 32)
//!       context Perm(x[tid], 1\2) ** Perm(y[tid], write);
//!       requires x[tid] == tid;
//!       ensures y[tid] == tid + 1;
//!     {
//!       y[tid] = x[tid] + 1;
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Stages {
//!   context_everywhere x != null && y != null && x.length == 32 && y.length == 32;
//!   context (\forall* int k; 0 <= k && k < 32; Perm(x[k], write));
//!   context (\forall* int k; 0 <= k && k < 32; Perm(y[k], write));
//!   void stages(int[] x, int[] y) {
//!     par first (int tid = 0 .. 32)
//!       context Perm(x[tid], write);
//!       context Perm(y[tid], write);
//!       ensures x[tid] == tid;
//!       ensures y[tid] == tid + 1;
//!     {
//!       x[tid] = tid;
//!       assert Perm(x[tid], write);
//!       assert x[tid] == tid;
//!       y[tid] = x[tid] + 1;
//!     }
//!   }
//! }
//! ```

// Refusals are the cold path and carry one diagnostic; boxing them buys nothing here.
#![allow(clippy::result_large_err)]

mod affine;
mod check;
mod complement;
mod cuda;
mod junction;
mod lin;
mod model;
mod rewrite;
mod solver;
mod sweep;

use crate::params::{Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;

pub struct Fuse;

#[rustfmt::skip]
static META: Meta = Meta {
    name: "fuse", keyword: "fuse", summary: "fuse consecutive par blocks into one kernel",
    params: &[
        Param::operand("kernels", "kernels", Kind::Count, "the number of kernels", "<F>",
            "the number of consecutive par blocks to fuse, the selected one first (F >= 2)")
        .or("2"),
        Param::operand("blocks", "blocks", Kind::Count, "the number of thread blocks", "<N>",
            "the number of thread blocks, for the cross-block dependency check (default: one)")
        .optional(),
        Param::option("block_size", "block-size", Kind::Expr, "the block size",
            "threads per block, for the cross-block dependency check"),
    ],
    sites: &[SiteKind::Par], method_par: MethodPar::First, exclusive: false, allocates_names: true, explicit_loops: false, adapter: None,
    candidates: Some(sweep::candidates), cuda_par: Some(fuse_cuda_launches), codes: 600, rewrites_contract: false,
    placement: "right before the first `par` block of the kernels to fuse",
    dangling_help: "place it directly before a `par` block",
};

optimization!(Fuse, check::Plan<'a>);

/// Fusion of two CUDA kernels launched one after the other ([`cuda`]).
pub fn fuse_cuda_launches(
    ctx: &mut crate::Ctx,
    site: &analyze::sites::Site,
    params: &crate::Params,
) -> crate::Outcome {
    cuda::fuse_launches(ctx, site, params)
}
