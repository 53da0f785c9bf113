//! Data caches of GPU machines: an L1 per SM and a shared L2 split into banks by
//! line address, each set-associative with LRU replacement and miss status holding
//! registers (MSHRs). The SPU has none (thesis Table 6.1): with `cache.l1_kib` and
//! `cache.l2_kib` zero every global access goes to the DRAM queue as before.
//!
//! A cache here is a timing model only: data always lives in global memory. It is
//! driven where deferred global accesses are applied ([`crate::timing::effects`]),
//! in (cycle, unit, sequence) order, so its state is the same for any thread count.
//! A miss allocates its line at once with the time its data arrives; an access to
//! that line before then merges into the outstanding miss (an MSHR merge), after it
//! hits. A cache holds at most `mshrs` outstanding misses: a further miss waits
//! until the earliest of them completes.
//!
//! Policies follow Fermi as GPGPU-Sim 3.x's GTX 480 configuration models it
//! (`configs/GTX480/gpgpusim.config`, `-gpgpu_cache:dl1` and `-gpgpu_cache:dl2`):
//! loads allocate in L1 and L2; a global store writes through the L1 without
//! allocating (and drops a line it hits); the L2 is write-back, and a store that
//! misses in it writes through to DRAM and fetches the line (`cache.l2_write_miss =
//! "fetch"`, 3.x's write-allocate) or allocates it dirty without reading it
//! (`"allocate"`, 4.x's lazy fetch-on-read). When the kernel ends, the dirty lines
//! left in the L2 are written back ([`Caches::write_back_dirty`]).
//!
//! Threads' local memory goes through the same caches ([`Caches::local`]), at
//! addresses of its own past global memory, written back from the L1.

use crate::exec::ops::Caching;
use crate::machine::L2WriteMiss;
use crate::observe::outcome::{CacheLevel, CacheTotals};
use crate::timing::dram::Dram;

/// Where an effect sits in a one-at-a-time simulation: cycle, unit, and the unit's
/// own count of recorded effects and events.
pub type Key = (u64, u32, u64);

/// Where threads' local memory starts in the caches' address space: past every
/// 32-bit global address, so local lines never alias global ones.
pub const LOCAL_BASE: u64 = 1 << 32;

/// The shape and timing of one cache (of one L2 bank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub sets: u32,
    pub ways: u32,
    /// Cycles from the access to the data for a hit.
    pub latency: u64,
    /// Outstanding misses the cache can track.
    pub mshrs: u32,
}

/// How an access uses a cache (from the PTX cache operator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// Normal LRU insertion.
    Normal,
    /// Streaming (`.cs`): the line is the first to go in its set.
    EvictFirst,
}

#[derive(Debug, Clone, Copy)]
struct Line {
    /// Line address (byte address >> line shift); `u64::MAX` when invalid.
    tag: u64,
    /// LRU stamp: larger is more recent.
    used: u64,
    /// Cycle the line's data arrives (a miss in flight until then).
    ready: u64,
    dirty: bool,
}

const INVALID: u64 = u64::MAX;

/// What a line access found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The data is here: ready at this cycle.
    Hit(u64),
    /// The line's miss is in flight: its data arrives at this cycle.
    Merge(u64),
    /// Not here.
    Miss,
}

/// One cache (an L1, or one L2 bank).
#[derive(Debug, Clone)]
pub struct Cache {
    shape: Shape,
    lines: Vec<Line>,
    /// Arrival cycles of the outstanding misses.
    pending: Vec<u64>,
    clock: u64,
    pub counts: CacheLevel,
}

impl Cache {
    pub fn new(shape: Shape) -> Cache {
        let n = (shape.sets * shape.ways) as usize;
        Cache {
            shape,
            lines: vec![
                Line {
                    tag: INVALID,
                    used: 0,
                    ready: 0,
                    dirty: false,
                };
                n
            ],
            pending: Vec::new(),
            clock: 0,
            counts: CacheLevel::default(),
        }
    }

    fn set(&mut self, line: u64) -> &mut [Line] {
        let ways = self.shape.ways as usize;
        let s = (line % u64::from(self.shape.sets)) as usize;
        &mut self.lines[s * ways..(s + 1) * ways]
    }

    fn stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Looks `line` up at cycle `now`; a hit or merge refreshes its LRU position
    /// and, with `write`, marks it dirty.
    pub fn probe(&mut self, line: u64, now: u64, write: bool) -> Probe {
        let stamp = self.stamp();
        let latency = self.shape.latency;
        let found = self.set(line).iter_mut().find(|l| l.tag == line).map(|l| {
            l.used = stamp;
            l.dirty |= write;
            l.ready
        });
        match found {
            Some(ready) if ready <= now => {
                self.counts.hits += 1;
                Probe::Hit(now + latency)
            }
            Some(ready) => {
                self.counts.mshr_merges += 1;
                Probe::Merge(ready)
            }
            None => Probe::Miss,
        }
    }

    /// Marks every dirty line clean; returns how many there were.
    pub fn clean_dirty(&mut self) -> u64 {
        let mut n = 0;
        for l in self
            .lines
            .iter_mut()
            .filter(|l| l.tag != INVALID && l.dirty)
        {
            l.dirty = false;
            n += 1;
        }
        n
    }

    /// Drops `line` if present (a store writing through an L1); true if it was.
    pub fn invalidate(&mut self, line: u64) -> bool {
        match self.set(line).iter_mut().find(|l| l.tag == line) {
            Some(l) => {
                l.tag = INVALID;
                l.dirty = false;
                true
            }
            None => false,
        }
    }

    /// The cycle at which a miss at `now` can take an MSHR: `now`, or when the
    /// earliest outstanding miss completes if all are busy.
    pub fn mshr_free_at(&mut self, now: u64) -> u64 {
        self.pending.retain(|&r| r > now);
        if self.pending.len() < self.shape.mshrs as usize {
            return now;
        }
        self.counts.mshr_stalls += 1;
        let (i, &first) = self
            .pending
            .iter()
            .enumerate()
            .min_by_key(|&(_, r)| *r)
            .expect("at least one MSHR");
        self.pending.swap_remove(i);
        first
    }

    /// Allocates `line` after a miss: its data arrives at `ready` (tracked by an
    /// MSHR when `ready` is later than `now`). Returns the line address of a
    /// dirty line it evicts.
    pub fn allocate(
        &mut self,
        line: u64,
        now: u64,
        ready: u64,
        dirty: bool,
        insert: Insert,
    ) -> Option<u64> {
        self.counts.misses += 1;
        if ready > now {
            self.pending.push(ready);
        }
        let used = match insert {
            Insert::Normal => self.stamp(),
            Insert::EvictFirst => 0,
        };
        let victim = self
            .set(line)
            .iter_mut()
            .min_by_key(|l| (l.tag != INVALID, l.used))
            .expect("a set has ways");
        let evicted = (victim.tag != INVALID && victim.dirty).then_some(victim.tag);
        *victim = Line {
            tag: line,
            used,
            ready,
            dirty,
        };
        if evicted.is_some() {
            self.counts.writebacks += 1;
        }
        evicted
    }
}

/// Cache state of a whole machine: one L1 per unit (when `cache.l1_kib` > 0) and
/// the L2 banks (when `cache.l2_kib` > 0).
#[derive(Debug, Clone)]
pub struct Caches {
    l1: Vec<Cache>,
    l2: Vec<Cache>,
    line_shift: u32,
    line_bytes: u32,
    write_miss: L2WriteMiss,
    /// Dirty L2 lines written back when the kernel ended (also in `dram_writes`).
    end_writebacks: u64,
    /// The instruction whose words are being applied (by its effect key) and the
    /// lines they touched: the words of a 64-bit or vector access share lines.
    current: (Key, Vec<u64>),
    /// Lines read from and written to DRAM.
    pub dram_reads: u64,
    pub dram_writes: u64,
    /// L2 line accesses made by each unit (for the energy counters).
    l2_by_unit: Vec<u64>,
    /// Lines sent from a unit towards the L2 (or, past it, the DRAM): what
    /// crosses the interconnect.
    sent: u64,
    /// Traffic each access caused past the L1, not yet taken by the units'
    /// counters: (unit, instruction, [lines sent, DRAM lines read and written]).
    traffic: Vec<(usize, u32, [u64; 2])>,
}

fn shape(sets: u32, ways: u32, latency: u32, mshrs: u32) -> Shape {
    Shape {
        sets: sets.max(1),
        ways,
        latency: u64::from(latency),
        mshrs,
    }
}

impl Caches {
    /// The caches of machine `m` with `units` units, or `None` without any.
    pub fn new(m: &crate::machine::Machine, units: usize) -> Option<Caches> {
        if m.l1_kib == 0 && m.l2_kib == 0 {
            return None;
        }
        let line = m.line_bytes;
        let l1 = shape(m.l1_sets(), m.l1_ways, m.l1_latency, m.l1_mshrs);
        let l2 = shape(m.l2_bank_sets(), m.l2_ways, m.l2_latency, m.l2_mshrs);
        Some(Caches {
            l1: if m.l1_kib > 0 {
                vec![Cache::new(l1); units]
            } else {
                Vec::new()
            },
            l2: if m.l2_kib > 0 {
                vec![Cache::new(l2); m.l2_banks as usize]
            } else {
                Vec::new()
            },
            line_shift: line.trailing_zeros(),
            line_bytes: line,
            write_miss: m.l2_write_miss,
            end_writebacks: 0,
            current: ((u64::MAX, 0, 0), Vec::new()),
            dram_reads: 0,
            dram_writes: 0,
            l2_by_unit: vec![0; units],
            sent: 0,
            traffic: Vec::new(),
        })
    }

    /// The shortest time from a global access to its data: deferred accesses may
    /// be applied no later than this after they were made.
    pub fn min_latency(m: &crate::machine::Machine) -> Option<u64> {
        let l1 = (m.l1_kib > 0).then_some(m.l1_latency);
        let l2 = (m.l2_kib > 0).then_some(m.l2_latency);
        l1.into_iter().chain(l2).min().map(u64::from)
    }

    /// Line accesses of unit `unit` to its L1 (every lookup, bypasses included)
    /// and to the L2: the `DCP` and `L2CP` energy counters.
    pub fn accesses_by(&self, unit: usize) -> [u64; 2] {
        let l1 = self.l1.get(unit).map_or(0, |c| {
            let k = c.counts;
            k.hits + k.misses + k.mshr_merges + k.bypasses
        });
        [l1, self.l2_by_unit.get(unit).copied().unwrap_or(0)]
    }

    /// Takes the traffic past the L1 that accesses caused since the last call, as
    /// (unit, instruction, [lines sent to the L2 or DRAM, DRAM lines read and
    /// written]): the `NOCP` and the `MCP` and `DRAMP` energy counters. A dirty
    /// line an access evicts from the L2 counts for that access.
    pub fn take_traffic(&mut self) -> Vec<(usize, u32, [u64; 2])> {
        std::mem::take(&mut self.traffic)
    }

    /// Runs `f` (one instruction's access by `unit`) and notes the traffic past
    /// the L1 it caused.
    fn noting<T>(&mut self, unit: usize, pc: u32, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = [self.sent, self.dram_reads + self.dram_writes];
        let out = f(self);
        let caused = [
            self.sent - before[0],
            self.dram_reads + self.dram_writes - before[1],
        ];
        if caused != [0, 0] {
            self.traffic.push((unit, pc, caused));
        }
        out
    }

    /// Summed counts.
    pub fn totals(&self) -> CacheTotals {
        let sum = |caches: &[Cache]| {
            caches.iter().fold(CacheLevel::default(), |a, c| {
                let k = c.counts;
                CacheLevel {
                    hits: a.hits + k.hits,
                    misses: a.misses + k.misses,
                    mshr_merges: a.mshr_merges + k.mshr_merges,
                    mshr_stalls: a.mshr_stalls + k.mshr_stalls,
                    writebacks: a.writebacks + k.writebacks,
                    bypasses: a.bypasses + k.bypasses,
                }
            })
        };
        CacheTotals {
            l1: sum(&self.l1),
            l2: sum(&self.l2),
            dram_read_lines: self.dram_reads,
            dram_write_lines: self.dram_writes,
            end_writeback_lines: self.end_writebacks,
            line_bytes: self.line_bytes,
        }
    }

    /// The lines of byte addresses `addrs` (lanes of `mask`) that instruction
    /// `key` has not touched yet, in address order.
    fn fresh_lines(&mut self, key: Key, addrs: &[u32; 32], mask: u32) -> Vec<u64> {
        if self.current.0 != key {
            self.current = (key, Vec::new());
        }
        let mut lines: Vec<u64> = crate::exec::lanes::lanes_of(mask)
            .map(|l| u64::from(addrs[l] >> self.line_shift))
            .filter(|line| !self.current.1.contains(line))
            .collect();
        lines.sort_unstable();
        lines.dedup();
        self.current.1.extend_from_slice(&lines);
        lines
    }

    /// A warp's global load (or, with `store`, store) by `unit` at cycle `now`
    /// (instruction `key`): returns the cycle the last of its lines arrives (is
    /// written). Lines are looked up one per cycle, as the load/store unit issues
    /// transactions. A store writes through the L1 (dropping a line it holds,
    /// without allocating) into the L2.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        key: Key,
        unit: usize,
        pc: u32,
        addrs: &[u32; 32],
        mask: u32,
        caching: Caching,
        store: bool,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        let lines = self.fresh_lines(key, addrs, mask);
        self.noting(unit, pc, |c| {
            let mut done = now;
            for (i, &line) in lines.iter().enumerate() {
                let at = now + i as u64;
                let ready = if store {
                    c.store_line(unit, line, caching, at, dram)
                } else {
                    c.load_line(unit, line, caching, at, dram)
                };
                done = done.max(ready);
            }
            done
        })
    }

    fn load_line(
        &mut self,
        unit: usize,
        line: u64,
        caching: Caching,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        let insert = match caching {
            Caching::Streaming => Insert::EvictFirst,
            _ => Insert::Normal,
        };
        let in_l1 = matches!(caching, Caching::All | Caching::Streaming);
        let Some(l1) = self.l1.get_mut(unit) else {
            return self.l2_line(unit, line, caching, insert, false, true, now, dram);
        };
        if !in_l1 {
            l1.counts.bypasses += 1;
            return self.l2_line(unit, line, caching, insert, false, true, now, dram);
        }
        let latency = l1.shape.latency;
        match l1.probe(line, now, false) {
            Probe::Hit(ready) => return ready,
            Probe::Merge(ready) => return ready.max(now + latency),
            Probe::Miss => {}
        }
        let start = l1.mshr_free_at(now);
        let ready = self
            .l2_line(unit, line, caching, insert, false, true, start, dram)
            .max(now + latency);
        // Only local stores leave dirty lines in the L1 (global stores write
        // through): a dirty victim goes back to the L2.
        if let Some(victim) = self.l1[unit].allocate(line, start, ready, false, insert) {
            self.l2_line(
                unit,
                victim,
                Caching::All,
                Insert::Normal,
                true,
                false,
                start,
                dram,
            );
        }
        ready
    }

    /// A warp's local load (or, with `store`, store) by `unit` at cycle `now`
    /// (instruction `pc`) of the bytes at `addrs` in the local area
    /// ([`LOCAL_BASE`] up): returns the cycle the last of its lines arrives (is
    /// written). Loads go as global loads do; a store that hits in the L1 dirties
    /// the line there (write-back) and one that misses writes through to the L2
    /// without allocating: Fermi's L1 as GPGPU-Sim 3.x configures it
    /// (`-gpgpu_cache:dl1 32:128:4,L:L:m:N`: `LOCAL_WB_GLOBAL_WT`,
    /// `NO_WRITE_ALLOCATE`). Dirty local lines left in the L1 at the end are dead
    /// and dropped.
    pub fn local(
        &mut self,
        unit: usize,
        pc: u32,
        addrs: &[u64],
        store: bool,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        let mut lines: Vec<u64> = addrs.iter().map(|a| a >> self.line_shift).collect();
        lines.sort_unstable();
        lines.dedup();
        self.noting(unit, pc, |c| {
            let mut done = now;
            for (i, &line) in lines.iter().enumerate() {
                let at = now + i as u64;
                let ready = if store {
                    c.local_store_line(unit, line, at, dram)
                } else {
                    c.load_line(unit, line, Caching::All, at, dram)
                };
                done = done.max(ready);
            }
            done
        })
    }

    fn local_store_line(&mut self, unit: usize, line: u64, now: u64, dram: &mut Dram) -> u64 {
        if let Some(l1) = self.l1.get_mut(unit) {
            let latency = l1.shape.latency;
            match l1.probe(line, now, true) {
                Probe::Hit(ready) => return ready,
                Probe::Merge(ready) => return ready.max(now + latency),
                Probe::Miss => l1.counts.misses += 1,
            }
        }
        self.l2_line(
            unit,
            line,
            Caching::All,
            Insert::Normal,
            true,
            false,
            now,
            dram,
        )
    }

    /// A line access at the L2 (a load's miss in L1, a store, an atomic) at cycle
    /// `now`: returns the cycle its data is there (for a store, written). `write`
    /// dirties the line; `fetch` reads it from DRAM on a miss (loads and atomics;
    /// a store allocates without reading).
    #[allow(clippy::too_many_arguments)]
    fn l2_line(
        &mut self,
        unit: usize,
        line: u64,
        caching: Caching,
        insert: Insert,
        write: bool,
        fetch: bool,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        let bytes = self.line_bytes;
        self.sent += 1;
        if self.l2.is_empty() || caching == Caching::Bypass {
            if let Some(bank) = self.l2.first_mut() {
                bank.counts.bypasses += 1;
            }
            return self.dram(now, !fetch, dram);
        }
        self.l2_by_unit[unit] += 1;
        let banks = self.l2.len() as u64;
        let (b, local) = ((line % banks) as usize, line / banks);
        let bank = &mut self.l2[b];
        let latency = bank.shape.latency;
        match bank.probe(local, now, write) {
            Probe::Hit(ready) => return ready,
            Probe::Merge(ready) => return ready.max(now + latency),
            Probe::Miss => {}
        }
        let start = bank.mshr_free_at(now);
        // A read fetches the line. A store either writes through to DRAM and
        // fetches the line, which arrives clean (3.x), or allocates it dirty
        // without reading it (4.x).
        let through = !fetch && self.write_miss == L2WriteMiss::Fetch;
        if through {
            self.dram_writes += 1;
            dram.request(start, bytes);
        }
        let ready = if fetch || through {
            self.dram_reads += 1;
            dram.request(start, bytes).max(now + latency)
        } else {
            start + latency
        };
        let dirty = write && !through;
        let bank = &mut self.l2[b];
        if bank.allocate(local, start, ready, dirty, insert).is_some() {
            // The dirty victim goes back to DRAM.
            self.dram_writes += 1;
            dram.request(start, bytes);
        }
        ready
    }

    /// The end of the kernel at cycle `now`: every dirty line left in the L2 goes
    /// back to DRAM, queued from `now` (so the run lasts until the last one is
    /// written). Returns the lines written.
    pub fn write_back_dirty(&mut self, now: u64, dram: &mut Dram) -> u64 {
        let lines: u64 = self.l2.iter_mut().map(Cache::clean_dirty).sum();
        for i in 0..lines {
            dram.request(now + i, self.line_bytes);
        }
        self.dram_writes += lines;
        self.end_writebacks += lines;
        lines
    }

    /// A DRAM transfer of one line without the L2.
    fn dram(&mut self, now: u64, write: bool, dram: &mut Dram) -> u64 {
        if write {
            self.dram_writes += 1;
        } else {
            self.dram_reads += 1;
        }
        dram.request(now, self.line_bytes)
    }

    fn store_line(
        &mut self,
        unit: usize,
        line: u64,
        caching: Caching,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        if let Some(l1) = self.l1.get_mut(unit) {
            l1.invalidate(line);
            l1.counts.bypasses += 1;
        }
        let insert = match caching {
            Caching::Streaming => Insert::EvictFirst,
            _ => Insert::Normal,
        };
        self.l2_line(unit, line, caching, insert, true, false, now, dram)
    }

    /// A warp's atomics at cycle `now`, one per lane in lane order, performed at
    /// the L2: returns the cycle the last old value is back.
    pub fn atomic(
        &mut self,
        unit: usize,
        pc: u32,
        addrs: &[u32; 32],
        mask: u32,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        self.noting(unit, pc, |c| c.atomics(unit, addrs, mask, now, dram))
    }

    fn atomics(
        &mut self,
        unit: usize,
        addrs: &[u32; 32],
        mask: u32,
        now: u64,
        dram: &mut Dram,
    ) -> u64 {
        let mut done = now;
        for (i, l) in crate::exec::lanes::lanes_of(mask).enumerate() {
            let line = u64::from(addrs[l] >> self.line_shift);
            let at = now + i as u64;
            // A miss fetches the line; the atomic then dirties it.
            let ready = self.l2_line(
                unit,
                line,
                Caching::All,
                Insert::Normal,
                true,
                true,
                at,
                dram,
            );
            done = done.max(ready);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loader's state estimate counts each line of every cache at this size.
    #[test]
    fn a_lines_state_is_what_the_estimate_counts() {
        assert_eq!(
            std::mem::size_of::<Line>() as u64,
            crate::load::CACHE_LINE_STATE_BYTES
        );
    }

    fn small() -> Cache {
        Cache::new(Shape {
            sets: 2,
            ways: 2,
            latency: 10,
            mshrs: 2,
        })
    }

    #[test]
    fn a_miss_then_a_merge_then_a_hit() {
        let mut c = small();
        assert_eq!(c.probe(4, 0, false), Probe::Miss);
        assert_eq!(c.allocate(4, 0, 100, false, Insert::Normal), None);
        assert_eq!(c.probe(4, 50, false), Probe::Merge(100));
        assert_eq!(c.probe(4, 100, false), Probe::Hit(110));
        let k = c.counts;
        assert_eq!((k.misses, k.mshr_merges, k.hits), (1, 1, 1));
    }

    #[test]
    fn lru_evicts_the_least_recent_line_of_the_set() {
        let mut c = small();
        // Lines 0, 2 and 4 map to set 0 of 2 ways.
        for line in [0, 2] {
            c.allocate(line, 0, 0, false, Insert::Normal);
        }
        assert!(matches!(c.probe(0, 1, false), Probe::Hit(_)));
        c.allocate(4, 1, 1, false, Insert::Normal);
        assert_eq!(c.probe(2, 2, false), Probe::Miss, "2 was least recent");
        assert!(matches!(c.probe(0, 2, false), Probe::Hit(_)));
        assert_eq!(c.probe(1, 2, false), Probe::Miss, "set 1 is untouched");
    }

    #[test]
    fn evict_first_lines_go_first_and_dirty_ones_are_written_back() {
        let mut c = small();
        c.allocate(0, 0, 0, true, Insert::Normal);
        c.allocate(2, 0, 0, false, Insert::EvictFirst);
        assert_eq!(c.allocate(4, 0, 0, false, Insert::Normal), None, "2 goes");
        assert_eq!(c.allocate(6, 0, 0, false, Insert::Normal), Some(0));
        assert_eq!(c.counts.writebacks, 1);
    }

    #[test]
    fn only_dirty_lines_are_cleaned() {
        let mut c = small();
        c.allocate(0, 0, 0, true, Insert::Normal);
        c.allocate(1, 0, 0, false, Insert::Normal);
        c.allocate(2, 0, 0, true, Insert::Normal);
        assert_eq!(c.clean_dirty(), 2);
        assert_eq!(c.clean_dirty(), 0, "clean now");
        assert_eq!(
            c.allocate(4, 0, 0, false, Insert::Normal),
            None,
            "no dirty victim"
        );
    }

    #[test]
    fn a_miss_waits_for_an_mshr_when_all_are_busy() {
        let mut c = small();
        assert_eq!(c.mshr_free_at(0), 0);
        c.allocate(0, 0, 300, false, Insert::Normal);
        c.allocate(1, 0, 200, false, Insert::Normal);
        assert_eq!(c.mshr_free_at(5), 200, "both busy: the earlier frees first");
        assert_eq!(c.mshr_free_at(300), 300, "all completed by then");
        assert_eq!(c.counts.mshr_stalls, 1);
    }
}
