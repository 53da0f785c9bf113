//! Register allocation: liveness of virtual registers over the control-flow graph,
//! then greedy colouring onto the 128 physical registers and 16 predicates.
//!
//! Liveness is per thread. That is sound under SIMT: a warp runs the union of its
//! threads' paths, but every write is masked per lane, so an instruction a thread
//! does not execute never changes that thread's registers. A guarded write, or a
//! write of part of a register (a `.lo`/`.hi` half), keeps the old value in the
//! lanes it skips, so it counts as a use as well as a definition.
//!
//! Values of different sizes live in separate regions of the register file so that
//! every register keeps one width (which is what lets the disassembler name them):
//! 4-register groups (vectors) first, starting at register 0, then 64-bit pairs,
//! then single registers. Each region is coloured greedily in order of first
//! definition.

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

/// A set of virtual registers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, v: u32) {
        self.0[v as usize / 64] |= 1 << (v % 64);
    }
    fn remove(&mut self, v: u32) {
        self.0[v as usize / 64] &= !(1 << (v % 64));
    }
    /// Adds `other`; true if anything changed.
    fn union(&mut self, other: &Set) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                (b != 0).then(|| {
                    let i = b.trailing_zeros();
                    b &= b - 1;
                    w as u32 * 64 + i
                })
            })
        })
    }
}

/// Live-out sets of every instruction. `succ[i]` lists the successors of
/// instruction `i`; `code.len()` stands for "the thread has exited".
fn live_out(classes: &[Class], code: &[Inst], succ: &[Vec<usize>]) -> Vec<Set> {
    let n = classes.len();
    let mut live_in: Vec<Set> = vec![Set::new(n); code.len()];
    let mut out: Vec<Set> = vec![Set::new(n); code.len()];
    // Iterate to the fixed point, visiting instructions backwards.
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..code.len()).rev() {
            let mut o = Set::new(n);
            for &s in &succ[i] {
                if let Some(li) = live_in.get(s) {
                    o.union(li);
                }
            }
            let mut li = o.clone();
            for &d in &code[i].defs {
                li.remove(d);
            }
            for &u in code[i].uses.iter().chain(&code[i].partial_defs) {
                li.insert(u);
            }
            changed |= live_in[i].union(&li);
            out[i] = o;
        }
    }
    out
}

/// Allocates physical registers; on failure the report names an instruction index,
/// which the caller turns into a source position.
pub fn allocate(
    classes: &[Class],
    code: &[Inst],
    succ: &[Vec<usize>],
    registers: u32,
    predicates: u32,
) -> Result<Assignment, Pressure> {
    let n = classes.len();
    let out = live_out(classes, code, succ);
    // Interference: a value written interferes with everything live after the write
    // (its own later value excepted); values live on entry interfere with each other.
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    let add = |a: u32, b: u32, adj: &mut Vec<Vec<u32>>| {
        if a != b && same_file(classes[a as usize], classes[b as usize]) {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
    };
    for (i, inst) in code.iter().enumerate() {
        for &d in inst.defs.iter().chain(&inst.partial_defs) {
            for l in out[i].iter() {
                add(d, l, &mut adj);
            }
            for &e in inst.defs.iter().chain(&inst.partial_defs) {
                add(d, e, &mut adj);
            }
        }
    }
    if let Some(first) = code.first() {
        // Values read before any write are live on entry together.
        let mut entry = out[0].clone();
        for &d in &first.defs {
            entry.remove(d);
        }
        for &u in first.uses.iter().chain(&first.partial_defs) {
            entry.insert(u);
        }
        let on_entry: Vec<u32> = entry.iter().collect();
        for (k, &a) in on_entry.iter().enumerate() {
            for &b in &on_entry[k + 1..] {
                add(a, b, &mut adj);
            }
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    // Greedy colouring per class, in order of first appearance.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for inst in code {
        for &v in inst.defs.iter().chain(&inst.partial_defs).chain(&inst.uses) {
            if !seen[v as usize] {
                seen[v as usize] = true;
                order.push(v);
            }
        }
    }
    let mut colour = vec![u32::MAX; n];
    let mut counts = [0u32; 4];
    for &v in &order {
        let class = classes[v as usize];
        let taken: Vec<u32> = adj[v as usize]
            .iter()
            .filter(|&&w| classes[w as usize] == class)
            .map(|&w| colour[w as usize])
            .filter(|&c| c != u32::MAX)
            .collect();
        let c = (0..).find(|c| !taken.contains(c)).unwrap_or(0);
        colour[v as usize] = c;
        let k = region(class);
        counts[k] = counts[k].max(c + 1);
    }
    let [quads, pairs, singles, preds] = counts;
    let general = 4 * quads + 2 * pairs + singles;
    if general > registers || preds > predicates {
        let predicates_short = preds > predicates;
        return Err(pressure(
            classes,
            code,
            &out,
            predicates_short,
            if predicates_short { preds } else { general },
            if predicates_short {
                predicates
            } else {
                registers
            },
        ));
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

/// The instruction with the most live values of the short file.
fn pressure(
    classes: &[Class],
    code: &[Inst],
    out: &[Set],
    predicates: bool,
    needed: u32,
    available: u32,
) -> Pressure {
    let mut best = Pressure {
        at: 0,
        predicates,
        live: 0,
        needed,
        available,
        by_class: [0; 3],
    };
    for (i, inst) in code.iter().enumerate() {
        let mut live = out[i].clone();
        for &u in inst.uses.iter().chain(&inst.defs).chain(&inst.partial_defs) {
            live.insert(u);
        }
        let mut by_class = [0u32; 3];
        let mut total = 0;
        for v in live.iter() {
            let c = classes[v as usize];
            if (c == Class::Pred) != predicates {
                continue;
            }
            total += c.size();
            let k = if predicates { 0 } else { region(c) };
            by_class[k] += 1;
        }
        if total > best.live {
            best.at = i;
            best.live = total;
            best.by_class = by_class;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(uses: &[u32], defs: &[u32]) -> Inst {
        Inst {
            uses: uses.to_vec(),
            defs: defs.to_vec(),
            partial_defs: Vec::new(),
        }
    }

    /// Straight-line successors with an exit after the last instruction.
    fn straight(n: usize) -> Vec<Vec<usize>> {
        (0..n).map(|i| vec![i + 1]).collect()
    }

    #[test]
    fn short_lived_values_share_registers() {
        // 300 values, each written then read by the next instruction.
        let n = 300;
        let classes = vec![Class::Single; n];
        let code: Vec<Inst> = (0..n as u32)
            .map(|v| {
                if v == 0 {
                    inst(&[], &[0])
                } else {
                    inst(&[v - 1], &[v])
                }
            })
            .collect();
        let a = allocate(&classes, &code, &straight(n), 128, 16).unwrap();
        assert_eq!(
            a.singles, 1,
            "a read that dies where the next value is written shares its register"
        );
    }

    #[test]
    fn values_live_together_get_distinct_aligned_registers() {
        // v0 single, v1 pair, v2 quad, v3 pair: all live until the last instruction.
        let classes = [Class::Single, Class::Pair, Class::Quad, Class::Pair];
        let code = vec![
            inst(&[], &[0]),
            inst(&[], &[1]),
            inst(&[], &[2]),
            inst(&[], &[3]),
            inst(&[0, 1, 2, 3], &[]),
        ];
        let a = allocate(&classes, &code, &straight(5), 128, 16).unwrap();
        assert_eq!(a.phys[2], 0, "quads come first");
        assert_eq!((a.phys[1] % 2, a.phys[3] % 2), (0, 0), "pairs are aligned");
        assert_ne!(a.phys[1], a.phys[3]);
        assert_eq!(a.phys[0], 8, "singles follow the pairs");
        assert_eq!(a.registers(), 9);
    }

    #[test]
    fn a_value_live_around_a_loop_keeps_its_register() {
        // 0: v0 = ..   1: v1 = ..   2: v2 = v1 + v0   3: v1 = v2   4: if .. goto 2   5: use v0
        let classes = [Class::Single; 3];
        let code = vec![
            inst(&[], &[0]),
            inst(&[], &[1]),
            inst(&[1, 0], &[2]),
            inst(&[2], &[1]),
            inst(&[], &[]),
            inst(&[0], &[]),
        ];
        let succ = vec![vec![1], vec![2], vec![3], vec![4], vec![2, 5], vec![6]];
        let a = allocate(&classes, &code, &succ, 128, 16).unwrap();
        assert_ne!(a.phys[0], a.phys[1], "v0 is live across the loop");
        assert_ne!(a.phys[0], a.phys[2]);
        assert!(a.singles <= 3);
    }

    #[test]
    fn values_of_two_divergent_paths_may_share_a_register() {
        // 0: branch to 1 or 3; 1: v0 = ..; 2: use v0, goto 5; 3: v1 = ..; 4: use v1; 5: exit
        let classes = [Class::Single; 2];
        let code = vec![
            inst(&[], &[]),
            inst(&[], &[0]),
            inst(&[0], &[]),
            inst(&[], &[1]),
            inst(&[1], &[]),
            inst(&[], &[]),
        ];
        let succ = vec![vec![1, 3], vec![2], vec![5], vec![4], vec![5], vec![6]];
        let a = allocate(&classes, &code, &succ, 128, 16).unwrap();
        assert_eq!(
            a.phys[0], a.phys[1],
            "per-thread liveness: the paths never overlap"
        );
    }

    #[test]
    fn a_guarded_write_keeps_the_old_value_alive() {
        // v0 = ..; @p v0 = ..; use v0 (v1 must not take v0's register in between).
        let classes = [Class::Single; 2];
        let code = vec![
            inst(&[], &[0]),
            inst(&[], &[1]),
            Inst {
                uses: vec![1],
                defs: vec![],
                partial_defs: vec![0],
            },
            inst(&[0], &[]),
        ];
        let a = allocate(&classes, &code, &straight(4), 128, 16).unwrap();
        assert_ne!(a.phys[0], a.phys[1]);
    }

    #[test]
    fn too_many_live_values_report_where_and_how_many() {
        let n = 130u32;
        let classes = vec![Class::Single; n as usize];
        let mut code: Vec<Inst> = (0..n).map(|v| inst(&[], &[v])).collect();
        code.push(inst(&(0..n).collect::<Vec<_>>(), &[]));
        let p = allocate(&classes, &code, &straight(code.len()), 128, 16).unwrap_err();
        assert_eq!(
            p.at,
            n as usize - 1,
            "the last write, after which all are live"
        );
        assert_eq!(p.live, 130);
        assert_eq!(p.needed, 130);
        assert!(!p.predicates);
        let preds = vec![Class::Pred; 17];
        let mut code: Vec<Inst> = (0..17).map(|v| inst(&[], &[v])).collect();
        code.push(inst(&(0..17).collect::<Vec<_>>(), &[]));
        let p = allocate(&preds, &code, &straight(code.len()), 128, 16).unwrap_err();
        assert!(p.predicates);
        assert_eq!((p.live, p.available), (17, 16));
    }
}
