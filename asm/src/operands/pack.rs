//! `mov` between a 64-bit register and a pair of 32-bit ones, as nvcc writes it for
//! `__double2hiint`, shuffles of doubles and `long long` splits:
//! `mov.b64 {%r1, %r2}, %fd1;` (unpack: low half first) and `mov.b64 %rd1, {%r1,
//! %r2};` (pack). A 64-bit register is a pair of 32-bit ones here, so each becomes
//! two `mov.b32` of the halves (`%fd1.lo`, `%fd1.hi`).

use super::Lowering;
use crate::ast::{Guard as AstGuard, Operand as AstOperand, Spanned};
use crate::diag::Diagnostic;
use crate::lexer::Span;
use crate::vcode::VInstr;

type Lowered = Result<Vec<VInstr>, Vec<Diagnostic>>;

impl Lowering<'_> {
    /// Lowers `mov.TY` with a `{a, b}` operand; `None` when neither operand is one.
    pub(super) fn mov_halves(
        &mut self,
        guard: Option<&AstGuard<'_>>,
        mnemonic: &Spanned<&str>,
        ty: &str,
        operands: &[&Spanned<AstOperand<'_>>],
        span: &Span,
    ) -> Option<Lowered> {
        let [d, a] = operands else { return None };
        let (whole, parts, unpack) = match (&d.node, &a.node) {
            (AstOperand::Vector(p), AstOperand::Register(r)) => ((*r, &a.span), p, true),
            (AstOperand::Register(r), AstOperand::Vector(p)) => ((*r, &d.span), p, false),
            (AstOperand::Vector(_), _) | (_, AstOperand::Vector(_)) => {
                return Some(Err(vec![
                    Diagnostic::error(
                        "`mov` with `{a, b}` needs a register on the other side",
                        span.clone(),
                    )
                    .label("a vector and a register")
                    .help(
                        "for example: `mov.b64 {%r1, %r2}, %rd1;` or `mov.b64 %rd1, {%r1, %r2};`",
                    ),
                ]));
            }
            _ => return None,
        };
        if !matches!(ty, "b64" | "u64" | "s64" | "f64") || parts.len() != 2 {
            return Some(Err(vec![
                Diagnostic::error(
                    format!("`mov.{ty}` with {} halves is not supported", parts.len()),
                    span.clone(),
                )
                .label("only a 64-bit value and two 32-bit halves")
                .help("for example: `mov.b64 {%r1, %r2}, %rd1;`; move 16-bit halves with `cvt`, `shl` and `or`"),
            ]));
        }
        let names = [format!("{}.lo", whole.0), format!("{}.hi", whole.0)];
        let mov = Spanned {
            node: "mov.b32",
            span: mnemonic.span.clone(),
        };
        let mut out = Vec::new();
        for (half, part) in names.iter().zip(parts.iter()) {
            let whole_half = Spanned {
                node: AstOperand::Register(half.as_str()),
                span: whole.1.clone(),
            };
            let piece = Spanned {
                node: AstOperand::Register(part.node),
                span: part.span.clone(),
            };
            let ops = if unpack {
                [&piece, &whole_half]
            } else {
                [&whole_half, &piece]
            };
            match self.machine_instr(guard, &mov, &ops, span) {
                Ok(v) => out.extend(v),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(out))
    }
}
