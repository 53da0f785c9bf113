//! Quoting text from the user (a file name, a kernel name, a line of a file, a value)
//! in a message or a report. [`escape`] is the one place that decides how: every
//! character a terminal would act on or not show (control characters such as ESC,
//! BEL and CR, so ESC and OSC sequences; line breaks; bidirectional overrides; a
//! byte order mark and the other invisible format characters) is written as `\t`,
//! `\n`, `\r` or `\u{1b}`, so quoted text can neither drive the terminal, nor forge
//! a line of the tool's own output, nor hide. The other functions build on it:
//! [`shorten`] also cuts megabytes of text to its start and its length,
//! [`escape_lines`] keeps the line breaks and tabs of text quoted as lines, [`xml`]
//! makes text safe inside an SVG, [`unquote_hint`] says how to fix a number the
//! user quoted in a TOML file.

use std::borrow::Cow;
use std::path::Path;

/// Whether `c` would not show as itself on a terminal: a control character (C0,
/// DEL, C1), a line or paragraph separator, or an invisible format character
/// (soft hyphen, zero-width characters, bidirectional marks, embeddings,
/// overrides and isolates, the byte order mark, interlinear annotations, tags).
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        )
}

/// What [`escape_with`] keeps as it is besides visible characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing: the text is quoted inside one line.
    Nothing,
    /// Line breaks (`\n`, and `\r` directly before one) and tabs.
    Layout,
}

/// The one function that writes user text for a terminal: each hidden character
/// (see [`is_hidden`]) not kept by `keep`, escaped; `None` when nothing needs it.
/// `escaped` learns of each escape: (its offset in `text`, the character, its
/// offset in the result).
fn escape_with(
    text: &str,
    keep: Keep,
    escaped: &mut dyn FnMut(usize, char, usize),
) -> Option<String> {
    let kept = |i: usize, c: char| {
        keep == Keep::Layout
            && (c == '\n' || c == '\t' || (c == '\r' && text[i + 1..].starts_with('\n')))
    };
    let first = text
        .char_indices()
        .find(|&(i, c)| is_hidden(c) && !kept(i, c))?
        .0;
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for (i, c) in text[first..].char_indices().map(|(i, c)| (first + i, c)) {
        if !is_hidden(c) || kept(i, c) {
            out.push(c);
        } else {
            escaped(i, c, out.len());
            push_escaped(&mut out, c);
        }
    }
    Some(out)
}

/// `c` as an escape: `\t`, `\n`, `\r`, else its code point as `\u{1b}`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
    }
}

/// Text from the user as one line of a message or report: every character that
/// would not show as itself (line breaks and tabs included) escaped, as
/// `\u{1b}]0;title\u{7}` or `name\nerror: forged`.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, Keep::Nothing, &mut |_, _, _| {}).map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Text written where two different values must stay different (a cell of a
/// table, a category of a plot): as [`escape`], with a backslash written `\\`,
/// so that a line break (`\n`) and a backslash followed by `n` stay apart.
pub fn escape_distinct(text: &str) -> Cow<'_, str> {
    if text.contains('\\') {
        Cow::Owned(escape(&text.replace('\\', "\\\\")).into_owned())
    } else {
        escape(text)
    }
}

/// Text quoted as lines (a message of several lines, a file): as [`escape`], but
/// line breaks (`\n`, `\r\n`) and tabs stay.
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_with(text, Keep::Layout, &mut |_, _, _| {}).map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Text from the user inside an SVG or other XML document (a title, a label):
/// escaped as [`escape`] does (XML cannot hold most control characters), then with
/// the characters XML gives meaning to as entities.
pub fn xml(text: &str) -> String {
    escape(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// JSON text (as serde_json writes it) whose strings hold no character a terminal
/// would act on or not show: those serde_json leaves as they are (DEL, C1 controls,
/// the byte order mark, bidirectional controls...) are written as `\u009b` escapes,
/// which read back as the same strings. Outside strings such JSON has only ASCII, so
/// control characters there are its layout and stay.
pub fn json(text: &str) -> Cow<'_, str> {
    // serde_json escapes C0 controls itself, so any left are layout.
    let raw = |c: char| is_hidden(c) && (!c.is_ascii() || c == '\u{7f}');
    // Only DEL and non-ASCII characters can be raw: a byte scan rules out most
    // documents (a run's stats are megabytes of ASCII) without decoding them.
    if !text.bytes().any(|b| b >= 0x7f) || !text.chars().any(raw) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer of JSON text that escapes as [`json`] does, on the way to `inner`:
/// a document of a gigabyte is written without being held as text first. Each
/// write must hold UTF-8 (a character cut between writes is joined).
#[derive(Debug)]
pub struct JsonWriter<W: std::io::Write> {
    inner: W,
    /// The start of a character the last write ended inside.
    pending: Vec<u8>,
}

impl<W: std::io::Write> JsonWriter<W> {
    pub fn new(inner: W) -> Self {
        JsonWriter {
            inner,
            pending: Vec::new(),
        }
    }

    /// The inner writer, after checking no character was left cut.
    pub fn finish(self) -> std::io::Result<W> {
        if self.pending.is_empty() {
            Ok(self.inner)
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "JSON text ended inside a character",
            ))
        }
    }

    fn pass(&mut self, text: &str) -> std::io::Result<()> {
        match json(text) {
            Cow::Borrowed(t) => self.inner.write_all(t.as_bytes()),
            Cow::Owned(t) => self.inner.write_all(t.as_bytes()),
        }
    }
}

impl<W: std::io::Write> std::io::Write for JsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        if !self.pending.is_empty() {
            // Complete the cut character from the start of this write.
            while !rest.is_empty() && self.pending.len() < 4 {
                self.pending.push(rest[0]);
                rest = &rest[1..];
                if let Ok(c) = std::str::from_utf8(&self.pending) {
                    let c = c.to_string();
                    self.pending.clear();
                    self.pass(&c)?;
                    break;
                }
            }
            if !self.pending.is_empty() {
                if self.pending.len() >= 4 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "JSON text is not UTF-8",
                    ));
                }
                return Ok(buf.len());
            }
        }
        let (text, cut) = match std::str::from_utf8(rest) {
            Ok(t) => (t, &[][..]),
            Err(e) if e.error_len().is_none() => {
                let (ok, cut) = rest.split_at(e.valid_up_to());
                // Valid up to `valid_up_to` by the error's own account.
                (std::str::from_utf8(ok).unwrap_or_default(), cut)
            }
            Err(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "JSON text is not UTF-8",
                ));
            }
        };
        self.pass(text)?;
        self.pending.extend_from_slice(cut);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A path as a message or report names it: shown by [`Path::display`], escaped.
pub fn path(path: &Path) -> String {
    escape(&path.display().to_string()).into_owned()
}

/// Text from the user as a message quotes it: escaped, and whole if short, else its
/// start and its length.
pub fn shorten(text: &str) -> String {
    const SHOWN: usize = 48;
    let escaped = escape(text);
    if escaped.len() <= SHOWN + 16 {
        return escaped.into_owned();
    }
    format!("{}... ({} bytes)", start(&escaped, SHOWN), text.len())
}

/// A multi-line message (a parser's, quoting a line of the file and marking a
/// column under it), escaped as [`escape_lines`] does, with every line longer than
/// 120 bytes cut to its first 100 and its length, so a marker line stays aligned
/// with the line it marks.
pub fn shorten_lines(text: &str) -> String {
    const LONG: usize = 120;
    const SHOWN: usize = 100;
    let escaped = escape_lines(text);
    let mut out = String::new();
    for (i, line) in escaped.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.len() <= LONG {
            out.push_str(line);
            continue;
        }
        out.push_str(&format!("{}... ({} bytes)", start(line, SHOWN), line.len()));
    }
    out
}

/// A TOML parser's message as the tools show it ([`shorten_lines`]), except its bare
/// "recursion limit" (a dotted key of thousands of parts carries no position) and
/// its "cannot recurse further" (a value nested as deep), which say what nests too
/// deeply and what to do.
pub fn toml_message(text: &str) -> String {
    shorten_lines(&toml_reason(text))
}

/// A TOML parser's message, its bare "recursion limit" explained (see [`toml_message`]).
pub fn toml_reason(text: &str) -> Cow<'_, str> {
    if text.trim() == "recursion limit" {
        return Cow::Borrowed(
            "keys nest too deeply (a dotted key of hundreds of parts, or tables as deep); write them a few levels deep",
        );
    }
    // The same limit met inside a value: the parser gives its position, then this.
    const DEEP_VALUE: &str = "cannot recurse further; max recursion depth met";
    if text.contains(DEEP_VALUE) {
        return Cow::Owned(text.replace(
            DEEP_VALUE,
            "values nest too deeply (arrays or inline tables hundreds of levels deep); write them a few levels deep",
        ));
    }
    Cow::Borrowed(text)
}

/// For a TOML string where a number or a boolean was expected (`cols = "4"`), when
/// its text is one (a quoted number is a string to TOML): how to fix it, as
/// ``remove the quotes: write `4`, not `"4"` ``.
pub fn unquote_hint(text: &str) -> Option<String> {
    let digits = text.replace('_', "");
    let scalar = text == "true"
        || text == "false"
        || digits.parse::<i128>().is_ok()
        || (digits.parse::<f64>().is_ok() && digits.bytes().any(|b| b.is_ascii_digit()));
    (scalar && !text.is_empty() && text.trim() == text).then(|| {
        let shown = shorten(text);
        format!("remove the quotes: write `{shown}`, not `\"{shown}\"`")
    })
}

/// The first at most `bytes` bytes of escaped text, cut at a character boundary
/// and never inside an escape (`\u{1b}` is shown whole or not at all).
fn start(escaped: &str, bytes: usize) -> &str {
    let mut end = bytes.min(escaped.len());
    while !escaped.is_char_boundary(end) {
        end -= 1;
    }
    // An escape cut short: back to its backslash.
    if let Some(open) = escaped[..end].rfind("\\u{")
        && !escaped[open..end].contains('}')
    {
        end = open;
    }
    &escaped[..end]
}

/// Text escaped as [`escape_lines`] does, with the way from offsets of the
/// original to offsets of the escaped text, for messages that point into it (a
/// diagnostic's spans into a source file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscapedLines<'a> {
    pub text: Cow<'a, str>,
    /// Each escaped character: (its offset and length in the original, the offset
    /// and length of its escape).
    escapes: Vec<[usize; 4]>,
}

impl<'a> EscapedLines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut at = Vec::new();
        let escaped = escape_with(text, Keep::Layout, &mut |i, c, o| at.push((i, c, o)));
        let Some(out) = escaped else {
            return EscapedLines {
                text: Cow::Borrowed(text),
                escapes: Vec::new(),
            };
        };
        let mut escapes = Vec::with_capacity(at.len());
        for (n, &(i, c, o)) in at.iter().enumerate() {
            // An escape ends where the text after the character starts again.
            let next = at.get(n + 1).map_or(text.len(), |e| e.0);
            let tail = next - i - c.len_utf8();
            let end = at.get(n + 1).map_or(out.len(), |e| e.2) - tail;
            escapes.push([i, c.len_utf8(), o, end - o]);
        }
        EscapedLines {
            text: Cow::Owned(out),
            escapes,
        }
    }

    /// Where byte `offset` of the original is in the escaped text (an offset inside
    /// an escaped character goes to the start of its escape).
    pub fn offset(&self, offset: usize) -> usize {
        let before = self.escapes.partition_point(|e| e[0] <= offset);
        match before.checked_sub(1).map(|i| self.escapes[i]) {
            None => offset,
            Some([at, len, out, _]) if offset < at + len => out,
            Some([at, len, out, out_len]) => offset - (at + len) + out + out_len,
        }
    }

    /// Where byte `offset` of the escaped text was in the original (an offset
    /// inside an escape goes to the start of its character).
    pub fn original(&self, offset: usize) -> usize {
        let before = self.escapes.partition_point(|e| e[2] <= offset);
        match before.checked_sub(1).map(|i| self.escapes[i]) {
            None => offset,
            Some([at, _, out, out_len]) if offset < out + out_len => at,
            Some([at, len, out, out_len]) => offset - (out + out_len) + at + len,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_json_writer_escapes_as_json_does_across_cut_writes() {
        use std::io::Write;
        let text = "{\"a\": \"caf\u{e9} \u{9b}x\u{202e}y\u{feff}\u{1f600}\"}\n";
        let want = json(text).into_owned();
        for step in [1, 2, 3, 5, 1000] {
            let mut w = JsonWriter::new(Vec::new());
            for chunk in text.as_bytes().chunks(step) {
                w.write_all(chunk).unwrap();
            }
            let got = String::from_utf8(w.finish().unwrap()).unwrap();
            assert_eq!(got, want, "chunks of {step}");
        }
        let mut w = JsonWriter::new(Vec::new());
        w.write_all(&[0xe2, 0x80]).unwrap();
        assert!(w.finish().is_err(), "a cut character at the end");
    }
    use super::*;

    #[test]
    fn quoted_numbers_and_booleans_get_a_hint() {
        assert_eq!(
            unquote_hint("4").as_deref(),
            Some("remove the quotes: write `4`, not `\"4\"`")
        );
        for text in ["1.5", "1e3", "-2", "1_000", "true", "false"] {
            assert!(unquote_hint(text).is_some(), "{text}");
        }
        for text in ["", "gto", "4 ", "inf", "nan", "True", "0x4"] {
            assert_eq!(unquote_hint(text), None, "{text}");
        }
    }

    #[test]
    fn long_lines_of_a_message_are_cut() {
        let text = format!(
            "error here\n  1 | {}\n    | {}^",
            "k".repeat(5000),
            " ".repeat(60)
        );
        let cut = shorten_lines(&text);
        assert_eq!(
            cut,
            format!(
                "error here\n  1 | {}... (5006 bytes)\n    | {}^",
                "k".repeat(94),
                " ".repeat(60)
            )
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        assert_eq!(shorten("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(shorten(&long), format!("{}... (200 bytes)", "é".repeat(24)));
    }

    #[test]
    fn terminal_controls_and_invisible_characters_are_escaped() {
        let osc = "\u{1b}]0;pwned\u{7}\u{1b}[31mRED\n\nerror: fake";
        assert_eq!(
            escape(osc),
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED\\n\\nerror: fake"
        );
        assert_eq!(
            escape("a\tb\rc\u{0}d\u{7f}e\u{9b}"),
            "a\\tb\\rc\\u{0}d\\u{7f}e\\u{9b}"
        );
        assert_eq!(escape("\u{feff}k"), "\\u{feff}k");
        // Trojan Source: a right-to-left override and an isolate.
        assert_eq!(escape("a\u{202e}b\u{2066}"), "a\\u{202e}b\\u{2066}");
        assert_eq!(
            escape("\u{200b}\u{2028}\u{e0041}"),
            "\\u{200b}\\u{2028}\\u{e0041}"
        );
        // Visible text, backslashes and other scripts stay as they are.
        for plain in ["stencil_pc.spu", "C:\\dir\\k.spu", "é ü 漢字 🦀", ""] {
            assert!(matches!(escape(plain), Cow::Borrowed(_)), "{plain}");
        }
    }

    #[test]
    fn text_in_xml_is_escaped_and_entities_are_written() {
        assert_eq!(
            xml("k</text><script>\u{1b}\"'&"),
            "k&lt;/text&gt;&lt;script&gt;\\u{1b}&quot;&apos;&amp;"
        );
    }

    #[test]
    fn json_strings_keep_their_value_and_lose_raw_controls() {
        let text = "{\n  \"k\": \"a\\u001b\u{7f}\u{9b}\u{feff}\u{e0041}\"\n}";
        assert_eq!(
            json(text),
            "{\n  \"k\": \"a\\u001b\\u007f\\u009b\\ufeff\\udb40\\udc41\"\n}"
        );
        assert!(matches!(json("{\n  \"k\": \"é\"\n}"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_their_breaks_and_tabs() {
        assert_eq!(
            escape_lines("a\tb\r\nc\rd\n\u{1b}[2J"),
            "a\tb\r\nc\\rd\n\\u{1b}[2J"
        );
        assert!(matches!(escape_lines("a\n\tb\r\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn shortened_text_is_escaped_and_never_cut_inside_an_escape() {
        assert_eq!(shorten("k\u{1b}[31m"), "k\\u{1b}[31m");
        let long = format!("{}\u{1b}{}", "k".repeat(45), "k".repeat(100));
        assert_eq!(shorten(&long), format!("{}... (146 bytes)", "k".repeat(45)));
        let lines = format!("{}\u{7}\n", "k".repeat(200));
        assert!(shorten_lines(&lines).starts_with(&"k".repeat(100)));
        assert!(!shorten_lines(&lines).contains('\u{7}'));
    }

    #[test]
    fn offsets_of_the_original_map_into_the_escaped_text() {
        let src = "ab\u{1b}cd\u{feff}e\r\nf\rg";
        let e = EscapedLines::new(src);
        assert_eq!(e.text, escape_lines(src));
        assert_eq!(e.text, "ab\\u{1b}cd\\u{feff}e\r\nf\\rg");
        let at = |o: usize| e.offset(o);
        assert_eq!(at(0), 0);
        assert_eq!(at(2), 2, "the escape starts where the character did");
        assert_eq!(&e.text[at(3)..at(5)], "cd");
        assert_eq!(&e.text[at(5)..at(8)], "\\u{feff}");
        assert_eq!(at(6), at(5), "inside a character: its escape");
        assert_eq!(&e.text[at(8)..at(9)], "e");
        assert_eq!(&e.text[at(9)..at(11)], "\r\n", "a CR LF pair stays");
        assert_eq!(&e.text[at(12)..at(13)], "\\r");
        assert_eq!(&e.text[at(13)..], "g");
        assert_eq!(at(src.len()), e.text.len());
        for o in 0..=src.len() {
            if src.is_char_boundary(o) {
                assert_eq!(e.original(e.offset(o)), o, "{o}");
            }
        }
        assert_eq!(e.original(4), 2, "inside an escape: its character");
        assert_eq!(EscapedLines::new("plain").offset(3), 3);
    }
}
