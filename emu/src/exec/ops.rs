//! The micro-ops ([`Op`]) the kernel's code is decoded into once (by
//! [`crate::exec::decode`]) and both execution modes run: every operand is resolved to an index into the warp's register file, whose
//! slots past the general registers hold the special registers and then the
//! kernel's immediates and symbol addresses (constants, one read-only copy shared
//! by every warp of the kernel), so an instruction never asks what kind of operand
//! it has. Per-instruction facts the timing model and the
//! counters need (execution class, scoreboard lists, register-file accesses) sit
//! beside the ops in [`OpInfo`], and the code is cut into basic blocks
//! ([`Program::block_of`]) at branch targets, reconvergence points and after every
//! instruction that ends straight-line execution.

use spu_isa::{Cmp, ExecClass, Guard, Side, Space, Special, Ty};

/// Index of a slot in a warp's register file: a general register, a constant or a
/// special register (see [`RegLayout`]).
pub type Reg = u16;

/// "No register" (an operand the instruction does not have).
pub const NO_REG: Reg = Reg::MAX;

/// "No reconvergence point" of a branch.
pub const NO_PC: u32 = u32::MAX;

/// Two-operand arithmetic, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    AddI,
    AddF,
    SubI,
    SubF,
    MulLo,
    MulHiU,
    MulHiS,
    MulF,
    DivU,
    DivS,
    DivF,
    RemU,
    RemS,
    MinU,
    MinS,
    MinF,
    MaxU,
    MaxS,
    MaxF,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
}

/// One-operand arithmetic, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    AbsS,
    AbsF,
    NegS,
    NegF,
    Not,
    Rcp,
    Sqrt,
    /// `cvt`: destination type, source type.
    Cvt(Ty, Ty),
}

/// What an instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bin(BinOp),
    Un(UnOp),
    /// `mad.lo`: d = a * b + c.
    MadLo,
    /// `fma.f32`.
    Fma,
    /// Writes predicate `pred` where `a cmp b` holds.
    Setp(Cmp, Ty),
    /// d = pred ? a : b.
    Selp,
    Mov,
    Ld(Space),
    /// Stores `a` to the address.
    St(Space),
    /// A global atomic (`atom`, `atom.cas`): index into [`Program::ext`], whose
    /// entry has every operand.
    Atomic(u32),
    /// Branch to `target`; divergent paths meet again at `reconv` (or [`NO_PC`]).
    Bra {
        target: u32,
        reconv: u32,
    },
    Exit,
    Nop,
    BarSync,
    BlockSync(Option<Side>),
    /// A general-path instruction: index into [`Program::ext`].
    Ext(u32),
}

impl Kind {
    /// True for instructions after which a warp's straight-line run ends: control
    /// flow, barriers, and atomics (whose result may come from other units).
    pub fn ends_block(self) -> bool {
        matches!(
            self,
            Kind::Bra { .. } | Kind::Exit | Kind::BarSync | Kind::BlockSync(_) | Kind::Atomic(_)
        )
    }
}

/// A decoded instruction ready to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: Kind,
    pub guard: Guard,
    /// Register written, or [`NO_REG`].
    pub dst: Reg,
    /// Value operands in order (`a`, `b`, `c`); [`NO_REG`] where absent.
    pub src: [Reg; 3],
    /// Base register of `[base + offset]` (a zero constant for `[offset]`).
    pub base: Reg,
    pub offset: i32,
    /// Predicate written by `setp` or read by `selp`.
    pub pred: u8,
}

/// What the timing model and the counters need to know about an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub class: ExecClass,
    /// General registers the scoreboard checks (sources and destination).
    pub deps: [Reg; MAX_DEPS],
    pub n_deps: u8,
    /// Predicates the scoreboard checks (guard, `selp` source, `setp` destination).
    pub pdeps: [u8; 3],
    pub n_pdeps: u8,
    /// Register-file operand accesses per thread (general registers read plus
    /// written).
    pub rf_accesses: u8,
    /// The instruction reads `%clock` (its slot is filled at issue).
    pub reads_clock: bool,
    /// The general register written, if any (for traces).
    pub dst_general: Option<u8>,
    /// Consecutive general registers written from [`Op::dst`] (2 for a 64-bit
    /// value, 4 for a `.v4` load).
    pub dst_regs: u8,
    /// The instruction writes predicate [`Op::pred`].
    pub writes_pred: bool,
    /// How a global access uses the data caches (GPU machines).
    pub caching: Caching,
}

/// How a global access uses the caches, from its PTX cache operator (PTX ISA,
/// "Cache Operators"; Fermi caches global loads in L1 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Caching {
    /// `.ca` (the default load), `ld.global.nc`, `.wb` (the default store): L1 and
    /// L2.
    #[default]
    All,
    /// `.cg` and `.volatile`: L2 only.
    Global,
    /// `.cs` and `.lu`: L1 and L2, the line inserted to be evicted first.
    Streaming,
    /// `.cv` and `st.wt`: no cache, DRAM each time.
    Bypass,
}

/// Most general registers one instruction touches (`fma.f64`: four pairs).
pub const MAX_DEPS: usize = 10;

impl OpInfo {
    /// General registers the scoreboard checks.
    #[inline]
    pub fn deps(&self) -> &[Reg] {
        &self.deps[..usize::from(self.n_deps)]
    }

    /// Predicates the scoreboard checks.
    #[inline]
    pub fn pdeps(&self) -> &[u8] {
        &self.pdeps[..usize::from(self.n_pdeps)]
    }
}

/// How a warp's register file is laid out: general registers first, then one slot
/// per special register the code reads (both per warp), then one per distinct
/// constant (read-only, shared by every warp: [`RegLayout::constant_slots`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegLayout {
    pub general: u16,
    pub constants: Vec<u32>,
    pub specials: Vec<Special>,
    /// The constant slots' values in every lane, built once per kernel.
    shared: std::sync::Arc<[crate::exec::lanes::Lanes]>,
}

impl RegLayout {
    /// A layout of `general` registers, the given special registers and constants.
    pub fn new(general: u16, specials: Vec<Special>, constants: Vec<u32>) -> RegLayout {
        RegLayout {
            general,
            shared: constants.iter().map(|&c| [c; 32]).collect(),
            constants,
            specials,
        }
    }

    /// Slots per warp.
    pub fn slots(&self) -> usize {
        usize::from(self.general) + self.constants.len() + self.specials.len()
    }

    /// First special-register slot.
    pub fn first_special(&self) -> usize {
        usize::from(self.general)
    }

    /// First constant slot: the slots a warp owns end here.
    pub fn first_constant(&self) -> usize {
        usize::from(self.general) + self.specials.len()
    }

    /// The constant slots, shared by every warp (a block start copies nothing
    /// however many distinct immediates the code has).
    pub fn constant_slots(&self) -> &std::sync::Arc<[crate::exec::lanes::Lanes]> {
        &self.shared
    }
}

/// The decoded code of a kernel.
#[derive(Debug, Clone)]
pub struct Program {
    pub ops: Vec<Op>,
    pub info: Vec<OpInfo>,
    pub layout: RegLayout,
    /// Basic block of each instruction.
    pub block_of: Vec<u32>,
    /// First instruction of each basic block, plus the end of the code.
    pub block_starts: Vec<u32>,
    /// The general-path instructions ([`Kind::Ext`]).
    pub ext: Vec<crate::exec::ext::ExtOp>,
}

impl Program {
    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when there is no code.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// True when the kernel touches a Communication Buffer or synchronises blocks
    /// with `bar.blocksync`: it needs the SPU's CBs.
    pub fn uses_cbs(&self) -> bool {
        self.ops.iter().any(|o| match o.kind {
            Kind::Ld(s) | Kind::St(s) => s.cb_side().is_some(),
            Kind::BlockSync(_) => true,
            _ => false,
        })
    }

    /// True when the kernel uses the global `bar.blocksync`.
    pub fn uses_global_sync(&self) -> bool {
        self.ops.iter().any(|o| o.kind == Kind::BlockSync(None))
    }
}

/// Addresses symbols resolve to.
#[derive(Debug, Clone, Copy)]
pub struct SymbolAddresses<'a> {
    /// Byte address of each buffer.
    pub buffers: &'a [u32],
    /// Byte offset of each shared array.
    pub shared: &'a [u32],
}
