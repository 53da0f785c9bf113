//! Declarations outside the code: kernel parameters, buffers with their
//! initialisers, registers, the launch and DMA descriptors, and the size
//! expressions they use.

use super::{Assembler, ty_of};
use crate::ast::{Expr, SExpr, Spanned, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{
    MAX_PARAMS, ParamInfo, const_f64, eval_with_defaults, lower, param_default, parse_int,
};
use crate::lexer::Span;
use crate::regalloc::Class;
use crate::suggest::closest;
use spu_isa::format::param_size;
use spu_isa::format::{
    BufferDecl, DMA_FIELDS, DMA_OPTIONAL, DmaDesc, Init, MAX_EXPR_NODES, ParamDecl, RegDecl, RegTy,
};
use spu_isa::{MAX_PREDS, MAX_REGS, MAX_SYMBOLS, Side, Special, Ty};

impl Assembler {
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
        for d in dims {
            let e = self.expr(d, diags)?;
            if let Ok(Some(v)) = eval_with_defaults(d, &self.scope.params)
                && v <= 0
            {
                diags.push(
                    Diagnostic::error(format!("dimension is {v}"), d.span.clone())
                        .label("must be at least 1"),
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
        diags: &mut Diagnostics,
    ) {
        let Some(t) = ty_of(ty.node) else {
            diags.push(Diagnostic::error(
                "buffers cannot hold predicates",
                ty.span.clone(),
            ));
            return;
        };
        if self.module.buffers.len() >= usize::from(MAX_SYMBOLS) {
            diags.push(
                Diagnostic::error("too many buffers", name.span.clone())
                    .label(format!("a kernel has at most {MAX_SYMBOLS}")),
            );
            return;
        }
        if !self.declare_global(name, diags) {
            return;
        }
        let Some(mut dims) = self.dims(dims, diags) else {
            return;
        };
        if dims.is_empty() {
            // A variable: one element.
            dims.push(spu_isa::format::Expr::constant(1));
        }
        let init = match init {
            None => Init::Zeros,
            // A PTX variable's initial value: `= 5`, `= 1.5`.
            Some(e) if matches!(e.node, Expr::Int(_) | Expr::Float(_) | Expr::Neg(_)) => {
                match const_f64(e)
                    .and_then(|v| check_init_value(v, t, false, e).map(|_| Init::Const(v)))
                {
                    Ok(i) => i,
                    Err(d) => {
                        diags.push(d);
                        return;
                    }
                }
            }
            Some(e) => match initialiser(e).and_then(|i| check_init_values(e, i, t)) {
                Ok(i) => i,
                Err(d) => {
                    diags.push(d);
                    return;
                }
            },
        };
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
                let vreg = self.vregs.add(class, at);
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
                "grid" => 2,
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
            let mut vals = Vec::new();
            for a in args {
                match self.expr(a, diags) {
                    Some(e) => vals.push(e),
                    None => return,
                }
            }
            if name.node == "block" {
                self.note_launch_block(args);
            }
            if name.node == "shared" {
                self.launch_shared = vals.pop().map(|v| (v, name.span.clone()));
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

/// Checks an initialiser's values against the buffer's type ([`Ty::value_range`]):
/// integers for integer buffers, each within the type's range; finite values within
/// the float type's range otherwise.
/// (A ramp's last value depends on the buffer's size and is checked at load time.)
pub(super) fn check_init_values(e: &SExpr<'_>, init: Init, ty: Ty) -> Result<Init, Diagnostic> {
    let Expr::Call(_, args) = &e.node else {
        return Ok(init);
    };
    // (value, argument index, is a ramp's step)
    let checks: Vec<(f64, usize, bool)> = match init {
        Init::Zeros => vec![],
        Init::Const(v) => vec![(v, 0, false)],
        Init::Ramp { start, step } => vec![(start, 0, false), (step, 1, true)],
        Init::Random { lo, hi, .. } if args.len() == 3 => vec![(lo, 1, false), (hi, 2, false)],
        Init::Random { .. } => vec![],
    };
    for (v, i, is_step) in checks {
        check_init_value(v, ty, is_step, &args[i])?;
    }
    if let Init::Random { lo, hi, .. } = init
        && lo > hi
    {
        return Err(Diagnostic::error(
            format!("`random` has lo {lo} above hi {hi}"),
            e.span.clone(),
        )
        .label("expected random(seed, lo, hi) with lo <= hi"));
    }
    Ok(init)
}

pub(super) fn check_init_value(
    v: f64,
    ty: Ty,
    is_step: bool,
    arg: &SExpr<'_>,
) -> Result<(), Diagnostic> {
    let text = format_number(v);
    if ty.is_float() {
        let (_, hi) = ty.value_range();
        // f32's bound shown as the f32 it is (3.4028235e38).
        let shown = match ty {
            Ty::F32 => format!("{:e}", f32::MAX),
            _ => format!("{hi:e}"),
        };
        if !v.is_finite() || v.abs() > hi {
            return Err(Diagnostic::error(
                format!("`{text}` does not fit in .{ty}"),
                arg.span.clone(),
            )
            .label(format!("expected a magnitude of at most {shown}")));
        }
        return Ok(());
    }
    if v.fract() != 0.0 || !v.is_finite() {
        return Err(
            Diagnostic::error(format!("`{text}` is not an integer"), arg.span.clone())
                .label(format!("a .{ty} buffer holds integers"))
                .help("write an integer, or declare the buffer .f32 or .f64"),
        );
    }
    let (lo, hi) = int_range(ty, is_step);
    // Exact: every bound is an integer of at most 64 bits, and `v` an
    // integer-valued f64 (`as` saturates, so a huge one lands outside too).
    let x = v as i128;
    if x < lo || x > hi {
        return Err(
            Diagnostic::error(format!("`{text}` does not fit in .{ty}"), arg.span.clone())
                .label(format!("expected {lo}..={hi}")),
        );
    }
    Ok(())
}

/// The values an integer buffer of type `ty` holds: `0..=2^N-1` unsigned or untyped
/// bits, `-2^(N-1)..=2^(N-1)-1` signed. A ramp's step may also go down by as much
/// as the unsigned range (its values are checked at load time).
fn int_range(ty: Ty, is_step: bool) -> (i128, i128) {
    let bits = ty.bits();
    let umax = (1i128 << bits) - 1;
    if is_step {
        (-umax, umax)
    } else if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, umax)
    }
}

/// A number as written in source: integers without a fractional part.
pub(super) fn format_number(v: f64) -> String {
    // Integers up to 64-bit types' bounds in full (2^64 - 2048 = 18446744073709549568).
    if v.fract() == 0.0 && v.abs() < 1.9e19 {
        format!("{}", v as i128)
    } else if v.abs() >= 1e18 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Largest seed: initialiser arguments are read as f64, exact up to 2^53.
const MAX_SEED: f64 = 9_007_199_254_740_992.0;

pub(super) fn initialiser(e: &SExpr<'_>) -> Result<Init, Diagnostic> {
    let (name, args): (&str, &[SExpr<'_>]) = match &e.node {
        Expr::Name(n) => (n, &[]),
        Expr::Call(f, args) => (f.node, args),
        _ => {
            return Err(Diagnostic::error("expected an initialiser", e.span.clone())
                .label("not zeros, const(v), ramp(start, step) or random(seed, lo, hi)"));
        }
    };
    let nums = args.iter().map(const_f64).collect::<Result<Vec<_>, _>>()?;
    let wrong = |expected: &str| {
        Diagnostic::error(format!("`{name}` takes {expected}"), e.span.clone())
            .label(format!("found {} arguments", nums.len()))
    };
    Ok(match (name, nums.as_slice()) {
        ("zeros", []) => Init::Zeros,
        ("zeros", _) => return Err(wrong("no arguments")),
        ("const", [v]) => Init::Const(*v),
        ("const", _) => return Err(wrong("one value")),
        ("ramp", [start, step]) => Init::Ramp {
            start: *start,
            step: *step,
        },
        ("ramp", _) => return Err(wrong("a start and a step")),
        ("random", [seed]) | ("random", [seed, _, _])
            if *seed < 0.0 || seed.fract() != 0.0 || *seed > MAX_SEED =>
        {
            return Err(Diagnostic::error(
                "the seed must be a non-negative integer",
                args[0].span.clone(),
            )
            .label(format!("expected 0..={MAX_SEED}")));
        }
        ("random", [seed]) => Init::Random {
            seed: *seed as u64,
            lo: 0.0,
            hi: 1.0,
        },
        ("random", [seed, lo, hi]) => Init::Random {
            seed: *seed as u64,
            lo: *lo,
            hi: *hi,
        },
        ("random", _) => return Err(wrong("a seed, optionally followed by lo and hi")),
        (other, _) => {
            let d = Diagnostic::error(format!("unknown initialiser `{other}`"), e.span.clone())
                .label("expected zeros, const, ramp or random");
            return Err(match closest(other, ["zeros", "const", "ramp", "random"]) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d,
            });
        }
    })
}
