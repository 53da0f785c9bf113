//! Vector and memory operands: register groups (through an aligned temporary
//! when the named registers are not one), and `[base + offset]`, `[symbol +
//! offset]` addresses.

use super::immediates::*;
use super::scope::RegUse;
use super::{Lowering, RegInfo, Stmt};
use crate::ast::{Expr, Spanned};
use crate::diag::Diagnostic;
use crate::eval::const_int;
use crate::lexer::Span;
use crate::regalloc::Class;
use crate::vcode::{RegRef, Slot, VInstr};
use spu_isa::format::RegTy;
use spu_isa::{Guard, Instr, Mods, Opcode, Operand, SYMBOL_OFFSET_RANGE, Space, Ty};

/// The byte address of `[P]`, `[P+k]`, `[P-k]` or `[k+P]` in parameter space, for a
/// parameter `P` and a constant `k`; `None` for an expression naming no parameter.
/// The access (its width from the type and vector modifiers) must lie within `P`:
/// a 64-bit parameter is read whole by a 64-bit access at `[P]`, or a word at a
/// time by 32-bit accesses at `[P]` (low word) and `[P+4]` (high word).
fn param_address(
    e: &Spanned<Expr<'_>>,
    scope: &super::Scope,
    mods: &Mods,
    mnemonic: &str,
) -> Result<Option<i64>, Diagnostic> {
    let find = |n: &str| scope.params.iter().find(|p| p.name == n);
    let (p, k) = match &e.node {
        Expr::Name(n) => match find(n) {
            Some(p) => (p, 0),
            None => return Ok(None),
        },
        Expr::Binary(op @ ('+' | '-'), a, b) => match (&a.node, &b.node) {
            (Expr::Name(n), _) if find(n).is_some() => {
                let k = const_int(b, &scope.params)?;
                (find(n).expect("found"), if *op == '-' { -k } else { k })
            }
            (_, Expr::Name(n)) if *op == '+' && find(n).is_some() => {
                (find(n).expect("found"), const_int(a, &scope.params)?)
            }
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let size = i64::from(spu_isa::format::param_size(p.ty));
    let width = i64::from(mods.ty.map_or(4, |t| t.bits().max(8) / 8))
        * i64::from(mods.vec.map_or(1, |v| v.count()));
    if k < 0 || k.saturating_add(width) > size || k % width != 0 {
        let reads = match (size, p.ty.bits()) {
            (8, _) => format!(
                "read it with `ld.param.{} %rdX, [{}]`, or a word at a time with `ld.param.u32` at `[{}]` (low) and `[{}+4]` (high)",
                p.ty, p.name, p.name, p.name
            ),
            _ => format!("read it with `ld.param.{} %rX, [{}]`", p.ty, p.name),
        };
        return Err(Diagnostic::error(
            format!(
                "`{mnemonic}.param` reads {width} bytes at byte {k} of parameter `{}`, which is .{} ({size} bytes)",
                p.name, p.ty
            ),
            e.span.clone(),
        )
        .label("outside the parameter or not aligned to the access")
        .help(reads));
    }
    let at = i64::from(p.offset) + k;
    if at + width > 32768 {
        return Err(Diagnostic::error(
            format!(
                "parameter `{}` is at byte {} of the parameter space",
                p.name, p.offset
            ),
            e.span.clone(),
        )
        .label("`[name]` reaches the first 32768 bytes of parameters (16-bit offsets)")
        .help("declare the parameters the code reads first"));
    }
    Ok(Some(at))
}

impl Lowering<'_> {
    /// `{%a, %b, ...}`: in the declared layout, consecutive registers starting at a
    /// register aligned to the group are used as they are; otherwise the values go
    /// through a temporary group with moves before (stores) or after (loads).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vector(
        &mut self,
        items: &[Spanned<&str>],
        want: Option<Ty>,
        regs: u8,
        spec: &spu_isa::table::InstrSpec,
        k: usize,
        span: &Span,
        st: &mut Stmt,
    ) -> Result<Operand, Diagnostic> {
        let elem = want.map_or(1, Ty::regs);
        let count = regs / elem;
        if items.len() != usize::from(count) || count == 1 {
            return Err(Diagnostic::error(
                format!(
                    "`{}` needs {count} register{} here",
                    spec.mnemonic,
                    if count == 1 { "" } else { "s" }
                ),
                span.clone(),
            )
            .label(format!("found a vector of {}", items.len()))
            .help("the vector width (`.v2`, `.v4`) sets how many registers the braces hold"));
        }
        let mut uses = Vec::new();
        for item in items {
            let (u, _) = self.value_reg(item.node, &item.span, want, spec.mnemonic)?;
            uses.push(u);
        }
        let at = |u: &RegUse| {
            self.vregs.declared_at[u.vreg as usize].map(|p| u32::from(p) + u32::from(u.offset))
        };
        let direct = !self.colour
            && uses.iter().enumerate().all(|(i, u)| {
                let first = at(&uses[0]);
                at(u).is_some()
                    && first.is_some_and(|f| f % u32::from(regs) == 0)
                    && at(u) == first.map(|f| f + i as u32 * u32::from(elem))
            });
        if direct {
            self.vregs.declared_groups = true;
            st.refs.push(RegRef {
                slot: Slot::Operand(k),
                vreg: uses[0].vreg,
                offset: uses[0].offset,
                part: uses[0].part,
            });
            for u in &uses[1..] {
                st.refs.push(RegRef {
                    slot: Slot::Shadow(k),
                    vreg: u.vreg,
                    offset: u.offset,
                    part: u.part,
                });
            }
            return Ok(Operand::Reg(0));
        }
        let class = if regs == 4 { Class::Quad } else { Class::Pair };
        let t = self.vregs.add(class, None);
        let write = spec
            .operands()
            .nth(k)
            .is_some_and(|o| o.3 == spu_isa::table::Role::Def);
        let mov = Opcode::Mov;
        let ty = if elem == 2 { Ty::B64 } else { Ty::B32 };
        for (i, u) in uses.iter().enumerate() {
            let element = RegRef {
                slot: Slot::Operand(if write { 1 } else { 0 }),
                vreg: t,
                offset: i as u8 * elem,
                part: true,
            };
            let component = RegRef {
                slot: Slot::Operand(if write { 0 } else { 1 }),
                vreg: u.vreg,
                offset: u.offset,
                part: u.part,
            };
            let instr = Instr::new(
                mov,
                Guard::Always,
                Mods {
                    ty: Some(ty),
                    ..Mods::default()
                },
                &[Operand::Reg(0), Operand::Reg(0)],
            )
            .map_err(|e| Diagnostic::error(e.to_string(), span.clone()))?;
            let v = VInstr {
                instr,
                refs: vec![element, component],
                target: None,
                helper: false,
            };
            if write {
                st.post.push(v);
            } else {
                st.pre.push(v);
            }
        }
        st.refs.push(RegRef {
            slot: Slot::Operand(k),
            vreg: t,
            offset: 0,
            part: false,
        });
        Ok(Operand::Reg(0))
    }

    /// `[%r+off]`, `[%rd-off]`, `[off]`, `[PARAM]`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn memory(
        &mut self,
        base: Option<&Spanned<&str>>,
        negative: bool,
        offset: Option<&Spanned<Expr<'_>>>,
        mods: &Mods,
        mnemonic: &str,
        k: usize,
        span: &Span,
        st: &mut Stmt,
    ) -> Result<Operand, Diagnostic> {
        let scope = self.scope;
        // `[sym]`, `[sym+off]`: the address goes into a temporary first.
        if base.is_none()
            && mods.space != Some(Space::Param)
            && let Some(e) = offset
            && let Some(found) = symbol(&e.node, scope)
        {
            let (sym, off) = found?;
            if !SYMBOL_OFFSET_RANGE.contains(&off) {
                return Err(Diagnostic::error(
                    format!("offset `{off}` is out of range"),
                    e.span.clone(),
                )
                .label(format!(
                    "expected {}..={}",
                    SYMBOL_OFFSET_RANGE.start(),
                    SYMBOL_OFFSET_RANGE.end()
                )));
            }
            let t = self.vregs.add(Class::Single, None);
            let mov = Opcode::Mov;
            let instr = Instr::new(
                mov,
                Guard::Always,
                Mods {
                    ty: Some(Ty::U32),
                    ..Mods::default()
                },
                &[Operand::Reg(0), Operand::Symbol { sym, offset: off }],
            )
            .map_err(|err| Diagnostic::error(err.to_string(), span.clone()))?;
            st.pre.push(VInstr {
                instr,
                refs: vec![RegRef {
                    slot: Slot::Operand(0),
                    vreg: t,
                    offset: 0,
                    part: false,
                }],
                target: None,
                helper: false,
            });
            st.refs.push(RegRef {
                slot: Slot::Base(k),
                vreg: t,
                offset: 0,
                part: false,
            });
            return Ok(Operand::Mem {
                base: Some(0),
                wide: false,
                offset: 0,
            });
        }
        let mut base_ref = None;
        let (has_base, wide) = match base {
            Some(b) => {
                let wide = matches!(
                    scope.reg(b.node),
                    Some((RegInfo { ty: RegTy::Val(t), .. }, RegUse { part: false, .. }))
                        if t.bits() == 64 && !t.is_float()
                );
                let want = if wide { Ty::U64 } else { Ty::U32 };
                let (u, _) = self.value_reg(b.node, &b.span, Some(want), mnemonic)?;
                base_ref = Some(RegRef {
                    slot: Slot::Base(k),
                    vreg: u.vreg,
                    offset: u.offset,
                    part: u.part,
                });
                (true, wide)
            }
            None => (false, false),
        };
        let param_at = match offset {
            Some(e) if base.is_none() && mods.space == Some(Space::Param) => {
                param_address(e, scope, mods, mnemonic)?
            }
            _ => None,
        };
        let off = match (offset, param_at) {
            (_, Some(at)) => at,
            (None, None) => 0,
            (Some(e), None) => match (&e.node, base) {
                (Expr::Name(n), None) => match scope.params.iter().find(|p| p.name == *n) {
                    Some(p) => {
                        return Err(Diagnostic::error(
                            format!("`[{n}]` names a parameter"),
                            e.span.clone(),
                        )
                        .label("parameters live in the .param space")
                        .help(format!("read it with `ld.param.{} %rX, [{n}];`", p.ty)));
                    }
                    None if scope.buffers.contains_key(*n) || scope.shared.contains_key(*n) => {
                        return Err(Diagnostic::error(
                            format!("`{n}` is not an immediate address"),
                            e.span.clone(),
                        )
                        .label("its address is fixed when the kernel is loaded")
                        .help(format!(
                            "take it into a register: `mov.u32 %r0, {n};` then use `[%r0]`"
                        )));
                    }
                    None => {
                        return Err(crate::eval::lower(e, &scope.params).err().unwrap_or_else(
                            || Diagnostic::error(format!("unknown name `{n}`"), e.span.clone()),
                        ));
                    }
                },
                _ => {
                    let v = const_int(e, &scope.params)?;
                    match negative {
                        false => v,
                        true => v.checked_neg().ok_or_else(|| {
                            Diagnostic::error(
                                format!("address offset `-({v})` does not fit in 16 bits"),
                                e.span.clone(),
                            )
                            .label("expected -32768..=32767")
                        })?,
                    }
                }
            },
        };
        // A register plus an offset the instruction cannot hold: the sum goes
        // into a temporary first (`mov` of the offset, `add` of the base).
        if let Some(b) = base_ref
            && !(-32768..=32767).contains(&off)
            && let Ok(small) = i32::try_from(off)
        {
            let t = self
                .vregs
                .add(if wide { Class::Pair } else { Class::Single }, None);
            let ty = if wide { Ty::S64 } else { Ty::S32 };
            let at = |slot: usize| RegRef {
                slot: Slot::Operand(slot),
                vreg: t,
                offset: 0,
                part: false,
            };
            let make = |op: Opcode, operands: &[Operand]| {
                let mods = Mods {
                    ty: Some(ty),
                    ..Mods::default()
                };
                Instr::new(op, Guard::Always, mods, operands)
                    .map_err(|e| Diagnostic::error(e.to_string(), span.clone()))
            };
            let mov = make(
                Opcode::Mov,
                &[Operand::Reg(0), Operand::Imm32(small as u32)],
            )?;
            st.pre.push(VInstr {
                instr: mov,
                refs: vec![at(0)],
                target: None,
                helper: false,
            });
            let add = make(
                Opcode::Add,
                &[Operand::Reg(0), Operand::Reg(0), Operand::Reg(0)],
            )?;
            st.pre.push(VInstr {
                instr: add,
                refs: vec![
                    at(0),
                    RegRef {
                        slot: Slot::Operand(1),
                        ..b
                    },
                    at(2),
                ],
                target: None,
                helper: false,
            });
            st.refs.push(RegRef {
                slot: Slot::Base(k),
                vreg: t,
                offset: 0,
                part: false,
            });
            return Ok(Operand::Mem {
                base: Some(0),
                wide,
                offset: 0,
            });
        }
        if let Some(b) = base_ref {
            st.refs.push(b);
        }
        if !(-32768..=32767).contains(&off) {
            let s = offset.map_or(span.clone(), |e| e.span.clone());
            return Err(Diagnostic::error(
                format!("address offset `{off}` does not fit in 16 bits"),
                s,
            )
            .label("expected -32768..=32767")
            .help("add the offset to the base register first"));
        }
        // Without a base the offset is the frame-relative address itself.
        if !has_base && off < 0 && mods.space == Some(Space::Local) {
            let s = offset.map_or(span.clone(), |e| e.span.clone());
            return Err(Diagnostic::error(
                format!("the local address `{off}` is negative"),
                s,
            )
            .label("local addresses are frame-relative and cannot be negative")
            .help("a function reaches only its own frame (from byte 0); pass a caller's values as arguments in the callee's frame"));
        }
        Ok(Operand::Mem {
            base: has_base.then_some(0),
            wide,
            offset: off as i16,
        })
    }
}
