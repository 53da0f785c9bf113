//! Generates the ISA reference page (`isa-spec/ISA.md`) from the table. A test fails
//! when the checked-in page differs from what this produces.

use crate::class::EnergyClass;
use crate::names::Special;
use crate::table::{ExecRule, Field, ModKind, OperandKind, OperandTy, Role, TABLE, allowed_names};
use crate::{ExecClass, Ty};
use std::fmt::Write;

fn class_text(c: ExecClass) -> String {
    format!("{:?} / {:?} / {}", c.timing, c.energy, c.units.label())
}

fn exec_text(rule: ExecRule) -> String {
    match rule {
        ExecRule::Fixed(c) => class_text(c),
        ExecRule::ByType { int, float } | ExecRule::Convert { int, float } => {
            format!("integer: {}<br>f32: {}", class_text(int), class_text(float))
        }
        ExecRule::BySpace {
            global,
            shared,
            param,
            cb,
        } => format!(
            "global: {}<br>shared: {}<br>param: {}<br>cb: {}",
            class_text(global),
            class_text(shared),
            class_text(param),
            class_text(cb)
        ),
    }
}

fn syntax(spec: &crate::table::InstrSpec) -> String {
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
    let ops: Vec<String> = spec
        .operands()
        .map(|(name, kind, _, _)| match kind {
            OperandKind::Mem => format!("[{name}]"),
            _ => name.to_string(),
        })
        .collect();
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops.join(", "));
    }
    s
}

fn encoding(spec: &crate::table::InstrSpec) -> String {
    let mut parts = vec![format!("op={:#04x}", spec.opcode), "guard:6".to_string()];
    for f in spec.fields {
        parts.push(match f {
            Field::Mod { kind, .. } => format!("{}:{}", mod_short(*kind), kind.width()),
            Field::Operand { name, kind, .. } => format!("{name}:{}", kind.width()),
            Field::Reconv => format!("reconv:{}", f.width()),
        });
    }
    parts.join(" ")
}

fn mod_short(kind: ModKind) -> &'static str {
    match kind {
        ModKind::Type => "type",
        ModKind::SrcType => "srctype",
        ModKind::Cmp => "cmp",
        ModKind::Space => "space",
        ModKind::AtomOp => "atomop",
        ModKind::Half => "half",
        ModKind::Side => "side",
    }
}

fn operand_text(spec: &crate::table::InstrSpec) -> String {
    spec.operands()
        .map(|(name, kind, ty, role)| {
            let ty = match ty {
                OperandTy::Main => "type",
                OperandTy::Src => "source type",
                OperandTy::U32 => "u32",
                OperandTy::Pred => "pred",
                OperandTy::None => "-",
            };
            let role = if role == Role::Def { "written" } else { "read" };
            format!("`{name}`: {} ({ty}, {role})", kind.describe())
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The reference page as Markdown.
pub fn markdown() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# SPU instruction set reference\n\n\
         Generated from `isa-spec/src/table.rs` by `spu_isa::reference::markdown()`; do not edit.\n\
         Regenerate with `UPDATE_ISA_MD=1 cargo test -p spu-isa --test reference`.\n\n\
         Every instruction is one 64-bit little-endian word: opcode in bits 0..8, guard in bits\n\
         8..14 (bit 8 enable, bit 9 negate, bits 10..14 predicate), then the fields below packed\n\
         in order from bit 14 upwards; unused high bits are zero. Optional modifiers encode\n\
         \"absent\" as 0 and value *v* as *v*+1. Any instruction may carry a guard `@%p` or `@!%p`.\n\n\
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
            syntax(spec),
            spec.doc,
            operand_text(spec),
            exec_text(spec.exec),
            encoding(spec),
            spec.used_bits(),
            spec.example
        );
    }
    let _ = writeln!(s, "\n## Modifiers\n");
    let _ = writeln!(s, "| field | values (code order) | bits |");
    let _ = writeln!(s, "|---|---|---|");
    for kind in [
        ModKind::Type,
        ModKind::SrcType,
        ModKind::Cmp,
        ModKind::Space,
        ModKind::AtomOp,
        ModKind::Half,
        ModKind::Side,
    ] {
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            kind.describe(),
            kind.names()
                .iter()
                .map(|n| format!("`.{n}`"))
                .collect::<Vec<_>>()
                .join(" "),
            kind.width()
        );
    }
    let _ = writeln!(s, "\n## Operand fields\n");
    let _ = writeln!(s, "| kind | bits | layout |");
    let _ = writeln!(s, "|---|---|---|");
    for (kind, layout) in [
        (OperandKind::Reg, "register index (128 registers)"),
        (OperandKind::Pred, "predicate index (16 predicates)"),
        (
            OperandKind::RegOrImm,
            "bit 0: 1 = immediate; then a register index or 16 immediate bits (sign-extended for .s32, zero-extended for .u32, the high half of the bit pattern for .f32)",
        ),
        (
            OperandKind::Mem,
            "bit 0: base present; 7 bits base register; 16 bits signed byte offset",
        ),
        (
            OperandKind::MovSrc,
            "2-bit tag (0 register, 1 immediate, 2 special register, 3 symbol address); 32 bits payload (symbol: bit 15 set for shared arrays, low 15 bits the declaration index)",
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
        "All special registers are `.u32` and read with `mov.u32 %r, %name;`.\n"
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
    let _ = writeln!(
        s,
        "\n## Notes\n\n\
         - Integer arithmetic wraps modulo 2^32. `div` by zero gives `0xFFFFFFFF` for `.u32`, and for\n\
           `.s32` -1 when the dividend is non-negative and 1 otherwise; `div.s32` of INT_MIN by -1 gives\n\
           INT_MIN. `rem` by zero gives the dividend.\n\
         - Types `.u32` and `.s32` registers are interchangeable; `.f32` registers only meet `.f32`\n\
           operands (convert with `cvt`).\n\
         - Memory addresses are byte addresses of 32-bit words and must be 4-byte aligned.\n\
         - The `{}` type family is shared by all rows; see `Ty`.",
        Ty::NAMES.join("/")
    );
    s
}
