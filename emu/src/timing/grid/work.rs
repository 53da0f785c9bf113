//! Starting work: a unit takes its next item when its pass may start, and the item's
//! role becomes a block, an IU program, a DMA engine or a virtual IU.

use super::*;
use crate::exec::warp::WorkCtx;
use crate::observe::activity::Activity;
use crate::timing::engine::Engine;
use crate::timing::unit::Code;

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
    /// Unit `u` starts `item` at cycle `now`.
    pub(super) fn start(&mut self, u: usize, item: WorkItem, now: u64) {
        let launch = self.image.launch;
        let mut ctx = WorkCtx {
            ctaid: [0; 2],
            nctaid: launch.grid,
            ntid: launch.block,
            iu: None,
            entry: 0,
            shared_bytes: self.image.shared_bytes,
            sm_grid: [self.geo.cols, self.geo.rows],
        };
        self.units[u].observe(now, &self.image.program);
        let work = match item.role {
            Role::Block { bx, by } => {
                ctx.ctaid = [bx, by];
                self.code(u, ctx, launch.block_threads(), now, self.slots_per_sm())
            }
            Role::Boundary { side, iuid } if self.boundary == Boundary::Iu => {
                ctx.iu = Some((side, iuid));
                ctx.ntid = [launch.iu_threads, 1, 1];
                ctx.entry = self.image.module.iu_entry.unwrap_or(0);
                ctx.shared_bytes = 0;
                self.code(u, ctx, launch.iu_threads, now, 1)
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

    /// Block slots of a GPU SM (see [`crate::machine::occupancy`]); one on an SPU,
    /// and in functional mode, which has no occupancy to model.
    fn slots_per_sm(&self) -> usize {
        match &self.gpu {
            Some(d) if !self.functional => d.occupancy.blocks as usize,
            _ => 1,
        }
    }

    /// GPU SM `u`, running blocks, takes `item` into a free slot at cycle `now`.
    fn load(&mut self, u: usize, item: WorkItem, now: u64) {
        let Role::Block { bx, by } = item.role else {
            unreachable!("a GPU has only blocks")
        };
        let launch = self.image.launch;
        let ctx = WorkCtx {
            ctaid: [bx, by],
            nctaid: launch.grid,
            ntid: launch.block,
            iu: None,
            entry: 0,
            shared_bytes: self.image.shared_bytes,
            sm_grid: [self.geo.cols, self.geo.rows],
        };
        let unit = &mut self.units[u];
        unit.observe(now, &self.image.program);
        unit.generation += 1;
        let generation = unit.generation;
        let label = unit.label;
        let Work::Code(code) = &mut unit.work else {
            unreachable!("slots are loaded only into running code")
        };
        let slot = code.free_slot().expect("checked by the caller");
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
        unit.current = Some(item);
        unit.wake = unit.wake.min(now);
        let (blocks, warps) = (code.resident(), code.block_warps() as u64);
        if let Some(d) = &mut self.gpu {
            d.resident(u, blocks, warps, now);
        }
        self.schedule(u);
    }

    /// GPU: hands queued blocks to SMs with room, round-robin, one block per SM
    /// per round, until the queue is empty or every SM is full.
    fn dispatch_blocks(&mut self, now: u64) {
        let n = self.units.len();
        loop {
            let mut placed = false;
            let Some(base) = self.gpu.as_ref().map(|d| d.last) else {
                return;
            };
            for k in 1..=n {
                let Some(d) = &self.gpu else { return };
                let u = (base + k) % n;
                let Some(&item) = d.queue.front() else {
                    return;
                };
                let unit = &self.units[u];
                let room = !unit.busy || unit.code().is_some_and(|c| c.free_slot().is_some());
                if !room {
                    continue;
                }
                let d = self.gpu.as_mut().expect("checked");
                d.queue.pop_front();
                d.last = u;
                if self.units[u].busy {
                    self.load(u, item, now);
                } else {
                    self.start(u, item, now);
                }
                placed = true;
            }
            if !placed {
                return;
            }
        }
    }

    fn code(&self, u: usize, ctx: WorkCtx, threads: u32, now: u64, slots: usize) -> Work {
        let label = self.units[u].label;
        let schedulers = if matches!(label, UnitLabel::Iu { .. } | UnitLabel::Dma { .. }) {
            self.timing.iu_schedulers
        } else {
            self.timing.sm_schedulers
        };
        Work::Code(Box::new(Code::new(
            ctx,
            threads,
            label,
            &self.image.program,
            &self.timing,
            schedulers,
            now,
            slots,
        )))
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
        }
    }
}
