//! The C preprocessor subset PTX allows, for `.ptx` and `.spu` sources alike:
//! `#define` (object-like and with arguments), `#undef`, `#include "file"`,
//! `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif` and `#error`. The output is one
//! text plus a [`SourceMap`] that maps every output byte back to the file and offset
//! it came from; text a macro produced maps to the macro's invocation, so
//! diagnostics and the line table point into the right file and line.
//!
//! Limits keep hostile inputs bounded: include depth, macro expansion depth and the
//! size of the output.

use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Span;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Deepest `#include` nesting.
const MAX_INCLUDE_DEPTH: usize = 32;
/// Deepest nesting of macro expansions.
const MAX_EXPANSION_DEPTH: usize = 64;
/// Largest preprocessed text.
const MAX_OUTPUT_BYTES: usize = 64 << 20;

/// One source file taking part in a preprocessed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The name diagnostics and the line table use.
    pub name: String,
    pub text: String,
}

/// Where a run of output bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    out: Span,
    file: usize,
    /// Source offset of the first byte (direct text), or the invocation range
    /// (macro output).
    src: Span,
    /// The macro whose expansion produced this text, if any.
    expansion: Option<usize>,
}

/// A macro definition, for notes on diagnostics inside its expansions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroSite {
    pub name: String,
    pub file: usize,
    pub span: Span,
}

/// Maps offsets of the preprocessed text back to their files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
    segments: Vec<Segment>,
    pub macros: Vec<MacroSite>,
}

/// A resolved position: file index and byte range in that file, plus the macro it
/// was expanded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: usize,
    pub span: Span,
    pub expansion: Option<usize>,
}

impl SourceMap {
    /// The origin of an output range (its start decides the file).
    pub fn origin(&self, span: &Span) -> Origin {
        let Some(seg) = self.segment(span.start) else {
            let end = self.files.first().map_or(0, |f| f.text.len());
            return Origin {
                file: 0,
                span: end..end,
                expansion: None,
            };
        };
        match seg.expansion {
            Some(m) => Origin {
                file: seg.file,
                span: seg.src.clone(),
                expansion: Some(m),
            },
            None => {
                let at = span.start.clamp(seg.out.start, seg.out.end);
                let start = seg.src.start + (at - seg.out.start);
                let end = span.end.clamp(at, seg.out.end);
                Origin {
                    file: seg.file,
                    span: start..start + (end - at),
                    expansion: None,
                }
            }
        }
    }

    fn segment(&self, at: usize) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.out.end <= at);
        self.segments
            .get(i)
            .filter(|s| s.out.start <= at)
            .or_else(|| self.segments.get(i.saturating_sub(1)))
    }

    /// 1-based line and column of an offset in file `file`.
    pub fn line_col(&self, file: usize, offset: usize) -> (u32, u32) {
        let text = self.files.get(file).map_or("", |f| f.text.as_str());
        let offset = offset.min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        (line as u32, col as u32)
    }
}

/// A `#define`.
#[derive(Debug, Clone)]
struct Macro {
    params: Option<Vec<String>>,
    body: String,
    site: usize,
}

/// One level of `#if` nesting.
#[derive(Debug, Clone)]
struct Cond {
    /// This branch is being emitted.
    active: bool,
    /// Some branch of this `#if` was taken.
    taken: bool,
    /// The enclosing text is emitted.
    outer: bool,
    else_seen: bool,
    file: usize,
    span: Span,
}

struct Pre<'a> {
    map: SourceMap,
    out: String,
    macros: HashMap<String, Macro>,
    diags: Diagnostics,
    read: &'a mut dyn FnMut(&Path) -> Result<String, String>,
    stack: Vec<PathBuf>,
}

/// Preprocesses `src` (named `path`); `read` loads included files. Errors are
/// reported in file coordinates; the text is usable even when there are some.
pub fn preprocess(
    path: &str,
    src: &str,
    read: &mut dyn FnMut(&Path) -> Result<String, String>,
) -> (String, SourceMap, Diagnostics) {
    let mut pre = Pre {
        map: SourceMap::default(),
        out: String::with_capacity(src.len()),
        macros: HashMap::new(),
        diags: Diagnostics::default(),
        read,
        stack: vec![PathBuf::from(path)],
    };
    pre.map.files.push(SourceFile {
        name: path.to_string(),
        text: src.to_string(),
    });
    pre.file(0);
    (pre.out, pre.map, pre.diags)
}

/// True for bytes that continue an identifier.
fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl Pre<'_> {
    fn error(&mut self, file: usize, span: Span, d: Diagnostic) {
        let mut d = d;
        d.span = span;
        d.file = Some(file as u32);
        for s in &mut d.secondary {
            s.file = Some(file as u32);
        }
        self.diags.push(d);
    }

    fn emit_direct(&mut self, file: usize, src_start: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        let start = self.out.len();
        self.out.push_str(text);
        self.map.segments.push(Segment {
            out: start..self.out.len(),
            file,
            src: src_start..src_start + text.len(),
            expansion: None,
        });
    }

    fn emit_expansion(&mut self, file: usize, invocation: Span, macro_site: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        let start = self.out.len();
        self.out.push_str(text);
        self.map.segments.push(Segment {
            out: start..self.out.len(),
            file,
            src: invocation,
            expansion: Some(macro_site),
        });
    }

    /// Processes file `file` (already in the map).
    fn file(&mut self, file: usize) {
        let text = self.map.files[file].text.clone();
        let mut conds: Vec<Cond> = Vec::new();
        let mut in_comment = false;
        let mut pos = 0;
        while pos < text.len() {
            // A logical line: physical lines joined by a trailing backslash.
            let mut end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            let trimmed = text[pos..end].trim_start();
            let is_directive = !in_comment && trimmed.starts_with('#');
            if is_directive {
                while end < text.len() && text[pos..end].trim_end_matches('\r').ends_with('\\') {
                    end = text[end + 1..]
                        .find('\n')
                        .map_or(text.len(), |i| end + 1 + i);
                }
            }
            let line = &text[pos..end];
            let active = conds.last().is_none_or(|c| c.active);
            if is_directive {
                let hash = pos + (line.len() - trimmed.len());
                self.directive(file, hash, &text[hash..end], &mut conds);
            } else if active {
                in_comment = self.line(file, pos, line, in_comment);
            } else {
                in_comment = skip_comments(line, in_comment);
            }
            if end < text.len() {
                self.emit_direct(file, end, "\n");
            }
            pos = end + 1;
            if self.out.len() > MAX_OUTPUT_BYTES {
                self.error(
                    file,
                    pos.min(text.len())..pos.min(text.len()),
                    Diagnostic::error("the preprocessed text is too large", 0..0)
                        .label("macro expansion or includes grow past 64 MiB")
                        .help("look for a macro that expands into itself several times"),
                );
                return;
            }
        }
        for c in conds {
            self.error(
                c.file,
                c.span,
                Diagnostic::error("`#if` without `#endif`", 0..0)
                    .label("this conditional is never closed")
                    .help("add `#endif`"),
            );
        }
    }

    /// Emits one active source line, expanding macros outside comments and strings.
    /// Returns whether a block comment is still open at its end.
    fn line(&mut self, file: usize, base: usize, line: &str, mut in_comment: bool) -> bool {
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            if in_comment {
                match line[i..].find("*/") {
                    Some(k) => {
                        i += k + 2;
                        in_comment = false;
                    }
                    None => i = bytes.len(),
                }
                continue;
            }
            match bytes[i] {
                b'/' if bytes.get(i + 1) == Some(&b'/') => break,
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    in_comment = true;
                    i += 2;
                }
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += 1;
                    }
                    i += 1;
                }
                b if ident_byte(b) && !b.is_ascii_digit() => {
                    let start = i;
                    while i < bytes.len() && ident_byte(bytes[i]) {
                        i += 1;
                    }
                    // `.global`, `%r1`, `ld.global`: names after `.` or `%` are not macros.
                    let prev = start.checked_sub(1).map(|p| bytes[p]);
                    if matches!(prev, Some(b'.' | b'%')) {
                        continue;
                    }
                    let name = &line[start..i];
                    if !self.macros.contains_key(name) {
                        continue;
                    }
                    let Some((text, end)) =
                        self.invoke(file, base, line, start, i, &mut Vec::new(), 0)
                    else {
                        continue;
                    };
                    self.emit_direct(file, base + copied, &line[copied..start]);
                    let site = self.macros[name].site;
                    self.emit_expansion(file, base + start..base + end, site, &text);
                    i = end;
                    copied = end;
                }
                b if b.is_ascii_digit() => {
                    while i < bytes.len() && (ident_byte(bytes[i]) || bytes[i] == b'.') {
                        i += 1;
                    }
                }
                _ => i += 1,
            }
        }
        self.emit_direct(file, base + copied, &line[copied..]);
        in_comment
    }

    /// Expands the macro named by `line[start..name_end]`; returns the replacement
    /// text and where the invocation ends, or `None` for a function-like macro
    /// written without arguments (left as it is, like C).
    #[allow(clippy::too_many_arguments)]
    fn invoke(
        &mut self,
        file: usize,
        base: usize,
        line: &str,
        start: usize,
        name_end: usize,
        hidden: &mut Vec<String>,
        depth: usize,
    ) -> Option<(String, usize)> {
        let name = line[start..name_end].to_string();
        let m = self.macros.get(&name)?.clone();
        let (args, end) = match &m.params {
            None => (Vec::new(), name_end),
            Some(params) => {
                let after = line[name_end..].trim_start();
                if !after.starts_with('(') {
                    return None;
                }
                let open = line.len() - after.len();
                match split_args(line, open) {
                    Some((args, close)) => {
                        let args =
                            if params.is_empty() && args.len() == 1 && args[0].trim().is_empty() {
                                Vec::new()
                            } else {
                                args
                            };
                        if args.len() != params.len() {
                            self.error(
                                file,
                                base + start..base + close,
                                Diagnostic::error(
                                    format!(
                                        "macro `{name}` takes {} argument{}, found {}",
                                        params.len(),
                                        if params.len() == 1 { "" } else { "s" },
                                        args.len()
                                    ),
                                    0..0,
                                )
                                .label("in this invocation"),
                            );
                            return Some((String::new(), close));
                        }
                        (args, close)
                    }
                    None => {
                        self.error(
                            file,
                            base + start..base + line.len(),
                            Diagnostic::error(
                                format!("unterminated invocation of macro `{name}`"),
                                0..0,
                            )
                            .label("the argument list is not closed on this line")
                            .help("close it with `)`"),
                        );
                        return Some((String::new(), line.len()));
                    }
                }
            }
        };
        if depth >= MAX_EXPANSION_DEPTH {
            self.error(
                file,
                base + start..base + end,
                Diagnostic::error("macro expansion nests too deeply", 0..0)
                    .label(format!("expanding `{name}`"))
                    .help("a macro probably expands into a chain of other macros"),
            );
            return Some((String::new(), end));
        }
        let mut body = match &m.params {
            None => m.body.clone(),
            Some(params) => substitute(&m.body, params, &args),
        };
        hidden.push(name);
        body = self.rescan(file, base, start, end, &body, hidden, depth + 1);
        hidden.pop();
        Some((body, end))
    }

    /// Expands macros inside a replacement text, except the ones being expanded.
    #[allow(clippy::too_many_arguments)]
    fn rescan(
        &mut self,
        file: usize,
        base: usize,
        start: usize,
        end: usize,
        text: &str,
        hidden: &mut Vec<String>,
        depth: usize,
    ) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if ident_byte(b) && !b.is_ascii_digit() {
                let s = i;
                while i < bytes.len() && ident_byte(bytes[i]) {
                    i += 1;
                }
                let name = &text[s..i];
                let prev = s.checked_sub(1).map(|p| bytes[p]);
                if !matches!(prev, Some(b'.' | b'%'))
                    && self.macros.contains_key(name)
                    && !hidden.iter().any(|h| h == name)
                {
                    // Errors inside rescanned text are reported at the outer invocation.
                    let inner =
                        self.invoke_in(text, s, i, hidden, depth, file, base + start..base + end);
                    if let Some((expanded, stop)) = inner {
                        out.push_str(&expanded);
                        i = stop;
                        continue;
                    }
                }
                out.push_str(name);
            } else if b.is_ascii_digit() {
                let s = i;
                while i < bytes.len() && (ident_byte(bytes[i]) || bytes[i] == b'.') {
                    i += 1;
                }
                out.push_str(&text[s..i]);
            } else {
                let ch = text[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
            if out.len() > MAX_OUTPUT_BYTES {
                return out;
            }
        }
        out
    }

    /// Like [`Pre::invoke`] for an invocation inside replacement text, reporting at
    /// `at`.
    #[allow(clippy::too_many_arguments)]
    fn invoke_in(
        &mut self,
        text: &str,
        start: usize,
        name_end: usize,
        hidden: &mut Vec<String>,
        depth: usize,
        file: usize,
        at: Span,
    ) -> Option<(String, usize)> {
        let before = self.diags.items.len();
        let result = self.invoke(file, 0, text, start, name_end, hidden, depth);
        for d in &mut self.diags.items[before..] {
            d.span = at.clone();
        }
        result
    }

    fn directive(&mut self, file: usize, at: usize, text: &str, conds: &mut Vec<Cond>) {
        // Join continued lines; offsets stay approximate past a continuation.
        let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
        let body = joined[1..].trim_start();
        let word_len = body.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
        let word = &body[..word_len];
        let rest = body[word_len..].trim();
        let word_at = at + 1 + (joined[1..].len() - body.len());
        let word_span = word_at..word_at + word_len.max(1);
        let full = at..at + text.trim_end().len();
        let rest_at =
            word_span.end + (body[word_len..].len() - body[word_len..].trim_start().len());
        let active = conds.last().is_none_or(|c| c.active);
        match word {
            "if" | "ifdef" | "ifndef" => {
                let value = if active {
                    match word {
                        "if" => self.condition(file, rest_at, rest),
                        "ifdef" => self.macros.contains_key(first_word(rest)),
                        _ => !self.macros.contains_key(first_word(rest)),
                    }
                } else {
                    false
                };
                if active && word != "if" && first_word(rest).is_empty() {
                    self.error(
                        file,
                        full.clone(),
                        Diagnostic::error(format!("`#{word}` needs a macro name"), 0..0)
                            .label("no name here"),
                    );
                }
                conds.push(Cond {
                    active: active && value,
                    taken: value,
                    outer: active,
                    else_seen: false,
                    file,
                    span: full,
                });
            }
            "elif" | "else" | "endif" => {
                let Some(c) = conds.last_mut() else {
                    self.error(
                        file,
                        full,
                        Diagnostic::error(format!("`#{word}` without `#if`"), 0..0)
                            .label("no conditional is open here"),
                    );
                    return;
                };
                match word {
                    "endif" => {
                        conds.pop();
                    }
                    _ if c.else_seen => {
                        let first = c.span.clone();
                        let d = Diagnostic::error(format!("`#{word}` after `#else`"), 0..0)
                            .label("the conditional already has its `#else`")
                            .with_secondary(first, "conditional opened here");
                        self.error(file, full, d);
                    }
                    "else" => {
                        c.else_seen = true;
                        c.active = c.outer && !c.taken;
                        c.taken = true;
                    }
                    _ => {
                        let (outer, taken) = (c.outer, c.taken);
                        let value = outer && !taken && self.condition(file, rest_at, rest);
                        if let Some(c) = conds.last_mut() {
                            c.active = value;
                            c.taken |= value;
                        }
                    }
                }
            }
            _ if !active => {}
            "define" => self.define(file, word_span.end, rest, &joined, at),
            "undef" => {
                let name = first_word(rest);
                if name.is_empty() {
                    self.error(
                        file,
                        full,
                        Diagnostic::error("`#undef` needs a macro name", 0..0)
                            .label("no name here"),
                    );
                } else {
                    self.macros.remove(name);
                }
            }
            "include" => self.include(file, full, rest),
            "error" => self.error(
                file,
                full,
                Diagnostic::error(format!("#error {rest}"), 0..0).label("reached here"),
            ),
            "pragma" | "line" => {}
            _ => self.error(
                file,
                word_span,
                Diagnostic::error(
                    format!("unknown preprocessor directive `#{word}`"),
                    0..0,
                )
                .label("not a directive")
                .help("directives are #define, #undef, #include, #if, #ifdef, #ifndef, #elif, #else, #endif and #error"),
            ),
        }
    }

    fn define(&mut self, file: usize, name_at: usize, rest: &str, _line: &str, _at: usize) {
        let name_len = rest.bytes().take_while(|b| ident_byte(*b)).count();
        let name = &rest[..name_len];
        let rest_at = name_at + (rest.len() - rest.trim_start().len());
        let span = rest_at..rest_at + name_len.max(1);
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            self.error(
                file,
                span,
                Diagnostic::error("`#define` needs a macro name", 0..0)
                    .label("expected a name")
                    .help("for example: `#define TILE 32`"),
            );
            return;
        }
        let after = &rest[name_len..];
        let (params, body) = if let Some(list) = after.strip_prefix('(') {
            let Some(close) = list.find(')') else {
                self.error(
                    file,
                    span,
                    Diagnostic::error(
                        format!("macro `{name}`: parameter list is not closed"),
                        0..0,
                    )
                    .label("missing `)`"),
                );
                return;
            };
            let params: Vec<String> = list[..close]
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            if let Some(bad) = params
                .iter()
                .find(|p| !p.bytes().all(ident_byte) || p.as_bytes()[0].is_ascii_digit())
            {
                self.error(
                    file,
                    span,
                    Diagnostic::error(format!("macro parameter `{bad}` is not a name"), 0..0)
                        .label("in this definition"),
                );
                return;
            }
            (Some(params), list[close + 1..].trim())
        } else {
            (None, after.trim())
        };
        let body = strip_comments(body);
        self.map.macros.push(MacroSite {
            name: name.to_string(),
            file,
            span: span.clone(),
        });
        let site = self.map.macros.len() - 1;
        self.macros
            .insert(name.to_string(), Macro { params, body, site });
    }

    fn include(&mut self, file: usize, span: Span, rest: &str) {
        let Some(name) = rest
            .strip_prefix('"')
            .and_then(|r| r.find('"').map(|e| &r[..e]))
        else {
            self.error(
                file,
                span,
                Diagnostic::error("`#include` needs a quoted file name", 0..0)
                    .label("expected `#include \"file\"`")
                    .help("paths are relative to the including file"),
            );
            return;
        };
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            self.error(
                file,
                span,
                Diagnostic::error("`#include` nests too deeply", 0..0)
                    .label(format!("more than {MAX_INCLUDE_DEPTH} files deep"))
                    .help("look for files that include each other"),
            );
            return;
        }
        let here = self.stack.last().cloned().unwrap_or_default();
        let path = here.parent().unwrap_or(Path::new("")).join(name);
        if self.stack.contains(&path) {
            self.error(
                file,
                span,
                Diagnostic::error(format!("`{name}` includes itself"), 0..0)
                    .label("this include closes a cycle")
                    .help("include every file once"),
            );
            return;
        }
        match (self.read)(&path) {
            Ok(text) => {
                self.map.files.push(SourceFile {
                    name: path.display().to_string(),
                    text,
                });
                let id = self.map.files.len() - 1;
                self.stack.push(path);
                self.file(id);
                self.stack.pop();
            }
            Err(why) => self.error(
                file,
                span,
                Diagnostic::error(format!("cannot include `{name}`"), 0..0)
                    .label(why)
                    .help("paths are relative to the including file"),
            ),
        }
    }

    /// Evaluates an `#if` expression.
    fn condition(&mut self, file: usize, at: usize, text: &str) -> bool {
        // `defined X` / `defined(X)` first, then macros, then unknown names are 0.
        let mut resolved = String::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if ident_byte(bytes[i]) && !bytes[i].is_ascii_digit() {
                let s = i;
                while i < bytes.len() && ident_byte(bytes[i]) {
                    i += 1;
                }
                if &text[s..i] == "defined" {
                    let rest = text[i..].trim_start();
                    let (name, used) = match rest.strip_prefix('(') {
                        Some(r) => {
                            let close = r.find(')').unwrap_or(r.len());
                            (r[..close].trim(), text.len() - rest.len() + 1 + close + 1)
                        }
                        None => {
                            let n = first_word(rest);
                            (n, text.len() - rest.len() + n.len())
                        }
                    };
                    resolved.push_str(if self.macros.contains_key(name) {
                        " 1 "
                    } else {
                        " 0 "
                    });
                    i = used.min(text.len());
                    continue;
                }
                resolved.push_str(&text[s..i]);
            } else {
                resolved.push(bytes[i] as char);
                i += 1;
            }
        }
        let expanded = self.rescan(file, 0, at, at, &resolved, &mut Vec::new(), 0);
        match eval_condition(&expanded) {
            Ok(v) => v != 0,
            Err(why) => {
                self.error(
                    file,
                    at..at + text.len(),
                    Diagnostic::error("cannot evaluate the `#if` condition", 0..0)
                        .label(why)
                        .help("conditions are integer expressions over literals, macros and defined(NAME)"),
                );
                false
            }
        }
    }
}

fn first_word(s: &str) -> &str {
    let n = s.bytes().take_while(|b| ident_byte(*b)).count();
    &s[..n]
}

/// Tracks block comments through an inactive line.
fn skip_comments(line: &str, mut in_comment: bool) -> bool {
    let mut rest = line;
    loop {
        if in_comment {
            match rest.find("*/") {
                Some(k) => {
                    rest = &rest[k + 2..];
                    in_comment = false;
                }
                None => return true,
            }
        } else {
            let line_comment = rest.find("//");
            match rest.find("/*") {
                Some(k) if line_comment.is_none_or(|l| k < l) => {
                    rest = &rest[k + 2..];
                    in_comment = true;
                }
                _ => return false,
            }
        }
    }
}

/// A macro body without its comments.
fn strip_comments(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        match (rest.find("//"), rest.find("/*")) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                break;
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out.trim().to_string()
}

/// The arguments of an invocation whose `(` is at `open`; returns them and the
/// offset after the closing `)`.
fn split_args(line: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = open + 1;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    args.push(line[start..i].trim().to_string());
                    return Some((args, i + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(line[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// Replaces parameter names in a body by the arguments.
fn substitute(body: &str, params: &[String], args: &[String]) -> String {
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < bytes.len() {
        if ident_byte(bytes[i]) && !bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && ident_byte(bytes[i]) {
                i += 1;
            }
            let word = &body[s..i];
            let prev = s.checked_sub(1).map(|p| bytes[p]);
            match params.iter().position(|p| p == word) {
                Some(k) if !matches!(prev, Some(b'.')) => out.push_str(&args[k]),
                _ => out.push_str(word),
            }
        } else if bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && (ident_byte(bytes[i]) || bytes[i] == b'.') {
                i += 1;
            }
            out.push_str(&body[s..i]);
        } else {
            let ch = body[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Evaluates an integer condition with C precedence, without recursion
/// (shunting-yard over a token list).
fn eval_condition(text: &str) -> Result<i64, String> {
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Tok {
        Num(i64),
        Op(&'static str),
        Open,
        Close,
    }
    const OPS: [&str; 19] = [
        "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "|", "^", "&", "<", ">", "+", "-", "*",
        "/", "%", "!",
    ];
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let t = text[s..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                i64::from_str_radix(h, 16)
            } else {
                t.parse()
            }
            .map_err(|_| format!("`{}` is not an integer", &text[s..i]))?;
            toks.push(Tok::Num(v));
        } else if ident_byte(c) {
            // Names left after expansion count as 0 (C's rule).
            while i < b.len() && ident_byte(b[i]) {
                i += 1;
            }
            toks.push(Tok::Num(0));
        } else if c == b'(' {
            toks.push(Tok::Open);
            i += 1;
        } else if c == b')' {
            toks.push(Tok::Close);
            i += 1;
        } else if c == b'~' {
            toks.push(Tok::Op("~"));
            i += 1;
        } else {
            let op = OPS
                .iter()
                .find(|o| text[i..].starts_with(**o))
                .ok_or_else(|| format!("unexpected `{}`", c as char))?;
            toks.push(Tok::Op(op));
            i += op.len();
        }
    }
    let prec = |op: &str| match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        _ => 10,
    };
    // Unary operators are marked with a leading `u`.
    let mut values: Vec<i64> = Vec::new();
    let mut ops: Vec<(&'static str, bool)> = Vec::new();
    let apply = |values: &mut Vec<i64>, op: &'static str, unary: bool| -> Result<(), String> {
        if unary {
            let a = values.pop().ok_or("missing operand")?;
            values.push(match op {
                "-" => a.wrapping_neg(),
                "!" => i64::from(a == 0),
                "~" => !a,
                _ => a,
            });
            return Ok(());
        }
        let y = values.pop().ok_or("missing operand")?;
        let x = values.pop().ok_or("missing operand")?;
        values.push(match op {
            "||" => i64::from(x != 0 || y != 0),
            "&&" => i64::from(x != 0 && y != 0),
            "|" => x | y,
            "^" => x ^ y,
            "&" => x & y,
            "==" => i64::from(x == y),
            "!=" => i64::from(x != y),
            "<" => i64::from(x < y),
            ">" => i64::from(x > y),
            "<=" => i64::from(x <= y),
            ">=" => i64::from(x >= y),
            "<<" => x.wrapping_shl(y as u32),
            ">>" => x.wrapping_shr(y as u32),
            "+" => x.wrapping_add(y),
            "-" => x.wrapping_sub(y),
            "*" => x.wrapping_mul(y),
            "/" | "%" if y == 0 => return Err("division by zero".into()),
            "/" => x.wrapping_div(y),
            _ => x.wrapping_rem(y),
        });
        Ok(())
    };
    let mut expect_value = true;
    for t in toks {
        match t {
            Tok::Num(v) => {
                if !expect_value {
                    return Err("two values in a row".into());
                }
                values.push(v);
                expect_value = false;
            }
            Tok::Open => {
                ops.push(("(", false));
                expect_value = true;
            }
            Tok::Close => {
                loop {
                    match ops.pop() {
                        Some(("(", _)) => break,
                        Some((op, unary)) => apply(&mut values, op, unary)?,
                        None => return Err("unbalanced `)`".into()),
                    }
                }
                expect_value = false;
            }
            Tok::Op(op) if expect_value => {
                if !matches!(op, "-" | "+" | "!" | "~") {
                    return Err(format!("`{op}` needs a value before it"));
                }
                ops.push((op, true));
            }
            Tok::Op(op) => {
                while let Some(&(top, unary)) = ops.last() {
                    if top == "(" || (!unary && prec(top) < prec(op)) {
                        break;
                    }
                    ops.pop();
                    apply(&mut values, top, unary)?;
                }
                ops.push((op, false));
                expect_value = true;
            }
        }
    }
    while let Some((op, unary)) = ops.pop() {
        if op == "(" {
            return Err("unbalanced `(`".into());
        }
        apply(&mut values, op, unary)?;
    }
    match values.as_slice() {
        [v] => Ok(*v),
        [] => Err("the condition is empty".into()),
        _ => Err("missing operator".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str) -> (String, Diagnostics) {
        let (out, _, d) = preprocess("t.spu", src, &mut |_| Err("no files".into()));
        (out, d)
    }

    #[test]
    fn object_and_function_macros_expand_outside_names_and_comments() {
        let (out, d) = run(
            "#define N 4096\n#define IDX(a, b) ((a) * N + (b))\nmov.u32 %N, N; // N\nadd.u32 %r1, %r2, IDX(3, 4);\nld.global.N\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            out,
            "\n\nmov.u32 %N, 4096; // N\nadd.u32 %r1, %r2, ((3) * 4096 + (4));\nld.global.N\n"
        );
    }

    #[test]
    fn conditionals_select_branches() {
        let (out, d) = run(
            "#define A 2\n#if A > 1 && defined(A)\nyes\n#elif 1\nno\n#else\nno\n#endif\n#ifdef B\nno\n#else\nelse\n#endif\n#undef A\n#ifndef A\ngone\n#endif\n",
        );
        assert!(d.is_empty(), "{d:?}");
        let kept: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(kept, ["yes", "else", "gone"]);
    }

    #[test]
    fn self_referencing_macros_stop() {
        let (out, d) = run("#define X X + 1\nX\n");
        assert!(d.is_empty());
        assert_eq!(out, "\nX + 1\n");
    }

    #[test]
    fn condition_precedence_matches_c() {
        assert_eq!(eval_condition("1 + 2 * 3 == 7"), Ok(1));
        assert_eq!(eval_condition("-(2 - 5) << 1"), Ok(6));
        assert_eq!(eval_condition("!0 && (4 % 3 || 0)"), Ok(1));
        assert!(eval_condition("1 / 0").is_err());
        assert!(eval_condition("(1").is_err());
    }

    #[test]
    fn map_points_into_the_macro_invocation() {
        let (out, map, _) =
            preprocess(
                "t.spu",
                "#define K 7\nadd K;\n",
                &mut |_| Err(String::new()),
            );
        let at = out.find('7').unwrap();
        let o = map.origin(&(at..at + 1));
        assert_eq!((o.file, o.span), (0, 16..17));
        assert!(o.expansion.is_some());
    }
}
