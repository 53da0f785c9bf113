//! Directed rounding (`.rz .rm .rp`) of float arithmetic: the round-to-nearest
//! result moves by one unit in the last place when the exact result lies on the
//! side the mode forbids. Which side it lies on comes from an error-free
//! transformation: TwoSum for sums, an `fma` residual for products, quotients and
//! square roots; `.f32` operations are evaluated in `f64`, where f32 products are
//! exact. `fma.f64` with a directed rounding is not covered (refused at load).

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

/// `op` on f64 operands with a directed rounding (`Fma` is not covered).
pub fn f64_op(op: Op, mode: Rnd, x: f64, y: f64) -> f64 {
    let finite = x.is_finite() && y.is_finite();
    let (r, e) = nearest_and_error(op, x, y, 0.0);
    let adjusted = adjust64(r, side(r, e, r, finite), mode);
    zero_sign(op, mode, adjusted, x, y)
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
}
