//! The SPU (or GPU) in time: the units and the CB links between them, which unit runs which
//! work item (see [`crate::load::plan`]) and when, the event loop (a queue of unit
//! wake-ups, so cycles in which nothing can happen are skipped and idle units are
//! never looked at), the rendezvous of directional and global blocksyncs, deadlock
//! detection and the cycle limit. `run` holds the loops and the run's result,
//! `stepping` one step of one unit, `parallel` the window-by-window simulation on
//! one or more threads, `work` starting work items, `dispatch` a GPU's blocks and
//! occupancy, `stops` what went wrong.

mod dispatch;
mod parallel;
mod run;
mod stepping;
mod stops;
mod work;

use crate::exec::fault::{Fault, FaultKind};
use crate::load::DmaPlan;
use crate::load::Image;
use crate::load::plan::{Geometry, Role, WorkItem, plan};
use crate::machine::{Boundary, Machine, PassMode, SpillExtent, UnitLabel};
use crate::observe::activity::{ActivityLog, UnitActivity};
use crate::observe::counters::{Component, PcCounters, Traffic};
use crate::observe::outcome::{CbTotals, Progress, RunResult, Stop};
use crate::observe::samples::{UnitSampler, combine};
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::cache::Caches;
use crate::timing::cb::{End, Link, SlotPorts, build_links};
use crate::timing::dram::Dram;
use crate::timing::effects::{self, Deferred, Key, Outcome, PENDING};
use crate::timing::engine::{EngineEnv, EngineEvent, SpillStore, Task};
use crate::timing::unit::{StepEvent, Timing, Unit, Work};
use crate::timing::window;
use dispatch::Dispatch;
use spu_isa::Side;
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
    /// `--spin-limit`, and the progress seen when the run last made any: its
    /// signature (global words stored, work items finished, syncs) and the warp
    /// instructions issued by then.
    spin_limit: u64,
    progress: (u64, u64),
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

impl<'a> Grid<'a> {
    pub fn new(image: &'a mut Image, machine: &Machine) -> Grid<'a> {
        let mut timing = Timing::new(machine);
        let geo = Geometry::new(machine, image.launch.grid);
        let program = &image.program;
        let gpu = machine.is_gpu();
        let mut labels = geo.labels(machine.boundary);
        if gpu {
            // A GPU has SMs only: no boundary units.
            labels.truncate((geo.cols * geo.rows) as usize);
        }
        let mut units: Vec<Box<Unit>> = labels
            .into_iter()
            .enumerate()
            .map(|(u, label)| Box::new(Unit::new(u, label, program)))
            .collect();
        let sms = (geo.cols * geo.rows) as usize;
        let mut ports: Vec<SlotPorts> = (0..units.len())
            .map(|u| vec![[None, None, None, None]; if u < sms { geo.slots() } else { 1 }])
            .collect();
        let links = if gpu {
            Vec::new()
        } else {
            build_links(geo, &mut ports, machine.cb_bytes() / 4)
        };
        for (unit, ports) in units.iter_mut().zip(ports) {
            let mut slots = ports.into_iter();
            unit.ports = slots.next().unwrap_or_default();
            unit.slot_ports = slots.collect();
        }
        let sides = image.boundary_sides(machine.boundary);
        let blocks_total = u64::from(geo.grid[0]) * u64::from(geo.grid[1]);
        let (left_in_pass, gpu) = if gpu {
            let dispatch = Dispatch::new(machine, image, units.len());
            (vec![blocks_total], Some(dispatch))
        } else {
            let [nx, ny] = geo.passes();
            let mut left_in_pass = vec![0u64; (nx * ny) as usize];
            for (unit, items) in units.iter_mut().zip(plan(geo, &sides)) {
                for item in &items {
                    left_in_pass[item.pass as usize] += 1;
                }
                unit.queue = items.into();
            }
            (left_in_pass, None)
        };
        let n = units.len();
        timing.set_units(n as u32);
        let agents = if gpu.is_some() { n } else { geo.agents() };
        let global_sync = image.program.uses_global_sync();
        let window = timing.dram_window();
        Grid {
            memory: Arc::new(std::mem::take(&mut image.memory)),
            threads: 1,
            race_check: false,
            dram: Dram::new(machine.dram_latency, machine.dram_bytes_per_cycle()),
            caches: Caches::new(machine, n),
            dma: image.dma,
            blocks_total,
            image,
            timing,
            geo,
            boundary: machine.boundary,
            pass_mode: machine.pass_mode,
            global_sync,
            spill_full: machine.viu_spill == SpillExtent::Full,
            units,
            links,
            completed: vec![None; agents],
            arrived_global: vec![false; agents],
            sync_pending: vec![false; agents],
            left_in_pass,
            pass_now: 0,
            effects: Vec::new(),
            post_seq: 0,
            waves: WaveCache::new(),
            spills: SpillStore::new(),
            blocks_done: 0,
            global_syncs: 0,
            link_syncs: 0,
            last_finish: 0,
            functional: false,
            window,
            window_end: window,
            queue: BinaryHeap::new(),
            interrupt: None,
            max_instructions: u64::MAX,
            max_cycles: u64::MAX,
            spin_limit: 0,
            progress: (0, 0),
            windows_passed: 0,
            limits_checked: 0,
            tracer: None,
            sampling: None,
            activity: false,
            gpu,
        }
    }

    /// Functional mode: results and counts without timing (`--functional`).
    pub fn functional(mut self, on: bool) -> Self {
        self.functional = on;
        // Functional mode sees global memory in windows as long as the blocksync
        // handshake; timing mode applies deferred accesses every DRAM latency.
        self.window = if on {
            self.timing.blocksync_latency().max(1)
        } else {
            self.timing.dram_window()
        };
        self.window_end = self.window;
        self
    }

    /// Steps units on up to `threads` threads. Results, stats and traces do not
    /// depend on it (see `parallel`).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The CB checker: stop at a code read of a CB word its producer has not
    /// written since the link last switched.
    pub fn cb_check(mut self, on: bool) -> Self {
        for port in self.units.iter_mut().flat_map(|u| {
            std::iter::once(&mut u.ports)
                .chain(u.slot_ports.iter_mut())
                .flatten()
                .flatten()
        }) {
            port.checked = on;
        }
        self
    }

    /// The shared-memory race checker: report accesses of different warps of a
    /// block to one word, one of them a store, with no barrier between them.
    pub fn race_check(mut self, on: bool) -> Self {
        self.race_check = on;
        self
    }

    /// Writes an instruction trace.
    pub fn with_trace(mut self, tracer: Option<Tracer>) -> Self {
        self.tracer = tracer;
        self
    }

    /// Records what every unit does over time (for timelines).
    /// Records when each instruction ran on each unit, at the sampling
    /// boundaries (after [`Grid::with_sampling`]; nothing without sampling).
    pub fn with_pc_samples(mut self, on: bool) -> Self {
        let pcs = self.image.program.len();
        for u in &mut self.units {
            u.pcs = self
                .sampling
                .filter(|_| on)
                .map(|i| crate::observe::pcs::PcSampler::new(i, pcs));
        }
        self
    }

    pub fn with_activity(mut self, on: bool) -> Self {
        self.activity = on;
        for u in &mut self.units {
            u.activity = on.then(UnitActivity::default);
        }
        self
    }

    /// Stops the run when `flag` is set (checked every few thousand iterations).
    pub fn with_interrupt(mut self, flag: Option<&'static std::sync::atomic::AtomicBool>) -> Self {
        self.interrupt = flag;
        self
    }

    /// Stops the run once it has issued more than `n` warp instructions
    /// (`--max-instructions`; in functional mode the bound on an endless loop).
    pub fn with_instruction_limit(mut self, n: u64) -> Self {
        self.max_instructions = n;
        self
    }

    /// Stops the run once `n` warp instructions pass without progress
    /// (`--spin-limit`; 0: never).
    pub fn with_spin_limit(mut self, n: u64) -> Self {
        self.spin_limit = n;
        self
    }

    /// Records activity every `interval` cycles for power traces.
    pub fn with_sampling(mut self, interval: Option<u64>) -> Self {
        self.sampling = interval;
        for u in &mut self.units {
            u.sampler = interval.map(UnitSampler::new);
        }
        self
    }

    /// Keeps at most `limit` samples per unit (a page needs few).
    pub fn with_sample_limit(mut self, limit: usize) -> Self {
        for s in self.units.iter_mut().filter_map(|u| u.sampler.as_mut()) {
            s.set_limit(limit);
        }
        self
    }

    /// Queues unit `u`'s wake-up, if it has one.
    fn schedule(&mut self, u: usize) {
        let unit = &self.units[u];
        if unit.busy && unit.wake < PENDING {
            self.queue.push(Reverse((unit.wake, u)));
        }
    }

    /// The earliest pending wake-up, dropping entries of units that moved on.
    fn next_wake(&mut self) -> u64 {
        while let Some(&Reverse((t, u))) = self.queue.peek() {
            let unit = &self.units[u];
            if unit.busy && unit.wake == t {
                return t;
            }
            self.queue.pop();
        }
        NEVER
    }

    /// What the engine of unit `u` touches (the unit must run an engine).
    /// What the engine of unit `u` touches; its deferred transfers get `key`.
    fn engine_env(
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

    fn role(&self, u: usize) -> Role {
        self.units[u]
            .current
            .map_or(Role::Block { bx: 0, by: 0 }, |i| i.role)
    }

    /// Releases one end of a completed rendezvous (block slot `slot` of unit `u`)
    /// from cycle `at`; `key` orders what the release sends to global memory.
    fn release(&mut self, u: usize, slot: usize, at: u64, key: Key) -> Result<(), Box<Stop>> {
        if let Some(log) = &mut self.units[u].activity {
            log.resume(at);
        }
        if let Some((engine, mut env)) = self.engine_env(u, key) {
            match engine.release(at, &mut env) {
                Ok((w, tile)) => {
                    self.units[u].wake = w;
                    if let Some((stream, tile)) = tile {
                        self.spills.entry(stream).or_default().tiles.push(tile);
                    }
                }
                Err(f) => return Err(self.engine_stop(u, f, at)),
            }
        } else if self.units[u].slot_ports.is_empty() {
            self.units[u].release_blocksync(at, &self.image.program);
        } else {
            self.sync_pending[self.geo.agent(u, slot)] = false;
            self.units[u].release_slot(slot, at, &self.image.program);
        }
        self.schedule(u);
        Ok(())
    }

    /// Switches link `l`'s pair of buffers.
    fn switch(&mut self, l: usize) {
        let link = &mut self.links[l];
        let (p, c) = (link.producer, link.consumer);
        let (ps, cs) = (link.producer_slot, link.consumer_slot);
        let (out, input) = (link.out.code() as usize, link.input.code() as usize);
        let (producer, consumer) = if p == c {
            // An inner link: two slots of one SM.
            two_slots(&mut self.units[p], ps, cs)
        } else {
            let (producer, consumer) = if p < c {
                let (a, b) = self.units.split_at_mut(c);
                (&mut a[p], &mut b[0])
            } else {
                let (a, b) = self.units.split_at_mut(p);
                (&mut b[0], &mut a[c])
            };
            (
                crate::timing::unit::ports_of(&mut producer.ports, &mut producer.slot_ports, ps),
                crate::timing::unit::ports_of(&mut consumer.ports, &mut consumer.slot_ports, cs),
            )
        };
        if let (Some(pp), Some(cp)) = (&mut producer[out], &mut consumer[input]) {
            link.switch(pp, cp);
        }
    }

    /// Unit `u` arrives at a sync: on the link of `side` as `end`, or globally;
    /// `pc` is the sync instruction for code.
    fn arrive(
        &mut self,
        u: usize,
        slot: usize,
        link_end: Option<(usize, End)>,
        pc: Option<u32>,
        now: u64,
    ) -> Result<(), Box<Stop>> {
        let folded = !self.units[u].slot_ports.is_empty();
        if folded {
            self.sync_pending[self.geo.agent(u, slot)] = true;
        }
        let unit = &mut self.units[u];
        // On an SM holding several blocks, the activity log shows the unit waiting
        // only once every block waits (see `arrive_slots`).
        if unit.activity.is_some() && !folded {
            let side = link_end.map(|(l, _)| {
                let port = unit
                    .ports
                    .iter()
                    .position(|p| p.as_ref().is_some_and(|p| p.link == l))
                    .unwrap_or(0);
                Side::ALL[port]
            });
            if let Some(log) = &mut unit.activity {
                log.wait(now, side);
            }
        }
        match link_end {
            None => {
                self.arrived_global[self.geo.agent(u, slot)] = true;
                Ok(())
            }
            Some((l, end)) => {
                if let Some(item) = self.slot_item(u, slot) {
                    self.links[l].record(end, item, pc);
                }
                if self.links[l].arrive(end) {
                    self.switch(l);
                    self.link_syncs += 1;
                    let at = now + self.timing.blocksync_latency();
                    let link = &self.links[l];
                    let (p, c) = (link.producer, link.consumer);
                    let (ps, cs) = (link.producer_slot, link.consumer_slot);
                    let key = self.units[u].next_key(now);
                    self.release(p, ps, at, key)?;
                    self.release(c, cs, at, key)?;
                }
                Ok(())
            }
        }
    }

    /// The work item block slot `slot` of unit `u` runs.
    fn slot_item(&self, u: usize, slot: usize) -> Option<WorkItem> {
        let unit = &self.units[u];
        if unit.slot_ports.is_empty() {
            return unit.current;
        }
        unit.code()
            .and_then(|c| c.slots.get(slot).copied().flatten())
    }

    /// Block slot `slot` of unit `u` arrives at the blocksync at `pc` (directional
    /// on `side`, or global).
    fn arrive_slot(
        &mut self,
        u: usize,
        slot: usize,
        side: Option<Side>,
        pc: u32,
        now: u64,
    ) -> Result<(), Box<Stop>> {
        let Some(side) = side else {
            return self.arrive(u, slot, None, Some(pc), now);
        };
        let unit = &mut self.units[u];
        let ports = crate::timing::unit::ports_of(&mut unit.ports, &mut unit.slot_ports, slot);
        let Some(l) = ports[side.code() as usize].as_ref().map(|p| p.link) else {
            let warp = unit.code().map_or(0, |c| c.slot_warps(slot).start as u32);
            return Err(self.fault_stop(
                u,
                Fault {
                    kind: FaultKind::NoCbPort { side },
                    pc,
                    warp,
                    lane: 0,
                },
                now,
            ));
        };
        let end = if side.is_input() {
            End::Consumer
        } else {
            End::Producer
        };
        self.arrive(u, slot, Some((l, end)), Some(pc), now)
    }

    /// An SM holding several blocks: retires its finished blocks and lets every
    /// block whose warps all wait at a blocksync arrive there (a step reports one
    /// event, and several blocks may have arrived or finished in it).
    fn settle_slots(&mut self, u: usize, now: u64) -> Result<(), Box<Stop>> {
        if self.units[u].slot_ports.is_empty() {
            return Ok(());
        }
        if self.units[u].code().is_some_and(|c| c.any_finished()) {
            self.finish_blocks(u, now);
        }
        let arrived: Vec<(usize, u32)> = match self.units[u].code() {
            Some(code) => code
                .slots_at_blocksync()
                .into_iter()
                .filter(|&slot| !self.sync_pending[self.geo.agent(u, slot)])
                .filter_map(|slot| {
                    code.warps[code.slot_warps(slot)]
                        .iter()
                        .find_map(|w| match w.state {
                            crate::exec::warp::WarpState::AtBlockSync(pc) => Some((slot, pc)),
                            _ => None,
                        })
                })
                .collect(),
            None => Vec::new(),
        };
        for (slot, pc) in arrived {
            let side = match self.image.program.ops[pc as usize].run {
                crate::exec::ops::Run::BlockSync(side) => side,
                _ => None,
            };
            self.arrive_slot(u, slot, side, pc, now)?;
        }
        // The unit waits when every block it holds waits.
        let all_wait = self.units[u].code().is_some_and(|c| {
            (0..c.slots.len())
                .filter(|&s| c.slots[s].is_some())
                .all(|s| self.sync_pending[self.geo.agent(u, s)])
        });
        if all_wait && let Some(log) = &mut self.units[u].activity {
            log.wait(now, None);
        }
        Ok(())
    }

    fn finish_item(&mut self, u: usize, now: u64) {
        let unit = &mut self.units[u];
        unit.observe(now, &self.image.program);
        // Blocks still held by the slots of a multi-block SM end here too.
        let mut items = Vec::new();
        if let Work::Code(code) = &mut unit.work {
            code.settle(now + 1, &mut unit.counts);
            if code.slots.len() > 1 {
                items.extend(code.slots.iter_mut().filter_map(Option::take));
                unit.current = None;
            }
        }
        unit.finish(now + 1);
        unit.items_done += (items.len() as u64).saturating_sub(1);
        if let Some(d) = &mut self.gpu {
            d.resident(u, 0, 0, now + 1);
        }
        self.last_finish = self.last_finish.max(now + 1);
        if let Some(log) = &mut unit.activity {
            log.finish(now + 1);
        }
        self.arrived_global[u] = false;
        items.extend(unit.current.take());
        for item in items {
            self.retire(u, item);
        }
    }

    /// The agent that ran `item` on unit `u`: its block slot on an SM holding
    /// several blocks, the unit otherwise.
    fn agent_of(&self, u: usize, item: &WorkItem) -> usize {
        match item.role {
            Role::Block { bx, by } if self.gpu.is_none() => {
                self.geo.agent(u, self.geo.block_slot(bx, by))
            }
            _ => u,
        }
    }

    /// The bookkeeping of a finished work item of unit `u`.
    pub(super) fn retire(&mut self, u: usize, item: WorkItem) {
        if let Role::Spill { key, .. } = item.role {
            self.spills.entry(key).or_default().closed = true;
        }
        let agent = self.agent_of(u, &item);
        self.completed[agent] = Some(item.pass);
        self.arrived_global[agent] = false;
        self.sync_pending[agent] = false;
        self.left_in_pass[item.pass as usize] -= 1;
        if matches!(item.role, Role::Block { .. }) {
            self.blocks_done += 1;
        }
    }

    /// Virtual IUs react to other units: a spiller whose producer has finished
    /// stops waiting; a restorer waiting for tiles looks again.
    fn poll_engines(&mut self, now: u64) {
        for u in 0..self.units.len() {
            let Some(engine) = self.units[u].engine() else {
                continue;
            };
            match engine.task {
                Task::Spill { producer, pass, .. }
                    if engine.is_waiting()
                        && self.completed[producer].is_some_and(|c| c >= pass) =>
                {
                    let (l, end) = (engine.link, engine.end());
                    self.links[l].withdraw(end);
                    self.finish_item(u, now);
                }
                Task::Restore { .. } if !engine.is_waiting() && self.units[u].wake == NEVER => {
                    self.units[u].wake = now + 1;
                    self.schedule(u);
                }
                _ => {}
            }
        }
    }

    /// Global blocksync: when every busy unit has arrived, every CB pair switches
    /// and all continue after the handshake (thesis 2.2.1).
    fn check_global(&mut self, now: u64) -> Result<(), Box<Stop>> {
        // Only kernels with a global blocksync (and their engines) arrive globally.
        if !self.global_sync {
            return Ok(());
        }
        // Every busy unit arrives; on an SM holding several blocks, every block it
        // holds.
        let busy: Vec<(usize, usize)> = (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .flat_map(|u| self.busy_slots(u).into_iter().map(move |s| (u, s)))
            .collect();
        if busy.is_empty()
            || !busy
                .iter()
                .all(|&(u, s)| self.arrived_global[self.geo.agent(u, s)])
        {
            return Ok(());
        }
        for l in 0..self.links.len() {
            self.switch(l);
        }
        self.global_syncs += 1;
        let at = now + self.timing.blocksync_latency();
        self.post_seq += 1;
        let key = (now, u32::MAX, self.post_seq);
        for (u, s) in busy {
            self.arrived_global[self.geo.agent(u, s)] = false;
            self.release(u, s, at, key)?;
        }
        Ok(())
    }

    /// The busy cycles each unit's idle and constant power are counted for: its
    /// own, except for the lanes of a boundary unit with several blocks per SM
    /// (`sm.fold_x` lanes per north or south unit, `sm.fold_y` per east or west
    /// unit): the hardware unit is one, busy while its busiest lane is, so its
    /// first lane carries that and the others nothing (`None`).
    pub(super) fn powered_cycles(&self) -> Vec<Option<u64>> {
        self.power_lanes()
            .iter()
            .enumerate()
            .map(|(u, &lanes)| {
                (lanes > 0).then(|| {
                    (u..u + lanes)
                        .map(|k| self.units[k].busy_cycles)
                        .max()
                        .unwrap_or(0)
                })
            })
            .collect()
    }

    /// For each unit, how many units from it on its idle and constant power covers
    /// (see [`Self::powered_cycles`]): 1, or the lane count for a folded boundary
    /// unit's first lane and 0 for its other lanes.
    pub(super) fn power_lanes(&self) -> Vec<usize> {
        let [fx, fy] = self.geo.fold;
        self.units
            .iter()
            .map(|unit| {
                let (side, index) = match unit.label {
                    UnitLabel::Iu { side, index } | UnitLabel::Dma { side, index } => (side, index),
                    UnitLabel::Sm { .. } => return 1,
                };
                let lanes = if matches!(side, Side::North | Side::South) {
                    fx
                } else {
                    fy
                };
                if fx * fy == 1 {
                    1
                } else if index % lanes == 0 {
                    lanes as usize
                } else {
                    0
                }
            })
            .collect()
    }

    /// The block slots of busy unit `u` that take part in a global blocksync: every
    /// slot holding a block on an SM holding several, else slot 0.
    pub(super) fn busy_slots(&self, u: usize) -> Vec<usize> {
        match self.units[u].code() {
            Some(c) if !self.units[u].slot_ports.is_empty() => (0..c.slots.len())
                .filter(|&s| c.slots[s].is_some())
                .collect(),
            _ => vec![0],
        }
    }

    /// Steps unit `u` at cycle `now`; true when the grid must look at the
    /// consequences (a unit arrived somewhere or finished).
    fn step_unit(&mut self, u: usize, now: u64) -> Result<bool, Box<Stop>> {
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
    fn handle(&mut self, u: usize, happened: Happened, now: u64) -> Result<bool, Box<Stop>> {
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

    /// True when the current window has accesses waiting for its end.
    fn window_pending(&self) -> bool {
        if self.functional {
            self.units.iter().any(|u| !u.stores.entries.is_empty())
        } else {
            !self.effects.is_empty()
        }
    }

    /// The window ending at `self.window_end` closes: deferred accesses take
    /// effect in (cycle, unit, program) order.
    fn close_window(&mut self) {
        self.windows_passed += 1;
        if !self.functional {
            self.window_end += self.window;
            self.apply_effects();
            return;
        }
        let end = self.window_end;
        self.window_end += self.window;
        let mut entries: Vec<(u64, usize, usize)> = Vec::new();
        for (u, unit) in self.units.iter().enumerate() {
            entries
                .extend((0..unit.stores.entries.len()).map(|i| (unit.stores.entries[i].0, u, i)));
        }
        entries.sort_unstable();
        let mut logs: Vec<Vec<Option<window::Logged>>> = self
            .units
            .iter_mut()
            .map(|u| {
                let e = std::mem::take(&mut u.stores.entries);
                u.stores.clear();
                e.into_iter().map(|(_, l)| Some(l)).collect()
            })
            .collect();
        let mut resumed = Vec::new();
        for (_, u, i) in entries {
            let Some(entry) = logs[u][i].take() else {
                continue;
            };
            let unit = &mut self.units[u];
            if matches!(entry, window::Logged::Atomic { .. }) {
                resumed.push(u);
            }
            let warps = match &mut unit.work {
                Work::Code(c) => Some(&mut c.warps),
                _ => None,
            };
            window::apply(
                entry,
                warps,
                &mut unit.traffic.toggles,
                Arc::make_mut(&mut self.memory),
            );
        }
        for u in resumed {
            let unit = &mut self.units[u];
            if unit.busy {
                unit.wake = unit.wake.min(end);
                self.schedule(u);
            }
        }
    }

    /// Timing mode: applies the recorded accesses in key order and gives their
    /// results to the units (loaded registers and their ready time, engine wakes,
    /// spilled tiles' ready times).
    fn apply_effects(&mut self) {
        let mut list = std::mem::take(&mut self.effects);
        list.sort_by_key(|d| d.key);
        let bytes = self.timing.transaction_bytes();
        for d in list {
            let outcome = effects::apply(
                d.effect,
                d.key,
                Arc::make_mut(&mut self.memory),
                &mut self.dram,
                self.caches.as_mut(),
                bytes,
            );
            self.deliver(outcome);
        }
        // The units' energy counters (and power traces) see their cache accesses.
        if let Some(caches) = &mut self.caches {
            for (unit, pc, [sent, dram]) in caches.take_traffic() {
                let lines = &mut self.units[unit].counts.cached_lines[pc as usize];
                lines[0] += sent;
                lines[1] += dram;
            }
            for (i, unit) in self.units.iter_mut().enumerate() {
                let [l1, l2] = caches.accesses_by(i);
                unit.cache_counters.set(Component::Dcp, l1);
                unit.cache_counters.set(Component::L2cp, l2);
            }
        }
        // Restorers waiting for a spilled tile learn when it is ready.
        for u in 0..self.units.len() {
            let unit = &self.units[u];
            if unit.wake != PENDING {
                continue;
            }
            if let Some((key, next)) = unit.engine().and_then(|e| e.awaited_tile())
                && let Some(tile) = self.spills.get(&key).and_then(|s| s.tiles.get(next))
                && tile.ready_at != PENDING
            {
                self.units[u].wake = tile.ready_at;
                self.schedule(u);
            }
        }
    }

    /// Gives the result of a deferred access to its unit or stream.
    fn deliver(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::None => {}
            Outcome::Register {
                target,
                pc,
                dst,
                mask,
                values,
                high,
                ready,
                toggles,
            } => {
                let program = &self.image.program;
                let unit = &mut self.units[target.unit];
                unit.traffic.toggles += toggles;
                // A result for a block that has finished since is dropped (its
                // slot's generation has moved on).
                if let Work::Code(code) = &mut unit.work
                    && code.slot_generation.get(code.slot_of(target.warp))
                        == Some(&target.generation)
                {
                    if let Some(t) = &mut self.tracer
                        && t.wants(unit.label, code.warps[target.warp].index, ready)
                    {
                        let d = usize::from(dst);
                        let mut text =
                            crate::observe::trace::lanes_text(&t.reg_name(pc, d), &values, mask);
                        if let Some(h) = &high {
                            text.push(' ');
                            text.push_str(&crate::observe::trace::lanes_text(
                                &t.reg_name(pc, d + 1),
                                h,
                                mask,
                            ));
                        }
                        t.arrival(
                            ready,
                            code.trace_site(unit.label, target.warp),
                            pc,
                            mask,
                            &text,
                        );
                    }
                    let wake = code.resolve(
                        target.warp,
                        dst,
                        mask,
                        &values,
                        high.as_deref(),
                        ready,
                        program,
                        &mut unit.counts,
                    );
                    unit.wake = unit.wake.min(wake);
                    self.schedule(target.unit);
                }
            }
            Outcome::Ready {
                target,
                dst,
                regs,
                ready,
            } => {
                let program = &self.image.program;
                let unit = &mut self.units[target.unit];
                if let Work::Code(code) = &mut unit.work
                    && code.slot_generation.get(code.slot_of(target.warp))
                        == Some(&target.generation)
                {
                    let wake = code.resolve_ready(
                        target.warp,
                        dst,
                        regs,
                        ready,
                        program,
                        &mut unit.counts,
                    );
                    unit.wake = unit.wake.min(wake);
                    self.schedule(target.unit);
                }
            }
            Outcome::Engine {
                unit: u,
                generation,
                at,
                port_words,
                toggles,
            } => {
                let unit = &mut self.units[u];
                unit.traffic.toggles += toggles;
                if unit.generation != generation {
                    return;
                }
                if let Work::Engine(engine) = &unit.work
                    && let Some(port) = unit.ports[engine.port].as_mut()
                {
                    for (i, &w) in port_words.iter().enumerate() {
                        port.write(i as u32, w);
                    }
                }
                unit.wake = at;
                self.schedule(u);
            }
            Outcome::Tile { stream, at } => {
                if let Some(tile) = self
                    .spills
                    .get_mut(&stream)
                    .and_then(|s| s.tiles.iter_mut().find(|t| t.ready_at == PENDING))
                {
                    tile.ready_at = at;
                }
            }
        }
    }
}

/// The ports of two different block slots of one unit, borrowed together.
fn two_slots(
    unit: &mut Unit,
    a: usize,
    b: usize,
) -> (
    &mut [Option<crate::exec::cb::Port>; 4],
    &mut [Option<crate::exec::cb::Port>; 4],
) {
    assert_ne!(a, b, "an inner link joins two slots");
    let (lo, hi) = (a.min(b), a.max(b));
    let (first, rest) = if lo == 0 {
        (&mut unit.ports, &mut unit.slot_ports[..])
    } else {
        let (x, y) = unit.slot_ports.split_at_mut(lo);
        (&mut x[lo - 1], y)
    };
    let second = &mut rest[hi - lo - 1];
    if a < b {
        (first, second)
    } else {
        (second, first)
    }
}

impl Drop for Grid<'_> {
    /// Global memory goes back into the image, however the run ended.
    fn drop(&mut self) {
        let memory = std::mem::take(&mut self.memory);
        self.image.memory = Arc::unwrap_or_clone(memory);
    }
}
