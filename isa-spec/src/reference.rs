//! Generates the ISA reference page (`isa-spec/ISA.md`) from the table. A test fails
//! when the checked-in page differs from what this produces.

use crate::class::EnergyClass;
use crate::names::Space;
use crate::names::Special;
use crate::table::{
    ExecRule, Field, InstrSpec, ModKind, OperandKind, OperandTy, Role, TABLE, allowed_names,
};
use crate::{ExecClass, Ty};
use std::fmt::Write;

/// Text for a Markdown table cell (a `|` would end the cell).
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn class_text(c: ExecClass) -> String {
    format!("{:?} / {:?} / {}", c.timing, c.energy, c.units.label())
}

fn exec_text(spec: &InstrSpec) -> String {
    match spec.exec {
        ExecRule::Fixed(c) => class_text(c),
        ExecRule::ByType { int, f32, f64 } | ExecRule::Convert { int, f32, f64 } => {
            let types = spec.modifier(ModKind::Type).map_or(0, |(a, _)| a)
                | spec.modifier(ModKind::SrcType).map_or(0, |(a, _)| a);
            let has = |t: Ty| types & (1 << t.code()) != 0;
            let mut parts = Vec::new();
            if Ty::ALL.iter().any(|t| t.is_int() && has(*t)) {
                parts.push(format!("integer: {}", class_text(int)));
            }
            if has(Ty::F32) {
                parts.push(format!("f32: {}", class_text(f32)));
            }
            if has(Ty::F64) {
                parts.push(format!("f64: {}", class_text(f64)));
            }
            parts.join("<br>")
        }
        ExecRule::BySpace {
            global,
            shared,
            param,
            cb,
            local,
        } => {
            let spaces = spec.modifier(ModKind::Space).map_or(0, |(a, _)| a);
            let has = |s: Space| spaces & (1 << s.code()) != 0;
            let mut parts = Vec::new();
            if has(Space::Global) {
                parts.push(format!("global: {}", class_text(global)));
            }
            if has(Space::Shared) {
                parts.push(format!("shared: {}", class_text(shared)));
            }
            if has(Space::Param) {
                parts.push(format!("param: {}", class_text(param)));
            }
            if Space::ALL.iter().any(|s| s.cb_side().is_some() && has(*s)) {
                parts.push(format!("cb: {}", class_text(cb)));
            }
            if has(Space::Local) {
                parts.push(format!("local: {}", class_text(local)));
            }
            parts.join("<br>")
        }
    }
}

fn syntax(spec: &InstrSpec) -> String {
    let mut s = spec.mnemonic.to_string();
    for (kind, allowed, optional) in spec.modifiers() {
        let names = allowed_names(kind, allowed);
        let alt = if names.len() == 1 {
            format!(".{}", names[0])
        } else {
            format!("{{.{}}}", names.join(", ."))
        };
        if optional {
            s.push_str(&format!("[{alt}]"));
        } else {
            s.push_str(&alt);
        }
    }
    let mut ops: Vec<String> = Vec::new();
    for (name, kind, _, _) in spec.operands() {
        match kind {
            OperandKind::Mem => ops.push(format!("[{name}]")),
            OperandKind::OptPred => {
                if let Some(last) = ops.last_mut() {
                    last.push_str(&format!("[|{name}]"));
                }
            }
            OperandKind::PredNeg => ops.push(format!("[!]{name}")),
            _ => ops.push(name.to_string()),
        }
    }
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops.join(", "));
    }
    s
}

fn encoding(spec: &InstrSpec) -> String {
    let mut parts = vec![format!("op={:#04x}", spec.opcode), "guard:6".to_string()];
    for f in spec.fields {
        match f {
            Field::Mod { kind, .. } if f.width() > 0 => {
                parts.push(format!("{}:{}", kind.short(), f.width()))
            }
            Field::Mod { .. } => {}
            Field::Operand { name, kind, .. } => parts.push(format!("{name}:{}", kind.width())),
            Field::Reconv => parts.push(format!("reconv:{}", f.width())),
        }
    }
    parts.join(" ")
}

fn operand_text(spec: &InstrSpec) -> String {
    spec.operands()
        .map(|(name, kind, ty, role)| {
            let ty = match ty {
                OperandTy::Main => "type".to_string(),
                OperandTy::MainVec => "type, times the vector width".to_string(),
                OperandTy::Wide => "twice the type".to_string(),
                OperandTy::Src => "source type".to_string(),
                OperandTy::U32 if kind == OperandKind::RegOrSmall => {
                    "u32, all 32 bits of a register".to_string()
                }
                OperandTy::U32 => "u32".to_string(),
                OperandTy::U32Low(bits) => format!("u32, low {bits} bits"),
                OperandTy::B32 => "b32".to_string(),
                OperandTy::Pred => "pred".to_string(),
                OperandTy::None => "-".to_string(),
            };
            let role = if role == Role::Def { "written" } else { "read" };
            format!("`{name}`: {} ({ty}, {role})", kind.describe())
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The semantic notes the table's one-line docs refer to.
const NOTES: &str = "
## Notes

- **Integers** wrap modulo 2^N for their width N. `div` by zero gives all ones for unsigned
  types; for signed types it gives -1 when the dividend is non-negative and 1 when it is
  negative; the most negative value divided by -1 gives itself. `rem` by zero gives the
  dividend. Shifts by the width or more give 0 (or -1 for `shr` of a negative signed value).
  `.sat` on `.s32` `add`, `sub` and `mad.hi` clamps to the `.s32` range instead of wrapping;
  `mad.lo` and the other integer types take no `.sat` (PTX ISA 9.7.1.4: it applies only to
  `.s32` in `.hi` mode).
- **Types.** Unsigned, signed and bit types of one width are interchangeable in registers;
  `.f32`/`.f64` registers meet float or bit types of their width (PTX's rules). A register of
  a 64-bit type is a pair; `%rd2.lo` and `%rd2.hi` name its 32-bit halves. Loads into wider
  registers zero- or sign-extend 8- and 16-bit values; stores of 8- and 16-bit types store the
  low bits.
- **Floats** follow IEEE 754 binary32/binary64. The rounding mode `.rn` (nearest even, the
  default), `.rz`, `.rm`, `.rp` applies to `add sub mul fma mad div rcp sqrt cvt`. `.ftz`
  flushes subnormal `.f32` inputs and results (after rounding) to zero of the same sign.
  `.f64` forms keep subnormals and take no `.ftz`, except PTX's two `.approx.ftz.f64` forms.
  `rcp.approx.ftz.f64` (PTX ISA 9.7.3.14) reads the upper 32 bits of `a` only (its low word is
  ignored), flushes a subnormal operand and a subnormal result to zero of its sign, and gives the
  correctly rounded reciprocal with its low 32 bits cleared (20 fraction bits); a NaN gives
  `0x7fffffff00000000`. `rsqrt.approx.ftz.f64` reads a subnormal operand as zero of its sign (so
  gives an infinity) and is otherwise `rsqrt.approx.f64`. `.sat` clamps a float
  result to [0, 1] (NaN gives 0). Results of arithmetic (conversions between floats included)
  that are NaN are the canonical NaN `0x7fffffff` (`.f32`) or `0x7fffffffffffffff` (`.f64`);
  `abs` and `neg` change only the sign bit, so a NaN keeps its payload.
- **Comparisons** (`setp`): ordered comparisons (`eq ne lt le gt ge`) are false when either
  operand is NaN, `ne` included; the unordered ones (`equ neu ltu leu gtu geu`) are true then.
  `num` is true when neither operand is NaN, `nan` when either is. `lo ls hi hs` are `lt le gt
  ge` on unsigned types. Bit types (`.b16 .b32 .b64`) compare with `eq` and `ne` only (PTX ISA
  9.7.6.2, Integer Notes): an ordered comparison names `.u` or `.s`. Older SPU sources:
  `setp.ne.f32` used to be true on NaN; it now follows PTX, and `setp.neu.f32` gives the old
  result.
- **`min`/`max` on floats** follow IEEE 754-2019 minimumNumber/maximumNumber: a NaN operand
  gives the other operand (NaN only when both are), and -0 is less than +0 in either order, so
  `min(+0, -0)` is -0 and `max(+0, -0)` is +0.
- **Conversions** (`cvt`): float to integer rounds as `.rni .rzi .rmi .rpi` say (default
  `.rzi`, truncation) and saturates to the destination range; NaN gives 0 when the source is
  `.f32` and the destination narrower than 64 bits, otherwise `1 << (N - 1)` for an N-bit
  destination (the most negative value of a signed one: PTX ISA 9.7.9.21, Integer Notes); integer or
  wider float to float rounds as `.rn .rz .rm .rp` say (default `.rn`); float to the same
  float type with an integral rounding rounds to an integral value. Integer to integer
  truncates to a narrower width, or zero- or sign-extends to a wider one by the source type;
  `.sat` clamps to the destination range instead.
- **Approximations.** `div.approx.f32`, `div.full.f32`, `rcp.approx.f32`, `sqrt.approx.f32`
  and `rsqrt` (`.f32` and `.f64`) give the correctly rounded result (to nearest), within every
  error bound PTX documents for them; unlike PTX's `div.approx.f32`, a divisor of magnitude in
  (2^126, 2^128) does not give zero. `ex2 lg2 sin cos` (`.f32` only) give the host's
  double-precision function of the operand rounded once to `.f32`, within PTX's bounds (`ex2`
  2 ulp, `lg2` 2^-22, `sin`/`cos` 2^-20.5 absolute in [-100 pi, 100 pi]). The `.f64`
  approximations are `rcp.approx.ftz.f64` and `rsqrt.approx{.ftz}.f64` only: `div` and `sqrt`
  have no `.approx.f64` (PTX ISA 9.7.3.8, 9.7.3.15), and `.full` is `div.full.f32` only.
- **Memory** addresses are byte addresses; every access must be aligned to its size (a
  `.v4.f32` access to 16 bytes). A 64-bit base register must hold an address below 4 GiB.
- **Warp operations**: `shfl.sync`, `vote.sync` and `activemask` see the lanes that execute
  the instruction together (the active lanes whose guard holds); `membermask` is recorded but
  not checked.
";

/// The reference page as Markdown.
pub fn markdown() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# SPU instruction set reference\n\n\
         Generated from `isa-spec/src/table/rows.rs` by `spu_isa::reference::markdown()`; do not edit.\n\
         Regenerate with `UPDATE_ISA_MD=1 cargo test -p spu-isa --test reference`.\n\n\
         Every instruction is one 64-bit little-endian word: opcode in bits 0..8, guard in bits\n\
         8..14 (bit 8 enable, bit 9 negate, bits 10..14 predicate), then the fields below packed\n\
         in order from bit 14 upwards; unused high bits are zero. Optional modifiers encode\n\
         \"absent\" as 0 and value *v* as *v*+1; a required modifier with one allowed value\n\
         takes no bits. Any instruction may carry a guard `@%p` or `@!%p`.\n\n\
         Registers are 32 bits wide: 128 per thread, plus 16 one-bit predicates (a lane mask\n\
         per warp). 8- and 16-bit values live in the low bits of one register. 64-bit\n\
         integers and `.f64` live in an aligned pair of registers (even register = low word);\n\
         `.v2`/`.v4` loads and stores use 2 or 4 consecutive elements starting at a register\n\
         aligned to the group's size. The assembler's register allocator honours these\n\
         alignments (see `asm/LANGUAGE.md`).\n\n\
         Execution class columns read *timing class / energy class / units that implement it*\n\
         (units from thesis Table 5.2: Interface Units have no FPU, SFU or shared memory).\n"
    );
    let _ = writeln!(s, "## Instructions\n");
    let _ = writeln!(
        s,
        "| syntax | semantics | operands | execution class | encoding | example |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for spec in TABLE {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | `{}` ({} bits) | `{}` |",
            cell(&syntax(spec)),
            cell(spec.doc),
            operand_text(spec),
            exec_text(spec),
            encoding(spec),
            spec.used_bits(),
            cell(spec.example)
        );
    }
    let _ = writeln!(s, "\n## Modifiers\n");
    let _ = writeln!(
        s,
        "| field | values (code order) | bits (required / optional) |"
    );
    let _ = writeln!(s, "|---|---|---|");
    for kind in ModKind::ALL {
        let _ = writeln!(
            s,
            "| {} | {} | {} / {} |",
            kind.describe(),
            kind.names()
                .iter()
                .map(|n| format!("`.{n}`"))
                .collect::<Vec<_>>()
                .join(" "),
            kind.width(false),
            kind.width(true)
        );
    }
    let _ = writeln!(s, "\n## Operand fields\n");
    let _ = writeln!(s, "| kind | bits | layout |");
    let _ = writeln!(s, "|---|---|---|");
    for (kind, layout) in [
        (
            OperandKind::Reg,
            "register index (128 registers; the first of an aligned pair or group for 64-bit and vector operands)",
        ),
        (OperandKind::Pred, "predicate index (16 predicates)"),
        (
            OperandKind::PredNeg,
            "bit 0: negated; then the predicate index",
        ),
        (
            OperandKind::OptPred,
            "bit 0: present; then the predicate index (all zero when absent)",
        ),
        (
            OperandKind::RegOrImm,
            "bit 0: 1 = immediate; then a register index or 16 immediate bits (sign-extended for signed types, zero-extended for unsigned and bit types, the high 16 bits of the pattern for floats)",
        ),
        (
            OperandKind::RegOrSmall,
            "bit 0: 1 = immediate; then a register index or an immediate 0..=255",
        ),
        (
            OperandKind::ShflC,
            "bit 0: 1 = immediate; then a register index, or the clamp (5 bits) and the segment mask (5 bits) of `c = clamp | mask << 8`",
        ),
        (
            OperandKind::Mask,
            "bit 0: 1 = the full mask -1; otherwise a register index follows",
        ),
        (OperandKind::Imm8, "8 immediate bits"),
        (
            OperandKind::Mem,
            "bit 0: base present; bit 1: the base is a 64-bit pair; 7 bits base register; 16 bits signed byte offset",
        ),
        (
            OperandKind::MovSrc,
            "3-bit tag (0 register, 1 immediate, 2 special register, 3 buffer address, 4 shared-array address); 32 bits payload (symbols: 12 bits declaration index, then a 20-bit signed byte offset)",
        ),
        (OperandKind::Target, "instruction index"),
    ] {
        let _ = writeln!(s, "| {} | {} | {layout} |", kind.describe(), kind.width());
    }
    let _ = writeln!(
        s,
        "| reconvergence point | 24 | instruction index of the branch's immediate post-dominator, computed by the assembler; all ones = none |"
    );
    let _ = writeln!(s, "\n## Special registers\n");
    let _ = writeln!(
        s,
        "All special registers are 32 bits wide and read with `mov.u32 %r, %name;`.\n"
    );
    let _ = writeln!(s, "| register | code | meaning |");
    let _ = writeln!(s, "|---|---|---|");
    for sp in Special::ALL {
        let _ = writeln!(s, "| `%{}` | {} | {} |", sp.name(), sp.code(), sp.doc());
    }
    let _ = writeln!(s, "\n## Energy classes\n");
    let _ = writeln!(
        s,
        "Energy models attach a cost to each class: {}.",
        EnergyClass::ALL
            .iter()
            .map(|c| format!("`{c:?}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s.push_str(NOTES);
    s
}
