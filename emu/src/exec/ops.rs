//! The kernel's code decoded once into [`Op`]s: operands resolved to registers or
//! widened immediates, symbols to addresses, and the execution class (timing,
//! energy, units) taken from the ISA table. The timing loop never decodes again.

use spu_isa::{
    AtomOp, Cmp, ExecClass, Guard, Instr, Operand, Side, Space, Special, SymbolRef, Ty,
    table::{OperandKind, OperandTy},
};

/// A source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    None,
    Reg(u8),
    /// A 32-bit bit pattern (immediates and resolved symbol addresses).
    Imm(u32),
    Special(Special),
}

/// Two-operand arithmetic, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    AddI,
    AddF,
    SubI,
    SubF,
    MulLo,
    MulHiU,
    MulHiS,
    MulF,
    DivU,
    DivS,
    DivF,
    RemU,
    RemS,
    MinU,
    MinS,
    MinF,
    MaxU,
    MaxS,
    MaxF,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
}

/// One-operand arithmetic, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    AbsS,
    AbsF,
    NegS,
    NegF,
    Not,
    Rcp,
    Sqrt,
    /// `cvt`: destination type, source type.
    Cvt(Ty, Ty),
}

/// What an instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bin(BinOp),
    Un(UnOp),
    /// `mad.lo`: d = a * b + c.
    MadLo,
    /// `fma.f32`.
    Fma,
    Setp(Cmp, Ty),
    /// d = p ? a : b, with p in `pred_src`.
    Selp,
    Mov,
    Ld(Space),
    /// Stores `a` to the address.
    St(Space),
    /// Combines the word at the address with `a`.
    Atom(AtomOp, Ty),
    /// Compare-and-swap: compare with `a`, store `b`.
    Cas,
    Bra {
        target: u32,
        reconv: Option<u32>,
    },
    Exit,
    Nop,
    BarSync,
    BlockSync(Option<Side>),
}

/// A decoded instruction ready to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: Kind,
    pub guard: Guard,
    /// General register written.
    pub dst: Option<u8>,
    /// Predicate written (`setp`).
    pub pdst: Option<u8>,
    pub a: Src,
    pub b: Src,
    pub c: Src,
    /// Predicate read by `selp`.
    pub pred_src: Option<u8>,
    /// Address `[base + offset]` of memory instructions.
    pub mem_base: Option<u8>,
    pub mem_offset: i32,
    pub class: ExecClass,
    /// General registers the scoreboard checks (sources and destination).
    pub deps: [u8; 5],
    pub n_deps: u8,
    /// Predicates the scoreboard checks (guard, `selp` source, `setp` destination).
    pub pdeps: [u8; 3],
    pub n_pdeps: u8,
}

impl Op {
    /// General registers the instruction reads.
    pub fn reg_uses(&self) -> impl Iterator<Item = u8> + '_ {
        [self.a, self.b, self.c]
            .into_iter()
            .filter_map(|s| match s {
                Src::Reg(r) => Some(r),
                _ => None,
            })
            .chain(self.mem_base)
    }

    /// Predicates the instruction reads (guard and `selp`).
    pub fn pred_uses(&self) -> impl Iterator<Item = u8> + '_ {
        let guard = match self.guard {
            Guard::Always => None,
            Guard::If(p) | Guard::IfNot(p) => Some(p),
        };
        guard.into_iter().chain(self.pred_src)
    }

    /// Fills the scoreboard lists from the operands.
    fn with_deps(mut self) -> Op {
        let regs: Vec<u8> = self.reg_uses().chain(self.dst).collect();
        let preds: Vec<u8> = self.pred_uses().chain(self.pdst).collect();
        self.n_deps = regs.len() as u8;
        self.deps[..regs.len()].copy_from_slice(&regs);
        self.n_pdeps = preds.len() as u8;
        self.pdeps[..preds.len()].copy_from_slice(&preds);
        self
    }

    /// Number of register-file operand accesses per thread (reads plus writes).
    pub fn register_accesses(&self) -> u32 {
        (self.reg_uses().count() + usize::from(self.dst.is_some())) as u32
    }
}

/// Addresses symbols resolve to.
#[derive(Debug, Clone, Copy)]
pub struct SymbolAddresses<'a> {
    /// Byte address of each buffer.
    pub buffers: &'a [u32],
    /// Byte offset of each shared array.
    pub shared: &'a [u32],
}

/// Why the code cannot be prepared (only damaged binaries get here: the reader
/// validates encodings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("instruction {pc} cannot be executed: {what}")]
pub struct DecodeError {
    pub pc: usize,
    pub what: String,
}

/// Decodes every instruction word.
pub fn decode_program(code: &[u64], symbols: SymbolAddresses) -> Result<Vec<Op>, DecodeError> {
    code.iter()
        .enumerate()
        .map(|(pc, &word)| {
            let instr = Instr::decode(word).map_err(|e| DecodeError {
                pc,
                what: e.to_string(),
            })?;
            decode_instr(&instr, symbols).map_err(|what| DecodeError { pc, what })
        })
        .collect()
}

fn decode_instr(instr: &Instr, symbols: SymbolAddresses) -> Result<Op, String> {
    let spec = instr.opcode.spec();
    let mods = instr.mods;
    let ty = mods.ty.unwrap_or(Ty::U32);
    let mut op = Op {
        kind: Kind::Nop,
        guard: instr.guard,
        dst: None,
        pdst: None,
        a: Src::None,
        b: Src::None,
        c: Src::None,
        pred_src: None,
        mem_base: None,
        mem_offset: 0,
        class: instr.exec_class(),
        deps: [0; 5],
        n_deps: 0,
        pdeps: [0; 3],
        n_pdeps: 0,
    };
    let mut values = Vec::new();
    for ((name, kind, oty, _role), operand) in spec.operands().zip(instr.operands()) {
        let operand_ty = match oty {
            OperandTy::Main => ty,
            OperandTy::Src => mods.src_ty.unwrap_or(Ty::U32),
            _ => Ty::U32,
        };
        match (name, kind, *operand) {
            ("d", _, Operand::Reg(r)) => op.dst = Some(r),
            ("p", _, Operand::Pred(p)) if instr.opcode.spec().mnemonic == "setp" => {
                op.pdst = Some(p)
            }
            ("p", _, Operand::Pred(p)) => op.pred_src = Some(p),
            (_, OperandKind::Mem, Operand::Mem { base, offset }) => {
                op.mem_base = base;
                op.mem_offset = i32::from(offset);
            }
            (_, OperandKind::Target, Operand::Target(_)) => {}
            (_, _, Operand::Reg(r)) => values.push(Src::Reg(r)),
            (_, _, Operand::Imm16(raw)) => {
                values.push(Src::Imm(Operand::widen_imm16(raw, operand_ty)))
            }
            (_, _, Operand::Imm32(v)) => values.push(Src::Imm(v)),
            (_, _, Operand::Special(s)) => values.push(Src::Special(s)),
            (_, _, Operand::Symbol(SymbolRef::Buffer(i))) => values.push(Src::Imm(
                *symbols
                    .buffers
                    .get(usize::from(i))
                    .ok_or(format!("buffer #{i} is not declared"))?,
            )),
            (_, _, Operand::Symbol(SymbolRef::Shared(i))) => values.push(Src::Imm(
                *symbols
                    .shared
                    .get(usize::from(i))
                    .ok_or(format!("shared array #{i} is not declared"))?,
            )),
            (name, _, other) => return Err(format!("operand `{name}` is malformed ({other:?})")),
        }
    }
    let mut it = values.into_iter();
    op.a = it.next().unwrap_or(Src::None);
    op.b = it.next().unwrap_or(Src::None);
    op.c = it.next().unwrap_or(Src::None);
    op.kind = kind_of(instr, ty)?;
    Ok(op.with_deps())
}

fn kind_of(instr: &Instr, ty: Ty) -> Result<Kind, String> {
    use BinOp as B;
    let m = instr.mods;
    let by_ty = |u: B, s: B, f: B| match ty {
        Ty::U32 => u,
        Ty::S32 => s,
        Ty::F32 => f,
    };
    let mnemonic = instr.opcode.spec().mnemonic;
    Ok(match mnemonic {
        "add" => Kind::Bin(by_ty(B::AddI, B::AddI, B::AddF)),
        "sub" => Kind::Bin(by_ty(B::SubI, B::SubI, B::SubF)),
        "mul" => Kind::Bin(match (ty, m.half) {
            (Ty::F32, _) => B::MulF,
            (_, Some(spu_isa::Half::Hi)) if ty == Ty::S32 => B::MulHiS,
            (_, Some(spu_isa::Half::Hi)) => B::MulHiU,
            _ => B::MulLo,
        }),
        "mad" => Kind::MadLo,
        "fma" => Kind::Fma,
        "div" => Kind::Bin(by_ty(B::DivU, B::DivS, B::DivF)),
        "rem" => Kind::Bin(by_ty(B::RemU, B::RemS, B::RemS)),
        "min" => Kind::Bin(by_ty(B::MinU, B::MinS, B::MinF)),
        "max" => Kind::Bin(by_ty(B::MaxU, B::MaxS, B::MaxF)),
        "abs" => Kind::Un(if ty == Ty::F32 {
            UnOp::AbsF
        } else {
            UnOp::AbsS
        }),
        "neg" => Kind::Un(if ty == Ty::F32 {
            UnOp::NegF
        } else {
            UnOp::NegS
        }),
        "and" => Kind::Bin(B::And),
        "or" => Kind::Bin(B::Or),
        "xor" => Kind::Bin(B::Xor),
        "not" => Kind::Un(UnOp::Not),
        "shl" => Kind::Bin(B::Shl),
        "shr" => Kind::Bin(if ty == Ty::S32 { B::ShrS } else { B::ShrU }),
        "rcp" => Kind::Un(UnOp::Rcp),
        "sqrt" => Kind::Un(UnOp::Sqrt),
        "cvt" => Kind::Un(UnOp::Cvt(ty, m.src_ty.unwrap_or(ty))),
        "setp" => Kind::Setp(m.cmp.ok_or("setp without a comparison")?, ty),
        "selp" => Kind::Selp,
        "mov" => Kind::Mov,
        "ld" => Kind::Ld(m.space.ok_or("ld without a state space")?),
        "st" => Kind::St(m.space.ok_or("st without a state space")?),
        "atom.global" => Kind::Atom(m.atom.ok_or("atom without an operation")?, ty),
        "atom.global.cas" => Kind::Cas,
        "bra" => match instr.operands().first() {
            Some(Operand::Target(t)) => Kind::Bra {
                target: *t,
                reconv: instr.reconv,
            },
            _ => return Err("bra without a target".into()),
        },
        "exit" => Kind::Exit,
        "nop" => Kind::Nop,
        "bar.sync" => Kind::BarSync,
        "bar.blocksync" => Kind::BlockSync(m.side),
        other => return Err(format!("`{other}` has no execution semantics")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spu_isa::{Mods, Opcode};

    #[test]
    fn every_table_row_has_semantics() {
        for op in Opcode::all() {
            let spec = op.spec();
            let ty = spec
                .modifier(spu_isa::table::ModKind::Type)
                .map(|(allowed, _)| Ty::ALL[allowed.trailing_zeros() as usize]);
            let fake = Instr::new(
                op,
                Guard::Always,
                Mods {
                    ty,
                    src_ty: ty,
                    cmp: Some(Cmp::Eq),
                    space: Some(Space::Global),
                    atom: Some(AtomOp::Add),
                    ..Mods::default()
                },
                &vec![Operand::Target(0); spec.operand_count()],
            )
            .unwrap();
            assert!(
                kind_of(&fake, ty.unwrap_or(Ty::U32)).is_ok(),
                "{}",
                spec.mnemonic
            );
        }
    }
}
