//! Conversions: integers to floats, between the two formats, floats to integral
//! floats (`cvt.rni.f32.f32`) and floats to saturated integers (`cvt.s32.f64`).

use super::Round;
use super::float::{Exact, Float, finite_nonzero, is_nan, negate, round, shift_round};

/// `n` (any 64-bit integer, signed or not, and more) rounded once; zero is `+0`.
pub fn from_int<F: Float>(n: i128, r: Round) -> F {
    if r == Round::Nearest || n == 0 {
        return F::from_i128(n);
    }
    let v = Exact {
        neg: n < 0,
        exp: 0,
        sig: n.unsigned_abs(),
    };
    round(v, r)
}

/// `a` in the other format (or the same): widening is exact, narrowing rounds by
/// `r`, overflowing per IEEE 754 7.4 and underflowing gradually.
pub fn convert<F: Float, G: Float>(a: F, r: Round) -> G {
    if is_nan(a) {
        // x + x quiets a signalling NaN, which a conversion to the same format keeps.
        let x = a.to_f64();
        return G::from_f64(x + x);
    }
    if r == Round::Nearest || !finite_nonzero(a) {
        // Zeros and infinities convert exactly.
        return G::from_f64(a.to_f64());
    }
    round(Exact::of(a), r)
}

/// `a` rounded to an integral value in its format (IEEE 754 5.9
/// roundToIntegral): zeros, infinities and integers unchanged, a zero result of
/// `a`'s sign (`-0.4` gives `-0` to nearest).
pub fn round_to_integral<F: Float>(a: F, r: Round) -> F {
    if !finite_nonzero(a) {
        // a + a is a itself, or a quiet NaN.
        return if is_nan(a) { a.hw_add(a) } else { a };
    }
    let v = Exact::of(a);
    if v.exp >= 0 {
        return a;
    }
    // At most 2^PRECISION: exact in the format.
    let magnitude: F = F::from_i128(shift_round(v.sig, v.exp.unsigned_abs(), v.neg, r) as i128);
    if v.neg { negate(magnitude) } else { magnitude }
}

/// A float converted to a `bits`-wide integer ([`to_int`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntResult {
    /// The rounded value, clamped to the destination's range.
    Value(i128),
    /// The source was NaN: what PTX writes depends on the source type
    /// ([`IntResult::value`]).
    Nan { bits: u32, signed: bool },
}

impl IntResult {
    /// The integer PTX writes; `f64_source` is whether `cvt` reads an `.f64`.
    /// PTX ISA 9.0, 9.7.9.21 (cvt, Integer Notes): a NaN gives 0 when the source
    /// is not `.f64` and the destination is not `.s64`/`.u64`, otherwise
    /// `1 << (bits - 1)` (MININT for a signed destination).
    pub fn value(self, f64_source: bool) -> i128 {
        match self {
            IntResult::Value(v) => v,
            IntResult::Nan { bits, .. } if !f64_source && bits < 64 => 0,
            IntResult::Nan { bits, signed } => {
                let sign_bit = 1i128 << (bits - 1);
                if signed { -sign_bit } else { sign_bit }
            }
        }
    }
}

/// `a` (an `.f32` widens exactly) rounded to an integer by `r` (`.rni .rzi .rmi
/// .rpi`) and clamped to the range of a `bits`-wide (1 to 64) signed or unsigned
/// integer: PTX's `cvt` from a float to an integer saturates (9.7.9.21).
pub fn to_int(a: f64, r: Round, bits: u32, signed: bool) -> IntResult {
    let bits = bits.clamp(1, 64);
    if a.is_nan() {
        return IntResult::Nan { bits, signed };
    }
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    // 2^64: every value at least this large saturates (infinities too).
    const BEYOND: f64 = 18_446_744_073_709_551_616.0;
    let value = if a == 0.0 {
        0
    } else if a.abs() >= BEYOND {
        if a < 0.0 { min } else { max }
    } else {
        let v = Exact::of(a);
        let magnitude = if v.exp >= 0 {
            v.sig << v.exp
        } else {
            shift_round(v.sig, v.exp.unsigned_abs(), v.neg, r)
        };
        // Below 2^64 + 1.
        let magnitude = magnitude as i128;
        if v.neg { -magnitude } else { magnitude }
    };
    IntResult::Value(value.clamp(min, max))
}
