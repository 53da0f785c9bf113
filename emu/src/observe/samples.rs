//! Activity over time: cumulative component counts snapshotted every N cycles, so
//! the profiler can draw power traces (GPUWattch sampled every 500 cycles, thesis
//! 5.1). Off by default; when on, it costs one pass over the units per interval.

use crate::observe::counters::{Component, ComponentCounts};

/// Most snapshots kept; a longer run doubles the interval (dropping every other
/// snapshot, which are cumulative) as often as needed, so memory stays bounded
/// however long the run or small the interval.
pub const MAX_SAMPLES: usize = 1 << 20;

/// Records snapshots while the grid runs.
#[derive(Debug, Clone)]
pub struct Sampler {
    interval: u64,
    next: u64,
    /// Cumulative (counts, busy unit-cycles) at each boundary.
    snapshots: Vec<(ComponentCounts, u64)>,
}

/// Per-interval activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Samples {
    pub interval_cycles: u64,
    /// One entry per interval (the last may be partial), in component order;
    /// `IDLE_COREP` and `CONST_DYNAMICP` are idle and busy unit-cycles.
    pub intervals: Vec<ComponentCounts>,
}

/// What the sampler reads from the units: their summed counts so far, and their
/// summed busy cycles up to a given cycle.
pub trait Observed {
    fn counts(&self) -> ComponentCounts;
    fn busy_until(&self, cycle: u64) -> u64;
}

impl Sampler {
    pub fn new(interval: u64) -> Sampler {
        Sampler {
            interval: interval.max(1),
            next: interval.max(1),
            snapshots: Vec::new(),
        }
    }

    /// Called at the start of each loop iteration at cycle `now`, before any unit
    /// steps: nothing happened between the previous iteration and `now`.
    pub fn observe(&mut self, now: u64, units: &dyn Observed) {
        if now < self.next {
            return;
        }
        let counts = units.counts();
        while now >= self.next {
            let at = self.next;
            let busy = units.busy_until(at);
            self.snapshots.push((counts.clone(), busy));
            self.next += self.interval;
            if self.snapshots.len() >= MAX_SAMPLES {
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

    /// Closes the last interval at `end` and returns per-interval counts.
    pub fn finish(mut self, end: u64, n_units: u64, units: &dyn Observed) -> Samples {
        self.observe(end, units);
        if end > self.next - self.interval {
            let busy = units.busy_until(end);
            self.snapshots.push((units.counts(), busy));
        }
        let mut prev = (ComponentCounts::default(), 0u64);
        let mut intervals = Vec::with_capacity(self.snapshots.len());
        for (i, (counts, busy)) in self.snapshots.into_iter().enumerate() {
            let start = i as u64 * self.interval;
            let len = (start + self.interval).min(end.max(start)) - start;
            let mut delta = counts.minus(&prev.0);
            let busy_delta = busy - prev.1;
            delta.set(Component::ConstDynamicp, busy_delta);
            delta.set(
                Component::IdleCorep,
                (n_units * len).saturating_sub(busy_delta),
            );
            intervals.push(delta);
            prev = (counts, busy);
        }
        Samples {
            interval_cycles: self.interval,
            intervals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Busy;

    impl Observed for Busy {
        fn counts(&self) -> ComponentCounts {
            ComponentCounts::default()
        }
        fn busy_until(&self, cycle: u64) -> u64 {
            cycle
        }
    }

    #[test]
    fn a_long_run_with_a_short_interval_stays_bounded() {
        let mut s = Sampler::new(1);
        let end = 3 * MAX_SAMPLES as u64 + 5;
        s.observe(end, &Busy);
        assert!(s.snapshots.len() <= MAX_SAMPLES);
        let samples = s.finish(end, 1, &Busy);
        assert_eq!(samples.interval_cycles, 4, "doubled twice");
        assert_eq!(samples.intervals.len() as u64, end.div_ceil(4));
        // Every interval but the last is fully busy; nothing is lost or counted twice.
        let busy: u64 = samples
            .intervals
            .iter()
            .map(|c| c.get(Component::ConstDynamicp))
            .sum();
        assert_eq!(busy, end);
    }
}
