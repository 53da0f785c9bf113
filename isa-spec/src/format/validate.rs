//! Cross-checks of a decoded module: every word decodes, every register, symbol and
//! branch target it names exists, the tables agree in length, and names and
//! precondition messages are text a terminal shows as it is.

use super::{FormatError, Init, MAX_SEED, Module};
use crate::instr::{Instr, Operand, SymbolRef};

/// Largest alignment a shared array may ask for.
pub const MAX_SHARED_ALIGN: u32 = 4096;

/// Checks the invariants the loader and the disassembler rely on.
pub fn check(m: &Module) -> Result<(), FormatError> {
    let invalid = |pc: usize, what: String| FormatError::BadInstruction { pc, what };
    check_names(m)?;
    let regs = m.general_reg_count();
    let preds = m.pred_reg_count();
    if regs > crate::MAX_REGS || preds > crate::MAX_PREDS {
        return Err(FormatError::Invalid(format!(
            "{regs} registers and {preds} predicates declared (at most {} and {})",
            crate::MAX_REGS,
            crate::MAX_PREDS
        )));
    }
    if let Some(p) = m
        .params
        .iter()
        .find(|p| p.ty.bits() < 64 && p.default.is_some_and(|d| d >> 32 != 0))
    {
        return Err(FormatError::Invalid(format!(
            "parameter `{}` is .{} but its default {:#x} is wider than 32 bits",
            p.name,
            p.ty,
            p.default.unwrap_or_default()
        )));
    }
    if m.lines.locs.len() != m.code.len() {
        return Err(FormatError::Invalid(format!(
            "line table has {} entries for {} instructions",
            m.lines.locs.len(),
            m.code.len()
        )));
    }
    if let Some(e) = m.iu_entry
        && e as usize >= m.code.len()
    {
        return Err(FormatError::Invalid(format!(
            "IU entry {e} is outside the code"
        )));
    }
    if let Some(s) = m
        .shared
        .iter()
        .find(|s| s.align != 0 && (!s.align.is_power_of_two() || s.align > MAX_SHARED_ALIGN))
    {
        return Err(FormatError::Invalid(format!(
            "shared array `{}` has alignment {} (expected a power of two up to {MAX_SHARED_ALIGN})",
            s.name, s.align
        )));
    }
    if let Some((b, seed)) = m.buffers.iter().find_map(|b| match b.init {
        Init::Random { seed, .. } if seed > MAX_SEED => Some((b, seed)),
        _ => None,
    }) {
        return Err(FormatError::Invalid(format!(
            "buffer `{}` has random seed {seed} (at most {MAX_SEED}, 2^53)",
            b.name
        )));
    }
    // The assembler writes finite numbers only; a NaN or infinity could not be
    // written back as source (`spu-asm -d`), and no buffer can hold one.
    if let Some((b, what, v)) = m.buffers.iter().find_map(|b| {
        let values = match b.init {
            Init::Const(v) => vec![("const", v)],
            Init::Ramp { start, step } => vec![("ramp start", start), ("ramp step", step)],
            Init::Random { lo, hi, .. } => vec![("random lo", lo), ("random hi", hi)],
            _ => vec![],
        };
        values
            .into_iter()
            .find(|(_, v)| !v.is_finite())
            .map(|(what, v)| (b, what, v))
    }) {
        return Err(FormatError::Invalid(format!(
            "buffer `{}` has {what} {v} (initialisers are finite numbers)",
            b.name
        )));
    }
    check_debug(m)?;
    let len = m.code.len() as u32;
    for (pc, word) in m.code.iter().enumerate() {
        let instr = Instr::decode(*word).map_err(|e| invalid(pc, e.to_string()))?;
        match instr.guard {
            crate::Guard::If(p) | crate::Guard::IfNot(p) if u32::from(p) >= preds => {
                return Err(invalid(pc, format!("guard uses undeclared predicate #{p}")));
            }
            _ => {}
        }
        if let Some(r) = instr.reconv
            && r > len
        {
            return Err(invalid(
                pc,
                format!("reconvergence point {r} is outside the code"),
            ));
        }
        for (i, op) in instr.operands().iter().enumerate() {
            let ok = match *op {
                Operand::Reg(r) => u32::from(r) + u32::from(instr.operand_regs(i)) <= regs,
                Operand::Mem {
                    base: Some(r),
                    wide,
                    ..
                } => u32::from(r) + u32::from(wide) < regs,
                Operand::Pred(p) | Operand::PredNot(p) => u32::from(p) < preds,
                Operand::Target(t) => t < len,
                Operand::Symbol {
                    sym: SymbolRef::Buffer(i),
                    ..
                } => usize::from(i) < m.buffers.len(),
                Operand::Symbol {
                    sym: SymbolRef::Shared(i),
                    ..
                } => usize::from(i) < m.shared.len(),
                _ => true,
            };
            if !ok {
                return Err(invalid(
                    pc,
                    format!("operand {op:?} names something not declared"),
                ));
            }
        }
    }
    Ok(())
}

/// Debug information covers the code, names what it stores and names registers
/// that exist.
fn check_debug(m: &Module) -> Result<(), FormatError> {
    let d = &m.debug;
    if d.is_empty() {
        return Ok(());
    }
    if d.instrs.len() != m.code.len() {
        return Err(FormatError::Invalid(format!(
            "debug information has {} entries for {} instructions",
            d.instrs.len(),
            m.code.len()
        )));
    }
    // Identifiers only: a listing writes them into a `.loc` string, space-separated.
    let identifier = |n: &String| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'))
    };
    if let Some(n) = d.names.iter().find(|n| !identifier(n)) {
        return Err(FormatError::Invalid(format!(
            "register name `{}` is not an identifier (letters, digits, `_`, `$`, `.`)",
            spu_io::quote::shorten(n)
        )));
    }
    let regs = m.general_reg_count().max(m.pred_reg_count());
    for (pc, i) in d.instrs.iter().enumerate() {
        if let Some(r) = i
            .regs
            .iter()
            .find(|r| r.name as usize >= d.names.len() || u32::from(r.reg) >= regs)
        {
            return Err(FormatError::BadInstruction {
                pc,
                what: format!(
                    "debug information names register #{} as name #{} ({} registers, {} names)",
                    r.reg,
                    r.name,
                    regs,
                    d.names.len()
                ),
            });
        }
    }
    Ok(())
}

/// Names are identifiers in the source, so a name with a control or invisible
/// character (which tools would print) comes from a damaged or forged binary.
fn check_names(m: &Module) -> Result<(), FormatError> {
    let names = std::iter::once(("kernel", &m.name))
        .chain(m.regs.iter().map(|r| ("register", &r.name)))
        .chain(m.params.iter().map(|p| ("parameter", &p.name)))
        .chain(m.buffers.iter().map(|b| ("buffer", &b.name)))
        .chain(m.shared.iter().map(|s| ("shared array", &s.name)))
        .chain(m.labels.iter().map(|l| ("label", &l.name)));
    for (what, name) in names {
        if name.chars().any(spu_io::quote::is_hidden) {
            return Err(FormatError::Invalid(format!(
                "{what} name `{}` has control or invisible characters",
                spu_io::quote::shorten(name)
            )));
        }
    }
    // A message is written back by the disassembler between quotes, as the
    // assembler reads it: no quote, nothing hidden.
    for a in &m.preconditions {
        if a.message
            .chars()
            .any(|c| c == '"' || spu_io::quote::is_hidden(c))
        {
            return Err(FormatError::Invalid(format!(
                "precondition message `{}` has a quote, control or invisible characters",
                spu_io::quote::shorten(&a.message)
            )));
        }
    }
    Ok(())
}
