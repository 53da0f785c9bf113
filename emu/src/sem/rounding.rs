//! Directed rounding (`.rz .rm .rp`) of float arithmetic, behind [`crate::sem::ieee`]: the round-to-nearest
//! result moves by one unit in the last place when the exact result lies on the
//! side the mode forbids. Which side it lies on comes from an error-free
//! transformation: TwoSum for sums, an `fma` residual for products, quotients and
//! square roots; `.f32` operations are evaluated in `f64`, where f32 products are
//! exact. Integer-to-float conversions compare the integer with the nearest float
//! exactly, in integer arithmetic. `fma.f64` compares the exact `x * y + z` with
//! the hardware-rounded result in big-integer arithmetic ([`fma_f64`]).

use spu_isa::Rnd;
use std::cmp::Ordering;

/// An operation with a directed rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// `x * y + z` (f32 only).
    Fma,
    Div,
    Rcp,
    Sqrt,
}

/// `s = a + b` and the exact error `e` (`a + b = s + e`), Knuth's TwoSum.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The f64 result rounded to nearest and an approximation of `exact - result`
/// whose sign is exact.
fn nearest_and_error(op: Op, x: f64, y: f64, z: f64) -> (f64, f64) {
    match op {
        Op::Add => two_sum(x, y),
        Op::Sub => two_sum(x, -y),
        Op::Mul => {
            let p = x * y;
            (p, x.mul_add(y, -p))
        }
        Op::Fma => {
            // Only for f32 operands, whose product is exact in f64.
            two_sum(x * y, z)
        }
        Op::Div => {
            let q = x / y;
            (q, (-q).mul_add(y, x) / y)
        }
        Op::Rcp => {
            let q = 1.0 / x;
            (q, (-q).mul_add(x, 1.0) / x)
        }
        Op::Sqrt => {
            let q = x.sqrt();
            (q, (-q).mul_add(q, x) / (2.0 * q))
        }
    }
}

fn sign(v: f64) -> Ordering {
    v.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// Where the exact result lies relative to `r`, given `v + e` exact and `r`
/// rounded from `v`; inputs all finite.
pub(crate) fn side(v: f64, e: f64, r: f64, finite_inputs: bool) -> Ordering {
    if r.is_nan() || !finite_inputs {
        return Ordering::Equal;
    }
    if r.is_infinite() {
        // Overflow to infinity from finite operands: the exact value is finite.
        return if r > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    sign((v - r) + e)
}

macro_rules! adjust {
    ($name:ident, $t:ty) => {
        /// Moves the nearest result `r` toward the mode's side of the exact value.
        pub(crate) fn $name(r: $t, exact: Ordering, mode: Rnd) -> $t {
            // The next float above `x` (`f32::next_up` needs a newer compiler than
            // the workspace's minimum).
            fn up(x: $t) -> $t {
                if x.is_nan() || x == <$t>::INFINITY {
                    x
                } else if x == 0.0 {
                    <$t>::from_bits(1)
                } else if x > 0.0 {
                    <$t>::from_bits(x.to_bits() + 1)
                } else {
                    <$t>::from_bits(x.to_bits() - 1)
                }
            }
            let down = |x: $t| -up(-x);
            match (mode.direction(), exact) {
                (Rnd::Rp, Ordering::Greater) => up(r),
                (Rnd::Rm, Ordering::Less) => down(r),
                (Rnd::Rz, Ordering::Less) if r > 0.0 => down(r),
                (Rnd::Rz, Ordering::Greater) if r < 0.0 => up(r),
                _ => r,
            }
        }
    };
}

adjust!(adjust32, f32);
adjust!(adjust64, f64);

/// An exact zero sum is -0 when rounding toward minus infinity (IEEE 754 6.3).
fn zero_sign(op: Op, mode: Rnd, r: f64, x: f64, y: f64) -> f64 {
    let sum = matches!(op, Op::Add | Op::Sub);
    if sum && r == 0.0 && mode.direction() == Rnd::Rm && (x != 0.0 || y != 0.0) {
        -0.0
    } else {
        r
    }
}

/// `op` on f32 operands with a directed rounding.
pub fn f32_op(op: Op, mode: Rnd, x: f32, y: f32, z: f32) -> f32 {
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    let finite = x.is_finite() && y.is_finite() && z.is_finite();
    let (v, e) = nearest_and_error(op, x, y, z);
    let r = v as f32;
    let adjusted = adjust32(r, side(v, e, f64::from(r), finite), mode);
    zero_sign(op, mode, f64::from(adjusted), x, y) as f32
}

/// `op` on f64 operands with a directed rounding (`Fma` is [`fma_f64`]).
pub fn f64_op(op: Op, mode: Rnd, x: f64, y: f64) -> f64 {
    let finite = x.is_finite() && y.is_finite();
    let (r, e) = nearest_and_error(op, x, y, 0.0);
    let adjusted = adjust64(r, side(r, e, r, finite), mode);
    zero_sign(op, mode, adjusted, x, y)
}

/// The integer `n` (any 64-bit integer, signed or not) converted to f32 with a
/// directed rounding: the nearest float moves by one ulp when `n` lies on the side
/// the mode forbids. Every f32 of magnitude at most 2^64 is an integer that fits an
/// `i128`, so the comparison is exact.
pub fn int_to_f32(n: i128, mode: Rnd) -> f32 {
    let r = n as f32;
    adjust32(r, n.cmp(&(r as i128)), mode)
}

/// [`int_to_f32`] for f64.
pub fn int_to_f64(n: i128, mode: Rnd) -> f64 {
    let r = n as f64;
    adjust64(r, n.cmp(&(r as i128)), mode)
}

/// A finite f64 as `(negative, mantissa, exponent)`: `v = ±mantissa * 2^exponent`.
fn parts(v: f64) -> (bool, u128, i32) {
    let bits = v.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = u128::from(bits & ((1 << 52) - 1));
    let (m, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    (v.is_sign_negative(), m, e)
}

/// Adds `m * 2^shift` to the little-endian big integer `acc`.
fn add_shifted(acc: &mut [u64], m: u128, shift: u32) {
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    // m < 2^106, so m << bit spans at most three limbs.
    let lo = (m << bit) as u64;
    let (mid, hi) = if bit == 0 {
        ((m >> 64) as u64, 0)
    } else {
        ((m >> (64 - bit)) as u64, (m >> (128 - bit)) as u64)
    };
    let mut carry = 0u64;
    for (i, part) in [lo, mid, hi].into_iter().enumerate() {
        let (s, c1) = acc[limb + i].overflowing_add(part);
        let (s, c2) = s.overflowing_add(carry);
        acc[limb + i] = s;
        carry = u64::from(c1) + u64::from(c2);
    }
    let mut i = limb + 3;
    while carry != 0 {
        let (s, c) = acc[i].overflowing_add(carry);
        acc[i] = s;
        carry = u64::from(c);
        i += 1;
    }
}

/// Where the exact `x * y + z` lies relative to `r`; all finite. Every term is an
/// integer times a power of two no smaller than 2^-2148, so the sum is exact in a
/// fixed-point big integer of about 4 200 bits.
fn fma_side(x: f64, y: f64, z: f64, r: f64) -> Ordering {
    let (xn, xm, xe) = parts(x);
    let (yn, ym, ye) = parts(y);
    let terms = [(xn != yn, xm * ym, xe + ye), parts(z), {
        let (n, m, e) = parts(r);
        (!n, m, e)
    }];
    const BASE: i32 = -2148;
    const LIMBS: usize = 70;
    let (mut pos, mut neg) = ([0u64; LIMBS], [0u64; LIMBS]);
    for (negative, m, e) in terms {
        if m != 0 {
            let acc = if negative { &mut neg } else { &mut pos };
            add_shifted(acc, m, (e - BASE) as u32);
        }
    }
    pos.iter().rev().cmp(neg.iter().rev())
}

/// `x * y + z` in f64 with a directed rounding: the hardware fma (round to nearest)
/// moves by one ulp when the exact value lies on the side the mode forbids.
pub fn fma_f64(mode: Rnd, x: f64, y: f64, z: f64) -> f64 {
    let r = x.mul_add(y, z);
    if !(x.is_finite() && y.is_finite() && z.is_finite()) || r.is_nan() {
        return r;
    }
    let exact = if r.is_infinite() {
        // Overflow from finite operands: the exact value is finite.
        if r > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    } else {
        fma_side(x, y, z, r)
    };
    if exact == Ordering::Equal && r == 0.0 && mode.direction() == Rnd::Rm {
        // An exact zero is -0 toward minus infinity unless both addends are +0
        // (IEEE 754 6.3).
        let product_neg = x.is_sign_negative() != y.is_sign_negative();
        let plus_zeros = x * y == 0.0 && !product_neg && z == 0.0 && z.is_sign_positive();
        return if plus_zeros { 0.0 } else { -0.0 };
    }
    adjust64(r, exact, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_third_rounds_each_way() {
        let down = f32_op(Op::Div, Rnd::Rz, 1.0, 3.0, 0.0);
        let up = f32_op(Op::Div, Rnd::Rp, 1.0, 3.0, 0.0);
        assert_eq!(down.to_bits(), 0x3eaa_aaaa);
        assert_eq!(up.to_bits(), 0x3eaa_aaab);
        assert_eq!(
            f32_op(Op::Div, Rnd::Rm, -1.0, 3.0, 0.0).to_bits(),
            0xbeaa_aaab
        );
        let d = f64_op(Op::Div, Rnd::Rz, 1.0, 3.0);
        assert_eq!(d.to_bits(), 0x3fd5_5555_5555_5555);
        assert_eq!(
            f64_op(Op::Div, Rnd::Rp, 1.0, 3.0).to_bits(),
            0x3fd5_5555_5555_5556
        );
    }

    #[test]
    fn exact_results_do_not_move_and_overflow_saturates_toward_zero() {
        assert_eq!(f32_op(Op::Add, Rnd::Rp, 1.0, 2.0, 0.0), 3.0);
        assert_eq!(f32_op(Op::Mul, Rnd::Rz, f32::MAX, 2.0, 0.0), f32::MAX);
        assert_eq!(f32_op(Op::Mul, Rnd::Rp, f32::MAX, 2.0, 0.0), f32::INFINITY);
        assert_eq!(f64_op(Op::Sqrt, Rnd::Rm, 4.0, 0.0), 2.0);
        assert!(f32_op(Op::Sub, Rnd::Rm, 1.0, 1.0, 0.0).is_sign_negative());
    }

    #[test]
    fn integers_round_to_the_neighbouring_floats() {
        // 2^24 + 1 lies between the f32s 2^24 and 2^24 + 2.
        let n = (1 << 24) + 1;
        assert_eq!(int_to_f32(n, Rnd::Rz), 16_777_216.0);
        assert_eq!(int_to_f32(n, Rnd::Rp), 16_777_218.0);
        assert_eq!(int_to_f32(-n, Rnd::Rm), -16_777_218.0);
        assert_eq!(int_to_f32(-n, Rnd::Rz), -16_777_216.0);
        // u64::MAX: nearest and up give 2^64, toward zero the largest f32 below it.
        let max = i128::from(u64::MAX);
        assert_eq!(int_to_f32(max, Rnd::Rp), 18_446_744_073_709_551_616.0);
        assert_eq!(int_to_f32(max, Rnd::Rz).to_bits(), 0x5f7f_ffff);
        assert_eq!(int_to_f64(max, Rnd::Rm).to_bits(), 0x43ef_ffff_ffff_ffff);
        assert_eq!(int_to_f64((1 << 53) + 1, Rnd::Rp), 9_007_199_254_740_994.0);
        // Exact values do not move; zero stays +0.
        assert_eq!(int_to_f64(1 << 60, Rnd::Rz), 1_152_921_504_606_846_976.0);
        assert!(int_to_f32(0, Rnd::Rm).is_sign_positive());
    }

    #[test]
    fn fma_f64_rounds_the_exact_sum() {
        // (1 + 2^-52)^2 - 1 = 2^-51 + 2^-104: nearest drops 2^-104, rp keeps a ulp.
        let x = 1.0 + f64::EPSILON;
        assert_eq!(fma_f64(Rnd::Rz, x, x, -1.0), 2f64.powi(-51));
        assert_eq!(
            fma_f64(Rnd::Rp, x, x, -1.0).to_bits(),
            2f64.powi(-51).to_bits() + 1
        );
        // 1 + 2^-60: only the sticky product decides; tiny products below subnormals.
        let t = 2f64.powi(-30);
        assert_eq!(fma_f64(Rnd::Rp, t, t, 1.0), 1.0 + f64::EPSILON);
        assert_eq!(fma_f64(Rnd::Rm, -t, t, 1.0), 1.0 - f64::EPSILON / 2.0);
        let tiny = 2f64.powi(-600);
        assert_eq!(fma_f64(Rnd::Rp, tiny, tiny, 0.0).to_bits(), 1);
        assert_eq!(fma_f64(Rnd::Rz, tiny, tiny, 0.0).to_bits(), 0);
        assert_eq!(
            fma_f64(Rnd::Rm, -tiny, tiny, 0.0).to_bits(),
            (-0.0f64).to_bits() | 1
        );
        // Overflow: rz saturates, rp reaches infinity; exact zeros take rm's -0.
        assert_eq!(fma_f64(Rnd::Rz, f64::MAX, 2.0, 0.0), f64::MAX);
        assert_eq!(fma_f64(Rnd::Rp, f64::MAX, 2.0, 0.0), f64::INFINITY);
        assert!(fma_f64(Rnd::Rm, 1.0, 1.0, -1.0).is_sign_negative());
        assert!(fma_f64(Rnd::Rp, 1.0, 1.0, -1.0).is_sign_positive());
        assert!(fma_f64(Rnd::Rm, 0.0, 1.0, 0.0).is_sign_positive());
        assert!(fma_f64(Rnd::Rz, f64::NAN, 1.0, 0.0).is_nan());
    }
}
