//! Random kernels: instructions drawn from [`super::forms`], [`super::moves`],
//! [`super::memory`] and [`super::warp`], some guarded, some in blocks that
//! diverging threads skip, and every thread's inputs and scratch.

use super::random::{Rng, input, reg};
use super::reference::Op;
use super::text::source;
use super::{
    Class, Drawn, Inst, Kernel, PARAMS, Piece, REGS, Reg, SCRATCH_SLOTS, forms, memory, moves,
    out_slots, warp,
};

/// The bits a destination is stored with: 8 for `cvt` to an 8-bit type.
fn store_bits(op: &Op, dst: Option<&Reg>) -> u32 {
    match (op, dst) {
        (Op::Cvt { dst: t, .. }, _) if t.bits() == 8 => 8,
        (_, Some(d)) => d.class.bits(),
        (_, None) => 0,
    }
}

/// One random instruction; `whole_warp` forms only where the whole warp runs
/// (`top`).
fn instruction(rng: &mut Rng, top: bool) -> Drawn {
    loop {
        let d = match rng.below(100) {
            0..=54 => forms::instruction(rng),
            55..=69 => moves::instruction(rng),
            70..=89 => memory::instruction(rng),
            _ => warp::instruction(rng),
        };
        if top || !d.whole_warp {
            return d;
        }
    }
}

/// A random kernel of about `len` instructions for `threads` threads (a multiple
/// of 64: blocks of 64).
pub fn kernel(seed: u64, len: usize, threads: usize) -> Kernel {
    let mut rng = Rng::new(seed);
    let mut slot = SCRATCH_SLOTS;
    let mut next = |rng: &mut Rng, top: bool| {
        let d = instruction(rng, top);
        let guard = (!d.whole_warp && rng.chance(15)).then(|| (reg(rng, Class::P), rng.chance(50)));
        let store_bits = store_bits(&d.op, d.dsts.first());
        slot += d.dsts.len();
        Inst {
            op: d.op,
            text: d.text,
            slot: slot - d.dsts.len(),
            dsts: d.dsts,
            srcs: d.srcs,
            pred: d.pred,
            guard,
            store_bits,
        }
    };
    let mut pieces = Vec::new();
    let mut count = 0;
    while count < len {
        if rng.chance(15) {
            let n = 1 + rng.below(4);
            let body: Vec<Inst> = (0..n).map(|_| next(&mut rng, false)).collect();
            count += n;
            pieces.push(Piece::Skip {
                pred: reg(&mut rng, Class::P),
                negated: rng.chance(50),
                body,
            });
        } else {
            pieces.push(Piece::Inst(next(&mut rng, true)));
            count += 1;
        }
    }
    let out_slots = out_slots(slot - SCRATCH_SLOTS);
    let inputs = (0..threads)
        .map(|_| {
            Class::VALUES
                .iter()
                .flat_map(|&c| (0..REGS).map(move |n| Reg { class: c, n }))
                .map(|r| (r, input(&mut rng, r.class)))
                .collect()
        })
        .collect();
    let scratch = (0..threads)
        .map(|_| {
            (0..SCRATCH_SLOTS)
                .map(|_| input(&mut rng, Class::Rd))
                .collect()
        })
        .collect();
    let params: Vec<u64> = (0..PARAMS).map(|_| rng.bits()).collect();
    let text = source(&pieces, threads, out_slots, &params);
    Kernel {
        text,
        pieces,
        threads,
        out_slots,
        inputs,
        scratch,
        params,
    }
}
