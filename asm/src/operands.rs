//! Turns one instruction statement into an [`Instr`]: resolves the mnemonic and its
//! modifiers against the ISA table and checks each operand's kind, type, width and
//! range, with a precise span and help for every mistake.

use crate::ast::{Expr, Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::eval::{ParamInfo, const_bits64, const_int};
use crate::lexer::Span;
use crate::regalloc::Class;
use crate::suggest::closest;
use crate::vcode::{RegRef, Slot, VInstr, VRegs};
use spu_isa::format::RegTy;
use spu_isa::table::{ModKind, OperandKind, allowed_names};
use spu_isa::{
    Guard, Instr, Mods, Opcode, Operand, SYMBOL_OFFSET_RANGE, Space, Special, SymbolRef, TABLE, Ty,
    operand_regs, operand_type, pack_shfl_c,
};
use std::collections::HashMap;

/// A declared register: its virtual register and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegInfo {
    pub vreg: u32,
    pub ty: RegTy,
}

/// A register operand as written: which virtual register, which part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RegUse {
    vreg: u32,
    offset: u8,
    part: bool,
}

/// Names an instruction may refer to.
#[derive(Debug, Default)]
pub struct Scope {
    /// Register name (without `%`) -> first register and type.
    pub regs: HashMap<String, RegInfo>,
    /// Label names (positions are resolved after lowering).
    pub labels: std::collections::HashSet<String>,
    pub buffers: HashMap<String, u16>,
    pub shared: HashMap<String, u16>,
    pub params: Vec<ParamInfo>,
}

impl Scope {
    /// A register by name, with the part it names: `%rd1.lo` / `%rd1.hi` name the
    /// halves of a 64-bit one.
    fn reg(&self, name: &str) -> Option<(RegInfo, RegUse)> {
        if let Some(r) = self.regs.get(name) {
            return Some((
                *r,
                RegUse {
                    vreg: r.vreg,
                    offset: 0,
                    part: false,
                },
            ));
        }
        let (base, half) = name.rsplit_once('.')?;
        let r = self.regs.get(base)?;
        match (r.ty, half) {
            (RegTy::Val(t), "lo" | "hi") if t.bits() == 64 => Some((
                RegInfo {
                    vreg: r.vreg,
                    ty: RegTy::Val(Ty::B32),
                },
                RegUse {
                    vreg: r.vreg,
                    offset: u8::from(half == "hi"),
                    part: true,
                },
            )),
            _ => None,
        }
    }
}

/// Resolves `ld.cb.north.f32` into a row and its modifier values.
fn resolve_mnemonic(text: &str, span: &Span) -> Result<(Opcode, Mods), Diagnostic> {
    let parts: Vec<&str> = text.split('.').collect();
    // Longest row mnemonic that prefixes the dotted parts (`atom.global.cas` before `atom.global`).
    let found = (1..=parts.len())
        .rev()
        .find_map(|k| Opcode::from_mnemonic(&parts[..k].join(".")).map(|op| (op, k)));
    let Some((op, consumed)) = found else {
        let d = Diagnostic::error(format!("unknown instruction `{text}`"), span.clone())
            .label("not in the instruction set");
        let base = parts[0];
        let rest: String = parts[1..].iter().map(|p| format!(".{p}")).collect();
        return Err(
            match closest(
                base,
                TABLE
                    .iter()
                    .map(|r| r.mnemonic.split('.').next().unwrap_or("")),
            ) {
                Some(s) => d.help(format!("did you mean `{s}{rest}`?")),
                None => d.help("see isa-spec/ISA.md for the instruction set"),
            },
        );
    };
    let spec = op.spec();
    let mut mods = Mods::default();
    // Offsets of each part inside the token, for spans on single modifiers.
    let mut offsets = Vec::new();
    let mut at = span.start;
    for p in &parts {
        offsets.push(at..at + p.len());
        at += p.len() + 1;
    }
    let mut i = consumed;
    for (kind, allowed, optional) in spec.modifiers() {
        let names = kind.names();
        // Values may span two parts (`cb.north`).
        let matched = [2usize, 1].iter().find_map(|&n| {
            (i + n <= parts.len())
                .then(|| parts[i..i + n].join("."))
                .and_then(|joined| {
                    names
                        .iter()
                        .position(|v| *v == joined)
                        .map(|code| (code, n))
                })
        });
        match matched {
            Some((code, n)) if allowed & (1 << code) != 0 || !optional => {
                let mspan = offsets[i].start..offsets[i + n - 1].end;
                if allowed & (1 << code) == 0 {
                    return Err(not_allowed(
                        spec.mnemonic,
                        kind,
                        names[code],
                        allowed,
                        mspan,
                    ));
                }
                mods.set(kind, code as u8);
                i += n;
            }
            _ if optional => {}
            _ => {
                let choices = allowed_names(kind, allowed)
                    .iter()
                    .map(|n| format!(".{n}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let (dspan, label) = match offsets.get(i) {
                    Some(s) => (s.clone(), format!("expected a {} here", kind.describe())),
                    None => (span.clone(), format!("missing a {}", kind.describe())),
                };
                let mut d = Diagnostic::error(
                    format!("`{}` needs a {}: {choices}", spec.mnemonic, kind.describe()),
                    dspan,
                )
                .label(label);
                if let Some(p) = parts.get(i)
                    && let Some(s) = closest(p, allowed_names(kind, allowed))
                {
                    d = d.help(format!("did you mean `.{s}`?"));
                }
                return Err(d);
            }
        }
    }
    if let Some(extra) = parts.get(i) {
        let all: Vec<&str> = spec
            .modifiers()
            .flat_map(|(k, a, _)| allowed_names(k, a))
            .collect();
        let d = Diagnostic::error(
            format!("unknown modifier `.{extra}` for `{}`", spec.mnemonic),
            offsets[i].clone(),
        )
        .label("not a modifier of this instruction");
        return Err(match closest(extra, all.iter().copied()) {
            Some(s) => d.help(format!(
                "did you mean `.{s}`? (modifiers go in the order of {})",
                syntax_of(op)
            )),
            None => d.help(format!("the syntax is {}", syntax_of(op))),
        });
    }
    if let (Some(t), None, true) = (
        mods.ty,
        mods.half,
        spec.rules.contains(&spu_isa::table::Rule::HalfForIntOnly),
    ) && t.is_int()
    {
        return Err(Diagnostic::error(
            format!("integer `{}` needs .lo or .hi", spec.mnemonic),
            span.clone(),
        )
        .label("which half of the double-width product?")
        .help(format!(
            "write `{}.lo.{t}` for the usual wrapping product",
            spec.mnemonic
        )));
    }
    if let Err(why) = spec.check_rules(&mods) {
        return Err(Diagnostic::error(
            format!("`{text}` is not a valid form of `{}`", spec.mnemonic),
            span.clone(),
        )
        .label(why)
        .help(format!("for example: `{}`", spec.example)));
    }
    Ok((op, mods))
}

fn syntax_of(op: Opcode) -> String {
    let spec = op.spec();
    let mut s = spec.mnemonic.to_string();
    for (kind, _, optional) in spec.modifiers() {
        if optional {
            s.push_str(&format!("[.{}]", kind.describe().replace(' ', "_")));
        } else {
            s.push_str(&format!(".{}", kind.describe().replace(' ', "_")));
        }
    }
    format!("`{s}`")
}

fn not_allowed(mnemonic: &str, kind: ModKind, value: &str, allowed: u32, span: Span) -> Diagnostic {
    let choices = allowed_names(kind, allowed)
        .iter()
        .map(|n| format!(".{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let base = Diagnostic::error(format!("`{mnemonic}` cannot use .{value}"), span);
    match (mnemonic, value) {
        ("ld", "cb.south" | "cb.east") => base
            .label("a unit reads only its north and west CBs")
            .help(format!("data flows west->east and north->south: read with `ld.cb.north` or `ld.cb.west`, write `.{value}` with `st`")),
        ("st", "cb.north" | "cb.west") => base
            .label("a unit writes only its south and east CBs")
            .help(format!("data flows west->east and north->south: write with `st.cb.south` or `st.cb.east`, read `.{value}` with `ld`")),
        ("st", "param") => base.label("parameters are read-only").help("store to a `.global` buffer instead"),
        _ => base.label(format!("allowed: {choices}")),
    }
}

fn operand_count_error(op: Opcode, found: usize, span: Span) -> Diagnostic {
    let spec = op.spec();
    let names: Vec<&str> = spec
        .operands()
        .filter(|o| o.1 != OperandKind::OptPred)
        .map(|o| o.0)
        .collect();
    Diagnostic::error(
        format!(
            "`{}` takes {} operand{}, found {found}",
            spec.mnemonic,
            names.len(),
            if names.len() == 1 { "" } else { "s" }
        ),
        span,
    )
    .label(if names.is_empty() {
        "expected none".to_string()
    } else {
        format!("expected {}", names.join(", "))
    })
    .help(format!("for example: `{}`", spec.example))
}

fn undeclared(name: &str, span: &Span, scope: &Scope) -> Diagnostic {
    let d = Diagnostic::error(format!("undeclared register `%{name}`"), span.clone())
        .label("not declared with `.reg`");
    match closest(name, scope.regs.keys().map(String::as_str)) {
        Some(s) => d.help(format!("did you mean `%{s}`?")),
        None => d.help(format!("declare it: `.reg .u32 %{name};`")),
    }
}

/// Whether a register of type `reg` can hold an operand of type `want`. Narrow
/// integer types may use wider integer registers (loads extend, stores truncate,
/// as PTX allows for memory and conversion operands).
fn accepts(want: Ty, reg: Ty) -> bool {
    want.accepts_register(reg) || (want.bits() < 32 && reg.bits() == 32 && !reg.is_float())
}

fn imm16(e: &Spanned<Expr<'_>>, ty: Ty, scope: &Scope) -> Result<u16, Diagnostic> {
    let bits = const_bits64(e, ty, &scope.params)?;
    let raw = match ty {
        Ty::F32 if bits & 0xffff == 0 => Some((bits >> 16) as u16),
        Ty::F64 if bits & 0xffff_ffff_ffff == 0 => Some((bits >> 48) as u16),
        Ty::F32 | Ty::F64 => None,
        t if t.bits() <= 16 => Some(bits as u16),
        t if t.is_signed() => {
            let v = ((bits << (64 - t.bits())) as i64) >> (64 - t.bits());
            i16::try_from(v).ok().map(|v| v as u16)
        }
        _ => u16::try_from(bits).ok(),
    };
    raw.ok_or_else(|| {
        let text = match ty {
            Ty::F32 => spu_isa::disasm::format_f32(f32::from_bits(bits as u32)),
            Ty::F64 => spu_isa::disasm::format_f64(f64::from_bits(bits)),
            t => spu_isa::disasm::format_value(bits, t),
        };
        if ty.is_float() {
            Diagnostic::error(
                format!("`{text}` does not fit in a 16-bit .{ty} immediate"),
                e.span.clone(),
            )
            .label("the low bits of its pattern are not zero")
            .help(format!("load it with `mov.{ty} %fN, {text};` first"))
        } else {
            let range = if ty.is_signed() {
                "-32768..=32767"
            } else {
                "0..=65535"
            };
            Diagnostic::error(
                format!("immediate `{text}` does not fit in 16 bits"),
                e.span.clone(),
            )
            .label(format!("expected {range}"))
            .help("load it with `mov` first")
        }
    })
}

/// A `mov` immediate: any value of a 32-bit or narrower type; 64-bit types take values
/// the 32-bit field extends back exactly.
fn imm32(e: &Spanned<Expr<'_>>, ty: Ty, scope: &Scope) -> Result<u32, Diagnostic> {
    let bits = const_bits64(e, ty, &scope.params)?;
    if ty.bits() < 32 && ty.is_signed() {
        // Narrow signed immediates are stored sign-extended.
        let shift = 64 - ty.bits();
        return Ok((((bits << shift) as i64) >> shift) as u32);
    }
    if ty.bits() <= 32 {
        return Ok(bits as u32);
    }
    let raw = if ty == Ty::F64 {
        (bits as u32 == 0).then_some((bits >> 32) as u32)
    } else {
        let low = bits as u32;
        (Operand::widen_imm32(low, ty) == bits).then_some(low)
    };
    raw.ok_or_else(|| {
        Diagnostic::error(
            "64-bit immediate does not fit in `mov`'s 32-bit field",
            e.span.clone(),
        )
        .label(if ty == Ty::F64 {
            "the low 32 bits of its pattern are not zero"
        } else {
            "its high word is not the extension of its low word"
        })
        .help("set the halves with `mov.b32 %rdN.lo, ...;` and `mov.b32 %rdN.hi, ...;`")
    })
}

/// A small unsigned immediate in `0..=max`.
fn small(e: &Spanned<Expr<'_>>, max: i64, scope: &Scope) -> Result<u32, Diagnostic> {
    let v = const_int(e, &scope.params)?;
    if (0..=max).contains(&v) {
        Ok(v as u32)
    } else {
        Err(
            Diagnostic::error(format!("immediate `{v}` is out of range"), e.span.clone())
                .label(format!("expected 0..={max}")),
        )
    }
}

/// Turns instruction statements into [`VInstr`]s: the checks above, plus the
/// machine instructions a statement may need around it (immediates the machine
/// cannot hold go into temporaries; vector operands go through a temporary group
/// when their registers are not already consecutive and aligned).
pub struct Lowering<'a> {
    pub scope: &'a Scope,
    pub vregs: &'a mut VRegs,
    /// Registers are coloured by the allocator (no declared layout to keep).
    pub colour: bool,
}

/// Per-statement state.
struct Stmt {
    refs: Vec<RegRef>,
    pre: Vec<VInstr>,
    post: Vec<VInstr>,
    target: Option<String>,
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
        // PTX spellings of the block barrier: `bar.sync 0`, `barrier.sync 0`.
        let mut operands = operands;
        if matches!(
            mnemonic.node,
            "bar.sync" | "barrier.sync" | "bar.sync.aligned" | "barrier.sync.aligned"
        ) && operands.len() == 1
        {
            if let AstOperand::Expr(e) = &operands[0].node
                && const_int(e, &self.scope.params).ok() == Some(0)
            {
                operands = &[];
            } else {
                return Err(vec![
                    Diagnostic::error("only barrier 0 exists", operands[0].span.clone())
                        .label("the SPU has one block-wide barrier")
                        .help("write `bar.sync 0;`"),
                ]);
            }
        }
        let text = match mnemonic.node {
            "barrier.sync" | "bar.sync.aligned" | "barrier.sync.aligned" => "bar.sync",
            other => other,
        };
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
        let mut source = operands.iter();
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
        let mov = Opcode::from_mnemonic("mov").expect("mov row");
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
                push(
                    if ty.is_float() { ty } else { Ty::b(ty.bits()) },
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
                    "operand `{name}` of `{}` must be a {}",
                    spec.mnemonic,
                    kind.describe()
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
                if self.scope.labels.contains(*n) {
                    st.target = Some(n.to_string());
                    Ok(Operand::Target(0))
                } else {
                    let d = Diagnostic::error(format!("undefined label `{n}`"), span.clone())
                        .label("no label has this name");
                    Err(
                        match closest(n, self.scope.labels.iter().map(String::as_str)) {
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

    /// `{%a, %b, ...}`: in the declared layout, consecutive registers starting at a
    /// register aligned to the group are used as they are; otherwise the values go
    /// through a temporary group with moves before (stores) or after (loads).
    #[allow(clippy::too_many_arguments)]
    fn vector(
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
        let mov = Opcode::from_mnemonic("mov").expect("mov row");
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
    fn memory(
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
            let mov = Opcode::from_mnemonic("mov").expect("mov row");
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
        let (has_base, wide) = match base {
            Some(b) => {
                let wide = matches!(
                    scope.reg(b.node),
                    Some((RegInfo { ty: RegTy::Val(t), .. }, RegUse { part: false, .. }))
                        if t.bits() == 64 && !t.is_float()
                );
                let want = if wide { Ty::U64 } else { Ty::U32 };
                let (u, _) = self.value_reg(b.node, &b.span, Some(want), mnemonic)?;
                st.refs.push(RegRef {
                    slot: Slot::Base(k),
                    vreg: u.vreg,
                    offset: u.offset,
                    part: u.part,
                });
                (true, wide)
            }
            None => (false, false),
        };
        let off = match offset {
            None => 0,
            Some(e) => match (&e.node, base) {
                (Expr::Name(n), None) => match scope.params.iter().position(|p| p.name == *n) {
                    Some(i) if mods.space == Some(Space::Param) && i * 4 > 32767 => {
                        return Err(Diagnostic::error(
                            format!(
                                "parameter `{n}` is at byte {} of the parameter space",
                                i * 4
                            ),
                            e.span.clone(),
                        )
                        .label("`[name]` reaches the first 8192 parameters (16-bit offsets)")
                        .help("declare the parameters the code reads first"));
                    }
                    Some(i) if mods.space == Some(Space::Param) => i as i64 * 4,
                    Some(_) => {
                        return Err(Diagnostic::error(
                            format!("`[{n}]` names a parameter"),
                            e.span.clone(),
                        )
                        .label("parameters live in the .param space")
                        .help(format!("read it with `ld.param.u32 %rX, [{n}];`")));
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
        if !(-32768..=32767).contains(&off) {
            let s = offset.map_or(span.clone(), |e| e.span.clone());
            return Err(Diagnostic::error(
                format!("address offset `{off}` does not fit in 16 bits"),
                s,
            )
            .label("expected -32768..=32767")
            .help("add the offset to the base register first"));
        }
        Ok(Operand::Mem {
            base: has_base.then_some(0),
            wide,
            offset: off as i16,
        })
    }
}

/// `A`, `A+16`, `A-4`, `16+A`: a buffer or shared array plus a constant offset.
fn symbol(e: &Expr<'_>, scope: &Scope) -> Option<Result<(SymbolRef, i32), Diagnostic>> {
    let lookup = |n: &str| {
        scope
            .buffers
            .get(n)
            .map(|i| SymbolRef::Buffer(*i))
            .or_else(|| scope.shared.get(n).map(|i| SymbolRef::Shared(*i)))
    };
    let offset = |o: &Spanned<Expr<'_>>, negate: bool| {
        const_int(o, &scope.params).and_then(|v| {
            let v = if negate {
                v.checked_neg().unwrap_or(i64::MAX)
            } else {
                v
            };
            i32::try_from(v).map_err(|_| {
                Diagnostic::error("offset is out of range", o.span.clone())
                    .label("expected a 32-bit offset")
            })
        })
    };
    match e {
        Expr::Name(n) => lookup(n).map(|s| Ok((s, 0))),
        Expr::Binary(op @ ('+' | '-'), a, b) => match (&a.node, &b.node) {
            (Expr::Name(n), _) => {
                let s = lookup(n)?;
                Some(offset(b, *op == '-').map(|o| (s, o)))
            }
            (_, Expr::Name(n)) if *op == '+' => {
                let s = lookup(n)?;
                Some(offset(a, false).map(|o| (s, o)))
            }
            _ => None,
        },
        _ => None,
    }
}

fn unknown_name(n: &str, span: &Span, scope: &Scope) -> Diagnostic {
    if scope.params.iter().any(|p| p.name == n) {
        return Diagnostic::error(format!("parameter `{n}` is not an immediate"), span.clone())
            .label("parameters can change at launch (-D)")
            .help(format!("read it with `ld.param.u32 %rX, [{n}];`"));
    }
    let all = scope
        .buffers
        .keys()
        .chain(scope.shared.keys())
        .map(String::as_str);
    let d = Diagnostic::error(format!("unknown symbol `{n}`"), span.clone())
        .label("no buffer or shared array has this name");
    match closest(n, all) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d,
    }
}
