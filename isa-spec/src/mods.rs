//! Modifiers: the kinds an instruction row can encode ([`ModKind`], with their
//! names, widths and descriptions) and the values one instruction carries
//! ([`Mods`]). The table, the encoder and decoder, and the checks all use these.

use crate::names::{
    AtomOp, CacheOp, Cmp, FenceSem, Ftz, Half, MemLevel, Nc, Prec, PredTy, PrmtMode, Rnd, Sat,
    Scope, ShfDir, ShfMode, ShflMode, ShiftAmt, Side, Space, TestpOp, To, Ty, Uni, Vector,
    Volatile, VoteMode,
};

/// Declares, from one list, the modifier kinds ([`ModKind`] with its names,
/// descriptions and short names) and [`Mods`] with one optional field per kind and
/// the accessors that map kinds to fields: a new kind is one line of the list.
macro_rules! mods {
    ($($(#[doc = $doc:literal])* $kind:ident => $field:ident : $ty:ident, $describe:literal, $short:literal;)+) => {
        /// A modifier field: which enumeration it encodes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ModKind {
            $($(#[doc = $doc])* $kind,)+
        }

        impl ModKind {
            /// Every kind, in the order the reference page lists them.
            pub const ALL: &'static [ModKind] = &[$(ModKind::$kind,)+];

            /// All spellings of the enumeration, indexed by value code.
            pub const fn names(self) -> &'static [&'static str] {
                match self {
                    $(ModKind::$kind => $ty::NAMES,)+
                }
            }

            /// What the field is, for messages and the reference page.
            pub const fn describe(self) -> &'static str {
                match self {
                    $(ModKind::$kind => $describe,)+
                }
            }

            /// Short name used in the encoding column of the reference page.
            pub const fn short(self) -> &'static str {
                match self {
                    $(ModKind::$kind => $short,)+
                }
            }
        }

        /// Modifier values of an instruction (absent ones are `None`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct Mods {
            $(pub $field: Option<$ty>,)+
        }

        impl Mods {
            /// No modifier at all.
            pub const NONE: Mods = Mods { $($field: None,)+ };

            /// The code of a modifier kind, if present.
            pub fn get(&self, kind: ModKind) -> Option<u8> {
                match kind {
                    $(ModKind::$kind => self.$field.map($ty::code),)+
                }
            }

            /// Sets a modifier from its code; false if the code is not a value of the kind.
            pub fn set(&mut self, kind: ModKind, code: u8) -> bool {
                match kind {
                    $(ModKind::$kind => self.$field = $ty::from_code(code),)+
                }
                self.get(kind).is_some()
            }

            /// Removes a modifier.
            pub fn clear(&mut self, kind: ModKind) {
                match kind {
                    $(ModKind::$kind => self.$field = None,)+
                }
            }
        }
    };
}

mods! {
    /// Operand type (`.u32`, `.f64`, `.b8`, ...).
    Type => ty: Ty, "type", "type";
    /// Source type of `cvt` (written second: `cvt.f32.s32`).
    SrcType => src_ty: Ty, "source type", "srctype";
    /// Comparison of `setp`.
    Cmp => cmp: Cmp, "comparison", "cmp";
    /// State space of `ld`/`st`/`cvta`.
    Space => space: Space, "state space", "space";
    /// Operation of `atom.global`.
    AtomOp => atom: AtomOp, "atomic operation", "atomop";
    /// Half of an integer product (`.lo`, `.hi`).
    Half => half: Half, "product half", "half";
    /// Link of a directional blocksync; absent for the global form.
    Side => side: Side, "side", "side";
    /// Rounding mode.
    Rnd => rnd: Rnd, "rounding", "rnd";
    /// `.approx` / `.full`.
    Prec => prec: Prec, "precision", "prec";
    /// `.ftz`.
    Ftz => ftz: Ftz, "flush to zero", "ftz";
    /// `.sat`.
    Sat => sat: Sat, "saturation", "sat";
    /// `.volatile`.
    Volatile => volatile: Volatile, "volatile", "volatile";
    /// `.nc`.
    Nc => nc: Nc, "non-coherent", "nc";
    /// `.uni`.
    Uni => uni: Uni, "uniform", "uni";
    /// `.to` of `cvta`.
    To => to: To, "direction", "to";
    /// `.v2` / `.v4`.
    Vector => vec: Vector, "vector width", "vec";
    /// Cache operator.
    CacheOp => cache: CacheOp, "cache operator", "cop";
    /// Mode of `shfl.sync`.
    ShflMode => shfl: ShflMode, "shuffle mode", "mode";
    /// Mode of `vote.sync`.
    VoteMode => vote: VoteMode, "vote mode", "mode";
    /// Level of `membar`.
    MemLevel => level: MemLevel, "barrier level", "level";
    /// Semantics of `fence`.
    FenceSem => sem: FenceSem, "fence semantics", "sem";
    /// Scope of `fence`.
    Scope => scope: Scope, "scope", "scope";
    /// Direction of `shf`.
    ShfDir => dir: ShfDir, "shift direction", "dir";
    /// Shift-amount mode of `shf`.
    ShfMode => shf_mode: ShfMode, "shift mode", "mode";
    /// Mode of `prmt`.
    PrmtMode => prmt: PrmtMode, "permute mode", "mode";
    /// The `.pred` type of `vote.sync`.
    PredTy => pred_ty: PredTy, "predicate type", "pred";
    /// `.shiftamt` of `bfind`.
    ShiftAmt => shiftamt: ShiftAmt, "shift amount", "shiftamt";
    /// The class `testp` tests for.
    TestpOp => testp: TestpOp, "test", "test";
}

impl ModKind {
    /// Bits the field takes: enough for every value, plus "absent" if optional.
    pub const fn width(self, optional: bool) -> u32 {
        let n = self.names().len() as u32 + if optional { 1 } else { 0 };
        u32::BITS - (n - 1).leading_zeros()
    }
}
