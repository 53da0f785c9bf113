//! Control flow of a kernel: successor lists, immediate post-dominators (the SIMT
//! reconvergence point of each divergent branch) and reachability from the SM and
//! IU entry points. Everything is a flat array of 32-bit indices, so a kernel of
//! millions of instructions costs a few bytes per instruction.

use spu_isa::table::Flow;
use spu_isa::{Guard, Instr, Operand};

/// The successors of one instruction: at most two (a guarded branch or exit);
/// `len` (the code's length) stands for "the thread has exited".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Succ([u32; 2]);

const NONE: u32 = u32::MAX;

impl Succ {
    /// Successors from a list of at most two.
    pub fn of(list: &[usize]) -> Succ {
        let mut s = [NONE; 2];
        for (slot, &v) in s.iter_mut().zip(list) {
            *slot = v as u32;
        }
        Succ(s)
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().filter(|&&v| v != NONE).map(|&v| v as usize)
    }

    pub fn contains(&self, pc: usize) -> bool {
        self.iter().any(|s| s == pc)
    }
}

/// The instruction in a word the assembler encoded itself.
pub fn decode(word: u64) -> Instr {
    Instr::decode(word).expect("the assembler's own words decode")
}

/// The successors of `instr` at `pc` in code of `len` instructions (its row's flow).
pub fn successor(pc: usize, instr: &Instr, len: usize) -> Succ {
    let exit = len;
    let next = pc + 1; // == exit past the last instruction
    let guarded = instr.guard != Guard::Always;
    match instr.opcode.spec().flow {
        Flow::Branch => {
            let target = match instr.operands().first() {
                Some(Operand::Target(t)) => *t as usize,
                _ => next,
            };
            if guarded {
                Succ::of(&[target, next])
            } else {
                Succ::of(&[target])
            }
        }
        Flow::Exit if guarded => Succ::of(&[exit, next]),
        Flow::Exit => Succ::of(&[exit]),
        _ => Succ::of(&[next]),
    }
}

/// Predecessors of every node `0..=n` (`n` is the exit) as one flat list: those of
/// node `v` are `list[start[v]..start[v + 1]]`.
pub fn predecessors(succ: &[Succ]) -> (Vec<u32>, Vec<u32>) {
    let n = succ.len();
    let mut start = vec![0u32; n + 2];
    for ss in succ {
        for s in ss.iter() {
            start[s + 1] += 1;
        }
    }
    for v in 0..=n {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut list = vec![0u32; start[n + 1] as usize];
    for (pc, ss) in succ.iter().enumerate() {
        for s in ss.iter() {
            list[fill[s] as usize] = pc as u32;
            fill[s] += 1;
        }
    }
    (start, list)
}

/// Immediate post-dominator of every instruction (`None` when it is the exit or the
/// instruction cannot reach the exit). Cooper-Harvey-Kennedy on the reverse graph.
pub fn immediate_post_dominators(succ: &[Succ]) -> Vec<Option<usize>> {
    let n = succ.len();
    let exit = n;
    // Reverse-graph DFS postorder starting from the exit node.
    let (start, preds) = predecessors(succ);
    let preds_of = |v: usize| &preds[start[v] as usize..start[v + 1] as usize];
    let mut order: Vec<u32> = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let mut stack = vec![(exit as u32, 0u32)];
    seen[exit] = true;
    while let Some((node, i)) = stack.pop() {
        let ps = preds_of(node as usize);
        if (i as usize) < ps.len() {
            stack.push((node, i + 1));
            let next = ps[i as usize];
            if !seen[next as usize] {
                seen[next as usize] = true;
                stack.push((next, 0));
            }
        } else {
            order.push(node);
        }
    }
    drop(seen);
    let mut rank = vec![u32::MAX; n + 1];
    for (i, node) in order.iter().enumerate() {
        rank[*node as usize] = i as u32;
    }
    let mut ipdom: Vec<u32> = vec![NONE; n + 1];
    ipdom[exit] = exit as u32;
    let mut changed = true;
    while changed {
        changed = false;
        for &node in order.iter().rev().filter(|x| **x as usize != exit) {
            let mut new = NONE;
            for s in succ[node as usize].iter() {
                if ipdom[s] == NONE {
                    continue;
                }
                new = match new {
                    NONE => s as u32,
                    cur => intersect(cur, s as u32, &ipdom, &rank),
                };
            }
            if new != NONE && ipdom[node as usize] != new {
                ipdom[node as usize] = new;
                changed = true;
            }
        }
    }
    ipdom.truncate(n);
    ipdom
        .into_iter()
        .map(|d| (d != NONE && d as usize != exit).then_some(d as usize))
        .collect()
}

fn intersect(mut a: u32, mut b: u32, ipdom: &[u32], rank: &[u32]) -> u32 {
    let exit = (ipdom.len() - 1) as u32;
    let up = |x: u32| match ipdom[x as usize] {
        NONE => exit,
        d => d,
    };
    while a != b {
        while rank[a as usize] < rank[b as usize] {
            a = up(a);
        }
        while rank[b as usize] < rank[a as usize] {
            b = up(b);
        }
    }
    a
}

/// `succ` as one kind of unit sees it: a guarded branch on `%is_iu` (`mov.u32 %r,
/// %is_iu; setp.eq.s32 %p, %r, 0; @%p bra`, in one straight run of code, as CUDA C's
/// `if (spu_is_iu())` compiles) goes one way only, so the code each kind of unit
/// runs is told apart when SMs and IUs share an entry.
pub fn for_unit(code: &[u64], succ: &[Succ], is_iu: bool) -> Vec<Succ> {
    let (start, list) = predecessors(succ);
    // The only way into `pc` is from `pc - 1`.
    let straight = |pc: usize| {
        let p = &list[start[pc] as usize..start[pc + 1] as usize];
        pc > 0 && p == [pc as u32 - 1]
    };
    let mut out = succ.to_vec();
    for (pc, word) in code.iter().enumerate() {
        let instr = decode(*word);
        let (Guard::If(p) | Guard::IfNot(p)) = instr.guard else {
            continue;
        };
        if instr.opcode.spec().flow != Flow::Branch {
            continue;
        }
        if let Some(holds) = known_predicate(code, pc, p, is_iu, &straight) {
            let taken = holds == matches!(instr.guard, Guard::If(_));
            let target = succ[pc].iter().next().unwrap_or(pc + 1);
            out[pc] = Succ::of(&[if taken { target } else { pc + 1 }]);
        }
    }
    out
}

/// The value of predicate `p` at `pc` if it is `setp.eq`/`setp.ne` of a copy of
/// `%is_iu` with an immediate, all in the straight run of code before `pc`.
fn known_predicate(
    code: &[u64],
    pc: usize,
    p: u8,
    is_iu: bool,
    straight: &impl Fn(usize) -> bool,
) -> Option<bool> {
    const WINDOW: usize = 16;
    let mut at = pc;
    let mut setp: Option<(u8, u32, bool)> = None;
    for _ in 0..WINDOW {
        if !straight(at) {
            return None;
        }
        at -= 1;
        let instr = decode(code[at]);
        let ops = instr.operands();
        match setp {
            None => {
                if !writes(&instr, Operand::Pred(p)) {
                    continue;
                }
                let (Some(cmp), [Operand::Pred(_), Operand::Reg(r), Operand::Imm16(v)]) =
                    (instr.mods.cmp, ops)
                else {
                    return None;
                };
                let eq = match cmp {
                    spu_isa::Cmp::Eq => true,
                    spu_isa::Cmp::Ne => false,
                    _ => return None,
                };
                setp = Some((*r, u32::from(*v), eq));
            }
            Some((r, v, eq)) => {
                if !writes(&instr, Operand::Reg(r)) {
                    continue;
                }
                return match ops {
                    [_, Operand::Special(spu_isa::Special::IsIu)]
                        if instr.opcode == spu_isa::Opcode::Mov =>
                    {
                        Some((v == u32::from(is_iu)) == eq)
                    }
                    _ => None,
                };
            }
        }
    }
    None
}

/// Whether `instr` may write `what` (a register of a 64-bit or vector destination
/// counts as written when it is within four of the first).
fn writes(instr: &Instr, what: Operand) -> bool {
    instr
        .operands()
        .iter()
        .zip(instr.opcode.spec().operands())
        .filter(|(_, (_, _, _, role))| *role == spu_isa::table::Role::Def)
        .any(|(op, _)| match (*op, what) {
            (Operand::Pred(a), Operand::Pred(b)) => a == b,
            (Operand::Reg(a), Operand::Reg(b)) => a <= b && b < a.saturating_add(4),
            _ => false,
        })
}

/// Instructions reachable from `entry`, the code of the device functions its calls
/// run included.
pub fn reachable_with_calls(code: &[u64], succ: &[Succ], entry: usize) -> Vec<bool> {
    walk_reachable(succ, entry, |pc| {
        let instr = decode(*code.get(pc)?);
        match (instr.opcode.spec().flow, instr.operands().first()) {
            (Flow::Call, Some(Operand::Target(t))) => Some(*t as usize),
            _ => None,
        }
    })
}

fn walk_reachable(succ: &[Succ], entry: usize, call: impl Fn(usize) -> Option<usize>) -> Vec<bool> {
    let mut seen = vec![false; succ.len()];
    let mut stack = vec![entry];
    while let Some(pc) = stack.pop() {
        if pc >= succ.len() || seen[pc] {
            continue;
        }
        seen[pc] = true;
        stack.extend(succ[pc].iter());
        stack.extend(call(pc));
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn succs(lists: &[&[usize]]) -> Vec<Succ> {
        lists.iter().map(|l| Succ::of(l)).collect()
    }

    #[test]
    fn if_then_else_reconverges_at_the_join() {
        // 0: @p bra 3; 1: a; 2: bra 4; 3: b; 4: join; 5: exit
        let succ = succs(&[&[3, 1], &[2], &[4], &[4], &[5], &[6]]);
        let ipdom = immediate_post_dominators(&succ);
        assert_eq!(ipdom[0], Some(4));
        assert_eq!(ipdom[1], Some(2));
        assert_eq!(ipdom[5], None);
    }

    #[test]
    fn loop_back_edge_reconverges_after_the_loop() {
        // 0: body; 1: @p bra 0; 2: exit
        let succ = succs(&[&[1], &[0, 2], &[3]]);
        assert_eq!(immediate_post_dominators(&succ)[1], Some(2));
    }

    #[test]
    fn guarded_exit_reconverges_at_exit() {
        // 0: @p exit; 1: x; 2: exit
        let succ = succs(&[&[3, 1], &[2], &[3]]);
        let ipdom = immediate_post_dominators(&succ);
        assert_eq!(ipdom[0], None);
    }

    #[test]
    fn reachability_follows_calls_into_functions() {
        use spu_isa::{Mods, Opcode};
        let at = |op, ops: &[Operand]| {
            Instr::new(op, Guard::Always, Mods::default(), ops)
                .unwrap()
                .encode()
                .unwrap()
        };
        let code = [
            at(Opcode::Call, &[Operand::Target(2), Operand::Imm(0)]),
            at(Opcode::Exit, &[]),
            at(Opcode::Ret, &[]),
        ];
        let succ: Vec<Succ> = code
            .iter()
            .enumerate()
            .map(|(pc, w)| successor(pc, &decode(*w), code.len()))
            .collect();
        assert_eq!(walk_reachable(&succ, 0, |_| None), [true, true, false]);
        assert_eq!(reachable_with_calls(&code, &succ, 0), [true, true, true]);
    }

    #[test]
    fn predecessors_are_grouped_by_node() {
        let succ = succs(&[&[2, 1], &[2], &[3]]);
        let (start, list) = predecessors(&succ);
        let of = |v: usize| list[start[v] as usize..start[v + 1] as usize].to_vec();
        assert_eq!(
            (of(0), of(1), of(2), of(3)),
            (vec![], vec![0], vec![0, 1], vec![2])
        );
    }
}
