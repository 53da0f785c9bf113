//! The binary reader never panics: truncations and byte flips of valid binaries give
//! typed errors (or a valid module), never a crash.

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
