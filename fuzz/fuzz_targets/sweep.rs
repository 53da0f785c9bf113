#![no_main]
//! Fuzz target: sweep specs, parsed and planned; see `spu_tests::fuzz::sweep::spec_plan`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = spu_tests::fuzz::sweep::spec_plan(data);
});
