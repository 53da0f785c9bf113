//! CUDA's `__launch_bounds__` as nvcc writes them after an entry's signature:
//! `.maxntid X, Y, Z` (at most that many threads per block), `.reqntid X, Y, Z`
//! (exactly that block shape), `.minnctapersm N` and `.maxnreg N` (hints to the
//! register allocator of a GPU compiler; accepted and recorded nowhere). A GPU
//! refuses a launch that breaks `.maxntid` or `.reqntid`, so the launch file's
//! `.launch block(...)` is checked against them when its values are known at
//! assembly time (numbers, or parameters with defaults).

use super::Assembler;
use crate::ast::{EntryHint, SExpr};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{eval_with_defaults, parse_int};
use crate::lexer::Span;

/// A checked `.maxntid` or `.reqntid`: the directive's name, the extents (missing
/// ones are 1) and where it is written.
#[derive(Debug, Clone)]
pub(super) struct ThreadBound {
    required: bool,
    dims: [u64; 3],
    span: Span,
}

impl Assembler<'_> {
    /// Checks the performance directives of the assembled entry and keeps its
    /// thread bounds for [`Self::check_launch_bounds`].
    pub(super) fn entry_hints(&mut self, hints: &[EntryHint<'_>], diags: &mut Diagnostics) {
        for h in hints {
            let span = h.name.span.start..h.values.last().map_or(h.name.span.end, |v| v.span.end);
            let threads = matches!(h.name.node, "maxntid" | "reqntid");
            let most = if threads { 3 } else { 1 };
            if h.values.len() > most {
                diags.push(
                    Diagnostic::error(
                        format!(
                            "`.{}` takes {}",
                            h.name.node,
                            if threads {
                                "one to three extents"
                            } else {
                                "one number"
                            }
                        ),
                        h.values[most].span.clone(),
                    )
                    .label("extra value"),
                );
                continue;
            }
            let mut dims = [1u64; 3];
            let mut ok = true;
            for (slot, v) in dims.iter_mut().zip(&h.values) {
                match parse_int(v.node).and_then(|x| u32::try_from(x).ok()) {
                    Some(x) if x > 0 => *slot = u64::from(x),
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                format!("`.{}` value `{}` is out of range", h.name.node, v.node),
                                v.span.clone(),
                            )
                            .label("expected a positive 32-bit number"),
                        );
                        ok = false;
                    }
                }
            }
            if ok && threads {
                self.thread_bounds.push(ThreadBound {
                    required: h.name.node == "reqntid",
                    dims,
                    span,
                });
            }
        }
    }

    /// Remembers the `.launch block(...)` values known at assembly time.
    pub(super) fn note_launch_block(&mut self, args: &[SExpr<'_>]) {
        let known: Vec<Option<u64>> = args
            .iter()
            .map(|a| match eval_with_defaults(a, &self.scope.params) {
                Ok(Some(v)) => u64::try_from(v).ok(),
                _ => None,
            })
            .collect();
        let span = args.first().map_or(0, |a| a.span.start)..args.last().map_or(0, |a| a.span.end);
        let mut dims = [Some(1u64); 3];
        for (slot, v) in dims.iter_mut().zip(known) {
            *slot = v;
        }
        self.launch_block = Some((dims, span));
    }

    /// A launch that breaks the entry's `.maxntid` or `.reqntid` is an error, as the
    /// GPU's launch would be.
    pub(super) fn check_launch_bounds(&self, diags: &mut Diagnostics) {
        let Some((block, at)) = &self.launch_block else {
            return;
        };
        let shape = |d: [u64; 3]| format!("({}, {}, {})", d[0], d[1], d[2]);
        for b in &self.thread_bounds {
            if b.required {
                let known: Option<Vec<u64>> = block.iter().copied().collect();
                let Some(k) = known else { continue };
                let k = [k[0], k[1], k[2]];
                if k != b.dims {
                    diags.push(
                        Diagnostic::error(
                            format!(
                                "the launch's block {} differs from the kernel's required block {}",
                                shape(k),
                                shape(b.dims)
                            ),
                            at.clone(),
                        )
                        .label("block shape of this launch")
                        .with_secondary(b.span.clone(), "the kernel requires this block shape")
                        .help(format!(
                            "launch with `block({}, {}, {})`, as a GPU would require",
                            b.dims[0], b.dims[1], b.dims[2]
                        )),
                    );
                }
            } else {
                let limit: u64 = b.dims.iter().product();
                let Some(threads) = block
                    .iter()
                    .try_fold(1u64, |n, d| d.map(|d| n.saturating_mul(d)))
                else {
                    continue;
                };
                if threads > limit {
                    diags.push(
                        Diagnostic::error(
                            format!("the launch's block has {threads} threads; the kernel allows at most {limit}"),
                            at.clone(),
                        )
                        .label("threads per block of this launch")
                        .with_secondary(b.span.clone(), "the kernel's limit (CUDA `__launch_bounds__`)")
                        .help(format!("launch at most {limit} threads per block (a GPU refuses a larger launch), or raise the bound in the CUDA source and compile again")),
                    );
                }
            }
        }
    }
}
