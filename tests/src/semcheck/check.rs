//! Running the corpus: what the reference says a kernel stores, what the emulator
//! stores in each mode, and the words where they differ.

use super::generate::kernel;
use super::{Class, IN_SLOTS, Inst, Kernel, PREDS, Piece, Reg, Src, reference};
use spu_emu::{Machine, RunControl};

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
            let r = regs[&Reg { class: Class::R, n }];
            regs.insert(Reg { class: Class::P, n }, r & 1);
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
            let v = regs[&Reg { class: Class::P, n }];
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
    let (module, _) = spu_asm::assemble_module("semcheck.spu", text)
        .map_err(|d| d.render("semcheck.spu", text))?;
    let machine = match mode {
        Mode::Gtx480 => spu_emu::machine::preset("gtx480").map_err(|e| e.to_string())?,
        _ => Machine::default(),
    };
    let mut image =
        spu_emu::load(module, &machine, &Default::default()).map_err(|e| e.to_string())?;
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
