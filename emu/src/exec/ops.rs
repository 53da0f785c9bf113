//! The decoded program both execution modes run: each instruction becomes an
//! [`Op`] once, at load, with every operand resolved to a slot of the warp's
//! register file (general registers, then the special registers the code reads,
//! then the kernel's immediates and symbol addresses: constants, one read-only
//! copy shared by every warp; a 64-bit value takes two consecutive slots), its
//! meaning as a [`Run`] (for register operations a lane function stamped from the
//! ISA table's `sem` column, see [`crate::exec::decode`]), and beside it in
//! [`OpInfo`] what the timing model and the counters need (execution class,
//! scoreboard lists, register-file accesses). The code is cut into basic blocks
//! ([`Program::block_of`]) at branch targets, reconvergence points and after every
//! instruction that ends straight-line execution.

use crate::exec::lanes::Lanes;
use crate::exec::warp::{RegLayout, Warp};
use crate::sem::Form;
use crate::sem::memory::Atomic;
use spu_isa::{ExecClass, Guard, Side, Space, Ty};

/// Index of a slot in a warp's register file: a general register, a constant or a
/// special register (see [`crate::exec::warp::RegLayout`]).
pub type Reg = u16;

/// "No register" (an operand the instruction does not have).
pub const NO_REG: Reg = Reg::MAX;

/// "No reconvergence point" of a branch.
pub const NO_PC: u32 = u32::MAX;

/// Applies a register operation to the lanes of the mask: what an [`Op`] of
/// [`Run::Lanes`] does.
pub type LaneFn = fn(&mut Warp, &Op, u32);

/// A load or store: its state space, element type and elements per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mem {
    pub space: Space,
    pub ty: Ty,
    /// Elements per lane (`.v2`, `.v4`).
    pub count: u8,
}

impl Mem {
    /// A plain 32-bit access of one element, which the fast path takes.
    pub fn is_word(&self) -> bool {
        self.ty.bits() == 32 && self.count == 1
    }
}

/// What an instruction does.
#[derive(Debug, Clone, Copy)]
pub enum Run {
    /// A register operation (arithmetic, conversions, comparisons, predicate
    /// logic, warp operations), applied lane by lane.
    Lanes(LaneFn),
    Load(Mem),
    /// Stores operand `a`.
    Store(Mem),
    /// `atom` (the old value to `d`, if any) or `red`, in global or shared memory.
    Atomic {
        atom: Atomic,
        space: Space,
    },
    /// Branch to `target`; divergent paths meet again at `reconv` (or [`NO_PC`]).
    Bra {
        target: u32,
        reconv: u32,
    },
    Exit,
    /// Call the function at `target` with a local frame `frame_bytes` past the
    /// caller's.
    Call {
        target: u32,
        frame_bytes: u32,
    },
    /// Return from the running call (outside any call: end the thread).
    Ret,
    /// The built-in `vprintf`, its frame `frame_bytes` past the caller's.
    Printf {
        frame_bytes: u32,
    },
    Nop,
    BarSync,
    BlockSync(Option<Side>),
}

impl Run {
    /// True for instructions after which a warp's straight-line run ends: control
    /// flow, barriers, and atomics (whose result may come from other units).
    pub fn ends_block(&self) -> bool {
        matches!(
            self,
            Run::Bra { .. }
                | Run::Exit
                | Run::Call { .. }
                | Run::Ret
                | Run::BarSync
                | Run::BlockSync(_)
                | Run::Atomic { .. }
        )
    }

    /// True for instructions that reach beyond the warp's registers, predicates
    /// and SIMT stack, or wait for others: stores and atomics (any space), calls
    /// and returns (their frames live in local memory), `printf`, barriers and
    /// blocksyncs. A loop of other instructions changes nothing another warp
    /// can see.
    pub fn acts_beyond_warp(&self) -> bool {
        matches!(
            self,
            Run::Store(_)
                | Run::Atomic { .. }
                | Run::Call { .. }
                | Run::Ret
                | Run::Printf { .. }
                | Run::BarSync
                | Run::BlockSync(_)
        )
    }
}

/// A predicate operand: its index and whether it is negated (`!%p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PredSrc {
    pub index: u8,
    pub negated: bool,
}

impl PredSrc {
    /// The lanes where the operand holds.
    #[inline(always)]
    pub fn mask(self, preds: &[u32; 16]) -> u32 {
        let m = preds[usize::from(self.index & 15)];
        if self.negated { !m } else { m }
    }
}

/// `[base + offset]`: `base` is a register slot (a zero constant for `[offset]`);
/// `wide` when it is a 64-bit register pair, whose high word must be zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    pub base: Reg,
    pub wide: bool,
    pub offset: i32,
}

/// A decoded instruction ready to execute.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub run: Run,
    pub guard: Guard,
    /// Types and modifiers, as the operation reads them.
    pub form: Form,
    /// First register written, or [`NO_REG`].
    pub d: Reg,
    /// Registers written from `d` (2 for a 64-bit value, 2 or 4 for a vector load).
    pub d_regs: u8,
    /// Value operands in order (`a`, `b`, `c`, `e`; a store's data is `a`), as
    /// register slots ([`NO_REG`] where absent; a 64-bit value starts a pair).
    pub src: [Reg; 4],
    /// The type each value operand is read as.
    pub src_ty: [Ty; 4],
    /// Predicate written (`setp`, predicate logic, `vote`, the `p` of `shfl d|p`),
    /// if any.
    pub pd: Option<u8>,
    /// Predicate operands read (`selp`'s choice; the operands of predicate logic
    /// and `vote`).
    pub pa: PredSrc,
    pub pb: PredSrc,
    pub addr: Address,
}

impl Op {
    /// Value operand `k` in every lane (a register or a constant).
    #[inline(always)]
    pub fn lanes<'w>(&self, warp: &'w Warp, k: usize) -> &'w Lanes {
        warp.reg(usize::from(self.src[k]))
    }
}

/// What the timing model and the counters need to know about an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub class: ExecClass,
    /// General registers the scoreboard checks (sources and destination).
    pub deps: [Reg; MAX_DEPS],
    pub n_deps: u8,
    /// Predicates the scoreboard checks (guard, predicates read and written).
    pub pdeps: [u8; 3],
    pub n_pdeps: u8,
    /// Register-file operand accesses per thread (general registers read plus
    /// written).
    pub rf_accesses: u8,
    /// The instruction reads `%clock` (its slot is filled at issue).
    pub reads_clock: bool,
    /// The general register written, if any (for traces).
    pub dst_general: Option<u8>,
    /// Consecutive general registers written from [`Op::d`] (2 for a 64-bit
    /// value, 4 for a `.v4` load).
    pub dst_regs: u8,
    /// The instruction writes predicate [`Op::pd`].
    pub writes_pred: bool,
    /// How a global access uses the data caches (GPU machines).
    pub caching: Caching,
    /// A call or a return: it switches the warp to another activation's
    /// registers, so it waits for every pending write of the one it leaves (a
    /// load in flight lands in the activation that issued it).
    pub waits_all: bool,
    /// A return (the entry's own ends the warp, and waits for nothing).
    pub is_return: bool,
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
    /// What the kernel's `printf` calls print (shared by the program's copies).
    pub printed: crate::exec::printlog::PrintSink,
    /// The kernel calls `printf`: timing mode keeps each unit's view of its own
    /// stores for it ([`crate::exec::space::Global::seen`]).
    pub prints: bool,
    /// Per basic block: it needs the per-instruction checks of
    /// [`crate::exec::step::execute_in_block`] (an instruction an Interface Unit
    /// lacks, or one that reads `%clock`); the others run without them.
    pub block_checked: Vec<Checks>,
    /// Per basic block: its instructions change nothing but the warp's
    /// registers, predicates and place (register operations, branches, loads
    /// other than from a CB, no `%clock`), so a warp that comes back to a state
    /// through such blocks alone repeats them while memory stays as it is
    /// ([`crate::timing::unit`]'s functional shortcut).
    pub block_pure: Vec<bool>,
    /// Per basic block in a loop: the registers the loop only counts with
    /// ([`crate::exec::loops`]), which the repeat proof leaves out.
    pub counting: crate::exec::loops::Counting,
}

/// What the instructions of a basic block need checked as they execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Checks {
    /// Some instruction is not available on an Interface Unit.
    pub not_on_iu: bool,
    /// Some instruction reads `%clock`.
    pub clock: bool,
}

impl Checks {
    /// The checks a unit running IU code (`is_iu`) must make in the block.
    #[inline(always)]
    pub fn needed(self, is_iu: bool) -> bool {
        self.clock || (is_iu && self.not_on_iu)
    }
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
        self.ops.iter().any(|o| match o.run {
            Run::Load(m) | Run::Store(m) => m.space.cb_side().is_some(),
            Run::BlockSync(_) => true,
            _ => false,
        })
    }

    /// True when the kernel can take a lock: it has a compare-and-swap or an
    /// exchange atomic (`atom.cas`, `atom.exch`), what a spin lock is taken with.
    pub fn takes_locks(&self) -> bool {
        self.ops.iter().any(|o| match o.run {
            Run::Atomic { atom, .. } => matches!(atom.op, None | Some(spu_isa::AtomOp::Exch)),
            _ => false,
        })
    }

    /// True when the kernel uses the global `bar.blocksync`.
    pub fn uses_global_sync(&self) -> bool {
        self.ops
            .iter()
            .any(|o| matches!(o.run, Run::BlockSync(None)))
    }

    /// The state space instruction `pc` loads from or stores to, and whether it
    /// stores (atomics store): what its memory events count as.
    /// Whether a thread may touch local memory: a local access, a call's frame
    /// or `printf`'s.
    pub fn may_use_local(&self) -> bool {
        self.ops.iter().enumerate().any(|(pc, op)| {
            matches!(op.run, Run::Call { .. } | Run::Printf { .. })
                || matches!(self.access_of(pc), Some((Space::Local, _)))
        })
    }

    pub fn access_of(&self, pc: usize) -> Option<(Space, bool)> {
        match self.ops.get(pc)?.run {
            Run::Load(m) => Some((m.space, false)),
            Run::Store(m) => Some((m.space, true)),
            Run::Atomic { space, .. } => Some((space, true)),
            _ => None,
        }
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
