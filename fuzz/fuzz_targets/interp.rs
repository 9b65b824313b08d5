//! cargo-fuzz target `interp`: the first 8 bytes seed a random well-formed program
//! (tests/common/fuzz/programs.rs) when the rest is empty; otherwise the rest is the program.
//! Run with little fuel: out of fuel is fine, a panic or an internal error is not.
#![no_main]

use testkit::fuzz;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (seed, rest) = data.split_at(8);
    let seed = u64::from_le_bytes(seed.try_into().expect("8 bytes"));
    let src = if rest.is_empty() {
        fuzz::programs::program(&mut fuzz::Rng(seed))
    } else {
        String::from_utf8_lossy(rest).into_owned()
    };
    if let Err(f) = fuzz::targets::interp_target(&src, seed, 2_000) {
        panic!("{f}");
    }
});
