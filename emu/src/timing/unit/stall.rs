//! Stalls: why a scheduler did not issue in a cycle (a reason and the instruction
//! it waited at), packed in one word so the step compares and copies them for
//! free, and the intervals a scheduler is charged with them, added up per run of
//! equal stalls before they reach the counters.
//!
//! A warp waiting for a deferred load ([`crate::timing::effects::PENDING`]) cannot
//! tell yet whether the load or another operand arrives last: such a stall names
//! the warp, and its cycles wait for the load to be resolved (see
//! [`super::code::Code::resolve`]).

use crate::observe::counters::{StallReason, UnitCounts};

/// A stall: reason (bits 32..40), instruction (bits 0..32, `u32::MAX` for an idle
/// scheduler) and the warp whose pending register decides the reason (bits
/// 40..56, [`DECIDED`] when known). [`Stall::NONE`]: no stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stall(u64);

/// The pending-warp field of a stall whose reason is known.
const DECIDED: u64 = 0xffff;

impl Stall {
    /// No stall (a warp can issue).
    pub(super) const NONE: Stall = Stall(u64::MAX);

    /// The stall of a scheduler whose warps have all exited.
    pub(super) const IDLE: Stall = Stall::new(StallReason::Idle, u32::MAX);

    #[inline(always)]
    pub(super) const fn new(reason: StallReason, pc: u32) -> Stall {
        Stall(pc as u64 | (reason as u64) << 32 | DECIDED << 40)
    }

    /// The same stall, its reason decided by warp `w`'s pending load.
    #[inline(always)]
    pub(super) fn pending_on(self, w: usize) -> Stall {
        Stall(self.0 & !(DECIDED << 40) | (w as u64 & DECIDED) << 40)
    }

    #[inline(always)]
    pub(super) fn pc(self) -> u32 {
        self.0 as u32
    }

    #[inline(always)]
    pub(super) fn reason(self) -> StallReason {
        StallReason::ALL
            .get(self.reason_index())
            .copied()
            .unwrap_or(StallReason::Idle)
    }

    /// [`Stall::reason`] as an index of the counters.
    #[inline(always)]
    fn reason_index(self) -> usize {
        ((self.0 >> 32) & 0xff) as usize
    }

    /// The warp whose pending load decides the reason, if any.
    #[inline(always)]
    pub(super) fn pending(self) -> Option<usize> {
        let w = (self.0 >> 40) & DECIDED;
        (w != DECIDED && self != Stall::NONE).then_some(w as usize)
    }
}

/// Adds `n` cycles of `stall` to the counters.
pub(super) fn add_stall(counts: &mut UnitCounts, stall: Stall, n: u64) {
    match counts.stalls.get_mut(stall.pc() as usize) {
        Some(at) => {
            if let Some(c) = at.get_mut(stall.reason_index()) {
                *c += n;
            }
        }
        None => counts.idle += n,
    }
}

/// A run of cycles with one stall, not yet added to the counters.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run {
    pub(super) stall: Stall,
    pub(super) cycles: u64,
}

impl Run {
    pub(super) const EMPTY: Run = Run {
        stall: Stall::NONE,
        cycles: 0,
    };

    /// Adds `cycles` of the decided `stall`: to the run if it is the same stall,
    /// else the run goes to the counters and a new one starts.
    #[inline(always)]
    pub(super) fn add(&mut self, stall: Stall, cycles: u64, counts: &mut UnitCounts) {
        if self.stall == stall {
            self.cycles += cycles;
        } else {
            self.flush(counts);
            *self = Run { stall, cycles };
        }
    }

    /// Adds the run to the counters and empties it.
    pub(super) fn flush(&mut self, counts: &mut UnitCounts) {
        if self.stall != Stall::NONE {
            add_stall(counts, self.stall, self.cycles);
        }
        *self = Run::EMPTY;
    }
}
