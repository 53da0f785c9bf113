//! Arithmetic: integers wrap (`.sat` clamps `.s32` sums), divide totally (no
//! traps; see the ISA notes for division by zero) and keep the low or high half of
//! products; floats round once in the instruction's rounding mode, flush with
//! `.ftz`, clamp with `.sat`, and give the canonical NaN.

use crate::sem::float::{Real, approx, by_width, finish, min_max, operand, sign_op};
use crate::sem::ieee::{self, Round};
use crate::sem::{Form, extend};
use spu_isa::{Half, Ty};

#[inline(always)]
fn round(f: &Form) -> Round {
    Round::of(f.rnd)
}

#[inline(always)]
fn sat32(v: i64) -> u64 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u64
}

/// The high half of the double-width product of two values of `ty`.
#[inline(always)]
fn mul_hi(ty: Ty, a: u64, b: u64) -> u64 {
    let w = ty.bits();
    if ty.is_signed() {
        ((i128::from(a as i64) * i128::from(b as i64)) >> w) as u64
    } else {
        ((u128::from(a) * u128::from(b)) >> w) as u64
    }
}

/// A float operation of two operands, rounded once.
#[inline(always)]
fn float2<F: Real>(f: &Form, a: u64, b: u64, op: fn(F, F, Round) -> F) -> u64 {
    finish(op(operand(a, f), operand(b, f), round(f)), f)
}

/// A float operation of one operand, rounded once.
#[inline(always)]
fn float1<F: Real>(f: &Form, a: u64, op: fn(F, Round) -> F) -> u64 {
    finish(op(operand(a, f), round(f)), f)
}

/// `add`: d = a + b.
#[inline(always)]
pub fn add(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| float2::<F>(f, a, b, ieee::add));
    }
    if f.sat && f.ty == Ty::S32 {
        return sat32(a as i64 + b as i64);
    }
    extend(f.ty, a.wrapping_add(b))
}

/// `sub`: d = a - b.
#[inline(always)]
pub fn sub(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| float2::<F>(f, a, b, ieee::sub));
    }
    if f.sat && f.ty == Ty::S32 {
        return sat32(a as i64 - b as i64);
    }
    extend(f.ty, a.wrapping_sub(b))
}

/// `mul`: d = a * b; integers keep the low (`.lo`) or high (`.hi`) half.
#[inline(always)]
pub fn mul(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| float2::<F>(f, a, b, ieee::mul));
    }
    if f.mods.half == Some(Half::Hi) {
        return extend(f.ty, mul_hi(f.ty, a, b));
    }
    extend(f.ty, a.wrapping_mul(b))
}

/// `mad`: d = a * b + c; integers add c to the low or high half of the product
/// (`.sat` clamps the `.hi.s32` sum); floats are `fma`.
#[inline(always)]
pub fn mad(f: &Form, a: u64, b: u64, c: u64) -> u64 {
    if f.ty.is_float() {
        return fma(f, a, b, c);
    }
    if f.mods.half == Some(Half::Hi) {
        let hi = mul_hi(f.ty, a, b);
        if f.sat && f.ty == Ty::S32 {
            return sat32(hi as i64 + c as i64);
        }
        return extend(f.ty, hi.wrapping_add(c));
    }
    extend(f.ty, a.wrapping_mul(b).wrapping_add(c))
}

/// `fma`: d = a * b + c with one rounding.
#[inline(always)]
pub fn fma(f: &Form, a: u64, b: u64, c: u64) -> u64 {
    by_width!(f, |F| finish(
        ieee::fma::<F>(operand(a, f), operand(b, f), operand(c, f), round(f)),
        f
    ))
}

/// `div`: d = a / b; integers truncate toward zero, and division by zero gives all
/// ones (unsigned, and signed a >= 0) or 1 (signed a < 0).
#[inline(always)]
pub fn div(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| float2::<F>(f, a, b, ieee::div));
    }
    let ty = f.ty;
    if b == 0 {
        return if ty.is_signed() && (a as i64) < 0 {
            1
        } else {
            extend(ty, u64::MAX)
        };
    }
    if ty.is_signed() {
        extend(ty, (a as i64).wrapping_div(b as i64) as u64)
    } else {
        a / b
    }
}

/// `rem`: d = a % b with the sign of a; remainder by zero gives a.
#[inline(always)]
pub fn rem(f: &Form, a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else if f.ty.is_signed() {
        extend(f.ty, (a as i64).wrapping_rem(b as i64) as u64)
    } else {
        a % b
    }
}

/// `a < b` for integers of the form's type.
#[inline(always)]
fn less(f: &Form, a: u64, b: u64) -> bool {
    if f.ty.is_signed() {
        (a as i64) < (b as i64)
    } else {
        a < b
    }
}

/// `min`: the smaller; floats: a NaN operand gives the other one, -0 < +0.
#[inline(always)]
pub fn min(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| min_max::<F>(f, a, b, false));
    }
    if less(f, b, a) { b } else { a }
}

/// `max`: the larger; floats: a NaN operand gives the other one, -0 < +0.
#[inline(always)]
pub fn max(f: &Form, a: u64, b: u64) -> u64 {
    if f.ty.is_float() {
        return by_width!(f, |F| min_max::<F>(f, a, b, true));
    }
    if less(f, a, b) { b } else { a }
}

/// `abs`: |a| (the most negative integer stays itself; floats change the sign
/// bit only).
#[inline(always)]
pub fn abs(f: &Form, a: u64) -> u64 {
    if f.ty.is_float() {
        return sign_op(f, a, false);
    }
    extend(f.ty, (a as i64).wrapping_abs() as u64)
}

/// `neg`: -a.
#[inline(always)]
pub fn neg(f: &Form, a: u64) -> u64 {
    if f.ty.is_float() {
        return sign_op(f, a, true);
    }
    extend(f.ty, (a as i64).wrapping_neg() as u64)
}

/// `rcp`: 1 / a, rounded once.
#[inline(always)]
pub fn rcp(f: &Form, a: u64) -> u64 {
    by_width!(f, |F| float1::<F>(f, a, ieee::rcp))
}

/// `sqrt`: the square root of a, rounded once.
#[inline(always)]
pub fn sqrt(f: &Form, a: u64) -> u64 {
    by_width!(f, |F| float1::<F>(f, a, ieee::sqrt))
}

/// `rsqrt`: 1 / sqrt(a).
pub fn rsqrt(f: &Form, a: u64) -> u64 {
    approx(f, a, |v| 1.0 / v.sqrt())
}

/// `ex2`: 2^a.
pub fn ex2(f: &Form, a: u64) -> u64 {
    approx(f, a, f64::exp2)
}

/// `lg2`: log2 a.
pub fn lg2(f: &Form, a: u64) -> u64 {
    approx(f, a, f64::log2)
}

/// `sin` of a in radians.
pub fn sin(f: &Form, a: u64) -> u64 {
    approx(f, a, f64::sin)
}

/// `cos` of a in radians.
pub fn cos(f: &Form, a: u64) -> u64 {
    approx(f, a, f64::cos)
}

/// `mul.wide`: the whole double-width product (the operands, extended to 64 bits
/// by their type, multiply exactly).
#[inline(always)]
pub fn mul_wide(_: &Form, a: u64, b: u64) -> u64 {
    a.wrapping_mul(b)
}

/// `mad.wide`: the double-width product plus c.
#[inline(always)]
pub fn mad_wide(_: &Form, a: u64, b: u64, c: u64) -> u64 {
    a.wrapping_mul(b).wrapping_add(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sem::read;

    #[test]
    fn sixty_four_bit_integers_wrap_and_extend() {
        assert_eq!(add(&Form::plain(Ty::U64), u64::MAX, 2), 1);
        let mut hi = Form::plain(Ty::U64);
        hi.mods.half = Some(Half::Hi);
        assert_eq!(mul(&hi, 1 << 40, 1 << 40), 1 << 16);
        let wide = Form::plain(Ty::S32);
        assert_eq!(
            mul_wide(&wide, read(Ty::S32, 0xffff_fffe), 3),
            (-6i64) as u64
        );
    }

    #[test]
    fn integer_edge_cases_follow_the_isa_notes() {
        let (u, s) = (Form::plain(Ty::U32), Form::plain(Ty::S32));
        let s32 = |v: i32| read(Ty::S32, v as u32 as u64);
        assert_eq!(div(&u, 7, 0) as u32, u32::MAX);
        assert_eq!(div(&s, 7, 0) as u32 as i32, -1);
        assert_eq!(div(&s, s32(-7), 0) as u32 as i32, 1);
        assert_eq!(
            div(&s, s32(i32::MIN), s32(-1)) as u32,
            i32::MIN as u32,
            "the quotient wraps"
        );
        assert_eq!(rem(&s, s32(i32::MIN), s32(-1)), 0);
        assert_eq!(rem(&u, 9, 0), 9);
        assert_eq!(abs(&s, s32(i32::MIN)) as u32, i32::MIN as u32);
    }

    #[test]
    fn float_min_max_order_signed_zeros_and_skip_nan() {
        let f = Form::plain(Ty::F32);
        let (pz, nz) = (0.0f32.to_bits() as u64, (-0.0f32).to_bits() as u64);
        for (x, y) in [(pz, nz), (nz, pz)] {
            assert_eq!(min(&f, x, y), nz, "min of +0 and -0 is -0");
            assert_eq!(max(&f, x, y), pz, "max of +0 and -0 is +0");
        }
        let nan = f32::NAN.to_bits() as u64;
        let two = 2.0f32.to_bits() as u64;
        assert_eq!(min(&f, nan, two), two);
        assert_eq!(max(&f, two, nan), two);
        assert_eq!(min(&f, nan, nan), u64::from(crate::sem::float::NAN32));
    }
}
