//! Building a grid for a run: its units and CB links, who runs which work item,
//! and the run's options (`--functional`, `--threads`, the checkers, traces,
//! samples and limits).

use super::Grid;
use super::dispatch::Dispatch;
use super::repeat::RepeatCheck;
use super::spin::SpinCheck;
use crate::load::Image;
use crate::load::plan::{Geometry, plan};
use crate::machine::{Machine, SpillExtent};
use crate::observe::activity::UnitActivity;
use crate::observe::samples::UnitSampler;
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::cache::Caches;
use crate::timing::cb::{SlotPorts, build_links};
use crate::timing::dram::Dram;
use crate::timing::engine::SpillStore;
use crate::timing::unit::{Timing, Unit};
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Most bytes of spilled tiles a run keeps, whatever `memory.global_mib` allows:
/// a pass boundary spills a tile per sync, megabytes for real kernels, and the
/// emulator's own memory stays bounded.
const MAX_SPILL_BYTES: u64 = 1 << 30;

impl<'a> Grid<'a> {
    pub fn new(image: &'a mut Image, machine: &Machine) -> Grid<'a> {
        let mut timing = Timing::new(machine);
        timing.resolve(&image.program);
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
        // Spilled tiles live in the runtime's region of global memory, beside the
        // buffers.
        let buffers: u64 = image
            .memory
            .regions()
            .iter()
            .map(|r| u64::from(r.bytes()))
            .sum();
        let spill_room = (u64::from(machine.global_mib) << 20)
            .saturating_sub(buffers)
            .min(MAX_SPILL_BYTES)
            .min(image.spare_bytes);
        let repeat = RepeatCheck::new(&image.program);
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
            spilled: 0,
            spill_room,
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
            spin: SpinCheck::new(0),
            repeat,
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

    /// Records when each instruction ran on each unit, at the sampling
    /// boundaries (after [`Grid::with_sampling`]; nothing without sampling).
    pub fn with_pc_samples(mut self, on: bool) -> Self {
        let (pcs, units) = (self.image.program.len(), self.units.len());
        for u in &mut self.units {
            u.pcs = self
                .sampling
                .filter(|_| on)
                .map(|i| crate::observe::pcs::PcSampler::new(i, pcs, units));
        }
        self
    }

    /// Records what every unit does over time (for timelines).
    pub fn with_activity(mut self, on: bool) -> Self {
        self.activity = on;
        let n = self.units.len();
        for u in &mut self.units {
            u.activity = on.then(|| UnitActivity::bounded(n));
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
        self.spin = SpinCheck::new(n);
        self
    }

    /// Records activity every `interval` cycles for power traces.
    pub fn with_sampling(mut self, interval: Option<u64>) -> Self {
        self.sampling = interval;
        let limit = crate::observe::samples::per_unit_limit(self.units.len());
        for u in &mut self.units {
            u.sampler = interval.map(UnitSampler::new);
            if let Some(s) = u.sampler.as_mut() {
                s.set_limit(limit);
            }
        }
        self
    }

    /// Keeps at most `limit` samples per unit (a page needs few), and never more
    /// than the grid's share of the total.
    pub fn with_sample_limit(mut self, limit: usize) -> Self {
        let limit = limit.min(crate::observe::samples::per_unit_limit(self.units.len()));
        for s in self.units.iter_mut().filter_map(|u| u.sampler.as_mut()) {
            s.set_limit(limit);
        }
        self
    }
}
