//! A GPU's block dispatch: the queue of the launch's blocks, which SM takes which
//! block when, and the occupancy the run reaches. An SPU never comes here: its
//! units follow the pass plan of [`crate::load::plan`].

use super::Grid;
use crate::load::Image;
use crate::load::plan::{Role, WorkItem};
use crate::machine::Machine;
use crate::machine::occupancy::{BlockDemand, Occupancy, occupancy};
use crate::timing::unit::Work;

/// How a GPU hands out blocks: every block of the launch waits in one queue in
/// launch order (x fastest), and SMs with a free slot take them round-robin, one
/// block per SM per round, starting after the SM served last (GPGPU-Sim issues
/// blocks to its SIMT clusters the same way). A GPU has one pass and no boundary
/// units.
#[derive(Debug)]
pub(super) struct Dispatch {
    queue: std::collections::VecDeque<WorkItem>,
    /// The SM after which the next round starts.
    last: usize,
    pub(super) occupancy: Occupancy,
    /// Most blocks ever resident on one SM at once, per SM.
    pub(super) peak: Vec<u32>,
    /// Per SM: warps of its resident blocks, and since when.
    resident: Vec<(u64, u64)>,
    /// Sum over SMs and cycles of resident warps (for the achieved occupancy).
    pub(super) warp_cycles: u64,
    pub(super) warps_per_block: u32,
    /// `sm.max_warps`.
    pub(super) max_warps: u32,
}

impl Dispatch {
    /// The queue of every block of `image`'s launch for a GPU of `sms` SMs.
    pub(super) fn new(machine: &Machine, image: &Image, sms: usize) -> Dispatch {
        let [gx, gy] = image.launch.grid;
        let queue = (0..gy)
            .flat_map(|by| {
                (0..gx).map(move |bx| WorkItem {
                    pass: 0,
                    role: Role::Block { bx, by },
                })
            })
            .collect();
        let demand = BlockDemand {
            threads: image.launch.block_threads(),
            registers: u32::from(image.program.layout.general),
            shared_bytes: image.shared_bytes,
        };
        Dispatch {
            queue,
            last: sms - 1,
            occupancy: occupancy(machine, demand),
            peak: vec![0; sms],
            resident: vec![(0, 0); sms],
            warp_cycles: 0,
            warps_per_block: demand.threads.div_ceil(32),
            max_warps: machine.sm_max_warps,
        }
    }

    /// SM `u` holds `blocks` blocks of `warps` warps each from cycle `now`.
    pub(super) fn resident(&mut self, u: usize, blocks: usize, warps: u64, now: u64) {
        self.settle(u, now);
        self.resident[u].0 = blocks as u64 * warps;
        self.peak[u] = self.peak[u].max(blocks as u32);
    }

    /// Adds SM `u`'s resident warps up to cycle `now`.
    pub(super) fn settle(&mut self, u: usize, now: u64) {
        let (w, since) = self.resident[u];
        self.warp_cycles += w * now.saturating_sub(since);
        self.resident[u].1 = now;
    }
}

impl Grid<'_> {
    /// Block slots of a GPU SM (see [`crate::machine::occupancy`]); one on an SPU,
    /// and in functional mode, which has no occupancy to model.
    pub(super) fn slots_per_sm(&self) -> usize {
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
        let ctx = self.block_ctx(bx, by);
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
    pub(super) fn dispatch_blocks(&mut self, now: u64) {
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

    /// Some of the blocks resident on GPU SM `u` finished at cycle `now`; the
    /// others run on, and the free slots take new blocks from cycle `now + 1`.
    pub(super) fn finish_blocks(&mut self, u: usize, now: u64) {
        let unit = &mut self.units[u];
        let Work::Code(code) = &mut unit.work else {
            return;
        };
        let done = code.take_finished();
        let (left, warps) = (code.resident(), code.block_warps() as u64);
        if let Some(d) = &mut self.gpu {
            d.resident(u, left, warps, now + 1);
        }
        unit.items_done += done.len() as u64;
        self.last_finish = self.last_finish.max(now + 1);
        for (_, item) in done {
            self.retire(u, item);
        }
    }
}
