//! What an issue touches of its unit besides the code ([`Site`]), taken apart
//! from the unit once per run of steps, and the count every issued instruction
//! adds ([`count`]); shared by the general issue path ([`super::issue`]) and the
//! fast paths ([`super::fast`]).

use super::Unit;
use super::code::Code;
use crate::exec::cb::Port;
use crate::machine::UnitLabel;
use crate::observe::counters::{Traffic, UnitCounts};

/// Counts an issued instruction and what its memory access cost.
pub(super) fn count(counts: &mut UnitCounts, pc: u32, exec: u32) {
    let pc = pc as usize;
    counts.warp_instructions += 1;
    counts.issued[pc] += 1;
    counts.threads[pc] += u64::from(crate::exec::lanes::count(exec));
}

/// What an issue touches of its unit besides the code: its counters, traffic and
/// CB ports, its name and index, and the sequence number of its effects.
pub(super) struct Site<'u> {
    pub(super) counts: &'u mut UnitCounts,
    pub(super) traffic: &'u mut Traffic,
    pub(super) ports: &'u mut [Option<Port>; 4],
    pub(super) slot_ports: &'u mut [[Option<Port>; 4]],
    pub(super) label: UnitLabel,
    pub(super) unit: usize,
    pub(super) seq: &'u mut u64,
    /// The unit's view of its own stores (kept in timing mode for `printf`).
    pub(super) stores: &'u mut crate::timing::window::StoreLog,
}

impl Unit {
    /// The unit's code, the rest of what an issue touches, and its wake cycle
    /// (`None` when it runs no code).
    #[inline(always)]
    pub(super) fn code_and_site(&mut self) -> Option<(&mut Code, Site<'_>, &mut u64)> {
        let Unit {
            work: super::Work::Code(code),
            counts,
            traffic,
            ports,
            slot_ports,
            label,
            id,
            seq,
            wake,
            stores,
            ..
        } = self
        else {
            return None;
        };
        let site = Site {
            counts,
            traffic,
            ports,
            slot_ports,
            label: *label,
            unit: *id,
            seq,
            stores,
        };
        Some((code, site, wake))
    }
}
