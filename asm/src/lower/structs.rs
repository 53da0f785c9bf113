//! By-value struct parameters of a PTX entry (`.param .align 8 .b8 k_param_3[32]`,
//! a `cudaPitchedPtr`, a functor, a small configuration struct): bound field by
//! field by the launch file's `.bind` (`{.u64 X, [16] .f32 SCALE = 2.5}`, each field
//! a buffer, a `.param` of the launch or a new one with its default, at the given
//! offset or the next multiple of its size), checked against the declared size and
//! alignment; and read as nvcc writes it (`ld.param.u64 %rd1, [k_param_3+8]`) or as
//! clang does, through the parameter's address (`mov.b64 %rd1, k_param_0;
//! ld.param.f32 %f1, [%rd1+4]`, also through a copy of that register or one plus
//! a constant), a vector read (`ld.param.v2.u32`) one element at a time. A read
//! of bytes no field covers gives zero; any other use of such an address (a
//! store, a call, arithmetic the assembler cannot follow) is refused at its
//! line, as the parameter has no address in global memory.

use super::Assembler;
use crate::ast::{BindArg, EntryParam, Expr, Operand, Spanned, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{const_int, parse_int};
use crate::lexer::Span;
use crate::operands::{EntryArg, Field, StructArg};

/// Most bytes a struct parameter may have (CUDA's limit on a kernel's parameters).
const MAX_STRUCT_BYTES: u64 = 4096;

/// An example of the binding syntax, for messages.
const EXAMPLE: &str = "`{.u64 X, .u32 N, [16] .f32 SCALE = 2.5}`: a buffer, a `.param` of the launch, a new parameter with its default; `[OFFSET]` places a field, otherwise it follows the previous one";

impl Assembler<'_> {
    /// Binds struct parameter `p` to the fields of `arg` (a `.bind` argument).
    pub(super) fn bind_struct(
        &mut self,
        p: &EntryParam<'_>,
        arg: Option<&Spanned<BindArg<'_>>>,
        diags: &mut Diagnostics,
    ) {
        let name = p.name.node;
        self.scope.poisoned.insert(name.to_string());
        let (TyTok::Val(elem), Some(dim)) = (p.ty.node, p.dim.as_ref()) else {
            diags.push(Diagnostic::error(
                "parameters cannot be predicates",
                p.ty.span.clone(),
            ));
            return;
        };
        let bytes = match const_int(dim, &self.scope.params) {
            Ok(n)
                if n >= 1
                    && (n as u64).saturating_mul(u64::from(elem.bits() / 8))
                        <= MAX_STRUCT_BYTES =>
            {
                n as u32 * (elem.bits() / 8)
            }
            Ok(n) => {
                diags.push(
                    Diagnostic::error(format!("`{name}` has {n} elements"), dim.span.clone())
                        .label(format!("expected 1 to {MAX_STRUCT_BYTES} bytes")),
                );
                return;
            }
            Err(d) => {
                diags.push(d);
                return;
            }
        };
        let align = match &p.align {
            None => elem.bits() / 8,
            Some(a) => match parse_int(a.node).and_then(|v| u32::try_from(v).ok()) {
                Some(v) if v.is_power_of_two() && v <= 256 => v,
                _ => {
                    diags.push(
                        Diagnostic::error(
                            format!("alignment `{}` is not supported", a.node),
                            a.span.clone(),
                        )
                        .label("expected a power of two up to 256"),
                    );
                    return;
                }
            },
        };
        let fields = match arg.map(|a| (&a.node, &a.span)) {
            Some((BindArg::Struct(fields), _)) => fields,
            Some((BindArg::Value(_), at)) => {
                diags.push(
                    Diagnostic::error(
                        format!("`{name}` is a {bytes}-byte struct passed by value"),
                        at.clone(),
                    )
                    .label("a single value")
                    .with_secondary(p.name.span.clone(), "declared here")
                    .help(format!("give its fields in braces, e.g. {EXAMPLE}")),
                );
                return;
            }
            // The `.bind` did not parse: its error says why.
            None if self.bind_broken => return,
            None => {
                diags.push(
                    Diagnostic::error(
                        format!("`{name}` is a {bytes}-byte struct passed by value; it needs a launch file"),
                        p.name.span.clone(),
                    )
                    .label("no `.bind` gives its fields")
                    .help(format!("bind the kernel's arguments in a launch file with `.bind`, the struct's fields in braces, e.g. {EXAMPLE}")),
                );
                return;
            }
        };
        let mut out: Vec<(Field, Span)> = Vec::new();
        let mut next = 0u32;
        let mut ok = true;
        for f in fields {
            let TyTok::Val(t) = f.ty.node else {
                diags.push(Diagnostic::error(
                    "a field cannot be a predicate",
                    f.ty.span.clone(),
                ));
                ok = false;
                continue;
            };
            let size = t.bits() / 8;
            let offset = match &f.offset {
                None => next.next_multiple_of(size),
                Some(e) => match const_int(e, &self.scope.params) {
                    Ok(v) if (0..i64::from(u32::MAX)).contains(&v) => v as u32,
                    Ok(v) => {
                        // Past 4 GiB the field cannot be inside the struct either.
                        let what = if v < 0 {
                            format!("offset {v} is negative")
                        } else {
                            format!("offset {v} is past the {bytes}-byte struct")
                        };
                        diags.push(
                            Diagnostic::error(what, e.span.clone())
                                .label("a field's offset counts bytes from the struct's start"),
                        );
                        ok = false;
                        continue;
                    }
                    Err(d) => {
                        diags.push(d);
                        ok = false;
                        continue;
                    }
                },
            };
            let at = f
                .offset
                .as_ref()
                .map_or(f.name.span.clone(), |e| e.span.clone());
            let problem = if u64::from(offset) + u64::from(size) > u64::from(bytes) {
                Some((
                    format!("field `{}` ends past `{name}`", f.name.node),
                    format!(
                        "bytes {offset}..{} of a {bytes}-byte struct",
                        u64::from(offset) + u64::from(size)
                    ),
                ))
            } else if offset % size != 0 {
                Some((
                    format!("field `{}` is not aligned", f.name.node),
                    format!("a .{t} sits at a multiple of {size} bytes; this is byte {offset}"),
                ))
            } else if size > align {
                Some((
                    format!(
                        "field `{}` needs a {size}-byte alignment, but `{name}` is `.align {align}`",
                        f.name.node
                    ),
                    format!("a .{t}"),
                ))
            } else {
                out.iter()
                    .find(|(g, _)| {
                        g.offset < offset + size && offset < g.offset + g.arg.ty.bits() / 8
                    })
                    .map(|(g, _)| {
                        (
                            format!("field `{}` overlaps an earlier field", f.name.node),
                            format!(
                                "bytes {offset}..{}; the earlier one starts at byte {}",
                                offset + size,
                                g.offset
                            ),
                        )
                    })
            };
            if let Some((msg, label)) = problem {
                diags.push(
                    Diagnostic::error(msg, at)
                        .label(label)
                        .with_secondary(p.name.span.clone(), "the struct parameter")
                        .help(format!(
                            "give each field its place inside the struct, e.g. {EXAMPLE}"
                        )),
                );
                ok = false;
                continue;
            }
            next = offset + size;
            let bound = match &f.value {
                // A new kernel parameter: `-D NAME=...` sets the field.
                Some(v) => {
                    let before = self.scope.params.len();
                    let ty = Spanned {
                        node: TyTok::Val(t),
                        span: f.ty.span.clone(),
                    };
                    self.param(&ty, &f.name, Some(v), diags);
                    if self.scope.params.len() == before {
                        ok = false;
                        continue;
                    }
                    Ok(crate::operands::Bound::Param(f.name.node.to_string()))
                }
                None => {
                    let v = Spanned {
                        node: Expr::Name(f.name.node),
                        span: f.name.span.clone(),
                    };
                    // Messages name the field by its place: `cfg+8`.
                    let place = format!("{name}+{offset}");
                    let place = Spanned {
                        node: place.as_str(),
                        span: f.ty.span.clone(),
                    };
                    self.bind_value(&place, t, &v)
                }
            };
            match bound {
                Ok(bound) => out.push((
                    Field {
                        offset,
                        arg: EntryArg { ty: t, bound },
                    },
                    f.name.span.clone(),
                )),
                Err(d) => {
                    diags.push(d.with_secondary(p.name.span.clone(), "the struct parameter"));
                    ok = false;
                }
            }
        }
        if !ok || !self.declare_global(&p.name, diags) {
            return;
        }
        self.scope.poisoned.remove(name);
        self.scope.entry_structs.insert(
            name.to_string(),
            StructArg {
                bytes,
                fields: out.into_iter().map(|(f, _)| f).collect(),
            },
        );
    }

    /// Lowers a read of a struct parameter through its address (clang) or as a
    /// vector (`ld.param.v2`), and records which registers hold a struct's address;
    /// false when the instruction is no such read (the caller lowers it).
    ///
    /// The address is followed in the order of the text, which is the order of
    /// the run only in straight-line code: a register that holds it must be
    /// written once, unguarded, and not read before (as clang writes it outside
    /// loops); any other flow of the address (a loop's increment, a join of two
    /// paths) is refused at its line.
    pub(super) fn struct_instr(
        &mut self,
        guard: Option<&crate::ast::Guard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<Operand<'_>>],
        span: &Span,
        diags: &mut Diagnostics,
    ) -> bool {
        if self.scope.entry_structs.is_empty() {
            return false;
        }
        let parts: Vec<&str> = mnemonic.node.split('.').collect();
        let dest = match operands.first().map(|o| &o.node) {
            Some(Operand::Register(r)) => Some(*r),
            _ => None,
        };
        // The new address a `mov`/`add` makes: `mov.b64 %rd1, k_param_0;`, a copy
        // of such a register (`mov.u64 %rd2, %rd1;`) or it plus a constant
        // (`add.s64 %rd3, %rd1, 8;`).
        let made = match (parts.first(), dest, operands.get(1).map(|o| &o.node)) {
            (Some(&"mov"), Some(_), Some(Operand::Expr(e))) if operands.len() == 2 => {
                match &e.node {
                    Expr::Name(n) if self.scope.entry_structs.contains_key(*n) => {
                        Some((n.to_string(), Some(0)))
                    }
                    _ => None,
                }
            }
            (Some(&op @ ("mov" | "add")), Some(_), Some(Operand::Register(src)))
                if matches!(parts.last(), Some(&("b64" | "u64" | "s64"))) =>
            {
                self.struct_regs.ptrs.get(*src).cloned().map(|(n, at)| {
                    let plus = match (op, operands.get(2).map(|o| &o.node)) {
                        ("mov", None) => Some(0),
                        ("add", Some(Operand::Expr(e))) if operands.len() == 3 => {
                            const_int(e, &self.scope.params).ok()
                        }
                        _ => None,
                    };
                    (n, plus.map(|p| at.checked_add(p).unwrap_or(-1)))
                })
            }
            _ => None,
        };
        if let (Some((n, Some(at))), Some(d)) = (&made, dest) {
            let dspan = &operands[0].span;
            let why = if guard.is_some() {
                Some("it is written under a guard")
            } else if self.struct_regs.written.contains(d) {
                Some("it was written before (a loop's step, or a join of two paths)")
            } else if self.struct_regs.read.contains(d) {
                Some("it is read before this line (in a loop?)")
            } else {
                None
            };
            if let Some(why) = why {
                diags.push(unfollowed(d, n, why, dspan));
                return true;
            }
            self.struct_regs.written.insert(d.to_string());
            self.struct_regs
                .ptrs
                .insert(d.to_string(), (n.clone(), *at));
            return true;
        }
        // Registers read, and those written (the first operand's).
        let written: Vec<&str> = match operands.first().map(|o| &o.node) {
            Some(Operand::Register(r)) => vec![*r],
            Some(Operand::Vector(rs)) => rs.iter().map(|r| r.node).collect(),
            Some(Operand::RegPred(r, p)) => vec![*r, p.node],
            _ => Vec::new(),
        };
        let skip = usize::from(!written.is_empty());
        let read_through = operands.get(1).and_then(used);
        let reads_param = parts.first() == Some(&"ld") && parts.get(1) == Some(&"param");
        for o in operands.iter().skip(skip) {
            let Some(r) = used(o) else { continue };
            let Some((n, _)) = self.struct_regs.ptrs.get(r) else {
                self.struct_regs.read.insert(r.to_string());
                continue;
            };
            // The one use that is followed: `ld.param` through the register.
            if reads_param && Some(r) == read_through {
                continue;
            }
            diags.push(
                Diagnostic::error(
                    format!("`%{r}` holds the address of the struct parameter `{n}`, which this instruction cannot use"),
                    o.span.clone(),
                )
                .label("read only through `ld.param`")
                .help(format!(
                    "a struct parameter has no address in memory: read its fields with `ld.param` through `%{r}` (plus a constant), or pass the fields as parameters of their own"
                )),
            );
            return true;
        }
        for w in &written {
            if let Some((n, _)) = self.struct_regs.ptrs.get(*w) {
                diags.push(unfollowed(
                    w,
                    n,
                    "it is written again here",
                    &operands[0].span,
                ));
                return true;
            }
        }
        self.struct_regs
            .written
            .extend(written.iter().map(|w| w.to_string()));
        if !reads_param {
            return false;
        }
        let Some(Operand::Mem {
            base,
            negative,
            offset,
        }) = operands.get(1).map(|o| &o.node)
        else {
            return false;
        };
        let constant = |e: &crate::ast::SExpr<'_>| {
            const_int(e, &self.scope.params)
                .ok()
                .and_then(|k| if *negative { k.checked_neg() } else { Some(k) })
        };
        // The struct and the byte offset read (-1 when outside any struct).
        let (name, plus) = match (base, offset) {
            (Some(b), offset) => match self.struct_regs.ptrs.get(b.node) {
                Some((n, at)) => {
                    let k = offset.as_ref().map_or(Some(0), constant);
                    (n.clone(), k.and_then(|k| at.checked_add(k)).unwrap_or(-1))
                }
                None => return false,
            },
            (None, Some(e)) => match &e.node {
                Expr::Name(n) if self.scope.entry_structs.contains_key(*n) => (n.to_string(), 0),
                Expr::Binary('+', a, b) => match (&a.node, &b.node) {
                    (Expr::Name(n), Expr::Int(k)) if self.scope.entry_structs.contains_key(*n) => {
                        (n.to_string(), parse_int(k).unwrap_or(-1))
                    }
                    _ => return false,
                },
                _ => return false,
            },
            (None, None) => return false,
        };
        let regs: Vec<Spanned<&str>> = match &operands[0].node {
            Operand::Register(r) => vec![Spanned {
                node: *r,
                span: operands[0].span.clone(),
            }],
            Operand::Vector(rs) => rs.clone(),
            _ => return false,
        };
        let ty = parts.last().and_then(|t| spu_isa::Ty::from_name(t));
        let size = ty.map_or(4, |t| t.bits() / 8);
        let scalar: String = parts
            .iter()
            .filter(|p| !matches!(**p, "v2" | "v4"))
            .copied()
            .collect::<Vec<_>>()
            .join(".");
        let offsets: Vec<String> = (0..regs.len())
            .map(|i| (plus + (i as i64) * i64::from(size)).to_string())
            .collect();
        let mspan = &operands[1].span;
        for (r, k) in regs.iter().zip(&offsets) {
            let ops = [
                Spanned {
                    node: Operand::Register(r.node),
                    span: r.span.clone(),
                },
                Spanned {
                    node: Operand::Mem {
                        base: None,
                        negative: false,
                        offset: Some(Spanned {
                            node: Expr::Binary(
                                '+',
                                Box::new(Spanned {
                                    node: Expr::Name(name.as_str()),
                                    span: mspan.clone(),
                                }),
                                Box::new(Spanned {
                                    node: Expr::Int(k.as_str()),
                                    span: mspan.clone(),
                                }),
                            ),
                            span: mspan.clone(),
                        }),
                    },
                    span: mspan.clone(),
                },
            ];
            let m = Spanned {
                node: scalar.as_str(),
                span: mnemonic.span.clone(),
            };
            self.emit(guard, &m, &ops, span, diags);
        }
        true
    }
}

/// The registers of the code being lowered that hold a struct parameter's
/// address (-> the parameter and the byte offset), and those written and read
/// so far.
#[derive(Debug, Clone, Default)]
pub(super) struct StructRegs {
    ptrs: std::collections::HashMap<String, (String, i64)>,
    written: std::collections::HashSet<String>,
    read: std::collections::HashSet<String>,
}

/// The register an operand reads: itself, or a memory operand's base.
fn used<'a>(o: &Spanned<Operand<'a>>) -> Option<&'a str> {
    match &o.node {
        Operand::Register(r) => Some(*r),
        Operand::Mem { base: Some(b), .. } => Some(b.node),
        _ => None,
    }
}

/// The refusal of a flow of struct `n`'s address through `%r` that the
/// assembler cannot follow, and `why`.
fn unfollowed(r: &str, n: &str, why: &str, at: &Span) -> Diagnostic {
    Diagnostic::error(
        format!("`%{r}` would hold the address of the struct parameter `{n}`, but {why}"),
        at.clone(),
    )
    .label("not followed")
    .help(
        "the assembler follows a struct's address through registers written once, in straight-line code, as clang writes it outside loops; read the fields by constant offsets (`s.x`, not `s.w[i]` in a loop), or pass what the loop reads as a buffer or as parameters of their own",
    )
}
