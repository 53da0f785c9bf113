//! Warp forms: `shfl.sync` in every mode with and without its predicate,
//! register or immediate lane and clamp operands (unguarded, where the whole warp
//! runs: a lane reading an inactive lane gets an undefined value in PTX);
//! `vote.sync` (`all any uni`), `vote.sync.ballot` and `activemask` anywhere,
//! divergent blocks and guards included; `bar.sync` where the whole block runs.

use super::random::{Rng, reg};
use super::reference::Op;
use super::{Class, Drawn, Src};
use spu_isa::{ShflMode, VoteMode};

fn mask(rng: &mut Rng) -> &'static str {
    rng.pick(&["-1", "0xffffffff"])
}

/// A predicate source, negated or not.
fn pred_source(rng: &mut Rng) -> (Src, bool, String) {
    let p = reg(rng, Class::P);
    let negated = rng.chance(30);
    let text = format!("{}{p}", if negated { "!" } else { "" });
    (Src::Reg(p), negated, text)
}

/// One random warp instruction.
pub(crate) fn instruction(rng: &mut Rng) -> Drawn {
    match rng.below(10) {
        0..=3 => {
            let mode = rng.pick(ShflMode::ALL);
            let d = reg(rng, Class::R);
            let mut dsts = vec![d];
            if rng.chance(50) {
                dsts.push(reg(rng, Class::P));
            }
            let a = Src::Reg(reg(rng, Class::R));
            let b = if rng.chance(60) {
                let v = rng.below(32) as u64;
                Src::Imm(v, v.to_string())
            } else {
                Src::Reg(reg(rng, Class::R))
            };
            let c = if rng.chance(70) {
                let v = match rng.below(3) {
                    0 => 0,
                    1 => 0x1f,
                    _ => (rng.below(32) << 8 | rng.below(32)) as u64,
                };
                Src::Imm(v, format!("{v:#x}"))
            } else {
                Src::Reg(reg(rng, Class::R))
            };
            let dst = match dsts.get(1) {
                Some(p) => format!("{d}|{p}"),
                None => d.to_string(),
            };
            let text = format!(
                "shfl.sync.{}.b32 {dst}, {a}, {b}, {c}, {};",
                mode.name(),
                mask(rng)
            );
            Drawn {
                op: Op::Shfl { mode },
                text,
                dsts,
                srcs: vec![a, b, c],
                pred: None,
                whole_warp: true,
            }
        }
        4 | 5 => {
            let mode = rng.pick(VoteMode::ALL);
            let (a, negated, text) = pred_source(rng);
            let d = reg(rng, Class::P);
            Drawn {
                op: Op::Vote { mode, negated },
                text: format!("vote.sync.{}.pred {d}, {text}, {};", mode.name(), mask(rng)),
                dsts: vec![d],
                srcs: vec![a],
                pred: None,
                whole_warp: false,
            }
        }
        6 | 7 => {
            let (a, negated, text) = pred_source(rng);
            let d = reg(rng, Class::R);
            Drawn {
                op: Op::Ballot { negated },
                text: format!("vote.sync.ballot.b32 {d}, {text}, {};", mask(rng)),
                dsts: vec![d],
                srcs: vec![a],
                pred: None,
                whole_warp: false,
            }
        }
        8 => {
            let d = reg(rng, Class::R);
            Drawn {
                op: Op::Activemask,
                text: format!("activemask.b32 {d};"),
                dsts: vec![d],
                srcs: Vec::new(),
                pred: None,
                whole_warp: false,
            }
        }
        _ => Drawn {
            op: Op::Nothing,
            text: "bar.sync;".into(),
            dsts: Vec::new(),
            srcs: Vec::new(),
            pred: None,
            whole_warp: true,
        },
    }
}
