//! When each instruction ran, for the page's "when" of a clicked source line: each
//! unit's warp instructions per instruction between the sampler's boundaries, kept
//! sparse (only instructions that ran in an interval). The interval doubles, merging
//! neighbours, when a unit holds more than [`MAX_INTERVALS`] intervals or
//! [`MAX_ENTRIES`] entries (fewer each on a grid of many units, so that all
//! units together keep at most [`MAX_TOTAL_INTERVALS`] and
//! [`MAX_TOTAL_ENTRIES`]), so memory stays bounded however long the run and
//! large the grid. Recorded only for pages.

/// Most intervals a unit keeps (the page's frames).
pub const MAX_INTERVALS: usize = crate::observe::html::frames::MAX_FRAMES;

/// Most (instruction, count) entries a unit keeps, all intervals together (half
/// a MiB; a page keeps no more cells than this of all units together).
pub const MAX_ENTRIES: usize = 1 << 16;

/// Most intervals all units keep together (each costs a few words even when
/// empty: 40 000 units of 2 048 took 2 GB).
pub const MAX_TOTAL_INTERVALS: usize = 1 << 20;

/// Most entries all units keep together (32 MiB).
pub const MAX_TOTAL_ENTRIES: usize = 1 << 22;

/// One interval's instructions: (pc, warp instructions issued), in pc order.
pub type Interval = Vec<(u32, u32)>;

/// One unit's per-instruction counts over time while the grid runs.
#[derive(Debug, Clone)]
pub struct PcSampler {
    interval: u64,
    next: u64,
    /// Cumulative warp instructions per pc at the last boundary.
    last: Vec<u64>,
    intervals: Vec<Interval>,
    entries: usize,
    /// This unit's share of the totals: [`MAX_INTERVALS`] and [`MAX_ENTRIES`]
    /// unless the grid has many units.
    max_intervals: usize,
    max_entries: usize,
}

/// One unit's per-instruction counts: interval `i` covers cycles
/// `[i * interval_cycles, (i + 1) * interval_cycles)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcSamples {
    pub interval_cycles: u64,
    pub intervals: Vec<Interval>,
}

impl PcSampler {
    /// A sampler of a program of `pcs` instructions, with boundaries every
    /// `interval` cycles, on a grid of `units` units.
    pub fn new(interval: u64, pcs: usize, units: usize) -> PcSampler {
        let units = units.max(1);
        PcSampler {
            interval: interval.max(1),
            next: interval.max(1),
            last: vec![0; pcs],
            intervals: Vec::new(),
            entries: 0,
            max_intervals: (MAX_TOTAL_INTERVALS / units).clamp(2, MAX_INTERVALS),
            max_entries: (MAX_TOTAL_ENTRIES / units).clamp(2, MAX_ENTRIES),
        }
    }

    /// True when a boundary is due at cycle `now`.
    #[inline]
    pub fn due(&self, now: u64) -> bool {
        now >= self.next
    }

    /// Called before the unit changes at cycle `now`; `issued` gives the warp
    /// instructions of a pc so far.
    pub fn observe(&mut self, now: u64, issued: impl Fn(usize) -> u64) {
        if now < self.next {
            return;
        }
        // Nothing changed since the last call: a later boundary is empty, unless
        // counts were given back to the running ones.
        let mut fresh = true;
        while now >= self.next {
            let interval = if fresh {
                self.delta(&issued)
            } else {
                Vec::new()
            };
            fresh = self.push(interval, false);
        }
    }

    /// What ran since the last boundary, and the boundary moved to now.
    fn delta(&mut self, issued: &impl Fn(usize) -> u64) -> Interval {
        let mut out = Vec::new();
        for (pc, last) in self.last.iter_mut().enumerate() {
            let now = issued(pc);
            if now > *last {
                out.push((pc as u32, u32::try_from(now - *last).unwrap_or(u32::MAX)));
                *last = now;
            }
        }
        out
    }

    /// Closes an interval; `ended` when the run has, so nothing follows it.
    /// True when counts were given back to the running ones.
    fn push(&mut self, interval: Interval, ended: bool) -> bool {
        self.entries += interval.len();
        self.intervals.push(interval);
        let mut gave_back = false;
        while (self.intervals.len() >= self.max_intervals || self.entries > self.max_entries)
            && self.intervals.len() > 1
        {
            gave_back |= self.coarsen(ended);
        }
        self.next = (self.intervals.len() as u64 + 1) * self.interval;
        gave_back
    }

    /// Doubles the interval, merging neighbours. While the run goes on, an
    /// interval left without a neighbour is given back to the running counts, to
    /// be part of the next (returns true if it had any); at its end it stands
    /// alone.
    fn coarsen(&mut self, ended: bool) -> bool {
        let mut old = std::mem::take(&mut self.intervals);
        let mut gave_back = false;
        if old.len() % 2 == 1
            && !ended
            && let Some(open) = old.pop()
        {
            gave_back = !open.is_empty();
            for (pc, n) in open {
                self.last[pc as usize] -= u64::from(n);
            }
        }
        let mut pairs = old.into_iter();
        while let (Some(a), b) = (pairs.next(), pairs.next()) {
            self.intervals.push(merge(a, b.unwrap_or_default()));
        }
        self.entries = self.intervals.iter().map(Vec::len).sum();
        self.interval *= 2;
        gave_back
    }

    /// Closes the last interval at `end` and returns the unit's counts.
    pub fn finish(mut self, end: u64, issued: impl Fn(usize) -> u64) -> PcSamples {
        self.observe(end, &issued);
        if end > self.next - self.interval {
            let last = self.delta(&issued);
            self.push(last, true);
        }
        PcSamples {
            interval_cycles: self.interval,
            intervals: self.intervals,
        }
    }
}

/// Two intervals' counts added, in pc order.
fn merge(a: Interval, b: Interval) -> Interval {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                out.push((x.0, x.1.saturating_add(y.1)));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                out.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                out.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit that issues `per_cycle(c)` instructions of pc `c % pcs` at cycle `c`,
    /// observed every cycle up to `end`.
    fn run(end: u64, pcs: usize) -> (PcSamples, Vec<u64>) {
        let mut s = PcSampler::new(1, pcs, 1);
        let mut counts = vec![0u64; pcs];
        for c in 0..end {
            s.observe(c, |pc| counts[pc]);
            counts[(c as usize) % pcs] += 1 + c % 3;
        }
        let total = counts.clone();
        (s.finish(end, |pc| counts[pc]), total)
    }

    fn totals(s: &PcSamples, pcs: usize) -> Vec<u64> {
        let mut t = vec![0u64; pcs];
        for (pc, n) in s.intervals.iter().flatten() {
            t[*pc as usize] += u64::from(*n);
        }
        t
    }

    #[test]
    fn every_instruction_is_counted_once_however_often_intervals_merge() {
        for end in [1, 7, 100, 3 * MAX_INTERVALS as u64 + 5] {
            let (s, total) = run(end, 5);
            assert_eq!(totals(&s, 5), total, "{end} cycles");
            assert!(s.intervals.len() <= MAX_INTERVALS);
            assert!(
                s.intervals
                    .iter()
                    .all(|i| i.windows(2).all(|w| w[0].0 < w[1].0))
            );
        }
        let (s, _) = run(3 * MAX_INTERVALS as u64 + 5, 5);
        assert_eq!(s.interval_cycles, 4, "doubled twice");
        assert_eq!(
            s.intervals.len() as u64,
            (3 * MAX_INTERVALS as u64 + 5).div_ceil(4)
        );
    }

    #[test]
    fn an_interval_holds_what_ran_in_it() {
        // pc 0 runs at cycles 0..10, pc 1 at 10..20; intervals of 4 cycles.
        let mut s = PcSampler::new(4, 2, 1);
        let mut counts = [0u64; 2];
        for c in 0..20u64 {
            s.observe(c, |pc| counts[pc]);
            counts[usize::from(c >= 10)] += 1;
        }
        let s = s.finish(20, |pc| counts[pc]);
        assert_eq!(s.interval_cycles, 4);
        assert_eq!(
            s.intervals,
            vec![
                vec![(0, 4)],
                vec![(0, 4)],
                vec![(0, 2), (1, 2)],
                vec![(1, 4)],
                vec![(1, 4)]
            ]
        );
    }

    #[test]
    fn many_instructions_coarsen_to_the_entry_limit() {
        // Every pc of a long program runs in every cycle.
        let pcs = 1000;
        let mut s = PcSampler::new(1, pcs, 1);
        let end = 4 * (MAX_ENTRIES / pcs) as u64;
        for c in 0..end {
            s.observe(c, |_| c);
        }
        let s = s.finish(end, |_| end);
        assert!(s.intervals.iter().map(Vec::len).sum::<usize>() <= MAX_ENTRIES);
        assert!(s.interval_cycles >= 4);
        assert_eq!(totals(&s, pcs), vec![end; pcs]);
    }

    #[test]
    fn a_grid_of_many_units_keeps_fewer_intervals_each() {
        let units = 40_000;
        let mut s = PcSampler::new(1, 2, units);
        for c in 0..10_000u64 {
            s.observe(c, |_| c);
        }
        let s = s.finish(10_000, |_| 10_000);
        assert!(
            s.intervals.len() < MAX_TOTAL_INTERVALS / units,
            "{}",
            s.intervals.len()
        );
        assert_eq!(totals(&s, 2), vec![10_000; 2]);
    }
}
