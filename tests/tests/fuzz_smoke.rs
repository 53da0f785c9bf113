//! Bounded versions of the fuzz targets in `fuzz/`: random inputs through the same
//! entry points, so every CI run exercises them. Inputs are seeded mutations of real
//! sources, binaries and machine files, which reach deeper than plain noise.

use proptest::prelude::*;
use spu_tests::fuzz;

fn mutate(seed: &[u8], edits: &[(u16, u8)]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for &(at, b) in edits {
        if v.is_empty() {
            break;
        }
        let i = usize::from(at) % v.len();
        match b % 4 {
            0 => v[i] = b,
            1 => {
                v.remove(i);
            }
            2 => v.insert(i, b"%;[]{}.,-0x9\n"[usize::from(b) % 13]),
            _ => v.truncate(i),
        }
    }
    v
}

const SOURCES: &[&str] = &[
    include_str!("../../samples/vecadd.spu"),
    include_str!("../../samples/pass_token.spu"),
    include_str!("../../samples/stencil2d/stencil_pc.spu"),
];

fn edits() -> impl Strategy<Value = Vec<(u16, u8)>> {
    proptest::collection::vec((any::<u16>(), any::<u8>()), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn assembler_survives_mutated_sources(which in 0..SOURCES.len(), e in edits()) {
        fuzz::assemble_text(&mutate(SOURCES[which].as_bytes(), &e));
    }

    #[test]
    fn reader_survives_mutated_binaries(e in edits()) {
        let bin = spu_asm::assemble("s.spu", SOURCES[1]).unwrap().0;
        fuzz::read_binary(&mutate(&bin, &e));
    }

    #[test]
    fn emulator_survives_mutated_binaries(data in proptest::collection::vec(any::<u8>(), 0..48)) {
        fuzz::run_mutated(&data);
    }

    #[test]
    fn configs_survive_mutated_files(which in 0..3usize, e in edits()) {
        let seeds = [
            include_str!("../../machine/machines/spu-4x4.toml"),
            include_str!("../../prof/models/default.toml"),
            include_str!("../../prof/models/cyclops64.toml"),
        ];
        fuzz::parse_configs(&mutate(seeds[which].as_bytes(), &e));
    }

    #[test]
    fn generated_sources_survive_assembly(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzz::assemble_generated(&data);
    }

    #[test]
    fn generated_ptx_with_macros_and_includes_survives_assembly(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzz::assemble_generated_files(&data);
    }

    #[test]
    fn binaries_edited_section_by_section_survive_reading(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        fuzz::read_mutated_sections(&data);
    }

    #[test]
    fn edited_modules_write_and_read_back(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzz::module_round_trip(&data);
    }

    #[test]
    fn edited_statistics_and_models_survive_pricing(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzz::price_stats(&data);
    }

    #[test]
    fn everything_survives_noise(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzz::assemble_text(&data);
        fuzz::read_binary(&data);
        fuzz::parse_configs(&data);
    }
}

proptest! {
    // Each case runs a program in both modes; fewer cases keep the suite quick.
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_survive_both_modes(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzz::run_generated(&data);
    }
}

/// Crashes the fuzzers found, kept as regression tests.
#[test]
fn fuzz_regressions() {
    // A flipped branch let a warp run past the last instruction (emu target; the
    // first byte now picks the seed binary, 1 = pass_token).
    fuzz::run_mutated(&[1, 0x20, 0x78, 0x6f, 0x78, 0x01, 0x03]);
    // Two edits of vecadd (`iu(2013265952)` and more) that ran to the instruction
    // budget: 13 s of CPU each under the sanitizer, timeouts of the emu target.
    fuzz::run_mutated(&[
        0x6f, 0x6f, 0x01, 0x78, 0x78, 0x20, 0x01, 0x7b, 0x78, 0x20, 0x01, 0x7b, 0x01, 0x78, 0x78,
        0x78, 0x01, 0x78, 0x78, 0x78, 0x20, 0x01, 0x7b,
    ]);
    fuzz::run_mutated(&[
        0x6f, 0x6f, 0x01, 0x38, 0x80, 0x9b, 0x30, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x78, 0x78, 0x20,
        0x01, 0x7b, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x78, 0x78, 0x78, 0x20,
        0x01, 0x7b,
    ]);
    // vecadd with `grid(cdiv(N, 256), 27649)` (one XOR in the launch record):
    // functional mode never checked the instruction budget for a kernel that stores
    // in every window and ran all 27 649 blocks (2.4 million warp instructions,
    // 11 s of CPU under the sanitizer, a timeout of the emu target).
    fuzz::run_mutated(&[0x00, 0x01, 0x78, 0x6c, 0x20, 0x03]);
    // The writer accepted a label past the end of the code, which the reader refuses
    // (reader target, module round trip).
    let bin = spu_asm::assemble("s.spu", SOURCES[1]).unwrap().0;
    let mut module = spu_isa::format::read_module(&bin).unwrap();
    module.labels[0].pc = 4_047_943_326;
    let err = spu_isa::format::write_module(&module).unwrap_err();
    assert!(err.to_string().contains("points outside the code"), "{err}");
}
