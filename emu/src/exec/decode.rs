//! Decoding a kernel's code into the micro-ops of [`crate::exec::ops`]: each
//! instruction word becomes a [`Kind`] with its operands resolved to register-file
//! slots (immediates and symbol addresses become constants), the forms the
//! word-wide path does not cover go to the general path ([`crate::exec::ext`]),
//! forms this emulator does not execute are refused with the instruction named, and
//! the code is cut into basic blocks.

use crate::exec::ops::{
    BinOp, Caching, Kind, MAX_DEPS, NO_PC, NO_REG, Op, OpInfo, Program, Reg, RegLayout,
    SymbolAddresses, UnOp,
};
use spu_isa::{
    ExecClass, Guard, Instr, Operand, Special, SymbolRef, Ty,
    table::{OperandKind, OperandTy},
};
use std::collections::HashMap;

/// Why the code cannot be prepared: a form this emulator does not execute, a kernel
/// that needs more register-file slots than exist, or (only damaged binaries get
/// here: the reader validates encodings) a malformed operand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(
        "the binary is damaged: instruction {pc} cannot be executed: {what}; reassemble it with spu-asm"
    )]
    Damaged { pc: usize, what: String },
    #[error("instruction {pc}: {what}")]
    NotExecuted { pc: usize, what: String },
    #[error("{0}")]
    TooManySlots(String),
}

/// A source operand before register-file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Reg(u8),
    Imm(u32),
    Special(Special),
}

/// An instruction decoded, before its operands get slots.
#[derive(Debug, Clone, Copy)]
struct Raw {
    kind: Kind,
    guard: Guard,
    dst: Option<u8>,
    pdst: Option<u8>,
    srcs: [Option<Src>; 3],
    pred_src: Option<u8>,
    base: Option<u8>,
    offset: i32,
    class: ExecClass,
}

/// Decodes every instruction word; `declared_regs` is the kernel's declared general
/// register count (the code may use more).
pub fn decode_program(
    code: &[u64],
    symbols: SymbolAddresses,
    declared_regs: usize,
) -> Result<Program, DecodeError> {
    let decoded = code
        .iter()
        .enumerate()
        .map(|(pc, &word)| {
            let instr = Instr::decode(word).map_err(|e| DecodeError::Damaged {
                pc,
                what: e.to_string(),
            })?;
            let ty = instr.mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
            if unsupported(&instr).is_some() || kind_of(&instr, ty).is_err() {
                let op = crate::exec::ext::decode(&instr, symbols)
                    .map_err(|what| DecodeError::NotExecuted { pc, what })?;
                return Ok(Decoded::Ext(op, instr.exec_class(), instr.guard));
            }
            decode_instr(&instr, symbols)
                .map(Decoded::Word)
                .map_err(|what| DecodeError::Damaged { pc, what })
        })
        .collect::<Result<Vec<Decoded>, _>>()?;
    let mut ext = Vec::new();
    let raws: Vec<Raw> = decoded
        .into_iter()
        .map(|d| match d {
            Decoded::Word(raw) => raw,
            Decoded::Ext(op, class, guard) => {
                ext.push(op);
                Raw::ext(ext.len() - 1, &op, class, guard)
            }
        })
        .collect();
    let ext_used = ext
        .iter()
        .flat_map(|o| o.regs())
        .map(|r| usize::from(r) + 1)
        .max()
        .unwrap_or(0);
    let used = raws
        .iter()
        .flat_map(|r| {
            r.srcs
                .iter()
                .filter_map(|s| match s {
                    Some(Src::Reg(r)) => Some(*r),
                    _ => None,
                })
                .chain(r.dst)
                .chain(r.base)
        })
        .map(|r| usize::from(r) + 1)
        .max()
        .unwrap_or(0);
    let general = used.max(ext_used).max(declared_regs);
    // Every `[offset]` address reads a zero base. Constants are numbered in order of
    // first use (a map keeps this linear in the code size).
    let mut constants: Vec<u32> = vec![0];
    let mut constant_index: HashMap<u32, usize> = HashMap::from([(0, 0)]);
    let mut specials: Vec<Special> = Vec::new();
    for r in &raws {
        for s in r.srcs.iter().flatten() {
            match *s {
                Src::Imm(v) => {
                    constant_index.entry(v).or_insert_with(|| {
                        constants.push(v);
                        constants.len() - 1
                    });
                }
                Src::Special(sp) if !specials.contains(&sp) => specials.push(sp),
                _ => {}
            }
        }
    }
    let layout = RegLayout::new(general as u16, specials, constants);
    let slot = |s: Option<Src>| -> Reg {
        match s {
            None => NO_REG,
            Some(Src::Reg(r)) => Reg::from(r),
            Some(Src::Imm(v)) => {
                let i = constant_index.get(&v).copied().unwrap_or(0);
                (layout.first_constant() + i) as Reg
            }
            Some(Src::Special(sp)) => {
                let i = layout.specials.iter().position(|&c| c == sp).unwrap_or(0);
                (layout.first_special() + i) as Reg
            }
        }
    };
    if layout.slots() >= usize::from(NO_REG) {
        return Err(DecodeError::TooManySlots(format!(
            "the code needs {} register slots (registers, constants, special registers); at most {} fit",
            layout.slots(),
            NO_REG - 1
        )));
    }
    let zero = layout.first_constant() as Reg;
    let mut ops = Vec::with_capacity(raws.len());
    let mut info = Vec::with_capacity(raws.len());
    for (r, &word) in raws.iter().zip(code) {
        ops.push(Op {
            kind: r.kind,
            guard: r.guard,
            dst: r.dst.map_or(NO_REG, Reg::from),
            src: r.srcs.map(slot),
            base: r.base.map_or(zero, Reg::from),
            offset: r.offset,
            pred: r.pdst.or(r.pred_src).unwrap_or(0),
        });
        let mut i = info_of(r);
        if let Kind::Ext(k) | Kind::Atomic(k) = r.kind {
            ext_info(&ext[k as usize], &mut i);
        }
        // Decoding succeeded above.
        if let Ok(instr) = Instr::decode(word) {
            i.caching = caching_of(&instr);
        }
        info.push(i);
    }
    let (block_of, block_starts) = basic_blocks(&ops);
    Ok(Program {
        ops,
        info,
        layout,
        block_of,
        block_starts,
        ext,
    })
}

/// An instruction decoded for the word-wide path or for the general one.
enum Decoded {
    Word(Raw),
    Ext(crate::exec::ext::ExtOp, ExecClass, Guard),
}

impl Raw {
    /// The micro-op of general-path instruction `index`: its destination and
    /// predicate for the scoreboard; everything else is in the [`ExtOp`].
    ///
    /// [`ExtOp`]: crate::exec::ext::ExtOp
    fn ext(index: usize, op: &crate::exec::ext::ExtOp, class: ExecClass, guard: Guard) -> Raw {
        let kind = match op.what {
            crate::exec::ext::What::Atom { .. } => Kind::Atomic(index as u32),
            _ => Kind::Ext(index as u32),
        };
        Raw {
            kind,
            guard,
            dst: op.dst().map(|(r, _)| r as u8),
            pdst: op.pred_written(),
            srcs: [None; 3],
            pred_src: None,
            base: None,
            offset: 0,
            class,
        }
    }
}

/// The scoreboard lists of a general-path instruction: every register it reads or
/// writes (pairs and groups whole) and the predicates.
fn ext_info(op: &crate::exec::ext::ExtOp, info: &mut OpInfo) {
    use crate::exec::ext::Val;
    let regs: Vec<Reg> = op.regs().collect();
    let n = regs.len().min(MAX_DEPS);
    info.deps = [0; MAX_DEPS];
    info.deps[..n].copy_from_slice(&regs[..n]);
    info.n_deps = n as u8;
    info.rf_accesses = n as u8;
    info.dst_regs = op.dst().map_or(0, |(_, k)| k);
    info.writes_pred = op.pred_written().is_some();
    let mut preds: Vec<u8> = info.pdeps().to_vec();
    for v in op.src {
        if let Val::Pred(p, _) = v
            && preds.len() < 3
            && !preds.contains(&p)
        {
            preds.push(p);
        }
    }
    info.pdeps = [0; 3];
    info.pdeps[..preds.len()].copy_from_slice(&preds);
    info.n_pdeps = preds.len() as u8;
}

/// Cuts the code at branch targets, reconvergence points and after every
/// instruction that ends straight-line execution.
fn basic_blocks(ops: &[Op]) -> (Vec<u32>, Vec<u32>) {
    let n = ops.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    leader[n] = true;
    for (pc, op) in ops.iter().enumerate() {
        if op.kind.ends_block() {
            leader[pc + 1] = true;
        }
        if let Kind::Bra { target, reconv } = op.kind {
            for t in [target, reconv] {
                if let Some(l) = leader.get_mut(t as usize) {
                    *l = true;
                }
            }
        }
    }
    let mut block_of = Vec::with_capacity(n);
    let mut starts = Vec::new();
    for (pc, &is_leader) in leader.iter().enumerate().take(n) {
        if is_leader {
            starts.push(pc as u32);
        }
        block_of.push(starts.len() as u32 - 1);
    }
    starts.push(n as u32);
    (block_of, starts)
}

/// How the cache operators and qualifiers of a global `ld`/`st` use the caches.
fn caching_of(instr: &Instr) -> Caching {
    use spu_isa::CacheOp;
    // Other SMs' stores must be seen: the shared L2 is the point where they meet.
    if instr.mods.volatile.is_some() {
        return Caching::Global;
    }
    match instr.mods.cache {
        Some(CacheOp::Cg) => Caching::Global,
        Some(CacheOp::Cs | CacheOp::Lu) => Caching::Streaming,
        Some(CacheOp::Cv | CacheOp::Wt) => Caching::Bypass,
        Some(CacheOp::Ca | CacheOp::Wb) | None => Caching::All,
    }
}

fn info_of(r: &Raw) -> OpInfo {
    let regs: Vec<Reg> = r
        .srcs
        .iter()
        .filter_map(|s| match s {
            Some(Src::Reg(x)) => Some(Reg::from(*x)),
            _ => None,
        })
        .chain(r.base.map(Reg::from))
        .chain(r.dst.map(Reg::from))
        .collect();
    let guard = match r.guard {
        Guard::Always => None,
        Guard::If(p) | Guard::IfNot(p) => Some(p),
    };
    let preds: Vec<u8> = guard.into_iter().chain(r.pred_src).chain(r.pdst).collect();
    let mut deps = [0; MAX_DEPS];
    deps[..regs.len()].copy_from_slice(&regs);
    let mut pdeps = [0; 3];
    pdeps[..preds.len()].copy_from_slice(&preds);
    OpInfo {
        class: r.class,
        deps,
        n_deps: regs.len() as u8,
        pdeps,
        n_pdeps: preds.len() as u8,
        rf_accesses: regs.len() as u8,
        reads_clock: r.srcs.contains(&Some(Src::Special(Special::Clock))),
        dst_general: r.dst,
        dst_regs: u8::from(r.dst.is_some()),
        writes_pred: matches!(r.kind, Kind::Setp(..)),
        caching: Caching::All,
    }
}

/// The execution type of a 32-bit type: bit types behave as unsigned.
fn word_ty(t: Ty) -> Option<Ty> {
    match t {
        Ty::U32 | Ty::B32 => Some(Ty::U32),
        Ty::S32 => Some(Ty::S32),
        Ty::F32 => Some(Ty::F32),
        _ => None,
    }
}

/// Why this emulator cannot execute a form, if it cannot: it executes 32-bit forms
/// with IEEE default rounding.
fn unsupported(instr: &Instr) -> Option<String> {
    let m = &instr.mods;
    let what = spu_isa::disasm::full_mnemonic(instr);
    let bad_ty = [m.ty, m.src_ty]
        .into_iter()
        .flatten()
        .find(|t| word_ty(*t).is_none());
    if let Some(t) = bad_ty {
        return Some(format!(
            "`{what}`: .{t} operands are not executed by this emulator (it executes 32-bit types)"
        ));
    }
    let modifier = [
        m.rnd.filter(|r| *r != spu_isa::Rnd::Rn).map(|r| r.name()),
        m.ftz.map(|f| f.name()),
        m.sat.map(|f| f.name()),
        m.prec.map(|f| f.name()),
        m.vec.map(|f| f.name()),
    ]
    .into_iter()
    .flatten()
    .next();
    if let Some(name) = modifier {
        return Some(format!(
            "`{what}`: `.{name}` is not executed by this emulator"
        ));
    }
    instr
        .operands()
        .iter()
        .any(|o| matches!(o, Operand::Mem { wide: true, .. }))
        .then(|| {
            format!("`{what}` with a 64-bit address register is not executed by this emulator")
        })
}

fn decode_instr(instr: &Instr, symbols: SymbolAddresses) -> Result<Raw, String> {
    let spec = instr.opcode.spec();
    let mods = instr.mods;
    let ty = mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
    let mut raw = Raw {
        kind: Kind::Nop,
        guard: instr.guard,
        dst: None,
        pdst: None,
        srcs: [None; 3],
        pred_src: None,
        base: None,
        offset: 0,
        class: instr.exec_class(),
    };
    let mut values = Vec::new();
    for ((name, kind, oty, _role), operand) in spec.operands().zip(instr.operands()) {
        let operand_ty = match oty {
            OperandTy::Main => ty,
            OperandTy::Src => mods.src_ty.and_then(word_ty).unwrap_or(Ty::U32),
            _ => Ty::U32,
        };
        match (name, kind, *operand) {
            ("d", _, Operand::Reg(r)) => raw.dst = Some(r),
            ("p", _, Operand::Pred(p)) if spec.mnemonic == "setp" => raw.pdst = Some(p),
            ("p", _, Operand::Pred(p)) => raw.pred_src = Some(p),
            (_, OperandKind::Mem, Operand::Mem { base, offset, .. }) => {
                raw.base = base;
                raw.offset = i32::from(offset);
            }
            (_, OperandKind::Target, Operand::Target(_)) => {}
            (_, _, Operand::Reg(r)) => values.push(Src::Reg(r)),
            (_, _, Operand::Imm16(raw)) => {
                values.push(Src::Imm(Operand::widen_imm16(raw, operand_ty) as u32))
            }
            (_, _, Operand::Imm32(v)) => values.push(Src::Imm(v)),
            (_, _, Operand::Special(s)) => values.push(Src::Special(s)),
            (_, _, Operand::Symbol { sym, offset }) => {
                let base = match sym {
                    SymbolRef::Buffer(i) => *symbols
                        .buffers
                        .get(usize::from(i))
                        .ok_or(format!("buffer #{i} is not declared"))?,
                    SymbolRef::Shared(i) => *symbols
                        .shared
                        .get(usize::from(i))
                        .ok_or(format!("shared array #{i} is not declared"))?,
                };
                values.push(Src::Imm(base.wrapping_add(offset as u32)));
            }
            (name, _, other) => return Err(format!("operand `{name}` is malformed ({other:?})")),
        }
    }
    if values.len() > 3 {
        return Err(format!("{} value operands (at most 3)", values.len()));
    }
    for (slot, v) in raw.srcs.iter_mut().zip(values) {
        *slot = Some(v);
    }
    raw.kind = kind_of(instr, ty)?;
    Ok(raw)
}

fn kind_of(instr: &Instr, ty: Ty) -> Result<Kind, String> {
    use BinOp as B;
    let m = instr.mods;
    let by_ty = |u: B, s: B, f: B| match ty {
        Ty::S32 => s,
        Ty::F32 => f,
        _ => u,
    };
    let mnemonic = instr.opcode.spec().mnemonic;
    Ok(match mnemonic {
        "add" => Kind::Bin(by_ty(B::AddI, B::AddI, B::AddF)),
        "sub" => Kind::Bin(by_ty(B::SubI, B::SubI, B::SubF)),
        "mul" => Kind::Bin(match (ty, m.half) {
            (Ty::F32, _) => B::MulF,
            (_, Some(spu_isa::Half::Hi)) if ty == Ty::S32 => B::MulHiS,
            (_, Some(spu_isa::Half::Hi)) => B::MulHiU,
            _ => B::MulLo,
        }),
        // The float form is the fused multiply-add (PTX `mad.rn.f32`, sm_20 on).
        "mad" if ty == Ty::F32 => Kind::Fma,
        "mad" => Kind::MadLo,
        "fma" => Kind::Fma,
        "div" => Kind::Bin(by_ty(B::DivU, B::DivS, B::DivF)),
        "rem" => Kind::Bin(by_ty(B::RemU, B::RemS, B::RemS)),
        "min" => Kind::Bin(by_ty(B::MinU, B::MinS, B::MinF)),
        "max" => Kind::Bin(by_ty(B::MaxU, B::MaxS, B::MaxF)),
        "abs" => Kind::Un(if ty == Ty::F32 {
            UnOp::AbsF
        } else {
            UnOp::AbsS
        }),
        "neg" => Kind::Un(if ty == Ty::F32 {
            UnOp::NegF
        } else {
            UnOp::NegS
        }),
        "and" => Kind::Bin(B::And),
        "or" => Kind::Bin(B::Or),
        "xor" => Kind::Bin(B::Xor),
        "not" => Kind::Un(UnOp::Not),
        "shl" => Kind::Bin(B::Shl),
        "shr" => Kind::Bin(if ty == Ty::S32 { B::ShrS } else { B::ShrU }),
        "rcp" => Kind::Un(UnOp::Rcp),
        "sqrt" => Kind::Un(UnOp::Sqrt),
        "cvt" => Kind::Un(UnOp::Cvt(ty, m.src_ty.and_then(word_ty).unwrap_or(ty))),
        "setp" => Kind::Setp(m.cmp.ok_or("setp without a comparison")?, ty),
        "selp" => Kind::Selp,
        "mov" => Kind::Mov,
        "ld" => Kind::Ld(m.space.ok_or("ld without a state space")?),
        "st" => Kind::St(m.space.ok_or("st without a state space")?),
        "ret" => Kind::Exit,
        "membar" | "fence" => Kind::Nop,
        "bra" => match instr.operands().first() {
            Some(Operand::Target(t)) => Kind::Bra {
                target: *t,
                reconv: instr.reconv.unwrap_or(NO_PC),
            },
            _ => return Err("bra without a target".into()),
        },
        "exit" => Kind::Exit,
        "nop" => Kind::Nop,
        "bar.sync" => Kind::BarSync,
        "bar.blocksync" => Kind::BlockSync(m.side),
        other => return Err(format!("`{other}` is not executed by this emulator")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spu_isa::{Mods, Opcode};

    #[test]
    fn every_table_row_has_semantics_or_a_clear_refusal() {
        for op in Opcode::all() {
            let spec = op.spec();
            let mut mods = Mods::default();
            for (kind, allowed, optional) in spec.modifiers() {
                if optional {
                    continue;
                }
                // The first 32-bit type the row allows, else its first value.
                let word = [Ty::U32, Ty::S32, Ty::F32, Ty::B32]
                    .into_iter()
                    .map(|t| t.code())
                    .find(|c| {
                        matches!(kind, spu_isa::table::ModKind::Type) && allowed & (1 << c) != 0
                    });
                mods.set(kind, word.unwrap_or(allowed.trailing_zeros() as u8));
            }
            if spec.mnemonic == "mul" || spec.mnemonic == "mad" {
                mods.half = Some(spu_isa::Half::Lo);
            }
            if spec.mnemonic == "cvt" {
                mods.src_ty = Some(Ty::S32);
            }
            let fake = Instr::new(
                op,
                Guard::Always,
                mods,
                &spec
                    .operands()
                    .map(|(_, kind, _, _)| match kind {
                        OperandKind::Pred | OperandKind::PredNeg => Operand::Pred(0),
                        OperandKind::OptPred => Operand::Absent,
                        OperandKind::Imm8 => Operand::Imm(0),
                        OperandKind::Mem => Operand::Mem {
                            base: None,
                            wide: false,
                            offset: 0,
                        },
                        OperandKind::Target => Operand::Target(0),
                        _ => Operand::Reg(0),
                    })
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            let ty = mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
            let word_path = unsupported(&fake).map_or_else(|| kind_of(&fake, ty), Err);
            let symbols = SymbolAddresses {
                buffers: &[],
                shared: &[],
            };
            let general = crate::exec::ext::decode(&fake, symbols);
            assert!(
                word_path.is_ok() || general.is_ok(),
                "{}: {word_path:?} / {general:?}",
                spec.mnemonic
            );
        }
    }

    #[test]
    fn wide_forms_and_directed_roundings_take_the_general_path() {
        let add = Opcode::from_mnemonic("add").unwrap();
        let ops = [Operand::Reg(0), Operand::Reg(2), Operand::Reg(4)];
        let symbols = SymbolAddresses {
            buffers: &[],
            shared: &[],
        };
        let wide = Instr::new(
            add,
            Guard::Always,
            Mods {
                ty: Some(Ty::F64),
                ..Mods::default()
            },
            &ops,
        )
        .unwrap();
        assert!(unsupported(&wide).unwrap().contains("add.f64"));
        assert!(crate::exec::ext::decode(&wide, symbols).is_ok());
        let fma = Opcode::from_mnemonic("fma").unwrap();
        let rz = Instr::new(
            fma,
            Guard::Always,
            Mods {
                ty: Some(Ty::F64),
                rnd: Some(spu_isa::Rnd::Rz),
                ..Mods::default()
            },
            &[ops[0], ops[1], ops[2], Operand::Reg(6)],
        )
        .unwrap();
        assert!(unsupported(&rz).unwrap().contains(".rz"));
        assert!(crate::exec::ext::decode(&rz, symbols).is_ok());
    }
}
