//! The SM grid in time: which unit runs which block or IU program instance in which
//! pass, the main cycle loop (skipping cycles in which nothing can issue), the
//! global blocksync rendezvous, deadlock detection and the cycle limit.
//!
//! Placement follows the SPU rule (thesis 2.2.2, 4.1): block `(bx, by)` runs in pass
//! `(bx / P, by / Q)` on SM `(bx % P, by % Q)`, passes in row-major order, one block
//! per SM at a time. IU code runs along the launched grid's edge: the north IU
//! instance for column `bx` runs in pass `(bx / P, 0)` on north IU `bx % P`, and so on
//! for the other sides.

use crate::counters::{Component, PcCounters};
use crate::dram::Dram;
use crate::fault::{Fault, UnitLabel};
use crate::load::Image;
use crate::machine::{Machine, PassMode};
use crate::unit::{Env, StepEvent, Timing, Traffic, Unit, WorkCtx};
use crate::warp::WarpState;
use spu_isa::Side;
use std::collections::VecDeque;

const NEVER: u64 = u64::MAX;

/// What a unit runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Block { bx: u32, by: u32 },
    Iu { side: Side, iuid: u32 },
}

/// One piece of work for one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkItem {
    /// Pass index in row-major pass order.
    pub pass: u32,
    pub role: Role,
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Fault {
        fault: Fault,
        unit: UnitLabel,
        role: Role,
        cycle: u64,
        /// Block dimensions (IUs: threads, 1, 1), to name the thread.
        ntid: [u32; 3],
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
}

/// A unit stuck in a deadlock and where its warps wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub unit: UnitLabel,
    pub role: Role,
    /// (warp, pc, state)
    pub warps: Vec<(u32, u32, WarpState)>,
}

/// Progress of a run, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub cycle: u64,
    pub blocks_done: u64,
    pub blocks_total: u64,
}

/// Everything a finished run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub cycles: u64,
    pub units: Vec<Unit>,
    pub traffic: Traffic,
    pub pcs: Vec<PcCounters>,
    pub passes: [u32; 2],
    pub blocksyncs: u64,
    pub dram_busy_cycles: f64,
}

/// The grid and its work.
#[derive(Debug)]
pub struct Grid<'a> {
    image: &'a mut Image,
    timing: Timing,
    units: Vec<Unit>,
    queues: Vec<VecDeque<WorkItem>>,
    current: Vec<Option<WorkItem>>,
    arrived: Vec<bool>,
    pass_mode: PassMode,
    /// Items left per pass (sequential mode gates on it).
    left_in_pass: Vec<u64>,
    pass_now: u32,
    passes: [u32; 2],
    dram: Dram,
    traffic: Traffic,
    pcs: Vec<PcCounters>,
    blocks_total: u64,
    blocks_done: u64,
    blocksyncs: u64,
}

impl<'a> Grid<'a> {
    pub fn new(image: &'a mut Image, machine: &Machine) -> Grid<'a> {
        let timing = Timing::new(machine);
        let (p, q) = (machine.grid_cols, machine.grid_rows);
        let [gx, gy] = image.launch.grid;
        let (nx, ny) = (gx.div_ceil(p), gy.div_ceil(q));
        let pass_of = |px: u32, py: u32| py * nx + px;
        let mut units = Vec::new();
        let mut queues = Vec::new();
        for y in 0..q {
            for x in 0..p {
                units.push(Unit::new(UnitLabel::Sm { x, y }, &timing));
                let mut items = VecDeque::new();
                for py in 0..ny {
                    for px in 0..nx {
                        let (bx, by) = (px * p + x, py * q + y);
                        if bx < gx && by < gy {
                            items.push_back(WorkItem {
                                pass: pass_of(px, py),
                                role: Role::Block { bx, by },
                            });
                        }
                    }
                }
                queues.push(items);
            }
        }
        if image.module.iu_entry.is_some() {
            // thesis 2.2.2: IU code runs only on the launched grid's edge.
            let sides = [
                (Side::North, p, gx, true),
                (Side::South, p, gx, true),
                (Side::East, q, gy, false),
                (Side::West, q, gy, false),
            ];
            for (side, count, extent, along_x) in sides {
                for index in 0..count {
                    units.push(Unit::new(UnitLabel::Iu { side, index }, &timing));
                    let mut items = VecDeque::new();
                    let mut iuid = index;
                    while iuid < extent {
                        let k = iuid / count;
                        let pass = match (side, along_x) {
                            (Side::North, _) => pass_of(k, 0),
                            (Side::South, _) => pass_of(k, ny - 1),
                            (Side::West, _) => pass_of(0, k),
                            _ => pass_of(nx - 1, k),
                        };
                        items.push_back(WorkItem {
                            pass,
                            role: Role::Iu { side, iuid },
                        });
                        iuid += count;
                    }
                    items.make_contiguous().sort_by_key(|i| i.pass);
                    queues.push(items);
                }
            }
        }
        let mut left_in_pass = vec![0u64; (nx * ny) as usize];
        for item in queues.iter().flatten() {
            left_in_pass[item.pass as usize] += 1;
        }
        let n = units.len();
        let pcs = vec![PcCounters::default(); image.ops.len()];
        Grid {
            dram: Dram::new(machine.dram_latency, machine.dram_bytes_per_cycle()),
            image,
            timing,
            units,
            queues,
            current: vec![None; n],
            arrived: vec![false; n],
            pass_mode: machine.pass_mode,
            left_in_pass,
            pass_now: 0,
            passes: [nx, ny],
            traffic: Traffic::default(),
            pcs,
            blocks_total: u64::from(gx) * u64::from(gy),
            blocks_done: 0,
            blocksyncs: 0,
        }
    }

    fn context(&self, item: WorkItem) -> (WorkCtx, u32) {
        let launch = &self.image.launch;
        let mut ctx = WorkCtx {
            ctaid: [0; 2],
            nctaid: launch.grid,
            ntid: launch.block,
            iu: None,
            entry: 0,
            regs: self.image.regs,
            shared_bytes: self.image.shared_bytes,
        };
        match item.role {
            Role::Block { bx, by } => {
                ctx.ctaid = [bx, by];
                (ctx, launch.block_threads())
            }
            Role::Iu { side, iuid } => {
                ctx.iu = Some((side, iuid));
                ctx.ntid = [launch.iu_threads, 1, 1];
                ctx.entry = self.image.module.iu_entry.unwrap_or(0);
                ctx.shared_bytes = 0;
                (ctx, launch.iu_threads)
            }
        }
    }

    /// Idle units take their next item if its pass may start.
    fn start_ready_work(&mut self, now: u64) {
        for u in 0..self.units.len() {
            if self.units[u].busy {
                continue;
            }
            let Some(&item) = self.queues[u].front() else {
                continue;
            };
            if self.pass_mode == PassMode::Sequential && item.pass != self.pass_now {
                continue;
            }
            self.queues[u].pop_front();
            let (ctx, threads) = self.context(item);
            self.units[u].begin(ctx, threads, now);
            self.current[u] = Some(item);
        }
    }

    /// Runs to completion, a fault, a deadlock or the cycle limit.
    pub fn run(
        mut self,
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunResult, Box<Stop>> {
        let mut now = 0u64;
        let mut last_finish = 0u64;
        let mut iterations = 0u64;
        self.start_ready_work(now);
        loop {
            let mut changed = false;
            for u in 0..self.units.len() {
                if !self.units[u].busy || self.units[u].wake > now {
                    continue;
                }
                let mut env = Env {
                    ops: &self.image.ops,
                    timing: &self.timing,
                    memory: &mut self.image.memory,
                    dram: &mut self.dram,
                    params: &self.image.params,
                    pcs: &mut self.pcs,
                    traffic: &mut self.traffic,
                };
                match self.units[u].step(now, &mut env) {
                    Ok(StepEvent::None) => {}
                    Ok(StepEvent::BlockSync { side: None, .. }) => {
                        self.arrived[u] = true;
                        changed = true;
                    }
                    Ok(StepEvent::BlockSync {
                        side: Some(side),
                        pc,
                    }) => {
                        let unit = self.units[u].label;
                        let role = self.current[u]
                            .map(|i| i.role)
                            .unwrap_or(Role::Block { bx: 0, by: 0 });
                        return Err(Box::new(Stop::Fault {
                            fault: Fault {
                                kind: crate::fault::FaultKind::Unsupported {
                                    what: format!(
                                        "`bar.blocksync.{side}` needs the Communication Buffer runtime, which this emulator build does not model yet"
                                    ),
                                },
                                pc,
                                warp: 0,
                                lane: 0,
                            },
                            unit,
                            role,
                            cycle: now,
                            ntid: self.units[u].ctx().ntid,
                        }));
                    }
                    Ok(StepEvent::Finished) => {
                        self.units[u].settle(now + 1, &mut env);
                        self.units[u].finish(now + 1);
                        last_finish = now + 1;
                        self.arrived[u] = false;
                        if let Some(item) = self.current[u].take() {
                            self.left_in_pass[item.pass as usize] -= 1;
                            if matches!(item.role, Role::Block { .. }) {
                                self.blocks_done += 1;
                            }
                        }
                        changed = true;
                    }
                    Err(fault) => {
                        let role = self.current[u]
                            .map(|i| i.role)
                            .unwrap_or(Role::Block { bx: 0, by: 0 });
                        return Err(Box::new(Stop::Fault {
                            fault,
                            unit: self.units[u].label,
                            role,
                            cycle: now,
                            ntid: self.units[u].ctx().ntid,
                        }));
                    }
                }
            }
            if changed {
                self.check_rendezvous(now);
                while (self.pass_now as usize) < self.left_in_pass.len()
                    && self.left_in_pass[self.pass_now as usize] == 0
                {
                    self.pass_now += 1;
                }
                self.start_ready_work(now + 1);
            }
            let next = self.units.iter().filter(|u| u.busy).map(|u| u.wake).min();
            match next {
                None if self.queues.iter().all(VecDeque::is_empty) => break,
                None | Some(NEVER) => {
                    return Err(Box::new(Stop::Deadlock {
                        cycle: now,
                        waiting: self.waiting(),
                    }));
                }
                Some(t) => now = t.max(now + 1),
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
                progress(Progress {
                    cycle: now,
                    blocks_done: self.blocks_done,
                    blocks_total: self.blocks_total,
                });
            }
        }
        // The run ends when the last unit finishes and the last store has landed.
        let cycles = last_finish.max(self.dram.drained_at());
        for u in &mut self.units {
            let idle = cycles - u.busy_cycles;
            u.counters.add(Component::IdleCorep, idle);
            u.counters.add(Component::ConstDynamicp, u.busy_cycles);
        }
        progress(Progress {
            cycle: cycles,
            blocks_done: self.blocks_done,
            blocks_total: self.blocks_total,
        });
        Ok(RunResult {
            cycles,
            units: self.units,
            traffic: self.traffic,
            pcs: self.pcs,
            passes: self.passes,
            blocksyncs: self.blocksyncs,
            dram_busy_cycles: self.dram.busy_cycles(),
        })
    }

    /// Global blocksync: when every busy unit has arrived, all continue after the
    /// handshake (thesis 2.2.1).
    fn check_rendezvous(&mut self, now: u64) {
        let busy: Vec<usize> = (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .collect();
        if busy.is_empty() || !busy.iter().all(|&u| self.arrived[u]) {
            return;
        }
        let at = now + self.timing.blocksync_latency();
        for u in busy {
            self.arrived[u] = false;
            self.units[u].release_blocksync(at);
        }
        self.blocksyncs += 1;
    }

    fn waiting(&self) -> Vec<Waiting> {
        (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .map(|u| Waiting {
                unit: self.units[u].label,
                role: self.current[u].map_or(Role::Block { bx: 0, by: 0 }, |i| i.role),
                warps: self.units[u].waiting_warps(),
            })
            .collect()
    }
}
