//! `setp` (a comparison to a predicate), `testp` (a float's class to a
//! predicate), `selp` (a choice by a predicate) and the predicate logic rows.

use crate::sem::Form;
use crate::sem::float::flush;
use spu_isa::{Cmp, TestpOp, Ty};

/// `x cmp y` (PTX `setp`): ordered comparisons are false on NaN, `ne` included;
/// the unordered ones and `nan` are true then.
#[inline(always)]
pub fn compare<T: PartialOrd>(cmp: Cmp, x: T, y: T) -> bool {
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

/// `setp`: whether `a cmp b` holds for values of the form's type (the comparison
/// is `f.mods.cmp`); `.ftz` flushes `.f32` operands first.
#[inline(always)]
pub fn setp(f: &Form, a: u64, b: u64) -> bool {
    let cmp = f.mods.cmp.unwrap_or(Cmp::Eq);
    match f.ty {
        Ty::F32 => compare(
            cmp,
            flush(f32::from_bits(a as u32), f.ftz),
            flush(f32::from_bits(b as u32), f.ftz),
        ),
        Ty::F64 => compare(cmp, f64::from_bits(a), f64::from_bits(b)),
        _ if cmp.unsigned_only() || !f.ty.is_signed() => compare(cmp, a, b),
        _ => compare(cmp, a as i64, b as i64),
    }
}

/// `testp`: whether a, of the form's float type, is of the class the test
/// names (no `.ftz`: a subnormal operand is tested as it is); `b` is absent.
#[inline(always)]
pub fn testp(f: &Form, a: u64, _: u64) -> bool {
    use std::num::FpCategory::{Infinite, Nan, Normal, Subnormal};
    let class = if f.ty == Ty::F64 {
        f64::from_bits(a).classify()
    } else {
        f32::from_bits(a as u32).classify()
    };
    match f.mods.testp.unwrap_or(TestpOp::Number) {
        TestpOp::Finite => !matches!(class, Infinite | Nan),
        TestpOp::Infinite => class == Infinite,
        TestpOp::Number => class != Nan,
        TestpOp::NotANumber => class == Nan,
        TestpOp::Normal => class == Normal,
        TestpOp::Subnormal => class == Subnormal,
    }
}

/// `selp`: d = p ? a : b.
#[inline(always)]
pub fn selp(_: &Form, a: u64, b: u64, p: bool) -> u64 {
    if p { a } else { b }
}

/// `and.pred`.
pub fn and(a: bool, b: bool) -> bool {
    a && b
}

/// `or.pred`.
pub fn or(a: bool, b: bool) -> bool {
    a || b
}

/// `xor.pred`.
pub fn xor(a: bool, b: bool) -> bool {
    a != b
}

/// `not.pred` (the second operand is unused).
pub fn not(a: bool, _: bool) -> bool {
    !a
}

/// `mov.pred` (the second operand is unused).
pub fn mov(a: bool, _: bool) -> bool {
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32form(cmp: Cmp) -> Form {
        let mut f = Form::plain(Ty::F32);
        f.mods.cmp = Some(cmp);
        f
    }

    #[test]
    fn ordered_comparisons_are_false_on_nan_and_unordered_ones_true() {
        let nan = u64::from(f32::NAN.to_bits());
        let one = u64::from(1.0f32.to_bits());
        for cmp in [
            Cmp::Eq,
            Cmp::Ne,
            Cmp::Lt,
            Cmp::Le,
            Cmp::Gt,
            Cmp::Ge,
            Cmp::Num,
        ] {
            assert!(!setp(&f32form(cmp), nan, one), "{cmp}");
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
            assert!(setp(&f32form(cmp), one, nan), "{cmp}");
        }
        assert!(!setp(&f32form(Cmp::Neu), one, one));
    }

    #[test]
    fn unsigned_spellings_compare_unsigned() {
        let mut f = Form::plain(Ty::S32);
        f.mods.cmp = Some(Cmp::Lt);
        let minus_one = crate::sem::read(Ty::S32, 0xffff_ffff);
        assert!(setp(&f, minus_one, 1), "-1 < 1 signed");
        f.mods.cmp = Some(Cmp::Hi);
        f.ty = Ty::U32;
        assert!(setp(&f, 0xffff_ffff, 1));
    }
}
