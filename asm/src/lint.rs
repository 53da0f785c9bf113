//! Synchronisation warnings found on the control-flow graph, for bugs that would
//! otherwise only show at run time:
//! - a CB read or write on a side the code (SM code, or IU code) never syncs: the
//!   data never changes hands, or a read sees stale data;
//! - `bar.sync` or `bar.blocksync` that only some threads of a block may reach,
//!   because it sits inside a branch on a thread-dependent condition (the threads
//!   that skip it leave the others waiting, or pair their barriers wrongly).
//!
//! Thread-dependence is a may-analysis: a value varies between threads when it is
//! computed from `%tid`, `%laneid`, `%warpid` or `%clock`, from an atomic's old
//! value, from a load at a varying address, or inside a branch on a varying
//! condition (before the branch reconverges). It is solved with one work list, so
//! its time grows with the code, not with the code times its branches.

use crate::cfg::{self, Succ, decode};
use spu_isa::table::{OperandKind, Role};
use spu_isa::{Guard, Instr, MAX_PREDS, MAX_REGS, Opcode, Operand, Special};

/// What the checks found: (instruction, message, label, help, related instruction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub pc: usize,
    pub message: String,
    pub label: String,
    pub help: String,
    /// An instruction to point at as well (the divergent branch), with its label.
    pub related: Option<(usize, String)>,
}

/// Runs both checks on `code` (encoded) with entry points `entries` (SM entry, IU
/// entry); `ipdom` are the immediate post-dominators.
pub fn check(
    code: &[u64],
    succ: &[Succ],
    ipdom: &[Option<usize>],
    entries: &[usize],
) -> Vec<Finding> {
    let mut out = unsynced_cb_sides(code, succ, entries);
    out.extend(divergent_barriers(code, succ, ipdom));
    out.sort_by_key(|f| f.pc);
    out
}

/// CB accesses on a side that the code reachable from the same entry never syncs,
/// with a directional or a global `bar.blocksync`.
fn unsynced_cb_sides(code: &[u64], succ: &[Succ], entries: &[usize]) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for (k, &entry) in entries.iter().enumerate() {
        if entry >= code.len() {
            continue;
        }
        // The first entry is the SMs', the second the IUs'; when both start at
        // the kernel's start, `%is_iu` tells their code apart.
        let reached = if entries.len() == 2 && entries[1] == 0 {
            cfg::reachable_with_calls(code, &cfg::for_unit(code, succ, k == 1), entry)
        } else {
            cfg::reachable_with_calls(code, succ, entry)
        };
        let live = || {
            code.iter()
                .enumerate()
                .filter(|(pc, _)| reached[*pc])
                .map(|(pc, w)| (pc, decode(*w)))
        };
        let mut synced = [false; 4];
        let mut global = false;
        for (_, instr) in live() {
            if instr.opcode == Opcode::BarBlocksync {
                match instr.mods.side {
                    Some(side) => synced[side.code() as usize] = true,
                    None => global = true,
                }
            }
        }
        if global {
            continue;
        }
        let mut warned = [false; 4];
        for (pc, instr) in live() {
            let Some(side) = instr.mods.space.and_then(|s| s.cb_side()) else {
                continue;
            };
            let i = side.code() as usize;
            if synced[i] || warned[i] || out.iter().any(|f| f.pc == pc) {
                continue;
            }
            warned[i] = true;
            let store = instr.opcode == Opcode::St;
            let (verb, other) = if store {
                ("writes", "its consumer never receives it")
            } else {
                ("reads", "it only ever sees what was in the buffer before")
            };
            out.push(Finding {
                pc,
                message: format!(
                    "this code {verb} the {side} CB but never syncs on the {side} link"
                ),
                label: format!("no `bar.blocksync.{side}` or `bar.blocksync` is reachable from here"),
                help: format!(
                    "the link switches only when both ends sync: without `bar.blocksync.{side}` {other}; add it {} this access",
                    if store { "after" } else { "before" }
                ),
                related: None,
            });
        }
    }
    out
}

/// Registers and predicates an instruction reads, and the ones it writes.
fn operands(instr: &Instr) -> (Vec<Operand>, Vec<Operand>) {
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    for (op, (_, kind, _, role)) in instr.operands().iter().zip(instr.opcode.spec().operands()) {
        let op = *op;
        match (role, kind) {
            (Role::Def, _) => defs.push(op),
            (Role::Use, OperandKind::Mem) => {
                if let Operand::Mem { base: Some(r), .. } = op {
                    uses.push(Operand::Reg(r));
                }
            }
            (Role::Use, _) => uses.push(op),
        }
    }
    if let Guard::If(p) | Guard::IfNot(p) = instr.guard {
        uses.push(Operand::Pred(p));
    }
    (uses, defs)
}

/// A set of registers and predicates: bits 0..128 registers, 128..144 predicates.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Set([u64; 3]);

const _: () = assert!(MAX_REGS == 128 && MAX_PREDS <= 64);

impl Set {
    fn slot(op: Operand) -> Option<usize> {
        match op {
            Operand::Reg(r) if u32::from(r) < MAX_REGS => Some(usize::from(r)),
            Operand::Pred(p) if u32::from(p) < MAX_PREDS => Some(128 + usize::from(p)),
            _ => None,
        }
    }

    fn has(&self, op: Operand) -> bool {
        match op {
            Operand::Special(s) => matches!(
                s,
                Special::TidX
                    | Special::TidY
                    | Special::TidZ
                    | Special::LaneId
                    | Special::WarpId
                    | Special::Clock
            ),
            _ => Self::slot(op).is_some_and(|i| self.0[i / 64] >> (i % 64) & 1 == 1),
        }
    }

    fn put(&mut self, op: Operand, on: bool) {
        if let Some(i) = Self::slot(op) {
            let bit = 1u64 << (i % 64);
            if on {
                self.0[i / 64] |= bit;
            } else {
                self.0[i / 64] &= !bit;
            }
        }
    }

    fn union(&mut self, other: &Set) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
}

/// Values that vary between the threads of a block, before each instruction, and
/// the divergent regions: for each instruction, the branch on a varying condition
/// it lies under, if any. Flow-sensitive, because the register allocator reuses
/// registers for unrelated values and SM and IU code share the register file names.
struct Varying {
    before: Vec<Set>,
    under: Vec<Option<usize>>,
}

impl Varying {
    /// Whether the guard of `code[pc]` differs between threads.
    fn guard_varies(&self, pc: usize, instr: &Instr) -> bool {
        matches!(instr.guard, Guard::If(p) | Guard::IfNot(p) if self.before[pc].has(Operand::Pred(p)))
    }

    /// Forward data flow and divergent regions to their joint fixed point, in
    /// rounds: the data flow settles, then the branches that became varying mark
    /// their regions (in code order, so the first branch to reach an instruction
    /// owns it), and the marked instructions flow on in the next round.
    fn analyse(code: &[u64], succ: &[Succ], ipdom: &[Option<usize>]) -> Varying {
        let mut v = Varying {
            before: vec![Set::default(); code.len()],
            under: vec![None; code.len()],
        };
        let atomic =
            |i: &Instr| i.opcode == Opcode::AtomGlobal || i.opcode == Opcode::AtomGlobalCas;
        let mut work: Vec<usize> = (0..code.len()).rev().collect();
        let mut queued = vec![true; code.len()];
        // Branches whose condition varies, not yet marked, in code order.
        let mut pending = std::collections::BTreeSet::new();
        let mut marked = vec![false; code.len()];
        loop {
            // Sets only grow; an instruction is visited again when its input grew.
            while let Some(pc) = work.pop() {
                queued[pc] = false;
                let instr = decode(code[pc]);
                if !marked[pc] && instr.opcode == Opcode::Bra && v.guard_varies(pc, &instr) {
                    pending.insert(pc);
                }
                let (uses, defs) = operands(&instr);
                let mut after = v.before[pc];
                let varying = atomic(&instr)
                    || v.under[pc].is_some()
                    || uses.iter().any(|&u| v.before[pc].has(u));
                // A guarded write may leave the old value: it cannot make a value uniform.
                let guarded = !matches!(instr.guard, Guard::Always);
                for d in defs {
                    if varying || !guarded {
                        after.put(d, varying);
                    }
                }
                for q in succ[pc].iter() {
                    if q >= code.len() {
                        continue;
                    }
                    let mut merged = v.before[q];
                    merged.union(&after);
                    if merged != v.before[q] {
                        v.before[q] = merged;
                        if !queued[q] {
                            queued[q] = true;
                            work.push(q);
                        }
                    }
                }
            }
            if pending.is_empty() {
                return v;
            }
            for pc in std::mem::take(&mut pending) {
                marked[pc] = true;
                // Everything reachable from the branch before it reconverges.
                let stop = ipdom[pc];
                let mut stack: Vec<usize> = succ[pc].iter().collect();
                while let Some(q) = stack.pop() {
                    if q >= code.len() || Some(q) == stop || v.under[q].is_some() {
                        continue;
                    }
                    v.under[q] = Some(pc);
                    if !queued[q] {
                        queued[q] = true;
                        work.push(q);
                    }
                    stack.extend(succ[q].iter());
                }
            }
        }
    }
}

/// `bar.sync` and `bar.blocksync` that only some threads may reach.
fn divergent_barriers(code: &[u64], succ: &[Succ], ipdom: &[Option<usize>]) -> Vec<Finding> {
    // Without barriers there is nothing to find (the opcode is a word's low byte).
    let barriers = [Opcode::BarSync, Opcode::BarBlocksync].map(|o| o.spec().opcode);
    if !code.iter().any(|w| barriers.contains(&(*w as u8))) {
        return Vec::new();
    }
    let v = Varying::analyse(code, succ, ipdom);
    let mut out = Vec::new();
    for (pc, word) in code.iter().enumerate() {
        let instr = &decode(*word);
        let what = if instr.opcode == Opcode::BarSync {
            "bar.sync".to_string()
        } else if instr.opcode == Opcode::BarBlocksync {
            match instr.mods.side {
                Some(side) => format!("bar.blocksync.{side}"),
                None => "bar.blocksync".to_string(),
            }
        } else {
            continue;
        };
        let (label, related) = match (v.guard_varies(pc, instr), v.under[pc]) {
            (true, _) => (
                "guarded by a predicate that differs between threads".to_string(),
                None,
            ),
            (false, Some(branch)) => (
                "inside a branch on a thread-dependent condition".to_string(),
                Some((
                    branch,
                    "this branch depends on the thread, and only reconverges after the barrier"
                        .to_string(),
                )),
            ),
            (false, None) => continue,
        };
        out.push(Finding {
            pc,
            message: format!("`{what}` may be reached by only some threads of the block"),
            label,
            help: "every thread of a block must reach the same barriers: move the barrier after the branch reconverges, or make the condition the same for the whole block".to_string(),
            related,
        });
    }
    out
}
