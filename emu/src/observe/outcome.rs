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

// The spin check's weights (`--spin-limit`, `timing::grid::spin`), which its
// messages state.

/// How many times the spin limit the synchronising clock allows.
pub const DEEP: u64 = 16;

/// Warp instructions a blocksync weighs on the synchronising clock: a loop of
/// nothing but syncs reaches the limit after about 2^20 of them (at the default
/// limit), a step of real work between syncs is hardly shortened.
pub const SYNC_WEIGHT: u64 = 1024;

/// Warp instructions a scheduling round of `--functional` weighs at least: a
/// warp waiting for an atomic waits for the end of a window of
/// `latency_cycles.blocksync` rounds (16 by default, about 512 on this clock, as
/// timing mode's cycles count a DRAM latency), so a loop of atomics reaches the
/// limit in about as many iterations in both modes, where counting its few
/// instructions alone took minutes.
pub const ROUND_WEIGHT: u64 = 32;

/// A stuck run of `--functional` on a machine whose SMs hold several of the
/// kernel's blocks at once: functional mode runs one block per SM at a time, so
/// `unstarted` blocks had not started, where timing mode holds `per_sm` per SM,
/// `held` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneBlockPerSm {
    pub per_sm: u32,
    pub held: u64,
    pub unstarted: u64,
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Fault {
        fault: Fault,
        unit: UnitLabel,
        role: Role,
        /// `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        /// Block dimensions (IU code: threads, 1, 1), to name the thread.
        ntid: [u32; 3],
        /// For a CB checker error: the link read and its state.
        cb: Option<Box<CbLink>>,
    },
    /// A boundary engine (DMA or virtual IU) failed.
    Engine {
        kind: FaultKind,
        unit: UnitLabel,
        role: Role,
        /// `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
    },
    Deadlock {
        /// `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        /// Units of one wait chain or cycle, each waiting for the next.
        chain: Vec<Waiting>,
        /// What the chain's last unit waits for.
        end: ChainEnd,
        /// The other waiting units.
        others: Vec<Place>,
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
    /// A unit issued `limit` warp instructions (or, timing mode only, as many
    /// cycles passed: `by_cycles`) without a change to global memory (a store or atomic that gives a
    /// word a new value), a finished work item or a blocksync (`--spin-limit`).
    Spinning {
        limit: u64,
        by_cycles: bool,
        /// The cycle it stopped at; `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        blocks_done: u64,
        blocks_total: u64,
        /// Functional mode left blocks unstarted that timing mode holds.
        one_block_per_sm: Option<OneBlockPerSm>,
    },
    /// As many passed without a finished work item or a blocksync, and the last
    /// quarter of them changed global memory only in words the run had changed
    /// before (`words` in all, `--spin-limit`): a loop that counts, toggles a flag
    /// or sweeps an array forever.
    Rewriting {
        limit: u64,
        by_cycles: bool,
        words: u64,
        /// The cycle it stopped at; `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        blocks_done: u64,
        blocks_total: u64,
        /// Functional mode left blocks unstarted that timing mode holds.
        one_block_per_sm: Option<OneBlockPerSm>,
    },
    /// `limit` (the spin limit times 16) passed without a finished work item
    /// or a change to a word of global memory not changed before, with `syncs`
    /// blocksyncs over the grid in that time, each weighing 1 024 warp instructions
    /// of the unit it released: a loop that synchronises forever (changing only
    /// `words` words, or none).
    Synchronising {
        limit: u64,
        by_cycles: bool,
        syncs: u64,
        words: u64,
        /// The cycle it stopped at; `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        blocks_done: u64,
        blocks_total: u64,
        /// Functional mode left blocks unstarted that timing mode holds.
        one_block_per_sm: Option<OneBlockPerSm>,
    },
    /// Every warp still running came back to a state it had been in (the same
    /// instruction, predicates and registers, those its loop only counts with
    /// aside) having changed nothing outside
    /// itself, and nothing else changed memory meanwhile, so it would repeat
    /// forever; the other warps have exited or wait for them. `running` and
    /// `waiting` warps; one of the running ones, of `unit`, at `pc`; `unstarted`
    /// blocks wait to be placed. `together`: the warps of each unit came back
    /// together, passing only barriers (`bar.sync`) of their own blocks.
    Repeating {
        running: u64,
        waiting: u64,
        unit: UnitLabel,
        pc: u32,
        together: bool,
        unstarted: u64,
        /// The cycle it stopped at; `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        blocks_done: u64,
        blocks_total: u64,
        /// Functional mode left blocks unstarted that timing mode holds.
        one_block_per_sm: Option<OneBlockPerSm>,
    },
    /// The virtual IUs' spilled CB tiles (`bytes` in `tiles`) outgrew the
    /// global memory the buffers leave (`room` bytes of `memory.global_mib`, at
    /// most 1 GiB): a
    /// launch of several passes keeps each tile a pass sends on until the run
    /// ends, so a pass that synchronises forever fills any memory.
    SpillFull {
        bytes: u64,
        tiles: u64,
        room: u64,
        blocks_done: u64,
        blocks_total: u64,
    },
    /// Stopped on request (Ctrl-C).
    Interrupted {
        /// The cycle it stopped at; `None` in functional mode, which has no cycles.
        cycle: Option<u64>,
        blocks_done: u64,
        blocks_total: u64,
    },
    /// The run finished, but the outputs its recordings make (`needed` bytes)
    /// cannot be allocated (a memory limit such as `ulimit -v`).
    OutputMemory { needed: u64 },
    /// The process could no longer allocate the headroom a run keeps free (a
    /// memory limit such as `ulimit -v` reached by what grows during the run).
    HostMemory {
        /// The cycle it stopped at; `None` in functional mode.
        cycle: Option<u64>,
        headroom: u64,
        blocks_done: u64,
        blocks_total: u64,
    },
}

/// The link of a CB checker error: who writes it, how far both ends got, and
/// whether the word read is on its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbLink {
    /// The reader's side of the link.
    pub side: Side,
    /// The reader is the link's consumer end (the usual case).
    pub reader_consumes: bool,
    /// The unit at the other end and what it runs now (`None`: nothing).
    pub partner: Place,
    pub partner_role: Option<Role>,
    /// Syncs the producer and the consumer end have made on the link.
    pub arrivals: [u64; 2],
    pub switches: u64,
    /// The producer has written the word since the last switch: it has not been
    /// handed over yet.
    pub pending: bool,
    /// The kernel syncs with global `bar.blocksync` (every link switches at each).
    pub global_sync: bool,
}

/// Where work runs: a unit, and on an SPU SM holding several blocks its block
/// slot. Shown as `SM (0, 0)` or `SM (0, 0) slot 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub unit: UnitLabel,
    pub slot: Option<u32>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.slot {
            Some(s) => write!(f, "{} slot {s}", self.unit),
            None => write!(f, "{}", self.unit),
        }
    }
}

/// A unit stuck in a deadlock and what it waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub unit: Place,
    pub role: Role,
    pub pass: [u32; 2],
    /// (warp, pc, state) for code.
    pub warps: Vec<(u32, u32, WarpState)>,
    /// What runtime work (a DMA engine or a virtual IU) waits for, in words.
    pub engine: Option<String>,
    /// The link it waits on, with who made the syncs at both ends.
    pub link: Option<BlockedLink>,
}

/// What ends a deadlock's wait chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainEnd {
    /// The last unit waits for the first: a wait cycle.
    Cycle,
    /// The last unit waits for a unit that has finished all its work.
    Finished(Place),
    /// ... for a unit whose next work has not started: sequential passes start it
    /// only when pass `now` has finished.
    NotStarted {
        unit: UnitLabel,
        role: Role,
        pass: [u32; 2],
        now: [u32; 2],
    },
    /// The last unit's warps wait at different barriers, or some have exited.
    OwnWarps,
    /// The last unit waits at a global blocksync that a unit of the chain can
    /// never reach.
    Global,
}

/// A link a unit of a deadlock waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedLink {
    /// The waiting unit's side of the link.
    pub side: Side,
    pub producer: Place,
    pub consumer: Place,
    /// Both ends are block slots of one SM (a CB pair in its shared memory).
    pub inner: bool,
    /// Syncs the producer and the consumer end have made on the link.
    pub arrivals: [u64; 2],
    /// Who made them, in order (producer end, consumer end).
    pub history: [Vec<SyncsBy>; 2],
}

/// The syncs one work item made at one end of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncsBy {
    pub pass: [u32; 2],
    pub role: Role,
    pub count: u64,
    /// For code: the sync instructions and how many syncs each made.
    pub pcs: Vec<(u32, u64)>,
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
    /// Words read and written, and warp accesses, on links between two block slots
    /// of one SM (inner links, carved from its shared memory).
    pub inner_words: u64,
    pub inner_accesses: u64,
}

/// Activity of one data-cache level, summed over its caches (the L1s of all SMs,
/// or the L2 banks). Every count is of line accesses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevel {
    /// Accesses that found their line's data.
    pub hits: u64,
    /// Accesses that missed and went to the next level: they allocate their line,
    /// except local stores in an L1 (write-back on a hit, no allocation on a miss).
    pub misses: u64,
    /// Accesses that found their line's miss outstanding and waited for it.
    pub mshr_merges: u64,
    /// Misses that found every MSHR busy and waited for the earliest to complete.
    pub mshr_stalls: u64,
    /// Dirty lines written back to the next level on eviction (in an L1 only
    /// local stores leave lines dirty).
    pub writebacks: u64,
    /// Accesses that passed the level by (cache operators; stores through the L1).
    pub bypasses: u64,
}

/// Data-cache activity of a run on a machine with caches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheTotals {
    pub l1: CacheLevel,
    pub l2: CacheLevel,
    /// Lines read from and written to DRAM after the caches.
    pub dram_read_lines: u64,
    pub dram_write_lines: u64,
    /// Dirty L2 lines written back when the kernel ended (included in
    /// `dram_write_lines`; no instruction's access caused them).
    #[serde(default)]
    pub end_writeback_lines: u64,
    pub line_bytes: u32,
}

/// What one unit did over a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitTotals {
    pub label: UnitLabel,
    pub counters: ComponentCounts,
    /// Warp instructions and thread instructions issued.
    pub issued: u64,
    pub thread_instrs: u64,
    /// Cycles with work assigned, less the waits for spill streams.
    pub busy_cycles: u64,
    /// Of those, cycles running code (warps), as opposed to engine work.
    pub code_cycles: u64,
    /// Cycles a restoring virtual IU waited for its spill stream (not busy).
    pub spill_wait_cycles: u64,
    /// Work items completed.
    pub items_done: u64,
    /// Stall cycles by reason, summed over schedulers.
    pub stalls: [u64; StallReason::ALL.len()],
    /// Port traffic, rendezvous and time per instruction, when activity was
    /// recorded (for pages).
    pub detail: Option<crate::observe::detail::UnitDetail>,
}

/// How full a GPU's SMs were (`None` on an SPU, which runs one block per SM).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyResult {
    /// Blocks that fit on one SM at once, and the resource that set the number.
    pub blocks_per_sm: u32,
    pub limit: crate::machine::occupancy::Limit,
    /// Warps of one block.
    pub warps_per_block: u32,
    /// Most blocks resident on one SM at any time during the run.
    pub peak_blocks_per_sm: u32,
    /// Resident warps averaged over SMs and cycles, as a fraction of
    /// `sm.max_warps`.
    pub achieved: f64,
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
    pub occupancy: Option<OccupancyResult>,
    /// Global blocksyncs and link rendezvous completed.
    pub global_syncs: u64,
    pub link_syncs: u64,
    pub dram_busy_cycles: f64,
    /// Data-cache activity, on machines with caches (timing mode).
    pub caches: Option<CacheTotals>,
    /// Activity per interval, when sampling was asked for.
    pub samples: Option<crate::observe::samples::Samples>,
    /// When each instruction ran, per unit in unit order (pages).
    pub pc_samples: Option<Vec<crate::observe::pcs::PcSamples>>,
    /// Run without timing: `cycles` counts scheduling rounds, not time.
    pub functional: bool,
    /// What every unit did over time, when asked for.
    pub activity: Option<crate::observe::activity::ActivityLog>,
    /// Shared-memory races between warps of a block (the race checker).
    pub races: crate::exec::race::Races,
}
