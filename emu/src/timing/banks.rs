//! Shared-memory and CB bank conflicts: how many waves a warp access takes when
//! several lanes need different words of one bank (threads reading the same word
//! share one access), with a per-instruction cache of the last pattern.

use crate::exec::lanes::{Lanes, lanes_of};

/// Bank-conflict waves of the last access of each instruction. Waves depend only on
/// the lanes taking part and the addresses relative to the first one (shifting every
/// address keeps same-bank pairs together), so a repeated pattern is not recounted.
#[derive(Debug, Clone, Default)]
pub struct WaveCache(Vec<Option<(u32, Lanes, u64)>>);

impl WaveCache {
    pub fn new(instructions: usize) -> WaveCache {
        WaveCache(vec![None; instructions])
    }

    pub fn waves(&mut self, pc: u32, addrs: &Lanes, mask: u32, banks: u32) -> u64 {
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
}
