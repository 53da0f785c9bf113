//! The syntax tree of one statement, with byte spans on everything a user can get
//! wrong.

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
#[derive(Debug, Clone, PartialEq)]
pub enum Expr<'s> {
    Int(&'s str),
    Float(&'s str),
    Name(&'s str),
    Neg(Box<Spanned<Expr<'s>>>),
    Binary(char, Box<Spanned<Expr<'s>>>, Box<Spanned<Expr<'s>>>),
    Call(Spanned<&'s str>, Vec<Spanned<Expr<'s>>>),
}

pub type SExpr<'s> = Spanned<Expr<'s>>;

#[derive(Debug, Clone, PartialEq)]
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
    Expr(Expr<'s>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Guard<'s> {
    pub negated: bool,
    pub pred: Spanned<&'s str>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RegItem<'s> {
    pub name: Spanned<&'s str>,
    pub count: Option<Spanned<&'s str>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt<'s> {
    File {
        index: Spanned<&'s str>,
        path: &'s str,
    },
    Loc {
        file: Spanned<&'s str>,
        line: Spanned<&'s str>,
        col: Spanned<&'s str>,
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
    },
    Shared {
        ty: Spanned<TyTok>,
        name: Spanned<&'s str>,
        dims: Vec<SExpr<'s>>,
    },
    Reg {
        ty: Spanned<TyTok>,
        items: Vec<RegItem<'s>>,
    },
    Launch {
        parts: Vec<(Spanned<&'s str>, Vec<SExpr<'s>>)>,
    },
    Dma {
        side: Spanned<&'s str>,
        buffer: Spanned<&'s str>,
        fields: Vec<(Spanned<&'s str>, SExpr<'s>)>,
    },
    EntryOpen {
        name: Spanned<&'s str>,
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
