//! Activity over time: cumulative component counts snapshotted every N cycles, so
//! the profiler can draw power traces (GPUWattch sampled every 500 cycles, thesis
//! 5.1). Each unit keeps its own snapshots, taken before its first change at or
//! after each boundary, and the run adds them up. Off by default.

use crate::observe::counters::{Component, ComponentCounts};

/// Most snapshots a unit keeps; a longer run doubles the interval (dropping every
/// other snapshot, which are cumulative) as often as needed, so memory stays
/// bounded however long the run or small the interval. Every unit takes a snapshot
/// at every boundary, so all units coarsen at the same boundaries. At this many
/// the stats' series take about 13 MB, well within what `spu-prof --from-stats`
/// reads.
pub const MAX_SAMPLES: usize = 1 << 16;

/// Most snapshots all units keep together (about 160 MiB): a grid of many units
/// keeps fewer each ([`per_unit_limit`]).
pub const MAX_TOTAL_SAMPLES: usize = 1 << 20;

/// The snapshots each of `units` units keeps: [`MAX_SAMPLES`], or fewer so that
/// they keep at most [`MAX_TOTAL_SAMPLES`] together.
pub fn per_unit_limit(units: usize) -> usize {
    (MAX_TOTAL_SAMPLES / units.max(1)).clamp(2, MAX_SAMPLES)
}

/// One unit's snapshots while the grid runs.
#[derive(Debug, Clone)]
pub struct UnitSampler {
    interval: u64,
    next: u64,
    /// Most snapshots kept before the interval doubles ([`MAX_SAMPLES`] unless
    /// set lower: a page needs only a few thousand).
    limit: usize,
    /// Cumulative (counts, busy cycles) at each boundary.
    snapshots: Vec<(ComponentCounts, u64)>,
    /// A snapshot the host had no memory for (a memory limit) was lost: the
    /// run's samples cannot be trusted.
    pub starved: bool,
}

/// Per-interval activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Samples {
    pub interval_cycles: u64,
    /// One entry per interval (the last may be partial), in component order;
    /// `IDLE_COREP` and `CONST_DYNAMICP` are idle and busy unit-cycles.
    pub intervals: Vec<ComponentCounts>,
}

impl UnitSampler {
    pub fn new(interval: u64) -> UnitSampler {
        UnitSampler {
            interval: interval.max(1),
            next: interval.max(1),
            limit: MAX_SAMPLES,
            snapshots: Vec::new(),
            starved: false,
        }
    }

    /// Keeps at most `limit` snapshots (at least 2), doubling the interval as often
    /// as needed.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.clamp(2, MAX_SAMPLES);
    }

    /// Called before the unit changes at cycle `now`: nothing changed since the
    /// last call. `counts` gives the unit's counts so far, `busy_until` its busy
    /// cycles up to a cycle.
    /// True when a sample is due at cycle `now`.
    #[inline]
    pub fn due(&self, now: u64) -> bool {
        now >= self.next
    }

    pub fn observe(
        &mut self,
        now: u64,
        counts: impl FnOnce() -> ComponentCounts,
        busy_until: impl Fn(u64) -> u64,
    ) {
        if now < self.next {
            return;
        }
        let counts = counts();
        while now >= self.next {
            let at = self.next;
            if self.snapshots.try_reserve(1).is_err() {
                self.starved = true;
                return;
            }
            self.snapshots.push((counts.clone(), busy_until(at)));
            self.next += self.interval;
            if self.snapshots.len() >= self.limit {
                self.coarsen();
            }
        }
    }

    /// Doubles the interval: snapshot `i` closes interval `i`, so the odd ones close
    /// the doubled intervals.
    fn coarsen(&mut self) {
        let kept: Vec<_> = std::mem::take(&mut self.snapshots)
            .into_iter()
            .skip(1)
            .step_by(2)
            .collect();
        self.snapshots = kept;
        self.interval *= 2;
        self.next = (self.snapshots.len() as u64 + 1) * self.interval;
    }

    /// Snapshots kept.
    pub fn kept(&self) -> usize {
        self.snapshots.len()
    }

    /// Closes the last interval at `end`.
    pub fn finish(
        &mut self,
        end: u64,
        counts: impl Fn() -> ComponentCounts,
        busy_until: impl Fn(u64) -> u64,
    ) {
        self.observe(end, &counts, &busy_until);
        if end > self.next - self.interval {
            if self.snapshots.try_reserve(1).is_err() {
                self.starved = true;
                return;
            }
            self.snapshots.push((counts(), busy_until(end)));
        }
    }
}

/// Adds up the units' snapshots into per-interval activity of a run of `end`
/// cycles. `lanes[u]` is how many units from `u` on one hardware unit's idle and
/// constant power covers: 1, or for a boundary unit with several blocks per SM
/// the lane count on its first lane and 0 on the others, as the run's totals
/// count them (the unit is busy while its busiest lane is).
pub fn combine(units: &[UnitSampler], lanes: &[usize], end: u64) -> Samples {
    debug_assert_eq!(units.len(), lanes.len());
    let interval = units.first().map_or(1, |u| u.interval);
    let n = units.iter().map(|u| u.snapshots.len()).max().unwrap_or(0);
    let powered = lanes.iter().filter(|&&l| l > 0).count() as u64;
    let mut prev = (ComponentCounts::default(), 0u64);
    let mut intervals = Vec::with_capacity(n);
    for i in 0..n {
        let mut counts = ComponentCounts::default();
        for (c, _) in units.iter().filter_map(|u| u.snapshots.get(i)) {
            counts.merge(c);
        }
        // Cumulative busy cycles of each hardware unit: a maximum of cumulative
        // counts, so it never falls and ends at the run's total.
        let busy: u64 = lanes
            .iter()
            .enumerate()
            .filter(|&(_, &l)| l > 0)
            .map(|(u, &l)| {
                units[u..(u + l).min(units.len())]
                    .iter()
                    .filter_map(|s| s.snapshots.get(i).map(|(_, b)| *b))
                    .max()
                    .unwrap_or(0)
            })
            .sum();
        let start = i as u64 * interval;
        let len = (start + interval).min(end.max(start)) - start;
        let mut delta = counts.minus(&prev.0);
        let busy_delta = busy - prev.1;
        delta.set(Component::ConstDynamicp, busy_delta);
        delta.set(
            Component::IdleCorep,
            (powered * len).saturating_sub(busy_delta),
        );
        intervals.push(delta);
        prev = (counts, busy);
    }
    Samples {
        interval_cycles: interval,
        intervals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_with_a_short_interval_stays_bounded() {
        let mut s = UnitSampler::new(1);
        let end = 3 * MAX_SAMPLES as u64 + 5;
        s.observe(end, ComponentCounts::default, |t| t);
        assert!(s.snapshots.len() <= MAX_SAMPLES);
        s.finish(end, ComponentCounts::default, |t| t);
        let samples = combine(&[s], &[1], end);
        assert_eq!(samples.interval_cycles, 4, "doubled twice");
        assert_eq!(samples.intervals.len() as u64, end.div_ceil(4));
        // The unit is busy throughout; nothing is lost or counted twice.
        let busy: u64 = samples
            .intervals
            .iter()
            .map(|c| c.get(Component::ConstDynamicp))
            .sum();
        assert_eq!(busy, end);
    }

    #[test]
    fn a_lower_limit_coarsens_earlier_and_loses_nothing() {
        let mut s = UnitSampler::new(1);
        s.set_limit(16);
        let end = 1000;
        s.observe(end, ComponentCounts::default, |t| t / 2);
        assert!(s.snapshots.len() < 16);
        s.finish(end, ComponentCounts::default, |t| t / 2);
        let samples = combine(&[s], &[1], end);
        assert_eq!(
            samples.interval_cycles, 64,
            "1000 cycles in fewer than 16 intervals"
        );
        assert_eq!(samples.intervals.len() as u64, end.div_ceil(64));
        let busy: u64 = samples
            .intervals
            .iter()
            .map(|c| c.get(Component::ConstDynamicp))
            .sum();
        assert_eq!(busy, end / 2);
    }
}
