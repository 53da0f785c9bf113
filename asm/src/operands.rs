//! Turns one instruction statement into an [`Instr`]: resolves the mnemonic and its
//! modifiers against the ISA table and checks each operand's kind, type and range,
//! with a precise span and help for every mistake.

use crate::ast::{Expr, Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::eval::{ParamInfo, const_bits, const_f32, const_int};
use crate::lexer::Span;
use crate::suggest::closest;
use spu_isa::format::RegTy;
use spu_isa::table::{ModKind, OperandKind, OperandTy, Rule, allowed_names};
use spu_isa::{Guard, Instr, Mods, Opcode, Operand, Space, Special, SymbolRef, TABLE, Ty};
use std::collections::HashMap;

/// Names an instruction may refer to.
#[derive(Debug, Default)]
pub struct Scope {
    /// Register name (without `%`) -> (index, type).
    pub regs: HashMap<String, (u8, RegTy)>,
    pub labels: HashMap<String, u32>,
    pub buffers: HashMap<String, u16>,
    pub shared: HashMap<String, u16>,
    pub params: Vec<ParamInfo>,
}

/// An instruction whose branch target is still a label name.
#[derive(Debug)]
pub struct Checked {
    pub instr: Instr,
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
            Some((code, n)) => {
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
            None if optional => {}
            None => {
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
    if spec.rule == Some(Rule::HalfForIntOnly) {
        match (mods.ty, mods.half) {
            (Some(t), None) if t.is_int() => {
                return Err(Diagnostic::error(
                    format!("integer `{}` needs .lo or .hi", spec.mnemonic),
                    span.clone(),
                )
                .label("which half of the 64-bit product?")
                .help(format!(
                    "write `{}.lo.{t}` for the usual wrapping product",
                    spec.mnemonic
                )));
            }
            (Some(Ty::F32), Some(h)) => {
                return Err(Diagnostic::error(
                    format!("`.{h}` does not apply to `{}.f32`", spec.mnemonic),
                    span.clone(),
                )
                .label("only integer products have halves"));
            }
            _ => {}
        }
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

fn not_allowed(mnemonic: &str, kind: ModKind, value: &str, allowed: u16, span: Span) -> Diagnostic {
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
    let names: Vec<&str> = spec.operands().map(|o| o.0).collect();
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

/// Checks one instruction. Branch targets resolve through `scope.labels`.
pub fn check_instr(
    guard: Option<&AstGuard<'_>>,
    mnemonic: &Spanned<&str>,
    operands: &[Spanned<AstOperand<'_>>],
    stmt_span: &Span,
    scope: &Scope,
) -> Result<Checked, Vec<Diagnostic>> {
    let (op, mods) = resolve_mnemonic(mnemonic.node, &mnemonic.span).map_err(|d| vec![d])?;
    let spec = op.spec();
    let mut errors = Vec::new();
    let guard = match guard {
        None => Guard::Always,
        Some(g) => match pred_index(g.pred.node, &g.pred.span, scope) {
            Ok(p) if g.negated => Guard::IfNot(p),
            Ok(p) => Guard::If(p),
            Err(d) => {
                errors.push(d);
                Guard::Always
            }
        },
    };
    let expected = spec.operand_count();
    if operands.len() != expected {
        let span = operands
            .get(expected)
            .map_or(stmt_span.clone(), |o| o.span.start..stmt_span.end);
        errors.push(operand_count_error(op, operands.len(), span));
        return Err(errors);
    }
    let mut values = Vec::with_capacity(expected);
    for ((name, kind, oty, _), operand) in spec.operands().zip(operands) {
        let want = match oty {
            OperandTy::Main => mods.ty,
            OperandTy::Src => mods.src_ty,
            OperandTy::U32 => Some(Ty::U32),
            OperandTy::Pred | OperandTy::None => None,
        };
        match check_operand(op, name, kind, want, &mods, operand, scope) {
            Ok(v) => values.push(v),
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let instr = Instr::new(op, guard, mods, &values)
        .map_err(|e| vec![Diagnostic::error(e.to_string(), stmt_span.clone())])?;
    Ok(Checked { instr })
}

fn pred_index(name: &str, span: &Span, scope: &Scope) -> Result<u8, Diagnostic> {
    match scope.regs.get(name) {
        Some((i, RegTy::Pred)) => Ok(*i),
        Some((_, RegTy::Val(t))) => Err(Diagnostic::error(
            format!("`%{name}` is a .{t} register, not a predicate"),
            span.clone(),
        )
        .label("expected a .pred register")
        .help("set a predicate with `setp`")),
        None => Err(undeclared(name, span, scope)),
    }
}

fn undeclared(name: &str, span: &Span, scope: &Scope) -> Diagnostic {
    let d = Diagnostic::error(format!("undeclared register `%{name}`"), span.clone())
        .label("not declared with `.reg`");
    match closest(name, scope.regs.keys().map(String::as_str)) {
        Some(s) => d.help(format!("did you mean `%{s}`?")),
        None => d.help(format!("declare it: `.reg .u32 %{name};`")),
    }
}

fn type_compatible(reg: Ty, want: Ty) -> bool {
    reg == want || (reg.is_int() && want.is_int())
}

fn value_reg(
    name: &str,
    span: &Span,
    want: Option<Ty>,
    mnemonic: &str,
    scope: &Scope,
) -> Result<u8, Diagnostic> {
    if Special::from_name(name).is_some() {
        return Err(Diagnostic::error(
            format!("special register `%{name}` cannot be used here"),
            span.clone(),
        )
        .label("special registers are read only by `mov`")
        .help(format!("copy it first: `mov.u32 %r0, %{name};`")));
    }
    match scope.regs.get(name) {
        Some((i, RegTy::Val(t))) => match want {
            Some(w) if !type_compatible(*t, w) => Err(Diagnostic::error(
                format!("register `%{name}` is .{t} but `{mnemonic}` needs .{w} here"),
                span.clone(),
            )
            .label(format!("declared .{t}"))
            .help(if *t == Ty::F32 || w == Ty::F32 {
                format!("convert it with `cvt.{w}.{t}` first")
            } else {
                "use a register of the right type".to_string()
            })),
            _ => Ok(*i),
        },
        Some((_, RegTy::Pred)) => Err(Diagnostic::error(
            format!("`%{name}` is a predicate, not a value register"),
            span.clone(),
        )
        .label("expected a .u32, .s32 or .f32 register")
        .help("turn a predicate into a value with `selp`")),
        None => Err(undeclared(name, span, scope)),
    }
}

fn imm16(e: &Spanned<Expr<'_>>, ty: Ty, scope: &Scope) -> Result<u16, Diagnostic> {
    match ty {
        Ty::F32 => {
            let f = const_f32(e, &scope.params)?;
            let bits = f.to_bits();
            if bits & 0xffff != 0 {
                return Err(Diagnostic::error(
                    format!("`{f}` does not fit in a 16-bit f32 immediate"),
                    e.span.clone(),
                )
                .label("the low 16 bits of its pattern are not zero")
                .help(format!(
                    "load it with `mov.f32 %fN, {};` first",
                    spu_isa::disasm::format_f32(f)
                )));
            }
            Ok((bits >> 16) as u16)
        }
        Ty::S32 | Ty::U32 => {
            let v = const_int(e, &scope.params)?;
            let (lo, hi) = if ty == Ty::S32 {
                (-32768, 32767)
            } else {
                (0, 65535)
            };
            if v < lo || v > hi {
                return Err(Diagnostic::error(
                    format!("immediate `{v}` does not fit in 16 bits"),
                    e.span.clone(),
                )
                .label(format!("expected {lo}..={hi}"))
                .help("load it with `mov` first"));
            }
            Ok(v as u16)
        }
    }
}

fn check_operand(
    op: Opcode,
    name: &str,
    kind: OperandKind,
    want: Option<Ty>,
    mods: &Mods,
    operand: &Spanned<AstOperand<'_>>,
    scope: &Scope,
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
        AstOperand::Register(_) => "a register",
        AstOperand::Mem { .. } => "an address",
        AstOperand::Expr(Spanned {
            node: Expr::Name(_),
            ..
        }) => "a name",
        AstOperand::Expr(_) => "an immediate",
    };
    match (kind, &operand.node) {
        (OperandKind::Reg, AstOperand::Register(r)) => Ok(Operand::Reg(value_reg(
            r,
            span,
            want,
            spec.mnemonic,
            scope,
        )?)),
        (OperandKind::Pred, AstOperand::Register(r)) => {
            Ok(Operand::Pred(pred_index(r, span, scope)?))
        }
        (OperandKind::RegOrImm, AstOperand::Register(r)) => Ok(Operand::Reg(value_reg(
            r,
            span,
            want,
            spec.mnemonic,
            scope,
        )?)),
        (OperandKind::RegOrImm, AstOperand::Expr(e)) => {
            Ok(Operand::Imm16(imm16(e, want.unwrap_or(Ty::U32), scope)?))
        }
        (OperandKind::MovSrc, AstOperand::Register(r)) => match Special::from_name(r) {
            Some(s) if want == Some(Ty::F32) => Err(Diagnostic::error(
                format!("special register `%{s}` is .u32"),
                span.clone(),
            )
            .label("cannot be moved into an .f32 register")
            .help("use `mov.u32`, then `cvt.f32.u32` if you need a float")),
            Some(s) => Ok(Operand::Special(s)),
            None => Ok(Operand::Reg(value_reg(
                r,
                span,
                want,
                spec.mnemonic,
                scope,
            )?)),
        },
        (
            OperandKind::MovSrc,
            AstOperand::Expr(Spanned {
                node: Expr::Name(n),
                ..
            }),
        ) => {
            let sym = scope
                .buffers
                .get(*n)
                .map(|i| SymbolRef::Buffer(*i))
                .or_else(|| scope.shared.get(*n).map(|i| SymbolRef::Shared(*i)));
            match sym {
                Some(_) if want == Some(Ty::F32) => Err(Diagnostic::error(
                    format!("the address of `{n}` is .u32"),
                    span.clone(),
                )
                .label("addresses are not floats")
                .help(format!("write `mov.u32 %r0, {n};`"))),
                Some(s) => Ok(Operand::Symbol(s)),
                None if scope.params.iter().any(|p| p.name == *n) => Err(Diagnostic::error(
                    format!("parameter `{n}` is not an immediate"),
                    span.clone(),
                )
                .label("parameters can change at launch (-D)")
                .help(format!(
                    "read it with `ld.param.{} %rX, [{n}];`",
                    want.unwrap_or(Ty::U32)
                ))),
                None => {
                    let all = scope
                        .buffers
                        .keys()
                        .chain(scope.shared.keys())
                        .map(String::as_str);
                    let d = Diagnostic::error(format!("unknown symbol `{n}`"), span.clone())
                        .label("no buffer or shared array has this name");
                    Err(match closest(n, all) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d,
                    })
                }
            }
        }
        (OperandKind::MovSrc, AstOperand::Expr(e)) => Ok(Operand::Imm32(const_bits(
            e,
            want.unwrap_or(Ty::U32),
            &scope.params,
        )?)),
        (
            OperandKind::Mem,
            AstOperand::Mem {
                base,
                negative,
                offset,
            },
        ) => {
            let base_reg = match base {
                Some(b) => Some(value_reg(
                    b.node,
                    &b.span,
                    Some(Ty::U32),
                    spec.mnemonic,
                    scope,
                )?),
                None => None,
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
                let s = offset.as_ref().map_or(span.clone(), |e| e.span.clone());
                return Err(Diagnostic::error(
                    format!("address offset `{off}` does not fit in 16 bits"),
                    s,
                )
                .label("expected -32768..=32767")
                .help("add the offset to the base register first"));
            }
            if mods.space == Some(Space::Param) && base_reg.is_some() {
                // Allowed: indexing the parameter space with a register.
            }
            Ok(Operand::Mem {
                base: base_reg,
                offset: off as i16,
            })
        }
        (
            OperandKind::Target,
            AstOperand::Expr(Spanned {
                node: Expr::Name(n),
                ..
            }),
        ) => match scope.labels.get(*n) {
            Some(pc) => Ok(Operand::Target(*pc)),
            None => {
                let d = Diagnostic::error(format!("undefined label `{n}`"), span.clone())
                    .label("no label has this name");
                Err(match closest(n, scope.labels.keys().map(String::as_str)) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("define it with `{n}:` before an instruction")),
                })
            }
        },
        _ => Err(wrong(found)),
    }
}
