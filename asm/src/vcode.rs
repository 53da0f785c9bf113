//! Code over virtual registers: instructions whose register operands are recorded
//! as references to virtual registers (declared ones and the assembler's own
//! temporaries), placed onto physical registers by [`crate::regalloc`] or by the
//! declarations' own layout, then patched into machine instructions.

use crate::regalloc::{Class, Inst};
use spu_isa::table::Role;
use spu_isa::{Guard, Instr, Operand};

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
    /// A branch target still to resolve, by label name.
    pub target: Option<String>,
}

/// The virtual registers of a kernel.
#[derive(Debug, Clone, Default)]
pub struct VRegs {
    pub classes: Vec<Class>,
    /// Where the declarations put each declared register (`None` for temporaries).
    pub declared_at: Vec<Option<u8>>,
}

impl VRegs {
    /// A new virtual register.
    pub fn add(&mut self, class: Class, declared_at: Option<u8>) -> u32 {
        self.classes.push(class);
        self.declared_at.push(declared_at);
        (self.classes.len() - 1) as u32
    }

    /// True if some register of this file (predicates or general) is a temporary.
    pub fn has_temps(&self, pred: bool) -> bool {
        self.classes
            .iter()
            .zip(&self.declared_at)
            .any(|(c, d)| (*c == Class::Pred) == pred && d.is_none())
    }
}

impl VInstr {
    /// What the allocator needs to know: registers read, written, partly written.
    pub fn uses_and_defs(&self) -> Inst {
        let spec = self.instr.opcode.spec();
        let roles: Vec<Role> = spec.operands().map(|o| o.3).collect();
        let guarded = self.instr.guard != Guard::Always;
        let mut inst = Inst::default();
        for r in &self.refs {
            let role = match r.slot {
                Slot::Operand(k) | Slot::Shadow(k) => roles.get(k).copied().unwrap_or(Role::Use),
                Slot::Base(_) | Slot::Guard => Role::Use,
            };
            match role {
                Role::Use => inst.uses.push(r.vreg),
                // A half, or a write some lanes skip, keeps the rest of the old value.
                Role::Def if guarded || r.part => inst.partial_defs.push(r.vreg),
                Role::Def => inst.defs.push(r.vreg),
            }
        }
        inst
    }

    /// Replaces placeholder registers by physical ones.
    pub fn patch(&mut self, phys: &dyn Fn(u32) -> u8) {
        for r in &self.refs {
            let p = phys(r.vreg).wrapping_add(r.offset);
            match r.slot {
                Slot::Guard => {
                    self.instr.guard = match self.instr.guard {
                        Guard::IfNot(_) => Guard::IfNot(p),
                        _ => Guard::If(p),
                    }
                }
                Slot::Operand(k) => {
                    if let Some(op) = self.instr.operands_mut().get_mut(k) {
                        *op = match *op {
                            Operand::Pred(_) => Operand::Pred(p),
                            Operand::PredNot(_) => Operand::PredNot(p),
                            _ => Operand::Reg(p),
                        };
                    }
                }
                Slot::Base(k) => {
                    if let Some(Operand::Mem { base, .. }) = self.instr.operands_mut().get_mut(k) {
                        *base = Some(p);
                    }
                }
                Slot::Shadow(_) => {}
            }
        }
    }
}
