//! Tiling: serialise a `par` block into tiles of N cells (optimizations.md §6; paper §5,
//! "tiling").
//!
//! A `par` block over `T` threads becomes a block over `N` threads (inter: each walks the chunks
//! at its own offset, cells `t, t+N, …`) or over `⌈T/N⌉` threads (intra: each walks the `N`
//! cells of its own chunk), with the per-thread contract quantified over the thread's cells and
//! a sequential loop carrying the invariants.
//!
//! Before:
//! ```pvl
//! class Clear {
//!   context_everywhere a != null && a.length == 64;
//!   context (\forall* int k; 0 <= k && k < 64; Perm(a[k], write));
//!   void clear(int[] a) {
//!     gpuopt tile intra 16;
//!     par lanes (int tid = 0 .. 64)
//!       context Perm(a[tid], write);
//!       ensures a[tid] == 0;
//!     {
//!       a[tid] = 0;
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Clear {
//!   requires d > 0;
//!   static pure int vct_tile_ceiling(int n, int d) = n / d + (n % d == 0 ? 0 : 1);
//!
//!   context_everywhere a != null && a.length == 64;
//!   context (\forall* int vct_t; 0 <= vct_t && vct_t < vct_tile_ceiling(64, 16); (\forall* int vct_i; vct_t * 16 <= vct_i && vct_i < (vct_t + 1) * 16 && vct_i < 64; Perm(a[vct_i], write)));
//!   void clear(int[] a) {
//!     par lanes (int tid = 0 .. vct_tile_ceiling(64, 16))
//!       context (\forall* int vct_i; tid * 16 <= vct_i && vct_i < (tid + 1) * 16 && vct_i < 64; Perm(a[vct_i], write));
//!       ensures (\forall int vct_i; tid * 16 <= vct_i && vct_i < (tid + 1) * 16 && vct_i < 64; a[vct_i] == 0);
//!     {
//!       loop_invariant tid * 16 <= vct_tile_counter && vct_tile_counter <= (tid + 1) * 16;
//!       loop_invariant (\forall* int vct_i; tid * 16 <= vct_i && vct_i < (tid + 1) * 16 && vct_i < 64; Perm(a[vct_i], write));
//!       loop_invariant (\forall int vct_i; tid * 16 <= vct_i && vct_i < vct_tile_counter && vct_i < 64; a[vct_i] == 0);
//!       for (int vct_tile_counter = tid * 16; vct_tile_counter < (tid + 1) * 16 && vct_tile_counter < 64; vct_tile_counter = vct_tile_counter + 1) {
//!         a[vct_tile_counter] = 0;
//!       }
//!     }
//!   }
//! }
//! ```

mod check;
mod cuda;
mod rewrite;
mod sweep;

use crate::params::{Choice, Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;

pub struct Tile;

#[rustfmt::skip]
static META: Meta = Meta {
    name: "tile", keyword: "tile", summary: "serialise a par block into tiles of N cells per thread",
    params: &[
        Param::operand("mode", "tile-mode",
            Kind::Choice(&[Choice::plain(check::INTER), Choice::plain("intra")]),
            "the tiling mode", "inter|intra",
            "inter (each thread walks the tiles at its offset) or intra (each thread walks its \
             own tile)")
        .aliases(&["tile_mode"]),
        Param::operand("tile_size", "tile-size", Kind::Size, "the tile size", "<N>",
            "the tile size N (a literal or an expression)"),
        Param::option("keep_method_contract", "keep-method-contract", Kind::Switch,
            "whether to keep the method contract",
            "do not rewrite the method contract's quantifiers over the threads"),
    ],
    // On a method, the annotation (and `--at`) means the method's only `par` block.
    sites: &[SiteKind::Par, SiteKind::Method], method_par: MethodPar::Only, exclusive: false, allocates_names: true, explicit_loops: false, adapter: None,
    candidates: Some(sweep::candidates), cuda_par: None, codes: 500, rewrites_contract: true,
    placement: "before the method contract or right before a par block",
    dangling_help: "place it directly before a `par` block",
};

optimization!(Tile, check::Plan<'a>);
