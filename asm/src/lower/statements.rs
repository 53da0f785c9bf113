//! The code of the assembled kernel, statement by statement as it is parsed: the
//! directives inside an entry (registers, shared arrays, `.iu`, line information),
//! the launch and DMA descriptors, labels, and instructions lowered into the
//! compact code. An instruction that names a declaration which failed is not
//! checked, as its errors would only repeat that one.

use super::outline::{FUNC_OWNER, NO_OWNER};
use super::{Assembler, Entry, ty_of};
use crate::ast::{Spanned, Stmt, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::parse_int;
use crate::operands::Lowering;
use crate::parse::Statements;
use crate::vcode::NO_LABEL;
use spu_isa::MAX_SYMBOLS;
use spu_isa::format::{Label, MAX_INSTRUCTIONS, MAX_SHARED_ALIGN, SharedDecl, SourceLoc};

impl Assembler<'_> {
    /// Lowers the code of the chosen kernel, statement by statement as it is parsed;
    /// syntax errors of the whole file go to `diags` too.
    pub(super) fn code(&mut self, text: &str, diags: &mut Diagnostics) {
        let mut statements = Statements::new(text, 0, false, true);
        let (mut entries, mut funcs, mut open) = (0u32, 0u32, NO_OWNER);
        let mut depth = 0u32;
        for s in statements.by_ref() {
            let owner = match &s.node {
                Stmt::EntryOpen { .. } => {
                    open = entries;
                    entries += 1;
                    depth = 1;
                    open
                }
                Stmt::FuncOpen { body: true, .. } => {
                    open = FUNC_OWNER + funcs;
                    funcs += 1;
                    depth = 1;
                    open
                }
                Stmt::BlockOpen => {
                    depth += 1;
                    open
                }
                Stmt::BlockClose if depth > 1 => {
                    depth -= 1;
                    if self.active(open) && open != NO_OWNER {
                        self.scope_close();
                    }
                    continue;
                }
                Stmt::BlockClose => {
                    depth = 0;
                    std::mem::replace(&mut open, NO_OWNER)
                }
                _ => open,
            };
            if self.active(owner) {
                // Without local arrays, `cvta.local` or calls (whose `.param`s are
                // frame slots) no register can hold a local address: the kernel
                // is not read a second time for them.
                if matches!(s.node, Stmt::EntryOpen { .. }) {
                    self.frame.local_ptrs = if text.contains("local") || text.contains("call") {
                        super::local::local_registers(text, s.span.start, |_| false)
                    } else {
                        Default::default()
                    };
                }
                if matches!(s.node, Stmt::BlockOpen) {
                    self.scope_open(&s.span, diags);
                    continue;
                }
                self.module_scope = owner == NO_OWNER;
                self.statement(&s, diags);
                self.module_scope = false;
            }
        }
        diags.append(statements.take_diagnostics());
        self.lower_funcs(text, diags);
    }

    pub(super) fn statement(&mut self, s: &Spanned<Stmt<'_>>, diags: &mut Diagnostics) {
        if self.halted
            && matches!(
                s.node,
                Stmt::Instr { .. } | Stmt::Reg { .. } | Stmt::PtxCall { .. }
            )
        {
            return;
        }
        // nvcc declares `extern __shared__` arrays (`.extern .shared`) at module
        // scope, before the entries that use them, and clang file-scope and
        // `static` `__shared__` arrays (`.visible .shared`).
        let needs_entry = matches!(
            s.node,
            Stmt::Reg { .. }
                | Stmt::Local { .. }
                | Stmt::Label { .. }
                | Stmt::Instr { .. }
                | Stmt::PtxCall { .. }
                | Stmt::IuSection
        );
        if needs_entry && !self.in_entry() {
            diags.push(
                Diagnostic::error("this belongs inside an `.entry` block", s.span.clone())
                    .label("outside any kernel")
                    .help("put registers, shared arrays and code inside `.entry name { ... }`"),
            );
            return;
        }
        match &s.node {
            Stmt::Param { ty, name, .. } if self.frame.depth > 0 || self.frame.in_func => {
                self.callseq_param(ty, name, diags)
            }
            Stmt::ParamArray {
                ty,
                name,
                dim,
                align,
            } if self.frame.depth > 0 || self.frame.in_func => {
                self.callseq_array(ty, name, dim, align.as_ref(), diags)
            }
            Stmt::ParamArray { name, .. } => diags.push(
                Diagnostic::error(
                    format!("launch parameter `{}` cannot be an array", name.node),
                    name.span.clone(),
                )
                .help("declare a `.global` buffer for an array, a `.param` for a scalar; a kernel's struct parameter takes its fields in `.bind`"),
            ),
            Stmt::Param { .. } | Stmt::Global { .. } | Stmt::Empty => {}
            Stmt::Bind { .. } => {
                if let Some(first) = self.first_bind.as_ref().filter(|f| **f != s.span) {
                    diags.push(
                        Diagnostic::error("`.bind` is given twice", s.span.clone())
                            .with_secondary(first.clone(), "first here")
                            .help("a launch binds one kernel's arguments once"),
                    );
                }
            }
            Stmt::Label { name } => {
                let pc = self.code.len() as u32;
                if let Some(&id) = self.scope.labels.get(name.node)
                    && self.labels[id as usize].pc.is_none()
                {
                    self.labels[id as usize].pc = Some(pc);
                    self.module.labels.push(Label {
                        name: name.node.to_string(),
                        pc,
                    });
                }
            }
            // One outside the kernels was read with the declarations.
            Stmt::File { index, path } if self.in_ptx_file(s.span.start) => {
                if self.in_entry() {
                    self.cuda_file(index, path, diags);
                }
            }
            Stmt::Loc {
                file, line, col, ..
            } if self.in_ptx_file(s.span.start) => {
                self.cuda_loc(file, line, col, diags);
            }
            Stmt::File { index, path } => match parse_int(index.node) {
                Some(i) if i >= 0 && (i as usize) <= self.module.lines.files.len() && i < 65536 => {
                    let i = i as usize;
                    if i == self.module.lines.files.len() {
                        self.module.lines.files.push(path.to_string());
                    } else {
                        self.module.lines.files[i] = path.to_string();
                    }
                }
                _ => diags.push(
                    Diagnostic::error(
                        format!("file index `{}` is out of order", index.node),
                        index.span.clone(),
                    )
                    .label(format!("expected 0..={}", self.module.lines.files.len())),
                ),
            },
            Stmt::Loc {
                file,
                line,
                col,
                attrs,
            } => {
                let num = |t: &Spanned<&str>| parse_int(t.node).and_then(|v| u32::try_from(v).ok());
                match (num(file), num(line), num(col)) {
                    (Some(f), Some(l), Some(c)) if (f as usize) < self.module.lines.files.len() => {
                        self.pending_loc = Some(SourceLoc {
                            file: f as u16,
                            line: l,
                            col: c,
                        });
                        self.pending_debug = self.listing_debug(attrs, diags);
                    }
                    _ => diags.push(Diagnostic::error("malformed `.loc`", s.span.clone()).label(
                        "expected `.loc FILE LINE COLUMN;` with a file declared by `.file`",
                    )),
                }
            }
            Stmt::Shared {
                ty,
                name,
                dims,
                align,
                dynamic,
            } => {
                if !self.shared(ty, name, dims, align.as_ref(), *dynamic, diags) {
                    // The code's uses of it would only repeat the error.
                    self.scope.poisoned.insert(name.node.to_string());
                }
            }
            Stmt::Local {
                ty,
                name,
                dims,
                align,
            } => self.local_decl(ty, name, dims, align.as_ref(), diags),
            Stmt::Reg { ty, items } => {
                self.ptx_regs |= self.in_ptx_file(s.span.start);
                self.regs(ty, items, &s.span, diags);
            }
            Stmt::Launch { parts } => self.launch(parts, &s.span, diags),
            Stmt::Assert {
                lhs,
                op,
                rhs,
                message,
            } => self.precondition(lhs, op.node, rhs, message, diags),
            Stmt::Dma {
                side,
                buffer,
                fields,
            } => self.dma(side, buffer, fields, diags),
            Stmt::Header { directive, value } => {
                if *directive == "address_size" && !matches!(value.node, "32" | "64") {
                    diags.push(
                        Diagnostic::error(
                            format!("`.address_size {}` is not supported", value.node),
                            value.span.clone(),
                        )
                        .label("expected 32 or 64"),
                    );
                }
            }
            Stmt::EntryOpen { name, hints, .. } => match &self.entry {
                Some(e) => diags.push(
                    Diagnostic::error("only one `.entry` per file", name.span.clone())
                        .label("second kernel")
                        .with_secondary(e.open.clone(), "first kernel here")
                        .help("put each kernel in its own file"),
                ),
                None => {
                    self.entry_hints(hints, diags);
                    self.module.name = name.node.to_string();
                    self.entry = Some(Entry {
                        name: name.node.to_string(),
                        open: s.span.clone(),
                        closed: false,
                    });
                }
            },
            Stmt::BlockClose => match &mut self.entry {
                Some(e) if !e.closed => {
                    e.closed = true;
                    self.cuda_loc = None;
                }
                _ => diags.push(
                    Diagnostic::error("unmatched `}`", s.span.clone())
                        .label("no block is open here"),
                ),
            },
            // In the PTX clang wrote for a `.cu` file (the inline `asm(".iu;")` of
            // `spu_is_iu()`, which clang places after code the IUs need too) it
            // says the IUs run the kernel from its start, telling themselves apart
            // by `%is_iu`; it may appear again.
            Stmt::IuSection if self.in_cuda_file(s.span.start) => {
                if self.iu_entry.is_none() {
                    self.iu_entry = Some((0, s.span.clone()));
                }
            }
            Stmt::IuSection => match &self.iu_entry {
                Some((_, prev)) => diags.push(
                    Diagnostic::error("a kernel has one `.iu` section", s.span.clone())
                        .with_secondary(prev.clone(), "the IU section starts here"),
                ),
                None => self.iu_entry = Some((self.code.len() as u32, s.span.clone())),
            },
            Stmt::Instr {
                guard,
                mnemonic,
                operands,
            } => {
                self.note_shared(operands);
                if self.uses_poisoned(guard.as_ref(), operands) {
                    return;
                }
                if self.struct_instr(guard.as_ref(), mnemonic, operands, &s.span, diags) {
                    return;
                }
                if self.frame_access(guard.as_ref(), mnemonic, operands, &s.span, diags) {
                    return;
                }
                if self.local_instr(guard.as_ref(), mnemonic, operands, &s.span, diags) {
                    return;
                }
                // PTX's `call f;` (no arguments, no return value).
                if let [
                    crate::ast::Spanned {
                        node:
                            crate::ast::Operand::Expr(
                                f @ crate::ast::Spanned {
                                    node: crate::ast::Expr::Name(name),
                                    ..
                                },
                            ),
                        ..
                    },
                ] = operands.as_slice()
                    && (mnemonic.node == "call" || mnemonic.node.starts_with("call."))
                {
                    let func = crate::ast::Spanned {
                        node: *name,
                        span: f.span.clone(),
                    };
                    self.ptx_call(
                        guard.as_ref(),
                        mnemonic,
                        &[],
                        &func,
                        &[],
                        None,
                        &s.span,
                        diags,
                    );
                    return;
                }
                self.track_uses(mnemonic, operands);
                self.emit(guard.as_ref(), mnemonic, operands, &s.span, diags);
            }
            Stmt::FuncOpen { .. } | Stmt::BlockOpen => {}
            Stmt::PtxCall {
                guard,
                mnemonic,
                rets,
                func,
                args,
                extra,
            } => self.ptx_call(
                guard.as_ref(),
                mnemonic,
                rets,
                func,
                args,
                extra.as_ref(),
                &s.span,
                diags,
            ),
        }
    }

    /// Lowers one instruction into the code.
    pub(super) fn emit(
        &mut self,
        guard: Option<&crate::ast::Guard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<crate::ast::Operand<'_>>],
        span: &crate::lexer::Span,
        diags: &mut Diagnostics,
    ) {
        let pos = guard.map_or(mnemonic.span.start, |g| g.pred.span.start.saturating_sub(1));
        let loc = self
            .pending_loc
            .take()
            .or(self.cuda_loc)
            .unwrap_or_else(|| self.loc(pos));
        let mut debug = self.pending_debug.take();
        // Colouring is certain once the registers are a PTX file's or do not
        // fit: vector operands are then lowered as colouring needs them.
        let ptx = self.in_ptx_file(span.start);
        let mut lowering = Lowering {
            scope: &self.scope,
            vregs: &mut self.vregs,
            colour: self.colour || self.ptx_regs || !self.decls_fit,
            ptx,
        };
        match lowering.instr(guard, mnemonic, operands, span) {
            Ok(list) => {
                for v in list {
                    if self.code.len() >= MAX_INSTRUCTIONS {
                        diags.push(crate::parse::too_many_instructions(
                            span.clone(),
                            MAX_INSTRUCTIONS,
                        ));
                        self.halted = true;
                        return;
                    }
                    let target = v.target.unwrap_or(NO_LABEL);
                    match self.code.push(&v, target, span) {
                        Ok(()) => {
                            self.module.lines.locs.push(loc);
                            if let Some((hidden, names)) = debug.take() {
                                self.code.mark_last(hidden, names);
                            }
                        }
                        Err(e) => diags.push(Diagnostic::error(e.to_string(), span.clone())),
                    }
                }
            }
            Err(ds) => ds.into_iter().for_each(|d| diags.push(d)),
        }
    }

    /// A `.shared` array (or the `.extern .shared` one); false when it could not be
    /// declared (reported).
    fn shared(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dims: &[crate::ast::SExpr<'_>],
        align: Option<&Spanned<&str>>,
        dynamic: bool,
        diags: &mut Diagnostics,
    ) -> bool {
        let Some(t) = ty_of(ty.node) else {
            diags.push(Diagnostic::error(
                "shared arrays cannot hold predicates",
                ty.span.clone(),
            ));
            return false;
        };
        if self.module.shared.len() >= usize::from(MAX_SYMBOLS) {
            diags.push(
                Diagnostic::error("too many shared arrays", name.span.clone())
                    .label(format!("a kernel has at most {MAX_SYMBOLS} shared arrays")),
            );
            return false;
        }
        if !self.declare_global(name, diags) {
            // The name stands for its first declaration.
            return true;
        }
        let align = match align {
            None => 0,
            Some(a) => match parse_int(a.node).and_then(|v| u32::try_from(v).ok()) {
                Some(v) if v.is_power_of_two() && v <= MAX_SHARED_ALIGN => v,
                _ => {
                    diags.push(
                        Diagnostic::error(
                            format!("alignment `{}` is not supported", a.node),
                            a.span.clone(),
                        )
                        .label(format!("expected a power of two up to {MAX_SHARED_ALIGN}")),
                    );
                    return false;
                }
            },
        };
        if dynamic {
            self.dynamic_shared
                .push((self.module.shared.len(), t.bits() / 8, name.span.clone()));
        } else if self.module_scope {
            self.module_shared.push(self.module.shared.len());
        }
        // A dynamic array is sized at launch; a scalar is an array of one.
        let dims = if dynamic || dims.is_empty() {
            Some(vec![spu_isa::format::Expr::constant(1)])
        } else {
            self.dims(dims, diags)
        };
        let Some(dims) = dims else {
            return false;
        };
        self.scope
            .shared
            .insert(name.node.to_string(), self.module.shared.len() as u16);
        self.module.shared.push(SharedDecl {
            name: name.node.to_string(),
            ty: t,
            align,
            dims,
        });
        true
    }

    /// Whether an instruction names a declaration that failed: its errors would
    /// only repeat that one, so it is not checked.
    fn uses_poisoned(
        &self,
        guard: Option<&crate::ast::Guard<'_>>,
        operands: &[Spanned<crate::ast::Operand<'_>>],
    ) -> bool {
        use crate::ast::{Expr, Operand, Step, walk};
        let scope = &self.scope;
        if scope.poisoned.is_empty() && scope.poisoned_regs.is_empty() {
            return false;
        }
        // `%r12`, `%rd3.hi`: the declaration's base name is `r`, `rd`.
        let reg = |name: &str| {
            let name = name.split('.').next().unwrap_or(name);
            let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
            scope.poisoned_regs.contains(name)
                || (base.len() < name.len() && scope.poisoned_regs.contains(base))
        };
        let expr = |e: &crate::ast::SExpr<'_>| {
            walk(e, |step| match step {
                Step::Enter(Spanned {
                    node: Expr::Name(n),
                    ..
                }) if scope.poisoned.contains(*n) => Err(()),
                _ => Ok(true),
            })
            .is_err()
        };
        guard.is_some_and(|g| reg(g.pred.node))
            || operands.iter().any(|o| match &o.node {
                Operand::Register(r) | Operand::NotPred(r) => reg(r),
                Operand::RegPred(r, p) => reg(r) || reg(p.node),
                Operand::Vector(rs) => rs.iter().any(|r| reg(r.node)),
                Operand::Mem { base, offset, .. } => {
                    base.as_ref().is_some_and(|b| reg(b.node)) || offset.as_ref().is_some_and(expr)
                }
                Operand::Expr(e) => expr(e),
            })
    }
}
