//! Memory accesses of one warp instruction: address checks, the functional read or
//! write, and their cost: global accesses coalesce into aligned transactions queued
//! at the DRAM; shared-memory accesses serialise on bank conflicts; parameter reads
//! serialise on distinct addresses (constant cache); atomics take one transaction
//! per thread, in lane order.

use crate::counters::Component;
use crate::exec::Lanes;
use crate::fault::FaultKind;
use crate::program::Kind;
use crate::unit::Env;
use spu_isa::{AtomOp, Space, TimingClass, Ty};

/// A fault and the lane that caused it.
pub type LaneFault = (FaultKind, u32);

/// One warp's memory access.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub space: Space,
    pub addrs: &'a Lanes,
    /// Values to store; `None` for loads.
    pub data: Option<&'a Lanes>,
    /// Lanes taking part.
    pub exec: u32,
    pub pc: u32,
    pub now: u64,
    /// For CB spaces: the side and the unit's link there, if it has one.
    pub cb_link: Option<(spu_isa::Side, Option<usize>)>,
}

/// What an access produced and cost.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    /// Loaded values (loads and atomics).
    pub loaded: Option<Lanes>,
    /// Cycle the loaded values are ready.
    pub ready: u64,
    /// Cycles the load/store pipeline is occupied.
    pub busy: u64,
    /// The component charged and how many events.
    pub events: (Component, u64),
}

/// Lanes set in a mask, lowest first.
pub fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            l
        })
    })
}

/// Bits that change between consecutive words of a transfer.
pub fn toggles(words: impl Iterator<Item = u32>) -> u64 {
    let mut prev: Option<u32> = None;
    let mut n = 0u64;
    for w in words {
        if let Some(p) = prev {
            n += u64::from((p ^ w).count_ones());
        }
        prev = Some(w);
    }
    n
}

/// Number of distinct `addr >> shift` values among the lanes of `mask`.
fn distinct(addrs: &Lanes, mask: u32, shift: u32) -> u64 {
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

/// Bank-conflict waves of the last access of each instruction. Waves depend only on
/// the lanes taking part and the addresses relative to the first one (shifting every
/// address keeps same-bank pairs together), so a repeated pattern is not recounted.
#[derive(Debug, Clone, Default)]
pub struct WaveCache(Vec<Option<(u32, Lanes, u64)>>);

impl WaveCache {
    pub fn new(instructions: usize) -> WaveCache {
        WaveCache(vec![None; instructions])
    }

    fn waves(&mut self, pc: u32, addrs: &Lanes, mask: u32, banks: u32) -> u64 {
        // Inactive lanes are part of the key too: that can only cost a recount.
        let first = addrs[(mask.trailing_zeros() as usize).min(31)];
        let rel: Lanes = addrs.map(|a| a.wrapping_sub(first));
        let slot = &mut self.0[pc as usize];
        if let Some((m, r, w)) = slot
            && *m == mask
            && *r == rel
        {
            return *w;
        }
        let w = bank_waves(addrs, mask, banks);
        *slot = Some((mask, rel, w));
        w
    }
}

/// Shared-memory waves: the most distinct words any one bank must serve (threads
/// reading the same word share one access).
fn bank_waves(addrs: &Lanes, mask: u32, banks: u32) -> u64 {
    // A word is (row, bank) with word = row * banks + bank; count distinct rows per
    // bank with one bitset per bank when the rows span fewer than 64.
    let pow2 = banks.is_power_of_two();
    let shift = banks.trailing_zeros();
    let split = |addr: u32| {
        let w = addr / 4;
        if pow2 {
            (w & (banks - 1), w >> shift)
        } else {
            (w % banks, w / banks)
        }
    };
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    for (l, &a) in addrs.iter().enumerate() {
        if mask >> l & 1 != 0 {
            let (_, row) = split(a);
            lo = lo.min(row);
            hi = hi.max(row);
        }
    }
    if lo == u32::MAX {
        return 1;
    }
    if hi - lo < 64 {
        let mut rows = [0u64; 64];
        for (l, &a) in addrs.iter().enumerate() {
            if mask >> l & 1 != 0 {
                let (bank, row) = split(a);
                rows[bank as usize] |= 1 << (row - lo);
            }
        }
        return u64::from(
            rows[..banks as usize]
                .iter()
                .map(|r| r.count_ones())
                .max()
                .unwrap_or(1)
                .max(1),
        );
    }
    let mut words = [0u32; 32];
    let mut n = 0;
    for l in lanes_of(mask) {
        words[n] = addrs[l] / 4;
        n += 1;
    }
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u8; 64];
    let mut prev = None;
    for &word in words.iter() {
        if prev != Some(word) {
            per_bank[(word % banks) as usize] += 1;
            prev = Some(word);
        }
    }
    u64::from(per_bank.iter().copied().max().unwrap_or(1).max(1))
}

/// Alignment and bounds of an access to a space of `size` bytes.
fn check_bounded(
    space: Space,
    addrs: &Lanes,
    exec: u32,
    size: u32,
    store: bool,
) -> Result<(), LaneFault> {
    for l in lanes_of(exec) {
        let addr = addrs[l];
        if addr % 4 != 0 {
            return Err((FaultKind::Misaligned { space, addr }, l as u32));
        }
        if addr >= size {
            return Err((
                FaultKind::OutOfRange {
                    space,
                    addr,
                    size,
                    store,
                },
                l as u32,
            ));
        }
    }
    Ok(())
}

fn check_global(addr: u32, lane: usize, store: bool, env: &Env) -> Result<(), LaneFault> {
    if addr % 4 != 0 {
        return Err((
            FaultKind::Misaligned {
                space: Space::Global,
                addr,
            },
            lane as u32,
        ));
    }
    if env.memory.region_of(addr).is_none() {
        return Err((FaultKind::Unmapped { addr, store }, lane as u32));
    }
    Ok(())
}

/// A load or store to global, shared or parameter space.
pub fn access(req: Request, shared: &mut [u32], env: &mut Env) -> Result<Access, LaneFault> {
    let Request {
        space,
        addrs,
        data,
        exec,
        pc,
        now,
        cb_link,
    } = req;
    let store = data.is_some();
    let timing = env.timing;
    let mut loaded = [0u32; 32];
    match space {
        Space::Global => {
            for l in lanes_of(exec) {
                check_global(addrs[l], l, store, env)?;
            }
            for l in lanes_of(exec) {
                match data {
                    Some(d) => env.memory.write(addrs[l], d[l]),
                    None => loaded[l] = env.memory.read(addrs[l]),
                }
            }
            let moved: &Lanes = data.unwrap_or(&loaded);
            env.traffic.toggles += toggles(lanes_of(exec).map(|l| moved[l]));
            let bytes = timing.transaction_bytes();
            let segments = distinct(addrs, exec, bytes.trailing_zeros());
            let mut ready = now;
            if !env.functional {
                for i in 0..segments {
                    ready = ready.max(env.dram.request(now + i, bytes));
                }
            }
            let words = u64::from(exec.count_ones());
            let t = &mut *env.traffic;
            if store {
                t.store_words += words;
                t.store_transactions += segments;
            } else {
                t.load_words += words;
                t.load_transactions += segments;
            }
            env.pcs[pc as usize].transactions += segments;
            Ok(Access {
                loaded: (!store).then_some(loaded),
                ready,
                busy: segments.max(1),
                events: (Component::Dramp, segments),
            })
        }
        Space::Shared | Space::Param => {
            let (size, class, component) = if space == Space::Shared {
                (
                    shared.len() as u32 * 4,
                    TimingClass::Shared,
                    Component::Shrdp,
                )
            } else {
                (
                    env.params.len() as u32 * 4,
                    TimingClass::Param,
                    Component::Ccp,
                )
            };
            check_bounded(space, addrs, exec, size, store)?;
            match (space, data) {
                (Space::Shared, Some(d)) => {
                    for l in lanes_of(exec) {
                        shared[(addrs[l] / 4) as usize] = d[l];
                    }
                }
                (Space::Shared, None) if exec == u32::MAX => {
                    for (v, &a) in loaded.iter_mut().zip(addrs) {
                        *v = shared[(a / 4) as usize];
                    }
                }
                (Space::Shared, None) => {
                    for l in lanes_of(exec) {
                        loaded[l] = shared[(addrs[l] / 4) as usize];
                    }
                }
                _ => {
                    for l in lanes_of(exec) {
                        loaded[l] = env.params[(addrs[l] / 4) as usize];
                    }
                }
            }
            let waves = if space == Space::Shared {
                if env.functional {
                    1
                } else {
                    env.waves.waves(pc, addrs, exec, timing.banks())
                }
            } else {
                distinct(addrs, exec, 2)
            }
            .max(1);
            env.pcs[pc as usize].conflict_waves += waves - 1;
            let interval = timing.interval(class);
            Ok(Access {
                loaded: (!store).then_some(loaded),
                ready: now + timing.latency(class) + (waves - 1) * interval,
                busy: waves * interval,
                events: (component, waves),
            })
        }
        _ => {
            let lane0 = exec.trailing_zeros();
            let (side, link) = cb_link.unwrap_or((spu_isa::Side::North, None));
            let link = link.ok_or((FaultKind::NoCbPort { side }, lane0))?;
            let link = &mut env.links[link];
            let size = link.words() * 4;
            check_bounded(space, addrs, exec, size, store)?;
            for l in lanes_of(exec) {
                match data {
                    Some(d) => link.write(addrs[l] / 4, d[l]),
                    None => loaded[l] = link.read(addrs[l] / 4),
                }
            }
            // CBs are banked like shared memory (thesis 5.2.1).
            let waves = if env.functional {
                1
            } else {
                env.waves.waves(pc, addrs, exec, timing.banks()).max(1)
            };
            env.pcs[pc as usize].conflict_waves += waves - 1;
            let interval = timing.interval(TimingClass::Cb);
            Ok(Access {
                loaded: (!store).then_some(loaded),
                ready: now + timing.latency(TimingClass::Cb) + (waves - 1) * interval,
                busy: waves * interval,
                events: (Component::Cbp, waves),
            })
        }
    }
}

/// Global atomics: `a` is the operand (compare value for CAS), `b` the CAS swap value.
pub fn atomic(
    kind: Kind,
    req: Request,
    a: &Lanes,
    b: &Lanes,
    env: &mut Env,
) -> Result<Access, LaneFault> {
    let mut old = [0u32; 32];
    let mut ready = req.now;
    let mut count = 0u64;
    for l in lanes_of(req.exec) {
        let addr = req.addrs[l];
        check_global(addr, l, true, env)?;
        let prev = env.memory.read(addr);
        let new = match kind {
            Kind::Atom(op, ty) => match (op, ty) {
                (AtomOp::Add, _) => prev.wrapping_add(a[l]),
                (AtomOp::Min, Ty::S32) => (prev as i32).min(a[l] as i32) as u32,
                (AtomOp::Max, Ty::S32) => (prev as i32).max(a[l] as i32) as u32,
                (AtomOp::Min, _) => prev.min(a[l]),
                (AtomOp::Max, _) => prev.max(a[l]),
                (AtomOp::Exch, _) => a[l],
                (AtomOp::And, _) => prev & a[l],
                (AtomOp::Or, _) => prev | a[l],
                (AtomOp::Xor, _) => prev ^ a[l],
                (AtomOp::Inc, _) => {
                    if prev >= a[l] {
                        0
                    } else {
                        prev + 1
                    }
                }
                (AtomOp::Dec, _) => {
                    if prev == 0 || prev > a[l] {
                        a[l]
                    } else {
                        prev - 1
                    }
                }
            },
            _ if prev == a[l] => b[l],
            _ => prev,
        };
        env.memory.write(addr, new);
        old[l] = prev;
        ready = ready.max(
            env.dram
                .request(req.now + count, env.timing.transaction_bytes()),
        );
        count += 1;
    }
    let t = &mut *env.traffic;
    t.toggles += toggles(lanes_of(req.exec).map(|l| old[l]));
    t.load_words += count;
    t.store_words += count;
    t.load_transactions += count;
    t.store_transactions += count;
    env.pcs[req.pc as usize].transactions += count;
    Ok(Access {
        loaded: Some(old),
        ready,
        busy: count.max(1),
        events: (Component::Dramp, count),
    })
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

    #[test]
    fn bank_conflicts_count_distinct_words_per_bank() {
        let linear: Lanes = std::array::from_fn(|l| 4 * l as u32);
        assert_eq!(bank_waves(&linear, u32::MAX, 32), 1);
        let broadcast: Lanes = [8; 32];
        assert_eq!(bank_waves(&broadcast, u32::MAX, 32), 1);
        let stride2: Lanes = std::array::from_fn(|l| 8 * l as u32);
        assert_eq!(bank_waves(&stride2, u32::MAX, 32), 2);
        let column: Lanes = std::array::from_fn(|l| 128 * l as u32);
        assert_eq!(bank_waves(&column, u32::MAX, 32), 32);
        let pairs: Lanes = std::array::from_fn(|l| 4 * (l as u32 % 2) + 128 * (l as u32 / 16));
        assert_eq!(
            bank_waves(&pairs, u32::MAX, 32),
            2,
            "two words per bank, rest broadcast"
        );
        let far: Lanes = std::array::from_fn(|l| if l == 0 { 0 } else { 4 * 32 * 1000 });
        assert_eq!(
            bank_waves(&far, u32::MAX, 32),
            2,
            "rows far apart take the slow path"
        );
        let odd: Lanes = std::array::from_fn(|l| 4 * 33 * l as u32);
        assert_eq!(bank_waves(&odd, u32::MAX, 33), 32, "non-power-of-two banks");
    }
}
