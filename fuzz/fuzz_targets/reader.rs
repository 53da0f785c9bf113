#![no_main]
//! Fuzz target: see `spu_tests::fuzz::read_binary`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spu_tests::fuzz::read_binary(data);
});
