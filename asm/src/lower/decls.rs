//! Declarations outside the code: kernel parameters, buffers with their
//! initialisers, registers, the launch and DMA descriptors, and the size
//! expressions they use.

use super::{Assembler, ty_of};
use crate::ast::{SExpr, Spanned, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{MAX_PARAMS, ParamInfo, eval_with_defaults, lower, param_default, parse_int};
use crate::lexer::Span;
use crate::regalloc::Class;
use spu_io::suggest::closest;
use spu_isa::format::param_size;
use spu_isa::format::{
    BufferDecl, DMA_FIELDS, DMA_OPTIONAL, DmaDesc, Init, MAX_EXPR_NODES, ParamDecl, RegDecl, RegTy,
};
use spu_isa::{MAX_PREDS, MAX_REGS, MAX_SYMBOLS, Side, Special};

impl Assembler<'_> {
    pub(super) fn param(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        default: Option<&SExpr<'_>>,
        diags: &mut Diagnostics,
    ) {
        let Some(t) = ty_of(ty.node) else {
            diags.push(
                Diagnostic::error("parameters cannot be predicates", ty.span.clone())
                    .label("use .u32, .s32, .f32, .u64, .s64 or .f64"),
            );
            return;
        };
        if self.scope.params.len() >= MAX_PARAMS {
            diags.push(
                Diagnostic::error("too many parameters", name.span.clone())
                    .label(format!("a kernel has at most {MAX_PARAMS} parameters")),
            );
            return;
        }
        if !self.declare_global(name, diags) {
            return;
        }
        let default = match default.map(|e| param_default(e, t, &self.scope.params)) {
            Some(Ok(v)) => Some(v),
            Some(Err(d)) => {
                diags.push(d);
                None
            }
            None => None,
        };
        let offset = self.scope.params.last().map_or(0, |p| {
            (p.offset + param_size(p.ty)).next_multiple_of(param_size(t))
        });
        self.scope.params.push(ParamInfo {
            name: name.node.to_string(),
            ty: t,
            default,
            offset,
        });
        self.module.params.push(ParamDecl {
            name: name.node.to_string(),
            ty: t,
            default,
        });
    }

    pub(super) fn expr(
        &self,
        e: &SExpr<'_>,
        diags: &mut Diagnostics,
    ) -> Option<spu_isa::format::Expr> {
        let stored = lower(e, &self.scope.params).and_then(|x| {
            if x.node_count() > MAX_EXPR_NODES as usize {
                return Err(Diagnostic::error(
                    format!("this expression has {} terms and operators", x.node_count()),
                    e.span.clone(),
                )
                .label(format!("a binary stores at most {MAX_EXPR_NODES}"))
                .help("write constant parts as one number, e.g. `64` instead of `8 * 8`"));
            }
            Ok(x)
        });
        match stored.and_then(|x| eval_with_defaults(e, &self.scope.params).map(|_| x)) {
            Ok(x) => Some(x),
            Err(d) => {
                diags.push(d);
                None
            }
        }
    }

    pub(super) fn dims(
        &self,
        dims: &[SExpr<'_>],
        diags: &mut Diagnostics,
    ) -> Option<Vec<spu_isa::format::Expr>> {
        if dims.len() > 4 {
            diags.push(Diagnostic::error(
                "at most 4 dimensions",
                dims[4].span.clone(),
            ));
            return None;
        }
        let mut out = Vec::new();
        // The element count with the defaults, checked as one size expression
        // (`A[N][N]` as `A[N*N]`); `None` once a dimension is unknown.
        let mut count = Some(1i64);
        let mut overflowed = false;
        for d in dims {
            let e = self.expr(d, diags)?;
            let known = eval_with_defaults(d, &self.scope.params).ok().flatten();
            if let Some(v) = known
                && v <= 0
            {
                diags.push(
                    Diagnostic::error(format!("dimension is {v}"), d.span.clone())
                        .label("must be at least 1"),
                );
                return None;
            }
            count = count.zip(known).and_then(|(c, v)| {
                let n = c.checked_mul(v);
                overflowed |= n.is_none();
                n
            });
            if overflowed {
                let (first, last) = (&dims[0].span, &d.span);
                diags.push(
                    Diagnostic::error("the element count overflows", first.start..last.end)
                        .label("the product of the dimensions is out of 64-bit range")
                        .help("give smaller dimensions (parameters' defaults included)"),
                );
                return None;
            }
            out.push(e);
        }
        Some(out)
    }

    pub(super) fn global(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dims: &[SExpr<'_>],
        init: Option<&SExpr<'_>>,
        align: Option<&Spanned<&str>>,
        diags: &mut Diagnostics,
    ) {
        let Some(t) = ty_of(ty.node) else {
            diags.push(Diagnostic::error(
                "buffers cannot hold predicates",
                ty.span.clone(),
            ));
            self.scope.poisoned.insert(name.node.to_string());
            return;
        };
        if let Some(a) = align {
            let v = parse_int(a.node).and_then(|v| u32::try_from(v).ok());
            if !v.is_some_and(|v| v.is_power_of_two() && v <= BUFFER_ALIGN) {
                diags.push(
                    Diagnostic::error(
                        format!("alignment `{}` is not supported for a buffer", a.node),
                        a.span.clone(),
                    )
                    .label(format!(
                        "expected a power of two up to {BUFFER_ALIGN}: every buffer starts at a multiple of {BUFFER_ALIGN} bytes"
                    ))
                    .help(format!("write `.align {BUFFER_ALIGN}` or less")),
                );
                self.scope.poisoned.insert(name.node.to_string());
                return;
            }
        }
        if self.module.buffers.len() >= usize::from(MAX_SYMBOLS) {
            diags.push(
                Diagnostic::error("too many buffers", name.span.clone())
                    .label(format!("a kernel has at most {MAX_SYMBOLS} buffers")),
            );
            self.scope.poisoned.insert(name.node.to_string());
            return;
        }
        if !self.declare_global(name, diags) {
            return;
        }
        // From here on a failure leaves the name declared but without a buffer: the
        // code's uses of it are not checked (they would only repeat the error).
        self.scope.poisoned.insert(name.node.to_string());
        let init_span = init.map(|e| e.span.clone());
        let Some(mut dims) = self.dims(dims, diags) else {
            return;
        };
        if dims.is_empty() {
            // A variable: one element.
            dims.push(spu_isa::format::Expr::constant(1));
        }
        let init = match init.map_or(Ok(Init::Zeros), |e| super::init::initialiser(e, t)) {
            Ok(i) => i,
            Err(d) => {
                diags.push(d);
                return;
            }
        };
        // A list longer than the array (when its size is known here).
        if let (Init::Values(values), Some(e)) = (&init, init_span) {
            let elements = dims.iter().try_fold(1i64, |n, d| {
                d.eval(&|_| None).ok().and_then(|v| n.checked_mul(v))
            });
            if let Some(n) = elements.filter(|n| values.len() as i64 > *n) {
                diags.push(
                    Diagnostic::error(
                        format!(
                            "the list has {} values but `{}` has {n} elements",
                            values.len(),
                            name.node
                        ),
                        e,
                    )
                    .label("too many values")
                    .help(
                        "give at most one value per element (the elements past the list are zero)",
                    ),
                );
                return;
            }
        }
        self.scope.poisoned.remove(name.node);
        self.scope
            .buffers
            .insert(name.node.to_string(), self.module.buffers.len() as u16);
        self.module.buffers.push(BufferDecl {
            name: name.node.to_string(),
            ty: t,
            dims,
            init,
        });
    }

    pub(super) fn regs(
        &mut self,
        ty: &Spanned<TyTok>,
        items: &[crate::ast::RegItem<'_>],
        span: &Span,
        diags: &mut Diagnostics,
    ) {
        let rty = ty_of(ty.node).map_or(RegTy::Pred, RegTy::Val);
        for item in items {
            let count = match &item.count {
                Some(c) => match parse_int(c.node).and_then(|v| u32::try_from(v).ok()) {
                    Some(n) if n as usize <= MAX_DECLARED => Some(n),
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                format!("register count `{}` is too large", c.node),
                                c.span.clone(),
                            )
                            .label(format!("at most {MAX_DECLARED}")),
                        );
                        self.scope.poisoned_regs.insert(item.name.node.to_string());
                        continue;
                    }
                },
                None => None,
            };
            let base = item.name.node;
            if Special::from_name(base).is_some() || base.contains('.') {
                diags.push(
                    Diagnostic::error(
                        format!("`%{base}` is a special register name"),
                        item.name.span.clone(),
                    )
                    .label("reserved")
                    .help("choose another name"),
                );
                continue;
            }
            let n = count.map_or(1, |n| n as usize);
            if self.declared_regs + n > MAX_REGISTERS {
                diags.push(
                    Diagnostic::error(
                        format!("the kernel declares more than {MAX_REGISTERS} registers"),
                        item.name.span.start..span.end,
                    )
                    .label(format!(
                        "{} declared before this, {n} here",
                        self.declared_regs
                    ))
                    .help("a kernel declares at most this many registers and predicates in all; declare only the ones the code uses"),
                );
                // Every later use of a register would be another error.
                self.halted = true;
                return;
            }
            self.declared_regs += n;
            let names: Vec<String> = match count {
                Some(n) => (0..n).map(|k| format!("{base}{k}")).collect(),
                None => vec![base.to_string()],
            };
            if let Some(dup) = names.iter().find(|n| self.scope.regs.contains_key(*n)) {
                diags.push(
                    Diagnostic::error(
                        format!("register `%{dup}` is declared twice"),
                        item.name.span.clone(),
                    )
                    .label("already declared"),
                );
                continue;
            }
            // Registers of 64-bit types are aligned pairs (the layout rule of
            // `Module::reg_layout`).
            let elem = match rty {
                RegTy::Val(t) => u32::from(t.regs()),
                RegTy::Pred => 1,
            };
            let (used, limit) = if rty == RegTy::Pred {
                (&mut self.reg_counts.1, MAX_PREDS)
            } else {
                (&mut self.reg_counts.0, MAX_REGS)
            };
            let start = used.next_multiple_of(elem);
            if names.len() > MAX_DECLARED {
                diags.push(
                    Diagnostic::error(
                        format!("`%{base}<{}>` declares too many registers", names.len()),
                        item.name.span.clone(),
                    )
                    .label(format!("at most {MAX_DECLARED} per declaration")),
                );
                continue;
            }
            if start + names.len() as u32 * elem > limit {
                // The allocator will colour them; the declared layout cannot be kept.
                self.decls_fit = false;
            }
            *used = start;
            let class = match rty {
                RegTy::Pred => Class::Pred,
                RegTy::Val(t) if t.bits() == 64 => Class::Pair,
                RegTy::Val(_) => Class::Single,
            };
            for n in names {
                let at = u8::try_from(*used).ok().filter(|_| *used + elem <= limit);
                let vreg = self.vregs.add_named(class, at, &n);
                if self.frame.in_block() {
                    self.frame.declared.push(n.clone());
                }
                self.scope
                    .regs
                    .insert(n, crate::operands::RegInfo { vreg, ty: rty });
                *used += elem;
            }
            self.module.regs.push(RegDecl {
                name: base.to_string(),
                ty: rty,
                count,
            });
        }
    }

    pub(super) fn launch(
        &mut self,
        parts: &[(Spanned<&str>, Vec<SExpr<'_>>)],
        span: &Span,
        diags: &mut Diagnostics,
    ) {
        if let Some(prev) = &self.launch_seen {
            diags.push(
                Diagnostic::error("`.launch` is given twice", span.clone())
                    .with_secondary(prev.clone(), "first here"),
            );
            return;
        }
        self.launch_seen = Some(span.clone());
        for (name, args) in parts {
            let max = match name.node {
                "grid" => 3,
                "block" => 3,
                "iu" | "shared" => 1,
                other => {
                    let d = Diagnostic::error(
                        format!("unknown launch dimension `{other}`"),
                        name.span.clone(),
                    )
                    .label("expected grid, block, iu or shared");
                    diags.push(match closest(other, ["grid", "block", "iu", "shared"]) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d,
                    });
                    continue;
                }
            };
            if args.len() > max {
                diags.push(
                    Diagnostic::error(
                        format!("`{}` takes at most {max} values", name.node),
                        args[max].span.clone(),
                    )
                    .label("extra value"),
                );
                continue;
            }
            let Some(mut vals) = args
                .iter()
                .map(|a| self.expr(a, diags))
                .collect::<Option<Vec<_>>>()
            else {
                // Reported: the array it sizes is not also "not sized".
                self.launch_shared_broken |= name.node == "shared";
                continue;
            };
            if name.node == "block" {
                self.note_launch_block(args);
            }
            if matches!(name.node, "grid" | "block") {
                self.refuse_empty_launch_dims(name.node, args, diags);
            }
            if name.node == "iu" {
                // Checked in `check_launch_iu` once the `.iu` code is known.
                self.launch_iu_known = args.first().and_then(|a| {
                    Some((
                        eval_with_defaults(a, &self.scope.params).ok()??,
                        a.span.clone(),
                    ))
                });
            }
            if name.node == "shared" {
                self.launch_shared = vals.pop().map(|v| (v, name.span.clone()));
                // Checked against the array in `size_dynamic_shared`.
                self.launch_shared_known = args.first().and_then(|a| {
                    Some((
                        eval_with_defaults(a, &self.scope.params).ok()??,
                        a.span.clone(),
                    ))
                });
                continue;
            }
            let target: &mut [spu_isa::format::Expr] = match name.node {
                "grid" => &mut self.module.launch.grid,
                "block" => &mut self.module.launch.block,
                _ => std::slice::from_mut(&mut self.module.launch.iu_threads),
            };
            for (slot, v) in target.iter_mut().zip(vals) {
                *slot = v;
            }
        }
    }

    /// A grid or block extent known (with the defaults) to be zero or negative, or
    /// beyond what any machine launches, is refused here with its place in the
    /// source, as the loader would refuse it.
    fn refuse_empty_launch_dims(&self, what: &str, args: &[SExpr<'_>], diags: &mut Diagnostics) {
        let grid = what == "grid";
        let (kind, unit) = if grid {
            ("launch grid", "block")
        } else {
            ("block", "thread")
        };
        let mut total = Some(1i64);
        for (axis, (a, name)) in args.iter().zip(["x", "y", "z"]).enumerate() {
            let Ok(Some(v)) = eval_with_defaults(a, &self.scope.params) else {
                total = None;
                continue;
            };
            total = total.and_then(|t| t.checked_mul(v));
            let (most, why) = spu_machine::occupancy::launch_dim_limit(grid, axis);
            if v < 1 {
                diags.push(
                    Diagnostic::error(format!("{kind} dimension {name} is {v}"), a.span.clone())
                        .label("must be positive")
                        .help(format!(
                            "give at least 1 {unit} along each axis, e.g. `{what}(32)`"
                        )),
                );
            } else if v > most {
                diags.push(
                    Diagnostic::error(format!("{kind} dimension {name} is {v}"), a.span.clone())
                        .label(format!("at most {most}"))
                        .help(format!(
                            "{why}; spread the {unit}s over the other axes, or launch fewer"
                        )),
                );
                return;
            }
        }
        use spu_machine::occupancy::{MAX_BLOCK_THREADS, MAX_LAUNCH_BLOCKS};
        let (most, why) = if grid {
            (
                MAX_LAUNCH_BLOCKS,
                format!("a launch has at most {MAX_LAUNCH_BLOCKS} blocks"),
            )
        } else {
            (
                MAX_BLOCK_THREADS,
                format!(
                    "no machine runs more than {MAX_BLOCK_THREADS} threads in a block (`sm.max_threads` is at most {MAX_BLOCK_THREADS}, 1024 unless raised)"
                ),
            )
        };
        if let (Some(t), Some(first), Some(last)) = (total, args.first(), args.last())
            && t > most
        {
            diags.push(
                Diagnostic::error(
                    format!("the {kind} has {t} {unit}s"),
                    first.span.start..last.span.end,
                )
                .label(format!("at most {most} in all"))
                .help(format!("{why}; launch fewer")),
            );
        }
    }

    pub(super) fn dma(
        &mut self,
        side: &Spanned<&str>,
        buffer: &Spanned<&str>,
        fields: &[(Spanned<&str>, SExpr<'_>)],
        diags: &mut Diagnostics,
    ) {
        let Some(s) = Side::from_name(side.node) else {
            diags.push(
                Diagnostic::error(format!("unknown side `{}`", side.node), side.span.clone())
                    .label("expected north, south, east or west"),
            );
            return;
        };
        if self.module.dma.iter().any(|d| d.side == s) {
            diags.push(
                Diagnostic::error(format!("a second `.dma {s}` descriptor"), side.span.clone())
                    .label("one descriptor per side"),
            );
            return;
        }
        let Some(buf) = self.scope.buffers.get(buffer.node).copied() else {
            let d = Diagnostic::error(
                format!("unknown buffer `{}`", buffer.node),
                buffer.span.clone(),
            )
            .label("no `.global` buffer has this name");
            diags.push(
                match closest(buffer.node, self.scope.buffers.keys().map(String::as_str)) {
                    Some(c) => d.help(format!("did you mean `{c}`?")),
                    None => d,
                },
            );
            return;
        };
        let mut values: [Option<spu_isa::format::Expr>; 9] = Default::default();
        for (v, name) in values.iter_mut().zip(DMA_FIELDS) {
            if DMA_OPTIONAL.contains(&name) {
                *v = Some(spu_isa::format::Expr::constant(0));
            }
        }
        let mut ok = true;
        for (key, value) in fields {
            let Some(i) = DMA_FIELDS.iter().position(|f| *f == key.node) else {
                let d = Diagnostic::error(
                    format!("unknown DMA field `{}`", key.node),
                    key.span.clone(),
                )
                .label(format!("expected one of {}", DMA_FIELDS.join(", ")));
                diags.push(match closest(key.node, DMA_FIELDS) {
                    Some(c) => d.help(format!("did you mean `{c}`?")),
                    None => d,
                });
                ok = false;
                continue;
            };
            match self.expr(value, diags) {
                Some(e) => values[i] = Some(e),
                None => ok = false,
            }
        }
        let missing: Vec<&str> = DMA_FIELDS
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            diags.push(
                Diagnostic::error(
                    format!("`.dma {s}` is missing {}", missing.join(", ")),
                    side.span.clone(),
                )
                .label("incomplete descriptor")
                .help(format!("a descriptor gives {}", DMA_FIELDS.join(", "))),
            );
            return;
        }
        if ok {
            let fields = values.map(|v| v.unwrap_or(spu_isa::format::Expr::constant(0)));
            self.module.dma.push(DmaDesc {
                side: s,
                buffer: buf,
                fields,
            });
        }
    }
}

/// Most registers one `.reg` declaration may name.
pub(super) const MAX_DECLARED: usize = 1 << 16;
/// Most registers and predicates one kernel may declare in all.
pub const MAX_REGISTERS: usize = 1 << 18;
/// The alignment every buffer has: the loader places buffers at multiples of 256
/// bytes, so `.align` up to it holds and more cannot be honoured.
pub(super) const BUFFER_ALIGN: u32 = 256;
