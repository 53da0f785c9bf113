//! Values of a warp's 32 lanes and what the core does with whole warps of them:
//! writing the lanes of a mask ([`write_masked`]), walking a mask's lanes, the
//! bounds of an access in one pass, the transactions an access coalesces into,
//! and the bit toggles of a transfer. (What an instruction computes is in
//! [`crate::sem`], applied over lanes by [`crate::exec::apply`].)

/// One value per lane.
pub type Lanes = [u32; 32];

/// One 64-bit value per lane (an integer read as its type, a float's pattern).
pub type Wide = [u64; 32];

/// Bit `l` of a lane mask, for each lane (a table so that testing a mask lane by
/// lane compiles to vector compares).
pub const LANE_BIT: [u32; 32] = {
    let mut b = [0; 32];
    let mut l = 0;
    while l < 32 {
        b[l] = 1 << l;
        l += 1;
    }
    b
};

/// The lanes of each byte of a mask: all ones where a bit is set.
static EXPAND8: [[u32; 8]; 256] = {
    let mut t = [[0; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut l = 0;
        while l < 8 {
            if b >> l & 1 != 0 {
                t[b][l] = u32::MAX;
            }
            l += 1;
        }
        b += 1;
    }
    t
};

/// All ones in the lanes of `mask`, zeros elsewhere.
#[inline(always)]
pub fn expand(mask: u32) -> Lanes {
    // Eight lanes at a time from a table: a loop testing each lane's bit
    // compiles, without SSE4.1, to two multiplications per four lanes.
    let mut out = [0; 32];
    for (k, lanes) in out.chunks_exact_mut(8).enumerate() {
        lanes.copy_from_slice(&EXPAND8[(mask >> (8 * k) & 0xff) as usize]);
    }
    out
}

/// The OR of the lanes of `mask`, and whether any of them lies outside `lo..hi`
/// (written four lanes at a time so that it compiles to vector compares).
#[inline]
pub fn or_outside(values: &Lanes, mask: u32, lo: u32, hi: u32) -> (u32, bool) {
    let mut or = [0u32; 4];
    let mut out = [0u32; 4];
    // Unsigned order as signed order of the values with the top bit flipped.
    let (lo, hi) = ((lo ^ 0x8000_0000) as i32, (hi ^ 0x8000_0000) as i32);
    for c in 0..8 {
        for k in 0..4 {
            let l = c * 4 + k;
            let on = u32::from(mask & LANE_BIT[l] != 0).wrapping_neg();
            let v = values[l];
            or[k] |= v & on;
            let b = (v ^ 0x8000_0000) as i32;
            out[k] |= (u32::from(b < lo) | u32::from(b >= hi)).wrapping_neg() & on;
        }
    }
    (
        or[0] | or[1] | or[2] | or[3],
        (out[0] | out[1] | out[2] | out[3]) != 0,
    )
}

/// The OR of the lanes of `mask`, and whether any of them is at least `size`
/// (inactive lanes count as 0, so a `size` of 0 always reports one outside).
/// [`or_outside`] with `lo = 0`, one subtraction per lane ([`all_below`]).
#[inline(always)]
pub fn or_at_least(values: &Lanes, mask: u32, size: u32) -> (u32, bool) {
    // A plain loop with scalar accumulators over the expanded mask: the loop
    // vectoriser turns it into one AND, subtraction, AND and OR per four lanes.
    let (mut or, mut below) = (0u32, u32::MAX);
    let on = expand(mask);
    for l in 0..32 {
        let v = values[l] & on[l];
        or |= v;
        below &= v.wrapping_sub(size);
    }
    let outside = if size <= 1 << 31 {
        !all_below(or, below)
    } else {
        lanes_of(mask).any(|l| values[l] >= size)
    };
    (or, outside)
}

/// Whether every one of some values is below a `size` of at most 2^31, from the
/// OR of the values and the AND of the differences `value - size`: a value below
/// 2^31 is below such a `size` exactly when the subtraction borrows (which sets
/// the top bit), and a value of 2^31 or more never is.
#[inline(always)]
pub fn all_below(or: u32, below: u32) -> bool {
    or >> 31 == 0 && below >> 31 != 0
}

/// Writes `value` into the lanes of `mask`.
#[inline(always)]
pub fn write_masked(dst: &mut Lanes, value: &Lanes, mask: u32) {
    if mask == u32::MAX {
        *dst = *value;
    } else {
        let on = expand(mask);
        for l in 0..32 {
            dst[l] = (value[l] & on[l]) | (dst[l] & !on[l]);
        }
    }
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

/// Transactions of `2^shift` bytes that an access of `words` 32-bit words per lane
/// (aligned to its size, a power of two) at the first-word addresses `addrs`
/// touches in the lanes of `mask`: each distinct aligned segment counts once, as
/// for a 32-bit access.
pub fn transactions(addrs: &Lanes, mask: u32, words: u8, shift: u32) -> u64 {
    if u32::from(words) * 4 <= 1 << shift {
        // Each lane's value lies in the segment of its first word.
        return distinct(addrs, mask, shift);
    }
    let mut segments: Vec<u32> = (0..u32::from(words))
        .flat_map(|j| lanes_of(mask).map(move |l| addrs[l].wrapping_add(4 * j) >> shift))
        .collect();
    segments.sort_unstable();
    segments.dedup();
    segments.len() as u64
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

/// Bits that change between consecutive lanes of `mask`, in lane order.
pub fn lane_toggles(values: &Lanes, mask: u32) -> u64 {
    if mask == u32::MAX {
        // Every lane: a plain loop the compiler vectorises (at most 31 * 32).
        let mut n = 0u32;
        for l in 1..32 {
            n += (values[l] ^ values[l - 1]).count_ones();
        }
        return u64::from(n);
    }
    toggles(lanes_of(mask).map(|l| values[l]))
}

/// Word `k` (0: low, 1: high) of each lane's 64-bit value.
#[inline]
pub fn word(values: &Wide, k: u32) -> Lanes {
    values.map(|v| (v >> (32 * k)) as u32)
}

/// Writes each lane's value, `words` (1 or 2) words wide, into the lanes of `mask`
/// of register `first` and, for 2, the next one.
pub fn write_wide(regs: &mut [Lanes], first: usize, values: &Wide, words: u8, mask: u32) {
    for k in 0..words {
        write_masked(
            &mut regs[first + usize::from(k)],
            &word(values, u32::from(k)),
            mask,
        );
    }
}

/// [`lane_toggles`] of values `words` (1 or 2) words wide: each word position
/// on its own wires, the low words, then the high ones.
pub fn wide_toggles(values: &Wide, mask: u32, words: u8) -> u64 {
    (0..u32::from(words))
        .map(|k| lane_toggles(&word(values, k), mask))
        .sum()
}

/// Lanes in `mask`: a full warp without counting bits (the default x86-64 target
/// has no population-count instruction).
#[inline(always)]
pub fn count(mask: u32) -> u32 {
    if mask == u32::MAX {
        32
    } else {
        mask.count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescing_counts_aligned_segments() {
        let unit_stride: Lanes = std::array::from_fn(|l| 0x1000 + 4 * l as u32);
        assert_eq!(distinct(&unit_stride, u32::MAX, 5), 4);
        // A .v4 access of 16-byte elements: 512 bytes, four 128-byte segments, or
        // sixteen 32-byte ones, and 128 4-byte ones.
        let vec4: Lanes = std::array::from_fn(|l| 16 * l as u32);
        assert_eq!(transactions(&vec4, u32::MAX, 4, 7), 4);
        assert_eq!(transactions(&vec4, u32::MAX, 4, 5), 16);
        assert_eq!(transactions(&vec4, u32::MAX, 4, 2), 128);
        assert_eq!(
            transactions(&vec4, 0b11, 2, 2),
            4,
            "two lanes of 64-bit values"
        );
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
    fn expand_sets_every_lane_of_the_mask_and_no_other() {
        for mask in [
            0,
            1,
            0x8000_0000,
            u32::MAX,
            0x1234_5678,
            0xf0f0_0f0f,
            0x00ff_ff00,
        ] {
            let on = expand(mask);
            for (l, &v) in on.iter().enumerate() {
                assert_eq!(
                    v,
                    if mask >> l & 1 != 0 { u32::MAX } else { 0 },
                    "{mask:#x} lane {l}"
                );
            }
        }
    }

    #[test]
    fn toggles_of_a_full_warp_are_those_of_its_lanes_in_order() {
        let values: Lanes = std::array::from_fn(|l| (l as u32).wrapping_mul(0x9e37_79b9));
        let by_lane = toggles(values.iter().copied());
        assert_eq!(lane_toggles(&values, u32::MAX), by_lane);
        assert_eq!(lane_toggles(&[u32::MAX; 32], u32::MAX), 0);
        let alternating: Lanes = std::array::from_fn(|l| if l % 2 == 0 { 0 } else { u32::MAX });
        assert_eq!(lane_toggles(&alternating, u32::MAX), 31 * 32);
    }
}
