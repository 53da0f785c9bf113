//! Turns one instruction statement into an [`Instr`]: resolves the mnemonic and its
//! modifiers against the ISA table and checks each operand's kind, type, width and
//! range, with a precise span and help for every mistake.

use crate::ast::{Expr, Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::eval::const_bits64;
use crate::lexer::Span;
use crate::regalloc::Class;
use crate::vcode::{RegRef, Slot, VInstr, VRegs};
use spu_io::suggest::closest;
use spu_isa::format::RegTy;
use spu_isa::table::OperandKind;
use spu_isa::{
    Guard, Instr, Mods, Opcode, Operand, SYMBOL_OFFSET_RANGE, Special, Ty, operand_regs,
    operand_type, pack_shfl_c,
};

mod immediates;
mod memory;
mod mnemonic;
mod pack;
mod ptx;
mod scope;
mod wide;

use immediates::*;
use mnemonic::*;
use scope::RegUse;
pub use scope::{Bound, EntryArg, Field, RegInfo, Scope, StructArg};

/// Turns instruction statements into [`VInstr`]s: the checks above, plus the
/// machine instructions a statement may need around it (immediates the machine
/// cannot hold go into temporaries; vector operands go through a temporary group
/// when their registers are not already consecutive and aligned).
pub struct Lowering<'a> {
    pub scope: &'a Scope,
    pub vregs: &'a mut VRegs,
    /// Registers are coloured by the allocator (no declared layout to keep).
    pub colour: bool,
    /// The statement comes from a `.ptx` file (PTX's forms, not the `.spu` dialect's).
    pub ptx: bool,
}

/// Per-statement state.
struct Stmt {
    refs: Vec<RegRef>,
    pre: Vec<VInstr>,
    post: Vec<VInstr>,
    target: Option<u32>,
}

impl Lowering<'_> {
    /// Checks one instruction statement and lowers it.
    pub fn instr(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<AstOperand<'_>>],
        stmt_span: &Span,
    ) -> Result<Vec<VInstr>, Vec<Diagnostic>> {
        let operands: Vec<&Spanned<AstOperand<'_>>> = operands.iter().collect();
        if let Some(done) = self.ptx_spelling(guard, mnemonic, &operands, stmt_span) {
            return done;
        }
        self.machine_instr(guard, mnemonic, &operands, stmt_span)
    }

    /// Lowers a statement whose mnemonic names a row of the ISA table.
    pub(crate) fn machine_instr(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[&Spanned<AstOperand<'_>>],
        stmt_span: &Span,
    ) -> Result<Vec<VInstr>, Vec<Diagnostic>> {
        let text = mnemonic.node;
        let (op, mods) = resolve_mnemonic(text, &mnemonic.span).map_err(|d| vec![d])?;
        let spec = op.spec();
        let mut errors = Vec::new();
        let mut st = Stmt {
            refs: Vec::new(),
            pre: Vec::new(),
            post: Vec::new(),
            target: None,
        };
        let guard = match guard {
            None => Guard::Always,
            Some(g) => match self.pred(g.pred.node, &g.pred.span) {
                Ok(p) => {
                    st.refs.push(RegRef {
                        slot: Slot::Guard,
                        vreg: p,
                        offset: 0,
                        part: false,
                    });
                    if g.negated {
                        Guard::IfNot(0)
                    } else {
                        Guard::If(0)
                    }
                }
                Err(d) => {
                    errors.push(d);
                    Guard::Always
                }
            },
        };
        // `d|p` is one source operand that fills two fields: the register, then the
        // optional predicate field that follows it in the row.
        let mut fields = Vec::with_capacity(spec.operand_count());
        let mut source = operands.iter().copied();
        let mut pending_pred: Option<Spanned<AstOperand<'_>>> = None;
        for (k, (name, kind, oty, _)) in spec.operands().enumerate() {
            if kind == OperandKind::OptPred {
                match pending_pred.take() {
                    Some(p) => match self.operand(op, k, name, kind, None, 1, &mods, &p, &mut st) {
                        Ok(v) => fields.push(Some(v)),
                        Err(d) => {
                            errors.push(d);
                            fields.push(None);
                        }
                    },
                    None => fields.push(Some(Operand::Absent)),
                }
                continue;
            }
            if let Some(p) = pending_pred.take() {
                errors.push(
                    Diagnostic::error("`|%p` is not allowed here", p.span.clone())
                        .label("only a shuffle's destination takes a predicate")
                        .help(format!("for example: `{}`", spec.example)),
                );
            }
            let Some(operand) = source.next() else {
                errors.push(operand_count_error(op, operands.len(), stmt_span.clone()));
                return Err(errors);
            };
            let split;
            let operand = match &operand.node {
                AstOperand::RegPred(r, p) => {
                    pending_pred = Some(Spanned {
                        node: AstOperand::Register(p.node),
                        span: p.span.clone(),
                    });
                    split = Spanned {
                        node: AstOperand::Register(r),
                        span: operand.span.start..p.span.start.saturating_sub(1),
                    };
                    &split
                }
                _ => operand,
            };
            let want = operand_type(oty, &mods);
            let regs = operand_regs(oty, &mods);
            match self.operand(op, k, name, kind, want, regs, &mods, operand, &mut st) {
                Ok(v) => fields.push(Some(v)),
                Err(d) => {
                    errors.push(d);
                    fields.push(None);
                }
            }
        }
        if let Some(p) = pending_pred.take() {
            errors.push(
                Diagnostic::error("`|%p` is not allowed here", p.span.clone())
                    .label("only a shuffle's destination takes a predicate"),
            );
        }
        if let Some(extra) = source.next() {
            errors.push(operand_count_error(
                op,
                operands.len(),
                extra.span.start..stmt_span.end,
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let values: Vec<Operand> = fields.into_iter().flatten().collect();
        let instr = Instr::new(op, guard, mods, &values)
            .map_err(|e| vec![Diagnostic::error(e.to_string(), stmt_span.clone())])?;
        // Helper instructions run under the statement's guard too.
        let guard_ref = st.refs.iter().find(|r| r.slot == Slot::Guard).copied();
        let guarded = |mut v: VInstr| {
            v.helper = true;
            if let Some(g) = guard_ref {
                v.instr.guard = guard;
                v.refs.push(g);
            }
            v
        };
        let mut out: Vec<VInstr> = st.pre.into_iter().map(guarded).collect();
        out.push(VInstr {
            instr,
            refs: st.refs,
            target: st.target,
            helper: false,
        });
        out.extend(st.post.into_iter().map(guarded));
        Ok(out)
    }

    fn pred(&self, name: &str, span: &Span) -> Result<u32, Diagnostic> {
        match self.scope.reg(name) {
            Some((
                RegInfo {
                    ty: RegTy::Pred, ..
                },
                u,
            )) => Ok(u.vreg),
            Some((
                RegInfo {
                    ty: RegTy::Val(t), ..
                },
                _,
            )) => Err(Diagnostic::error(
                format!("`%{name}` is a .{t} register, not a predicate"),
                span.clone(),
            )
            .label("expected a .pred register")
            .help("set a predicate with `setp`")),
            None => Err(undeclared(name, span, self.scope)),
        }
    }

    /// A value register of a type compatible with `want` (a 64-bit type needs a
    /// 64-bit register; 8- and 16-bit types take 16- or 32-bit registers).
    fn value_reg(
        &self,
        name: &str,
        span: &Span,
        want: Option<Ty>,
        mnemonic: &str,
    ) -> Result<(RegUse, Ty), Diagnostic> {
        if Special::from_name(name).is_some() {
            return Err(Diagnostic::error(
                format!("special register `%{name}` cannot be used here"),
                span.clone(),
            )
            .label("special registers are read only by `mov`")
            .help(format!("copy it first: `mov.u32 %r0, %{name};`")));
        }
        match self.scope.reg(name) {
            Some((
                RegInfo {
                    ty: RegTy::Val(t), ..
                },
                u,
            )) => match want {
                Some(w) if !accepts(w, t) => Err(Diagnostic::error(
                    format!("register `%{name}` is .{t} but `{mnemonic}` needs .{w} here"),
                    span.clone(),
                )
                .label(format!("declared .{t}"))
                .help(if t.bits() != w.bits() && t.bits().max(w.bits()) == 64 {
                    format!("convert between 32 and 64 bits with `cvt.{w}.{t}`")
                } else if t.is_float() != w.is_float() {
                    format!("convert it with `cvt.{w}.{t}` first")
                } else {
                    "use a register of the right type".to_string()
                })),
                _ => Ok((u, t)),
            },
            Some((
                RegInfo {
                    ty: RegTy::Pred, ..
                },
                _,
            )) => Err(Diagnostic::error(
                format!("`%{name}` is a predicate, not a value register"),
                span.clone(),
            )
            .label("expected a value register")
            .help("turn a predicate into a value with `selp`")),
            None => Err(undeclared(name, span, self.scope)),
        }
    }

    /// A temporary holding an immediate, set by a `mov` before the instruction.
    fn materialise(&mut self, ty: Ty, bits: u64, st: &mut Stmt) -> Operand {
        let class = if ty.bits() == 64 {
            Class::Pair
        } else {
            Class::Single
        };
        let t = self.vregs.add(class, None);
        let mov = Opcode::Mov;
        let mut push = |ty: Ty, raw: u32, offset: u8, part: bool| {
            let mods = Mods {
                ty: Some(ty),
                ..Mods::default()
            };
            if let Ok(instr) = Instr::new(
                mov,
                Guard::Always,
                mods,
                &[Operand::Reg(0), Operand::Imm32(raw)],
            ) {
                st.pre.push(VInstr {
                    instr,
                    refs: vec![RegRef {
                        slot: Slot::Operand(0),
                        vreg: t,
                        offset,
                        part,
                    }],
                    target: None,
                    helper: false,
                });
            }
        };
        let fits32 = |ty: Ty| {
            if ty == Ty::F64 {
                (bits as u32 == 0).then_some((bits >> 32) as u32)
            } else {
                (Operand::widen_imm32(bits as u32, ty) == bits).then_some(bits as u32)
            }
        };
        match (ty.bits(), fits32(ty)) {
            (64, Some(raw)) => push(ty, raw, 0, false),
            (64, None) => {
                push(Ty::B32, bits as u32, 0, true);
                push(Ty::B32, (bits >> 32) as u32, 1, true);
            }
            _ => {
                let shift = 64 - ty.bits();
                let raw = if ty.is_signed() {
                    (((bits << shift) as i64) >> shift) as u32
                } else {
                    bits as u32
                };
                // No `mov` writes 8 bits: a byte's value goes through a 16-bit move
                // (a store writes its low byte); a narrow signed value is moved as
                // .s16, the type its sign-extended bits are canonical for.
                push(
                    if ty.is_float() {
                        ty
                    } else if ty.is_signed() && ty.bits() < 32 {
                        Ty::S16
                    } else {
                        Ty::b(ty.bits().max(16))
                    },
                    raw,
                    0,
                    false,
                )
            }
        }
        st.refs.push(RegRef {
            slot: Slot::Operand(usize::MAX),
            vreg: t,
            offset: 0,
            part: false,
        });
        Operand::Reg(0)
    }

    #[allow(clippy::too_many_arguments)]
    fn operand(
        &mut self,
        op: Opcode,
        k: usize,
        name: &str,
        kind: OperandKind,
        want: Option<Ty>,
        regs: u8,
        mods: &Mods,
        operand: &Spanned<AstOperand<'_>>,
        st: &mut Stmt,
    ) -> Result<Operand, Diagnostic> {
        let spec = op.spec();
        let span = &operand.span;
        let wrong = |what: &str| {
            Diagnostic::error(
                format!(
                    "operand `{name}` of `{}` must be {}",
                    spec.mnemonic,
                    a_or_an(kind.describe())
                ),
                span.clone(),
            )
            .label(format!("found {what}"))
            .help(format!("for example: `{}`", spec.example))
        };
        let found = match &operand.node {
            AstOperand::Register(_) | AstOperand::RegPred(..) => "a register",
            AstOperand::NotPred(_) => "a negated predicate",
            AstOperand::Vector(_) => "a vector",
            AstOperand::Mem { .. } => "an address",
            AstOperand::Expr(Spanned {
                node: Expr::Name(_),
                ..
            }) => "a name",
            AstOperand::Expr(_) => "an immediate",
        };
        let reg = |this: &mut Self, r: &str, st: &mut Stmt| -> Result<Operand, Diagnostic> {
            let (u, _) = this.value_reg(r, span, want, spec.mnemonic)?;
            let size = want.map_or(1, Ty::regs);
            if regs > size {
                return Err(Diagnostic::error(
                    format!(
                        "`{}` needs a vector of {} registers here",
                        spec.mnemonic,
                        regs / size
                    ),
                    span.clone(),
                )
                .label("found one register")
                .help("write the registers in braces: `{%f0, %f1, %f2, %f3}`"));
            }
            st.refs.push(RegRef {
                slot: Slot::Operand(k),
                vreg: u.vreg,
                offset: u.offset,
                part: u.part,
            });
            Ok(Operand::Reg(0))
        };
        let pred_ref = |st: &mut Stmt, p: u32| {
            st.refs.push(RegRef {
                slot: Slot::Operand(k),
                vreg: p,
                offset: 0,
                part: false,
            })
        };
        let result = match (kind, &operand.node) {
            (
                OperandKind::Pred | OperandKind::PredNeg | OperandKind::OptPred,
                AstOperand::Register(r),
            ) => {
                let p = self.pred(r, span)?;
                pred_ref(st, p);
                Ok(Operand::Pred(0))
            }
            (OperandKind::PredNeg, AstOperand::NotPred(r)) => {
                let p = self.pred(r, span)?;
                pred_ref(st, p);
                Ok(Operand::PredNot(0))
            }
            (
                OperandKind::Reg
                | OperandKind::RegOrImm
                | OperandKind::RegOrSmall
                | OperandKind::ShflC
                | OperandKind::Mask,
                AstOperand::Register(r),
            ) => reg(self, r, st),
            (OperandKind::Reg, AstOperand::Vector(items)) => {
                self.vector(items, want, regs, spec, k, span, st)
            }
            // Immediates the machine cannot hold in the field go into a temporary.
            (OperandKind::Reg, AstOperand::Expr(e))
                if !matches!(e.node, Expr::Name(_)) && regs <= 2 =>
            {
                let ty = want.unwrap_or(Ty::U32);
                let bits = const_bits64(e, ty, &self.scope.params)?;
                Ok(self.materialise(ty, bits, st))
            }
            (OperandKind::RegOrImm, AstOperand::Expr(e)) => {
                let ty = want.unwrap_or(Ty::U32);
                match imm16(e, ty, self.scope) {
                    Ok(v) => Ok(Operand::Imm16(v)),
                    Err(d) if matches!(e.node, Expr::Name(_)) => Err(d),
                    Err(_) => {
                        let bits = const_bits64(e, ty, &self.scope.params)?;
                        Ok(self.materialise(ty, bits, st))
                    }
                }
            }
            (OperandKind::RegOrSmall | OperandKind::Imm8, AstOperand::Expr(e)) => {
                Ok(Operand::Imm(small(e, 255, self.scope)?))
            }
            (OperandKind::ShflC, AstOperand::Expr(e)) => {
                let v = small(e, 0xffff_ffff, self.scope)?;
                match pack_shfl_c(v) {
                    Some(_) => Ok(Operand::Imm(v)),
                    None => Err(Diagnostic::error(
                        format!("`{v:#x}` is not a shuffle clamp and segment mask"),
                        span.clone(),
                    )
                    .label("expected clamp (bits 0..5) | segment mask (bits 8..13) << 8")
                    .help("full-warp shuffles use 31 (`down`, `bfly`, `idx`) or 0 (`up`)")),
                }
            }
            (OperandKind::Mask, AstOperand::Expr(e)) => {
                match const_bits64(e, Ty::B32, &self.scope.params)? {
                    0xffff_ffff => Ok(Operand::Imm(u32::MAX)),
                    v => Ok(self.materialise(Ty::B32, v, st)),
                }
            }
            (OperandKind::MovSrc, AstOperand::Register(r)) => match Special::from_name(r) {
                Some(s) if want.is_some_and(|t| t.is_float() || t.bits() != 32) => {
                    Err(Diagnostic::error(
                        format!("special register `%{s}` is 32 bits wide"),
                        span.clone(),
                    )
                    .label(format!(
                        "cannot be moved with `mov.{}`",
                        want.unwrap_or(Ty::U32)
                    ))
                    .help("use `mov.u32`, then `cvt` if you need another type"))
                }
                Some(s) => Ok(Operand::Special(s)),
                None => reg(self, r, st),
            },
            (OperandKind::MovSrc, AstOperand::Expr(e)) => match symbol(&e.node, self.scope) {
                Some(Ok(_)) if want.is_some_and(|t| t.is_float() || t.bits() < 32) => {
                    Err(Diagnostic::error("an address is an integer", span.clone())
                        .label(format!(
                            "cannot be moved with `mov.{}`",
                            want.unwrap_or(Ty::U32)
                        ))
                        .help("write `mov.u32` (or `mov.u64`)"))
                }
                Some(Ok((sym, offset))) => {
                    if !SYMBOL_OFFSET_RANGE.contains(&offset) {
                        return Err(Diagnostic::error(
                            format!("offset `{offset}` is out of range"),
                            span.clone(),
                        )
                        .label(format!(
                            "expected {}..={}",
                            SYMBOL_OFFSET_RANGE.start(),
                            SYMBOL_OFFSET_RANGE.end()
                        ))
                        .help("add the offset to the address with `add` instead"));
                    }
                    Ok(Operand::Symbol { sym, offset })
                }
                Some(Err(d)) => Err(d),
                None => {
                    if let Expr::Name(n) = e.node {
                        return Err(unknown_name(n, span, self.scope));
                    }
                    let ty = want.unwrap_or(Ty::U32);
                    match imm32(e, ty, self.scope) {
                        Ok(v) => Ok(Operand::Imm32(v)),
                        Err(_) if ty.bits() == 64 => {
                            // Wide immediates: set the destination's halves instead.
                            let bits = const_bits64(e, ty, &self.scope.params)?;
                            Ok(self.materialise(ty, bits, st))
                        }
                        Err(d) => Err(d),
                    }
                }
            },
            (
                OperandKind::Mem,
                AstOperand::Mem {
                    base,
                    negative,
                    offset,
                },
            ) => self.memory(
                base.as_ref(),
                *negative,
                offset.as_ref(),
                mods,
                spec.mnemonic,
                k,
                span,
                st,
            ),
            (
                OperandKind::Target,
                AstOperand::Expr(Spanned {
                    node: Expr::Name(n),
                    ..
                }),
            ) => {
                if let Some(&id) = self.scope.labels.get(*n) {
                    st.target = Some(id);
                    Ok(Operand::Target(0))
                } else {
                    let d = Diagnostic::error(format!("undefined label `{n}`"), span.clone())
                        .label("no label has this name");
                    Err(
                        match closest(n, self.scope.labels.keys().map(String::as_str)) {
                            Some(s) => d.help(format!("did you mean `{s}`?")),
                            None => d.help(format!("define it with `{n}:` before an instruction")),
                        },
                    )
                }
            }
            _ => Err(wrong(found)),
        };
        // A materialised temporary fills this operand.
        for r in &mut st.refs {
            if r.slot == Slot::Operand(usize::MAX) {
                r.slot = Slot::Operand(k);
            }
        }
        result
    }
}

/// `what` with its indefinite article: "a register", "an address", "an 8-bit immediate".
fn a_or_an(what: &str) -> String {
    let vowel_sound = what.starts_with(['a', 'e', 'i', 'o', 'u', '8']);
    format!("{} {what}", if vowel_sound { "an" } else { "a" })
}
