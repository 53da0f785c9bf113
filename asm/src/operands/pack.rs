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
        // (destination, source) of each half's move, each a register with its span.
        type Named<'a> = (&'a str, &'a Span);
        let moves: Vec<(Named<'_>, Named<'_>)> = names
            .iter()
            .zip(parts.iter())
            .map(|(half, part)| {
                let whole_half = (half.as_str(), whole.1);
                let piece = (part.node, &part.span);
                if unpack {
                    (piece, whole_half)
                } else {
                    (whole_half, piece)
                }
            })
            .collect();
        fn reg<'a>((name, at): Named<'a>) -> Spanned<AstOperand<'a>> {
            Spanned {
                node: AstOperand::Register(name),
                span: at.clone(),
            }
        }
        let same =
            |a: Named<'_>, b: Named<'_>| a.0.trim_start_matches('%') == b.0.trim_start_matches('%');
        let [first, second] = [moves[0], moves[1]];
        // A `mov` reads its source before it writes: when the first move would
        // overwrite what the second reads, the halves move the other way round,
        // or, when they swap (`mov.b64 {%x.hi, %x.lo}, %x;`), by three `xor`s.
        let steps: Vec<(&str, [Named<'_>; 3])> =
            if same(first.0, second.1) && same(second.0, first.1) {
                if same(first.0, first.1) {
                    Vec::new()
                } else {
                    let (a, b) = (first.0, second.0);
                    vec![
                        ("xor.b32", [a, a, b]),
                        ("xor.b32", [b, b, a]),
                        ("xor.b32", [a, a, b]),
                    ]
                }
            } else if same(first.0, second.1) {
                vec![
                    ("mov.b32", [second.0, second.1, second.1]),
                    ("mov.b32", [first.0, first.1, first.1]),
                ]
            } else {
                vec![
                    ("mov.b32", [first.0, first.1, first.1]),
                    ("mov.b32", [second.0, second.1, second.1]),
                ]
            };
        let mut out = Vec::new();
        for (op, regs) in steps {
            let m = Spanned {
                node: op,
                span: mnemonic.span.clone(),
            };
            let ops: Vec<Spanned<AstOperand<'_>>> = regs.iter().map(|r| reg(*r)).collect();
            let ops: Vec<&Spanned<AstOperand<'_>>> = if op == "mov.b32" {
                ops.iter().take(2).collect()
            } else {
                ops.iter().collect()
            };
            match self.machine_instr(guard, &m, &ops, span) {
                Ok(v) => out.extend(v),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(out))
    }
}
