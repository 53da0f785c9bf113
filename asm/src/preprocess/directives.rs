//! The directives: `#define`, `#undef`, `#include`, the conditionals and
//! `#error`.

use super::*;
use crate::diag::Diagnostic;
use crate::lexer::Span;
use std::path::Path;

impl Pre<'_> {
    pub(super) fn directive(&mut self, file: usize, at: usize, text: &str, conds: &mut Vec<Cond>) {
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
                if active && word != "if" {
                    if first_word(rest).is_empty() {
                        self.error(
                            file,
                            full.clone(),
                            Diagnostic::error(format!("`#{word}` needs a macro name"), 0..0)
                                .label("no name here"),
                        );
                    } else {
                        self.nothing_after_name(file, word, rest_at, rest);
                    }
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
                if word != "elif" {
                    self.nothing_after(file, word, rest_at, rest, false);
                }
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
            // The null directive: a `#` alone on its line (C allows it).
            "" if strip_comments(body).trim().is_empty() => {}
            "define" => self.define(file, rest_at, rest),
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
                    self.nothing_after_name(file, word, rest_at, rest);
                    self.macros.remove(name);
                }
            }
            "include" => self.include(file, full, rest_at, rest),
            "error" => self.error(
                file,
                full,
                Diagnostic::error(format!("#error {rest}"), 0..0).label("reached here"),
            ),
            "pragma" => self.pragma(file, full, rest_at, rest),
            "line" => {}
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

    /// Refuses text after the macro name of `#undef`, `#ifdef` or `#ifndef`
    /// (`rest`, at `rest_at`); a comment may follow.
    fn nothing_after_name(&mut self, file: usize, word: &str, rest_at: usize, rest: &str) {
        self.nothing_after(file, word, rest_at, rest, true);
    }

    /// Refuses text after a directive that takes nothing (`#else`, `#endif`), or,
    /// with `named`, after its macro name; a comment may follow.
    fn nothing_after(&mut self, file: usize, word: &str, rest_at: usize, rest: &str, named: bool) {
        let name = if named { first_word(rest) } else { "" };
        let after = &rest[name.len()..];
        let extra = strip_comments(after);
        let Some(token) = extra.split_whitespace().next() else {
            return;
        };
        let from = after.find(token).unwrap_or(0);
        let at = rest_at + name.len() + from;
        let shown: String = token.chars().take(40).collect();
        let (what, takes) = if named {
            ("the macro name of ", "one macro name and nothing else")
        } else {
            ("", "nothing")
        };
        self.error(
            file,
            at..at + token.len(),
            Diagnostic::error(format!("unexpected `{shown}` after {what}`#{word}`"), 0..0)
                .label(format!("`#{word}` takes {takes}"))
                .help("remove it, or make it a comment (`// ...`)"),
        );
    }

    /// `#pragma once` marks the current file as read once: a later `#include` of
    /// it is skipped. Other pragmas are ignored with a warning.
    fn pragma(&mut self, file: usize, full: Span, rest_at: usize, rest: &str) {
        let text = strip_comments(rest);
        if text.trim() == "once" {
            if let Some(here) = self.stack.last() {
                let key = once_key(here);
                self.once.insert(key);
            }
            return;
        }
        let shown: String = text.trim().chars().take(40).collect();
        let shown = if shown.is_empty() {
            "#pragma".to_string()
        } else {
            format!("#pragma {shown}")
        };
        // A bare `#pragma` is pointed at itself: its rest is empty, and one byte
        // past it is the next line.
        let span = if text.trim().is_empty() {
            full
        } else {
            rest_at..rest_at + rest.trim_end().len()
        };
        self.error(
            file,
            span,
            Diagnostic::warning(format!("`{shown}` is ignored"), 0..0)
                .label("not understood")
                .help("the only pragma the preprocessor understands is `#pragma once`"),
        );
    }

    /// `#define` with `rest` (its name, parameters and body) at offset `name_at`.
    pub(super) fn define(&mut self, file: usize, name_at: usize, rest: &str) {
        let name_len = rest.bytes().take_while(|b| ident_byte(*b)).count();
        let name = &rest[..name_len];
        let span = name_at..name_at + name_len.max(1);
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
        if name == "defined" {
            self.error(
                file,
                span,
                Diagnostic::error("`defined` cannot be a macro name", 0..0)
                    .label("`#if` reads `defined` as its operator")
                    .help("choose another name"),
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
            // Each parameter with its offset in the file.
            let mut params: Vec<(String, usize)> = Vec::new();
            let mut at = span.end + 1;
            for p in list[..close].split(',') {
                let lead = p.len() - p.trim_start().len();
                if !p.trim().is_empty() {
                    params.push((p.trim().to_string(), at + lead));
                }
                at += p.len() + 1;
            }
            if params.len() > super::MAX_MACRO_PARAMS {
                self.error(
                    file,
                    span,
                    Diagnostic::error(
                        format!(
                            "macro `{name}` has {} parameters, more than the {} a macro may have",
                            params.len(),
                            super::MAX_MACRO_PARAMS
                        ),
                        0..0,
                    )
                    .label("in this definition")
                    .help("pass the values as fewer parameters, or write the text out"),
                );
                return;
            }
            if let Some((bad, _)) = params
                .iter()
                .find(|(p, _)| !p.bytes().all(ident_byte) || p.as_bytes()[0].is_ascii_digit())
            {
                self.error(
                    file,
                    span,
                    Diagnostic::error(format!("macro parameter `{bad}` is not a name"), 0..0)
                        .label("in this definition"),
                );
                return;
            }
            for (k, (p, second)) in params.iter().enumerate() {
                let Some((_, first)) = params[..k].iter().find(|(q, _)| q == p) else {
                    continue;
                };
                let (first, second) = (*first..first + p.len(), *second..second + p.len());
                let d = Diagnostic::error(
                    format!("macro `{name}` has two parameters named `{p}`"),
                    0..0,
                )
                .label(format!("`{p}` again"))
                .with_secondary(first, format!("the first `{p}`"))
                .help("give each parameter its own name");
                // The macro is still defined (the first one binds), so its uses add
                // no errors of their own.
                self.error(file, second, d);
            }
            let params: Vec<String> = params.into_iter().map(|(p, _)| p).collect();
            (Some(params), list[close + 1..].trim())
        } else {
            (None, after.trim())
        };
        self.defines += 1;
        if self.defines > MAX_DEFINES {
            if self.defines == MAX_DEFINES + 1 {
                self.error(
                    file,
                    span,
                    Diagnostic::error("too many `#define`s", 0..0)
                        .label(format!(
                            "more than {MAX_DEFINES} macro definitions (redefinitions count)"
                        ))
                        .help("define fewer macros; this one and later ones are ignored"),
                );
            }
            return;
        }
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

    /// `#include` (the directive at `span`) with `rest` (after the word) at `rest_at`.
    pub(super) fn include(&mut self, file: usize, span: Span, rest_at: usize, rest: &str) {
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
        // Only a comment may follow the name; the file is still included.
        let after = &rest[name.len() + 2..];
        let extra = strip_comments(after);
        if !extra.is_empty() {
            let word = match first_word(&extra) {
                "" => extra.split_whitespace().next().unwrap_or_default(),
                w => w,
            };
            let at = rest_at + name.len() + 2;
            let from = after.find(word).unwrap_or(0);
            let to = after.trim_end().len().max(from);
            let word: String = word.chars().take(40).collect();
            self.error(
                file,
                at + from..at + to,
                Diagnostic::error(
                    format!("unexpected `{word}` after the `#include` file name"),
                    0..0,
                )
                .label("`#include` takes one quoted file name and nothing else")
                .help("remove it, or make it a comment (`// ...`)"),
            );
        }
        if self.includes_exhausted {
            return;
        }
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
        if !self.once.is_empty() && self.once.contains(&once_key(&path)) {
            return;
        }
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
        self.inclusions += 1;
        if self.inclusions > MAX_INCLUSIONS {
            self.includes_exhausted = true;
            self.error(
                file,
                span,
                Diagnostic::error("too many `#include`s", 0..0)
                    .label(format!(
                        "more than {MAX_INCLUSIONS} inclusions (every `#include` of every file counts)"
                    ))
                    .help("look for headers that include others several times; include each file once"),
            );
            return;
        }
        let id = match self.file_ids.get(&path) {
            Some(&id) => Ok(id),
            None => (self.read)(&path).map(|text| {
                // An included `.cu` file's text is the PTX clang wrote for it.
                let name = path.display().to_string();
                self.map.files.push(SourceFile {
                    name: if crate::cuda::is_cuda(&path) {
                        crate::cuda::ptx_name(&name)
                    } else {
                        name
                    },
                    text,
                });
                self.file_ids.insert(path.clone(), self.map.files.len() - 1);
                self.map.files.len() - 1
            }),
        };
        match id {
            Ok(id) => {
                self.included_bytes += self.map.files[id].text.len();
                if self.included_bytes > MAX_INCLUDED_BYTES {
                    self.includes_exhausted = true;
                    self.error(
                        file,
                        span,
                        Diagnostic::error("the included text is too large", 0..0)
                            .label(format!(
                                "the inclusions add up to more than {} MiB (every inclusion of a file counts)",
                                MAX_INCLUDED_BYTES >> 20
                            ))
                            .help("include each file once"),
                    );
                    return;
                }
                self.stack.push(path);
                self.file(id);
                self.stack.pop();
            }
            // A `.cu` file that could be read but not compiled gets clang's story.
            Err(why) if crate::cuda::is_cuda(&path) && why.contains("clang") => self.error(
                file,
                span,
                Diagnostic::error(format!("cannot include `{name}`"), 0..0)
                    .label(why)
                    .help(
                        "a `.cu` file is compiled to PTX with clang before it is included: fix \
                         what clang reports, or name another clang with `--clang PATH`",
                    ),
            ),
            Err(why) => self.error(
                file,
                span,
                Diagnostic::error(format!("cannot include `{name}`"), 0..0)
                    .label(why)
                    .help(
                        "paths are relative to the including file; an included file must be \
                         a regular UTF-8 text file in the kernel's folder or in a folder given \
                         with `-I DIR` (or below them)",
                    ),
            ),
        }
    }

    /// Evaluates an `#if` expression.
    pub(super) fn condition(&mut self, file: usize, at: usize, text: &str) -> bool {
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
        self.depth_reported = false;
        let expanded = self.rescan(file, 0, &resolved, 0, Some(at..at), &mut Vec::new(), 0);
        let expanded = unpaint(&expanded);
        if expanded.len() > MAX_CONDITION_BYTES {
            self.error(
                file,
                at..at + text.len(),
                Diagnostic::error("the `#if` condition is too long", 0..0)
                    .label(format!(
                        "{} bytes after macro expansion; at most {} MiB",
                        expanded.len(),
                        MAX_CONDITION_BYTES >> 20
                    ))
                    .help("write a shorter condition"),
            );
            return false;
        }
        let d = match eval_condition(&expanded) {
            Ok(v) => return v != 0,
            Err(CondError::Syntax(why)) => {
                Diagnostic::error("cannot evaluate the `#if` condition", 0..0)
                    .label(why)
                    .help("conditions are integer expressions over literals, macros and defined(NAME)")
            }
            Err(CondError::DivisionByZero) => {
                Diagnostic::error("cannot evaluate the `#if` condition", 0..0)
                    .label("division by zero")
                    .help("conditions are integer expressions over literals, macros and defined(NAME)")
            }
            Err(CondError::Overflow(what, why)) => {
                Diagnostic::error(format!("`#if` arithmetic overflows: `{what}`"), 0..0)
                    .label(why)
                    .help("`#if` computes in signed 64-bit integers, as C's preprocessor does: every intermediate result must lie in -2^63..=2^63-1")
            }
        };
        self.error(file, at..at + text.len(), d);
        false
    }
}

/// A file as `#pragma once` knows it: its real path, so `sub/../x.h` and `x.h`
/// are one file (its path as written when it cannot be resolved).
fn once_key(path: &Path) -> std::path::PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}
