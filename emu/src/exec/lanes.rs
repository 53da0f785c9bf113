//! Instruction semantics on 32-bit lane values, as the reference page
//! (`isa-spec/ISA.md`) defines them: wrapping integers, total division (no traps),
//! IEEE f32 with saturating conversions, atomics. This is the one copy of the
//! semantics every execution mode calls. Each operation is applied to a whole warp
//! at once so the lane loop stays branch-free; results reach a register only in the
//! lanes of the execution mask ([`write_masked`]).

use crate::exec::ops::{BinOp, UnOp};
use spu_isa::{Cmp, Ty};

/// One value per lane.
pub type Lanes = [u32; 32];

/// One 64-bit value per lane (an integer read as its type, a float's pattern).
pub type Wide = [u64; 32];

#[inline(always)]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[inline(always)]
fn map2(a: &Lanes, b: &Lanes, op: impl Fn(u32, u32) -> u32) -> Lanes {
    std::array::from_fn(|l| op(a[l], b[l]))
}

#[inline(always)]
fn map1(a: &Lanes, op: impl Fn(u32) -> u32) -> Lanes {
    std::array::from_fn(|l| op(a[l]))
}

fn div_s(a: i32, b: i32) -> i32 {
    match b {
        // ISA notes: s32 division by zero gives -1 for a >= 0 and 1 otherwise.
        0 if a >= 0 => -1,
        0 => 1,
        _ => a.wrapping_div(b),
    }
}

/// IEEE 754-2019 minimumNumber / maximumNumber (`max` when `larger`), for any float
/// type: a NaN operand gives the other one (`None` when both are NaN, for the caller's
/// canonical NaN), and -0 < +0 in either order. The f32 word path and the general
/// path of `scalar` both use it.
pub(crate) fn min_max_number<T: Copy + PartialOrd>(
    x: T,
    y: T,
    larger: bool,
    negative: impl Fn(T) -> bool,
) -> Option<T> {
    let nan = |v: T| v.partial_cmp(&v).is_none();
    match (nan(x), nan(y)) {
        (true, true) => None,
        (true, false) => Some(y),
        (false, true) => Some(x),
        _ if x == y => Some(if negative(x) != larger { x } else { y }),
        _ if (x < y) != larger => Some(x),
        _ => Some(y),
    }
}

fn min_f32(x: f32, y: f32) -> f32 {
    min_max_number(x, y, false, f32::is_sign_negative).unwrap_or(f32::from_bits(CANONICAL_NAN_F32))
}

fn max_f32(x: f32, y: f32) -> f32 {
    min_max_number(x, y, true, f32::is_sign_negative).unwrap_or(f32::from_bits(CANONICAL_NAN_F32))
}

const CANONICAL_NAN_F32: u32 = 0x7fff_ffff;

/// The pattern of an arithmetic result: a NaN is the canonical NaN (ISA notes,
/// as the general path's [`crate::exec::scalar`] gives it).
#[inline(always)]
fn bits(r: f32) -> u32 {
    if r.is_nan() {
        CANONICAL_NAN_F32
    } else {
        r.to_bits()
    }
}

/// `d = a op b` on every lane.
pub fn binary(op: BinOp, a: &Lanes, b: &Lanes) -> Lanes {
    use BinOp as B;
    match op {
        B::AddI => map2(a, b, u32::wrapping_add),
        B::AddF => map2(a, b, |x, y| bits(f(x) + f(y))),
        B::SubI => map2(a, b, u32::wrapping_sub),
        B::SubF => map2(a, b, |x, y| bits(f(x) - f(y))),
        B::MulLo => map2(a, b, u32::wrapping_mul),
        B::MulHiU => map2(a, b, |x, y| ((u64::from(x) * u64::from(y)) >> 32) as u32),
        B::MulHiS => map2(a, b, |x, y| {
            ((i64::from(x as i32) * i64::from(y as i32)) >> 32) as u32
        }),
        B::MulF => map2(a, b, |x, y| bits(f(x) * f(y))),
        B::DivU => map2(a, b, |x, y| x.checked_div(y).unwrap_or(u32::MAX)),
        B::DivS => map2(a, b, |x, y| div_s(x as i32, y as i32) as u32),
        B::DivF => map2(a, b, |x, y| bits(f(x) / f(y))),
        B::RemU => map2(a, b, |x, y| x.checked_rem(y).unwrap_or(x)),
        B::RemS => map2(a, b, |x, y| {
            if y == 0 {
                x
            } else {
                (x as i32).wrapping_rem(y as i32) as u32
            }
        }),
        B::MinU => map2(a, b, u32::min),
        B::MinS => map2(a, b, |x, y| (x as i32).min(y as i32) as u32),
        B::MinF => map2(a, b, |x, y| min_f32(f(x), f(y)).to_bits()),
        B::MaxU => map2(a, b, u32::max),
        B::MaxS => map2(a, b, |x, y| (x as i32).max(y as i32) as u32),
        B::MaxF => map2(a, b, |x, y| max_f32(f(x), f(y)).to_bits()),
        B::And => map2(a, b, |x, y| x & y),
        B::Or => map2(a, b, |x, y| x | y),
        B::Xor => map2(a, b, |x, y| x ^ y),
        B::Shl => map2(a, b, |x, y| x.checked_shl(y).unwrap_or(0)),
        B::ShrU => map2(a, b, |x, y| x.checked_shr(y).unwrap_or(0)),
        B::ShrS => map2(a, b, |x, y| ((x as i32) >> y.min(31)) as u32),
    }
}

fn convert(dst: Ty, src: Ty, x: u32) -> u32 {
    match (dst, src) {
        // `as` from f32 truncates toward zero, saturates and maps NaN to 0.
        (Ty::U32, Ty::F32) => f(x) as u32,
        (Ty::S32, Ty::F32) => f(x) as i32 as u32,
        (Ty::F32, Ty::U32) => (x as f32).to_bits(),
        (Ty::F32, Ty::S32) => (x as i32 as f32).to_bits(),
        // f32 to f32 is arithmetic (a NaN becomes the canonical one).
        (Ty::F32, Ty::F32) => bits(f(x)),
        // Integer to integer keeps the bit pattern.
        _ => x,
    }
}

/// `d = op a` on every lane.
pub fn unary(op: UnOp, a: &Lanes) -> Lanes {
    match op {
        UnOp::AbsS => map1(a, |x| (x as i32).wrapping_abs() as u32),
        UnOp::AbsF => map1(a, |x| x & 0x7fff_ffff),
        UnOp::NegS => map1(a, |x| (x as i32).wrapping_neg() as u32),
        UnOp::NegF => map1(a, |x| x ^ 0x8000_0000),
        UnOp::Not => map1(a, |x| !x),
        UnOp::Rcp => map1(a, |x| bits(1.0 / f(x))),
        UnOp::Sqrt => map1(a, |x| bits(f(x).sqrt())),
        UnOp::Cvt(dst, src) => map1(a, |x| convert(dst, src, x)),
    }
}

/// `d = a * b + c` (low 32 bits).
pub fn mad_lo(a: &Lanes, b: &Lanes, c: &Lanes) -> Lanes {
    std::array::from_fn(|l| a[l].wrapping_mul(b[l]).wrapping_add(c[l]))
}

/// `d = a * b + c` with one rounding.
pub fn fma(a: &Lanes, b: &Lanes, c: &Lanes) -> Lanes {
    std::array::from_fn(|l| bits(f(a[l]).mul_add(f(b[l]), f(c[l]))))
}

/// The lanes where `hit` holds, as a mask.
#[inline(always)]
fn mask_of(hit: impl Fn(usize) -> bool) -> u32 {
    let mut m = 0u32;
    for (l, &bit) in LANE_BIT.iter().enumerate() {
        if hit(l) {
            m |= bit;
        }
    }
    m
}

/// `x cmp y` (PTX `setp`): ordered comparisons are false on NaN, `ne` included;
/// the unordered ones and `nan` are true then.
#[inline(always)]
pub(crate) fn compare<T: PartialOrd>(cmp: Cmp, x: T, y: T) -> bool {
    let Some(order) = x.partial_cmp(&y) else {
        return matches!(
            cmp,
            Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Nan
        );
    };
    use std::cmp::Ordering::{Equal, Greater, Less};
    match cmp {
        Cmp::Eq | Cmp::Equ => order == Equal,
        Cmp::Ne | Cmp::Neu => order != Equal,
        Cmp::Lt | Cmp::Lo | Cmp::Ltu => order == Less,
        Cmp::Le | Cmp::Ls | Cmp::Leu => order != Greater,
        Cmp::Gt | Cmp::Hi | Cmp::Gtu => order == Greater,
        Cmp::Ge | Cmp::Hs | Cmp::Geu => order != Less,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// The lanes where `a cmp b` holds, as a mask: ordered float comparisons (`ne`
/// included) are false on NaN, unordered ones true.
pub fn setp(cmp: Cmp, ty: Ty, a: &Lanes, b: &Lanes) -> u32 {
    match ty {
        Ty::S32 => {
            let (a, b) = (a.map(|x| x as i32), b.map(|x| x as i32));
            mask_of(|l| compare(cmp, a[l], b[l]))
        }
        Ty::F32 => {
            let (a, b) = (a.map(f), b.map(f));
            mask_of(|l| compare(cmp, a[l], b[l]))
        }
        _ => mask_of(|l| compare(cmp, a[l], b[l])),
    }
}

/// `d = p ? a : b` per lane, `p` a lane mask.
pub fn select(p: u32, a: &Lanes, b: &Lanes) -> Lanes {
    std::array::from_fn(|l| if p & (1 << l) != 0 { a[l] } else { b[l] })
}

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

/// All ones in the lanes of `mask`, zeros elsewhere.
#[inline(always)]
pub fn expand(mask: u32) -> Lanes {
    let mut out = [0; 32];
    for (o, &bit) in out.iter_mut().zip(&LANE_BIT) {
        *o = u32::from(mask & bit != 0).wrapping_neg();
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

/// Writes `value` into the lanes of `mask`.
#[inline(always)]
pub fn write_masked(dst: &mut Lanes, value: &Lanes, mask: u32) {
    if mask == u32::MAX {
        *dst = *value;
    } else {
        let on = expand(mask);
        for ((d, v), on) in dst.iter_mut().zip(value).zip(on) {
            *d = (*v & on) | (*d & !on);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one(op: BinOp, a: u32, b: u32) -> u32 {
        binary(op, &[a; 32], &[b; 32])[0]
    }

    #[test]
    fn integer_edge_cases_follow_the_isa_notes() {
        assert_eq!(one(BinOp::DivU, 7, 0), u32::MAX);
        assert_eq!(one(BinOp::DivS, 7, 0) as i32, -1);
        assert_eq!(one(BinOp::DivS, (-7i32) as u32, 0) as i32, 1);
        assert_eq!(
            one(BinOp::DivS, i32::MIN as u32, (-1i32) as u32),
            i32::MIN as u32
        );
        assert_eq!(one(BinOp::RemS, i32::MIN as u32, (-1i32) as u32), 0);
        assert_eq!(one(BinOp::RemU, 9, 0), 9);
        assert_eq!(one(BinOp::Shl, 1, 32), 0);
        assert_eq!(one(BinOp::ShrS, (-8i32) as u32, 40) as i32, -1);
        assert_eq!(one(BinOp::MulHiS, (-2i32) as u32, 3) as i32, -1);
        assert_eq!(
            unary(UnOp::AbsS, &[i32::MIN as u32; 32])[0],
            i32::MIN as u32
        );
    }

    #[test]
    fn float_conversions_saturate_and_map_nan_to_zero() {
        let c = |x: f32| unary(UnOp::Cvt(Ty::S32, Ty::F32), &[x.to_bits(); 32])[0] as i32;
        assert_eq!(c(-2.75), -2);
        assert_eq!(c(3e10), i32::MAX);
        assert_eq!(c(f32::NAN), 0);
    }

    #[test]
    fn ordered_comparisons_are_false_on_nan_and_unordered_ones_true() {
        let n = [f32::NAN.to_bits(); 32];
        let one = [1.0f32.to_bits(); 32];
        for cmp in [
            Cmp::Eq,
            Cmp::Ne,
            Cmp::Lt,
            Cmp::Le,
            Cmp::Gt,
            Cmp::Ge,
            Cmp::Num,
        ] {
            assert_eq!(setp(cmp, Ty::F32, &n, &one), 0, "{cmp}");
        }
        for cmp in [
            Cmp::Equ,
            Cmp::Neu,
            Cmp::Ltu,
            Cmp::Leu,
            Cmp::Gtu,
            Cmp::Geu,
            Cmp::Nan,
        ] {
            assert_eq!(setp(cmp, Ty::F32, &one, &n), u32::MAX, "{cmp}");
        }
        assert_eq!(setp(Cmp::Neu, Ty::F32, &one, &one), 0);
        assert_eq!(setp(Cmp::Num, Ty::F32, &one, &one), u32::MAX);
    }

    #[test]
    fn unsigned_spellings_compare_unsigned() {
        let big = [u32::MAX; 32];
        let one = [1u32; 32];
        assert_eq!(setp(Cmp::Hi, Ty::U32, &big, &one), u32::MAX);
        assert_eq!(setp(Cmp::Lo, Ty::U32, &big, &one), 0);
        assert_eq!(
            setp(Cmp::Lt, Ty::S32, &big, &one),
            u32::MAX,
            "-1 < 1 signed"
        );
    }

    #[test]
    fn float_min_max_order_signed_zeros_and_skip_nan() {
        let (pz, nz) = (0.0f32.to_bits(), (-0.0f32).to_bits());
        for (x, y) in [(pz, nz), (nz, pz)] {
            assert_eq!(one(BinOp::MinF, x, y), nz, "min of +0 and -0 is -0");
            assert_eq!(one(BinOp::MaxF, x, y), pz, "max of +0 and -0 is +0");
        }
        let nan = f32::NAN.to_bits();
        let two = 2.0f32.to_bits();
        assert_eq!(one(BinOp::MinF, nan, two), two);
        assert_eq!(one(BinOp::MaxF, two, nan), two);
        assert_eq!(one(BinOp::MinF, nan, nan), CANONICAL_NAN_F32);
    }

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
}
