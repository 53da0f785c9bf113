//! A decoded instruction and its 64-bit encoding. Both directions walk the row's
//! field list from the ISA table, so they cannot disagree with it or each other.
//!
//! Word layout (bit 0 is the least significant): opcode in bits 0..8, guard in bits
//! 8..14 (enable, negate, 4-bit predicate), then the row's fields packed in order.
//! Unused high bits must be zero.

use crate::names::{AtomOp, Cmp, Half, Side, Space, Special, Ty};
use crate::table::{Field, HEADER_BITS, ModKind, Opcode, OperandKind, REG_BITS, TARGET_BITS};

/// Number of general registers a thread can address.
pub const MAX_REGS: u32 = 1 << REG_BITS;
/// Number of predicate registers a thread can address.
pub const MAX_PREDS: u32 = 1 << crate::table::PRED_BITS;
/// Largest code address.
pub const MAX_TARGET: u32 = (1 << TARGET_BITS) - 2;
/// Encoded "no reconvergence point" (an unconditional or uniform branch).
pub const NO_RECONV: u32 = (1 << TARGET_BITS) - 1;
/// Buffers, and separately shared arrays, an instruction can name.
pub const MAX_SYMBOLS: u16 = 0x8000;
/// Most operands any row has.
pub const MAX_OPERANDS: usize = 4;

/// Predicated execution: `@%p` or `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Guard {
    #[default]
    Always,
    If(u8),
    IfNot(u8),
}

/// A symbol whose address `mov` can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolRef {
    /// A global buffer, by declaration index.
    Buffer(u16),
    /// A shared array, by declaration index.
    Shared(u16),
}

/// An operand value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(u8),
    Pred(u8),
    /// A 16-bit immediate: sign-extended for `.s32`, zero-extended for `.u32`, the
    /// high half of the bit pattern for `.f32`.
    Imm16(u16),
    /// A 32-bit immediate bit pattern (`mov`).
    Imm32(u32),
    Special(Special),
    Symbol(SymbolRef),
    /// `[base+offset]`, byte address; `base` absent means `[offset]`.
    Mem {
        base: Option<u8>,
        offset: i16,
    },
    /// Instruction index.
    Target(u32),
}

impl Operand {
    /// The value of a 16-bit immediate as a 32-bit word of the given type.
    pub fn widen_imm16(raw: u16, ty: Ty) -> u32 {
        match ty {
            Ty::S32 => raw as i16 as i32 as u32,
            Ty::U32 => u32::from(raw),
            Ty::F32 => u32::from(raw) << 16,
        }
    }
}

/// Modifier values of an instruction (absent ones are `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mods {
    pub ty: Option<Ty>,
    pub src_ty: Option<Ty>,
    pub cmp: Option<Cmp>,
    pub space: Option<Space>,
    pub atom: Option<AtomOp>,
    pub half: Option<Half>,
    pub side: Option<Side>,
}

impl Mods {
    /// The code of a modifier kind, if present.
    pub fn get(&self, kind: ModKind) -> Option<u8> {
        match kind {
            ModKind::Type => self.ty.map(Ty::code),
            ModKind::SrcType => self.src_ty.map(Ty::code),
            ModKind::Cmp => self.cmp.map(Cmp::code),
            ModKind::Space => self.space.map(Space::code),
            ModKind::AtomOp => self.atom.map(AtomOp::code),
            ModKind::Half => self.half.map(Half::code),
            ModKind::Side => self.side.map(Side::code),
        }
    }

    /// Sets a modifier from its code; false if the code is not a value of the kind.
    pub fn set(&mut self, kind: ModKind, code: u8) -> bool {
        match kind {
            ModKind::Type => self.ty = Ty::from_code(code),
            ModKind::SrcType => self.src_ty = Ty::from_code(code),
            ModKind::Cmp => self.cmp = Cmp::from_code(code),
            ModKind::Space => self.space = Space::from_code(code),
            ModKind::AtomOp => self.atom = AtomOp::from_code(code),
            ModKind::Half => self.half = Half::from_code(code),
            ModKind::Side => self.side = Side::from_code(code),
        }
        self.get(kind).is_some()
    }
}

/// One instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Instr {
    pub opcode: Opcode,
    pub guard: Guard,
    pub mods: Mods,
    operands: [Operand; MAX_OPERANDS],
    operand_count: u8,
    /// Reconvergence point of a branch (`bra` only), or `None`.
    pub reconv: Option<u32>,
}

/// Why a word does not decode, or an instruction does not encode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodingError {
    #[error("unknown opcode {0:#04x}")]
    UnknownOpcode(u8),
    #[error("`{mnemonic}` has an invalid {what} code {code}")]
    BadModifier {
        mnemonic: &'static str,
        what: &'static str,
        code: u64,
    },
    #[error("`{mnemonic}` does not allow .{value}")]
    ModifierNotAllowed {
        mnemonic: &'static str,
        value: &'static str,
    },
    #[error("`{mnemonic}` needs a {what} modifier")]
    MissingModifier {
        mnemonic: &'static str,
        what: &'static str,
    },
    #[error("`{mnemonic}` has a malformed {what} operand")]
    BadOperand {
        mnemonic: &'static str,
        what: &'static str,
    },
    #[error("`{mnemonic}` has reserved bits set ({word:#018x})")]
    ReservedBits { mnemonic: &'static str, word: u64 },
    #[error("`{mnemonic}` takes {expected} operands, got {got}")]
    OperandCount {
        mnemonic: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("guard predicate %p{0} is out of range")]
    BadGuard(u8),
}

impl Instr {
    /// Builds an instruction; operands are given in source order.
    pub fn new(
        opcode: Opcode,
        guard: Guard,
        mods: Mods,
        operands: &[Operand],
    ) -> Result<Instr, EncodingError> {
        let spec = opcode.spec();
        if operands.len() != spec.operand_count() {
            return Err(EncodingError::OperandCount {
                mnemonic: spec.mnemonic,
                expected: spec.operand_count(),
                got: operands.len(),
            });
        }
        let mut ops = [Operand::Reg(0); MAX_OPERANDS];
        ops[..operands.len()].copy_from_slice(operands);
        Ok(Instr {
            opcode,
            guard,
            mods,
            operands: ops,
            operand_count: operands.len() as u8,
            reconv: None,
        })
    }

    /// The operands in source order.
    pub fn operands(&self) -> &[Operand] {
        &self.operands[..usize::from(self.operand_count)]
    }

    /// Mutable access to the operands (to patch branch targets).
    pub fn operands_mut(&mut self) -> &mut [Operand] {
        &mut self.operands[..usize::from(self.operand_count)]
    }

    /// The execution class of this form.
    pub fn exec_class(&self) -> crate::ExecClass {
        self.opcode
            .spec()
            .exec_class(self.mods.ty, self.mods.src_ty, self.mods.space)
    }

    /// Encodes into a 64-bit word, checking every field against the table.
    pub fn encode(&self) -> Result<u64, EncodingError> {
        let spec = self.opcode.spec();
        let mut w = BitWriter::new(u64::from(spec.opcode));
        w.put(
            match self.guard {
                Guard::Always => 0,
                Guard::If(p) if u32::from(p) < MAX_PREDS => 1 | (u64::from(p) << 2),
                Guard::IfNot(p) if u32::from(p) < MAX_PREDS => 0b11 | (u64::from(p) << 2),
                Guard::If(p) | Guard::IfNot(p) => return Err(EncodingError::BadGuard(p)),
            },
            HEADER_BITS - 8,
        );
        let mut operands = self.operands().iter();
        for field in spec.fields {
            match *field {
                Field::Mod {
                    kind,
                    allowed,
                    optional,
                } => {
                    let code = match (self.mods.get(kind), optional) {
                        (Some(c), _) => {
                            if allowed & (1 << c) == 0 {
                                return Err(EncodingError::ModifierNotAllowed {
                                    mnemonic: spec.mnemonic,
                                    value: kind.names()[usize::from(c)],
                                });
                            }
                            u64::from(c) + u64::from(optional)
                        }
                        (None, true) => 0,
                        (None, false) => {
                            return Err(EncodingError::MissingModifier {
                                mnemonic: spec.mnemonic,
                                what: kind.describe(),
                            });
                        }
                    };
                    w.put(code, kind.width());
                }
                Field::Operand { kind, .. } => {
                    let Some(op) = operands.next() else {
                        return Err(EncodingError::OperandCount {
                            mnemonic: spec.mnemonic,
                            expected: spec.operand_count(),
                            got: self.operands().len(),
                        });
                    };
                    let bits = encode_operand(kind, *op).ok_or(EncodingError::BadOperand {
                        mnemonic: spec.mnemonic,
                        what: kind.describe(),
                    })?;
                    w.put(bits, kind.width());
                }
                Field::Reconv => {
                    let r = self.reconv.unwrap_or(NO_RECONV);
                    if r > NO_RECONV {
                        return Err(EncodingError::BadOperand {
                            mnemonic: spec.mnemonic,
                            what: "reconvergence point",
                        });
                    }
                    w.put(u64::from(r), TARGET_BITS);
                }
            }
        }
        Ok(w.word)
    }

    /// Decodes a 64-bit word, rejecting anything the table does not allow.
    pub fn decode(word: u64) -> Result<Instr, EncodingError> {
        let byte = (word & 0xff) as u8;
        let opcode = Opcode::from_encoding(byte).ok_or(EncodingError::UnknownOpcode(byte))?;
        let spec = opcode.spec();
        let mut r = BitReader { word, pos: 8 };
        let g = r.take(HEADER_BITS - 8);
        let pred = (g >> 2) as u8;
        let guard = match g & 0b11 {
            0 if pred == 0 => Guard::Always,
            1 => Guard::If(pred),
            3 => Guard::IfNot(pred),
            _ => {
                return Err(EncodingError::ReservedBits {
                    mnemonic: spec.mnemonic,
                    word,
                });
            }
        };
        let mut mods = Mods::default();
        let mut ops = Vec::with_capacity(MAX_OPERANDS);
        let mut reconv = None;
        for field in spec.fields {
            match *field {
                Field::Mod {
                    kind,
                    allowed,
                    optional,
                } => {
                    let raw = r.take(kind.width());
                    let bad = || EncodingError::BadModifier {
                        mnemonic: spec.mnemonic,
                        what: kind.describe(),
                        code: raw,
                    };
                    if optional && raw == 0 {
                        continue;
                    }
                    let code = raw - u64::from(optional);
                    let code = u8::try_from(code).map_err(|_| bad())?;
                    if allowed & (1u16.checked_shl(u32::from(code)).unwrap_or(0)) == 0
                        || !mods.set(kind, code)
                    {
                        return Err(bad());
                    }
                }
                Field::Operand { kind, .. } => {
                    let raw = r.take(kind.width());
                    let op = decode_operand(kind, raw).ok_or(EncodingError::BadOperand {
                        mnemonic: spec.mnemonic,
                        what: kind.describe(),
                    })?;
                    ops.push(op);
                }
                Field::Reconv => {
                    let raw = r.take(TARGET_BITS) as u32;
                    reconv = (raw != NO_RECONV).then_some(raw);
                }
            }
        }
        if r.pos < 64 && word >> r.pos != 0 {
            return Err(EncodingError::ReservedBits {
                mnemonic: spec.mnemonic,
                word,
            });
        }
        let mut instr = Instr::new(opcode, guard, mods, &ops)?;
        instr.reconv = reconv;
        Ok(instr)
    }
}

fn encode_operand(kind: OperandKind, op: Operand) -> Option<u64> {
    let reg = |r: u8| (u32::from(r) < MAX_REGS).then_some(u64::from(r));
    match (kind, op) {
        (OperandKind::Reg, Operand::Reg(r)) => reg(r),
        (OperandKind::Pred, Operand::Pred(p)) => (u32::from(p) < MAX_PREDS).then_some(u64::from(p)),
        (OperandKind::RegOrImm, Operand::Reg(r)) => Some(reg(r)? << 1),
        (OperandKind::RegOrImm, Operand::Imm16(v)) => Some(1 | (u64::from(v) << 1)),
        (OperandKind::Mem, Operand::Mem { base, offset }) => {
            let b = match base {
                Some(r) => 1 | (reg(r)? << 1),
                None => 0,
            };
            Some(b | (u64::from(offset as u16) << (1 + REG_BITS)))
        }
        (OperandKind::MovSrc, Operand::Reg(r)) => Some(reg(r)? << 2),
        (OperandKind::MovSrc, Operand::Imm32(v)) => Some(1 | (u64::from(v) << 2)),
        (OperandKind::MovSrc, Operand::Special(s)) => Some(2 | (u64::from(s.code()) << 2)),
        (OperandKind::MovSrc, Operand::Symbol(sym)) => {
            let payload = match sym {
                SymbolRef::Buffer(i) if i < MAX_SYMBOLS => u64::from(i),
                SymbolRef::Shared(i) if i < MAX_SYMBOLS => u64::from(MAX_SYMBOLS | i),
                _ => return None,
            };
            Some(3 | (payload << 2))
        }
        (OperandKind::Target, Operand::Target(t)) => (t <= MAX_TARGET).then_some(u64::from(t)),
        _ => None,
    }
}

fn decode_operand(kind: OperandKind, raw: u64) -> Option<Operand> {
    let reg = |bits: u64| (bits < u64::from(MAX_REGS)).then_some(bits as u8);
    Some(match kind {
        OperandKind::Reg => Operand::Reg(reg(raw)?),
        OperandKind::Pred => Operand::Pred(raw as u8),
        OperandKind::RegOrImm => {
            if raw & 1 == 1 {
                Operand::Imm16((raw >> 1) as u16)
            } else {
                Operand::Reg(reg(raw >> 1)?)
            }
        }
        OperandKind::Mem => {
            let base = if raw & 1 == 1 {
                Some(reg((raw >> 1) & u64::from(MAX_REGS - 1))?)
            } else if (raw >> 1) & u64::from(MAX_REGS - 1) != 0 {
                return None;
            } else {
                None
            };
            Operand::Mem {
                base,
                offset: (raw >> (1 + REG_BITS)) as u16 as i16,
            }
        }
        OperandKind::MovSrc => {
            let payload = raw >> 2;
            match raw & 0b11 {
                0 => Operand::Reg(reg(payload)?),
                1 => Operand::Imm32(payload as u32),
                2 => Operand::Special(Special::from_code(u8::try_from(payload).ok()?)?),
                _ => {
                    let index = (payload & 0x7fff) as u16;
                    match payload >> 15 {
                        0 => Operand::Symbol(SymbolRef::Buffer(index)),
                        1 => Operand::Symbol(SymbolRef::Shared(index)),
                        _ => return None,
                    }
                }
            }
        }
        OperandKind::Target => {
            let t = raw as u32;
            (t <= MAX_TARGET).then_some(Operand::Target(t))?
        }
    })
}

struct BitWriter {
    word: u64,
    pos: u32,
}

impl BitWriter {
    fn new(opcode: u64) -> Self {
        BitWriter {
            word: opcode,
            pos: 8,
        }
    }

    fn put(&mut self, value: u64, width: u32) {
        debug_assert!(
            width == 64 || value >> width == 0,
            "field value overflows its width"
        );
        self.word |= value << self.pos;
        self.pos += width;
    }
}

struct BitReader {
    word: u64,
    pos: u32,
}

impl BitReader {
    fn take(&mut self, width: u32) -> u64 {
        let v = (self.word >> self.pos) & ((1u64 << width) - 1);
        self.pos += width;
        v
    }
}
