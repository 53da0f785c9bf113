//! A decoded instruction and its 64-bit encoding. Both directions walk the row's
//! field list from the ISA table, so they cannot disagree with it or each other.
//!
//! Word layout (bit 0 is the least significant): opcode in bits 0..8, guard in bits
//! 8..14 (enable, negate, 4-bit predicate), then the row's fields packed in order.
//! Unused high bits must be zero. 64-bit and vector register operands must start at
//! a register aligned to their size.

use crate::mods::Mods;
use crate::names::{Special, Ty};
use crate::table::{
    Field, HEADER_BITS, MAX_OPERANDS, Opcode, OperandKind, OperandTy, REG_BITS, TARGET_BITS,
};

/// Number of general registers a thread can address.
pub const MAX_REGS: u32 = 1 << REG_BITS;
/// Number of predicate registers a thread can address.
pub const MAX_PREDS: u32 = 1 << crate::table::PRED_BITS;
/// Largest code address.
pub const MAX_TARGET: u32 = (1 << TARGET_BITS) - 2;
/// Encoded "no reconvergence point" (an unconditional or uniform branch).
pub const NO_RECONV: u32 = (1 << TARGET_BITS) - 1;

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

/// Buffers, and separately shared arrays, an instruction can name (12 index bits).
pub const MAX_SYMBOLS: u16 = 1 << 12;
/// Range of the byte offset a `mov` adds to a symbol's address (20 signed bits).
pub const SYMBOL_OFFSET_RANGE: std::ops::RangeInclusive<i32> = -(1 << 19)..=(1 << 19) - 1;

/// An operand value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A general register; 64-bit and vector operands name the first register of
    /// their aligned group.
    Reg(u8),
    Pred(u8),
    /// A negated predicate `!%p`.
    PredNot(u8),
    /// An optional operand that is absent (`shfl.sync` without `|p`).
    Absent,
    /// A 16-bit immediate: sign-extended for signed types, zero-extended for unsigned
    /// and bit types, the high 16 bits of the bit pattern for floats.
    Imm16(u16),
    /// A small immediate (lane indices, bit positions, `lop3` tables, the `shfl`
    /// clamp/segment word, the full member mask).
    Imm(u32),
    /// A 32-bit immediate bit pattern (`mov`).
    Imm32(u32),
    Special(Special),
    /// The address of a symbol plus a byte offset.
    Symbol {
        sym: SymbolRef,
        offset: i32,
    },
    /// `[base+offset]`, byte address; `base` absent means `[offset]`; `wide` when the
    /// base is a 64-bit register pair (its high word must be zero).
    Mem {
        base: Option<u8>,
        wide: bool,
        offset: i16,
    },
    /// Instruction index.
    Target(u32),
}

impl Operand {
    /// The value of a 16-bit immediate as a 64-bit pattern of the given type.
    pub fn widen_imm16(raw: u16, ty: Ty) -> u64 {
        match ty {
            Ty::F32 => u64::from(raw) << 16,
            Ty::F64 => u64::from(raw) << 48,
            t if t.is_signed() => raw as i16 as i64 as u64,
            _ => u64::from(raw),
        }
    }

    /// The value of a `mov` 32-bit immediate as a 64-bit pattern of the given type:
    /// sign-extended for signed types, the high half of the pattern for `.f64`.
    pub fn widen_imm32(raw: u32, ty: Ty) -> u64 {
        match ty {
            Ty::F64 => u64::from(raw) << 32,
            t if t.is_signed() => raw as i32 as i64 as u64,
            _ => u64::from(raw),
        }
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
    #[error("`{mnemonic}`: {why}")]
    Rule { mnemonic: &'static str, why: String },
    #[error("`{mnemonic}` has a malformed {what} operand")]
    BadOperand {
        mnemonic: &'static str,
        what: &'static str,
    },
    #[error(
        "`{mnemonic}` operand `{operand}` spans {regs} registers and must start at a multiple of {regs} (it starts at %r{reg})"
    )]
    Misaligned {
        mnemonic: &'static str,
        operand: &'static str,
        regs: u8,
        reg: u8,
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

/// The type an operand has in a form with these modifiers (`None` for predicates,
/// labels and untyped immediates).
pub fn operand_type(ty: OperandTy, mods: &Mods) -> Option<Ty> {
    match ty {
        OperandTy::Main | OperandTy::MainVec => mods.ty,
        OperandTy::Wide => mods.ty.and_then(Ty::widened),
        OperandTy::Src => mods.src_ty,
        OperandTy::U32 | OperandTy::U32Low(_) => Some(Ty::U32),
        OperandTy::B32 => Some(Ty::B32),
        OperandTy::Pred | OperandTy::None => None,
    }
}

/// How many consecutive 32-bit registers an operand of this type spans in a form
/// with these modifiers: 1, 2 (a 64-bit value or `.v2` of 32-bit values) or 4.
pub fn operand_regs(ty: OperandTy, mods: &Mods) -> u8 {
    let base = operand_type(ty, mods).map_or(1, Ty::regs);
    match (ty, mods.vec) {
        (OperandTy::MainVec, Some(v)) => base * v.count(),
        _ => base,
    }
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

    /// Registers spanned by operand `i` (see [`operand_regs`]).
    pub fn operand_regs(&self, i: usize) -> u8 {
        self.opcode
            .spec()
            .operands()
            .nth(i)
            .map_or(1, |(_, _, ty, _)| operand_regs(ty, &self.mods))
    }

    /// Checks the modifier rules and the alignment of wide register operands.
    fn check(&self) -> Result<(), EncodingError> {
        let spec = self.opcode.spec();
        spec.check_rules(&self.mods)
            .map_err(|why| EncodingError::Rule {
                mnemonic: spec.mnemonic,
                why,
            })?;
        let int32 = self.mods.ty.is_some_and(|t| t.is_int() && t.bits() == 32);
        let address = self.mods.ty.is_some_and(|t| t.is_int() && t.bits() >= 32);
        for (i, ((name, _, _, _), op)) in spec.operands().zip(self.operands()).enumerate() {
            match *op {
                Operand::Special(_) if !int32 => {
                    return Err(EncodingError::Rule {
                        mnemonic: spec.mnemonic,
                        why: "special registers are read with a 32-bit integer type".into(),
                    });
                }
                Operand::Symbol { .. } if !address => {
                    return Err(EncodingError::Rule {
                        mnemonic: spec.mnemonic,
                        why: "addresses are read with a 32- or 64-bit integer type".into(),
                    });
                }
                Operand::Imm32(v) => {
                    if let Some(t) = self.mods.ty.filter(|t| t.bits() < 32) {
                        let shift = 32 - t.bits();
                        let canonical = if t.is_signed() {
                            (((v << shift) as i32) >> shift) as u32
                        } else {
                            (v << shift) >> shift
                        };
                        if canonical != v {
                            return Err(EncodingError::BadOperand {
                                mnemonic: spec.mnemonic,
                                what: "immediate wider than its type",
                            });
                        }
                    }
                }
                _ => {}
            }
            let regs = self.operand_regs(i);
            let reg = match *op {
                Operand::Reg(r) => r,
                Operand::Mem {
                    base: Some(r),
                    wide: true,
                    ..
                } if r % 2 != 0 => {
                    return Err(EncodingError::Misaligned {
                        mnemonic: spec.mnemonic,
                        operand: name,
                        regs: 2,
                        reg: r,
                    });
                }
                _ => continue,
            };
            if regs > 1 && (reg % regs != 0 || u32::from(reg) + u32::from(regs) > MAX_REGS) {
                return Err(EncodingError::Misaligned {
                    mnemonic: spec.mnemonic,
                    operand: name,
                    regs,
                    reg,
                });
            }
        }
        Ok(())
    }

    /// Encodes into a 64-bit word, checking every field against the table.
    pub fn encode(&self) -> Result<u64, EncodingError> {
        let spec = self.opcode.spec();
        self.check()?;
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
                    if field.width() > 0 {
                        w.put(code, field.width());
                    }
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
                    let raw = if field.width() == 0 {
                        u64::from(allowed.trailing_zeros())
                    } else {
                        r.take(field.width())
                    };
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
                    if allowed & (1u32.checked_shl(u32::from(code)).unwrap_or(0)) == 0
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
        instr.check()?;
        Ok(instr)
    }
}

/// Packs the `shfl.sync` `c` word (clamp in bits 0..5, segment mask in bits 8..13)
/// into its 10 immediate bits; `None` if other bits are set.
pub fn pack_shfl_c(c: u32) -> Option<u64> {
    (c & !0x1f1f == 0).then_some(u64::from((c & 0x1f) | ((c >> 8) & 0x1f) << 5))
}

fn encode_operand(kind: OperandKind, op: Operand) -> Option<u64> {
    let reg = |r: u8| (u32::from(r) < MAX_REGS).then_some(u64::from(r));
    let pred = |p: u8| (u32::from(p) < MAX_PREDS).then_some(u64::from(p));
    match (kind, op) {
        (OperandKind::Reg, Operand::Reg(r)) => reg(r),
        (OperandKind::Pred, Operand::Pred(p)) => pred(p),
        (OperandKind::PredNeg, Operand::Pred(p)) => Some(pred(p)? << 1),
        (OperandKind::PredNeg, Operand::PredNot(p)) => Some(1 | pred(p)? << 1),
        (OperandKind::OptPred, Operand::Absent) => Some(0),
        (OperandKind::OptPred, Operand::Pred(p)) => Some(1 | pred(p)? << 1),
        (
            OperandKind::RegOrImm
            | OperandKind::RegOrSmall
            | OperandKind::ShflC
            | OperandKind::Mask,
            Operand::Reg(r),
        ) => Some(reg(r)? << 1),
        (OperandKind::RegOrImm, Operand::Imm16(v)) => Some(1 | (u64::from(v) << 1)),
        (OperandKind::RegOrSmall, Operand::Imm(v)) if v <= 0xff => Some(1 | (u64::from(v) << 1)),
        (OperandKind::ShflC, Operand::Imm(v)) => Some(1 | pack_shfl_c(v)? << 1),
        (OperandKind::Mask, Operand::Imm(u32::MAX)) => Some(1),
        (OperandKind::Imm8, Operand::Imm(v)) if v <= 0xff => Some(u64::from(v)),
        (OperandKind::Mem, Operand::Mem { base, wide, offset }) => {
            let b = match base {
                Some(r) => 1 | (u64::from(wide) << 1) | (reg(r)? << 2),
                None if wide => return None,
                None => 0,
            };
            Some(b | (u64::from(offset as u16) << (2 + REG_BITS)))
        }
        (OperandKind::MovSrc, Operand::Reg(r)) => Some(reg(r)? << 3),
        (OperandKind::MovSrc, Operand::Imm32(v)) => Some(1 | (u64::from(v) << 3)),
        (OperandKind::MovSrc, Operand::Special(s)) => Some(2 | (u64::from(s.code()) << 3)),
        (OperandKind::MovSrc, Operand::Symbol { sym, offset }) => {
            let (tag, index) = match sym {
                SymbolRef::Buffer(i) => (3, i),
                SymbolRef::Shared(i) => (4, i),
            };
            if index >= MAX_SYMBOLS || !SYMBOL_OFFSET_RANGE.contains(&offset) {
                return None;
            }
            let payload = u64::from(index) | (u64::from(offset as u32 & 0xf_ffff) << 12);
            Some(tag | (payload << 3))
        }
        (OperandKind::Target, Operand::Target(t)) => (t <= MAX_TARGET).then_some(u64::from(t)),
        _ => None,
    }
}

fn decode_operand(kind: OperandKind, raw: u64) -> Option<Operand> {
    let reg = |bits: u64| (bits < u64::from(MAX_REGS)).then_some(bits as u8);
    let reg_or = |imm: fn(u64) -> Option<Operand>| {
        if raw & 1 == 1 {
            imm(raw >> 1)
        } else {
            Some(Operand::Reg(reg(raw >> 1)?))
        }
    };
    Some(match kind {
        OperandKind::Reg => Operand::Reg(reg(raw)?),
        OperandKind::Pred => Operand::Pred(raw as u8),
        OperandKind::PredNeg if raw & 1 == 1 => Operand::PredNot((raw >> 1) as u8),
        OperandKind::PredNeg => Operand::Pred((raw >> 1) as u8),
        OperandKind::OptPred if raw & 1 == 1 => Operand::Pred((raw >> 1) as u8),
        OperandKind::OptPred if raw == 0 => Operand::Absent,
        OperandKind::OptPred => return None,
        OperandKind::RegOrImm => reg_or(|v| Some(Operand::Imm16(v as u16)))?,
        OperandKind::RegOrSmall => reg_or(|v| Some(Operand::Imm(v as u32)))?,
        OperandKind::ShflC => reg_or(|v| {
            Some(Operand::Imm(
                (v & 0x1f) as u32 | ((v >> 5) as u32 & 0x1f) << 8,
            ))
        })?,
        OperandKind::Mask => reg_or(|v| (v == 0).then_some(Operand::Imm(u32::MAX)))?,
        OperandKind::Imm8 => Operand::Imm(raw as u32),
        OperandKind::Mem => {
            let reg_bits = (raw >> 2) & u64::from(MAX_REGS - 1);
            let wide = raw & 2 != 0;
            let base = if raw & 1 == 1 {
                Some(reg(reg_bits)?)
            } else if reg_bits != 0 || wide {
                return None;
            } else {
                None
            };
            Operand::Mem {
                base,
                wide,
                offset: (raw >> (2 + REG_BITS)) as u16 as i16,
            }
        }
        OperandKind::MovSrc => {
            let payload = raw >> 3;
            match raw & 0b111 {
                0 => Operand::Reg(reg(payload)?),
                1 => Operand::Imm32(payload as u32),
                2 => Operand::Special(Special::from_code(u8::try_from(payload).ok()?)?),
                tag @ (3 | 4) => {
                    let index = (payload & 0xfff) as u16;
                    // Sign-extend the 20-bit offset.
                    let offset = ((((payload >> 12) as u32) << 12) as i32) >> 12;
                    let sym = if tag == 3 {
                        SymbolRef::Buffer(index)
                    } else {
                        SymbolRef::Shared(index)
                    };
                    Operand::Symbol { sym, offset }
                }
                _ => return None,
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
