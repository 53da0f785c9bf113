//! Prints a [`Module`] as `.spu` source that re-assembles to the same bytes: labels
//! from the symbol table, declarations from the metadata, `.file`/`.loc` lines that
//! carry the original line table.

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

/// The source text of instruction `pc` (`ld.global.f32 %f0, [%r6]`), or `None` if
/// the word does not decode.
pub fn instr_text(m: &Module, pc: usize) -> Option<String> {
    let instr = Instr::decode(*m.code.get(pc)?).ok()?;
    Some(format_instr(&instr, &ModuleNames(m)))
}

fn num(v: f64) -> String {
    format!("{v:?}")
}

/// A file name in a `.file` string: one line, without control characters.
fn quote(s: &str) -> String {
    spu_io::quote::escape(&s.replace('"', "'")).into_owned()
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
        // A message from a binary may hold what a source string cannot.
        let message = spu_io::quote::escape(&a.message).replace('"', "'");
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
        if !options.no_locations
            && let Some(loc) = m.lines.locs.get(pc)
        {
            let _ = writeln!(s, "    .loc {} {} {};", loc.file, loc.line, loc.col);
        }
        let text = match Instr::decode(*word) {
            Ok(i) => format_instr(&i, &names),
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
