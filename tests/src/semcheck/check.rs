//! Running the corpus: what the reference says a kernel stores, what the emulator
//! stores in each mode, and the words where they differ.

use super::generate::kernel;
use super::reference::{self, Op, memory, sfu, warp};
use super::{Class, IN_SLOTS, Inst, Kernel, PREDS, Piece, Reg, SCRATCH_SLOTS, Src};
use spu_emu::{Machine, RunControl};
use spu_isa::Space;
use std::collections::HashMap;

/// The words of `inp`: each thread's registers in file order, then its scratch
/// words, 8 bytes each.
pub fn input_words(k: &Kernel) -> Vec<u32> {
    let mut words = vec![0u32; k.threads * IN_SLOTS * 2];
    for (t, regs) in k.inputs.iter().enumerate() {
        let values = regs
            .iter()
            .map(|(_, v)| *v)
            .chain(k.scratch[t].iter().copied());
        for (i, v) in values.enumerate() {
            let w = (t * IN_SLOTS + i) * 2;
            words[w] = v as u32;
            words[w + 1] = (v >> 32) as u32;
        }
    }
    words
}

fn low(bits: u32, v: u64) -> u64 {
    reference::int::low(bits, v)
}

/// The scratch spaces, in the order of [`Thread::mem`].
const SPACES: [Space; 3] = [Space::Global, Space::Shared, Space::Local];

fn space_index(space: Space) -> usize {
    SPACES
        .iter()
        .position(|&s| s == space)
        .expect("a scratch space")
}

/// One thread as the reference runs it.
struct Thread {
    t: usize,
    regs: HashMap<Reg, u64>,
    /// Its scratch bytes in global, shared and local space.
    mem: [Vec<u8>; 3],
}

impl Thread {
    fn new(k: &Kernel, t: usize) -> Thread {
        let mut regs: HashMap<Reg, u64> = k.inputs[t]
            .iter()
            .map(|&(r, v)| (r, low(r.class.bits(), v)))
            .collect();
        for n in 0..PREDS {
            let r = regs[&Reg { class: Class::R, n }];
            regs.insert(Reg { class: Class::P, n }, r & 1);
        }
        let bytes: Vec<u8> = k.scratch[t].iter().flat_map(|w| w.to_le_bytes()).collect();
        Thread {
            t,
            regs,
            mem: [bytes.clone(), bytes.clone(), bytes],
        }
    }
    fn value(&self, s: &Src) -> u64 {
        match s {
            Src::Reg(r) => self.regs[r],
            Src::Imm(v, _) => *v,
        }
    }
    fn set(&mut self, r: Reg, v: u64) {
        self.regs.insert(r, low(r.class.bits(), v));
    }
}

/// The output words being built, and what the emulator stored (for the
/// instructions whose result is checked against a bound).
struct Out<'a> {
    words: Vec<u32>,
    got: &'a [u32],
    slots: usize,
    /// Thread-instructions executed (lanes whose guard held).
    executed: usize,
}

impl Out<'_> {
    /// Stores `v` as `bits` bits in `slot` of thread `t` (narrow stores write their
    /// bytes only; the rest of the slot stays 0).
    fn put(&mut self, t: usize, slot: usize, bits: u32, v: u64) {
        let v = low(bits, v);
        let w = (t * self.slots + slot) * 2;
        self.words[w] = v as u32;
        self.words[w + 1] = (v >> 32) as u32;
    }
    /// What the emulator stored in `slot` of thread `t` (its low word), if known.
    fn got(&self, t: usize, slot: usize) -> Option<u32> {
        self.got.get((t * self.slots + slot) * 2).copied()
    }
}

/// What `out` must hold after the run, by the reference. The SFU results are
/// checked against their bound: where the emulator's (in `got`, if not empty)
/// meets it, the reference goes on with that value, else with the nearest.
pub fn expected(k: &Kernel, got: &[u32]) -> Vec<u32> {
    reference_run(k, got).0
}

/// [`expected`], and the number of thread-instructions the kernel executes.
fn reference_run(k: &Kernel, got: &[u32]) -> (Vec<u32>, usize) {
    let mut out = Out {
        words: vec![0u32; k.threads * k.out_slots * 2],
        got,
        slots: k.out_slots,
        executed: 0,
    };
    for warp in 0..k.threads / 32 {
        let mut lanes: Vec<Thread> = (0..32).map(|l| Thread::new(k, warp * 32 + l)).collect();
        for piece in &k.pieces {
            match piece {
                Piece::Inst(i) => step(k, &mut lanes, i, u32::MAX, &mut out),
                Piece::Skip {
                    pred,
                    negated,
                    body,
                } => {
                    let stay = mask(&lanes, |th| (th.regs[pred] != 0) == *negated);
                    if stay != 0 {
                        for i in body {
                            step(k, &mut lanes, i, stay, &mut out);
                        }
                    }
                }
            }
        }
        let first = k.out_slots - PREDS - 2 * SCRATCH_SLOTS;
        for th in &lanes {
            for n in 0..PREDS {
                out.put(th.t, first + n, 32, th.regs[&Reg { class: Class::P, n }]);
            }
            for (space, at) in [
                (0, 0),
                (1, first + PREDS),
                (2, first + PREDS + SCRATCH_SLOTS),
            ] {
                for (w, chunk) in th.mem[space].chunks(8).enumerate() {
                    let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                    out.put(th.t, at + w, 64, v);
                }
            }
        }
    }
    (out.words, out.executed)
}

/// The lanes where `f` holds.
fn mask(lanes: &[Thread], f: impl Fn(&Thread) -> bool) -> u32 {
    lanes
        .iter()
        .enumerate()
        .filter(|(_, th)| f(th))
        .fold(0, |m, (l, _)| m | 1 << l)
}

/// Runs `i` in the lanes of `active` (those whose guard holds execute it), then
/// stores its destinations in every active lane.
fn step(k: &Kernel, lanes: &mut [Thread], i: &Inst, active: u32, out: &mut Out) {
    let exec = active
        & mask(lanes, |th| {
            i.guard.is_none_or(|(p, neg)| (th.regs[&p] != 0) != neg)
        });
    let on = |l: usize| exec >> l & 1 == 1;
    out.executed += exec.count_ones() as usize;
    match i.op {
        Op::Shfl { mode } => {
            let vals: Vec<[u64; 3]> = lanes
                .iter()
                .map(|th| [0, 1, 2].map(|s| th.value(&i.srcs[s])))
                .collect();
            for (l, th) in lanes.iter_mut().enumerate().filter(|(l, _)| on(*l)) {
                let [_, b, c] = vals[l];
                let (j, ok) = warp::shfl_source(mode, l as u32, b as u32, c as u32);
                th.set(i.dsts[0], vals[j as usize][0]);
                if let Some(&p) = i.dsts.get(1) {
                    th.set(p, u64::from(ok));
                }
            }
        }
        Op::Vote { .. } | Op::Ballot { .. } | Op::Activemask => {
            let negated = matches!(
                i.op,
                Op::Vote { negated: true, .. } | Op::Ballot { negated: true }
            );
            let p = match i.srcs.first() {
                Some(s) => mask(lanes, |th| (th.value(s) != 0) != negated),
                None => 0,
            };
            let v = match i.op {
                Op::Vote { mode, .. } => u64::from(warp::vote(mode, p, exec)),
                Op::Ballot { .. } => u64::from(p & exec),
                _ => u64::from(exec),
            };
            for (_, th) in lanes.iter_mut().enumerate().filter(|(l, _)| on(*l)) {
                th.set(i.dsts[0], v);
            }
        }
        _ => {
            for (_, th) in lanes.iter_mut().enumerate().filter(|(l, _)| on(*l)) {
                lane_step(k, th, i, out);
            }
        }
    }
    for (_, th) in lanes
        .iter()
        .enumerate()
        .filter(|(l, _)| active >> l & 1 == 1)
    {
        for (n, &d) in i.dsts.iter().enumerate() {
            let bits = match d.class {
                Class::P => 32,
                _ if n == 0 => i.store_bits,
                c => c.bits(),
            };
            out.put(th.t, i.slot + n, bits, th.regs[&d]);
        }
    }
}

/// Runs `i` in one thread.
fn lane_step(k: &Kernel, th: &mut Thread, i: &Inst, out: &Out) {
    let vals: Vec<u64> = i.srcs.iter().map(|s| th.value(s)).collect();
    match i.op {
        Op::Sfu { fun, ftz } => {
            let want = sfu::want(fun, vals[0] as u32, ftz);
            let v = match out.got(th.t, i.slot) {
                Some(g) if sfu::accepts(want, g, ftz) => g,
                _ => sfu::best(want),
            };
            th.set(i.dsts[0], u64::from(v));
        }
        Op::Special(sr) => th.set(i.dsts[0], sr.value(th.t, k.threads)),
        Op::Load {
            space,
            ty,
            count,
            offset,
        } => {
            let params: Vec<u8>;
            let bytes = if space == Space::Param {
                params = k.params.iter().flat_map(|w| w.to_le_bytes()).collect();
                &params
            } else {
                &th.mem[space_index(space)]
            };
            let size = ty.bits() as usize / 8;
            let vs: Vec<u64> = (0..count)
                .map(|e| memory::read(bytes, offset + e * size, ty))
                .collect();
            for (&d, v) in i.dsts.iter().zip(vs) {
                th.set(d, v);
            }
        }
        Op::Store {
            space,
            ty,
            count,
            offset,
        } => {
            let size = ty.bits() as usize / 8;
            for (e, v) in vals.iter().enumerate().take(count) {
                memory::write(&mut th.mem[space_index(space)], offset + e * size, ty, *v);
            }
        }
        Op::Atomic {
            space,
            op,
            ty,
            offset,
            returns,
        } => {
            let mem = &mut th.mem[space_index(space)];
            let old = memory::read(mem, offset, ty);
            let c = vals.get(1).copied().unwrap_or(0);
            memory::write(mem, offset, ty, memory::atomic(op, ty, old, vals[0], c));
            if returns {
                th.set(i.dsts[0], old);
            }
        }
        Op::Nothing => {}
        op => {
            let p = i.pred.is_some_and(|p| th.regs[&p] != 0);
            th.set(i.dsts[0], reference::eval(op, &vals, p));
        }
    }
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

/// The mismatches of one kernel in one mode, described (at most `limit`), and
/// the thread-instructions it executed.
pub fn mismatches(k: &Kernel, mode: Mode, limit: usize) -> Result<(Vec<String>, usize), String> {
    let got = run(&k.text, &input_words(k), mode)?;
    let (want, executed) = reference_run(k, &got);
    let mut out = Vec::new();
    let slots = k.out_slots;
    for (w, (g, e)) in got.iter().zip(&want).enumerate() {
        if g == e {
            continue;
        }
        let (thread, slot) = (w / 2 / slots, w / 2 % slots);
        let what = instruction_at(k, slot).unwrap_or_else(|| slot_name(k, slot).into());
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
    Ok((out, executed))
}

fn instruction_at(k: &Kernel, slot: usize) -> Option<String> {
    k.pieces
        .iter()
        .flat_map(|p| match p {
            Piece::Inst(i) => std::slice::from_ref(i),
            Piece::Skip { body, .. } => body.as_slice(),
        })
        .find(|i| (i.slot..i.slot + i.dsts.len()).contains(&slot))
        .map(|i| i.text.clone())
}

/// What a slot that no instruction stores holds.
fn slot_name(k: &Kernel, slot: usize) -> &'static str {
    let preds = k.out_slots - PREDS - 2 * SCRATCH_SLOTS;
    if slot < SCRATCH_SLOTS {
        "the global scratch"
    } else if slot < preds + PREDS {
        "the final predicates"
    } else if slot < preds + PREDS + SCRATCH_SLOTS {
        "the shared scratch"
    } else {
        "the local scratch"
    }
}

/// What a corpus run compared.
#[derive(Debug, Default)]
pub struct Totals {
    /// The mismatches (at most a few per kernel and mode).
    pub bad: Vec<String>,
    /// Output words compared.
    pub words: usize,
    /// Thread-instructions executed, over every mode.
    pub thread_instructions: usize,
}

/// Runs `kernels` random kernels (seeds from `seed`) in every mode.
pub fn corpus(seed: u64, kernels: usize, len: usize, threads: usize) -> Totals {
    let mut totals = Totals::default();
    for s in 0..kernels as u64 {
        let k = kernel(seed.wrapping_add(s), len, threads);
        for mode in Mode::ALL {
            match mismatches(&k, mode, 4) {
                Ok((m, executed)) => {
                    totals
                        .bad
                        .extend(m.into_iter().map(|m| format!("seed {}: {m}", seed + s)));
                    totals.thread_instructions += executed;
                }
                Err(e) => totals
                    .bad
                    .push(format!("seed {}: {mode:?}: {e}\n{}", seed + s, k.text)),
            }
            totals.words += k.threads * k.out_slots * 2;
        }
    }
    totals
}
