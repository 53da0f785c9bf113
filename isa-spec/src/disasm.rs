//! Instruction text in source syntax, derived from the table's field order. Used by
//! the disassembler, run-time error messages and traces, so all print alike.

use crate::instr::{Guard, Instr, Operand, SymbolRef};
use crate::names::{Space, Ty};
use crate::table::{Field, ModKind, OperandTy};

/// Resolves numbers in an instruction to source names.
pub trait Names {
    /// Name of general register `index`, without `%`.
    fn reg(&self, index: u8) -> String;
    /// Name of predicate register `index`, without `%`.
    fn pred(&self, index: u8) -> String;
    /// Name of the label at instruction `pc`.
    fn label(&self, pc: u32) -> String;
    /// Name of a buffer or shared array.
    fn symbol(&self, sym: SymbolRef) -> String;
    /// Name of the parameter at byte offset `offset` of the parameter space.
    fn param_at(&self, offset: i16) -> Option<String>;
}

/// Plain numeric names (`%r3`, `%p1`, `L12`), for contexts without a module.
#[derive(Debug, Clone, Copy, Default)]
pub struct NumericNames;

impl Names for NumericNames {
    fn reg(&self, index: u8) -> String {
        format!("r{index}")
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

/// A 32-bit value of a type in source syntax.
pub fn format_value(bits: u32, ty: Ty) -> String {
    match ty {
        Ty::U32 => bits.to_string(),
        Ty::S32 => (bits as i32).to_string(),
        Ty::F32 => format_f32(f32::from_bits(bits)),
    }
}

/// The whole instruction, e.g. `@!%p1 ld.global.f32 %f1, [%r2+4];`.
pub fn format_instr(instr: &Instr, names: &dyn Names) -> String {
    let spec = instr.opcode.spec();
    let mut s = match instr.guard {
        Guard::Always => String::new(),
        Guard::If(p) => format!("@%{} ", names.pred(p)),
        Guard::IfNot(p) => format!("@!%{} ", names.pred(p)),
    };
    s.push_str(&full_mnemonic(instr));
    let types = |t: OperandTy| match t {
        OperandTy::Main => instr.mods.ty,
        OperandTy::Src => instr.mods.src_ty,
        OperandTy::U32 => Some(Ty::U32),
        OperandTy::Pred | OperandTy::None => None,
    };
    let mut first = true;
    for ((_, _, ty, _), op) in spec.operands().zip(instr.operands()) {
        s.push_str(if first { " " } else { ", " });
        first = false;
        let ty = types(ty).unwrap_or(Ty::U32);
        match *op {
            Operand::Reg(r) => s.push_str(&format!("%{}", names.reg(r))),
            Operand::Pred(p) => s.push_str(&format!("%{}", names.pred(p))),
            Operand::Imm16(v) => s.push_str(&format_value(Operand::widen_imm16(v, ty), ty)),
            Operand::Imm32(v) => s.push_str(&format_value(v, ty)),
            Operand::Special(sp) => s.push_str(&format!("%{sp}")),
            Operand::Symbol(sym) => s.push_str(&names.symbol(sym)),
            Operand::Target(t) => s.push_str(&names.label(t)),
            Operand::Mem { base, offset } => {
                let param = (instr.mods.space == Some(Space::Param) && base.is_none())
                    .then(|| names.param_at(offset))
                    .flatten();
                match (base, param) {
                    (_, Some(name)) => s.push_str(&format!("[{name}]")),
                    (None, None) => s.push_str(&format!("[{offset}]")),
                    (Some(b), None) if offset == 0 => s.push_str(&format!("[%{}]", names.reg(b))),
                    (Some(b), None) if offset < 0 => {
                        s.push_str(&format!("[%{}-{}]", names.reg(b), -i32::from(offset)))
                    }
                    (Some(b), None) => s.push_str(&format!("[%{}+{offset}]", names.reg(b))),
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
