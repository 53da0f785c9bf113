//! The vocabulary of the ISA: modifier enumerations (types, comparisons, state spaces,
//! atomic operations, CB sides) and the special registers, each with its source
//! spelling and its numeric code in the encoding.

/// Declares a fieldless enum whose variants have a source spelling and a dense code
/// (the variant's position), so tables, encoder, decoder and printer share one list.
macro_rules! code_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in code order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Source spellings, indexed by code.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The numeric code used in the encoding.
            pub const fn code(self) -> u8 {
                self as u8
            }

            /// The value with this code, if any.
            pub fn from_code(code: u8) -> Option<Self> {
                Self::ALL.get(usize::from(code)).copied()
            }

            /// The source spelling (without the leading dot or percent sign).
            pub const fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            /// Parses a source spelling.
            pub fn from_name(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.name() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

code_enum! {
    /// Operand data type of an instruction or a register.
    Ty { U32 = "u32", S32 = "s32", F32 = "f32" }
}

impl Ty {
    /// True for the two 32-bit integer types.
    pub const fn is_int(self) -> bool {
        matches!(self, Ty::U32 | Ty::S32)
    }
}

code_enum! {
    /// Comparison of `setp`.
    Cmp { Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge" }
}

code_enum! {
    /// State space of `ld`/`st`. The CB spaces name the port of the executing unit.
    Space {
        Global = "global",
        Shared = "shared",
        Param = "param",
        CbNorth = "cb.north",
        CbSouth = "cb.south",
        CbEast = "cb.east",
        CbWest = "cb.west",
    }
}

impl Space {
    /// The CB side of a CB space.
    pub const fn cb_side(self) -> Option<Side> {
        match self {
            Space::CbNorth => Some(Side::North),
            Space::CbSouth => Some(Side::South),
            Space::CbEast => Some(Side::East),
            Space::CbWest => Some(Side::West),
            _ => None,
        }
    }
}

code_enum! {
    /// Read-modify-write operation of `atom.global` (compare-and-swap has its own row).
    AtomOp { Add = "add", Min = "min", Max = "max", Exch = "exch" }
}

code_enum! {
    /// Which half of the 64-bit integer product `mul`/`mad` keep.
    Half { Lo = "lo", Hi = "hi" }
}

code_enum! {
    /// A side of a unit: the direction of a CB port, a blocksync link or an IU.
    /// Data flows west->east and north->south only (thesis 2.2.1).
    Side { North = "north", South = "south", East = "east", West = "west" }
}

impl Side {
    /// True for the sides a unit reads from (its producers are there).
    pub const fn is_input(self) -> bool {
        matches!(self, Side::North | Side::West)
    }
}

code_enum! {
    /// Special (read-only) registers, read with `mov.u32`. All are 32-bit unsigned.
    Special {
        TidX = "tid.x", TidY = "tid.y", TidZ = "tid.z",
        NtidX = "ntid.x", NtidY = "ntid.y", NtidZ = "ntid.z",
        CtaidX = "ctaid.x", CtaidY = "ctaid.y", CtaidZ = "ctaid.z",
        NctaidX = "nctaid.x", NctaidY = "nctaid.y", NctaidZ = "nctaid.z",
        LaneId = "laneid", WarpId = "warpid",
        SmidX = "smid.x", SmidY = "smid.y",
        IsIu = "is_iu", IuDir = "iudir", IuId = "iuid",
        Clock = "clock",
    }
}

impl Special {
    /// One-line meaning, for the reference page and the language guide.
    pub const fn doc(self) -> &'static str {
        match self {
            Special::TidX | Special::TidY | Special::TidZ => "thread index within the block",
            Special::NtidX | Special::NtidY | Special::NtidZ => "block dimensions (threads)",
            Special::CtaidX | Special::CtaidY | Special::CtaidZ => {
                "launched block index (passes are invisible to kernels, thesis 2.2.2)"
            }
            Special::NctaidX | Special::NctaidY | Special::NctaidZ => {
                "launched grid dimensions (blocks)"
            }
            Special::LaneId => "lane of the thread within its warp (0..32)",
            Special::WarpId => "warp index within the block",
            Special::SmidX | Special::SmidY => "column / row of the executing SM in the grid",
            Special::IsIu => "1 on an Interface Unit, 0 on an SM",
            Special::IuDir => "side of the executing IU: 0 north, 1 south, 2 east, 3 west",
            Special::IuId => "index of the IU along its side, in the launched grid",
            Special::Clock => "low 32 bits of the unit's cycle counter",
        }
    }
}
