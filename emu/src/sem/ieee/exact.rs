//! Exact results of finite nonzero operands in integer arithmetic, ready for one
//! rounding: sums and products exactly, quotients and square roots with at least
//! two bits beyond the precision and a sticky bit for a nonzero remainder; and the
//! exact correction of an approximate `1/sqrt(a)` to the nearest float.

use super::float::{Exact, Float};
use std::cmp::Ordering;

/// A significand at least this long (the precision plus a rounding and a sticky
/// bit) keeps a sticky bit in its last place below the rounding position.
fn working_bits<F: Float>() -> i32 {
    F::PRECISION + 2
}

/// `x * y`; significands below 2^64.
pub(super) fn product(x: Exact, y: Exact) -> Exact {
    Exact {
        neg: x.neg != y.neg,
        exp: x.exp + y.exp,
        sig: x.sig * y.sig,
    }
}

/// `x + y`, or `None` when it is exactly zero; significands below 2^110 (products
/// of two significands of at most 55 bits).
pub(super) fn sum(x: Exact, y: Exact) -> Option<Exact> {
    debug_assert!(x.bits() <= 110 && y.bits() <= 110);
    let top = |v: &Exact| v.exp + v.bits();
    let (big, small) = if top(&x) >= top(&y) { (x, y) } else { (y, x) };
    // The larger term's leading bit goes to bit 125: room for a carry, and at least
    // 15 bits above anything of the smaller term that falls off the end, which then
    // only leaves a sticky bit far below the rounding position.
    let shift = big.sig.leading_zeros() as i32 - 2;
    let exp = big.exp - shift;
    let b = big.sig << shift;
    let (s, lost) = if small.exp >= exp {
        // top(small) <= top(big), so this stays below 2^126.
        (small.sig << (small.exp - exp), false)
    } else {
        let drop = (exp - small.exp) as u32;
        match small.sig.checked_shr(drop) {
            Some(kept) if drop < 128 => (kept, small.sig & ((1 << drop) - 1) != 0),
            _ => (0, true),
        }
    };
    let (neg, sig) = if big.neg == small.neg {
        (big.neg, (b + s) | u128::from(lost))
    } else if lost {
        // b - (s + f) with 0 < f < 1: the integer below it, and a sticky bit.
        (big.neg, (b - s - 1) | 1)
    } else {
        match b.cmp(&s) {
            Ordering::Greater => (big.neg, b - s),
            Ordering::Less => (small.neg, s - b),
            Ordering::Equal => return None,
        }
    };
    Some(Exact { neg, exp, sig })
}

/// `x / y` with a sticky bit; significands of at most the precision.
pub(super) fn quotient<F: Float>(x: Exact, y: Exact) -> Exact {
    // A numerator of working_bits() more bits than the divisor gives a quotient of
    // at least working_bits() bits.
    let shift = y.bits() + working_bits::<F>() - x.bits();
    let numerator = x.sig << shift;
    let (q, rest) = (numerator / y.sig, numerator % y.sig);
    Exact {
        neg: x.neg != y.neg,
        exp: x.exp - y.exp - shift,
        sig: q | u128::from(rest != 0),
    }
}

/// `sqrt(x)` with a sticky bit; `x` positive, its significand of at most the
/// precision.
pub(super) fn root<F: Float>(x: Exact) -> Exact {
    // A radicand of 2 * working_bits() bits or more has a root of at least
    // working_bits() bits; its exponent must be even to halve.
    let mut shift = 2 * working_bits::<F>() - x.bits();
    if (x.exp - shift) % 2 != 0 {
        shift += 1;
    }
    let radicand = x.sig << shift;
    let root = radicand.isqrt();
    Exact {
        neg: false,
        exp: (x.exp - shift) / 2,
        sig: root | u128::from(root * root != radicand),
    }
}

/// `x * y` against `2^t`; `x * y` nonzero.
fn cmp_pow2(x: u128, y: u64, t: i32) -> Ordering {
    // x * y = high * 2^64 + low.
    let low_product = (x & u128::from(u64::MAX)) * u128::from(y);
    let high = (x >> 64) * u128::from(y) + (low_product >> 64);
    let low = low_product as u64;
    let bits = if high != 0 {
        192 - high.leading_zeros() as i32
    } else {
        64 - low.leading_zeros() as i32
    };
    if bits != t + 1 {
        return bits.cmp(&(t + 1));
    }
    let power_of_two = if high != 0 {
        high.is_power_of_two() && low == 0
    } else {
        low.is_power_of_two()
    };
    if power_of_two {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// `1/sqrt(a)` against `m * 2^e`; `a` positive, `m` below 2^56.
fn cmp_rsqrt(a: Exact, m: u128, e: i32) -> Ordering {
    // 1/sqrt(a) > m 2^e exactly when m^2 a < 2^(-2e - a.exp).
    cmp_pow2(m * m, a.sig as u64, -2 * e - a.exp).reverse()
}

/// `1/sqrt(a)` rounded to nearest, from `y` within a few units in the last place
/// of it: `y` moves to a neighbour while the exact value lies beyond the midpoint
/// to it. Never a tie: a midpoint has an odd significand of more than one bit,
/// whose square times `a` is no power of two.
pub(super) fn nearest_rsqrt<F: Float>(a: Exact, mut y: F) -> F {
    // At most a handful of steps; the bound only guards the loop.
    for _ in 0..64 {
        // y is normal: 1/sqrt(a) lies far inside the normal range of both formats.
        let v = Exact::of(y);
        if cmp_rsqrt(a, 2 * v.sig + 1, v.exp - 1).is_gt() {
            y = F::from_raw(y.raw() + 1);
            continue;
        }
        // Below a power of two the floats are twice as dense.
        let below = if v.sig == 1 << F::FRACTION_BITS && v.exp > F::MIN_EXP {
            cmp_rsqrt(a, 4 * v.sig - 1, v.exp - 2)
        } else {
            cmp_rsqrt(a, 2 * v.sig - 1, v.exp - 1)
        };
        if below.is_lt() {
            y = F::from_raw(y.raw() - 1);
            continue;
        }
        break;
    }
    y
}
