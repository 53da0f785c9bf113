//! The C preprocessor subset PTX allows, for `.ptx` and `.spu` sources alike:
//! `#define` (object-like and with arguments), `#undef`, `#include "file"`,
//! `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif`, `#error` and `#pragma once`
//! (other pragmas and `#line` are ignored). The output is one
//! text plus a [`SourceMap`] that maps every output byte back to the file and offset
//! it came from; text a macro produced maps to the macro's invocation, so
//! diagnostics and the line table point into the right file and line.
//!
//! Limits keep hostile inputs bounded in time and memory: include depth, the number
//! of inclusions and the text they add, macro expansion depth, the number of macro
//! definitions and invocations, the text expansions produce, and the size of the
//! output.

use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Span;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod directives;
mod expand;
mod files;
mod text;

use crate::source_map::Segment;
pub use crate::source_map::{MacroSite, Origin, SourceFile, SourceMap};
pub use files::confined_reader;
use text::*;

/// Deepest `#include` nesting.
const MAX_INCLUDE_DEPTH: usize = 32;
/// Deepest nesting of macro expansions.
const MAX_EXPANSION_DEPTH: usize = 64;
/// Largest preprocessed text.
const MAX_OUTPUT_BYTES: usize = 64 << 20;
/// Most macro invocations in one file, counting nested ones.
const MAX_EXPANSIONS: usize = 1 << 20;
/// Most replacement text produced in one file, counting every nesting level (the
/// work of expanding, which a macro that uses another one twice doubles per level).
const MAX_EXPANDED_BYTES: usize = 512 << 20;
/// Most `#include`s processed in one assembly, every inclusion of every file counted.
pub const MAX_INCLUSIONS: usize = 1 << 16;
/// Most text the inclusions add, every inclusion counted: the same 64 MiB as one
/// input file.
const MAX_INCLUDED_BYTES: usize = spu_io::MAX_INPUT_BYTES as usize;
/// Most `#define`s in one assembly (redefinitions count).
pub const MAX_DEFINES: usize = 1 << 16;
/// Longest `#if` condition after macro expansion.
const MAX_CONDITION_BYTES: usize = 1 << 20;
/// Most parameters of one macro (C requires 127; checking and replacing them
/// takes time that grows with their number times the macro's text).
pub const MAX_MACRO_PARAMS: usize = 256;

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
    /// Macro invocations so far.
    expansions: usize,
    /// Bytes of replacement text produced so far, at every nesting level.
    expanded: usize,
    /// An expansion budget ran out (reported once); preprocessing stops.
    exhausted: bool,
    /// Inclusions so far, and the bytes of text they added.
    inclusions: usize,
    included_bytes: usize,
    /// An inclusion limit was reached (reported once); later `#include`s are ignored.
    includes_exhausted: bool,
    /// Files read so far, by path: a file included again is not read again.
    file_ids: HashMap<PathBuf, usize>,
    /// `#define`s so far; past the limit (reported once) they are ignored.
    defines: usize,
    /// Files that said `#pragma once`: a later `#include` of one is skipped.
    once: std::collections::HashSet<PathBuf>,
    /// The expansion depth limit was reported for the current line or condition
    /// (once: every level below would report it again).
    depth_reported: bool,
    /// The output's size when memory was last checked; `out_of_memory`: the check
    /// failed (reported once) and nothing more is emitted.
    memory_checked: usize,
    out_of_memory: bool,
    /// The main file's size, which the caller checked memory for.
    main_len: usize,
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
        expansions: 0,
        expanded: 0,
        exhausted: false,
        inclusions: 0,
        included_bytes: 0,
        includes_exhausted: false,
        file_ids: HashMap::new(),
        defines: 0,
        once: Default::default(),
        depth_reported: false,
        memory_checked: 0,
        out_of_memory: false,
        main_len: src.len(),
    };
    pre.map.files.push(SourceFile {
        name: path.to_string(),
        text: src.to_string(),
    });
    pre.file(0);
    if pre.out_of_memory {
        // Assembling the part that fit would only report the cut as errors.
        pre.out = String::new();
        pre.map.segments.clear();
    }
    (pre.out, pre.map, pre.diags)
}

/// Expansion text without its [`expand::PAINTED`] marks.
fn unpaint(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(expand::PAINTED) {
        text.replace(expand::PAINTED, "").into()
    } else {
        text.into()
    }
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

    /// Stops emitting once the output grows past what memory allows (see
    /// [`crate::memory::check_growth`]); true while emitting may go on.
    fn memory_allows(&mut self, more: usize) -> bool {
        if !self.out_of_memory
            && let Some(d) = crate::memory::check_growth(
                self.out.len() + more,
                self.main_len,
                &mut self.memory_checked,
            )
        {
            self.diags.push(d);
            self.out_of_memory = true;
            self.exhausted = true;
            self.includes_exhausted = true;
        }
        !self.out_of_memory
    }

    fn emit_direct(&mut self, file: usize, src_start: usize, text: &str) {
        if text.is_empty() || !self.memory_allows(text.len()) {
            return;
        }
        let start = self.out.len();
        self.out.push_str(text);
        // Text that continues the previous copy extends its segment: a file without
        // macros is one segment, however many lines it has.
        if let Some(last) = self.map.segments.last_mut()
            && last.expansion.is_none()
            && last.file == file
            && last.out.end == start
            && last.src.end == src_start
        {
            last.out.end = self.out.len();
            last.src.end = src_start + text.len();
            return;
        }
        self.map.segments.push(Segment {
            out: start..self.out.len(),
            file,
            src: src_start..src_start + text.len(),
            expansion: None,
        });
    }

    fn emit_expansion(&mut self, file: usize, invocation: Span, macro_site: usize, text: &str) {
        let text = &unpaint(text);
        if text.is_empty() || !self.memory_allows(text.len()) {
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
        // Where the open block comment starts, and whether in emitted text.
        let mut comment: Option<(usize, bool)> = None;
        let mut pos = 0;
        while pos < text.len() {
            // A logical line: physical lines joined by a trailing backslash.
            let mut end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            let trimmed = text[pos..end].trim_start();
            // Where the `#` is, from the first physical line (continuations below
            // make `end` move on).
            let hash = end - trimmed.len();
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
                self.directive(file, hash, &text[hash..end], &mut conds);
            } else {
                let was = in_comment;
                in_comment = if active {
                    self.line(file, pos, line, in_comment)
                } else {
                    skip_comments(line, in_comment)
                };
                if in_comment && let (_, Some(k)) = comment_opened(line, was) {
                    comment = Some((pos + k, active));
                }
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
        // A comment never closed hides the rest of the file, `#endif`s too. One in
        // emitted text is the lexer's to report; one in skipped text is ours.
        let comment = comment.filter(|_| in_comment);
        if let Some((at, false)) = comment {
            self.error(
                file,
                at..at + 2,
                Diagnostic::error("unterminated block comment", 0..0)
                    .label("this comment is never closed")
                    .help("close it with `*/`; the rest of the file, directives too, is inside it"),
            );
        }
        for c in conds {
            let help = match comment {
                Some((at, _)) if c.file == file && c.span.start < at => format!(
                    "the block comment at line {} is never closed, so the rest of the file, \
                     `#endif` too, is inside it: close it with `*/`",
                    text[..at].matches('\n').count() + 1
                ),
                _ => "add `#endif`".to_string(),
            };
            self.error(
                c.file,
                c.span,
                Diagnostic::error("`#if` without `#endif`", 0..0)
                    .label("this conditional is never closed")
                    .help(help),
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
                    self.depth_reported = false;
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
    fn arguments_expand_before_substitution_and_painted_names_stay() {
        // (source, preprocessed output), checked against gcc -E.
        for (src, want) in [
            ("#define A(x) x\nA(A(A(1)))\n", "\n1\n"),
            (
                "#define ADD(a, b) ((a)+(b))\nADD(ADD(1, 2), 3)\n",
                "\n((((1)+(2)))+(3))\n",
            ),
            // A self-referencing macro in an argument expands once, not again in the rescan.
            (
                "#define X X+1\n#define ID(a) a\nID(X) ID(ID(X))\n",
                "\n\nX+1 X+1\n",
            ),
            ("#define X f(X)\n#define f(a) a\nX\n", "\n\nX\n"),
            ("#define X Y\n#define Y X\nX Y\n", "\n\nX Y\n"),
            // An argument the body does not use is not expanded (and cannot fail).
            ("#define K(a) 7\n#define G(x) x\nK(G(1, 2))\n", "\n\n7\n"),
            // A function-like name without `(` in an argument is left as it is.
            ("#define f(x) x(1)\n#define g(y) y+1\nf(g)\n", "\n\n1+1\n"),
        ] {
            let (out, d) = run(src);
            assert!(d.is_empty(), "{src:?}: {d:?}");
            assert_eq!(out, want, "{src:?}");
        }
    }

    #[test]
    fn macro_names_are_found_where_the_file_says() {
        // The name's span starts at the name, after `#define ` (it started one byte early).
        let (_, map, _) = preprocess("t.spu", "#define  NAME 1\n", &mut |_| Err(String::new()));
        assert_eq!(map.macros[0].span, 9..13);
    }

    #[test]
    fn condition_literals_are_read_as_in_c() {
        assert_eq!(eval_condition("010"), Ok(8));
        assert_eq!(eval_condition("0"), Ok(0));
        assert_eq!(eval_condition("0x1F + 0X10"), Ok(47));
        assert_eq!(eval_condition("0b101"), Ok(5));
        assert_eq!(
            eval_condition("10u + 1UL + 2llu + 3LL + 4uLL + 0x10ul + 07L"),
            Ok(43)
        );
        for bad in ["08", "0x", "0b2", "1lL", "1uu", "1lul", "12ab", "0xg"] {
            let e = eval_condition(bad);
            assert!(
                matches!(&e, Err(CondError::Syntax(why)) if why.contains("is not an integer")),
                "{bad}: {e:?}"
            );
        }
        assert!(matches!(
            eval_condition("01000000000000000000000"),
            Err(CondError::Syntax(why)) if why.contains("too large")
        ));
    }

    #[test]
    fn condition_precedence_matches_c() {
        assert_eq!(eval_condition("1 + 2 * 3 == 7"), Ok(1));
        assert_eq!(eval_condition("-(2 - 5) << 1"), Ok(6));
        assert_eq!(eval_condition("!0 && (4 % 3 || 0)"), Ok(1));
        assert_eq!(eval_condition("1 / 0"), Err(CondError::DivisionByZero));
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
