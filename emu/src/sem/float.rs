//! The float side of arithmetic, shared by `.f32` and `.f64`: operands from bit
//! patterns, `.ftz` flushing (`.f32` only), `.sat` clamping, canonical NaN results
//! (ISA notes), IEEE minimumNumber/maximumNumber, and the SFU approximations
//! (`rsqrt ex2 lg2 sin cos`, evaluated in f64 and rounded once).

use crate::sem::Form;
use crate::sem::ieee::{self, Round};
use spu_isa::Ty;

/// The canonical NaN of each width: what every NaN result is.
pub const NAN32: u32 = 0x7fff_ffff;
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// A float type's bit-level view, so `.f32` and `.f64` share one definition of
/// each operation.
pub trait Real: ieee::Float {
    /// The value of a register pattern.
    fn of_bits(v: u64) -> Self;
    /// The pattern of a result (a NaN is the canonical NaN).
    fn bits(self) -> u64;
    fn nan() -> u64;
    fn f64(self) -> f64;
    fn of(x: f64) -> Self;
    fn is_nan(self) -> bool;
    fn is_subnormal(self) -> bool;
    fn is_negative(self) -> bool;
    fn zero(negative: bool) -> Self;
    fn round_int(self, mode: Round) -> Self;
}

macro_rules! real {
    ($t:ty, $bits:ty, $nan:expr) => {
        impl Real for $t {
            #[inline(always)]
            fn of_bits(v: u64) -> Self {
                <$t>::from_bits(v as $bits)
            }
            #[inline(always)]
            fn bits(self) -> u64 {
                if self.is_nan() {
                    $nan
                } else {
                    u64::from(self.to_bits())
                }
            }
            fn nan() -> u64 {
                $nan
            }
            fn f64(self) -> f64 {
                <f64 as From<$t>>::from(self)
            }
            fn of(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_subnormal(self) -> bool {
                <$t>::is_subnormal(self)
            }
            #[inline(always)]
            fn is_negative(self) -> bool {
                self.is_sign_negative()
            }
            #[inline(always)]
            fn zero(negative: bool) -> Self {
                if negative { -0.0 } else { 0.0 }
            }
            fn round_int(self, mode: Round) -> Self {
                match mode {
                    Round::Nearest => self.round_ties_even(),
                    Round::Zero => self.trunc(),
                    Round::Down => self.floor(),
                    Round::Up => self.ceil(),
                }
            }
        }
    };
}

real!(f32, u32, u64::from(NAN32));
real!(f64, u64, NAN64);

/// Flushes a subnormal to zero of its sign when `ftz`.
#[inline(always)]
pub fn flush<F: Real>(x: F, ftz: bool) -> F {
    if ftz && x.is_subnormal() {
        F::zero(x.is_negative())
    } else {
        x
    }
}

/// `.ftz` applies to `.f32` operands and results only.
#[inline(always)]
pub fn ftz_of(f: &Form) -> bool {
    f.ftz && f.ty == Ty::F32
}

/// The result pattern: flushed when `ftz`, clamped to [0, 1] with `.sat` (NaN
/// gives 0), and a NaN result is the canonical NaN.
#[inline(always)]
pub fn finish<F: Real>(r: F, f: &Form) -> u64 {
    let r = flush(r, ftz_of(f));
    if !f.sat {
        return r.bits();
    }
    if r.is_nan() || r < F::zero(false) {
        F::zero(false).bits()
    } else if r > F::of(1.0) {
        F::of(1.0).bits()
    } else {
        r.bits()
    }
}

/// An operand of type `F` from its pattern, flushed as the form says.
#[inline(always)]
pub fn operand<F: Real>(v: u64, f: &Form) -> F {
    flush(F::of_bits(v), ftz_of(f))
}

/// Calls `$body` with `F` the form's float type (`f32` or `f64`).
macro_rules! by_width {
    ($f:expr, |$F:ident| $body:expr) => {
        if $f.ty == spu_isa::Ty::F64 {
            type $F = f64;
            $body
        } else {
            type $F = f32;
            $body
        }
    };
}
pub(crate) use by_width;

/// IEEE 754-2019 minimumNumber / maximumNumber (`max` when `larger`): a NaN
/// operand gives the other one (`None` when both are NaN, for the caller's
/// canonical NaN), and -0 < +0 in either order.
pub fn min_max_number<T: Copy + PartialOrd>(
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

/// `min`/`max` of two float patterns.
#[inline(always)]
pub fn min_max<F: Real>(f: &Form, a: u64, b: u64, larger: bool) -> u64 {
    let (x, y) = (operand::<F>(a, f), operand::<F>(b, f));
    match min_max_number(x, y, larger, F::is_negative) {
        Some(v) => finish(v, f),
        None => F::nan(),
    }
}

/// `abs` (`negate` false) or `neg` of a float pattern: only the sign bit changes
/// (IEEE 754 abs and negate: a NaN keeps its payload), after `.ftz` flushed a
/// subnormal to a zero of its sign.
pub fn sign_op(f: &Form, a: u64, negate: bool) -> u64 {
    let v = if ftz_of(f) && a & 0x7f80_0000 == 0 {
        a & 0x8000_0000
    } else {
        a
    };
    let sign = if f.ty == Ty::F64 { 1 << 63 } else { 1 << 31 };
    if negate { v ^ sign } else { v & !sign }
}

/// An SFU approximation: `g` evaluated in f64 and rounded once to the type.
pub fn approx(f: &Form, a: u64, g: fn(f64) -> f64) -> u64 {
    by_width!(f, |F| finish(F::of(g(operand::<F>(a, f).f64())), f))
}
