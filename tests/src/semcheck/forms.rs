//! The instruction forms the corpus draws from: for each, a random choice of type
//! and modifiers the ISA table allows, its source text and its [`Op`] for the
//! reference.

use super::random::{Rng, operand, reg};
use super::reference::{Arith, Logic, Op};
use super::{Class, Drawn, Reg, Src};
use spu_isa::{Cmp, Half, PrmtMode, Rnd, ShfDir, ShfMode, Ty};

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
/// Every type a register value can have (bit, integer and float types of 16 to 64
/// bits), in the order the corpus draws from.
pub(super) const VALUE_TYS: [Ty; 11] = [
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
pub(crate) fn instruction(rng: &mut Rng) -> Drawn {
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
            (
                Op::Mul { ty: ity, half },
                format!("mul.{half}.{ity}", half = half.name()),
                ity,
                srcs,
                None,
            )
        }
        3 => {
            let half = rng.pick(&[Half::Lo, Half::Hi]);
            let sat = ity == Ty::S32 && half == Half::Hi && rng.chance(50);
            let srcs = vec![
                operand(rng, ity, 0),
                operand(rng, ity, 25),
                operand(rng, ity, 0),
            ];
            let name = format!("mad.{}{}.{ity}", half.name(), mods(&[sat.then_some("sat")]));
            (Op::Mad { ty: ity, half, sat }, name, ity, srcs, None)
        }
        4 => {
            let ty = rng.pick(&[Ty::U16, Ty::S16, Ty::U32, Ty::S32]);
            let wide = ty.widened().expect("16 or 32 bits");
            if rng.chance(50) {
                let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 25)];
                (
                    Op::MulWide { ty },
                    format!("mul.wide.{ty}"),
                    wide,
                    srcs,
                    None,
                )
            } else {
                let c = Src::Reg(reg(rng, Class::of(wide)));
                let srcs = vec![operand(rng, ty, 0), operand(rng, ty, 0), c];
                (
                    Op::MadWide { ty },
                    format!("mad.wide.{ty}"),
                    wide,
                    srcs,
                    None,
                )
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
            (
                Op::MinMax { ty: ity, max },
                format!("{m}.{ity}"),
                ity,
                srcs,
                None,
            )
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
                // Every value type but the floats.
                rng.pick(&VALUE_TYS[..9])
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
                (
                    Op::Not { ty },
                    format!("not.{ty}"),
                    ty,
                    vec![operand(rng, ty, 0)],
                    None,
                )
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
                    (
                        Op::Bfind { ty, shiftamt },
                        name,
                        Ty::U32,
                        vec![operand(rng, ty, 0)],
                        None,
                    )
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
                    let lut = rng.bits() as u8;
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
            let rnd = if rng.chance(20) {
                None
            } else {
                Some(rng.pick(&RNDS))
            };
            let ftz = ftz_ok(rng, fty);
            let sat = fty == Ty::F32 && rng.chance(25);
            let m = match op {
                Arith::Add => "add",
                Arith::Sub => "sub",
                Arith::Mul => "mul",
            };
            let name = format!(
                "{m}{}.{fty}",
                mods(&[
                    rnd.map(Rnd::name),
                    ftz.then_some("ftz"),
                    sat.then_some("sat")
                ])
            );
            let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 20)];
            (
                Op::FArith {
                    ty: fty,
                    op,
                    rnd,
                    ftz,
                    sat,
                },
                name,
                fty,
                srcs,
                None,
            )
        }
        16 => {
            let rnd = rng.pick(&RNDS);
            let ftz = ftz_ok(rng, fty);
            let sat = fty == Ty::F32 && rng.chance(25);
            // `mad` on floats is `fma` (PTX 9.7.3.6).
            let m = if rng.chance(25) { "mad" } else { "fma" };
            let name = format!(
                "{m}.{}{}.{fty}",
                rnd.name(),
                mods(&[ftz.then_some("ftz"), sat.then_some("sat")])
            );
            let srcs = vec![
                operand(rng, fty, 0),
                operand(rng, fty, 15),
                operand(rng, fty, 0),
            ];
            (
                Op::Fma {
                    ty: fty,
                    rnd,
                    ftz,
                    sat,
                },
                name,
                fty,
                srcs,
                None,
            )
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
            (
                Op::Rsqrt { ty: fty, ftz },
                name,
                fty,
                vec![operand(rng, fty, 0)],
                None,
            )
        }
        20 => {
            let ftz = ftz_ok(rng, fty);
            let f = mods(&[ftz.then_some("ftz")]);
            match rng.below(3) {
                0 => {
                    let max = rng.chance(50);
                    let m = if max { "max" } else { "min" };
                    let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 15)];
                    (
                        Op::FMinMax { ty: fty, max, ftz },
                        format!("{m}{f}.{fty}"),
                        fty,
                        srcs,
                        None,
                    )
                }
                1 => {
                    let neg = rng.chance(50);
                    let m = if neg { "neg" } else { "abs" };
                    let srcs = vec![operand(rng, fty, 0)];
                    (
                        Op::FSign { ty: fty, neg, ftz },
                        format!("{m}{f}.{fty}"),
                        fty,
                        srcs,
                        None,
                    )
                }
                _ => {
                    let srcs = vec![operand(rng, fty, 0), operand(rng, fty, 0)];
                    (
                        Op::Copysign { ty: fty },
                        format!("copysign.{fty}"),
                        fty,
                        srcs,
                        None,
                    )
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
                mods(&[
                    rnd.map(Rnd::name),
                    ftz.then_some("ftz"),
                    sat.then_some("sat")
                ])
            );
            let srcs = vec![Src::Reg(reg(rng, Class::of(src)))];
            (
                Op::Cvt {
                    dst,
                    src,
                    rnd,
                    ftz,
                    sat,
                },
                name,
                dst,
                srcs,
                None,
            )
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
    Drawn {
        op,
        text,
        dsts: vec![dst],
        srcs,
        pred,
        whole_warp: false,
    }
}
