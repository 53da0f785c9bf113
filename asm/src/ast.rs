//! The syntax tree of one statement, with byte spans on everything a user can get
//! wrong. Expressions may be nested as deeply as the source is long, so they are
//! walked ([`walk`]) and dropped with explicit stacks, never by recursion.

use crate::lexer::Span;

/// A value with its source span.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

pub fn sp<T>(node: T, lo: usize, hi: usize) -> Spanned<T> {
    Spanned { node, span: lo..hi }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TyTok {
    Val(spu_isa::Ty),
    Pred,
}

/// A constant expression.
#[derive(Debug)]
pub enum Expr<'s> {
    Int(&'s str),
    Float(&'s str),
    Name(&'s str),
    Neg(Box<Spanned<Expr<'s>>>),
    Binary(char, Box<Spanned<Expr<'s>>>, Box<Spanned<Expr<'s>>>),
    Call(Spanned<&'s str>, Vec<Spanned<Expr<'s>>>),
}

pub type SExpr<'s> = Spanned<Expr<'s>>;

/// One step of [`walk`].
#[derive(Debug, Clone, Copy)]
pub enum Step<'a, 's> {
    /// Before the node's operands.
    Enter(&'a SExpr<'s>),
    /// After the node's operands (or in place of them when the entry skipped them).
    Exit(&'a SExpr<'s>),
}

/// Walks an expression depth first, left to right, with an explicit stack. `visit`
/// sees every node entered and then exited; returning `Ok(false)` on entry skips that
/// node's operands. The first error stops the walk.
pub fn walk<'a, 's, E>(
    root: &'a SExpr<'s>,
    mut visit: impl FnMut(Step<'a, 's>) -> Result<bool, E>,
) -> Result<(), E> {
    let mut stack = vec![(root, false)];
    while let Some((e, entered)) = stack.pop() {
        if entered {
            visit(Step::Exit(e))?;
            continue;
        }
        let descend = visit(Step::Enter(e))?;
        stack.push((e, true));
        if descend {
            match &e.node {
                Expr::Neg(a) => stack.push((a, false)),
                Expr::Binary(_, a, b) => stack.extend([(&**b, false), (&**a, false)]),
                Expr::Call(_, args) => stack.extend(args.iter().rev().map(|a| (a, false))),
                Expr::Int(_) | Expr::Float(_) | Expr::Name(_) => {}
            }
        }
    }
    Ok(())
}

impl Drop for Expr<'_> {
    /// Moves operands out onto a list before they drop, so dropping a deep tree takes
    /// constant stack.
    fn drop(&mut self) {
        fn take<'s>(e: &mut Expr<'s>, out: &mut Vec<Expr<'s>>) {
            let mut grab = |x: &mut SExpr<'s>| {
                if !matches!(x.node, Expr::Int(_) | Expr::Float(_) | Expr::Name(_)) {
                    out.push(std::mem::replace(&mut x.node, Expr::Int("")));
                }
            };
            match e {
                Expr::Neg(a) => grab(a),
                Expr::Binary(_, a, b) => {
                    grab(a);
                    grab(b);
                }
                Expr::Call(_, args) => args.iter_mut().for_each(grab),
                Expr::Int(_) | Expr::Float(_) | Expr::Name(_) => {}
            }
        }
        let mut pending = Vec::new();
        take(self, &mut pending);
        while let Some(mut e) = pending.pop() {
            take(&mut e, &mut pending);
        }
    }
}

#[derive(Debug)]
pub enum Operand<'s> {
    Register(&'s str),
    /// `!%p`: a negated predicate.
    NotPred(&'s str),
    /// `%r|%p`: a value register and a predicate written together.
    RegPred(&'s str, Spanned<&'s str>),
    /// `{%r1, %r2}`: a vector of registers.
    Vector(Vec<Spanned<&'s str>>),
    /// `[%r+e]`, `[%r-e]`, `[%r]` or `[e]`.
    Mem {
        base: Option<Spanned<&'s str>>,
        negative: bool,
        offset: Option<SExpr<'s>>,
    },
    Expr(SExpr<'s>),
}

#[derive(Debug)]
pub struct Guard<'s> {
    pub negated: bool,
    pub pred: Spanned<&'s str>,
}

#[derive(Debug)]
pub struct RegItem<'s> {
    pub name: Spanned<&'s str>,
    pub count: Option<Spanned<&'s str>>,
}

/// One parameter of a PTX entry signature.
#[derive(Debug)]
pub struct EntryParam<'s> {
    pub ty: Spanned<TyTok>,
    pub name: Spanned<&'s str>,
    /// `.align N`, as written.
    pub align: Option<Spanned<&'s str>>,
    /// `[N]`: an array of bytes (a by-value struct), as written.
    pub dim: Option<SExpr<'s>>,
}

/// An argument of `.bind`: a value, or a by-value struct given field by field.
#[derive(Debug)]
pub enum BindArg<'s> {
    Value(SExpr<'s>),
    Struct(Vec<FieldInit<'s>>),
}

/// A field of a struct argument: `[8] .f32 SCALE = 2.5` (offset and value optional).
#[derive(Debug)]
pub struct FieldInit<'s> {
    pub offset: Option<SExpr<'s>>,
    pub ty: Spanned<TyTok>,
    pub name: Spanned<&'s str>,
    pub value: Option<SExpr<'s>>,
}

/// A performance directive after an entry's signature (`.maxntid 256, 1, 1`).
#[derive(Debug)]
pub struct EntryHint<'s> {
    /// `maxntid`, `reqntid`, `minnctapersm` or `maxnreg`.
    pub name: Spanned<&'s str>,
    pub values: Vec<Spanned<&'s str>>,
}

/// An argument or return value of a PTX call: a `.param` name or a register.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CallArg<'s> {
    Param(&'s str),
    Register(&'s str),
}

#[derive(Debug)]
pub enum Stmt<'s> {
    /// A PTX header directive (`.version`, `.target`, `.address_size`), ended by the
    /// line end.
    Header {
        directive: &'static str,
        value: Spanned<&'s str>,
    },
    File {
        index: Spanned<&'s str>,
        path: &'s str,
    },
    Loc {
        file: Spanned<&'s str>,
        line: Spanned<&'s str>,
        col: Spanned<&'s str>,
        /// `, key "value"` attributes (a listing's register names); nvcc's own
        /// attributes are not kept.
        attrs: Vec<(Spanned<&'s str>, &'s str)>,
    },
    Param {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        default: Option<SExpr<'s>>,
    },
    Global {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        dims: Vec<SExpr<'s>>,
        init: Option<SExpr<'s>>,
        /// `.align N`, as written (buffers start 256-byte aligned: up to 256 holds).
        align: Option<Spanned<&'s str>>,
    },
    /// `.local .align 4 .b8 name[N];`: a per-thread array in the running function's
    /// local frame.
    Local {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        dims: Vec<SExpr<'s>>,
        align: Option<Spanned<&'s str>>,
    },
    Shared {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        dims: Vec<SExpr<'s>>,
        /// `.align N`, as written.
        align: Option<Spanned<&'s str>>,
        /// `.extern .shared ... name[];`: sized at launch (`.launch shared(BYTES)`).
        dynamic: bool,
    },
    /// `.bind kernel(A, B, N);`: the arguments of a PTX entry, in signature order.
    Bind {
        entry: Spanned<&'s str>,
        args: Vec<Spanned<BindArg<'s>>>,
    },
    /// `.param .align 8 .b8 param0[16];`: an array in a call sequence's frame.
    ParamArray {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        dim: SExpr<'s>,
        align: Option<Spanned<&'s str>>,
    },
    Reg {
        ty: Spanned<TyTok>,
        items: Vec<RegItem<'s>>,
    },
    Launch {
        parts: Vec<(Spanned<&'s str>, Vec<SExpr<'s>>)>,
    },
    /// `.assert N % 32 == 0, "N must be a multiple of the tile size";`
    Assert {
        lhs: SExpr<'s>,
        op: Spanned<spu_isa::format::CmpOp>,
        rhs: SExpr<'s>,
        message: Spanned<&'s str>,
    },
    Dma {
        side: Spanned<&'s str>,
        buffer: Spanned<&'s str>,
        fields: Vec<(Spanned<&'s str>, SExpr<'s>)>,
    },
    EntryOpen {
        name: Spanned<&'s str>,
        /// PTX entry parameters (`.param .u32 n`), each a kernel parameter.
        params: Vec<EntryParam<'s>>,
        /// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg` (CUDA's
        /// `__launch_bounds__`).
        hints: Vec<EntryHint<'s>>,
    },
    /// `[.visible] .func [(.param .b32 ret)] NAME(.param ...) {` (or `;`: a
    /// declaration, `body` false): a PTX device function.
    FuncOpen {
        name: Spanned<&'s str>,
        /// Its return parameters (PTX allows at most one).
        rets: Vec<EntryParam<'s>>,
        params: Vec<EntryParam<'s>>,
        body: bool,
    },
    /// A `{` alone inside a kernel or function: a PTX call sequence's scope.
    BlockOpen,
    /// PTX's call of a device function: `call[.uni] (ret), f, (args);`,
    /// `call f, (args);` or `call f;`.
    PtxCall {
        guard: Option<Guard<'s>>,
        mnemonic: Spanned<&'s str>,
        rets: Vec<Spanned<CallArg<'s>>>,
        func: Spanned<&'s str>,
        args: Vec<Spanned<CallArg<'s>>>,
        /// A fourth operand (an indirect call's prototype or target list).
        extra: Option<Span>,
    },
    BlockClose,
    IuSection,
    Label {
        name: Spanned<&'s str>,
    },
    Instr {
        guard: Option<Guard<'s>>,
        mnemonic: Spanned<&'s str>,
        operands: Vec<Spanned<Operand<'s>>>,
    },
    /// A lone `;`.
    Empty,
}
