//! The constructs of the front-types work, verified with Silicon: each has a program that
//! verifies and programs that break it and must fail (never verify). The programs are in
//! `fixtures/verify_front_types/`; the file name gives the verdict (`*_bad_*` and `*_bad` fail,
//! `unsupported_*` are refused with V-UNSUPPORTED, `rejected_*` with V-BAD-INPUT, the others
//! verify). Runs Silicon (the
//! backend `.ci/run` installs).
//!
//! * arrays a method makes and hands to a par block's threads: not null and as long as their
//!   sized type says, asserted where the block starts (`par_local_array_*`);
//! * facts of two par blocks over the even and the odd cells, found from either array they
//!   relate (`even_odd_*`, issue 54's regression);
//! * `Perm(a[*], p)`: every element of `a`, also with `read` in a loop invariant and in a
//!   called method's contract (`star_*`);
//! * `vec (int j = lo .. hi) { … }`: lock-step lanes, reads before writes (`vec_*`);
//! * scaled predicates `[π]p()`, nested and in fold/unfold, inline or not (`scale_*`);
//! * set and bag inclusion, `\memberof` and `x in {lo .. hi}` (`sets_*`, `range_*`);
//! * `\old` in a precondition is the pre-state itself (`old_pre`);
//! * `isEmpty`/`removeAt` (`seqlib_*`), `option<T>` (`option_*`), `\typeof(this) == C`
//!   (`typeof_*`), quantifiers over other types than `int` (`quant_types_*`);
//! * set comprehensions over a finite domain (`set_comprehension_*`);
//! * a constructor's `given` parameters from `new C(…) with { g = e; }` and calls on a
//!   possibly-null receiver `c->p(…)` (`new_with_*`, `null_safe_call_bad`);
//! * `read` in a loop invariant is an amount fixed at the loop's entry, given back exactly after
//!   the loop, and never write permission (`loop_read_*`);
//! * `\sum` over literal and symbolic ranges, a loop accumulating one, and sums whose terms
//!   are not defined (out of bounds, no permission) failing at the sum (`sum_*`); refused: a
//!   symbolic sum whose terms call a function (`unsupported_sum_call`);
//! * blocks `a[r * N + c]` of an `M * N` array in nested `par` blocks with a barrier, in bounds
//!   only by nonlinear arithmetic; a block one cell too wide, and a wrong value at the
//!   barrier, fail (`blocks_*`);
//! * a block-stride walk `a[b * 64 + (t + i * 16)]` over blocks, threads and steps, whose cells
//!   are distinct only once the block is solved from the cell; overlapping blocks fail
//!   (`strided_*`);
//! * cells in bounds only by a bound quantified over blocks and cells, whose largest instance
//!   the encoder adds (`quant/extreme.rs`); a bound one cell short fails (`bound_instance_*`);
//! * a column-major matrix filled row by row, whose invariant ranges rows up to the loop
//!   counter (`r < i`): re-indexed to cells where the range is at most a column wide; a wrong
//!   last cell fails (`grid_window_*`);
//! * a barrier with a body, which runs once for all threads with the resources of the
//!   invariants it names; a body that keeps what it should hand out, or writes without naming
//!   the invariant, fails (`barrier_body_*`); refused: a body that reads a thread variable
//!   (`unsupported_barrier_body_thread`) or assigns a thread's local
//!   (`rejected_barrier_body_local`);
//! * magic wands: `create { use …; qed A -* B; }`, a wand in a loop invariant, `apply`; applying
//!   without the left side, packaging what does not follow, and writing what the wand holds fail
//!   (`wand_*`);
//! * VerCors 1 parallel regions: a contract before `par` split by iteration, and arms that
//!   wait for each other (`region_wait_*`); without the wait, or with a region postcondition
//!   the arms do not give, they fail; refused: a wait for another iteration, a region resource
//!   not split over the iterations (`unsupported_region_*`), a wait list without a region
//!   contract (`unsupported_par_wait`), a comprehension over an
//!   infinite domain (`unsupported_set_comprehension`);
//! * VerCors 1's `send φ to L, d;` / `recv ψ from L, d;` between iterations of a par block:
//!   iteration i's half of `a[i]` with its value handed to iteration i + 1 (`sendrecv_ok`);
//!   receiving more than was sent, a value that was not sent, or from an iteration that sends
//!   nothing fails (`sendrecv_bad_*`); an assertion naming an iteration's local, and a `recv`
//!   without a `send`, are refused;
//! * `exhale` of a permission with the value it frames is one exhale (`exhale_framed_*`).

mod common;

#[test]
fn front_type_constructs_verify_and_their_violations_fail() {
    common::assert_named_verdicts(
        "fixtures/verify_front_types",
        "pvl",
        "V-UNSUPPORTED",
        "V-BAD-INPUT",
    );
}
