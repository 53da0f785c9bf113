//! What a page (`--html`) shows of one unit beyond its totals: the traffic through
//! each of its CB ports, when its rendezvous completed, and the scheduler time each
//! instruction took on it. Taken once at the end of a run, and only when the run
//! records activity, so other runs pay nothing.

use crate::exec::cb::Port;
use crate::exec::ops::Program;
use crate::observe::activity::UnitActivity;
use crate::observe::counters::UnitCounts;
use spu_isa::Side;

/// Words and bit toggles through one end of a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortTraffic {
    pub reads: u64,
    pub writes: u64,
    pub read_toggles: u64,
    pub write_toggles: u64,
}

/// One instruction's time on one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcTime {
    pub pc: u32,
    /// Warp instructions issued.
    pub issued: u64,
    /// Scheduler cycles lost while it was next (every stall reason).
    pub stall_cycles: u64,
}

/// A unit's detail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitDetail {
    /// Traffic per port, indexed by side code (`None`: no link on that side).
    pub ports: [Option<PortTraffic>; 4],
    /// Completed directional rendezvous: the cycle both ends went on, and this
    /// unit's side of the link.
    pub handovers: Vec<(u64, Side)>,
    /// Every rendezvous by side code (`handovers` may be thinned).
    pub handover_counts: [u64; 4],
    /// Instructions the unit issued or stalled on, in PC order.
    pub pcs: Vec<PcTime>,
}

impl UnitDetail {
    pub fn new(
        activity: &UnitActivity,
        ports: &[Option<Port>; 4],
        counts: &UnitCounts,
        program: &Program,
    ) -> UnitDetail {
        let ports = ports.each_ref().map(|p| {
            p.as_ref().map(|p| PortTraffic {
                reads: p.reads,
                writes: p.writes,
                read_toggles: p.read_toggles,
                write_toggles: p.write_toggles,
            })
        });
        let pcs = (0..counts.issued.len())
            .filter_map(|pc| {
                let (issued, _) = counts.of(program, pc);
                let stall_cycles: u64 = counts.stalls[pc].iter().sum();
                (issued > 0 || stall_cycles > 0).then_some(PcTime {
                    pc: pc as u32,
                    issued,
                    stall_cycles,
                })
            })
            .collect();
        UnitDetail {
            ports,
            handovers: activity.handovers.clone(),
            handover_counts: activity.handover_counts,
            pcs,
        }
    }
}
