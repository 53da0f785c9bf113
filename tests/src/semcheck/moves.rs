//! Forms that move values or compute predicates: `mov` of registers (across the
//! integer and float files where the type is a bit type), immediates and special
//! registers, predicate logic, `cvta`, `testp`; the SFU functions `ex2 lg2 sin cos`; and
//! the instructions without a result (`nop`, `membar`, `fence`).

use super::forms::VALUE_TYS;
use super::random::{Rng, operand, reg};
use super::reference::sfu::Fun;
use super::reference::{Op, PredOp, Sr};
use super::{Class, Drawn, Src};
use spu_isa::{TestpOp, Ty};

/// A register for a value of `ty`: a bit type may live in the float file of its
/// width.
fn value_reg(rng: &mut Rng, ty: Ty) -> Class {
    match ty {
        Ty::B32 if rng.chance(30) => Class::F,
        Ty::B64 if rng.chance(30) => Class::Fd,
        _ => Class::of(ty),
    }
}

fn nothing(text: String) -> Drawn {
    Drawn {
        op: Op::Nothing,
        text,
        dsts: Vec::new(),
        srcs: Vec::new(),
        pred: None,
        whole_warp: false,
    }
}

/// One random instruction of these forms.
pub(crate) fn instruction(rng: &mut Rng) -> Drawn {
    match rng.below(13) {
        12 => {
            let test = rng.pick(TestpOp::ALL);
            let ty = rng.pick(&[Ty::F32, Ty::F64]);
            let name = format!("testp.{}.{ty}", test.name());
            let a = Src::Reg(reg(rng, Class::of(ty)));
            Drawn::one(Op::Testp { test, ty }, &name, reg(rng, Class::P), vec![a])
        }
        0..=2 => {
            let ty = rng.pick(&VALUE_TYS);
            let class = value_reg(rng, ty);
            let dst = reg(rng, class);
            let src = if rng.chance(40) {
                operand(rng, ty, 100)
            } else {
                let class = value_reg(rng, ty);
                Src::Reg(reg(rng, class))
            };
            Drawn::one(Op::Mov { ty }, &format!("mov.{ty}"), dst, vec![src])
        }
        3 => {
            let sr = rng.pick(&Sr::ALL);
            let ty = rng.pick(&[Ty::U32, Ty::S32, Ty::B32]);
            let mut d = Drawn::one(
                Op::Special(sr),
                &format!("mov.{ty}"),
                reg(rng, Class::R),
                Vec::new(),
            );
            d.text = d.text.replace(';', &format!(", %{};", sr.name()));
            d
        }
        4 | 5 => {
            let op = rng.pick(&[
                PredOp::And,
                PredOp::Or,
                PredOp::Xor,
                PredOp::Not,
                PredOp::Mov,
            ]);
            let n = if matches!(op, PredOp::Not | PredOp::Mov) {
                1
            } else {
                2
            };
            let srcs = (0..n).map(|_| Src::Reg(reg(rng, Class::P))).collect();
            let name = match op {
                PredOp::And => "and.pred",
                PredOp::Or => "or.pred",
                PredOp::Xor => "xor.pred",
                PredOp::Not => "not.pred",
                PredOp::Mov => "mov.pred",
            };
            Drawn::one(Op::PredLogic(op), name, reg(rng, Class::P), srcs)
        }
        6 => {
            let ty = rng.pick(&[Ty::U32, Ty::U64]);
            let name = format!(
                "cvta{}.{}.{ty}",
                if rng.chance(50) { ".to" } else { "" },
                rng.pick(&["global", "shared"])
            );
            let c = Class::of(ty);
            Drawn::one(
                Op::Mov { ty },
                &name,
                reg(rng, c),
                vec![Src::Reg(reg(rng, c))],
            )
        }
        7..=9 => {
            let fun = rng.pick(&Fun::ALL);
            let ftz = rng.chance(40);
            let name = format!("{}.approx{}.f32", fun.name(), if ftz { ".ftz" } else { "" });
            let a = operand(rng, Ty::F32, 10);
            Drawn::one(Op::Sfu { fun, ftz }, &name, reg(rng, Class::F), vec![a])
        }
        _ => nothing(match rng.below(3) {
            0 => "nop;".into(),
            1 => format!("membar.{};", rng.pick(&["cta", "gl", "sys"])),
            _ => format!(
                "fence{}.{};",
                rng.pick(&["", ".sc", ".acq_rel"]),
                rng.pick(&["cta", "gpu", "sys"])
            ),
        }),
    }
}
