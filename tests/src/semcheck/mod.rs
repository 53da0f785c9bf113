//! The differential corpus: random kernels over the value-computing forms of the
//! ISA (integer arithmetic of 16, 32 and 64 bits, `mul.wide`/`mad.wide`, bit
//! operations, `.f32`/`.f64` arithmetic in every rounding mode with `.ftz` and
//! `.sat`, `cvt` between all of `u8 ... f64`, `setp`, `selp`, `copysign`),
//! guarded instructions and forward branches that diverge within a warp. Every
//! thread loads its own operands, each instruction's result is stored, and every
//! stored word is compared with the independent [`reference`]. Not covered: the
//! SFU functions `ex2 lg2 sin cos` (the host's `f64` functions define them),
//! memory, atomics and warp operations (the conformance sources test those).

pub mod reference;

use reference::{Arith, Logic, Op};
use spu_emu::{Machine, RunControl};
use spu_isa::{Cmp, Half, PrmtMode, Rnd, ShfDir, ShfMode, Ty};
use std::fmt::Write as _;

/// SplitMix64: small, seeded, the same on every host.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The register files a kernel declares: 16-, 32- and 64-bit integers, `.f32`,
/// `.f64` and predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    H,
    R,
    Rd,
    F,
    Fd,
    P,
}

impl Class {
    const VALUES: [Class; 5] = [Class::H, Class::R, Class::Rd, Class::F, Class::Fd];

    fn prefix(self) -> &'static str {
        match self {
            Class::H => "h",
            Class::R => "r",
            Class::Rd => "rd",
            Class::F => "f",
            Class::Fd => "fd",
            Class::P => "p",
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Class::H => ".b16",
            Class::R => ".b32",
            Class::Rd => ".b64",
            Class::F => ".f32",
            Class::Fd => ".f64",
            Class::P => ".pred",
        }
    }
    fn bits(self) -> u32 {
        match self {
            Class::H => 16,
            Class::R | Class::F => 32,
            Class::Rd | Class::Fd => 64,
            Class::P => 1,
        }
    }
    /// The register file of a value of `ty` (8-bit values live in 16-bit registers).
    fn of(ty: Ty) -> Class {
        match ty {
            Ty::F32 => Class::F,
            Ty::F64 => Class::Fd,
            t if t.bits() <= 16 => Class::H,
            t if t.bits() == 32 => Class::R,
            _ => Class::Rd,
        }
    }
}

/// Registers per file.
const REGS: usize = 6;
/// Predicates.
const PREDS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reg {
    pub class: Class,
    pub n: usize,
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "%{}{}", self.class.prefix(), self.n)
    }
}

/// An operand: a register, or an immediate (its pattern, and its text).
#[derive(Debug, Clone, PartialEq)]
pub enum Src {
    Reg(Reg),
    Imm(u64, String),
}

impl std::fmt::Display for Src {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Src::Reg(r) => r.fmt(f),
            Src::Imm(_, t) => f.write_str(t),
        }
    }
}

/// A generated instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub text: String,
    pub dst: Reg,
    pub srcs: Vec<Src>,
    /// `selp`'s predicate.
    pub pred: Option<Reg>,
    /// `@%p` or `@!%p`.
    pub guard: Option<(Reg, bool)>,
    /// Where the result is stored (an 8-byte slot), and as how many bits.
    pub slot: usize,
    pub store_bits: u32,
}

/// A piece of a kernel: an instruction, or a block that threads whose predicate
/// holds (or fails, `negated`) jump over.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Inst(Inst),
    Skip {
        pred: Reg,
        negated: bool,
        body: Vec<Inst>,
    },
}

/// A random kernel and what it needs to run.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub text: String,
    pub pieces: Vec<Piece>,
    pub threads: usize,
    pub out_slots: usize,
    /// Per thread: the initial pattern of every value register, by file.
    pub inputs: Vec<Vec<(Reg, u64)>>,
}

/// Input slots per thread: one per value register.
const IN_SLOTS: usize = REGS * 5;

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
fn input(rng: &mut Rng, class: Class) -> u64 {
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
                1 => rng.next() & mask,
                _ => {
                    // A value of moderate size: an exponent near 1, random fraction
                    // and sign, sometimes cut to few significant bits (ties).
                    let (exp_bits, frac_bits, bias) = if ty == Ty::F32 {
                        (8, 23, 127)
                    } else {
                        (11, 52, 1023)
                    };
                    let e = (bias + rng.below(40) as u64).wrapping_sub(20) & ((1 << exp_bits) - 1);
                    let mut frac = rng.next() & ((1 << frac_bits) - 1);
                    if rng.chance(50) {
                        frac &= !((1 << (frac_bits - rng.below(frac_bits as usize) as u32)) - 1);
                    }
                    let sign = (rng.next() & 1) << (exp_bits + frac_bits);
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
            _ => rng.next() & mask,
        },
    }
}

fn reg(rng: &mut Rng, class: Class) -> Reg {
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
fn operand(rng: &mut Rng, ty: Ty, imm_percent: u64) -> Src {
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

const RNDS: [Rnd; 4] = [Rnd::Rn, Rnd::Rz, Rnd::Rm, Rnd::Rp];
const IRNDS: [Rnd; 4] = [Rnd::Rni, Rnd::Rzi, Rnd::Rmi, Rnd::Rpi];
const INTS: [Ty; 6] = [Ty::U16, Ty::S16, Ty::U32, Ty::S32, Ty::U64, Ty::S64];
const CVT_TYS: [Ty; 10] = [
    Ty::U8,
    Ty::S8,
    Ty::U16,
    Ty::S16,
    Ty::U32,
    Ty::S32,
    Ty::U64,
    Ty::S64,
    Ty::F32,
    Ty::F64,
];
const VALUE_TYS: [Ty; 11] = [
    Ty::B16,
    Ty::B32,
    Ty::B64,
    Ty::U16,
    Ty::S16,
    Ty::U32,
    Ty::S32,
    Ty::U64,
    Ty::S64,
    Ty::F32,
    Ty::F64,
];

/// `.m` for each modifier that is set, in order.
fn mods(parts: &[Option<&str>]) -> String {
    parts.iter().flatten().map(|m| format!(".{m}")).collect()
}

/// One random instruction (without its slot).
fn instruction(rng: &mut Rng) -> (Op, String, Reg, Vec<Src>, Option<Reg>) {
    let fty = rng.pick(&[Ty::F32, Ty::F64]);
    let ity = rng.pick(&INTS);
    let u32_reg = |rng: &mut Rng| Src::Reg(reg(rng, Class::R));
    let ftz_ok = |rng: &mut Rng, ty: Ty| ty == Ty::F32 && rng.chance(40);
    // (op, mnemonic with modifiers, destination type, sources)
    let (op, name, dty, srcs, pred): (Op, String, Ty, Vec<Src>, Option<Reg>) = match rng.below(27) {
        0 | 1 => {
            let sat = ity == Ty::S32 && rng.chance(40);
            let sub = rng.chance(50);
            let op = if sub {
                Op::Sub { ty: ity, sat }
            } else {
                Op::Add { ty: ity, sat }
            };
            let name = format!(
                "{}{}.{ity}",
                if sub { "sub" } else { "add" },
                mods(&[sat.then_some("sat")])
            );
            let srcs = vec![operand(rng, ity, 0), operand(rng, ity, 25)];
            (op, name, ity, srcs, None)
        }
        2 => {
            let half = rng.pick(&[Half::Lo, Half::Hi]);
            let srcs = vec![operand(rng, ity, 0), operand(rng, ity, 25)];
            (Op::Mul { ty: ity, half }, format!("mul.{half}.{ity}", half = half.name()), ity, srcs, None)
        }
        3 => {
            let half = rng.pick(&[Half::Lo, Half::Hi]);
            let sat = ity == Ty::S32 && half == Half::Hi && rng.chance(50);
            let srcs = vec![operand(rng, ity, 0), operand(rng, ity, 25), operand(rng, ity, 0)];
            let name = format!("mad.{}{}.{ity}", half.name(), mods(&[sat.then_some("sat")]));
            (Op::Mad { ty: ity, half, sat }, name, ity, srcs, None)
        }
        4 => {
            let ty = rng.pick(&[Ty::U16, Ty::S16, Ty::U32, Ty::S32]);
            let wide = ty.widened().expect("16 or 32 bits");
            if rng.chance(50) {
                let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 25)];
                (Op::MulWide { ty }, format!("mul.wide.{ty}"), wide, srcs, None)
            } else {
                let c = Src::Reg(reg(rng, Class::of(wide)));
                let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 0), c];
                (Op::MadWide { ty }, format!("mad.wide.{ty}"), wide, srcs, None)
            }
        }
        5 => {
            let rem = rng.chance(50);
            let srcs = vec![operand(rng, ity, 0), operand(rng, ity, 20)];
            let (op, m) = if rem {
                (Op::Rem { ty: ity }, "rem")
            } else {
                (Op::Div { ty: ity }, "div")
            };
            (op, format!("{m}.{ity}"), ity, srcs, None)
        }
        6 => {
            let max = rng.chance(50);
            let srcs = vec![operand(rng, ity, 0), operand(rng, ity, 20)];
            let m = if max { "max" } else { "min" };
            (Op::MinMax { ty: ity, max }, format!("{m}.{ity}"), ity, srcs, None)
        }
        7 => {
            let ty = rng.pick(&[Ty::S16, Ty::S32, Ty::S64]);
            let neg = rng.chance(50);
            let srcs = vec![operand(rng, ty, 0)];
            if neg {
                (Op::Neg { ty }, format!("neg.{ty}"), ty, srcs, None)
            } else {
                (Op::Abs { ty }, format!("abs.{ty}"), ty, srcs, None)
            }
        }
        8 => {
            let left = rng.chance(50);
            let ty = if left {
                rng.pick(&[Ty::B16, Ty::B32, Ty::B64, Ty::U32, Ty::S32])
            } else {
                rng.pick(&[
                    Ty::B16,
                    Ty::B32,
                    Ty::B64,
                    Ty::U16,
                    Ty::S16,
                    Ty::U32,
                    Ty::S32,
                    Ty::U64,
                    Ty::S64,
                ])
            };
            let b = if rng.chance(40) {
                let n = rng.below(70) as u64;
                Src::Imm(n, n.to_string())
            } else {
                u32_reg(rng)
            };
            let srcs = vec![operand(rng, ty, 0), b];
            let m = if left { "shl" } else { "shr" };
            (Op::Shift { ty, left }, format!("{m}.{ty}"), ty, srcs, None)
        }
        9 => {
            let ty = rng.pick(&[Ty::B16, Ty::B32, Ty::B64, Ty::U32, Ty::S32]);
            if rng.chance(25) {
                (Op::Not { ty }, format!("not.{ty}"), ty, vec![operand(rng, ty, 0)], None)
            } else {
                let op = rng.pick(&[Logic::And, Logic::Or, Logic::Xor]);
                let m = match op {
                    Logic::And => "and",
                    Logic::Or => "or",
                    Logic::Xor => "xor",
                };
                let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 25)];
                (Op::Logic { ty, op }, format!("{m}.{ty}"), ty, srcs, None)
            }
        }
        10 => {
            let ty = rng.pick(&[Ty::B32, Ty::B64]);
            let srcs = vec![operand(rng, ty, 0)];
            match rng.below(3) {
                0 => (Op::Popc { ty }, format!("popc.{ty}"), Ty::U32, srcs, None),
                1 => (Op::Clz { ty }, format!("clz.{ty}"), Ty::U32, srcs, None),
                _ => (Op::Brev { ty }, format!("brev.{ty}"), ty, srcs, None),
            }
        }
        11 => {
            let ty = rng.pick(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64]);
            match rng.below(3) {
                0 => {
                    let shiftamt = rng.chance(50);
                    let name = format!("bfind{}.{ty}", mods(&[shiftamt.then_some("shiftamt")]));
                    (Op::Bfind { ty, shiftamt }, name, Ty::U32, vec![operand(rng, ty, 0)], None)
                }
                1 => {
                    let srcs = vec![operand(rng, ty, 0), u32_reg(rng), u32_reg(rng)];
                    (Op::Bfe { ty }, format!("bfe.{ty}"), ty, srcs, None)
                }
                _ => {
                    let ty = if ty.bits() == 32 { Ty::B32 } else { Ty::B64 };
                    let srcs = vec![
                        operand(rng, ty, 0),
                        operand(rng, ty, 0),
                        u32_reg(rng),
                        u32_reg(rng),
                    ];
                    (Op::Bfi { ty }, format!("bfi.{ty}"), ty, srcs, None)
                }
            }
        }
        12 => {
            let b32 = |rng: &mut Rng| Src::Reg(reg(rng, Class::R));
            match rng.below(3) {
                0 => {
                    let mode = if rng.chance(40) {
                        None
                    } else {
                        Some(rng.pick(PrmtMode::ALL))
                    };
                    let srcs = vec![b32(rng), b32(rng), b32(rng)];
                    let name = format!("prmt.b32{}", mods(&[mode.map(PrmtMode::name)]));
                    (Op::Prmt { mode }, name, Ty::B32, srcs, None)
                }
                1 => {
                    let dir = rng.pick(ShfDir::ALL);
                    let mode = rng.pick(ShfMode::ALL);
                    let srcs = vec![b32(rng), b32(rng), b32(rng)];
                    let name = format!("shf.{}.{}.b32", dir.name(), mode.name());
                    (Op::Shf { dir, mode }, name, Ty::B32, srcs, None)
                }
                _ => {
                    let lut = rng.next() as u8;
                    let srcs = vec![
                        b32(rng),
                        b32(rng),
                        b32(rng),
                        Src::Imm(u64::from(lut), format!("{lut:#04x}")),
                    ];
                    (Op::Lop3 { lut }, "lop3.b32".into(), Ty::B32, srcs, None)
                }
            }
        }
        13..=15 => {
            let op = rng.pick(&[Arith::Add, Arith::Sub, Arith::Mul]);
            let rnd = if rng.chance(20) { None } else { Some(rng.pick(&RNDS)) };
            let ftz = ftz_ok(rng, fty);
            let sat = fty == Ty::F32 && rng.chance(25);
            let m = match op {
                Arith::Add => "add",
                Arith::Sub => "sub",
                Arith::Mul => "mul",
            };
            let name = format!(
                "{m}{}.{fty}",
                mods(&[rnd.map(Rnd::name), ftz.then_some("ftz"), sat.then_some("sat")])
            );
            let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 20)];
            (Op::FArith { ty: fty, op, rnd, ftz, sat }, name, fty, srcs, None)
        }
        16 => {
            let rnd = rng.pick(&RNDS);
            let ftz = ftz_ok(rng, fty);
            let sat = fty == Ty::F32 && rng.chance(25);
            let name = format!(
                "fma.{}{}.{fty}",
                rnd.name(),
                mods(&[ftz.then_some("ftz"), sat.then_some("sat")])
            );
            let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 15), operand(rng, fty, 0)];
            (Op::Fma { ty: fty, rnd, ftz, sat }, name, fty, srcs, None)
        }
        17 => {
            let ftz = ftz_ok(rng, fty);
            let (rnd, prec) = if fty == Ty::F32 && rng.chance(30) {
                (None, Some(rng.pick(&["approx", "full"])))
            } else {
                (Some(rng.pick(&RNDS)), None)
            };
            let name = format!(
                "div{}.{fty}",
                mods(&[rnd.map(Rnd::name), prec, ftz.then_some("ftz")])
            );
            let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 15)];
            (Op::FDiv { ty: fty, rnd, ftz }, name, fty, srcs, None)
        }
        18 => {
            let sqrt = rng.chance(50);
            let mut ftz = ftz_ok(rng, fty);
            let rnd = if rng.chance(25) && (fty == Ty::F32 || !sqrt) {
                // `.approx`: `.f32`, or `rcp.approx.ftz.f64`.
                if fty == Ty::F64 {
                    ftz = true;
                }
                None
            } else {
                Some(rng.pick(&RNDS))
            };
            let m = if sqrt { "sqrt" } else { "rcp" };
            let name = format!(
                "{m}{}.{fty}",
                mods(&[
                    rnd.map_or(Some("approx"), |r| Some(r.name())),
                    ftz.then_some("ftz")
                ])
            );
            let srcs = vec![operand(rng, fty, 0)];
            let op = if sqrt {
                Op::Sqrt { ty: fty, rnd, ftz }
            } else {
                Op::Rcp { ty: fty, rnd, ftz }
            };
            (op, name, fty, srcs, None)
        }
        19 => {
            let ftz = rng.chance(40);
            let name = format!("rsqrt.approx{}.{fty}", mods(&[ftz.then_some("ftz")]));
            (Op::Rsqrt { ty: fty, ftz }, name, fty, vec![operand(rng, fty, 0)], None)
        }
        20 => {
            let ftz = ftz_ok(rng, fty);
            let f = mods(&[ftz.then_some("ftz")]);
            match rng.below(3) {
                0 => {
                    let max = rng.chance(50);
                    let m = if max { "max" } else { "min" };
                    let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 15)];
                    (Op::FMinMax { ty: fty, max, ftz }, format!("{m}{f}.{fty}"), fty, srcs, None)
                }
                1 => {
                    let neg = rng.chance(50);
                    let m = if neg { "neg" } else { "abs" };
                    let srcs = vec![operand(rng, fty, 0)];
                    (Op::FSign { ty: fty, neg, ftz }, format!("{m}{f}.{fty}"), fty, srcs, None)
                }
                _ => {
                    let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 0)];
                    (Op::Copysign { ty: fty }, format!("copysign.{fty}"), fty, srcs, None)
                }
            }
        }
        21 | 22 => {
            let ty = rng.pick(&VALUE_TYS);
            let cmps: Vec<Cmp> = Cmp::ALL
                .iter()
                .copied()
                .filter(|c| {
                    if ty.is_float() {
                        !c.unsigned_only()
                    } else if c.float_only() {
                        false
                    } else if c.unsigned_only() {
                        !ty.is_signed() && ty.name().starts_with('u')
                    } else if ty.name().starts_with('b') {
                        matches!(c, Cmp::Eq | Cmp::Ne)
                    } else {
                        true
                    }
                })
                .collect();
            let cmp = rng.pick(&cmps);
            let ftz = ftz_ok(rng, ty);
            let name = format!("setp.{}{}.{ty}", cmp.name(), mods(&[ftz.then_some("ftz")]));
            let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 15)];
            (Op::Setp { ty, cmp, ftz }, name, Ty::B32, srcs, None)
        }
        23 => {
            let ty = rng.pick(&VALUE_TYS);
            let srcs = vec![operand(rng, ty, 10), operand(rng, ty, 10)];
            let p = reg(rng, Class::P);
            (Op::Selp { ty }, format!("selp.{ty}"), ty, srcs, Some(p))
        }
        _ => {
            let (dst, src) = (rng.pick(&CVT_TYS), rng.pick(&CVT_TYS));
            let rnd = match (src.is_float(), dst.is_float()) {
                (true, false) => rng.chance(70).then(|| rng.pick(&IRNDS)),
                (true, true) if dst == src => rng.chance(80).then(|| rng.pick(&IRNDS)),
                (true, true) if dst.bits() < src.bits() => rng.chance(80).then(|| rng.pick(&RNDS)),
                (false, true) => rng.chance(80).then(|| rng.pick(&RNDS)),
                _ => None,
            };
            let ftz = (dst == Ty::F32 || src == Ty::F32) && rng.chance(40);
            let sat = rng.chance(30);
            let name = format!(
                "cvt{}.{dst}.{src}",
                mods(&[rnd.map(Rnd::name), ftz.then_some("ftz"), sat.then_some("sat")])
            );
            let srcs = vec![Src::Reg(reg(rng, Class::of(src)))];
            (Op::Cvt { dst, src, rnd, ftz, sat }, name, dst, srcs, None)
        }
    };
    let dst = if matches!(op, Op::Setp { .. }) {
        reg(rng, Class::P)
    } else {
        reg(rng, Class::of(dty))
    };
    let mut operands = vec![dst.to_string()];
    operands.extend(srcs.iter().map(Src::to_string));
    if let Some(p) = pred {
        operands.push(p.to_string());
    }
    let text = format!("{name} {};", operands.join(", "));
    (op, text, dst, srcs, pred)
}

/// The bits a destination is stored with: 8 for `cvt` to an 8-bit type.
fn store_bits(op: &Op, dst: Reg) -> u32 {
    match op {
        Op::Cvt { dst: t, .. } if t.bits() == 8 => 8,
        _ => dst.class.bits(),
    }
}

/// A random kernel of about `len` instructions for `threads` threads (a multiple
/// of 64: blocks of 64).
pub fn kernel(seed: u64, len: usize, threads: usize) -> Kernel {
    let mut rng = Rng::new(seed);
    let mut slot = 0;
    let mut next = |rng: &mut Rng| {
        let (op, text, dst, srcs, pred) = instruction(rng);
        let guard = rng.chance(15).then(|| (reg(rng, Class::P), rng.chance(50)));
        let store_bits = store_bits(&op, dst);
        slot += 1;
        Inst {
            op,
            text,
            dst,
            srcs,
            pred,
            guard,
            slot: slot - 1,
            store_bits,
        }
    };
    let mut pieces = Vec::new();
    let mut count = 0;
    while count < len {
        if rng.chance(15) {
            let n = 1 + rng.below(4);
            let body: Vec<Inst> = (0..n).map(|_| next(&mut rng)).collect();
            count += n;
            pieces.push(Piece::Skip {
                pred: reg(&mut rng, Class::P),
                negated: rng.chance(50),
                body,
            });
        } else {
            pieces.push(Piece::Inst(next(&mut rng)));
            count += 1;
        }
    }
    let out_slots = slot + PREDS;
    let inputs = (0..threads)
        .map(|_| {
            Class::VALUES
                .iter()
                .flat_map(|&c| (0..REGS).map(move |n| Reg { class: c, n }))
                .map(|r| (r, input(&mut rng, r.class)))
                .collect()
        })
        .collect();
    let text = source(&pieces, threads, out_slots);
    Kernel {
        text,
        pieces,
        threads,
        out_slots,
        inputs,
    }
}

fn store(text: &mut String, dst: Reg, slot: usize, bits: u32) {
    let off = slot * 8;
    if dst.class == Class::P {
        let _ = writeln!(text, "    selp.u32 %a1, 1, 0, {dst};");
        let _ = writeln!(text, "    st.global.u32 [%a2+{off}], %a1;");
        return;
    }
    let ty = match (dst.class, bits) {
        (_, 8) => "u8",
        (Class::H, _) => "u16",
        (Class::R, _) => "b32",
        (Class::F, _) => "f32",
        (Class::Rd, _) => "b64",
        _ => "f64",
    };
    let _ = writeln!(text, "    st.global.{ty} [%a2+{off}], {dst};");
}

fn emit(text: &mut String, i: &Inst) {
    let guard = match i.guard {
        Some((p, true)) => format!("@!{p} "),
        Some((p, false)) => format!("@{p} "),
        None => String::new(),
    };
    let _ = writeln!(text, "    {guard}{}", i.text);
    store(text, i.dst, i.slot, i.store_bits);
}

/// The kernel's source: load every register, run the pieces, store every result
/// and finally every predicate.
fn source(pieces: &[Piece], threads: usize, out_slots: usize) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "// A random kernel of the differential corpus.");
    let _ = writeln!(t, ".global .u32 inp[{}] = zeros;", threads * IN_SLOTS * 2);
    let _ = writeln!(t, ".global .u32 out[{}] = zeros;", threads * out_slots * 2);
    let _ = writeln!(t, ".launch grid({}, 1) block(64) iu(32);\n", threads / 64);
    let _ = writeln!(t, ".entry semcheck {{");
    let _ = writeln!(t, "    .reg .u32 %a<4>;");
    for c in Class::VALUES {
        let _ = writeln!(t, "    .reg {} %{}<{REGS}>;", c.decl(), c.prefix());
    }
    let _ = writeln!(t, "    .reg .pred %p<{PREDS}>;");
    let _ = writeln!(t, "    mov.u32 %a0, %ctaid.x;");
    let _ = writeln!(t, "    mov.u32 %a1, %ntid.x;");
    let _ = writeln!(t, "    mov.u32 %a2, %tid.x;");
    let _ = writeln!(t, "    mad.lo.u32 %a0, %a0, %a1, %a2;");
    let _ = writeln!(t, "    mul.lo.u32 %a1, %a0, {};", IN_SLOTS * 8);
    let _ = writeln!(t, "    mov.u32 %a2, inp;");
    let _ = writeln!(t, "    add.u32 %a1, %a1, %a2;");
    let _ = writeln!(t, "    mul.lo.u32 %a2, %a0, {};", out_slots * 8);
    let _ = writeln!(t, "    mov.u32 %a3, out;");
    let _ = writeln!(t, "    add.u32 %a2, %a2, %a3;");
    for (k, c) in Class::VALUES.iter().enumerate() {
        for n in 0..REGS {
            let ty = match c {
                Class::H => "u16",
                Class::R => "b32",
                Class::Rd => "b64",
                Class::F => "f32",
                _ => "f64",
            };
            let off = (k * REGS + n) * 8;
            let _ = writeln!(t, "    ld.global.{ty} %{}{n}, [%a1+{off}];", c.prefix());
        }
    }
    // Predicate i starts as bit 0 of %r<i>.
    for n in 0..PREDS {
        let _ = writeln!(t, "    and.b32 %a3, %r{n}, 1;");
        let _ = writeln!(t, "    setp.ne.b32 %p{n}, %a3, 0;");
    }
    for (k, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Inst(i) => emit(&mut t, i),
            Piece::Skip {
                pred,
                negated,
                body,
            } => {
                let not = if *negated { "!" } else { "" };
                let _ = writeln!(t, "    @{not}{pred} bra SKIP{k};");
                for i in body {
                    emit(&mut t, i);
                }
                let _ = writeln!(t, "SKIP{k}:");
            }
        }
    }
    let first = out_slots - PREDS;
    for n in 0..PREDS {
        store(
            &mut t,
            Reg {
                class: Class::P,
                n,
            },
            first + n,
            1,
        );
    }
    let _ = writeln!(t, "    exit;\n}}");
    t
}

/// The words of `inp`: each thread's registers in file order, 8 bytes each.
pub fn input_words(k: &Kernel) -> Vec<u32> {
    let mut words = vec![0u32; k.threads * IN_SLOTS * 2];
    for (t, regs) in k.inputs.iter().enumerate() {
        for (i, (_, v)) in regs.iter().enumerate() {
            let w = (t * IN_SLOTS + i) * 2;
            words[w] = *v as u32;
            words[w + 1] = (*v >> 32) as u32;
        }
    }
    words
}

fn low(bits: u32, v: u64) -> u64 {
    reference::int::low(bits, v)
}

/// What `out` must hold after the run, by the reference.
pub fn expected(k: &Kernel) -> Vec<u32> {
    let mut out = vec![0u32; k.threads * k.out_slots * 2];
    for (t, init) in k.inputs.iter().enumerate() {
        let mut regs: std::collections::HashMap<Reg, u64> = init
            .iter()
            .map(|&(r, v)| (r, low(r.class.bits(), v)))
            .collect();
        for n in 0..PREDS {
            let r = regs[&Reg {
                class: Class::R,
                n,
            }];
            regs.insert(
                Reg {
                    class: Class::P,
                    n,
                },
                r & 1,
            );
        }
        let base = t * k.out_slots * 2;
        let mut put = |slot: usize, bits: u32, v: u64| {
            let v = low(bits, v);
            let w = base + slot * 2;
            // Narrow stores write their bytes only; the rest of the slot stays 0.
            out[w] = v as u32;
            out[w + 1] = (v >> 32) as u32;
        };
        let mut step = |regs: &mut std::collections::HashMap<Reg, u64>, i: &Inst| {
            let on = i.guard.is_none_or(|(p, neg)| (regs[&p] != 0) != neg);
            if on {
                let vals: Vec<u64> = i
                    .srcs
                    .iter()
                    .map(|s| match s {
                        Src::Reg(r) => regs[r],
                        Src::Imm(v, _) => *v,
                    })
                    .collect();
                let p = i.pred.is_some_and(|p| regs[&p] != 0);
                let v = reference::eval(i.op, &vals, p);
                regs.insert(i.dst, low(i.dst.class.bits(), v));
            }
            let bits = if i.dst.class == Class::P {
                32
            } else {
                i.store_bits
            };
            put(i.slot, bits, regs[&i.dst]);
        };
        for piece in &k.pieces {
            match piece {
                Piece::Inst(i) => step(&mut regs, i),
                Piece::Skip {
                    pred,
                    negated,
                    body,
                } => {
                    if (regs[pred] != 0) == *negated {
                        for i in body {
                            step(&mut regs, i);
                        }
                    }
                }
            }
        }
        let first = k.out_slots - PREDS;
        for n in 0..PREDS {
            let v = regs[&Reg {
                class: Class::P,
                n,
            }];
            put(first + n, 32, v);
        }
    }
    out
}

/// An execution mode of the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Timing,
    Functional,
    Gtx480,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Timing, Mode::Functional, Mode::Gtx480];
}

/// Assembles `text`, fills `inp` with `inputs` and runs it in `mode`; `out`'s
/// words afterwards.
pub fn run(text: &str, inputs: &[u32], mode: Mode) -> Result<Vec<u32>, String> {
    let (module, _) =
        spu_asm::assemble_module("semcheck.spu", text).map_err(|d| d.render("semcheck.spu", text))?;
    let machine = match mode {
        Mode::Gtx480 => spu_emu::machine::preset("gtx480").map_err(|e| e.to_string())?,
        _ => Machine::default(),
    };
    let mut image = spu_emu::load(module, &machine, &Default::default()).map_err(|e| e.to_string())?;
    let region = |image: &spu_emu::Image, name: &str| {
        image
            .memory
            .regions()
            .iter()
            .position(|r| r.name == name)
            .ok_or_else(|| format!("no buffer `{name}`"))
    };
    if !inputs.is_empty() {
        let i = region(&image, "inp")?;
        image.memory.buffer_mut(i).copy_from_slice(inputs);
    }
    let out = region(&image, "out")?;
    let control = RunControl {
        functional: mode == Mode::Functional,
        ..Default::default()
    };
    spu_emu::simulate(&mut image, &machine, control, &mut |_| {})
        .map_err(|stop| format!("the run stopped: {stop:?}"))?;
    Ok(image.memory.buffer(out).to_vec())
}

/// The mismatches of one kernel in one mode, described (at most `limit`).
pub fn mismatches(k: &Kernel, mode: Mode, limit: usize) -> Result<Vec<String>, String> {
    let got = run(&k.text, &input_words(k), mode)?;
    let want = expected(k);
    let mut out = Vec::new();
    let slots = k.out_slots;
    for (w, (g, e)) in got.iter().zip(&want).enumerate() {
        if g == e {
            continue;
        }
        let (thread, slot) = (w / 2 / slots, w / 2 % slots);
        let what = instruction_at(k, slot).unwrap_or_else(|| "the final predicates".into());
        let inputs: Vec<String> = k.inputs[thread]
            .iter()
            .map(|(r, v)| format!("{r}={v:#x}"))
            .collect();
        out.push(format!(
            "{mode:?}: thread {thread}, word {} of slot {slot} (`{what}`): got {g:#010x}, want {e:#010x}; inputs {}",
            w % 2,
            inputs.join(" ")
        ));
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

fn instruction_at(k: &Kernel, slot: usize) -> Option<String> {
    k.pieces
        .iter()
        .flat_map(|p| match p {
            Piece::Inst(i) => std::slice::from_ref(i),
            Piece::Skip { body, .. } => body.as_slice(),
        })
        .find(|i| i.slot == slot)
        .map(|i| i.text.clone())
}

/// Runs `kernels` random kernels (seeds from `seed`) in every mode; the
/// mismatches (at most a few per kernel) and the number of words compared.
pub fn corpus(seed: u64, kernels: usize, len: usize, threads: usize) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let mut words = 0;
    for s in 0..kernels as u64 {
        let k = kernel(seed.wrapping_add(s), len, threads);
        for mode in Mode::ALL {
            match mismatches(&k, mode, 4) {
                Ok(m) => bad.extend(m.into_iter().map(|m| format!("seed {}: {m}", seed + s))),
                Err(e) => bad.push(format!("seed {}: {mode:?}: {e}\n{}", seed + s, k.text)),
            }
            words += k.threads * k.out_slots * 2;
        }
    }
    (bad, words)
}
