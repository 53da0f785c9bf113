//! Modifiers: the kinds an instruction row can encode ([`ModKind`], with their
//! names, widths and descriptions) and the values one instruction carries
//! ([`Mods`]). The table, the encoder and decoder, and the checks all use these.

use crate::names::{
    AtomOp, CacheOp, Cmp, FenceSem, Ftz, Half, MemLevel, Nc, Prec, PredTy, PrmtMode, Rnd, Sat,
    Scope, ShfDir, ShfMode, ShflMode, ShiftAmt, Side, Space, TestpOp, To, Ty, Uni, Vector,
    Volatile, VoteMode,
};

/// A modifier field: which enumeration it encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModKind {
    /// Operand type (`.u32`, `.f64`, `.b8`, ...).
    Type,
    /// Source type of `cvt` (written second: `cvt.f32.s32`).
    SrcType,
    /// Comparison of `setp`.
    Cmp,
    /// State space of `ld`/`st`/`cvta`.
    Space,
    /// Operation of `atom.global`.
    AtomOp,
    /// Half of an integer product (`.lo`, `.hi`).
    Half,
    /// Link of a directional blocksync; absent for the global form.
    Side,
    /// Rounding mode.
    Rnd,
    /// `.approx` / `.full`.
    Prec,
    /// `.ftz`.
    Ftz,
    /// `.sat`.
    Sat,
    /// `.volatile`.
    Volatile,
    /// `.nc`.
    Nc,
    /// `.uni`.
    Uni,
    /// `.to` of `cvta`.
    To,
    /// `.v2` / `.v4`.
    Vector,
    /// Cache operator.
    CacheOp,
    /// Mode of `shfl.sync`.
    ShflMode,
    /// Mode of `vote.sync`.
    VoteMode,
    /// Level of `membar`.
    MemLevel,
    /// Semantics of `fence`.
    FenceSem,
    /// Scope of `fence`.
    Scope,
    /// Direction of `shf`.
    ShfDir,
    /// Shift-amount mode of `shf`.
    ShfMode,
    /// Mode of `prmt`.
    PrmtMode,
    /// The `.pred` type of `vote.sync`.
    PredTy,
    /// `.shiftamt` of `bfind`.
    ShiftAmt,
    /// The class `testp` tests for.
    TestpOp,
}

impl ModKind {
    /// Every kind, in the order the reference page lists them.
    pub const ALL: &'static [ModKind] = &[
        ModKind::Type,
        ModKind::SrcType,
        ModKind::Cmp,
        ModKind::Space,
        ModKind::AtomOp,
        ModKind::Half,
        ModKind::Side,
        ModKind::Rnd,
        ModKind::Prec,
        ModKind::Ftz,
        ModKind::Sat,
        ModKind::Volatile,
        ModKind::Nc,
        ModKind::Uni,
        ModKind::To,
        ModKind::Vector,
        ModKind::CacheOp,
        ModKind::ShflMode,
        ModKind::VoteMode,
        ModKind::MemLevel,
        ModKind::FenceSem,
        ModKind::Scope,
        ModKind::ShfDir,
        ModKind::ShfMode,
        ModKind::PrmtMode,
        ModKind::PredTy,
        ModKind::ShiftAmt,
        ModKind::TestpOp,
    ];

    /// All spellings of the enumeration, indexed by value code.
    pub const fn names(self) -> &'static [&'static str] {
        match self {
            ModKind::Type | ModKind::SrcType => Ty::NAMES,
            ModKind::Cmp => Cmp::NAMES,
            ModKind::Space => Space::NAMES,
            ModKind::AtomOp => AtomOp::NAMES,
            ModKind::Half => Half::NAMES,
            ModKind::Side => crate::names::Side::NAMES,
            ModKind::Rnd => Rnd::NAMES,
            ModKind::Prec => Prec::NAMES,
            ModKind::Ftz => Ftz::NAMES,
            ModKind::Sat => Sat::NAMES,
            ModKind::Volatile => Volatile::NAMES,
            ModKind::Nc => Nc::NAMES,
            ModKind::Uni => Uni::NAMES,
            ModKind::To => To::NAMES,
            ModKind::Vector => Vector::NAMES,
            ModKind::CacheOp => CacheOp::NAMES,
            ModKind::ShflMode => ShflMode::NAMES,
            ModKind::VoteMode => VoteMode::NAMES,
            ModKind::MemLevel => MemLevel::NAMES,
            ModKind::FenceSem => FenceSem::NAMES,
            ModKind::Scope => Scope::NAMES,
            ModKind::ShfDir => ShfDir::NAMES,
            ModKind::ShfMode => ShfMode::NAMES,
            ModKind::PrmtMode => PrmtMode::NAMES,
            ModKind::PredTy => crate::names::PredTy::NAMES,
            ModKind::ShiftAmt => crate::names::ShiftAmt::NAMES,
            ModKind::TestpOp => TestpOp::NAMES,
        }
    }

    /// Bits the field takes: enough for every value, plus "absent" if optional.
    pub const fn width(self, optional: bool) -> u32 {
        let n = self.names().len() as u32 + if optional { 1 } else { 0 };
        u32::BITS - (n - 1).leading_zeros()
    }

    /// What the field is, for messages and the reference page.
    pub const fn describe(self) -> &'static str {
        match self {
            ModKind::Type => "type",
            ModKind::SrcType => "source type",
            ModKind::Cmp => "comparison",
            ModKind::Space => "state space",
            ModKind::AtomOp => "atomic operation",
            ModKind::Half => "product half",
            ModKind::Side => "side",
            ModKind::Rnd => "rounding",
            ModKind::Prec => "precision",
            ModKind::Ftz => "flush to zero",
            ModKind::Sat => "saturation",
            ModKind::Volatile => "volatile",
            ModKind::Nc => "non-coherent",
            ModKind::Uni => "uniform",
            ModKind::To => "direction",
            ModKind::Vector => "vector width",
            ModKind::CacheOp => "cache operator",
            ModKind::ShflMode => "shuffle mode",
            ModKind::VoteMode => "vote mode",
            ModKind::MemLevel => "barrier level",
            ModKind::FenceSem => "fence semantics",
            ModKind::Scope => "scope",
            ModKind::ShfDir => "shift direction",
            ModKind::ShfMode => "shift mode",
            ModKind::PrmtMode => "permute mode",
            ModKind::PredTy => "predicate type",
            ModKind::ShiftAmt => "shift amount",
            ModKind::TestpOp => "test",
        }
    }

    /// Short name used in the encoding column of the reference page.
    pub const fn short(self) -> &'static str {
        match self {
            ModKind::Type => "type",
            ModKind::SrcType => "srctype",
            ModKind::Cmp => "cmp",
            ModKind::Space => "space",
            ModKind::AtomOp => "atomop",
            ModKind::Half => "half",
            ModKind::Side => "side",
            ModKind::Rnd => "rnd",
            ModKind::Prec => "prec",
            ModKind::Ftz => "ftz",
            ModKind::Sat => "sat",
            ModKind::Volatile => "volatile",
            ModKind::Nc => "nc",
            ModKind::Uni => "uni",
            ModKind::To => "to",
            ModKind::Vector => "vec",
            ModKind::CacheOp => "cop",
            ModKind::ShflMode => "mode",
            ModKind::VoteMode => "mode",
            ModKind::MemLevel => "level",
            ModKind::FenceSem => "sem",
            ModKind::Scope => "scope",
            ModKind::ShfDir => "dir",
            ModKind::ShfMode => "mode",
            ModKind::PrmtMode => "mode",
            ModKind::PredTy => "pred",
            ModKind::ShiftAmt => "shiftamt",
            ModKind::TestpOp => "test",
        }
    }
}

/// Declares [`Mods`] with one optional field per modifier kind and the accessors
/// that map kinds to fields, so the list exists once.
macro_rules! mods {
    ($($kind:ident => $field:ident : $ty:ident),+ $(,)?) => {
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
    Type => ty: Ty,
    SrcType => src_ty: Ty,
    Cmp => cmp: Cmp,
    Space => space: Space,
    AtomOp => atom: AtomOp,
    Half => half: Half,
    Side => side: Side,
    Rnd => rnd: Rnd,
    Prec => prec: Prec,
    Ftz => ftz: Ftz,
    Sat => sat: Sat,
    Volatile => volatile: Volatile,
    Nc => nc: Nc,
    Uni => uni: Uni,
    To => to: To,
    Vector => vec: Vector,
    CacheOp => cache: CacheOp,
    ShflMode => shfl: ShflMode,
    VoteMode => vote: VoteMode,
    MemLevel => level: MemLevel,
    FenceSem => sem: FenceSem,
    Scope => scope: Scope,
    ShfDir => dir: ShfDir,
    ShfMode => shf_mode: ShfMode,
    PrmtMode => prmt: PrmtMode,
    PredTy => pred_ty: PredTy,
    ShiftAmt => shiftamt: ShiftAmt,
    TestpOp => testp: TestpOp,
}
