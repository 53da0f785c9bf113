#![no_main]
//! Fuzz target: see `spu_tests::fuzz::run_mutated`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spu_tests::fuzz::run_mutated(data);
});
