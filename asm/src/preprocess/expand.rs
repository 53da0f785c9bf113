//! Macro invocations in C's order (arguments expanded, substituted, the result
//! rescanned with the macro hidden and its name painted), bounded in depth.

use super::*;
use crate::diag::Diagnostic;
use crate::lexer::Span;

impl Pre<'_> {
    /// Expands the macro named by `line[start..name_end]`; returns the replacement
    /// text and where the invocation ends, or `None` for a function-like macro
    /// written without arguments (left as it is, like C). `hidden` holds the macros
    /// whose replacement is being rescanned around this invocation; errors are
    /// reported at `base` plus their offset in `line`.
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
                        let args = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                            Vec::new()
                        } else {
                            args
                        };
                        if args.len() != params.len() {
                            let mut d = Diagnostic::error(
                                format!(
                                    "macro `{name}` takes {} argument{}, found {}",
                                    params.len(),
                                    if params.len() == 1 { "" } else { "s" },
                                    args.len()
                                ),
                                0..0,
                            )
                            .label("in this invocation");
                            if args.len() > params.len() {
                                d = d.help(
                                    "every comma outside parentheses starts another argument",
                                );
                            }
                            self.error(file, base + start..base + close, d);
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
            if !self.depth_reported {
                self.depth_reported = true;
                self.error(
                    file,
                    base + start..base + end,
                    Diagnostic::error("macro expansion nests too deeply", 0..0)
                        .label(format!(
                            "expanding `{name}` inside {MAX_EXPANSION_DEPTH} other macro expansions"
                        ))
                        .help(format!(
                            "macro expansions nest at most {MAX_EXPANSION_DEPTH} deep, \
                             arguments included; a macro probably expands into a chain of \
                             other macros"
                        )),
                );
            }
            return Some((String::new(), end));
        }
        let span = base + start..base + end;
        self.expansions += 1;
        if self.expansions > MAX_EXPANSIONS {
            let why = format!("more than {MAX_EXPANSIONS} macro invocations in one file");
            self.exhaust(file, span.clone(), &name, why);
        }
        if self.exhausted {
            return Some((String::new(), end));
        }
        let mut body = match &m.params {
            None => m.body.clone(),
            Some(params) => {
                // C's order (C11 6.10.3.1): each argument is macro-expanded on its own,
                // in the context of the invocation, before it replaces its parameter;
                // only the rescan below hides this macro.
                let mut expanded = Vec::with_capacity(args.len());
                for (param, arg) in params.iter().zip(&args) {
                    if !uses_param(&m.body, param) {
                        expanded.push(String::new());
                        continue;
                    }
                    let text = self.rescan(
                        file,
                        base,
                        &line[..arg.end],
                        arg.start,
                        None,
                        hidden,
                        depth + 1,
                    );
                    if self.exhausted {
                        return Some((String::new(), end));
                    }
                    expanded.push(text);
                }
                substitute(&m.body, params, &expanded)
            }
        };
        hidden.push(name.clone());
        body = self.rescan(file, 0, &body, 0, Some(span.clone()), hidden, depth + 1);
        hidden.pop();
        self.expanded += body.len();
        if self.expanded > MAX_EXPANDED_BYTES || self.out.len() + body.len() > MAX_OUTPUT_BYTES {
            let why = format!(
                "the expansions grow past {} MiB of text",
                MAX_OUTPUT_BYTES >> 20
            );
            self.exhaust(file, span, &name, why);
        }
        if self.exhausted {
            return Some((String::new(), end));
        }
        Some((body, end))
    }

    /// Reports (once) that macro expansion ran out of budget at the use of `name`,
    /// and stops all further expansion.
    fn exhaust(&mut self, file: usize, span: Span, name: &str, why: String) {
        if self.exhausted {
            return;
        }
        self.exhausted = true;
        self.error(
            file,
            span,
            Diagnostic::error("this macro's expansion is too large", 0..0)
                .label(format!("{why} (stopped inside `{name}`)"))
                .help(
                    "look for a macro that uses another one several times: each level \
                     doubles the text; expand it in a loop in the kernel instead",
                ),
        );
    }

    /// Expands the macros in `text[from..]`, except the hidden ones, which are marked
    /// [`PAINTED`] so that no later rescan expands them either (C11 6.10.3.4). Errors
    /// are reported at `at` when given (the text was made by an expansion), else at
    /// `base` plus their offset in `text`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rescan(
        &mut self,
        file: usize,
        base: usize,
        text: &str,
        from: usize,
        at: Option<Span>,
        hidden: &mut Vec<String>,
        depth: usize,
    ) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() - from);
        let mut i = from;
        while i < bytes.len() {
            let b = bytes[i];
            if ident_byte(b) && !b.is_ascii_digit() {
                let s = i;
                while i < bytes.len() && ident_byte(bytes[i]) {
                    i += 1;
                }
                let name = &text[s..i];
                let prev = s.checked_sub(1).map(|p| bytes[p]);
                if !matches!(prev, Some(b'.' | b'%' | PAINTED_BYTE))
                    && self.macros.contains_key(name)
                {
                    if hidden.iter().any(|h| h == name) {
                        out.push(PAINTED);
                    } else {
                        let inner = match &at {
                            Some(at) => self.invoke_in(text, s, i, hidden, depth, file, at.clone()),
                            None => self.invoke(file, base, text, s, i, hidden, depth),
                        };
                        if let Some((expanded, stop)) = inner {
                            if self.exhausted {
                                return String::new();
                            }
                            out.push_str(&expanded);
                            if out.len() > MAX_OUTPUT_BYTES {
                                return out;
                            }
                            i = stop;
                            continue;
                        }
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
                // Copy the run up to the next identifier or number at once
                // (identifier bytes are ASCII, so this stays on a char boundary).
                let s = i;
                i += 1;
                while i < bytes.len() && !ident_byte(bytes[i]) {
                    i += 1;
                }
                while !text.is_char_boundary(i) {
                    i += 1;
                }
                out.push_str(&text[s..i]);
            }
            if self.exhausted {
                return String::new();
            }
            if out.len() > MAX_OUTPUT_BYTES {
                // The invocation being rescanned reports it.
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

/// Marks a macro name that must not expand again (C's "painted blue" token): it
/// stands before the name in expansion text, and is removed when the text is emitted.
/// Source text never holds it (`spu-asm` refuses files with NUL bytes).
pub(super) const PAINTED: char = '\0';
const PAINTED_BYTE: u8 = 0;
