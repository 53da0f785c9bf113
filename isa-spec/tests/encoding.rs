//! Property: for every row of the table, any instruction with in-range fields encodes
//! and decodes back to itself, and its encoding touches only the row's bits.

use proptest::prelude::*;
use spu_isa::table::{Field, OperandKind};
use spu_isa::{Guard, Instr, MAX_TARGET, Mods, Opcode, Operand, Special, SymbolRef, TABLE};

/// Builds an instruction of row `row` whose field values come from `seeds`.
fn instr_from_seeds(row: usize, seeds: &[u64; 8]) -> Instr {
    let op = Opcode::from_index(row).expect("row index in range");
    let spec = op.spec();
    let mut mods = Mods::default();
    let mut operands = Vec::new();
    let mut reconv = None;
    for (i, field) in spec.fields.iter().enumerate() {
        let seed = seeds[i % 8].rotate_left(i as u32 * 7);
        match *field {
            Field::Mod {
                kind,
                allowed,
                optional,
            } => {
                let codes: Vec<u8> = (0..16u8).filter(|c| allowed & (1 << c) != 0).collect();
                if optional && seed % 3 == 0 {
                    continue;
                }
                assert!(mods.set(kind, codes[(seed as usize / 3) % codes.len()]));
            }
            Field::Operand { kind, .. } => operands.push(match kind {
                OperandKind::Reg => Operand::Reg((seed % 128) as u8),
                OperandKind::Pred => Operand::Pred((seed % 16) as u8),
                OperandKind::RegOrImm if seed & 1 == 0 => Operand::Reg(((seed >> 1) % 128) as u8),
                OperandKind::RegOrImm => Operand::Imm16((seed >> 1) as u16),
                OperandKind::Mem => Operand::Mem {
                    base: (seed & 1 == 1).then_some(((seed >> 1) % 128) as u8),
                    offset: (seed >> 8) as i16,
                },
                OperandKind::MovSrc => match seed % 4 {
                    0 => Operand::Reg(((seed >> 2) % 128) as u8),
                    1 => Operand::Imm32((seed >> 2) as u32),
                    2 => Operand::Special(Special::ALL[(seed >> 2) as usize % Special::ALL.len()]),
                    _ if seed & 4 == 0 => {
                        Operand::Symbol(SymbolRef::Buffer(((seed >> 3) % 0x8000) as u16))
                    }
                    _ => Operand::Symbol(SymbolRef::Shared(((seed >> 3) % 0x8000) as u16)),
                },
                OperandKind::Target => Operand::Target((seed % u64::from(MAX_TARGET + 1)) as u32),
            }),
            Field::Reconv => {
                reconv =
                    (seed & 1 == 1).then_some(((seed >> 1) % u64::from(MAX_TARGET + 1)) as u32);
            }
        }
    }
    let guard = match seeds[7] % 3 {
        0 => Guard::Always,
        1 => Guard::If((seeds[6] % 16) as u8),
        _ => Guard::IfNot((seeds[6] % 16) as u8),
    };
    let mut instr = Instr::new(op, guard, mods, &operands).expect("operand count matches the row");
    instr.reconv = reconv;
    instr
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn every_row_round_trips(row in 0..TABLE.len(), seeds in any::<[u64; 8]>()) {
        let instr = instr_from_seeds(row, &seeds);
        let word = instr.encode().expect("in-range fields encode");
        prop_assert_eq!(Instr::decode(word), Ok(instr));
        let used = instr.opcode.spec().used_bits();
        if used < 64 {
            prop_assert_eq!(word >> used, 0, "bits above the row's fields are zero");
        }
    }

    #[test]
    fn arbitrary_words_never_panic_and_canonical_ones_reencode(word in any::<u64>()) {
        if let Ok(instr) = Instr::decode(word) {
            prop_assert_eq!(instr.encode(), Ok(word));
        }
    }
}

#[test]
fn each_row_is_exercised_by_the_generator() {
    for (row, spec) in TABLE.iter().enumerate() {
        let instr = instr_from_seeds(
            row,
            &[(row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1; 8],
        );
        assert_eq!(
            Instr::decode(instr.encode().unwrap()).unwrap(),
            instr,
            "{}",
            spec.mnemonic
        );
    }
}

#[test]
fn zero_word_and_unknown_opcodes_are_rejected() {
    assert!(Instr::decode(0).is_err());
    assert!(Instr::decode(0xff).is_err());
}
