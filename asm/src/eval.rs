//! Constant expressions: lowering to the stored form (integer expressions over
//! parameters) and evaluation of literals for immediates, defaults and initialisers,
//! each error pointing at the sub-expression at fault.

use crate::ast::{Expr, SExpr, Spanned, Step, walk};
use crate::diag::Diagnostic;
use spu_isa::Ty;
use spu_isa::format::{BinOp, Expr as StoredExpr, Node};

/// A declared parameter, as expressions see it.
#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub name: String,
    pub ty: Ty,
    /// The default's bit pattern (see [`param_default`]).
    pub default: Option<u64>,
    /// Byte offset in parameter space (see [`spu_isa::format::param_layout`]).
    pub offset: u32,
}

/// Parses a decimal or hex integer literal.
pub fn parse_int(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else {
        text.parse().ok()
    }
}

/// Parses a float literal (`1.5`, `2e3`, or the exact bit pattern `0f3F800000`) as f32.
/// A decimal literal is a double rounded to f32 ([`spu_isa::format::decimal_f32`]):
/// the same value as an `.f32` buffer's initialiser gets.
pub fn parse_f32(text: &str) -> Option<f32> {
    if text.starts_with("0d") || text.starts_with("0D") {
        return parse_f64(text).map(|v| v as f32);
    }
    match text.strip_prefix("0f").or_else(|| text.strip_prefix("0F")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok().map(f32::from_bits),
        None => spu_isa::format::decimal_f32(text),
    }
}

/// Parses a float literal as f64 (`0dXXXXXXXXXXXXXXXX` is an exact f64 pattern,
/// `0fXXXXXXXX` an f32 pattern widened exactly).
pub fn parse_f64(text: &str) -> Option<f64> {
    if let Some(hex) = text.strip_prefix("0d").or_else(|| text.strip_prefix("0D")) {
        return u64::from_str_radix(hex, 16).ok().map(f64::from_bits);
    }
    match text.strip_prefix("0f").or_else(|| text.strip_prefix("0F")) {
        Some(_) => parse_f32(text).map(f64::from),
        None => text.parse().ok(),
    }
}

fn binop(c: char) -> BinOp {
    match c {
        '+' => BinOp::Add,
        '-' => BinOp::Sub,
        '*' => BinOp::Mul,
        '/' => BinOp::Div,
        _ => BinOp::Rem,
    }
}

const FUNCTIONS: [(&str, BinOp); 3] = [
    ("min", BinOp::Min),
    ("max", BinOp::Max),
    ("cdiv", BinOp::CeilDiv),
];

/// Lowers an integer expression that may name parameters (sizes, launch, DMA).
pub fn lower(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<StoredExpr, Diagnostic> {
    let mut nodes = Vec::new();
    walk(e, |step| {
        match step {
            Step::Enter(x) => {
                if let Expr::Call(f, args) = &x.node {
                    call_op(f, args, x)?;
                }
            }
            Step::Exit(x) => nodes.push(match &x.node {
                Expr::Int(t) => Node::Const(parse_int(t).ok_or_else(|| int_range(x))?),
                Expr::Float(_) => {
                    return Err(
                        Diagnostic::error("expected an integer expression", x.span.clone())
                            .label("a float is not allowed here"),
                    );
                }
                Expr::Name(n) => {
                    let Some(i) = params.iter().position(|p| p.name == *n) else {
                        return Err(undefined_param(n, x, params));
                    };
                    let ty = params[i].ty;
                    if ty.is_float() {
                        return Err(Diagnostic::error(
                            format!(
                                "parameter `{n}` is .{ty} and cannot be used in an integer expression"
                            ),
                            x.span.clone(),
                        )
                        .label(format!("declared .{ty}")));
                    }
                    // The declaration limit keeps every index in range.
                    Node::Param(u16::try_from(i).map_err(|_| too_many_params(x))?)
                }
                Expr::Neg(_) => Node::Neg,
                Expr::Binary(op, ..) => Node::Binary(binop(*op)),
                Expr::Call(f, args) => Node::Binary(call_op(f, args, x)?),
            }),
        }
        Ok(true)
    })?;
    StoredExpr::from_postfix(nodes)
        .map_err(|_| Diagnostic::error("malformed expression", e.span.clone()))
}

/// The operator a function call stands for, checking its name and argument count.
fn call_op(f: &Spanned<&str>, args: &[SExpr<'_>], call: &SExpr<'_>) -> Result<BinOp, Diagnostic> {
    let Some((_, op)) = FUNCTIONS.iter().find(|(n, _)| *n == f.node) else {
        let d = Diagnostic::error(format!("unknown function `{}`", f.node), f.span.clone())
            .label("not a function");
        return Err(
            match spu_io::suggest::closest(f.node, FUNCTIONS.map(|f| f.0)) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help("expressions may call min(a, b), max(a, b) and cdiv(a, b)"),
            },
        );
    };
    if args.len() != 2 {
        return Err(Diagnostic::error(
            format!("`{}` takes 2 arguments, found {}", f.node, args.len()),
            call.span.clone(),
        ));
    }
    Ok(*op)
}

fn too_many_params(e: &SExpr<'_>) -> Diagnostic {
    Diagnostic::error("too many parameters", e.span.clone())
        .label(format!("a kernel has at most {MAX_PARAMS} parameters"))
}

/// Most parameters a kernel may declare: expressions name them by a 16-bit index.
pub const MAX_PARAMS: usize = 1 << 16;

fn int_range(e: &SExpr<'_>) -> Diagnostic {
    Diagnostic::error("integer literal is out of range", e.span.clone())
        .label("does not fit in 64 bits")
}

fn undefined_param(name: &str, e: &SExpr<'_>, params: &[ParamInfo]) -> Diagnostic {
    let d = Diagnostic::error(format!("undefined parameter `{name}`"), e.span.clone())
        .label("no `.param` has this name");
    match spu_io::suggest::closest(name, params.iter().map(|p| p.name.as_str())) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d.help(format!("declare it first: `.param .u32 {name} = ...;`")),
    }
}

/// Evaluates an integer expression with the parameters' defaults, to catch division
/// by zero and overflow at assembly time. `Ok(None)`: a parameter has no default.
pub fn eval_with_defaults(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<Option<i64>, Diagnostic> {
    // Operands are evaluated before their operator, so each exit pops its operands'
    // values off this stack; `None` stands for "unknown until launch".
    let mut values: Vec<Option<i64>> = Vec::new();
    walk(e, |step| {
        let x = match step {
            // A call of the wrong arity has no value; its arguments are not looked at.
            Step::Enter(x) => return Ok(!matches!(&x.node, Expr::Call(_, a) if a.len() != 2)),
            Step::Exit(x) => x,
        };
        let v = match &x.node {
            Expr::Int(t) => Some(parse_int(t).ok_or_else(|| int_range(x))?),
            Expr::Float(_) => None,
            Expr::Name(n) => params
                .iter()
                .find(|p| p.name == *n)
                .and_then(|p| spu_isa::format::param_int(p.ty, p.default?)),
            Expr::Neg(_) => match values.pop().flatten() {
                Some(v) => Some(v.checked_neg().ok_or_else(|| overflow(x))?),
                None => None,
            },
            Expr::Binary(op, _, b) => {
                let (y, v) = (values.pop().flatten(), values.pop().flatten());
                match (v, y) {
                    (Some(v), Some(y)) => Some(apply(binop(*op), v, y, x, b)?),
                    _ => None,
                }
            }
            Expr::Call(f, args) if args.len() == 2 => {
                let (y, v) = (values.pop().flatten(), values.pop().flatten());
                match (v, y, FUNCTIONS.iter().find(|(n, _)| *n == f.node)) {
                    (Some(v), Some(y), Some((_, op))) => Some(apply(*op, v, y, x, &args[1])?),
                    _ => None,
                }
            }
            Expr::Call(..) => None,
        };
        values.push(v);
        Ok(true)
    })?;
    Ok(values.pop().flatten())
}

fn overflow(whole: &SExpr<'_>) -> Diagnostic {
    Diagnostic::error("constant expression overflows", whole.span.clone())
        .label("out of 64-bit range")
}

fn apply(
    op: BinOp,
    x: i64,
    y: i64,
    whole: &SExpr<'_>,
    divisor: &SExpr<'_>,
) -> Result<i64, Diagnostic> {
    op.apply(x, y).map_err(|err| match err {
        spu_isa::format::EvalError::DivisionByZero => Diagnostic::error(
            "division by zero in a constant expression",
            divisor.span.clone(),
        )
        .label("this evaluates to 0")
        .with_secondary(whole.span.clone(), "in this expression"),
        _ => overflow(whole),
    })
}

/// The .f32 bit pattern of a name that means a special float (`nan`, `inf`,
/// `infinity`, any case), for the help of a refusal.
fn special_float_bits(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "nan" => Some("0f7FC00000"),
        "inf" | "infinity" => Some("0f7F800000"),
        _ => None,
    }
}

/// A literal-only integer (instruction immediates), with parameters refused.
pub fn const_int(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<i64, Diagnostic> {
    if let Some(name) = first_name(e) {
        let d = Diagnostic::error(format!("`{}` is not a constant", name.0), name.1.clone());
        return Err(if params.iter().any(|p| p.name == name.0) {
            d.label("a parameter can change at launch (-D)")
                .help(format!("read it with `ld.param.u32 %rX, [{}];`", name.0))
        } else if let Some(bits) = special_float_bits(name.0) {
            d.label("not a number literal").help(format!(
                "write the float's bits: `{bits}` (as PTX does; `0f` and 8 hex digits for .f32, `0d` and 16 for .f64)"
            ))
        } else {
            d.label("not a number").help(format!(
                "if `{0}` is a buffer or shared array, take its address with `mov` (`mov.u32 %rX, {0};` or `mov.u32 %rX, {0}+4;`) or use it in an address (`[{0}+4]`)",
                name.0
            ))
        });
    }
    if matches!(e.node, Expr::Float(_)) {
        return Err(
            Diagnostic::error("expected an integer", e.span.clone()).label("this is a float")
        );
    }
    eval_with_defaults(e, &[])?
        .ok_or_else(|| Diagnostic::error("expected an integer constant", e.span.clone()))
}

/// The first name in the expression, left to right.
fn first_name<'a>(e: &'a SExpr<'_>) -> Option<(&'a str, std::ops::Range<usize>)> {
    let mut found = None;
    let _ = walk(e, |step| match step {
        Step::Enter(x) => match &x.node {
            Expr::Name(n) => {
                found = Some((*n, x.span.clone()));
                Err(())
            }
            _ => Ok(true),
        },
        Step::Exit(_) => Ok(true),
    });
    found
}

/// A float literal, possibly negated, or an exactly representable integer.
pub fn const_f32(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<f32, Diagnostic> {
    match &e.node {
        Expr::Float(t) => match parse_f32(t) {
            Some(v) if v.is_finite() || t.starts_with("0f") || t.starts_with("0F") => Ok(v),
            Some(_) => Err(Diagnostic::error(
                format!("`{}` does not fit in .f32", spu_io::quote::shorten(t)),
                e.span.clone(),
            )
            .label(format!("expected a magnitude of at most {:e}", f32::MAX))),
            None => Err(Diagnostic::error("malformed float literal", e.span.clone())),
        },
        Expr::Neg(a) if matches!(a.node, Expr::Float(_)) => Ok(-const_f32(a, params)?),
        _ => {
            let v = const_int(e, params)?;
            let f = v as f32;
            if f as i64 == v {
                Ok(f)
            } else {
                Err(Diagnostic::error(
                    format!("`{v}` is not exactly representable as f32"),
                    e.span.clone(),
                ))
            }
        }
    }
}

/// `- - x`: the expression under any number of negations, and how many (walked,
/// not recursed: a file may hold millions of signs).
fn peel_negations<'a, 's>(e: &'a SExpr<'s>) -> (&'a SExpr<'s>, usize) {
    let mut x = e;
    let mut n = 0;
    while let Expr::Neg(a) = &x.node {
        x = a;
        n += 1;
    }
    (x, n)
}

/// A literal of an initialiser: an integer exactly as written (any 64-bit value,
/// signed or unsigned), or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// `negative` and the magnitude as written.
    Int {
        negative: bool,
        magnitude: u64,
    },
    Float(f64),
}

impl Num {
    /// The value as a double (`-0` is -0.0, as a double negated).
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int {
                negative,
                magnitude,
            } => {
                let v = magnitude as f64;
                if negative { -v } else { v }
            }
            Num::Float(v) => v,
        }
    }

    /// The exact integer, for integer literals.
    pub fn as_int(self) -> Option<i128> {
        match self {
            Num::Int {
                negative,
                magnitude,
            } => {
                let v = i128::from(magnitude);
                Some(if negative { -v } else { v })
            }
            Num::Float(_) => None,
        }
    }
}

/// A number for an initialiser: a literal, possibly negated any number of times.
pub fn init_literal(e: &SExpr<'_>) -> Result<Num, Diagnostic> {
    let (x, negations) = peel_negations(e);
    let negative = negations % 2 == 1;
    match &x.node {
        Expr::Float(t) => parse_f64(t)
            .map(|v| Num::Float(if negative { -v } else { v }))
            .ok_or_else(|| Diagnostic::error("malformed float literal", x.span.clone())),
        Expr::Int(t) => parse_u64(t)
            .map(|magnitude| Num::Int {
                negative,
                magnitude,
            })
            .ok_or_else(|| int_range(x)),
        _ => Err(Diagnostic::error("expected a number", e.span.clone())
            .label("initialiser arguments are literals")),
    }
}

/// A parameter's default: a value of its type, the same values `-D` accepts
/// (see [`spu_isa::format::parse_param_value`]), as its bit pattern (a 32-bit
/// type's in the low 32 bits). Integers must lie in the type's range; floats are
/// rounded to the nearest value of the type, and `0f`/`0d` literals keep their
/// bits exactly.
pub fn param_default(e: &SExpr<'_>, ty: Ty, params: &[ParamInfo]) -> Result<u64, Diagnostic> {
    let Some((lo, hi)) = spu_isa::format::param_int_range(ty) else {
        return match ty {
            Ty::F32 => Ok(u64::from(const_f32(e, params)?.to_bits())),
            _ => Ok(const_f64_exact(e, params)?.to_bits()),
        };
    };
    let v = match wide_literal(e) {
        Some(v) => v?,
        None => i128::from(const_int(e, params)?),
    };
    if v < lo || v > hi {
        let d = Diagnostic::error(format!("`{v}` is not a valid .{ty} value"), e.span.clone())
            .label(format!("expected {lo}..={hi}"));
        return Err(if !ty.is_signed() && v < 0 {
            d.help(format!(
                "declare the parameter .{} to give it a negative value",
                Ty::int(ty.bits(), true)
            ))
        } else {
            d
        });
    }
    Ok((v as u128 & ((1u128 << ty.bits()) - 1)) as u64)
}

/// An integer literal, possibly negated, read as i128 so that the values of
/// 64-bit types above `i64::MAX` and `-2^63` are written as they are; `None` for
/// any other expression.
fn wide_literal(e: &SExpr<'_>) -> Option<Result<i128, Diagnostic>> {
    let (x, negations) = peel_negations(e);
    let Expr::Int(text) = &x.node else {
        return None;
    };
    Some(
        parse_u64(text)
            .map(|v| {
                let v = i128::from(v);
                if negations % 2 == 1 { -v } else { v }
            })
            .ok_or_else(|| int_range(x)),
    )
}

/// An f64 default: a float literal rounded to nearest (finite unless written as a
/// `0d`/`0f` bit pattern), possibly negated, or an exactly representable integer.
fn const_f64_exact(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<f64, Diagnostic> {
    match &e.node {
        Expr::Float(t) => f64_literal(t, e),
        Expr::Neg(_) => {
            let (x, negations) = peel_negations(e);
            let v = const_f64_exact(x, params)?;
            Ok(if negations % 2 == 1 { -v } else { v })
        }
        _ => {
            let v = const_int(e, params)?;
            let f = v as f64;
            if f as i128 == i128::from(v) {
                Ok(f)
            } else {
                Err(Diagnostic::error(
                    format!("`{v}` is not exactly representable as f64"),
                    e.span.clone(),
                ))
            }
        }
    }
}

/// The bit pattern of a constant of a type: floats are rounded to the type, integers
/// must fit its width (written signed or unsigned).
pub fn const_bits64(e: &SExpr<'_>, ty: Ty, params: &[ParamInfo]) -> Result<u64, Diagnostic> {
    match ty {
        Ty::F32 => Ok(u64::from(const_f32(e, params)?.to_bits())),
        Ty::F64 => Ok(const_float64(e, params)?.to_bits()),
        t => {
            // Literals beyond i64 (64-bit masks, -2^63) are read as they are written.
            let v: i128 = match wide_literal(e) {
                Some(v) => v?,
                None => i128::from(const_int(e, params)?),
            };
            let bits = t.bits();
            let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
            if v < lo || v > hi {
                return Err(Diagnostic::error(
                    format!("immediate `{v}` does not fit in {bits} bits"),
                    e.span.clone(),
                )
                .label(format!("expected {lo}..={hi}")));
            }
            Ok((v as u128 & ((1u128 << bits) - 1)) as u64)
        }
    }
}

fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// An `.f64` literal: a decimal past the range is refused (as `.param .f64` and
/// `-D` refuse it); a bit pattern (`0d7FF0...`, `0f7F800000`) may be an
/// infinity.
fn f64_literal(t: &str, e: &SExpr<'_>) -> Result<f64, Diagnostic> {
    match parse_f64(t) {
        Some(v) if v.is_finite() || ["0f", "0F", "0d", "0D"].iter().any(|p| t.starts_with(p)) => {
            Ok(v)
        }
        Some(_) => Err(Diagnostic::error(
            format!("`{}` does not fit in .f64", spu_io::quote::shorten(t)),
            e.span.clone(),
        )
        .label(format!("expected a magnitude of at most {:e}", f64::MAX))),
        None => Err(Diagnostic::error("malformed float literal", e.span.clone())),
    }
}

/// A constant f64 (literals, integers, negation).
pub fn const_float64(e: &SExpr<'_>, params: &[ParamInfo]) -> Result<f64, Diagnostic> {
    match &e.node {
        Expr::Float(t) => f64_literal(t, e),
        Expr::Neg(_) => {
            let (x, negations) = peel_negations(e);
            let v = const_float64(x, params)?;
            Ok(if negations % 2 == 1 { -v } else { v })
        }
        _ => Ok(const_int(e, params)? as f64),
    }
}
