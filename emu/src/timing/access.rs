//! What a warp's memory access costs, once the execution core has done it: global
//! accesses coalesce into aligned transactions queued at the DRAM; shared-memory and
//! CB accesses serialise on bank conflicts; parameter reads serialise on distinct
//! addresses (constant cache); atomics take one transaction per thread, in lane
//! order. Global accesses are deferred ([`crate::timing::effects`]): their DRAM
//! transactions are queued, and loaded registers become ready, when the window of
//! cycles they belong to is applied.

use crate::exec::lanes::{Lanes, lanes_of};
use crate::exec::step::Access;
use crate::observe::counters::{Traffic, UnitCounts};
use crate::timing::effects::PENDING;
use crate::timing::env::Env;
use spu_isa::TimingClass;

/// What an access cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// Cycle the loaded values are ready.
    pub ready: u64,
    /// Cycles the load/store pipeline is occupied.
    pub busy: u64,
}

/// Number of distinct `addr >> shift` values among the lanes of `mask`.
pub fn distinct(addrs: &Lanes, mask: u32, shift: u32) -> u64 {
    if mask == 0 {
        return 0;
    }
    // Fast path: the active lanes are one contiguous run reading consecutive words
    // (the coalesced case), so the segments form one increasing range.
    let first = mask.trailing_zeros() as usize;
    let run = mask >> first;
    let base = addrs[first];
    if run & run.wrapping_add(1) == 0 {
        let n = run.count_ones() as usize;
        let end = base.wrapping_add(4 * (n as u32 - 1));
        if end >= base
            && (first..first + n).all(|l| addrs[l] == base.wrapping_add(4 * (l - first) as u32))
        {
            return u64::from((end >> shift) - (base >> shift) + 1);
        }
    }
    let mut keys = [0u32; 32];
    let mut n = 0;
    for l in lanes_of(mask) {
        keys[n] = addrs[l] >> shift;
        n += 1;
    }
    let keys = &mut keys[..n];
    keys.sort_unstable();
    1 + keys.windows(2).filter(|w| w[0] != w[1]).count() as u64
}

/// The cost of an access the core made at cycle `now` by instruction `pc` with the
/// lanes of `exec` at addresses `addrs`; counts the unit's traffic and its
/// per-instruction events.
#[allow(clippy::too_many_arguments)]
pub fn cost(
    access: Access,
    addrs: &Lanes,
    exec: u32,
    pc: u32,
    now: u64,
    env: &mut Env,
    counts: &mut UnitCounts,
    traffic: &mut Traffic,
) -> Cost {
    let timing = env.timing;
    let pc = pc as usize;
    match access {
        Access::None => Cost {
            ready: now,
            busy: 1,
        },
        Access::Global { store } => {
            let bytes = timing.transaction_bytes();
            let segments = distinct(addrs, exec, bytes.trailing_zeros());
            // The DRAM answers when the deferred access is applied.
            let ready = if store { now } else { PENDING };
            let words = u64::from(exec.count_ones());
            if store {
                traffic.store_words += words;
                traffic.store_transactions += segments;
            } else {
                traffic.load_words += words;
                traffic.load_transactions += segments;
            }
            counts.transactions[pc] += segments;
            counts.mem_events[pc] += segments;
            Cost {
                ready,
                busy: segments.max(1),
            }
        }
        Access::Atomic => {
            let count = u64::from(exec.count_ones());
            // Without a lane there is no transaction to wait for.
            let ready = if count == 0 { now } else { PENDING };
            traffic.load_words += count;
            traffic.store_words += count;
            traffic.load_transactions += count;
            traffic.store_transactions += count;
            counts.transactions[pc] += count;
            counts.mem_events[pc] += count;
            Cost {
                ready,
                busy: count.max(1),
            }
        }
        Access::Shared | Access::Param | Access::Cb => {
            let class = match access {
                Access::Shared => TimingClass::Shared,
                Access::Param => TimingClass::Param,
                _ => TimingClass::Cb,
            };
            let waves = match access {
                Access::Param => distinct(addrs, exec, 2),
                // CBs are banked like shared memory (thesis 5.2.1).
                _ if env.functional => 1,
                _ => env.waves.waves(pc as u32, addrs, exec, timing.banks()),
            }
            .max(1);
            counts.conflict_waves[pc] += waves - 1;
            counts.mem_events[pc] += waves;
            let interval = timing.interval(class);
            Cost {
                ready: now + timing.latency(class) + (waves - 1) * interval,
                busy: waves * interval,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescing_counts_aligned_segments() {
        let unit_stride: Lanes = std::array::from_fn(|l| 0x1000 + 4 * l as u32);
        assert_eq!(distinct(&unit_stride, u32::MAX, 5), 4);
        let strided: Lanes = std::array::from_fn(|l| 0x1000 + 128 * l as u32);
        assert_eq!(distinct(&strided, u32::MAX, 5), 32);
        assert_eq!(distinct(&strided, 0b101, 5), 2);
        assert_eq!(distinct(&strided, 0, 5), 0);
        let offset: Lanes = std::array::from_fn(|l| 0x1010 + 4 * l as u32);
        assert_eq!(
            distinct(&offset, u32::MAX, 5),
            5,
            "misaligned run spans 5 segments"
        );
        assert_eq!(
            distinct(&unit_stride, 0x0000_ff00, 5),
            1,
            "lanes 8..16: one segment"
        );
        assert_eq!(
            distinct(&unit_stride, 0x0000_0101, 5),
            2,
            "lanes 0 and 8: a gap"
        );
        let reversed: Lanes = std::array::from_fn(|l| 0x2000 - 4 * l as u32);
        assert_eq!(distinct(&reversed, u32::MAX, 5), 5);
    }
}
