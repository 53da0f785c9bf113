#![no_main]
//! Fuzz target: Slurm job scripts from hostile names, paths and options; see
//! `spu_tests::fuzz::sweep::slurm_script`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = spu_tests::fuzz::sweep::slurm_script(data);
});
