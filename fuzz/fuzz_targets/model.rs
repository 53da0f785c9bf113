#![no_main]
//! Fuzz target: energy model files with `extends` chains on disk; see
//! `spu_tests::fuzz::models::model_files`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = spu_tests::fuzz::models::model_files(data);
});
