//! Shared-memory and CB bank conflicts: how many waves a warp access takes when
//! several lanes need different words of one bank (threads reading the same word
//! share one access), with a per-instruction cache of the last pattern.

use crate::exec::lanes::{Lanes, expand, lanes_of};

/// Bank-conflict waves of recent accesses, keyed by instruction and lane mask and
/// checked against the addresses of the active lanes relative to the first one
/// (shifting every address by whole words rotates the banks, which keeps same-bank
/// pairs together). Direct-mapped: a wavefront changes masks every step, and the
/// same (instruction, mask) pairs come back with every tile and block, often on
/// other units, so one cache serves all the units simulated together. Waves are a
/// function of the key, so the cache never changes a result.
#[derive(Debug, Clone)]
pub struct WaveCache {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Instruction and mask; `u64::MAX` for an empty slot.
    key: u64,
    rel: Lanes,
    waves: u64,
}

/// log2 of the number of slots.
const BITS: u32 = 14;

impl Default for WaveCache {
    fn default() -> WaveCache {
        let empty = Entry {
            key: u64::MAX,
            rel: [0; 32],
            waves: 1,
        };
        WaveCache {
            entries: vec![empty; 1 << BITS],
        }
    }
}

impl WaveCache {
    pub fn new() -> WaveCache {
        WaveCache::default()
    }

    #[inline]
    pub fn waves(&mut self, pc: u32, addrs: &Lanes, mask: u32, banks: u32) -> u64 {
        let key = u64::from(pc) << 32 | u64::from(mask);
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - BITS)) as usize;
        let first = addrs[(mask.trailing_zeros() & 31) as usize];
        let e = &mut self.entries[slot];
        let rel = relative(addrs, mask, first);
        if e.key == key && rel.iter().zip(&e.rel).fold(0, |d, (a, b)| d | (a ^ b)) == 0 {
            return e.waves;
        }
        let waves = bank_waves(addrs, mask, banks);
        *e = Entry { key, rel, waves };
        waves
    }
}

/// The addresses of the lanes of `mask` relative to `first` (0 in other lanes).
#[inline(always)]
fn relative(addrs: &Lanes, mask: u32, first: u32) -> Lanes {
    // Plain loops: the loop vectoriser handles them.
    let mut rel = [0u32; 32];
    if mask == u32::MAX {
        // A full warp: the same loop without the lane mask.
        for l in 0..32 {
            rel[l] = addrs[l].wrapping_sub(first);
        }
    } else {
        let on = expand(mask);
        for l in 0..32 {
            rel[l] = addrs[l].wrapping_sub(first) & on[l];
        }
    }
    rel
}

/// Shared-memory waves: the most distinct words any one bank must serve (threads
/// reading the same word share one access).
fn bank_waves(addrs: &Lanes, mask: u32, banks: u32) -> u64 {
    bank_waves_near(addrs, mask, banks).unwrap_or_else(|| bank_waves_any(addrs, mask, banks))
}

/// Waves for any bank count and any spread of addresses.
fn bank_waves_any(addrs: &Lanes, mask: u32, banks: u32) -> u64 {
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

/// One pass over the lanes for the common case: power-of-two banks and rows
/// within 32 of the first lane's. Counts, per bank, the distinct rows seen.
fn bank_waves_near(addrs: &Lanes, mask: u32, banks: u32) -> Option<u64> {
    if !banks.is_power_of_two() || mask == 0 || banks > 64 {
        return None;
    }
    let shift = banks.trailing_zeros();
    let row0 = (addrs[mask.trailing_zeros() as usize] / 4) >> shift;
    let mut rows = [0u64; 64];
    let mut count = [0u8; 64];
    let mut waves = 1u8;
    for l in lanes_of(mask) {
        let w = addrs[l] / 4;
        let bank = (w & (banks - 1)) as usize;
        let row = (w >> shift).wrapping_sub(row0).wrapping_add(32);
        if row >= 64 {
            return None;
        }
        let bit = 1u64 << row;
        if rows[bank] & bit == 0 {
            rows[bank] |= bit;
            count[bank] += 1;
            waves = waves.max(count[bank]);
        }
    }
    Some(u64::from(waves))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_one_pass_count_agrees_with_the_general_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let spread = [8u64, 64, 1024, 1 << 20][(next() % 4) as usize];
            let base = (next() % 4096) as u32 * 4;
            let addrs: Lanes = std::array::from_fn(|_| base + 4 * (next() % spread) as u32);
            let mask = next() as u32 | 1;
            for banks in [16, 32] {
                if let Some(w) = bank_waves_near(&addrs, mask, banks) {
                    assert_eq!(w, bank_waves_any(&addrs, mask, banks), "{addrs:?} {mask:x}");
                }
            }
        }
    }

    #[test]
    fn a_repeated_pattern_at_another_base_hits_the_cache() {
        let mut c = WaveCache::new();
        let a: Lanes = std::array::from_fn(|l| 8 * l as u32);
        let b: Lanes = a.map(|x| x + 4 * 7);
        assert_eq!(c.waves(0, &a, u32::MAX, 32), 2);
        assert_eq!(c.waves(0, &b, u32::MAX, 32), 2);
        assert_eq!(c.waves(0, &b, 0xffff, 32), 1, "another mask is another key");
        assert_eq!(c.waves(0, &b, u32::MAX, 32), 2);
    }
}
