//! Constant expressions over kernel parameters (buffer sizes, launch dimensions, DMA
//! descriptors). Stored in the binary and evaluated by the loader once `-D` overrides
//! are known.

use std::fmt;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    /// Division rounding up (`cdiv(a, b)`).
    CeilDiv,
}

impl BinOp {
    /// Source spelling of an infix operator, or the function name.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::CeilDiv => "cdiv",
        }
    }

    /// True for operators written as functions.
    pub fn is_function(self) -> bool {
        matches!(self, BinOp::Min | BinOp::Max | BinOp::CeilDiv)
    }

    fn precedence(self) -> u8 {
        match self {
            BinOp::Add | BinOp::Sub => 1,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 2,
            BinOp::Min | BinOp::Max | BinOp::CeilDiv => 3,
        }
    }
}

/// An integer expression over parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(i64),
    /// A parameter, by declaration index.
    Param(u16),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

impl Default for Expr {
    fn default() -> Self {
        Expr::Const(0)
    }
}

/// Why an expression cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("division by zero")]
    DivisionByZero,
    #[error("integer overflow")]
    Overflow,
    #[error("parameter #{0} has no value")]
    MissingParam(u16),
}

impl Expr {
    /// Evaluates with 64-bit checked arithmetic; `param` gives parameter values.
    pub fn eval(&self, param: &dyn Fn(u16) -> Option<i64>) -> Result<i64, EvalError> {
        Ok(match self {
            Expr::Const(v) => *v,
            Expr::Param(i) => param(*i).ok_or(EvalError::MissingParam(*i))?,
            Expr::Neg(e) => e.eval(param)?.checked_neg().ok_or(EvalError::Overflow)?,
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.eval(param)?, b.eval(param)?);
                let r = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div | BinOp::Rem | BinOp::CeilDiv if b == 0 => {
                        return Err(EvalError::DivisionByZero);
                    }
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    BinOp::CeilDiv => a.checked_add(b - b.signum()).and_then(|n| n.checked_div(b)),
                    BinOp::Min => Some(a.min(b)),
                    BinOp::Max => Some(a.max(b)),
                };
                r.ok_or(EvalError::Overflow)?
            }
        })
    }

    /// Number of nodes (bounds the work a hostile binary can ask for).
    pub fn node_count(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Param(_) => 1,
            Expr::Neg(e) => 1 + e.node_count(),
            Expr::Binary(_, a, b) => 1 + a.node_count() + b.node_count(),
        }
    }

    /// Formats in source syntax, naming parameters with `names`.
    pub fn display<'a>(&'a self, names: &'a dyn Fn(u16) -> String) -> impl fmt::Display + 'a {
        ExprDisplay { expr: self, names }
    }
}

struct ExprDisplay<'a> {
    expr: &'a Expr,
    names: &'a dyn Fn(u16) -> String,
}

impl ExprDisplay<'_> {
    fn write(&self, f: &mut fmt::Formatter<'_>, e: &Expr, parent: u8, right: bool) -> fmt::Result {
        match e {
            Expr::Const(v) if *v < 0 => write!(f, "({v})"),
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Param(i) => f.write_str(&(self.names)(*i)),
            Expr::Neg(inner) => {
                f.write_str("-")?;
                self.write(f, inner, 4, false)
            }
            Expr::Binary(op, a, b) if op.is_function() => {
                write!(f, "{}(", op.symbol())?;
                self.write(f, a, 0, false)?;
                f.write_str(", ")?;
                self.write(f, b, 0, false)?;
                f.write_str(")")
            }
            Expr::Binary(op, a, b) => {
                let p = op.precedence();
                let paren = p < parent || (p == parent && right);
                if paren {
                    f.write_str("(")?;
                }
                self.write(f, a, p, false)?;
                write!(f, " {} ", op.symbol())?;
                self.write(f, b, p, true)?;
                if paren {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, self.expr, 0, false)
    }
}
