//! The shared-memory race checker: for every word of a block's shared memory, the
//! last write and the last two reads by different warps since the last barrier,
//! so that a read of a word another warp wrote, a write of a word another warp read
//! or wrote, with no `bar.sync` (or blocksync) between them, is found whichever
//! warp ran first.
//!
//! Two accesses of different warps of one block are ordered exactly when a barrier
//! lies between them, and then the warps have passed different numbers of barriers
//! (every live warp takes part in each one): a warp's barrier count (its epoch) is
//! all the checker needs, not the time. Atomics are not tracked (they may race by
//! design); 8- and 16-bit accesses count for their whole word.

use crate::exec::lanes::{Lanes, lanes_of};
use crate::exec::ops::{Program, Run};
use crate::exec::warp::Warp;
use crate::machine::UnitLabel;

/// What kind of conflict two accesses form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RaceKind {
    /// A read of a word another warp wrote since the last barrier.
    ReadAfterWrite,
    /// A write of a word another warp read since the last barrier.
    WriteAfterRead,
    /// A write of a word another warp wrote since the last barrier.
    WriteAfterWrite,
}

/// One access: the warp (index within its block) and the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct By {
    pub warp: u32,
    pub pc: u32,
}

/// A race: the earlier access, the later one that conflicts with it, where, and how
/// many times the same pair of instructions raced in the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    pub kind: RaceKind,
    pub earlier: By,
    pub later: By,
    /// Byte address in shared memory of the first conflict.
    pub addr: u32,
    pub unit: UnitLabel,
    /// The block (`None`: IU code).
    pub block: Option<[u32; 2]>,
    /// Warp instructions that raced with this pair of instructions (each counted
    /// once, however many of its lanes conflicted).
    pub count: u64,
}

/// Distinct pairs of instructions a unit keeps (later pairs are only counted).
const MOST_PAIRS: usize = 16;

/// Bytes the checker keeps per word of shared memory (`--race-check`, counted in
/// the loader's estimate of a run's state).
pub const CELL_BYTES: u64 = std::mem::size_of::<Cell>() as u64;

/// The accesses of one word since its last barrier: keys of the last write and
/// of the reads of two different warps, each `(epoch + 1) << 32 | warp` (0: none),
/// and their instructions. Two keys with the same high half are of one epoch.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    write: u64,
    /// Two reads by different warps, so that a writer differs from one of them if
    /// any other warp read the word.
    reads: [u64; 2],
    write_pc: u32,
    read_pcs: [u32; 2],
}

/// True when `key` is another warp's access in the epoch of `me`.
#[inline(always)]
fn other_in_epoch(key: u64, me: u64) -> bool {
    key != me && (key ^ me) >> 32 == 0
}

impl Cell {
    /// Checks and records an access with key `me` at `pc`; returns the earlier
    /// access it conflicts with, if any.
    #[inline(always)]
    fn access(&mut self, me: u64, pc: u32, store: bool) -> Option<(RaceKind, u64, u32)> {
        let mut conflict = None;
        if store {
            if other_in_epoch(self.write, me) {
                conflict = Some((RaceKind::WriteAfterWrite, self.write, self.write_pc));
            } else if other_in_epoch(self.reads[0], me) {
                conflict = Some((RaceKind::WriteAfterRead, self.reads[0], self.read_pcs[0]));
            } else if other_in_epoch(self.reads[1], me) {
                conflict = Some((RaceKind::WriteAfterRead, self.reads[1], self.read_pcs[1]));
            }
            self.write = me;
            self.write_pc = pc;
        } else {
            if other_in_epoch(self.write, me) {
                conflict = Some((RaceKind::ReadAfterWrite, self.write, self.write_pc));
            }
            // The first read of this warp in the epoch is kept; a read of another
            // epoch makes room.
            if self.reads[0] != me && self.reads[1] != me {
                let k = usize::from((self.reads[0] ^ me) >> 32 == 0);
                self.reads[k] = me;
                self.read_pcs[k] = pc;
            }
        }
        conflict
    }
}

/// Races found, one per pair of instructions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Races {
    pub found: Vec<Race>,
    /// Races of pairs beyond the first few.
    pub more: u64,
}

impl Races {
    /// Every race found.
    pub fn total(&self) -> u64 {
        self.found.iter().map(|r| r.count).sum::<u64>() + self.more
    }

    fn add(&mut self, r: Race) {
        if let Some(o) = self
            .found
            .iter_mut()
            .find(|o| o.kind == r.kind && o.earlier.pc == r.earlier.pc && o.later.pc == r.later.pc)
        {
            o.count += r.count;
        } else if self.found.len() < MOST_PAIRS {
            self.found.push(r);
        } else {
            self.more += r.count;
        }
    }

    /// Adds `other`'s races (per pair of instructions, the first kept).
    pub fn merge(&mut self, other: Races) {
        for r in other.found {
            self.add(r);
        }
        self.more += other.more;
    }
}

/// The checker's state for one unit's shared memory (all its block slots).
#[derive(Debug, Clone, Default)]
pub struct RaceCheck {
    /// One cell per word of shared memory, allocated at the first access.
    cells: Vec<Cell>,
    pub races: Races,
}

/// The warp accessing shared memory and where it runs.
#[derive(Debug, Clone, Copy)]
pub struct Accessor {
    pub warp: u32,
    /// Barriers the warp has passed.
    pub epoch: u32,
    pub pc: u32,
    pub unit: UnitLabel,
    pub block: Option<[u32; 2]>,
}

/// Where a warp's shared-memory accesses go: its unit and block, and its block's
/// words (from `base`) among the unit's `words`.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub unit: UnitLabel,
    pub block: Option<[u32; 2]>,
    pub base: usize,
    pub words: usize,
}

impl RaceCheck {
    /// Checks and records warp `w`'s access at instruction `pc` of `program` (a
    /// shared load or store of the lanes `exec` at the byte addresses `addrs`).
    pub fn check(
        &mut self,
        place: Place,
        w: &Warp,
        pc: u32,
        program: &Program,
        addrs: &Lanes,
        exec: u32,
    ) {
        let (store, m) = match program.ops[pc as usize].run {
            Run::Load(m) => (false, m),
            Run::Store(m) => (true, m),
            _ => return,
        };
        let who = Accessor {
            warp: w.index,
            epoch: w.syncs,
            pc,
            unit: place.unit,
            block: place.block,
        };
        let bytes = (m.ty.bits() / 8).max(1) * u32::from(m.count);
        self.access(place.words, place.base, who, addrs, exec, bytes, store);
    }

    /// Forgets the accesses to words `first .. first + count` (a new block in that
    /// slot).
    pub fn clear(&mut self, first: usize, count: usize) {
        if let Some(cells) = self.cells.get_mut(first..first + count) {
            cells.fill(Cell::default());
        }
    }

    /// Checks and records an access of `bytes` bytes per lane at the byte
    /// addresses `addrs` (lanes of `exec`, already checked against the space) of
    /// the shared memory whose first word is word `base` of a unit's `words`.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        words: usize,
        base: usize,
        who: Accessor,
        addrs: &Lanes,
        exec: u32,
        bytes: u32,
        store: bool,
    ) {
        if self.cells.len() != words {
            self.cells = vec![Cell::default(); words];
        }
        let me = (u64::from(who.epoch.wrapping_add(1).max(1)) << 32) | u64::from(who.warp);
        let span = bytes.div_ceil(4).max(1);
        let mut first_conflict = None;
        let mut check = |cells: &mut [Cell], word: u32| {
            if let Some(cell) = cells.get_mut(base + word as usize)
                && let Some((kind, key, pc)) = cell.access(me, who.pc, store)
                && first_conflict.is_none()
            {
                first_conflict = Some((kind, key as u32, pc, word * 4));
            }
        };
        if span == 1 {
            for l in lanes_of(exec) {
                check(&mut self.cells, addrs[l] / 4);
            }
        } else {
            for l in lanes_of(exec) {
                for k in 0..span {
                    check(&mut self.cells, addrs[l] / 4 + k);
                }
            }
        }
        // One race per warp instruction: its first conflicting lane.
        if let Some((kind, warp, pc, addr)) = first_conflict {
            self.note(kind, By { warp, pc }, who, addr);
        }
    }

    #[cold]
    fn note(&mut self, kind: RaceKind, earlier: By, who: Accessor, addr: u32) {
        self.races.add(Race {
            kind,
            earlier,
            later: By {
                warp: who.warp,
                pc: who.pc,
            },
            addr,
            unit: who.unit,
            block: who.block,
            count: 1,
        });
    }

    /// The races found, leaving the checker empty.
    pub fn take(&mut self) -> Races {
        self.cells = Vec::new();
        std::mem::take(&mut self.races)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: UnitLabel = UnitLabel::Sm { x: 0, y: 0 };

    fn who(warp: u32, epoch: u32, pc: u32) -> Accessor {
        Accessor {
            warp,
            epoch,
            pc,
            unit: UNIT,
            block: Some([0, 0]),
        }
    }

    fn at(addr: u32) -> Lanes {
        [addr; 32]
    }

    #[test]
    fn conflicts_of_different_warps_in_one_epoch_are_found_in_either_order() {
        // Read after write.
        let mut c = RaceCheck::default();
        c.access(16, 0, who(0, 0, 1), &at(8), 1, 4, true);
        c.access(16, 0, who(1, 0, 2), &at(8), 1, 4, false);
        assert_eq!(c.races.found.len(), 1);
        assert_eq!(c.races.found[0].kind, RaceKind::ReadAfterWrite);
        assert_eq!(
            (c.races.found[0].earlier.warp, c.races.found[0].later.warp),
            (0, 1)
        );
        assert_eq!(c.races.found[0].addr, 8);
        // Write after read, also when a third warp read in between.
        let mut c = RaceCheck::default();
        c.access(16, 0, who(1, 0, 2), &at(8), 1, 4, false);
        c.access(16, 0, who(2, 0, 2), &at(8), 1, 4, false);
        c.access(16, 0, who(1, 0, 1), &at(8), 1, 4, true);
        assert_eq!(c.races.found[0].kind, RaceKind::WriteAfterRead);
        assert_eq!(c.races.found[0].earlier.warp, 2);
        // Write after write.
        let mut c = RaceCheck::default();
        c.access(16, 0, who(0, 3, 1), &at(4), 1, 4, true);
        c.access(16, 0, who(1, 3, 1), &at(4), 1, 4, true);
        assert_eq!(c.races.found[0].kind, RaceKind::WriteAfterWrite);
    }

    #[test]
    fn a_barrier_between_or_one_warp_is_no_race() {
        let mut c = RaceCheck::default();
        c.access(16, 0, who(0, 0, 1), &at(8), 1, 4, true);
        c.access(16, 0, who(0, 0, 2), &at(8), 1, 4, false);
        c.access(16, 0, who(1, 1, 2), &at(8), 1, 4, false);
        c.access(16, 0, who(0, 2, 1), &at(8), 1, 4, true);
        // Other words, and a wide access's second word.
        c.access(16, 0, who(1, 2, 1), &at(0), 1, 4, true);
        c.access(16, 0, who(0, 2, 1), &at(4), 1, 4, true);
        assert!(c.races.found.is_empty());
        c.access(16, 0, who(1, 2, 3), &at(0), 1, 8, false);
        assert_eq!(c.races.found.len(), 1);
        assert_eq!(c.races.found[0].addr, 4);
    }

    #[test]
    fn pairs_are_counted_once_each_and_cleared_slots_forget() {
        let mut c = RaceCheck::default();
        for _ in 0..3 {
            c.access(16, 0, who(0, 0, 1), &at(8), 3, 4, true);
            c.access(16, 0, who(1, 0, 2), &at(8), 3, 4, false);
        }
        // Read after write three times, write after read twice.
        assert_eq!(c.races.found.len(), 2);
        assert_eq!((c.races.found[0].count, c.races.found[1].count), (3, 2));
        c.clear(0, 16);
        c.access(16, 0, who(1, 0, 2), &at(8), 1, 4, false);
        let mut all = Races::default();
        all.merge(c.take());
        assert_eq!(all.found.len(), 2);
        assert_eq!(all.found[0].count, 3);
    }
}
