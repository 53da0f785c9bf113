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
/// instruction cannot reach the exit): Lengauer-Tarjan (with path compression) on
/// the reverse graph, O(m log n), so that no shape of branches (thousands of
/// branches back to one label, crossing branches) takes quadratic time.
pub fn immediate_post_dominators(succ: &[Succ]) -> Vec<Option<usize>> {
    let n = succ.len();
    let exit = n;
    // The reverse graph's successors of v are v's predecessors.
    let (start, preds) = predecessors(succ);
    let preds_of = |v: usize| &preds[start[v] as usize..start[v + 1] as usize];
    // Depth-first preorder from the exit: `num[v]` (NONE when unreached),
    // `vertex[i]`, and each vertex's parent in the search tree.
    let mut num = vec![NONE; n + 1];
    let mut vertex: Vec<u32> = Vec::with_capacity(n + 1);
    let mut parent = vec![NONE; n + 1];
    let mut stack = vec![(exit as u32, NONE)];
    while let Some((v, from)) = stack.pop() {
        if num[v as usize] != NONE {
            continue;
        }
        num[v as usize] = vertex.len() as u32;
        vertex.push(v);
        parent[v as usize] = from;
        for &p in preds_of(v as usize).iter().rev() {
            if num[p as usize] == NONE {
                stack.push((p, v));
            }
        }
    }
    // Semidominators (as preorder numbers), the forest of linked vertices with
    // the vertex of least semidominator on each compressed path.
    let mut semi: Vec<u32> = (0..=n as u32).map(|v| num[v as usize]).collect();
    let mut ancestor = vec![NONE; n + 1];
    let mut label: Vec<u32> = (0..=n as u32).collect();
    let mut idom = vec![NONE; n + 1];
    let mut bucket_head = vec![NONE; n + 1];
    let mut bucket_next = vec![NONE; n + 1];
    let mut path: Vec<u32> = Vec::new();
    let mut eval = |v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32]| -> u32 {
        if ancestor[v as usize] == NONE {
            return v;
        }
        // Compress the path from v to its forest root, nearest the root first.
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != NONE {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(y) = path.pop() {
            let a = ancestor[y as usize];
            if semi[label[a as usize] as usize] < semi[label[y as usize] as usize] {
                label[y as usize] = label[a as usize];
            }
            ancestor[y as usize] = ancestor[a as usize];
        }
        label[v as usize]
    };
    for i in (1..vertex.len()).rev() {
        let w = vertex[i];
        // The reverse graph's predecessors of w are its successors.
        for v in succ[w as usize].iter() {
            if num[v] == NONE {
                continue;
            }
            let u = eval(v as u32, &mut ancestor, &mut label, &semi);
            if semi[u as usize] < semi[w as usize] {
                semi[w as usize] = semi[u as usize];
            }
        }
        let s = vertex[semi[w as usize] as usize];
        bucket_next[w as usize] = bucket_head[s as usize];
        bucket_head[s as usize] = w;
        let p = parent[w as usize];
        ancestor[w as usize] = p;
        let mut v = std::mem::replace(&mut bucket_head[p as usize], NONE);
        while v != NONE {
            let u = eval(v, &mut ancestor, &mut label, &semi);
            idom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                p
            };
            v = bucket_next[v as usize];
        }
    }
    for &w in vertex.iter().skip(1) {
        if idom[w as usize] != vertex[semi[w as usize] as usize] {
            idom[w as usize] = idom[idom[w as usize] as usize];
        }
    }
    idom.truncate(n);
    idom.into_iter()
        .map(|d| (d != NONE && d as usize != exit).then_some(d as usize))
        .collect()
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

    /// Post-dominators by their definition: d post-dominates v when every path
    /// from v to the exit passes d (v cannot reach the exit once d is removed);
    /// the immediate one is the post-dominator nearest v, the one all others
    /// post-dominate.
    fn by_definition(succ: &[Succ]) -> Vec<Option<usize>> {
        let n = succ.len();
        let reaches_exit = |without: usize| {
            // Nodes that reach the exit avoiding `without`, walking backwards.
            let (start, preds) = predecessors(succ);
            let mut seen = vec![false; n + 1];
            let mut stack = vec![n];
            seen[n] = true;
            while let Some(v) = stack.pop() {
                for &p in &preds[start[v] as usize..start[v + 1] as usize] {
                    if p as usize != without && !seen[p as usize] {
                        seen[p as usize] = true;
                        stack.push(p as usize);
                    }
                }
            }
            seen
        };
        let all = reaches_exit(usize::MAX);
        let without: Vec<Vec<bool>> = (0..n).map(reaches_exit).collect();
        (0..n)
            .map(|v| {
                if !all[v] {
                    return None;
                }
                let pdoms: Vec<usize> = (0..n).filter(|&d| d != v && !without[d][v]).collect();
                pdoms
                    .iter()
                    .copied()
                    .find(|&d| pdoms.iter().all(|&o| o == d || !without[o][d]))
            })
            .collect()
    }

    #[test]
    fn post_dominators_match_their_definition_on_random_graphs() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m) as usize
        };
        for _ in 0..400 {
            let n = 1 + next(24);
            let succ: Vec<Succ> = (0..n)
                .map(|pc| match next(5) {
                    0 => Succ::of(&[n]),
                    1 => Succ::of(&[next(n as u64 + 1)]),
                    2 | 3 => Succ::of(&[next(n as u64 + 1), pc + 1]),
                    _ => Succ::of(&[pc + 1]),
                })
                .collect();
            assert_eq!(
                immediate_post_dominators(&succ),
                by_definition(&succ),
                "{succ:?}"
            );
        }
    }

    #[test]
    fn many_branches_back_to_one_label_reconverge_at_their_next_instruction() {
        // 0..2n: pairs of `add; @p bra 0`, then exit.
        let n = 200_000;
        let mut succ = Vec::with_capacity(2 * n + 1);
        for i in 0..n {
            succ.push(Succ::of(&[2 * i + 1]));
            succ.push(Succ::of(&[0, 2 * i + 2]));
        }
        succ.push(Succ::of(&[2 * n + 1]));
        let ipdom = immediate_post_dominators(&succ);
        assert_eq!(ipdom[1], Some(2));
        assert_eq!(ipdom[2 * n - 1], Some(2 * n));
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
