//! The two binary formats behind [`Float`]: their fields, a finite value as an
//! exact integer significand times a power of two ([`Exact`]), and the one
//! rounding step every directed-mode result goes through ([`round`]), gradual
//! underflow and overflow included.

use super::Round;
use std::cmp::Ordering;
use std::fmt;

/// An IEEE 754 binary format this module computes in: `f32` (binary32) or `f64`
/// (binary64).
pub trait Float: Copy + PartialEq + PartialOrd + fmt::Debug + Sealed {}

impl Float for f32 {}
impl Float for f64 {}

/// What the operations need of a format; outside this module nothing can name it,
/// so [`Float`] is for `f32` and `f64` only.
pub trait Sealed: Sized {
    /// Stored fraction bits (the precision less one).
    const FRACTION_BITS: u32;
    /// Biased exponent bits.
    const EXPONENT_BITS: u32;
    const ONE: Self;
    /// The sign bit of the raw encoding.
    const SIGN: u64 = 1 << (Self::FRACTION_BITS + Self::EXPONENT_BITS);
    /// The raw encoding of +infinity; every finite magnitude is below it.
    const INFINITY: u64 = ((1 << Self::EXPONENT_BITS) - 1) << Self::FRACTION_BITS;
    /// Significand bits, the hidden one included.
    const PRECISION: i32 = Self::FRACTION_BITS as i32 + 1;
    /// The exponent of the least significant bit of a subnormal (-149, -1074).
    const MIN_EXP: i32 = 2 - (1 << (Self::EXPONENT_BITS - 1)) - Self::FRACTION_BITS as i32;

    fn raw(self) -> u64;
    fn from_raw(raw: u64) -> Self;
    /// Exact.
    fn to_f64(self) -> f64;
    /// Rounded to nearest by the host.
    fn from_f64(x: f64) -> Self;
    /// Rounded to nearest by the host.
    fn from_i128(n: i128) -> Self;
    fn hw_add(self, b: Self) -> Self;
    fn hw_sub(self, b: Self) -> Self;
    fn hw_mul(self, b: Self) -> Self;
    fn hw_div(self, b: Self) -> Self;
    fn hw_mul_add(self, b: Self, c: Self) -> Self;
    fn hw_sqrt(self) -> Self;
}

macro_rules! sealed {
    ($t:ty, $fraction:expr, $exponent:expr) => {
        impl Sealed for $t {
            const FRACTION_BITS: u32 = $fraction;
            const EXPONENT_BITS: u32 = $exponent;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn raw(self) -> u64 {
                u64::from(self.to_bits())
            }
            #[inline(always)]
            fn from_raw(raw: u64) -> Self {
                // Callers pass encodings of this format only.
                <$t>::from_bits(raw as _)
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_i128(n: i128) -> Self {
                // The narrower conversions are the fast ones; all round to nearest.
                if let Ok(n) = i64::try_from(n) {
                    n as $t
                } else if let Ok(n) = u64::try_from(n) {
                    n as $t
                } else {
                    n as $t
                }
            }
            #[inline(always)]
            fn hw_add(self, b: Self) -> Self {
                self + b
            }
            #[inline(always)]
            fn hw_sub(self, b: Self) -> Self {
                self - b
            }
            #[inline(always)]
            fn hw_mul(self, b: Self) -> Self {
                self * b
            }
            #[inline(always)]
            fn hw_div(self, b: Self) -> Self {
                self / b
            }
            #[inline(always)]
            fn hw_mul_add(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            #[inline(always)]
            fn hw_sqrt(self) -> Self {
                self.sqrt()
            }
        }
    };
}

sealed!(f32, 23, 8);
sealed!(f64, 52, 11);

pub(super) fn is_nan<F: Float>(x: F) -> bool {
    x.raw() & !F::SIGN > F::INFINITY
}

pub(super) fn is_finite<F: Float>(x: F) -> bool {
    x.raw() & !F::SIGN < F::INFINITY
}

pub(super) fn is_zero<F: Float>(x: F) -> bool {
    x.raw() & !F::SIGN == 0
}

/// The sign bit (also of zeros and NaNs).
pub(super) fn is_neg<F: Float>(x: F) -> bool {
    x.raw() & F::SIGN != 0
}

pub(super) fn finite_nonzero<F: Float>(x: F) -> bool {
    let magnitude = x.raw() & !F::SIGN;
    magnitude != 0 && magnitude < F::INFINITY
}

pub(super) fn negate<F: Float>(x: F) -> F {
    F::from_raw(x.raw() ^ F::SIGN)
}

pub(super) fn signed_zero<F: Float>(neg: bool) -> F {
    F::from_raw(if neg { F::SIGN } else { 0 })
}

/// A nonzero finite value `(-1)^neg * sig * 2^exp`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exact {
    pub neg: bool,
    pub exp: i32,
    pub sig: u128,
}

impl Exact {
    /// `x`, which is finite and nonzero.
    pub fn of<F: Float>(x: F) -> Exact {
        let raw = x.raw();
        let field = (raw >> F::FRACTION_BITS) & ((1 << F::EXPONENT_BITS) - 1);
        let fraction = raw & ((1 << F::FRACTION_BITS) - 1);
        let (exp, sig) = if field == 0 {
            (F::MIN_EXP, fraction)
        } else {
            (
                F::MIN_EXP + field as i32 - 1,
                fraction | 1 << F::FRACTION_BITS,
            )
        };
        Exact {
            neg: is_neg(x),
            exp,
            sig: u128::from(sig),
        }
    }

    /// The significand's length in bits.
    pub fn bits(&self) -> i32 {
        128 - self.sig.leading_zeros() as i32
    }
}

/// `sig / 2^shift` rounded to an integer by `r`, for a value of sign `neg`.
pub(super) fn shift_round(sig: u128, shift: u32, neg: bool, r: Round) -> u128 {
    if shift == 0 {
        return sig;
    }
    let (quotient, tail) = if shift > 128 {
        // Everything is below half a unit.
        (0, if sig == 0 { None } else { Some(Ordering::Less) })
    } else {
        let half = 1u128 << (shift - 1);
        let rest = if shift == 128 {
            sig
        } else {
            sig & ((1 << shift) - 1)
        };
        let quotient = sig.checked_shr(shift).unwrap_or(0);
        (quotient, (rest != 0).then(|| rest.cmp(&half)))
    };
    let away = match (r, tail) {
        (_, None) | (Round::Zero, _) => false,
        (Round::Nearest, Some(Ordering::Greater)) => true,
        // Ties to even.
        (Round::Nearest, Some(Ordering::Equal)) => quotient & 1 == 1,
        (Round::Nearest, Some(Ordering::Less)) => false,
        (Round::Up, Some(_)) => !neg,
        (Round::Down, Some(_)) => neg,
    };
    quotient + u128::from(away)
}

/// The overflowed result of sign `neg` (IEEE 754 7.4): infinity when `r` rounds
/// away from zero on that side, the largest finite magnitude otherwise.
fn overflow<F: Float>(neg: bool, r: Round) -> F {
    let infinite = match r {
        Round::Nearest => true,
        Round::Zero => false,
        Round::Up => !neg,
        Round::Down => neg,
    };
    let magnitude = F::INFINITY - u64::from(!infinite);
    F::from_raw(magnitude | if neg { F::SIGN } else { 0 })
}

/// `v` rounded once to the format of `F` by `r`: subnormal when it is tiny
/// (IEEE 754 7.5, no flushing), zero of `v`'s sign when it rounds to nothing.
pub(super) fn round<F: Float>(v: Exact, r: Round) -> F {
    let msb = v.exp + v.bits() - 1;
    // The exponent of the result's last bit: PRECISION bits down from the leading
    // one, but no lower than a subnormal's.
    let lsb = (msb - (F::PRECISION - 1)).max(F::MIN_EXP);
    let sig = if lsb <= v.exp {
        v.sig << (v.exp - lsb)
    } else {
        shift_round(v.sig, (lsb - v.exp) as u32, v.neg, r)
    };
    let field = (lsb - F::MIN_EXP) as u64;
    if field >= 1 << F::EXPONENT_BITS {
        return overflow(v.neg, r);
    }
    // sig <= 2^PRECISION; adding it to the exponent field lets a carry out of the
    // significand (subnormal to normal, or into the next binade) move the exponent.
    let magnitude = (field << F::FRACTION_BITS) + sig as u64;
    if magnitude >= F::INFINITY {
        return overflow(v.neg, r);
    }
    F::from_raw(magnitude | if v.neg { F::SIGN } else { 0 })
}
