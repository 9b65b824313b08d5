//! Loop unrolling: peel the first K iterations off a loop (optimizations.md §2, paper §5.1).
//!
//! The loop variable's initialisation is hoisted, then K copies of the body, each preceded by
//! `assert`s of the loop invariants (as in the paper's template; the first is the original's
//! entry check), then the residual loop with its bound invariants tightened by the K updates.
//! Only invariants the prover cannot rebuild between copies are asserted: those with a
//! quantifier or a call, unless they state permissions only. Applicability: Z3 proves from the
//! facts at loop entry that the guard holds for the first K values of the iteration variable,
//! and that the step makes progress.
//!
//! Before:
//! ```pvl
//! class Fill {
//!   context_everywhere a != null && a.length == 8;
//!   context (\forall* int k; 0 <= k && k < 8; Perm(a[k], write));
//!   ensures (\forall int k; 0 <= k && k < 8; a[k] == 0);
//!   void fill(int[] a) {
//!     int i = 0;
//!     gpuopt loop_unroll i 2;
//!     loop_invariant 0 <= i && i <= 8;
//!     loop_invariant (\forall* int k; 0 <= k && k < 8; Perm(a[k], write));
//!     loop_invariant (\forall int k; 0 <= k && k < i; a[k] == 0);
//!     while (i < 8) {
//!       a[i] = 0;
//!       i = i + 1;
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Fill {
//!   context_everywhere a != null && a.length == 8;
//!   context (\forall* int k; 0 <= k && k < 8; Perm(a[k], write));
//!   ensures (\forall int k; 0 <= k && k < 8; a[k] == 0);
//!   void fill(int[] a) {
//!     int i = 0;
//!     assert (\forall int k; 0 <= k && k < i; a[k] == 0);
//!     a[i] = 0;
//!     i = i + 1;
//!     assert (\forall int k; 0 <= k && k < i; a[k] == 0);
//!     a[i] = 0;
//!     i = i + 1;
//!     loop_invariant 2 <= i && i <= 8;
//!     loop_invariant (\forall* int k; 0 <= k && k < 8; Perm(a[k], write));
//!     loop_invariant (\forall int k; 0 <= k && k < i; a[k] == 0);
//!     while (i < 8) {
//!       a[i] = 0;
//!       i = i + 1;
//!     }
//!   }
//! }
//! ```

mod check;
mod rewrite;
mod sweep;

pub use check::{check_steps, clean_cx, loop_site, unchanged, unsupported, LoopSite};
pub use rewrite::{guard_text_with, tighten_edits, Gen};

use crate::params::{Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;

pub struct Unroll;

/// The iteration variable, shared with iteration merging.
pub const VAR: Param = Param::operand(
    "var",
    "var",
    Kind::Name,
    "the loop variable",
    "<var>",
    "the iteration variable (inferred when omitted)",
)
.optional();

#[rustfmt::skip]
static META: Meta = Meta {
    name: "unroll", keyword: "loop_unroll", summary: "peel the first K iterations off a loop",
    params: &[
        VAR,
        Param::operand("factor", "factor", Kind::Count, "the number of iterations to peel", "<K>",
            "iterations peeled off the front (K >= 1)"),
    ],
    sites: &[SiteKind::Loop], method_par: MethodPar::None, exclusive: true, allocates_names: false, explicit_loops: true, adapter: None,
    candidates: Some(sweep::candidates), cuda_par: None, codes: 100, rewrites_contract: false,
    placement: "right before the loop's `loop_invariant` clauses",
    dangling_help: "place it directly before a `while` or `for` loop (before its loop invariants)",
};

optimization!(Unroll, check::Plan<'a>);
