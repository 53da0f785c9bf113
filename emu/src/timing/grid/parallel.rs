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
//! Threads block on channels between rounds; nothing spins. With one thread the
//! same rounds run on this thread alone. A run that writes a trace (one ordered
//! stream), or whose blocksync handshake is configured to take no cycle, uses the
//! one-at-a-time event loop instead.

use super::stepping::{self, Happened, Shared};
use super::{Grid, NEVER, shared};
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Program;
use crate::observe::outcome::{Progress, Stop};
use crate::timing::banks::WaveCache;
use crate::timing::effects::{Deferred, PENDING};
use crate::timing::engine::SpillStore;
use crate::timing::unit::{Timing, Unit};
use std::sync::Arc;
use std::sync::mpsc;

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

/// Units one thread steps in one round, and what they did.
#[derive(Debug, Default)]
struct Job {
    /// Boxed: handed over without copying them.
    #[allow(clippy::vec_box)]
    units: Vec<Box<Unit>>,
    horizon: u64,
    memory: Option<Arc<GlobalMemory>>,
    /// Deferred accesses recorded by the steps.
    sink: Vec<Deferred>,
    /// (unit, cycle, what happened) for each unit that stopped at an event.
    events: Vec<(usize, u64, Happened)>,
    /// Latest cycle stepped.
    last: u64,
}

/// What a helper thread reads for the whole run.
#[derive(Debug)]
struct Context {
    program: Arc<Program>,
    timing: Arc<Timing>,
    params: Arc<[u32]>,
    functional: bool,
    spill_full: bool,
}

/// A helper thread's end of its channels, and its job's buffers between rounds.
#[derive(Debug)]
struct Helper {
    jobs: mpsc::Sender<Job>,
    done: mpsc::Receiver<Job>,
    spare: Option<Job>,
}

/// A helper thread: steps the units of each job it is given.
fn help(ctx: Context, jobs: mpsc::Receiver<Job>, done: mpsc::Sender<Job>) {
    let mut waves = WaveCache::new();
    // Units that read spills or completed passes never come here.
    let spills = SpillStore::new();
    while let Ok(mut job) = jobs.recv() {
        let Some(memory) = job.memory.take() else {
            continue;
        };
        let shared = Shared {
            program: &ctx.program,
            timing: &ctx.timing,
            memory: &memory,
            params: &ctx.params,
            spills: &spills,
            completed: &[],
            functional: ctx.functional,
            spill_full: ctx.spill_full,
        };
        for unit in &mut job.units {
            if let Some((t, h)) = stepping::advance(
                unit,
                job.horizon,
                &shared,
                &mut waves,
                &mut job.sink,
                &mut job.last,
            ) {
                job.events.push((unit.id, t, h));
            }
        }
        // The memory is shared no longer when the job returns, so the grid can
        // change it at the window's end.
        drop(memory);
        if done.send(job).is_err() {
            return;
        }
    }
}

/// The event each stopped unit waits for the grid to act on.
type Pending = Vec<Option<(u64, Happened)>>;

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
        std::thread::scope(|scope| {
            let mut helpers = Vec::with_capacity(threads - 1);
            for _ in 1..threads {
                let (job_tx, job_rx) = mpsc::channel();
                let (done_tx, done_rx) = mpsc::channel();
                let ctx = Context {
                    program: Arc::clone(&program),
                    timing: Arc::clone(&timing),
                    params: Arc::clone(&params),
                    functional: self.functional,
                    spill_full: self.spill_full,
                };
                scope.spawn(move || help(ctx, job_rx, done_tx));
                helpers.push(Helper {
                    jobs: job_tx,
                    done: done_rx,
                    spare: Some(Job::default()),
                });
            }
            // Returning drops the helpers' channels, which ends their loops.
            self.run_windows(&mut helpers, max_cycles, progress)
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
        helpers: &mut [Helper],
        max_cycles: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Box<Stop>> {
        let mut pending: Pending = vec![None; self.units.len()];
        let mut spares = Vec::new();
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
            now = now.max(self.run_window(helpers, &mut pending, &mut spares, horizon)?);
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
    #[allow(clippy::vec_box)]
    fn run_window(
        &mut self,
        helpers: &mut [Helper],
        pending: &mut Pending,
        spares: &mut Vec<Box<Unit>>,
        horizon: u64,
    ) -> Result<u64, Box<Stop>> {
        let mut last = 0u64;
        loop {
            last = last.max(self.round(helpers, pending, spares, horizon));
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
    #[allow(clippy::vec_box)]
    fn round(
        &mut self,
        helpers: &mut [Helper],
        pending: &mut Pending,
        spares: &mut Vec<Box<Unit>>,
        horizon: u64,
    ) -> u64 {
        let runnable: Vec<usize> = (0..self.units.len())
            .filter(|&u| {
                let unit = &self.units[u];
                pending[u].is_none()
                    && unit.busy
                    && unit.wake < horizon
                    && !stepping::reads_others(unit)
            })
            .collect();
        let ways = (helpers.len() + 1).min(runnable.len());
        // Hand each helper every `ways`-th unit; this thread keeps the first share.
        for (w, helper) in helpers.iter_mut().enumerate().take(ways.saturating_sub(1)) {
            let mut job = helper.spare.take().unwrap_or_default();
            job.horizon = horizon;
            job.memory = Some(Arc::clone(&self.memory));
            job.last = 0;
            for &u in runnable.iter().skip(w + 1).step_by(ways) {
                let label = self.units[u].label;
                let vacant = spares
                    .pop()
                    .unwrap_or_else(|| Box::new(Unit::new(u, label, &self.image.program)));
                job.units
                    .push(std::mem::replace(&mut self.units[u], vacant));
            }
            if let Err(mpsc::SendError(job)) = helper.jobs.send(job) {
                // The helper is gone (it panicked): step its share here instead.
                helper.spare = Some(job);
            }
        }
        let mut last = 0u64;
        if ways > 0 {
            let shared = shared!(self);
            for &u in runnable.iter().step_by(ways) {
                if let Some(event) = stepping::advance(
                    &mut self.units[u],
                    horizon,
                    &shared,
                    &mut self.waves,
                    &mut self.effects,
                    &mut last,
                ) {
                    pending[u] = Some(event);
                }
            }
        }
        for helper in helpers.iter_mut().take(ways.saturating_sub(1)) {
            let mut job = match helper.spare.take() {
                // Never sent: step it here.
                Some(mut job) => {
                    let memory = job
                        .memory
                        .take()
                        .unwrap_or_else(|| Arc::clone(&self.memory));
                    let shared = Shared {
                        memory: &memory,
                        ..shared!(self)
                    };
                    for unit in &mut job.units {
                        if let Some((t, h)) = stepping::advance(
                            unit,
                            horizon,
                            &shared,
                            &mut self.waves,
                            &mut job.sink,
                            &mut job.last,
                        ) {
                            job.events.push((unit.id, t, h));
                        }
                    }
                    job
                }
                None => helper
                    .done
                    .recv()
                    .expect("a simulation thread stopped in the middle of a round"),
            };
            job.memory = None;
            last = last.max(job.last);
            for unit in job.units.drain(..) {
                let u = unit.id;
                spares.push(std::mem::replace(&mut self.units[u], unit));
            }
            self.effects.append(&mut job.sink);
            for (u, t, h) in job.events.drain(..) {
                pending[u] = Some((t, h));
            }
            helper.spare = Some(job);
        }
        last
    }
}
