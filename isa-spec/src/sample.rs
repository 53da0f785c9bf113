//! Instructions built from random seeds, for property tests and fuzzing: every row,
//! every valid modifier combination, operands in range and aligned, and immediates in
//! the canonical form the assembler writes (so text round trips are exact).

use crate::instr::{
    Guard, Instr, MAX_SYMBOLS, MAX_TARGET, Operand, SYMBOL_OFFSET_RANGE, SymbolRef, operand_regs,
};
use crate::mods::Mods;
use crate::names::{Special, Ty};
use crate::table::{Field, Opcode, OperandKind};

/// A `mov` immediate as the assembler writes it for the type: types narrower than 32
/// bits keep the extension of their low bits.
fn canonical_imm32(raw: u32, ty: Option<Ty>) -> u32 {
    match ty {
        Some(t) if t.bits() < 32 => {
            let shift = 32 - t.bits();
            if t.is_signed() {
                (((raw << shift) as i32) >> shift) as u32
            } else {
                (raw << shift) >> shift
            }
        }
        _ => raw,
    }
}

/// Modifiers of row `row` chosen from `seed`, retried until the row's rules hold.
pub fn mods_from_seed(row: usize, seed: u64) -> Mods {
    let spec = Opcode::from_index(row).expect("row index in range").spec();
    let mut state = seed | 1;
    for _ in 0..256 {
        let mut mods = Mods::default();
        for (kind, allowed, optional) in spec.modifiers() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = state >> 33;
            let codes: Vec<u8> = (0..32u8).filter(|c| allowed & (1 << c) != 0).collect();
            if optional && pick % 3 == 0 {
                continue;
            }
            assert!(mods.set(kind, codes[(pick as usize / 3) % codes.len()]));
        }
        if spec.check_rules(&mods).is_ok() {
            return mods;
        }
    }
    // Every row has a valid form with only its required modifiers set minimally.
    let mut mods = Mods::default();
    for (kind, allowed, optional) in spec.modifiers() {
        if !optional {
            mods.set(kind, allowed.trailing_zeros() as u8);
        }
    }
    mods
}

/// Builds an instruction of row `row` whose field values come from `seeds`.
pub fn instr_from_seeds(row: usize, seeds: &[u64; 8]) -> Instr {
    let op = Opcode::from_index(row).expect("row index in range");
    let spec = op.spec();
    let mods = mods_from_seed(row, seeds[0]);
    let mut operands = Vec::new();
    let mut reconv = None;
    let mut k = 0;
    for (i, field) in spec.fields.iter().enumerate() {
        let seed = seeds[i % 8].rotate_left(i as u32 * 7);
        match *field {
            Field::Mod { .. } => {}
            Field::Operand { kind, ty, .. } => {
                let regs = u64::from(operand_regs(ty, &mods));
                // Registers aligned to the operand's size.
                let reg = |s: u64| ((s % (128 / regs)) * regs) as u8;
                operands.push(match kind {
                    OperandKind::Reg => Operand::Reg(reg(seed)),
                    OperandKind::Pred => Operand::Pred((seed % 16) as u8),
                    OperandKind::PredNeg if seed & 1 == 0 => Operand::Pred((seed >> 1) as u8 % 16),
                    OperandKind::PredNeg => Operand::PredNot((seed >> 1) as u8 % 16),
                    OperandKind::OptPred if seed & 1 == 0 => Operand::Absent,
                    OperandKind::OptPred => Operand::Pred((seed >> 1) as u8 % 16),
                    OperandKind::RegOrImm
                    | OperandKind::RegOrSmall
                    | OperandKind::ShflC
                    | OperandKind::Mask
                        if seed & 1 == 0 =>
                    {
                        Operand::Reg(reg(seed >> 1))
                    }
                    OperandKind::RegOrImm => Operand::Imm16((seed >> 1) as u16),
                    OperandKind::RegOrSmall | OperandKind::Imm8 => {
                        Operand::Imm((seed >> 1) as u32 & 0xff)
                    }
                    OperandKind::ShflC => Operand::Imm((seed >> 1) as u32 & 0x1f1f),
                    OperandKind::Mask => Operand::Imm(u32::MAX),
                    OperandKind::Mem => {
                        let wide = seed & 2 != 0;
                        Operand::Mem {
                            base: (seed & 1 == 1).then_some(((seed >> 2) % 64) as u8 * 2),
                            wide: wide && seed & 1 == 1,
                            offset: (seed >> 8) as i16,
                        }
                    }
                    OperandKind::MovSrc => match seed % 5 {
                        0 => Operand::Reg(reg(seed >> 3)),
                        1 => Operand::Imm32(canonical_imm32((seed >> 3) as u32, mods.ty)),
                        2 if mods.ty.is_some_and(|t| t.is_int() && t.bits() == 32) => {
                            Operand::Special(
                                Special::ALL[(seed >> 3) as usize % Special::ALL.len()],
                            )
                        }
                        2 => Operand::Reg(reg(seed >> 3)),
                        _ if mods.ty.is_some_and(|t| t.is_float() || t.bits() < 32) => {
                            Operand::Imm32(canonical_imm32((seed >> 3) as u32, mods.ty))
                        }
                        tag => {
                            let index = ((seed >> 3) % u64::from(MAX_SYMBOLS)) as u16;
                            let span =
                                (SYMBOL_OFFSET_RANGE.end() - SYMBOL_OFFSET_RANGE.start()) as u64;
                            let offset = SYMBOL_OFFSET_RANGE.start() + ((seed >> 20) % span) as i32;
                            let sym = if tag == 3 {
                                SymbolRef::Buffer(index)
                            } else {
                                SymbolRef::Shared(index)
                            };
                            Operand::Symbol { sym, offset }
                        }
                    },
                    OperandKind::Target => {
                        Operand::Target((seed % u64::from(MAX_TARGET + 1)) as u32)
                    }
                });
                k += 1;
            }
            Field::Reconv => {
                reconv =
                    (seed & 1 == 1).then_some(((seed >> 1) % u64::from(MAX_TARGET + 1)) as u32);
            }
        }
    }
    debug_assert_eq!(k, spec.operand_count());
    let guard = match seeds[7] % 3 {
        0 => Guard::Always,
        1 => Guard::If((seeds[6] % 16) as u8),
        _ => Guard::IfNot((seeds[6] % 16) as u8),
    };
    let mut instr = Instr::new(op, guard, mods, &operands).expect("operand count matches the row");
    instr.reconv = reconv;
    instr
}
