//! The semantics of [`crate::sem`] applied over a warp's 32 lanes: one lane
//! function per shape of operation (one to four operands, a comparison, a
//! predicate choice, predicate logic, the warp operations), generic over a marker
//! type that names the row's `sem` function (the decoder stamps one per row from
//! the ISA table). Every mode runs these.
//!
//! Plain 32-bit forms (no rounding, `.ftz` or `.sat`, every operand one 32-bit
//! register) take a specialised copy, [`Word`]: the same `sem` function with the
//! type and modifiers known at compile time, over all 32 lanes without branches,
//! so the compiler vectorises it; results reach the lanes of the mask only. Every
//! other form reads its operands lane by lane as their types say, 64-bit values
//! from register pairs.

use crate::exec::lanes::{self, LANE_BIT, Lanes, Wide, lanes_of};
use crate::exec::ops::{LaneFn, NO_REG, Op, Reg};
use crate::exec::warp::Warp;
use crate::sem::{self, Form};
use spu_isa::{Cmp, Half, ShflMode, Ty, VoteMode};

/// A one-operand operation (`sem` function `fn(&Form, a) -> d`).
pub trait Alu1 {
    fn eval(f: &Form, a: u64) -> u64;
}
/// A two-operand operation.
pub trait Alu2 {
    fn eval(f: &Form, a: u64, b: u64) -> u64;
}
/// A three-operand operation.
pub trait Alu3 {
    fn eval(f: &Form, a: u64, b: u64, c: u64) -> u64;
}
/// A four-operand operation.
pub trait Alu4 {
    fn eval(f: &Form, a: u64, b: u64, c: u64, e: u64) -> u64;
}
/// A comparison to a predicate (`setp`), or a test of one operand (`testp`,
/// whose `b` is 0).
pub trait Setp {
    fn eval(f: &Form, a: u64, b: u64) -> bool;
}
/// A choice by a predicate (`selp`).
pub trait Selp {
    fn eval(f: &Form, a: u64, b: u64, p: bool) -> u64;
}
/// Predicate logic.
pub trait Pred {
    fn eval(a: bool, b: bool) -> bool;
}
/// `shfl.sync`: the source lane of `lane` and whether it is in range.
pub trait Shfl {
    fn eval(mode: ShflMode, lane: u32, b: u32, c: u32) -> (usize, bool);
}
/// `vote.sync` (`all any uni`).
pub trait Vote {
    fn eval(mode: VoteMode, p: u32, exec: u32) -> bool;
}
/// `vote.sync.ballot`.
pub trait Ballot {
    fn eval(p: u32, exec: u32) -> u32;
}
/// `activemask`.
pub trait Activemask {
    fn eval(exec: u32) -> u32;
}

/// A 32-bit type the fast path is specialised for: its form without modifiers,
/// and how a register word reads as a value of it.
pub trait Word {
    const FORM: Form;
    fn read(x: u32) -> u64;
}

macro_rules! word {
    ($name:ident, $ty:ident, |$x:ident| $read:expr) => {
        #[derive(Debug)]
        pub struct $name;
        impl Word for $name {
            const FORM: Form = Form::plain(Ty::$ty);
            #[inline(always)]
            fn read($x: u32) -> u64 {
                $read
            }
        }
    };
}
word!(U32, U32, |x| u64::from(x));
word!(S32, S32, |x| x as i32 as i64 as u64);
word!(B32, B32, |x| u64::from(x));
word!(F32, F32, |x| u64::from(x));

/// The fast-path type of `op`, if its form behaves as its plain 32-bit type and
/// every operand and the result are single 32-bit registers. (Shift amounts,
/// bit positions and lengths are `.u32` operands; the operations read only their
/// low bits, so reading them as the instruction's type changes nothing.)
fn word_type(op: &Op, operands: usize) -> Option<Ty> {
    let f = &op.form;
    let m = &f.mods;
    let plain = f.is_plain()
        && f.src_ty == f.ty
        && matches!(m.half, None | Some(Half::Lo))
        && m.shiftamt.is_none()
        && m.prmt.is_none()
        && m.dir.is_none()
        && m.shf_mode.is_none();
    let words = op.src_ty[..operands].iter().all(|t| t.bits() == 32);
    (plain && words && op.d_regs <= 1)
        .then_some(f.ty)
        .filter(|t| matches!(t, Ty::U32 | Ty::S32 | Ty::B32 | Ty::F32))
}

/// Picks the fast-path copy for the op's type, or the general one.
macro_rules! pick {
    ($op:expr, $n:expr, $word:ident::<$s:ty>, $general:ident::<$g:ty>) => {
        match word_type($op, $n) {
            Some(Ty::U32) => $word::<$s, U32> as LaneFn,
            Some(Ty::S32) => $word::<$s, S32>,
            Some(Ty::B32) => $word::<$s, B32>,
            Some(Ty::F32) => $word::<$s, F32>,
            _ => $general::<$g>,
        }
    };
}

/// Operand `slot` of type `ty` in lane `l`, read by its type (a 64-bit value from
/// the pair starting at `slot`).
#[inline(always)]
pub fn value(w: &Warp, slot: Reg, ty: Ty, l: usize) -> u64 {
    let s = usize::from(slot);
    let lo = u64::from(w.reg(s)[l]);
    let raw = if ty.bits() == 64 {
        lo | u64::from(w.reg(s + 1)[l]) << 32
    } else {
        lo
    };
    sem::read(ty, raw)
}

/// Writes each lane's result (one or two words, as `op.d_regs` says) to the
/// lanes of `exec` of the destination.
#[inline(always)]
fn write(w: &mut Warp, op: &Op, out: &Wide, exec: u32) {
    if op.d != NO_REG {
        lanes::write_wide(&mut w.regs, usize::from(op.d), out, op.d_regs.min(2), exec);
    }
}

/// Writes 32-bit results to the lanes of `exec` of the destination.
#[inline(always)]
fn write_word(w: &mut Warp, op: &Op, out: &Lanes, exec: u32) {
    lanes::write_masked(&mut w.regs[usize::from(op.d)], out, exec);
}

/// Sets predicate `p` to `hits` in the lanes of `exec`.
#[inline(always)]
fn write_pred(w: &mut Warp, p: Option<u8>, hits: u32, exec: u32) {
    if let Some(p) = p {
        let p = &mut w.preds[usize::from(p & 15)];
        *p = (*p & !exec) | (hits & exec);
    }
}

macro_rules! alu {
    ($pick:ident, $word:ident, $general:ident, $trait:ident, $n:literal, [$($k:literal),*]) => {
        /// The fast-path copy of a plain 32-bit form.
        fn $word<S: $trait, T: Word>(w: &mut Warp, op: &Op, exec: u32) {
            let f = T::FORM;
            let mut out: Lanes = [0; 32];
            {
                let ops = [$(op.lanes(w, $k)),*];
                for (l, o) in out.iter_mut().enumerate() {
                    *o = S::eval(&f, $(T::read(ops[$k][l])),*) as u32;
                }
            }
            write_word(w, op, &out, exec);
        }

        /// Any form, lane by lane.
        fn $general<S: $trait>(w: &mut Warp, op: &Op, exec: u32) {
            let mut out = [0u64; 32];
            for l in lanes_of(exec) {
                out[l] = S::eval(&op.form, $(value(w, op.src[$k], op.src_ty[$k], l)),*);
            }
            write(w, op, &out, exec);
        }

        /// The lane function of `op` for operation `S`.
        pub fn $pick<S: $trait>(op: &Op) -> LaneFn {
            pick!(op, $n, $word::<S>, $general::<S>)
        }
    };
}

alu!(alu1, alu1_word, alu1_general, Alu1, 1, [0]);
alu!(alu2, alu2_word, alu2_general, Alu2, 2, [0, 1]);
alu!(alu3, alu3_word, alu3_general, Alu3, 3, [0, 1, 2]);
alu!(alu4, alu4_word, alu4_general, Alu4, 4, [0, 1, 2, 3]);

/// `setp` of a plain 32-bit form with comparison `CMP` (its code).
fn setp_word<S: Setp, T: Word, const CMP: u8>(w: &mut Warp, op: &Op, exec: u32) {
    let mut f = T::FORM;
    f.mods.cmp = Cmp::from_code(CMP);
    let (a, b) = (op.lanes(w, 0), op.lanes(w, 1));
    // Each lane's bit, then their OR: both loops vectorise.
    let mut bits = [0u32; 32];
    for (l, o) in bits.iter_mut().enumerate() {
        *o = if S::eval(&f, T::read(a[l]), T::read(b[l])) {
            LANE_BIT[l]
        } else {
            0
        };
    }
    let hits = bits.iter().fold(0, |h, &x| h | x);
    write_pred(w, op.pd, hits, exec);
}

fn setp_general<S: Setp>(w: &mut Warp, op: &Op, exec: u32) {
    let mut hits = 0u32;
    for l in lanes_of(exec) {
        let a = value(w, op.src[0], op.src_ty[0], l);
        // A one-operand test (`testp`) has no b: it reads as 0.
        let b = match op.src[1] {
            NO_REG => 0,
            slot => value(w, slot, op.src_ty[1], l),
        };
        hits |= u32::from(S::eval(&op.form, a, b)) << l;
    }
    write_pred(w, op.pd, hits, exec);
}

/// The fast-path `setp` of each comparison code for one type.
macro_rules! setp_codes {
    ($s:ty, $t:ty, $code:expr, [$($c:literal),*]) => {
        match $code {
            $($c => setp_word::<$s, $t, $c> as LaneFn,)*
            _ => setp_general::<$s>,
        }
    };
}

/// The lane function of a `setp` form.
pub fn setp<S: Setp>(op: &Op) -> LaneFn {
    let Some(cmp) = op.form.mods.cmp else {
        return setp_general::<S>;
    };
    let code = cmp.code();
    macro_rules! codes {
        ($t:ty) => {
            setp_codes!(
                S,
                $t,
                code,
                [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
            )
        };
    }
    match word_type(op, 2) {
        Some(Ty::U32) => codes!(U32),
        Some(Ty::S32) => codes!(S32),
        Some(Ty::B32) => codes!(B32),
        Some(Ty::F32) => codes!(F32),
        _ => setp_general::<S>,
    }
}

fn selp_word<S: Selp, T: Word>(w: &mut Warp, op: &Op, exec: u32) {
    let f = T::FORM;
    let p = op.pa.mask(&w.preds);
    let mut out: Lanes = [0; 32];
    {
        let (a, b) = (op.lanes(w, 0), op.lanes(w, 1));
        for (l, o) in out.iter_mut().enumerate() {
            *o = S::eval(&f, T::read(a[l]), T::read(b[l]), p & LANE_BIT[l] != 0) as u32;
        }
    }
    write_word(w, op, &out, exec);
}

fn selp_general<S: Selp>(w: &mut Warp, op: &Op, exec: u32) {
    let p = op.pa.mask(&w.preds);
    let mut out = [0u64; 32];
    for l in lanes_of(exec) {
        let a = value(w, op.src[0], op.src_ty[0], l);
        let b = value(w, op.src[1], op.src_ty[1], l);
        out[l] = S::eval(&op.form, a, b, p >> l & 1 != 0);
    }
    write(w, op, &out, exec);
}

/// The lane function of a `selp` form.
pub fn selp<S: Selp>(op: &Op) -> LaneFn {
    pick!(op, 2, selp_word::<S>, selp_general::<S>)
}

fn pred_lanes<S: Pred>(w: &mut Warp, op: &Op, exec: u32) {
    let (a, b) = (op.pa.mask(&w.preds), op.pb.mask(&w.preds));
    let mut hits = 0u32;
    for bit in LANE_BIT {
        if S::eval(a & bit != 0, b & bit != 0) {
            hits |= bit;
        }
    }
    write_pred(w, op.pd, hits, exec);
}

/// The lane function of predicate logic.
pub fn pred<S: Pred>(_: &Op) -> LaneFn {
    pred_lanes::<S>
}

fn shfl_lanes<S: Shfl>(w: &mut Warp, op: &Op, exec: u32) {
    let mode = op.form.mods.shfl.unwrap_or(ShflMode::Idx);
    let source = *op.lanes(w, 0);
    let mut out = [0u64; 32];
    let mut valid = 0u32;
    for l in lanes_of(exec) {
        let b = value(w, op.src[1], Ty::U32, l) as u32;
        let c = value(w, op.src[2], Ty::U32, l) as u32;
        let (j, ok) = S::eval(mode, l as u32, b, c);
        out[l] = u64::from(source[j]);
        valid |= u32::from(ok) << l;
    }
    write(w, op, &out, exec);
    write_pred(w, op.pd, valid, exec);
}

/// The lane function of `shfl.sync`.
pub fn shfl<S: Shfl>(_: &Op) -> LaneFn {
    shfl_lanes::<S>
}

fn vote_lanes<S: Vote>(w: &mut Warp, op: &Op, exec: u32) {
    let mode = op.form.mods.vote.unwrap_or(VoteMode::Any);
    let r = S::eval(mode, op.pa.mask(&w.preds), exec);
    write_pred(w, op.pd, if r { u32::MAX } else { 0 }, exec);
}

/// The lane function of `vote.sync`.
pub fn vote<S: Vote>(_: &Op) -> LaneFn {
    vote_lanes::<S>
}

fn ballot_lanes<S: Ballot>(w: &mut Warp, op: &Op, exec: u32) {
    let x = S::eval(op.pa.mask(&w.preds), exec);
    write(w, op, &[u64::from(x); 32], exec);
}

/// The lane function of `vote.sync.ballot`.
pub fn ballot<S: Ballot>(_: &Op) -> LaneFn {
    ballot_lanes::<S>
}

fn activemask_lanes<S: Activemask>(w: &mut Warp, op: &Op, exec: u32) {
    write(w, op, &[u64::from(S::eval(exec)); 32], exec);
}

/// The lane function of `activemask`.
pub fn activemask<S: Activemask>(_: &Op) -> LaneFn {
    activemask_lanes::<S>
}
