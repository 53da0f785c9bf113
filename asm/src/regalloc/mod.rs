//! Register allocation: liveness of virtual registers over the control-flow graph,
//! then greedy colouring onto the 128 physical registers and 16 predicates.
//!
//! Liveness is per thread. That is sound under SIMT: a warp runs the union of its
//! threads' paths, but every write is masked per lane, so an instruction a thread
//! does not execute never changes that thread's registers. A guarded write, or a
//! write of part of a register (a `.lo`/`.hi` half), keeps the old value in the
//! lanes it skips, so it counts as a use as well as a definition.
//!
//! Liveness is solved per basic block over sparse sets (the values live into each
//! block), and recomputed instruction by instruction inside a block when it is
//! needed, so its memory follows the values actually live, not the instructions
//! times the registers declared. The work is bounded ([`MAX_LIVE_ENTRIES`],
//! [`MAX_PAIRS`]): a kernel past the bounds is refused ([`Failure::TooLarge`]).
//!
//! Values of different sizes live in separate regions of the register file so that
//! every register keeps one width (which is what lets the disassembler name them):
//! 4-register groups (vectors) first, starting at register 0, then 64-bit pairs,
//! then single registers. Each region is coloured greedily in order of first
//! definition.

use crate::cfg::Succ;
use liveness::{Blocks, Live, SparseSet, live_in, live_out};

mod liveness;

/// Most entries of the per-block liveness sets (values live into a block, summed
/// over the blocks): 128 MiB.
pub const MAX_LIVE_ENTRIES: usize = 1 << 25;
/// Most pairs of values live at the same time that allocation examines (the work of
/// building the interference graph), and most it keeps (256 MiB).
pub const MAX_PAIRS: usize = 1 << 28;

/// The bounds on the allocator's work (see [`MAX_LIVE_ENTRIES`], [`MAX_PAIRS`]).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    live_entries: usize,
    pairs: usize,
    /// Interference pairs kept, both directions counted (256 MiB).
    kept_pairs: usize,
}

const BOUNDS: Bounds = Bounds {
    live_entries: MAX_LIVE_ENTRIES,
    pairs: MAX_PAIRS,
    kept_pairs: 1 << 26,
};

/// What a virtual register needs from the register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// One 32-bit register (8-, 16- and 32-bit values).
    Single,
    /// An aligned pair (64-bit values, `.v2` of 32-bit values).
    Pair,
    /// An aligned group of four (`.v4` of 32-bit values, `.v2` of 64-bit values).
    Quad,
    /// A predicate.
    Pred,
}

impl Class {
    /// 32-bit registers one value takes (predicates: 1 predicate).
    pub const fn size(self) -> u32 {
        match self {
            Class::Single | Class::Pred => 1,
            Class::Pair => 2,
            Class::Quad => 4,
        }
    }
}

/// One instruction as the allocator sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inst {
    /// Virtual registers read.
    pub uses: Vec<u32>,
    /// Virtual registers written completely in every lane that executes it.
    pub defs: Vec<u32>,
    /// Virtual registers written partly (guarded writes, halves): the old value
    /// survives in some lanes or bits.
    pub partial_defs: Vec<u32>,
}

/// Where the allocator placed the virtual registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// First physical register (or predicate) of each virtual register.
    pub phys: Vec<u8>,
    /// Values per region: quads, pairs, singles, predicates.
    pub quads: u32,
    pub pairs: u32,
    pub singles: u32,
    pub preds: u32,
}

impl Assignment {
    /// General registers used.
    pub fn registers(&self) -> u32 {
        4 * self.quads + 2 * self.pairs + self.singles
    }
}

/// More values are live at once than the register file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pressure {
    /// The instruction where the most values are live.
    pub at: usize,
    /// Whether the predicates (rather than the general registers) ran out.
    pub predicates: bool,
    /// 32-bit registers (or predicates) live across that instruction.
    pub live: u32,
    /// What the allocation needed in total.
    pub needed: u32,
    /// What exists.
    pub available: u32,
    /// Live values by class there: quads, pairs, singles (or predicates).
    pub by_class: [u32; 3],
}

/// The instructions as the allocator sees them, flat: per instruction its uses,
/// full definitions and partial definitions (see [`Inst`]) and its successors.
#[derive(Debug, Clone, Default)]
pub struct Code {
    regs: Vec<u32>,
    /// Per instruction: where its uses, definitions and partial definitions end in
    /// `regs`.
    ends: Vec<[u32; 3]>,
    succ: Vec<Succ>,
}

impl Code {
    /// Appends an instruction; `succ` lists its successors (at most two), the code's
    /// length standing for "the thread has exited".
    pub fn push(&mut self, uses: &[u32], defs: &[u32], partial_defs: &[u32], succ: &[usize]) {
        self.regs.extend_from_slice(uses);
        let u = self.regs.len() as u32;
        self.regs.extend_from_slice(defs);
        let d = self.regs.len() as u32;
        self.regs.extend_from_slice(partial_defs);
        self.ends.push([u, d, self.regs.len() as u32]);
        self.succ.push(Succ::of(succ));
    }

    /// The instructions of `code` with successors `succ`.
    pub fn from_insts(code: &[Inst], succ: &[Vec<usize>]) -> Code {
        let mut c = Code::default();
        for (i, s) in code.iter().zip(succ) {
            c.push(&i.uses, &i.defs, &i.partial_defs, s);
        }
        c
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |p| self.ends[p][2] as usize)
    }

    fn uses(&self, i: usize) -> &[u32] {
        &self.regs[self.start(i)..self.ends[i][0] as usize]
    }

    fn defs(&self, i: usize) -> &[u32] {
        &self.regs[self.ends[i][0] as usize..self.ends[i][1] as usize]
    }

    fn partial_defs(&self, i: usize) -> &[u32] {
        &self.regs[self.ends[i][1] as usize..self.ends[i][2] as usize]
    }

    /// Everything the instruction writes, fully or partly.
    fn writes(&self, i: usize) -> &[u32] {
        &self.regs[self.ends[i][0] as usize..self.ends[i][2] as usize]
    }
}

/// Why allocation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// More values are live at once than the register file holds.
    Pressure(Pressure),
    /// The kernel is past the bounds on the allocator's work: `what` names the
    /// bound, `at` the instruction where it ran out.
    TooLarge { at: usize, what: &'static str },
}

/// The interference graph as adjacency lists, deduplicated as they grow.
struct Graph<'a> {
    classes: &'a [Class],
    bounds: Bounds,
    adj: Vec<Vec<u32>>,
    /// Length of each list after its last deduplication.
    clean: Vec<u32>,
    examined: usize,
    kept: usize,
}

impl Graph<'_> {
    fn add(&mut self, a: u32, b: u32) -> bool {
        self.examined += 1;
        if a == b || !same_file(self.classes[a as usize], self.classes[b as usize]) {
            return true;
        }
        self.push(a, b);
        self.push(b, a);
        self.examined <= self.bounds.pairs && self.kept <= self.bounds.kept_pairs
    }

    fn push(&mut self, a: u32, b: u32) {
        let list = &mut self.adj[a as usize];
        list.push(b);
        self.kept += 1;
        let clean = self.clean[a as usize] as usize;
        if list.len() >= 2 * clean + 32 {
            let before = list.len();
            list.sort_unstable();
            list.dedup();
            self.kept -= before - list.len();
            self.clean[a as usize] = list.len() as u32;
        }
    }
}

/// Allocates physical registers; on failure the report names an instruction index,
/// which the caller turns into a source position.
pub fn allocate(
    classes: &[Class],
    code: &Code,
    registers: u32,
    predicates: u32,
) -> Result<Assignment, Failure> {
    allocate_within(classes, code, registers, predicates, BOUNDS)
}

/// [`allocate`] within `bounds`.
fn allocate_within(
    classes: &[Class],
    code: &Code,
    registers: u32,
    predicates: u32,
    bounds: Bounds,
) -> Result<Assignment, Failure> {
    let n = classes.len();
    let blocks = Blocks::new(code);
    let sets = live_in(classes, code, &blocks, bounds.live_entries)?;
    // Interference: a value written interferes with everything live after the write
    // (its own later value excepted); values live on entry interfere with each other.
    let mut graph = Graph {
        classes,
        bounds,
        adj: vec![Vec::new(); n],
        clean: vec![0; n],
        examined: 0,
        kept: 0,
    };
    let too_large = |at: usize| Failure::TooLarge {
        at,
        what: "pairs of values live at the same time",
    };
    let mut live = Live {
        classes,
        general: SparseSet::new(n),
        preds: SparseSet::new(n),
        size: [0; 4],
    };
    let (mut out, mut tmp) = (Vec::new(), Vec::new());
    let reachable = blocks.reachable();
    for (b, &reachable) in reachable.iter().enumerate() {
        live_out(&blocks, &sets, b, &mut out, &mut tmp);
        live.load(&out);
        for i in blocks.range(b).rev() {
            // Values live together where the code can run interfere with each other,
            // so more of them than the file holds is a failure already: said so now,
            // before the work of all their pairs.
            let [q, p, single, preds] = live.size;
            let general = 4 * q + 2 * p + single;
            if reachable && (general > registers || preds > predicates) {
                let short = preds > predicates;
                let available = if short { predicates } else { registers };
                let mut report = pressure(classes, code, &blocks, &sets, short, 0, available);
                report.needed = report.live;
                return Err(Failure::Pressure(report));
            }
            for &d in code.writes(i) {
                let same = if classes[d as usize] == Class::Pred {
                    &live.preds.members
                } else {
                    &live.general.members
                };
                for &l in same {
                    if !graph.add(d, l) {
                        return Err(too_large(i));
                    }
                }
                for &e in code.writes(i) {
                    if !graph.add(d, e) {
                        return Err(too_large(i));
                    }
                }
            }
            live.step_back(code, i);
        }
    }
    if let Some(entry) = sets.first() {
        // Values read before any write are live on entry together.
        let (general, preds): (Vec<u32>, Vec<u32>) = entry
            .iter()
            .partition(|&&v| classes[v as usize] != Class::Pred);
        for on_entry in [general, preds] {
            let pairs = on_entry.len() * on_entry.len().saturating_sub(1) / 2;
            if pairs > bounds.pairs {
                return Err(too_large(0));
            }
            for (k, &a) in on_entry.iter().enumerate() {
                for &b in &on_entry[k + 1..] {
                    if !graph.add(a, b) {
                        return Err(too_large(0));
                    }
                }
            }
        }
    }
    let mut adj = graph.adj;
    drop(graph.clean);
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    // Greedy colouring per class, in order of first appearance.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for i in 0..code.len() {
        for &v in code.writes(i).iter().chain(code.uses(i)) {
            if !seen[v as usize] {
                seen[v as usize] = true;
                order.push(v);
            }
        }
    }
    drop(seen);
    let mut colour = vec![u32::MAX; n];
    let mut counts = [0u32; 4];
    // `taken[c] == v + 1`: colour c is used by a neighbour of v.
    let mut taken: Vec<u32> = Vec::new();
    for &v in &order {
        let class = classes[v as usize];
        let neighbours = &adj[v as usize];
        if taken.len() < neighbours.len() + 1 {
            taken.resize(neighbours.len() + 1, 0);
        }
        for &w in neighbours {
            let c = colour[w as usize];
            if classes[w as usize] == class && (c as usize) < taken.len() {
                taken[c as usize] = v + 1;
            }
        }
        let c = (0..).find(|&c| taken[c] != v + 1).unwrap_or(0) as u32;
        colour[v as usize] = c;
        let k = region(class);
        counts[k] = counts[k].max(c + 1);
    }
    drop(adj);
    let [quads, pairs, singles, preds] = counts;
    let general = 4 * quads + 2 * pairs + singles;
    if general > registers || preds > predicates {
        let predicates_short = preds > predicates;
        return Err(Failure::Pressure(pressure(
            classes,
            code,
            &blocks,
            &sets,
            predicates_short,
            if predicates_short { preds } else { general },
            if predicates_short {
                predicates
            } else {
                registers
            },
        )));
    }
    let phys = (0..n)
        .map(|v| {
            let c = colour[v];
            if c == u32::MAX {
                return 0;
            }
            (match classes[v] {
                Class::Quad => 4 * c,
                Class::Pair => 4 * quads + 2 * c,
                Class::Single => 4 * quads + 2 * pairs + c,
                Class::Pred => c,
            }) as u8
        })
        .collect();
    Ok(Assignment {
        phys,
        quads,
        pairs,
        singles,
        preds,
    })
}

fn same_file(a: Class, b: Class) -> bool {
    (a == Class::Pred) == (b == Class::Pred)
}

fn region(c: Class) -> usize {
    match c {
        Class::Quad => 0,
        Class::Pair => 1,
        Class::Single => 2,
        Class::Pred => 3,
    }
}

/// The instruction with the most live values of the short file (the first of
/// them when several tie).
fn pressure(
    classes: &[Class],
    code: &Code,
    blocks: &Blocks,
    sets: &[Vec<u32>],
    predicates: bool,
    needed: u32,
    available: u32,
) -> Pressure {
    let mut best = Pressure {
        at: usize::MAX,
        predicates,
        live: 0,
        needed,
        available,
        by_class: [0; 3],
    };
    let n = classes.len();
    let mut live = Live {
        classes,
        general: SparseSet::new(n),
        preds: SparseSet::new(n),
        size: [0; 4],
    };
    let mut extra = SparseSet::new(n);
    let (mut out, mut tmp) = (Vec::new(), Vec::new());
    for b in 0..blocks.count() {
        live_out(blocks, sets, b, &mut out, &mut tmp);
        live.load(&out);
        for i in blocks.range(b).rev() {
            // Live across instruction i: after it, plus what it reads and writes.
            let mut size = live.size;
            extra.clear();
            for &v in code.uses(i).iter().chain(code.writes(i)) {
                if !live.contains(v) && extra.insert(v) {
                    size[region(classes[v as usize])] += 1;
                }
            }
            let (total, by_class) = if predicates {
                (size[3], [size[3], 0, 0])
            } else {
                (
                    4 * size[0] + 2 * size[1] + size[2],
                    [size[0], size[1], size[2]],
                )
            };
            if total > best.live || (total == best.live && i < best.at) {
                best.at = i;
                best.live = total;
                best.by_class = by_class;
            }
            live.step_back(code, i);
        }
    }
    if best.live == 0 {
        best.at = 0;
    }
    best
}

#[cfg(test)]
mod tests;
