//! Errors in a sweep spec: each points at the key or value that is wrong (byte span
//! into the spec's text), says what is wrong and how to fix it, and is rendered with
//! `codespan-reporting` the way `spu-asm` renders its diagnostics.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

/// The longest message or note line shown whole (a message quoting a file's
/// content unshortened could otherwise fill the terminal).
const MESSAGE_BOUND: usize = 4096;

/// A byte range in the spec's text.
pub type Span = std::ops::Range<usize>;

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where; `None` for problems of the whole spec (e.g. no runs at all).
    pub span: Option<Span>,
    pub message: String,
    /// Short text under the span.
    pub label: String,
    pub help: Option<String>,
}

impl Problem {
    pub fn at(span: Span, message: impl Into<String>) -> Problem {
        Problem {
            span: Some(span),
            message: message.into(),
            label: String::new(),
            help: None,
        }
    }

    pub fn whole(message: impl Into<String>) -> Problem {
        Problem {
            span: None,
            message: message.into(),
            label: String::new(),
            help: None,
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Problem {
        self.label = label.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Problem {
        self.help = Some(help.into());
        self
    }
}

/// Problems shown of a spec that has more: the first ones in the file.
pub const MAX_SHOWN: usize = 50;

/// Every problem found in one spec file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("`{}` is not a valid sweep spec ({} problem{})", spu_io::quote::escape(file), problems.len(), if problems.len() == 1 { "" } else { "s" })]
pub struct SpecError {
    pub file: String,
    pub text: String,
    pub problems: Vec<Problem>,
}

impl SpecError {
    /// The problems as `error: ...` blocks with the offending line quoted.
    pub fn rendered(&self) -> String {
        let escape = spu_io::quote::escape;
        let file = SimpleFile::new(escape(&self.file), &self.text);
        let config = term::Config {
            chars: term::Chars::ascii(),
            ..term::Config::default()
        };
        let len = self.text.len();
        let mut out = String::new();
        for p in self.problems.iter().take(MAX_SHOWN) {
            let mut d = Diagnostic::error().with_message(escape(&p.message));
            if let Some(s) = &p.span {
                let start = s.start.min(len);
                let end = s.end.min(len).max(start);
                d = d.with_labels(vec![
                    Label::primary((), start..end).with_message(escape(&p.label)),
                ]);
            }
            if let Some(h) = &p.help {
                d = d.with_notes(vec![format!("help: {}", escape(h))]);
            }
            match term::emit_into_string(&config, &file, &d) {
                // A long line of the spec is quoted by its start; the message and
                // the notes are ours (user text in them is shortened where it is
                // put in), so they stay whole up to a bound no message of ours nears.
                Ok(s) => {
                    for (i, line) in s.split('\n').enumerate() {
                        if i > 0 {
                            out.push('\n');
                        }
                        let ours = i == 0 || line.trim_start().starts_with("= ");
                        if ours && line.len() <= MESSAGE_BOUND {
                            out.push_str(line);
                        } else {
                            out.push_str(&spu_io::quote::shorten_lines(line));
                        }
                    }
                }
                Err(_) => out.push_str(&format!(
                    "error: {}: {}\n",
                    escape(&self.file),
                    escape(&p.message)
                )),
            }
        }
        if self.problems.len() > MAX_SHOWN {
            out.push_str(&format!(
                "note: {} more problems are not shown; fix these first\n",
                spu_io::numbers::grouped((self.problems.len() - MAX_SHOWN) as u64)
            ));
        }
        out
    }

    /// 1-based line of a byte offset, for tests and one-line messages.
    pub fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }
}
