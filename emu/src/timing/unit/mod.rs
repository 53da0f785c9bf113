//! One unit of the grid: an SM, an Interface Unit, or a boundary unit running a DMA
//! engine or a virtual IU. It owns everything only it touches: its CB ports, the
//! work it runs (code: warps, schedulers, scoreboard, shared memory; or an engine),
//! its counters, its activity record and samples. Units meet only through the
//! grid: rendezvous, work items, global memory and the DRAM queue.

mod code;
mod fast;
mod functional;
mod issue;
mod shortcut;
mod single;
mod site;
mod stall;

use crate::exec::cb::Port;
use crate::exec::warp::WarpState;
pub use crate::exec::warp::WorkCtx;
use crate::load::plan::WorkItem;
use crate::machine::UnitLabel;
use crate::observe::activity::UnitActivity;
use crate::observe::counters::{ComponentCounts, Traffic, UnitCounts};
use crate::observe::outcome::UnitTotals;
use crate::observe::samples::UnitSampler;
use crate::timing::engine::Engine;
pub use crate::timing::env::Env;
pub use crate::timing::params::Timing;
use crate::timing::window::StoreLog;
pub use code::Code;
use spu_isa::Side;

const NEVER: u64 = u64::MAX;

/// The CB ports of block slot `slot`: `more[slot - 1]` on an SPU SM holding
/// several blocks, else `ports` (a GPU's slots have no CBs).
#[inline]
pub fn ports_of<'a>(
    ports: &'a mut [Option<Port>; 4],
    more: &'a mut [[Option<Port>; 4]],
    slot: usize,
) -> &'a mut [Option<Port>; 4] {
    match slot.checked_sub(1) {
        Some(s) if s < more.len() => &mut more[s],
        _ => ports,
    }
}

/// What happened in a step that the grid must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEvent {
    None,
    /// Every live warp reached a blocksync: the unit arrives at the rendezvous.
    BlockSync {
        side: Option<Side>,
        pc: u32,
        /// The block slot that arrived (0 but on an SM holding several blocks).
        slot: usize,
    },
    /// Every warp has exited.
    Finished,
    /// Every warp of one or more of several resident blocks has exited
    /// ([`Code::take_finished`]); other blocks still run.
    BlocksDone,
}

/// What a unit is doing.
#[derive(Debug, Clone)]
pub enum Work {
    Idle,
    Code(Box<Code>),
    Engine(Engine),
}

/// One unit.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Index in the grid (SMs row-major, then north, south, east, west).
    pub id: usize,
    pub label: UnitLabel,
    /// The unit's end of the link on each side (indexed by side code), if it has
    /// that CB port.
    pub ports: [Option<Port>; 4],
    /// The ports of block slots 1, 2, ... of an SM holding several blocks (slot 0
    /// uses `ports`).
    pub slot_ports: Vec<[Option<Port>; 4]>,
    pub work: Work,
    /// Next cycle the unit must be stepped; `NEVER` while it waits for an event.
    pub wake: u64,
    pub busy: bool,
    started: u64,
    /// Work items begun so far (deferred results name the item they belong to).
    pub generation: u64,
    /// Effects and events recorded so far (the last part of their key).
    pub seq: u64,
    /// The item being run, and the queue of the unit's next items.
    pub current: Option<WorkItem>,
    pub queue: std::collections::VecDeque<WorkItem>,
    /// Per-instruction counts of the code the unit ran.
    pub counts: UnitCounts,
    /// Component events of engine work (code work is in `counts`).
    pub engine_counters: ComponentCounts,
    /// Data-cache accesses the unit's loads and stores made (`DCP`, `L2CP`), set
    /// by the grid as it applies them.
    pub cache_counters: ComponentCounts,
    /// Off-chip traffic the unit caused.
    pub traffic: Traffic,
    /// Cycle by which the unit's last DRAM transaction completes.
    pub drained_at: u64,
    /// Cycles with work assigned, less the waits for spill streams.
    pub busy_cycles: u64,
    /// Of those, cycles running code (warps), as opposed to engine work.
    pub code_cycles: u64,
    /// Cycles a restoring virtual IU waited for its spill stream (not busy).
    pub spill_wait_cycles: u64,
    /// Work items completed.
    pub items_done: u64,
    /// Blocksyncs (of a link or global) the unit was released from.
    pub syncs: u64,
    /// Global stores and atomics of functional mode waiting for the end of the
    /// window.
    pub stores: StoreLog,
    pub activity: Option<UnitActivity>,
    pub sampler: Option<UnitSampler>,
    /// When each instruction ran (pages).
    pub pcs: Option<crate::observe::pcs::PcSampler>,
    /// Shared-memory races the unit's finished work found.
    pub races: crate::exec::race::Races,
}

impl Unit {
    pub fn new(id: usize, label: UnitLabel, program: &crate::exec::ops::Program) -> Unit {
        Unit {
            id,
            label,
            ports: [None, None, None, None],
            slot_ports: Vec::new(),
            work: Work::Idle,
            wake: NEVER,
            busy: false,
            started: 0,
            generation: 0,
            seq: 0,
            current: None,
            queue: Default::default(),
            counts: UnitCounts::new(program),
            engine_counters: ComponentCounts::default(),
            cache_counters: ComponentCounts::default(),
            traffic: Traffic::default(),
            drained_at: 0,
            busy_cycles: 0,
            code_cycles: 0,
            spill_wait_cycles: 0,
            items_done: 0,
            syncs: 0,
            stores: StoreLog::default(),
            activity: None,
            sampler: None,
            pcs: None,
            races: Default::default(),
        }
    }

    /// The code being run, if any.
    pub fn code(&self) -> Option<&Code> {
        match &self.work {
            Work::Code(c) => Some(c),
            _ => None,
        }
    }

    /// The engine being run, if any.
    pub fn engine(&self) -> Option<&Engine> {
        match &self.work {
            Work::Engine(e) => Some(e),
            _ => None,
        }
    }

    /// True while running IU code (on an Interface Unit, or on an SM that took an
    /// IU role in a partial pass).
    pub fn is_iu(&self) -> bool {
        self.code().is_some_and(|c| c.ctx.iu.is_some())
    }

    /// Starts `work` at cycle `now`.
    pub fn begin(&mut self, work: Work, now: u64) {
        self.work = work;
        self.generation += 1;
        self.busy = true;
        self.started = now;
        self.wake = now;
    }

    /// Busy cycles up to cycle `t` (work already finished plus the current item),
    /// without waits for spill streams.
    pub fn busy_until(&self, t: u64) -> u64 {
        self.busy_cycles
            + if self.busy {
                let waited = self.engine().map_or(0, |e| e.spill_wait(t));
                t.saturating_sub(self.started).saturating_sub(waited)
            } else {
                0
            }
    }

    /// Ends the current work at cycle `now`.
    pub fn finish(&mut self, now: u64) {
        self.busy = false;
        self.wake = NEVER;
        let waited = self.engine().map_or(0, |e| e.spill_wait(now));
        self.spill_wait_cycles += waited;
        self.busy_cycles += (now - self.started).saturating_sub(waited);
        if matches!(&self.work, Work::Code(c) if !c.warps.is_empty()) {
            self.code_cycles += now - self.started;
        }
        self.items_done += 1;
        if let Work::Code(c) = &mut self.work
            && let Some(r) = &mut c.races
        {
            self.races.merge(r.take());
        }
        self.work = Work::Idle;
    }

    /// Timing mode: issues what can issue at cycle `now` and schedules the next
    /// step; code with one warp per scheduler is stepped by issue
    /// ([`single`]), other code polls every scheduler ([`issue`]).
    pub fn step(&mut self, now: u64, env: &mut Env) -> crate::exec::fault::Faulted<StepEvent> {
        if self.runs_single() {
            self.step_single(now, env)
        } else {
            self.step_polled(now, env)
        }
    }

    /// Releases warps waiting at a blocksync; they may issue from cycle `at`.
    pub fn release_blocksync(&mut self, at: u64, program: &crate::exec::ops::Program) {
        if let Work::Code(c) = &mut self.work {
            c.release_blocksync(at, program);
        }
        self.wake = self.wake.min(at);
    }

    /// Releases the warps of block slot `slot` waiting at a blocksync.
    pub fn release_slot(&mut self, slot: usize, at: u64, program: &crate::exec::ops::Program) {
        if let Work::Code(c) = &mut self.work {
            c.release_slot(slot, at, program);
        }
        self.wake = self.wake.min(at);
    }

    /// Where each waiting warp is, for deadlock reports: (warp, pc, state); a warp
    /// at a barrier reports the barrier's PC.
    pub fn waiting_warps(&self) -> Vec<(u32, u32, WarpState)> {
        self.code().map_or(Vec::new(), |c| {
            c.warps
                .iter()
                .filter(|w| !w.is_done())
                .map(|w| {
                    let pc = match w.state {
                        WarpState::AtBarrier(pc) | WarpState::AtBlockSync(pc) => pc,
                        _ => w.pc().unwrap_or(0),
                    };
                    (w.index, pc, w.state)
                })
                .collect()
        })
    }

    /// The key of the unit's next effect or event at cycle `now`.
    pub fn next_key(&mut self, now: u64) -> crate::timing::effects::Key {
        self.seq += 1;
        (now, self.id as u32, self.seq)
    }

    /// The unit's component counts so far.
    pub fn components(&self, program: &crate::exec::ops::Program) -> ComponentCounts {
        let mut c = self.counts.components(program);
        c.merge(&self.engine_counters);
        c.merge(&self.cache_counters);
        c
    }

    /// Takes the samples due before the unit changes at cycle `now`.
    #[inline(always)]
    pub fn observe(&mut self, now: u64, program: &crate::exec::ops::Program) {
        if (self.sampler.is_some() || self.pcs.is_some())
            && (self.sampler.as_ref().is_some_and(|s| s.due(now))
                || self.pcs.as_ref().is_some_and(|s| s.due(now)))
        {
            self.take_samples(now, program);
        }
    }

    #[cold]
    #[inline(never)]
    fn take_samples(&mut self, now: u64, program: &crate::exec::ops::Program) {
        if let Some(mut s) = self.sampler.take() {
            s.observe(now, || self.components(program), |t| self.busy_until(t));
            self.sampler = Some(s);
        }
        if let Some(mut s) = self.pcs.take() {
            s.observe(now, |pc| self.counts.of(program, pc).0);
            self.pcs = Some(s);
        }
    }

    /// What the unit did over the run; `counters` are its component counts.
    pub fn totals(
        &self,
        counters: ComponentCounts,
        program: &crate::exec::ops::Program,
    ) -> UnitTotals {
        UnitTotals {
            label: self.label,
            counters,
            issued: self.counts.total_issued(program),
            thread_instrs: self.counts.total_threads(program),
            busy_cycles: self.busy_cycles,
            code_cycles: self.code_cycles,
            spill_wait_cycles: self.spill_wait_cycles,
            items_done: self.items_done,
            stalls: self.counts.total_stalls(),
            // What a page shows of the unit (`--html`): only with activity recorded.
            detail: self.activity.as_ref().map(|a| {
                crate::observe::detail::UnitDetail::new(a, &self.ports, &self.counts, program)
            }),
        }
    }
}
