//! The SPU in time: the units and the CB links between them, which unit runs which
//! work item (see [`crate::load::plan`]) and when, the main cycle loop (skipping cycles in
//! which nothing can happen), the rendezvous of directional and global blocksyncs,
//! deadlock detection and the cycle limit.

use crate::exec::fault::{Fault, FaultKind};
use crate::load::DmaPlan;
use crate::load::Image;
use crate::load::plan::{Geometry, Role, WorkItem, plan};
use crate::machine::UnitLabel;
use crate::machine::{Boundary, Machine, PassMode, SpillExtent};
use crate::observe::activity::{Activity, ActivityLog};
use crate::observe::counters::Traffic;
use crate::observe::counters::{Component, PcCounters};
use crate::observe::outcome::{CbTotals, Progress, RunResult, Stop, Waiting};
use crate::observe::samples::Sampler;
use crate::timing::budget::{Budget, Spent};
use crate::timing::cb::{End, Link, build_links};
use crate::timing::dram::Dram;
use crate::timing::engine::{Engine, EngineEnv, EngineEvent, SpillStore, Task};
mod stops;
mod work;

use crate::exec::warp::WarpState;
use crate::timing::unit::{Env, StepEvent, Timing, Unit, WorkCtx};
use spu_isa::Side;
use std::collections::VecDeque;

const NEVER: u64 = u64::MAX;

/// What a code unit touches while issuing, borrowed field by field from the grid
/// so the unit itself can be borrowed alongside.
macro_rules! code_env {
    ($grid:expr) => {
        Env {
            program: &$grid.image.program,
            timing: &$grid.timing,
            memory: &mut $grid.image.memory,
            dram: &mut $grid.dram,
            params: &$grid.image.params,
            pcs: &mut $grid.pcs,
            traffic: &mut $grid.traffic,
            waves: &mut $grid.waves,
            functional: $grid.functional,
            trace: $grid.tracer.as_mut(),
        }
    };
}

/// The grid and its work.
#[derive(Debug)]
pub struct Grid<'a> {
    image: &'a mut Image,
    timing: Timing,
    geo: Geometry,
    boundary: Boundary,
    pass_mode: PassMode,
    /// Engines sync globally when the kernel's blocks use global blocksync.
    global_sync: bool,
    spill_full: bool,
    dma: [Option<DmaPlan>; 4],
    units: Vec<Unit>,
    engines: Vec<Option<Engine>>,
    links: Vec<Link>,
    queues: Vec<VecDeque<WorkItem>>,
    current: Vec<Option<WorkItem>>,
    completed: Vec<Option<u32>>,
    arrived_global: Vec<bool>,
    left_in_pass: Vec<u64>,
    pass_now: u32,
    dram: Dram,
    traffic: Traffic,
    pcs: Vec<PcCounters>,
    spills: SpillStore,
    blocks_total: u64,
    blocks_done: u64,
    global_syncs: u64,
    link_syncs: u64,
    /// Cycle after the last work item finished.
    last_finish: u64,
    sampler: Option<Sampler>,
    waves: crate::timing::banks::WaveCache,
    functional: bool,
    interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    max_instructions: u64,
    max_cycles: u64,
    budget: Budget,
    activity: Option<ActivityLog>,
    tracer: Option<crate::observe::trace::Tracer>,
}

impl<'a> Grid<'a> {
    pub fn new(image: &'a mut Image, machine: &Machine) -> Grid<'a> {
        let timing = Timing::new(machine);
        let geo = Geometry {
            cols: machine.grid_cols,
            rows: machine.grid_rows,
            grid: image.launch.grid,
        };
        let mut units = Vec::with_capacity(geo.unit_count());
        for y in 0..geo.rows {
            for x in 0..geo.cols {
                units.push(Unit::new(UnitLabel::Sm { x, y }, &timing));
            }
        }
        for (side, count) in [
            (Side::North, geo.cols),
            (Side::South, geo.cols),
            (Side::East, geo.rows),
            (Side::West, geo.rows),
        ] {
            for index in 0..count {
                let label = match machine.boundary {
                    Boundary::Iu => UnitLabel::Iu { side, index },
                    Boundary::Dma => UnitLabel::Dma { side, index },
                };
                units.push(Unit::new(label, &timing));
            }
        }
        let mut ports = vec![[None, None, None, None]; units.len()];
        let links = build_links(geo, &mut ports, machine.cb_bytes() / 4);
        for (unit, ports) in units.iter_mut().zip(ports) {
            unit.ports = ports;
        }
        let sides: Vec<Side> = match machine.boundary {
            Boundary::Iu if image.module.iu_entry.is_some() => Side::ALL.to_vec(),
            Boundary::Iu => Vec::new(),
            Boundary::Dma => image
                .dma
                .iter()
                .enumerate()
                .filter(|(_, d)| d.is_some())
                .map(|(s, _)| Side::ALL[s])
                .collect(),
        };
        let queues: Vec<VecDeque<WorkItem>> =
            plan(geo, &sides).into_iter().map(VecDeque::from).collect();
        let [nx, ny] = geo.passes();
        let mut left_in_pass = vec![0u64; (nx * ny) as usize];
        for item in queues.iter().flatten() {
            left_in_pass[item.pass as usize] += 1;
        }
        let n = units.len();
        let global_sync = image.program.uses_global_sync();
        let image_ops = image.program.len();
        Grid {
            dram: Dram::new(machine.dram_latency, machine.dram_bytes_per_cycle()),
            pcs: vec![PcCounters::default(); image_ops],
            dma: image.dma,
            blocks_total: u64::from(geo.grid[0]) * u64::from(geo.grid[1]),
            image,
            timing,
            geo,
            boundary: machine.boundary,
            pass_mode: machine.pass_mode,
            global_sync,
            spill_full: machine.viu_spill == SpillExtent::Full,
            units,
            engines: vec![None; n],
            links,
            queues,
            current: vec![None; n],
            completed: vec![None; n],
            arrived_global: vec![false; n],
            left_in_pass,
            pass_now: 0,
            traffic: Traffic::default(),
            spills: SpillStore::new(),
            blocks_done: 0,
            global_syncs: 0,
            link_syncs: 0,
            last_finish: 0,
            sampler: None,
            waves: crate::timing::banks::WaveCache::new(image_ops),
            functional: false,
            interrupt: None,
            max_instructions: u64::MAX,
            max_cycles: u64::MAX,
            budget: Budget::new(u64::MAX, None),
            activity: None,
            tracer: None,
        }
    }

    /// Functional mode: results and counts without timing (`--functional`).
    pub fn functional(mut self, on: bool) -> Self {
        self.functional = on;
        if on {
            self.dram = Dram::untimed();
        }
        self
    }

    /// The CB checker: stop at a code read of a CB word its producer has not
    /// written since the link last switched.
    pub fn cb_check(mut self, on: bool) -> Self {
        for port in self
            .units
            .iter_mut()
            .flat_map(|u| u.ports.iter_mut().flatten())
        {
            port.checked = on;
        }
        self
    }

    /// Writes an instruction trace.
    pub fn with_trace(mut self, tracer: Option<crate::observe::trace::Tracer>) -> Self {
        self.tracer = tracer;
        self
    }

    /// Records what every unit does over time (for timelines).
    pub fn with_activity(mut self, on: bool) -> Self {
        self.activity = on.then(|| ActivityLog::new(self.units.len()));
        self
    }

    /// Stops the run when `flag` is set (checked every few thousand iterations).
    pub fn with_interrupt(mut self, flag: Option<&'static std::sync::atomic::AtomicBool>) -> Self {
        self.interrupt = flag;
        self
    }

    /// Stops the run after `n` warp instructions (`--max-instructions`).
    pub fn with_instruction_limit(mut self, n: u64) -> Self {
        self.max_instructions = n;
        self
    }

    /// Records activity every `interval` cycles for power traces.
    pub fn with_sampling(mut self, interval: Option<u64>) -> Self {
        self.sampler = interval.map(Sampler::new);
        self
    }

    /// Engine `u` (which must exist) and what it touches.
    fn engine_env(&mut self, u: usize) -> (&mut Engine, EngineEnv<'_>) {
        // Callers check that unit `u` runs an engine.
        let engine = self.engines[u].as_mut().expect("unit runs an engine");
        let unit = &mut self.units[u];
        let port = unit.ports[engine.port]
            .as_mut()
            .expect("engines serve a link of their unit");
        (
            engine,
            EngineEnv {
                port,
                dram: &mut self.dram,
                memory: &mut self.image.memory,
                spills: &mut self.spills,
                traffic: &mut self.traffic,
                counters: &mut unit.counters,
                completed: &self.completed,
                transaction_bytes: self.timing.transaction_bytes(),
                spill_full: self.spill_full,
            },
        )
    }

    fn role(&self, u: usize) -> Role {
        self.current[u].map_or(Role::Block { bx: 0, by: 0 }, |i| i.role)
    }

    /// Releases one end of a completed rendezvous from cycle `at`.
    fn release(&mut self, u: usize, at: u64) -> Result<(), Box<Stop>> {
        if let Some(log) = &mut self.activity {
            log.resume(u, at);
        }
        if self.engines[u].is_some() {
            let (engine, mut env) = self.engine_env(u);
            let wake = engine.release(at, &mut env);
            match wake {
                Ok(w) => self.units[u].wake = w,
                Err(f) => return Err(self.engine_stop(u, f, at)),
            }
        } else {
            self.units[u].release_blocksync(at);
        }
        Ok(())
    }

    /// Switches link `l`'s pair of buffers.
    fn switch(&mut self, l: usize) {
        let link = &mut self.links[l];
        let (p, c) = (link.producer, link.consumer);
        let (out, input) = (link.out.code() as usize, link.input.code() as usize);
        let (producer, consumer) = if p < c {
            let (a, b) = self.units.split_at_mut(c);
            (&mut a[p], &mut b[0])
        } else {
            let (a, b) = self.units.split_at_mut(p);
            (&mut b[0], &mut a[c])
        };
        if let (Some(pp), Some(cp)) = (&mut producer.ports[out], &mut consumer.ports[input]) {
            link.switch(pp, cp);
        }
    }

    /// Unit `u` arrives at a sync: on the link of `side` as `end`, or globally;
    /// `pc` is the sync instruction for code.
    fn arrive(
        &mut self,
        u: usize,
        link_end: Option<(usize, End)>,
        pc: Option<u32>,
        now: u64,
    ) -> Result<(), Box<Stop>> {
        if let Some(log) = &mut self.activity {
            let side = link_end.map(|(l, _)| {
                let port = self.units[u]
                    .ports
                    .iter()
                    .position(|p| p.as_ref().is_some_and(|p| p.link == l))
                    .unwrap_or(0);
                Side::ALL[port]
            });
            log.wait(u, now, side);
        }
        match link_end {
            None => {
                self.arrived_global[u] = true;
                Ok(())
            }
            Some((l, end)) => {
                if let Some(item) = self.current[u] {
                    self.links[l].record(end, item, pc);
                }
                if self.links[l].arrive(end) {
                    self.switch(l);
                    self.link_syncs += 1;
                    let at = now + self.timing.blocksync_latency();
                    let (p, c) = (self.links[l].producer, self.links[l].consumer);
                    self.release(p, at)?;
                    self.release(c, at)?;
                }
                Ok(())
            }
        }
    }

    fn finish_item(&mut self, u: usize, now: u64) {
        if self.engines[u].is_none() {
            let mut env = code_env!(self);
            self.units[u].settle(now + 1, &mut env);
        }
        self.units[u].finish(now + 1);
        self.last_finish = self.last_finish.max(now + 1);
        if let Some(log) = &mut self.activity {
            log.finish(u, now + 1);
        }
        self.arrived_global[u] = false;
        if let Some(Engine {
            task: Task::Spill { key, .. },
            ..
        }) = &self.engines[u]
        {
            self.spills.entry(*key).or_default().closed = true;
        }
        self.engines[u] = None;
        if let Some(item) = self.current[u].take() {
            self.completed[u] = Some(item.pass);
            self.left_in_pass[item.pass as usize] -= 1;
            if matches!(item.role, Role::Block { .. }) {
                self.blocks_done += 1;
            }
        }
    }

    /// Virtual IUs react to other units: a spiller whose producer has finished
    /// stops waiting; a restorer waiting for tiles looks again.
    fn poll_engines(&mut self, now: u64) {
        for u in 0..self.units.len() {
            let Some(engine) = &self.engines[u] else {
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
        let busy: Vec<usize> = (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .collect();
        if busy.is_empty() || !busy.iter().all(|&u| self.arrived_global[u]) {
            return Ok(());
        }
        for l in 0..self.links.len() {
            self.switch(l);
        }
        self.global_syncs += 1;
        let at = now + self.timing.blocksync_latency();
        for u in busy {
            self.arrived_global[u] = false;
            self.release(u, at)?;
        }
        Ok(())
    }

    fn step_unit(&mut self, u: usize, now: u64) -> Result<bool, Box<Stop>> {
        if self.engines[u].is_some() {
            let global = self.global_sync;
            let (engine, mut env) = self.engine_env(u);
            let link = engine.link;
            let (event, wake) = match engine.step(now, &mut env) {
                Ok(r) => r,
                Err(f) => return Err(self.engine_stop(u, f, now)),
            };
            self.units[u].wake = wake;
            return match event {
                EngineEvent::None => Ok(false),
                EngineEvent::Arrive(end) => {
                    self.arrive(u, (!global).then_some((link, end)), None, now)?;
                    Ok(true)
                }
                EngineEvent::Finished => {
                    self.finish_item(u, now);
                    Ok(true)
                }
            };
        }
        let mut env = code_env!(self);
        let stepped = if self.functional {
            self.units[u].step_functional(now, &mut env, &mut self.budget)
        } else {
            self.units[u].step(now, &mut env)
        };
        if let Some(spent) = self.budget.spent {
            return Err(self.budget_stop(spent, now));
        }
        match stepped {
            Ok(StepEvent::None) => Ok(false),
            Ok(StepEvent::BlockSync { side: None, pc }) => {
                self.arrive(u, None, Some(pc), now)?;
                Ok(true)
            }
            Ok(StepEvent::BlockSync {
                side: Some(side),
                pc,
            }) => {
                let Some(l) = self.units[u].ports[side.code() as usize]
                    .as_ref()
                    .map(|p| p.link)
                else {
                    return Err(self.fault_stop(
                        u,
                        Fault {
                            kind: FaultKind::NoCbPort { side },
                            pc,
                            warp: 0,
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
                self.arrive(u, Some((l, end)), Some(pc), now)?;
                Ok(true)
            }
            Ok(StepEvent::Finished) => {
                self.finish_item(u, now);
                Ok(true)
            }
            Err(fault) => Err(self.fault_stop(u, fault, now)),
        }
    }

    /// Warp instructions the run may issue. With no cycles to count, a functional
    /// run also stops once it has issued more instructions than the machine could
    /// issue in `max_cycles` cycles (every scheduler issuing every cycle), so
    /// `--max-cycles` bounds it too.
    fn instruction_budget(&self, max_cycles: u64) -> u64 {
        if !self.functional {
            return self.max_instructions;
        }
        let width: u64 = self
            .units
            .iter()
            .zip(&self.engines)
            .filter(|(_, e)| e.is_none())
            .map(|(u, _)| match u.label {
                UnitLabel::Sm { .. } => self.timing.sm_schedulers as u64,
                _ => self.timing.iu_schedulers as u64,
            })
            .sum();
        self.max_instructions
            .min(max_cycles.saturating_mul(width.max(1)))
    }

    /// The stop for a spent instruction budget or Ctrl-C seen while issuing.
    fn budget_stop(&self, spent: Spent, now: u64) -> Box<Stop> {
        let (blocks_done, blocks_total) = (self.blocks_done, self.blocks_total);
        Box::new(match spent {
            Spent::Instructions
                if self.instruction_budget(self.max_cycles) < self.max_instructions =>
            {
                Stop::CycleLimit {
                    limit: self.max_cycles,
                    blocks_done,
                    blocks_total,
                }
            }
            Spent::Instructions => Stop::InstructionLimit {
                limit: self.max_instructions,
                blocks_done,
                blocks_total,
            },
            Spent::Interrupted => Stop::Interrupted {
                cycle: now,
                blocks_done,
                blocks_total,
            },
        })
    }

    /// Runs to completion, a fault, a deadlock or the cycle limit.
    pub fn run(
        mut self,
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunResult, Box<Stop>> {
        let mut now = 0u64;
        let mut iterations = 0u64;
        self.max_cycles = max_cycles;
        self.budget = Budget::new(self.instruction_budget(max_cycles), self.interrupt);
        self.start_ready_work(now);
        loop {
            if let Some(s) = &mut self.sampler {
                s.observe(now, &self.units);
            }
            let mut changed = false;
            for u in 0..self.units.len() {
                if self.units[u].busy && self.units[u].wake <= now {
                    changed |= self.step_unit(u, now)?;
                }
            }
            if changed {
                // Withdraw spillers whose producer has finished before deciding
                // whether everyone still busy has arrived at a global sync.
                self.poll_engines(now);
                self.check_global(now)?;
                while (self.pass_now as usize) < self.left_in_pass.len()
                    && self.left_in_pass[self.pass_now as usize] == 0
                {
                    self.pass_now += 1;
                }
                self.start_ready_work(now + 1);
            }
            let next = self
                .units
                .iter()
                .filter(|u| u.busy)
                .map(|u| u.wake)
                .min()
                .unwrap_or(NEVER);
            let any_busy = next != NEVER || self.units.iter().any(|u| u.busy);
            match (any_busy, next) {
                (false, _) if self.queues.iter().all(VecDeque::is_empty) => break,
                (_, NEVER) => {
                    return Err(self.deadlock(now));
                }
                (_, t) => now = t.max(now + 1),
            }
            if now > max_cycles {
                return Err(Box::new(Stop::CycleLimit {
                    limit: max_cycles,
                    blocks_done: self.blocks_done,
                    blocks_total: self.blocks_total,
                }));
            }
            iterations += 1;
            if iterations % 4096 == 0 {
                let issued: u64 = self.units.iter().map(|u| u.issued).sum();
                if issued > self.max_instructions {
                    return Err(self.budget_stop(Spent::Instructions, now));
                }
                if self
                    .interrupt
                    .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
                {
                    return Err(Box::new(Stop::Interrupted {
                        cycle: now,
                        blocks_done: self.blocks_done,
                        blocks_total: self.blocks_total,
                    }));
                }
                progress(Progress {
                    cycle: now,
                    blocks_done: self.blocks_done,
                    blocks_total: self.blocks_total,
                });
            }
        }
        if let Some(t) = &mut self.tracer {
            t.flush();
        }
        // The run ends when the last unit finishes and the last store has landed.
        let cycles = self.last_finish.max(self.dram.drained_at());
        if cycles > max_cycles {
            // The last stores were still draining at the limit.
            return Err(Box::new(Stop::CycleLimit {
                limit: max_cycles,
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        let n_units = self.units.len() as u64;
        let samples = self
            .sampler
            .take()
            .map(|s| s.finish(cycles, n_units, &self.units));
        for u in &mut self.units {
            u.counters.add(Component::IdleCorep, cycles - u.busy_cycles);
            u.counters.add(Component::ConstDynamicp, u.busy_cycles);
        }
        progress(Progress {
            cycle: cycles,
            blocks_done: self.blocks_done,
            blocks_total: self.blocks_total,
        });
        let mut cb = CbTotals::default();
        for p in self.units.iter().flat_map(|u| u.ports.iter().flatten()) {
            cb.reads += p.reads;
            cb.writes += p.writes;
            cb.read_toggles += p.read_toggles;
            cb.write_toggles += p.write_toggles;
        }
        cb.switches = self.links.iter().map(|l| l.switches).sum();
        Ok(RunResult {
            cycles,
            units: self.units.iter().map(Unit::totals).collect(),
            traffic: self.traffic,
            cb,
            pcs: self.pcs,
            passes: self.geo.passes(),
            global_syncs: self.global_syncs,
            link_syncs: self.link_syncs,
            dram_busy_cycles: self.dram.busy_cycles(),
            samples,
            functional: self.functional,
            activity: self.activity,
        })
    }
}
