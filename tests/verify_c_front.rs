//! C input the verifier reads as VerCors does, verified with Silicon. The programs are in
//! `fixtures/verify_c/`; the file name gives the verdict: `*_ok` verifies, `*_bad_*` fails,
//! `unsupported_*` is refused with A0014 and `rejected_*` with A0001.
//!
//! * `#pragma omp parallel for` before a loop with an iteration contract is that loop's
//!   parallel block, also over a variable declared before the loop, which ends at the end of
//!   the range; other OpenMP directives, a parallel loop without an iteration contract and a
//!   reduction are refused, never verified as sequential code (`omp_*`, `unsupported_omp_*`);
//! * the iterations know the function's precondition facts on parameters it never assigns
//!   (`\pointer(a, len, p)` bounds `a[i]`); an assigned parameter's are not carried
//!   (`omp_bad_assigned_bound`), and an index past them fails (`omp_bad_oob`);
//! * initializer lists of local arrays, zero past the list (`omp_bad_initializer`);
//! * `printf`/`puts`/`putchar` check their arguments' reads; `%n` is refused;
//! * `//@ spec_ignore {` … `//@ spec_ignore }` leaves the code between out; an unmatched
//!   marker is an error;
//! * labelled statements (`T2: if …`) and `send`/`recv` in an iteration loop, here a backward
//!   dependence (`sendrecv_backward_ok`), and VerCors 2's `send L, d: φ;` / `recv L;`
//!   (`sendrecv_v2_*`: the first iteration receives nothing, the last keeps what it sends);
//! * an OpenMP parallel region of `omp for` loops, a `nowait` loop paired iteration by
//!   iteration with the next one under static schedules (`omp_region_*`); `nowait` without
//!   them is refused (`unsupported_omp_nowait_dynamic`);
//! * permissions located by pointer arithmetic, `Perm(p + i, π)` (`pointer_offset_perm_*`);
//! * forward `goto`s within a block, read as the code they skip (`goto_forward_*`);
//! * `/*@ pure @*/` functions whose bodies are declarations, `if`/`else` and `return`
//!   (`pure_function_*`), and OpenMP's team queries as unknown numbers (`omp_thread_num_*`);
//! * C's `/` and `%`, which truncate toward zero, in code and specifications, beside
//!   `\euclidean_div`/`\euclidean_mod`; a zero divisor is V-DIV0 (`c_division_*`); `/=` and
//!   `%=` truncate too (`c_division_bad_compound_euclid`);
//! * shifts and masks by constants: `>>` rounds down, also a negative value, `<<` multiplies,
//!   `& (2^k - 1)` keeps the low bits, and their compound assignments (`c_bits_*`);
//! * unsigned variables never go negative unseen: a store that would is refused, an unsigned
//!   parameter needs a non-negative argument (`unsigned_*`);
//! * host memory: `malloc`'s cells are unknown, `calloc`'s zero, and a block is freed once
//!   (`host_memory_*`).

mod common;

#[test]
fn c_constructs_verify_and_their_violations_fail() {
    common::assert_named_verdicts("fixtures/verify_c", "c", "A0014", "A0001");
}

/// The interpreter divides as the verifier does: C's truncation where the C front end says so,
/// and host memory as its models say (a block freed twice is a permission error).
#[test]
fn the_interpreter_agrees_on_division_and_host_memory() {
    let file = |n: &str| common::root().join("fixtures/verify_c").join(n).display().to_string();
    for (name, entry, want) in [
        ("c_division_ok.c", "constants", 0),
        ("c_division_ok.c", "halves", 0),
        ("c_division_bad_euclid.c", "constants", 1),
        ("c_division_bad_compound_euclid.c", "constants", 1),
        ("c_bits_ok.c", "constants", 0),
        ("c_bits_ok.c", "split", 0),
        ("c_bits_ok.c", "mask_first", 0),
        ("c_bits_bad_shift_truncates.c", "constants", 1),
        ("host_memory_ok.c", "zeroes", 0),
        ("host_memory_bad_double_free.c", "twice", 1),
    ] {
        let f = file(name);
        // `--set n=5` only where the entry has an `n`: a name that is no input is an error.
        let mut args = vec!["run", f.as_str(), "--entry", entry];
        if matches!(entry, "halves" | "twice" | "zeroes") {
            args.extend(["--set", "n=5"]);
        }
        let (code, out, err) = common::run_cli(&args);
        assert_eq!(code, want, "{name} {entry}:\n{out}{err}");
    }
}
