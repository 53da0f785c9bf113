//! The differential corpus: random kernels over the instruction forms of the
//! ISA: integer arithmetic of 16, 32 and 64 bits, `mul.wide`/`mad.wide`, bit
//! operations, `.f32`/`.f64` arithmetic in every rounding mode with `.ftz` and
//! `.sat`, `cvt` between all of `u8 ... f64`, `setp`, `selp`, `copysign`,
//! `testp`; the SFU functions `ex2 lg2 sin cos` (checked against ISA.md's bound:
//! faithfully rounded); `mov` of registers, immediates and special registers,
//! predicate logic, `cvta`; loads and stores (`ld`, `ldu`, `st`, every type,
//! `.v2`/`.v4`) in global, shared, local and parameter space; atomics
//! (`atom.global`, `atom.shared`, `.cas`, `red.global`, every operation and type)
//! on words of the thread's own; the warp operations (`shfl.sync` in every mode,
//! `vote.sync`, `vote.sync.ballot`, `activemask`); `nop`, `bar.sync`, `membar`,
//! `fence`; guarded instructions and forward branches that diverge within a warp.
//! Every thread loads its own operands, each instruction's results are stored, and
//! every stored word (with the thread's scratch memory of each space at the end) is
//! compared with the independent [`reference`], which runs each warp's 32 threads
//! in lockstep. The rows the corpus does not draw (control flow, calls, `printf`,
//! the SPU's blocksync) are listed in [`EXCLUDED`] with their reason.
//!
//! [`random`] draws values and operands; [`forms`] the value-computing
//! instructions, [`moves`] moves, predicates, `testp` and the SFU, [`memory`] loads,
//! stores and atomics, [`warp`] the warp operations; [`generate`] kernels, [`text`]
//! writes their source, [`check`] runs them against the [`reference`].

pub mod check;
mod forms;
pub mod generate;
mod memory;
mod moves;
pub mod random;
pub mod reference;
mod text;
mod warp;

pub use check::{Mode, Totals, corpus, expected, input_words, mismatches, run};
pub use generate::kernel;
use reference::Op;
use spu_isa::Ty;

/// The register files a kernel declares: 16-, 32- and 64-bit integers, `.f32`,
/// `.f64` and predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    H,
    R,
    Rd,
    F,
    Fd,
    P,
}

impl Class {
    pub(crate) const VALUES: [Class; 5] = [Class::H, Class::R, Class::Rd, Class::F, Class::Fd];

    fn prefix(self) -> &'static str {
        match self {
            Class::H => "h",
            Class::R => "r",
            Class::Rd => "rd",
            Class::F => "f",
            Class::Fd => "fd",
            Class::P => "p",
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Class::H => ".b16",
            Class::R => ".b32",
            Class::Rd => ".b64",
            Class::F => ".f32",
            Class::Fd => ".f64",
            Class::P => ".pred",
        }
    }
    pub(crate) fn bits(self) -> u32 {
        match self {
            Class::H => 16,
            Class::R | Class::F => 32,
            Class::Rd | Class::Fd => 64,
            Class::P => 1,
        }
    }
    /// The register file of a value of `ty` (8-bit values live in 16-bit registers).
    pub(crate) fn of(ty: Ty) -> Class {
        match ty {
            Ty::F32 => Class::F,
            Ty::F64 => Class::Fd,
            t if t.bits() <= 16 => Class::H,
            t if t.bits() == 32 => Class::R,
            _ => Class::Rd,
        }
    }
}

/// Registers per file.
pub(crate) const REGS: usize = 6;
/// Predicates.
pub(crate) const PREDS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reg {
    pub class: Class,
    pub n: usize,
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "%{}{}", self.class.prefix(), self.n)
    }
}

/// An operand: a register, or an immediate (its pattern, and its text).
#[derive(Debug, Clone, PartialEq)]
pub enum Src {
    Reg(Reg),
    Imm(u64, String),
}

impl std::fmt::Display for Src {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Src::Reg(r) => r.fmt(f),
            Src::Imm(_, t) => f.write_str(t),
        }
    }
}

/// A generated instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub text: String,
    /// The registers it writes (none for stores, two for `shfl` with its
    /// predicate, one per element for vector loads).
    pub dsts: Vec<Reg>,
    pub srcs: Vec<Src>,
    /// `selp`'s predicate.
    pub pred: Option<Reg>,
    /// `@%p` or `@!%p`.
    pub guard: Option<(Reg, bool)>,
    /// Where the results are stored (8-byte slots from `slot`, one per
    /// destination), and the first one as how many bits.
    pub slot: usize,
    pub store_bits: u32,
}

/// An instruction as [`forms`], [`moves`], [`memory`] and [`warp`] draw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Drawn {
    pub op: Op,
    pub text: String,
    pub dsts: Vec<Reg>,
    pub srcs: Vec<Src>,
    pub pred: Option<Reg>,
    /// Must run unguarded with the whole warp (`shfl.sync`, `bar.sync`).
    pub whole_warp: bool,
}

impl Drawn {
    /// An instruction `text` (without `;`) of one destination.
    pub(crate) fn one(op: Op, name: &str, dst: Reg, srcs: Vec<Src>) -> Drawn {
        let mut operands = vec![dst.to_string()];
        operands.extend(srcs.iter().map(Src::to_string));
        Drawn {
            op,
            text: format!("{name} {};", operands.join(", ")),
            dsts: vec![dst],
            srcs,
            pred: None,
            whole_warp: false,
        }
    }
}

/// The rows of the ISA table the corpus does not draw, each with the reason and
/// where it is tested instead; a test checks that every other row is drawn.
pub const EXCLUDED: &[(&str, &str)] = &[
    (
        "bra",
        "control flow: drawn only as the forward branches of divergent blocks; loops and every target in `tests/conformance/bra.spu`",
    ),
    (
        "exit",
        "ends every kernel of the corpus; `tests/conformance/exit.spu`",
    ),
    (
        "ret",
        "ends a thread or a function: `tests/conformance/ret.spu`, `ret.function.spu`",
    ),
    (
        "call",
        "device functions and their frames: `tests/conformance/call.spu`",
    ),
    (
        "printf",
        "writes text, not values: `tests/conformance/printf.spu`",
    ),
    (
        "bar.blocksync",
        "the SPU's inter-block synchronisation, refused on `gtx480`: `tests/conformance/bar.blocksync.spu`",
    ),
];

/// A piece of a kernel: an instruction, or a block that threads whose predicate
/// holds (or fails, `negated`) jump over.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Inst(Inst),
    Skip {
        pred: Reg,
        negated: bool,
        body: Vec<Inst>,
    },
}

/// A random kernel and what it needs to run.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub text: String,
    pub pieces: Vec<Piece>,
    pub threads: usize,
    pub out_slots: usize,
    /// Per thread: the initial pattern of every value register, by file.
    pub inputs: Vec<Vec<(Reg, u64)>>,
    /// Per thread: the initial words of its scratch memory (the same in global,
    /// shared and local space).
    pub scratch: Vec<Vec<u64>>,
    /// The `.b64` kernel parameters `P0 P1 ...`.
    pub params: Vec<u64>,
}

/// Bytes of scratch memory per thread in each of global, shared and local space.
pub(crate) const SCRATCH: usize = 32;
/// 8-byte slots of the scratch.
pub(crate) const SCRATCH_SLOTS: usize = SCRATCH / 8;
/// Kernel parameters (`.b64` each).
pub(crate) const PARAMS: usize = 2;
/// Input slots per thread: one per value register, then the scratch's words.
pub(crate) const IN_SLOTS: usize = REGS * 5 + SCRATCH_SLOTS;

/// A thread's output area, in 8-byte slots: its global scratch, one slot per
/// result, the final predicates, and copies of its shared and local scratch; an
/// even number, so every thread's global scratch is 16-byte aligned for `.v4`.
pub(crate) fn out_slots(results: usize) -> usize {
    (SCRATCH_SLOTS + results + PREDS + 2 * SCRATCH_SLOTS).next_multiple_of(2)
}
