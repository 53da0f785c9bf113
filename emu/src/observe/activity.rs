//! What every unit was doing over time, for timelines: computing, running IU code,
//! moving tiles (load, store, spill, restore), waiting at a blocksync (and on
//! which side), or idle. Recorded only when asked for (`--timeline`).

use spu_isa::Side;

/// A unit's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
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

/// Segments per unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityLog {
    pub units: Vec<Vec<Segment>>,
    open: Vec<Option<(u64, Activity, u32)>>,
    /// The work activity each unit returns to after a sync.
    working: Vec<(Activity, u32)>,
}

impl ActivityLog {
    pub fn new(units: usize) -> ActivityLog {
        ActivityLog {
            units: vec![Vec::new(); units],
            open: vec![None; units],
            working: vec![(Activity::Idle, 0); units],
        }
    }

    fn set(&mut self, u: usize, at: u64, activity: Activity, pass: u32) {
        if let Some((start, a, p)) = self.open[u].take()
            && at > start
        {
            let segs = &mut self.units[u];
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
        self.open[u] = (activity != Activity::Idle).then_some((at, activity, pass));
    }

    /// Unit `u` starts work of `activity` in `pass` at cycle `at`.
    pub fn start(&mut self, u: usize, at: u64, activity: Activity, pass: u32) {
        self.working[u] = (activity, pass);
        self.set(u, at, activity, pass);
    }

    /// Unit `u` arrives at a blocksync.
    pub fn wait(&mut self, u: usize, at: u64, side: Option<Side>) {
        let pass = self.working[u].1;
        self.set(u, at, Activity::Wait(side), pass);
    }

    /// Unit `u` is released from a blocksync at `at`.
    pub fn resume(&mut self, u: usize, at: u64) {
        let (a, p) = self.working[u];
        self.set(u, at, a, p);
    }

    /// Unit `u` finishes its work at `at`.
    pub fn finish(&mut self, u: usize, at: u64) {
        self.set(u, at, Activity::Idle, 0);
    }
}
