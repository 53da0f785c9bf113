//! Logic, shifts and bit fields on integers of the instruction's width: `and or
//! xor not shl shr popc clz brev bfind bfe bfi prmt shf lop3`, as the PTX ISA
//! defines them.

use crate::sem::{Form, extend, low};
use spu_isa::{PrmtMode, ShfDir, ShfMode};

/// `and`: d = a & b.
#[inline(always)]
pub fn and(_: &Form, a: u64, b: u64) -> u64 {
    a & b
}

/// `or`: d = a | b.
#[inline(always)]
pub fn or(_: &Form, a: u64, b: u64) -> u64 {
    a | b
}

/// `xor`: d = a ^ b.
#[inline(always)]
pub fn xor(_: &Form, a: u64, b: u64) -> u64 {
    a ^ b
}

/// `not`: d = !a.
#[inline(always)]
pub fn not(f: &Form, a: u64) -> u64 {
    extend(f.ty, !a)
}

/// `shl`: d = a << b; shifts by the width or more give 0.
#[inline(always)]
pub fn shl(f: &Form, a: u64, b: u64) -> u64 {
    let n = b as u32;
    if n >= f.ty.bits() {
        0
    } else {
        extend(f.ty, a << n)
    }
}

/// `shr`: d = a >> b, arithmetic for signed types; shifts by the width or more
/// give 0, or -1 for negative signed values.
#[inline(always)]
pub fn shr(f: &Form, a: u64, b: u64) -> u64 {
    let n = b as u32;
    if f.ty.is_signed() {
        extend(f.ty, ((a as i64) >> n.min(63)) as u64)
    } else if n >= f.ty.bits() {
        0
    } else {
        a >> n
    }
}

/// `popc`: the number of set bits.
pub fn popc(f: &Form, a: u64) -> u64 {
    u64::from(low(f.ty.bits(), a).count_ones())
}

/// `clz`: the number of leading zero bits.
pub fn clz(f: &Form, a: u64) -> u64 {
    let w = f.ty.bits();
    u64::from(low(w, a).leading_zeros() - (64 - w))
}

/// `brev`: the bits in reverse order.
pub fn brev(f: &Form, a: u64) -> u64 {
    let w = f.ty.bits();
    extend(f.ty, low(w, a).reverse_bits() >> (64 - w))
}

/// `bfind`: the position of the most significant non-sign bit (`.shiftamt`: the
/// left shift that brings it to the top), or 0xffffffff if there is none.
pub fn bfind(f: &Form, a: u64) -> u64 {
    let w = f.ty.bits();
    let v = if f.ty.is_signed() && (a as i64) < 0 {
        !a
    } else {
        a
    };
    let v = low(w, v);
    let at = 63 - v.leading_zeros();
    match (v, f.mods.shiftamt.is_some()) {
        (0, _) => 0xffff_ffff,
        (_, false) => u64::from(at),
        (_, true) => u64::from(w - 1 - at),
    }
}

/// `bfe`: the `c` bits of `a` from bit `b` (low 8 bits of each), the rest filled
/// with the field's sign bit for signed types (zero for unsigned types and empty
/// fields).
pub fn bfe(f: &Form, a: u64, b: u64, c: u64) -> u64 {
    let ty = f.ty;
    let msb = ty.bits() - 1;
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

/// `bfi`: `b` with its `e` bits from bit `c` (low 8 bits of each) replaced by the
/// low bits of `a`.
pub fn bfi(f: &Form, a: u64, b: u64, c: u64, e: u64) -> u64 {
    let w = f.ty.bits();
    let (pos, len) = ((c & 0xff) as u32, (e & 0xff) as u32);
    let mut d = b;
    for i in 0..len.min(w) {
        if pos + i < w {
            d = (d & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        }
    }
    extend(f.ty, d)
}

/// `prmt`: bytes of `{b, a}` picked by the selector `c`: the generic form (each
/// nibble picks a byte, bit 3 replicates its sign) or one of PTX's modes.
pub fn prmt(f: &Form, a: u64, b: u64, c: u64) -> u64 {
    let both = (low(32, b) << 32) | low(32, a);
    let mut d = 0u64;
    for i in 0..4 {
        let byte = match f.mods.prmt {
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

/// `shf`: the 32 bits of `{b, a}` shifted left (high word) or right (low word) by
/// `c`, the whole register, clamped to 32 (`.clamp`) or taken modulo 32 (`.wrap`).
pub fn shf(f: &Form, a: u64, b: u64, c: u64) -> u64 {
    let n = if f.mods.shf_mode == Some(ShfMode::Clamp) {
        (c as u32).min(32)
    } else {
        c as u32 & 31
    };
    let both = (low(32, b) << 32) | low(32, a);
    if f.mods.dir == Some(ShfDir::L) {
        ((both << n) >> 32) & 0xffff_ffff
    } else {
        (both >> n) & 0xffff_ffff
    }
}

/// `lop3`: the bitwise function of a, b, c whose truth table is `e` (a = 0xf0,
/// b = 0xcc, c = 0xaa).
pub fn lop3(_: &Form, a: u64, b: u64, c: u64, e: u64) -> u64 {
    let mut d = 0u64;
    for i in 0..8 {
        if e & (1 << i) != 0 {
            let pick = |x: u64, bit: u32| if i & (1 << bit) != 0 { x } else { !x };
            d |= pick(a, 2) & pick(b, 1) & pick(c, 0);
        }
    }
    low(32, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sem::read;
    use spu_isa::Ty;

    #[test]
    fn bit_operations_match_ptx_examples() {
        let f = Form::plain;
        assert_eq!(popc(&f(Ty::B64), u64::MAX), 64);
        assert_eq!(clz(&f(Ty::B32), 1), 31);
        assert_eq!(brev(&f(Ty::B32), 1), 0x8000_0000);
        assert_eq!(bfind(&f(Ty::S32), read(Ty::S32, 0xffff_ff00)), 7);
        let mut shiftamt = f(Ty::U32);
        shiftamt.mods.shiftamt = Some(spu_isa::ShiftAmt::ShiftAmt);
        assert_eq!(bfind(&shiftamt, 0x1_0000), 15);
        assert_eq!(bfind(&shiftamt, 0), 0xffff_ffff);
        assert_eq!(
            bfe(&f(Ty::S32), 0x0000_0f00, 8, 4),
            read(Ty::S32, 0xffff_ffff)
        );
        assert_eq!(
            prmt(&f(Ty::B32), 0x4433_2211, 0x8877_6655, 0x0000_7654),
            0x8877_6655
        );
        let lut = (0xf0 & 0xcc) | 0xaa;
        assert_eq!(lop3(&f(Ty::B32), 0xf0, 0xcc, 0xaa, lut), lut);
        assert_eq!(shl(&f(Ty::B32), 1, 32), 0);
        assert_eq!(
            shr(&f(Ty::S32), read(Ty::S32, (-8i32) as u32 as u64), 40) as u32 as i32,
            -1
        );
    }
}
