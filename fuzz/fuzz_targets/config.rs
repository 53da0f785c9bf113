#![no_main]
//! Fuzz target: see `spu_tests::fuzz::parse_configs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spu_tests::fuzz::parse_configs(data);
});
