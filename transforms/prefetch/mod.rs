//! Data prefetching (`glob_to_reg` / `prefetch`): keep array cells in thread-local registers
//! (optimizations.md §4, paper §5.4).
//!
//! Per barrier-separated segment of a `par` body, every access to a requested location `a[p]`
//! is served from a thread-local register: loaded at the start of the segment (guarded by the
//! condition under which the thread holds a permission for the cell), used in code and in
//! annotations, and written back at the end of the segment when the segment writes it. Matching
//! is semantic (Z3 proves `e == p` under the facts of the segment start), so `tid + 1` matches
//! `1 + tid`.
//!
//! Before:
//! ```pvl
//! class Twice {
//!   context_everywhere a != null && a.length == n;
//!   context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
//!   void twice(int n, int[] a) {
//!     gpuopt glob_to_reg a tid;
//!     par lanes (int tid = 0 .. n)
//!       context Perm(a[tid], write);
//!     {
//!       a[tid] = a[tid] + a[tid];
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Twice {
//!   context_everywhere a != null && a.length == n;
//!   context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
//!   void twice(int n, int[] a) {
//!     par lanes (int tid = 0 .. n)
//!       context Perm(a[tid], write);
//!     {
//!       int a_reg_0 = a[tid];
//!       a_reg_0 = a_reg_0 + a_reg_0;
//!       a[tid] = a_reg_0;
//!     }
//!   }
//! }
//! ```

mod analyse;
mod check;
mod perms;
mod rewrite;
mod segments;
mod sweep;

use crate::params::{Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;

pub struct Prefetch;

#[rustfmt::skip]
static META: Meta = Meta {
    name: "prefetch", keyword: "glob_to_reg", summary: "keep array cells a kernel reads repeatedly in registers",
    params: &[
        Param::operand("array", "array", Kind::Path, "an array name", "<array>",
            "the array (a name, field or index path)"),
        Param::operand("locations", "locations",
            Kind::List { sep: ';', item: "location", after: "the array",
                label: "a location (an index expression)", example: "a tid" },
            "the locations", "<loc> <loc>…",
            "index expressions to keep in registers, separated by `;` (\"tid; tid+1\")"),
    ],
    sites: &[SiteKind::Par, SiteKind::Method], method_par: MethodPar::None, exclusive: false, allocates_names: true, explicit_loops: false, adapter: None,
    candidates: Some(sweep::candidates), cuda_par: None, codes: 300, rewrites_contract: false,
    placement: "before the method contract or right before a par block",
    dangling_help: "place it directly before a `par` block",
};

optimization!(Prefetch, check::Plan);
