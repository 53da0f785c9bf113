//! A kernel's source text: load every register from the thread's input slots and
//! copy its scratch words into global, shared and local memory, run the pieces,
//! store each result in its 8-byte output slot, then every predicate and the
//! shared and local scratch.
//!
//! Registers `%a<8>` hold addresses: `%a1` the thread's inputs, `%a2` its output
//! area (whose first [`SCRATCH`] bytes are its global scratch; `%t1` holds the
//! same address as 64 bits), `%a4` its shared scratch, `%a5` its local scratch.

use super::{Class, IN_SLOTS, Inst, PARAMS, PREDS, Piece, REGS, Reg, SCRATCH, SCRATCH_SLOTS};
use std::fmt::Write as _;

fn store(text: &mut String, dst: Reg, slot: usize, bits: u32) {
    let off = slot * 8;
    if dst.class == Class::P {
        let _ = writeln!(text, "    selp.u32 %a3, 1, 0, {dst};");
        let _ = writeln!(text, "    st.global.u32 [%a2+{off}], %a3;");
        return;
    }
    let ty = match (dst.class, bits) {
        (_, 8) => "u8",
        (Class::H, _) => "u16",
        (Class::R, _) => "b32",
        (Class::F, _) => "f32",
        (Class::Rd, _) => "b64",
        _ => "f64",
    };
    let _ = writeln!(text, "    st.global.{ty} [%a2+{off}], {dst};");
}

fn emit(text: &mut String, i: &Inst) {
    let guard = match i.guard {
        Some((p, true)) => format!("@!{p} "),
        Some((p, false)) => format!("@{p} "),
        None => String::new(),
    };
    let _ = writeln!(text, "    {guard}{}", i.text);
    for (n, &d) in i.dsts.iter().enumerate() {
        let bits = if n == 0 { i.store_bits } else { d.class.bits() };
        store(text, d, i.slot + n, bits);
    }
}

/// The kernel's source: load every register, run the pieces, store every result
/// and finally every predicate and the scratch of shared and local space.
pub fn source(pieces: &[Piece], threads: usize, out_slots: usize, params: &[u64]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "// A random kernel of the differential corpus.");
    for (i, p) in params.iter().enumerate().take(PARAMS) {
        let _ = writeln!(t, ".param .b64 P{i} = {p:#x};");
    }
    let _ = writeln!(t, ".global .u32 inp[{}] = zeros;", threads * IN_SLOTS * 2);
    let _ = writeln!(t, ".global .u32 out[{}] = zeros;", threads * out_slots * 2);
    let _ = writeln!(t, ".launch grid({}, 1) block(64) iu(32);\n", threads / 64);
    let _ = writeln!(t, ".entry semcheck {{");
    let _ = writeln!(t, "    .reg .u32 %a<8>;");
    let _ = writeln!(t, "    .reg .b64 %t<2>;");
    for c in Class::VALUES {
        let _ = writeln!(t, "    .reg {} %{}<{REGS}>;", c.decl(), c.prefix());
    }
    let _ = writeln!(t, "    .reg .pred %p<{PREDS}>;");
    let _ = writeln!(t, "    .shared .align 16 .b8 shs[{}];", 64 * SCRATCH);
    let _ = writeln!(t, "    .local .align 16 .b8 loc[{SCRATCH}];");
    let _ = writeln!(t, "    mov.u32 %a0, %ctaid.x;");
    let _ = writeln!(t, "    mov.u32 %a1, %ntid.x;");
    let _ = writeln!(t, "    mov.u32 %a2, %tid.x;");
    let _ = writeln!(t, "    mul.lo.u32 %a4, %a2, {SCRATCH};");
    let _ = writeln!(t, "    mov.u32 %a3, shs;");
    let _ = writeln!(t, "    add.u32 %a4, %a4, %a3;");
    let _ = writeln!(t, "    mov.u32 %a5, loc;");
    let _ = writeln!(t, "    mad.lo.u32 %a0, %a0, %a1, %a2;");
    let _ = writeln!(t, "    mul.lo.u32 %a1, %a0, {};", IN_SLOTS * 8);
    let _ = writeln!(t, "    mov.u32 %a2, inp;");
    let _ = writeln!(t, "    add.u32 %a1, %a1, %a2;");
    let _ = writeln!(t, "    mul.lo.u32 %a2, %a0, {};", out_slots * 8);
    let _ = writeln!(t, "    mov.u32 %a3, out;");
    let _ = writeln!(t, "    add.u32 %a2, %a2, %a3;");
    let _ = writeln!(t, "    cvt.u64.u32 %t1, %a2;");
    for (k, c) in Class::VALUES.iter().enumerate() {
        for n in 0..REGS {
            let ty = match c {
                Class::H => "u16",
                Class::R => "b32",
                Class::Rd => "b64",
                Class::F => "f32",
                _ => "f64",
            };
            let off = (k * REGS + n) * 8;
            let _ = writeln!(t, "    ld.global.{ty} %{}{n}, [%a1+{off}];", c.prefix());
        }
    }
    for w in 0..SCRATCH_SLOTS {
        let off = (Class::VALUES.len() * REGS + w) * 8;
        let _ = writeln!(t, "    ld.global.b64 %t0, [%a1+{off}];");
        for base in ["%a2", "%a4", "%a5"] {
            let space = match base {
                "%a2" => "global",
                "%a4" => "shared",
                _ => "local",
            };
            let _ = writeln!(t, "    st.{space}.b64 [{base}+{}], %t0;", w * 8);
        }
    }
    // Predicate i starts as bit 0 of %r<i>.
    for n in 0..PREDS {
        let _ = writeln!(t, "    and.b32 %a3, %r{n}, 1;");
        let _ = writeln!(t, "    setp.ne.b32 %p{n}, %a3, 0;");
    }
    for (k, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Inst(i) => emit(&mut t, i),
            Piece::Skip {
                pred,
                negated,
                body,
            } => {
                let not = if *negated { "!" } else { "" };
                let _ = writeln!(t, "    @{not}{pred} bra SKIP{k};");
                for i in body {
                    emit(&mut t, i);
                }
                let _ = writeln!(t, "SKIP{k}:");
            }
        }
    }
    let first = out_slots - PREDS - 2 * SCRATCH_SLOTS;
    for n in 0..PREDS {
        store(&mut t, Reg { class: Class::P, n }, first + n, 1);
    }
    for (base, space, at) in [
        ("%a4", "shared", first + PREDS),
        ("%a5", "local", first + PREDS + SCRATCH_SLOTS),
    ] {
        for w in 0..SCRATCH_SLOTS {
            let _ = writeln!(t, "    ld.{space}.b64 %t0, [{base}+{}];", w * 8);
            let _ = writeln!(t, "    st.global.b64 [%a2+{}], %t0;", (at + w) * 8);
        }
    }
    let _ = writeln!(t, "    exit;\n}}");
    t
}
