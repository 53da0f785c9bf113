//! Running the grid to the end: the one-at-a-time event loop, what follows the
//! events of a cycle, choosing the next cycle (or stopping: deadlock, cycle limit,
//! interrupt), and the run's result with each unit's powered cycles.

use super::repeat;
use super::spin::{self, Verdict};
use super::{Grid, NEVER, parallel};
use crate::machine::UnitLabel;
use crate::observe::activity::ActivityLog;
use crate::observe::counters::{Component, PcCounters, Traffic};
use crate::observe::outcome::{CbTotals, OneBlockPerSm, Progress, RunResult, Stop};
use crate::observe::samples::{UnitSampler, combine};
use spu_isa::Side;
use std::cmp::Reverse;
impl Grid<'_> {
    /// Runs to completion, a fault, a deadlock or the cycle limit.
    pub fn run(
        mut self,
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunResult, Box<Stop>> {
        self.max_cycles = max_cycles;
        // With data caches, the units' DRAM-side energy counters follow the
        // traffic past their L1s.
        let cached = self.caches.is_some() && !self.functional;
        for u in &mut self.units {
            u.counts.cached = cached;
        }
        match parallel::usable_threads(&self) {
            Some(threads) => self.run_threads(threads, max_cycles, progress)?,
            None => self.run_events(max_cycles, progress)?,
        }
        // The limit is checked as windows pass; a run that ends before the next
        // check is held to it here.
        self.check_instructions()?;
        self.finish_run(progress)
    }

    /// The event loop: steps units one at a time at their wake cycles in (cycle,
    /// unit) order. Runs that cannot be simulated window by window (see
    /// `parallel`) use it; the window-by-window simulation gives the same results
    /// (`tests/tests/threads.rs` compares a traced run, which takes this loop).
    pub(super) fn run_events(
        &mut self,
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Box<Stop>> {
        let mut now = 0u64;
        let mut iterations = 0u64;
        self.start_ready_work(now);
        loop {
            let mut changed = false;
            while let Some(&Reverse((t, u))) = self.queue.peek() {
                if t != now {
                    break;
                }
                self.queue.pop();
                if self.units[u].busy && self.units[u].wake == now {
                    changed |= self.step_unit(u, now)?;
                }
            }
            if changed {
                self.after_events(now)?;
            }
            let mut next = self.next_wake();
            if next >= self.window_end && self.window_pending() {
                // Deferred accesses take effect before anything runs in the next
                // window.
                self.close_window();
                next = self.next_wake();
            }
            match self.next_cycle(now, next, max_cycles)? {
                Some(t) => now = t,
                None => return Ok(()),
            }
            iterations += 1;
            if iterations % 4096 == 0 {
                self.report(now, progress)?;
            }
        }
    }

    /// What follows events at cycle `now` (arrivals, finished work): spillers
    /// whose producer has finished are withdrawn before deciding whether everyone
    /// still busy has arrived at a global sync; passes advance; idle units take
    /// their next work from the next cycle.
    pub(super) fn after_events(&mut self, now: u64) -> Result<(), Box<Stop>> {
        self.poll_engines(now);
        self.check_global(now)?;
        while (self.pass_now as usize) < self.left_in_pass.len()
            && self.left_in_pass[self.pass_now as usize] == 0
        {
            self.pass_now += 1;
        }
        self.start_ready_work(now + 1);
        Ok(())
    }

    /// After cycle `now`, with the earliest wake-up `next` (windows closed): the
    /// next cycle to simulate, `None` when all work is done, or why the run stops
    /// (deadlock, cycle limit).
    pub(super) fn next_cycle(
        &mut self,
        now: u64,
        next: u64,
        max_cycles: u64,
    ) -> Result<Option<u64>, Box<Stop>> {
        // Deferred results land in later windows; nothing can wake in the past.
        debug_assert!(next > now, "a unit woke at {next}, before cycle {now}");
        let any_busy = next != NEVER || self.units.iter().any(|u| u.busy);
        let now = match (any_busy, next) {
            (false, _) if self.units.iter().all(|u| u.queue.is_empty()) => return Ok(None),
            (_, NEVER) => {
                return Err(self.deadlock(now));
            }
            (_, t) => t.max(now + 1),
        };
        if self.window_end <= now {
            while self.window_end <= now {
                self.window_end += self.window;
            }
            self.windows_passed += 1;
        }
        // Windows pass here or in `close_window` (when deferred accesses were
        // pending, as in nearly every window of a storing kernel); both loops pass
        // the same windows at the same cycles, so the limit stops them at the same
        // point.
        if self.windows_passed > self.limits_checked {
            self.limits_checked = self.windows_passed;
            self.check_instructions()?;
            self.check_spinning(now)?;
        }
        // Functional mode does not model time: its bound is the fewest cycles the
        // busiest unit's warp instructions could take.
        let elapsed = if self.functional {
            self.issue_bound()
        } else {
            now
        };
        if elapsed > max_cycles {
            return Err(Box::new(Stop::CycleLimit {
                limit: max_cycles,
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        Ok(Some(now))
    }

    /// Stops the run when it issued more than `--max-instructions` warp
    /// instructions.
    fn check_instructions(&self) -> Result<(), Box<Stop>> {
        let issued: u64 = self.units.iter().map(|u| u.counts.warp_instructions).sum();
        if issued > self.max_instructions {
            return Err(Box::new(Stop::InstructionLimit {
                limit: self.max_instructions,
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        Ok(())
    }

    /// Stops the run when the spin check ([`super::spin`]) finds it no longer
    /// gets anywhere.
    fn check_spinning(&mut self, now: u64) -> Result<(), Box<Stop>> {
        if self.spin.limit() == 0 {
            return Ok(());
        }
        let issued: Vec<u64> = self
            .units
            .iter()
            .map(|u| u.counts.warp_instructions)
            .collect();
        let unit_syncs: Vec<u64> = self.units.iter().map(|u| u.syncs).collect();
        let counts = spin::Counts {
            functional: self.functional,
            now,
            changed: self.memory.changed_words(),
            items_done: self.units.iter().map(|u| u.items_done).sum(),
            syncs: self.link_syncs + self.global_syncs,
            issued: &issued,
            unit_syncs: &unit_syncs,
        };
        // Functional mode has no cycles: it names none.
        let cycle = (!self.functional).then_some(now);
        let Some(verdict) = self.spin.check(&counts, &mut self.memory) else {
            let at = repeat::Moment {
                now,
                stalled: self.spin.stalled(&counts),
                progress: counts.changed + counts.items_done + counts.syncs,
                settled: !self.window_pending(),
            };
            return self.check_repeating(at);
        };
        let (limit, blocks_done, blocks_total) =
            (self.spin.limit(), self.blocks_done, self.blocks_total);
        let one_block_per_sm = self.one_block_per_sm();
        Err(Box::new(match verdict {
            Verdict::Spinning { by_cycles } => Stop::Spinning {
                limit,
                by_cycles,
                cycle,
                blocks_done,
                blocks_total,
                one_block_per_sm,
            },
            Verdict::Rewriting { by_cycles, words } => Stop::Rewriting {
                limit,
                by_cycles,
                words,
                cycle,
                blocks_done,
                blocks_total,
                one_block_per_sm,
            },
            Verdict::Synchronising {
                by_cycles,
                syncs,
                words,
            } => Stop::Synchronising {
                limit: limit.saturating_mul(spin::DEEP),
                by_cycles,
                syncs,
                words,
                cycle,
                blocks_done,
                blocks_total,
                one_block_per_sm,
            },
        }))
    }

    /// Stops the run when the repeat proof ([`super::repeat`]) finds every warp
    /// in a loop it can never leave (at the end of a window, after the spin
    /// check).
    fn check_repeating(&mut self, at: repeat::Moment) -> Result<(), Box<Stop>> {
        let program = &self.image.program;
        let Some(caught) = self.repeat.look(&self.units, program, at) else {
            return Ok(());
        };
        Err(Box::new(Stop::Repeating {
            running: caught.running,
            waiting: caught.waiting,
            unit: caught.unit,
            pc: caught.pc,
            together: caught.together,
            unstarted: self.unstarted(),
            // Functional mode has no cycles: it names none.
            cycle: (!self.functional).then_some(at.now),
            blocks_done: self.blocks_done,
            blocks_total: self.blocks_total,
            one_block_per_sm: self.one_block_per_sm(),
        }))
    }

    /// Blocks neither finished nor resident on an SM.
    fn unstarted(&self) -> u64 {
        let resident: u64 = self
            .units
            .iter()
            .filter(|u| matches!(u.label, UnitLabel::Sm { .. }))
            .filter_map(|u| u.code())
            .map(|c| c.resident() as u64)
            .sum();
        self.blocks_total
            .saturating_sub(self.blocks_done)
            .saturating_sub(resident)
    }

    /// In functional mode on a GPU whose SMs hold several of the kernel's blocks,
    /// with blocks not started: what timing mode would hold at once.
    fn one_block_per_sm(&self) -> Option<OneBlockPerSm> {
        let gpu = self.gpu.as_ref().filter(|_| self.functional)?;
        let per_sm = gpu.occupancy.blocks;
        let unstarted = self.unstarted();
        (per_sm > 1 && unstarted > 0).then(|| OneBlockPerSm {
            per_sm,
            held: u64::from(per_sm) * gpu.peak.len() as u64,
            unstarted,
        })
    }

    /// The fewest cycles the busiest unit's warp instructions could take: each
    /// scheduler issues at most one per cycle.
    fn issue_bound(&self) -> u64 {
        self.units
            .iter()
            .map(|u| {
                let schedulers = if matches!(u.label, crate::machine::UnitLabel::Sm { .. }) {
                    self.timing.sm_schedulers
                } else {
                    self.timing.iu_schedulers
                };
                u.counts
                    .warp_instructions
                    .div_ceil(schedulers.max(1) as u64)
            })
            .max()
            .unwrap_or(0)
    }

    /// Reports progress, or stops the run if it was interrupted.
    pub(super) fn report(
        &self,
        now: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Box<Stop>> {
        self.check_interrupt(now)?;
        self.check_headroom(now)?;
        progress(Progress {
            cycle: now,
            blocks_done: self.blocks_done,
            blocks_total: self.blocks_total,
        });
        Ok(())
    }

    /// The end of the kernel on a machine with an L2: its dirty lines go back to
    /// DRAM after the last unit finishes, and the run lasts until they are written.
    fn write_back_caches(&mut self) {
        if self.functional {
            return;
        }
        if let Some(caches) = self.caches.as_mut() {
            caches.write_back_dirty(self.last_finish, &mut self.dram);
        }
    }

    /// The run's result once every unit is done.
    fn finish_run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<RunResult, Box<Stop>> {
        if self.functional {
            // Stores of the last window.
            self.close_window();
        }
        if let Some(t) = &mut self.tracer {
            t.flush();
        }
        self.write_back_caches();
        // The run ends when the last unit finishes and the last store has landed.
        let drained = if self.functional {
            self.units.iter().map(|u| u.drained_at).max().unwrap_or(0)
        } else {
            self.dram.drained_at()
        };
        let cycles = self.last_finish.max(drained);
        let elapsed = if self.functional {
            self.issue_bound()
        } else {
            cycles
        };
        if elapsed > self.max_cycles {
            // The last stores were still draining at the limit.
            return Err(Box::new(Stop::CycleLimit {
                limit: self.max_cycles,
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        let program = &self.image.program;
        let samplers: Vec<UnitSampler> = self
            .units
            .iter_mut()
            .filter_map(|u| {
                let mut s = u.sampler.take()?;
                s.finish(cycles, || u.components(program), |t| u.busy_until(t));
                Some(s)
            })
            .collect();
        if samplers.iter().any(|s| s.starved) {
            let kept: usize = samplers.iter().map(|s| s.kept()).sum();
            return Err(Box::new(Stop::OutputMemory {
                needed: (kept * std::mem::size_of::<crate::observe::counters::ComponentCounts>())
                    as u64,
            }));
        }
        let samples = self
            .sampling
            .map(|_| combine(&samplers, &self.power_lanes(), cycles));
        let pc_samples: Option<Vec<_>> = self
            .units
            .iter_mut()
            .map(|u| {
                let s = u.pcs.take()?;
                Some(s.finish(cycles, |pc| u.counts.of(program, pc).0))
            })
            .collect();
        progress(Progress {
            cycle: cycles,
            blocks_done: self.blocks_done,
            blocks_total: self.blocks_total,
        });
        let mut cb = CbTotals::default();
        for p in self.units.iter().flat_map(|u| {
            std::iter::once(&u.ports)
                .chain(&u.slot_ports)
                .flatten()
                .flatten()
        }) {
            cb.reads += p.reads;
            cb.writes += p.writes;
            cb.read_toggles += p.read_toggles;
            cb.write_toggles += p.write_toggles;
            if self.links[p.link].inner {
                cb.inner_words += p.reads + p.writes;
                cb.inner_accesses += p.accesses;
            }
        }
        cb.switches = self.links.iter().map(|l| l.switches).sum();
        let mut pcs = vec![PcCounters::default(); program.len()];
        let mut traffic = Traffic::default();
        let mut units = Vec::with_capacity(self.units.len());
        let powered = self.powered_cycles();
        for (u, &busy) in self.units.iter().zip(&powered) {
            u.counts.add_to(program, &mut pcs);
            traffic.merge(&u.traffic);
            let mut counters = u.components(program);
            if let Some(busy) = busy {
                counters.add(Component::IdleCorep, cycles - busy);
                counters.add(Component::ConstDynamicp, busy);
            }
            units.push(u.totals(counters, program));
        }
        let activity = self.activity.then(|| ActivityLog {
            units: self
                .units
                .iter_mut()
                .map(|u| u.activity.take().map(|a| a.segments).unwrap_or_default())
                .collect(),
        });
        let sms = self.units.len() as u64;
        let functional = self.functional;
        let occupancy = self.gpu.as_mut().filter(|_| !functional).map(|d| {
            for u in 0..d.peak.len() {
                d.settle(u, cycles);
            }
            crate::observe::outcome::OccupancyResult {
                blocks_per_sm: d.occupancy.blocks,
                limit: d.occupancy.limit,
                warps_per_block: d.warps_per_block,
                peak_blocks_per_sm: d.peak.iter().copied().max().unwrap_or(0),
                achieved: d.warp_cycles as f64
                    / (sms * u64::from(d.max_warps) * cycles.max(1)) as f64,
            }
        });
        Ok(RunResult {
            cycles,
            pc_samples,
            occupancy,
            units,
            traffic,
            cb,
            pcs,
            passes: if self.gpu.is_some() {
                [1, 1]
            } else {
                self.geo.passes()
            },
            global_syncs: self.global_syncs,
            link_syncs: self.link_syncs,
            dram_busy_cycles: if self.functional {
                0.0
            } else {
                self.dram.busy_cycles()
            },
            // Functional mode applies global accesses without the caches.
            caches: self
                .caches
                .as_ref()
                .filter(|_| !self.functional)
                .map(|c| c.totals()),
            samples,
            functional: self.functional,
            activity,
            races: self
                .units
                .iter_mut()
                .fold(Default::default(), |mut all, u| {
                    all.merge(std::mem::take(&mut u.races));
                    all
                }),
        })
    }

    /// Stops the run when the process can no longer allocate the headroom a run
    /// keeps free (checked with progress: every few thousand steps), so that a
    /// memory limit reached by what grows during the run (recordings, printf
    /// text, spilled tiles, local memory) is an error, not an abort.
    fn check_headroom(&self, now: u64) -> Result<(), Box<Stop>> {
        let headroom = crate::load::HEADROOM_BYTES;
        if Vec::<u8>::new()
            .try_reserve_exact(headroom as usize)
            .is_err()
        {
            return Err(Box::new(Stop::HostMemory {
                cycle: (!self.functional).then_some(now),
                headroom,
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        Ok(())
    }

    /// Stops the run if Ctrl-C was pressed.
    pub(super) fn check_interrupt(&self, now: u64) -> Result<(), Box<Stop>> {
        if self
            .interrupt
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(Box::new(Stop::Interrupted {
                cycle: (!self.functional).then_some(now),
                blocks_done: self.blocks_done,
                blocks_total: self.blocks_total,
            }));
        }
        Ok(())
    }

    /// The busy cycles each unit's idle and constant power are counted for: its
    /// own, except for the lanes of a boundary unit with several blocks per SM
    /// (`sm.fold_x` lanes per north or south unit, `sm.fold_y` per east or west
    /// unit): the hardware unit is one, busy while its busiest lane is, so its
    /// first lane carries that and the others nothing (`None`).
    fn powered_cycles(&self) -> Vec<Option<u64>> {
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
    fn power_lanes(&self) -> Vec<usize> {
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
}
