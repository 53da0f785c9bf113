//! Constant expressions over kernel parameters (buffer sizes, launch dimensions, DMA
//! descriptors). Stored in the binary and evaluated by the loader once `-D` overrides
//! are known.
//!
//! An expression is a flat list of nodes in postfix order (operands before their
//! operator), the same order the binary stores. Building, evaluating, printing,
//! copying and dropping one therefore never recurse, however deep it is.

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
    /// Every operator, in the order of their codes in the binary.
    pub const ALL: [BinOp; 8] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Min,
        BinOp::Max,
        BinOp::CeilDiv,
    ];

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

    /// Applies the operator with 64-bit checked arithmetic.
    pub fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
        let r = match self {
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
        r.ok_or(EvalError::Overflow)
    }
}

/// One node of an expression in postfix order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    Const(i64),
    /// A parameter, by declaration index.
    Param(u16),
    /// Negates the value before it.
    Neg,
    /// Combines the two values before it (the earlier one is the left operand).
    Binary(BinOp),
}

impl Node {
    /// How many values the node takes from the ones before it.
    fn arity(self) -> usize {
        match self {
            Node::Const(_) | Node::Param(_) => 0,
            Node::Neg => 1,
            Node::Binary(_) => 2,
        }
    }
}

/// An integer expression over parameters: a non-empty, well-formed postfix node list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Expr {
    nodes: Vec<Node>,
}

impl Default for Expr {
    fn default() -> Self {
        Expr::constant(0)
    }
}

impl std::ops::Neg for Expr {
    type Output = Expr;

    fn neg(mut self) -> Expr {
        self.nodes.push(Node::Neg);
        self
    }
}

/// Why a node list is not an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed expression")]
pub struct MalformedExpr;

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
    /// A literal.
    pub fn constant(v: i64) -> Expr {
        Expr {
            nodes: vec![Node::Const(v)],
        }
    }

    /// A parameter, by declaration index.
    pub fn param(index: u16) -> Expr {
        Expr {
            nodes: vec![Node::Param(index)],
        }
    }

    /// `a op b` (copies `b` after `a`).
    pub fn binary(op: BinOp, mut a: Expr, b: Expr) -> Expr {
        a.nodes.extend(b.nodes);
        a.nodes.push(Node::Binary(op));
        a
    }

    /// An expression from nodes in postfix order, checking that they form exactly one
    /// expression.
    pub fn from_postfix(nodes: Vec<Node>) -> Result<Expr, MalformedExpr> {
        let mut depth = 0usize;
        for n in &nodes {
            depth = depth.checked_sub(n.arity()).ok_or(MalformedExpr)? + 1;
        }
        if depth == 1 {
            Ok(Expr { nodes })
        } else {
            Err(MalformedExpr)
        }
    }

    /// The nodes in postfix order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The value, if the expression is a single literal.
    pub fn as_const(&self) -> Option<i64> {
        match self.nodes.as_slice() {
            [Node::Const(v)] => Some(*v),
            _ => None,
        }
    }

    /// Evaluates with 64-bit checked arithmetic; `param` gives parameter values.
    pub fn eval(&self, param: &dyn Fn(u16) -> Option<i64>) -> Result<i64, EvalError> {
        let mut stack: Vec<i64> = Vec::with_capacity(8);
        // Well-formedness is an invariant of the type, so the pops cannot fail.
        let pop = |s: &mut Vec<i64>| s.pop().unwrap_or_default();
        for n in &self.nodes {
            let v = match *n {
                Node::Const(v) => v,
                Node::Param(i) => param(i).ok_or(EvalError::MissingParam(i))?,
                Node::Neg => pop(&mut stack).checked_neg().ok_or(EvalError::Overflow)?,
                Node::Binary(op) => {
                    let b = pop(&mut stack);
                    let a = pop(&mut stack);
                    op.apply(a, b)?
                }
            };
            stack.push(v);
        }
        Ok(pop(&mut stack))
    }

    /// Number of nodes (bounds the work a hostile binary can ask for).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
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

/// Work left while printing: a node in its context, or text to write.
enum Task {
    /// Node index, the precedence of the operator around it, and whether it is that
    /// operator's right operand.
    Node(usize, u8, bool),
    Text(&'static str),
    Operator(BinOp),
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes = &self.expr.nodes;
        // Operand positions of every node, found with one pass over the postfix list.
        let mut operands = vec![(0usize, 0usize); nodes.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            match n.arity() {
                1 => operands[i].0 = open.pop().unwrap_or_default(),
                2 => {
                    operands[i].1 = open.pop().unwrap_or_default();
                    operands[i].0 = open.pop().unwrap_or_default();
                }
                _ => {}
            }
            open.push(i);
        }
        let mut tasks = vec![Task::Node(open.pop().unwrap_or_default(), 0, false)];
        while let Some(task) = tasks.pop() {
            let (i, parent, right) = match task {
                Task::Text(s) => {
                    f.write_str(s)?;
                    continue;
                }
                Task::Operator(op) => {
                    write!(f, " {} ", op.symbol())?;
                    continue;
                }
                Task::Node(i, parent, right) => (i, parent, right),
            };
            let (a, b) = operands[i];
            match nodes[i] {
                Node::Const(v) if v < 0 => write!(f, "({v})")?,
                Node::Const(v) => write!(f, "{v}")?,
                Node::Param(p) => f.write_str(&(self.names)(p))?,
                Node::Neg => {
                    f.write_str("-")?;
                    tasks.push(Task::Node(a, 4, false));
                }
                Node::Binary(op) if op.is_function() => {
                    write!(f, "{}(", op.symbol())?;
                    tasks.extend([
                        Task::Text(")"),
                        Task::Node(b, 0, false),
                        Task::Text(", "),
                        Task::Node(a, 0, false),
                    ]);
                }
                Node::Binary(op) => {
                    let p = op.precedence();
                    let paren = p < parent || (p == parent && right);
                    if paren {
                        f.write_str("(")?;
                        tasks.push(Task::Text(")"));
                    }
                    tasks.extend([
                        Task::Node(b, p, true),
                        Task::Operator(op),
                        Task::Node(a, p, false),
                    ]);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(i: u16) -> String {
        ["N", "M"][usize::from(i)].to_string()
    }

    #[test]
    fn prints_with_the_parentheses_it_needs() {
        let n = || Expr::param(0);
        let m = || Expr::param(1);
        let e = Expr::binary(
            BinOp::Sub,
            n(),
            Expr::binary(BinOp::Sub, m(), Expr::constant(-2)),
        );
        assert_eq!(e.display(&name).to_string(), "N - (M - (-2))");
        let e = Expr::binary(
            BinOp::Mul,
            -Expr::binary(BinOp::Add, n(), m()),
            Expr::binary(BinOp::CeilDiv, n(), Expr::constant(4)),
        );
        assert_eq!(e.display(&name).to_string(), "-(N + M) * cdiv(N, 4)");
        assert_eq!(
            e.eval(&|i| Some([10, 2][usize::from(i)])),
            Ok(-12 * 3),
            "evaluates like it prints"
        );
    }

    #[test]
    fn rejects_malformed_node_lists() {
        assert!(Expr::from_postfix(vec![]).is_err());
        assert!(Expr::from_postfix(vec![Node::Neg]).is_err());
        assert!(Expr::from_postfix(vec![Node::Const(1), Node::Const(2)]).is_err());
        assert!(Expr::from_postfix(vec![Node::Const(1), Node::Binary(BinOp::Add)]).is_err());
        let e = Expr::from_postfix(vec![Node::Const(1), Node::Neg]).unwrap();
        assert_eq!(e.eval(&|_| None), Ok(-1));
    }

    #[test]
    fn a_million_nodes_deep_evaluates_prints_and_drops() {
        // Each of these used to recurse once per node.
        // 1 - -(1 - -(... N)), built from its postfix form: 1 1 1 ... N - - - - ...
        let mut nodes = vec![Node::Const(1); 500_000];
        nodes.push(Node::Param(0));
        for _ in 0..500_000 {
            nodes.extend([Node::Neg, Node::Binary(BinOp::Sub)]);
        }
        let e = Expr::from_postfix(nodes).unwrap();
        assert_eq!(e.node_count(), 1_500_001);
        assert_eq!(e.eval(&|_| Some(0)), Ok(500_000));
        let text = e.display(&name).to_string();
        assert!(text.starts_with("1 - -(1 - -(1"), "{}", &text[..40]);
        let copy = e.clone();
        assert_eq!(copy, e);
    }
}
