//! Loads, stores and atomics on a thread's bytes, from PTX's manual (9.7.9.8 `ld`,
//! 9.7.9.10 `st`, 9.7.13.5 `atom`, `red`) and ISA.md's notes: little-endian
//! elements, 8- and 16-bit loads zero- or sign-extended by their type, stores of
//! the low bits, and each atomic's new value from the old one.

use super::float::{self, F32, F64, Mode};
use super::int;
use spu_isa::{AtomOp, Ty};

/// The element of `ty` at byte `at` of `bytes`, extended by its type to 64 bits.
pub fn read(bytes: &[u8], at: usize, ty: Ty) -> u64 {
    let n = ty.bits() as usize / 8;
    let mut v = 0u64;
    for (i, b) in bytes[at..at + n].iter().enumerate() {
        v |= u64::from(*b) << (8 * i);
    }
    if ty.is_signed() {
        int::wrap(ty, int::value(ty, v))
    } else {
        v
    }
}

/// Writes the low bits of `v` as an element of `ty` at byte `at`.
pub fn write(bytes: &mut [u8], at: usize, ty: Ty, v: u64) {
    let n = ty.bits() as usize / 8;
    for (i, b) in bytes[at..at + n].iter_mut().enumerate() {
        *b = (v >> (8 * i)) as u8;
    }
}

/// The value an atomic leaves given the `old` one, its operand `b` and, for
/// `.cas` (`op` `None`), the new value `c`: `add.f32` rounds to nearest and
/// flushes subnormal operands and result (PTX: `atom.add.f32` flushes), `.f64`
/// does not; `inc` wraps to 0 past `b`, `dec` to `b` below 1 or above `b`.
pub fn atomic(op: Option<AtomOp>, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let w = ty.bits();
    let (old, b, c) = (int::low(w, old), int::low(w, b), int::low(w, c));
    let Some(op) = op else {
        return if old == b { c } else { old };
    };
    match (op, ty) {
        (AtomOp::Add, Ty::F32) => {
            let r = float::add(F32, F32.flush(old), F32.flush(b), Mode::Nearest);
            F32.flush(r)
        }
        (AtomOp::Add, Ty::F64) => float::add(F64, old, b, Mode::Nearest),
        (AtomOp::Add, _) => int::low(w, old.wrapping_add(b)),
        (AtomOp::Min, _) => int::low(w, int::min_max(ty, old, b, false)),
        (AtomOp::Max, _) => int::low(w, int::min_max(ty, old, b, true)),
        (AtomOp::And, _) => old & b,
        (AtomOp::Or, _) => old | b,
        (AtomOp::Xor, _) => old ^ b,
        (AtomOp::Exch, _) => b,
        (AtomOp::Inc, _) => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        (AtomOp::Dec, _) => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
    }
}
