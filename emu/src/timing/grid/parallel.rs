//! Deterministic threads (`--threads N`): units step on several threads with
//! results, stats and traces bit-identical to one thread.
//!
//! Units meet only through the grid (rendezvous, work items) and global memory.
//! Global memory is already seen in windows (timing mode: accesses take effect at
//! the end of windows of the DRAM latency plus one cycle, in (cycle, unit,
//! sequence) order; functional mode: windows of the blocksync latency), so within
//! a window a unit's steps read only the unit itself and memory as it stood at the
//! window's start. The grid acts on a unit only when it has stopped: a release
//! reaches a unit waiting at a rendezvous, new work an idle unit, a deferred
//! result the end of the window; and everything the grid does at cycle `t`
//! wakes units at `t + 1` or later (the blocksync handshake takes at least one
//! cycle).
//!
//! So each window is simulated in rounds. In a round, every unit that can run
//! steps ahead on some thread, alone, until the window ends or a step gives the
//! grid something to do (an arrival at a rendezvous, the end of its work, a
//! fault); there it stops. Then this thread takes the earliest such cycle `t` and
//! does, in unit order, exactly what the one-thread loop does at `t`: it acts on
//! the stopped units' events and steps the units that read other units' state
//! (virtual IUs, which read completed passes and spilled tiles), then starts new
//! work. Units that became able to run go into the next round. Deferred accesses
//! of all threads are applied at the window's end by key, as with one thread.
//!
//! Between rounds a thread waits for the other by polling for a short while,
//! then parks (see `handoff`). With one thread the same rounds run on this
//! thread alone. A run that writes a trace (one ordered stream), or whose
//! blocksync handshake is configured to take no cycle, uses the one-at-a-time
//! event loop instead.

use super::handoff::Handoff;
use super::stepping::{self, Happened, Shared};
use super::{Grid, NEVER, shared};
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Program;
use crate::observe::outcome::{Progress, Stop};
use crate::timing::banks::WaveCache;
use crate::timing::effects::{Deferred, PENDING};
use crate::timing::engine::SpillStore;
use crate::timing::unit::{Timing, Unit};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How many threads a run can use, or `None` when it must run in the one-at-a-time
/// event loop ([`Grid::run_events`]). With one thread, the window-by-window
/// simulation is also the faster one: a unit steps through its wake cycles without
/// a trip through the queue of wake-ups each time.
pub(super) fn usable_threads(grid: &Grid) -> Option<usize> {
    if grid.tracer.is_some() || grid.timing.blocksync_latency() == 0 {
        return None;
    }
    Some(grid.threads.min(grid.units.len()).max(1))
}

/// A round's units, which this thread and the helpers claim one at a time, in
/// the order of what each cost in its last round, the dearest first (so that the
/// threads end together, whatever the mix of busy SMs and idle boundary units).
#[derive(Debug)]
struct Round {
    units: Vec<Mutex<Option<Box<Unit>>>>,
    /// The next unit to claim.
    next: AtomicUsize,
    horizon: u64,
    memory: Arc<GlobalMemory>,
}

/// What one thread's steps in a round produced.
#[derive(Debug, Default)]
struct Output {
    /// Deferred accesses recorded by the steps.
    sink: Vec<Deferred>,
    /// (unit, cycle, what happened) for each unit that stopped at an event.
    events: Vec<(usize, u64, Happened)>,
    /// Latest cycle stepped.
    last: u64,
}

/// A helper's part in a round: the round to claim units from, and its output.
#[derive(Debug, Default)]
struct Job {
    round: Option<Arc<Round>>,
    out: Output,
}

/// Claims units of `round` until none is left and steps each to the round's
/// horizon or its next event.
fn claim(
    round: &Round,
    shared: &Shared,
    waves: &mut WaveCache,
    sink: &mut Vec<Deferred>,
    events: &mut Vec<(usize, u64, Happened)>,
    last: &mut u64,
) {
    loop {
        let i = round.next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = round.units.get(i) else {
            return;
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(unit) = slot.as_mut()
            && let Some((t, h)) = stepping::advance(unit, round.horizon, shared, waves, sink, last)
        {
            events.push((unit.id, t, h));
        }
    }
}

/// What a helper thread reads for the whole run.
#[derive(Debug)]
struct Context {
    program: Arc<Program>,
    timing: Arc<Timing>,
    params: Arc<[u32]>,
    local_bytes: u32,
    functional: bool,
    spill_full: bool,
}

/// A helper thread's handoff, and its job's buffers between rounds.
#[derive(Debug)]
struct Helper<'h> {
    handoff: &'h Handoff<Job>,
    spare: Option<Job>,
}

/// Closes the handoff when the helper thread ends, also by a panic, so that the
/// grid waiting for its job wakes.
struct Abandon<'h>(&'h Handoff<Job>);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

/// A helper thread: steps the units of each job it is given.
fn help(ctx: Context, handoff: &Handoff<Job>) {
    handoff.attach();
    let _abandon = Abandon(handoff);
    let mut waves = WaveCache::new();
    // Units that read spills or completed passes never come here.
    let spills = SpillStore::new();
    while let Some(mut job) = handoff.take() {
        if let Some(round) = job.round.take() {
            let shared = Shared {
                program: &ctx.program,
                timing: &ctx.timing,
                memory: &round.memory,
                params: &ctx.params,
                local_bytes: ctx.local_bytes,
                spills: &spills,
                completed: &[],
                functional: ctx.functional,
                spill_full: ctx.spill_full,
            };
            let out = &mut job.out;
            claim(
                &round,
                &shared,
                &mut waves,
                &mut out.sink,
                &mut out.events,
                &mut out.last,
            );
            // The memory is shared no longer when the job returns, so the grid
            // can change it at the window's end.
        }
        handoff.give_back(job);
    }
}

/// What the rounds of a run carry from one to the next.
#[derive(Debug)]
struct Rounds {
    /// The event each stopped unit waits for the grid to act on.
    pending: Vec<Option<(u64, Happened)>>,
    /// Units that stood in for those away in the last round.
    #[allow(clippy::vec_box)]
    spares: Vec<Box<Unit>>,
    /// Warp instructions each unit issued in its last round.
    costs: Vec<u64>,
}

impl Grid<'_> {
    /// Runs on `threads` threads (this one and `threads - 1` helpers).
    pub(super) fn run_threads(
        &mut self,
        threads: usize,
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Box<Stop>> {
        let program = Arc::new(self.image.program.clone());
        let timing = Arc::new(self.timing.clone());
        let params: Arc<[u32]> = self.image.params.clone().into();
        let handoffs: Vec<Handoff<Job>> = (1..threads).map(|_| Handoff::new()).collect();
        std::thread::scope(|scope| {
            let mut helpers = Vec::with_capacity(threads - 1);
            for handoff in &handoffs {
                let ctx = Context {
                    program: Arc::clone(&program),
                    timing: Arc::clone(&timing),
                    params: Arc::clone(&params),
                    local_bytes: self.image.local_bytes,
                    functional: self.functional,
                    spill_full: self.spill_full,
                };
                // A thread the system cannot start (a memory limit, a thread
                // limit) leaves the run to those started: results do not
                // depend on their number.
                let started = std::thread::Builder::new()
                    .name("spu-emu step".into())
                    .spawn_scoped(scope, move || help(ctx, handoff));
                if started.is_err() {
                    break;
                }
                helpers.push(Helper {
                    handoff,
                    spare: Some(Job::default()),
                });
            }
            let run = self.run_windows(&mut helpers, max_cycles, progress);
            // Ends the helpers' loops.
            for handoff in &handoffs {
                handoff.close();
            }
            run
        })
    }

    /// The earliest wake-up of a busy unit.
    fn earliest_wake(&self) -> u64 {
        self.units
            .iter()
            .filter(|u| u.busy && u.wake < PENDING)
            .map(|u| u.wake)
            .min()
            .unwrap_or(NEVER)
    }

    /// The run, window by window; the same decisions as [`Grid::run_events`].
    fn run_windows(
        &mut self,
        helpers: &mut [Helper<'_>],
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Box<Stop>> {
        let mut rounds = Rounds {
            pending: vec![None; self.units.len()],
            spares: Vec::new(),
            costs: vec![0; self.units.len()],
        };
        let mut now = 0u64;
        let mut windows = 0u64;
        self.start_ready_work(now);
        // Functional mode bounds its issued instructions, not its cycles (see
        // `next_cycle`): a horizon at the cycle limit would stop every unit there
        // while the rounds went on.
        let last = if self.functional {
            u64::MAX
        } else {
            max_cycles.saturating_add(1)
        };
        loop {
            let horizon = self.window_end.min(last);
            now = now.max(self.run_window(helpers, &mut rounds, horizon)?);
            // The one-thread loop's queue is not used here.
            self.queue.clear();
            let mut next = self.earliest_wake();
            if next >= self.window_end && self.window_pending() {
                self.close_window();
                self.queue.clear();
                next = self.earliest_wake();
            }
            match self.next_cycle(now, next, max_cycles)? {
                Some(t) => now = t,
                None => return Ok(()),
            }
            windows += 1;
            if windows % 64 == 0 {
                self.report(now, progress)?;
            } else {
                self.check_interrupt(now)?;
            }
        }
    }

    /// Simulates every cycle before `horizon`; returns the latest cycle at which
    /// anything happened (0 if nothing did).
    fn run_window(
        &mut self,
        helpers: &mut [Helper<'_>],
        rounds: &mut Rounds,
        horizon: u64,
    ) -> Result<u64, Box<Stop>> {
        let mut last = 0u64;
        loop {
            last = last.max(self.round(helpers, rounds, horizon));
            let pending = &mut rounds.pending;
            // The earliest cycle at which the grid has something to do.
            let mut t = NEVER;
            for (u, p) in pending.iter().enumerate() {
                let unit = &self.units[u];
                match p {
                    Some((c, _)) => t = t.min(*c),
                    None if unit.busy && stepping::reads_others(unit) => t = t.min(unit.wake),
                    None => {}
                }
            }
            if t >= horizon {
                return Ok(last);
            }
            last = last.max(t);
            // What the one-thread loop does at cycle t, in unit order.
            let mut changed = false;
            for (u, p) in pending.iter_mut().enumerate() {
                if p.as_ref().is_some_and(|(c, _)| *c == t) {
                    if let Some((_, happened)) = p.take() {
                        changed |= self.handle(u, happened, t)?;
                    }
                } else if p.is_none()
                    && self.units[u].busy
                    && self.units[u].wake == t
                    && stepping::reads_others(&self.units[u])
                {
                    changed |= self.step_unit(u, t)?;
                }
            }
            if changed {
                self.after_events(t)?;
            }
        }
    }

    /// One round: every unit that can run before `horizon` (busy, not stopped at
    /// an event, not reading other units) steps ahead on some thread until the
    /// horizon or its next event. Returns the latest cycle stepped.
    fn round(&mut self, helpers: &mut [Helper<'_>], rounds: &mut Rounds, horizon: u64) -> u64 {
        let Rounds {
            pending,
            spares,
            costs,
        } = rounds;
        let mut runnable: Vec<usize> = (0..self.units.len())
            .filter(|&u| {
                let unit = &self.units[u];
                pending[u].is_none()
                    && unit.busy
                    && unit.wake < horizon
                    && !stepping::reads_others(unit)
            })
            .collect();
        let mut last = 0u64;
        let ways = (helpers.len() + 1).min(runnable.len());
        if ways <= 1 {
            // Nothing to share: no handoff.
            let shared = shared!(self);
            for &u in &runnable {
                let before = self.units[u].counts.warp_instructions;
                let event = stepping::advance(
                    &mut self.units[u],
                    horizon,
                    &shared,
                    &mut self.waves,
                    &mut self.effects,
                    &mut last,
                );
                costs[u] = self.units[u].counts.warp_instructions - before;
                if event.is_some() {
                    pending[u] = event;
                }
            }
            return last;
        }
        // The dearest first; by unit among equals.
        runnable.sort_by_key(|&u| std::cmp::Reverse(costs[u]));
        let mut units = Vec::with_capacity(runnable.len());
        for &u in &runnable {
            costs[u] = self.units[u].counts.warp_instructions;
            let label = self.units[u].label;
            let vacant = spares
                .pop()
                .unwrap_or_else(|| Box::new(Unit::new(u, label, &self.image.program)));
            units.push(Mutex::new(Some(std::mem::replace(
                &mut self.units[u],
                vacant,
            ))));
        }
        let round = Arc::new(Round {
            units,
            next: AtomicUsize::new(0),
            horizon,
            memory: Arc::clone(&self.memory),
        });
        for helper in helpers.iter_mut().take(ways - 1) {
            let mut job = helper.spare.take().unwrap_or_default();
            job.round = Some(Arc::clone(&round));
            job.out.last = 0;
            helper.handoff.send(job);
        }
        let mut events = Vec::new();
        claim(
            &round,
            &shared!(self),
            &mut self.waves,
            &mut self.effects,
            &mut events,
            &mut last,
        );
        for helper in helpers.iter_mut().take(ways - 1) {
            let mut job = helper
                .handoff
                .receive()
                .expect("a simulation thread stopped in the middle of a round");
            job.round = None;
            last = last.max(job.out.last);
            self.effects.append(&mut job.out.sink);
            events.append(&mut job.out.events);
            helper.spare = Some(job);
        }
        for (u, t, h) in events {
            pending[u] = Some((t, h));
        }
        for slot in &round.units {
            if let Some(unit) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let u = unit.id;
                costs[u] = unit.counts.warp_instructions - costs[u];
                spares.push(std::mem::replace(&mut self.units[u], unit));
            }
        }
        last
    }
}
