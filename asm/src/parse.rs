//! Splits the token stream into statements and parses each with the lalrpop grammar,
//! so one syntax error never hides the next.

use crate::ast::{Spanned, Stmt};
use crate::diag::{Diagnostic, Diagnostics};
use crate::grammar::StmtParser;
use crate::lexer::{Span, Tok, lex};
use lalrpop_util::ParseError;

/// Parses a whole file into statements, collecting syntax errors.
pub fn parse_file<'s>(src: &'s str, diags: &mut Diagnostics) -> Vec<Spanned<Stmt<'s>>> {
    let tokens = lex(src);
    let parser = StmtParser::new();
    let mut stmts = Vec::new();
    let mut current: Vec<(Tok<'s>, Span)> = Vec::new();
    let mut newline_inside = None;
    let mut skipping = false;
    for (tok, span) in tokens {
        match tok {
            Tok::Newline => {
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
                        .label("this comment is never closed")
                        .help("close it with `*/`"),
                );
                break;
            }
            Tok::Directive(name) => {
                diags.push(unknown_directive(name, span.clone()));
                // Whatever came before is cut short; the directive's own arguments are skipped.
                current.clear();
                newline_inside = None;
                skipping = true;
                continue;
            }
            Tok::Semi if skipping => {
                skipping = false;
                continue;
            }
            _ if skipping => continue,
            _ => {}
        }
        // `{`/`}` delimit blocks only where a block can open or close; inside an
        // instruction they enclose a vector operand.
        let ends = match tok {
            Tok::Semi | Tok::Iu => true,
            Tok::LBrace => current.first().is_none_or(|(t, _)| *t == Tok::Entry),
            Tok::RBrace => current.is_empty(),
            Tok::Colon => current.len() == 1,
            _ => false,
        };
        current.push((tok, span));
        if ends {
            let stmt = std::mem::take(&mut current);
            if let Some(s) = parse_stmt(&parser, &stmt, newline_inside.take(), diags) {
                stmts.push(s);
            }
        }
    }
    if !current.is_empty() {
        let span = current[0].1.start..current.last().map_or(0, |t| t.1.end);
        diags.push(
            Diagnostic::error("statement is not terminated", span)
                .label("expected `;` after this")
                .help("end every instruction and directive with `;`"),
        );
    }
    stmts
}

fn unknown_directive(name: &str, span: Span) -> Diagnostic {
    const KNOWN: [&str; 10] = [
        ".entry", ".reg", ".param", ".global", ".shared", ".launch", ".dma", ".iu", ".file", ".loc",
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
            None
        }
    }
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
