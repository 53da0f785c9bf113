//! The spin check (`--spin-limit`): tells a run that no longer gets anywhere
//! from one that works, at the end of each window, from counts that only grow.
//!
//! Three clocks, each reset by its own kind of progress:
//! - any change to global memory, a finished work item or a blocksync; past the
//!   limit with none, the run spins ([`Verdict::Spinning`]: a wait for a flag
//!   nobody sets);
//! - a finished work item or a blocksync; past the limit with changes only to
//!   words changed before, the run rewrites ([`Verdict::Rewriting`]: a counter,
//!   a flag or an array swept forever);
//! - a finished work item alone, on a clock in which each blocksync a unit takes
//!   part in weighs [`SYNC_WEIGHT`] warp instructions; past [`DEEP`] times the
//!   limit with no change to a word not changed before, the run synchronises in
//!   a loop ([`Verdict::Synchronising`]). Syncs alone are no proof of progress
//!   (`bar.blocksync; bra LOOP` never ends), but an iterative kernel that
//!   synchronises each step and works in place gets sixteen times as long.
//!
//! Changes to new words are found by global memory's watch: from half of a
//! clock's limit on it notes the words changed, and from three quarters on a
//! change to a word it has not seen is work, which resets every clock.

use crate::exec::memory::GlobalMemory;
pub(super) use crate::observe::outcome::{DEEP, ROUND_WEIGHT, SYNC_WEIGHT};
use std::sync::Arc;

/// A point of the run: a signature of its progress (a sum of counts that only
/// grow), and each unit's warp instructions and syncs, and the cycle, by then.
#[derive(Debug, Clone, Default)]
struct Mark {
    signature: u64,
    issued: Vec<u64>,
    syncs: Vec<u64>,
    /// Syncs over the grid.
    grid_syncs: u64,
    cycle: u64,
}

impl Mark {
    /// Moves the mark to now (reusing its vectors: this happens nearly every
    /// window).
    fn set(&mut self, signature: u64, c: &Counts) {
        self.signature = signature;
        self.issued.clear();
        self.issued.extend_from_slice(c.issued);
        self.syncs.clear();
        self.syncs.extend_from_slice(c.unit_syncs);
        self.grid_syncs = c.syncs;
        self.cycle = c.now;
    }
}

/// The counts the check reads at the end of a window.
pub(super) struct Counts<'a> {
    /// Functional mode: cycles are scheduling rounds ([`ROUND_WEIGHT`]).
    pub functional: bool,
    pub now: u64,
    /// Writes that gave a word a new value.
    pub changed: u64,
    pub items_done: u64,
    /// Rendezvous of links and global blocksyncs, over the grid.
    pub syncs: u64,
    /// Per unit: warp instructions issued, and blocksyncs released from.
    pub issued: &'a [u64],
    pub unit_syncs: &'a [u64],
}

/// Why the run should stop; how far it got by the clock that ran out
/// (`by_cycles`: timing mode's cycles, not instructions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Spinning {
        by_cycles: bool,
    },
    Rewriting {
        by_cycles: bool,
        words: u64,
    },
    /// `syncs`: over the grid since the last finished item or new word.
    Synchronising {
        by_cycles: bool,
        syncs: u64,
        words: u64,
    },
}

/// The clocks' marks.
#[derive(Debug, Default)]
pub(super) struct SpinCheck {
    /// `--spin-limit` (0: no check).
    limit: u64,
    progress: Mark,
    work: Mark,
    deep: Mark,
}

impl SpinCheck {
    pub fn new(limit: u64) -> SpinCheck {
        SpinCheck {
            limit,
            ..SpinCheck::default()
        }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Looks at the run at the end of a window; `memory`'s watch is turned on
    /// and off here.
    pub fn check(&mut self, c: &Counts, memory: &mut Arc<GlobalMemory>) -> Option<Verdict> {
        if self.limit == 0 {
            return None;
        }
        let limit = self.limit;
        // Progress is a change to global memory, not a store: a loop of failed
        // compare-and-swaps stores every time and changes nothing.
        let work = c.items_done + c.syncs;
        let any = c.changed + work;
        if any != self.progress.signature {
            self.progress.set(any, c);
        } else if let (stalled, by_cycles) = Self::since(&self.progress, c, 0)
            && stalled > limit
        {
            return Some(Verdict::Spinning { by_cycles });
        }
        if work != self.work.signature {
            self.work.set(work, c);
        }
        if c.items_done != self.deep.signature {
            self.deep.set(c.items_done, c);
        }
        let (work_stalled, work_cycles) = Self::since(&self.work, c, 0);
        let (deep_stalled, deep_cycles) = Self::since(&self.deep, c, SYNC_WEIGHT);
        let deep_limit = limit.saturating_mul(DEEP);
        let past = |stalled: u64, limit: u64, quarters: u64| stalled > limit / 4 * quarters;
        let watching = past(work_stalled, limit, 2) || past(deep_stalled, deep_limit, 2);
        let looking = past(work_stalled, limit, 3) || past(deep_stalled, deep_limit, 3);
        let Some(w) = memory.watched() else {
            if watching {
                Arc::make_mut(memory).watch();
            }
            return None;
        };
        if w.fresh > 0 {
            // New words changed: work after all; look again later.
            Arc::make_mut(memory).unwatch();
            self.work.set(work, c);
            self.deep.set(c.items_done, c);
            return None;
        }
        if !watching {
            Arc::make_mut(memory).unwatch();
        } else if !w.looking {
            if looking {
                Arc::make_mut(memory).look();
            }
        } else if w.changes > 0 && work_stalled > limit {
            // No change at all is the first clock's.
            return Some(Verdict::Rewriting {
                by_cycles: work_cycles,
                words: w.words,
            });
        } else if deep_stalled > deep_limit {
            return Some(Verdict::Synchronising {
                by_cycles: deep_cycles,
                syncs: c.syncs - self.deep.grid_syncs,
                words: w.words,
            });
        }
        None
    }

    /// How far the run got since its last progress of any kind (the first
    /// clock), as of `c` (after [`SpinCheck::check`] looked at it).
    pub fn stalled(&self, c: &Counts) -> u64 {
        Self::since(&self.progress, c, 0).0
    }

    /// How far the run got since `mark`: the most one unit issued (a sum over
    /// the grid would grow with its size, and stop a long computation on a large
    /// grid sooner), each sync it took part in weighing `sync_weight` warp
    /// instructions, or the cycles (in functional mode the scheduling rounds,
    /// each [`ROUND_WEIGHT`]), if more (a loop waiting on memory latency or on
    /// its atomics); and whether cycles or rounds measured it.
    fn since(mark: &Mark, c: &Counts, sync_weight: u64) -> (u64, bool) {
        let before = |v: &[u64], u: usize| v.get(u).copied().unwrap_or(0);
        let instructions = (0..c.issued.len())
            .map(|u| {
                let syncs = c.unit_syncs[u] - before(&mark.syncs, u);
                (c.issued[u] - before(&mark.issued, u))
                    .saturating_add(syncs.saturating_mul(sync_weight))
            })
            .max()
            .unwrap_or(0);
        let cycles = if c.functional {
            (c.now - mark.cycle).saturating_mul(ROUND_WEIGHT)
        } else {
            c.now - mark.cycle
        };
        (instructions.max(cycles), cycles > instructions)
    }
}
