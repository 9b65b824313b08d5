//! cargo-fuzz target `parse`: the bytes as a (lossily decoded) program text; the first byte
//! picks the dialect. See tests/common/fuzz/targets.rs for what counts as a finding.
#![no_main]

use testkit::fuzz;

use alpine_rs::front::DialectChoice;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let choice = [DialectChoice::Auto, DialectChoice::V1, DialectChoice::V2][first as usize % 3];
    let src = String::from_utf8_lossy(rest);
    if let Err(f) = fuzz::targets::parse_target(&src, choice) {
        panic!("{f}");
    }
});
