//! Entry points shared by the fuzz targets in `fuzz/` and their bounded versions
//! in the test suite: each takes arbitrary bytes and must return without panicking
//! (errors are fine; crashes, hangs and unbounded allocation are not). The
//! `expect`s below are the invariants being fuzzed: a panic there is a found bug.

use spu_emu::{Machine, RunControl};
use std::sync::OnceLock;

/// The assembler on arbitrary text; what assembles must read back and disassemble
/// to text that reassembles to the same bytes.
pub fn assemble_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok((bin, _)) = spu_asm::assemble("fuzz.spu", &text) {
        let module = spu_isa::format::read_module(&bin).expect("own output reads back");
        let listing = spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default());
        let (again, _) = spu_asm::assemble("fuzz.spu", &listing).expect("disassembly reassembles");
        assert_eq!(again, bin, "round trip changed the binary");
    }
}

/// The binary reader on arbitrary bytes; what it accepts must disassemble and load.
pub fn read_binary(data: &[u8]) {
    if let Ok(module) = spu_isa::format::read_module(data) {
        let _ = spu_asm::disasm::disassemble(&module, spu_asm::disasm::Options::default());
        let _ = spu_emu::load(module, &small_machine(), &Default::default());
    }
}

/// A small machine with little memory, so hostile sizes fail fast.
pub fn small_machine() -> Machine {
    let mut m = Machine::default();
    m.set_grid("2x2").expect("valid grid");
    m.set("memory.global_mib=16").expect("valid key");
    m
}

fn seed_binary() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let src = include_str!("../../samples/pass_token.spu");
        spu_asm::assemble("pass_token.spu", src)
            .expect("sample assembles")
            .0
    })
}

/// The emulator on a valid binary mutated by `data` (pairs of little-endian u16
/// offset and a byte to XOR there), with a cycle bound.
pub fn run_mutated(data: &[u8]) {
    let mut bin = seed_binary().to_vec();
    for chunk in data.chunks_exact(3) {
        let offset = usize::from(u16::from_le_bytes([chunk[0], chunk[1]])) % bin.len();
        bin[offset] ^= chunk[2];
    }
    let Ok(module) = spu_isa::format::read_module(&bin) else {
        return;
    };
    let machine = small_machine();
    let Ok(mut image) = spu_emu::load(module, &machine, &Default::default()) else {
        return;
    };
    let control = RunControl {
        max_cycles: 200_000,
        ..RunControl::default()
    };
    let _ = spu_emu::simulate(&mut image, &machine, control, &mut |_| {});
}

/// Machine files and energy models from arbitrary text.
pub fn parse_configs(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = Machine::from_toml(&text, "fuzz.toml");
    let _ = spu_prof::model::Model::from_text(&text, "fuzz.toml");
}
