//! PTX forms whose operands are wider or looser than the machine row takes:
//!
//! - loads and stores through a register wider than the access (`st.global.u32
//!   [..], %rd3`, `ld.global.u8 %rd3, [..]`, as clang writes them): PTX's rule is
//!   that a store takes the register's low bits and a load extends the value to the
//!   register's width by the instruction's type (sign for signed types, zero for
//!   unsigned and bit types). A 64-bit register is a pair of 32-bit ones here, so
//!   the access uses the low half and a load then sets the high half;
//! - `mov.pred %p, 0` / `1` (an immediate predicate, as nvcc 8 writes it; clang
//!   writes true as `-1`), lowered
//!   to a `setp` of the constant; `xor.pred %p, %q, -1` (clang's negation) and the
//!   other logic of a predicate with a constant, lowered to `not`, `mov` or a
//!   constant.

use super::Lowering;
use crate::ast::{Expr, Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::eval::const_int;
use crate::lexer::Span;
use crate::vcode::VInstr;
use spu_isa::Ty;
use spu_isa::format::RegTy;

type Lowered = Result<Vec<VInstr>, Vec<Diagnostic>>;

fn at<T>(node: T, span: &Span) -> Spanned<T> {
    Spanned {
        node,
        span: span.clone(),
    }
}

impl Lowering<'_> {
    /// `ld`/`ldu`/`st` of 8 to 32 bits through a 64-bit register; `None` for any
    /// other statement.
    pub(super) fn wide_access(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        parts: &[&str],
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let load = match parts.first() {
            Some(&"ld" | &"ldu") => true,
            Some(&"st") => false,
            _ => return None,
        };
        let ty = Ty::from_name(parts.last()?)?;
        if ty.is_float() || ty.bits() > 32 || parts.iter().any(|p| p.starts_with('v')) {
            return None;
        }
        let (k, other) = match (load, operands) {
            (true, [_, a]) => (0, *a),
            (false, [a, _]) => (1, *a),
            _ => return None,
        };
        let data = operands[k];
        let AstOperand::Register(name) = &data.node else {
            return None;
        };
        let (info, _) = self.scope.reg(name)?;
        if !matches!(info.ty, RegTy::Val(t) if t.bits() == 64 && !t.is_float())
            || !self.scope.regs.contains_key(*name)
        {
            return None;
        }
        let lo = format!("{name}.lo");
        let hi = format!("{name}.hi");
        let low = at(AstOperand::Register(lo.as_str()), &data.span);
        let ops: [&Spanned<AstOperand<'_>>; 2] = if load { [&low, other] } else { [other, &low] };
        let mut out = match self.machine_instr(guard, mnemonic, &ops, span) {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        };
        if load {
            let high = at(AstOperand::Register(hi.as_str()), &data.span);
            match self.extend_high(guard, &mnemonic.span, &high, &low, ty, span) {
                Ok(v) => out.extend(v),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(out))
    }

    /// Sets `high`, the high half of a 64-bit register whose low half `low` was just
    /// loaded with a value of `ty` (already extended to 32 bits): the sign of the
    /// value for a signed type, zero otherwise. The one place that widens a load
    /// into a 64-bit register, for every state space.
    pub(super) fn extend_high(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        at_span: &Span,
        high: &Spanned<AstOperand<'_>>,
        low: &Spanned<AstOperand<'_>>,
        ty: Ty,
        span: &Span,
    ) -> Lowered {
        if ty.is_signed() {
            let sign = at(AstOperand::Expr(at(Expr::Int("31"), &low.span)), &low.span);
            let m = at("shr.s32", at_span);
            self.machine_instr(guard, &m, &[high, low, &sign], span)
        } else {
            let zero = at(AstOperand::Expr(at(Expr::Int("0"), &low.span)), &low.span);
            let m = at("mov.u32", at_span);
            self.machine_instr(guard, &m, &[high, &zero], span)
        }
    }

    /// `mov.pred %p, 0`, `1` or `-1`: `setp.ne.u32 %p, K, 0` (the constant goes through a
    /// temporary as any immediate the row cannot hold).
    pub(super) fn immediate_pred(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let [d, a] = operands else { return None };
        let AstOperand::Expr(e) = &a.node else {
            return None;
        };
        if matches!(e.node, Expr::Name(_)) {
            return None;
        }
        // clang writes true as -1 (LLVM's `i1` constant), nvcc as 1.
        let k = match const_int(e, &self.scope.params) {
            Ok(v @ (-1..=1)) => v,
            _ => {
                return Some(Err(vec![
                    Diagnostic::error("an immediate predicate is 0, 1 or -1", a.span.clone())
                        .label("not 0, 1 or -1")
                        .help("write `mov.pred %p1, 0;` for false or `mov.pred %p1, 1;` (or `-1`) for true"),
                ]));
            }
        };
        let text = if k != 0 { "1" } else { "0" };
        let value = at(AstOperand::Expr(at(Expr::Int(text), &a.span)), &a.span);
        let zero = at(AstOperand::Expr(at(Expr::Int("0"), &a.span)), &a.span);
        let m = at("setp.ne.u32", &mnemonic.span);
        Some(self.machine_instr(guard, &m, &[*d, &value, &zero], span))
    }

    /// `and`/`or`/`xor.pred d, a, K` with a constant (clang writes `xor.pred %p2,
    /// %p1, -1;` for a negation): any K but 0 is true, as LLVM's `i1` constant -1 is.
    pub(super) fn pred_logic_imm(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        op: &str,
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let [d, a, b] = operands else { return None };
        let AstOperand::Expr(e) = &b.node else {
            return None;
        };
        if matches!(e.node, Expr::Name(_)) {
            return None;
        }
        let truth = const_int(e, &self.scope.params).ok()? != 0;
        let constant = |v: &'static str| at(AstOperand::Expr(at(Expr::Int(v), &b.span)), &b.span);
        let (m, ops): (&str, Vec<Spanned<AstOperand<'_>>>) = match (op, truth) {
            ("xor", true) => ("not.pred", vec![]),
            ("xor", false) | ("and", true) | ("or", false) => ("mov.pred", vec![]),
            ("and", false) => ("mov.pred", vec![constant("0")]),
            _ => ("mov.pred", vec![constant("1")]),
        };
        let m = at(m, &mnemonic.span);
        match ops.first() {
            Some(k) => self.immediate_pred(guard, &m, &[*d, k], span),
            None => Some(self.machine_instr(guard, &m, &[*d, *a], span)),
        }
    }
}
