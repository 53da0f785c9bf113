//! What every unit was doing over time, for timelines and pages: computing, running
//! IU code, moving tiles (load, store, spill, restore), waiting for a spill stream,
//! waiting at a blocksync (and on which side), or idle; and when each of its
//! rendezvous completed (a tile handed over a link). Recorded only when asked for
//! (`--timeline`, `--html`).

use spu_isa::Side;

/// A unit's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activity {
    #[default]
    Idle,
    /// An SM running a block.
    Compute,
    /// IU code running (on an IU, or an SM in a partial pass's boundary role).
    IuCode,
    /// A DMA engine loading or storing tiles.
    Load,
    Store,
    /// A virtual IU spilling or restoring tiles between passes.
    Spill,
    Restore,
    /// A restoring virtual IU waiting for the next tile of its spill stream (not
    /// spilled yet, or on its way back from DRAM): not busy.
    SpillWait,
    /// Waiting at a blocksync: towards a side, or global (`None`).
    Wait(Option<Side>),
}

impl Activity {
    /// Short name for legends and tests.
    pub fn name(self) -> &'static str {
        match self {
            Activity::Idle => "idle",
            Activity::Compute => "computing",
            Activity::IuCode => "IU code",
            Activity::Load => "DMA load",
            Activity::Store => "DMA store",
            Activity::Spill => "spill (virtual IU)",
            Activity::Restore => "restore (virtual IU)",
            Activity::SpillWait => "waiting for spill (virtual IU)",
            Activity::Wait(Some(Side::North | Side::West)) => "waiting for input (north/west sync)",
            Activity::Wait(Some(_)) => "waiting to hand over (south/east sync)",
            Activity::Wait(None) => "waiting at global blocksync",
        }
    }
}

/// One stretch of one activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub activity: Activity,
    /// Pass of the work item.
    pub pass: u32,
}

/// Segments per unit, in unit order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityLog {
    pub units: Vec<Vec<Segment>>,
}

/// Stretches and rendezvous all units together keep at most (about 100 MiB):
/// past it a unit's record is coarsened ([`UnitActivity::bounded`]).
pub const MAX_RECORDED: usize = 1 << 22;

/// One unit's activity as it is recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitActivity {
    pub segments: Vec<Segment>,
    open: Option<(u64, Activity, u32)>,
    /// The work activity the unit returns to after a sync.
    working: (Activity, u32),
    /// Releases from a directional blocksync: the cycle the unit went on and the
    /// side whose link switched (both ends of a link record the same cycle);
    /// thinned, as stretches are coarsened, past `cap`.
    pub handovers: Vec<(u64, Side)>,
    /// Every release, by side code (exact, however thinned `handovers` is).
    pub handover_counts: [u64; 4],
    /// Most stretches or rendezvous kept (0: no bound).
    cap: usize,
}

impl UnitActivity {
    /// A record for one of `units` units that keeps its share of
    /// [`MAX_RECORDED`] (at least 1 024): past it, each two neighbouring
    /// stretches become one (the longer one's activity, over both and the gap
    /// between), and every other rendezvous is dropped. A run of millions of
    /// syncs is then drawn at a coarser grain (as a page already draws it), in
    /// bounded memory.
    pub fn bounded(units: usize) -> UnitActivity {
        UnitActivity {
            cap: (MAX_RECORDED / units.max(1)).max(1024),
            ..UnitActivity::default()
        }
    }

    /// Halves the stretches, see [`UnitActivity::bounded`].
    #[cold]
    fn coarsen(&mut self) {
        let merged: Vec<Segment> = self
            .segments
            .chunks(2)
            .map(|pair| {
                let (a, b) = (pair[0], pair[pair.len() - 1]);
                let longer = if b.end - b.start > a.end - a.start {
                    b
                } else {
                    a
                };
                Segment {
                    start: a.start,
                    end: b.end,
                    activity: longer.activity,
                    pass: longer.pass,
                }
            })
            .collect();
        self.segments = merged;
    }

    fn set(&mut self, at: u64, activity: Activity, pass: u32) {
        if let Some((start, a, p)) = self.open.take()
            && at > start
        {
            let segs = &mut self.segments;
            match segs.last_mut() {
                Some(last) if last.activity == a && last.pass == p && last.end == start => {
                    last.end = at
                }
                _ => segs.push(Segment {
                    start,
                    end: at,
                    activity: a,
                    pass: p,
                }),
            }
            if self.cap > 0 && self.segments.len() > self.cap {
                self.coarsen();
            }
        }
        self.open = (activity != Activity::Idle).then_some((at, activity, pass));
    }

    /// The unit starts work of `activity` in `pass` at cycle `at`.
    pub fn start(&mut self, at: u64, activity: Activity, pass: u32) {
        self.working = (activity, pass);
        self.set(at, activity, pass);
    }

    /// The unit arrives at a blocksync.
    pub fn wait(&mut self, at: u64, side: Option<Side>) {
        let pass = self.working.1;
        self.set(at, Activity::Wait(side), pass);
    }

    /// The unit pauses its work at `at` to wait for something other than a
    /// blocksync (a restoring virtual IU waiting for its spill stream).
    pub fn pause(&mut self, at: u64, activity: Activity) {
        let pass = self.working.1;
        self.set(at, activity, pass);
    }

    /// The unit is released from a blocksync, or ends a pause, at `at`.
    pub fn resume(&mut self, at: u64) {
        if let Some((_, Activity::Wait(Some(side)), _)) = self.open {
            self.handover_counts[usize::from(side.code())] += 1;
            self.handovers.push((at, side));
            if self.cap > 0 && self.handovers.len() > self.cap {
                let mut keep = false;
                self.handovers.retain(|_| {
                    keep = !keep;
                    keep
                });
            }
        }
        let (a, p) = self.working;
        self.set(at, a, p);
    }

    /// The unit finishes its work at `at`. A wait for a spill stream that ends
    /// here ended because the stream closed without another tile (the kernel
    /// never sent one that way): the unit was idle, not waiting, and is drawn so.
    pub fn finish(&mut self, at: u64) {
        if let Some((_, Activity::SpillWait, _)) = self.open {
            self.open = None;
        }
        self.set(at, Activity::Idle, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A million syncs keep at most the unit's share of stretches and
    /// rendezvous, spanning the whole run, with every rendezvous counted.
    #[test]
    fn a_record_of_millions_of_syncs_stays_bounded() {
        let mut a = UnitActivity::bounded(1 << 20);
        a.start(0, Activity::Compute, 0);
        for i in 0..1_000_000u64 {
            a.wait(10 * i + 5, Some(Side::South));
            a.resume(10 * i + 8);
        }
        a.finish(10_000_000);
        assert!(a.segments.len() <= 1024, "{}", a.segments.len());
        assert!(a.handovers.len() <= 1024, "{}", a.handovers.len());
        assert_eq!(
            a.handover_counts[usize::from(Side::South.code())],
            1_000_000
        );
        assert_eq!(a.segments.first().map(|s| s.start), Some(0));
        assert_eq!(a.segments.last().map(|s| s.end), Some(10_000_000));
        // Still in order, without overlaps.
        assert!(a.segments.windows(2).all(|w| w[0].end <= w[1].start));
        // Unbounded, the same record keeps every stretch.
        let mut all = UnitActivity::default();
        all.start(0, Activity::Compute, 0);
        for i in 0..1000u64 {
            all.wait(10 * i + 5, Some(Side::South));
            all.resume(10 * i + 8);
        }
        assert_eq!(all.segments.len(), 2000);
    }

    #[test]
    fn a_spill_wait_that_ends_the_work_is_idle_time() {
        let mut u = UnitActivity::default();
        u.start(10, Activity::Restore, 1);
        u.pause(20, Activity::SpillWait);
        u.resume(30);
        u.pause(40, Activity::SpillWait);
        u.finish(100);
        let drawn: Vec<(u64, u64, Activity)> = u
            .segments
            .iter()
            .map(|s| (s.start, s.end, s.activity))
            .collect();
        // The wait a tile ended is kept; the one the closed stream ended is not.
        assert_eq!(
            drawn,
            [
                (10, 20, Activity::Restore),
                (20, 30, Activity::SpillWait),
                (30, 40, Activity::Restore),
            ]
        );
    }

    #[test]
    fn a_blocksync_wait_before_finishing_is_kept() {
        let mut u = UnitActivity::default();
        u.start(0, Activity::Compute, 0);
        u.wait(5, Some(Side::East));
        u.finish(9);
        assert_eq!(
            u.segments.last().unwrap().activity,
            Activity::Wait(Some(Side::East))
        );
    }
}
