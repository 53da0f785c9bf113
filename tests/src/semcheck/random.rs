//! Random choices of the corpus: a seeded generator, register inputs that favour
//! special values (zeros, infinities, NaNs, subnormals, range ends, ties), and
//! operands (registers or immediates).

use super::{Class, PREDS, REGS, Reg, Src, reference};
use spu_isa::Ty;

/// SplitMix64: small, seeded, the same on every host.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn bits(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.bits() % n as u64) as usize
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.bits() % 100 < percent
    }
}

fn float_specials(ty: Ty) -> Vec<u64> {
    if ty == Ty::F32 {
        [
            0x0000_0000u64,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fff_ffff,
            0x7fc0_0001,
            0x0000_0001,
            0x8000_0001,
            0x007f_ffff,
            0x0080_0000,
            0x8080_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x3f80_0000,
            0xbf80_0000,
            0x3f00_0000,
            0x3fc0_0000,
            0xbfc0_0000,
            0x4020_0000,
            0x4f00_0000,
            0xcf00_0000,
            0x5f00_0000,
            0xdf00_0000,
            0x3f7f_ffff,
            0x3f80_0001,
        ]
        .to_vec()
    } else {
        [
            0u64,
            0x8000_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7fff_ffff_ffff_ffff,
            0x7ff8_0000_0000_0001,
            1,
            0x8000_0000_0000_0001,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x8010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0xffef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x3fe0_0000_0000_0000,
            0x3ff8_0000_0000_0000,
            0xbff8_0000_0000_0000,
            0x4004_0000_0000_0000,
            0x41e0_0000_0000_0000,
            0xc1e0_0000_0000_0000,
            0x43e0_0000_0000_0000,
            0xc3e0_0000_0000_0000,
            0x3fef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0001,
            0x3810_0000_0000_0000,
            0x47ef_ffff_e000_0000,
        ]
        .to_vec()
    }
}

/// A random pattern of a register file, special values often.
pub(crate) fn input(rng: &mut Rng, class: Class) -> u64 {
    let bits = class.bits();
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    match class {
        Class::F | Class::Fd => {
            let ty = if class == Class::F { Ty::F32 } else { Ty::F64 };
            match rng.below(4) {
                0 => rng.pick(&float_specials(ty)),
                1 => rng.bits() & mask,
                _ => {
                    // A value of moderate size: an exponent near 1, random fraction
                    // and sign, sometimes cut to few significant bits (ties).
                    let (exp_bits, frac_bits, bias) = if ty == Ty::F32 {
                        (8, 23, 127)
                    } else {
                        (11, 52, 1023)
                    };
                    let e = (bias + rng.below(40) as u64).wrapping_sub(20) & ((1 << exp_bits) - 1);
                    let mut frac = rng.bits() & ((1 << frac_bits) - 1);
                    if rng.chance(50) {
                        frac &= !((1 << (frac_bits - rng.below(frac_bits as usize) as u32)) - 1);
                    }
                    let sign = (rng.bits() & 1) << (exp_bits + frac_bits);
                    sign | e << frac_bits | frac
                }
            }
        }
        _ => match rng.below(4) {
            0 => rng.pick(&[
                0,
                1,
                2,
                mask,
                mask >> 1,
                (mask >> 1) + 1,
                mask - 1,
                0x80,
                0xff,
                0x7f,
            ]),
            1 => rng.below(70) as u64,
            _ => rng.bits() & mask,
        },
    }
}

pub(crate) fn reg(rng: &mut Rng, class: Class) -> Reg {
    Reg {
        class,
        n: rng.below(if class == Class::P { PREDS } else { REGS }),
    }
}

/// An integer immediate of `ty`: (pattern, text).
fn int_imm(rng: &mut Rng, ty: Ty) -> Src {
    let v: i64 = if ty.is_signed() {
        rng.below(48) as i64 - 8
    } else {
        rng.below(40) as i64
    };
    Src::Imm(reference::int::wrap(ty, i128::from(v)), v.to_string())
}

fn float_imm(rng: &mut Rng, ty: Ty) -> Src {
    let v = rng.pick(&[0.0, -0.0, 1.0, -1.5, 0.5, 2.0, 3.25, -1e10, 1e-3, 0.1]);
    if ty == Ty::F32 {
        let bits = (v as f32).to_bits();
        Src::Imm(u64::from(bits), format!("0f{bits:08X}"))
    } else {
        let bits = f64::to_bits(v);
        Src::Imm(bits, format!("0d{bits:016X}"))
    }
}

/// An operand of `ty`, an immediate with `imm_percent` chance.
pub(crate) fn operand(rng: &mut Rng, ty: Ty, imm_percent: u64) -> Src {
    if rng.chance(imm_percent) {
        if ty.is_float() {
            float_imm(rng, ty)
        } else {
            int_imm(rng, ty)
        }
    } else {
        Src::Reg(reg(rng, Class::of(ty)))
    }
}
