//! Decoding a kernel's code into the [`Op`]s of [`crate::exec::ops`]: each
//! instruction word becomes a [`Run`] (for register operations, the lane function
//! of its row's `sem` function, stamped here from the ISA table by
//! [`spu_isa::for_each_instr!`], so a row without semantics does not compile), its
//! operands resolved to register-file slots (immediates and symbol addresses
//! become constants, 64-bit ones two slots), its timing facts in [`OpInfo`]; the
//! code is then cut into basic blocks.

use crate::exec::apply;
use crate::exec::loops::{Counting, Flow, Touches};
use crate::exec::ops::{
    Address, Caching, Checks, MAX_DEPS, Mem, NO_PC, NO_REG, Op, OpInfo, PredSrc, Program, Reg, Run,
    SymbolAddresses,
};
use crate::exec::warp::RegLayout;
use crate::sem::Form;
use crate::sem::memory::Atomic;
use spu_isa::table::{OperandKind, Role};
use spu_isa::{
    ExecClass, Guard, Instr, Opcode, Operand, Space, Special, SymbolRef, Ty, operand_type,
};
use std::collections::HashMap;

/// Why the code cannot be prepared: a kernel that needs more register-file slots
/// than exist, or (only damaged binaries get here: the reader validates encodings)
/// a malformed instruction.
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

/// A marker type for each row with a `sem` function, implementing the shape trait of its `sem` column by
/// calling the named function of [`crate::sem`].
macro_rules! marker {
    ($v:ident alu1($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Alu1 for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64) -> u64 { crate::sem::$($f)::+(f, a) }
        }
    };
    ($v:ident alu2($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Alu2 for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64, b: u64) -> u64 { crate::sem::$($f)::+(f, a, b) }
        }
    };
    ($v:ident alu3($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Alu3 for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64, b: u64, c: u64) -> u64 { crate::sem::$($f)::+(f, a, b, c) }
        }
    };
    ($v:ident alu4($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Alu4 for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64, b: u64, c: u64, e: u64) -> u64 {
                crate::sem::$($f)::+(f, a, b, c, e)
            }
        }
    };
    ($v:ident setp($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Setp for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64, b: u64) -> bool { crate::sem::$($f)::+(f, a, b) }
        }
    };
    ($v:ident selp($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Selp for $v {
            #[inline(always)]
            fn eval(f: &Form, a: u64, b: u64, p: bool) -> u64 { crate::sem::$($f)::+(f, a, b, p) }
        }
    };
    ($v:ident pred($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Pred for $v {
            #[inline(always)]
            fn eval(a: bool, b: bool) -> bool { crate::sem::$($f)::+(a, b) }
        }
    };
    ($v:ident shfl($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Shfl for $v {
            fn eval(mode: spu_isa::ShflMode, lane: u32, b: u32, c: u32) -> (usize, bool) {
                crate::sem::$($f)::+(mode, lane, b, c)
            }
        }
    };
    ($v:ident vote($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Vote for $v {
            fn eval(mode: spu_isa::VoteMode, p: u32, exec: u32) -> bool {
                crate::sem::$($f)::+(mode, p, exec)
            }
        }
    };
    ($v:ident ballot($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Ballot for $v {
            fn eval(p: u32, exec: u32) -> u32 { crate::sem::$($f)::+(p, exec) }
        }
    };
    ($v:ident activemask($($f:ident)::+)) => {
        #[derive(Debug)]
        pub struct $v;
        impl crate::exec::apply::Activemask for $v {
            fn eval(exec: u32) -> u32 { crate::sem::$($f)::+(exec) }
        }
    };
    ($v:ident $other:ident $(($($arg:tt)*))?) => {};
}

/// What a row's `sem` column makes of a decoded instruction.
macro_rules! run {
    ($v:ident, $d:ident, alu1 $args:tt) => {
        Run::Lanes(apply::alu1::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, alu2 $args:tt) => {
        Run::Lanes(apply::alu2::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, alu3 $args:tt) => {
        Run::Lanes(apply::alu3::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, alu4 $args:tt) => {
        Run::Lanes(apply::alu4::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, setp $args:tt) => {
        Run::Lanes(apply::setp::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, selp $args:tt) => {
        Run::Lanes(apply::selp::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, pred $args:tt) => {
        Run::Lanes(apply::pred::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, shfl $args:tt) => {
        Run::Lanes(apply::shfl::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, vote $args:tt) => {
        Run::Lanes(apply::vote::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, ballot $args:tt) => {
        Run::Lanes(apply::ballot::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, activemask $args:tt) => {
        Run::Lanes(apply::activemask::<rows::$v>(&$d.op))
    };
    ($v:ident, $d:ident, load) => {
        Run::Load($d.mem()?)
    };
    ($v:ident, $d:ident, store) => {
        Run::Store($d.mem()?)
    };
    ($v:ident, $d:ident, atomic) => {
        $d.atomic()?
    };
    ($v:ident, $d:ident, branch) => {
        $d.branch()?
    };
    ($v:ident, $d:ident, exit) => {
        Run::Exit
    };
    ($v:ident, $d:ident, ret) => {
        Run::Ret
    };
    ($v:ident, $d:ident, call) => {
        $d.call()?
    };
    ($v:ident, $d:ident, printf) => {
        match $d.instr.operands() {
            [Operand::Imm(frame), ..] => Run::Printf {
                frame_bytes: frame * 16,
            },
            _ => return Err("a printf without a frame".into()),
        }
    };
    ($v:ident, $d:ident, nop) => {
        Run::Nop
    };
    ($v:ident, $d:ident, barrier) => {
        Run::BarSync
    };
    ($v:ident, $d:ident, blocksync) => {
        Run::BlockSync($d.instr.mods.side)
    };
}

macro_rules! stamp_decoder {
    ($(
        $variant:ident {
            mnemonic: $mnemonic:literal,
            opcode: $opcode:literal,
            fields: $fields:expr,
            exec: $exec:expr,
            rules: $rules:expr,
            flow: $flow:ident,
            sem: $sem:ident $(($($sem_arg:tt)*))?,
            doc: $doc:literal,
            example: $example:literal,
        },
    )*) => {
        /// The marker type of each row ([`crate::exec::apply`]'s traits).
        #[allow(non_camel_case_types)]
        mod rows {
            use crate::sem::Form;
            $(marker!($variant $sem $(($($sem_arg)*))?);)*
        }

        /// What the instruction being decoded does, from its row's `sem` column.
        fn run_of(d: &Draft) -> Result<Run, String> {
            Ok(match d.instr.opcode {
                $(Opcode::$variant => run!($variant, d, $sem $(($($sem_arg)*))?),)*
            })
        }
    };
}

spu_isa::for_each_instr!(stamp_decoder);

/// A source operand before register-file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    None,
    /// A register and how many consecutive ones it starts.
    Reg(u8, u8),
    /// An immediate or symbol address, extended to its operand's type; `wide`
    /// when the operand is 64 bits (two constant slots).
    Imm(u64, bool),
    Special(Special),
}

/// An instruction decoded, before its operands get slots.
struct Draft {
    instr: Instr,
    /// The op with every slot still unresolved ([`NO_REG`]).
    op: Op,
    srcs: [Src; 4],
    /// `[base + offset]`: the base register and whether it is a pair.
    base: Option<(u8, bool)>,
    /// The general register written and how many from it.
    dst: Option<(u8, u8)>,
    class: ExecClass,
}

impl Draft {
    fn new(instr: Instr, symbols: SymbolAddresses) -> Result<Draft, String> {
        let spec = instr.opcode.spec();
        let m = instr.mods;
        let mut d = Draft {
            instr,
            op: Op {
                run: Run::Nop,
                guard: instr.guard,
                form: Form::of(&m),
                d: NO_REG,
                d_regs: 0,
                src: [NO_REG; 4],
                src_ty: [Ty::U32; 4],
                pd: None,
                pa: PredSrc::default(),
                pb: PredSrc::default(),
                addr: Address {
                    base: NO_REG,
                    wide: false,
                    offset: 0,
                },
            },
            srcs: [Src::None; 4],
            base: None,
            dst: None,
            class: instr.exec_class(),
        };
        let (mut values, mut preds) = (0, 0);
        for (i, ((_, kind, oty, role), operand)) in
            spec.operands().zip(instr.operands()).enumerate()
        {
            let ty = operand_type(oty, &m).unwrap_or(Ty::U32);
            let wide = ty.bits() == 64;
            let src = match *operand {
                Operand::Reg(r) if role == Role::Def => {
                    d.dst = Some((r, instr.operand_regs(i)));
                    continue;
                }
                Operand::Pred(p) | Operand::PredNot(p) if role == Role::Def => {
                    d.op.pd = Some(p);
                    continue;
                }
                Operand::Pred(p) | Operand::PredNot(p) => {
                    let src = PredSrc {
                        index: p,
                        negated: matches!(operand, Operand::PredNot(_)),
                    };
                    match preds {
                        0 => d.op.pa = src,
                        _ => d.op.pb = src,
                    }
                    preds += 1;
                    continue;
                }
                Operand::Absent | Operand::Target(_) => continue,
                Operand::Mem { base, wide, offset } => {
                    d.base = base.map(|b| (b, wide));
                    d.op.addr.wide = wide;
                    d.op.addr.offset = i32::from(offset);
                    continue;
                }
                // The member mask is recorded, not checked.
                _ if kind == OperandKind::Mask => continue,
                _ if kind == OperandKind::OptPred => continue,
                Operand::Reg(r) => Src::Reg(r, instr.operand_regs(i)),
                Operand::Imm16(raw) => Src::Imm(Operand::widen_imm16(raw, ty), wide),
                Operand::Imm(v) => Src::Imm(u64::from(v), wide),
                Operand::Imm32(v) => Src::Imm(Operand::widen_imm32(v, ty), wide),
                Operand::Special(s) => Src::Special(s),
                Operand::Symbol { sym, offset } => {
                    let base = match sym {
                        SymbolRef::Buffer(i) => symbols.buffers.get(usize::from(i)),
                        SymbolRef::Shared(i) => symbols.shared.get(usize::from(i)),
                    };
                    let base = *base.ok_or(format!("symbol {sym:?} is not declared"))?;
                    Src::Imm(u64::from(base.wrapping_add(offset as u32)), wide)
                }
            };
            if values >= 4 {
                return Err(format!("`{}` has too many value operands", spec.mnemonic));
            }
            d.srcs[values] = src;
            d.op.src_ty[values] = ty;
            values += 1;
        }
        d.op.d_regs = d.dst.map_or(0, |(_, n)| n);
        Ok(d)
    }

    /// The general registers the instruction reads (operands, then the
    /// address base) and writes, pairs and groups whole.
    fn touches(&self) -> Touches {
        let span = |(r, n): (u8, u8)| (0..n).map(move |k| Reg::from(r) + Reg::from(k));
        let srcs = self.srcs.iter().filter_map(|s| match *s {
            Src::Reg(r, n) => Some((r, n)),
            _ => None,
        });
        let base = self.base.map(|(b, wide)| (b, if wide { 2 } else { 1 }));
        let conditional = self.op.guard != Guard::Always;
        Touches {
            reads: srcs.chain(base).flat_map(span).collect(),
            writes: self.dst.into_iter().flat_map(span).collect(),
            clock: self.srcs.contains(&Src::Special(Special::Clock)),
            registers_only: matches!(self.op.run, Run::Lanes(_)) && self.op.pd.is_none(),
            flow: match self.op.run {
                Run::Bra { target, reconv } => Flow::Branch {
                    target,
                    reconv: (reconv != NO_PC).then_some(reconv),
                    conditional,
                },
                Run::Call { target, .. } => Flow::Call { target },
                Run::Ret => Flow::Return { conditional },
                Run::Exit => Flow::Exit { conditional },
                _ => Flow::Next,
            },
        }
    }

    /// The load or store of this `ld`, `ldu` or `st`.
    fn mem(&self) -> Result<Mem, String> {
        let m = self.instr.mods;
        Ok(Mem {
            space: m.space.unwrap_or(Space::Global),
            ty: m.ty.ok_or("a load or store without a type")?,
            count: m.vec.map_or(1, |v| v.count()),
        })
    }

    /// The atomic of this `atom` or `red`.
    fn atomic(&self) -> Result<Run, String> {
        let m = self.instr.mods;
        let space = match self.instr.opcode {
            Opcode::AtomShared | Opcode::AtomSharedCas => Space::Shared,
            _ => Space::Global,
        };
        let op = match self.instr.opcode {
            Opcode::AtomGlobalCas | Opcode::AtomSharedCas => None,
            _ => Some(m.atom.ok_or("an atomic without an operation")?),
        };
        Ok(Run::Atomic {
            atom: Atomic {
                op,
                ty: m.ty.unwrap_or(Ty::U32),
            },
            space,
        })
    }

    /// The call of this `call`: its target and frame (in 16-byte units).
    fn call(&self) -> Result<Run, String> {
        match self.instr.operands() {
            [Operand::Target(t), Operand::Imm(frame), ..] => Ok(Run::Call {
                target: *t,
                frame_bytes: frame * 16,
            }),
            _ => Err("a call without a target".into()),
        }
    }

    /// The branch of this `bra`.
    fn branch(&self) -> Result<Run, String> {
        match self.instr.operands().first() {
            Some(Operand::Target(t)) => Ok(Run::Bra {
                target: *t,
                reconv: self.instr.reconv.unwrap_or(NO_PC),
            }),
            _ => Err("a branch without a target".into()),
        }
    }
}

/// Decodes every instruction word; `declared_regs` is the kernel's declared general
/// register count (the code may use more).
pub fn decode_program(
    code: &[u64],
    symbols: SymbolAddresses,
    declared_regs: usize,
) -> Result<Program, DecodeError> {
    let mut drafts = Vec::with_capacity(code.len());
    for (pc, &word) in code.iter().enumerate() {
        let damaged = |what: String| DecodeError::Damaged { pc, what };
        let instr = Instr::decode(word).map_err(|e| damaged(e.to_string()))?;
        drafts.push(Draft::new(instr, symbols).map_err(damaged)?);
    }
    let layout = Layout::of(&drafts, declared_regs)?;
    let mut ops = Vec::with_capacity(drafts.len());
    let mut info = Vec::with_capacity(drafts.len());
    let mut touches = Vec::with_capacity(drafts.len());
    for (pc, d) in drafts.iter_mut().enumerate() {
        for (k, s) in d.srcs.iter().enumerate() {
            d.op.src[k] = layout.slot(*s);
        }
        d.op.d = d.dst.map_or(NO_REG, |(r, _)| Reg::from(r));
        d.op.addr.base = d.base.map_or(layout.zero, |(b, _)| Reg::from(b));
        d.op.run = run_of(d).map_err(|what| DecodeError::Damaged { pc, what })?;
        let t = d.touches();
        info.push(info_of(d, &t));
        touches.push(t);
        ops.push(d.op);
    }
    let (block_of, block_starts) = basic_blocks(&ops);
    let block_checked = block_starts
        .windows(2)
        .map(|b| {
            let facts = &info[b[0] as usize..b[1] as usize];
            Checks {
                not_on_iu: facts.iter().any(|i| !i.class.units.iu()),
                clock: facts.iter().any(|i| i.reads_clock),
            }
        })
        .collect();
    let block_pure = block_starts
        .windows(2)
        .map(|b| {
            (b[0] as usize..b[1] as usize).all(|pc| changes_only_the_warp(&ops[pc], &info[pc]))
        })
        .collect();
    let counting = Counting::find(&touches, &block_of, &block_starts);
    let prints = ops.iter().any(|o| matches!(o.run, Run::Printf { .. }));
    Ok(Program {
        prints,
        ops,
        info,
        layout: layout.regs,
        block_of,
        block_starts,
        printed: Default::default(),
        block_checked,
        block_pure,
        counting,
    })
}

/// True for an instruction whose only effect is on its warp's registers,
/// predicates and place: a register operation, a branch, or a load from memory
/// other than a CB (whose reads are recorded), not reading `%clock`.
fn changes_only_the_warp(op: &Op, info: &OpInfo) -> bool {
    !info.reads_clock
        && match op.run {
            Run::Lanes(_) | Run::Bra { .. } | Run::Nop => true,
            Run::Load(m) => m.space.cb_side().is_none(),
            _ => false,
        }
}

/// The register file's layout and where each operand lands in it.
struct Layout {
    regs: RegLayout,
    /// Slot of each distinct 32-bit constant, and of the first of each 64-bit pair.
    singles: HashMap<u32, usize>,
    pairs: HashMap<u64, usize>,
    /// The slot of a zero constant (`[offset]` addresses read it as their base).
    zero: Reg,
}

impl Layout {
    fn of(drafts: &[Draft], declared_regs: usize) -> Result<Layout, DecodeError> {
        let used = drafts
            .iter()
            .flat_map(|d| {
                let srcs = d.srcs.iter().filter_map(|s| match *s {
                    Src::Reg(r, n) => Some((r, n)),
                    _ => None,
                });
                let base = d.base.map(|(b, wide)| (b, if wide { 2 } else { 1 }));
                srcs.chain(base).chain(d.dst)
            })
            .map(|(r, n)| usize::from(r) + usize::from(n))
            .max()
            .unwrap_or(0);
        let general = used.max(declared_regs);
        // Constants are numbered in order of first use (maps keep this linear).
        let mut constants: Vec<u32> = vec![0];
        let mut singles = HashMap::from([(0u32, 0usize)]);
        let mut pairs = HashMap::new();
        let mut specials: Vec<Special> = Vec::new();
        for s in drafts.iter().flat_map(|d| d.srcs) {
            match s {
                Src::Imm(v, false) => {
                    singles.entry(v as u32).or_insert_with(|| {
                        constants.push(v as u32);
                        constants.len() - 1
                    });
                }
                Src::Imm(v, true) => {
                    pairs.entry(v).or_insert_with(|| {
                        constants.extend([v as u32, (v >> 32) as u32]);
                        constants.len() - 2
                    });
                }
                Src::Special(sp) if !specials.contains(&sp) => specials.push(sp),
                _ => {}
            }
        }
        let regs = RegLayout::new(general as u16, specials, constants);
        if regs.slots() >= usize::from(NO_REG) {
            return Err(DecodeError::TooManySlots(format!(
                "the code needs {} register slots (registers, constants, special registers); at most {} fit",
                regs.slots(),
                NO_REG - 1
            )));
        }
        let zero = regs.first_constant() as Reg;
        Ok(Layout {
            regs,
            singles,
            pairs,
            zero,
        })
    }

    /// The slot of an operand (absent ones read the zero constant).
    fn slot(&self, s: Src) -> Reg {
        let constant = |i: usize| (self.regs.first_constant() + i) as Reg;
        match s {
            Src::None => self.zero,
            Src::Reg(r, _) => Reg::from(r),
            Src::Imm(v, false) => constant(self.singles.get(&(v as u32)).copied().unwrap_or(0)),
            Src::Imm(v, true) => constant(self.pairs.get(&v).copied().unwrap_or(0)),
            Src::Special(sp) => {
                let i = self
                    .regs
                    .specials
                    .iter()
                    .position(|&c| c == sp)
                    .unwrap_or(0);
                (self.regs.first_special() + i) as Reg
            }
        }
    }
}

/// The timing facts of a decoded instruction: the general registers it reads
/// (operands, then the address base) and writes, pairs and groups whole; the
/// predicates (guard, the one written, then those read).
fn info_of(d: &Draft, touches: &Touches) -> OpInfo {
    let regs: Vec<Reg> = touches
        .reads
        .iter()
        .chain(&touches.writes)
        .copied()
        .collect();
    let n = regs.len().min(MAX_DEPS);
    let mut deps = [0; MAX_DEPS];
    deps[..n].copy_from_slice(&regs[..n]);
    let guard = match d.op.guard {
        Guard::Always => None,
        Guard::If(p) | Guard::IfNot(p) => Some(p),
    };
    let mut preds: Vec<u8> = guard.into_iter().chain(d.op.pd).collect();
    let read = match d.op.run {
        Run::Lanes(_) => [d.op.pa.index, d.op.pb.index]
            .into_iter()
            .take(predicate_sources(&d.instr))
            .collect(),
        _ => Vec::new(),
    };
    for p in read {
        if preds.len() < 3 && !preds.contains(&p) {
            preds.push(p);
        }
    }
    let mut pdeps = [0; 3];
    pdeps[..preds.len()].copy_from_slice(&preds);
    OpInfo {
        class: d.class,
        deps,
        n_deps: n as u8,
        pdeps,
        n_pdeps: preds.len() as u8,
        rf_accesses: n as u8,
        reads_clock: touches.clock,
        dst_general: d.dst.map(|(r, _)| r),
        dst_regs: d.dst.map_or(0, |(_, n)| n),
        writes_pred: d.op.pd.is_some(),
        caching: caching_of(&d.instr),
        waits_all: matches!(d.op.run, Run::Call { .. } | Run::Ret),
        is_return: matches!(d.op.run, Run::Ret),
    }
}

/// How many predicate operands the instruction reads.
fn predicate_sources(instr: &Instr) -> usize {
    instr
        .opcode
        .spec()
        .operands()
        .filter(|(_, kind, _, role)| {
            *role == Role::Use && matches!(kind, OperandKind::Pred | OperandKind::PredNeg)
        })
        .count()
}

/// Cuts the code at branch targets, reconvergence points and after every
/// instruction that ends straight-line execution.
fn basic_blocks(ops: &[Op]) -> (Vec<u32>, Vec<u32>) {
    let n = ops.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    leader[n] = true;
    for (pc, op) in ops.iter().enumerate() {
        if op.run.ends_block() {
            leader[pc + 1] = true;
        }
        let targets = match op.run {
            Run::Bra { target, reconv } => [target, reconv],
            Run::Call { target, .. } => [target, NO_PC],
            _ => continue,
        };
        for t in targets {
            if let Some(l) = leader.get_mut(t as usize) {
                *l = true;
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

#[cfg(test)]
mod tests {
    use spu_isa::TimingClass;

    fn program(file: &str) -> crate::exec::ops::Program {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let kernel = crate::read_kernel(&path).expect("the kernel assembles");
        let machine = crate::machine::preset("spu-4x4").expect("a preset");
        let image = crate::load(kernel.module, &machine, &Default::default()).expect("it loads");
        image.program
    }

    /// Functional mode checks instruction by instruction exactly the blocks with an
    /// instruction an Interface Unit lacks or a `%clock` read.
    #[test]
    fn blocks_know_which_checks_their_instructions_need() {
        let p = program("tests/faults/iu_fpu.spu");
        for (b, checks) in p.block_checked.iter().enumerate() {
            let range = p.block_starts[b] as usize..p.block_starts[b + 1] as usize;
            let fpu = p.info[range]
                .iter()
                .any(|i| i.class.timing == TimingClass::Fpu);
            assert_eq!(checks.not_on_iu, fpu, "block {b}");
            assert!(!checks.clock && checks.needed(true) == fpu && !checks.needed(false));
        }
        assert!(p.block_checked.iter().any(|c| c.not_on_iu));
        let p = program("../samples/micro/issue.spu");
        let clocked: Vec<bool> = p.block_checked.iter().map(|c| c.clock).collect();
        assert!(clocked.contains(&true) && clocked.contains(&false));
        for (b, checks) in p.block_checked.iter().enumerate() {
            assert_eq!(checks.needed(false), checks.clock, "block {b}");
        }
    }
}
