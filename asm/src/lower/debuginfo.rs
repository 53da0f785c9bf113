//! The code's debug information (`.spu.debug`): the source name of each register an
//! instruction names where the allocator placed the registers (so traces, errors and
//! listings show `%f2`, not the `%r5` it landed in; the assembler's temporaries are
//! `%tmp0`, `%tmp1`, ...), and which instructions the assembler added to a statement.
//! A listing carries both on its `.loc` lines (`.loc 0 12 5, regs "f2 i tmp0"`, or
//! `hidden "..."` for an added instruction), so that it re-assembles to the same bytes.

use super::Assembler;
use crate::ast::Spanned;
use crate::diag::{Diagnostic, Diagnostics};
use crate::vcode::{Slot, VCode, VRegs};
use spu_isa::disasm::named_regs;
use spu_isa::format::{DebugInfo, GUARD_SLOT, InstrDebug, RegName};
use std::collections::HashMap;

/// What a listing's `.loc` says of the next instruction: added by the assembler or
/// not, and its registers' names in [`named_regs`] order (`-`: none).
pub(super) type Listed = (bool, Option<Vec<String>>);

/// A name a listing writes for a register without one.
pub(crate) const NO_NAME: &str = "-";

impl Assembler<'_> {
    /// A listing's `.loc` attributes: `regs "NAMES"` for a statement's own
    /// instruction, `hidden "NAMES"` for one the assembler added to it.
    pub(super) fn listing_debug(
        &self,
        attrs: &[(Spanned<&str>, &str)],
        diags: &mut Diagnostics,
    ) -> Option<Listed> {
        let mut out = None;
        for (key, value) in attrs {
            let hidden = match key.node {
                "regs" => false,
                "hidden" => true,
                other => {
                    diags.push(
                        Diagnostic::error(
                            format!("unknown `.loc` attribute `{other}`"),
                            key.span.clone(),
                        )
                        .label("expected `regs` or `hidden`")
                        .help("a listing writes `.loc FILE LINE COL, regs \"NAMES\";`"),
                    );
                    continue;
                }
            };
            let names = value.split_whitespace().map(String::from).collect();
            out = Some((hidden, Some(names)));
        }
        out
    }
}

/// The debug information of placed code `words`. `phys`: where the allocator put
/// each virtual register (`None` when the declarations' layout was kept, whose names
/// the declarations give).
pub(super) fn build(code: &VCode, words: &[u64], vregs: &VRegs, phys: Option<&[u8]>) -> DebugInfo {
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut intern = |n: &str| -> u32 {
        if let Some(&i) = index.get(n) {
            return i;
        }
        let i = names.len() as u32;
        names.push(n.to_string());
        index.insert(n.to_string(), i);
        i
    };
    let temps = temp_names(vregs);
    let mut instrs = Vec::with_capacity(words.len());
    let mut any = false;
    for (pc, word) in words.iter().enumerate() {
        let instr = crate::cfg::decode(*word);
        let named = named_regs(&instr);
        let mut regs = Vec::new();
        if let Some(given) = code.given_names(pc) {
            for (r, n) in named.iter().zip(given) {
                if n != NO_NAME {
                    regs.push(RegName {
                        slot: r.slot,
                        reg: r.reg,
                        name: intern(n),
                    });
                }
            }
        } else if let Some(phys) = phys {
            let refs: Vec<_> = code.refs(pc).collect();
            for r in &named {
                let found = refs.iter().find_map(|rr| {
                    let slot = match rr.slot {
                        Slot::Operand(k) | Slot::Base(k) => k as u8,
                        Slot::Guard => GUARD_SLOT,
                        Slot::Shadow(_) => return None,
                    };
                    let v = rr.vreg as usize;
                    let first = *phys.get(v)?;
                    let size = vregs.classes[v].size() as u8;
                    let within = r.reg.wrapping_sub(first);
                    (slot == r.slot && within < size).then_some((v, within, size))
                });
                let Some((v, within, size)) = found else {
                    continue;
                };
                let base = match &vregs.names[v] {
                    Some(n) => n.to_string(),
                    None => temps.get(&v).cloned().unwrap_or_else(|| "tmp".into()),
                };
                let name = part_name(&base, size, within, r.regs);
                regs.push(RegName {
                    slot: r.slot,
                    reg: r.reg,
                    name: intern(&name),
                });
            }
        }
        let hidden = code.hidden(pc);
        any |= hidden || !regs.is_empty();
        instrs.push(InstrDebug { hidden, regs });
    }
    if !any {
        return DebugInfo::default();
    }
    DebugInfo { names, instrs }
}

/// The name of the part of a value of `size` registers, `within` registers in,
/// that an operand of `regs` registers names: the value itself, a pair's `.lo` or
/// `.hi`, or a 4-register group's element `.x` .. `.w`.
fn part_name(base: &str, size: u8, within: u8, regs: u8) -> String {
    match (size, within, regs) {
        (s, 0, r) if r >= s => base.to_string(),
        (2, w, 1) => format!("{base}.{}", if w == 0 { "lo" } else { "hi" }),
        (4, w, r) => format!(
            "{base}.{}",
            ["x", "y", "z", "w"][usize::from(w / r.max(1)) % 4]
        ),
        _ => base.to_string(),
    }
}

/// `tmp0`, `tmp1`, ... for the temporaries in order of creation, with a prefix no
/// declared register starts with (`_tmp0` if the source declares `%tmp<4>`).
fn temp_names(vregs: &VRegs) -> HashMap<usize, String> {
    let declared: Vec<&str> = vregs.names.iter().flatten().map(|n| &**n).collect();
    let mut prefix = String::from("tmp");
    while declared.iter().any(|n| n.starts_with(&prefix)) {
        prefix.insert(0, '_');
    }
    vregs
        .names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.is_none())
        .enumerate()
        .map(|(k, (v, _))| (v, format!("{prefix}{k}")))
        .collect()
}
