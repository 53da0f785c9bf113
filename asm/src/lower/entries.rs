//! Which kernel of a file is assembled, and what its PTX parameters stand for:
//! `--entry NAME` or `.bind NAME(...)` chooses among several `.entry` blocks (one
//! entry needs no choice); `.bind` gives each parameter, in signature order, a
//! buffer (a pointer parameter), a kernel parameter or a constant. Without `.bind`,
//! every parameter (32- or 64-bit) is a kernel parameter, set with `-D`.
//! Also sizes the `.extern .shared` array from `.launch shared(BYTES)`.

use super::{Assembler, ty_of};
use crate::ast::{EntryParam, Expr, Spanned, Stmt};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{const_bits64, param_default};
use crate::operands::{Bound, EntryArg};
use crate::suggest::closest;
use spu_isa::format::{BinOp, Expr as StoredExpr};

impl Assembler {
    /// For each statement, whether it belongs to the assembled kernel (or to no
    /// kernel at all).
    pub(super) fn select_entry(
        &mut self,
        stmts: &[Spanned<Stmt<'_>>],
        diags: &mut Diagnostics,
    ) -> Vec<bool> {
        let mut entries: Vec<(&str, crate::lexer::Span)> = Vec::new();
        let mut owner: Vec<Option<usize>> = Vec::with_capacity(stmts.len());
        let mut open: Option<usize> = None;
        for s in stmts {
            match &s.node {
                Stmt::EntryOpen { name, .. } => {
                    if let Some((_, prev)) = entries.iter().find(|(n, _)| *n == name.node) {
                        diags.push(
                            Diagnostic::error(
                                format!("kernel `{}` is defined twice", name.node),
                                name.span.clone(),
                            )
                            .with_secondary(prev.clone(), "first defined here"),
                        );
                    }
                    entries.push((name.node, name.span.clone()));
                    open = Some(entries.len() - 1);
                    owner.push(open);
                }
                Stmt::BlockClose => {
                    owner.push(open);
                    open = None;
                }
                _ => owner.push(open),
            }
        }
        let names = || entries.iter().map(|(n, _)| *n);
        let list = || {
            names()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let bind = stmts.iter().find_map(|s| match &s.node {
            Stmt::Bind { entry, .. } => Some(entry),
            _ => None,
        });
        let find = |want: &str| names().position(|n| n == want);
        let chosen = if let Some(want) = self.options.entry.clone() {
            if let Some(b) = bind.filter(|b| b.node != want) {
                diags.push(
                    Diagnostic::error(
                        format!(
                            "`.bind` launches `{}`, but `--entry` asks for `{want}`",
                            b.node
                        ),
                        b.span.clone(),
                    )
                    .help("leave out `--entry`: the launch file chooses the kernel"),
                );
            }
            let found = find(&want);
            if found.is_none() && !entries.is_empty() {
                let d = Diagnostic::error(format!("no kernel is named `{want}`"), 0..0)
                    .label(format!("the file has {}", list()));
                diags.push(match closest(&want, names()) {
                    Some(c) => d.help(format!("did you mean `--entry {c}`?")),
                    None => d.help(format!("choose one of {}", list())),
                });
                self.no_entry_chosen = true;
            }
            found
        } else if let Some(b) = bind {
            let found = find(b.node);
            if found.is_none() {
                let d = Diagnostic::error(
                    format!("`.bind` names `{}`, but no kernel has that name", b.node),
                    b.span.clone(),
                )
                .label("not an `.entry` of this file or its includes");
                diags.push(match closest(b.node, names()) {
                    Some(c) => d.help(format!("did you mean `{c}`?")),
                    None if entries.is_empty() => {
                        d.help("`#include` the PTX file that defines the kernel")
                    }
                    None => d.help(format!("the kernels are {}", list())),
                });
                self.no_entry_chosen = true;
            }
            found
        } else if entries.len() > 1 {
            diags.push(
                Diagnostic::error(
                    format!("this file has {} kernels: {}", entries.len(), list()),
                    entries[1].1.clone(),
                )
                .label("a second kernel")
                .with_secondary(entries[0].1.clone(), "the first kernel")
                .help(format!(
                    "choose one with `--entry {}`, or launch it from a `.spu` file with `.bind {}(...)`",
                    entries[0].0, entries[0].0
                )),
            );
            self.no_entry_chosen = true;
            None
        } else {
            (!entries.is_empty()).then_some(0)
        };
        owner
            .into_iter()
            .map(|o| o.is_none() || (o == chosen && chosen.is_some()))
            .collect()
    }

    /// Makes the chosen entry's parameters kernel parameters, or binds them to the
    /// arguments of `.bind` (in signature order).
    pub(super) fn bind_entry_params(
        &mut self,
        params: &[EntryParam<'_>],
        bind: Option<&Spanned<Stmt<'_>>>,
        diags: &mut Diagnostics,
    ) {
        let args = match bind.map(|b| (&b.node, &b.span)) {
            Some((Stmt::Bind { entry, args }, span)) => {
                if args.len() != params.len() {
                    let names: Vec<&str> = params.iter().map(|p| p.name.node).collect();
                    diags.push(
                        Diagnostic::error(
                            format!(
                                "`{}` takes {} argument{}, `.bind` gives {}",
                                entry.node,
                                params.len(),
                                if params.len() == 1 { "" } else { "s" },
                                args.len()
                            ),
                            span.clone(),
                        )
                        .label(format!("parameters: {}", names.join(", ")))
                        .help("give one argument per parameter, in signature order: a buffer for a pointer, a parameter or a constant for a scalar"),
                    );
                    return;
                }
                Some(args)
            }
            _ => None,
        };
        for (i, p) in params.iter().enumerate() {
            let Some(t) = ty_of(p.ty.node) else {
                diags.push(
                    Diagnostic::error("parameters cannot be predicates", p.ty.span.clone())
                        .label("use .u32, .s32, .f32, .u64, .s64 or .f64"),
                );
                continue;
            };
            let Some(arg) = args.map(|a| &a[i]) else {
                self.param(&p.ty, &p.name, None, diags);
                continue;
            };
            let bound = match &arg.node {
                Expr::Name(n) if self.scope.buffers.contains_key(*n) => {
                    if t.is_float() || t.bits() < 32 {
                        Err(Diagnostic::error(
                            format!("`{n}` is a buffer, but `{}` is a .{t}", p.name.node),
                            arg.span.clone(),
                        )
                        .label("a buffer binds to a pointer (.u64) parameter")
                        .with_secondary(p.name.span.clone(), "declared here"))
                    } else {
                        Ok(Bound::Buffer(n.to_string()))
                    }
                }
                Expr::Name(n) if self.scope.params.iter().any(|q| q.name == *n) => {
                    let q = self
                        .scope
                        .params
                        .iter()
                        .find(|q| q.name == *n)
                        .map(|q| q.ty);
                    // The same kind and width, or a 32-bit integer widened to a
                    // 64-bit one (sign-extended from an .s32).
                    match q {
                        Some(q)
                            if q.is_float() == t.is_float()
                                && t.bits() >= 32
                                && (q.bits() == t.bits() || !t.is_float() && q.bits() < t.bits()) =>
                        {
                            Ok(Bound::Param(n.to_string()))
                        }
                        _ => Err(Diagnostic::error(
                            format!(
                                "parameter `{n}` is .{}, but `{}` is a .{t}",
                                q.unwrap_or(spu_isa::Ty::U32),
                                p.name.node
                            ),
                            arg.span.clone(),
                        )
                        .label("types do not match")
                        .with_secondary(p.name.span.clone(), "declared here")
                        .help(
                            "pass a parameter of the same kind (integer or float) and width (a 32-bit integer may widen to a 64-bit one), or a constant",
                        )),
                    }
                }
                // A float constant is rounded like a default (finite unless written
                // as a bit pattern); an integer may be written signed or unsigned.
                _ if t.is_float() => param_default(arg, t, &self.scope.params)
                    .map(Bound::Const)
                    .map_err(|d| {
                        d.help("an argument is a buffer name, a parameter name or a constant")
                    }),
                _ => const_bits64(arg, t, &self.scope.params)
                    .map(Bound::Const)
                    .map_err(|d| {
                        d.help("an argument is a buffer name, a parameter name or a constant")
                    }),
            };
            match bound {
                Ok(bound) => {
                    if self.declare_global(&p.name, diags) {
                        self.scope
                            .entry_args
                            .insert(p.name.node.to_string(), EntryArg { ty: t, bound });
                    }
                }
                Err(d) => diags.push(d),
            }
        }
    }

    /// Gives the `.extern .shared` array its size: `.launch shared(BYTES)` in
    /// elements, rounded up.
    pub(super) fn size_dynamic_shared(&mut self, diags: &mut Diagnostics) {
        let Some((index, elem, span)) = self.dynamic_shared.clone() else {
            if let Some((_, at)) = &self.launch_shared {
                diags.push(
                    Diagnostic::warning("no `.extern .shared` array uses this size", at.clone())
                        .label("dynamic shared memory is unused"),
                );
            }
            return;
        };
        let Some((bytes, _)) = self.launch_shared.clone() else {
            diags.push(
                Diagnostic::error(
                    "the size of this dynamic shared array is not given",
                    span,
                )
                .label("`.extern .shared` arrays are sized at launch")
                .help("give the size in bytes in the launch file: `.launch grid(..) block(..) shared(4096);`"),
            );
            return;
        };
        let elems = StoredExpr::binary(
            BinOp::CeilDiv,
            bytes,
            StoredExpr::constant(i64::from(elem.max(1))),
        );
        if let Some(s) = self.module.shared.get_mut(index) {
            s.dims = vec![elems];
        }
    }
}
