//! Splits the token stream into statements and parses each with the lalrpop grammar,
//! so one syntax error never hides the next.

use crate::ast::{Spanned, Stmt};
use crate::diag::{Diagnostic, Diagnostics};
use crate::grammar::StmtParser;
use crate::lexer::{Span, Tok, lex};
use lalrpop_util::ParseError;
use spu_isa::format::{MAX_INPUT_BYTES, MAX_INSTRUCTIONS, MAX_STRING};

/// The statements of a file.
#[derive(Debug)]
pub struct Parsed<'s> {
    pub stmts: Vec<Spanned<Stmt<'s>>>,
    /// Parsing stopped before the end of the file (an unterminated comment, a kernel
    /// too long for a binary), so checks of the file's end do not apply.
    pub stopped_early: bool,
}

/// Parses a whole file into statements, collecting syntax errors.
pub fn parse_file<'s>(src: &'s str, diags: &mut Diagnostics) -> Parsed<'s> {
    parse_limited(src, diags, MAX_INSTRUCTIONS)
}

/// [`parse_file`], stopping after `max_instructions` instructions.
fn parse_limited<'s>(src: &'s str, diags: &mut Diagnostics, max_instructions: usize) -> Parsed<'s> {
    let parser = StmtParser::new();
    let mut stmts = Vec::new();
    let mut current: Vec<(Tok<'s>, Span)> = Vec::new();
    let mut newline_inside = None;
    let mut skipping = false;
    // Brace depth inside a skipped `.func` (its body is skipped whole).
    let mut func_depth: Option<u32> = None;
    let mut instructions = 0usize;
    // Inside a `.section` (nvcc's DWARF data with `-G` or `-lineinfo`): where the
    // directive and its name are, and the brace depth of its block, skipped whole.
    let mut section: Option<(Span, u32)> = None;
    for (tok, span) in lex(src) {
        if let Some((at, depth)) = &mut section {
            let mut consumed = true;
            match (tok, *depth) {
                (Tok::LBrace, _) => *depth += 1,
                (Tok::RBrace, 1) => section = None,
                (Tok::RBrace, 2..) => *depth -= 1,
                (_, 1..) | (Tok::Newline, 0) => {}
                (Tok::Directive(_), 0) => *at = at.start..span.end,
                _ => {
                    diags.push(
                        Diagnostic::error("`.section` without a `{ ... }` block", at.clone())
                            .label("expected `{` after the section's name")
                            .help("nvcc writes `.section .debug_info { ... }`; the block's contents are ignored"),
                    );
                    section = None;
                    // This token starts the next statement.
                    consumed = false;
                }
            }
            if consumed {
                continue;
            }
        }
        if let Tok::Name(text) | Tok::Register(text) | Tok::Str(text) | Tok::Directive(text) = tok
            && text.len() > MAX_STRING as usize
        {
            diags.push(
                Diagnostic::error(
                    format!("this name is {} bytes long", text.len()),
                    span.start..span.start,
                )
                .label(format!(
                    "names and strings are limited to {MAX_STRING} bytes"
                ))
                .help("use a shorter name"),
            );
        }
        match tok {
            Tok::Newline => {
                // PTX header directives end at the line end, without `;`.
                if current.first().is_some_and(|(t, _)| {
                    matches!(
                        t,
                        Tok::Version | Tok::Target | Tok::AddressSize | Tok::File | Tok::Loc
                    )
                }) {
                    let stmt = std::mem::take(&mut current);
                    if let Some(s) = parse_stmt(&parser, &stmt, None, diags) {
                        stmts.push(s);
                    }
                    continue;
                }
                if !current.is_empty() && newline_inside.is_none() {
                    newline_inside = Some(span.start);
                }
                continue;
            }
            Tok::Error => {
                diags.push(
                    Diagnostic::error(
                        format!("unexpected character `{}`", &src[span.clone()]),
                        span.clone(),
                    )
                    .label("not part of the language"),
                );
                continue;
            }
            Tok::UnterminatedComment => {
                diags.push(
                    Diagnostic::error("unterminated block comment", span.clone())
                        .label("this comment is never closed, so the rest of the file is ignored")
                        .help("close it with `*/`"),
                );
                return Parsed {
                    stmts,
                    stopped_early: true,
                };
            }
            Tok::StrayCommentEnd => {
                diags.push(
                    Diagnostic::error("`*/` closes no comment", span.clone())
                        .label("no `/*` is open here")
                        .help("remove it, or start the comment with `/*`"),
                );
                continue;
            }
            // `.pragma "nounroll";` (and nvcc's other hints): accepted and ignored,
            // like the loop hints they are.
            Tok::Directive(".pragma") if current.is_empty() && !skipping => {
                skipping = true;
                func_depth = None;
                continue;
            }
            Tok::Directive(".section") if current.is_empty() && !skipping => {
                section = Some((span, 0));
                continue;
            }
            Tok::Directive(name) => {
                diags.push(unknown_directive(name, span.clone()));
                // Whatever came before is cut short; the directive's own arguments are
                // skipped, and a device function's whole body with them.
                current.clear();
                newline_inside = None;
                skipping = true;
                func_depth = (name == ".func").then_some(0);
                continue;
            }
            Tok::LBrace if skipping && func_depth.is_some() => {
                func_depth = func_depth.map(|d| d + 1);
                continue;
            }
            Tok::RBrace if skipping && func_depth.is_some() => {
                func_depth = func_depth.map(|d| d.saturating_sub(1));
                if func_depth == Some(0) {
                    skipping = false;
                    func_depth = None;
                }
                continue;
            }
            Tok::Semi if skipping && func_depth.is_none_or(|d| d == 0) => {
                skipping = false;
                func_depth = None;
                continue;
            }
            _ if skipping => continue,
            _ => {}
        }
        // `{`/`}` delimit blocks only where a block can open or close; inside an
        // instruction they enclose a vector operand.
        let ends = match tok {
            Tok::Semi | Tok::Iu => true,
            Tok::LBrace => current.first().is_none_or(|(t, _)| {
                matches!(t, Tok::Entry | Tok::Visible | Tok::Weak | Tok::Extern)
            }),
            Tok::RBrace => current.is_empty(),
            Tok::Colon => current.len() == 1,
            _ => false,
        };
        current.push((tok, span));
        if ends {
            let stmt = std::mem::take(&mut current);
            if let Some(s) = parse_stmt(&parser, &stmt, newline_inside.take(), diags) {
                if matches!(s.node, Stmt::Instr { .. }) {
                    instructions += 1;
                    if instructions > max_instructions {
                        diags.push(too_many_instructions(s.span, max_instructions));
                        // Checking millions of statements would only delay this error.
                        return Parsed {
                            stmts: Vec::new(),
                            stopped_early: true,
                        };
                    }
                }
                stmts.push(s);
            }
        }
    }
    if let Some((at, _)) = section {
        diags.push(
            Diagnostic::error("`.section` is never closed", at)
                .label("its `{ ... }` block does not end before the end of the file")
                .help("close the block with `}`"),
        );
    }
    if !current.is_empty() {
        let span = current[0].1.start..current.last().map_or(0, |t| t.1.end);
        diags.push(
            Diagnostic::error("statement is not terminated", span)
                .label("expected `;` after this")
                .help("end every instruction and directive with `;`"),
        );
    }
    Parsed {
        stmts,
        stopped_early: false,
    }
}

fn too_many_instructions(span: Span, max: usize) -> Diagnostic {
    Diagnostic::error(format!("the kernel has more than {max} instructions"), span)
        .label("this instruction is past the limit")
        .help(format!(
            "a binary holds at most {max} instructions (the tools read files of at most {} MiB); split the work into several kernels",
            MAX_INPUT_BYTES >> 20
        ))
}

fn unknown_directive(name: &str, span: Span) -> Diagnostic {
    match name {
        ".func" => {
            return Diagnostic::error("device functions (`.func`) are not supported", span)
                .label("the SPU has no call stack")
                .help("inline the function into the kernel: nvcc does so for `__device__` functions unless told otherwise (`__forceinline__`, or compile without `-rdc`/`--keep-device-functions`)");
        }
        ".local" => {
            return Diagnostic::error("local memory (`.local`) is not supported", span)
                .label("a thread has registers and the block's shared memory, no local memory")
                .help("keep the values in registers (the assembler allocates as many as you declare) or in a `.shared` array indexed by thread");
        }
        ".const" => {
            return Diagnostic::error("constant memory (`.const`) is not supported", span)
                .label("no constant memory space")
                .help("pass the values in a `.global` buffer, or as kernel parameters");
        }
        _ => {}
    }
    const KNOWN: [&str; 11] = [
        ".entry", ".reg", ".param", ".global", ".shared", ".launch", ".bind", ".dma", ".iu",
        ".file", ".loc",
    ];
    let d = Diagnostic::error(format!("unknown directive `{name}`"), span)
        .label("not a directive of the language");
    match crate::suggest::closest(name, KNOWN) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d.help(format!("directives are {}", KNOWN.join(", "))),
    }
}

fn parse_stmt<'s>(
    parser: &StmtParser,
    tokens: &[(Tok<'s>, Span)],
    newline_at: Option<usize>,
    diags: &mut Diagnostics,
) -> Option<Spanned<Stmt<'s>>> {
    let span = tokens[0].1.start..tokens.last().map_or(0, |t| t.1.end);
    let input = tokens
        .iter()
        .map(|(t, s)| Ok::<_, ()>((s.start, *t, s.end)));
    match parser.parse(input) {
        Ok(stmt) => Some(Spanned { node: stmt, span }),
        Err(e) => {
            diags.push(syntax_error(e, &span, newline_at));
            entry_recovery(tokens, span)
        }
    }
}

/// An entry header that does not parse (a parameter form the language lacks) still
/// opens its block, so its body is not reported line by line as outside a kernel.
fn entry_recovery<'s>(tokens: &[(Tok<'s>, Span)], span: Span) -> Option<Spanned<Stmt<'s>>> {
    let at = tokens.iter().position(|(t, _)| *t == Tok::Entry)?;
    let (Tok::Name(name), name_span) = tokens.get(at + 1)?.clone() else {
        return None;
    };
    (tokens.last()?.0 == Tok::LBrace).then(|| Spanned {
        node: Stmt::EntryOpen {
            name: crate::ast::Spanned {
                node: name,
                span: name_span,
            },
            params: Vec::new(),
            hints: Vec::new(),
        },
        span,
    })
}

fn syntax_error(
    e: ParseError<usize, Tok<'_>, ()>,
    stmt: &Span,
    newline_at: Option<usize>,
) -> Diagnostic {
    let expected_list = |expected: &[String]| -> String {
        let mut e: Vec<String> = expected.iter().map(|s| describe_expected(s)).collect();
        e.sort();
        e.dedup();
        match e.len() {
            0 => String::new(),
            1 => format!("expected {}", e[0]),
            _ if e.len() > 6 => "expected an operand or `;`".to_string(),
            _ => format!("expected one of {}", e.join(", ")),
        }
    };
    match e {
        ParseError::UnrecognizedToken {
            token: (lo, tok, hi),
            expected,
        } => {
            let mut d = Diagnostic::error(format!("unexpected {tok}"), lo..hi)
                .label(expected_list(&expected));
            if let Some(nl) = newline_at
                && nl < lo
            {
                d = d
                    .with_secondary(nl..nl, "the statement continues past this line end")
                    .help("is a `;` missing at the end of the previous line?");
            }
            d
        }
        ParseError::UnrecognizedEof { expected, .. } => {
            Diagnostic::error("incomplete statement", stmt.clone()).label(expected_list(&expected))
        }
        ParseError::InvalidToken { location } => {
            Diagnostic::error("invalid token", location..location + 1)
        }
        ParseError::ExtraToken {
            token: (lo, tok, hi),
        } => Diagnostic::error(format!("unexpected {tok}"), lo..hi).label("extra token"),
        ParseError::User { .. } => Diagnostic::error("syntax error", stmt.clone()),
    }
}

fn describe_expected(terminal: &str) -> String {
    let t = terminal.trim_matches('"');
    match t {
        "name" => "a name".into(),
        "register" => "a register".into(),
        "int" => "an integer".into(),
        "float" => "a number".into(),
        "string" => "a string".into(),
        other => format!("`{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_stops_at_the_instruction_limit() {
        let src = format!(".entry k {{\n{}}}\n", "nop;\n".repeat(12));
        let mut diags = Diagnostics::default();
        let parsed = parse_limited(&src, &mut diags, 10);
        assert!(parsed.stopped_early);
        assert!(parsed.stmts.is_empty(), "nothing is checked further");
        assert_eq!(diags.items.len(), 1);
        assert_eq!(
            diags.items[0].message,
            "the kernel has more than 10 instructions"
        );
        assert_eq!(&src[diags.items[0].span.clone()], "nop;");
        assert!(diags.items[0].span.start > src.find("nop;").unwrap() + 9 * 5);
    }
}
