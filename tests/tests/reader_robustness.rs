//! The binary reader never panics: truncations and byte flips of valid binaries give
//! typed errors (or a valid module), never a crash; and it refuses values the
//! assembler refuses.

use proptest::prelude::*;

fn sample_binary() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/matmul.spu");
    let src = std::fs::read_to_string(path).unwrap();
    spu_asm::assemble("matmul.spu", &src)
        .expect("sample assembles")
        .0
}

#[test]
fn every_truncation_is_rejected() {
    let bin = sample_binary();
    for len in 0..bin.len() {
        assert!(
            spu_isa::format::read_module(&bin[..len]).is_err(),
            "truncated to {len} bytes"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn byte_flips_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bin = sample_binary();
        for (at, value) in flips {
            let i = at % bin.len();
            bin[i] = value;
        }
        let _ = spu_isa::format::read_module(&bin);
    }
}

/// The reader refuses a seed the assembler refuses: a binary's seed is at most
/// 2^53, so its disassembly assembles again.
#[test]
fn a_binary_with_a_seed_above_the_limit_is_refused_naming_its_buffer() {
    let seed: u64 = 0x0012_3456_789a_bcde;
    let src = format!(".global .f32 A[4] = random({seed});\n.entry k {{\n    exit;\n}}\n");
    let mut bin = spu_asm::assemble("t.spu", &src).expect("assembles").0;
    let at = bin
        .windows(8)
        .position(|w| w == seed.to_le_bytes())
        .expect("the seed is stored");
    for (limit, ok) in [(spu_isa::format::MAX_SEED, true), (u64::MAX - 7, false)] {
        bin[at..at + 8].copy_from_slice(&limit.to_le_bytes());
        let read = spu_isa::format::read_module(&bin);
        if ok {
            read.expect("2^53 is a seed");
        } else {
            let err = read.expect_err("above 2^53 is not a seed").to_string();
            assert!(
                err.contains("buffer `A` has random seed 18446744073709551608"),
                "{err}"
            );
        }
    }
}

/// The reader refuses a NaN or infinite initialiser, which no source gives and
/// no buffer holds (`spu-asm -d` wrote `random(7, -1.0, NaN)`, which does not
/// assemble again).
#[test]
fn a_binary_with_a_non_finite_initialiser_is_refused_naming_its_buffer() {
    let hi: f64 = 0.328125;
    let src = format!(".global .f32 A[4] = random(7, -1.0, {hi});\n.entry k {{\n    exit;\n}}\n");
    let bin = spu_asm::assemble("t.spu", &src).expect("assembles").0;
    let at = bin
        .windows(8)
        .position(|w| w == hi.to_le_bytes())
        .expect("the bound is stored");
    for (value, shown) in [(f64::NAN, "NaN"), (f64::INFINITY, "inf")] {
        let mut bad = bin.clone();
        bad[at..at + 8].copy_from_slice(&value.to_le_bytes());
        let err = spu_isa::format::read_module(&bad)
            .expect_err("a non-finite bound is refused")
            .to_string();
        assert!(
            err.contains(&format!(
                "buffer `A` has random hi {shown} (initialisers are finite numbers)"
            )),
            "{err}"
        );
    }
    spu_isa::format::read_module(&bin).expect("the original reads");
}
