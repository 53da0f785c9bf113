//! Tokens of `.spu` source (logos). The lexer never fails: characters it cannot read
//! become [`Tok::Error`] tokens so the parser can report them and go on.

use logos::Logos;

/// A byte range in the source.
pub type Span = std::ops::Range<usize>;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\f]+")]
pub enum Tok<'s> {
    #[token("\n")]
    Newline,
    #[regex(r"//[^\n]*", logos::skip, allow_greedy = true)]
    #[regex(r"/\*([^*]|\*+[^*/])*\*+/", logos::skip)]
    Comment,
    #[token("/*", priority = 1)]
    UnterminatedComment,
    /// `*/` outside a comment.
    #[token("*/")]
    StrayCommentEnd,

    #[token(".entry")]
    Entry,
    #[token(".func")]
    Func,
    /// PTX header directives: `.version 7.8`, `.target sm_52`, `.address_size 64`.
    #[token(".version")]
    Version,
    #[token(".target")]
    Target,
    #[token(".address_size")]
    AddressSize,
    /// Linkage of an entry (`.visible`, `.weak`, `.extern`); recorded nowhere.
    #[token(".visible")]
    Visible,
    #[token(".weak")]
    Weak,
    #[token(".extern")]
    Extern,
    #[token(".align")]
    Align,
    #[token(".reg")]
    Reg,
    #[token(".param")]
    Param,
    #[token(".global")]
    Global,
    #[token(".shared")]
    Shared,
    /// `.local`: a per-thread array (nvcc's `__local_depot0`).
    #[token(".local")]
    Local,
    #[token(".launch")]
    Launch,
    /// `.assert COND, "message";`: a precondition on the parameters.
    #[token(".assert")]
    Assert,
    /// `.bind kernel(args);`: a PTX entry's arguments.
    #[token(".bind")]
    Bind,
    /// `.ptr` in a PTX parameter's attributes.
    #[token(".ptr")]
    Ptr,
    #[token(".dma")]
    Dma,
    #[token(".iu")]
    Iu,
    #[token(".file")]
    File,
    #[token(".loc")]
    Loc,
    /// A value type: `.u32`, `.f64`, `.b8`, ...
    #[regex(r"\.(u8|s8|b8|u16|s16|b16|u32|s32|b32|f32|u64|s64|b64|f64)", |lex| spu_isa::Ty::from_name(&lex.slice()[1..]))]
    Type(spu_isa::Ty),
    #[token(".pred")]
    Pred,
    /// A performance directive after an entry's signature (CUDA's
    /// `__launch_bounds__`): `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`.
    #[regex(r"\.(maxntid|reqntid|minnctapersm|maxnreg)", |lex| &lex.slice()[1..])]
    EntryHint(&'s str),
    /// Any other `.word`: an unknown directive.
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Directive(&'s str),

    /// Identifiers, mnemonics with modifiers (`ld.global.f32`), labels, names.
    #[regex(r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z0-9_$]+)*", |lex| lex.slice())]
    Name(&'s str),
    /// `%r1`, `%tid.x`
    #[regex(r"%[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_]+)?", |lex| &lex.slice()[1..])]
    Register(&'s str),
    #[regex(r"[0-9]+|0[xX][0-9a-fA-F]+", |lex| lex.slice())]
    Int(&'s str),
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}", |lex| lex.slice())]
    Float(&'s str),
    #[regex(r#""[^"\n]*""#, |lex| { let s = lex.slice(); &s[1..s.len() - 1] })]
    Str(&'s str),
    /// A string whose line ends before its closing quote.
    #[regex(r#""[^"\n]*"#, allow_greedy = true)]
    UnterminatedStr,

    #[token(";")]
    Semi,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<=")]
    LtEq,
    #[token(">=")]
    GtEq,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("=")]
    Eq,
    #[token("@")]
    At,
    #[token("!")]
    Bang,
    #[token("|")]
    Pipe,

    /// A character the language does not use.
    Error,
}

impl std::fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Name(s) | Tok::Int(s) | Tok::Float(s) | Tok::Directive(s) => write!(f, "`{s}`"),
            Tok::EntryHint(s) => write!(f, "`.{s}`"),
            Tok::Register(s) => write!(f, "`%{s}`"),
            Tok::Type(t) => write!(f, "`.{t}`"),
            Tok::Str(s) => write!(f, "\"{s}\""),
            Tok::Newline => f.write_str("end of line"),
            other => write!(f, "`{}`", token_text(other)),
        }
    }
}

/// The fixed spelling of a punctuation or keyword token.
pub fn token_text(tok: &Tok<'_>) -> &'static str {
    match tok {
        Tok::Entry => ".entry",
        Tok::Func => ".func",
        Tok::Version => ".version",
        Tok::Target => ".target",
        Tok::AddressSize => ".address_size",
        Tok::Visible => ".visible",
        Tok::Weak => ".weak",
        Tok::Extern => ".extern",
        Tok::Align => ".align",
        Tok::Reg => ".reg",
        Tok::Param => ".param",
        Tok::Global => ".global",
        Tok::Shared => ".shared",
        Tok::Local => ".local",
        Tok::Launch => ".launch",
        Tok::Assert => ".assert",
        Tok::EqEq => "==",
        Tok::NotEq => "!=",
        Tok::LtEq => "<=",
        Tok::GtEq => ">=",
        Tok::Bind => ".bind",
        Tok::Ptr => ".ptr",
        Tok::Dma => ".dma",
        Tok::Iu => ".iu",
        Tok::File => ".file",
        Tok::Loc => ".loc",
        Tok::Pred => ".pred",
        Tok::Semi => ";",
        Tok::Comma => ",",
        Tok::Colon => ":",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::Lt => "<",
        Tok::Gt => ">",
        Tok::Plus => "+",
        Tok::Minus => "-",
        Tok::Star => "*",
        Tok::Slash => "/",
        Tok::Percent => "%",
        Tok::Eq => "=",
        Tok::At => "@",
        Tok::Bang => "!",
        Tok::Pipe => "|",
        Tok::UnterminatedComment => "/*",
        Tok::StrayCommentEnd => "*/",
        _ => "?",
    }
}

/// The UTF-8 byte order mark some editors put at the start of a file.
const BOM: &str = "\u{feff}";

/// Lexes the source lazily; unknown characters become [`Tok::Error`]. A byte order
/// mark at the start is skipped (spans still count its bytes).
pub fn lex(src: &str) -> Lexer<'_> {
    lex_from(src, 0)
}

/// Lexes `src` from byte `start` (the start of a token), with spans in `src`.
pub fn lex_from(src: &str, start: usize) -> Lexer<'_> {
    let skip = if start == 0 && src.starts_with(BOM) {
        BOM.len()
    } else {
        start
    };
    Lexer {
        inner: Tok::lexer(&src[skip..]).spanned(),
        skip,
    }
}

/// The tokens of a source with their spans (see [`lex`]).
pub struct Lexer<'s> {
    inner: logos::SpannedIter<'s, Tok<'s>>,
    skip: usize,
}

impl std::fmt::Debug for Lexer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lexer")
            .field("at", &(self.inner.span().end + self.skip))
            .finish()
    }
}

impl<'s> Iterator for Lexer<'s> {
    type Item = (Tok<'s>, Span);

    fn next(&mut self) -> Option<Self::Item> {
        let (t, span) = self.inner.next()?;
        Some((
            t.unwrap_or(Tok::Error),
            span.start + self.skip..span.end + self.skip,
        ))
    }
}

/// The offset of the first carriage return that does not start a CR LF pair.
pub fn bare_carriage_return(src: &str) -> Option<usize> {
    let bytes = src.as_bytes();
    src.match_indices('\r')
        .map(|(i, _)| i)
        .find(|&i| bytes.get(i + 1) != Some(&b'\n'))
}
