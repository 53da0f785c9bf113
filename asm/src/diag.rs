//! Diagnostics: a cheap error value carrying spans, turned into rendered text by one
//! function ([`Diagnostics::render`]) through codespan-reporting.

use crate::lexer::Span;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub label: String,
    pub secondary: Vec<(Span, String)>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
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
        self.help = Some(help.into());
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }
}

/// All diagnostics of one file, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn error_count(&self) -> usize {
        self.items
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts by position so output follows the file.
    pub fn sort(&mut self) {
        self.items.sort_by_key(|d| (d.span.start, d.span.end));
    }

    /// Renders every diagnostic as text (no colour), the way `spu-asm` prints them.
    pub fn render(&self, path: &str, src: &str) -> String {
        let file = SimpleFile::new(path, src);
        let config = term::Config {
            chars: term::Chars::ascii(),
            ..term::Config::default()
        };
        let mut out = String::new();
        for d in &self.items {
            let clamp =
                |s: &Span| s.start.min(src.len())..s.end.min(src.len()).max(s.start.min(src.len()));
            let mut labels = vec![Label::primary((), clamp(&d.span)).with_message(&d.label)];
            labels.extend(
                d.secondary
                    .iter()
                    .map(|(s, m)| Label::secondary((), clamp(s)).with_message(m)),
            );
            if let Some(plain) = render_long_line(path, src, d) {
                out.push_str(&plain);
                continue;
            }
            let cs = match d.severity {
                Severity::Error => CsDiagnostic::error(),
                Severity::Warning => CsDiagnostic::warning(),
            }
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(d.help.iter().map(|h| format!("help: {h}")).collect());
            match term::emit_into_string(&config, &file, &cs) {
                Ok(s) => out.push_str(&s),
                Err(_) => out.push_str(&format!("{path}: {}\n", d.message)),
            }
        }
        out
    }
}

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
    let mut out = format!("{kind}: {}\n  --> {path}:{line}:{column}\n", d.message);
    if !d.label.is_empty() {
        out.push_str(&format!("  = {}\n", d.label));
    }
    out.push_str(&format!(
        "  = note: the line is {} bytes long and not shown\n",
        stop - start
    ));
    if let Some(h) = &d.help {
        out.push_str(&format!("  = help: {h}\n"));
    }
    out.push('\n');
    Some(out)
}
