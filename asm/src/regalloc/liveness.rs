//! Liveness for the allocator: basic blocks, the values live into each block
//! (sparse sorted sets solved to the fixed point over the blocks), and the values
//! live at each instruction, recomputed a block at a time by stepping backwards
//! through it ([`Live`]).

use super::{Class, Code, Failure, region};

/// A set of virtual registers with constant-time insert and remove, and iteration
/// over its members (Briggs and Torczon's sparse set).
pub(super) struct SparseSet {
    /// Position + 1 of each value in `members`, 0 when absent.
    at: Vec<u32>,
    pub(super) members: Vec<u32>,
}

impl SparseSet {
    pub(super) fn new(n: usize) -> SparseSet {
        SparseSet {
            at: vec![0; n],
            members: Vec::new(),
        }
    }

    pub(super) fn contains(&self, v: u32) -> bool {
        self.at[v as usize] != 0
    }

    pub(super) fn insert(&mut self, v: u32) -> bool {
        if self.contains(v) {
            return false;
        }
        self.members.push(v);
        self.at[v as usize] = self.members.len() as u32;
        true
    }

    fn remove(&mut self, v: u32) -> bool {
        let p = self.at[v as usize];
        if p == 0 {
            return false;
        }
        self.at[v as usize] = 0;
        let last = self.members.pop().expect("a member");
        if last != v {
            self.members[p as usize - 1] = last;
            self.at[last as usize] = p;
        }
        true
    }

    pub(super) fn clear(&mut self) {
        for &v in &self.members {
            self.at[v as usize] = 0;
        }
        self.members.clear();
    }
}

/// The values live at one point, split by register file, with the registers (or
/// predicates) they take per region (quads, pairs, singles, predicates).
pub(super) struct Live<'a> {
    pub(super) classes: &'a [Class],
    pub(super) general: SparseSet,
    pub(super) preds: SparseSet,
    pub(super) size: [u32; 4],
}

impl Live<'_> {
    fn set(&mut self, v: u32) -> &mut SparseSet {
        if self.classes[v as usize] == Class::Pred {
            &mut self.preds
        } else {
            &mut self.general
        }
    }

    fn insert(&mut self, v: u32) {
        if self.set(v).insert(v) {
            self.size[region(self.classes[v as usize])] += 1;
        }
    }

    fn remove(&mut self, v: u32) {
        if self.set(v).remove(v) {
            self.size[region(self.classes[v as usize])] -= 1;
        }
    }

    pub(super) fn load(&mut self, values: &[u32]) {
        self.general.clear();
        self.preds.clear();
        self.size = [0; 4];
        for &v in values {
            self.insert(v);
        }
    }

    pub(super) fn contains(&self, v: u32) -> bool {
        if self.classes[v as usize] == Class::Pred {
            self.preds.contains(v)
        } else {
            self.general.contains(v)
        }
    }

    /// Steps backwards over instruction `i`: from the values live after it to those
    /// live before it.
    pub(super) fn step_back(&mut self, code: &Code, i: usize) {
        for &d in code.defs(i) {
            self.remove(d);
        }
        for &u in code.uses(i).iter().chain(code.partial_defs(i)) {
            self.insert(u);
        }
    }
}

/// Basic blocks: maximal runs of instructions entered only at their first and left
/// only at their last, with successor and predecessor lists and liveness sets.
pub(super) struct Blocks {
    /// First instruction of each block, then the code's length.
    pub(super) start: Vec<u32>,
    /// Successor blocks of each block (the exit is none).
    succ: Vec<[u32; 2]>,
    pred_start: Vec<u32>,
    preds: Vec<u32>,
}

const NO_BLOCK: u32 = u32::MAX;

impl Blocks {
    pub(super) fn new(code: &Code) -> Blocks {
        let n = code.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (i, s) in code.succ.iter().enumerate() {
            let falls_through = s.iter().eq(std::iter::once(i + 1));
            if !falls_through {
                leader[i + 1] = true;
                for t in s.iter().filter(|&t| t <= n) {
                    leader[t] = true;
                }
            }
        }
        let start: Vec<u32> = (0..=n)
            .filter(|&i| leader[i] || i == n)
            .map(|i| i as u32)
            .collect();
        drop(leader);
        let count = start.len() - 1;
        let block_of = |pc: usize| -> u32 {
            if pc >= n {
                return NO_BLOCK;
            }
            (start.partition_point(|&s| s as usize <= pc) - 1) as u32
        };
        let mut succ = vec![[NO_BLOCK; 2]; count];
        for (b, slot) in succ.iter_mut().enumerate() {
            let last = start[b + 1] as usize - 1;
            for (k, t) in code.succ[last].iter().enumerate() {
                slot[k] = block_of(t);
            }
        }
        let mut pred_start = vec![0u32; count + 1];
        for s in &succ {
            for &t in s.iter().filter(|&&t| t != NO_BLOCK) {
                pred_start[t as usize + 1] += 1;
            }
        }
        for b in 0..count {
            pred_start[b + 1] += pred_start[b];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![0u32; pred_start[count] as usize];
        for (b, s) in succ.iter().enumerate() {
            for &t in s.iter().filter(|&&t| t != NO_BLOCK) {
                preds[fill[t as usize] as usize] = b as u32;
                fill[t as usize] += 1;
            }
        }
        Blocks {
            start,
            succ,
            pred_start,
            preds,
        }
    }

    pub(super) fn count(&self) -> usize {
        self.succ.len()
    }

    pub(super) fn range(&self, b: usize) -> std::ops::Range<usize> {
        self.start[b] as usize..self.start[b + 1] as usize
    }

    pub(super) fn preds(&self, b: usize) -> &[u32] {
        &self.preds[self.pred_start[b] as usize..self.pred_start[b + 1] as usize]
    }

    /// The blocks execution can reach from the first.
    pub(super) fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.count()];
        let mut stack = vec![0usize];
        while let Some(b) = stack.pop() {
            if b >= seen.len() || seen[b] {
                continue;
            }
            seen[b] = true;
            stack.extend(self.successors(b));
        }
        seen
    }

    pub(super) fn successors(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        self.succ[b]
            .iter()
            .filter(|&&t| t != NO_BLOCK)
            .map(|&t| t as usize)
    }
}

/// Sorted union of sorted lists.
fn union_into(out: &mut Vec<u32>, a: &[u32], b: &[u32]) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// Liveness per block: the values live into each block (sorted), solved to the
/// fixed point over sparse sets.
pub(super) fn live_in(
    classes: &[Class],
    code: &Code,
    blocks: &Blocks,
    max_entries: usize,
) -> Result<Vec<Vec<u32>>, Failure> {
    let n = classes.len();
    let count = blocks.count();
    // What each block does to the values live after it: live before = (after - kill)
    // + gen, gen being the values read before any write in the block.
    let mut gen_list: Vec<Vec<u32>> = Vec::with_capacity(count);
    let mut kill_list: Vec<Vec<u32>> = Vec::with_capacity(count);
    let mut live = Live {
        classes,
        general: SparseSet::new(n),
        preds: SparseSet::new(n),
        size: [0; 4],
    };
    let mut kill = SparseSet::new(n);
    for b in 0..count {
        live.load(&[]);
        kill.clear();
        for i in blocks.range(b).rev() {
            live.step_back(code, i);
            for &d in code.defs(i) {
                kill.insert(d);
            }
        }
        let mut g: Vec<u32> = live.general.members.clone();
        g.extend_from_slice(&live.preds.members);
        g.sort_unstable();
        let mut k = kill.members.clone();
        k.sort_unstable();
        gen_list.push(g);
        kill_list.push(k);
    }
    let mut sets: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut total = 0usize;
    let mut queued = vec![true; count];
    let mut work: Vec<u32> = (0..count as u32).collect();
    let (mut out, mut tmp, mut next) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(b) = work.pop() {
        let b = b as usize;
        queued[b] = false;
        out.clear();
        for s in blocks.successors(b) {
            union_into(&mut tmp, &out, &sets[s]);
            std::mem::swap(&mut out, &mut tmp);
        }
        // (out - kill) + gen, all sorted.
        let kill = &kill_list[b];
        tmp.clear();
        let mut k = 0;
        for &v in &out {
            while k < kill.len() && kill[k] < v {
                k += 1;
            }
            if k == kill.len() || kill[k] != v {
                tmp.push(v);
            }
        }
        union_into(&mut next, &tmp, &gen_list[b]);
        // Sets only grow, so a longer set is a changed one.
        if next.len() > sets[b].len() {
            total += next.len() - sets[b].len();
            if total > max_entries {
                return Err(Failure::TooLarge {
                    at: blocks.start[b] as usize,
                    what: "values live into blocks",
                });
            }
            std::mem::swap(&mut sets[b], &mut next);
            for &p in blocks.preds(b) {
                if !queued[p as usize] {
                    queued[p as usize] = true;
                    work.push(p);
                }
            }
        }
    }
    Ok(sets)
}

/// The values live after the last instruction of block `b`.
pub(super) fn live_out(
    blocks: &Blocks,
    sets: &[Vec<u32>],
    b: usize,
    out: &mut Vec<u32>,
    tmp: &mut Vec<u32>,
) {
    out.clear();
    for s in blocks.successors(b) {
        union_into(tmp, out, &sets[s]);
        std::mem::swap(out, tmp);
    }
}
