//! The first look at a file: its statements' boundaries and shapes, without
//! parsing them. It finds the kernels (`.entry` blocks) and which statements belong
//! to which, the labels, and where the declarations the code refers to are
//! (parameters, buffers, `.bind`), so the assembler can read those first and then
//! lower the code in one streaming pass. It also stops a file that is past the
//! limits of a binary before any work is spent on it.

use crate::ast::Spanned;
use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Tok;
use crate::parse::{Shape, Splitter, shape, too_many_instructions};
use spu_isa::format::MAX_INSTRUCTIONS;

/// Most labels one file may define.
pub const MAX_LABELS: usize = 1 << 20;
/// Most kernels (`.entry` blocks) one file may define.
pub const MAX_ENTRIES: usize = 1 << 16;

/// Most nested `{`s whose place is kept, to name the innermost one left open.
const MAX_NESTED: usize = 1024;

/// No kernel: a statement outside every `.entry` block.
pub(super) const NO_OWNER: u32 = u32::MAX;

/// Owners from this one up are device functions (`FUNC_OWNER + index`).
pub(super) const FUNC_OWNER: u32 = 1 << 31;

/// A device function's definition (`.func ... {`).
#[derive(Debug, Clone)]
pub(super) struct FuncOutline {
    /// Where its `.func` statement starts and its block ends.
    pub start: u32,
    pub end: u32,
}

/// A declaration statement, to be parsed when the declarations are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decl {
    pub kind: DeclKind,
    /// The kernel whose block holds it ([`NO_OWNER`] outside any).
    pub owner: u32,
    /// Where the statement starts in the preprocessed text.
    pub start: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeclKind {
    Param,
    Global,
    Bind,
    /// `.file N "k.cu"` outside any block: clang writes these after the code
    /// whose `.loc`s name them.
    File,
}

/// What the first look found.
#[derive(Debug, Default)]
pub(super) struct Outline<'s> {
    /// The kernels' names, in order.
    pub entries: Vec<Spanned<&'s str>>,
    /// Where each kernel's `.entry` statement starts.
    pub entry_starts: Vec<u32>,
    /// Where each kernel's block ends (the end of the text if it is not closed).
    pub entry_ends: Vec<u32>,
    pub decls: Vec<Decl>,
    /// Device function definitions, in order.
    pub funcs: Vec<FuncOutline>,
    /// Labels with the kernel whose block holds them.
    pub labels: Vec<(u32, Spanned<&'s str>)>,
    /// The width of a pointer: 32 when a PTX file says `.address_size 32`, else 64.
    pub pointer_bits: u32,
    /// The look stopped before the end of the file (an unterminated comment, or a
    /// limit): syntax errors of the statements before this offset are still
    /// reported, and nothing is assembled.
    pub stopped_at: Option<usize>,
    /// A kernel or device function whose block is not closed at the end of the
    /// text (what follows it, also a launch file's lines after the `#include` of
    /// its file, was read as its body).
    pub unclosed: Option<Unclosed<'s>>,
}

/// A block left open at the end of the text.
#[derive(Debug, Clone)]
pub(super) struct Unclosed<'s> {
    /// The kernel's index, or [`FUNC_OWNER`] + the device function's index.
    pub owner: u32,
    pub name: &'s str,
    /// Its opening `{`.
    pub open: crate::lexer::Span,
    /// The innermost `{` still open, when it is another one.
    pub inner: Option<crate::lexer::Span>,
}

/// Looks at every statement of `text`, reporting what is wrong between statements
/// (see [`Splitter`]) into `diags`.
pub(super) fn scan<'s>(text: &'s str, diags: &mut Diagnostics) -> Outline<'s> {
    let mut outline = Outline {
        pointer_bits: 64,
        ..Outline::default()
    };
    let mut split = Splitter::new(text, 0, true);
    let mut open = NO_OWNER;
    // Braces open inside the open kernel or function (call sequences nest).
    let mut depth = 0u32;
    // The open block's name and `{`, and the inner `{`s still open (the first
    // MAX_NESTED levels: a file of `{`s costs no memory per brace).
    let mut block: Option<(&str, crate::lexer::Span)> = None;
    let mut inner: Vec<crate::lexer::Span> = Vec::new();
    let mut instructions = 0usize;
    let to32 = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    while let Some((tokens, _)) = split.next_statement() {
        let start = tokens[0].1.start;
        let span = start..tokens.last().map_or(start, |t| t.1.end);
        let decl = |kind, owner| Decl {
            kind,
            owner,
            start: to32(start),
        };
        if let [(Tok::AddressSize, _), (Tok::Int("32"), _)] = tokens {
            outline.pointer_bits = 32;
        }
        if let [(Tok::File, _), ..] = tokens
            && open == NO_OWNER
        {
            outline.decls.push(decl(DeclKind::File, open));
        }
        match shape(tokens) {
            Shape::EntryOpen(name) => {
                if outline.entries.len() == MAX_ENTRIES {
                    diags.push(
                        Diagnostic::error("too many kernels", name.span)
                            .label(format!("a file has at most {MAX_ENTRIES} `.entry` blocks"))
                            .help("put the kernels in several files"),
                    );
                    outline.stopped_at = Some(start);
                    break;
                }
                open = to32(outline.entries.len());
                depth = 1;
                block = Some((name.node, tokens[tokens.len() - 1].1.clone()));
                inner.clear();
                outline.entries.push(name);
                outline.entry_starts.push(to32(start));
                outline.entry_ends.push(to32(text.len()));
            }
            Shape::FuncOpen(name) => {
                open = FUNC_OWNER + to32(outline.funcs.len()).min(FUNC_OWNER - 1);
                depth = 1;
                block = Some((name.node, tokens[tokens.len() - 1].1.clone()));
                inner.clear();
                outline.funcs.push(FuncOutline {
                    start: to32(start),
                    end: to32(text.len()),
                });
            }
            Shape::BlockOpen => {
                depth += 1;
                if open != NO_OWNER && inner.len() == depth as usize - 2 && inner.len() < MAX_NESTED
                {
                    inner.push(span.clone());
                }
            }
            Shape::BlockClose if depth > 1 => {
                depth -= 1;
                inner.truncate(depth as usize - 1);
            }
            Shape::BlockClose if open >= FUNC_OWNER && open != NO_OWNER => {
                if let Some(f) = outline.funcs.get_mut((open - FUNC_OWNER) as usize) {
                    f.end = to32(span.end);
                }
                open = NO_OWNER;
                depth = 0;
            }
            Shape::BlockClose => {
                depth = 0;
                if let Some(end) = outline.entry_ends.get_mut(open as usize) {
                    *end = to32(span.end);
                }
                open = NO_OWNER;
            }
            Shape::Label(name) => {
                if outline.labels.len() == MAX_LABELS {
                    diags.push(
                        Diagnostic::error("too many labels", name.span)
                            .label(format!("a file defines at most {MAX_LABELS} labels"))
                            .help("split the kernel"),
                    );
                    outline.stopped_at = Some(start);
                    break;
                }
                outline.labels.push((open, name));
            }
            // A call sequence's or a function's `.param` is a frame slot, not a
            // kernel parameter.
            Shape::Param if depth > 1 || (open >= FUNC_OWNER && open != NO_OWNER) => {}
            Shape::Param => outline.decls.push(decl(DeclKind::Param, open)),
            Shape::Global => outline.decls.push(decl(DeclKind::Global, open)),
            Shape::Bind => outline.decls.push(decl(DeclKind::Bind, open)),
            Shape::Instr => {
                instructions += 1;
                if instructions > MAX_INSTRUCTIONS {
                    // Checking millions of statements would only delay this error.
                    diags.push(too_many_instructions(span, MAX_INSTRUCTIONS));
                    outline.stopped_at = Some(start);
                    break;
                }
            }
            Shape::Other => {}
        }
    }
    if split.stopped_early {
        outline.stopped_at = Some(text.len());
    }
    if open != NO_OWNER
        && outline.stopped_at.is_none()
        && let Some((name, at)) = block
    {
        outline.unclosed = Some(Unclosed {
            owner: open,
            name,
            open: at,
            inner: inner.last().cloned(),
        });
    }
    diags.append(split.take_diagnostics());
    outline
}
