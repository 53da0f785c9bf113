//! What each instruction means, once: one scalar function per operation of the
//! ISA table (each row's `sem` column names it), on one lane's values, for every
//! type and modifier the row allows. The execution core applies these functions
//! over the 32 lanes of a warp in every mode; nothing else defines an operation.
//!
//! Values travel as `u64` bit patterns: an integer operand is its low N bits
//! extended by its type's signedness ([`read`]), a float its IEEE pattern; a result
//! is written back as its low 32 bits (or both words of a 64-bit type). Semantics
//! follow the notes of `isa-spec/ISA.md`, and PTX's manual where they are silent.
//!
//! - [`arith`]: integer and float arithmetic (`add` ... `mad.wide`);
//! - [`float`]: the float side of arithmetic: flushing, saturation, canonical NaN,
//!   the SFU approximations;
//! - [`ieee`]: exact IEEE 754 arithmetic in each rounding mode;
//! - [`bits`]: logic, shifts and bit-field operations;
//! - [`convert`]: `cvt` and `mov`;
//! - [`compare`]: `setp`, `selp` and predicate logic;
//! - [`memory`]: atomics and the narrow fields of loads and stores;
//! - [`warp`]: the cross-lane operations (`shfl`, `vote`, `activemask`).
//!
//! Layer 2 (beside [`crate::exec`], which applies it): uses nothing of the crate.

pub mod arith;
pub mod bits;
pub mod compare;
pub mod convert;
pub mod float;
pub mod ieee;
pub mod memory;
pub mod warp;

use spu_isa::{Mods, Rnd, Ty};

/// An instruction's types and modifiers, as its operation reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// The instruction's type (`add.f32`: `.f32`).
    pub ty: Ty,
    /// The source type of `cvt` (else `ty`).
    pub src_ty: Ty,
    /// The rounding modifier, `None` for the default (`.rn`).
    pub rnd: Option<Rnd>,
    /// `.ftz` (flushing applies to `.f32` only).
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
    /// Every modifier, for the operations that read others (`.hi`, the comparison,
    /// the `prmt` and `shf` modes, `.shiftamt`).
    pub mods: Mods,
}

impl Form {
    /// A form of type `ty` without modifiers.
    pub const fn plain(ty: Ty) -> Form {
        Form {
            ty,
            src_ty: ty,
            rnd: None,
            ftz: false,
            sat: false,
            mods: Mods::NONE,
        }
    }

    /// The form of an instruction with modifiers `mods` (its type `.u32` if it has
    /// none).
    pub fn of(mods: &Mods) -> Form {
        let ty = mods.ty.unwrap_or(Ty::U32);
        Form {
            ty,
            src_ty: mods.src_ty.unwrap_or(ty),
            rnd: mods.rnd.filter(|r| *r != Rnd::Rn),
            ftz: mods.ftz.is_some(),
            sat: mods.sat.is_some(),
            mods: *mods,
        }
    }

    /// True without rounding, `.ftz` and `.sat` modifiers.
    pub fn is_plain(&self) -> bool {
        self.rnd.is_none() && !self.ftz && !self.sat
    }
}

/// A value of `ty` from a register word pattern: the low bits of its width,
/// extended by its signedness (floats keep their pattern).
#[inline(always)]
pub fn read(ty: Ty, raw: u64) -> u64 {
    match ty {
        Ty::F32 => raw & 0xffff_ffff,
        _ => extend(ty, raw),
    }
}

/// The low `ty.bits()` of `v`, sign- or zero-extended.
#[inline(always)]
pub fn extend(ty: Ty, v: u64) -> u64 {
    ty.extend(v)
}

/// The low `w` bits of `v`.
#[inline(always)]
pub(crate) fn low(w: u32, v: u64) -> u64 {
    if w >= 64 { v } else { v & ((1 << w) - 1) }
}
