//! The differential corpus: random kernels over the value-computing forms of the
//! ISA (integer arithmetic of 16, 32 and 64 bits, `mul.wide`/`mad.wide`, bit
//! operations, `.f32`/`.f64` arithmetic in every rounding mode with `.ftz` and
//! `.sat`, `cvt` between all of `u8 ... f64`, `setp`, `selp`, `copysign`),
//! guarded instructions and forward branches that diverge within a warp. Every
//! thread loads its own operands, each instruction's result is stored, and every
//! stored word is compared with the independent [`reference`]. Not covered: the
//! SFU functions `ex2 lg2 sin cos` (the host's `f64` functions define them),
//! memory, atomics and warp operations (the conformance sources test those).
//!
//! [`random`] draws values and operands, [`forms`] instructions, [`generate`]
//! kernels, [`text`] writes their source, [`check`] runs them against the
//! [`reference`].

pub mod check;
mod forms;
pub mod generate;
pub mod random;
pub mod reference;
mod text;

pub use check::{Mode, corpus, expected, input_words, mismatches, run};
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
    pub dst: Reg,
    pub srcs: Vec<Src>,
    /// `selp`'s predicate.
    pub pred: Option<Reg>,
    /// `@%p` or `@!%p`.
    pub guard: Option<(Reg, bool)>,
    /// Where the result is stored (an 8-byte slot), and as how many bits.
    pub slot: usize,
    pub store_bits: u32,
}

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
}

/// Input slots per thread: one per value register.
pub(crate) const IN_SLOTS: usize = REGS * 5;
