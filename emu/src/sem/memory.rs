//! What memory instructions compute besides moving words: the value an atomic
//! leaves behind, and the 8- and 16-bit fields of a word that narrow loads read
//! and narrow stores replace.

use crate::sem::{Form, arith, bits, extend};
use spu_isa::{AtomOp, Ty};

/// An atomic's operation: `atom.{op}.{ty}`, or compare-and-swap (`op` `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atomic {
    pub op: Option<AtomOp>,
    pub ty: Ty,
}

impl Atomic {
    /// 32-bit words each lane's value occupies (1 or 2).
    pub fn words(self) -> u8 {
        if self.ty.bits() == 64 { 2 } else { 1 }
    }
}

/// The value an atomic leaves in memory, given the value there before (`prev`),
/// the operand `a` and, for compare-and-swap, the swap value `b` (all read as the
/// atomic's type). The arithmetic is the instructions' of the same names: `add.f32`
/// rounds to nearest even and flushes subnormal inputs and results to zero (PTX
/// ISA, `atom`), `add.f64` does not flush.
pub fn atomic(atom: Atomic, prev: u64, a: u64, b: u64) -> u64 {
    let ty = atom.ty;
    let Some(op) = atom.op else {
        return if prev == a { b } else { prev };
    };
    let mut f = Form::plain(ty);
    f.ftz = ty == Ty::F32;
    match op {
        AtomOp::Add => arith::add(&f, prev, a),
        AtomOp::Min => arith::min(&f, prev, a),
        AtomOp::Max => arith::max(&f, prev, a),
        AtomOp::And => bits::and(&f, prev, a),
        AtomOp::Or => bits::or(&f, prev, a),
        AtomOp::Xor => bits::xor(&f, prev, a),
        AtomOp::Exch => a,
        // `inc`/`dec` are .u32 only (the table's rule).
        AtomOp::Inc if prev >= a => 0,
        AtomOp::Inc => prev + 1,
        AtomOp::Dec if prev == 0 || prev > a => a,
        AtomOp::Dec => prev - 1,
    }
}

/// The 8- or 16-bit field of type `ty` at byte address `byte` of `word`, sign- or
/// zero-extended to 32 bits.
#[inline]
pub fn field(ty: Ty, word: u32, byte: u32) -> u32 {
    let mask = (1u32 << ty.bits()) - 1;
    extend(ty, u64::from((word >> (8 * (byte & 3))) & mask)) as u32
}

/// `word` with the 8- or 16-bit field of type `ty` at byte address `byte` replaced
/// by the low bits of `value`.
#[inline]
pub fn merge_field(ty: Ty, word: u32, byte: u32, value: u32) -> u32 {
    let mask = (1u32 << ty.bits()) - 1;
    let shift = 8 * (byte & 3);
    (word & !(mask << shift)) | ((value & mask) << shift)
}
