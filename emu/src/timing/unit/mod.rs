//! One unit of the grid, an SM running a block or an Interface Unit running the
//! kernel's IU code: its warps, warp schedulers, pipelines, scoreboard, shared
//! memory and CB ports, and the issue step that runs an instruction through the
//! execution core and charges its timing (`issue`). Units only meet through [`Env`]
//! (global memory, the DRAM queue, counters) and through the rendezvous events they
//! report to the grid.

mod issue;

use crate::exec::cb::Port;
use crate::exec::fault::Fault;
use crate::exec::ops::{OpInfo, Program};
pub use crate::exec::warp::WorkCtx;
use crate::exec::warp::{Warp, WarpState};
use crate::machine::{SchedulerPolicy, UnitLabel};
use crate::observe::counters::{ComponentCounts, StallReason};
use crate::observe::outcome::UnitTotals;
use crate::observe::samples::Observed;
use crate::timing::budget::Budget;
pub use crate::timing::env::Env;
pub use crate::timing::params::Timing;
use crate::timing::params::pipe_of;
use spu_isa::Side;
use std::cell::Cell;

const NEVER: u64 = u64::MAX;
/// The stall of a scheduler whose warps have all exited (no instruction to charge).
const IDLE: (StallReason, u32) = (StallReason::Idle, u32::MAX);

/// What happened in a step that the grid must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEvent {
    None,
    /// Every live warp reached a blocksync: the unit arrives at the rendezvous.
    BlockSync {
        side: Option<Side>,
        pc: u32,
    },
    /// Every warp has exited.
    Finished,
}

/// What produced a register's pending value: decides the stall reason charged
/// while a consumer waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producer {
    Alu,
    Memory,
}

/// A warp's scoreboard: when its registers and predicates are written and when it
/// may issue again.
#[derive(Debug, Clone)]
struct Scoreboard {
    /// Cycle each general register's pending write lands.
    reg_ready: Vec<u64>,
    reg_producer: Vec<Producer>,
    pred_ready: [u64; 16],
    /// Earliest cycle the warp may issue again (branch redirect, release latency).
    next_issue: u64,
    /// When the next instruction's operands are ready and the producer of the last
    /// one (`None`: the issue time only). Cleared in one place,
    /// [`Scoreboard::set_next_issue`], which every issue and release goes through.
    ready: Cell<Option<(u64, Option<Producer>)>>,
}

impl Scoreboard {
    fn new(regs: usize, start: u64) -> Scoreboard {
        Scoreboard {
            reg_ready: vec![0; regs],
            reg_producer: vec![Producer::Alu; regs],
            pred_ready: [0; 16],
            next_issue: start,
            ready: Cell::new(None),
        }
    }

    fn set_next_issue(&mut self, t: u64) {
        self.next_issue = t;
        self.ready.set(None);
    }

    /// When the operands of an instruction are ready, and the producer of the one
    /// it waits for last (`None`: the issue time only).
    fn operands_ready(&self, info: &OpInfo) -> (u64, Option<Producer>) {
        if let Some(r) = self.ready.get() {
            return r;
        }
        let mut ready = self.next_issue;
        let mut producer = None;
        for &r in info.deps() {
            let r = usize::from(r);
            if self.reg_ready[r] > ready {
                ready = self.reg_ready[r];
                producer = Some(self.reg_producer[r]);
            }
        }
        for &p in info.pdeps() {
            if self.pred_ready[usize::from(p)] > ready {
                ready = self.pred_ready[usize::from(p)];
                producer = Some(Producer::Alu);
            }
        }
        self.ready.set(Some((ready, producer)));
        (ready, producer)
    }
}

/// The stall charged while waiting for an operand of `producer`.
fn stall_reason(producer: Option<Producer>) -> StallReason {
    match producer {
        None => StallReason::Control,
        Some(Producer::Alu) => StallReason::Dependency,
        Some(Producer::Memory) => StallReason::Memory,
    }
}

#[derive(Debug, Clone, Default)]
struct Scheduler {
    /// Warp indices this scheduler owns, oldest first.
    warps: Vec<usize>,
    /// Position in `warps` of the warp issued last.
    last: usize,
    /// Stall being charged: reason, instruction, since which cycle.
    stall: Option<(StallReason, u32)>,
    stall_since: u64,
}

/// One SM or Interface Unit.
#[derive(Debug, Clone)]
pub struct Unit {
    pub label: UnitLabel,
    /// The unit's end of the link on each side (indexed by side code), if it has
    /// that CB port.
    pub ports: [Option<Port>; 4],
    pub warps: Vec<Warp>,
    boards: Vec<Scoreboard>,
    shared: Vec<u32>,
    ctx: WorkCtx,
    schedulers: Vec<Scheduler>,
    pipes: [Vec<u64>; 3],
    /// Next cycle the unit must be stepped; `NEVER` while it waits for an event.
    pub wake: u64,
    pub busy: bool,
    pub counters: ComponentCounts,
    /// Warp instructions and thread instructions issued.
    pub issued: u64,
    pub thread_instrs: u64,
    /// Cycles with work assigned.
    pub busy_cycles: u64,
    /// Of those, cycles running code (warps), as opposed to engine work.
    pub code_cycles: u64,
    /// Work items completed.
    pub items_done: u64,
    started: u64,
    /// Stall cycles by reason, summed over schedulers.
    pub stalls: [u64; StallReason::ALL.len()],
}

impl Unit {
    pub fn new(label: UnitLabel, timing: &Timing) -> Unit {
        let n = if matches!(label, UnitLabel::Iu { .. } | UnitLabel::Dma { .. }) {
            timing.iu_schedulers
        } else {
            timing.sm_schedulers
        };
        Unit {
            label,
            ports: [None, None, None, None],
            warps: Vec::new(),
            boards: Vec::new(),
            shared: Vec::new(),
            ctx: WorkCtx {
                ctaid: [0; 2],
                nctaid: [0; 2],
                ntid: [0; 3],
                iu: None,
                entry: 0,
                shared_bytes: 0,
                sm_grid: [0; 2],
            },
            schedulers: vec![Scheduler::default(); n],
            pipes: timing.pipes.map(|n| vec![0; n]),
            wake: NEVER,
            busy: false,
            counters: ComponentCounts::default(),
            issued: 0,
            thread_instrs: 0,
            busy_cycles: 0,
            code_cycles: 0,
            items_done: 0,
            started: 0,
            stalls: [0; StallReason::ALL.len()],
        }
    }

    /// True while running IU code (on an Interface Unit, or on an SM that took an
    /// IU role in a partial pass).
    pub fn is_iu(&self) -> bool {
        self.ctx.iu.is_some()
    }

    /// The work being run.
    pub fn ctx(&self) -> &WorkCtx {
        &self.ctx
    }

    /// Starts a block (SM) or an IU program instance of `threads` threads at cycle
    /// `now`.
    pub fn begin(&mut self, ctx: WorkCtx, threads: u32, program: &Program, now: u64) {
        self.ctx = ctx;
        let regs = usize::from(program.layout.general);
        self.warps = (0..threads.div_ceil(32))
            .map(|w| {
                Warp::new(
                    w,
                    (threads - w * 32).min(32),
                    &program.layout,
                    &ctx,
                    self.label,
                )
            })
            .collect();
        self.boards = (0..self.warps.len())
            .map(|_| Scoreboard::new(regs, now))
            .collect();
        self.shared.clear();
        self.shared.resize((ctx.shared_bytes / 4) as usize, 0);
        let n = self.schedulers.len();
        for (s, sched) in self.schedulers.iter_mut().enumerate() {
            *sched = Scheduler {
                warps: (s..self.warps.len()).step_by(n).collect(),
                last: usize::MAX,
                stall: None,
                stall_since: now,
            };
        }
        self.busy = true;
        self.started = now;
        self.wake = now;
    }

    /// Busy cycles up to cycle `t` (work already finished plus the current item).
    pub fn busy_until(&self, t: u64) -> u64 {
        self.busy_cycles
            + if self.busy {
                t.saturating_sub(self.started)
            } else {
                0
            }
    }

    /// What the unit did so far.
    pub fn totals(&self) -> UnitTotals {
        UnitTotals {
            label: self.label,
            counters: self.counters.clone(),
            issued: self.issued,
            thread_instrs: self.thread_instrs,
            busy_cycles: self.busy_cycles,
            code_cycles: self.code_cycles,
            items_done: self.items_done,
            stalls: self.stalls,
        }
    }

    /// Ends the current work at cycle `now`.
    pub fn finish(&mut self, now: u64) {
        self.busy = false;
        self.wake = NEVER;
        self.busy_cycles += now - self.started;
        if !self.warps.is_empty() {
            self.code_cycles += now - self.started;
        }
        self.items_done += 1;
        self.warps.clear();
        self.boards.clear();
    }

    /// Releases warps waiting at a blocksync; they may issue from cycle `at`.
    pub fn release_blocksync(&mut self, at: u64) {
        for (w, b) in self.warps.iter_mut().zip(&mut self.boards) {
            if matches!(w.state, WarpState::AtBlockSync(_)) {
                w.state = WarpState::Running;
                b.set_next_issue(at);
            }
        }
        self.wake = self.wake.min(at);
    }

    /// Where each waiting warp is, for deadlock reports: (warp, pc, state); a warp
    /// at a barrier reports the barrier's PC.
    pub fn waiting_warps(&self) -> Vec<(u32, u32, WarpState)> {
        self.warps
            .iter()
            .filter(|w| !w.is_done())
            .map(|w| {
                let pc = match w.state {
                    WarpState::AtBarrier(pc) | WarpState::AtBlockSync(pc) => pc,
                    _ => w.pc().unwrap_or(0),
                };
                (w.index, pc, w.state)
            })
            .collect()
    }

    /// When warp `wi` could next issue, and if not now, why not (and at which PC).
    fn blocker(&self, wi: usize, t: u64, env: &Env) -> Option<(u64, StallReason, u32)> {
        let w = &self.warps[wi];
        let pc = w.pc()?;
        match w.state {
            WarpState::Done => return None,
            WarpState::AtBarrier(at) => return Some((NEVER, StallReason::Barrier, at)),
            WarpState::AtBlockSync(at) => return Some((NEVER, StallReason::BlockSync, at)),
            WarpState::Running => {}
        }
        // Past the last instruction: let issue report it.
        let info = env.program.info.get(pc as usize)?;
        let (ready, producer) = self.boards[wi].operands_ready(info);
        if ready > t {
            return Some((ready, stall_reason(producer), pc));
        }
        if let Some(pipe) = pipe_of(info.class.timing) {
            let slots = &self.pipes[pipe as usize];
            let free = if slots.len() == 1 {
                slots[0]
            } else {
                slots.iter().copied().min().unwrap_or(0)
            };
            if free > t {
                return Some((free, StallReason::PipeBusy, pc));
            }
        }
        None
    }

    fn charge_stall(&mut self, s: usize, cycles: u64, env: &mut Env) {
        if let Some((reason, pc)) = self.schedulers[s].stall
            && cycles > 0
        {
            self.stalls[reason as usize] += cycles;
            if let Some(at) = env.pcs.get_mut(pc as usize) {
                at.stalls[reason as usize] += cycles;
            }
        }
    }

    /// Issues what can issue at cycle `now` and schedules the next step.
    pub fn step(&mut self, now: u64, env: &mut Env) -> Result<StepEvent, Fault> {
        let mut event = StepEvent::None;
        for s in 0..self.schedulers.len() {
            let since = self.schedulers[s].stall_since;
            self.charge_stall(s, now.saturating_sub(since), env);
            self.schedulers[s].stall = None;
            let n = self.schedulers[s].warps.len();
            let last = self.schedulers[s].last;
            let mut chosen = None;
            let mut first_blocked = None;
            for k in 0..n {
                let pos = issue_order(env.timing.policy, last, n, k);
                let w = self.schedulers[s].warps[pos];
                if self.warps[w].is_done() {
                    continue;
                }
                match self.blocker(w, now, env) {
                    None => {
                        chosen = Some((pos, w));
                        break;
                    }
                    Some((_, reason, pc)) => {
                        first_blocked.get_or_insert((reason, pc));
                    }
                }
            }
            match chosen {
                Some((pos, w)) => {
                    self.schedulers[s].last = pos;
                    let e = self.issue(w, now, env)?;
                    if e != StepEvent::None {
                        event = e;
                    }
                }
                None => {
                    self.schedulers[s].stall = Some(first_blocked.unwrap_or(IDLE));
                    self.charge_stall(s, 1, env);
                    self.schedulers[s].stall = None;
                }
            }
            self.schedulers[s].stall_since = now + 1;
        }
        if self.warps.iter().all(Warp::is_done) {
            return Ok(StepEvent::Finished);
        }
        self.plan(now + 1, env);
        Ok(event)
    }

    /// Functional mode: runs every warp until it exits or waits at a barrier or
    /// blocksync, with no scheduling, scoreboard or stall accounting. Stops early
    /// (with `budget.spent` set) when the instruction budget runs out or on Ctrl-C.
    pub fn step_functional(
        &mut self,
        now: u64,
        env: &mut Env,
        budget: &mut Budget,
    ) -> Result<StepEvent, Fault> {
        loop {
            let mut progressed = false;
            for wi in 0..self.warps.len() {
                while self.warps[wi].state == WarpState::Running {
                    if !budget.take() {
                        return Ok(StepEvent::None);
                    }
                    progressed = true;
                    let event = self.issue(wi, now, env)?;
                    if let StepEvent::BlockSync { .. } = event {
                        self.wake = NEVER;
                        return Ok(event);
                    }
                }
            }
            if self.warps.iter().all(Warp::is_done) {
                return Ok(StepEvent::Finished);
            }
            if !progressed {
                self.wake = NEVER;
                return Ok(StepEvent::None);
            }
        }
    }

    /// Sets the wake cycle and the stall each scheduler is charged from cycle `t`.
    fn plan(&mut self, t: u64, env: &Env) {
        let mut wake = NEVER;
        for s in 0..self.schedulers.len() {
            let mut first = None;
            let mut issuable = false;
            for &w in &self.schedulers[s].warps {
                if self.warps[w].is_done() {
                    continue;
                }
                match self.blocker(w, t, env) {
                    None => {
                        issuable = true;
                        wake = wake.min(t);
                    }
                    Some((ready, reason, pc)) => {
                        wake = wake.min(ready);
                        first.get_or_insert((reason, pc));
                    }
                }
            }
            let sched = &mut self.schedulers[s];
            sched.stall = if issuable {
                None
            } else {
                Some(first.unwrap_or(IDLE))
            };
            sched.stall_since = t;
        }
        self.wake = wake;
    }

    /// Charges stalls up to `now` (end of run or of the work item).
    pub fn settle(&mut self, now: u64, env: &mut Env) {
        for s in 0..self.schedulers.len() {
            let since = self.schedulers[s].stall_since;
            self.charge_stall(s, now.saturating_sub(since), env);
            self.schedulers[s].stall = None;
            self.schedulers[s].stall_since = now;
        }
    }
}

impl Observed for Vec<Unit> {
    fn counts(&self) -> ComponentCounts {
        let mut t = ComponentCounts::default();
        for u in self {
            t.merge(&u.counters);
        }
        t
    }

    fn busy_until(&self, cycle: u64) -> u64 {
        self.iter().map(|u| u.busy_until(cycle)).sum()
    }
}

/// Position in a scheduler's warp list of the `k`-th warp to try. Loose
/// round-robin starts after the warp issued last; greedy-then-oldest retries it
/// first, then goes oldest first.
fn issue_order(policy: SchedulerPolicy, last: usize, n: usize, k: usize) -> usize {
    match policy {
        SchedulerPolicy::Lrr => last.wrapping_add(1).wrapping_add(k) % n,
        SchedulerPolicy::Gto if last < n => match k {
            0 => last,
            _ if k - 1 < last => k - 1,
            _ => k,
        },
        SchedulerPolicy::Gto => k,
    }
}
