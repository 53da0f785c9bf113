//! C's `printf` formatting, as the built-in `vprintf` ([`crate::exec::printf`])
//! applies it: conversions `d i u x X o c s p f F e E g G %`, the flags `- + space
//! 0 #`, widths and precisions (also `*`) and the lengths `hh h l ll z j t`, with
//! the same digits as the C library (floats are correctly rounded, ties to even).
//! Wide characters (`%ls`, `%lc`), `%a` and `long double` are refused.

/// Largest width or precision of a conversion.
pub const FIELD_LIMIT: i64 = 4096;
/// Most arguments one call takes, as CUDA's `printf`.
pub const MAX_ARGS: usize = 32;

/// Source of a call's arguments.
pub trait ArgSource {
    /// The next argument of `size` bytes (4 or 8), at the next multiple of its size.
    fn next(&mut self, size: u64) -> Result<u64, String>;
    /// Arguments taken so far.
    fn used(&self) -> usize;
}

/// One conversion's flags, width and precision.
#[derive(Debug, Clone, Copy, Default)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    zero: bool,
    hash: bool,
    width: usize,
    prec: Option<usize>,
}

/// Formats `fmt` as C's `printf` does, taking arguments from `args` and `%s`
/// strings from `string` (given the address and the precision: with one, at
/// most that many bytes are read and no terminating zero is needed, as in C).
pub fn format_c(
    fmt: &[u8],
    args: &mut dyn ArgSource,
    string: &mut dyn FnMut(u64, Option<usize>) -> Result<Vec<u8>, String>,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(fmt.len() + 16);
    format_c_into(fmt, args, string, &mut out)?;
    Ok(out)
}

/// [`format_c`], appending the text to `out` (on an error, part of it may be
/// there).
pub fn format_c_into(
    fmt: &[u8],
    args: &mut dyn ArgSource,
    string: &mut dyn FnMut(u64, Option<usize>) -> Result<Vec<u8>, String>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            // The text up to the next conversion, as it is.
            let run = fmt[i..]
                .iter()
                .position(|&c| c == b'%')
                .unwrap_or(fmt.len() - i);
            out.extend_from_slice(&fmt[i..i + run]);
            i += run;
            continue;
        }
        let start = i;
        i += 1;
        let at = |i: usize| fmt.get(i).copied();
        let shown = |from: usize, to: usize| String::from_utf8_lossy(&fmt[from..to]).into_owned();
        let mut spec = Spec::default();
        while let Some(f) = at(i) {
            match f {
                b'-' => spec.minus = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'0' => spec.zero = true,
                b'#' => spec.hash = true,
                _ => break,
            }
            i += 1;
        }
        // Arguments past the last one CUDA takes: the conversion is printed as written.
        let full = |args: &dyn ArgSource| args.used() >= MAX_ARGS;
        let mut verbatim = false;
        let field = |v: i64, what: &str, end: usize| -> Result<usize, String> {
            if v > FIELD_LIMIT {
                Err(format!(
                    "the {what} {v} of `{}` is larger than {FIELD_LIMIT}; use a smaller one",
                    shown(start, end.min(fmt.len()))
                ))
            } else {
                Ok(v as usize)
            }
        };
        if at(i) == Some(b'*') {
            i += 1;
            if full(args) {
                verbatim = true;
            } else {
                let w = args.next(4)? as u32 as i32;
                if w < 0 {
                    spec.minus = true;
                }
                spec.width = field(i64::from(w).abs(), "width", i)?;
            }
        } else {
            let (n, next) = number(fmt, i);
            i = next;
            spec.width = field(n, "width", i)?;
        }
        if at(i) == Some(b'.') {
            i += 1;
            if at(i) == Some(b'*') {
                i += 1;
                if full(args) {
                    verbatim = true;
                } else {
                    let p = args.next(4)? as u32 as i32;
                    spec.prec = if p < 0 {
                        None
                    } else {
                        Some(field(i64::from(p), "precision", i)?)
                    };
                }
            } else {
                let (n, next) = number(fmt, i);
                i = next;
                spec.prec = Some(field(n, "precision", i)?);
            }
        }
        // Length: `hh`, `h`, `l`, `ll`, `z`, `j`, `t`; `L` (long double) has no GPU form.
        let mut long = false;
        let mut narrow = 0u32;
        loop {
            match at(i) {
                Some(b'l' | b'z' | b'j' | b't') => long = true,
                Some(b'h') => narrow = if narrow == 16 { 8 } else { 16 },
                _ => break,
            }
            i += 1;
        }
        let Some(conv) = at(i) else {
            return Err(format!(
                "the format ends inside the conversion `{}`; write `%%` for a percent sign",
                shown(start, fmt.len())
            ));
        };
        i += 1;
        if conv == b'%' {
            out.push(b'%');
            continue;
        }
        if long && matches!(conv, b's' | b'c') {
            // `wchar_t` text (4-byte UTF-32 on Linux) read as bytes would stop at
            // the first character's zero bytes.
            return Err(format!(
                "the conversion `{}` (wide characters, `wchar_t`) is not supported; print `char` text with `%s` or `%c`",
                shown(start, i)
            ));
        }
        if verbatim || (full(args) && b"diouxXcspfFeEgG".contains(&conv)) {
            out.extend_from_slice(&fmt[start..i]);
            continue;
        }
        let int_size = if long { 8 } else { 4 };
        match conv {
            b'd' | b'i' => {
                let raw = args.next(int_size)?;
                let v = match (long, narrow) {
                    (true, _) => raw as i64,
                    (false, 8) => i64::from(raw as u8 as i8),
                    (false, 16) => i64::from(raw as u16 as i16),
                    _ => i64::from(raw as u32 as i32),
                };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                integer(out, &spec, sign, "", v.unsigned_abs().to_string(), false);
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = args.next(int_size)?;
                let v = match (long, narrow) {
                    (true, _) => raw,
                    (false, 8) => u64::from(raw as u8),
                    (false, 16) => u64::from(raw as u16),
                    _ => u64::from(raw as u32),
                };
                let (digits, prefix) = match conv {
                    b'u' => (v.to_string(), ""),
                    b'x' => (
                        format!("{v:x}"),
                        if spec.hash && v != 0 { "0x" } else { "" },
                    ),
                    b'X' => (
                        format!("{v:X}"),
                        if spec.hash && v != 0 { "0X" } else { "" },
                    ),
                    _ => (format!("{v:o}"), ""),
                };
                integer(out, &spec, "", prefix, digits, conv == b'o' && spec.hash);
            }
            b'c' => {
                let v = args.next(4)? as u8;
                pad(out, &spec, b"", &[v], false);
            }
            b's' => {
                // Address 0 too goes to `string`: on the SPU it may be a local
                // or shared array's, not a null pointer (see `printf::local_string_error`).
                // With precision 0 nothing is read, as in C, so any address will do.
                let addr = args.next(8)?;
                let mut s = if spec.prec == Some(0) {
                    Vec::new()
                } else {
                    string(addr, spec.prec)?
                };
                if let Some(p) = spec.prec {
                    s.truncate(p);
                }
                pad(out, &spec, b"", &s, false);
            }
            b'p' => {
                let v = args.next(8)?;
                if v == 0 {
                    pad(out, &spec, b"", b"(nil)", false);
                } else {
                    let sign = if spec.plus {
                        "+"
                    } else if spec.space {
                        " "
                    } else {
                        ""
                    };
                    integer(out, &spec, sign, "0x", format!("{v:x}"), false);
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let v = f64::from_bits(args.next(8)?);
                float(out, &spec, conv, v);
            }
            b'n' => {
                return Err(format!(
                    "`{}` writes to memory, which the SPU's `printf` does not do; drop it",
                    shown(start, i)
                ));
            }
            b'a' | b'A' | b'L' => {
                return Err(format!(
                    "the conversion `{}` is not supported; use `%e` or `%g`",
                    shown(start, i)
                ));
            }
            _ => {
                return Err(format!(
                    "`{}` is not a `printf` conversion; write `%%` for a percent sign",
                    shown(start, i)
                ));
            }
        }
    }
    Ok(())
}

/// The decimal number at `i` (0 if none) and where it ends; saturates.
fn number(fmt: &[u8], mut i: usize) -> (i64, usize) {
    let mut n: i64 = 0;
    while let Some(d) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
        i += 1;
    }
    (n, i)
}

/// An integer conversion: `sign` and `prefix` (`0x`), then the digits to at least
/// the precision; `octal_hash`: the first digit must be a zero.
fn integer(
    out: &mut Vec<u8>,
    spec: &Spec,
    sign: &str,
    prefix: &str,
    digits: String,
    octal_hash: bool,
) {
    let mut digits = if spec.prec == Some(0) && digits == "0" {
        String::new()
    } else {
        digits
    };
    if let Some(p) = spec.prec
        && digits.len() < p
    {
        digits = "0".repeat(p - digits.len()) + &digits;
    }
    if octal_hash && !digits.starts_with('0') {
        digits.insert(0, '0');
    }
    let head = format!("{sign}{prefix}");
    pad(
        out,
        spec,
        head.as_bytes(),
        digits.as_bytes(),
        spec.zero && spec.prec.is_none(),
    );
}

/// `head` (sign, prefix) and `body` padded to the width: zeros between them with
/// `zeros` (and no `-`), else spaces on the left (or the right with `-`).
fn pad(out: &mut Vec<u8>, spec: &Spec, head: &[u8], body: &[u8], zeros: bool) {
    let len = head.len() + body.len();
    let fill = spec.width.saturating_sub(len);
    if spec.minus {
        out.extend_from_slice(head);
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if zeros {
        out.extend_from_slice(head);
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(body);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(head);
        out.extend_from_slice(body);
    }
}

/// `%f`, `%e`, `%g` and their capitals, as C formats a double.
fn float(out: &mut Vec<u8>, spec: &Spec, conv: u8, v: f64) {
    let upper = conv.is_ascii_uppercase();
    let sign = if v.is_sign_negative() {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    if !v.is_finite() {
        let body = match (v.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        pad(out, spec, sign.as_bytes(), body.as_bytes(), false);
        return;
    }
    let a = v.abs();
    let prec = spec.prec.unwrap_or(6);
    let mut body = match conv.to_ascii_lowercase() {
        b'f' => fixed(a, prec, spec.hash),
        b'e' => exponent(a, prec, spec.hash),
        _ => {
            let p = prec.max(1);
            let x = if a == 0.0 {
                0
            } else {
                exponent_of(&format!("{:.*e}", p - 1, a))
            };
            let mut s = if (p as i64) > x && x >= -4 {
                fixed(a, (p as i64 - 1 - x) as usize, spec.hash)
            } else {
                exponent(a, p - 1, spec.hash)
            };
            if !spec.hash {
                s = strip_zeros(&s);
            }
            s
        }
    };
    if upper {
        body = body.to_ascii_uppercase();
    }
    pad(out, spec, sign.as_bytes(), body.as_bytes(), spec.zero);
}

fn fixed(a: f64, prec: usize, hash: bool) -> String {
    let mut s = format!("{a:.prec$}");
    if hash && prec == 0 {
        s.push('.');
    }
    s
}

/// `d.ddde+XX` (at least two exponent digits, as C).
fn exponent(a: f64, prec: usize, hash: bool) -> String {
    let s = format!("{a:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i64 = exp.parse().unwrap_or(0);
    let dot = if hash && prec == 0 { "." } else { "" };
    format!(
        "{mant}{dot}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

fn exponent_of(s: &str) -> i64 {
    s.split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0)
}

/// `%g` without `#`: trailing zeros of the fraction go, and a bare point.
fn strip_zeros(s: &str) -> String {
    let (mant, exp) = match s.find('e') {
        Some(k) => (&s[..k], &s[k..]),
        None => (s, ""),
    };
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments from a list of (size, value), laid out as `vprintf` reads them.
    struct List(Vec<u64>, usize);

    impl ArgSource for List {
        fn next(&mut self, _size: u64) -> Result<u64, String> {
            let v = self.0.get(self.1).copied().ok_or("too few")?;
            self.1 += 1;
            Ok(v)
        }
        fn used(&self) -> usize {
            self.1
        }
    }

    fn f(fmt: &str, args: &[u64]) -> Result<String, String> {
        let mut a = List(args.to_vec(), 0);
        format_c(fmt.as_bytes(), &mut a, &mut |_, _| Ok(b"str".to_vec()))
            .map(|v| String::from_utf8(v).expect("ascii"))
    }

    fn d(v: f64) -> u64 {
        v.to_bits()
    }

    #[test]
    fn formats_as_c() {
        assert_eq!(
            f("%5d|%-5d|%05d", &[42, 42, (-42i32) as u32 as u64]).unwrap(),
            "   42|42   |-0042"
        );
        assert_eq!(
            f("%#x %#o %X %.0d|", &[255, 8, 255, 0]).unwrap(),
            "0xff 010 FF |"
        );
        assert_eq!(
            f("%.3e %g %g %G", &[d(1234.5), d(0.0001), d(1e20), d(1e-5)]).unwrap(),
            "1.234e+03 0.0001 1e+20 1E-05"
        );
        assert_eq!(
            f("%*.*f|%s|%c%%", &[8, 2, d(3.45678), 1, 65]).unwrap(),
            "    3.46|str|A%"
        );
        assert_eq!(
            f("%lld %lu", &[u64::MAX, u64::MAX]).unwrap(),
            "-1 18446744073709551615"
        );
        assert_eq!(f("%p %p", &[0, 0x10000]).unwrap(), "(nil) 0x10000");
    }

    /// With precision 0 a `%s` reads nothing, as in C: a null or bad pointer
    /// prints an empty (padded) field rather than failing.
    #[test]
    fn a_zero_precision_string_reads_nothing() {
        // `%.*s` takes its precision (0) and then the address (8).
        let mut a = List(vec![0, 0, 0, 8], 0);
        let out = format_c(b"[%.0s|%3.0s|%.*s]", &mut a, &mut |addr, _| {
            Err(format!("read of {addr:#x}"))
        });
        assert_eq!(out.as_deref(), Ok(&b"[|   |]"[..]));
        assert_eq!(a.used(), 4, "every argument is consumed");
    }

    #[test]
    fn bad_formats_are_errors() {
        assert!(f("50%", &[]).unwrap_err().contains("ends inside"));
        assert!(
            f("%q", &[])
                .unwrap_err()
                .contains("`%q` is not a `printf` conversion")
        );
        assert!(f("%5000d", &[1]).unwrap_err().contains("larger than 4096"));
        for wide in ["%ls", "%lc", "%-5ls", "%.2ls"] {
            let err = f(wide, &[0x1000]).unwrap_err();
            assert!(
                err.contains(&format!("the conversion `{wide}` (wide characters")),
                "{err}"
            );
        }
    }
}
