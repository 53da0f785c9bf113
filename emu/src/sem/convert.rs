//! `cvt` between every pair of types, and `mov`. Float to float rounds once in the
//! instruction's mode (an integral mode rounds to an integer first); integers to
//! floats round once from the exact integer; floats to integers round as the mode
//! says (toward zero by default) and saturate; integers to integers keep the low
//! bits, or clamp with `.sat`.

use crate::sem::float::{Real, finish, flush};
use crate::sem::ieee::{self, Round};
use crate::sem::{Form, extend};
use spu_isa::{Rnd, Ty};

/// `mov` (and `cvta`): d = a.
#[inline(always)]
pub fn mov(_: &Form, a: u64) -> u64 {
    a
}

/// `cvt`: a of the source type (`f.src_ty`) as the destination type (`f.ty`).
pub fn cvt(f: &Form, a: u64) -> u64 {
    let (dst, src) = (f.ty, f.src_ty);
    // `.ftz` flushes an .f32 source, and an .f32 result (in `finish`).
    let as_f64 = |v: u64| -> f64 {
        match src {
            Ty::F32 => f64::from(flush(f32::from_bits(v as u32), f.ftz)),
            Ty::F64 => f64::from_bits(v),
            t if t.is_signed() => v as i64 as f64,
            _ => v as f64,
        }
    };
    // The integer an integer source holds, exactly.
    let int = (!src.is_float()).then(|| {
        if src.is_signed() {
            i128::from(a as i64)
        } else {
            i128::from(a)
        }
    });
    if dst.is_float() {
        let x = match f.rnd.filter(|r| r.integral()) {
            Some(r) if src.is_float() => as_f64(a).round_int(Round::of(Some(r))),
            _ => as_f64(a),
        };
        let directed = f
            .rnd
            .filter(|r| matches!(r, Rnd::Rz | Rnd::Rm | Rnd::Rp))
            .map(|r| Round::of(Some(r)));
        let mode = directed.unwrap_or(Round::Nearest);
        return if dst == Ty::F64 {
            // A float source is exact in f64.
            let v = int.map_or(x, |n| ieee::from_int::<f64>(n, mode));
            finish(v, f)
        } else {
            let v = match int {
                Some(n) => ieee::from_int::<f32>(n, mode),
                None => ieee::convert::<f64, f32>(x, mode),
            };
            finish(v, f)
        };
    }
    let w = dst.bits();
    let (lo, hi) = if dst.is_signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    };
    match int {
        None => {
            let x = as_f64(a).round_int(Round::of(Some(f.rnd.unwrap_or(Rnd::Rzi))));
            if x.is_nan() {
                return 0;
            }
            // Saturating: `as i128` clamps infinities, and every 64-bit range fits.
            extend(dst, (x as i128).clamp(lo, hi) as u64)
        }
        Some(v) if f.sat => extend(dst, v.clamp(lo, hi) as u64),
        Some(v) => extend(dst, v as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sem::read;

    fn form(dst: Ty, src: Ty, rnd: Option<Rnd>) -> Form {
        let mut f = Form::plain(dst);
        f.src_ty = src;
        f.rnd = rnd;
        f
    }

    #[test]
    fn conversions_round_and_saturate() {
        let f = form(Ty::S32, Ty::F64, Some(Rnd::Rni));
        assert_eq!(cvt(&f, 2.5f64.to_bits()), 2);
        assert_eq!(cvt(&f, 1e300f64.to_bits()), i32::MAX as u64);
        let f = form(Ty::U64, Ty::S32, None);
        assert_eq!(cvt(&f, read(Ty::S32, 0xffff_ffff)), u64::MAX);
        let f = form(Ty::F64, Ty::F32, None);
        assert_eq!(cvt(&f, 1.5f32.to_bits().into()), 1.5f64.to_bits());
        let c = |x: f32| cvt(&form(Ty::S32, Ty::F32, None), x.to_bits().into()) as u32 as i32;
        assert_eq!(c(-2.75), -2);
        assert_eq!(c(3e10), i32::MAX);
        assert_eq!(c(f32::NAN), 0);
    }
}
