//! Integers and bits for the reference, from ISA.md's notes and the PTX manual's
//! semantics blocks (9.7.1 integer arithmetic, 9.7.8 logic and shifts, 9.7.9.7
//! `prmt`): values as `i128` of their type, results as the type's low bits.

use spu_isa::{Half, PrmtMode, ShfDir, ShfMode, Ty};

/// The low `bits` of `v` as an unsigned number.
pub fn low(bits: u32, v: u64) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// The value a pattern of `ty` holds.
pub fn value(ty: Ty, v: u64) -> i128 {
    let w = ty.bits();
    let u = low(w, v);
    if ty.is_signed() && w < 128 && u >> (w - 1) & 1 == 1 {
        i128::from(u) - (1i128 << w)
    } else {
        i128::from(u)
    }
}

/// `n` modulo 2^width, as the pattern of `ty` extended to 64 bits by its
/// signedness (what a register of any width then holds in its low bits).
pub fn wrap(ty: Ty, n: i128) -> u64 {
    let w = ty.bits();
    let u = (n as u128 as u64) & if w >= 64 { u64::MAX } else { (1 << w) - 1 };
    if ty.is_signed() && w < 64 && u >> (w - 1) & 1 == 1 {
        u | !((1u64 << w) - 1)
    } else {
        u
    }
}

/// The range of `ty`.
pub fn range(ty: Ty) -> (i128, i128) {
    let w = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

pub fn add(ty: Ty, a: u64, b: u64, sat: bool) -> u64 {
    let s = value(ty, a) + value(ty, b);
    if sat {
        let (lo, hi) = range(ty);
        return wrap(ty, s.clamp(lo, hi));
    }
    wrap(ty, s)
}

pub fn sub(ty: Ty, a: u64, b: u64, sat: bool) -> u64 {
    let s = value(ty, a) - value(ty, b);
    if sat {
        let (lo, hi) = range(ty);
        return wrap(ty, s.clamp(lo, hi));
    }
    wrap(ty, s)
}

/// The double-width product's half (`.lo`/`.hi`), as `ty`.
fn product_half(ty: Ty, a: u64, b: u64, half: Half) -> i128 {
    let p = value(ty, a) * value(ty, b);
    match half {
        Half::Lo => p,
        // An arithmetic shift: the high half of a signed product keeps its sign.
        Half::Hi => p >> ty.bits(),
    }
}

pub fn mul(ty: Ty, a: u64, b: u64, half: Half) -> u64 {
    wrap(ty, product_half(ty, a, b, half))
}

/// `mad.lo`/`mad.hi`: the half plus c; `.sat` (`.hi.s32` only) clamps the sum.
pub fn mad(ty: Ty, a: u64, b: u64, c: u64, half: Half, sat: bool) -> u64 {
    let half = match half {
        Half::Lo => wrap(ty, product_half(ty, a, b, half)),
        Half::Hi => wrap(ty, product_half(ty, a, b, half)),
    };
    add(ty, half, c, sat)
}

/// `mul.wide`: the product of two `ty` values in twice the width.
pub fn mul_wide(ty: Ty, a: u64, b: u64) -> u64 {
    let wide = ty.widened().expect("a 16- or 32-bit type");
    wrap(wide, value(ty, a) * value(ty, b))
}

pub fn mad_wide(ty: Ty, a: u64, b: u64, c: u64) -> u64 {
    let wide = ty.widened().expect("a 16- or 32-bit type");
    wrap(wide, value(ty, a) * value(ty, b) + value(wide, c))
}

/// ISA notes: truncating; by zero all ones (unsigned, or a signed a >= 0) or 1
/// (signed a < 0); the most negative value by -1 gives itself.
pub fn div(ty: Ty, a: u64, b: u64) -> u64 {
    let (x, y) = (value(ty, a), value(ty, b));
    if y == 0 {
        return if ty.is_signed() && x < 0 {
            1
        } else {
            wrap(ty, -1)
        };
    }
    wrap(ty, x / y)
}

/// ISA notes: the sign of a; by zero gives a.
pub fn rem(ty: Ty, a: u64, b: u64) -> u64 {
    let (x, y) = (value(ty, a), value(ty, b));
    if y == 0 {
        return wrap(ty, x);
    }
    wrap(ty, x % y)
}

pub fn min_max(ty: Ty, a: u64, b: u64, max: bool) -> u64 {
    let (x, y) = (value(ty, a), value(ty, b));
    wrap(ty, if max { x.max(y) } else { x.min(y) })
}

pub fn abs(ty: Ty, a: u64) -> u64 {
    wrap(ty, value(ty, a).abs())
}

pub fn neg(ty: Ty, a: u64) -> u64 {
    wrap(ty, -value(ty, a))
}

/// `shl`/`shr` by `b` (a `.u32`): by the width or more, 0 (or all sign bits).
pub fn shift(ty: Ty, a: u64, b: u64, left: bool) -> u64 {
    let n = low(32, b);
    let x = value(ty, a);
    let w = u64::from(ty.bits());
    if left {
        return if n >= w { 0 } else { wrap(ty, x << n) };
    }
    if n >= w {
        return wrap(ty, if x < 0 { -1 } else { 0 });
    }
    wrap(ty, x >> n)
}

pub fn popc(ty: Ty, a: u64) -> u64 {
    u64::from(low(ty.bits(), a).count_ones())
}

pub fn clz(ty: Ty, a: u64) -> u64 {
    let w = ty.bits();
    (0..w).rev().take_while(|i| a >> i & 1 == 0).count() as u64
}

pub fn brev(ty: Ty, a: u64) -> u64 {
    let w = ty.bits();
    let r = (0..w).fold(0u64, |r, i| r | (a >> i & 1) << (w - 1 - i));
    wrap(ty, i128::from(r))
}

/// PTX 9.7.1.16 `bfind`.
pub fn bfind(ty: Ty, a: u64, shiftamt: bool) -> u64 {
    let msb = ty.bits() - 1;
    let mut x = low(ty.bits(), a);
    if ty.is_signed() && x >> msb & 1 == 1 {
        x = low(ty.bits(), !x);
    }
    match (0..=msb).rev().find(|i| x >> i & 1 == 1) {
        None => 0xffff_ffff,
        Some(i) if shiftamt => u64::from(msb - i),
        Some(i) => u64::from(i),
    }
}

/// PTX 9.7.1.19 `bfe`.
pub fn bfe(ty: Ty, a: u64, b: u64, c: u64) -> u64 {
    let msb = u64::from(ty.bits() - 1);
    let (pos, len) = (b & 0xff, c & 0xff);
    let sbit = if !ty.is_signed() || len == 0 {
        0
    } else {
        a >> (pos + len - 1).min(msb) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            a >> (pos + i) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    wrap(ty, i128::from(d))
}

/// PTX 9.7.1.20 `bfi`: `b` with the field at `c` of length `e` taken from `a`.
pub fn bfi(ty: Ty, a: u64, b: u64, c: u64, e: u64) -> u64 {
    let msb = u64::from(ty.bits() - 1);
    let (pos, len) = (c & 0xff, e & 0xff);
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (a >> i & 1) << (pos + i);
        i += 1;
    }
    wrap(ty, i128::from(low(ty.bits(), f)))
}

/// PTX 9.7.9.7 `prmt`, the mode tables written out.
pub fn prmt(a: u64, b: u64, c: u64, mode: Option<PrmtMode>) -> u64 {
    let source = low(32, b) << 32 | low(32, a);
    let byte = |k: u64| source >> (8 * k) & 0xff;
    let sel = (c & 3) as usize;
    // d.b0 .. d.b3 for each selector, from the manual's table (given b3 .. b0).
    let table = |rows: [[u64; 4]; 4]| {
        let r = rows[sel];
        [r[3], r[2], r[1], r[0]]
    };
    let picks: [u64; 4] = match mode {
        None => {
            let mut d = 0;
            for i in 0..4 {
                let ctl = c >> (4 * i) & 0xf;
                let v = byte(ctl & 7);
                let v = if ctl & 8 != 0 {
                    if v & 0x80 != 0 { 0xff } else { 0 }
                } else {
                    v
                };
                d |= v << (8 * i);
            }
            return d;
        }
        Some(PrmtMode::F4e) => table([[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]]),
        Some(PrmtMode::B4e) => table([[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]]),
        Some(PrmtMode::Rc8) => table([[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
        Some(PrmtMode::Ecl) => table([[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]]),
        Some(PrmtMode::Ecr) => table([[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]]),
        Some(PrmtMode::Rc16) => table([[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]]),
    };
    picks
        .iter()
        .enumerate()
        .fold(0, |d, (i, &k)| d | byte(k) << (8 * i))
}

/// PTX 9.7.8.7 `shf`.
pub fn shf(a: u64, b: u64, c: u64, dir: ShfDir, mode: ShfMode) -> u64 {
    let c = low(32, c);
    let n = match mode {
        ShfMode::Clamp => c.min(32),
        ShfMode::Wrap => c & 0x1f,
    };
    let (a, b) = (low(32, a), low(32, b));
    // The manual's formulas, with shifts by 32 giving 0.
    let shl = |x: u64, k: u64| if k >= 32 { 0 } else { (x << k) & 0xffff_ffff };
    let shr = |x: u64, k: u64| if k >= 32 { 0 } else { x >> k };
    match dir {
        ShfDir::L => shl(b, n) | shr(a, 32 - n),
        ShfDir::R => shl(b, 32 - n) | shr(a, n),
    }
}

/// PTX 9.7.8.6 `lop3`: bit i of `d` is bit (a_i b_i c_i) of the table.
pub fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    (0..32).fold(0, |d, i| {
        let k = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
        d | (lut >> k & 1) << i
    })
}
