#![no_main]
//! Fuzz target: the binary reader on raw bytes, on seed binaries edited inside one
//! section, and on edited modules that must write and read back; the first byte
//! picks which. See `spu_tests::fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((mode, rest)) => match mode % 3 {
            0 => spu_tests::fuzz::read_binary(rest),
            1 => spu_tests::fuzz::read_mutated_sections(rest),
            _ => spu_tests::fuzz::module_round_trip(rest),
        },
        None => {}
    }
});
