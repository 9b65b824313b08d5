//! cargo-fuzz target `apply`: the first 8 bytes seed the requests, the rest is the program;
//! every optimization at every site line (and a random line) with random parameters, and the
//! program's own annotations (tests/common/fuzz/plan.rs).
#![no_main]

use testkit::fuzz;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (seed, rest) = data.split_at(8);
    let mut rng = fuzz::Rng(u64::from_le_bytes(seed.try_into().expect("8 bytes")));
    let src = String::from_utf8_lossy(rest);
    for req in fuzz::plan::apply_requests(&mut rng, &src, 1, 12) {
        if let Err(f) = fuzz::targets::apply_target(&src, &req, 500) {
            panic!("{}: {f}", req.describe());
        }
    }
});
