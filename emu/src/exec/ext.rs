//! The general path of the execution core: instructions the word-wide micro-ops
//! ([`crate::exec::ops::Kind`]) do not cover, decoded once into an [`ExtOp`] and
//! executed lane by lane through [`crate::exec::scalar`]. It covers 64-bit values in
//! register pairs, 8-/16-bit and vector loads and stores, 64-bit address registers,
//! predicate logic and the warp operations (`shfl.sync`, `vote.sync`,
//! `activemask`). The forms it does not execute either are refused at load with a
//! message naming them.

use crate::exec::fault::FaultKind;
use crate::exec::lanes::{self, Lanes, lanes_of};
use crate::exec::memory::{SharedWords, atomic_lanes};
use crate::exec::ops::{Reg, SymbolAddresses};
use crate::exec::scalar::{self, Alu, Atomic, Form};
use crate::exec::step::{Access, Global, LaneFault, Local, check_bounded, check_global, memory};
use crate::exec::warp::Warp;
use spu_isa::table::{OperandKind, Role};
use spu_isa::{
    Cmp, Instr, Operand, Rnd, ShfDir, ShfMode, ShflMode, Space, SymbolRef, Ty, VoteMode,
    operand_type,
};

/// An operand of an [`ExtOp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Val {
    None,
    /// The first register slot and how many consecutive ones (1, 2 or 4).
    Reg(Reg, u8),
    /// An immediate or symbol address, already extended to its type.
    Imm(u64),
    /// A predicate, negated when the flag is set.
    Pred(u8, bool),
}

/// Predicate logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
}

/// What an [`ExtOp`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Alu(Form),
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
    },
    Selp(Ty),
    Pred(PredOp),
    Activemask,
    Vote(VoteMode),
    Ballot,
    Shfl(ShflMode),
    /// An atomic (`atom`, or `red` when the op writes no register) in global or
    /// shared memory.
    Atom {
        atom: Atomic,
        space: Space,
    },
    /// A load (or store) of `count` elements of `ty`.
    Mem {
        space: Space,
        store: bool,
        ty: Ty,
        count: u8,
    },
}

/// `[base + offset]`; `wide` when the base is a register pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    pub base: Option<Reg>,
    pub wide: bool,
    pub offset: i32,
}

/// A decoded general-path instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtOp {
    pub what: What,
    /// The register or predicate written.
    pub d: Val,
    /// The second predicate written (`shfl.sync d|p`).
    pub p: Option<u8>,
    /// Value operands in order (`a`, `b`, `c`, `e`; a store's data is `a`).
    pub src: [Val; 4],
    /// The type each value operand is read as.
    pub src_ty: [Ty; 4],
    pub addr: Option<Address>,
}

impl ExtOp {
    /// Every general register slot the instruction reads or writes.
    pub fn regs(&self) -> impl Iterator<Item = Reg> + '_ {
        let span = |v: &Val| match *v {
            Val::Reg(r, n) => (r..r + Reg::from(n)).collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        let base = self.addr.and_then(|a| a.base.map(|b| (b, a.wide)));
        let base = base.map_or(Vec::new(), |(b, wide)| {
            (b..b + if wide { 2 } else { 1 }).collect()
        });
        self.src
            .iter()
            .flat_map(span)
            .chain(base)
            .chain(span(&self.d))
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// The register written and how many consecutive ones.
    pub fn dst(&self) -> Option<(Reg, u8)> {
        match self.d {
            Val::Reg(r, n) => Some((r, n)),
            _ => None,
        }
    }

    /// The predicate written, if any.
    pub fn pred_written(&self) -> Option<u8> {
        match self.d {
            Val::Pred(p, _) => Some(p),
            _ => self.p,
        }
    }
}

/// Decodes an instruction the word-wide path does not execute; `Err` says why this
/// emulator cannot execute it either.
pub fn decode(instr: &Instr, symbols: SymbolAddresses) -> Result<ExtOp, String> {
    let spec = instr.opcode.spec();
    let m = instr.mods;
    let what_name = spu_isa::disasm::full_mnemonic(instr);
    let refuse = |why: &str| {
        Err(format!(
            "`{what_name}`: {why} is not executed by this emulator"
        ))
    };
    let ty = m.ty.unwrap_or(Ty::U32);
    let mut op = ExtOp {
        what: What::Activemask,
        d: Val::None,
        p: None,
        src: [Val::None; 4],
        src_ty: [Ty::U32; 4],
        addr: None,
    };
    let mut n = 0;
    for (i, ((name, kind, oty, role), operand)) in spec.operands().zip(instr.operands()).enumerate()
    {
        let oty_val = operand_type(oty, &m).unwrap_or(Ty::U32);
        let regs = instr.operand_regs(i);
        let val = match *operand {
            Operand::Reg(r) => Val::Reg(Reg::from(r), regs),
            Operand::Pred(p) => Val::Pred(p, false),
            Operand::PredNot(p) => Val::Pred(p, true),
            Operand::Absent => Val::None,
            Operand::Imm16(raw) => Val::Imm(Operand::widen_imm16(raw, oty_val)),
            Operand::Imm(v) => Val::Imm(u64::from(v)),
            Operand::Imm32(v) => Val::Imm(Operand::widen_imm32(v, oty_val)),
            Operand::Symbol { sym, offset } => {
                let base = match sym {
                    SymbolRef::Buffer(i) => symbols.buffers.get(usize::from(i)),
                    SymbolRef::Shared(i) => symbols.shared.get(usize::from(i)),
                };
                let base = *base.ok_or(format!("symbol {sym:?} is not declared"))?;
                Val::Imm(u64::from(base.wrapping_add(offset as u32)))
            }
            Operand::Mem { base, wide, offset } => {
                op.addr = Some(Address {
                    base: base.map(Reg::from),
                    wide,
                    offset: i32::from(offset),
                });
                continue;
            }
            Operand::Special(_) => return refuse("a special register in this form"),
            Operand::Target(_) => return refuse("a branch target in this form"),
        };
        match role {
            Role::Def if matches!(kind, OperandKind::OptPred) => {
                op.p = match val {
                    Val::Pred(p, _) => Some(p),
                    _ => None,
                }
            }
            Role::Def => op.d = val,
            // The member mask is recorded, not checked.
            Role::Use if name == "membermask" => {}
            Role::Use => {
                if n >= 4 {
                    return Err(format!("`{what_name}` has too many value operands"));
                }
                op.src[n] = val;
                op.src_ty[n] = oty_val;
                n += 1;
            }
        }
    }
    let rnd = m.rnd.filter(|r| *r != Rnd::Rn);
    let form = |alu: Alu| Form {
        alu,
        ty,
        src_ty: m.src_ty.unwrap_or(ty),
        rnd,
        ftz: m.ftz.is_some(),
        sat: m.sat.is_some(),
    };
    let mnemonic = spec.mnemonic;
    // Directed roundings are executed for these.
    let directed = matches!(
        mnemonic,
        "add" | "sub" | "mul" | "div" | "rcp" | "sqrt" | "fma" | "mad"
    );
    let arithmetic = ty.is_float() && rnd.is_some() && mnemonic != "cvt";
    if arithmetic && (rnd.is_some_and(|r| r.integral()) || !directed) {
        return refuse(&format!(
            "the directed rounding `.{}`",
            rnd.map_or("", |r| r.name())
        ));
    }
    let half_hi = m.half == Some(spu_isa::Half::Hi);
    op.what = match mnemonic {
        "add" => What::Alu(form(Alu::Add)),
        "sub" => What::Alu(form(Alu::Sub)),
        "mul" if half_hi && ty.is_int() => What::Alu(form(Alu::MulHi)),
        "mul" => What::Alu(form(Alu::MulLo)),
        "mad" if half_hi && ty.is_int() => What::Alu(form(Alu::MadHi)),
        "mad" => What::Alu(form(Alu::MadLo)),
        "mul.wide" => What::Alu(form(Alu::MulWide)),
        "mad.wide" => What::Alu(form(Alu::MadWide)),
        "fma" => What::Alu(form(Alu::Fma)),
        "div" => What::Alu(form(Alu::Div)),
        "rem" => What::Alu(form(Alu::Rem)),
        "min" => What::Alu(form(Alu::Min)),
        "max" => What::Alu(form(Alu::Max)),
        "abs" => What::Alu(form(Alu::Abs)),
        "neg" => What::Alu(form(Alu::Neg)),
        "and" => What::Alu(form(Alu::And)),
        "or" => What::Alu(form(Alu::Or)),
        "xor" => What::Alu(form(Alu::Xor)),
        "not" => What::Alu(form(Alu::Not)),
        "shl" => What::Alu(form(Alu::Shl)),
        "shr" => What::Alu(form(Alu::Shr)),
        "rcp" => What::Alu(form(Alu::Rcp)),
        "sqrt" => What::Alu(form(Alu::Sqrt)),
        "rsqrt" => What::Alu(form(Alu::Rsqrt)),
        "ex2" => What::Alu(form(Alu::Ex2)),
        "lg2" => What::Alu(form(Alu::Lg2)),
        "sin" => What::Alu(form(Alu::Sin)),
        "cos" => What::Alu(form(Alu::Cos)),
        "cvt" => What::Alu(form(Alu::Cvt)),
        "mov" | "cvta" => What::Alu(form(Alu::Copy)),
        "popc" => What::Alu(form(Alu::Popc)),
        "clz" => What::Alu(form(Alu::Clz)),
        "brev" => What::Alu(form(Alu::Brev)),
        "bfind" => What::Alu(form(Alu::Bfind {
            shiftamt: m.shiftamt.is_some(),
        })),
        "bfe" => What::Alu(form(Alu::Bfe)),
        "bfi" => What::Alu(form(Alu::Bfi)),
        "prmt" => What::Alu(form(Alu::Prmt(m.prmt))),
        "shf" => What::Alu(form(Alu::Shf {
            left: m.dir == Some(ShfDir::L),
            clamp: m.shf_mode == Some(ShfMode::Clamp),
        })),
        "lop3" => What::Alu(form(Alu::Lop3)),
        "setp" => What::Setp {
            cmp: m.cmp.ok_or("setp without a comparison")?,
            ty,
            ftz: m.ftz.is_some(),
        },
        "selp" => What::Selp(ty),
        "and.pred" => What::Pred(PredOp::And),
        "or.pred" => What::Pred(PredOp::Or),
        "xor.pred" => What::Pred(PredOp::Xor),
        "not.pred" => What::Pred(PredOp::Not),
        "mov.pred" => What::Pred(PredOp::Mov),
        "activemask" => What::Activemask,
        "vote.sync" => What::Vote(m.vote.ok_or("vote without a mode")?),
        "vote.sync.ballot" => What::Ballot,
        "shfl.sync" => What::Shfl(m.shfl.ok_or("shfl without a mode")?),
        "atom.global" | "atom.shared" | "red.global" => What::Atom {
            atom: Atomic {
                op: Some(m.atom.ok_or("atom without an operation")?),
                ty,
            },
            space: if mnemonic == "atom.shared" {
                Space::Shared
            } else {
                Space::Global
            },
        },
        "atom.global.cas" | "atom.shared.cas" => What::Atom {
            atom: Atomic { op: None, ty },
            space: if mnemonic == "atom.shared.cas" {
                Space::Shared
            } else {
                Space::Global
            },
        },
        "ld" | "ldu" | "st" => {
            let space = m.space.unwrap_or(Space::Global);
            let store = mnemonic == "st";
            let count = m.vec.map_or(1, |v| v.count());
            What::Mem {
                space,
                store,
                ty,
                count,
            }
        }
        _ => return refuse("this instruction"),
    };
    Ok(op)
}

/// The value of operand `v` in lane `l`, read as `ty`.
#[inline]
fn value(warp: &Warp, v: Val, ty: Ty, l: usize) -> u64 {
    match v {
        Val::Reg(r, n) => {
            let r = usize::from(r);
            let lo = u64::from(warp.regs[r][l]);
            let raw = if n >= 2 {
                lo | u64::from(warp.regs[r + 1][l]) << 32
            } else {
                lo
            };
            scalar::read(ty, raw)
        }
        Val::Imm(x) => scalar::read(ty, x),
        Val::Pred(p, neg) => u64::from((warp.preds[usize::from(p & 15)] >> l & 1 != 0) != neg),
        Val::None => 0,
    }
}

/// A predicate operand as a lane mask.
fn pred_mask(warp: &Warp, v: Val) -> u32 {
    match v {
        Val::Pred(p, neg) => {
            let m = warp.preds[usize::from(p & 15)];
            if neg { !m } else { m }
        }
        _ => 0,
    }
}

/// Writes `values` (one per lane) to the destination register(s) in `exec`.
fn write(warp: &mut Warp, d: Val, values: &[u64; 32], exec: u32) {
    if let Val::Reg(r, n) = d {
        lanes::write_wide(&mut warp.regs, usize::from(r), values, n.min(2), exec);
    }
}

fn write_pred(warp: &mut Warp, p: u8, hits: u32, exec: u32) {
    let p = &mut warp.preds[usize::from(p & 15)];
    *p = (*p & !exec) | (hits & exec);
}

/// Executes `op` for the lanes of `exec`; memory addresses are left in `addrs`.
pub fn execute<G: Global>(
    op: &ExtOp,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let [a, b, c, e] = op.src;
    let [ta, tb, tc, te] = op.src_ty;
    match op.what {
        What::Alu(form) => {
            let mut out = [0u64; 32];
            for l in lanes_of(exec) {
                out[l] = scalar::alu(
                    &form,
                    value(warp, a, ta, l),
                    value(warp, b, tb, l),
                    value(warp, c, tc, l),
                    value(warp, e, te, l),
                );
            }
            write(warp, op.d, &out, exec);
        }
        What::Setp { cmp, ty, ftz } => {
            let mut hits = 0u32;
            for l in lanes_of(exec) {
                let x = scalar::setp(cmp, ty, ftz, value(warp, a, ta, l), value(warp, b, tb, l));
                hits |= u32::from(x) << l;
            }
            if let Some(p) = op.pred_written() {
                write_pred(warp, p, hits, exec);
            }
        }
        What::Selp(ty) => {
            let pick = pred_mask(warp, c);
            let mut out = [0u64; 32];
            for l in lanes_of(exec) {
                out[l] = if pick >> l & 1 != 0 {
                    value(warp, a, ty, l)
                } else {
                    value(warp, b, ty, l)
                };
            }
            write(warp, op.d, &out, exec);
        }
        What::Pred(f) => {
            let (x, y) = (pred_mask(warp, a), pred_mask(warp, b));
            let r = match f {
                PredOp::And => x & y,
                PredOp::Or => x | y,
                PredOp::Xor => x ^ y,
                PredOp::Not => !x,
                PredOp::Mov => x,
            };
            if let Some(p) = op.pred_written() {
                write_pred(warp, p, r, exec);
            }
        }
        What::Activemask => write(warp, op.d, &[u64::from(exec); 32], exec),
        What::Vote(mode) => {
            let x = pred_mask(warp, a) & exec;
            let r = match mode {
                VoteMode::All => x == exec,
                VoteMode::Any => x != 0,
                VoteMode::Uni => x == 0 || x == exec,
            };
            if let Some(p) = op.pred_written() {
                write_pred(warp, p, if r { u32::MAX } else { 0 }, exec);
            }
        }
        What::Ballot => {
            let x = pred_mask(warp, a) & exec;
            write(warp, op.d, &[u64::from(x); 32], exec);
        }
        What::Shfl(mode) => shuffle(op, mode, warp, exec),
        What::Atom { .. } => return atomic(op, warp, local, global, exec, addrs),
        What::Mem {
            space,
            store,
            ty,
            count,
        } => {
            if exec == 0 {
                return Ok(Access::None);
            }
            return access(
                op, space, store, ty, count, warp, local, global, exec, addrs,
            );
        }
    }
    Ok(Access::None)
}

/// `shfl.sync` (PTX ISA semantics: `c` holds the clamp value in bits 0..5 and the
/// segment mask in bits 8..13).
fn shuffle(op: &ExtOp, mode: ShflMode, warp: &mut Warp, exec: u32) {
    let [a, b, c, _] = op.src;
    let source = match a {
        Val::Reg(r, _) => warp.regs[usize::from(r)],
        _ => [0; 32],
    };
    let mut out = [0u64; 32];
    let mut valid = 0u32;
    for l in lanes_of(exec) {
        let lane = l as i64;
        let bval = (value(warp, b, Ty::U32, l) & 0x1f) as i64;
        let cw = value(warp, c, Ty::U32, l);
        let cval = (cw & 0x1f) as i64;
        let seg = ((cw >> 8) & 0x1f) as i64;
        let max_lane = (lane & seg) | (cval & !seg);
        let min_lane = lane & seg;
        let (j, ok) = match mode {
            ShflMode::Up => (lane - bval, lane - bval >= max_lane),
            ShflMode::Down => (lane + bval, lane + bval <= max_lane),
            ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
            ShflMode::Idx => {
                let j = min_lane | (bval & !seg);
                (j, j <= max_lane)
            }
        };
        let j = if ok { j as usize } else { l };
        out[l] = u64::from(source[j & 31]);
        valid |= u32::from(ok) << l;
    }
    write(warp, op.d, &out, exec);
    if let Some(p) = op.p {
        write_pred(warp, p, valid, exec);
    }
}

/// The byte address `[base + offset]` of each lane of `exec` in `addrs`, checked
/// for an access of `size` bytes: a 64-bit base must have a zero high word, and
/// the address must be a multiple of `size`.
fn addresses(
    op: &ExtOp,
    space: Space,
    size: u32,
    warp: &Warp,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<(), LaneFault> {
    let at = op.addr.unwrap_or(Address {
        base: None,
        wide: false,
        offset: 0,
    });
    for l in lanes_of(exec) {
        let (lo, hi) = match at.base {
            Some(r) => {
                let r = usize::from(r);
                let hi = if at.wide { warp.regs[r + 1][l] } else { 0 };
                (warp.regs[r][l], hi)
            }
            None => (0, 0),
        };
        if hi != 0 {
            return Err((FaultKind::WideAddress { hi, lo }, l as u32));
        }
        addrs[l] = lo.wrapping_add(at.offset as u32);
    }
    for l in lanes_of(exec) {
        if addrs[l] % size != 0 {
            let addr = addrs[l];
            let kind = if size == 4 {
                FaultKind::Misaligned { space, addr }
            } else {
                FaultKind::MisalignedBy { space, addr, size }
            };
            return Err((kind, l as u32));
        }
    }
    Ok(())
}

/// An atomic for the lanes of `exec`. In shared memory it takes effect now; in
/// global memory the mode's [`Global`] applies it (an atomic of no lane is still
/// an access that waits for memory like any other).
pub fn atomic<G: Global>(
    op: &ExtOp,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let What::Atom { atom, space } = op.what else {
        return Ok(Access::None);
    };
    let words = atom.words();
    let size = 4 * u32::from(words);
    addresses(op, space, size, warp, exec, addrs)?;
    let [a, b, ..] = op.src;
    let mut va = [0u64; 32];
    let mut vb = [0u64; 32];
    for l in lanes_of(exec) {
        va[l] = value(warp, a, atom.ty, l);
        vb[l] = value(warp, b, atom.ty, l);
    }
    let dst = op.dst().map(|(r, _)| r);
    if space == Space::Shared {
        if exec == 0 {
            return Ok(Access::None);
        }
        // The last word of an 8-byte value must be inside the space too.
        let last = addrs.map(|x| x.wrapping_add(size - 4));
        check_bounded(space, addrs, exec, local.shared_bytes, true)?;
        check_bounded(space, &last, exec, local.shared_bytes, true)?;
        let mut shared = SharedWords(&mut *local.shared);
        let old = atomic_lanes(&mut shared, atom, addrs, &va, &vb, exec);
        if dst.is_some() {
            write(warp, op.d, &old, exec);
        }
        return Ok(Access::SharedAtomic);
    }
    check_global(global.layout(), addrs, exec, size, true)?;
    global.atomic(warp, atom, dst, addrs, &va, &vb, exec);
    Ok(Access::Atomic { words })
}

/// A load or store of `count` elements of `ty` for the lanes of `exec`.
#[allow(clippy::too_many_arguments)]
fn access<G: Global>(
    op: &ExtOp,
    space: Space,
    store: bool,
    ty: Ty,
    count: u8,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let elem = (ty.bits() / 8).max(1);
    let size = elem * u32::from(count);
    addresses(op, space, size, warp, exec, addrs)?;
    let (data, dst) = match (op.src[0], op.d) {
        (Val::Reg(s, _), _) if store => (s, 0),
        (_, Val::Reg(d, _)) => (0, d),
        _ => (0, 0),
    };
    if elem < 4 {
        // Each element on its own, into or from consecutive registers; a global
        // access's transactions are those of all its elements, queued once.
        let first = *addrs;
        let mut result = Access::None;
        for j in 0..count {
            *addrs = first.map(|a| a.wrapping_add(elem * u32::from(j)));
            let k = Reg::from(j);
            result = narrow(
                space,
                store,
                ty,
                data + k,
                dst + k,
                warp,
                local,
                global,
                exec,
                addrs,
            )?;
        }
        *addrs = first;
        return Ok(match result {
            Access::Global { store, .. } => Access::Global {
                store,
                words: size.div_ceil(4) as u8,
            },
            other => other,
        });
    }
    let first = *addrs;
    let mut result = Access::None;
    for j in 0..size / 4 {
        let word: Lanes = std::array::from_fn(|l| first[l].wrapping_add(4 * j));
        let k = j as Reg;
        result = memory(
            space,
            store,
            data + k,
            dst + k,
            warp,
            local,
            global,
            exec,
            &word,
        )?;
    }
    *addrs = first;
    Ok(match result {
        Access::Global { store, .. } => Access::Global {
            store,
            words: (size / 4) as u8,
        },
        other => other,
    })
}

/// The 8- or 16-bit field of type `ty` at byte address `byte` of `word`, sign- or
/// zero-extended to 32 bits.
pub(crate) fn field(ty: Ty, word: u32, byte: u32) -> u32 {
    let mask = (1u32 << ty.bits()) - 1;
    scalar::extend(ty, u64::from((word >> (8 * (byte & 3))) & mask)) as u32
}

/// `word` with the 8- or 16-bit field of type `ty` at byte address `byte` replaced
/// by the low bits of `value`.
pub(crate) fn merge_field(ty: Ty, word: u32, byte: u32, value: u32) -> u32 {
    let mask = (1u32 << ty.bits()) - 1;
    let shift = 8 * (byte & 3);
    (word & !(mask << shift)) | ((value & mask) << shift)
}

/// An 8- or 16-bit access: loads extract the value from its word, stores merge it
/// into its word lane by lane (so lanes writing bytes of one word all land).
#[allow(clippy::too_many_arguments)]
fn narrow<G: Global>(
    space: Space,
    store: bool,
    ty: Ty,
    data: Reg,
    dst: Reg,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    exec: u32,
    addrs: &mut Lanes,
) -> Result<Access, LaneFault> {
    let bytes: Lanes = *addrs;
    let words: Lanes = bytes.map(|a| a & !3);
    if space == Space::Global {
        // Global memory may be deferred: the extraction and the merge happen where
        // the word is read, lane by lane, so lanes writing bytes of one word all land.
        check_global(global.layout(), &bytes, exec, ty.bits() / 8, store)?;
        if store {
            global.store_narrow(ty, &bytes, &warp.regs[usize::from(data)], exec);
        } else {
            global.load_narrow(warp, dst, ty, &bytes, exec);
        }
        return Ok(Access::Global { store, words: 1 });
    }
    if !store {
        let result = memory(space, false, 0, dst, warp, local, global, exec, &words)?;
        let d = usize::from(dst);
        for l in lanes_of(exec) {
            warp.regs[d][l] = field(ty, warp.regs[d][l], bytes[l]);
        }
        return Ok(result);
    }
    let source = warp.regs[usize::from(data)];
    let merge = |old: u32, l: usize| merge_field(ty, old, bytes[l], source[l]);
    match space {
        Space::Shared => {
            let shared = &mut *local.shared;
            check_bounded(space, &words, exec, local.shared_bytes, true)?;
            for l in lanes_of(exec) {
                let i = (words[l] / 4) as usize;
                shared[i] = merge(shared[i], l);
            }
            Ok(Access::Shared)
        }
        _ => {
            // A Communication Buffer: the field merges into the producer's word,
            // which then counts as written (the CB checker tracks whole words).
            let Some(side) = space.cb_side() else {
                // Parameter space is read-only: the table has no such store.
                return Ok(Access::None);
            };
            let lane0 = exec.trailing_zeros();
            let port = local.ports[side.code() as usize]
                .as_mut()
                .ok_or((FaultKind::NoCbPort { side }, lane0))?;
            check_bounded(space, &words, exec, port.words() * 4, true)?;
            for l in lanes_of(exec) {
                let w = words[l] / 4;
                let old = port.buffer[w as usize];
                port.write(w, merge(old, l));
            }
            Ok(Access::Cb)
        }
    }
}
