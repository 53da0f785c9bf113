//! The SPU timing emulator: loads a kernel onto a configurable grid of SMs and
//! Interface Units, executes it warp by warp (SIMT with reconvergence) and times it
//! cycle by cycle (schedulers, scoreboard, pipelines, shared-memory banks, coalesced
//! global accesses through a bandwidth-limited DRAM queue), skipping idle cycles.
//!
//! The crate is layered; each layer uses only the layers above it in this list,
//! and each folder's `mod.rs` says what it owns:
//!
//! 1. [`machine`]: the machine description (parameters, presets, unit names,
//!    occupancy limits): the `spu-machine` crate, which the assembler shares;
//! 2. [`sem`]: what each instruction means, one scalar function per operation;
//!    [`exec`]: the execution core that applies it: decoded ops, warps and their
//!    SIMT stack, memory accesses, global memory, faults;
//! 3. [`load`](mod@load): loading a kernel: reading it, parameters, buffers, DMA
//!    descriptors, and which unit does what in which pass;
//! 4. [`observe`]: what a run lets you observe (counters, samples, traces,
//!    timelines, results) and the documents made from it (stats, reports);
//! 5. [`timing`]: the timing model (schedulers, memory, DRAM, CB links, engines)
//!    and the grid's event loop that runs both modes;
//! 6. [`cli`]: the command-line front end shared by `spu-emu` and `spu-prof`.
//!
//! The runtime's semantics are documented in `emu/RUNTIME.md`.

pub mod cli;
pub mod exec;
pub mod load;
pub mod observe;
pub mod sem;
pub mod timing;

pub use spu_machine as machine;

pub use load::kernel::{Kernel, read_kernel};
pub use load::{Image, LoadOptions, load};
pub use machine::Machine;
pub use observe::outcome::{Progress, RunResult, Stop};
pub use timing::grid::Grid;

/// Warp instructions a run may issue without a change to global memory, a
/// finished work item or a blocksync before it is taken to spin forever: about
/// a second of `--functional` at full speed.
pub const DEFAULT_SPIN_LIMIT: u64 = 1 << 26;

/// How long to run and what to record beyond the totals.
#[derive(Debug, Clone, Copy)]
pub struct RunControl {
    /// Stop with [`Stop::CycleLimit`] beyond this cycle (in functional mode, once
    /// the busiest unit's warp instructions divided by its schedulers pass it: the
    /// fewest cycles timing mode could take for them).
    pub max_cycles: u64,
    /// Stop with [`Stop::InstructionLimit`] after this many warp instructions (the
    /// bound that matters in functional mode, where a warp runs to its next barrier
    /// in one round).
    pub max_instructions: u64,
    /// Stop with [`Stop::Spinning`] when one unit issues this many warp
    /// instructions (or, timing mode, this many cycles pass) without a change to global memory, a finished work item
    /// or a blocksync anywhere, with [`Stop::Rewriting`] when they pass with no
    /// finished work item or blocksync and changes only to words changed before,
    /// and with [`Stop::Synchronising`] when 16 times as many pass (a blocksync
    /// weighing 1 024 warp instructions) with no finished work item and no change
    /// to a new word; before any of them, with [`Stop::Repeating`] when every
    /// warp comes back to a state it was in while nothing changed (0: never).
    pub spin_limit: u64,
    /// Keep at most this many bytes of the kernel's `printf` output (the texts
    /// last in output order past it are dropped and counted).
    pub printf_limit: usize,
    /// Record activity every this many cycles (power traces).
    pub sample_interval: Option<u64>,
    /// Keep at most this many samples per unit, doubling the interval as often as
    /// needed (pages need few; `--stats` keeps up to
    /// [`observe::samples::MAX_SAMPLES`]).
    pub sample_limit: usize,
    /// Skip timing: identical results and off-chip counts, much faster.
    pub functional: bool,
    /// Set (e.g. by a SIGINT handler) to stop the run with [`Stop::Interrupted`].
    pub interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// Record each unit's activity over time (timelines).
    pub activity: bool,
    /// Record when each instruction ran on each unit, at the boundaries of
    /// `sample_interval` (pages: the "when" of a source line).
    pub pc_samples: bool,
    /// Threads that step units; results and stats are the same for every value.
    pub threads: usize,
    /// Stop at a CB read of a word its producer has not written since the link last
    /// switched (the CB checker; on by default).
    pub cb_check: bool,
    /// Report shared-memory accesses of different warps of a block to one word, one
    /// of them a store, with no barrier between them (the race checker; off by
    /// default, as it slows shared-memory kernels by a quarter or more).
    pub race_check: bool,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            max_cycles: u64::MAX,
            max_instructions: u64::MAX,
            spin_limit: DEFAULT_SPIN_LIMIT,
            printf_limit: exec::printlog::OUTPUT_LIMIT,
            sample_interval: None,
            sample_limit: observe::samples::MAX_SAMPLES,
            functional: false,
            interrupt: None,
            activity: false,
            pc_samples: false,
            threads: 1,
            cb_check: true,
            race_check: false,
        }
    }
}

/// Runs a loaded image on a machine, writing an instruction trace.
pub fn simulate_traced(
    image: &mut Image,
    machine: &Machine,
    control: RunControl,
    tracer: Option<observe::trace::Tracer>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult, Box<Stop>> {
    image.program.printed.set_limit(control.printf_limit);
    Grid::new(image, machine)
        .functional(control.functional)
        .cb_check(control.cb_check)
        .race_check(control.race_check)
        .with_sampling(control.sample_interval)
        .with_sample_limit(control.sample_limit)
        .with_interrupt(control.interrupt)
        .with_instruction_limit(control.max_instructions)
        .with_spin_limit(control.spin_limit)
        .with_activity(control.activity)
        .with_pc_samples(control.pc_samples)
        .with_trace(tracer)
        .with_threads(control.threads)
        .run(control.max_cycles, progress)
}

/// Runs a loaded image on a machine.
pub fn simulate(
    image: &mut Image,
    machine: &Machine,
    control: RunControl,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult, Box<Stop>> {
    simulate_traced(image, machine, control, None, progress)
}

pub use spu_isa::format::write_atomically;
