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
            #[inline]
            pub const fn code(self) -> u8 {
                self as u8
            }

            /// The value with this code, if any.
            #[inline]
            pub fn from_code(code: u8) -> Option<Self> {
                Self::ALL.get(usize::from(code)).copied()
            }

            /// The source spelling (without the leading dot or percent sign).
            #[inline]
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
    /// Operand data type of an instruction or a register. `.bN` types are untyped bit
    /// patterns of N bits: they meet any register of their size. 64-bit values live in
    /// aligned pairs of 32-bit registers (even register = low word); 8- and 16-bit
    /// values live in the low bits of one 32-bit register.
    Ty {
        U32 = "u32", S32 = "s32", F32 = "f32",
        U64 = "u64", S64 = "s64", F64 = "f64",
        U16 = "u16", S16 = "s16", U8 = "u8", S8 = "s8",
        B8 = "b8", B16 = "b16", B32 = "b32", B64 = "b64",
    }
}

/// What kind of values a type holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TyClass {
    Unsigned,
    Signed,
    /// Untyped bits (`.bN`).
    Bits,
    Float,
}

impl Ty {
    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Ty::U8 | Ty::S8 | Ty::B8 => 8,
            Ty::U16 | Ty::S16 | Ty::B16 => 16,
            Ty::U32 | Ty::S32 | Ty::F32 | Ty::B32 => 32,
            Ty::U64 | Ty::S64 | Ty::F64 | Ty::B64 => 64,
        }
    }

    /// Width in bytes.
    #[inline]
    pub const fn bytes(self) -> u32 {
        self.bits() / 8
    }

    /// 32-bit registers a value of this type occupies (1, or an aligned pair).
    #[inline]
    pub const fn regs(self) -> u8 {
        if self.bits() == 64 { 2 } else { 1 }
    }

    /// Unsigned, signed, bits or float.
    #[inline]
    pub const fn class(self) -> TyClass {
        match self {
            Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 => TyClass::Unsigned,
            Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64 => TyClass::Signed,
            Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64 => TyClass::Bits,
            Ty::F32 | Ty::F64 => TyClass::Float,
        }
    }

    /// The values a buffer or parameter of this type holds, as the closed range of
    /// `f64`s an initialiser (`const`, `ramp`, `random`) may give: integers within
    /// the type's range (bit types as unsigned), finite floats within f32's or f64's
    /// range. 64-bit integer bounds are the nearest `f64`s inside the range. The
    /// assembler and the loader both check initialisers against it, and
    /// [`Ty::bits_of`] converts a value in range.
    pub fn value_range(self) -> (f64, f64) {
        match self {
            Ty::F32 => (-f64::from(f32::MAX), f64::from(f32::MAX)),
            Ty::F64 => (-f64::MAX, f64::MAX),
            // 2^64 - 2048 and 2^63 - 1024: the largest f64s below 2^64 and 2^63.
            Ty::U64 | Ty::B64 => (0.0, 18_446_744_073_709_549_568.0),
            Ty::S64 => (-9_223_372_036_854_775_808.0, 9_223_372_036_854_774_784.0),
            t if t.is_signed() => {
                let half = (1u64 << (t.bits() - 1)) as f64;
                (-half, half - 1.0)
            }
            t => (0.0, ((1u64 << t.bits()) - 1) as f64),
        }
    }

    /// True when `v` can initialise a value of this type: within
    /// [`Ty::value_range`], or for `.f32` rounding to a finite f32
    /// (3.4028235e38, FLT_MAX as C and NumPy print it, lies just above it).
    pub fn holds(self, v: f64) -> bool {
        let (lo, hi) = self.value_range();
        match self {
            Ty::F32 => (v as f32).is_finite(),
            _ => v.is_finite() && lo <= v && v <= hi,
        }
    }

    /// The bit pattern (in the low [`Ty::bits`] bits) of `v`, a value within
    /// [`Ty::value_range`]: floats rounded to nearest, integers two's complement.
    pub fn bits_of(self, v: f64) -> u64 {
        match self {
            Ty::F32 => u64::from((v as f32).to_bits()),
            Ty::F64 => v.to_bits(),
            Ty::U64 | Ty::B64 => v as u64,
            t => (v as i64 as u64) & (u64::MAX >> (64 - t.bits())),
        }
    }

    /// True for integer and bit types.
    #[inline]
    pub const fn is_int(self) -> bool {
        !self.is_float()
    }

    /// True for `.f32` and `.f64`.
    #[inline]
    pub const fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// True for the signed integer types.
    #[inline]
    pub const fn is_signed(self) -> bool {
        matches!(self.class(), TyClass::Signed)
    }

    /// The integer type of a width and signedness.
    #[inline]
    pub const fn int(bits: u32, signed: bool) -> Ty {
        match (bits, signed) {
            (8, false) => Ty::U8,
            (8, true) => Ty::S8,
            (16, false) => Ty::U16,
            (16, true) => Ty::S16,
            (64, false) => Ty::U64,
            (64, true) => Ty::S64,
            (_, false) => Ty::U32,
            (_, true) => Ty::S32,
        }
    }

    /// The bit type of a width (8, 16, 32 or 64).
    #[inline]
    pub const fn b(bits: u32) -> Ty {
        match bits {
            8 => Ty::B8,
            16 => Ty::B16,
            64 => Ty::B64,
            _ => Ty::B32,
        }
    }

    /// The same kind of type at twice the width (`mul.wide`), if there is one.
    #[inline]
    pub const fn widened(self) -> Option<Ty> {
        Some(match self {
            Ty::U16 => Ty::U32,
            Ty::S16 => Ty::S32,
            Ty::U32 => Ty::U64,
            Ty::S32 => Ty::S64,
            Ty::B16 => Ty::B32,
            Ty::B32 => Ty::B64,
            _ => return None,
        })
    }

    /// The low `self.bits()` of `v`, sign-extended for a signed type and
    /// zero-extended otherwise: how a load or a read of a register widens a value
    /// of this type (PTX's rule for loads into wider registers).
    #[inline(always)]
    pub fn extend(self, v: u64) -> u64 {
        let w = self.bits();
        if w >= 64 {
            v
        } else if self.is_signed() {
            (((v << (64 - w)) as i64) >> (64 - w)) as u64
        } else {
            v & ((1u64 << w) - 1)
        }
    }

    /// True when a register declared with type `reg` may hold an operand of this
    /// instruction type: same size, and integer with integer or float with float,
    /// except that `.bN` meets any type of its size (PTX's type-checking rules).
    /// 8-bit values are held in registers of at least 16 bits.
    pub fn accepts_register(self, reg: Ty) -> bool {
        let size = |t: Ty| t.bits().max(16);
        if size(self) != size(reg) {
            return false;
        }
        self.class() == TyClass::Bits
            || reg.class() == TyClass::Bits
            || self.is_float() == reg.is_float()
    }
}

code_enum! {
    /// Comparison of `setp`. `lo ls hi hs` are the unsigned spellings of
    /// `lt le gt ge`; the `u` forms and `num`/`nan` are the unordered float
    /// comparisons (true when either operand is NaN, or test for NaN).
    Cmp {
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge",
        Lo = "lo", Ls = "ls", Hi = "hi", Hs = "hs",
        Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu",
        Num = "num", Nan = "nan",
    }
}

impl Cmp {
    /// True for comparisons that only apply to floats (unordered ones, num, nan).
    #[inline]
    pub const fn float_only(self) -> bool {
        matches!(
            self,
            Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Num | Cmp::Nan
        )
    }

    /// True for the unsigned-only spellings `lo ls hi hs`.
    #[inline]
    pub const fn unsigned_only(self) -> bool {
        matches!(self, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs)
    }
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
        Local = "local",
    }
}

impl Space {
    /// The CB side of a CB space.
    #[inline]
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
    /// Read-modify-write operation of `atom` and `red` (compare-and-swap has its own
    /// rows).
    AtomOp {
        Add = "add", Min = "min", Max = "max", Exch = "exch",
        And = "and", Or = "or", Xor = "xor", Inc = "inc", Dec = "dec",
    }
}

code_enum! {
    /// Which half of the double-width integer product `mul`/`mad` keep.
    Half { Lo = "lo", Hi = "hi" }
}

code_enum! {
    /// A side of a unit: the direction of a CB port, a blocksync link or an IU.
    /// Data flows west->east and north->south only (thesis 2.2.1).
    Side { North = "north", South = "south", East = "east", West = "west" }
}

impl Side {
    /// True for the sides a unit reads from (its producers are there).
    #[inline]
    pub const fn is_input(self) -> bool {
        matches!(self, Side::North | Side::West)
    }
}

code_enum! {
    /// Rounding of a float result (`rn` nearest even, `rz` toward zero, `rm` toward
    /// minus infinity, `rp` toward plus infinity), or of a float to an integral
    /// value (`rni rzi rmi rpi`, for `cvt`).
    Rnd {
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi",
    }
}

impl Rnd {
    /// True for the integer rounding spellings (`rni rzi rmi rpi`).
    #[inline]
    pub const fn integral(self) -> bool {
        matches!(self, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi)
    }

    /// The rounding direction with the integral distinction dropped.
    #[inline]
    pub const fn direction(self) -> Rnd {
        match self {
            Rnd::Rni => Rnd::Rn,
            Rnd::Rzi => Rnd::Rz,
            Rnd::Rmi => Rnd::Rm,
            Rnd::Rpi => Rnd::Rp,
            other => other,
        }
    }
}

code_enum! {
    /// Precision of `div`/`rcp`/`sqrt` and the special functions: `approx` is the
    /// fast SFU approximation, `full` the full-range f32 division.
    Prec { Approx = "approx", Full = "full" }
}

code_enum! {
    /// Flush subnormal f32 inputs and results to sign-preserving zero.
    Ftz { Ftz = "ftz" }
}

code_enum! {
    /// `bfind.shiftamt`: the shift that brings the found bit to the top
    /// (`31 - position` for 32-bit types, `63 - position` for 64-bit ones).
    ShiftAmt { ShiftAmt = "shiftamt" }
}

code_enum! {
    /// The class `testp` tests for: not infinite or NaN (`finite`), an infinity
    /// (`infinite`), not NaN (`number`), NaN (`notanumber`), a normal number
    /// (`normal`: finite, nonzero, not subnormal), a subnormal one (`subnormal`).
    TestpOp {
        Finite = "finite", Infinite = "infinite", Number = "number",
        NotANumber = "notanumber", Normal = "normal", Subnormal = "subnormal",
    }
}

code_enum! {
    /// Saturate: integers clamp to the type's range, floats to [0, 1] (NaN gives 0).
    Sat { Sat = "sat" }
}

code_enum! {
    /// `ld`/`st` `.volatile`: on machines with data caches the access skips the L1.
    Volatile { Volatile = "volatile" }
}

code_enum! {
    /// The `.pred` type of `vote.sync`'s all/any/uni forms.
    PredTy { Pred = "pred" }
}

code_enum! {
    /// `ld.global.nc`: read through the non-coherent (texture) path; cached like `.ca`.
    Nc { Nc = "nc" }
}

code_enum! {
    /// `bra.uni`: the branch is known to be uniform across the warp; recorded.
    Uni { Uni = "uni" }
}

code_enum! {
    /// `cvta.to`: convert a generic address to the state space (without: the reverse).
    To { To = "to" }
}

code_enum! {
    /// Vector access: 2 or 4 consecutive elements in consecutive, aligned registers.
    Vector { V2 = "v2", V4 = "v4" }
}

impl Vector {
    /// Number of elements.
    #[inline]
    pub const fn count(self) -> u8 {
        match self {
            Vector::V2 => 2,
            Vector::V4 => 4,
        }
    }
}

code_enum! {
    /// Cache operator of `ld`/`st`: chooses the cache levels on machines with data
    /// caches (`.ca`/`.wb` both, `.cg` the L2, `.cs`/`.lu` streaming, `.cv`/`.wt` none).
    CacheOp { Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt" }
}

code_enum! {
    /// Lane-index mode of `shfl.sync`.
    ShflMode { Up = "up", Down = "down", Bfly = "bfly", Idx = "idx" }
}

code_enum! {
    /// Reduction of `vote.sync` over the predicate of the participating lanes.
    VoteMode { All = "all", Any = "any", Uni = "uni" }
}

code_enum! {
    /// Level of `membar`.
    MemLevel { Cta = "cta", Gl = "gl", Sys = "sys" }
}

code_enum! {
    /// Semantics of `fence`.
    FenceSem { Sc = "sc", AcqRel = "acq_rel" }
}

code_enum! {
    /// Scope of `fence`.
    Scope { Cta = "cta", Gpu = "gpu", Sys = "sys" }
}

code_enum! {
    /// Direction of the funnel shift `shf`.
    ShfDir { L = "l", R = "r" }
}

code_enum! {
    /// Shift-amount handling of `shf`: `clamp` to 32, or `wrap` modulo 32.
    ShfMode { Clamp = "clamp", Wrap = "wrap" }
}

code_enum! {
    /// Byte-permute mode of `prmt` (absent: the generic selector form).
    PrmtMode { F4e = "f4e", B4e = "b4e", Rc8 = "rc8", Ecl = "ecl", Ecr = "ecr", Rc16 = "rc16" }
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
        NWarpId = "nwarpid", Smid = "smid", NSmid = "nsmid",
        LanemaskEq = "lanemask_eq", LanemaskLe = "lanemask_le", LanemaskLt = "lanemask_lt",
        LanemaskGe = "lanemask_ge", LanemaskGt = "lanemask_gt",
    }
}

impl Special {
    /// One-line meaning, for the reference page and the language guide.
    #[inline]
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
            Special::LaneId => "lane of the thread within its warp (0 to 31)",
            Special::WarpId => "warp index within the block",
            Special::SmidX | Special::SmidY => "column / row of the executing SM in the grid",
            Special::IsIu => "1 on an Interface Unit, 0 on an SM",
            Special::IuDir => "side of the executing IU: 0 north, 1 south, 2 east, 3 west",
            Special::IuId => "index of the IU along its side, in the launched grid",
            Special::Clock => "low 32 bits of the unit's cycle counter",
            Special::NWarpId => "number of warp slots of the unit (warps of the block)",
            Special::Smid => "linear index of the executing SM (row * columns + column)",
            Special::NSmid => "number of SMs in the grid",
            Special::LanemaskEq => "bit of the thread's own lane",
            Special::LanemaskLe => "bits of the lanes up to and including the thread's",
            Special::LanemaskLt => "bits of the lanes below the thread's",
            Special::LanemaskGe => "bits of the lanes from the thread's upwards",
            Special::LanemaskGt => "bits of the lanes above the thread's",
        }
    }
}
