//! Which kernel of a file is assembled, and what its PTX parameters stand for:
//! `--entry NAME` or `.bind NAME(...)` chooses among several `.entry` blocks (one
//! entry needs no choice); `.bind` gives each parameter, in signature order, a
//! buffer (a pointer parameter), a kernel parameter or a constant. Without `.bind`,
//! every parameter (32- or 64-bit) is a kernel parameter, set with `-D`.
//! Also sizes the `.extern .shared` array from `.launch shared(BYTES)`.

use super::outline::{DeclKind, Outline};
use super::{Assembler, ty_of};
use crate::ast::{BindArg, EntryParam, Expr, Spanned, Stmt};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::param_default;
use crate::operands::{Bound, EntryArg};
use crate::parse::statement_at;
use spu_io::suggest::closest;
use spu_isa::format::{BinOp, Expr as StoredExpr};
use spu_machine::occupancy::MAX_SHARED_KIB;
use std::collections::HashMap;

impl Assembler<'_> {
    /// The kernel of the file to assemble: `--entry`, the kernel `.bind` names, or
    /// the file's only kernel; `None` (reported, or for a named kernel that is not
    /// there, kept for [`Self::report_missing_kernel`]) when none can be chosen.
    pub(super) fn select_entry(
        &mut self,
        text: &str,
        outline: &Outline<'_>,
        diags: &mut Diagnostics,
    ) -> Option<u32> {
        let entries = &outline.entries;
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            match first.get(e.node) {
                Some(&prev) => diags.push(
                    Diagnostic::error(
                        format!("kernel `{}` is defined twice", e.node),
                        e.span.clone(),
                    )
                    .with_secondary(entries[prev].span.clone(), "first defined here"),
                ),
                None => {
                    first.insert(e.node, i);
                }
            }
        }
        let names = || entries.iter().map(|e| e.node);
        let list = || {
            const LISTED: usize = 16;
            let mut l: Vec<String> = names().take(LISTED).map(|n| format!("`{n}`")).collect();
            if entries.len() > LISTED {
                l.push(format!("and {} more", entries.len() - LISTED));
            }
            l.join(", ")
        };
        // The first `.bind` of the file names the kernel.
        let bind = outline
            .decls
            .iter()
            .filter(|d| d.kind == DeclKind::Bind)
            .find_map(|d| match statement_at(text, d.start as usize)?.node {
                Stmt::Bind { entry, .. } => Some(entry),
                _ => None,
            });
        let find = |want: &str| first.get(want).copied();
        let chosen = if let Some(want) = self.options.entry.clone() {
            if let Some(b) = bind.as_ref().filter(|b| b.node != want) {
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
                self.missing_kernel = Some(match closest(&want, names()) {
                    Some(c) => d.help(format!("did you mean `--entry {c}`?")),
                    None => d.help(format!("choose one of {}", list())),
                });
                self.no_entry_chosen = true;
            }
            found
        } else if let Some(b) = &bind {
            let found = find(b.node);
            if found.is_none() {
                let d = Diagnostic::error(
                    format!("`.bind` names `{}`, but no kernel has that name", b.node),
                    b.span.clone(),
                )
                .label("not an `.entry` of this file or its includes");
                self.missing_kernel = Some(match closest(b.node, names()) {
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
                    entries[1].span.clone(),
                )
                .label("a second kernel")
                .with_secondary(entries[0].span.clone(), "the first kernel")
                .help(format!(
                    "choose one with `--entry {}`, or launch it from a `.spu` file with `.bind {}(...)`",
                    entries[0].node, entries[0].node
                )),
            );
            self.no_entry_chosen = true;
            None
        } else {
            (!entries.is_empty()).then_some(0)
        };
        chosen.map(|c| c as u32)
    }

    /// Reports the kernel `--entry` or `.bind` names and no `.entry` defines, unless
    /// the text may lack it because of an error already reported: an `#include`
    /// that failed, a preprocessing error (`earlier_errors`), or an error in an
    /// included file (a kernel whose `.entry` line did not read). That error is the
    /// cause; the missing kernel would only follow from it.
    pub(super) fn report_missing_kernel(&mut self, diags: &mut Diagnostics, earlier_errors: bool) {
        let Some(d) = self.missing_kernel.take() else {
            return;
        };
        let in_include = diags
            .items
            .iter()
            .any(|e| e.severity == crate::Severity::Error && self.map.origin(&e.span).file != 0);
        if !earlier_errors && !in_include {
            diags.push(d);
        }
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
                    // The kernel's reads of its parameters would only repeat this.
                    for p in params {
                        self.scope.poisoned.insert(p.name.node.to_string());
                    }
                    return;
                }
                Some(args)
            }
            _ => None,
        };
        for (i, p) in params.iter().enumerate() {
            if p.dim.is_some() {
                let arg = args.map(|a| &a[i]);
                self.bind_struct(p, arg, diags);
                continue;
            }
            let Some(t) = ty_of(p.ty.node) else {
                diags.push(
                    Diagnostic::error("parameters cannot be predicates", p.ty.span.clone())
                        .label("use .u32, .s32, .f32, .u64, .s64 or .f64"),
                );
                self.scope.poisoned.insert(p.name.node.to_string());
                continue;
            };
            let Some(arg) = args.map(|a| &a[i]) else {
                self.param(&p.ty, &p.name, None, diags);
                continue;
            };
            let bound = match &arg.node {
                BindArg::Value(v) => self.bind_value(&p.name, t, v),
                BindArg::Struct(_) => Err(Diagnostic::error(
                    format!("`{}` is a .{t}, not a struct", p.name.node),
                    arg.span.clone(),
                )
                .label("a struct's fields")
                .with_secondary(p.name.span.clone(), "declared here")
                .help("pass a buffer, a parameter or a constant")),
            };
            match bound {
                Ok(bound) => {
                    if self.declare_global(&p.name, diags) {
                        self.scope
                            .entry_args
                            .insert(p.name.node.to_string(), EntryArg { ty: t, bound });
                    }
                }
                Err(d) => {
                    diags.push(d);
                    // The kernel's reads of this parameter would only repeat it.
                    self.scope.poisoned.insert(p.name.node.to_string());
                }
            }
        }
    }

    /// What a scalar argument binds entry parameter `pname` (of type `t`) to.
    pub(super) fn bind_value(
        &self,
        pname: &Spanned<&str>,
        t: spu_isa::Ty,
        arg: &crate::ast::SExpr<'_>,
    ) -> Result<Bound, Diagnostic> {
        let p = pname;
        match &arg.node {
                Expr::Name(n) if self.scope.buffers.contains_key(*n) => {
                    // A pointer is an integer of the PTX file's address size.
                    if t.is_float() || t.bits() != self.pointer_bits {
                        let bits = self.pointer_bits;
                        Err(Diagnostic::error(
                            format!("`{n}` is a buffer, but `{}` is a .{t}", p.node),
                            arg.span.clone(),
                        )
                        .label(format!(
                            "a buffer binds to a pointer parameter (.u{bits}, as `.address_size {bits}` makes pointers)"
                        ))
                        .with_secondary(p.span.clone(), "declared here")
                        .help("pass a parameter or a constant for a scalar"))
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
                                p.node
                            ),
                            arg.span.clone(),
                        )
                        .label("types do not match")
                        .with_secondary(p.span.clone(), "declared here")
                        .help(
                            "pass a parameter of the same kind (integer or float) and width (a 32-bit integer may widen to a 64-bit one), or a constant",
                        )),
                    }
                }
                Expr::Name(n) => {
                    let d = Diagnostic::error(
                        format!("`{n}` is not a buffer or parameter of the launch"),
                        arg.span.clone(),
                    )
                    .label("no `.global` buffer or `.param` has this name")
                    .with_secondary(p.span.clone(), "the kernel's parameter");
                    let known = self
                        .scope
                        .buffers
                        .keys()
                        .map(String::as_str)
                        .chain(self.scope.params.iter().map(|q| q.name.as_str()));
                    Err(match closest(n, known) {
                        Some(c) => d.help(format!("did you mean `{c}`?")),
                        None => d.help(format!(
                            "declare it in the launch file: a buffer (`.global .u32 {n}[N];`) for a pointer, a `.param` or a constant for a scalar"
                        )),
                    })
                }
                // A constant is a value of the parameter's type, as a default or `-D`
                // would be: floats rounded (finite unless written as a bit pattern),
                // integers within the type's range.
                _ => param_default(arg, t, &self.scope.params)
                    .map(Bound::Const)
                    .map_err(|d| {
                        d.with_secondary(p.span.clone(), "the kernel's parameter")
                            .help(format!(
                                "`{}` is .{t}: pass a value of that type, a parameter, or a buffer for a pointer",
                                p.node
                            ))
                    }),
            }
    }

    /// Gives the `.extern .shared` array the kernel names its size:
    /// `.launch shared(BYTES)` in elements, rounded up. (A file may declare
    /// several, one per kernel, as clang does; the others keep one element.)
    pub(super) fn size_dynamic_shared(&mut self, diags: &mut Diagnostics) {
        if self.launch_shared_broken {
            return;
        }
        let named: Vec<_> = self
            .dynamic_shared
            .iter()
            .filter(|(i, _, _)| self.names_shared(*i))
            .cloned()
            .collect();
        if let [first, second, ..] = &named[..] {
            diags.push(
                Diagnostic::error(
                    "the kernel names a second `.extern .shared` array",
                    second.2.clone(),
                )
                .with_secondary(first.2.clone(), "the first one")
                .help("CUDA gives every dynamic shared array of a kernel the same address: name one, and address its parts with offsets"),
            );
            return;
        }
        let chosen = named.first().or(self.dynamic_shared.first()).cloned();
        let Some((index, elem, span)) = chosen else {
            // A negative size is refused even unused, as a negative grid is.
            if let Some((v, at)) = self.launch_shared_known.clone().filter(|(v, _)| *v < 0) {
                diags.push(
                    Diagnostic::error(format!("the dynamic shared size is {v} bytes"), at)
                        .label("must not be negative")
                        .help("give the size in bytes of an `.extern .shared` array, e.g. `shared(4096)`, or drop `shared(..)`: no `.extern .shared` array uses it"),
                );
            } else if let Some((bytes, at)) = &self.launch_shared {
                diags.push(
                    Diagnostic::warning("no `.extern .shared` array uses this size", at.clone())
                        .label("dynamic shared memory is unused"),
                );
                // The binary keeps no unused size: a size a `-D` may make negative
                // is kept as a precondition, so that the loader refuses it.
                if bytes.as_const().is_none() {
                    self.module
                        .preconditions
                        .push(spu_isa::format::Precondition {
                            lhs: bytes.clone(),
                            op: spu_isa::format::CmpOp::Ge,
                            rhs: StoredExpr::constant(0),
                            message:
                                "the dynamic shared size `.launch shared(..)` must not be negative"
                                    .into(),
                        });
                }
            }
            return;
        };
        let Some((bytes, _)) = self.launch_shared.clone() else {
            if !self.names_shared(index) {
                // nvcc declares it at module scope for every kernel of the file: a
                // kernel that never names it needs no size. One element keeps it a
                // valid array (a binary's arrays have at least one).
                if let Some(s) = self.module.shared.get_mut(index) {
                    s.dims = vec![StoredExpr::constant(1)];
                }
                return;
            }
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
        // Known with the defaults: an empty or negative size is refused, as an empty
        // or negative grid is (the array would fault on its first access).
        if let Some((v, at)) = self.launch_shared_known.clone()
            && v < 1
        {
            diags.push(
                Diagnostic::error(format!("the dynamic shared size is {v} bytes"), at)
                    .label("must be positive")
                    .with_secondary(span, "the array it sizes")
                    .help("give the size in bytes of the `.extern .shared` array, e.g. `shared(4096)`"),
            );
        } else if let Some((v, at)) = self.launch_shared_known.clone()
            && v > MAX_SHARED_KIB * 1024
        {
            diags.push(
                Diagnostic::error(format!("the dynamic shared size is {v} bytes"), at)
                    .label(format!("at most {} bytes", MAX_SHARED_KIB * 1024))
                    .with_secondary(span, "the array it sizes")
                    .help(format!("no machine has more shared memory per SM (`sm.shared_kib` is at most {MAX_SHARED_KIB} KiB); declare a smaller array")),
            );
        }
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
