//! The header of a `.npy` file: a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, read in one pass
//! that never goes back, with values nested at most [`MAX_DEPTH`] deep, so a hostile
//! header costs time linear in its length and a bounded stack. As NumPy's
//! `ast.literal_eval` does, a key given twice keeps its last value, and integers
//! may be written in hex, octal or binary and with `_`; a key besides the three
//! NumPy writes is refused, as NumPy refuses it.

/// Deepest nesting of tuples, lists and dicts accepted (NumPy's own headers nest
/// two deep; a record dtype a few more).
pub const MAX_DEPTH: usize = 32;

/// What a header says about the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub descr: Descr,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
}

/// The `descr` of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descr {
    /// A type string: `<f4`, `|u1`.
    Type(String),
    /// Anything else (a record dtype's list of fields), as its text in the header.
    Other(String),
}

/// A value of the literal: what the three keys need, the rest only skipped.
#[derive(Debug)]
enum Value {
    Str(String),
    Bool(bool),
    /// An integer's digits, with its sign.
    Int(String),
    /// A tuple `( )` (`list`: a list `[ ]`).
    Seq {
        items: Vec<Value>,
        list: bool,
    },
    /// Anything else (None, a float, a dict).
    Other,
}

/// Parses the header text; the error says what is wrong and at which byte.
pub fn parse(text: &str) -> Result<Header, String> {
    let mut p = Parser {
        text: text.as_bytes(),
        at: 0,
    };
    p.blank();
    p.expect(b'{', "the header to start with `{`")?;
    // Each key's last value, with where it starts and its text.
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    loop {
        p.blank();
        if p.eat(b'}') {
            break;
        }
        let key_at = p.at;
        let key = match p.value(1)? {
            Value::Str(k) => k,
            _ => return Err(p.error_at(key_at, "a quoted key")),
        };
        p.blank();
        p.expect(b':', "`:` after a key")?;
        p.blank();
        let start = p.at;
        let value = p.value(1)?;
        let source = &text[start..p.at];
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran_order,
            "shape" => &mut shape,
            _ => {
                return Err(format!(
                    "its header has the key `{}` (at byte {key_at}), which NumPy refuses: a header holds `descr`, `fortran_order` and `shape` only; save the array with `np.save`",
                    spu_io::quote::shorten(&key)
                ));
            }
        };
        *slot = Some((value, start, source));
        p.blank();
        if !p.eat(b',') {
            p.blank();
            p.expect(b'}', "`,` or `}` after a value")?;
            break;
        }
    }
    p.blank();
    if p.at < text.len() {
        return Err(p.error_at(p.at, "nothing after the closing `}`"));
    }
    let missing = |key: &str| format!("its header has no `{key}`; save the array with `np.save`");
    let descr = match descr.ok_or_else(|| missing("descr"))? {
        (Value::Str(s), _, _) => Descr::Type(s),
        (_, _, source) => Descr::Other(source.to_string()),
    };
    let fortran_order = match fortran_order.ok_or_else(|| missing("fortran_order"))? {
        (Value::Bool(b), _, _) => b,
        (_, start, _) => return Err(p.error_at(start, "`True` or `False` for `fortran_order`")),
    };
    let (shape, _, _) = shape.ok_or_else(|| missing("shape"))?;
    let shape = dims(shape).map_err(|why| format!("its shape {why}"))?;
    Ok(Header {
        descr,
        fortran_order,
        shape,
    })
}

/// The dimensions of a shape value: a tuple (or list) of non-negative integers.
fn dims(value: Value) -> Result<Vec<u64>, String> {
    let items = match value {
        Value::Seq { items, list: false } => items,
        Value::Seq { list: true, .. } => {
            return Err(
                "is a list, not a tuple of integers: NumPy writes a shape as `(16,)`".into(),
            );
        }
        Value::Int(digits) => {
            let digits = spu_io::quote::shorten(&digits);
            return Err(format!(
                "is the number {digits}, not a tuple of integers: a one-dimensional shape is written `({digits},)`"
            ));
        }
        _ => return Err("is not a tuple of integers".into()),
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::Int(digits) => digits.parse::<u64>().map_err(|_| {
                let digits = spu_io::quote::shorten(&digits);
                format!("has dimension {digits}, which is not a size")
            }),
            _ => Err("is not a tuple of integers".into()),
        })
        .collect()
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error_at(&self, at: usize, expected: &str) -> String {
        let found = match self.text.get(at) {
            None => "the end of the header".to_string(),
            Some(&b) if b.is_ascii_graphic() => format!("`{}`", char::from(b)),
            Some(&b) => format!("byte {b:#04x}"),
        };
        format!(
            "its header is not a Python dict literal: expected {expected} at byte {at} of the header, found {found}"
        )
    }

    fn blank(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.text.get(self.at) == Some(&byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, byte: u8, expected: &str) -> Result<(), String> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error_at(self.at, expected))
        }
    }

    /// One value at nesting `depth` (the header's dict is 0).
    fn value(&mut self, depth: usize) -> Result<Value, String> {
        let Some(&first) = self.text.get(self.at) else {
            return Err(self.error_at(self.at, "a value"));
        };
        if matches!(first, b'(' | b'[' | b'{') && depth > MAX_DEPTH {
            return Err(format!(
                "its header nests values more than {MAX_DEPTH} deep (at byte {} of the header); NumPy never writes such a header",
                self.at
            ));
        }
        match first {
            b'\'' | b'"' => self.string(first),
            b'(' => self.sequence(b')', depth),
            b'[' => self.sequence(b']', depth),
            b'{' => self.dict(depth),
            b'-' | b'+' | b'0'..=b'9' | b'.' => Ok(self.number()),
            b if b.is_ascii_alphabetic() => {
                let start = self.at;
                while self
                    .text
                    .get(self.at)
                    .is_some_and(u8::is_ascii_alphanumeric)
                {
                    self.at += 1;
                }
                match &self.text[start..self.at] {
                    b"True" => Ok(Value::Bool(true)),
                    b"False" => Ok(Value::Bool(false)),
                    b"None" => Ok(Value::Other),
                    _ => Err(self.error_at(start, "a value")),
                }
            }
            _ => Err(self.error_at(self.at, "a value")),
        }
    }

    fn string(&mut self, quote: u8) -> Result<Value, String> {
        let start = self.at;
        let unclosed = |p: &Self| p.error_at(start, "a string closed on the same line");
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.text.get(self.at) {
                None | Some(b'\n') => return Err(unclosed(self)),
                Some(b'\\') => {
                    let Some(&next) = self.text.get(self.at + 1) else {
                        return Err(unclosed(self));
                    };
                    if next == b'N' {
                        return Err(format!(
                            "its header has a character named by `\\N{{...}}` at byte {} of the header, which is not read here; write the character itself",
                            self.at
                        ));
                    }
                    self.at += 2;
                    self.escape(next, &mut out)
                        .map_err(|what| self.error_at(start, what))?;
                }
                Some(&b) if b == quote => {
                    self.at += 1;
                    return Ok(Value::Str(String::from_utf8_lossy(&out).into_owned()));
                }
                Some(&b) => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
    }

    /// Appends the character of Python's escape `\` `e` (and the digits after
    /// it, which it consumes) to `out`; an unknown escape keeps its backslash,
    /// as Python does.
    fn escape(&mut self, e: u8, out: &mut Vec<u8>) -> Result<(), &'static str> {
        if e == b'\n' {
            // A line continuation: nothing.
            return Ok(());
        }
        let simple = match e {
            b'\\' | b'\'' | b'"' => Some(e),
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            return Ok(());
        }
        let (digits, radix, what) = match e {
            b'x' => (2, 16, "two hex digits after `\\x`"),
            b'u' => (4, 16, "four hex digits after `\\u`"),
            b'U' => (8, 16, "eight hex digits after `\\U`"),
            b'0'..=b'7' => {
                // Up to three octal digits, the first already read.
                self.at -= 1;
                let n = self.text[self.at..]
                    .iter()
                    .take(3)
                    .take_while(|d| (b'0'..=b'7').contains(d))
                    .count();
                (n, 8, "octal digits")
            }
            _ => {
                out.extend([b'\\', e]);
                return Ok(());
            }
        };
        let text = self
            .text
            .get(self.at..self.at + digits)
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(what)?;
        let code = u32::from_str_radix(text, radix).map_err(|_| what)?;
        let c = char::from_u32(code).ok_or("a character code Unicode has")?;
        self.at += digits;
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        Ok(())
    }

    fn number(&mut self) -> Value {
        let start = self.at;
        if matches!(self.text.get(self.at), Some(b'-' | b'+')) {
            self.at += 1;
        }
        if let Some(radix) = self.radix() {
            return self.radix_int(start, radix);
        }
        let mut integer = true;
        while let Some(&b) = self.text.get(self.at) {
            match b {
                b'0'..=b'9' | b'_' => {}
                b'.' | b'e' | b'E' | b'j' | b'J' => integer = false,
                b'-' | b'+' if matches!(self.text[self.at - 1], b'e' | b'E') => {}
                _ => break,
            }
            self.at += 1;
        }
        // Python 2 wrote long integers with an `L`.
        let digits = String::from_utf8_lossy(&self.text[start..self.at]).replace('_', "");
        if integer && self.eat(b'L') {
            return Value::Int(digits);
        }
        // Python 3 refuses a decimal literal with a leading zero (`016`), which
        // Python 2 read as octal; zeros alone (`00`) are 0.
        let body = digits.trim_start_matches(['+', '-']);
        let octal_like = body.len() > 1 && body.starts_with('0') && body.bytes().any(|b| b != b'0');
        if integer && !octal_like && digits.bytes().any(|b| b.is_ascii_digit()) {
            Value::Int(digits.trim_start_matches('+').to_string())
        } else {
            Value::Other
        }
    }

    /// The radix of a `0x`, `0o` or `0b` prefix at the current byte, if one is there.
    fn radix(&self) -> Option<u32> {
        match (self.text.get(self.at), self.text.get(self.at + 1)) {
            (Some(b'0'), Some(b'x' | b'X')) => Some(16),
            (Some(b'0'), Some(b'o' | b'O')) => Some(8),
            (Some(b'0'), Some(b'b' | b'B')) => Some(2),
            _ => None,
        }
    }

    /// An integer in hex, octal or binary (its prefix at the current byte, its
    /// sign from `start`), as decimal digits; one no `u64` holds keeps its text,
    /// which no size reads.
    fn radix_int(&mut self, start: usize, radix: u32) -> Value {
        self.at += 2;
        let digits_at = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.at += 1;
        }
        let text = String::from_utf8_lossy(&self.text[start..self.at]).into_owned();
        let digits = String::from_utf8_lossy(&self.text[digits_at..self.at]).replace('_', "");
        match u64::from_str_radix(&digits, radix) {
            Ok(v) if self.text[start] == b'-' && v != 0 => Value::Int(format!("-{v}")),
            Ok(v) => Value::Int(v.to_string()),
            Err(_) => Value::Int(text),
        }
    }

    /// A tuple or list: values separated by commas, a trailing comma allowed.
    /// A tuple or list; as in Python, one value in parentheses without a comma,
    /// `(4096)`, is that value, not a tuple.
    fn sequence(&mut self, close: u8, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.blank();
            if self.eat(close) {
                return Ok(Value::Seq {
                    items,
                    list: close == b']',
                });
            }
            items.push(self.value(depth + 1)?);
            self.blank();
            if !self.eat(b',') {
                self.blank();
                self.expect(close, &format!("`,` or `{}`", char::from(close)))?;
                if close == b')' && items.len() == 1 {
                    return Ok(items.pop().expect("one item"));
                }
                return Ok(Value::Seq {
                    items,
                    list: close == b']',
                });
            }
        }
    }

    /// A dict inside a value: skipped, keys and values read as values.
    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        loop {
            self.blank();
            if self.eat(b'}') {
                return Ok(Value::Other);
            }
            self.value(depth + 1)?;
            self.blank();
            self.expect(b':', "`:` after a key")?;
            self.blank();
            self.value(depth + 1)?;
            self.blank();
            if !self.eat(b',') {
                self.blank();
                self.expect(b'}', "`,` or `}` after a value")?;
                return Ok(Value::Other);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_headers_parse() {
        let h = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n")
            .unwrap();
        assert_eq!(
            h,
            Header {
                descr: Descr::Type("<f4".into()),
                fortran_order: false,
                shape: vec![2, 3],
            }
        );
        let h = parse("{\"shape\": (5,), \"fortran_order\": True, \"descr\": \"|u1\"}").unwrap();
        assert_eq!((h.shape, h.fortran_order), (vec![5], true));
        assert_eq!(
            parse("{'descr':'<u4','fortran_order':False,'shape':()}")
                .unwrap()
                .shape,
            Vec::<u64>::new()
        );
        // Python 2's long integers and a record dtype, with values of every kind.
        let h = parse(
            "{'descr': [('a', '<f4'), ('b', '<i4', (2,)), ('c', {'k': [1.5, None, -2e3]})], 'fortran_order': False, 'shape': (3L,), }",
        )
        .unwrap();
        assert_eq!(h.shape, vec![3]);
        assert_eq!(
            h.descr,
            Descr::Other(
                "[('a', '<f4'), ('b', '<i4', (2,)), ('c', {'k': [1.5, None, -2e3]})]".into()
            )
        );
    }

    /// Strings decode Python's escapes, as NumPy reads them.
    #[test]
    fn strings_decode_pythons_escapes() {
        let descr = |d: &str| {
            parse(&format!(
                "{{'descr': '{d}', 'fortran_order': False, 'shape': (1,)}}"
            ))
            .map(|h| h.descr)
        };
        for d in [
            r"\u003cu4",
            r"\x3cu4",
            r"\074u4",
            r"\U0000003cu4",
            r"<\u0075\x34",
        ] {
            assert_eq!(descr(d), Ok(Descr::Type("<u4".into())), "{d}");
        }
        assert_eq!(descr(r"<u4\x1b"), Ok(Descr::Type("<u4\u{1b}".into())));
        assert_eq!(descr(r"<\'u4"), Ok(Descr::Type("<'u4".into())));
        // An unknown escape keeps its backslash.
        assert_eq!(descr(r"<\qu4"), Ok(Descr::Type("<\\qu4".into())));
        for bad in [r"\x3", r"\u12", r"\xzz", r"\U00110000"] {
            assert!(descr(bad).is_err(), "{bad}");
        }
        // A line continuation is nothing; a named character is refused, saying so.
        assert_eq!(descr("<u\\\n4"), Ok(Descr::Type("<u4".into())));
        let e = descr(r"\N{LESS-THAN SIGN}u4").unwrap_err();
        assert!(e.contains("`\\N{...}`"), "{e}");
    }

    #[test]
    fn malformed_headers_say_what_and_where() {
        let e = parse("{'descr': '<f4', 'fortran_order': False}").unwrap_err();
        assert!(e.contains("no `shape`"), "{e}");
        let e = parse("{'descr': '<f4' 'shape': (1,)}").unwrap_err();
        assert!(e.contains("`,` or `}` after a value at byte 16"), "{e}");
        let e = parse("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}").unwrap_err();
        assert!(e.contains("`True` or `False`"), "{e}");
        let e = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}").unwrap_err();
        assert!(e.contains("dimension -1"), "{e}");
        let e = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}").unwrap_err();
        assert!(e.contains("not a tuple of integers"), "{e}");
        let e = parse("{'descr': '<f4 }").unwrap_err();
        assert!(e.contains("closed on the same line"), "{e}");
        assert!(parse("{} x").unwrap_err().contains("nothing after"));
        // What NumPy refuses: a key it does not write, a shape that is a list or
        // a number in parentheses, not a tuple.
        let e =
            parse("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}").unwrap_err();
        assert!(
            e.contains("the key `x`") && e.contains("`descr`, `fortran_order` and `shape` only"),
            "{e}"
        );
        let e = parse("{'descr': '<f4', 'fortran_order': False, 'shape': [16]}").unwrap_err();
        assert!(e.contains("its shape is a list, not a tuple"), "{e}");
        let e = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (4096)}").unwrap_err();
        assert!(e.contains("its shape is the number 4096, not a tuple of integers: a one-dimensional shape is written `(4096,)`"), "{e}");
        assert_eq!(
            parse("{'descr': '<f4', 'fortran_order': False, 'shape': ((4096),)}")
                .unwrap()
                .shape,
            vec![4096]
        );
        assert!(parse("").unwrap_err().contains("the end of the header"));
    }

    /// What Python's `ast.literal_eval`, which NumPy reads a header with, accepts:
    /// a key twice keeps its last value (the first need not be valid), and
    /// integers in hex, octal, binary or with `_`.
    #[test]
    fn what_numpy_accepts_is_accepted() {
        let h = parse(
            "{'descr': '<i4', 'fortran_order': 0, 'shape': (1.5,), 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
        )
        .unwrap();
        assert_eq!(
            h,
            Header {
                descr: Descr::Type("<f4".into()),
                fortran_order: false,
                shape: vec![4],
            }
        );
        let h = parse(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (0x10, 0o17, 0B101, 1_000, 0x_ff)}",
        )
        .unwrap();
        assert_eq!(h.shape, vec![16, 15, 5, 1000, 255]);
        let e = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (-0x10,)}").unwrap_err();
        assert!(e.contains("dimension -16"), "{e}");
        let e =
            parse("{'descr': '<f4', 'fortran_order': False, 'shape': (0x1_0000_0000_0000_0000,)}")
                .unwrap_err();
        assert!(
            e.contains("dimension 0x1_0000_0000_0000_0000, which is not a size"),
            "{e}"
        );
        // Python 3 refuses a leading zero (Python 2 read `016` as octal 14).
        for shape in ["(016,)", "(00016,)", "(4, 08)"] {
            let text = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}}}");
            assert!(parse(&text).is_err(), "{shape}");
        }
        let h = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (00, 0_0)}").unwrap();
        assert_eq!(h.shape, vec![0, 0]);
    }

    #[test]
    fn deep_nesting_is_refused_at_the_limit() {
        let nested = |n: usize, open: &str, close: &str| {
            format!(
                "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (1,)}}",
                open.repeat(n),
                close.repeat(n)
            )
        };
        assert!(parse(&nested(MAX_DEPTH, "[", "]")).is_ok());
        let e = parse(&nested(MAX_DEPTH + 1, "[", "]")).unwrap_err();
        assert!(e.contains("more than 32 deep"), "{e}");
        // Far deeper than any stack would hold, and quick to refuse.
        let started = std::time::Instant::now();
        for (open, close) in [("(", ")"), ("[", "]"), ("{'k': ", "}")] {
            assert!(parse(&nested(100_000, open, close)).is_err());
        }
        let shape = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': {}1{}}}",
            "(".repeat(8000),
            ",)".repeat(8000)
        );
        assert!(parse(&shape).unwrap_err().contains("more than 32 deep"));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
