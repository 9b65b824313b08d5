//! The detectors and checkers on small fixtures of our own (fixtures/sem).

use alpine_rs::sem::{
    self, Checks, Config, RunOptions, RunResult, Status, ValidateOptions, Verdict,
};
use std::path::Path;

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sem").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(name: &str, checks: Checks) -> Vec<RunResult> {
    let src = fixture(name);
    let opts = RunOptions {
        random: 2,
        seed: 7,
        config: Config { checks, ..Config::default() },
        ..RunOptions::default()
    };
    let runs = sem::run_program(&src, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    for r in &runs {
        eprintln!(
            "{name} {} input {}: {:?} [{}]",
            r.method,
            r.input_id,
            r.status,
            r.input.describe()
        );
        eprintln!("{}", sem::render(name, &src, &r.errors));
    }
    runs
}

fn codes(r: &RunResult) -> Vec<String> {
    r.errors.iter().map(|d| d.code.clone()).collect()
}

const RACES_ONLY: Checks = Checks { contracts: false, perms: false, races: true, divergence: true };

#[test]
fn shift_with_barrier_passes_all_checks() {
    for r in run("shift_barrier.pvl", Checks::default()) {
        assert_eq!(r.status, Status::Ok);
    }
}

#[test]
fn deleting_the_barrier_of_a_shift_is_a_race() {
    let runs = run("shift_nobarrier.pvl", RACES_ONLY);
    let mut seen = false;
    for r in &runs {
        let n = r.input.args.iter().find(|(k, _)| k == "n");
        if matches!(n, Some((_, sem::InVal::Int(n))) if *n < 2) {
            continue;
        }
        seen = true;
        assert_eq!(r.status, Status::Error);
        let race = r.errors.iter().find(|d| d.code == "R-RACE").expect("a race is reported");
        // Both accesses are labelled with the thread that made them.
        let labels: Vec<&str> = race.labels.iter().map(|l| l.message.as_str()).collect();
        assert!(labels.iter().any(|l| l.starts_with("write by k[tid=")), "{labels:?}");
        assert!(labels.iter().any(|l| l.starts_with("read by k[tid=")), "{labels:?}");
        assert_eq!(race.labels.len(), 2);
    }
    assert!(seen, "no input with n >= 2");
    // With all checks on, the missing barrier also shows as a permission error.
    let all = run("shift_nobarrier.pvl", Checks::default());
    assert!(all.iter().any(|r| codes(r).iter().any(|c| c == "R-PERM-WRITE")));
}

#[test]
fn barrier_under_tid_less_than_16_is_divergence() {
    for r in run("divergent_barrier.pvl", Checks::default()) {
        assert_eq!(r.status, Status::Error);
        let d = r.errors.iter().find(|d| d.code == "R-DIVERGENCE").expect("divergence");
        assert!(d.message.contains("lanes [0, 1, 2"), "{}", d.message);
        assert!(d.message.contains("16, 17"), "{}", d.message);
    }
}

#[test]
fn a_thread_that_returned_inside_a_loop_misses_the_barrier() {
    for r in run("return_in_loop_before_barrier.pvl", Checks::default()) {
        assert_eq!(r.status, Status::Error);
        let d = r.errors.iter().find(|d| d.code == "R-DIVERGENCE").expect("divergence");
        assert!(d.message.contains("lanes [3] are inactive"), "{}", d.message);
    }
}

#[test]
fn write_under_read_permission_is_reported() {
    let runs = run("write_under_read.pvl", Checks::default());
    assert!(runs.iter().any(|r| codes(r).iter().any(|c| c == "R-PERM-WRITE")));
    for r in runs.iter().filter(|r| r.status != Status::Ok) {
        assert!(codes(r).iter().all(|c| c == "R-PERM-WRITE" || c == "R-LIMIT"), "{:?}", codes(r));
    }
}

#[test]
fn loop_invariant_failing_first_on_iteration_3_is_reported_with_it() {
    let runs = run("invariant_iter3.pvl", Checks::default());
    let r = &runs[0];
    assert_eq!(r.status, Status::Error);
    let inv: Vec<_> = r.errors.iter().filter(|d| d.code == "R-INV-KEEP").collect();
    assert!(!inv.is_empty());
    assert!(inv[0].message.contains("after iteration 3"), "{}", inv[0].message);
    assert!(r.errors.iter().all(|d| d.code != "R-INV-ENTRY"));
}

/// `validate` of the loop fixture against `opt`, on 8 random inputs.
fn validate_loop(opt: &str) -> sem::ValidateOutcome {
    let out = sem::validate(
        &fixture("loop_orig.pvl"),
        &fixture(opt),
        &ValidateOptions { random: 8, seed: 3, ..ValidateOptions::default() },
    );
    eprintln!("{}", out.summary);
    out
}

#[test]
fn validate_accepts_a_correct_peeling() {
    let out = validate_loop("loop_peeled.pvl");
    assert_eq!(out.verdict, Verdict::Same, "{}", out.summary);
    assert!(out.equivalent >= 6);
}

#[test]
fn validate_rejects_an_off_by_one_peeling() {
    let out = validate_loop("loop_peeled_off_by_one.pvl");
    assert_eq!(out.verdict, Verdict::Different);
    let m = out.mismatch.expect("a mismatch");
    assert_eq!(m.path, "a");
    // The first differing location is the last element, which the shortened loop skips.
    let n = match m.input.args.iter().find(|(k, _)| k == "n") {
        Some((_, sem::InVal::Int(n))) => *n as usize,
        other => panic!("{other:?}"),
    };
    assert_eq!(m.index, Some(n - 1));
}

/// Run `entry` of bulk_transfers.pvl on `n` and an array of `n` cells; the run must end in an
/// error.
fn bulk_error(entry: &str, n: i64) -> RunResult {
    let r = run_input("bulk_transfers.pvl", entry, sized(n, &[("a", n as usize)]));
    assert_eq!(r.status, Status::Error);
    r
}

fn run_input(name: &str, entry: &str, args: Vec<(&str, sem::InVal)>) -> RunResult {
    run_input_checks(name, entry, args, Checks::default())
}

fn run_input_checks(
    name: &str,
    entry: &str,
    args: Vec<(&str, sem::InVal)>,
    checks: Checks,
) -> RunResult {
    let src = fixture(name);
    let opts = RunOptions {
        entry: Some(entry.into()),
        random: 0,
        config: Config { checks, ..Config::default() },
        inputs: vec![sem::Input {
            args: args.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            ..sem::Input::default()
        }],
        ..RunOptions::default()
    };
    let mut runs = sem::run_program(&src, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = runs.remove(0);
    eprintln!("{}", sem::render(name, &src, &r.errors));
    r
}

/// The inputs of most kernels here: the size `n` and int arrays of the given names and lengths
/// (see [`ints`]).
fn sized(n: i64, arrays: &[(&'static str, usize)]) -> Vec<(&'static str, sem::InVal)> {
    let mut args = vec![("n", sem::InVal::Int(n))];
    args.extend(arrays.iter().map(|&(name, len)| (name, ints(len))));
    args
}

fn ints(n: usize) -> sem::InVal {
    sem::InVal::Array(
        alpine_rs::sem::compile::Ty::Int,
        (0..n as i64).map(sem::InVal::Int).collect(),
    )
}

#[test]
fn an_invariant_failing_in_some_lanes_is_reported_for_exactly_those_threads() {
    let r = run_input("lane_errors.pvl", "parity", sized(40, &[("a", 40)]));
    assert_eq!(r.status, Status::Error);
    let keep: Vec<&str> =
        r.errors.iter().filter(|d| d.code == "R-INV-KEEP").map(|d| d.message.as_str()).collect();
    // Even threads fail (j reaches 3 > 2); 20 of them, in thread order, across both warps.
    assert_eq!(keep.len(), 20, "{keep:?}");
    for (i, m) in keep.iter().enumerate() {
        assert!(m.contains("after iteration 3"), "{m}");
        assert!(m.ends_with(&format!("for k[tid={}]", 2 * i)), "{m}");
    }
}

#[test]
fn a_division_by_zero_in_one_lane_stops_the_run_there() {
    let r = run_input("lane_errors.pvl", "divide", sized(8, &[("a", 8)]));
    assert_eq!(r.status, Status::Error);
    assert_eq!(codes(&r), ["R-DIV0"]);
    // The warp issued the statement for its 8 lanes; nothing after it ran.
    assert_eq!(r.stmts, 8);
    assert!(r.observables.iter().all(|o| o.value == ints(8)));
}

#[test]
fn a_thread_precondition_false_in_every_thread_is_reported_per_thread() {
    let r = run_input(
        "lane_errors.pvl",
        "uniform",
        vec![("n", sem::InVal::Int(3)), ("m", sem::InVal::Int(2)), ("a", ints(3))],
    );
    assert_eq!(r.status, Status::Error);
    let pre: Vec<&str> =
        r.errors.iter().filter(|d| d.code == "R-PAR-PRE").map(|d| d.message.as_str()).collect();
    assert_eq!(
        pre,
        [
            "par precondition does not hold for k[tid=0]",
            "par precondition does not hold for k[tid=1]",
            "par precondition does not hold for k[tid=2]",
        ]
    );
    let ok = run_input(
        "lane_errors.pvl",
        "uniform",
        vec![("n", sem::InVal::Int(3)), ("m", sem::InVal::Int(4)), ("a", ints(3))],
    );
    assert_eq!(ok.status, Status::Ok, "{:?}", codes(&ok));
}

fn run_with(name: &str, config: Config) -> Vec<RunResult> {
    let src = fixture(name);
    let opts = RunOptions { random: 2, seed: 7, config, ..RunOptions::default() };
    sem::run_program(&src, &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_per_thread_local_in_a_barrier_contract_is_a_uniformity_warning() {
    let src = fixture("nonuniform_barrier.pvl");
    for r in run("nonuniform_barrier.pvl", Checks::default()) {
        // A warning only: the run is correct and its status stays ok.
        assert_eq!(r.status, Status::Ok, "{:?}", r.errors);
        assert_eq!(codes(&r), ["W-NONUNIFORM"], "reported once per barrier");
        let d = &r.errors[0];
        assert!(!d.is_error());
        assert!(
            d.message.contains("`k`")
                && d.message.contains("0 in p[tid=0]")
                && d.message.contains("1 in p[tid=1]"),
            "{}",
            d.message
        );
        let primary = d.labels.iter().find(|l| l.primary).expect("a primary label");
        assert_eq!(&src[primary.span.range()], "k");
        assert!(d.help.is_some());
    }
}

#[test]
fn the_uniformity_lint_can_be_turned_off() {
    let config = Config { uniformity: false, ..Config::default() };
    for r in run_with("nonuniform_barrier.pvl", config) {
        assert_eq!(r.status, Status::Ok);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
    }
}

#[test]
fn a_uniform_round_counter_in_a_barrier_contract_is_not_a_warning() {
    // V5's scan mentions `offset` in its barrier contract; every thread has the same value.
    for r in run("scan.pvl", Checks::default()) {
        assert_eq!(r.status, Status::Ok);
        assert!(!codes(&r).iter().any(|c| c == "W-NONUNIFORM"), "{:?}", r.errors);
    }
}

/// The messages of the diagnostics with code `code`.
fn messages<'a>(r: &'a RunResult, code: &str) -> Vec<&'a str> {
    r.errors.iter().filter(|d| d.code == code).map(|d| d.message.as_str()).collect()
}

#[test]
fn a_thread_missing_its_entry_permission_is_reported_for_that_thread_only() {
    let r = bulk_error("hole", 40);
    assert_eq!(
        messages(&r, "R-PERM-TRANSFER"),
        [
            "par precondition: needs 1 of element 5 of array #0, holds none (k[tid=5])",
            "par postcondition: needs 1 of element 5 of array #0, holds none (k[tid=5])",
        ]
    );
    let writes = messages(&r, "R-PERM-WRITE");
    assert_eq!(writes.len(), 1);
    assert!(writes[0].ends_with("by k[tid=5]"), "{}", writes[0]);
    // Everything else moved: no other thread is short of anything.
    assert_eq!(r.errors.len(), 3, "{:?}", r.errors);
}

#[test]
fn threads_giving_back_what_they_lack_are_reported_in_thread_order() {
    let r = bulk_error("rotate", 6);
    let want: Vec<String> = (0..6)
        .map(|t| {
            format!(
                "par postcondition: needs 1 of element {} of array #0, holds none (k[tid={t}])",
                (t + 1) % 6
            )
        })
        .collect();
    assert_eq!(messages(&r, "R-PERM-TRANSFER"), want);
}

#[test]
fn a_quantified_exhale_short_of_every_instance_reports_each_in_order() {
    let r = bulk_error("half", 4);
    let want: Vec<String> = (0..4)
        .map(|i| format!("exhale: needs 1 of element {i} of array #0, holds 1/2 (host)"))
        .collect();
    assert_eq!(messages(&r, "R-PERM-TRANSFER"), want);
}

#[test]
fn reads_without_permission_in_some_lanes_are_reported_for_exactly_those_threads() {
    let r = run_input("column_reads.pvl", "unreadable", sized(40, &[("a", 40), ("b", 40)]));
    assert_eq!(r.status, Status::Error);
    let reads = messages(&r, "R-PERM-READ");
    assert_eq!(reads.len(), 8, "{reads:?}");
    for (i, m) in reads.iter().enumerate() {
        assert!(m.starts_with(&format!("read of element {} of array #1 without", 32 + i)), "{m}");
    }
    // The threads that could read wrote what they read plus one.
    let a = &r.observables.iter().find(|o| o.path == "a").expect("a").value;
    let sem::InVal::Array(_, cells) = a else { panic!("{a:?}") };
    assert_eq!(cells[31], sem::InVal::Int(32));
}

#[test]
fn a_quantifier_stops_at_its_first_deciding_instance() {
    let r = run_input("column_reads.pvl", "stops_first", sized(100, &[("a", 100)]));
    assert_eq!(codes(&r), ["R-ASSERT"]);
    let r = run_input("column_reads.pvl", "runs_off", sized(100, &[("a", 100)]));
    assert_eq!(codes(&r), ["R-OOB"]);
    assert!(r.errors[0].message.contains("index 100 out of bounds"), "{:?}", r.errors);
}

#[test]
fn a_race_on_cells_read_column_wise_names_both_threads() {
    let r = run_input_checks("column_reads.pvl", "neighbours", sized(64, &[("a", 65)]), RACES_ONLY);
    // Thread 0 reads element 1 before thread 1 writes it (the warp reads before it writes);
    // later pairs of the same two accesses are not reported again.
    assert_eq!(codes(&r), ["R-RACE"]);
    let d = &r.errors[0];
    assert!(d.message.contains("element 1 of array #0 (read/write)"), "{}", d.message);
    let labels: Vec<&str> = d.labels.iter().map(|l| l.message.as_str()).collect();
    assert_eq!(labels, ["write by k[tid=1]", "read by k[tid=0]"]);
}

#[test]
fn a_thread_postcondition_false_in_some_threads_is_reported_for_exactly_those() {
    let r = run_input("column_reads.pvl", "some_posts", sized(70, &[("a", 70)]));
    assert_eq!(r.status, Status::Error);
    let posts = messages(&r, "R-PAR-POST");
    let want: Vec<String> = (0..70)
        .filter(|t| t % 5 == 3)
        .map(|t| format!("par postcondition does not hold for k[tid={t}]"))
        .collect();
    assert_eq!(posts, want);
    // Nothing else: the permissions of every thread went back to the host.
    assert_eq!(r.errors.len(), want.len(), "{:?}", r.errors);
}

#[test]
fn inline_predicates_move_the_permissions_they_stand_for() {
    for entry in ["m", "k"] {
        let r = run_input("inline_predicate.pvl", entry, vec![("a", ints(4))]);
        assert_eq!(r.status, Status::Ok, "{entry}: {:?}", r.errors);
    }
    let r = run_input("inline_predicate.pvl", "short", vec![("a", ints(4))]);
    assert_eq!(codes(&r), ["R-PERM-WRITE"]);
}

#[test]
fn given_values_reach_the_callee_and_yields_come_back() {
    let r = run_input("ghost_params.pvl", "caller", vec![]);
    assert_eq!(r.status, Status::Ok, "{:?}", r.errors);
    let r = run_input("ghost_params.pvl", "too_small", vec![]);
    assert_eq!(codes(&r), ["R-PRE"]);
}

fn cells(r: &RunResult, name: &str) -> Vec<i64> {
    let o = r.observables.iter().find(|o| o.path == name).expect(name);
    let sem::InVal::Array(_, xs) = &o.value else { panic!("{:?}", o.value) };
    xs.iter()
        .map(|x| match x {
            sem::InVal::Int(i) => *i,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn straight_line_kernels_run_in_bulk_and_compute_what_threads_compute() {
    let n = 100;
    let r = run_input("bulk_launch.pvl", "vadd", sized(n, &[("a", 100), ("b", 100), ("c", 100)]));
    assert_eq!((r.status, r.launches, r.bulk_launches), (Status::Ok, 1, 1));
    assert_eq!(r.stmts, 100);
    assert_eq!(cells(&r, "c"), (0..n).map(|i| 2 * i).collect::<Vec<_>>());
    let r = run_input("bulk_launch.pvl", "shifted", sized(n, &[("a", 101), ("b", 100)]));
    assert_eq!((r.status, r.bulk_launches), (Status::Ok, 1));
    let want: Vec<i64> = std::iter::once(0).chain((0..n).map(|i| 2 * i)).collect();
    assert_eq!(cells(&r, "a"), want);
    for checks in [Checks::default(), RACES_ONLY] {
        let r = run_input_checks("bulk_launch.pvl", "locals", sized(n, &[("a", 100)]), checks);
        assert_eq!((r.status, r.bulk_launches), (Status::Ok, 1));
        assert_eq!(r.stmts, 400);
        let want: Vec<i64> = (0..n).map(|i| i * i + i).collect();
        assert_eq!(cells(&r, "a"), want);
    }
}

#[test]
fn the_bulk_path_leaves_every_error_to_the_thread_by_thread_machine() {
    let args = |len: usize| sized(100, &[("a", len)]);
    // Each of these is reported as before; the bulk path gave up with nothing changed.
    let r = run_input("bulk_launch.pvl", "neighbours", args(101));
    assert_eq!(r.bulk_launches, 0);
    // Threads 1.. lack write permission on their own cell (error output stops at 20).
    let m = messages(&r, "R-PERM-TRANSFER");
    assert_eq!(m.len(), 20, "{:?}", codes(&r));
    assert!(m[0].ends_with("holds 1/2 (k[tid=1])"), "{}", m[0]);
    let r = run_input_checks("bulk_launch.pvl", "neighbours", args(101), RACES_ONLY);
    assert_eq!((r.bulk_launches, codes(&r)), (0, vec!["R-RACE".to_string()]));
    let r = run_input("bulk_launch.pvl", "some_posts", args(100));
    assert_eq!(r.bulk_launches, 0);
    let want: Vec<String> = (0..100)
        .filter(|t| t % 5 == 3)
        .map(|t| format!("par postcondition does not hold for k[tid={t}]"))
        .collect();
    assert_eq!(messages(&r, "R-PAR-POST"), want);
    let r = run_input("bulk_launch.pvl", "half", args(100));
    assert_eq!(r.bulk_launches, 0);
    let m = messages(&r, "R-PERM-WRITE");
    assert_eq!(m.len(), 20);
    assert!(m[0].ends_with("by k[tid=0]"), "{}", m[0]);
    // Reads and writes of whole runs of cells, one cell off what the threads hold.
    let two = sized(100, &[("a", 101), ("b", 100)]);
    let r = run_input("bulk_launch.pvl", "reads_right", two);
    let m = messages(&r, "R-PERM-READ");
    assert_eq!((r.bulk_launches, m.len()), (0, 20), "{:?}", codes(&r));
    assert!(m[0].starts_with("read of element 1 of array #0"), "{}", m[0]);
    let r = run_input("bulk_launch.pvl", "writes_right", args(101));
    let m = messages(&r, "R-PERM-WRITE");
    assert_eq!((r.bulk_launches, m.len()), (0, 20), "{:?}", codes(&r));
    assert!(m[0].ends_with("by k[tid=0]"), "{}", m[0]);
    // The first thread to write past the end stops the run; the threads before it (in warp
    // order) have written, none after: the bulk path's writes were undone.
    let r = run_input_checks("bulk_launch.pvl", "past_end", args(100), RACES_ONLY);
    assert_eq!((r.bulk_launches, codes(&r)), (0, vec!["R-OOB".to_string()]));
    let a = cells(&r, "a");
    assert_eq!(a[2 * 49], 49);
    assert_eq!(a[1], 1, "odd cells keep their input");
}

#[test]
fn old_in_kernel_annotations_reads_the_method_entry_state() {
    let f = "old_in_kernel.pvl";
    let ok = run_input(f, "inc_assert", vec![("a", ints(8))]);
    assert_eq!(ok.status, Status::Ok, "{:?}", codes(&ok));
    // Were `\old` read from the current heap, this assertion would hold.
    let wrong = run_input(f, "inc_wrong", vec![("a", ints(8))]);
    assert_eq!(codes(&wrong)[0], "R-ASSERT");
    let post = run_input(f, "inc_region", vec![("a", ints(8))]);
    assert!(codes(&post).iter().all(|c| c == "R-PAR-POST"), "{:?}", codes(&post));
    assert_eq!(post.errors.len(), 8);
}

#[test]
fn a_quantifier_reading_cells_it_holds_nothing_of_reports_each_of_them() {
    let r = run_input("column_reads.pvl", "post_unreadable", sized(40, &[("a", 40)]));
    let reads = messages(&r, "R-PERM-READ");
    let want: Vec<String> = (32..40)
        .map(|i| format!("read of element {i} of array #0 without permission (held: none)"))
        .collect();
    assert_eq!(reads, want);
}

/// The secondary labels of `d`, as (message, source text under the label).
fn secondary<'a>(src: &'a str, d: &'a alpine_rs::diag::Diagnostic) -> Vec<(&'a str, &'a str)> {
    d.labels.iter().filter(|l| !l.primary).map(|l| (l.message.as_str(), l.span.text(src))).collect()
}

#[test]
fn contract_failures_say_where_the_contract_was_checked() {
    // A callee's precondition: the call is labelled.
    let r = run_input("ghost_params.pvl", "too_small", vec![]);
    let src = fixture("ghost_params.pvl");
    let labels = secondary(&src, &r.errors[0]);
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0].0, "checked here");
    assert!(labels[0].1.contains('('), "a call: {:?}", labels[0].1);
    // A par block's postcondition: the end of the block is labelled.
    let r = run_input("old_in_kernel.pvl", "inc_region", vec![("a", ints(8))]);
    let src = fixture("old_in_kernel.pvl");
    assert_eq!(secondary(&src, &r.errors[0]), [("checked when the block ends here", "}")]);
}

/// A CUDA transpose through shared memory: at the barrier, thread (x, y) gives `tile[y*8+x]`
/// and takes `tile[x*8+y]`, with two `in` clauses before them in the barrier contract.
const TRANSPOSE_8X8: &str = r#"#include <cuda.h>
/*@
  context blockDim.x == 8 && blockDim.y == 8 && gridDim.x == 1 && gridDim.y == 1;
  context in != NULL && \pointer_length(in) == 64;
  context Perm(&in[threadIdx.y * 8 + threadIdx.x], 1\4);
  context Perm(&in[threadIdx.x * 8 + threadIdx.y], 1\4);
  requires Perm(&tile[threadIdx.y * 8 + threadIdx.x], write);
@*/
__global__ void t(int *in) {
  __shared__ int tile[64];
  tile[threadIdx.y * 8 + threadIdx.x] = 0;
  /*@
    context Perm(&in[threadIdx.y * 8 + threadIdx.x], 1\4);
    context Perm(&in[threadIdx.x * 8 + threadIdx.y], 1\4);
    requires Perm(&tile[threadIdx.y * 8 + threadIdx.x], write);
    ensures Perm(&tile[threadIdx.x * 8 + threadIdx.y], write);
  @*/
  __syncthreads();
}
"#;

#[test]
fn a_barrier_pooling_many_warps_hands_every_permission_back() {
    // Two warps' pools, each a permission holder that saw its `tile` cells go first to the
    // hash map (too few of them among the many `in` cells) and later to a dense vector: a cell
    // left behind in the map was lost, and a thread was refused its transposed cell.
    let dir = std::env::temp_dir().join(format!("alpine-rs-sem_checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run_cu = |name: &str, src: &str| {
        let p = dir.join(name);
        std::fs::write(&p, src).expect("writable temp file");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_alpine-rs"))
            .arg("run")
            .arg(&p)
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, out) = run_cu("transpose_8x8_ok.cu", TRANSPOSE_8X8);
    assert_eq!(code, Some(0), "{out}");
    // The wrong twin: the barrier hands out half of `tile[0]` more than it was given.
    let taken = "ensures Perm(&tile[threadIdx.x * 8 + threadIdx.y], write);";
    assert!(TRANSPOSE_8X8.contains(taken));
    let twin = TRANSPOSE_8X8.replace(
        taken,
        "ensures Perm(&tile[threadIdx.x * 8 + threadIdx.y], write) ** Perm(&tile[0], 1\\2);",
    );
    let (code, out) = run_cu("transpose_8x8_bad_post.cu", &twin);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("error[R-BAR-INCONSISTENT]"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_read_permission_splits_among_any_number_of_threads_and_never_writes() {
    // The method holds a[0] `read` once and hands it to every thread (Viper's wildcard).
    for r in run("read_shared_by_threads.pvl", Checks::default()) {
        assert_eq!(r.status, Status::Ok, "{}", r.input.describe());
    }
    // Split reads are still reads: the write is refused wherever a thread makes it.
    let runs = run("read_shared_write_bad.pvl", Checks::default());
    assert!(runs.iter().any(|r| codes(r).contains(&"R-PERM-WRITE".to_string())));
    // … and only the write: handing the read to every thread is fine.
    assert!(runs.iter().all(|r| !codes(r).contains(&"R-PERM-TRANSFER".to_string())));
}
