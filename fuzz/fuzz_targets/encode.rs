//! cargo-fuzz target `encode`: the bytes as a program; one that parses must be encoded to
//! Viper or refused with a diagnostic that is not an internal error.
#![no_main]

use testkit::fuzz;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    if let Err(f) = fuzz::targets::encode_target(&src) {
        panic!("{f}");
    }
});
