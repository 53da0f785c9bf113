//! What a run produces: its measurements ([`RunResult`]) or why it stopped
//! ([`Stop`]: a fault, an engine error, a deadlock with the state of every waiting
//! unit, or the cycle limit), plus progress reports for long runs.

use crate::exec::fault::{Fault, FaultKind};
use crate::exec::warp::WarpState;
use crate::load::plan::Role;
use crate::machine::UnitLabel;
use crate::observe::counters::PcCounters;
use crate::observe::counters::Traffic;
use crate::observe::counters::{ComponentCounts, StallReason};
use spu_isa::Side;

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Fault {
        fault: Fault,
        unit: UnitLabel,
        role: Role,
        cycle: u64,
        /// Block dimensions (IU code: threads, 1, 1), to name the thread.
        ntid: [u32; 3],
    },
    /// A boundary engine (DMA or virtual IU) failed.
    Engine {
        kind: FaultKind,
        unit: UnitLabel,
        role: Role,
        cycle: u64,
    },
    Deadlock {
        cycle: u64,
        waiting: Vec<Waiting>,
    },
    CycleLimit {
        limit: u64,
        blocks_done: u64,
        blocks_total: u64,
    },
    /// The run issued `--max-instructions` warp instructions.
    InstructionLimit {
        limit: u64,
        blocks_done: u64,
        blocks_total: u64,
    },
    /// Stopped on request (Ctrl-C).
    Interrupted {
        cycle: u64,
        blocks_done: u64,
        blocks_total: u64,
    },
}

/// The state of one link, for deadlock reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    pub side: Side,
    pub partner: UnitLabel,
    /// Syncs the producer and the consumer end have made on the link.
    pub arrivals: [u64; 2],
}

/// A unit stuck in a deadlock and where it waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub unit: UnitLabel,
    pub role: Role,
    pub pass: [u32; 2],
    /// (warp, pc, state) for code.
    pub warps: Vec<(u32, u32, WarpState)>,
    /// What an engine waits for.
    pub engine: Option<String>,
    pub links: Vec<LinkState>,
}

/// Progress of a run, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub cycle: u64,
    pub blocks_done: u64,
    pub blocks_total: u64,
}

/// CB activity summed over links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CbTotals {
    pub reads: u64,
    pub writes: u64,
    pub read_toggles: u64,
    pub write_toggles: u64,
    pub switches: u64,
}

/// What one unit did over a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitTotals {
    pub label: UnitLabel,
    pub counters: ComponentCounts,
    /// Warp instructions and thread instructions issued.
    pub issued: u64,
    pub thread_instrs: u64,
    /// Cycles with work assigned.
    pub busy_cycles: u64,
    /// Of those, cycles running code (warps), as opposed to engine work.
    pub code_cycles: u64,
    /// Work items completed.
    pub items_done: u64,
    /// Stall cycles by reason, summed over schedulers.
    pub stalls: [u64; StallReason::ALL.len()],
}

/// Everything a finished run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub cycles: u64,
    /// Per unit, in unit order (SMs row-major, then north, south, east, west).
    pub units: Vec<UnitTotals>,
    pub traffic: Traffic,
    pub cb: CbTotals,
    pub pcs: Vec<PcCounters>,
    pub passes: [u32; 2],
    /// Global blocksyncs and link rendezvous completed.
    pub global_syncs: u64,
    pub link_syncs: u64,
    pub dram_busy_cycles: f64,
    /// Activity per interval, when sampling was asked for.
    pub samples: Option<crate::observe::samples::Samples>,
    /// Run without timing: `cycles` counts scheduling rounds, not time.
    pub functional: bool,
    /// What every unit did over time, when asked for.
    pub activity: Option<crate::observe::activity::ActivityLog>,
}
