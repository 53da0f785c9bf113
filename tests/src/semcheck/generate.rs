//! Random kernels: instructions drawn from [`super::forms`], some guarded, some in
//! blocks that diverging threads skip, and every thread's inputs.

use super::forms::instruction;
use super::random::{Rng, input, reg};
use super::reference::Op;
use super::text::source;
use super::{Class, Inst, Kernel, PREDS, Piece, REGS, Reg};

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
