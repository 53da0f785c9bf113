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

/// A register slot (as [`crate::exec::ops::Reg`]).
type Reg = u16;

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

/// Where control goes after an instruction, as the loop graph needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flow {
    /// To the next instruction.
    #[default]
    Next,
    /// To `target` (and to the next instruction if `conditional`); divergent
    /// paths meet at `reconv`.
    Branch {
        target: u32,
        reconv: Option<u32>,
        conditional: bool,
    },
    /// Into the function at `target`, and back after it.
    Call { target: u32 },
    /// Back after a call (or, `conditional`, on to the next instruction).
    Return { conditional: bool },
    /// Out of the thread (or, `conditional`, on to the next instruction).
    Exit { conditional: bool },
}

/// What the analysis needs of one instruction: the general registers it reads
/// (operands and address base) and writes, pairs and groups whole; whether it
/// reads `%clock`; whether it is a register operation that writes nothing but
/// its general registers (no predicate, no memory); where control goes next.
#[derive(Debug, Clone, Default)]
pub struct Touches {
    pub reads: Vec<Reg>,
    pub writes: Vec<Reg>,
    pub clock: bool,
    pub registers_only: bool,
    pub flow: Flow,
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

    /// Finds them for code whose instructions `touches` describes, cut into
    /// basic blocks at `block_starts` (the first instruction of each, then the
    /// end; `block_of` maps an instruction to its block).
    pub fn find(touches: &[Touches], block_of: &[u32], block_starts: &[u32]) -> Counting {
        let blocks = block_starts.len().saturating_sub(1);
        let succ = successors(touches, block_of, block_starts);
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
            let set = counting_in(touches, pcs, &mut feeds);
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

/// The counting registers of a loop whose instructions are `pcs`; `feeds` is
/// scratch (every entry empty on entry and on return).
fn counting_in(
    touches: &[Touches],
    pcs: impl Iterator<Item = usize> + Clone,
    feeds: &mut [RegBits],
) -> RegBits {
    let mut pinned = RegBits::default();
    let mut written = RegBits::default();
    for pc in pcs.clone() {
        let t = &touches[pc];
        // Its only effect: to write the general registers it names from the
        // registers it reads.
        if t.registers_only && !t.clock {
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
fn successors(touches: &[Touches], block_of: &[u32], block_starts: &[u32]) -> Vec<Vec<usize>> {
    let blocks = block_starts.len().saturating_sub(1);
    let block = |pc: u32| block_of.get(pc as usize).map(|&b| b as usize);
    let returns: Vec<usize> = touches
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t.flow, Flow::Call { .. }))
        .filter_map(|(pc, _)| block(pc as u32 + 1))
        .collect();
    let through_return = blocks;
    let mut succ: Vec<Vec<usize>> = (0..blocks)
        .map(|b| {
            let last = block_starts[b + 1] as usize - 1;
            let next = block(last as u32 + 1);
            let mut out: Vec<usize> = match touches[last].flow {
                Flow::Branch {
                    target,
                    reconv,
                    conditional,
                } => {
                    let jumps = [block(target), reconv.and_then(block)];
                    let falls = next.filter(|_| conditional);
                    jumps.into_iter().chain([falls]).flatten().collect()
                }
                Flow::Call { target } => [block(target), next].into_iter().flatten().collect(),
                Flow::Return { conditional } => {
                    [Some(through_return), next.filter(|_| conditional)]
                        .into_iter()
                        .flatten()
                        .collect()
                }
                Flow::Exit { conditional } => next.filter(|_| conditional).into_iter().collect(),
                Flow::Next => next.into_iter().collect(),
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

    /// Every return reaches every return point through one node: the graph of
    /// 3 000 calls and 3 000 returns has a few edges per block, not millions.
    #[test]
    fn many_calls_and_returns_keep_the_graph_linear() {
        let n = 3000u32;
        // n calls of the function at n + 1, an exit, the function's body of n
        // conditional returns and one return; one block per instruction.
        let mut code = vec![Flow::Call { target: n + 1 }; n as usize];
        code.push(Flow::Exit { conditional: false });
        code.extend(vec![Flow::Return { conditional: true }; n as usize]);
        code.push(Flow::Return { conditional: false });
        let touches: Vec<Touches> = code
            .into_iter()
            .map(|flow| Touches {
                flow,
                ..Touches::default()
            })
            .collect();
        let len = touches.len() as u32;
        let block_of: Vec<u32> = (0..len).collect();
        let block_starts: Vec<u32> = (0..=len).collect();
        let succ = successors(&touches, &block_of, &block_starts);
        let edges: usize = succ.iter().map(Vec::len).sum();
        assert!(edges < 4 * succ.len(), "{edges} edges for {len} blocks");
        // The calls, the function and the return node make one loop.
        let parts = strongly_connected(&succ);
        assert!(
            parts.iter().any(|p| p.len() > 2 * n as usize),
            "{}",
            parts.len()
        );
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
