//! Prints a [`Module`] as `.spu` source that re-assembles to the same bytes: labels
//! from the symbol table, declarations from the metadata, `.file`/`.loc` lines that
//! carry the original line table and debug information (the source names of
//! allocated registers, the instructions the assembler added). Instruction text for
//! traces and messages names registers as the source did.

use spu_isa::disasm::{Names, format_instr, format_value};
use spu_isa::format::{Expr, Init, Module, RegTy};
use spu_isa::{Instr, SymbolRef};
use std::fmt::Write;

/// Names from a module's declarations and labels.
#[derive(Debug, Clone, Copy)]
pub struct ModuleNames<'a>(pub &'a Module);

impl Names for ModuleNames<'_> {
    fn reg(&self, index: u8, regs: u8) -> String {
        self.0
            .reg_name(index, regs, false)
            .unwrap_or_else(|| spu_isa::disasm::NumericNames.reg(index, regs))
    }
    fn pred(&self, index: u8) -> String {
        self.0
            .reg_name(index, 1, true)
            .unwrap_or_else(|| format!("p{index}"))
    }
    fn label(&self, pc: u32) -> String {
        self.0
            .labels
            .iter()
            .find(|l| l.pc == pc)
            .map_or_else(|| format!("L{pc}"), |l| l.name.clone())
    }
    fn symbol(&self, sym: SymbolRef) -> String {
        match sym {
            SymbolRef::Buffer(i) => self.0.buffers.get(usize::from(i)).map(|b| b.name.clone()),
            SymbolRef::Shared(i) => self.0.shared.get(usize::from(i)).map(|s| s.name.clone()),
        }
        .unwrap_or_else(|| "?".into())
    }
    /// `N` for the parameter at byte `offset`, `A+4` for the high word of a 64-bit
    /// one (see [`Module::param_layout`]).
    fn param_at(&self, offset: i16) -> Option<String> {
        let at = u32::try_from(offset).ok()?;
        let (offsets, _) = self.0.param_layout();
        let i = offsets.partition_point(|o| *o <= at).checked_sub(1)?;
        let p = &self.0.params[i];
        match at - offsets[i] {
            0 => Some(p.name.clone()),
            4 if p.ty.bits() == 64 => Some(format!("{}+4", p.name)),
            _ => None,
        }
    }
}

/// Names of instruction `pc` of a module: the source's names of its registers
/// where the module's debug information has them (allocated registers), the
/// declarations' otherwise.
#[derive(Debug, Clone, Copy)]
pub struct PcNames<'a> {
    pub module: &'a Module,
    pub pc: usize,
}

impl Names for PcNames<'_> {
    fn reg(&self, index: u8, regs: u8) -> String {
        ModuleNames(self.module).reg(index, regs)
    }
    fn pred(&self, index: u8) -> String {
        ModuleNames(self.module).pred(index)
    }
    fn label(&self, pc: u32) -> String {
        ModuleNames(self.module).label(pc)
    }
    fn symbol(&self, sym: SymbolRef) -> String {
        ModuleNames(self.module).symbol(sym)
    }
    fn param_at(&self, offset: i16) -> Option<String> {
        ModuleNames(self.module).param_at(offset)
    }
    fn operand_reg(&self, slot: u8, index: u8, regs: u8) -> String {
        match self.module.debug.reg_name(self.pc, slot, index) {
            Some(n) => n.to_string(),
            None => self.reg(index, regs),
        }
    }
    fn operand_pred(&self, slot: u8, index: u8) -> String {
        match self.module.debug.reg_name(self.pc, slot, index) {
            Some(n) => n.to_string(),
            None => self.pred(index),
        }
    }
}

/// The source text of instruction `pc` with the source's register names
/// (`ld.global.f32 %f0, [%i]`), or `None` if the word does not decode.
pub fn instr_text(m: &Module, pc: usize) -> Option<String> {
    let instr = Instr::decode(*m.code.get(pc)?).ok()?;
    Some(format_instr(&instr, &PcNames { module: m, pc }))
}

/// The source name of each register instruction `pc` writes, 32 bits at a time
/// (`rd3.lo`, `rd3.hi` for a 64-bit one, each element of a vector), then each
/// predicate: `(predicate?, register, name)`.
pub fn written_names(m: &Module, pc: usize) -> Vec<(bool, u8, String)> {
    let Some(instr) = m.code.get(pc).and_then(|w| Instr::decode(*w).ok()) else {
        return Vec::new();
    };
    let spec = instr.opcode.spec();
    let defs: Vec<u8> = spec
        .operands()
        .enumerate()
        .filter(|(_, o)| o.3 == spu_isa::table::Role::Def)
        .map(|(k, _)| k as u8)
        .collect();
    let names = PcNames { module: m, pc };
    let mut out = Vec::new();
    for r in spu_isa::disasm::named_regs(&instr) {
        if !defs.contains(&r.slot) || r.slot == spu_isa::format::GUARD_SLOT {
            continue;
        }
        if r.pred {
            out.push((true, r.reg, names.operand_pred(r.slot, r.reg)));
            continue;
        }
        let whole = names.operand_reg(r.slot, r.reg, r.regs);
        for k in 0..r.regs {
            let name = match (r.regs, k) {
                (1, _) => whole.clone(),
                (_, 0) => format!("{whole}.lo"),
                _ => format!("{whole}.hi"),
            };
            out.push((false, r.reg.wrapping_add(k), name));
        }
    }
    out
}

/// The `.loc` attribute carrying instruction `pc`'s debug information, if it has
/// any: `regs "f2 i tmp0"`, or `hidden "..."` for an instruction the assembler added.
fn listing_attr(m: &Module, pc: usize, instr: &Instr) -> Option<String> {
    let d = m.debug.instrs.get(pc)?;
    if d.regs.is_empty() && !d.hidden {
        return None;
    }
    let names: Vec<&str> = spu_isa::disasm::named_regs(instr)
        .iter()
        .map(|r| {
            m.debug
                .reg_name(pc, r.slot, r.reg)
                .unwrap_or(crate::lower::debuginfo::NO_NAME)
        })
        .collect();
    let key = if d.hidden { "hidden" } else { "regs" };
    Some(format!("{key} \"{}\"", names.join(" ")))
}

fn num(v: f64) -> String {
    format!("{v:?}")
}

/// A file name in a `.file` string: one line, without control characters.
fn quote(s: &str) -> String {
    spu_io::quote::escape(&s.replace('"', "'")).into_owned()
}

/// The files whose names a `.file` string cannot hold as they are (a `"` or a
/// control character), each with the name the listing gives instead: a kernel
/// re-assembled from the listing has a line table that names that file.
pub fn renamed_files(m: &Module) -> Vec<(usize, &str, String)> {
    m.lines
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let q = quote(f);
            (q != *f).then_some((i, f.as_str(), q))
        })
        .collect()
}

/// Options of the listing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Leave out `.file`/`.loc` (a cleaner listing that no longer keeps the line table).
    pub no_locations: bool,
}

/// The module as source text.
pub fn disassemble(m: &Module, options: Options) -> String {
    let names = ModuleNames(m);
    let pname = |i: u16| m.param_name(i);
    let expr = |e: &Expr| e.display(&pname).to_string();
    let mut s = String::new();
    if !options.no_locations {
        for (i, f) in m.lines.files.iter().enumerate() {
            let _ = writeln!(s, ".file {i} \"{}\";", quote(f));
        }
    }
    for p in &m.params {
        match p.default {
            Some(bits) => {
                let _ = writeln!(
                    s,
                    ".param .{} {} = {};",
                    p.ty,
                    p.name,
                    format_value(bits, p.ty)
                );
            }
            None => {
                let _ = writeln!(s, ".param .{} {};", p.ty, p.name);
            }
        }
    }
    for b in &m.buffers {
        let dims: String = b.dims.iter().map(|d| format!("[{}]", expr(d))).collect();
        let init = match b.init.clone() {
            Init::Zeros => "zeros".to_string(),
            Init::Const(v) => format!("const({})", num(v)),
            // The integer the bits are, signed or not as the type is.
            Init::ConstBits(bits) if b.ty.is_signed() => {
                let shift = 64 - b.ty.bits();
                format!("const({})", ((bits << shift) as i64) >> shift)
            }
            // A float's bits (an infinity or NaN).
            Init::ConstBits(bits) if b.ty == spu_isa::Ty::F32 => {
                format!("const(0f{:08X})", bits as u32)
            }
            Init::ConstBits(bits) if b.ty == spu_isa::Ty::F64 => format!("const(0d{bits:016X})"),
            Init::ConstBits(bits) => format!("const({bits})"),
            Init::Ramp { start, step } => format!("ramp({}, {})", num(start), num(step)),
            Init::Random { seed, lo, hi } => format!("random({seed}, {}, {})", num(lo), num(hi)),
            // Floats as their bit patterns (exact); integers signed or not as the type.
            Init::Values(values) => {
                let items: Vec<String> = values
                    .iter()
                    .map(|&bits| match b.ty {
                        spu_isa::Ty::F32 => format!("0f{:08X}", bits as u32),
                        spu_isa::Ty::F64 => format!("0d{bits:016X}"),
                        t if t.is_signed() => {
                            let shift = 64 - t.bits();
                            (((bits << shift) as i64) >> shift).to_string()
                        }
                        _ => bits.to_string(),
                    })
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        };
        let _ = writeln!(s, ".global .{} {}{dims} = {init};", b.ty, b.name);
    }
    let l = &m.launch;
    // A 2-D grid is written as before, so older listings stay the same.
    let grid_z = if l.grid[2] == spu_isa::format::Expr::constant(1) {
        String::new()
    } else {
        format!(", {}", expr(&l.grid[2]))
    };
    let _ = writeln!(
        s,
        ".launch grid({}, {}{grid_z}) block({}, {}, {}) iu({});",
        expr(&l.grid[0]),
        expr(&l.grid[1]),
        expr(&l.block[0]),
        expr(&l.block[1]),
        expr(&l.block[2]),
        expr(&l.iu_threads)
    );
    for a in &m.preconditions {
        // The reader refuses messages a source string cannot hold; escaped anyway.
        let message = spu_io::quote::escape(&a.message);
        let _ = writeln!(
            s,
            ".assert {}, \"{message}\";",
            a.display(&|i| m.param_name(i))
        );
    }
    for d in &m.dma {
        let buf = m
            .buffers
            .get(usize::from(d.buffer))
            .map_or("?", |b| b.name.as_str());
        let fields: Vec<String> = spu_isa::format::DMA_FIELDS
            .iter()
            .zip(&d.fields)
            .map(|(n, e)| format!("{n}={}", expr(e)))
            .collect();
        let _ = writeln!(s, ".dma {} {buf}, {};", d.side, fields.join(", "));
    }
    let _ = writeln!(s, "\n.entry {} {{", m.name);
    for r in &m.regs {
        let ty = match r.ty {
            RegTy::Val(t) => t.name(),
            RegTy::Pred => "pred",
        };
        match r.count {
            Some(n) => {
                let _ = writeln!(s, "    .reg .{ty} %{}<{n}>;", r.name);
            }
            None => {
                let _ = writeln!(s, "    .reg .{ty} %{};", r.name);
            }
        }
    }
    for sh in &m.shared {
        let dims: String = sh.dims.iter().map(|d| format!("[{}]", expr(d))).collect();
        let align = if sh.align == 0 {
            String::new()
        } else {
            format!(".align {} ", sh.align)
        };
        let _ = writeln!(s, "    .shared {align}.{} {}{dims};", sh.ty, sh.name);
    }
    let mut labels = m.labels.iter().peekable();
    for (pc, word) in m.code.iter().enumerate() {
        if m.iu_entry == Some(pc as u32) {
            let _ = writeln!(s, ".iu");
        }
        while let Some(l) = labels.next_if(|l| l.pc as usize == pc) {
            let _ = writeln!(s, "{}:", l.name);
        }
        let decoded = Instr::decode(*word);
        if !options.no_locations
            && let Some(loc) = m.lines.locs.get(pc)
        {
            let attr = decoded
                .as_ref()
                .ok()
                .and_then(|i| listing_attr(m, pc, i))
                .map_or_else(String::new, |a| format!(", {a}"));
            let _ = writeln!(s, "    .loc {} {} {}{attr};", loc.file, loc.line, loc.col);
        }
        let text = match &decoded {
            Ok(i) => {
                let text = format_instr(i, &names);
                // Without `.loc` lines, the source's names go into a comment.
                let source = format_instr(i, &PcNames { module: m, pc });
                match (options.no_locations, m.debug.hidden(pc)) {
                    (true, true) => format!("{text}  // {source} (added by the assembler)"),
                    (true, false) if source != text => format!("{text}  // {source}"),
                    _ => text,
                }
            }
            Err(e) => format!("// invalid word {word:#018x}: {e}"),
        };
        let _ = writeln!(s, "    {text}");
    }
    for l in labels {
        let _ = writeln!(s, "{}:", l.name);
    }
    let _ = writeln!(s, "}}");
    s
}
