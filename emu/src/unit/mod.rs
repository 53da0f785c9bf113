//! One unit of the grid, an SM running a block or an Interface Unit running the
//! kernel's IU code: its warps, warp schedulers, pipelines, shared memory and
//! scoreboard, and the issue step that executes an instruction functionally and
//! charges its timing (`issue`). Units only meet through [`Env`] (global memory, the
//! DRAM queue, counters) and through the rendezvous events they report to the grid.

mod issue;

use crate::cb::Link;
use crate::counters::{Component, ComponentCounts, PcCounters, StallReason, Traffic};
use crate::dram::Dram;
use crate::exec::{self, Lanes};
use crate::fault::{Fault, FaultKind, UnitLabel};
use crate::machine::SchedulerPolicy;
use crate::memory::GlobalMemory;
use crate::program::{Kind, Op, Src};
pub use crate::timing::Timing;
use crate::timing::pipe_of;
use crate::warp::{Producer, Warp, WarpState};
use spu_isa::{Guard, Side, Space, Special, TimingClass};

const NEVER: u64 = u64::MAX;
/// The stall of a scheduler whose warps have all exited (no instruction to charge).
const IDLE: (StallReason, u32) = (StallReason::Idle, u32::MAX);

/// Machine-wide state a unit touches while issuing.
#[derive(Debug)]
pub struct Env<'a> {
    pub ops: &'a [Op],
    pub timing: &'a Timing,
    pub memory: &'a mut GlobalMemory,
    pub dram: &'a mut Dram,
    pub params: &'a [u32],
    pub pcs: &'a mut [PcCounters],
    pub traffic: &'a mut Traffic,
    pub links: &'a mut [Link],
    pub waves: &'a mut crate::access::WaveCache,
    /// Functional mode: no timing, only results and counts.
    pub functional: bool,
    /// The instruction trace, when asked for.
    pub trace: Option<&'a mut crate::trace::Tracer>,
}

/// What a unit is running: the values its special registers read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkCtx {
    pub ctaid: [u32; 2],
    pub nctaid: [u32; 2],
    /// Block dimensions (IUs: threads, 1, 1).
    pub ntid: [u32; 3],
    /// Interface Units: side and index along it in the launched grid.
    pub iu: Option<(Side, u32)>,
    pub entry: u32,
    pub regs: usize,
    pub shared_bytes: u32,
    /// The machine's SM grid: columns, rows (`%smid`, `%nsmid`).
    pub sm_grid: [u32; 2],
}

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
    /// Link on each side (indexed by side code), if the unit has that CB port.
    pub ports: [Option<usize>; 4],
    pub warps: Vec<Warp>,
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
            ports: [None; 4],
            warps: Vec::new(),
            shared: Vec::new(),
            ctx: WorkCtx {
                ctaid: [0; 2],
                nctaid: [0; 2],
                ntid: [0; 3],
                iu: None,
                entry: 0,
                regs: 0,
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

    /// Starts a block (SM) or an IU program instance at cycle `now`.
    pub fn begin(&mut self, ctx: WorkCtx, threads: u32, now: u64) {
        self.ctx = ctx;
        self.warps = (0..threads.div_ceil(32))
            .map(|w| Warp::new(w, (threads - w * 32).min(32), ctx.regs, ctx.entry, now))
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
    }

    /// Releases warps waiting at a blocksync; they may issue from cycle `at`.
    pub fn release_blocksync(&mut self, at: u64) {
        for w in &mut self.warps {
            if matches!(w.state, WarpState::AtBlockSync(_)) {
                w.state = WarpState::Running;
                w.set_next_issue(at);
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

    /// When a warp could next issue, and if not now, why not (and at which PC).
    fn blocker(&self, w: &Warp, t: u64, env: &Env) -> Option<(u64, StallReason, u32)> {
        let pc = w.pc()?;
        match w.state {
            WarpState::Done => return None,
            WarpState::AtBarrier(at) => return Some((NEVER, StallReason::Barrier, at)),
            WarpState::AtBlockSync(at) => return Some((NEVER, StallReason::BlockSync, at)),
            WarpState::Running => {}
        }
        // Past the last instruction: let issue report it.
        let op = env.ops.get(pc as usize)?;
        let (ready, reason) = match w.ready.get() {
            Some(r) => r,
            None => {
                let r = operands_ready(w, op);
                w.ready.set(Some(r));
                r
            }
        };
        if ready > t {
            return Some((ready, reason, pc));
        }
        if let Some(pipe) = pipe_of(op.class.timing) {
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
                match self.blocker(&self.warps[w], now, env) {
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
    /// blocksync, with no scheduling, scoreboard or stall accounting.
    pub fn step_functional(&mut self, now: u64, env: &mut Env) -> Result<StepEvent, Fault> {
        loop {
            let mut progressed = false;
            for wi in 0..self.warps.len() {
                while self.warps[wi].state == WarpState::Running {
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
                let warp = &self.warps[w];
                if warp.is_done() {
                    continue;
                }
                match self.blocker(warp, t, env) {
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

/// When an instruction's operands are ready for warp `w` (the scoreboard), and
/// what it waits for until then.
fn operands_ready(w: &Warp, op: &Op) -> (u64, StallReason) {
    let mut ready = w.next_issue();
    let mut reason = StallReason::Control;
    for &r in &op.deps[..usize::from(op.n_deps)] {
        let r = usize::from(r);
        if w.reg_ready[r] > ready {
            ready = w.reg_ready[r];
            reason = match w.reg_producer[r] {
                Producer::Alu => StallReason::Dependency,
                Producer::Memory => StallReason::Memory,
            };
        }
    }
    for &p in &op.pdeps[..usize::from(op.n_pdeps)] {
        if w.pred_ready[usize::from(p)] > ready {
            ready = w.pred_ready[usize::from(p)];
            reason = StallReason::Dependency;
        }
    }
    (ready, reason)
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
