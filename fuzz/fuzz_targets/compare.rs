#![no_main]
//! Fuzz target: edited `--compare` reports; see
//! `spu_tests::fuzz::models::compare_reports`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = spu_tests::fuzz::models::compare_reports(data);
});
