//! The bytes of each `.spu.*` section of a binary (kernel metadata, buffers, DMA
//! descriptors, line table, preconditions, debug names): one writer and one
//! validating reader per section. The ELF container around them is [`super::elf`].

use super::bytes::{ByteReader, ByteWriter};
use super::{FormatError, Module};
use crate::format::model::*;
use crate::names::{Side, Ty};

/// The version a module is written as (see [`super::FORMAT_VERSION`]).
pub(super) fn version_of(m: &Module) -> u32 {
    if m.launch.grid[2] != Expr::constant(1) {
        7
    } else if m.preconditions.is_empty() {
        5
    } else {
        6
    }
}

/// Section names.
pub(super) const TEXT: &str = ".text";
pub(super) const KERNEL: &str = ".spu.kernel";
pub(super) const BUFFERS: &str = ".spu.buffers";
pub(super) const DMA: &str = ".spu.dma";
pub(super) const LINES: &str = ".spu.lines";
pub(super) const ASSERT: &str = ".spu.assert";
/// Optional: readers that do not know it ignore it, so it needs no new version.
pub(super) const DEBUG: &str = ".spu.debug";

/// Type code of a predicate register declaration (value types use their `Ty` code).
const PRED_CODE: u8 = 0xff;
/// [`InstrDebug::hidden`] in an instruction's flags byte.
const HIDDEN_FLAG: u8 = 1;

fn ty_code(ty: Ty) -> u8 {
    ty.code()
}

pub(super) fn kernel_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.u32(version_of(m));
    b.str(&m.name);
    b.u32(m.iu_entry.unwrap_or(u32::MAX));
    b.len(m.regs.len());
    for r in &m.regs {
        b.str(&r.name);
        b.u8(match r.ty {
            RegTy::Val(t) => ty_code(t),
            RegTy::Pred => PRED_CODE,
        });
        b.u8(u8::from(r.count.is_some()));
        b.u32(r.count.unwrap_or(0));
    }
    b.len(m.params.len());
    for p in &m.params {
        b.str(&p.name);
        b.u8(ty_code(p.ty));
        b.u8(u8::from(p.default.is_some()));
        b.u64(p.default.unwrap_or(0));
    }
    b.len(m.shared.len());
    for s in &m.shared {
        b.str(&s.name);
        b.u8(ty_code(s.ty));
        b.u32(s.align);
        b.len(s.dims.len());
        s.dims.iter().for_each(|d| b.expr(d));
    }
    // Version 7 stores the z extent; older versions' grids are 2-D.
    let dims = if version_of(m) >= 7 { 3 } else { 2 };
    m.launch.grid[..dims].iter().for_each(|e| b.expr(e));
    m.launch.block.iter().for_each(|e| b.expr(e));
    b.expr(&m.launch.iu_threads);
    b.bytes
}

pub(super) fn buffer_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.len(m.buffers.len());
    for buf in &m.buffers {
        b.str(&buf.name);
        b.u8(ty_code(buf.ty));
        b.len(buf.dims.len());
        buf.dims.iter().for_each(|d| b.expr(d));
        match &buf.init {
            Init::Zeros => b.u8(0),
            Init::Const(v) => {
                b.u8(1);
                b.f64(*v);
            }
            Init::ConstBits(bits) => {
                b.u8(4);
                b.u64(*bits);
            }
            Init::Ramp { start, step } => {
                b.u8(2);
                b.f64(*start);
                b.f64(*step);
            }
            Init::Random { seed, lo, hi } => {
                b.u8(3);
                b.u64(*seed);
                b.f64(*lo);
                b.f64(*hi);
            }
            Init::Values(values) => {
                b.u8(5);
                b.len(values.len());
                values.iter().for_each(|v| b.u64(*v));
            }
        }
    }
    b.bytes
}

pub(super) fn dma_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.len(m.dma.len());
    for d in &m.dma {
        b.u8(d.side.code());
        b.u16(d.buffer);
        d.fields.iter().for_each(|e| b.expr(e));
    }
    b.bytes
}

pub(super) fn line_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.len(m.lines.files.len());
    m.lines.files.iter().for_each(|f| b.str(f));
    b.len(m.lines.locs.len());
    for l in &m.lines.locs {
        b.u16(l.file);
        b.u32(l.line);
        b.u32(l.col);
    }
    b.bytes
}

fn ty(r: &mut ByteReader<'_>) -> Result<Ty, FormatError> {
    let code = r.u8()?;
    Ty::from_code(code).ok_or_else(|| r.corrupt(format!("unknown type code {code}")))
}

fn dims(r: &mut ByteReader<'_>, params: usize) -> Result<Vec<Expr>, FormatError> {
    let n = r.count(5)?;
    if n > 4 {
        return Err(r.corrupt(format!("{n} dimensions (at most 4)")));
    }
    (0..n).map(|_| r.expr(params)).collect()
}

use super::Expr;

pub(super) fn read_kernel(
    data: &[u8],
    code: Vec<u64>,
    file_version: u32,
) -> Result<Module, FormatError> {
    let mut r = ByteReader::new(KERNEL, data);
    let version = r.u32()?;
    if version != file_version {
        return Err(FormatError::VersionMismatch {
            header: file_version,
            kernel: version,
        });
    }
    let name = r.str()?;
    let iu_entry = Some(r.u32()?).filter(|e| *e != u32::MAX);
    let n = r.count(10)?;
    let mut regs = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let code = r.u8()?;
        let ty = match code {
            PRED_CODE => RegTy::Pred,
            c => RegTy::Val(
                Ty::from_code(c).ok_or_else(|| r.corrupt(format!("unknown register type {c}")))?,
            ),
        };
        let has_count = r.bool()?;
        let count = r.u32()?;
        regs.push(RegDecl {
            name,
            ty,
            count: has_count.then_some(count),
        });
    }
    let n = r.count(14)?;
    let mut params = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let ty = ty(&mut r)?;
        let has_default = r.bool()?;
        let default = r.u64()?;
        params.push(ParamDecl {
            name,
            ty,
            default: has_default.then_some(default),
        });
    }
    let n = r.count(9)?;
    let mut shared = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let ty = ty(&mut r)?;
        let align = r.u32()?;
        shared.push(SharedDecl {
            name,
            ty,
            align,
            dims: dims(&mut r, params.len())?,
        });
    }
    let p = params.len();
    let launch = Launch {
        grid: [
            r.expr(p)?,
            r.expr(p)?,
            if version >= 7 {
                r.expr(p)?
            } else {
                Expr::constant(1)
            },
        ],
        block: [r.expr(p)?, r.expr(p)?, r.expr(p)?],
        iu_threads: r.expr(p)?,
    };
    r.finish()?;
    Ok(Module {
        name,
        code,
        iu_entry,
        regs,
        params,
        shared,
        buffers: Vec::new(),
        launch,
        dma: Vec::new(),
        lines: LineTable::default(),
        labels: Vec::new(),
        preconditions: Vec::new(),
        debug: DebugInfo::default(),
    })
}

pub(super) fn debug_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.len(m.debug.names.len());
    m.debug.names.iter().for_each(|n| b.str(n));
    b.len(m.debug.instrs.len());
    for d in &m.debug.instrs {
        b.u8(if d.hidden { HIDDEN_FLAG } else { 0 });
        b.len(d.regs.len());
        for r in &d.regs {
            b.u8(r.slot);
            b.u8(r.reg);
            b.u32(r.name);
        }
    }
    b.bytes
}

/// `.spu.debug`: names, then one record per instruction of the code.
pub(super) fn read_debug(data: &[u8], instructions: usize) -> Result<DebugInfo, FormatError> {
    let mut r = ByteReader::new(DEBUG, data);
    let n = r.count(4)?;
    let names = (0..n).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
    let n = r.count(5)?;
    if n != instructions {
        return Err(r.corrupt(format!(
            "{n} instruction records for {instructions} instructions"
        )));
    }
    let mut instrs = Vec::with_capacity(n);
    for _ in 0..n {
        let flags = r.u8()?;
        if flags & !HIDDEN_FLAG != 0 {
            return Err(r.corrupt(format!("unknown instruction flags {flags:#04x}")));
        }
        let k = r.count(6)?;
        let mut regs = Vec::with_capacity(k);
        for _ in 0..k {
            let (slot, reg, name) = (r.u8()?, r.u8()?, r.u32()?);
            if name as usize >= names.len() {
                return Err(r.corrupt(format!("register name #{name} of {}", names.len())));
            }
            regs.push(RegName { slot, reg, name });
        }
        instrs.push(InstrDebug {
            hidden: flags & HIDDEN_FLAG != 0,
            regs,
        });
    }
    r.finish()?;
    Ok(DebugInfo { names, instrs })
}

pub(super) fn assert_bytes(m: &Module) -> Vec<u8> {
    let mut b = ByteWriter::default();
    b.len(m.preconditions.len());
    for a in &m.preconditions {
        b.expr(&a.lhs);
        b.u8(a.op.code());
        b.expr(&a.rhs);
        b.str(&a.message);
    }
    b.bytes
}

pub(super) fn read_asserts(data: &[u8], m: &mut Module) -> Result<(), FormatError> {
    let mut r = ByteReader::new(ASSERT, data);
    let n = r.count(5 + 1 + 5 + 4)?;
    let p = m.params.len();
    for _ in 0..n {
        let lhs = r.expr(p)?;
        let code = r.u8()?;
        let op = CmpOp::from_code(code)
            .ok_or_else(|| r.corrupt(format!("unknown comparison {code}")))?;
        let rhs = r.expr(p)?;
        let message = r.str()?;
        m.preconditions.push(Precondition {
            lhs,
            op,
            rhs,
            message,
        });
    }
    r.finish()
}

pub(super) fn read_buffers(data: &[u8], m: &mut Module) -> Result<(), FormatError> {
    let mut r = ByteReader::new(BUFFERS, data);
    let n = r.count(10)?;
    for _ in 0..n {
        let name = r.str()?;
        let ty = ty(&mut r)?;
        let dims = dims(&mut r, m.params.len())?;
        let init = match r.u8()? {
            0 => Init::Zeros,
            1 => Init::Const(r.f64()?),
            2 => Init::Ramp {
                start: r.f64()?,
                step: r.f64()?,
            },
            3 => Init::Random {
                seed: r.u64()?,
                lo: r.f64()?,
                hi: r.f64()?,
            },
            4 => Init::ConstBits(r.u64()?),
            5 => {
                let n = r.count(8)?;
                Init::Values((0..n).map(|_| r.u64()).collect::<Result<_, _>>()?)
            }
            t => return Err(r.corrupt(format!("unknown initialiser {t}"))),
        };
        m.buffers.push(BufferDecl {
            name,
            ty,
            dims,
            init,
        });
    }
    r.finish()
}

pub(super) fn read_dma(data: &[u8], m: &mut Module) -> Result<(), FormatError> {
    let mut r = ByteReader::new(DMA, data);
    let n = r.count(3 + 9 * 5)?;
    for _ in 0..n {
        let code = r.u8()?;
        let side =
            Side::from_code(code).ok_or_else(|| r.corrupt(format!("unknown side {code}")))?;
        let buffer = r.u16()?;
        if usize::from(buffer) >= m.buffers.len() {
            return Err(r.corrupt(format!(
                "descriptor names buffer #{buffer} of {}",
                m.buffers.len()
            )));
        }
        let p = m.params.len();
        let mut fields: [Expr; 9] = Default::default();
        for f in &mut fields {
            *f = r.expr(p)?;
        }
        m.dma.push(DmaDesc {
            side,
            buffer,
            fields,
        });
    }
    r.finish()
}

pub(super) fn read_lines(data: &[u8]) -> Result<LineTable, FormatError> {
    let mut r = ByteReader::new(LINES, data);
    let n = r.count(4)?;
    let files = (0..n).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
    let n = r.count(10)?;
    let mut locs = Vec::with_capacity(n);
    for _ in 0..n {
        let file = r.u16()?;
        if usize::from(file) >= files.len() {
            return Err(r.corrupt(format!("line entry names file #{file} of {}", files.len())));
        }
        locs.push(SourceLoc {
            file,
            line: r.u32()?,
            col: r.u32()?,
        });
    }
    r.finish()?;
    Ok(LineTable { files, locs })
}
