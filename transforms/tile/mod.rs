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
mod rewrite;

use super::params::{Choice, Kind, Param};
use super::{Ctx, Meta, MethodPar, Optimization, Outcome, Params};
use crate::analyze::sites::{Site, SiteKind};
use crate::diag::Diagnostic;

pub struct Tile;

static META: Meta = Meta {
    name: "tile",
    keyword: "tile",
    summary: "serialise a par block into tiles of N cells per thread",
    // On a method, the annotation (and `--at`) means the method's only `par` block.
    sites: &[SiteKind::Par, SiteKind::Method],
    method_par: MethodPar::Only,
    exclusive: false,
    allocates_names: true,
    placement: "before the method contract or right before a par block",
    dangling_help: "place it directly before a `par` block",
    params: &[
        Param {
            key: "mode",
            plan_aliases: &["tile_mode"],
            flag: "tile-mode",
            kind: Kind::Choice(&[
                Choice {
                    value: check::INTER,
                    word: check::INTER,
                    meaning: "",
                },
                Choice {
                    value: "intra",
                    word: "intra",
                    meaning: "",
                },
            ]),
            in_annotation: true,
            required: true,
            default: None,
            what: "the tiling mode",
            syntax: "inter|intra",
            doc: "inter (each thread walks the tiles at its offset) or intra (each thread \
                  walks its own tile)",
        },
        Param {
            key: "tile_size",
            plan_aliases: &[],
            flag: "tile-size",
            kind: Kind::Size,
            in_annotation: true,
            required: true,
            default: None,
            what: "the tile size",
            syntax: "<N>",
            doc: "the tile size N (a literal or an expression)",
        },
        Param {
            key: "keep_method_contract",
            plan_aliases: &[],
            flag: "keep-method-contract",
            kind: Kind::Switch,
            in_annotation: false,
            required: false,
            default: None,
            what: "whether to keep the method contract",
            syntax: "",
            doc: "do not rewrite the method contract's quantifiers over the threads",
        },
    ],
};

impl Optimization for Tile {
    type Plan<'a> = check::Plan<'a>;

    fn meta(&self) -> &'static Meta {
        &META
    }

    fn check<'a>(
        &self,
        ctx: &mut Ctx<'a>,
        site: &Site,
        params: &Params,
    ) -> Result<check::Plan<'a>, Vec<Diagnostic>> {
        check::check(ctx, site, params)
    }

    fn rewrite<'a>(&self, ctx: &mut Ctx<'a>, plan: check::Plan<'a>) -> Outcome {
        rewrite::rewrite(ctx, plan)
    }
}
