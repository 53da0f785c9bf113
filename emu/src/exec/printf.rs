//! The built-in `vprintf` (the `printf` instruction): each thread's call formats
//! its format string (in global memory) with its argument buffer (in its local
//! memory, laid out as CUDA's `vprintf` takes it: each argument at the next multiple
//! of its size, `float`s promoted to `double`), as C's `printf` does. The texts are
//! kept in a [`PrintLog`] by (block, warp, lane, program order) and printed after
//! the run, so the output is the same whatever the order units ran in.
//!
//! Bounds: a format string of at most [`FORMAT_LIMIT`] bytes, widths and
//! precisions up to [`FIELD_LIMIT`], [`MAX_ARGS`] arguments per call (as CUDA: the
//! conversions past them are printed as written), and [`OUTPUT_LIMIT`] bytes of
//! output per run: past it the texts last in the printing order are dropped and
//! counted. A bad format is a fault of the thread that printed it.

use crate::exec::fault::FaultKind;
use crate::exec::lanes::lanes_of;
use crate::exec::memory::GlobalMemory;
use crate::exec::space::LaneFault;
use crate::exec::warp::{LOCAL_LIMIT_BYTES, Warp};
use std::collections::BTreeMap;

/// Most bytes of one format string (its terminating zero excluded).
pub const FORMAT_LIMIT: usize = 4096;
/// Largest width or precision of a conversion.
pub const FIELD_LIMIT: i64 = 4096;
/// Most bytes of output a run keeps (CUDA's printf buffer holds 1 MiB by default).
pub const OUTPUT_LIMIT: usize = 1 << 20;
/// Most arguments one call takes, as CUDA's `printf`.
pub const MAX_ARGS: usize = 32;
/// Most bytes a `%s` argument may print.
pub const STRING_LIMIT: usize = 1 << 16;

/// Where a text goes in the output: block (its order in the grid), warp, lane and
/// the order calls were made in (program order within a thread).
type Key = (u64, u32, u32, u64);

/// The texts printed so far, bounded by [`OUTPUT_LIMIT`]: when they exceed it the
/// last in output order go. This keeps the same texts whatever the order the
/// calls came in: a text is kept exactly when it and every text before it in the
/// output fit in the bound.
#[derive(Debug, Default)]
pub struct PrintLog {
    kept: BTreeMap<Key, Vec<u8>>,
    bytes: usize,
    calls: u64,
    seq: u64,
}

/// What a run printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    /// The texts in output order.
    pub text: Vec<u8>,
    /// Calls (one per thread) made, and how many of their texts were dropped past
    /// [`OUTPUT_LIMIT`].
    pub calls: u64,
    pub dropped: u64,
}

impl Printed {
    /// The note for standard error when texts were dropped.
    pub fn dropped_note(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "warning: `printf` output is limited to {} MiB per run: the last {} of {} texts (in output order) were dropped; print less, e.g. from fewer threads",
                OUTPUT_LIMIT >> 20,
                self.dropped,
                self.calls
            )
        })
    }
}

impl PrintLog {
    fn add(&mut self, block: u64, warp: u32, lane: u32, text: Vec<u8>) {
        self.calls += 1;
        self.seq += 1;
        self.bytes += text.len();
        self.kept.insert((block, warp, lane, self.seq), text);
        while self.bytes > OUTPUT_LIMIT {
            match self.kept.pop_last() {
                Some((_, t)) => self.bytes -= t.len(),
                None => break,
            }
        }
    }

    /// Takes what was printed, leaving the log empty.
    pub fn take(&mut self) -> Printed {
        let log = std::mem::take(self);
        let dropped = log.calls - log.kept.len() as u64;
        Printed {
            text: log.kept.into_values().flatten().collect(),
            calls: log.calls,
            dropped,
        }
    }
}

/// A shared [`PrintLog`]: every unit of a run adds to it.
#[derive(Debug, Clone, Default)]
pub struct PrintSink(std::sync::Arc<std::sync::Mutex<PrintLog>>);

impl PrintSink {
    /// Takes what was printed, leaving the log empty.
    pub fn take(&self) -> Printed {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// A thread's local memory as `vprintf` reads it: frame-relative byte addresses.
struct LocalBytes<'a> {
    warp: &'a Warp,
    lane: usize,
}

impl LocalBytes<'_> {
    fn byte(&self, addr: u64) -> Result<u8, String> {
        let at = u64::from(self.warp.frame_base()) + addr;
        if at >= u64::from(LOCAL_LIMIT_BYTES) {
            return Err(format!(
                "its argument buffer reaches local address {addr}, past the {LOCAL_LIMIT_BYTES}-byte local memory of a thread"
            ));
        }
        let word = self
            .warp
            .local
            .get((at / 4) as usize)
            .map_or(0, |w| w[self.lane]);
        Ok((word >> (8 * (at % 4))) as u8)
    }

    fn value(&self, addr: u64, size: u64) -> Result<u64, String> {
        let mut v = 0u64;
        for i in 0..size {
            v |= u64::from(self.byte(addr + i)?) << (8 * i);
        }
        Ok(v)
    }
}

/// The zero-terminated string at global address `addr`, at most `limit` bytes.
fn global_string(
    memory: &GlobalMemory,
    addr: u64,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let word = u32::try_from(at & !3)
            .ok()
            .filter(|&w| memory.region_of(w).is_some());
        let Some(word) = word else {
            return Err(if at == addr {
                format!("{what} at address {addr:#x} is outside every buffer")
            } else {
                format!(
                    "{what} at address {addr:#x} runs past the end of its buffer without a terminating zero"
                )
            });
        };
        let b = (memory.read(word) >> (8 * (at % 4))) as u8;
        if b == 0 {
            return Ok(out);
        }
        if out.len() == limit {
            return Err(format!(
                "{what} at address {addr:#x} is longer than {limit} bytes"
            ));
        }
        out.push(b);
        at += 1;
    }
}

/// Runs `printf` for the lanes of `exec`: the frame at `frame_bytes` holds the
/// format's address, the argument buffer's address and the result.
pub fn run(
    sink: &PrintSink,
    memory: &GlobalMemory,
    warp: &mut Warp,
    frame_bytes: u32,
    exec: u32,
) -> Result<(), LaneFault> {
    let fault = |what: String, l: usize| (FaultKind::Printf { what }, l as u32);
    let mut results = Vec::new();
    for l in lanes_of(exec) {
        let local = LocalBytes { warp, lane: l };
        let at = u64::from(frame_bytes);
        let (fmt, args) = (local.value(at, 8), local.value(at + 8, 8));
        let (fmt, args) = match (fmt, args) {
            (Ok(f), Ok(a)) => (f, a),
            (Err(e), _) | (_, Err(e)) => return Err(fault(e, l)),
        };
        if fmt == 0 {
            results.push((l, -1i32 as u32, None));
            continue;
        }
        let format = global_string(memory, fmt, FORMAT_LIMIT, "the format string")
            .map_err(|e| fault(e, l))?;
        let mut reader = Args {
            local: &local,
            base: args,
            next: 0,
            used: 0,
        };
        let text = format_c(&format, &mut reader, &mut |addr| {
            global_string(memory, addr, STRING_LIMIT, "the `%s` argument")
        })
        .map_err(|e| fault(e, l))?;
        results.push((l, reader.used as u32, Some(text)));
    }
    let block = warp.print_order;
    let mut log = sink.0.lock().unwrap_or_else(|e| e.into_inner());
    for (l, count, text) in results {
        if let Some(t) = text {
            log.add(block, warp.index, l as u32, t);
        }
        store_result(warp, frame_bytes + 16, l, count).map_err(|e| fault(e, l))?;
    }
    Ok(())
}

/// Stores `vprintf`'s result in the frame.
fn store_result(warp: &mut Warp, addr: u32, lane: usize, value: u32) -> Result<(), String> {
    let at = u64::from(warp.frame_base()) + u64::from(addr);
    if at + 4 > u64::from(LOCAL_LIMIT_BYTES) {
        return Err(format!(
            "its result at local address {addr} is past the {LOCAL_LIMIT_BYTES}-byte local memory of a thread"
        ));
    }
    let index = (at / 4) as usize;
    if warp.local.len() <= index {
        warp.local.resize(index + 1, [0; 32]);
    }
    warp.local[index][lane] = value;
    Ok(())
}

/// Source of a call's arguments.
pub trait ArgSource {
    /// The next argument of `size` bytes (4 or 8), at the next multiple of its size.
    fn next(&mut self, size: u64) -> Result<u64, String>;
    /// Arguments taken so far.
    fn used(&self) -> usize;
}

struct Args<'a, 'b> {
    local: &'a LocalBytes<'b>,
    base: u64,
    next: u64,
    used: usize,
}

impl ArgSource for Args<'_, '_> {
    fn next(&mut self, size: u64) -> Result<u64, String> {
        let at = self.next.next_multiple_of(size);
        self.next = at + size;
        self.used += 1;
        self.local.value(self.base.wrapping_add(at), size)
    }

    fn used(&self) -> usize {
        self.used
    }
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
/// strings from `string`.
pub fn format_c(
    fmt: &[u8],
    args: &mut dyn ArgSource,
    string: &mut dyn FnMut(u64) -> Result<Vec<u8>, String>,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
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
                integer(
                    &mut out,
                    &spec,
                    sign,
                    "",
                    v.unsigned_abs().to_string(),
                    false,
                );
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
                integer(
                    &mut out,
                    &spec,
                    "",
                    prefix,
                    digits,
                    conv == b'o' && spec.hash,
                );
            }
            b'c' => {
                let v = args.next(4)? as u8;
                pad(&mut out, &spec, b"", &[v], false);
            }
            b's' => {
                let addr = args.next(8)?;
                let mut s = if addr == 0 {
                    b"(null)".to_vec()
                } else {
                    string(addr)?
                };
                if let Some(p) = spec.prec {
                    s.truncate(p);
                }
                pad(&mut out, &spec, b"", &s, false);
            }
            b'p' => {
                let v = args.next(8)?;
                if v == 0 {
                    pad(&mut out, &spec, b"", b"(nil)", false);
                } else {
                    let sign = if spec.plus {
                        "+"
                    } else if spec.space {
                        " "
                    } else {
                        ""
                    };
                    integer(&mut out, &spec, sign, "0x", format!("{v:x}"), false);
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let v = f64::from_bits(args.next(8)?);
                float(&mut out, &spec, conv, v);
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
    Ok(out)
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
        format_c(fmt.as_bytes(), &mut a, &mut |_| Ok(b"str".to_vec()))
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
            f("%*.*f|%s|%c%%", &[8, 2, d(3.14159), 1, 65]).unwrap(),
            "    3.14|str|A%"
        );
        assert_eq!(
            f("%lld %lu", &[u64::MAX, u64::MAX]).unwrap(),
            "-1 18446744073709551615"
        );
        assert_eq!(f("%p %p", &[0, 0x10000]).unwrap(), "(nil) 0x10000");
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
    }

    #[test]
    fn the_output_bound_keeps_a_prefix_in_output_order() {
        let mut log = PrintLog::default();
        let big = vec![b'x'; OUTPUT_LIMIT / 2];
        // Arriving in reverse output order, the first two still win.
        log.add(3, 0, 0, big.clone());
        log.add(2, 0, 0, big.clone());
        log.add(1, 0, 0, big.clone());
        let p = log.take();
        assert_eq!((p.calls, p.dropped, p.text.len()), (3, 1, OUTPUT_LIMIT));
    }
}
