//! `.assert COND, "message";`: preconditions on the kernel's parameters, stored
//! for the loader to check with the final values (after `-D`).

use super::Assembler;
use crate::ast::{SExpr, Spanned};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::eval_with_defaults;
use spu_isa::format::{CmpOp, MAX_STRING, Precondition};

impl Assembler<'_> {
    pub(super) fn precondition(
        &mut self,
        lhs: &SExpr<'_>,
        op: CmpOp,
        rhs: &SExpr<'_>,
        message: &Spanned<&str>,
        diags: &mut Diagnostics,
    ) {
        if message.node.trim().is_empty() {
            diags.push(
                Diagnostic::error("a precondition needs a message", message.span.clone())
                    .label("empty message")
                    .help(
                        "say what the kernel needs, e.g. \"N must be a multiple of the tile size\"",
                    ),
            );
            return;
        }
        // Stored as written and printed when a run breaks it: a character a
        // terminal would act on or hide could not be shown, nor written back by -d.
        if let Some(c) = message
            .node
            .chars()
            .find(|&c| spu_io::quote::is_hidden(c) || c == '"')
        {
            diags.push(
                Diagnostic::error(
                    format!(
                        "a precondition message may not hold `{}`",
                        spu_io::quote::escape(&c.to_string())
                    ),
                    message.span.clone(),
                )
                .label("not plain text")
                .help("write the message as plain text on one line"),
            );
            return;
        }
        if message.node.len() > MAX_STRING as usize {
            diags.push(
                Diagnostic::error("this message is too long", message.span.clone())
                    .label(format!("a binary stores at most {MAX_STRING} bytes")),
            );
            return;
        }
        let (Some(l), Some(r)) = (self.expr(lhs, diags), self.expr(rhs, diags)) else {
            return;
        };
        // The defaults are what a run without -D gets: a precondition they break
        // refuses every such run.
        if let (Ok(Some(a)), Ok(Some(b))) = (
            eval_with_defaults(lhs, &self.scope.params),
            eval_with_defaults(rhs, &self.scope.params),
        ) && !op.holds(a, b)
        {
            diags.push(
                Diagnostic::warning(
                    "the parameters' defaults break this precondition",
                    lhs.span.start..rhs.span.end,
                )
                .label(format!("{a} {} {b} is false", op.symbol()))
                .help("a run without `-D` will be refused: change the defaults or the condition"),
            );
        }
        self.module.preconditions.push(Precondition {
            lhs: l,
            op,
            rhs: r,
            message: message.node.to_string(),
        });
    }
}
