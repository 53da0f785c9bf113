//! Instruction text in source syntax, derived from the table's field order. Used by
//! the disassembler, run-time error messages and traces, so all print alike.

use crate::format::GUARD_SLOT;
use crate::instr::{Guard, Instr, Operand, SymbolRef, operand_regs, operand_type};
use crate::names::{Space, Ty};
use crate::table::{Field, ModKind, OperandKind};

/// Resolves numbers in an instruction to source names.
pub trait Names {
    /// Name of the value spanning `regs` registers from general register `index`
    /// (1: a 32-bit register, 2: a 64-bit pair), without `%`.
    fn reg(&self, index: u8, regs: u8) -> String;
    /// Name of predicate register `index`, without `%`.
    fn pred(&self, index: u8) -> String;
    /// Name of the label at instruction `pc`.
    fn label(&self, pc: u32) -> String;
    /// Name of a buffer or shared array.
    fn symbol(&self, sym: SymbolRef) -> String;
    /// Name of the parameter at byte offset `offset` of the parameter space.
    fn param_at(&self, offset: i16) -> Option<String>;
    /// Name of general register `index` (spanning `regs`) as operand `slot` of the
    /// instruction being printed names it (see [`GUARD_SLOT`]): where code's
    /// registers were allocated, one register holds different values over the code.
    fn operand_reg(&self, slot: u8, index: u8, regs: u8) -> String {
        let _ = slot;
        self.reg(index, regs)
    }
    /// Name of predicate `index` as operand `slot` (or the guard) names it.
    fn operand_pred(&self, slot: u8, index: u8) -> String {
        let _ = slot;
        self.pred(index)
    }
}

/// One register an instruction names, in the order [`format_instr`] prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedReg {
    /// Operand index in the row, or [`GUARD_SLOT`].
    pub slot: u8,
    /// The register (for a vector, one element's first register) or predicate.
    pub reg: u8,
    /// Registers it spans (a predicate: 1).
    pub regs: u8,
    pub pred: bool,
}

/// The registers and predicates an instruction names, in printing order: the guard,
/// then each operand's (a vector's elements in order, a memory operand's base).
pub fn named_regs(instr: &Instr) -> Vec<NamedReg> {
    let mut out = Vec::new();
    let pred = |slot: u8, reg: u8| NamedReg {
        slot,
        reg,
        regs: 1,
        pred: true,
    };
    if let Guard::If(p) | Guard::IfNot(p) = instr.guard {
        out.push(pred(GUARD_SLOT, p));
    }
    let spec = instr.opcode.spec();
    for (k, ((_, _, oty, _), op)) in spec.operands().zip(instr.operands()).enumerate() {
        let slot = k as u8;
        match *op {
            Operand::Reg(r) => {
                let ty = operand_type(oty, &instr.mods).unwrap_or(Ty::U32);
                let regs = operand_regs(oty, &instr.mods);
                let elem = ty.regs().min(regs);
                for e in 0..regs / elem {
                    out.push(NamedReg {
                        slot,
                        reg: r.wrapping_add(e * elem),
                        regs: elem,
                        pred: false,
                    });
                }
            }
            Operand::Pred(p) | Operand::PredNot(p) => out.push(pred(slot, p)),
            Operand::Mem {
                base: Some(b),
                wide,
                ..
            } => out.push(NamedReg {
                slot,
                reg: b,
                regs: if wide { 2 } else { 1 },
                pred: false,
            }),
            _ => {}
        }
    }
    out
}

/// Plain numeric names (`%r3`, `%rd4` for the pair starting at register 4, `%p1`,
/// `L12`), for contexts without a module.
#[derive(Debug, Clone, Copy, Default)]
pub struct NumericNames;

impl Names for NumericNames {
    fn reg(&self, index: u8, regs: u8) -> String {
        if regs == 2 {
            format!("rd{index}")
        } else {
            format!("r{index}")
        }
    }
    fn pred(&self, index: u8) -> String {
        format!("p{index}")
    }
    fn label(&self, pc: u32) -> String {
        format!("L{pc}")
    }
    fn symbol(&self, sym: SymbolRef) -> String {
        match sym {
            SymbolRef::Buffer(i) => format!("buffer{i}"),
            SymbolRef::Shared(i) => format!("shared{i}"),
        }
    }
    fn param_at(&self, _offset: i16) -> Option<String> {
        None
    }
}

/// The mnemonic with its modifiers, e.g. `setp.lt.s32`.
pub fn full_mnemonic(instr: &Instr) -> String {
    let spec = instr.opcode.spec();
    let mut s = spec.mnemonic.to_string();
    for field in spec.fields {
        if let Field::Mod { kind, .. } = field
            && let Some(code) = instr.mods.get(*kind)
        {
            s.push('.');
            s.push_str(kind.names()[usize::from(code)]);
        }
    }
    s
}

/// A float in a form the assembler reads back to the same bits.
pub fn format_f32(value: f32) -> String {
    if value.is_finite() && !(value == 0.0 && value.is_sign_negative()) {
        format!("{value:?}")
    } else {
        format!("0f{:08X}", value.to_bits())
    }
}

/// A double in a form the assembler reads back to the same bits.
pub fn format_f64(value: f64) -> String {
    if value.is_finite() && !(value == 0.0 && value.is_sign_negative()) {
        format!("{value:?}")
    } else {
        format!("0d{:016X}", value.to_bits())
    }
}

/// A value of a type in source syntax, from its bit pattern (the low bits for types
/// narrower than 64).
pub fn format_value(bits: u64, ty: Ty) -> String {
    match ty {
        Ty::F32 => format_f32(f32::from_bits(bits as u32)),
        Ty::F64 => format_f64(f64::from_bits(bits)),
        t if t.is_signed() => {
            let shift = 64 - t.bits();
            (((bits << shift) as i64) >> shift).to_string()
        }
        t => {
            let shift = 64 - t.bits();
            ((bits << shift) >> shift).to_string()
        }
    }
}

/// A register operand: `%r1`, or `{%r4, %r5}` for a vector.
fn register_text(names: &dyn Names, slot: u8, r: u8, elem_regs: u8, count: u8) -> String {
    if count == 1 {
        return format!("%{}", names.operand_reg(slot, r, elem_regs));
    }
    let parts: Vec<String> = (0..count)
        .map(|k| format!("%{}", names.operand_reg(slot, r + k * elem_regs, elem_regs)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The whole instruction, e.g. `@!%p1 ld.global.f32 %f1, [%r2+4];`.
pub fn format_instr(instr: &Instr, names: &dyn Names) -> String {
    let spec = instr.opcode.spec();
    let mut s = match instr.guard {
        Guard::Always => String::new(),
        Guard::If(p) => format!("@%{} ", names.operand_pred(GUARD_SLOT, p)),
        Guard::IfNot(p) => format!("@!%{} ", names.operand_pred(GUARD_SLOT, p)),
    };
    s.push_str(&full_mnemonic(instr));
    let mut first = true;
    for (k, ((_, kind, oty, _), op)) in spec.operands().zip(instr.operands()).enumerate() {
        let slot = k as u8;
        let ty = operand_type(oty, &instr.mods).unwrap_or(Ty::U32);
        if kind == OperandKind::OptPred {
            // `d|p`: printed after the destination, without a comma.
            if let Operand::Pred(p) = *op {
                s.push_str(&format!("|%{}", names.operand_pred(slot, p)));
            }
            continue;
        }
        s.push_str(if first { " " } else { ", " });
        first = false;
        match *op {
            Operand::Reg(r) => {
                let regs = operand_regs(oty, &instr.mods);
                let elem = ty.regs().min(regs);
                s.push_str(&register_text(names, slot, r, elem, regs / elem));
            }
            Operand::Pred(p) => s.push_str(&format!("%{}", names.operand_pred(slot, p))),
            Operand::PredNot(p) => s.push_str(&format!("!%{}", names.operand_pred(slot, p))),
            Operand::Absent => {}
            Operand::Imm16(v) => s.push_str(&format_value(Operand::widen_imm16(v, ty), ty)),
            Operand::Imm(u32::MAX) if kind == OperandKind::Mask => s.push_str("-1"),
            Operand::Imm(v) if kind == OperandKind::Imm8 || kind == OperandKind::ShflC => {
                s.push_str(&format!("{v:#x}"))
            }
            Operand::Imm(v) => s.push_str(&v.to_string()),
            Operand::Imm32(v) => s.push_str(&format_value(Operand::widen_imm32(v, ty), ty)),
            Operand::Special(sp) => s.push_str(&format!("%{sp}")),
            Operand::Symbol { sym, offset } => {
                s.push_str(&names.symbol(sym));
                if offset > 0 {
                    s.push_str(&format!("+{offset}"));
                } else if offset < 0 {
                    s.push_str(&format!("-{}", -i64::from(offset)));
                }
            }
            Operand::Target(t) => s.push_str(&names.label(t)),
            Operand::Mem { base, wide, offset } => {
                let param = (instr.mods.space == Some(Space::Param) && base.is_none())
                    .then(|| names.param_at(offset))
                    .flatten();
                let regs = if wide { 2 } else { 1 };
                match (base, param) {
                    (_, Some(name)) => s.push_str(&format!("[{name}]")),
                    (None, None) => s.push_str(&format!("[{offset}]")),
                    (Some(b), None) if offset == 0 => {
                        s.push_str(&format!("[%{}]", names.operand_reg(slot, b, regs)))
                    }
                    (Some(b), None) if offset < 0 => s.push_str(&format!(
                        "[%{}-{}]",
                        names.operand_reg(slot, b, regs),
                        -i32::from(offset)
                    )),
                    (Some(b), None) => {
                        s.push_str(&format!("[%{}+{offset}]", names.operand_reg(slot, b, regs)))
                    }
                }
            }
        }
    }
    s.push(';');
    s
}

/// The modifier kinds an instruction prints, for tools that colour them.
pub fn modifier_kinds(instr: &Instr) -> impl Iterator<Item = ModKind> + '_ {
    instr
        .opcode
        .spec()
        .modifiers()
        .map(|(k, _, _)| k)
        .filter(|k| instr.mods.get(*k).is_some())
}
