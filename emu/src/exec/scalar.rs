//! Instruction semantics on one lane's typed value, for the forms the word-wide
//! fast path ([`crate::exec::lanes`]) does not cover: 8-, 16- and 64-bit integers,
//! `.f64`, `.ftz`/`.sat`, integral roundings, the double-width multiplies, the bit
//! operations (`popc clz brev bfind bfe bfi prmt shf lop3`) and the SFU
//! approximations. Values travel as `u64` bit patterns: an integer operand is
//! its low N bits extended by its type's signedness, a float its IEEE pattern.
//! Semantics follow the notes of `isa-spec/ISA.md`.

use crate::exec::lanes::{compare, min_max_number};
use spu_isa::{AtomOp, Cmp, PrmtMode, Rnd, Ty};

/// What a lane computes (decoded once per instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alu {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    MadLo,
    MadHi,
    MadWide,
    Fma,
    Div,
    Rem,
    Min,
    Max,
    Abs,
    Neg,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Rcp,
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Cvt,
    /// `mov` and `cvta`: the value itself.
    Copy,
    Popc,
    Clz,
    Brev,
    /// `shiftamt`: the left shift that brings the found bit to the top.
    Bfind {
        shiftamt: bool,
    },
    Bfe,
    Bfi,
    /// Byte permute: the generic selector form, or one of the PTX modes.
    Prmt(Option<PrmtMode>),
    /// Funnel shift: left, clamp (else wrap).
    Shf {
        left: bool,
        clamp: bool,
    },
    Lop3,
}

/// An arithmetic form: the operation, its types and modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    pub alu: Alu,
    pub ty: Ty,
    /// Source type of `cvt` (else `ty`).
    pub src_ty: Ty,
    pub rnd: Option<Rnd>,
    pub ftz: bool,
    pub sat: bool,
}

/// An atomic's operation: `atom.{op}.{ty}`, or compare-and-swap (`op` `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atomic {
    pub op: Option<AtomOp>,
    pub ty: Ty,
}

impl Atomic {
    /// 32-bit words each lane's value occupies (1 or 2).
    pub fn words(self) -> u8 {
        if self.ty.bits() == 64 { 2 } else { 1 }
    }
}

/// The value an atomic leaves in memory, given the value there before (`prev`),
/// the operand `a` and, for compare-and-swap, the swap value `b` (all read as the
/// atomic's type). Arithmetic follows the instructions of the same names: `add.f32`
/// rounds to nearest even and flushes subnormal inputs and results to zero
/// (PTX ISA, `atom`), `add.f64` does not flush.
pub fn atomic(atom: Atomic, prev: u64, a: u64, b: u64) -> u64 {
    let ty = atom.ty;
    let Some(op) = atom.op else {
        return if prev == a { b } else { prev };
    };
    let form = |alu: Alu| Form {
        alu,
        ty,
        src_ty: ty,
        rnd: None,
        ftz: ty == Ty::F32,
        sat: false,
    };
    match op {
        AtomOp::Add => alu(&form(Alu::Add), prev, a, 0, 0),
        AtomOp::Min => alu(&form(Alu::Min), prev, a, 0, 0),
        AtomOp::Max => alu(&form(Alu::Max), prev, a, 0, 0),
        AtomOp::And => alu(&form(Alu::And), prev, a, 0, 0),
        AtomOp::Or => alu(&form(Alu::Or), prev, a, 0, 0),
        AtomOp::Xor => alu(&form(Alu::Xor), prev, a, 0, 0),
        AtomOp::Exch => a,
        // `inc`/`dec` are .u32 only (the table's rule).
        AtomOp::Inc if prev >= a => 0,
        AtomOp::Inc => prev + 1,
        AtomOp::Dec if prev == 0 || prev > a => a,
        AtomOp::Dec => prev - 1,
    }
}

/// A value of `ty` read from a register word pattern: the low bits of its width,
/// extended by its signedness (floats keep their pattern).
#[inline]
pub fn read(ty: Ty, raw: u64) -> u64 {
    match ty {
        Ty::F32 => raw & 0xffff_ffff,
        _ => extend(ty, raw),
    }
}

/// The low `ty.bits()` of `v`, sign- or zero-extended.
#[inline]
pub fn extend(ty: Ty, v: u64) -> u64 {
    let w = ty.bits();
    if w >= 64 {
        v
    } else if ty.is_signed() {
        (((v << (64 - w)) as i64) >> (64 - w)) as u64
    } else {
        v & ((1u64 << w) - 1)
    }
}

/// Width of `ty` in bits.
fn width(ty: Ty) -> u32 {
    ty.bits()
}

const NAN32: u32 = 0x7fff_ffff;
const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// A float type's operations, so the f32 and f64 forms share one definition.
trait Float: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    fn of_bits(v: u64) -> Self;
    fn bits(self) -> u64;
    fn nan() -> u64;
    fn f64(self) -> f64;
    fn of(x: f64) -> Self;
    fn add(self, y: Self) -> Self;
    fn sub(self, y: Self) -> Self;
    fn mul(self, y: Self) -> Self;
    fn div(self, y: Self) -> Self;
    fn fma(self, y: Self, z: Self) -> Self;
    fn sqrt(self) -> Self;
    fn is_nan(self) -> bool;
    fn is_subnormal(self) -> bool;
    fn is_negative(self) -> bool;
    fn zero(negative: bool) -> Self;
    fn round_int(self, mode: Rnd) -> Self;
}

macro_rules! float {
    ($t:ty, $bits:ty, $nan:expr) => {
        impl Float for $t {
            fn of_bits(v: u64) -> Self {
                <$t>::from_bits(v as $bits)
            }
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
            fn add(self, y: Self) -> Self {
                self + y
            }
            fn sub(self, y: Self) -> Self {
                self - y
            }
            fn mul(self, y: Self) -> Self {
                self * y
            }
            fn div(self, y: Self) -> Self {
                self / y
            }
            fn fma(self, y: Self, z: Self) -> Self {
                self.mul_add(y, z)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_subnormal(self) -> bool {
                <$t>::is_subnormal(self)
            }
            fn is_negative(self) -> bool {
                self.is_sign_negative()
            }
            fn zero(negative: bool) -> Self {
                if negative { -0.0 } else { 0.0 }
            }
            fn round_int(self, mode: Rnd) -> Self {
                match mode {
                    Rnd::Rni | Rnd::Rn => self.round_ties_even(),
                    Rnd::Rzi | Rnd::Rz => self.trunc(),
                    Rnd::Rmi | Rnd::Rm => self.floor(),
                    Rnd::Rpi | Rnd::Rp => self.ceil(),
                }
            }
        }
    };
}

float!(f32, u32, u64::from(NAN32));
float!(f64, u64, NAN64);

/// Flushes a subnormal to zero of its sign when `ftz` (f32 only).
fn flush<F: Float>(x: F, ftz: bool) -> F {
    if ftz && x.is_subnormal() {
        F::zero(x.is_negative())
    } else {
        x
    }
}

/// A float operation; `None` for forms with no float meaning.
fn float_op<F: Float>(f: &Form, a: u64, b: u64, c: u64) -> Option<u64> {
    let ftz = f.ftz && f.ty == Ty::F32;
    let (x, y, z) = (
        flush(F::of_bits(a), ftz),
        flush(F::of_bits(b), ftz),
        flush(F::of_bits(c), ftz),
    );
    let approx = |g: fn(f64) -> f64| F::of(g(x.f64()));
    let r = match f.alu {
        Alu::Add => x.add(y),
        Alu::Sub => x.sub(y),
        Alu::MulLo => x.mul(y),
        Alu::Fma | Alu::MadLo => x.fma(y, z),
        Alu::Div => x.div(y),
        Alu::Min | Alu::Max => match min_max_number(x, y, f.alu == Alu::Max, F::is_negative) {
            Some(v) => v,
            None => return Some(F::nan()),
        },
        // Sign operations change the sign bit only (IEEE 754 abs and negate: a NaN
        // keeps its payload), after `.ftz` flushed a subnormal to a zero of its sign.
        Alu::Abs | Alu::Neg => {
            let v = if ftz && a & 0x7f80_0000 == 0 {
                a & 0x8000_0000
            } else {
                a
            };
            let sign = sign_bit(f.ty);
            return Some(if f.alu == Alu::Abs {
                v & !sign
            } else {
                v ^ sign
            });
        }
        Alu::Rcp => F::of(1.0).div(x),
        Alu::Sqrt => x.sqrt(),
        Alu::Rsqrt => approx(|v| 1.0 / v.sqrt()),
        Alu::Ex2 => approx(f64::exp2),
        Alu::Lg2 => approx(f64::log2),
        Alu::Sin => approx(f64::sin),
        Alu::Cos => approx(f64::cos),
        _ => return None,
    };
    Some(finish(flush(r, ftz), f.sat))
}

fn sign_bit(ty: Ty) -> u64 {
    if ty == Ty::F64 { 1 << 63 } else { 1 << 31 }
}

/// `.sat` clamps to [0, 1] (NaN gives 0); NaN results are canonical.
fn finish<F: Float>(r: F, sat: bool) -> u64 {
    if !sat {
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

/// `d = f(a, b, c, e)` for one lane; operands already [`read`] by their types.
pub fn alu(f: &Form, a: u64, b: u64, c: u64, e: u64) -> u64 {
    if f.alu == Alu::Cvt {
        return convert(f, a);
    }
    if f.alu == Alu::Copy {
        return a;
    }
    if f.ty.is_float() {
        if let Some(mode) = f.rnd.filter(|r| matches!(r, Rnd::Rz | Rnd::Rm | Rnd::Rp))
            && let Some(r) = directed(f, mode, a, b, c)
        {
            return r;
        }
        let r = if f.ty == Ty::F64 {
            float_op::<f64>(f, a, b, c)
        } else {
            float_op::<f32>(f, a, b, c)
        };
        if let Some(r) = r {
            return r;
        }
    }
    int_op(f, a, b, c, e)
}

/// Float arithmetic with a directed rounding ([`crate::exec::rounding`]); `None`
/// for operations it does not cover.
fn directed(f: &Form, mode: Rnd, a: u64, b: u64, c: u64) -> Option<u64> {
    use crate::exec::rounding::{Op, f32_op, f64_op, fma_f64};
    if f.ty == Ty::F64 && matches!(f.alu, Alu::Fma | Alu::MadLo) {
        let r = fma_f64(
            mode,
            f64::from_bits(a),
            f64::from_bits(b),
            f64::from_bits(c),
        );
        return Some(finish(r, f.sat));
    }
    let op = match f.alu {
        Alu::Add => Op::Add,
        Alu::Sub => Op::Sub,
        Alu::MulLo => Op::Mul,
        Alu::Fma | Alu::MadLo if f.ty == Ty::F32 => Op::Fma,
        Alu::Div => Op::Div,
        Alu::Rcp => Op::Rcp,
        Alu::Sqrt => Op::Sqrt,
        _ => return None,
    };
    if f.ty == Ty::F64 {
        let r = f64_op(op, mode, f64::from_bits(a), f64::from_bits(b));
        return Some(finish(r, f.sat));
    }
    let ftz = f.ftz;
    let x = |v: u64| flush(f32::from_bits(v as u32), ftz);
    let r = f32_op(op, mode, x(a), x(b), x(c));
    Some(finish(flush(r, ftz), f.sat))
}

fn int_op(f: &Form, a: u64, b: u64, c: u64, e: u64) -> u64 {
    let ty = f.ty;
    let w = width(ty);
    let signed = ty.is_signed();
    let (sa, sb) = (a as i64, b as i64);
    let out = |v: u64| extend(ty, v);
    let lt = |x: u64, y: u64| {
        if signed {
            (x as i64) < (y as i64)
        } else {
            x < y
        }
    };
    match f.alu {
        Alu::Add if f.sat && ty == Ty::S32 => sat32(sa + sb),
        Alu::Sub if f.sat && ty == Ty::S32 => sat32(sa - sb),
        Alu::Add => out(a.wrapping_add(b)),
        Alu::Sub => out(a.wrapping_sub(b)),
        Alu::MulLo => out(a.wrapping_mul(b)),
        Alu::MulHi => out(mul_hi(ty, a, b)),
        Alu::MadLo => out(a.wrapping_mul(b).wrapping_add(c)),
        Alu::MadHi if f.sat && ty == Ty::S32 => sat32(mul_hi(ty, a, b) as i64 + c as i64),
        Alu::MadHi => out(mul_hi(ty, a, b).wrapping_add(c)),
        // The operands are extended to 64 bits, so the product is exact.
        Alu::MulWide => a.wrapping_mul(b),
        Alu::MadWide => a.wrapping_mul(b).wrapping_add(c),
        Alu::Div => {
            if b == 0 {
                match (signed, sa >= 0) {
                    (false, _) => out(u64::MAX),
                    (true, true) => out(u64::MAX),
                    (true, false) => 1,
                }
            } else if signed {
                out(sa.wrapping_div(sb) as u64)
            } else {
                a / b
            }
        }
        Alu::Rem => {
            if b == 0 {
                a
            } else if signed {
                out(sa.wrapping_rem(sb) as u64)
            } else {
                a % b
            }
        }
        Alu::Min => {
            if lt(b, a) {
                b
            } else {
                a
            }
        }
        Alu::Max => {
            if lt(a, b) {
                b
            } else {
                a
            }
        }
        Alu::Abs => out(sa.wrapping_abs() as u64),
        Alu::Neg => out(sa.wrapping_neg() as u64),
        Alu::And => a & b,
        Alu::Or => a | b,
        Alu::Xor => a ^ b,
        Alu::Not => out(!a),
        Alu::Shl => {
            let n = b as u32;
            if n >= w { 0 } else { out(a << n) }
        }
        Alu::Shr if signed => out((sa >> (b as u32).min(63)) as u64),
        Alu::Shr => {
            let n = b as u32;
            if n >= w { 0 } else { a >> n }
        }
        Alu::Popc => u64::from(mask(w, a).count_ones()),
        Alu::Clz => u64::from(mask(w, a).leading_zeros() - (64 - w)),
        Alu::Brev => out(mask(w, a).reverse_bits() >> (64 - w)),
        Alu::Bfind { shiftamt } => {
            let v = if signed && sa < 0 { !a } else { a };
            let v = mask(w, v);
            let at = 63 - v.leading_zeros();
            match (v, shiftamt) {
                (0, _) => 0xffff_ffff,
                (_, false) => u64::from(at),
                (_, true) => u64::from(w - 1 - at),
            }
        }
        Alu::Bfe => bfe(ty, a, b, c),
        Alu::Bfi => {
            let (pos, len) = ((c & 0xff) as u32, (e & 0xff) as u32);
            let mut d = b;
            for i in 0..len.min(w) {
                if pos + i < w {
                    d = (d & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
                }
            }
            out(d)
        }
        Alu::Prmt(mode) => {
            let both = (mask(32, b) << 32) | mask(32, a);
            let mut d = 0u64;
            for i in 0..4 {
                let byte = match mode {
                    None => {
                        let sel = (c >> (4 * i)) & 0xf;
                        let byte = (both >> (8 * (sel & 7))) & 0xff;
                        if sel & 8 != 0 {
                            if byte & 0x80 != 0 { 0xff } else { 0 }
                        } else {
                            byte
                        }
                    }
                    Some(m) => (both >> (8 * prmt_mode_byte(m, c & 3, i))) & 0xff,
                };
                d |= byte << (8 * i);
            }
            d
        }
        Alu::Shf { left, clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 31
            };
            let both = (mask(32, b) << 32) | mask(32, a);
            if left {
                ((both << n) >> 32) & 0xffff_ffff
            } else {
                (both >> n) & 0xffff_ffff
            }
        }
        Alu::Lop3 => {
            let mut d = 0u64;
            for i in 0..8 {
                if e & (1 << i) != 0 {
                    let pick = |x: u64, bit: u32| if i & (1 << bit) != 0 { x } else { !x };
                    d |= pick(a, 2) & pick(b, 1) & pick(c, 0);
                }
            }
            mask(32, d)
        }
        _ => 0,
    }
}

/// Which byte of `{b, a}` (0-7) a `prmt` mode puts in byte `i` of the result, for
/// the selector `sel` (the low two bits of `c`), as the PTX ISA's `prmt` table gives.
fn prmt_mode_byte(mode: PrmtMode, sel: u64, i: u64) -> u64 {
    match mode {
        // Forward 4 extract: bytes sel+3 .. sel.
        PrmtMode::F4e => sel + i,
        // Backward 4 extract: byte sel, then sel-1, sel-2, sel-3 (mod 8).
        PrmtMode::B4e => (sel + 8 - i) & 7,
        // Replicate byte sel.
        PrmtMode::Rc8 => sel,
        // Edge clamp left: bytes below sel repeat byte sel.
        PrmtMode::Ecl => i.max(sel),
        // Edge clamp right: bytes above sel repeat byte sel.
        PrmtMode::Ecr => i.min(sel),
        // Replicate the 16-bit half sel & 1.
        PrmtMode::Rc16 => 2 * (sel & 1) + (i & 1),
    }
}

fn mask(w: u32, v: u64) -> u64 {
    if w >= 64 { v } else { v & ((1 << w) - 1) }
}

fn sat32(v: i64) -> u64 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u64
}

/// The high half of the double-width product of two values of `ty`.
fn mul_hi(ty: Ty, a: u64, b: u64) -> u64 {
    let w = width(ty);
    if ty.is_signed() {
        ((i128::from(a as i64) * i128::from(b as i64)) >> w) as u64
    } else {
        ((u128::from(a) * u128::from(b)) >> w) as u64
    }
}

/// PTX `bfe`: `len` bits of `a` from `pos`, the rest filled with the sign bit of
/// the field for signed types (zero for unsigned types and empty fields).
fn bfe(ty: Ty, a: u64, b: u64, c: u64) -> u64 {
    let msb = width(ty) - 1;
    let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
    let sbit = if !ty.is_signed() || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    extend(ty, d)
}

/// `cvt` from `f.src_ty` to `f.ty` (see the ISA notes).
fn convert(f: &Form, a: u64) -> u64 {
    let (dst, src) = (f.ty, f.src_ty);
    let ftz = f.ftz;
    let as_f64 = |v: u64| -> f64 {
        match src {
            Ty::F32 => f64::from(flush(f32::from_bits(v as u32), ftz)),
            Ty::F64 => f64::from_bits(v),
            t if t.is_signed() => v as i64 as f64,
            _ => v as f64,
        }
    };
    if dst.is_float() {
        let x = if src.is_float() {
            let x = as_f64(a);
            match f.rnd.filter(|r| r.integral()) {
                Some(r) => x.round_int(r),
                None => x,
            }
        } else {
            as_f64(a)
        };
        let directed = f.rnd.filter(|r| matches!(r, Rnd::Rz | Rnd::Rm | Rnd::Rp));
        // An integer source rounds once, from the integer itself.
        let int = (!src.is_float()).then(|| {
            if src.is_signed() {
                i128::from(a as i64)
            } else {
                i128::from(a)
            }
        });
        return if dst == Ty::F64 {
            let v = match (int, directed) {
                (None, _) => x,
                (Some(n), Some(mode)) => crate::exec::rounding::int_to_f64(n, mode),
                (Some(n), None) => n as f64,
            };
            finish(v, f.sat)
        } else {
            let v = match (int, directed) {
                (Some(n), Some(mode)) => crate::exec::rounding::int_to_f32(n, mode),
                (Some(n), None) => n as f32,
                (None, Some(mode)) => {
                    // A float source is exact in f64.
                    use crate::exec::rounding::{adjust32, side};
                    let v = x as f32;
                    adjust32(v, side(x, 0.0, f64::from(v), x.is_finite()), mode)
                }
                (None, None) => x as f32,
            };
            finish(flush(v, ftz), f.sat)
        };
    }
    let w = width(dst);
    let (lo, hi) = if dst.is_signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    };
    if src.is_float() {
        let x = as_f64(a).round_int(f.rnd.unwrap_or(Rnd::Rzi));
        if x.is_nan() {
            return 0;
        }
        // Saturating: `as i128` clamps infinities, and every 64-bit range fits.
        return extend(dst, (x as i128).clamp(lo, hi) as u64);
    }
    let v = if src.is_signed() {
        i128::from(a as i64)
    } else {
        i128::from(a)
    };
    if f.sat {
        extend(dst, v.clamp(lo, hi) as u64)
    } else {
        extend(dst, v as u64)
    }
}

/// `a cmp b` for values of `ty`.
pub fn setp(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    match ty {
        Ty::F32 => compare(
            cmp,
            flush(f32::from_bits(a as u32), ftz),
            flush(f32::from_bits(b as u32), ftz),
        ),
        Ty::F64 => compare(cmp, f64::from_bits(a), f64::from_bits(b)),
        _ if cmp.unsigned_only() || !ty.is_signed() => compare(cmp, a, b),
        _ => compare(cmp, a as i64, b as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(alu: Alu, ty: Ty) -> Form {
        Form {
            alu,
            ty,
            src_ty: ty,
            rnd: None,
            ftz: false,
            sat: false,
        }
    }

    #[test]
    fn sixty_four_bit_integers_wrap_and_extend() {
        let f = form(Alu::Add, Ty::U64);
        assert_eq!(alu(&f, u64::MAX, 2, 0, 0), 1);
        let f = form(Alu::MulHi, Ty::U64);
        assert_eq!(alu(&f, 1 << 40, 1 << 40, 0, 0), 1 << 16);
        let f = form(Alu::Shr, Ty::S64);
        assert_eq!(alu(&f, (-64i64) as u64, 3, 0, 0), (-8i64) as u64);
        let f = form(Alu::MulWide, Ty::S32);
        assert_eq!(alu(&f, read(Ty::S32, 0xffff_fffe), 3, 0, 0), (-6i64) as u64);
    }

    #[test]
    fn bit_operations_match_ptx_examples() {
        assert_eq!(alu(&form(Alu::Popc, Ty::B64), u64::MAX, 0, 0, 0), 64);
        assert_eq!(alu(&form(Alu::Clz, Ty::B32), 1, 0, 0, 0), 31);
        assert_eq!(alu(&form(Alu::Brev, Ty::B32), 1, 0, 0, 0), 0x8000_0000);
        assert_eq!(
            alu(
                &form(Alu::Bfind { shiftamt: false }, Ty::S32),
                read(Ty::S32, 0xffff_ff00),
                0,
                0,
                0
            ),
            7
        );
        // `.shiftamt` (CUDA's `__clz`-style use): 31 - 16 and 63 - 32.
        let shiftamt = |ty| form(Alu::Bfind { shiftamt: true }, ty);
        assert_eq!(alu(&shiftamt(Ty::U32), 0x1_0000, 0, 0, 0), 15);
        assert_eq!(alu(&shiftamt(Ty::U64), 1 << 32, 0, 0, 0), 31);
        assert_eq!(alu(&shiftamt(Ty::U32), 0, 0, 0, 0), 0xffff_ffff);
        assert_eq!(
            alu(&form(Alu::Bfe, Ty::S32), 0x0000_0f00, 8, 4, 0),
            read(Ty::S32, 0xffff_ffff)
        );
        assert_eq!(
            alu(
                &form(Alu::Prmt(None), Ty::B32),
                0x4433_2211,
                0x8877_6655,
                0x0000_7654,
                0
            ),
            0x8877_6655
        );
        // lop3 with the table of a & b | c.
        let lut = (0xf0 & 0xcc) | 0xaa;
        assert_eq!(alu(&form(Alu::Lop3, Ty::B32), 0xf0, 0xcc, 0xaa, lut), lut);
    }

    #[test]
    fn conversions_round_and_saturate() {
        let mut f = form(Alu::Cvt, Ty::S32);
        f.src_ty = Ty::F64;
        f.rnd = Some(Rnd::Rni);
        assert_eq!(alu(&f, 2.5f64.to_bits(), 0, 0, 0), 2);
        assert_eq!(alu(&f, 1e300f64.to_bits(), 0, 0, 0), i32::MAX as u64);
        let mut f = form(Alu::Cvt, Ty::U64);
        f.src_ty = Ty::S32;
        assert_eq!(alu(&f, read(Ty::S32, 0xffff_ffff), 0, 0, 0), u64::MAX);
        let mut f = form(Alu::Cvt, Ty::F64);
        f.src_ty = Ty::F32;
        assert_eq!(alu(&f, 1.5f32.to_bits().into(), 0, 0, 0), 1.5f64.to_bits());
    }
}
