//! Splits the token stream into statements and parses each with the lalrpop grammar,
//! so one syntax error never hides the next. Statements are produced one at a time
//! ([`Splitter`] for their tokens, [`Statements`] for their syntax trees), so a file
//! is never held as a tree in memory: the assembler reads the statements it keeps
//! and lowers the rest as they come.

use crate::ast::{Spanned, Stmt};
use crate::diag::{Diagnostic, Diagnostics};
use crate::grammar::StmtParser;
use crate::lexer::{Lexer, Span, Tok, lex_from};
use lalrpop_util::ParseError;
use spu_isa::format::{MAX_INPUT_BYTES, MAX_STRING};

/// Most tokens one statement may have (an expression of about half a million terms).
pub const MAX_STATEMENT_TOKENS: usize = 1 << 20;

/// The statements of a file, as trees (for tests and small tools; the assembler
/// streams them with [`Statements`]).
#[derive(Debug)]
pub struct Parsed<'s> {
    pub stmts: Vec<Spanned<Stmt<'s>>>,
    /// Parsing stopped before the end of the file (an unterminated comment), so
    /// checks of the file's end do not apply.
    pub stopped_early: bool,
}

/// Parses a whole file into statements, collecting all syntax errors.
pub fn parse_file<'s>(src: &'s str, diags: &mut Diagnostics) -> Parsed<'s> {
    let mut statements = Statements::new(src, 0, true, true);
    let stmts = statements.by_ref().collect();
    let stopped_early = statements.split.stopped_early;
    diags.append(statements.take_diagnostics());
    Parsed {
        stmts,
        stopped_early,
    }
}

/// The kind of a statement as its tokens show it, before parsing: what the
/// assembler must know of the whole file before it lowers the code.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<'s> {
    /// `NAME:`
    Label(Spanned<&'s str>),
    /// `[.visible] .entry NAME ... {` (also when its signature does not parse).
    EntryOpen(Spanned<&'s str>),
    /// `[.visible] .func ... NAME(...) {`: a device function's definition.
    FuncOpen(Spanned<&'s str>),
    /// `{` alone: a call sequence's block inside a kernel or function.
    BlockOpen,
    /// `}` closing a block.
    BlockClose,
    Param,
    Global,
    Bind,
    /// `[@%p] mnemonic operands;`
    Instr,
    Other,
}

/// A token and the bytes it covers.
pub type Token<'s> = (Tok<'s>, Span);

/// What a statement's tokens say it is; agrees with the parse ([`Stmt::Label`],
/// [`Stmt::EntryOpen`] and [`Stmt::BlockClose`] come from exactly these shapes).
pub fn shape<'s>(tokens: &[Token<'s>]) -> Shape<'s> {
    match tokens {
        [(Tok::Name(n), span), (Tok::Colon, _)] => {
            return Shape::Label(Spanned {
                node: n,
                span: span.clone(),
            });
        }
        [(Tok::RBrace, _)] => return Shape::BlockClose,
        [(Tok::LBrace, _)] => return Shape::BlockOpen,
        [(Tok::Param, _), ..] => return Shape::Param,
        [(Tok::Bind, _), ..] => return Shape::Bind,
        [(Tok::At | Tok::Name(_), _), ..] => return Shape::Instr,
        _ => {}
    }
    if let Some(name) = entry_name(tokens) {
        return Shape::EntryOpen(name);
    }
    if let Some(name) = func_name(tokens)
        && tokens.last().is_some_and(|t| t.0 == Tok::LBrace)
    {
        return Shape::FuncOpen(name);
    }
    let after_linkage = tokens
        .iter()
        .find(|(t, _)| !matches!(t, Tok::Visible | Tok::Weak | Tok::Extern));
    if matches!(after_linkage, Some((Tok::Global, _))) {
        return Shape::Global;
    }
    Shape::Other
}

/// The kernel name of an entry header: `.entry NAME ... {`.
fn entry_name<'s>(tokens: &[Token<'s>]) -> Option<Spanned<&'s str>> {
    let at = tokens.iter().position(|(t, _)| *t == Tok::Entry)?;
    let (Tok::Name(name), span) = tokens.get(at + 1)?.clone() else {
        return None;
    };
    (tokens.last()?.0 == Tok::LBrace).then_some(Spanned { node: name, span })
}

/// The name of a device function's header: `.func [(...)] NAME ...`.
pub fn func_name<'s>(tokens: &[Token<'s>]) -> Option<Spanned<&'s str>> {
    let mut at = tokens.iter().position(|(t, _)| *t == Tok::Func)? + 1;
    if tokens.get(at)?.0 == Tok::LParen {
        at += tokens[at..].iter().position(|(t, _)| *t == Tok::RParen)? + 1;
    }
    let (Tok::Name(name), span) = tokens.get(at)?.clone() else {
        return None;
    };
    Some(Spanned { node: name, span })
}

/// Cuts the token stream into statements, reporting what is wrong between them
/// (characters the language does not use, unknown directives, comments, names too
/// long for a binary, statements too long or not terminated). `.section` blocks,
/// `.pragma`s and unknown directives with their arguments (a `.func` with its body)
/// are skipped here.
#[derive(Debug)]
pub struct Splitter<'s> {
    src: &'s str,
    tokens: Lexer<'s>,
    /// Report this layer's problems (the assembler reads a file twice and reports
    /// them once).
    report: bool,
    diags: Diagnostics,
    current: Vec<Token<'s>>,
    /// The last statement handed out (its tokens; see [`Splitter::next_statement`]).
    done: Vec<Token<'s>>,
    newline_inside: Option<usize>,
    skipping: bool,
    /// Brace depth inside a skipped `.func` (its body is skipped whole).
    func_depth: Option<u32>,
    /// Inside a `.section` (nvcc's DWARF data with `-G` or `-lineinfo`): where the
    /// directive and its name are, and the brace depth of its block, skipped whole.
    section: Option<(Span, u32)>,
    /// An `.entry` block is open (a `{` alone then opens a call sequence).
    in_entry: bool,
    /// Brace depth inside the open kernel or function (call sequences nest).
    depth: u32,
    /// An unterminated comment ended the file early, so checks of the file's end do
    /// not apply.
    pub stopped_early: bool,
    finished: bool,
}

impl<'s> Splitter<'s> {
    /// Statements of `src` from byte `start` (the start of a statement).
    pub fn new(src: &'s str, start: usize, report: bool) -> Self {
        Splitter {
            src,
            tokens: lex_from(src, start),
            report,
            diags: Diagnostics::default(),
            current: Vec::new(),
            done: Vec::new(),
            newline_inside: None,
            skipping: false,
            func_depth: None,
            section: None,
            in_entry: false,
            depth: 0,
            stopped_early: false,
            finished: false,
        }
    }

    /// What was reported so far.
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        std::mem::take(&mut self.diags)
    }

    fn report(&mut self, d: Diagnostic) {
        if self.report {
            self.diags.push(d);
        }
    }

    /// The tokens of the next statement and where a line ended inside it.
    pub fn next_statement(&mut self) -> Option<(&[Token<'s>], Option<usize>)> {
        let newline_at = self.advance()?;
        Some((&self.done, newline_at))
    }

    /// Moves the next statement's tokens into `done`.
    fn advance(&mut self) -> Option<Option<usize>> {
        if self.finished {
            return None;
        }
        while let Some((tok, span)) = self.tokens.next() {
            if let Some((at, depth)) = &mut self.section {
                let mut consumed = true;
                match (tok, *depth) {
                    (Tok::LBrace, _) => *depth += 1,
                    (Tok::RBrace, 1) => self.section = None,
                    (Tok::RBrace, 2..) => *depth -= 1,
                    (_, 1..) | (Tok::Newline, 0) => {}
                    (Tok::Directive(_), 0) => *at = at.start..span.end,
                    _ => {
                        let at = at.clone();
                        self.report(
                            Diagnostic::error("`.section` without a `{ ... }` block", at)
                                .label("expected `{` after the section's name")
                                .help("nvcc writes `.section .debug_info { ... }`; the block's contents are ignored"),
                        );
                        self.section = None;
                        // This token starts the next statement.
                        consumed = false;
                    }
                }
                if consumed {
                    continue;
                }
            }
            if tok == Tok::LBrace && self.in_entry && self.current.is_empty() && !self.skipping {
                // A call sequence's scope: `{` alone is a statement.
                self.depth += 1;
                self.done.clear();
                self.done.push((tok, span));
                return Some(None);
            }
            if let Tok::Name(text) | Tok::Register(text) | Tok::Str(text) | Tok::Directive(text) =
                tok
                && text.len() > MAX_STRING as usize
            {
                self.report(
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
                    if self.current.first().is_some_and(|(t, _)| {
                        matches!(
                            t,
                            Tok::Version | Tok::Target | Tok::AddressSize | Tok::File | Tok::Loc
                        )
                    }) {
                        self.done.clear();
                        std::mem::swap(&mut self.done, &mut self.current);
                        return Some(None);
                    }
                    if !self.current.is_empty() && self.newline_inside.is_none() {
                        self.newline_inside = Some(span.start);
                    }
                    continue;
                }
                Tok::Error => {
                    let text = &self.src[span.clone()];
                    self.report(
                        Diagnostic::error(format!("unexpected character `{text}`"), span.clone())
                            .label("not part of the language"),
                    );
                    continue;
                }
                Tok::UnterminatedComment => {
                    self.report(
                        Diagnostic::error("unterminated block comment", span.clone())
                            .label(
                                "this comment is never closed, so the rest of the file is ignored",
                            )
                            .help("close it with `*/`"),
                    );
                    self.stopped_early = true;
                    self.finished = true;
                    return None;
                }
                Tok::UnterminatedStr => {
                    self.report(
                        Diagnostic::error("unterminated string", span.start..span.start + 1)
                            .label("this string is not closed before the end of its line")
                            .help("close it with `\"` on the same line"),
                    );
                    // The statement is cut short: the next line starts a new one.
                    self.current.clear();
                    self.newline_inside = None;
                    if self.func_depth.is_none() {
                        self.skipping = false;
                    }
                    continue;
                }
                Tok::StrayCommentEnd => {
                    self.report(
                        Diagnostic::error("`*/` closes no comment", span.clone())
                            .label("no `/*` is open here")
                            .help("remove it, or start the comment with `/*`"),
                    );
                    continue;
                }
                // `.pragma "nounroll";` (and nvcc's other hints): accepted and ignored,
                // like the loop hints they are.
                Tok::Directive(".pragma") if self.current.is_empty() && !self.skipping => {
                    self.skipping = true;
                    self.func_depth = None;
                    continue;
                }
                Tok::Directive(".section") if self.current.is_empty() && !self.skipping => {
                    self.section = Some((span, 0));
                    continue;
                }
                Tok::Directive(name) => {
                    self.report(unknown_directive(name, span.clone()));
                    // Whatever came before is cut short; the directive's own arguments
                    // are skipped, and a device function's whole body with them.
                    self.current.clear();
                    self.newline_inside = None;
                    self.skipping = true;
                    self.func_depth = (name == ".func").then_some(0);
                    continue;
                }
                Tok::LBrace if self.skipping && self.func_depth.is_some() => {
                    self.func_depth = self.func_depth.map(|d| d + 1);
                    continue;
                }
                Tok::RBrace if self.skipping && self.func_depth.is_some() => {
                    self.func_depth = self.func_depth.map(|d| d.saturating_sub(1));
                    if self.func_depth == Some(0) {
                        self.skipping = false;
                        self.func_depth = None;
                    }
                    continue;
                }
                Tok::Semi if self.skipping && self.func_depth.is_none_or(|d| d == 0) => {
                    self.skipping = false;
                    self.func_depth = None;
                    continue;
                }
                _ if self.skipping => continue,
                _ => {}
            }
            // `{`/`}` delimit blocks only where a block can open or close; inside an
            // instruction they enclose a vector operand.
            let ends = match tok {
                Tok::Semi | Tok::Iu => true,
                // A module variable's initialiser list (`.visible .global ... = {`)
                // opens no block.
                Tok::LBrace => {
                    self.current.first().is_none_or(|(t, _)| {
                        matches!(
                            t,
                            Tok::Entry | Tok::Func | Tok::Visible | Tok::Weak | Tok::Extern
                        )
                    }) && (self
                        .current
                        .iter()
                        .any(|(t, _)| matches!(t, Tok::Entry | Tok::Func))
                        || !self.current.iter().any(|(t, _)| *t == Tok::Global))
                }
                Tok::RBrace => self.current.is_empty(),
                Tok::Colon => self.current.len() == 1,
                _ => false,
            };
            if ends && tok == Tok::LBrace {
                if self
                    .current
                    .iter()
                    .any(|(t, _)| matches!(t, Tok::Entry | Tok::Func))
                {
                    self.in_entry = true;
                    self.depth = 1;
                }
            } else if ends && tok == Tok::RBrace {
                self.depth = self.depth.saturating_sub(1);
                self.in_entry = self.depth > 0;
            }
            self.current.push((tok, span));
            if ends {
                self.done.clear();
                std::mem::swap(&mut self.done, &mut self.current);
                return Some(self.newline_inside.take());
            }
            if self.current.len() >= MAX_STATEMENT_TOKENS {
                let at = self.current[0].1.clone();
                self.report(
                    Diagnostic::error(
                        format!("this statement has more than {MAX_STATEMENT_TOKENS} tokens"),
                        at.start..at.end,
                    )
                    .label("the statement starts here")
                    .help("split it, or write a long expression as fewer terms; the rest of it up to `;` is skipped"),
                );
                self.current.clear();
                self.newline_inside = None;
                self.skipping = true;
                self.func_depth = None;
            }
        }
        self.finished = true;
        if let Some((at, _)) = self.section.take() {
            self.report(
                Diagnostic::error("`.section` is never closed", at)
                    .label("its `{ ... }` block does not end before the end of the file")
                    .help("close the block with `}`"),
            );
        }
        if !self.current.is_empty() {
            let span = self.current[0].1.start..self.current.last().map_or(0, |t| t.1.end);
            self.report(
                Diagnostic::error("statement is not terminated", span)
                    .label("expected `;` after this")
                    .help("end every instruction and directive with `;`"),
            );
            self.current.clear();
        }
        None
    }
}

/// Parsed statements one at a time (lone `;`s left out).
pub struct Statements<'s> {
    pub split: Splitter<'s>,
    parser: StmtParser,
    /// Report syntax errors.
    syntax: bool,
    diags: Diagnostics,
}

impl std::fmt::Debug for Statements<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Statements")
            .field("split", &self.split)
            .field("syntax", &self.syntax)
            .finish_non_exhaustive()
    }
}

impl<'s> Statements<'s> {
    /// Statements of `src` from byte `start`; `report_split` and `syntax` choose which
    /// problems are reported (see [`Splitter`]).
    pub fn new(src: &'s str, start: usize, report_split: bool, syntax: bool) -> Self {
        Statements {
            split: Splitter::new(src, start, report_split),
            parser: StmtParser::new(),
            syntax,
            diags: Diagnostics::default(),
        }
    }

    /// Parses the statements that start before byte `end`, for their syntax errors.
    pub fn parse_until(&mut self, end: usize) {
        while let Some((tokens, newline_at)) = self.split.next_statement() {
            if tokens[0].1.start >= end {
                break;
            }
            if self.syntax {
                let _ = parse_stmt(&self.parser, tokens, newline_at, &mut self.diags);
            }
        }
    }

    /// What was reported so far (by both layers).
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        let mut d = self.split.take_diagnostics();
        d.append(std::mem::take(&mut self.diags));
        d
    }
}

impl<'s> Iterator for Statements<'s> {
    type Item = Spanned<Stmt<'s>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (tokens, newline_at) = self.split.next_statement()?;
            if let [(Tok::Semi, _)] = tokens {
                continue;
            }
            let mut quiet = Diagnostics::default();
            let diags = if self.syntax {
                &mut self.diags
            } else {
                &mut quiet
            };
            match parse_stmt(&self.parser, tokens, newline_at, diags) {
                Some(Spanned {
                    node: Stmt::Empty, ..
                })
                | None => {}
                Some(s) => return Some(s),
            }
        }
    }
}

/// The statement that starts at byte `start` of `src` (recorded by an earlier
/// pass), parsed without reporting anything.
pub fn statement_at(src: &str, start: usize) -> Option<Spanned<Stmt<'_>>> {
    let mut split = Splitter::new(src, start, false);
    let (tokens, _) = split.next_statement()?;
    parse_stmt(
        &StmtParser::new(),
        tokens,
        None,
        &mut Diagnostics::default(),
    )
}

/// A kernel with more statements than a binary holds instructions.
pub(crate) fn too_many_instructions(span: Span, max: usize) -> Diagnostic {
    Diagnostic::error(format!("the kernel has more than {max} instructions"), span)
        .label("this instruction is past the limit")
        .help(format!(
            "a binary holds at most {max} instructions (the tools read files of at most {} MiB); split the work into several kernels",
            MAX_INPUT_BYTES >> 20
        ))
}

fn unknown_directive(name: &str, span: Span) -> Diagnostic {
    if name == ".callprototype" {
        return Diagnostic::error(
            "a call prototype (`.callprototype`) is not supported yet",
            span,
        )
        .label("it describes a call through a register")
        .help("call the function by its name (`call (ret), f, (a);`); in CUDA C, call it directly instead of through a pointer");
    }
    if name == ".const" {
        return Diagnostic::error("constant memory (`.const`) is not supported", span)
            .label("no constant memory space")
            .help("pass the values in a `.global` buffer, or as kernel parameters");
    }
    const KNOWN: [&str; 13] = [
        ".entry", ".reg", ".param", ".global", ".shared", ".local", ".launch", ".assert", ".bind",
        ".dma", ".iu", ".file", ".loc",
    ];
    let d = Diagnostic::error(format!("unknown directive `{name}`"), span)
        .label("not a directive of the language");
    match spu_io::suggest::closest(name, KNOWN) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d.help(format!("directives are {}", KNOWN.join(", "))),
    }
}

fn parse_stmt<'s>(
    parser: &StmtParser,
    tokens: &[Token<'s>],
    newline_at: Option<usize>,
    diags: &mut Diagnostics,
) -> Option<Spanned<Stmt<'s>>> {
    let span = tokens[0].1.start..tokens.last().map_or(0, |t| t.1.end);
    if let Some(call) = ptx_call(tokens, &span, diags) {
        return call;
    }
    if let Some(d) = texture_instr(tokens) {
        diags.push(d);
        return None;
    }
    let input = tokens
        .iter()
        .map(|(t, s)| Ok::<_, ()>((s.start, *t, s.end)));
    match parser.parse(input) {
        Ok(stmt) => Some(Spanned { node: stmt, span }),
        Err(e) => {
            diags.push(syntax_error(e, &span, newline_at));
            entry_recovery(tokens, span.clone()).or_else(|| func_recovery(tokens, span))
        }
    }
}

/// A texture or surface instruction (`tex`, `tld4`, `txq`, `suld`, `sust`, `sured`,
/// `suq`): refused by name, before its operands (`[t, {x, y}]`) fail to parse.
fn texture_instr(tokens: &[Token<'_>]) -> Option<Diagnostic> {
    let first = match tokens {
        [
            (Tok::At, _),
            (Tok::Bang, _),
            (Tok::Register(_), _),
            rest @ ..,
        ]
        | [(Tok::At, _), (Tok::Register(_), _), rest @ ..]
        | rest => rest.first()?,
    };
    let (Tok::Name(m), span) = first else {
        return None;
    };
    let base = m.split('.').next().unwrap_or(m);
    if !["tex", "tld4", "txq", "suld", "sust", "sured", "suq"].contains(&base) {
        return None;
    }
    Some(
        Diagnostic::error(
            format!("texture and surface instructions (`{base}`) are not supported"),
            span.clone(),
        )
        .label("the SPU has no texture units")
        .help("read the array with `ld.global` instead (in CUDA C, index the array instead of using a texture)"),
    )
}

/// PTX's call with parameter lists, `[@p] call[.uni] [(ret),] f[, (args)][, proto];`,
/// parsed by hand (the grammar's parenthesised expressions would take `(a)` for a
/// value); `None` when the statement is no such call, `Some(None)` after an error.
#[allow(clippy::option_option)]
fn ptx_call<'s>(
    tokens: &[Token<'s>],
    span: &Span,
    diags: &mut Diagnostics,
) -> Option<Option<Spanned<Stmt<'s>>>> {
    use crate::ast::{CallArg, Guard};
    let (guard, rest) = match tokens {
        [
            (Tok::At, _),
            (Tok::Bang, _),
            (Tok::Register(p), ps),
            rest @ ..,
        ] => (
            Some(Guard {
                negated: true,
                pred: Spanned {
                    node: *p,
                    span: ps.clone(),
                },
            }),
            rest,
        ),
        [(Tok::At, _), (Tok::Register(p), ps), rest @ ..] => (
            Some(Guard {
                negated: false,
                pred: Spanned {
                    node: *p,
                    span: ps.clone(),
                },
            }),
            rest,
        ),
        _ => (None, tokens),
    };
    let [(Tok::Name(m), mspan), rest @ ..] = rest else {
        return None;
    };
    if !(*m == "call" || m.starts_with("call.")) || !rest.iter().any(|t| t.0 == Tok::LParen) {
        return None;
    }
    let mnemonic = Spanned {
        node: *m,
        span: mspan.clone(),
    };
    let fail = |at: &Span, what: &str, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::error(format!("malformed call: {what}"), at.clone())
                .label("PTX writes `call (ret), f, (a, b);`, `call f, (a, b);` or `call f;`"),
        );
        Some(None)
    };
    // Splits `rest` into the operands between top-level commas.
    let mut groups: Vec<&[Token<'s>]> = Vec::new();
    let (mut depth, mut from) = (0u32, 0usize);
    for (i, (t, _)) in rest.iter().enumerate() {
        match t {
            Tok::LParen => depth += 1,
            Tok::RParen => depth = depth.saturating_sub(1),
            Tok::Comma | Tok::Semi if depth == 0 => {
                groups.push(&rest[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if rest.last().is_none_or(|t| t.0 != Tok::Semi) || depth != 0 {
        return fail(span, "unbalanced parentheses or no `;`", diags);
    }
    let list = |g: &[Token<'s>]| -> Option<Vec<Spanned<CallArg<'s>>>> {
        let [(Tok::LParen, _), inner @ .., (Tok::RParen, _)] = g else {
            return None;
        };
        let mut out = Vec::new();
        for (i, (t, s)) in inner.iter().enumerate() {
            let want_comma = i % 2 == 1;
            match (t, want_comma) {
                (Tok::Comma, true) => {}
                (Tok::Name(n), false) => out.push(Spanned {
                    node: CallArg::Param(n),
                    span: s.clone(),
                }),
                (Tok::Register(r), false) => out.push(Spanned {
                    node: CallArg::Register(r),
                    span: s.clone(),
                }),
                _ => return None,
            }
        }
        (inner.is_empty() || inner.len() % 2 == 1).then_some(out)
    };
    let mut it = groups.into_iter().peekable();
    let mut rets = Vec::new();
    if let Some(g) = it.peek()
        && g.first().is_some_and(|t| t.0 == Tok::LParen)
    {
        let at = g.first().map_or(span.clone(), |t| t.1.clone());
        match list(g) {
            Some(r) => rets = r,
            None => {
                return fail(
                    &at,
                    "the return list must be `.param` names or registers",
                    diags,
                );
            }
        }
        it.next();
    }
    let func = match it.next() {
        Some([(Tok::Name(f), fs)]) => Spanned {
            node: *f,
            span: fs.clone(),
        },
        // A function pointer: PTX's indirect call.
        Some([(Tok::Register(r), rs), ..]) => {
            diags.push(
                Diagnostic::error(
                    format!("a call through a register (`%{r}`) is not supported yet"),
                    rs.clone(),
                )
                .label("an indirect call, as a function pointer or a virtual function compiles")
                .help("call the function by its name (`call (ret), f, (a);`); in CUDA C, call it directly instead of through a pointer"),
            );
            return Some(None);
        }
        Some(g) => {
            let at = g.first().map_or(span.clone(), |t| t.1.clone());
            return fail(&at, "expected the called function's name", diags);
        }
        None => return fail(span, "expected the called function's name", diags),
    };
    let mut args = Vec::new();
    if let Some(g) = it.peek()
        && g.first().is_some_and(|t| t.0 == Tok::LParen)
    {
        let at = g.first().map_or(span.clone(), |t| t.1.clone());
        match list(g) {
            Some(a) => args = a,
            None => return fail(&at, "arguments must be `.param` names or registers", diags),
        }
        it.next();
    }
    let extra = it.next().map(|g| {
        let a = g.first().map_or(span.start, |t| t.1.start);
        a..g.last().map_or(a, |t| t.1.end)
    });
    if let Some(g) = it.next() {
        let at = g.first().map_or(span.clone(), |t| t.1.clone());
        return fail(&at, "too many operands", diags);
    }
    Some(Some(Spanned {
        node: Stmt::PtxCall {
            guard,
            mnemonic,
            rets,
            func,
            args,
            extra,
        },
        span: span.clone(),
    }))
}

/// A device function's header that does not parse still opens its block.
fn func_recovery<'s>(tokens: &[Token<'s>], span: Span) -> Option<Spanned<Stmt<'s>>> {
    let name = func_name(tokens)?;
    (tokens.last()?.0 == Tok::LBrace).then(|| Spanned {
        node: Stmt::FuncOpen {
            name,
            rets: Vec::new(),
            params: Vec::new(),
            body: true,
        },
        span,
    })
}

/// An entry header that does not parse (a parameter form the language lacks) still
/// opens its block, so its body is not reported line by line as outside a kernel.
fn entry_recovery<'s>(tokens: &[Token<'s>], span: Span) -> Option<Spanned<Stmt<'s>>> {
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
            // Only an `.assert`'s condition can go on with a comparison.
            _ if expected.iter().any(|s| s == "\"==\"") => {
                "expected a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)".to_string()
            }
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
    fn statements_come_one_at_a_time_without_empty_ones() {
        let src = ".entry k {\n;;\nnop;\n}\n";
        let kinds: Vec<String> = Statements::new(src, 0, true, true)
            .map(|s| format!("{:?}", s.node).chars().take(8).collect())
            .collect();
        assert_eq!(kinds, ["EntryOpe", "Instr { ", "BlockClo"]);
        let at = src.find("nop").unwrap();
        assert!(matches!(
            statement_at(src, at).map(|s| s.node),
            Some(Stmt::Instr { .. })
        ));
    }

    #[test]
    fn a_statement_past_the_token_limit_is_one_error() {
        let src = format!(
            ".param .u32 N = {};\n.entry k {{\n    exit;\n}}\n",
            vec!["1"; MAX_STATEMENT_TOKENS].join("+")
        );
        let mut diags = Diagnostics::default();
        let parsed = parse_file(&src, &mut diags);
        assert_eq!(diags.error_count(), 1, "{diags:?}");
        assert!(diags.items[0].message.contains("tokens"));
        assert_eq!(parsed.stmts.len(), 3, "the statements after it still parse");
    }
}
