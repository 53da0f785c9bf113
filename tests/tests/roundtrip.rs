//! Every sample and conformance source assembles, and assemble -> disassemble ->
//! assemble gives identical bytes.

use spu_tests::sources;
use std::path::Path;

fn assemble(name: &str, src: &str) -> Vec<u8> {
    match spu_asm::assemble(name, src) {
        Ok((bin, warnings)) => {
            // A file of several kernels may warn about the kernels the launch does
            // not choose (`samples/cuda/entries_*.spu`), and only about them.
            let other_kernels = name.contains("/entries_")
                && warnings
                    .items
                    .iter()
                    .all(|w| w.label.contains("which is not assembled"));
            assert!(
                warnings.is_empty() || other_kernels,
                "{name}:\n{}",
                warnings.render(name, src)
            );
            bin
        }
        Err(d) => panic!("{name} does not assemble:\n{}", d.render(name, src)),
    }
}

fn round_trip(path: &Path) {
    // The whole path: `#include` resolves relative to the including file.
    let name = path.to_string_lossy().into_owned();
    let src = std::fs::read_to_string(path).unwrap();
    let first = assemble(&name, &src);
    let module = spu_isa::format::read_module(&first).expect("own output reads back");
    let text = spu_asm::disasm::disassemble(&module, Default::default());
    let second = assemble("disassembly.spu", &text);
    assert!(
        first == second,
        "{name}: re-assembled bytes differ; disassembly:\n{text}"
    );
}

#[test]
fn samples_round_trip() {
    let files = sources("samples");
    assert!(files.len() >= 5, "samples are missing");
    files.iter().for_each(|p| round_trip(p));
}

#[test]
fn conformance_sources_round_trip() {
    sources("tests/conformance")
        .iter()
        .for_each(|p| round_trip(p));
}

#[test]
fn every_isa_row_has_a_conformance_source_with_a_signature() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    for spec in spu_isa::TABLE {
        let path = dir.join(format!("{}.spu", spec.mnemonic));
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing {}", path.display()));
        assert!(
            src.contains("// expect "),
            "{} has no expected signature",
            path.display()
        );
        let module = spu_isa::format::read_module(&assemble(spec.mnemonic, &src)).unwrap();
        let uses_row = module.code.iter().any(|w| {
            spu_isa::Instr::decode(*w).is_ok_and(|i| i.opcode.spec().mnemonic == spec.mnemonic)
        });
        assert!(
            uses_row,
            "{} never uses `{}`",
            path.display(),
            spec.mnemonic
        );
    }
}

#[test]
fn disassembly_without_locations_still_assembles_to_the_same_code() {
    for path in sources("samples") {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.to_string_lossy();
        let module = spu_isa::format::read_module(&assemble(&name, &src)).unwrap();
        let text =
            spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options { no_locations: true });
        let again = spu_isa::format::read_module(&assemble("s.spu", &text)).unwrap();
        assert_eq!(module.code, again.code, "{}", path.display());
    }
}
