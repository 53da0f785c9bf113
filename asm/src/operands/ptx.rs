//! PTX spellings that are not rows of the ISA table, lowered onto rows:
//!
//! - the block barrier as `bar.sync 0` / `barrier.sync 0`, and `bar.warp.sync`
//!   (a no-op: a warp's lanes always execute together here);
//! - the pre-CUDA-9 `shfl.mode.b32` and `vote.mode` without `.sync` (full mask);
//! - `setp` that combines its result with a predicate (`setp.lt.and.s32 p, a, b, c`)
//!   or writes a result and its complement (`setp.lt.s32 p|q, a, b`);
//! - `mov` between a 64-bit register and two 32-bit halves (`pack.rs`);
//! - loads and stores through a register wider than the access, and `mov.pred`
//!   of an immediate (`wide.rs`);
//! - `ld.param` of a PTX entry parameter that `.bind` gave a buffer, a kernel
//!   parameter or a constant.

use super::{Bound, Lowering};
use crate::ast::{Expr, Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::eval::const_int;
use crate::lexer::Span;
use crate::regalloc::Class;
use crate::vcode::{RegRef, Slot, VInstr};
use spu_isa::format::RegTy;
use spu_isa::{Guard, Instr, Mods, Opcode, Operand, Ty};

type Lowered = Result<Vec<VInstr>, Vec<Diagnostic>>;

fn at<T>(node: T, span: &Span) -> Spanned<T> {
    Spanned {
        node,
        span: span.clone(),
    }
}

fn reg<'s>(name: &'s str, span: &Span) -> Spanned<AstOperand<'s>> {
    at(AstOperand::Register(name), span)
}

fn value<'s>(e: Expr<'s>, span: &Span) -> Spanned<AstOperand<'s>> {
    at(AstOperand::Expr(at(e, span)), span)
}

/// `call LABEL, FRAME`: the machine's form (a label and a frame size), not PTX's
/// `call (ret), f, (args)`.
fn native_call(operands: &[&Spanned<AstOperand<'_>>]) -> bool {
    matches!(
        operands,
        [
            Spanned {
                node: AstOperand::Expr(Spanned {
                    node: Expr::Name(_),
                    ..
                }),
                ..
            },
            Spanned {
                node: AstOperand::Expr(Spanned {
                    node: Expr::Int(_),
                    ..
                }),
                ..
            },
        ]
    )
}

/// The mistakes in a `.spu` file's `call LABEL, FRAME`; `None` when its form is
/// right (the frame's value is checked with the instruction's other operands).
fn native_call_form(
    operands: &[&Spanned<AstOperand<'_>>],
    params: &[crate::eval::ParamInfo],
    span: &Span,
) -> Option<Vec<Diagnostic>> {
    let form = "write `call LABEL, FRAME;`: a label of the kernel, and where the callee's frame starts in 16-byte units (0..=255)";
    if operands.len() != 2 {
        let at = operands.get(2).map_or(span.clone(), |o| o.span.clone());
        return Some(vec![
            Diagnostic::error(
                format!("`call` takes two operands, not {}", operands.len()),
                at,
            )
            .label("the machine's `call` has a label and a frame size")
            .help(form),
        ]);
    }
    let target = operands[0];
    let what = match &target.node {
        AstOperand::Expr(Spanned {
            node: Expr::Name(_),
            ..
        }) => {
            // A frame that is a constant but out of range; other mistakes in it
            // get the immediate operand's messages.
            let AstOperand::Expr(e) = &operands[1].node else {
                return None;
            };
            let frame = const_int(e, params).ok()?;
            if (0..=255).contains(&frame) {
                return None;
            }
            return Some(vec![
                Diagnostic::error(
                    format!("the frame size `{frame}` is out of range"),
                    operands[1].span.clone(),
                )
                .label("expected 0..=255 (16-byte units)")
                .help("the callee's frame starts FRAME x 16 bytes after the caller's: give the caller's local bytes in use, in 16-byte units (at most 255, so 4080 bytes)"),
            ]);
        }
        AstOperand::Register(_) | AstOperand::NotPred(_) | AstOperand::RegPred(..) => "a register",
        AstOperand::Vector(_) => "a vector of registers",
        AstOperand::Mem { .. } => "an address",
        AstOperand::Expr(_) => "a value",
    };
    Some(vec![
        Diagnostic::error(
            format!("`call` takes a label, not {what}"),
            target.span.clone(),
        )
        .label("calls go to a label of the kernel; there are no indirect calls")
        .help(form),
    ])
}

fn full_mask(span: &Span) -> Spanned<AstOperand<'static>> {
    value(Expr::Neg(Box::new(at(Expr::Int("1"), span))), span)
}

/// The field of struct parameter `name` that a read of type `ty` at byte `k` gets
/// (zero where no field is); `None` when `name` is no struct parameter.
fn struct_field(
    scope: &super::Scope,
    name: &str,
    k: i64,
    ty: Option<Ty>,
    at: &Span,
) -> Option<Result<super::EntryArg, Diagnostic>> {
    let s = scope.entry_structs.get(name)?;
    let ty = ty.unwrap_or(Ty::U32);
    let width = i64::from(ty.bits() / 8);
    if k < 0
        || k.checked_add(width)
            .is_none_or(|end| end > i64::from(s.bytes))
    {
        return Some(Err(Diagnostic::error(
            format!("this read is outside `{name}`"),
            at.clone(),
        )
        .label(format!(
            "bytes {k}..{} of a {}-byte struct",
            i128::from(k) + i128::from(width),
            s.bytes
        ))));
    }
    let overlaps = |f: &&super::Field| {
        let (o, w) = (i64::from(f.offset), i64::from(f.arg.ty.bits() / 8));
        o < k + width && k < o + w
    };
    Some(match s.fields.iter().find(overlaps) {
        None => Ok(super::EntryArg {
            ty,
            bound: Bound::Const(0),
        }),
        Some(f) if i64::from(f.offset) == k && f.arg.ty.bits() == ty.bits() => Ok(f.arg.clone()),
        Some(f) => Err(Diagnostic::error(
            format!("this read of `{name}` does not match its fields"),
            at.clone(),
        )
        .label(format!(
            "a .{ty} at byte {k}; `.bind` put a .{} at byte {}",
            f.arg.ty, f.offset
        ))
        .help("bind the struct's fields as the kernel reads them: the same offsets and sizes")),
    })
}

impl Lowering<'_> {
    /// Lowers a PTX spelling; `None` when the statement is an ordinary row.
    pub(super) fn ptx_spelling(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let m = mnemonic.node;
        let parts: Vec<&str> = m.split('.').collect();
        if let ["ld", "param", ..] = parts.as_slice()
            && let Some(done) = self.entry_arg_load(guard, mnemonic, &parts, operands, span)
        {
            return Some(done);
        }
        if let Some(done) = self.wide_access(guard, mnemonic, &parts, operands, span) {
            return Some(done);
        }
        match parts.as_slice() {
            ["bar" | "barrier", "sync", rest @ ..] if rest.iter().all(|p| *p == "aligned") => {
                Some(self.block_barrier(guard, mnemonic, operands, span))
            }
            ["bar" | "barrier", "warp", "sync"] => Some(if operands.len() == 1 {
                // Lanes of a warp run in lockstep: every warp is always converged
                // at this point as far as memory is concerned.
                Ok(Vec::new())
            } else {
                Err(vec![
                    Diagnostic::error("`bar.warp.sync` takes one operand", span.clone())
                        .label("the mask of lanes")
                        .help("for example: `bar.warp.sync -1;`"),
                ])
            }),
            ["shfl" | "vote", mode, ..] if *mode != "sync" => {
                let text = format!("{}.sync.{}", parts[0], parts[1..].join("."));
                let mask = full_mask(span);
                let mut ops = operands.to_vec();
                ops.push(&mask);
                let m = at(text.as_str(), &mnemonic.span);
                Some(self.machine_instr(guard, &m, &ops, span))
            }
            ["mov", "pred"] => self.immediate_pred(guard, mnemonic, operands, span),
            [op @ ("and" | "or" | "xor"), "pred"] => {
                self.pred_logic_imm(guard, mnemonic, op, operands, span)
            }
            ["mov", ty] => self.mov_halves(guard, mnemonic, ty, operands, span),
            ["setp", ..] => self.setp_combined(guard, mnemonic, &parts, operands, span),
            ["call", ..] if !self.ptx => {
                native_call_form(operands, &self.scope.params, span).map(Err)
            }
            ["call", ..] if !native_call(operands) => Some(Err(vec![
                Diagnostic::error("PTX calls of device functions are not supported yet", mnemonic.span.clone())
                    .label("a call with PTX's parameter lists")
                    .help("inline the callee into the kernel (nvcc's `__forceinline__`); the machine's own `call LABEL, FRAME;` calls code of the kernel itself"),
            ])),
            _ => None,
        }
    }

    /// `bar.sync 0` and its spellings: the SPU's one block barrier.
    fn block_barrier(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Lowered {
        let m = at("bar.sync", &mnemonic.span);
        match operands {
            [] => self.machine_instr(guard, &m, &[], span),
            [o] => match &o.node {
                AstOperand::Expr(e) if const_int(e, &self.scope.params).ok() == Some(0) => {
                    self.machine_instr(guard, &m, &[], span)
                }
                _ => Err(vec![
                    Diagnostic::error("only barrier 0 exists", o.span.clone())
                        .label("the SPU has one block-wide barrier")
                        .help("write `bar.sync 0;`"),
                ]),
            },
            [_, extra, ..] => Err(vec![
                Diagnostic::error(
                    "a barrier of part of the block is not supported",
                    extra.span.clone(),
                )
                .label("thread count")
                .help("every thread of the block takes part: write `bar.sync 0;`"),
            ]),
        }
    }

    /// A predicate instruction over virtual registers, under `guard`.
    fn pred_op(
        &mut self,
        op: Opcode,
        dst: u32,
        srcs: &[u32],
        guard: (Guard, Option<RegRef>),
    ) -> Result<VInstr, Vec<Diagnostic>> {
        let vals: Vec<Operand> = std::iter::repeat_n(Operand::Pred(0), srcs.len() + 1).collect();
        let mut instr = Instr::new(op, Guard::Always, Mods::default(), &vals)
            .map_err(|e| vec![Diagnostic::error(e.to_string(), 0..0)])?;
        let mut refs: Vec<RegRef> = std::iter::once(dst)
            .chain(srcs.iter().copied())
            .enumerate()
            .map(|(k, vreg)| RegRef {
                slot: Slot::Operand(k),
                vreg,
                offset: 0,
                part: false,
            })
            .collect();
        if let (g, Some(r)) = guard {
            instr.guard = g;
            refs.push(r);
        }
        Ok(VInstr {
            instr,
            refs,
            target: None,
            helper: false,
        })
    }

    /// `setp.cmp.bop.ty p[|q], a, b, [!]c`: p = (a cmp b) bop c, q = !(a cmp b) bop c;
    /// without `bop`, `p|q` writes the comparison and its complement.
    fn setp_combined(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        parts: &[&str],
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let bop = parts
            .iter()
            .position(|p| matches!(*p, "and" | "or" | "xor"));
        let pair = matches!(
            operands.first().map(|o| &o.node),
            Some(AstOperand::RegPred(..))
        );
        if bop.is_none() && !pair {
            return None;
        }
        Some((|| {
            let plain: Vec<&str> = parts
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != bop)
                .map(|(_, p)| *p)
                .collect();
            let plain = plain.join(".");
            let want = if bop.is_some() { 4 } else { 3 };
            if operands.len() != want {
                return Err(vec![
                    Diagnostic::error(
                        format!(
                            "`{}` takes {want} operands, found {}",
                            mnemonic.node,
                            operands.len()
                        ),
                        span.clone(),
                    )
                    .help(if bop.is_some() {
                        "for example: `setp.lt.and.s32 %p1, %r1, %r2, %p2;`"
                    } else {
                        "for example: `setp.lt.s32 %p1|%p2, %r1, %r2;`"
                    }),
                ]);
            }
            let (p_name, q) = match &operands[0].node {
                AstOperand::RegPred(p, q) => (*p, Some(q)),
                AstOperand::Register(p) => (*p, None),
                _ => {
                    return Err(vec![
                        Diagnostic::error(
                            "the destination of `setp` must be a predicate",
                            operands[0].span.clone(),
                        )
                        .label("expected `%p` or `%p|%q`"),
                    ]);
                }
            };
            let p_vreg = self.pred(p_name, &operands[0].span).map_err(|d| vec![d])?;
            let q_vreg = match q {
                Some(q) => Some(self.pred(q.node, &q.span).map_err(|d| vec![d])?),
                None => None,
            };
            let c = match bop {
                None => None,
                Some(_) => Some(match &operands[3].node {
                    AstOperand::Register(c) => (self.pred(c, &operands[3].span), false),
                    AstOperand::NotPred(c) => (self.pred(c, &operands[3].span), true),
                    _ => {
                        return Err(vec![
                            Diagnostic::error(
                                "the last operand of a combining `setp` must be a predicate",
                                operands[3].span.clone(),
                            )
                            .label("expected `%p` or `!%p`"),
                        ]);
                    }
                }),
            };
            let c = match c {
                Some((Ok(v), neg)) => Some((v, neg)),
                Some((Err(d), _)) => return Err(vec![d]),
                None => None,
            };
            let dest = reg(p_name, &operands[0].span);
            let m = at(plain.as_str(), &mnemonic.span);
            let mut out =
                self.machine_instr(guard, &m, &[&dest, operands[1], operands[2]], span)?;
            let Some(cmp) = out.last_mut() else {
                return Ok(out);
            };
            let mut g = (
                cmp.instr.guard,
                cmp.refs.iter().find(|r| r.slot == Slot::Guard).copied(),
            );
            // The guard is read once, for the whole instruction: when it is a
            // destination (`@%p1 setp.lt.u32 %p1|%p2, ...`), a copy taken before
            // the comparison guards what follows it.
            if let Some(r) = &mut g.1
                && (r.vreg == p_vreg || Some(r.vreg) == q_vreg)
            {
                let copy = self.vregs.add(Class::Pred, None);
                let mov = self.pred_op(Opcode::MovPred, copy, &[r.vreg], (Guard::Always, None))?;
                r.vreg = copy;
                out.insert(out.len() - 1, mov);
            }
            let Some(cmp) = out.last_mut() else {
                return Ok(out);
            };
            let Some((mut c, negated)) = c else {
                // p = a cmp b; q = !p.
                if let Some(q) = q_vreg {
                    let v = self.pred_op(Opcode::NotPred, q, &[p_vreg], g)?;
                    out.push(v);
                }
                return Ok(out);
            };
            // The comparison goes to a temporary so that c may be p or q.
            let t = self.vregs.add(Class::Pred, None);
            for r in cmp.refs.iter_mut() {
                if r.slot == Slot::Operand(0) {
                    r.vreg = t;
                }
            }
            if negated {
                let nc = self.vregs.add(Class::Pred, None);
                out.push(self.pred_op(Opcode::NotPred, nc, &[c], g)?);
                c = nc;
            }
            // `setp.CMP.BOP`: the predicate row of the boolean operation.
            let bop_row = match bop.map(|i| parts[i]) {
                Some("or") => Opcode::OrPred,
                Some("xor") => Opcode::XorPred,
                _ => Opcode::AndPred,
            };
            let q_value = match q_vreg {
                Some(_) => {
                    let u = self.vregs.add(Class::Pred, None);
                    out.push(self.pred_op(Opcode::NotPred, u, &[t], g)?);
                    out.push(self.pred_op(bop_row, u, &[u, c], g)?);
                    Some(u)
                }
                None => None,
            };
            out.push(self.pred_op(bop_row, p_vreg, &[t, c], g)?);
            if let (Some(q), Some(u)) = (q_vreg, q_value) {
                out.push(self.pred_op(Opcode::MovPred, q, &[u], g)?);
            }
            Ok(out)
        })())
    }

    /// `ld.param.T d, [P]` of an entry parameter that is not a kernel parameter.
    fn entry_arg_load(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        parts: &[&str],
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let scope = self.scope;
        let [dest, src] = operands else {
            return None;
        };
        let AstOperand::Mem {
            base: None,
            offset: Some(off),
            ..
        } = &src.node
        else {
            return None;
        };
        let ty = parts.last().and_then(|t| Ty::from_name(t));
        let (pname, arg) = match &off.node {
            Expr::Name(n) if scope.entry_args.contains_key(*n) => {
                (*n, Ok(scope.entry_args[*n].clone()))
            }
            Expr::Name(n) => (*n, struct_field(scope, n, 0, ty, &off.span)?),
            Expr::Binary('+', a, b) => match (&a.node, &b.node) {
                // A part of a scalar parameter (`[k_param_1+4]`, the high word of
                // a `.u64`): read whole, then split.
                (Expr::Name(n), Expr::Int(k))
                    if scope.entry_args.contains_key(*n)
                        && crate::eval::parse_int(k) == Some(0) =>
                {
                    (*n, Ok(scope.entry_args[*n].clone()))
                }
                (Expr::Name(n), Expr::Int(_)) if scope.entry_args.contains_key(*n) => {
                    let t = scope.entry_args[*n].ty;
                    return Some(Err(vec![
                        Diagnostic::error(
                            format!("`{n}` is a .{t} parameter, read here at an offset"),
                            off.span.clone(),
                        )
                        .label("a part of a parameter")
                        .help(format!(
                            "read it whole with `ld.param.{t} %rd1, [{n}];` and take a half with `mov.b64 {{%r1, %r2}}, %rd1;` (or `cvt`, `shr`)"
                        )),
                    ]));
                }
                (Expr::Name(n), Expr::Int(k)) => {
                    let k = crate::eval::parse_int(k).unwrap_or(-1);
                    (*n, struct_field(scope, n, k, ty, &off.span)?)
                }
                _ => return None,
            },
            _ => return None,
        };
        let arg = match arg {
            Ok(a) => a,
            Err(d) => return Some(Err(vec![d])),
        };
        let arg = &arg;
        Some((|| {
            let Some(ty) = ty.filter(|t| t.bits() == arg.ty.bits()) else {
                return Err(vec![
                    Diagnostic::error(
                        format!("`{pname}` is a .{} parameter", arg.ty),
                        src.span.clone(),
                    )
                    .label(format!("read it with `ld.param.{}`", arg.ty)),
                ]);
            };
            let AstOperand::Register(d) = &dest.node else {
                return Err(vec![
                    Diagnostic::error(
                        "the destination of `ld.param` must be a register",
                        dest.span.clone(),
                    )
                    .label("expected a register"),
                ]);
            };
            let dspan = &dest.span;
            let lo = format!("{d}.lo");
            let hi = format!("{d}.hi");
            let wide = ty.bits() == 64;
            // The destination's width when it is an integer register (PTX lets a
            // load of a narrower integer type extend into it).
            let dest_bits = match scope.reg(d) {
                Some((info, _)) if scope.regs.contains_key(*d) => match info.ty {
                    RegTy::Val(t) if !t.is_float() => t.bits(),
                    _ => 0,
                },
                _ => 0,
            };
            // A load of 8 to 32 bits into a 64-bit register: the low half takes the
            // value, `extend_high` sets the high half by the type.
            let widened = !wide && !ty.is_float() && dest_bits == 64;
            let mut out = Vec::new();
            let mut emit = |this: &mut Self, m: &str, ops: &[&Spanned<AstOperand<'_>>]| {
                let m = at(m, &mnemonic.span);
                this.machine_instr(guard, &m, ops, span)
                    .map(|v| out.extend(v))
            };
            let (low, high) = (reg(&lo, dspan), reg(&hi, dspan));
            match &arg.bound {
                Bound::Buffer(b) => {
                    let addr = value(Expr::Name(b), &off.span);
                    if wide || widened {
                        let zero = value(Expr::Int("0"), &off.span);
                        emit(self, "mov.u32", &[&low, &addr])?;
                        emit(self, "mov.u32", &[&high, &zero])?;
                    } else {
                        emit(self, "mov.u32", &[&reg(d, dspan), &addr])?;
                    }
                }
                Bound::Param(q) => {
                    let qty = scope
                        .params
                        .iter()
                        .find(|p| p.name == *q)
                        .map_or(Ty::U32, |p| p.ty);
                    let from = at(
                        AstOperand::Mem {
                            base: None,
                            negative: false,
                            offset: Some(at(Expr::Name(q), &off.span)),
                        },
                        &src.span,
                    );
                    // A 64-bit entry parameter given a 32-bit kernel parameter reads
                    // it as its own type; a narrower load as the instruction's.
                    let half = if widened {
                        Some(ty)
                    } else {
                        (wide && qty.bits() == 32).then_some(qty)
                    };
                    if let Some(t) = half {
                        emit(self, &format!("ld.param.{t}"), &[&low, &from])?;
                        out.extend(self.extend_high(
                            guard,
                            &mnemonic.span,
                            &high,
                            &low,
                            t,
                            span,
                        )?);
                    } else {
                        emit(self, mnemonic.node, &[*dest, &from])?;
                    }
                }
                Bound::Const(bits) => {
                    let word = |w: u64| format!("0x{:x}", w & 0xffff_ffff);
                    // The constant as the load reads it: extended by the type.
                    let bits = if ty.is_float() {
                        *bits
                    } else {
                        ty.extend(*bits)
                    };
                    if wide || widened {
                        let (l, h) = (word(bits), word(bits >> 32));
                        emit(self, "mov.b32", &[&low, &value(Expr::Int(&l), &off.span)])?;
                        emit(self, "mov.b32", &[&high, &value(Expr::Int(&h), &off.span)])?;
                    } else if ty.is_float() {
                        let f = format!("0f{:08X}", bits as u32);
                        emit(
                            self,
                            &format!("mov.{ty}"),
                            &[*dest, &value(Expr::Float(&f), &off.span)],
                        )?;
                    } else if dest_bits == 16 {
                        let w = format!("0x{:x}", bits & 0xffff);
                        emit(self, "mov.b16", &[*dest, &value(Expr::Int(&w), &off.span)])?;
                    } else {
                        let w = word(bits);
                        emit(self, "mov.b32", &[*dest, &value(Expr::Int(&w), &off.span)])?;
                    }
                }
            }
            Ok(out)
        })())
    }
}
