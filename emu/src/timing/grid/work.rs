//! Starting work: a unit takes its next item when its pass may start, and the item's
//! role becomes a block, an IU program, a DMA engine or a virtual IU.

use super::*;

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
    /// The link a boundary role uses: the port facing into the grid.
    pub(super) fn inward_link(&self, u: usize, side: Side) -> Option<usize> {
        self.units[u].ports[inward_port(side).code() as usize]
            .as_ref()
            .map(|p| p.link)
    }

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
        let program = &self.image.program;
        self.engines[u] = None;
        match item.role {
            Role::Block { bx, by } => {
                ctx.ctaid = [bx, by];
                self.units[u].begin(ctx, launch.block_threads(), program, now);
            }
            Role::Boundary { side, iuid } if self.boundary == Boundary::Iu => {
                ctx.iu = Some((side, iuid));
                ctx.ntid = [launch.iu_threads, 1, 1];
                ctx.entry = self.image.module.iu_entry.unwrap_or(0);
                ctx.shared_bytes = 0;
                self.units[u].begin(ctx, launch.iu_threads, program, now);
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
                self.start_engine(u, task, side, now);
            }
            Role::Spill { key, producer } => {
                let task = Task::Spill {
                    key,
                    producer,
                    pass: item.pass,
                };
                self.start_engine(u, task, key.side, now);
            }
            Role::Restore { key } => {
                let side = if key.side == Side::East {
                    Side::West
                } else {
                    Side::North
                };
                self.start_engine(u, Task::Restore { key, next: 0 }, side, now);
            }
        }
        self.current[u] = Some(item);
        if let Some(log) = &mut self.activity {
            let a = match item.role {
                Role::Block { .. } => Activity::Compute,
                Role::Boundary { .. } if self.boundary == Boundary::Iu => Activity::IuCode,
                Role::Boundary { side, .. } if side.is_input() => Activity::Load,
                Role::Boundary { .. } => Activity::Store,
                Role::Spill { .. } => Activity::Spill,
                Role::Restore { .. } => Activity::Restore,
            };
            log.start(u, now, a, item.pass);
        }
    }

    pub(super) fn start_engine(&mut self, u: usize, task: Task, side: Side, now: u64) {
        // build_links gives every boundary unit, and every SM a partial pass can
        // hand a boundary role to, a port facing into the grid.
        let link = self
            .inward_link(u, side)
            .expect("boundary roles sit next to a link");
        let port = inward_port(side).code() as usize;
        self.engines[u] = Some(Engine::new(task, link, port));
        self.units[u].begin(
            WorkCtx {
                ctaid: [0; 2],
                nctaid: self.image.launch.grid,
                ntid: [0; 3],
                iu: None,
                entry: 0,
                shared_bytes: 0,
                sm_grid: [self.geo.cols, self.geo.rows],
            },
            0,
            &self.image.program,
            now,
        );
    }

    /// Idle units take their next item if its pass may start.
    pub(super) fn start_ready_work(&mut self, now: u64) {
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
            self.start(u, item, now);
        }
    }
}
