//! Loop unrolling (peeling) on the shared corpus and the project's own fixtures: every file does what its
//! `// expect:` header says, and every output / refusal is snapshotted.

mod common;

common::snapshot_tests!("unroll", |p, prefix| common::driver_case(
    p,
    prefix,
    "loop_unroll",
    &["loop_unroll", "unroll"]
));
