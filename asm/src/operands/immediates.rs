//! Immediates checked against the operand's type and field width, and symbol +
//! offset addresses.

use super::Scope;
use crate::ast::{Expr, Spanned};
use crate::diag::Diagnostic;
use crate::eval::{const_bits64, const_int};
use spu_isa::{Operand, SymbolRef, Ty};

/// Whether a register of type `reg` can hold an operand of type `want`. Narrow
/// integer types may use wider integer registers (loads extend, stores truncate,
/// as PTX allows for memory and conversion operands).
pub(super) fn accepts(want: Ty, reg: Ty) -> bool {
    want.accepts_register(reg) || (want.bits() < 32 && reg.bits() == 32 && !reg.is_float())
}

pub(super) fn imm16(e: &Spanned<Expr<'_>>, ty: Ty, scope: &Scope) -> Result<u16, Diagnostic> {
    let bits = const_bits64(e, ty, &scope.params)?;
    let raw = match ty {
        Ty::F32 if bits & 0xffff == 0 => Some((bits >> 16) as u16),
        Ty::F64 if bits & 0xffff_ffff_ffff == 0 => Some((bits >> 48) as u16),
        Ty::F32 | Ty::F64 => None,
        t if t.bits() <= 16 => Some(bits as u16),
        t if t.is_signed() => {
            let v = ((bits << (64 - t.bits())) as i64) >> (64 - t.bits());
            i16::try_from(v).ok().map(|v| v as u16)
        }
        _ => u16::try_from(bits).ok(),
    };
    raw.ok_or_else(|| {
        let text = match ty {
            Ty::F32 => spu_isa::disasm::format_f32(f32::from_bits(bits as u32)),
            Ty::F64 => spu_isa::disasm::format_f64(f64::from_bits(bits)),
            t => spu_isa::disasm::format_value(bits, t),
        };
        if ty.is_float() {
            Diagnostic::error(
                format!("`{text}` does not fit in a 16-bit .{ty} immediate"),
                e.span.clone(),
            )
            .label("the low bits of its pattern are not zero")
            .help(format!("load it with `mov.{ty} %fN, {text};` first"))
        } else {
            let range = if ty.is_signed() {
                "-32768..=32767"
            } else {
                "0..=65535"
            };
            Diagnostic::error(
                format!("immediate `{text}` does not fit in 16 bits"),
                e.span.clone(),
            )
            .label(format!("expected {range}"))
            .help("load it with `mov` first")
        }
    })
}

/// A `mov` immediate: any value of a 32-bit or narrower type; 64-bit types take values
/// the 32-bit field extends back exactly.
pub(super) fn imm32(e: &Spanned<Expr<'_>>, ty: Ty, scope: &Scope) -> Result<u32, Diagnostic> {
    let bits = const_bits64(e, ty, &scope.params)?;
    if ty.bits() < 32 && ty.is_signed() {
        // Narrow signed immediates are stored sign-extended.
        let shift = 64 - ty.bits();
        return Ok((((bits << shift) as i64) >> shift) as u32);
    }
    if ty.bits() <= 32 {
        return Ok(bits as u32);
    }
    let raw = if ty == Ty::F64 {
        (bits as u32 == 0).then_some((bits >> 32) as u32)
    } else {
        let low = bits as u32;
        (Operand::widen_imm32(low, ty) == bits).then_some(low)
    };
    raw.ok_or_else(|| {
        Diagnostic::error(
            "64-bit immediate does not fit in `mov`'s 32-bit field",
            e.span.clone(),
        )
        .label(if ty == Ty::F64 {
            "the low 32 bits of its pattern are not zero"
        } else {
            "its high word is not the extension of its low word"
        })
        .help("set the halves with `mov.b32 %rdN.lo, ...;` and `mov.b32 %rdN.hi, ...;`")
    })
}

/// A small unsigned immediate in `0..=max`.
pub(super) fn small(e: &Spanned<Expr<'_>>, max: i64, scope: &Scope) -> Result<u32, Diagnostic> {
    let v = const_int(e, &scope.params)?;
    if (0..=max).contains(&v) {
        Ok(v as u32)
    } else {
        Err(
            Diagnostic::error(format!("immediate `{v}` is out of range"), e.span.clone())
                .label(format!("expected 0..={max}")),
        )
    }
}

/// `A`, `A+16`, `A-4`, `16+A`: a buffer or shared array plus a constant offset.
pub(super) fn symbol(e: &Expr<'_>, scope: &Scope) -> Option<Result<(SymbolRef, i32), Diagnostic>> {
    let lookup = |n: &str| {
        scope
            .buffers
            .get(n)
            .map(|i| SymbolRef::Buffer(*i))
            .or_else(|| scope.shared.get(n).map(|i| SymbolRef::Shared(*i)))
    };
    let offset = |o: &Spanned<Expr<'_>>, negate: bool| {
        const_int(o, &scope.params).and_then(|v| {
            let v = if negate {
                v.checked_neg().unwrap_or(i64::MAX)
            } else {
                v
            };
            i32::try_from(v).map_err(|_| {
                Diagnostic::error("offset is out of range", o.span.clone())
                    .label("expected a 32-bit offset")
            })
        })
    };
    match e {
        Expr::Name(n) => lookup(n).map(|s| Ok((s, 0))),
        Expr::Binary(op @ ('+' | '-'), a, b) => match (&a.node, &b.node) {
            (Expr::Name(n), _) => {
                let s = lookup(n)?;
                Some(offset(b, *op == '-').map(|o| (s, o)))
            }
            (_, Expr::Name(n)) if *op == '+' => {
                let s = lookup(n)?;
                Some(offset(a, false).map(|o| (s, o)))
            }
            _ => None,
        },
        _ => None,
    }
}
