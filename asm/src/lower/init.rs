//! Buffer initialisers: `zeros`, `const(v)`, `ramp(start, step)`, `random(seed)` or
//! `random(seed, lo, hi)`, and a PTX variable's `= value` or list `= {1, 2, 3}`
//! (the grammar gives a list as a call of `{}`), each value checked against the
//! element type. Integer values are exact: a `const` of any 64-bit
//! integer keeps all its bits (stored as its bit pattern when a double cannot
//! hold it), and a `ramp` or `random` value a double cannot hold exactly is
//! refused rather than rounded.

use crate::ast::{Expr, SExpr};
use crate::diag::Diagnostic;
use crate::eval::{Num, init_literal};
use spu_io::suggest::closest;
use spu_isa::Ty;
use spu_isa::format::{Init, MAX_SEED};

/// The initialiser of a buffer of `ty`: a call (`const(5)`), `zeros`, or a PTX
/// variable's value (`= 5`, `= -1.5`).
pub(super) fn initialiser(e: &SExpr<'_>, ty: Ty) -> Result<Init, Diagnostic> {
    let (name, args): (&str, &[SExpr<'_>]) = match &e.node {
        Expr::Int(_) | Expr::Float(_) | Expr::Neg(_) => {
            let v = init_literal(e)?;
            check_value(v, ty, false, e)?;
            return Ok(const_init(v, ty));
        }
        Expr::Name(n) => (n, &[]),
        Expr::Call(f, args) => (f.node, args),
        _ => {
            return Err(Diagnostic::error("expected an initialiser", e.span.clone())
                .label("not zeros, const(v), ramp(start, step) or random(seed, lo, hi)"));
        }
    };
    let nums = args
        .iter()
        .map(init_literal)
        .collect::<Result<Vec<_>, _>>()?;
    if name == "{}" {
        // A PTX variable's list: each value checked against the type, kept as bits.
        let mut values = Vec::with_capacity(nums.len());
        for (v, arg) in nums.iter().zip(args) {
            check_value(*v, ty, false, arg)?;
            values.push(value_bits(*v, ty));
        }
        return Ok(Init::Values(values));
    }
    let wrong = |expected: &str| {
        Diagnostic::error(format!("`{name}` takes {expected}"), e.span.clone())
            .label(format!("found {} arguments", nums.len()))
    };
    // (value, argument index, is a ramp's step)
    let checks: Vec<(Num, usize, bool)> = match (name, nums.as_slice()) {
        ("zeros", []) => return Ok(Init::Zeros),
        ("zeros", _) => return Err(wrong("no arguments")),
        ("const", [v]) => vec![(*v, 0, false)],
        ("const", _) => return Err(wrong("one value")),
        ("ramp", [start, step]) => vec![(*start, 0, false), (*step, 1, true)],
        ("ramp", _) => return Err(wrong("a start and a step")),
        ("random", [seed]) | ("random", [seed, _, _]) if let Some(why) = seed_error(*seed) => {
            return Err(Diagnostic::error(why, args[0].span.clone())
                .label(format!("expected an integer in 0..={MAX_SEED} (2^53)")));
        }
        ("random", [_]) => vec![],
        ("random", [_, lo, hi]) => vec![(*lo, 1, false), (*hi, 2, false)],
        ("random", _) => return Err(wrong("a seed, optionally followed by lo and hi")),
        (other, _) => {
            let d = Diagnostic::error(format!("unknown initialiser `{other}`"), e.span.clone())
                .label("expected zeros, const, ramp or random");
            return Err(match closest(other, ["zeros", "const", "ramp", "random"]) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d,
            });
        }
    };
    for &(v, i, is_step) in &checks {
        check_value(v, ty, is_step, &args[i])?;
        if name != "const" {
            exact_double(v, ty, &args[i])?;
        }
    }
    Ok(match (name, nums.as_slice()) {
        ("const", [v]) => const_init(*v, ty),
        ("ramp", [start, step]) => Init::Ramp {
            start: start.as_f64(),
            step: step.as_f64(),
        },
        ("random", [seed]) => Init::Random {
            seed: seed.as_f64() as u64,
            lo: 0.0,
            hi: 1.0,
        },
        (_, [seed, lo, hi]) => {
            let (lo, hi) = (lo.as_f64(), hi.as_f64());
            if lo > hi {
                return Err(Diagnostic::error(
                    format!("`random` has lo {lo} above hi {hi}"),
                    e.span.clone(),
                )
                .label("expected random(seed, lo, hi) with lo <= hi"));
            }
            Init::Random {
                seed: seed.as_f64() as u64,
                lo,
                hi,
            }
        }
        _ => Init::Zeros,
    })
}

/// Why `seed` is not a seed, if it is not: a seed is an integer in 0..=2^53,
/// compared exactly (an integer literal is not rounded to a double first: 2^53 + 1
/// would round to 2^53 and pass).
fn seed_error(seed: Num) -> Option<&'static str> {
    let (negative, above, whole) = match seed.as_int() {
        Some(i) => (i < 0, i > i128::from(MAX_SEED), true),
        None => {
            let v = seed.as_f64();
            (v < 0.0, v > MAX_SEED as f64, v.fract() == 0.0)
        }
    };
    if negative {
        Some("the seed must not be negative")
    } else if above {
        Some("the seed is too large")
    } else if !whole {
        Some("the seed must be an integer")
    } else {
        None
    }
}

/// The bit pattern of a checked value in an element of `ty`.
fn value_bits(v: Num, ty: Ty) -> u64 {
    if ty.is_float() {
        return ty.bits_of(v.as_f64());
    }
    let i = v.as_int().unwrap_or(v.as_f64() as i128);
    let mask = u128::MAX >> (128 - ty.bits());
    (i as u128 & mask) as u64
}

/// Every element is `v`: as a double when the double is exact, else (integers a
/// double cannot hold, above 2^53, and a float bit pattern's infinity or NaN) as
/// the element's bit pattern.
fn const_init(v: Num, ty: Ty) -> Init {
    if ty.is_float() && !v.as_f64().is_finite() {
        return Init::ConstBits(ty.bits_of(v.as_f64()));
    }
    match v.as_int() {
        Some(i) if ty.is_int() && v.as_f64() as i128 != i => {
            let mask = u128::MAX >> (128 - ty.bits());
            Init::ConstBits((i as u128 & mask) as u64)
        }
        _ => Init::Const(v.as_f64()),
    }
}

/// A `ramp` or `random` value of an integer buffer must be a double exactly (the
/// binary stores them as doubles).
fn exact_double(v: Num, ty: Ty, arg: &SExpr<'_>) -> Result<(), Diagnostic> {
    match v.as_int() {
        Some(i) if ty.is_int() && v.as_f64() as i128 != i => Err(Diagnostic::error(
            format!("`{i}` cannot be a `ramp` or `random` value exactly"),
            arg.span.clone(),
        )
        .label("their values are doubles: exact up to 2^53 (9007199254740992), above it only where a double holds the integer")
        .help("use `const(...)`, which holds any 64-bit integer, or give the data with `--load`")),
        _ => Ok(()),
    }
}

/// Checks a value against the buffer's type ([`Ty::value_range`]): an integer within
/// the type's range for an integer buffer, a finite value within the float type's
/// range otherwise. (A ramp's last value depends on the buffer's size and is
/// checked at load time.)
fn check_value(v: Num, ty: Ty, is_step: bool, arg: &SExpr<'_>) -> Result<(), Diagnostic> {
    let (x, text) = match v.as_int() {
        Some(i) => (i, i.to_string()),
        None => {
            let f = v.as_f64();
            let text = format_number(f);
            if ty.is_float() {
                return check_float(f, ty, &text, arg);
            }
            if f.fract() != 0.0 || !f.is_finite() {
                return Err(Diagnostic::error(
                    format!("`{text}` is not an integer"),
                    arg.span.clone(),
                )
                .label(format!("a .{ty} buffer holds integers"))
                .help("write an integer, or declare the buffer .f32 or .f64"));
            }
            // `as` saturates, so a huge value lands outside every range too.
            (f as i128, text)
        }
    };
    if ty.is_float() {
        return check_float(v.as_f64(), ty, &text, arg);
    }
    let (lo, hi) = int_range(ty, is_step);
    if x < lo || x > hi {
        return Err(Diagnostic::error(
            format!("`{}` does not fit in .{ty}", spu_io::quote::shorten(&text)),
            arg.span.clone(),
        )
        .label(format!("expected {lo}..={hi}")));
    }
    Ok(())
}

fn check_float(v: f64, ty: Ty, text: &str, arg: &SExpr<'_>) -> Result<(), Diagnostic> {
    // A `0f`/`0d` bit pattern is a value of its type, infinities and NaNs too
    // (what nvcc writes for `INFINITY` or `NAN`).
    let pattern = matches!(&arg.node, Expr::Float(t) if t.len() > 2 && matches!(&t[..2], "0f" | "0F" | "0d" | "0D"));
    if pattern && !v.is_finite() {
        return Ok(());
    }
    let (_, hi) = ty.value_range();
    // f32's bound shown as the f32 it is (3.4028235e38).
    let shown = match ty {
        Ty::F32 => format!("{:e}", f32::MAX),
        _ => format!("{hi:e}"),
    };
    if !ty.holds(v) {
        return Err(Diagnostic::error(
            format!("`{}` does not fit in .{ty}", spu_io::quote::shorten(text)),
            arg.span.clone(),
        )
        .label(format!("expected a magnitude of at most {shown}")));
    }
    Ok(())
}

/// The values an integer buffer of type `ty` holds: `0..=2^N-1` unsigned or untyped
/// bits, `-2^(N-1)..=2^(N-1)-1` signed. A ramp's step may also go down by as much
/// as the unsigned range (its values are checked at load time).
fn int_range(ty: Ty, is_step: bool) -> (i128, i128) {
    let bits = ty.bits();
    let umax = (1i128 << bits) - 1;
    if is_step {
        (-umax, umax)
    } else if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, umax)
    }
}

/// A number as written in source: integers without a fractional part.
fn format_number(v: f64) -> String {
    // Integers up to 64-bit types' bounds in full (2^64 - 2048 = 18446744073709549568).
    if v.fract() == 0.0 && v.abs() < 1.9e19 {
        format!("{}", v as i128)
    } else if v.abs() >= 1e18 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
