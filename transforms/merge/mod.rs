//! Iteration merging: run M iterations per pass of a loop (optimizations.md §3, paper §5.2).
//!
//! Exact mode (the trip count `I` is a proven constant): peel `I mod M` iterations, then a loop
//! whose body holds M copies, with a ghost counter relating the iteration variable to the number
//! of completed iterations. Remainder mode (symbolic trip count): a merged loop whose guard checks
//! that M more iterations are due, followed by the original loop for the last iterations.
//!
//! Before:
//! ```pvl
//! class Fill {
//!   context_everywhere a != null && a.length == 6;
//!   context (\forall* int k; 0 <= k && k < 6; Perm(a[k], write));
//!   void fill(int[] a) {
//!     gpuopt iter_merge i 2;
//!     loop_invariant 0 <= i && i <= 6;
//!     loop_invariant (\forall* int k; 0 <= k && k < 6; Perm(a[k], write));
//!     for (int i = 0; i < 6; i = i + 1) {
//!       a[i] = 0;
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Fill {
//!   context_everywhere a != null && a.length == 6;
//!   context (\forall* int k; 0 <= k && k < 6; Perm(a[k], write));
//!   void fill(int[] a) {
//!     {
//!       int i = 0;
//!       int vct_mi_l = 0;
//!       loop_invariant 0 <= vct_mi_l && vct_mi_l <= 6;
//!       loop_invariant vct_mi_l % 2 == 0;
//!       loop_invariant i == vct_mi_l;
//!       loop_invariant 0 <= i && i <= 6;
//!       loop_invariant (\forall* int k; 0 <= k && k < 6; Perm(a[k], write));
//!       for (; i < 6; i = i + 1) {
//!         a[i] = 0;
//!         i = i + 1;
//!         vct_mi_l = vct_mi_l + 1;
//!         a[i] = 0;
//!         vct_mi_l = vct_mi_l + 1;
//!       }
//!     }
//!   }
//! }
//! ```

mod check;
mod rewrite;
mod sweep;

use crate::params::{Choice, Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;

pub struct Merge;

#[rustfmt::skip]
static META: Meta = Meta {
    name: "merge", keyword: "iter_merge", summary: "run M iterations of a loop per pass",
    params: &[
        crate::unroll::VAR,
        Param::operand("factor", "factor", Kind::Count, "the number of iterations per pass", "<M>",
            "iterations per pass of the merged body (M >= 2)"),
        Param::option("mode", "mode", Kind::Choice(&[
                Choice::plain("auto"), Choice::plain(check::EXACT), Choice::plain(check::REMAINDER),
            ]), "the code shape",
            "code shape: exact needs a constant trip count, remainder keeps a loop for the last \
             iterations, auto picks exact when it can")
        .or("auto"),
    ],
    sites: &[SiteKind::Loop], method_par: MethodPar::None, exclusive: true, allocates_names: true, explicit_loops: true, adapter: None,
    candidates: Some(sweep::candidates), cuda_par: None, codes: 200, rewrites_contract: false,
    placement: "right before the loop's `loop_invariant` clauses",
    dangling_help: "place it directly before a `while` or `for` loop (before its loop invariants)",
};

optimization!(Merge, check::Plan<'a>);
