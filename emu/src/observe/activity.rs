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

/// One unit's activity as it is recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitActivity {
    pub segments: Vec<Segment>,
    open: Option<(u64, Activity, u32)>,
    /// The work activity the unit returns to after a sync.
    working: (Activity, u32),
    /// Releases from a directional blocksync: the cycle the unit went on and the
    /// side whose link switched (both ends of a link record the same cycle).
    pub handovers: Vec<(u64, Side)>,
}

impl UnitActivity {
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
            self.handovers.push((at, side));
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
