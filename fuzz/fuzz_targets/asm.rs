#![no_main]
//! Fuzz target: the assembler on raw text (first byte even) or on a source written
//! by the structured generator (odd); see `spu_tests::fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 1 => spu_tests::fuzz::assemble_generated(rest),
        Some((_, rest)) => spu_tests::fuzz::assemble_text(rest),
        None => {}
    }
});
