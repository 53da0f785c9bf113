//! The SPU (or GPU) in time: the units and the CB links between them, which unit runs which
//! work item (see [`crate::load::plan`]) and when, the event loop (a queue of unit
//! wake-ups, so cycles in which nothing can happen are skipped and idle units are
//! never looked at), the rendezvous of directional and global blocksyncs, deadlock
//! detection and the cycle limit. This module holds the grid's state and acts on
//! what a unit's step did; `build` makes a grid and sets its options, `run` holds
//! the loops and the run's result, `stepping` one step of one unit, `parallel` the
//! window-by-window simulation on one or more threads, `rendezvous` blocksyncs and
//! CB switches, `spin` the spin check, `repeat` the exact proof of an endless loop, `windows` deferred global accesses, `work` starting and finishing
//! work items, `dispatch` a GPU's blocks and occupancy, `stops` what went wrong.

mod build;
mod dispatch;
mod handoff;
mod parallel;
mod rendezvous;
mod repeat;
mod run;
mod spin;
mod stepping;
mod stops;
mod windows;
mod work;

use crate::load::DmaPlan;
use crate::load::Image;
use crate::load::plan::{Geometry, Role};
use crate::machine::{Boundary, PassMode};
use crate::observe::outcome::Stop;
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::cache::Caches;
use crate::timing::cb::Link;
use crate::timing::dram::Dram;
use crate::timing::effects::{Deferred, Key, PENDING};
use crate::timing::engine::{EngineEnv, EngineEvent, SpillStore};
use crate::timing::unit::{StepEvent, Timing, Unit, Work};
use dispatch::Dispatch;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use stepping::{Happened, Shared};

const NEVER: u64 = u64::MAX;

/// What every step reads besides its unit ([`Shared`]), borrowed field by field so
/// the units can be borrowed mutably beside it.
macro_rules! shared {
    ($grid:ident) => {
        Shared {
            program: &$grid.image.program,
            timing: &$grid.timing,
            memory: &$grid.memory,
            params: &$grid.image.params,
            local_bytes: $grid.image.local_bytes,
            spills: &$grid.spills,
            completed: &$grid.completed,
            functional: $grid.functional,
            spill_full: $grid.spill_full,
        }
    };
}
use shared;

/// The grid and its work.
#[derive(Debug)]
pub struct Grid<'a> {
    image: &'a mut Image,
    /// The image's global memory while the grid runs (threads share it between
    /// windows; it changes only when a window closes). It goes back into the
    /// image when the grid is dropped.
    memory: Arc<crate::exec::memory::GlobalMemory>,
    /// Threads that step units (1: the one-thread event loop).
    threads: usize,
    /// Check shared-memory accesses for races between warps.
    race_check: bool,
    timing: Timing,
    geo: Geometry,
    boundary: Boundary,
    pass_mode: PassMode,
    /// Engines sync globally when the kernel's blocks use global blocksync.
    global_sync: bool,
    spill_full: bool,
    dma: [Option<DmaPlan>; 4],
    /// Boxed, so that a round of the threads hands a unit over without copying it.
    #[allow(clippy::vec_box)]
    units: Vec<Box<Unit>>,
    links: Vec<Link>,
    /// Last pass each agent (a unit, or a further block slot of an SM, see
    /// [`Geometry::agent`]) has completed.
    completed: Vec<Option<u32>>,
    /// Per agent: arrived at a global blocksync.
    arrived_global: Vec<bool>,
    /// Per agent of an SM holding several blocks: arrived at a blocksync and not
    /// released yet (so a slot found waiting is not counted twice).
    sync_pending: Vec<bool>,
    left_in_pass: Vec<u64>,
    pass_now: u32,
    dram: Dram,
    /// The data caches (GPU machines), fed where deferred accesses are applied.
    caches: Option<Caches>,
    /// Timing mode: global accesses and DRAM transfers waiting for the end of the
    /// window (or of the step, with `apply_every_step`).
    effects: Vec<Deferred>,
    /// Sequence of grid-level events within a cycle (global sync releases).
    post_seq: u64,
    waves: WaveCache,
    spills: SpillStore,
    /// Bytes of spilled tiles kept (words and their written bits), and the
    /// global memory the buffers leave for them (`memory.global_mib`).
    spilled: u64,
    spill_room: u64,
    blocks_total: u64,
    blocks_done: u64,
    global_syncs: u64,
    link_syncs: u64,
    /// Cycle after the last work item finished.
    last_finish: u64,
    functional: bool,
    /// Functional mode: global memory windows are this many cycles long, and the
    /// current one ends here.
    window: u64,
    window_end: u64,
    /// Unit wake-ups, earliest first (entries whose unit has moved on are
    /// skipped).
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// `--max-instructions`: warp instructions the run may issue (checked every
    /// few windows).
    max_instructions: u64,
    /// `--max-cycles`, including the drain of the last stores.
    max_cycles: u64,
    /// `--spin-limit`: the marks of the run's last progress.
    spin: spin::SpinCheck,
    /// The proof that the run repeats forever (with the spin check).
    repeat: repeat::RepeatCheck,
    /// Windows passed so far: closed with deferred accesses pending, or crossed
    /// with none.
    windows_passed: u64,
    /// `windows_passed` when the instruction and spin limits were last checked.
    limits_checked: u64,
    tracer: Option<Tracer>,
    sampling: Option<u64>,
    activity: bool,
    /// A GPU's blocks: handed to SMs as resident blocks finish.
    gpu: Option<Dispatch>,
}

impl Grid<'_> {
    /// Queues unit `u`'s wake-up, if it has one.
    pub(super) fn schedule(&mut self, u: usize) {
        let unit = &self.units[u];
        if unit.busy && unit.wake < PENDING {
            self.queue.push(Reverse((unit.wake, u)));
        }
    }

    /// The earliest pending wake-up, dropping entries of units that moved on.
    pub(super) fn next_wake(&mut self) -> u64 {
        while let Some(&Reverse((t, u))) = self.queue.peek() {
            let unit = &self.units[u];
            if unit.busy && unit.wake == t {
                return t;
            }
            self.queue.pop();
        }
        NEVER
    }

    /// What the engine of unit `u` touches (the unit must run an engine); its
    /// deferred transfers get `key`.
    pub(super) fn engine_env(
        &mut self,
        u: usize,
        key: Key,
    ) -> Option<(&mut crate::timing::engine::Engine, EngineEnv<'_>)> {
        let unit = &mut self.units[u];
        let Work::Engine(engine) = &mut unit.work else {
            return None;
        };
        let port = unit.ports[engine.port].as_mut()?;
        Some((
            engine,
            EngineEnv {
                port,
                sink: (!self.functional).then_some((&mut self.effects, key)),
                unit: u,
                generation: unit.generation,
                memory: &self.memory,
                stores: self.functional.then_some(&mut unit.stores),
                spills: &self.spills,
                traffic: &mut unit.traffic,
                counters: &mut unit.engine_counters,
                drained_at: &mut unit.drained_at,
                completed: &self.completed,
                transaction_bytes: self.timing.transaction_bytes(),
                spill_full: self.spill_full,
            },
        ))
    }

    pub(super) fn role(&self, u: usize) -> Role {
        self.units[u]
            .current
            .map_or(Role::Block { bx: 0, by: 0 }, |i| i.role)
    }

    /// Steps unit `u` at cycle `now`; true when the grid must look at the
    /// consequences (a unit arrived somewhere or finished).
    pub(super) fn step_unit(&mut self, u: usize, now: u64) -> Result<bool, Box<Stop>> {
        let shared = shared!(self);
        let happened = stepping::step(
            &mut self.units[u],
            now,
            &shared,
            &mut self.waves,
            &mut self.effects,
            self.tracer.as_mut(),
        );
        self.schedule(u);
        self.handle(u, happened, now)
    }

    /// Acts on what unit `u`'s step at cycle `now` did; true when the grid must
    /// look at the consequences (a unit arrived somewhere or finished).
    pub(super) fn handle(
        &mut self,
        u: usize,
        happened: Happened,
        now: u64,
    ) -> Result<bool, Box<Stop>> {
        match happened {
            Happened::Code(StepEvent::None)
            | Happened::Engine {
                event: EngineEvent::None,
                ..
            } => Ok(false),
            Happened::Engine {
                event: EngineEvent::Arrive(end),
                link,
            } => {
                let global = self.global_sync;
                self.arrive(u, 0, (!global).then_some((link, end)), None, now)?;
                Ok(true)
            }
            Happened::Code(StepEvent::Finished)
            | Happened::Engine {
                event: EngineEvent::Finished,
                ..
            } => {
                self.finish_item(u, now);
                Ok(true)
            }
            Happened::Code(StepEvent::BlocksDone) => {
                self.finish_blocks(u, now);
                self.settle_slots(u, now)?;
                Ok(true)
            }
            Happened::Code(StepEvent::BlockSync { side, pc, slot }) => {
                if self.units[u].slot_ports.is_empty() {
                    self.arrive_slot(u, slot, side, pc, now)?;
                } else {
                    self.settle_slots(u, now)?;
                }
                Ok(true)
            }
            Happened::Fault(fault) => Err(self.fault_stop(u, fault, now)),
            Happened::EngineFault(f) => Err(self.engine_stop(u, f, now)),
        }
    }
}

impl Drop for Grid<'_> {
    /// Global memory goes back into the image, however the run ended.
    fn drop(&mut self) {
        let memory = std::mem::take(&mut self.memory);
        self.image.memory = Arc::unwrap_or_clone(memory);
    }
}
