//! How many bytes of local memory one thread of a kernel can reach, read from its
//! code: the end of the farthest constant `.local` access of each function, plus
//! the frames of the calls that lead there. Recursion and register-based local
//! addresses have no static bound; the figure is then a lower bound with the reason.

use spu_isa::{Guard, Instr, Opcode, Operand, Space};
use std::collections::HashMap;

/// Why the local memory of a thread has no static bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unbounded {
    /// A function calls itself, directly or through others.
    Recursion,
    /// A `.local` access takes its address from a register.
    ComputedAddress,
}

impl Unbounded {
    pub fn words(self) -> &'static str {
        match self {
            Unbounded::Recursion => "recursive calls",
            Unbounded::ComputedAddress => "addresses computed at run time",
        }
    }
}

/// Local memory of one thread: the bytes the code reaches, and why that is only a
/// lower bound, if it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalUse {
    pub bytes: u32,
    pub unbounded: Option<Unbounded>,
}

impl LocalUse {
    fn join(self, other: LocalUse) -> LocalUse {
        LocalUse {
            bytes: self.bytes.max(other.bytes),
            unbounded: self.unbounded.or(other.unbounded),
        }
    }
}

/// The local memory threads starting at each of `entries` reach in `code`.
pub fn local_use(code: &[u64], entries: &[u32]) -> LocalUse {
    let instrs: Vec<Option<Instr>> = code.iter().map(|w| Instr::decode(*w).ok()).collect();
    let mut memo = HashMap::new();
    let mut stack = Vec::new();
    entries.iter().fold(LocalUse::default(), |acc, &e| {
        acc.join(function_use(&instrs, e, &mut memo, &mut stack))
    })
}

/// The local memory the function at `start` reaches, relative to its frame.
fn function_use(
    instrs: &[Option<Instr>],
    start: u32,
    memo: &mut HashMap<u32, LocalUse>,
    stack: &mut Vec<u32>,
) -> LocalUse {
    if let Some(u) = memo.get(&start) {
        return *u;
    }
    if stack.contains(&start) {
        return LocalUse {
            bytes: 0,
            unbounded: Some(Unbounded::Recursion),
        };
    }
    stack.push(start);
    let mut usage = LocalUse::default();
    let mut seen = vec![false; instrs.len()];
    let mut work = vec![start];
    while let Some(pc) = work.pop() {
        let Some(slot) = seen.get_mut(pc as usize) else {
            continue;
        };
        if std::mem::replace(slot, true) {
            continue;
        }
        let Some(i) = instrs[pc as usize] else {
            continue;
        };
        let mut falls_through = true;
        match i.opcode {
            Opcode::Ret | Opcode::Exit => falls_through = i.guard != Guard::Always,
            Opcode::Bra => {
                if let Some(Operand::Target(t)) = i.operands().first() {
                    work.push(*t);
                }
                falls_through = i.guard != Guard::Always;
            }
            Opcode::Call => {
                if let [Operand::Target(t), Operand::Imm(frame), ..] = i.operands() {
                    let callee = function_use(instrs, *t, memo, stack);
                    usage = usage.join(LocalUse {
                        bytes: callee.bytes.saturating_add(frame.saturating_mul(16)),
                        unbounded: callee.unbounded,
                    });
                }
            }
            _ if i.mods.space == Some(Space::Local) => {
                for op in i.operands() {
                    if let Operand::Mem { base, offset, .. } = op {
                        if base.is_some() {
                            usage.unbounded = usage.unbounded.or(Some(Unbounded::ComputedAddress));
                        }
                        let elem = i.mods.ty.map_or(4, |t| t.bits() / 8).max(1);
                        let count = i.mods.vec.map_or(1, |v| u32::from(v.count()));
                        let end = i64::from(*offset) + i64::from(elem * count);
                        usage.bytes = usage.bytes.max(end.clamp(0, i64::from(u32::MAX)) as u32);
                    }
                }
            }
            _ => {}
        }
        if falls_through {
            work.push(pc + 1);
        }
    }
    stack.pop();
    memo.insert(start, usage);
    usage
}
