#![no_main]
//! Fuzz target: see `spu_tests::fuzz::assemble_text`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spu_tests::fuzz::assemble_text(data);
});
