#![no_main]
//! Fuzz target: the emulator in both modes, bounded in cycles and instructions, on a
//! mutated seed binary (first byte even) or a generated program (odd). See
//! `spu_tests::fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 1 => spu_tests::fuzz::run_generated(rest),
        Some((_, rest)) => spu_tests::fuzz::run_mutated(rest),
        None => {}
    }
});
