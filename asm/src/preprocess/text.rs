//! Text helpers of the preprocessor: comments, macro arguments and their
//! substitution, and the integer expressions of `#if`.

use super::ident_byte;
use std::ops::Range;

pub(super) fn first_word(s: &str) -> &str {
    let n = s.bytes().take_while(|b| ident_byte(*b)).count();
    &s[..n]
}

/// Tracks block comments through an inactive line.
pub(super) fn skip_comments(line: &str, in_comment: bool) -> bool {
    comment_opened(line, in_comment).0
}

/// Whether a block comment is open at the end of `line` (`in_comment` at its
/// start), and the offset of the `/*` that opened it when that is in `line`.
pub(super) fn comment_opened(line: &str, mut in_comment: bool) -> (bool, Option<usize>) {
    let mut at = 0;
    let mut opened = None;
    loop {
        let rest = &line[at..];
        if in_comment {
            match rest.find("*/") {
                Some(k) => {
                    at += k + 2;
                    in_comment = false;
                    opened = None;
                }
                None => return (true, opened),
            }
        } else {
            let line_comment = rest.find("//");
            match rest.find("/*") {
                Some(k) if line_comment.is_none_or(|l| k < l) => {
                    opened = Some(at + k);
                    at += k + 2;
                    in_comment = true;
                }
                _ => return (false, None),
            }
        }
    }
}

/// A macro body without its comments.
pub(super) fn strip_comments(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        match (rest.find("//"), rest.find("/*")) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                break;
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out.trim().to_string()
}

/// The arguments of an invocation whose `(` is at `open`, as ranges of `line` without
/// surrounding white space, and the offset after the closing `)`.
pub(super) fn split_args(line: &str, open: usize) -> Option<(Vec<Range<usize>>, usize)> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = open + 1;
    let trimmed = |s: usize, e: usize| {
        let text = &line[s..e];
        let from = s + (text.len() - text.trim_start().len());
        from..from + text.trim().len()
    };
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    args.push(trimmed(start, i));
                    return Some((args, i + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(trimmed(start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// Whether parameter `name` occurs in `body` where [`substitute`] would replace it.
pub(super) fn uses_param(body: &str, name: &str) -> bool {
    let bytes = body.as_bytes();
    body.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        let before = at.checked_sub(1).map(|p| bytes[p]);
        !before.is_some_and(|b| ident_byte(b) || b == b'.')
            && !bytes.get(end).is_some_and(|&b| ident_byte(b))
    })
}

/// Replaces parameter names in a body by the arguments.
pub(super) fn substitute(body: &str, params: &[String], args: &[String]) -> String {
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < bytes.len() {
        if ident_byte(bytes[i]) && !bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && ident_byte(bytes[i]) {
                i += 1;
            }
            let word = &body[s..i];
            let prev = s.checked_sub(1).map(|p| bytes[p]);
            match params.iter().position(|p| p == word) {
                Some(k) if !matches!(prev, Some(b'.')) => out.push_str(&args[k]),
                _ => out.push_str(word),
            }
        } else if bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && (ident_byte(bytes[i]) || bytes[i] == b'.') {
                i += 1;
            }
            out.push_str(&body[s..i]);
        } else {
            let ch = body[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Evaluates an integer condition with C precedence, without recursion
/// (shunting-yard over a token list), in signed 64-bit arithmetic (C's `intmax_t`).
/// An operation without a 64-bit result is an error, unless `&&` or `||` does not
/// evaluate it (`0 && 1 / 0` is 0, as in C).
pub(super) fn eval_condition(text: &str) -> Result<i64, CondError> {
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Tok {
        Num(i64),
        Op(&'static str),
        Open,
        Close,
    }
    const OPS: [&str; 19] = [
        "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "|", "^", "&", "<", ">", "+", "-", "*",
        "/", "%", "!",
    ];
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            toks.push(Tok::Num(c_integer(&text[s..i])?));
        } else if ident_byte(c) {
            // Names left after expansion count as 0 (C's rule).
            while i < b.len() && ident_byte(b[i]) {
                i += 1;
            }
            toks.push(Tok::Num(0));
        } else if c == b'(' {
            toks.push(Tok::Open);
            i += 1;
        } else if c == b')' {
            toks.push(Tok::Close);
            i += 1;
        } else if c == b'~' {
            toks.push(Tok::Op("~"));
            i += 1;
        } else {
            let op = OPS
                .iter()
                .find(|o| text[i..].starts_with(**o))
                .ok_or_else(|| syntax(format!("unexpected `{}`", c as char)))?;
            toks.push(Tok::Op(op));
            i += op.len();
        }
    }
    let prec = |op: &str| match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        _ => 10,
    };
    // An operand's value, or why an operation (perhaps not evaluated) has none.
    type Value = Result<i64, CondError>;
    let mut values: Vec<Value> = Vec::new();
    let mut ops: Vec<(&'static str, bool)> = Vec::new();
    let missing = || syntax("missing operand");
    let apply = |values: &mut Vec<Value>, op: &'static str, unary: bool| -> Result<(), CondError> {
        if unary {
            let a = values.pop().ok_or_else(missing)?;
            values.push(a.and_then(|a| {
                match op {
                    "-" => a
                        .checked_neg()
                        .ok_or_else(|| CondError::Overflow(format!("-({a})"), OUT_OF_RANGE)),
                    "!" => Ok(i64::from(a == 0)),
                    "~" => Ok(!a),
                    _ => Ok(a),
                }
            }));
            return Ok(());
        }
        let y = values.pop().ok_or_else(missing)?;
        let x = values.pop().ok_or_else(missing)?;
        values.push(match op {
            // The right operand counts only when the left one does not decide.
            "&&" => x.and_then(|x| {
                if x == 0 {
                    Ok(0)
                } else {
                    y.map(|y| i64::from(y != 0))
                }
            }),
            "||" => x.and_then(|x| {
                if x != 0 {
                    Ok(1)
                } else {
                    y.map(|y| i64::from(y != 0))
                }
            }),
            _ => x.and_then(|x| y.and_then(|y| binary(op, x, y))),
        });
        Ok(())
    };
    let mut expect_value = true;
    for t in toks {
        match t {
            Tok::Num(v) => {
                if !expect_value {
                    return Err(syntax("two values in a row"));
                }
                values.push(Ok(v));
                expect_value = false;
            }
            Tok::Open => {
                ops.push(("(", false));
                expect_value = true;
            }
            Tok::Close => {
                loop {
                    match ops.pop() {
                        Some(("(", _)) => break,
                        Some((op, unary)) => apply(&mut values, op, unary)?,
                        None => return Err(syntax("unbalanced `)`")),
                    }
                }
                expect_value = false;
            }
            Tok::Op(op) if expect_value => {
                if !matches!(op, "-" | "+" | "!" | "~") {
                    return Err(syntax(format!("`{op}` needs a value before it")));
                }
                ops.push((op, true));
            }
            Tok::Op(op) => {
                while let Some(&(top, unary)) = ops.last() {
                    if top == "(" || (!unary && prec(top) < prec(op)) {
                        break;
                    }
                    ops.pop();
                    apply(&mut values, top, unary)?;
                }
                ops.push((op, false));
                expect_value = true;
            }
        }
    }
    while let Some((op, unary)) = ops.pop() {
        if op == "(" {
            return Err(syntax("unbalanced `(`"));
        }
        apply(&mut values, op, unary)?;
    }
    match values.len() {
        1 => values.pop().unwrap_or_else(|| Err(missing())),
        0 => Err(syntax("the condition is empty")),
        _ => Err(syntax("missing operator")),
    }
}

/// A C integer literal as `#if` reads it: decimal, octal after a leading `0`
/// (`010` is 8), hexadecimal after `0x`, binary after `0b`, with an optional
/// suffix `u`, `l`, `ll`, `ul`, `lu`, `ull` or `llu` in either case.
fn c_integer(shown: &str) -> Result<i64, CondError> {
    let lower = shown.to_ascii_lowercase();
    let digits_end = ["ull", "llu", "ul", "lu", "ll", "u", "l"]
        .iter()
        .find(|suffix| {
            lower.ends_with(**suffix) && !(shown.ends_with("lL") || shown.ends_with("Ll"))
        })
        .map_or(shown.len(), |suffix| shown.len() - suffix.len());
    let t = &shown[..digits_end];
    let (digits, radix, kind) =
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            (h, 16, "a hexadecimal")
        } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
            (b, 2, "a binary")
        } else if t.len() > 1 && t.starts_with('0') {
            (&t[1..], 8, "an octal (leading `0`)")
        } else {
            (t, 10, "a decimal")
        };
    let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    if !valid {
        return Err(syntax(format!(
            "`{shown}` is not an integer: {kind} literal has digits {} and may end in `u`, `l`, `ll` or both",
            match radix {
                16 => "0-9 and a-f",
                2 => "0 and 1",
                8 => "0-7",
                _ => "0-9",
            }
        )));
    }
    i64::from_str_radix(digits, radix).map_err(|_| {
        syntax(format!(
            "`{shown}` is too large: `#if` computes in signed 64 bits, up to 9223372036854775807"
        ))
    })
}

/// Why an `#if` condition has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CondError {
    /// The text is not an integer expression.
    Syntax(String),
    /// `x / 0` or `x % 0`.
    DivisionByZero,
    /// The operation (its operands written out) has no 64-bit result, and why.
    Overflow(String, &'static str),
}

const OUT_OF_RANGE: &str = "the result does not fit in a signed 64-bit integer";

fn syntax(why: impl Into<String>) -> CondError {
    CondError::Syntax(why.into())
}

/// One binary operation of `#if`, checked: no operation wraps.
fn binary(op: &str, x: i64, y: i64) -> Result<i64, CondError> {
    let overflow = |why| CondError::Overflow(format!("{x} {op} {y}"), why);
    let shift = |y: i64| u32::try_from(y).ok().filter(|&y| y < 64);
    let checked = match op {
        "|" => Some(x | y),
        "^" => Some(x ^ y),
        "&" => Some(x & y),
        "==" => Some(i64::from(x == y)),
        "!=" => Some(i64::from(x != y)),
        "<" => Some(i64::from(x < y)),
        ">" => Some(i64::from(x > y)),
        "<=" => Some(i64::from(x <= y)),
        ">=" => Some(i64::from(x >= y)),
        "<<" | ">>" if shift(y).is_none() => {
            return Err(overflow("a shift count must be in 0..=63"));
        }
        // Bits shifted out, or into the sign: the result is not x * 2^y.
        "<<" => shift(y).map(|s| x << s).filter(|r| r >> y == x),
        ">>" => shift(y).map(|s| x >> s),
        "+" => x.checked_add(y),
        "-" => x.checked_sub(y),
        "*" => x.checked_mul(y),
        "/" | "%" if y == 0 => return Err(CondError::DivisionByZero),
        "/" => x.checked_div(y),
        _ => x.checked_rem(y),
    };
    checked.ok_or_else(|| overflow(OUT_OF_RANGE))
}
