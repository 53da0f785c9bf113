//! Starting and finishing work: a unit takes its next item when its pass may
//! start, and the item's role becomes a block, an IU program, a DMA engine or a
//! virtual IU; a finished item is retired, and virtual IUs react to the units
//! they wait for.

use super::{Grid, NEVER};
use crate::exec::warp::WorkCtx;
use crate::load::plan::{Role, WorkItem};
use crate::machine::{Boundary, PassMode, UnitLabel};
use crate::observe::activity::Activity;
use crate::timing::engine::{Engine, Task};
use crate::timing::unit::{Code, Work};
use spu_isa::Side;

/// The port a boundary role on `side` uses: the one facing into the grid.
fn inward_port(side: Side) -> Side {
    match side {
        Side::North => Side::South,
        Side::South => Side::North,
        Side::East => Side::West,
        Side::West => Side::East,
    }
}

impl Grid<'_> {
    /// What block `(bx, by)` of the launch sees in its special registers.
    pub(super) fn block_ctx(&self, bx: u32, by: u32) -> WorkCtx {
        let launch = self.image.launch;
        WorkCtx {
            ctaid: [bx, by],
            nctaid: launch.grid,
            grid_y: launch.grid_y,
            ntid: launch.block,
            iu: None,
            entry: 0,
            shared_bytes: self.image.shared_bytes,
            sm_grid: [self.geo.cols, self.geo.rows],
        }
    }

    /// Unit `u` starts `item` at cycle `now`.
    pub(super) fn start(&mut self, u: usize, item: WorkItem, now: u64) {
        let launch = self.image.launch;
        let mut ctx = self.block_ctx(0, 0);
        self.units[u].observe(now, &self.image.program);
        let work = match item.role {
            Role::Block { bx, by } => {
                ctx.ctaid = [bx, by];
                let slots = if self.units[u].slot_ports.is_empty() {
                    self.slots_per_sm()
                } else {
                    self.geo.slots()
                };
                self.code(u, ctx, launch.block_threads(), item.pass, now, slots)
            }
            Role::Boundary { side, iuid } if self.boundary == Boundary::Iu => {
                ctx.iu = Some((side, iuid));
                ctx.ntid = [launch.iu_threads, 1, 1];
                ctx.entry = self.image.module.iu_entry.unwrap_or(0);
                ctx.shared_bytes = 0;
                self.code(u, ctx, launch.iu_threads, item.pass, now, 1)
            }
            Role::Boundary { side, iuid } => {
                // plan() gives DMA boundary roles only to sides with a descriptor.
                let plan = self.dma[side.code() as usize].expect("planned only for declared sides");
                let task = Task::Dma {
                    plan,
                    loader: side.is_input(),
                    iuid,
                    delay_left: plan.delay + u64::from(iuid) * plan.iu_delay,
                    tile: 0,
                };
                self.engine(u, task, side)
            }
            Role::Spill { key, producer } => {
                let task = Task::Spill {
                    key,
                    producer,
                    pass: item.pass,
                };
                self.engine(u, task, key.side)
            }
            Role::Restore { key } => {
                let side = if key.side == Side::East {
                    Side::West
                } else {
                    Side::North
                };
                self.engine(u, Task::Restore { key, next: 0 }, side)
            }
        };
        let unit = &mut self.units[u];
        unit.begin(work, now);
        unit.current = Some(item);
        if let Work::Code(code) = &mut unit.work {
            code.slots[0] = Some(item);
            code.slot_generation[0] = unit.generation;
            if let Some(d) = &mut self.gpu {
                d.resident(u, 1, code.block_warps() as u64, now);
            }
        }
        if let Some(log) = &mut unit.activity {
            let a = match item.role {
                Role::Block { .. } => Activity::Compute,
                Role::Boundary { .. } if self.boundary == Boundary::Iu => Activity::IuCode,
                Role::Boundary { side, .. } if side.is_input() => Activity::Load,
                Role::Boundary { .. } => Activity::Store,
                Role::Spill { .. } => Activity::Spill,
                Role::Restore { .. } => Activity::Restore,
            };
            log.start(now, a, item.pass);
        }
        self.schedule(u);
    }

    fn code(
        &self,
        u: usize,
        ctx: WorkCtx,
        threads: u32,
        pass: u32,
        now: u64,
        slots: usize,
    ) -> Work {
        let label = self.units[u].label;
        let schedulers = if matches!(label, UnitLabel::Iu { .. } | UnitLabel::Dma { .. }) {
            self.timing.iu_schedulers
        } else {
            self.timing.sm_schedulers
        };
        let mut code = Code::new(
            ctx,
            threads,
            label,
            &self.image.program,
            &self.timing,
            schedulers,
            now,
            slots,
        );
        code.pass = pass;
        if self.race_check {
            code.races = Some(Box::default());
        }
        Work::Code(Box::new(code))
    }

    fn engine(&self, u: usize, task: Task, side: Side) -> Work {
        // build_links gives every boundary unit, and every SM a partial pass can
        // hand a boundary role to, a port facing into the grid.
        let port = inward_port(side).code() as usize;
        let link = self.units[u].ports[port]
            .as_ref()
            .expect("boundary roles sit next to a link")
            .link;
        Work::Engine(Engine::new(task, link, port))
    }

    /// Idle units take their next item if its pass may start.
    pub(super) fn start_ready_work(&mut self, now: u64) {
        if self.gpu.is_some() {
            return self.dispatch_blocks(now);
        }
        for u in 0..self.units.len() {
            if self.units[u].busy {
                continue;
            }
            let Some(&item) = self.units[u].queue.front() else {
                continue;
            };
            if self.pass_mode == PassMode::Sequential && item.pass != self.pass_now {
                continue;
            }
            self.units[u].queue.pop_front();
            self.start(u, item, now);
            if !self.units[u].slot_ports.is_empty() {
                self.load_fold(u, item, now);
            }
        }
    }

    /// An SM holding several blocks has started `first`, the first block of its
    /// pass: it moves into its slot, and the pass's other blocks of the SM into
    /// theirs, all resident together.
    fn load_fold(&mut self, u: usize, first: WorkItem, now: u64) {
        let Role::Block { .. } = first.role else {
            return;
        };
        let mut items = vec![first];
        while let Some(&next) = self.units[u].queue.front() {
            if next.pass != first.pass || !matches!(next.role, Role::Block { .. }) {
                break;
            }
            self.units[u].queue.pop_front();
            items.push(next);
        }
        let launch = self.image.launch;
        let unit = &mut self.units[u];
        let (label, generation) = (unit.label, unit.generation);
        let Work::Code(code) = &mut unit.work else {
            return;
        };
        code.slots[0] = None;
        for w in code.slot_warps(0) {
            code.warps[w].retire();
        }
        for item in items {
            let Role::Block { bx, by } = item.role else {
                continue;
            };
            let slot = self.geo.block_slot(bx, by);
            let mut ctx = code.ctx;
            ctx.ctaid = [bx, by];
            code.load(
                slot,
                ctx,
                launch.block_threads(),
                label,
                &self.image.program,
                now,
                generation,
            );
            code.slots[slot] = Some(item);
        }
    }

    pub(super) fn finish_item(&mut self, u: usize, now: u64) {
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
    pub(super) fn agent_of(&self, u: usize, item: &WorkItem) -> usize {
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
    pub(super) fn poll_engines(&mut self, now: u64) {
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
}
