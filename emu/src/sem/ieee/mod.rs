//! Exact IEEE 754 binary32 and binary64 arithmetic in the four rounding modes of
//! PTX (`.rn .rz .rm .rp`): sums, products, quotients, fused multiply-adds,
//! square roots, reciprocals, conversions and rounding to integers.
//!
//! [`Round::Nearest`] uses the host's operation, which is correctly rounded and
//! fast. The directed modes form the exact result in integer arithmetic (`exact`:
//! sums and products exactly, quotients and roots with a sticky bit) and round it
//! once (`float::round`), subnormal results included, rather than moving the
//! nearest result, which goes wrong at overflow, underflow and exact zeros.
//! Special operands follow IEEE 754: a NaN operand gives a quiet NaN (any: the
//! caller canonicalises it), `x / ±0` an exactly signed infinity (7.3), an exact
//! zero sum `+0` except toward minus infinity, where it is `-0` (6.3), and an
//! overflow infinity or the largest finite value as the mode says (7.4).
//! Flushing subnormals (`.ftz`) and saturating to `[0, 1]` (`.sat`) are the
//! caller's.

#[cfg(test)]
mod cases;
mod convert;
mod exact;
mod float;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

pub use convert::{IntResult, convert, from_int, round_to_integral, to_int};
pub use float::Float;

use spu_isa::Rnd;

use float::{Exact, finite_nonzero, is_finite, is_neg, is_zero, negate, round, signed_zero};

/// A rounding direction (IEEE 754 4.3), named after what PTX's modifier does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Round {
    /// `.rn` (`.rni` to an integer): to nearest, ties to even.
    Nearest,
    /// `.rz` (`.rzi`): toward zero.
    Zero,
    /// `.rm` (`.rmi`): toward minus infinity.
    Down,
    /// `.rp` (`.rpi`): toward plus infinity.
    Up,
}

impl Round {
    /// Every mode, for tests and tables.
    pub const ALL: [Round; 4] = [Round::Nearest, Round::Zero, Round::Down, Round::Up];

    /// The direction of a PTX rounding modifier, `None` being the default `.rn`
    /// (an integral modifier rounds to an integer in the same direction).
    pub fn of(rnd: Option<Rnd>) -> Round {
        match rnd {
            None | Some(Rnd::Rn | Rnd::Rni) => Round::Nearest,
            Some(Rnd::Rz | Rnd::Rzi) => Round::Zero,
            Some(Rnd::Rm | Rnd::Rmi) => Round::Down,
            Some(Rnd::Rp | Rnd::Rpi) => Round::Up,
        }
    }
}

// Each operation is a wrapper the execution core inlines into its lane loops:
// the host's instruction to nearest, a call for the directed modes.

/// `a + b`.
#[inline(always)]
pub fn add<F: Float>(a: F, b: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_add(b),
        _ => directed_sum(a, b, r),
    }
}

/// `a - b`.
#[inline(always)]
pub fn sub<F: Float>(a: F, b: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_sub(b),
        _ => directed_sum(a, negate(b), r),
    }
}

/// `a * b`.
#[inline(always)]
pub fn mul<F: Float>(a: F, b: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_mul(b),
        _ => directed_mul(a, b, r),
    }
}

/// `a / b`.
#[inline(always)]
pub fn div<F: Float>(a: F, b: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_div(b),
        _ => directed_div(a, b, r),
    }
}

/// `1 / a`, rounded once.
#[inline(always)]
pub fn rcp<F: Float>(a: F, r: Round) -> F {
    div(F::ONE, a, r)
}

/// `a * b + c`, rounded once.
#[inline(always)]
pub fn fma<F: Float>(a: F, b: F, c: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_mul_add(b, c),
        _ => directed_fma(a, b, c, r),
    }
}

/// `sqrt(a)`: NaN below zero, `-0` for `-0`.
#[inline(always)]
pub fn sqrt<F: Float>(a: F, r: Round) -> F {
    match r {
        Round::Nearest => a.hw_sqrt(),
        _ => directed_sqrt(a, r),
    }
}

/// The zero that a sum of nonzero terms cancelling exactly gives (IEEE 754 6.3).
fn exact_zero_sum<F: Float>(r: Round) -> F {
    signed_zero(r == Round::Down)
}

#[inline(never)]
fn directed_sum<F: Float>(a: F, b: F, r: Round) -> F {
    match (finite_nonzero(a), finite_nonzero(b)) {
        (true, true) => match exact::sum(Exact::of(a), Exact::of(b)) {
            Some(v) => round(v, r),
            None => exact_zero_sum(r),
        },
        (true, false) if is_zero(b) => a,
        (false, true) if is_zero(a) => b,
        _ if is_zero(a) && is_zero(b) => {
            // Zeros of one sign keep it; +0 + -0 cancels like any exact zero sum.
            if is_neg(a) == is_neg(b) {
                a
            } else {
                exact_zero_sum(r)
            }
        }
        // A NaN or an infinity: the host's result is exact.
        _ => a.hw_add(b),
    }
}

#[inline(never)]
fn directed_mul<F: Float>(a: F, b: F, r: Round) -> F {
    if !finite_nonzero(a) || !finite_nonzero(b) {
        // Zeros, infinities and NaNs give exact results.
        return a.hw_mul(b);
    }
    round(exact::product(Exact::of(a), Exact::of(b)), r)
}

#[inline(never)]
fn directed_div<F: Float>(a: F, b: F, r: Round) -> F {
    if !finite_nonzero(a) || !finite_nonzero(b) {
        // Exact: a signed infinity for x / 0 (IEEE 754 7.3), zero for x / inf and
        // 0 / x, NaN for 0 / 0 and inf / inf.
        return a.hw_div(b);
    }
    round(exact::quotient::<F>(Exact::of(a), Exact::of(b)), r)
}

#[inline(never)]
fn directed_fma<F: Float>(a: F, b: F, c: F, r: Round) -> F {
    if !(is_finite(a) && is_finite(b) && is_finite(c)) {
        // NaNs and infinities give exact results.
        return a.hw_mul_add(b, c);
    }
    if is_zero(a) || is_zero(b) {
        // An exact zero product: the sum of zeros follows IEEE 754 6.3.
        if !is_zero(c) || (is_neg(a) != is_neg(b)) == is_neg(c) {
            return c;
        }
        return exact_zero_sum(r);
    }
    let product = exact::product(Exact::of(a), Exact::of(b));
    if is_zero(c) {
        return round(product, r);
    }
    match exact::sum(product, Exact::of(c)) {
        Some(v) => round(v, r),
        None => exact_zero_sum(r),
    }
}

#[inline(never)]
fn directed_sqrt<F: Float>(a: F, r: Round) -> F {
    if !finite_nonzero(a) || is_neg(a) {
        return a.hw_sqrt();
    }
    round(exact::root::<F>(Exact::of(a)), r)
}

/// `1 / sqrt(a)` rounded to nearest (IEEE 754 9.2 rSqrt): `±inf` for `±0`, `+0`
/// for `+inf`, NaN below zero.
pub fn rsqrt<F: Float>(a: F) -> F {
    // Two roundings: within two units in the last place, then corrected exactly.
    let estimate = F::ONE.hw_div(a.hw_sqrt());
    if !finite_nonzero(a) || is_neg(a) {
        return estimate;
    }
    exact::nearest_rsqrt(Exact::of(a), estimate)
}
