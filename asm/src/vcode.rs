//! Code over virtual registers: instructions whose register operands are recorded
//! as references to virtual registers (declared ones and the assembler's own
//! temporaries), placed onto physical registers by [`crate::regalloc`] or by the
//! declarations' own layout, then patched into machine instructions. A lowered
//! kernel is kept compact ([`VCode`]): each instruction encoded with placeholder
//! registers, its register references packed, about 40 bytes an instruction.

use crate::lexer::Span;
use crate::regalloc::Class;
use spu_isa::table::Role;
use spu_isa::{EncodingError, Guard, Instr, Operand};

/// Which part of an instruction a register reference fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Operand `k` (a register, or a predicate).
    Operand(usize),
    /// The base register of the memory operand `k`.
    Base(usize),
    /// The guard predicate.
    Guard,
    /// A register the instruction also reads or writes through a vector operand
    /// (liveness only; the operand names the vector's first register).
    Shadow(usize),
}

/// One reference from an instruction to a virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegRef {
    pub slot: Slot,
    pub vreg: u32,
    /// 32-bit registers into the virtual register (`.hi` of a pair is 1).
    pub offset: u8,
    /// The reference names only part of the virtual register (a `.lo`/`.hi` half,
    /// an element of a vector temporary).
    pub part: bool,
}

/// A machine instruction over virtual registers. `instr` holds placeholder
/// registers until [`VInstr::patch`].
#[derive(Debug, Clone)]
pub struct VInstr {
    pub instr: Instr,
    pub refs: Vec<RegRef>,
    /// A branch target still to resolve: the label's id.
    pub target: Option<u32>,
    /// Added by the assembler around a statement's own instruction (the `mov` of
    /// an immediate, a copy through a vector temporary).
    pub helper: bool,
}

/// The virtual registers of a kernel.
#[derive(Debug, Clone, Default)]
pub struct VRegs {
    pub classes: Vec<Class>,
    /// Where the declarations put each declared register (`None` for temporaries).
    pub declared_at: Vec<Option<u8>>,
    /// Each declared register's source name, without `%` (`None` for temporaries).
    pub names: Vec<Option<Box<str>>>,
    /// Some register of each file (general, predicates) is a temporary.
    temps: [bool; 2],
    /// A vector operand was placed on declared registers as they are (which
    /// colouring would not do; see [`crate::operands::Lowering::colour`]).
    pub declared_groups: bool,
}

impl VRegs {
    /// A new virtual register.
    pub fn add(&mut self, class: Class, declared_at: Option<u8>) -> u32 {
        self.classes.push(class);
        self.declared_at.push(declared_at);
        self.names.push(None);
        if declared_at.is_none() {
            self.temps[usize::from(class == Class::Pred)] = true;
        }
        (self.classes.len() - 1) as u32
    }

    /// A declared register named `name` in the source.
    pub fn add_named(&mut self, class: Class, declared_at: Option<u8>, name: &str) -> u32 {
        let v = self.add(class, declared_at);
        self.names[v as usize] = Some(name.into());
        v
    }

    /// True if some register of this file (predicates or general) is a temporary.
    pub fn has_temps(&self, pred: bool) -> bool {
        self.temps[usize::from(pred)]
    }
}

/// Which registers an instruction reads, writes and partly writes (see
/// [`crate::regalloc::Inst`]), from its references and the roles of its operands.
fn uses_and_defs(instr: &Instr, refs: impl Iterator<Item = RegRef>, out: &mut [Vec<u32>; 3]) {
    let spec = instr.opcode.spec();
    let role_of = |k: usize| spec.operands().nth(k).map_or(Role::Use, |o| o.3);
    let guarded = instr.guard != Guard::Always;
    out.iter_mut().for_each(Vec::clear);
    for r in refs {
        let role = match r.slot {
            Slot::Operand(k) | Slot::Shadow(k) => role_of(k),
            Slot::Base(_) | Slot::Guard => Role::Use,
        };
        match role {
            Role::Use => out[0].push(r.vreg),
            // A half, or a write some lanes skip, keeps the rest of the old value.
            Role::Def if guarded || r.part => out[2].push(r.vreg),
            Role::Def => out[1].push(r.vreg),
        }
    }
}

/// Replaces the placeholder registers of `instr` by physical ones.
fn patch(instr: &mut Instr, refs: impl Iterator<Item = RegRef>, phys: &dyn Fn(u32) -> u8) {
    for r in refs {
        let p = phys(r.vreg).wrapping_add(r.offset);
        match r.slot {
            Slot::Guard => {
                instr.guard = match instr.guard {
                    Guard::IfNot(_) => Guard::IfNot(p),
                    _ => Guard::If(p),
                }
            }
            Slot::Operand(k) => {
                if let Some(op) = instr.operands_mut().get_mut(k) {
                    *op = match *op {
                        Operand::Pred(_) => Operand::Pred(p),
                        Operand::PredNot(_) => Operand::PredNot(p),
                        _ => Operand::Reg(p),
                    };
                }
            }
            Slot::Base(k) => {
                if let Some(Operand::Mem { base, .. }) = instr.operands_mut().get_mut(k) {
                    *base = Some(p);
                }
            }
            Slot::Shadow(_) => {}
        }
    }
}

/// A [`RegRef`] in 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackedRef {
    vreg: u32,
    /// 0 operand, 1 base, 2 guard, 3 shadow.
    slot: u8,
    index: u8,
    offset: u8,
    part: bool,
}

impl PackedRef {
    fn pack(r: &RegRef) -> PackedRef {
        let (slot, index) = match r.slot {
            Slot::Operand(k) => (0, k),
            Slot::Base(k) => (1, k),
            Slot::Guard => (2, 0),
            Slot::Shadow(k) => (3, k),
        };
        PackedRef {
            vreg: r.vreg,
            slot,
            index: u8::try_from(index).expect("operand index fits a byte"),
            offset: r.offset,
            part: r.part,
        }
    }

    fn unpack(self) -> RegRef {
        let k = usize::from(self.index);
        RegRef {
            slot: match self.slot {
                0 => Slot::Operand(k),
                1 => Slot::Base(k),
                2 => Slot::Guard,
                _ => Slot::Shadow(k),
            },
            vreg: self.vreg,
            offset: self.offset,
            part: self.part,
        }
    }
}

/// One lowered instruction.
#[derive(Debug, Clone, Copy)]
struct Placed {
    /// Encoded with placeholder registers (and branch target 0).
    word: u64,
    /// Its first reference in [`VCode::refs`] (they run to the next instruction's).
    refs: u32,
    /// The label it branches to ([`NO_LABEL`] for none).
    target: u32,
    /// The statement it came from, in the preprocessed text.
    span: [u32; 2],
    /// Not the statement's own instruction (see [`VCode::hidden`]).
    hidden: bool,
}

/// No branch target.
pub const NO_LABEL: u32 = u32::MAX;

/// A lowered kernel: machine instructions over virtual registers, compact.
#[derive(Debug, Clone, Default)]
pub struct VCode {
    placed: Vec<Placed>,
    refs: Vec<PackedRef>,
    /// The statement whose own instruction was pushed last.
    counted: Option<[u32; 2]>,
    /// Register names a listing's `.loc ..., regs "..."` gives instructions, in the
    /// order [`spu_isa::disasm::named_regs`] lists them (`-`: none): by pc.
    given: Vec<(u32, Vec<String>)>,
}

impl VCode {
    /// Appends `v` (branching to label `target`, from statement `span`); fails when
    /// the instruction does not encode.
    pub fn push(&mut self, v: &VInstr, target: u32, span: &Span) -> Result<(), EncodingError> {
        let word = v.instr.encode()?;
        let to32 = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        let span = [to32(span.start), to32(span.end)];
        // A statement's first instruction of its own counts its executions; all
        // else the assembler added to it (helpers, the later parts of a spelling
        // that takes several instructions) is hidden.
        let hidden = v.helper || self.counted == Some(span);
        if !hidden {
            self.counted = Some(span);
        }
        self.placed.push(Placed {
            word,
            refs: to32(self.refs.len()),
            target,
            span,
            hidden,
        });
        self.refs.extend(v.refs.iter().map(PackedRef::pack));
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.placed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.placed.is_empty()
    }

    /// Whether instruction `pc` is one the assembler added to its statement (see
    /// [`spu_isa::format::InstrDebug::hidden`]).
    pub fn hidden(&self, pc: usize) -> bool {
        self.placed[pc].hidden
    }

    /// Marks the last instruction as a listing says: hidden or not, and the names of
    /// its registers.
    pub fn mark_last(&mut self, hidden: bool, names: Option<Vec<String>>) {
        let Some(last) = self.placed.len().checked_sub(1) else {
            return;
        };
        self.placed[last].hidden = hidden;
        if let Some(names) = names {
            self.given.push((last as u32, names));
        }
    }

    /// The names a listing gave instruction `pc`'s registers, if any.
    pub fn given_names(&self, pc: usize) -> Option<&[String]> {
        let i = self
            .given
            .binary_search_by_key(&(pc as u32), |g| g.0)
            .ok()?;
        Some(&self.given[i].1)
    }

    /// The statement instruction `pc` came from.
    pub fn span(&self, pc: usize) -> Span {
        let [a, b] = self.placed[pc].span;
        a as usize..b as usize
    }

    pub fn refs(&self, pc: usize) -> impl Iterator<Item = RegRef> + '_ {
        let end = self
            .placed
            .get(pc + 1)
            .map_or(self.refs.len(), |p| p.refs as usize);
        self.refs[self.placed[pc].refs as usize..end]
            .iter()
            .map(|r| r.unpack())
    }

    /// The words, branch targets resolved by `label_pc`, registers still
    /// placeholders.
    pub fn words(&self, label_pc: &dyn Fn(u32) -> u32) -> Vec<u64> {
        self.placed
            .iter()
            .map(|p| {
                if p.target == NO_LABEL {
                    return p.word;
                }
                let mut instr = crate::cfg::decode(p.word);
                if let Some(Operand::Target(t)) = instr.operands_mut().first_mut() {
                    *t = label_pc(p.target);
                }
                instr.encode().expect("a resolved branch encodes")
            })
            .collect()
    }

    /// The successors of every instruction of `words`, and with `colour` the code
    /// as the register allocator sees it (each word decoded once for both).
    pub fn analyse(
        &self,
        words: &[u64],
        colour: bool,
    ) -> (Vec<crate::cfg::Succ>, Option<crate::regalloc::Code>) {
        let mut succ = Vec::with_capacity(words.len());
        let mut code = colour.then(crate::regalloc::Code::default);
        let mut lists: [Vec<u32>; 3] = Default::default();
        let mut next: Vec<usize> = Vec::with_capacity(2);
        for (pc, word) in words.iter().enumerate() {
            let instr = crate::cfg::decode(*word);
            let s = crate::cfg::successor(pc, &instr, words.len());
            if let Some(code) = &mut code {
                uses_and_defs(&instr, self.refs(pc), &mut lists);
                next.clear();
                next.extend(s.iter());
                code.push(&lists[0], &lists[1], &lists[2], &next);
            }
            succ.push(s);
        }
        (succ, code)
    }

    /// Puts the physical registers into `words`, and into each guarded branch its
    /// reconvergence point: its immediate post-dominator `ipdom` (or none).
    pub fn place(
        &self,
        words: &mut [u64],
        phys: &dyn Fn(u32) -> u8,
        ipdom: &[Option<usize>],
    ) -> Result<(), (usize, EncodingError)> {
        for (pc, word) in words.iter_mut().enumerate() {
            let mut instr = crate::cfg::decode(*word);
            patch(&mut instr, self.refs(pc), phys);
            if instr.opcode.spec().flow == spu_isa::table::Flow::Branch
                && instr.guard != Guard::Always
            {
                instr.reconv = Some(ipdom[pc].map_or(spu_isa::NO_RECONV, |p| p as u32));
            }
            *word = instr.encode().map_err(|e| (pc, e))?;
        }
        Ok(())
    }
}
