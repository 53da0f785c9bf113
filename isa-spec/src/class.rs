//! Execution classes: which units may run an instruction, how the timing model
//! schedules it and how the energy models account for it. Rows of the ISA table
//! name these; nothing else in the toolchain assigns them.

/// The set of unit kinds that implement an instruction (thesis Table 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Units(u8);

impl Units {
    /// Streaming multiprocessors only.
    pub const SM: Units = Units(1);
    /// SMs and Interface Units.
    pub const SM_IU: Units = Units(3);

    /// True when Interface Units implement the instruction.
    pub const fn iu(self) -> bool {
        self.0 & 2 != 0
    }

    /// Text for the reference page.
    pub const fn label(self) -> &'static str {
        if self.iu() { "SM, IU" } else { "SM" }
    }
}

/// Pipeline class used by the timing model; latencies and issue limits per class
/// come from the machine file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimingClass {
    /// Integer add/logic/compare/move.
    IntAlu,
    /// Integer multiply (complex ALU).
    IntMul,
    /// Integer divide and remainder (complex ALU).
    IntDiv,
    /// Single-precision add, multiply, fused multiply-add, compare, convert.
    Fpu,
    /// Special function unit: reciprocal, square root, f32 divide, the `.approx`
    /// functions (ex2, lg2, sin, cos, rsqrt).
    Sfu,
    /// Shared-memory access.
    Shared,
    /// Global (off-chip) memory access.
    Global,
    /// Kernel parameter (constant cache) read.
    Param,
    /// Communication Buffer access.
    Cb,
    /// Global atomic read-modify-write.
    Atomic,
    /// Branch, exit, nop.
    Control,
    /// Block-wide barrier.
    Barrier,
    /// Inter-unit blocksync.
    BlockSync,
    /// Double precision add, multiply, fused multiply-add, compare, convert. The
    /// GTX 480 has no DP units: GPGPU-Sim runs DP instructions on the SFU pipeline
    /// (latency 8, initiation interval 8; one SFU pipeline against two f32 pipelines gives
    /// 1/16 of the f32 issue rate, where the GTX 480 itself has 1/8).
    Dp,
    /// Double precision divide, reciprocal and square root (GPGPU-Sim GTX 480:
    /// latency 330, initiation interval 130).
    DpDiv,
    /// Warp shuffle (GPGPU-Sim's SHFL class: latency 32, initiation interval 4).
    Shuffle,
}

/// Instruction class used by the energy models: fine enough for the Cyclops-64
/// instruction-class model (Garcia et al., Table 3) and for mapping onto GPUWattch
/// components (thesis Table 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EnergyClass {
    IntAdd,
    IntLogic,
    IntMul,
    IntDiv,
    Move,
    FpAdd,
    FpMul,
    FpFma,
    FpSfu,
    Convert,
    /// Double precision arithmetic, compare and convert.
    Fp64,
    /// Double precision divide, reciprocal, square root.
    Fp64Sfu,
    /// Cross-lane data exchange (`shfl.sync`).
    Shuffle,
    LoadGlobal,
    StoreGlobal,
    AtomicGlobal,
    LoadShared,
    StoreShared,
    LoadParam,
    LoadCb,
    StoreCb,
    Branch,
    Barrier,
    BlockSync,
    Nop,
}

impl EnergyClass {
    /// Every class, in declaration order.
    pub const ALL: &'static [EnergyClass] = &[
        EnergyClass::IntAdd,
        EnergyClass::IntLogic,
        EnergyClass::IntMul,
        EnergyClass::IntDiv,
        EnergyClass::Move,
        EnergyClass::FpAdd,
        EnergyClass::FpMul,
        EnergyClass::FpFma,
        EnergyClass::FpSfu,
        EnergyClass::Convert,
        EnergyClass::Fp64,
        EnergyClass::Fp64Sfu,
        EnergyClass::Shuffle,
        EnergyClass::LoadGlobal,
        EnergyClass::StoreGlobal,
        EnergyClass::AtomicGlobal,
        EnergyClass::LoadShared,
        EnergyClass::StoreShared,
        EnergyClass::LoadParam,
        EnergyClass::LoadCb,
        EnergyClass::StoreCb,
        EnergyClass::Branch,
        EnergyClass::Barrier,
        EnergyClass::BlockSync,
        EnergyClass::Nop,
    ];
}

/// Everything the table says about how one instruction form executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecClass {
    pub timing: TimingClass,
    pub energy: EnergyClass,
    pub units: Units,
}

/// Shorthand used by the table.
pub(crate) const fn ex(timing: TimingClass, energy: EnergyClass, units: Units) -> ExecClass {
    ExecClass {
        timing,
        energy,
        units,
    }
}
