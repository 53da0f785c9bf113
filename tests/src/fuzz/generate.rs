//! A generator of `.spu` sources driven by `arbitrary` bytes: declarations of every
//! kind with expressions that are sometimes very long or deeply nested, and a
//! kernel of instructions built from the ISA table's examples with their registers,
//! immediates and labels replaced. Most generated files assemble, so the fuzzers
//! reach the checks and the emulator behind the parser; the rest probe diagnostics.

use arbitrary::{Result, Unstructured};
use spu_isa::TABLE;
use std::fmt::Write;

/// Names the generated kernel may use.
const PARAMS: [&str; 4] = ["N", "M", "K", "S"];
const TYPES: [&str; 3] = [".u32", ".s32", ".f32"];

/// A whole source file.
pub fn source(u: &mut Unstructured) -> Result<String> {
    let mut s = String::new();
    let params = u.int_in_range(0..=PARAMS.len())?;
    for name in &PARAMS[..params] {
        let ty = *u.choose(&TYPES[..2])?;
        if u.ratio(3, 4)? {
            let _ = writeln!(s, ".param {ty} {name} = {};", small_value(u)?);
        } else {
            let _ = writeln!(s, ".param {ty} {name};");
        }
    }
    let buffers = u.int_in_range(0..=3)?;
    for b in 0..buffers {
        let ty = *u.choose(&TYPES)?;
        let most = if u.ratio(1, 20)? { 5 } else { 2 };
        let dims = u.int_in_range(1..=most)?;
        let mut d = String::new();
        for _ in 0..dims {
            let _ = write!(d, "[{}]", expr(u, &PARAMS[..params], 3)?);
        }
        let init = initialiser(u)?;
        let _ = writeln!(s, ".global {ty} B{b}{d}{init};");
    }
    if u.ratio(3, 4)? {
        let _ = writeln!(
            s,
            ".launch grid({}, {}) block({}) iu({});",
            expr(u, &PARAMS[..params], 2)?,
            expr(u, &PARAMS[..params], 2)?,
            expr(u, &PARAMS[..params], 2)?,
            expr(u, &PARAMS[..params], 2)?
        );
    }
    if buffers > 0 && u.ratio(1, 4)? {
        let side = *u.choose(&["north", "south", "east", "west"])?;
        let _ = write!(s, ".dma {side} B0");
        // `offset`, `delay` and `iu_delay` are optional; the others sometimes go missing.
        for field in spu_isa::format::DMA_FIELDS {
            if u.ratio(9, 10)? {
                let _ = write!(s, ", {field}={}", expr(u, &PARAMS[..params], 2)?);
            }
        }
        s.push_str(";\n");
    }
    if u.ratio(1, 8)? {
        // An expression too large for a binary, or far deeper than any stack frame.
        let _ = writeln!(
            s,
            ".global .u32 LONG[{}];",
            long_expr(u, &PARAMS[..params])?
        );
    }
    let _ = writeln!(s, ".entry fuzz {{");
    let _ = writeln!(s, "    .reg .u32 %r<{}>;", u.int_in_range(1..=12)?);
    let _ = writeln!(s, "    .reg .f32 %f<{}>;", u.int_in_range(1..=8)?);
    let _ = writeln!(s, "    .reg .pred %p<{}>;", u.int_in_range(1..=4)?);
    if u.ratio(1, 3)? {
        let _ = writeln!(s, "    .shared .f32 SH[{}];", expr(u, &[], 2)?);
    }
    let count = u.int_in_range(1..=40)?;
    let labels = u.int_in_range(0..=4)?;
    let mut iu_placed = false;
    for i in 0..count {
        if labels > 0 && u.ratio(1, 6)? {
            let _ = writeln!(s, "L{}:", u.int_in_range(0..=labels - 1)?);
        }
        if !iu_placed && i > 0 && u.ratio(1, 30)? {
            s.push_str(".iu\n");
            iu_placed = true;
        }
        let _ = writeln!(s, "    {}", instruction(u, labels, &PARAMS[..params])?);
    }
    for l in 0..labels {
        if u.ratio(1, 2)? {
            let _ = writeln!(s, "L{l}:");
        }
    }
    if u.ratio(15, 16)? {
        s.push_str("    exit;\n");
    }
    if u.ratio(31, 32)? {
        s.push_str("}\n");
    }
    if u.ratio(1, 16)? {
        // Noise anywhere: a stray token or raw bytes.
        let at = u.choose_index(s.len().max(1))?;
        let at = (0..=at).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
        let noise = *u.choose(&[
            "/*", "*/", ";", "}", "\r", "\u{feff}", "@", "%", "0x", "[", "(",
        ])?;
        s.insert_str(at, noise);
    }
    Ok(s)
}

/// A value for a parameter default or an initialiser, sometimes out of range.
fn small_value(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=9)? {
        0 => "-1".into(),
        1 => "4294967296".into(),
        2 => format!("{}", u.arbitrary::<i64>()?),
        3 => format!("{:?}", u.arbitrary::<f32>()?),
        4 => "1e39".into(),
        _ => format!("{}", u.int_in_range(0..=64)?),
    })
}

fn initialiser(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=5)? {
        0 => String::new(),
        1 => " = zeros".into(),
        2 => format!(" = const({})", small_value(u)?),
        3 => format!(" = ramp({}, {})", small_value(u)?, small_value(u)?),
        4 => format!(" = random({})", u.int_in_range(0..=100)?),
        _ => format!(
            " = random({}, {}, {})",
            u.int_in_range(0..=100)?,
            small_value(u)?,
            small_value(u)?
        ),
    })
}

/// An integer expression over `params` of nesting depth at most `depth`.
pub(super) fn expr(u: &mut Unstructured, params: &[&str], depth: u32) -> Result<String> {
    if depth == 0 || u.ratio(1, 2)? {
        return Ok(match u.int_in_range(0..=5)? {
            0 if !params.is_empty() => (*u.choose(params)?).to_string(),
            1 => "0".into(),
            2 => format!("{}", u.arbitrary::<i32>()?),
            _ => format!("{}", u.int_in_range(1..=32)?),
        });
    }
    let a = expr(u, params, depth - 1)?;
    let b = expr(u, params, depth - 1)?;
    Ok(match u.int_in_range(0..=8)? {
        0 => format!("{a} + {b}"),
        1 => format!("{a} - {b}"),
        2 => format!("{a} * {b}"),
        3 => format!("{a} / {b}"),
        4 => format!("{a} % {b}"),
        5 => format!("-({a})"),
        6 => format!("min({a}, {b})"),
        7 => format!("cdiv({a}, {b})"),
        _ => format!("({a})"),
    })
}

/// A long or deep expression: thousands of terms, nested parentheses or negations.
fn long_expr(u: &mut Unstructured, params: &[&str]) -> Result<String> {
    let n = usize::from(u.arbitrary::<u16>()?) % 20_000 + 1;
    let term = params.first().copied().unwrap_or("1");
    Ok(match u.int_in_range(0..=2)? {
        0 => vec![term; n].join("+"),
        1 => format!("{}{term}{}", "(".repeat(n), ")".repeat(n)),
        _ => format!("{}{term}", "- ".repeat(n)),
    })
}

/// An instruction from the ISA table's example of a random row, with its registers,
/// immediates and branch target replaced.
pub(super) fn instruction(u: &mut Unstructured, labels: u32, params: &[&str]) -> Result<String> {
    let example = u.choose(TABLE)?.example;
    let mut out = String::new();
    let mut rest = example;
    while let Some(c) = rest.chars().next() {
        // Register numbers: sometimes beyond what was declared.
        if let Some(tail) = rest
            .strip_prefix("%r")
            .or_else(|| rest.strip_prefix("%f"))
            .or_else(|| rest.strip_prefix("%p"))
            && tail.starts_with(|d: char| d.is_ascii_digit())
        {
            let digits = tail.chars().take_while(char::is_ascii_digit).count();
            let n = if u.ratio(1, 12)? {
                u.int_in_range(0..=200)?
            } else {
                u.int_in_range(0..=3)?
            };
            let _ = write!(out, "{}{n}", &rest[..2]);
            rest = &tail[digits..];
            continue;
        }
        if c.is_ascii_digit() && !out.ends_with(|p: char| p.is_ascii_alphanumeric() || p == '.') {
            let digits = rest
                .chars()
                .take_while(|d| d.is_ascii_alphanumeric())
                .count();
            let imm = if u.ratio(1, 3)? {
                expr(u, &[], 3)?
            } else if u.ratio(1, 10)? {
                // A parameter where a constant is expected.
                params.first().copied().unwrap_or("7").to_string()
            } else {
                rest[..digits].to_string()
            };
            out.push_str(&imm);
            rest = &rest[digits..];
            continue;
        }
        if let Some(tail) = rest.strip_prefix("LOOP") {
            let target = if labels > 0 && u.ratio(7, 8)? {
                format!("L{}", u.int_in_range(0..=labels - 1)?)
            } else {
                "NOWHERE".into()
            };
            out.push_str(&target);
            rest = tail;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Ok(out)
}
