//! Diagnostics: a cheap error value carrying spans, turned into rendered text by one
//! function ([`Diagnostics::render`]) through codespan-reporting.

use crate::lexer::Span;
use crate::source_map::{SourceFile, SourceMap};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{self, Files, SimpleFiles};
use codespan_reporting::term;
use spu_io::quote::{EscapedLines, escape};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A secondary label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secondary {
    pub span: Span,
    pub label: String,
    /// The file of `span`, once known (see [`Diagnostic::file`]).
    pub file: Option<u32>,
}

/// One problem in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// The file `span` is in: `None` while spans are offsets of the preprocessed
    /// text, `Some(index into Diagnostics::files)` once mapped back.
    pub file: Option<u32>,
    pub label: String,
    pub secondary: Vec<Secondary>,
    pub help: Option<Box<str>>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            file: None,
            label: String::new(),
            secondary: Vec::new(),
            help: None,
        }
    }

    pub fn warning(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message, span)
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into().into_boxed_str());
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push(Secondary {
            span,
            label: label.into(),
            file: None,
        });
        self
    }
}

/// All diagnostics of one assembly, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
    /// The files the diagnostics point into (the main file first, then includes);
    /// empty when only the main file is involved.
    pub files: Vec<SourceFile>,
    /// Files clang read for an included `.cu` file (its headers): inputs, like
    /// `files`, that no output may overwrite.
    pub headers: Vec<std::path::PathBuf>,
    /// Errors and warnings past [`MAX_KEPT`], counted but not kept (a file of
    /// garbage costs a count, not memory per bad byte).
    pub dropped: [usize; 2],
}

/// Most diagnostics one [`Diagnostics`] keeps; the rest are only counted.
pub const MAX_KEPT: usize = 10_000;

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        if self.items.len() < MAX_KEPT {
            self.items.push(d);
        } else {
            self.dropped[usize::from(d.severity == Severity::Warning)] += 1;
        }
    }

    /// Adds all of `other` (kept ones first, up to the limit, then its counts).
    pub fn append(&mut self, other: Diagnostics) {
        for d in other.items {
            self.push(d);
        }
        self.dropped[0] += other.dropped[0];
        self.dropped[1] += other.dropped[1];
    }

    pub fn has_errors(&self) -> bool {
        self.dropped[0] > 0 || self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn error_count(&self) -> usize {
        self.dropped[0]
            + self
                .items
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.dropped == [0, 0]
    }

    /// Sorts by position so output follows the files.
    pub fn sort(&mut self) {
        self.items
            .sort_by_key(|d| (d.file.unwrap_or(0), d.span.start, d.span.end));
    }

    /// Maps spans of the preprocessed text back to their files; a diagnostic inside
    /// a macro expansion points at the invocation and notes where the macro was
    /// defined.
    pub fn remap(&mut self, map: &mut SourceMap) {
        for d in &mut self.items {
            if d.file.is_none() {
                let o = map.origin(&d.span);
                d.file = Some(o.file as u32);
                d.span = o.span;
                if let Some(site) = o.expansion.and_then(|m| map.macros.get(m)) {
                    d.secondary.push(Secondary {
                        span: site.span.clone(),
                        label: format!("in the expansion of macro `{}`, defined here", site.name),
                        file: Some(site.file as u32),
                    });
                }
            }
            for s in &mut d.secondary {
                if s.file.is_none() {
                    let o = map.origin(&s.span);
                    s.file = Some(o.file as u32);
                    s.span = o.span;
                }
            }
        }
        if map.files.len() > 1 {
            self.files = std::mem::take(&mut map.files);
        }
    }

    /// Renders the diagnostics as text (no colour), the way `spu-asm` prints them:
    /// the first [`MAX_SHOWN`] in source order, then a count of the rest (a file of
    /// garbage gives a screenful, not one message per line, and rendering stays
    /// bounded). `path` and `src` name the main file; included files come from
    /// [`Self::files`].
    pub fn render(&self, path: &str, src: &str) -> String {
        // File names, source lines and messages quote the user's text: escaped, so
        // control characters show as `\u{1b}` and spans still point at them.
        let sources: Vec<(&str, &str)> = if self.files.is_empty() {
            vec![(path, src)]
        } else {
            self.files
                .iter()
                .map(|f| (f.name.as_str(), f.text.as_str()))
                .collect()
        };
        let escaped: Vec<EscapedLines> = sources.iter().map(|s| EscapedLines::new(s.1)).collect();
        let lens: Vec<usize> = sources.iter().map(|s| s.1.len()).collect();
        let mut files = SimpleFiles::new();
        for ((name, _), text) in sources.iter().zip(&escaped) {
            files.add(escape(name), text.text.as_ref());
        }
        let files = EscapedFiles {
            files,
            escaped: &escaped,
            originals: sources.iter().map(|s| s.1).collect(),
        };
        let config = term::Config {
            chars: term::Chars::ascii(),
            ..term::Config::default()
        };
        let mut out = String::new();
        for d in self.items.iter().take(MAX_SHOWN) {
            let id = (d.file.unwrap_or(0) as usize).min(lens.len() - 1);
            let (name, text) = match self.files.get(id) {
                Some(f) => (f.name.as_str(), f.text.as_str()),
                None => (path, src),
            };
            if let Some(plain) = render_long_line(name, text, d) {
                out.push_str(&plain);
                continue;
            }
            let clamp = |id: usize, s: &Span| {
                let len = lens[id];
                let (start, end) = (s.start.min(len), s.end.min(len).max(s.start.min(len)));
                escaped[id].offset(start)..escaped[id].offset(end)
            };
            let mut labels =
                vec![Label::primary(id, clamp(id, &d.span)).with_message(escape(&d.label))];
            labels.extend(d.secondary.iter().map(|s| {
                let sid = s.file.map_or(id, |f| f as usize).min(lens.len() - 1);
                Label::secondary(sid, clamp(sid, &s.span)).with_message(escape(&s.label))
            }));
            let notes: Vec<String> = d
                .help
                .iter()
                .map(|h| format!("help: {}", escape(h)))
                .collect();
            let cs = match d.severity {
                Severity::Error => CsDiagnostic::error(),
                Severity::Warning => CsDiagnostic::warning(),
            }
            .with_message(escape(&d.message))
            .with_labels(labels)
            .with_notes(notes);
            match term::emit_into_string(&config, &files, &cs) {
                Ok(s) => out.push_str(&s),
                Err(_) => out.push_str(&format!("{}: {}\n", escape(path), escape(&d.message))),
            }
        }
        let rest = self.items.get(MAX_SHOWN..).unwrap_or_default();
        if !rest.is_empty() || self.dropped != [0, 0] {
            let shown_errors = rest
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            let errors = shown_errors + self.dropped[0];
            let warnings = rest.len() - shown_errors + self.dropped[1];
            let plural =
                |n: usize, what: &str| format!("{n} more {what}{}", if n == 1 { "" } else { "s" });
            let what = match (errors, warnings) {
                (0, w) => plural(w, "warning"),
                (e, 0) => plural(e, "error"),
                (e, w) => format!("{} and {}", plural(e, "error"), plural(w, "warning")),
            };
            out.push_str(&format!(
                "... and {what} not shown (only the first {MAX_SHOWN} are printed); fix the ones above and assemble again\n\n"
            ));
        }
        out
    }
}

/// The files a diagnostic quotes, escaped, with columns counted in the original
/// text (`--> k.spu:2:9` points where an editor finds the character).
struct EscapedFiles<'a> {
    files: SimpleFiles<std::borrow::Cow<'a, str>, &'a str>,
    escaped: &'a [EscapedLines<'a>],
    originals: Vec<&'a str>,
}

impl<'a> Files<'a> for EscapedFiles<'a> {
    type FileId = usize;
    type Name = std::borrow::Cow<'a, str>;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<Self::Name, files::Error> {
        self.files.name(id)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        self.files.source(id)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        self.files.line_index(id, byte_index)
    }

    fn line_range(&'a self, id: usize, line: usize) -> Result<Span, files::Error> {
        self.files.line_range(id, line)
    }

    fn column_number(
        &'a self,
        id: usize,
        _: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let src = self.originals.get(id).ok_or(files::Error::FileMissing)?;
        let at = self.escaped[id].original(byte_index).min(src.len());
        let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
        Ok(src[start..at].chars().count() + 1)
    }
}

/// Most diagnostics [`Diagnostics::render`] prints.
pub const MAX_SHOWN: usize = 50;

/// Longest source line a diagnostic quotes; longer ones (a whole kernel on one line,
/// a generated expression) are located but not printed.
const MAX_QUOTED_LINE: usize = 1000;

/// A diagnostic whose lines are too long to quote, as text without the source.
fn render_long_line(path: &str, src: &str, d: &Diagnostic) -> Option<String> {
    let at = d.span.start.min(src.len());
    let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = d.span.end.clamp(at, src.len());
    let stop = src[end..].find('\n').map_or(src.len(), |i| end + i);
    if stop - start <= MAX_QUOTED_LINE {
        return None;
    }
    let line = src[..at].matches('\n').count() + 1;
    let column = src[start..at].chars().count() + 1;
    let kind = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = format!(
        "{kind}: {}\n  --> {}:{line}:{column}\n",
        escape(&d.message),
        escape(path)
    );
    if !d.label.is_empty() {
        out.push_str(&format!("  = {}\n", escape(&d.label)));
    }
    out.push_str(&format!(
        "  = note: the line is {} bytes long and not shown\n",
        stop - start
    ));
    if let Some(h) = &d.help {
        out.push_str(&format!("  = help: {}\n", escape(h)));
    }
    out.push('\n');
    Some(out)
}
