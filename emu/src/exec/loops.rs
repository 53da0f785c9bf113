//! The registers a loop only counts with: for each loop of the code (a strongly
//! connected part of its control-flow graph of basic blocks), the general
//! registers whose values cannot reach the loop's branches, addresses, memory or
//! predicates, nor any register that does. `while (*flag == 0) tries++;` keeps
//! `tries` in such a register: it changes on every turn, yet the turns repeat
//! forever all the same while the flag stays 0.
//!
//! The repeat proof ([`crate::timing`]'s grid) leaves these registers out of a
//! warp's digest while the warp is inside the loop. That is exact: a path from
//! an instruction back to itself never leaves its strongly connected part, and
//! inside it a counting register only ever feeds other counting registers
//! through register operations (which write nothing but their destination and
//! cannot fault), so the warp's next turns follow from the rest of its state
//! alone.
//!
//! A register is *pinned* (not counting) when an instruction of the loop other
//! than a register operation that writes only general registers touches it
//! (loads, stores, branches, calls, atomics; `setp` and the other operations
//! that write a predicate; anything reading `%clock`), or when a register
//! operation reads it to write a pinned register. Counting registers are the
//! ones the loop's register operations write that are not pinned.

use crate::exec::ops::{NO_PC, Op, Reg, Run};
use spu_isa::Guard;

/// Words of a [`RegBits`]: general registers are numbered below 256, and a
/// group of up to four starts at any of them.
const WORDS: usize = 5;

/// A set of general registers, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegBits([u64; WORDS]);

impl RegBits {
    /// True when register slot `slot` is in the set.
    #[inline]
    pub fn contains(&self, slot: usize) -> bool {
        self.0
            .get(slot / 64)
            .is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    fn insert(&mut self, slot: Reg) {
        if let Some(w) = self.0.get_mut(usize::from(slot) / 64) {
            *w |= 1 << (slot % 64);
        }
    }

    fn union(&mut self, other: &RegBits) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    fn minus(mut self, other: &RegBits) -> RegBits {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
        self
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..WORDS * 64).filter(|&s| self.contains(s))
    }
}

/// The general registers an instruction reads (operands and address base) and
/// writes, pairs and groups whole.
#[derive(Debug, Clone, Default)]
pub struct Touches {
    pub reads: Vec<Reg>,
    pub writes: Vec<Reg>,
    /// The instruction reads `%clock`.
    pub clock: bool,
}

/// The counting registers of every basic block's loop.
#[derive(Debug, Clone, Default)]
pub struct Counting {
    /// Per basic block: its loop's entry in `sets` (0: none).
    of_block: Vec<u32>,
    /// Sets of counting registers; the first is empty.
    sets: Vec<RegBits>,
}

impl Counting {
    /// The counting registers of the loop that basic block `block` is in, if
    /// it is in one that has any.
    pub fn of(&self, block: usize) -> Option<&RegBits> {
        match self.of_block.get(block).copied().unwrap_or(0) {
            0 => None,
            i => self.sets.get(i as usize),
        }
    }

    /// Finds them for code `ops` cut into blocks at `block_starts` (the first
    /// instruction of each, then the end), `touches` giving each instruction's
    /// registers.
    pub fn find(
        ops: &[Op],
        touches: &[Touches],
        block_of: &[u32],
        block_starts: &[u32],
    ) -> Counting {
        let blocks = block_starts.len().saturating_sub(1);
        let succ = successors(ops, block_of, block_starts);
        let mut counting = Counting {
            of_block: vec![0; blocks],
            sets: vec![RegBits::default()],
        };
        let mut feeds = vec![RegBits::default(); WORDS * 64];
        for mut part in strongly_connected(&succ) {
            let is_loop = part.len() > 1 || succ[part[0]].contains(&part[0]);
            // The node every return goes through holds no code.
            part.retain(|&b| b < blocks);
            if !is_loop || part.is_empty() {
                continue;
            }
            let pcs = part
                .iter()
                .flat_map(|&b| block_starts[b] as usize..block_starts[b + 1] as usize);
            let set = counting_in(ops, touches, pcs, &mut feeds);
            if !set.is_empty() {
                for &b in &part {
                    counting.of_block[b] = counting.sets.len() as u32;
                }
                counting.sets.push(set);
            }
        }
        counting
    }
}

/// True for an instruction whose only effect is to write the general registers
/// it names from the registers it reads.
fn only_counts(op: &Op, t: &Touches) -> bool {
    matches!(op.run, Run::Lanes(_)) && op.pd.is_none() && !t.clock
}

/// The counting registers of a loop whose instructions are `pcs`; `feeds` is
/// scratch (every entry empty on entry and on return).
fn counting_in(
    ops: &[Op],
    touches: &[Touches],
    pcs: impl Iterator<Item = usize> + Clone,
    feeds: &mut [RegBits],
) -> RegBits {
    let mut pinned = RegBits::default();
    let mut written = RegBits::default();
    for pc in pcs.clone() {
        let t = &touches[pc];
        if only_counts(&ops[pc], t) {
            let mut reads = RegBits::default();
            t.reads.iter().for_each(|&r| reads.insert(r));
            for &w in &t.writes {
                written.insert(w);
                if let Some(f) = feeds.get_mut(usize::from(w)) {
                    f.union(&reads);
                }
            }
        } else {
            t.reads
                .iter()
                .chain(&t.writes)
                .for_each(|&r| pinned.insert(r));
        }
    }
    // Whatever feeds a pinned register is pinned.
    let mut todo: Vec<usize> = pinned.iter().collect();
    while let Some(r) = todo.pop() {
        let more = feeds[r].minus(&pinned);
        pinned.union(&more);
        todo.extend(more.iter());
    }
    for pc in pcs {
        for &w in &touches[pc].writes {
            if let Some(f) = feeds.get_mut(usize::from(w)) {
                *f = RegBits::default();
            }
        }
    }
    written.minus(&pinned)
}

/// Each basic block's successors: the block after it unless it ends in an
/// unconditional branch, exit or return; a branch's or call's target; for a
/// return, one more node (numbered after the blocks, holding no code) whose
/// successors are every return point, so the graph stays as large as the code
/// however many calls and returns it has.
fn successors(ops: &[Op], block_of: &[u32], block_starts: &[u32]) -> Vec<Vec<usize>> {
    let blocks = block_starts.len().saturating_sub(1);
    let block = |pc: u32| block_of.get(pc as usize).map(|&b| b as usize);
    let returns: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.run, Run::Call { .. }))
        .filter_map(|(pc, _)| block(pc as u32 + 1))
        .collect();
    let through_return = blocks;
    let mut succ: Vec<Vec<usize>> = (0..blocks)
        .map(|b| {
            let last = block_starts[b + 1] as usize - 1;
            let op = &ops[last];
            let next = block(last as u32 + 1);
            let conditional = op.guard != Guard::Always;
            let mut out: Vec<usize> = match op.run {
                Run::Bra { target, reconv } => {
                    let jumps = [block(target), block(reconv).filter(|_| reconv != NO_PC)];
                    let falls = next.filter(|_| conditional);
                    jumps.into_iter().chain([falls]).flatten().collect()
                }
                Run::Call { target, .. } => [block(target), next].into_iter().flatten().collect(),
                Run::Ret => [Some(through_return), next.filter(|_| conditional)]
                    .into_iter()
                    .flatten()
                    .collect(),
                Run::Exit => next.filter(|_| conditional).into_iter().collect(),
                _ => next.into_iter().collect(),
            };
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let mut returns = returns;
    returns.sort_unstable();
    returns.dedup();
    succ.push(returns);
    succ
}

/// The strongly connected parts of a graph given by successor lists (Tarjan's
/// algorithm, iterative: code of any length runs in bounded stack).
fn strongly_connected(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = succ.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut parts = Vec::new();
    let mut next_index = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, next successor to look at)
        let mut calls = vec![(root, 0usize)];
        while let Some(top) = calls.last_mut() {
            let (v, i) = (top.0, &mut top.1);
            if *i == 0 {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == UNSEEN {
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut part = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    part.push(w);
                    if w == v {
                        break;
                    }
                }
                parts.push(part);
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::decode::tests::program;

    /// The general registers counting in the loop of the block with the
    /// instruction at `pc`.
    fn counting_at(p: &crate::exec::ops::Program, pc: usize) -> Vec<usize> {
        let block = p.block_of[pc] as usize;
        p.counting
            .of(block)
            .map(|c| {
                c.iter()
                    .filter(|&s| s < usize::from(p.layout.general))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `tries++` and a second count fed by it are counting; the flag's address
    /// and value are not; outside the loop nothing is.
    #[test]
    fn a_wait_that_counts_its_tries_counts_in_two_registers() {
        let p = program("tests/faults/flag_spin_tries.spu");
        // mov, mov, mov, then the loop: add, mad, ld, setp, bra (the
        // assembler may renumber registers: the add's and the mad's).
        let mut counts = vec![usize::from(p.ops[3].d), usize::from(p.ops[4].d)];
        counts.sort_unstable();
        assert_eq!(counting_at(&p, 3), counts);
        assert_eq!(counting_at(&p, 7), counts);
        assert!(counting_at(&p, 0).is_empty());
        assert!(counting_at(&p, 8).is_empty());
    }

    /// A count that decides when the loop ends, and one feeding a register that
    /// decides it, are not counting.
    #[test]
    fn a_count_the_loop_compares_is_not_counting() {
        let p = program("tests/faults/flag_spin_counting.spu");
        assert!((0..p.len()).all(|pc| counting_at(&p, pc).is_empty()));
        // Block 0 counts to 200 000; the others count their tries.
        let p = program("tests/waits/late_flag.spu");
        let loops: Vec<usize> = (0..p.len())
            .filter_map(|pc| match p.ops[pc].run {
                Run::Bra { target, .. } if (target as usize) < pc => Some(target as usize),
                _ => None,
            })
            .collect();
        assert_eq!(loops.len(), 2);
        assert!(counting_at(&p, loops[0]).is_empty());
        // Its first instruction is the count's add.
        assert_eq!(
            counting_at(&p, loops[1]),
            vec![usize::from(p.ops[loops[1]].d)]
        );
    }

    /// Every return reaches every return point through one node: the graph of
    /// 3 000 calls and 3 000 returns has a few edges per block, not millions.
    #[test]
    fn many_calls_and_returns_keep_the_graph_linear() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3000;
        let mut src = String::from(
            ".launch grid(1) block(32);\n.entry k {\n    .reg .u32 %r<2>;\n    .reg .pred %p<2>;\n    mov.u32 %r0, 0;\n    setp.ne.u32 %p1, %r0, 0;\n",
        );
        src += &"    call.uni F, 1;\n".repeat(n);
        src += "    exit;\nF:\n    add.u32 %r0, %r0, 1;\n";
        src += &"    @%p1 ret;\n".repeat(n);
        src += "    ret;\n}\n";
        let path = dir.path().join("calls.spu");
        std::fs::write(&path, src).unwrap();
        let kernel = crate::read_kernel(&path).expect("the kernel assembles");
        let machine = crate::machine::preset("spu-4x4").unwrap();
        let p = crate::load(kernel.module, &machine, &Default::default())
            .unwrap()
            .program;
        let succ = successors(&p.ops, &p.block_of, &p.block_starts);
        let blocks = p.block_starts.len() - 1;
        assert!(blocks > 2 * n);
        let edges: usize = succ.iter().map(Vec::len).sum();
        assert!(edges < 4 * succ.len(), "{edges} edges for {blocks} blocks");
    }

    #[test]
    fn strongly_connected_parts_of_small_graphs() {
        let sorted = |mut parts: Vec<Vec<usize>>| {
            parts.iter_mut().for_each(|p| p.sort_unstable());
            parts.sort();
            parts
        };
        // 0 -> 1 -> 2 -> 1, 2 -> 3 -> 3, 4 alone.
        let succ = vec![vec![1], vec![2], vec![1, 3], vec![3], vec![]];
        assert_eq!(
            sorted(strongly_connected(&succ)),
            vec![vec![0], vec![1, 2], vec![3], vec![4]]
        );
        // A ring of 200 000 blocks is one part, found without deep recursion.
        let n = 200_000;
        let ring: Vec<Vec<usize>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
        let parts = strongly_connected(&ring);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].len(), n);
    }
}
