#![no_main]
//! Fuzz target: the assembler on raw text (first byte even), on a `.spu` source
//! written by the structured generator (odd, below 128), or on a set of files
//! with PTX, `#define`s and `#include`s (odd, 128 and above); see
//! `spu_tests::fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 1 && *mode >= 128 => {
            spu_tests::fuzz::assemble_generated_files(rest)
        }
        Some((mode, rest)) if mode % 2 == 1 => spu_tests::fuzz::assemble_generated(rest),
        Some((_, rest)) => spu_tests::fuzz::assemble_text(rest),
        None => {}
    }
});
