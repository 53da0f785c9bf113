//! Code running on a unit: its warps, their scoreboards, the warp schedulers and
//! pipelines, and what the timing mode's step (in `issue`) asks of them: which warp
//! can issue, the next wake and the stall each scheduler is charged until then.
//!
//! Stalls are charged per interval, not per cycle: a scheduler that does not issue
//! keeps one (reason, instruction) until its next step, and consecutive intervals
//! with the same one are added up ([`super::stall`]) before they reach the counters.

use super::stall::{Run, Stall, add_stall};
use crate::exec::ops::{OpInfo, Program};
use crate::exec::race::{Place, RaceCheck};
use crate::exec::warp::{Warp, WarpState, WorkCtx};
use crate::observe::counters::{StallReason, UnitCounts};
use crate::timing::effects::PENDING;
use crate::timing::params::{NO_PIPE, Timed, Timing};
use std::sync::Arc;

const NEVER: u64 = u64::MAX;

#[cfg(test)]
thread_local! {
    /// Tests: code started on this thread leaves every scheduler to the general,
    /// polling step (to compare [`super::single`] with).
    pub(super) static POLL_ALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn poll_all() -> bool {
    POLL_ALL.with(|p| p.get())
}

#[cfg(not(test))]
const fn poll_all() -> bool {
    false
}

/// What produced a register's pending value: decides the stall reason charged
/// while a consumer waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producer {
    Alu,
    Memory,
}

impl Producer {
    /// The stall charged while waiting for an operand of this producer.
    #[inline(always)]
    const fn reason(self) -> StallReason {
        match self {
            Producer::Alu => StallReason::Dependency,
            Producer::Memory => StallReason::Memory,
        }
    }
}

/// When a general register's pending write lands, and the stall charged while a
/// consumer waits for it (from what produces it).
#[derive(Debug, Clone, Copy)]
pub(super) struct RegReady {
    pub(super) at: u64,
    reason: StallReason,
}

impl RegReady {
    #[inline(always)]
    pub(super) const fn new(at: u64, producer: Producer) -> RegReady {
        RegReady {
            at,
            reason: producer.reason(),
        }
    }
}

/// A warp's scoreboard: when its registers and predicates are written and when it
/// may issue again, and what that means for its next instruction.
#[derive(Debug, Clone)]
pub(super) struct Scoreboard {
    /// Cycle each general register's pending write lands, and what writes it.
    pub(super) regs: Vec<RegReady>,
    pub(super) pred_ready: [u64; 16],
    /// Earliest cycle the warp may issue again (branch redirect, release latency).
    pub(super) next_issue: u64,
    /// The next instruction: when its operands are ready, the stall charged until
    /// then, and the pipeline it needs. Set by [`Code::refresh`], the one place
    /// that follows every issue and release.
    ready: u64,
    /// `ready` while the warp runs, `NEVER` while it waits at a barrier or has
    /// exited (its state as of the last [`Code::refresh`]).
    avail: u64,
    why: Stall,
    /// Index into [`Code::pipe_free`] (3: none).
    pipe: u8,
}

impl Scoreboard {
    fn new(regs: usize, start: u64) -> Scoreboard {
        Scoreboard {
            regs: vec![RegReady::new(0, Producer::Alu); regs],
            pred_ready: [0; 16],
            next_issue: start,
            ready: start,
            avail: start,
            why: Stall::new(StallReason::Control, 0),
            pipe: NO_PIPE,
        }
    }

    /// When the operands of an instruction are ready, and the stall charged until
    /// then: that of the operand it waits for last (the issue time only:
    /// [`StallReason::Control`]).
    /// `in_call`: the warp runs a called function (a `ret` switches registers,
    /// while the entry's own `ret` ends the warp and needs nothing).
    #[inline(always)]
    fn operands_ready(&self, info: &OpInfo, in_call: bool) -> (u64, StallReason) {
        if info.waits_all && (in_call || !info.is_return) {
            return self.all_written();
        }
        let mut ready = self.next_issue;
        let mut reason = StallReason::Control;
        for &r in info.deps() {
            let reg = self.regs[usize::from(r)];
            if reg.at > ready {
                ready = reg.at;
                reason = reg.reason;
            }
        }
        for &p in info.pdeps() {
            if self.pred_ready[usize::from(p)] > ready {
                ready = self.pred_ready[usize::from(p)];
                reason = Producer::Alu.reason();
            }
        }
        (ready, reason)
    }
}

impl Scoreboard {
    /// When every pending write of the warp has landed (a call or a return, see
    /// [`OpInfo::waits_all`]), and the stall charged until then.
    #[cold]
    fn all_written(&self) -> (u64, StallReason) {
        let mut ready = self.next_issue;
        let mut reason = StallReason::Control;
        for reg in &self.regs {
            if reg.at > ready {
                ready = reg.at;
                reason = reg.reason;
            }
        }
        for &at in &self.pred_ready {
            if at > ready {
                ready = at;
                reason = Producer::Alu.reason();
            }
        }
        (ready, reason)
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Scheduler {
    /// Warps `first, first + stride, ...` belong to this scheduler, oldest first.
    pub(super) first: usize,
    pub(super) count: usize,
    /// Position of the warp issued last (`usize::MAX`: none yet).
    pub(super) last: usize,
    /// Stall charged from `since` until the next step ([`Stall::NONE`]: a warp
    /// can issue).
    pub(super) stall: Stall,
    pub(super) since: u64,
    /// Cycles of one stall not yet added to the counters.
    run: Run,
    /// With [`Code::single`]: the cycle from which the scheduler must be looked
    /// at (its warp's [`Code::ready_at`] as of the last step).
    pub(super) due: u64,
}

/// Code running on a unit.
#[derive(Debug, Clone)]
pub struct Code {
    pub warps: Vec<Warp>,
    pub(super) boards: Vec<Scoreboard>,
    pub(super) shared: Vec<u32>,
    pub ctx: WorkCtx,
    /// The pass this work belongs to (for the trace).
    pub pass: u32,
    pub(super) schedulers: Vec<Scheduler>,
    /// Every scheduler has one warp (warp `s` on scheduler `s`), the common case
    /// of the SPU's SMs and IUs, stepped by [`super::single`].
    pub(super) single: bool,
    /// With `single`: the schedulers whose warp changed since the last step
    /// (issued, released, resolved, loaded; bit `s`).
    pub(super) touched: u32,
    /// Each instruction of the program as the issue step needs it.
    pub(super) timed: Arc<[Timed]>,
    /// The index into [`Timed::path`] of the unit's kind (0: SM, 1: IU).
    pub(super) kind: usize,
    /// Free-at cycle of each pipeline of each kind.
    pipes: [Vec<u64>; 3],
    /// Earliest free-at cycle of each kind (with a fourth, never busy, for
    /// instructions that need no pipeline).
    pipe_free: [u64; 4],
    /// Functional mode: instructions each warp may still run in this step.
    pub(super) budget: Vec<u32>,
    /// Functional mode: after how many instructions of a stretch of pure blocks
    /// each warp is watched for loops in its next run ([`super::shortcut`]).
    pub(super) watch_from: Vec<u32>,
    /// Stall cycles (warp, instruction, cycles) whose reason waits for a deferred
    /// load of the warp.
    deferred: Vec<(usize, u32, u64)>,
    /// Block slots: a GPU SM holds several resident blocks of one kernel (see
    /// [`crate::machine::occupancy`]), every other unit one. Slot `s` owns warps
    /// `s * block_warps ..` and words `s * shared_words ..` of `shared`.
    block_warps: usize,
    shared_words: usize,
    /// Per slot: the block it holds and the generation its deferred results carry
    /// (`None`: empty or finished).
    pub slots: Vec<Option<crate::load::plan::WorkItem>>,
    pub slot_generation: Vec<u64>,
    /// The shared-memory race checker (`None`: off).
    pub races: Option<Box<RaceCheck>>,
}

impl Code {
    /// A block (SM) or an IU program instance of `threads` threads starting at
    /// cycle `now` on a unit with `schedulers` warp schedulers.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: WorkCtx,
        threads: u32,
        label: crate::machine::UnitLabel,
        program: &Program,
        timing: &Timing,
        schedulers: usize,
        now: u64,
        slots: usize,
    ) -> Code {
        let regs = usize::from(program.layout.general);
        let block_warps = threads.div_ceil(32) as usize;
        let warps: Vec<Warp> = (0..slots)
            .flat_map(|s| (0..block_warps as u32).map(move |w| (s, w)))
            .map(|(s, w)| {
                let mut warp =
                    Warp::new(w, (threads - w * 32).min(32), &program.layout, &ctx, label);
                if s > 0 {
                    warp.retire();
                }
                warp
            })
            .collect();
        let shared_words = (ctx.shared_bytes / 4).next_power_of_two() as usize;
        let n_warps = warps.len();
        let boards = (0..warps.len())
            .map(|_| Scoreboard::new(regs, now))
            .collect();
        let n = schedulers;
        let schedulers = (0..n)
            .map(|s| Scheduler {
                first: s,
                count: warps.len().saturating_sub(s).div_ceil(n),
                last: usize::MAX,
                stall: Stall::NONE,
                since: now,
                run: Run::EMPTY,
                due: 0,
            })
            .collect();
        let single = warps.len() == n && !poll_all();
        let mut code = Code {
            timed: Arc::clone(&timing.ops),
            kind: usize::from(ctx.iu.is_some()),
            single,
            touched: 0,
            warps,
            boards,
            shared: vec![0; shared_words * slots],
            ctx,
            pass: 0,
            schedulers,
            pipes: timing.pipes.map(|n| vec![0; n]),
            pipe_free: [0; 4],
            budget: Vec::new(),
            watch_from: vec![super::shortcut::WATCH_FROM; n_warps],
            deferred: Vec::new(),
            block_warps,
            shared_words,
            slots: vec![None; slots],
            slot_generation: vec![0; slots],
            races: None,
        };
        for w in 0..code.warps.len() {
            code.refresh(w, program);
        }
        code
    }

    /// Warps of one block slot.
    pub fn block_warps(&self) -> usize {
        self.block_warps
    }

    /// The block slot of warp `wi`.
    #[inline]
    pub fn slot_of(&self, wi: usize) -> usize {
        if self.slots.len() == 1 {
            0
        } else {
            wi / self.block_warps.max(1)
        }
    }

    /// The warps of slot `slot`.
    pub fn slot_warps(&self, slot: usize) -> std::ops::Range<usize> {
        let first = slot * self.block_warps;
        first..(first + self.block_warps).min(self.warps.len())
    }

    /// Warp `wi` and its block's shared memory, borrowed together.
    pub(super) fn warp_and_shared(&mut self, wi: usize) -> (&mut Warp, &mut [u32]) {
        let s = self.slot_of(wi) * self.shared_words;
        (
            &mut self.warps[wi],
            &mut self.shared[s..s + self.shared_words],
        )
    }

    /// True when a slot's block has finished and waits for [`Code::take_finished`].
    pub fn any_finished(&self) -> bool {
        (0..self.slots.len()).any(|slot| {
            self.slots[slot].is_some() && self.slot_warps(slot).all(|w| self.warps[w].is_done())
        })
    }

    /// True when no register or predicate of warp `wi` waits for a deferred
    /// load or atomic: its registers hold everything it has executed.
    pub fn settled(&self, wi: usize) -> bool {
        self.boards.get(wi).is_some_and(|b| {
            b.regs.iter().all(|r| r.at != PENDING) && b.pred_ready.iter().all(|&p| p != PENDING)
        })
    }

    /// A free slot (`None`: every slot holds a running block).
    pub fn free_slot(&self) -> Option<usize> {
        self.slots.iter().position(Option::is_none)
    }

    /// Slots whose block still runs.
    pub fn resident(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Loads block `ctx` (`threads` threads) into the empty slot `slot` at cycle
    /// `now`; its deferred results carry `generation`.
    #[allow(clippy::too_many_arguments)]
    pub fn load(
        &mut self,
        slot: usize,
        ctx: WorkCtx,
        threads: u32,
        label: crate::machine::UnitLabel,
        program: &Program,
        now: u64,
        generation: u64,
    ) {
        let regs = usize::from(program.layout.general);
        for wi in self.slot_warps(slot) {
            let w = (wi - slot * self.block_warps) as u32;
            self.warps[wi] = Warp::new(w, (threads - w * 32).min(32), &program.layout, &ctx, label);
            self.boards[wi] = Scoreboard::new(regs, now);
            self.refresh(wi, program);
        }
        let range = self.slot_warps(slot);
        self.deferred.retain(|d| !range.contains(&d.0));
        let s = slot * self.shared_words;
        self.shared[s..s + self.shared_words].fill(0);
        if let Some(r) = &mut self.races {
            r.clear(s, self.shared_words);
        }
        self.slot_generation[slot] = generation;
    }

    /// Slots whose block has just finished (every warp exited): emptied and
    /// returned with their items.
    pub fn take_finished(&mut self) -> Vec<(usize, crate::load::plan::WorkItem)> {
        let mut done = Vec::new();
        for slot in 0..self.slots.len() {
            if self.slots[slot].is_some() && self.slot_warps(slot).all(|w| self.warps[w].is_done())
            {
                done.push((slot, self.slots[slot].take().expect("checked")));
            }
        }
        done
    }

    /// The launch block warp `wi` belongs to: its slot's block on a unit that
    /// holds several, the unit's block otherwise.
    fn block_of(&self, wi: usize) -> [u32; 2] {
        match self.slots.get(self.slot_of(wi)) {
            Some(Some(crate::load::plan::WorkItem {
                role: crate::load::plan::Role::Block { bx, by },
                ..
            })) if self.slots.len() > 1 => [*bx, *by],
            _ => self.ctx.ctaid,
        }
    }

    /// Where warp `wi` runs, for a trace line.
    /// Checks warp `wi`'s shared-memory access at instruction `pc` (lanes `exec`
    /// at the byte addresses `addrs`) for races with other warps of its block.
    pub(super) fn check_race(
        &mut self,
        unit: crate::machine::UnitLabel,
        wi: usize,
        pc: u32,
        program: &Program,
        addrs: &crate::exec::lanes::Lanes,
        exec: u32,
    ) {
        let block = self.ctx.iu.is_none().then(|| self.block_of(wi));
        let base = self.slot_of(wi) * self.shared_words;
        let words = self.shared.len();
        if let Some(r) = &mut self.races {
            let place = Place {
                unit,
                block,
                base,
                words,
            };
            r.check(place, &self.warps[wi], pc, program, addrs, exec);
        }
    }

    pub fn trace_site(
        &self,
        unit: crate::machine::UnitLabel,
        wi: usize,
    ) -> crate::observe::trace::Site {
        crate::observe::trace::Site {
            unit,
            pass: self.pass,
            block: self.ctx.iu.is_none().then(|| self.block_of(wi)),
            warp: self.warps[wi].index,
        }
    }

    /// Recomputes what warp `wi`'s next instruction waits for: called after every
    /// issue and release of the warp (nothing else changes its scoreboard or PC).
    #[inline(always)]
    pub(super) fn refresh(&mut self, wi: usize, program: &Program) {
        if self.single {
            self.touched |= 1 << (wi & 31);
        }
        let board = &mut self.boards[wi];
        let warp = &self.warps[wi];
        let running = matches!(warp.state, WarpState::Running);
        let Some(pc) = warp.pc() else {
            board.avail = NEVER;
            return;
        };
        match program
            .info
            .get(pc as usize)
            .zip(self.timed.get(pc as usize))
        {
            Some((info, timed)) => {
                // Only a call or return asks whether the warp is in a call.
                let in_call = info.waits_all && warp.depth() > 0;
                let (ready, reason) = board.operands_ready(info, in_call);
                board.ready = ready;
                board.why = Stall::new(reason, pc);
                if ready >= PENDING {
                    board.why = board.why.pending_on(wi);
                }
                board.pipe = timed.pipe;
            }
            // Past the last instruction: issue reports it.
            None => {
                board.ready = 0;
                board.why = Stall::new(StallReason::Control, pc);
                board.pipe = NO_PIPE;
            }
        }
        board.avail = if running { board.ready } else { NEVER };
    }

    /// A deferred load or atomic of warp `wi` resolved: register `dst` gets
    /// `values` in the lanes of `mask` (and `dst + 1` gets `high`, if given), ready
    /// at `ready`. Charges the stalls that
    /// waited for it and returns the cycle the warp may issue next as far as it
    /// knows (`NEVER`: not running).
    #[allow(clippy::too_many_arguments)]
    pub fn resolve(
        &mut self,
        wi: usize,
        dst: crate::exec::ops::Reg,
        mask: u32,
        values: &crate::exec::lanes::Lanes,
        high: Option<&crate::exec::lanes::Lanes>,
        ready: u64,
        program: &Program,
        counts: &mut UnitCounts,
    ) -> u64 {
        let Some(warp) = self.warps.get_mut(wi) else {
            return NEVER;
        };
        let d = usize::from(dst);
        let words = std::iter::once(values).chain(high);
        for (r, v) in (d..).zip(words) {
            crate::exec::lanes::write_masked(&mut warp.regs[r], v, mask);
            let reg = &mut self.boards[wi].regs[r];
            if reg.at == PENDING {
                reg.at = ready;
            }
        }
        self.resolved(wi, program, counts)
    }

    /// Registers `dst ..` (`regs` of them) of warp `wi`, which already hold their
    /// values, are ready at `ready`; returns the unit's new wake as
    /// [`Code::resolve`] does.
    pub fn resolve_ready(
        &mut self,
        wi: usize,
        dst: crate::exec::ops::Reg,
        regs: u8,
        ready: u64,
        program: &Program,
        counts: &mut UnitCounts,
    ) -> u64 {
        if wi >= self.warps.len() {
            return NEVER;
        }
        let d = usize::from(dst);
        for r in d..d + usize::from(regs) {
            let reg = &mut self.boards[wi].regs[r];
            if reg.at == PENDING {
                reg.at = ready;
            }
        }
        self.resolved(wi, program, counts)
    }

    /// What follows a deferred result of warp `wi`: its stalls charged and its new
    /// wake, if it waited for the result.
    fn resolved(&mut self, wi: usize, program: &Program, counts: &mut UnitCounts) -> u64 {
        let was_waiting = self.boards[wi].ready >= PENDING;
        self.refresh(wi, program);
        let b = &self.boards[wi];
        if b.ready < PENDING && self.deferred.iter().any(|d| d.0 == wi) {
            let why = b.why;
            for &(_, pc, n) in self.deferred.iter().filter(|d| d.0 == wi) {
                add_stall(counts, Stall::new(why.reason(), pc), n);
            }
            self.deferred.retain(|d| d.0 != wi);
        }
        // Only a warp that waited for the register has a new wake-up: it is after
        // the window, hence after every cycle the unit has planned for.
        if was_waiting && self.warps[wi].state == WarpState::Running {
            self.boards[wi].ready
        } else {
            NEVER
        }
    }

    /// Sets warp `wi`'s next issue to `t` and recomputes what it waits for.
    #[inline(always)]
    pub(super) fn set_next_issue(&mut self, wi: usize, t: u64, program: &Program) {
        self.boards[wi].next_issue = t;
        self.refresh(wi, program);
    }

    /// Releases warps waiting at a blocksync; they may issue from cycle `at`.
    pub fn release_blocksync(&mut self, at: u64, program: &Program) {
        for wi in 0..self.warps.len() {
            if matches!(self.warps[wi].state, WarpState::AtBlockSync(_)) {
                self.warps[wi].state = WarpState::Running;
                self.set_next_issue(wi, at, program);
            }
        }
    }

    /// Releases the warps of slot `slot` waiting at a blocksync from cycle `at`.
    pub fn release_slot(&mut self, slot: usize, at: u64, program: &Program) {
        for wi in self.slot_warps(slot) {
            if matches!(self.warps[wi].state, WarpState::AtBlockSync(_)) {
                self.warps[wi].state = WarpState::Running;
                self.set_next_issue(wi, at, program);
            }
        }
    }

    /// The words of `shared` that warp `wi`'s block owns.
    pub(super) fn shared_range(&self, wi: usize) -> std::ops::Range<usize> {
        let s = self.slot_of(wi) * self.shared_words;
        s..s + self.shared_words
    }

    /// The slots whose every live warp waits at a blocksync (a slot with no live
    /// warp has finished, not arrived).
    pub fn slots_at_blocksync(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&slot| {
                let mut live = self.warps[self.slot_warps(slot)]
                    .iter()
                    .filter(|w| !w.is_done())
                    .peekable();
                live.peek().is_some() && live.all(|w| matches!(w.state, WarpState::AtBlockSync(_)))
            })
            .collect()
    }

    /// Occupies a pipeline of kind `pipe` ([`Timed::pipe`]) for `cycles` from
    /// `now`.
    #[inline(always)]
    pub(super) fn occupy(&mut self, pipe: u8, now: u64, cycles: u64) {
        let pipe = usize::from(pipe);
        if let Some(slots) = self.pipes.get_mut(pipe) {
            if let Some(slot) = slots.iter_mut().find(|f| **f <= now) {
                *slot = now + cycles.max(1);
            }
            self.pipe_free[pipe] = slots.iter().copied().min().unwrap_or(0);
        }
    }

    /// The first cycle from `t` at which warp `wi` could issue as far as it knows
    /// now (`NEVER` while it waits at a barrier; `t` if it can issue at `t`).
    #[inline(always)]
    pub(super) fn ready_at(&self, wi: usize, t: u64) -> u64 {
        let b = &self.boards[wi];
        if b.avail > t {
            return b.avail;
        }
        self.pipe_free[usize::from(b.pipe & 3)].max(t)
    }

    /// True while warp `wi` runs (as of its last [`Code::refresh`]): not at a
    /// barrier, not exited.
    #[inline(always)]
    pub(super) fn runs(&self, wi: usize) -> bool {
        self.boards[wi].avail != NEVER
    }

    /// Why warp `wi` (not done) cannot issue at `t`.
    #[inline]
    pub(super) fn stall_of(&self, wi: usize, t: u64) -> Stall {
        let b = &self.boards[wi];
        if b.avail != NEVER {
            // Running: its operands, or else its pipeline.
            return if b.ready > t {
                b.why
            } else {
                Stall::new(StallReason::PipeBusy, b.why.pc())
            };
        }
        match self.warps[wi].state {
            WarpState::AtBarrier(at) => Stall::new(StallReason::Barrier, at),
            WarpState::AtBlockSync(at) => Stall::new(StallReason::BlockSync, at),
            // Functional mode only.
            WarpState::AtMemory => b.why,
            _ if b.ready > t => b.why,
            _ => Stall::new(StallReason::PipeBusy, b.why.pc()),
        }
    }

    /// Sets the stall each scheduler is charged from cycle `t`; returns the next
    /// cycle a warp may issue.
    #[inline]
    pub(super) fn plan(&mut self, t: u64) -> u64 {
        let stride = self.schedulers.len();
        let mut wake = NEVER;
        for s in 0..stride {
            let (first, count) = (self.schedulers[s].first, self.schedulers[s].count);
            let mut blocked = None;
            let mut issuable = false;
            for w in (first..).step_by(stride).take(count) {
                if self.warps[w].is_done() {
                    continue;
                }
                let at = self.ready_at(w, t);
                wake = wake.min(at);
                if at <= t {
                    issuable = true;
                } else if blocked.is_none() {
                    blocked = Some(w);
                }
            }
            let stall = match (issuable, blocked) {
                (true, _) => Stall::NONE,
                (false, Some(w)) => self.stall_of(w, t),
                (false, None) => Stall::IDLE,
            };
            let sched = &mut self.schedulers[s];
            sched.stall = stall;
            sched.since = t;
        }
        wake
    }

    /// Adds `cycles` of stall `stall` to scheduler `s`'s running total.
    #[inline(always)]
    pub(super) fn charge(&mut self, s: usize, stall: Stall, cycles: u64, counts: &mut UnitCounts) {
        if stall == Stall::NONE || cycles == 0 {
            return;
        }
        if stall.pending().is_none() {
            self.schedulers[s].run.add(stall, cycles, counts);
        } else {
            self.charge_pending(s, stall, cycles, counts);
        }
    }

    /// [`Code::charge`] straight to the counters, for intervals (the step by
    /// issue): runs of equal stalls are rare there, and sums do not depend on
    /// the order they are added in.
    #[inline(always)]
    pub(super) fn charge_now(
        &mut self,
        s: usize,
        stall: Stall,
        cycles: u64,
        counts: &mut UnitCounts,
    ) {
        if stall == Stall::NONE || cycles == 0 {
            return;
        }
        if stall.pending().is_none() {
            add_stall(counts, stall, cycles);
        } else {
            self.charge_pending(s, stall, cycles, counts);
        }
    }

    /// [`Code::charge`] of a stall whose reason waits for a warp's deferred load.
    #[inline(never)]
    fn charge_pending(&mut self, s: usize, stall: Stall, cycles: u64, counts: &mut UnitCounts) {
        let w = stall.pending().unwrap_or(0);
        let b = &self.boards[w];
        if b.ready >= PENDING {
            match self.deferred.last_mut() {
                Some((dw, pc, n)) if *dw == w && *pc == stall.pc() => *n += cycles,
                _ => self.deferred.push((w, stall.pc(), cycles)),
            }
            return;
        }
        // Resolved since: the reason is known now (the warp has not moved).
        let why = b.why;
        self.schedulers[s].run.add(why, cycles, counts);
    }

    /// Charges every scheduler's stall up to `now` (end of a work item or run).
    pub fn settle(&mut self, now: u64, counts: &mut UnitCounts) {
        for s in 0..self.schedulers.len() {
            let (stall, since) = (self.schedulers[s].stall, self.schedulers[s].since);
            self.charge(s, stall, now.saturating_sub(since), counts);
            let sched = &mut self.schedulers[s];
            sched.stall = Stall::NONE;
            sched.since = now;
            sched.run.flush(counts);
        }
    }
}
