//! What a warp's memory access costs, once the execution core has done it: global
//! accesses coalesce into aligned transactions queued at the DRAM; shared-memory and
//! CB accesses serialise on bank conflicts; parameter reads serialise on distinct
//! addresses (constant cache); atomics take one transaction per thread, in lane
//! order. Global accesses are deferred ([`crate::timing::effects`]): their DRAM
//! transactions are queued, and loaded registers become ready, when the window of
//! cycles they belong to is applied. On machines with data caches, threads' local
//! accesses are deferred the same way ([`local_cost`]): they are cached DRAM
//! traffic there, at the per-thread interleaved addresses of [`local_addresses`].

use crate::exec::lanes::{Lanes, distinct, lanes_of, transactions};
use crate::exec::ops::Reg;
use crate::exec::space::Access;
use crate::observe::counters::{Traffic, UnitCounts};
use crate::timing::cache::{Key, LOCAL_BASE};
use crate::timing::effects::{Deferred, Effect, PENDING, Target};
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

/// The cost of an access the core made at cycle `now` by instruction `pc` with the
/// lanes of `exec` at addresses `addrs`; counts the unit's traffic and its
/// per-instruction events.
#[allow(clippy::too_many_arguments)]
#[inline]
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
        Access::Global { store, words } => {
            let bytes = timing.transaction_bytes();
            let segments = transactions(addrs, exec, words, bytes.trailing_zeros());
            // The DRAM answers when the deferred access is applied.
            let ready = if store { now } else { PENDING };
            let words = u64::from(crate::exec::lanes::count(exec)) * u64::from(words);
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
        Access::Atomic { words } => {
            let count = count_atomics(exec, words, pc, counts, traffic);
            // Without a lane there is no transaction to wait for.
            let ready = if count == 0 { now } else { PENDING };
            Cost {
                ready,
                busy: count.max(1),
            }
        }
        Access::Shared
        | Access::SharedAtomic
        | Access::Param
        | Access::Cb
        | Access::Local { .. } => {
            if let Access::Local { store, words } = access {
                traffic.add_local(store, words, exec);
            }
            let class = match access {
                Access::Shared | Access::SharedAtomic | Access::Local { .. } => TimingClass::Shared,
                Access::Param => TimingClass::Param,
                _ => TimingClass::Cb,
            };
            let waves = match access {
                Access::Param => distinct(addrs, exec, 2),
                // Each thread's local words are its own: no two lanes share a bank.
                Access::Local { .. } => 1,
                // CBs are banked like shared memory (thesis 5.2.1).
                _ if env.functional => 1,
                _ => env.waves.waves(pc as u32, addrs, exec, timing.banks()),
            }
            .max(1);
            // Atomics on one word take effect one after another.
            let waves = if access == Access::SharedAtomic && !env.functional {
                waves.max(same_word(addrs, exec))
            } else {
                waves
            };
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

/// Where a warp's threads sit, for the addresses of their local memory: the unit,
/// its block slot, the slots per unit and the threads of a block (whole warps), the
/// warp's index in its block and its running call's frame base in bytes.
#[derive(Debug, Clone, Copy)]
pub struct LocalPlace {
    pub unit: u32,
    pub slot: u32,
    pub slots: u32,
    pub block_threads: u32,
    pub warp: u32,
    pub frame: u32,
}

/// The addresses, in the caches' address space, of the `words` words each lane of
/// `exec` accessed at frame-relative local byte addresses `addrs`, on a machine of
/// `units` units. Word `d` of a thread's local memory sits `d * N * 4` bytes past
/// its first, where `N` is the number of threads the machine can hold (threads per
/// block x slots per unit x units), and a thread's first word is its index in its
/// block plus its block's place (`unit + units * slot`) times the block's threads.
/// So the same word of consecutive threads of a block is adjacent and a warp's
/// access to one local offset coalesces. This is the mapping of GPGPU-Sim
/// (`shader_core_ctx::translate_local_memaddr`, src/gpgpu-sim/shader.cc of
/// gpgpu-sim/gpgpu-sim_distribution, with `-gpgpu_local_mem_map 1`: `Dnew = D*N +
/// T%nTpC + nTpC*C`, `C = nS*K + S`).
pub fn local_addresses(
    place: LocalPlace,
    units: u32,
    addrs: &Lanes,
    exec: u32,
    words: u8,
) -> Vec<u64> {
    let n_tpc = u64::from(place.block_threads);
    let threads = n_tpc * u64::from(place.slots) * u64::from(units);
    let block = u64::from(place.unit) + u64::from(units) * u64::from(place.slot);
    let mut out = Vec::with_capacity(32 * usize::from(words));
    for l in lanes_of(exec) {
        let thread = n_tpc * block + u64::from(place.warp) * 32 + l as u64;
        let first = (u64::from(place.frame) + u64::from(addrs[l])) / 4;
        for j in 0..u64::from(words) {
            out.push(LOCAL_BASE + ((first + j) * threads + thread) * 4);
        }
    }
    out
}

/// The cost of a local access of the lanes of `exec` (not empty) at
/// frame-relative byte addresses `addrs` on a machine with data caches: counted as
/// its transactions (aligned segments, as a global access's) and recorded as a
/// deferred effect under `key` that goes through the caches; a load's `regs`
/// registers from `dst` are ready when its lines are.
#[allow(clippy::too_many_arguments)]
pub fn local_cost(
    place: LocalPlace,
    (store, words): (bool, u8),
    (dst, regs): (Reg, u8),
    addrs: &Lanes,
    exec: u32,
    (pc, key, target): (u32, Key, Target),
    env: &mut Env,
    counts: &mut UnitCounts,
    traffic: &mut Traffic,
) -> Cost {
    let now = key.0;
    let at = local_addresses(place, env.timing.units(), addrs, exec, words);
    let shift = env.timing.transaction_bytes().trailing_zeros();
    let mut segments: Vec<u64> = at.iter().map(|a| a >> shift).collect();
    segments.sort_unstable();
    segments.dedup();
    let segments = segments.len() as u64;
    traffic.add_local(store, words, exec);
    if store {
        traffic.local_store_transactions += segments;
    } else {
        traffic.local_load_transactions += segments;
    }
    counts.transactions[pc as usize] += segments;
    counts.mem_events[pc as usize] += segments;
    env.sink.push(Deferred {
        key,
        effect: Effect::Local {
            target,
            pc,
            store,
            dst,
            regs,
            addrs: at,
        },
    });
    Cost {
        ready: if store { now } else { PENDING },
        busy: segments.max(1),
    }
}

/// Counts the atomics of the lanes of `exec` (one transaction each way per lane,
/// each moving `words` words) for instruction `pc`; returns the lanes.
pub fn count_atomics(
    exec: u32,
    words: u8,
    pc: usize,
    counts: &mut UnitCounts,
    traffic: &mut Traffic,
) -> u64 {
    let count = u64::from(crate::exec::lanes::count(exec));
    traffic.load_words += count * u64::from(words);
    traffic.store_words += count * u64::from(words);
    traffic.load_transactions += count;
    traffic.store_transactions += count;
    counts.transactions[pc] += count;
    counts.mem_events[pc] += count;
    count
}

/// The most lanes of `exec` whose addresses fall in one 32-bit word.
fn same_word(addrs: &Lanes, exec: u32) -> u64 {
    let mut words: Vec<u32> = crate::exec::lanes::lanes_of(exec)
        .map(|l| addrs[l] / 4)
        .collect();
    words.sort_unstable();
    words
        .chunk_by(|a, b| a == b)
        .map(|run| run.len() as u64)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::same_word;

    #[test]
    fn shared_atomics_serialise_per_word() {
        let mut addrs = [0u32; 32];
        assert_eq!(same_word(&addrs, u32::MAX), 32);
        for (l, a) in addrs.iter_mut().enumerate() {
            *a = 4 * (l as u32 % 8) + (l as u32 & 1);
        }
        // Eight words, four lanes on each (two bytes of a word count once each).
        assert_eq!(same_word(&addrs, u32::MAX), 4);
        assert_eq!(same_word(&addrs, 0b1), 1);
        assert_eq!(same_word(&addrs, 0), 0);
    }
}
