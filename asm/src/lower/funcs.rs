//! PTX device functions: `.func` definitions, lowered after the kernel's code (each
//! with its own registers and labels, as the machine gives every activation its own
//! registers), and PTX's calling convention lowered onto the machine's `call
//! LABEL, FRAME` and local memory. A function's frame holds its parameters, then
//! its return values, each at a multiple of its size; a call sequence's `.param`s
//! are the callee's frame, which starts at the caller's frame size.

use super::local::MAX_FRAME;
use super::{Assembler, LabelInfo};
use crate::ast::{CallArg, EntryParam, Expr, Guard, Operand, Spanned, Stmt, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Span;
use crate::parse::{Statements, statement_at};
use spu_isa::format::Label;
use std::collections::HashMap;

/// Most levels `{ }` blocks nest (well past what compilers write).
pub(super) const MAX_BLOCK_DEPTH: usize = 256;

/// A parameter or return value of a device function, in its frame.
#[derive(Debug, Clone)]
pub(super) struct Formal {
    name: String,
    bytes: u32,
    offset: u32,
}

/// A device function defined in the file.
#[derive(Debug, Clone)]
pub(super) struct FuncDef {
    name: String,
    span: Span,
    params: Vec<Formal>,
    rets: Vec<Formal>,
    /// Its frame's size, a multiple of 16 (where its callees' frames start).
    frame: u32,
    /// Its label's id (the call target).
    label: u32,
    /// Where its `.func` statement starts.
    pub(super) start: u32,
    /// Its labels, scoped to it.
    labels: Vec<Spanned<String>>,
    /// A call of it was lowered, so it is lowered too.
    pub(super) queued: bool,
}

/// A named slot of local memory: a `.param` of the running function or of a call
/// sequence, as a byte offset in the running function's frame.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    offset: u32,
    bytes: u32,
}

/// What a call sequence's block hides until it closes: how many registers were
/// declared before it ([`Frame::declared`]), slots, next byte.
type Saved = (usize, HashMap<String, Slot>, u32);

/// The frame of the code being lowered.
#[derive(Debug, Clone, Default)]
pub(super) struct Frame {
    /// Call sequence blocks open (`{ ... }` inside the kernel or function).
    pub depth: u32,
    /// A device function is being lowered.
    pub in_func: bool,
    slots: HashMap<String, Slot>,
    /// The running function's frame size: where a callee's frame starts.
    own: u32,
    /// The next free byte of the callee's frame in the open call sequence.
    next: u32,
    saved: Vec<Saved>,
    /// Registers declared inside open blocks, in order: a block's `}` removes
    /// those declared since its `{` (an undo list, not a copy of every name per
    /// level).
    pub declared: Vec<String>,
    /// Local arrays (`.local`) and their byte offsets in the frame, in order.
    locals: Vec<(String, u32)>,
    /// Registers holding a local address (see `local.rs`).
    pub local_ptrs: std::collections::HashSet<String>,
    /// Call sequence `.param`s that were given a local address, and where.
    local_args: HashMap<String, Span>,
    /// A call was lowered: the callees' frames start at `own`.
    pub called: bool,
}

impl Frame {
    /// Whether a block (`{ ... }`) is open.
    pub(super) fn in_block(&self) -> bool {
        !self.saved.is_empty()
    }

    /// The frame offset of local array `name`.
    pub(super) fn local(&self, name: &str) -> Option<u32> {
        self.locals.iter().find(|(n, _)| n == name).map(|l| l.1)
    }

    pub(super) fn locals(&self) -> impl Iterator<Item = (&str, u32)> {
        self.locals.iter().map(|(n, o)| (n.as_str(), *o))
    }

    /// The running function's frame size so far.
    pub(super) fn own(&self) -> u32 {
        self.own
    }

    /// The frame offset of `.param` slot `name` (a parameter of the running function
    /// or of an open call sequence).
    pub(super) fn slot(&self, name: &str) -> Option<u32> {
        self.slots.get(name).map(|s| s.offset)
    }

    pub(super) fn has_slot(&self, name: &str) -> bool {
        self.slots.contains_key(name)
    }

    /// Places local array `name` at `offset`; the frame now ends at `own`.
    pub(super) fn add_local(&mut self, name: &str, offset: u32, own: u32) {
        self.locals.push((name.to_string(), offset));
        self.own = own;
    }
}

fn bytes_of(ty: &Spanned<TyTok>) -> Option<u32> {
    match ty.node {
        TyTok::Val(t) => Some(t.bits() / 8),
        TyTok::Pred => None,
    }
}

/// Lays formals out from `at`, each at a multiple of its size (up to 16) or of its
/// `.align`; an array (`.param .align 8 .b8 p[16]`) takes all its bytes.
fn layout(list: &[EntryParam<'_>], at: &mut u32, diags: &mut Diagnostics) -> Vec<Formal> {
    let mut out = Vec::new();
    for p in list {
        let Some((bytes, align)) = array_size(&p.ty, p.dim.as_ref(), p.align.as_ref(), diags)
        else {
            continue;
        };
        let offset = at.next_multiple_of(align);
        *at = offset + bytes;
        out.push(Formal {
            name: p.name.node.to_string(),
            bytes,
            offset,
        });
    }
    out
}

/// Bytes and alignment (at most 16) of a `.param` of type `ty`, an array of `dim`
/// elements if given; `None` after an error (reported).
fn array_size(
    ty: &Spanned<TyTok>,
    dim: Option<&crate::ast::SExpr<'_>>,
    align: Option<&Spanned<&str>>,
    diags: &mut Diagnostics,
) -> Option<(u32, u32)> {
    let Some(elem) = bytes_of(ty) else {
        diags.push(
            Diagnostic::error(
                "a `.param` of a call cannot be a predicate",
                ty.span.clone(),
            )
            .help("pass it as a `.b32` (0 or 1) and compare it in the callee"),
        );
        return None;
    };
    let count = match dim {
        None => 1,
        Some(d) => match crate::eval::const_int(d, &[]) {
            Ok(n) if (1..=i64::from(MAX_FRAME)).contains(&n) => n as u32,
            Ok(n) => {
                diags.push(
                    Diagnostic::error(format!("a `.param` array of {n} elements"), d.span.clone())
                        .label(format!("expected 1 to {MAX_FRAME} bytes")),
                );
                return None;
            }
            Err(e) => {
                diags.push(e);
                return None;
            }
        },
    };
    let align = match align {
        None => elem,
        Some(a) => match crate::eval::parse_int(a.node).and_then(|v| u32::try_from(v).ok()) {
            Some(v) if v.is_power_of_two() && v <= 16 => v,
            _ => {
                diags.push(
                    Diagnostic::error(
                        format!("alignment `{}` is not supported", a.node),
                        a.span.clone(),
                    )
                    .label("expected a power of two up to 16"),
                );
                return None;
            }
        },
    };
    Some((elem * count, align.clamp(1, 16)))
}

impl Assembler<'_> {
    /// Reads the headers of the file's device functions and gives each a label.
    pub(super) fn func_decls(
        &mut self,
        text: &str,
        outline: &super::outline::Outline<'_>,
        diags: &mut Diagnostics,
    ) {
        for (i, f) in outline.funcs.iter().enumerate() {
            let Some(Spanned {
                node: Stmt::FuncOpen {
                    name, rets, params, ..
                },
                ..
            }) = statement_at(text, f.start as usize)
            else {
                continue; // its syntax error is reported with the file's
            };
            if let Some(&prev) = self.func_index.get(name.node) {
                diags.push(
                    Diagnostic::error(
                        format!("device function `{}` is defined twice", name.node),
                        name.span.clone(),
                    )
                    .label("second definition")
                    .with_secondary(self.funcs[prev].span.clone(), "first defined here"),
                );
                continue;
            }
            if let Some(&id) = self.scope.labels.get(name.node) {
                diags.push(
                    Diagnostic::error(
                        format!("`{}` names both a label and a device function", name.node),
                        name.span.clone(),
                    )
                    .with_secondary(self.labels[id as usize].span.clone(), "the label")
                    .help("rename the label"),
                );
                continue;
            }
            self.scope.funcs.insert(name.node.to_string());
            let mut at = 0;
            let params = layout(&params, &mut at, diags);
            if rets.len() > 1 {
                diags.push(
                    Diagnostic::error(
                        "a device function returns at most one value",
                        rets[1].name.span.clone(),
                    )
                    .help("return a `.b64` or pass a pointer for more"),
                );
            }
            let rets = layout(&rets, &mut at, diags);
            let label = self.labels.len() as u32;
            self.labels.push(LabelInfo {
                span: name.span.clone(),
                pc: None,
            });
            self.scope.labels.insert(name.node.to_string(), label);
            let owner = super::outline::FUNC_OWNER + i as u32;
            let labels = outline
                .labels
                .iter()
                .filter(|(o, _)| *o == owner)
                .map(|(_, l)| Spanned {
                    node: l.node.to_string(),
                    span: l.span.clone(),
                })
                .collect();
            self.func_index
                .insert(name.node.to_string(), self.funcs.len());
            self.funcs.push(FuncDef {
                name: name.node.to_string(),
                span: name.span.clone(),
                params,
                rets,
                frame: at.next_multiple_of(16),
                label,
                start: f.start,
                labels,
                queued: false,
            });
        }
    }

    /// Lowers every device function a lowered call reaches, after the kernel.
    pub(super) fn lower_funcs(&mut self, text: &str, diags: &mut Diagnostics) {
        let mut next = 0;
        while let Some(&i) = self.func_queue.get(next) {
            next += 1;
            if self.halted {
                return;
            }
            self.lower_func(text, i, diags);
        }
    }

    fn lower_func(&mut self, text: &str, i: usize, diags: &mut Diagnostics) {
        let f = self.funcs[i].clone();
        // Registers are a function's own.
        self.struct_regs = Default::default();
        let saved_regs = std::mem::take(&mut self.scope.regs);
        // The device functions' names, built once and lent to each function (a map
        // built per function made a file of N called functions take N^2 time).
        let mut labels = match self.func_labels.take() {
            Some(labels) => labels,
            None => self
                .funcs
                .iter()
                .map(|g| (g.name.clone(), g.label))
                .collect(),
        };
        let mut own = Vec::new();
        for l in &f.labels {
            if let Some(&id) = labels.get(&l.node) {
                diags.push(
                    Diagnostic::error(
                        format!("label `{}` is defined twice", l.node),
                        l.span.clone(),
                    )
                    .label("second definition")
                    .with_secondary(self.labels[id as usize].span.clone(), "first defined here"),
                );
                continue;
            }
            labels.insert(l.node.clone(), self.labels.len() as u32);
            own.push(l.node.clone());
            self.labels.push(LabelInfo {
                span: l.span.clone(),
                pc: None,
            });
        }
        let saved_labels = std::mem::replace(&mut self.scope.labels, labels);
        let mut slots = HashMap::new();
        for p in f.params.iter().chain(&f.rets) {
            slots.insert(
                p.name.clone(),
                Slot {
                    offset: p.offset,
                    bytes: p.bytes,
                },
            );
        }
        self.frame = Frame {
            in_func: true,
            slots,
            own: f.frame,
            ..Frame::default()
        };
        self.frame.local_ptrs =
            super::local::local_registers(text, f.start as usize, |n| self.frame.slot(n).is_some());
        let pc = self.code.len() as u32;
        self.labels[f.label as usize].pc = Some(pc);
        // Labels after the last instruction of the code before (clang's `Ltmp4:`
        // after a kernel's `ret`) would name this function's start: the
        // function's own name does.
        while self.module.labels.last().is_some_and(|l| l.pc == pc) {
            self.module.labels.pop();
        }
        self.module.labels.push(Label {
            name: f.name.clone(),
            pc,
        });
        self.cuda_loc = None;
        self.pending_loc = None;
        let mut statements = Statements::new(text, f.start as usize, false, false);
        statements.next(); // the `.func` header
        // Whether the code so far ends in an unconditional `ret`, `exit` or `bra`:
        // otherwise it would run on into the next function's code.
        let mut ends = false;
        // Labels after the last instruction (clang's `Lfunc_end0:` for its debug
        // sections) let the code run past the end only if a branch targets them.
        let mut trailing: Vec<&str> = Vec::new();
        let mut targets: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut close = None;
        for s in statements.by_ref() {
            match &s.node {
                Stmt::BlockOpen => self.scope_open(&s.span, diags),
                Stmt::BlockClose if self.frame.depth > 0 => self.scope_close(),
                Stmt::BlockClose => {
                    close = Some(s.span.clone());
                    break;
                }
                Stmt::EntryOpen { .. } | Stmt::FuncOpen { .. } => break,
                _ => {
                    match &s.node {
                        Stmt::Instr {
                            guard,
                            mnemonic,
                            operands,
                        } => {
                            let op = mnemonic.node.split('.').next().unwrap_or("");
                            ends = guard.is_none() && matches!(op, "ret" | "exit" | "bra" | "trap");
                            trailing.clear();
                            if op == "bra" {
                                targets.extend(operands.iter().filter_map(|o| match &o.node {
                                    Operand::Expr(Spanned {
                                        node: Expr::Name(n),
                                        ..
                                    }) => Some(*n),
                                    _ => None,
                                }));
                            }
                        }
                        Stmt::Label { name } => trailing.push(name.node),
                        Stmt::PtxCall { .. } => {
                            ends = false;
                            trailing.clear();
                        }
                        _ => {}
                    }
                    self.statement(&s, diags);
                }
            }
        }
        if !self.halted && (!ends || trailing.iter().any(|l| targets.contains(l))) {
            diags.push(
                Diagnostic::error(
                    format!("device function `{}` can run past its end", f.name),
                    close.unwrap_or_else(|| f.span.clone()),
                )
                .label("no `ret` before the end of the function")
                .with_secondary(f.span.clone(), "the function")
                .help("end every path through the function with `ret;`, as nvcc and clang do"),
            );
        }
        self.frame = Frame::default();
        self.scope.regs = saved_regs;
        let mut labels = std::mem::replace(&mut self.scope.labels, saved_labels);
        for name in &own {
            labels.remove(name);
        }
        self.func_labels = Some(labels);
        self.cuda_loc = None;
    }

    /// `{` of a call sequence: its registers and `.param`s are its own.
    /// `{`: a block whose declarations end at its `}`. Blocks nest at most
    /// [`MAX_BLOCK_DEPTH`] deep (each level keeps a copy of the names visible).
    pub(super) fn scope_open(&mut self, at: &Span, diags: &mut Diagnostics) {
        let f = &mut self.frame;
        f.depth += 1;
        if f.saved.len() >= MAX_BLOCK_DEPTH {
            if f.depth as usize == MAX_BLOCK_DEPTH + 1 {
                diags.push(
                    Diagnostic::error(
                        format!("blocks nest more than {MAX_BLOCK_DEPTH} deep here"),
                        at.clone(),
                    )
                    .label("too deep")
                    .help("compilers nest a few blocks (a call's `{ .param ... }`); close blocks before opening more"),
                );
            }
            return;
        }
        f.saved.push((f.declared.len(), f.slots.clone(), f.next));
        f.next = 0;
    }

    /// `}` of a call sequence.
    pub(super) fn scope_close(&mut self) {
        // Levels past the limit saved nothing.
        if self.frame.depth as usize == self.frame.saved.len()
            && let Some((declared, slots, next)) = self.frame.saved.pop()
        {
            for name in self.frame.declared.drain(declared..) {
                self.scope.regs.remove(&name);
            }
            self.frame.slots = slots;
            self.frame.next = next;
        }
        self.frame.local_args.clear();
        self.frame.depth = self.frame.depth.saturating_sub(1);
    }

    /// A call sequence's `.param`: the next slot of the callee's frame.
    pub(super) fn callseq_param(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        diags: &mut Diagnostics,
    ) {
        self.callseq_array_of(ty, name, None, None, diags);
    }

    /// A call sequence's `.param` array (`.param .align 8 .b8 param0[16];`).
    pub(super) fn callseq_array(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dim: &crate::ast::SExpr<'_>,
        align: Option<&Spanned<&str>>,
        diags: &mut Diagnostics,
    ) {
        self.callseq_array_of(ty, name, Some(dim), align, diags);
    }

    fn callseq_array_of(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dim: Option<&crate::ast::SExpr<'_>>,
        align: Option<&Spanned<&str>>,
        diags: &mut Diagnostics,
    ) {
        let Some((bytes, align)) = array_size(ty, dim, align, diags) else {
            return;
        };
        let off = self.frame.next.next_multiple_of(align);
        self.frame.next = off + bytes;
        self.frame.slots.insert(
            name.node.to_string(),
            Slot {
                offset: self.frame.own + off,
                bytes,
            },
        );
    }

    /// `ld.param`/`st.param` of a frame slot, lowered to `ld.local`/`st.local`; false
    /// when the instruction is no such access.
    pub(super) fn frame_access(
        &mut self,
        guard: Option<&Guard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<Operand<'_>>],
        span: &Span,
        diags: &mut Diagnostics,
    ) -> bool {
        let parts: Vec<&str> = mnemonic.node.split('.').collect();
        let at = match parts.as_slice() {
            ["ld", "param", ..] => 1,
            ["st", "param", ..] => 0,
            _ => return false,
        };
        let Some(Operand::Mem {
            base: None,
            offset: Some(off),
            ..
        }) = operands.get(at).map(|o| &o.node)
        else {
            return false;
        };
        let (name, plus) = match &off.node {
            Expr::Name(n) => (*n, Some(0)),
            Expr::Binary('+', a, b) => match (&a.node, &b.node) {
                (Expr::Name(n), Expr::Int(k)) => (*n, crate::eval::parse_int(k)),
                _ => return false,
            },
            _ => return false,
        };
        let Some(slot) = self.frame.slots.get(name).copied() else {
            return false;
        };
        let vec: u32 = if parts.contains(&"v4") {
            4
        } else if parts.contains(&"v2") {
            2
        } else {
            1
        };
        let width = parts
            .last()
            .and_then(|t| spu_isa::Ty::from_name(t))
            .map_or(0, |t| t.bits() / 8 * vec);
        let Some(plus) = plus
            .and_then(|k| u32::try_from(k).ok())
            .filter(|k| k + width <= slot.bytes)
        else {
            diags.push(
                Diagnostic::error(format!("this access is outside `{name}`"), off.span.clone())
                    .label(format!("`{name}` has {} bytes", slot.bytes))
                    .help("access the parameter within its size"),
            );
            return true;
        };
        let local = parts
            .iter()
            .map(|p| if *p == "param" { "local" } else { p })
            .collect::<Vec<_>>()
            .join(".");
        let addr = (slot.offset + plus).to_string();
        if at == 0 {
            match operands.get(1).map(|o| &o.node) {
                Some(Operand::Register(r)) if self.frame.local_ptrs.contains(*r) => {
                    let at = operands[1].span.clone();
                    self.frame.local_args.insert(name.to_string(), at);
                }
                _ => {
                    self.frame.local_args.remove(name);
                }
            }
        }
        let mut ops: Vec<Spanned<Operand<'_>>> = Vec::new();
        for (i, o) in operands.iter().enumerate() {
            let node = if i == at {
                Operand::Mem {
                    base: None,
                    negative: false,
                    offset: Some(Spanned {
                        node: Expr::Int(&addr),
                        span: off.span.clone(),
                    }),
                }
            } else {
                match &o.node {
                    Operand::Register(r) => Operand::Register(r),
                    Operand::Vector(rs) => Operand::Vector(rs.clone()),
                    // `st.param.b32 [param0+0], 1;`: an immediate.
                    Operand::Expr(e) if at == 0 => Operand::Expr(super::local::copy_expr(e, &[])),
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                format!("`{}` of a parameter takes a register here", parts[0]),
                                o.span.clone(),
                            )
                            .label("expected a register"),
                        );
                        return true;
                    }
                }
            };
            ops.push(Spanned {
                node,
                span: o.span.clone(),
            });
        }
        let m = Spanned {
            node: local.as_str(),
            span: mnemonic.span.clone(),
        };
        self.emit(guard, &m, &ops, span, diags);
        true
    }

    /// PTX's call of a device function: arguments in registers are stored into the
    /// callee's frame, the machine's `call` runs it, and a return value in a register
    /// is loaded from the frame after.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ptx_call(
        &mut self,
        guard: Option<&Guard<'_>>,
        mnemonic: &Spanned<&str>,
        rets: &[Spanned<CallArg<'_>>],
        func: &Spanned<&str>,
        args: &[Spanned<CallArg<'_>>],
        extra: Option<&Span>,
        span: &Span,
        diags: &mut Diagnostics,
    ) {
        if let Some(x) = extra {
            diags.push(
                Diagnostic::error("indirect calls are not supported", x.clone())
                    .label("a prototype or a list of call targets")
                    .help("call the device function by its name"),
            );
            return;
        }
        let idx = self.func_index.get(func.node).copied();
        if idx.is_none() && func.node != "vprintf" {
            // `call L;` in the `.spu` dialect: the machine's call without its frame.
            if !self.in_ptx_file(span.start) && self.scope.labels.contains_key(func.node) {
                diags.push(
                    Diagnostic::error("`call` takes two operands, not 1", func.span.clone())
                        .label("a label, but no frame size")
                        .help(format!(
                            "write `call {}, FRAME;`, where the callee's frame starts in 16-byte units (0..=255)",
                            func.node
                        )),
                );
                return;
            }
            let help = format!(
                "define it in this file with `.func {}(...) {{ ... }}`; the assembler links no other files",
                func.node
            );
            diags.push(
                Diagnostic::error(
                    format!(
                        "`{}` is not a device function defined in this file",
                        func.node
                    ),
                    func.span.clone(),
                )
                .label("called here")
                .help(help),
            );
            return;
        }
        // `vprintf` is built in: the machine's `printf` reads the caller's frame.
        let f = match idx {
            Some(i) => self.funcs[i].clone(),
            None => vprintf(&func.span),
        };
        self.frame.called = true;
        // A local address is an offset in the caller's frame; the callee has its own.
        let local_arg = args
            .iter()
            .filter(|_| idx.is_some())
            .find_map(|a| match a.node {
                CallArg::Register(r) if self.frame.local_ptrs.contains(r) => Some(a.span.clone()),
                CallArg::Param(n) => self.frame.local_args.get(n).cloned(),
                CallArg::Register(_) => None,
            });
        if let Some(at) = local_arg {
            diags.push(
                Diagnostic::error(
                    format!("`{}` is given the address of a local array", f.name),
                    at,
                )
                .label("a local address")
                .help("a device function cannot reach its caller's local memory here: pass the values, or put the array in `.shared` or `.global` memory"),
            );
            return;
        }
        let mut ok = true;
        let mut count = |what: &str, given: usize, wanted: usize, at: &Span, ok: &mut bool| {
            if given != wanted {
                let d = Diagnostic::error(
                    format!(
                        "`{}` takes {wanted} {what}{}; this call gives {given}",
                        f.name,
                        if wanted == 1 { "" } else { "s" }
                    ),
                    at.clone(),
                );
                diags.push(if idx.is_some() {
                    d.with_secondary(f.span.clone(), "the function is declared here")
                        .help(format!(
                            "pass exactly {wanted}, in the order of its signature"
                        ))
                } else {
                    d.help("`vprintf` takes the format string's address and the argument buffer's address and returns an `int`, as nvcc and clang call it for `printf`")
                });
                *ok = false;
            }
        };
        count("argument", args.len(), f.params.len(), &func.span, &mut ok);
        if !rets.is_empty() {
            count(
                "return value",
                rets.len(),
                f.rets.len(),
                &func.span,
                &mut ok,
            );
        }
        if !ok {
            return;
        }
        let own = self.frame.own;
        if own > MAX_FRAME {
            diags.push(
                Diagnostic::error("the caller's frame is too large for a call", span.clone())
                    .label(format!(
                        "{own} bytes of parameters and return values; at most {MAX_FRAME}"
                    ))
                    .help("pass fewer or smaller parameters"),
            );
            return;
        }
        // Arguments in `.param`s must be where the callee reads them.
        let mut stores = Vec::new();
        let mut loads = Vec::new();
        for (list, formals, out) in [(args, &f.params, &mut stores), (rets, &f.rets, &mut loads)] {
            for (a, p) in list.iter().zip(formals) {
                let want = own + p.offset;
                match a.node {
                    CallArg::Param(n) => match self.frame.slots.get(n) {
                        None => {
                            diags.push(
                                Diagnostic::error(
                                    format!("`{n}` is not a `.param` of this call sequence"),
                                    a.span.clone(),
                                )
                                .help(format!(
                                    "declare it before the call: `.param .b{} {n};`",
                                    p.bytes * 8
                                )),
                            );
                            ok = false;
                        }
                        Some(s) if s.bytes != p.bytes => {
                            diags.push(
                                Diagnostic::error(
                                    format!(
                                        "`{n}` has {} bytes, but `{}`'s `{}` has {}",
                                        s.bytes, f.name, p.name, p.bytes
                                    ),
                                    a.span.clone(),
                                )
                                .with_secondary(f.span.clone(), "the function is declared here")
                                .help(format!("declare `{n}` as `.param .b{} {n};`", p.bytes * 8)),
                            );
                            ok = false;
                        }
                        // A wrong size before it moves every later slot: one error.
                        Some(s) if s.offset != want && ok => {
                            diags.push(
                                Diagnostic::error(format!("`{n}` is not where `{}` reads `{}`", f.name, p.name), a.span.clone())
                                    .help("declare the call sequence's `.param`s in the order of the call's arguments, return values last"),
                            );
                            ok = false;
                        }
                        Some(_) => {}
                    },
                    CallArg::Register(r) => out.push((r, want, p.bytes, a.span.clone())),
                }
            }
        }
        if !ok {
            return;
        }
        let frame = (own / 16).to_string();
        let access = |op: &str, r: &str, at: u32, bytes: u32, s: &Span| {
            let addr = at.to_string();
            (
                format!("{op}.local.b{}", bytes * 8),
                r.to_string(),
                addr,
                s.clone(),
            )
        };
        // `[addr]`: a frame slot as a memory operand of `ld.local`/`st.local`.
        let slot = |addr, s: &std::ops::Range<usize>| Spanned {
            node: Operand::Mem {
                base: None,
                negative: false,
                offset: Some(Spanned {
                    node: Expr::Int(addr),
                    span: s.clone(),
                }),
            },
            span: s.clone(),
        };
        let stores: Vec<_> = stores
            .into_iter()
            .map(|(r, at, b, s)| access("st", r, at, b, &s))
            .collect();
        for (m, r, addr, s) in &stores {
            let ops = [
                slot(addr, s),
                Spanned {
                    node: Operand::Register(r),
                    span: s.clone(),
                },
            ];
            let m = Spanned {
                node: m.as_str(),
                span: mnemonic.span.clone(),
            };
            self.emit(guard, &m, &ops, span, diags);
        }
        let call_ops = [
            Spanned {
                node: Operand::Expr(Spanned {
                    node: Expr::Name(func.node),
                    span: func.span.clone(),
                }),
                span: func.span.clone(),
            },
            Spanned {
                node: Operand::Expr(Spanned {
                    node: Expr::Int(&frame),
                    span: func.span.clone(),
                }),
                span: func.span.clone(),
            },
        ];
        if idx.is_some() {
            self.emit(guard, mnemonic, &call_ops, span, diags);
        } else {
            let m = Spanned {
                node: "printf",
                span: mnemonic.span.clone(),
            };
            self.emit(guard, &m, &call_ops[1..], span, diags);
        }
        let loads: Vec<_> = loads
            .into_iter()
            .map(|(r, at, b, s)| access("ld", r, at, b, &s))
            .collect();
        for (m, r, addr, s) in &loads {
            let ops = [
                Spanned {
                    node: Operand::Register(r),
                    span: s.clone(),
                },
                slot(addr, s),
            ];
            let m = Spanned {
                node: m.as_str(),
                span: mnemonic.span.clone(),
            };
            self.emit(guard, &m, &ops, span, diags);
        }
        if let Some(idx) = idx
            && !self.funcs[idx].queued
        {
            self.funcs[idx].queued = true;
            self.func_queue.push(idx);
        }
    }
}

/// CUDA's `vprintf(const char *format, void *args)` returning an `int`, as nvcc
/// and clang declare it: the machine's `printf` with this frame.
fn vprintf(span: &Span) -> FuncDef {
    let formal = |name: &str, bytes, offset| Formal {
        name: name.to_string(),
        bytes,
        offset,
    };
    FuncDef {
        name: "vprintf".into(),
        span: span.clone(),
        params: vec![
            formal("vprintf_param_0", 8, 0),
            formal("vprintf_param_1", 8, 8),
        ],
        rets: vec![formal("func_retval0", 4, 16)],
        frame: 32,
        label: u32::MAX,
        start: 0,
        labels: Vec::new(),
        queued: true,
    }
}
