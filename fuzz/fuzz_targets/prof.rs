#![no_main]
//! Fuzz target: the profiler on edited statistics files and models, through pricing
//! and every report format; see `spu_tests::fuzz::price_stats`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spu_tests::fuzz::price_stats(data);
});
