//! The SPU timing emulator: loads a kernel onto a configurable grid of SMs and
//! Interface Units, executes it warp by warp (SIMT with reconvergence) and times it
//! cycle by cycle (schedulers, scoreboard, pipelines, shared-memory banks, coalesced
//! global accesses through a bandwidth-limited DRAM queue), skipping idle cycles.
//!
//! Module map:
//! - configuration and input: [`machine`] (parameters, presets), [`kernel`] (reading
//!   `.bin`/`.spu`), [`load`](mod@load) (parameters, launch, buffers, DMA
//!   descriptors), [`init`] (buffer initialisers), [`program`] (decoded code);
//! - execution: [`exec`] (arithmetic), [`warp`] (SIMT stack), [`unit`](mod@unit)
//!   (one SM or IU running code), [`timing`] (resolved latencies and pipelines),
//!   [`access`] (memory and CB accesses), [`cb`] (Communication Buffer links),
//!   [`engine`] (DMA engines and virtual IUs), [`plan`] (work per pass), [`grid`]
//!   (the cycle loop and rendezvous), [`dram`], [`memory`];
//! - results: [`outcome`] (results and stops), [`counters`], [`samples`] (activity
//!   over time), [`activity`] and [`timeline`] (unit activity and its SVG),
//!   [`trace`] (instruction trace), [`stats`], [`report`];
//! - front ends: [`cli`] (shared run options), [`session`] (one command-line run),
//!   [`npy`].
//!
//! The runtime's semantics are documented in `emu/RUNTIME.md`.

pub mod access;
pub mod activity;
pub mod cb;
pub mod cli;
pub mod counters;
pub mod dram;
pub mod engine;
pub mod exec;
pub mod fault;
pub mod grid;
pub mod init;
pub mod kernel;
pub mod load;
pub mod machine;
pub mod memory;
pub mod npy;
pub mod outcome;
pub mod plan;
pub mod program;
pub mod report;
pub mod samples;
pub mod session;
pub mod stats;
pub mod timeline;
pub mod timing;
pub mod trace;
pub mod unit;
pub mod warp;

pub use grid::Grid;
pub use kernel::{Kernel, read_kernel};
pub use load::{Image, LoadOptions, load};
pub use machine::Machine;
pub use outcome::{Progress, RunResult, Stop};

/// How long to run and what to record beyond the totals.
#[derive(Debug, Clone, Copy)]
pub struct RunControl {
    /// Stop with [`Stop::CycleLimit`] beyond this cycle.
    pub max_cycles: u64,
    /// Record activity every this many cycles (power traces).
    pub sample_interval: Option<u64>,
    /// Skip timing: identical results and off-chip counts, much faster.
    pub functional: bool,
    /// Set (e.g. by a SIGINT handler) to stop the run with [`Stop::Interrupted`].
    pub interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// Record each unit's activity over time (timelines).
    pub activity: bool,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            max_cycles: u64::MAX,
            sample_interval: None,
            functional: false,
            interrupt: None,
            activity: false,
        }
    }
}

/// Runs a loaded image on a machine, writing an instruction trace.
pub fn simulate_traced(
    image: &mut Image,
    machine: &Machine,
    control: RunControl,
    tracer: Option<trace::Tracer>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult, Box<Stop>> {
    Grid::new(image, machine)
        .functional(control.functional)
        .with_sampling(control.sample_interval)
        .with_interrupt(control.interrupt)
        .with_activity(control.activity)
        .with_trace(tracer)
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
