//! Macro invocations: arguments, substitution and rescanning, bounded in depth.

use super::*;
use crate::diag::Diagnostic;
use crate::lexer::Span;

impl Pre<'_> {
    /// Expands the macro named by `line[start..name_end]`; returns the replacement
    /// text and where the invocation ends, or `None` for a function-like macro
    /// written without arguments (left as it is, like C).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn invoke(
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
    pub(super) fn rescan(
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
    pub(super) fn invoke_in(
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
}
