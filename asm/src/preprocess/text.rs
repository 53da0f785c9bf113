//! Text helpers of the preprocessor: comments, macro arguments and their
//! substitution, and the integer expressions of `#if`.

use super::ident_byte;

pub(super) fn first_word(s: &str) -> &str {
    let n = s.bytes().take_while(|b| ident_byte(*b)).count();
    &s[..n]
}

/// Tracks block comments through an inactive line.
pub(super) fn skip_comments(line: &str, mut in_comment: bool) -> bool {
    let mut rest = line;
    loop {
        if in_comment {
            match rest.find("*/") {
                Some(k) => {
                    rest = &rest[k + 2..];
                    in_comment = false;
                }
                None => return true,
            }
        } else {
            let line_comment = rest.find("//");
            match rest.find("/*") {
                Some(k) if line_comment.is_none_or(|l| k < l) => {
                    rest = &rest[k + 2..];
                    in_comment = true;
                }
                _ => return false,
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

/// The arguments of an invocation whose `(` is at `open`; returns them and the
/// offset after the closing `)`.
pub(super) fn split_args(line: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = open + 1;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    args.push(line[start..i].trim().to_string());
                    return Some((args, i + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(line[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
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
/// (shunting-yard over a token list).
pub(super) fn eval_condition(text: &str) -> Result<i64, String> {
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
            let t = text[s..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                i64::from_str_radix(h, 16)
            } else {
                t.parse()
            }
            .map_err(|_| format!("`{}` is not an integer", &text[s..i]))?;
            toks.push(Tok::Num(v));
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
                .ok_or_else(|| format!("unexpected `{}`", c as char))?;
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
    // Unary operators are marked with a leading `u`.
    let mut values: Vec<i64> = Vec::new();
    let mut ops: Vec<(&'static str, bool)> = Vec::new();
    let apply = |values: &mut Vec<i64>, op: &'static str, unary: bool| -> Result<(), String> {
        if unary {
            let a = values.pop().ok_or("missing operand")?;
            values.push(match op {
                "-" => a.wrapping_neg(),
                "!" => i64::from(a == 0),
                "~" => !a,
                _ => a,
            });
            return Ok(());
        }
        let y = values.pop().ok_or("missing operand")?;
        let x = values.pop().ok_or("missing operand")?;
        values.push(match op {
            "||" => i64::from(x != 0 || y != 0),
            "&&" => i64::from(x != 0 && y != 0),
            "|" => x | y,
            "^" => x ^ y,
            "&" => x & y,
            "==" => i64::from(x == y),
            "!=" => i64::from(x != y),
            "<" => i64::from(x < y),
            ">" => i64::from(x > y),
            "<=" => i64::from(x <= y),
            ">=" => i64::from(x >= y),
            "<<" => x.wrapping_shl(y as u32),
            ">>" => x.wrapping_shr(y as u32),
            "+" => x.wrapping_add(y),
            "-" => x.wrapping_sub(y),
            "*" => x.wrapping_mul(y),
            "/" | "%" if y == 0 => return Err("division by zero".into()),
            "/" => x.wrapping_div(y),
            _ => x.wrapping_rem(y),
        });
        Ok(())
    };
    let mut expect_value = true;
    for t in toks {
        match t {
            Tok::Num(v) => {
                if !expect_value {
                    return Err("two values in a row".into());
                }
                values.push(v);
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
                        None => return Err("unbalanced `)`".into()),
                    }
                }
                expect_value = false;
            }
            Tok::Op(op) if expect_value => {
                if !matches!(op, "-" | "+" | "!" | "~") {
                    return Err(format!("`{op}` needs a value before it"));
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
            return Err("unbalanced `(`".into());
        }
        apply(&mut values, op, unary)?;
    }
    match values.as_slice() {
        [v] => Ok(*v),
        [] => Err("the condition is empty".into()),
        _ => Err("missing operator".into()),
    }
}
