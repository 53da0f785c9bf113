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

/// Why the code cannot be prepared: a form this emulator does not execute, or (only
/// damaged binaries get here: the reader validates encodings) a malformed operand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(
        "the binary is damaged: instruction {pc} cannot be executed: {what}; reassemble it with spu-asm"
    )]
    Damaged { pc: usize, what: String },
    #[error("instruction {pc}: {what}")]
    NotExecuted { pc: usize, what: String },
}

/// Decodes every instruction word.
pub fn decode_program(code: &[u64], symbols: SymbolAddresses) -> Result<Vec<Op>, DecodeError> {
    code.iter()
        .enumerate()
        .map(|(pc, &word)| {
            let instr = Instr::decode(word).map_err(|e| DecodeError::Damaged {
                pc,
                what: e.to_string(),
            })?;
            if let Some(what) = unsupported(&instr) {
                return Err(DecodeError::NotExecuted { pc, what });
            }
            let ty = instr.mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
            if let Err(what) = kind_of(&instr, ty) {
                return Err(DecodeError::NotExecuted { pc, what });
            }
            decode_instr(&instr, symbols).map_err(|what| DecodeError::Damaged { pc, what })
        })
        .collect()
}

/// The execution type of a 32-bit type: bit types behave as unsigned.
fn word_ty(t: Ty) -> Option<Ty> {
    match t {
        Ty::U32 | Ty::B32 => Some(Ty::U32),
        Ty::S32 => Some(Ty::S32),
        Ty::F32 => Some(Ty::F32),
        _ => None,
    }
}

/// Why this emulator cannot execute a form, if it cannot: it executes 32-bit forms
/// with IEEE default rounding.
fn unsupported(instr: &Instr) -> Option<String> {
    let m = &instr.mods;
    let what = spu_isa::disasm::full_mnemonic(instr);
    let bad_ty = [m.ty, m.src_ty]
        .into_iter()
        .flatten()
        .find(|t| word_ty(*t).is_none());
    if let Some(t) = bad_ty {
        return Some(format!(
            "`{what}`: .{t} operands are not executed by this emulator (it executes 32-bit types)"
        ));
    }
    let modifier = [
        m.rnd.filter(|r| *r != spu_isa::Rnd::Rn).map(|r| r.name()),
        m.ftz.map(|f| f.name()),
        m.sat.map(|f| f.name()),
        m.prec.map(|f| f.name()),
        m.vec.map(|f| f.name()),
    ]
    .into_iter()
    .flatten()
    .next();
    if let Some(name) = modifier {
        return Some(format!(
            "`{what}`: `.{name}` is not executed by this emulator"
        ));
    }
    instr
        .operands()
        .iter()
        .any(|o| matches!(o, Operand::Mem { wide: true, .. }))
        .then(|| {
            format!("`{what}` with a 64-bit address register is not executed by this emulator")
        })
}

fn decode_instr(instr: &Instr, symbols: SymbolAddresses) -> Result<Op, String> {
    let spec = instr.opcode.spec();
    let mods = instr.mods;
    let ty = mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
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
            OperandTy::Src => mods.src_ty.and_then(word_ty).unwrap_or(Ty::U32),
            _ => Ty::U32,
        };
        match (name, kind, *operand) {
            ("d", _, Operand::Reg(r)) => op.dst = Some(r),
            ("p", _, Operand::Pred(p)) if instr.opcode.spec().mnemonic == "setp" => {
                op.pdst = Some(p)
            }
            ("p", _, Operand::Pred(p)) => op.pred_src = Some(p),
            (_, OperandKind::Mem, Operand::Mem { base, offset, .. }) => {
                op.mem_base = base;
                op.mem_offset = i32::from(offset);
            }
            (_, OperandKind::Target, Operand::Target(_)) => {}
            (_, _, Operand::Reg(r)) => values.push(Src::Reg(r)),
            (_, _, Operand::Imm16(raw)) => {
                values.push(Src::Imm(Operand::widen_imm16(raw, operand_ty) as u32))
            }
            (_, _, Operand::Imm32(v)) => values.push(Src::Imm(v)),
            (_, _, Operand::Special(s)) => values.push(Src::Special(s)),
            (_, _, Operand::Symbol { sym, offset }) => {
                let base = match sym {
                    SymbolRef::Buffer(i) => *symbols
                        .buffers
                        .get(usize::from(i))
                        .ok_or(format!("buffer #{i} is not declared"))?,
                    SymbolRef::Shared(i) => *symbols
                        .shared
                        .get(usize::from(i))
                        .ok_or(format!("shared array #{i} is not declared"))?,
                };
                values.push(Src::Imm(base.wrapping_add(offset as u32)));
            }
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
        Ty::S32 => s,
        Ty::F32 => f,
        _ => u,
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
        "cvt" => Kind::Un(UnOp::Cvt(ty, m.src_ty.and_then(word_ty).unwrap_or(ty))),
        "setp" => Kind::Setp(m.cmp.ok_or("setp without a comparison")?, ty),
        "selp" => Kind::Selp,
        "mov" => Kind::Mov,
        "ld" => Kind::Ld(m.space.ok_or("ld without a state space")?),
        "st" => Kind::St(m.space.ok_or("st without a state space")?),
        "atom.global" => match m.atom.ok_or("atom without an operation")? {
            a @ (AtomOp::Add | AtomOp::Min | AtomOp::Max | AtomOp::Exch) => Kind::Atom(a, ty),
            other => {
                return Err(format!(
                    "`atom.global.{other}` is not executed by this emulator"
                ));
            }
        },
        "atom.global.cas" => Kind::Cas,
        "bra" => match instr.operands().first() {
            Some(Operand::Target(t)) => Kind::Bra {
                target: *t,
                reconv: instr.reconv,
            },
            _ => return Err("bra without a target".into()),
        },
        "exit" | "ret" => Kind::Exit,
        "membar" | "fence" => Kind::Nop,
        "nop" => Kind::Nop,
        "bar.sync" => Kind::BarSync,
        "bar.blocksync" => Kind::BlockSync(m.side),
        other => return Err(format!("`{other}` is not executed by this emulator")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spu_isa::{Mods, Opcode};

    /// Rows this emulator refuses at load, with a message naming the instruction.
    const NOT_EXECUTED: &[&str] = &[
        "mul.wide",
        "mad.wide",
        "ldu",
        "rsqrt",
        "cvta",
        "ex2",
        "lg2",
        "sin",
        "cos",
        "and.pred",
        "or.pred",
        "xor.pred",
        "not.pred",
        "mov.pred",
        "shfl.sync",
        "vote.sync",
        "vote.sync.ballot",
        "activemask",
        "popc",
        "clz",
        "brev",
        "bfind",
        "bfe",
        "bfi",
        "prmt",
        "shf",
        "lop3",
    ];

    #[test]
    fn every_table_row_has_semantics_or_a_clear_refusal() {
        for op in Opcode::all() {
            let spec = op.spec();
            let mut mods = Mods::default();
            for (kind, allowed, optional) in spec.modifiers() {
                if optional {
                    continue;
                }
                // The first 32-bit type the row allows, else its first value.
                let word = [Ty::U32, Ty::S32, Ty::F32, Ty::B32]
                    .into_iter()
                    .map(|t| t.code())
                    .find(|c| {
                        matches!(kind, spu_isa::table::ModKind::Type) && allowed & (1 << c) != 0
                    });
                mods.set(kind, word.unwrap_or(allowed.trailing_zeros() as u8));
            }
            if spec.mnemonic == "mul" || spec.mnemonic == "mad" {
                mods.half = Some(spu_isa::Half::Lo);
            }
            if spec.mnemonic == "cvt" {
                mods.src_ty = Some(Ty::S32);
            }
            let fake = Instr::new(
                op,
                Guard::Always,
                mods,
                &vec![Operand::Target(0); spec.operand_count()],
            )
            .unwrap();
            let ty = mods.ty.and_then(word_ty).unwrap_or(Ty::U32);
            let result = unsupported(&fake).map_or_else(|| kind_of(&fake, ty), Err);
            if NOT_EXECUTED.contains(&spec.mnemonic) {
                let why = result.expect_err(spec.mnemonic);
                assert!(why.contains(spec.mnemonic), "{why}");
            } else {
                assert!(result.is_ok(), "{}: {result:?}", spec.mnemonic);
            }
        }
    }

    #[test]
    fn wide_and_rounded_forms_are_refused_with_their_name() {
        let add = Opcode::from_mnemonic("add").unwrap();
        let ops = [Operand::Reg(0), Operand::Reg(2), Operand::Reg(4)];
        let wide = Instr::new(
            add,
            Guard::Always,
            Mods {
                ty: Some(Ty::F64),
                ..Mods::default()
            },
            &ops,
        )
        .unwrap();
        assert!(unsupported(&wide).unwrap().contains("add.f64"));
        let rz = Instr::new(
            add,
            Guard::Always,
            Mods {
                ty: Some(Ty::F32),
                rnd: Some(spu_isa::Rnd::Rz),
                ..Mods::default()
            },
            &ops,
        )
        .unwrap();
        assert!(unsupported(&rz).unwrap().contains(".rz"));
    }
}
