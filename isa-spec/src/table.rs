//! The ISA table: one row per instruction with its mnemonic, opcode, encoding fields
//! (modifiers and operands, packed in row order), execution classes and a one-line
//! semantics doc. Encoder, decoder, assembler checks, disassembler, timing and
//! energy classes and `ISA.md` are all derived from [`TABLE`].

use crate::class::{EnergyClass as E, ExecClass, TimingClass as T, Units, ex};
use crate::names::{AtomOp, Cmp, Half, Space, Ty};

/// Bits of the fixed header of every instruction word: opcode (8) and guard (6).
pub const HEADER_BITS: u32 = 14;
/// Width of an instruction word.
pub const WORD_BITS: u32 = 64;
/// Width of a general register index: 128 registers per thread.
pub const REG_BITS: u32 = 7;
/// Width of a predicate register index: 16 predicates per thread.
pub const PRED_BITS: u32 = 4;
/// Width of a code address (instruction index).
pub const TARGET_BITS: u32 = 24;

/// A modifier field: which enumeration it encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModKind {
    /// Operand type (`.u32`, `.s32`, `.f32`).
    Type,
    /// Source type of `cvt` (written second: `cvt.f32.s32`).
    SrcType,
    /// Comparison of `setp`.
    Cmp,
    /// State space of `ld`/`st`.
    Space,
    /// Operation of `atom.global`.
    AtomOp,
    /// Half of an integer product (`.lo`, `.hi`).
    Half,
    /// Link of a directional blocksync; absent for the global form.
    Side,
}

impl ModKind {
    /// Bits the field takes (optional fields reserve code 0 for "absent").
    pub const fn width(self) -> u32 {
        match self {
            ModKind::Type | ModKind::SrcType | ModKind::AtomOp => 2,
            ModKind::Cmp | ModKind::Space | ModKind::Side => 3,
            ModKind::Half => 2,
        }
    }

    /// All spellings of the enumeration, indexed by value code.
    pub const fn names(self) -> &'static [&'static str] {
        match self {
            ModKind::Type | ModKind::SrcType => Ty::NAMES,
            ModKind::Cmp => Cmp::NAMES,
            ModKind::Space => Space::NAMES,
            ModKind::AtomOp => AtomOp::NAMES,
            ModKind::Half => Half::NAMES,
            ModKind::Side => crate::names::Side::NAMES,
        }
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
        }
    }
}

/// The shape of an operand field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandKind {
    /// A general register (7 bits).
    Reg,
    /// A predicate register (4 bits).
    Pred,
    /// A register or a 16-bit immediate (1 flag bit + 16 bits).
    RegOrImm,
    /// An address `[reg+imm16]` or `[imm16]` (1 + 7 + 16 bits).
    Mem,
    /// The source of `mov`: register, 32-bit immediate, special register, or the
    /// address of a buffer or shared array (2 tag bits + 32 bits).
    MovSrc,
    /// A branch target (instruction index).
    Target,
}

impl OperandKind {
    /// Bits the field takes.
    pub const fn width(self) -> u32 {
        match self {
            OperandKind::Reg => REG_BITS,
            OperandKind::Pred => PRED_BITS,
            OperandKind::RegOrImm => 1 + 16,
            OperandKind::Mem => 1 + REG_BITS + 16,
            OperandKind::MovSrc => 2 + 32,
            OperandKind::Target => TARGET_BITS,
        }
    }

    /// What the operand is, for messages and the reference page.
    pub const fn describe(self) -> &'static str {
        match self {
            OperandKind::Reg => "register",
            OperandKind::Pred => "predicate",
            OperandKind::RegOrImm => "register or immediate",
            OperandKind::Mem => "address",
            OperandKind::MovSrc => "register, immediate, special register or symbol",
            OperandKind::Target => "label",
        }
    }
}

/// Which type an operand must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandTy {
    /// The instruction's `Type` modifier.
    Main,
    /// The instruction's `SrcType` modifier.
    Src,
    /// Always `.u32` (addresses, shift amounts).
    U32,
    /// A predicate.
    Pred,
    /// Not typed (labels).
    None,
}

/// Whether the instruction writes or reads an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Def,
    Use,
}

/// One field of an instruction word after the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// A modifier. `allowed` is a bit mask over value codes; `optional` fields encode
    /// "absent" as 0 and value `v` as `v + 1`.
    Mod {
        kind: ModKind,
        allowed: u16,
        optional: bool,
    },
    /// An operand written in the source, in order.
    Operand {
        name: &'static str,
        kind: OperandKind,
        ty: OperandTy,
        role: Role,
    },
    /// The reconvergence point of a branch (immediate post-dominator), computed by the
    /// assembler, never written in the source. All ones means "none".
    Reconv,
}

impl Field {
    /// Bits the field takes.
    pub const fn width(&self) -> u32 {
        match self {
            Field::Mod { kind, .. } => kind.width(),
            Field::Operand { kind, .. } => kind.width(),
            Field::Reconv => TARGET_BITS,
        }
    }
}

/// How the execution class of a row depends on its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecRule {
    /// The same for every form.
    Fixed(ExecClass),
    /// Chosen by the `Type` modifier: integer forms or the `.f32` form.
    ByType { int: ExecClass, float: ExecClass },
    /// `cvt`: any conversion touching `.f32` needs the FPU.
    Convert { int: ExecClass, float: ExecClass },
    /// Chosen by the state space: global, shared, param, CB.
    BySpace {
        global: ExecClass,
        shared: ExecClass,
        param: ExecClass,
        cb: ExecClass,
    },
}

/// A constraint between modifiers that the field list alone cannot express.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Integer forms need `.lo`/`.hi`; the `.f32` form takes none.
    HalfForIntOnly,
}

/// One instruction of the ISA.
#[derive(Debug, Clone, Copy)]
pub struct InstrSpec {
    /// Mnemonic without modifiers; may contain dots (`bar.blocksync`).
    pub mnemonic: &'static str,
    /// Opcode, unique across the table.
    pub opcode: u8,
    /// Fields after the header, in encoding and source order.
    pub fields: &'static [Field],
    /// Execution classes.
    pub exec: ExecRule,
    /// Extra modifier constraint, if any.
    pub rule: Option<Rule>,
    /// One-line semantics.
    pub doc: &'static str,
    /// An example in source syntax.
    pub example: &'static str,
}

const fn mask(codes: &[u8]) -> u16 {
    let mut m = 0u16;
    let mut i = 0;
    while i < codes.len() {
        m |= 1 << codes[i];
        i += 1;
    }
    m
}

const INT: u16 = mask(&[Ty::U32 as u8, Ty::S32 as u8]);
const ALL_TY: u16 = mask(&[Ty::U32 as u8, Ty::S32 as u8, Ty::F32 as u8]);
const SIGNED: u16 = mask(&[Ty::S32 as u8, Ty::F32 as u8]);
const F32: u16 = mask(&[Ty::F32 as u8]);

const fn ty(allowed: u16) -> Field {
    Field::Mod {
        kind: ModKind::Type,
        allowed,
        optional: false,
    }
}
const fn modifier(kind: ModKind, allowed: u16, optional: bool) -> Field {
    Field::Mod {
        kind,
        allowed,
        optional,
    }
}
const fn reg(name: &'static str, ty: OperandTy, role: Role) -> Field {
    Field::Operand {
        name,
        kind: OperandKind::Reg,
        ty,
        role,
    }
}
const fn opnd(name: &'static str, kind: OperandKind, ty: OperandTy, role: Role) -> Field {
    Field::Operand {
        name,
        kind,
        ty,
        role,
    }
}

use OperandKind as K;
use OperandTy as OT;
use Role::{Def, Use};

const D: Field = reg("d", OT::Main, Def);
const A: Field = reg("a", OT::Main, Use);
const B: Field = reg("b", OT::Main, Use);
const C: Field = reg("c", OT::Main, Use);
const B_IMM: Field = opnd("b", K::RegOrImm, OT::Main, Use);
const ADDR: Field = opnd("addr", K::Mem, OT::U32, Use);

const BINARY_ALL: &[Field] = &[ty(ALL_TY), D, A, B_IMM];
const BINARY_INT: &[Field] = &[ty(INT), D, A, B_IMM];
const UNARY_SIGNED: &[Field] = &[ty(SIGNED), D, A];
const UNARY_F32: &[Field] = &[ty(F32), D, A];

const IU: Units = Units::SM_IU;
const SM: Units = Units::SM;

const INT_ADD: ExecClass = ex(T::IntAlu, E::IntAdd, IU);
const INT_LOGIC: ExecClass = ex(T::IntAlu, E::IntLogic, IU);
const INT_MUL: ExecClass = ex(T::IntMul, E::IntMul, IU);
const INT_DIV: ExecClass = ex(T::IntDiv, E::IntDiv, IU);
const FP_ADD: ExecClass = ex(T::Fpu, E::FpAdd, SM);
const FP_MUL: ExecClass = ex(T::Fpu, E::FpMul, SM);
const SFU: ExecClass = ex(T::Sfu, E::FpSfu, SM);
const MOVE: ExecClass = ex(T::IntAlu, E::Move, IU);

const ARITH: ExecRule = ExecRule::ByType {
    int: INT_ADD,
    float: FP_ADD,
};

/// The instruction set. Adding an instruction is adding a row here (and its
/// conformance test under `tests/conformance/`).
pub const TABLE: &[InstrSpec] = &[
    InstrSpec {
        mnemonic: "add",
        opcode: 0x01,
        fields: BINARY_ALL,
        exec: ARITH,
        rule: None,
        doc: "d = a + b (integer forms wrap)",
        example: "add.s32 %r1, %r2, 4;",
    },
    InstrSpec {
        mnemonic: "sub",
        opcode: 0x02,
        fields: BINARY_ALL,
        exec: ARITH,
        rule: None,
        doc: "d = a - b (integer forms wrap)",
        example: "sub.f32 %f1, %f2, %f3;",
    },
    InstrSpec {
        mnemonic: "mul",
        opcode: 0x03,
        fields: &[modifier(ModKind::Half, 0b11, true), ty(ALL_TY), D, A, B_IMM],
        exec: ExecRule::ByType {
            int: INT_MUL,
            float: FP_MUL,
        },
        rule: Some(Rule::HalfForIntOnly),
        doc: "d = a * b; integer forms keep the low (.lo) or high (.hi) 32 bits of the 64-bit product",
        example: "mul.lo.u32 %r1, %r2, 32;",
    },
    InstrSpec {
        mnemonic: "mad",
        opcode: 0x04,
        fields: &[modifier(ModKind::Half, 0b01, false), ty(INT), D, A, B, C],
        exec: ExecRule::Fixed(INT_MUL),
        rule: None,
        doc: "d = low 32 bits of a * b, plus c",
        example: "mad.lo.s32 %r1, %r2, %r3, %r4;",
    },
    InstrSpec {
        mnemonic: "fma",
        opcode: 0x05,
        fields: &[ty(F32), D, A, B, C],
        exec: ExecRule::Fixed(ex(T::Fpu, E::FpFma, SM)),
        rule: None,
        doc: "d = a * b + c with a single rounding",
        example: "fma.f32 %f1, %f2, %f3, %f4;",
    },
    InstrSpec {
        mnemonic: "div",
        opcode: 0x06,
        fields: BINARY_ALL,
        exec: ExecRule::ByType {
            int: INT_DIV,
            float: SFU,
        },
        rule: None,
        doc: "d = a / b; integer forms truncate toward zero, and division by zero gives all ones (u32) or -1/INT_MAX (s32, see ISA notes)",
        example: "div.u32 %r1, %r2, %r3;",
    },
    InstrSpec {
        mnemonic: "rem",
        opcode: 0x07,
        fields: BINARY_INT,
        exec: ExecRule::Fixed(INT_DIV),
        rule: None,
        doc: "d = a % b with the sign of a; remainder by zero gives a",
        example: "rem.s32 %r1, %r2, 7;",
    },
    InstrSpec {
        mnemonic: "min",
        opcode: 0x08,
        fields: BINARY_ALL,
        exec: ARITH,
        rule: None,
        doc: "d = the smaller of a and b",
        example: "min.u32 %r1, %r2, %r3;",
    },
    InstrSpec {
        mnemonic: "max",
        opcode: 0x09,
        fields: BINARY_ALL,
        exec: ARITH,
        rule: None,
        doc: "d = the larger of a and b",
        example: "max.f32 %f1, %f2, %f3;",
    },
    InstrSpec {
        mnemonic: "abs",
        opcode: 0x0a,
        fields: UNARY_SIGNED,
        exec: ARITH,
        rule: None,
        doc: "d = |a| (abs.s32 of INT_MIN is INT_MIN)",
        example: "abs.f32 %f1, %f2;",
    },
    InstrSpec {
        mnemonic: "neg",
        opcode: 0x0b,
        fields: UNARY_SIGNED,
        exec: ARITH,
        rule: None,
        doc: "d = -a",
        example: "neg.s32 %r1, %r2;",
    },
    InstrSpec {
        mnemonic: "and",
        opcode: 0x0c,
        fields: BINARY_INT,
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = a & b",
        example: "and.u32 %r1, %r2, 0xff;",
    },
    InstrSpec {
        mnemonic: "or",
        opcode: 0x0d,
        fields: BINARY_INT,
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = a | b",
        example: "or.u32 %r1, %r2, %r3;",
    },
    InstrSpec {
        mnemonic: "xor",
        opcode: 0x0e,
        fields: BINARY_INT,
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = a ^ b",
        example: "xor.u32 %r1, %r2, %r3;",
    },
    InstrSpec {
        mnemonic: "not",
        opcode: 0x0f,
        fields: &[ty(INT), D, A],
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = !a (bitwise)",
        example: "not.u32 %r1, %r2;",
    },
    InstrSpec {
        mnemonic: "shl",
        opcode: 0x10,
        fields: &[ty(INT), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = a << b; shifts of 32 or more give 0",
        example: "shl.u32 %r1, %r2, 2;",
    },
    InstrSpec {
        mnemonic: "shr",
        opcode: 0x11,
        fields: &[ty(INT), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
        exec: ExecRule::Fixed(INT_LOGIC),
        rule: None,
        doc: "d = a >> b, arithmetic for .s32; shifts of 32 or more give 0 (or -1 for negative .s32)",
        example: "shr.s32 %r1, %r2, 1;",
    },
    InstrSpec {
        mnemonic: "rcp",
        opcode: 0x12,
        fields: UNARY_F32,
        exec: ExecRule::Fixed(SFU),
        rule: None,
        doc: "d = 1 / a",
        example: "rcp.f32 %f1, %f2;",
    },
    InstrSpec {
        mnemonic: "sqrt",
        opcode: 0x13,
        fields: UNARY_F32,
        exec: ExecRule::Fixed(SFU),
        rule: None,
        doc: "d = square root of a",
        example: "sqrt.f32 %f1, %f2;",
    },
    InstrSpec {
        mnemonic: "cvt",
        opcode: 0x14,
        fields: &[
            ty(ALL_TY),
            modifier(ModKind::SrcType, ALL_TY, false),
            D,
            reg("a", OT::Src, Use),
        ],
        exec: ExecRule::Convert {
            int: MOVE,
            float: ex(T::Fpu, E::Convert, SM),
        },
        rule: None,
        doc: "d = a converted from the source type (second) to the destination type (first); f32 to integer truncates toward zero and saturates, NaN gives 0",
        example: "cvt.f32.s32 %f1, %r1;",
    },
    InstrSpec {
        mnemonic: "setp",
        opcode: 0x15,
        fields: &[
            modifier(ModKind::Cmp, 0b11_1111, false),
            ty(ALL_TY),
            opnd("p", K::Pred, OT::Pred, Def),
            A,
            B_IMM,
        ],
        exec: ARITH,
        rule: None,
        doc: "p = (a cmp b); f32 comparisons with NaN are false except `ne`",
        example: "setp.lt.u32 %p1, %r1, %r2;",
    },
    InstrSpec {
        mnemonic: "selp",
        opcode: 0x16,
        fields: &[ty(ALL_TY), D, A, B, opnd("p", K::Pred, OT::Pred, Use)],
        exec: ExecRule::Fixed(MOVE),
        rule: None,
        doc: "d = p ? a : b",
        example: "selp.f32 %f1, %f2, %f3, %p1;",
    },
    InstrSpec {
        mnemonic: "mov",
        opcode: 0x17,
        fields: &[ty(ALL_TY), D, opnd("src", K::MovSrc, OT::Main, Use)],
        exec: ExecRule::Fixed(MOVE),
        rule: None,
        doc: "d = src: a register, a 32-bit immediate, a special register (.u32 only) or the address of a buffer or shared array (.u32 only)",
        example: "mov.u32 %r1, %ctaid.x;",
    },
    InstrSpec {
        mnemonic: "ld",
        opcode: 0x18,
        fields: &[
            modifier(
                ModKind::Space,
                mask(&[
                    Space::Global as u8,
                    Space::Shared as u8,
                    Space::Param as u8,
                    Space::CbNorth as u8,
                    Space::CbWest as u8,
                ]),
                false,
            ),
            ty(ALL_TY),
            D,
            ADDR,
        ],
        exec: ExecRule::BySpace {
            global: ex(T::Global, E::LoadGlobal, IU),
            shared: ex(T::Shared, E::LoadShared, SM),
            param: ex(T::Param, E::LoadParam, IU),
            cb: ex(T::Cb, E::LoadCb, IU),
        },
        rule: None,
        doc: "d = the 32-bit word at byte address addr of the state space; CBs are read from the north and west ports",
        example: "ld.cb.north.f32 %f1, [%r2+4];",
    },
    InstrSpec {
        mnemonic: "st",
        opcode: 0x19,
        fields: &[
            modifier(
                ModKind::Space,
                mask(&[
                    Space::Global as u8,
                    Space::Shared as u8,
                    Space::CbSouth as u8,
                    Space::CbEast as u8,
                ]),
                false,
            ),
            ty(ALL_TY),
            ADDR,
            reg("s", OT::Main, Use),
        ],
        exec: ExecRule::BySpace {
            global: ex(T::Global, E::StoreGlobal, IU),
            shared: ex(T::Shared, E::StoreShared, SM),
            param: ex(T::Param, E::LoadParam, IU),
            cb: ex(T::Cb, E::StoreCb, IU),
        },
        rule: None,
        doc: "the 32-bit word at byte address addr of the state space = s; CBs are written to the south and east ports",
        example: "st.global.f32 [%r2], %f1;",
    },
    InstrSpec {
        mnemonic: "atom.global",
        opcode: 0x1a,
        fields: &[
            modifier(ModKind::AtomOp, 0b1111, false),
            ty(INT),
            D,
            ADDR,
            B,
        ],
        exec: ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
        rule: None,
        doc: "atomically: d = old word at addr; word = old op b (exch stores b)",
        example: "atom.global.add.u32 %r1, [%r2], %r3;",
    },
    InstrSpec {
        mnemonic: "atom.global.cas",
        opcode: 0x1b,
        fields: &[ty(INT), D, ADDR, B, C],
        exec: ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
        rule: None,
        doc: "atomically: d = old word at addr; if old == b the word becomes c",
        example: "atom.global.cas.u32 %r1, [%r2], %r3, %r4;",
    },
    InstrSpec {
        mnemonic: "bra",
        opcode: 0x20,
        fields: &[opnd("target", K::Target, OT::None, Use), Field::Reconv],
        exec: ExecRule::Fixed(ex(T::Control, E::Branch, IU)),
        rule: None,
        doc: "jump to target (for the threads whose guard holds); divergent threads reconverge at the branch's immediate post-dominator",
        example: "@%p1 bra LOOP;",
    },
    InstrSpec {
        mnemonic: "exit",
        opcode: 0x21,
        fields: &[],
        exec: ExecRule::Fixed(ex(T::Control, E::Branch, IU)),
        rule: None,
        doc: "end the thread",
        example: "exit;",
    },
    InstrSpec {
        mnemonic: "nop",
        opcode: 0x22,
        fields: &[],
        exec: ExecRule::Fixed(ex(T::Control, E::Nop, IU)),
        rule: None,
        doc: "do nothing for one issue slot",
        example: "nop;",
    },
    InstrSpec {
        mnemonic: "bar.sync",
        opcode: 0x23,
        fields: &[],
        exec: ExecRule::Fixed(ex(T::Barrier, E::Barrier, IU)),
        rule: None,
        doc: "wait until every warp of the block has arrived",
        example: "bar.sync;",
    },
    InstrSpec {
        mnemonic: "bar.blocksync",
        opcode: 0x24,
        fields: &[modifier(ModKind::Side, 0b1111, true)],
        exec: ExecRule::Fixed(ex(T::BlockSync, E::BlockSync, IU)),
        rule: None,
        doc: "block barrier that also meets other units: without a side every active block and IU arrives and all CB pairs switch (thesis 2.2.1); with a side, the k-th sync meets the neighbour's k-th sync on that link and only that link's CB pair switches (thesis 4.2)",
        example: "bar.blocksync.south;",
    },
];

/// Fails to compile when a row is malformed: duplicate opcodes or mnemonics, fields
/// that overflow the 64-bit word, modifiers that allow values their field cannot hold.
const fn validate(table: &[InstrSpec]) {
    let mut i = 0;
    while i < table.len() {
        let row = &table[i];
        assert!(
            row.opcode != 0,
            "opcode 0 is reserved (an all-zero word is invalid)"
        );
        let mut j = i + 1;
        while j < table.len() {
            assert!(table[j].opcode != row.opcode, "two rows share an opcode");
            assert!(
                !const_str_eq(table[j].mnemonic, row.mnemonic),
                "two rows share a mnemonic"
            );
            j += 1;
        }
        let mut bits = HEADER_BITS;
        let mut f = 0;
        while f < row.fields.len() {
            let field = &row.fields[f];
            bits += field.width();
            if let Field::Mod {
                kind,
                allowed,
                optional,
            } = field
            {
                let n = kind.names().len() as u32 + if *optional { 1 } else { 0 };
                assert!(
                    n <= 1 << kind.width(),
                    "modifier enumeration overflows its field"
                );
                assert!(*allowed != 0, "modifier allows no value");
                assert!(
                    (*allowed as u32) < (1 << kind.names().len()),
                    "modifier allows a value outside its enumeration"
                );
            }
            f += 1;
        }
        assert!(
            bits <= WORD_BITS,
            "row fields overflow the 64-bit instruction word"
        );
        i += 1;
    }
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = validate(TABLE);

/// Index of a row in [`TABLE`]; what the decoder produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(u8);

impl Opcode {
    /// The row of the table.
    pub fn spec(self) -> &'static InstrSpec {
        &TABLE[usize::from(self.0)]
    }

    /// Position of the row in the table.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The row with this position.
    pub fn from_index(index: usize) -> Option<Opcode> {
        (index < TABLE.len()).then_some(Opcode(index as u8))
    }

    /// The row with this mnemonic.
    pub fn from_mnemonic(mnemonic: &str) -> Option<Opcode> {
        TABLE
            .iter()
            .position(|r| r.mnemonic == mnemonic)
            .and_then(Opcode::from_index)
    }

    /// The row encoded with this opcode byte.
    pub fn from_encoding(byte: u8) -> Option<Opcode> {
        TABLE
            .iter()
            .position(|r| r.opcode == byte)
            .and_then(Opcode::from_index)
    }

    /// Every row.
    pub fn all() -> impl Iterator<Item = Opcode> {
        (0..TABLE.len()).map(|i| Opcode(i as u8))
    }
}

impl InstrSpec {
    /// The modifier fields, in order.
    pub fn modifiers(&self) -> impl Iterator<Item = (ModKind, u16, bool)> + '_ {
        self.fields.iter().filter_map(|f| match *f {
            Field::Mod {
                kind,
                allowed,
                optional,
            } => Some((kind, allowed, optional)),
            _ => None,
        })
    }

    /// The source operands, in order.
    pub fn operands(
        &self,
    ) -> impl Iterator<Item = (&'static str, OperandKind, OperandTy, Role)> + '_ {
        self.fields.iter().filter_map(|f| match *f {
            Field::Operand {
                name,
                kind,
                ty,
                role,
            } => Some((name, kind, ty, role)),
            _ => None,
        })
    }

    /// Number of source operands.
    pub fn operand_count(&self) -> usize {
        self.operands().count()
    }

    /// The modifier field of this kind, if the row has one.
    pub fn modifier(&self, kind: ModKind) -> Option<(u16, bool)> {
        self.modifiers()
            .find(|(k, _, _)| *k == kind)
            .map(|(_, a, o)| (a, o))
    }

    /// Bits the row uses in the instruction word.
    pub fn used_bits(&self) -> u32 {
        HEADER_BITS + self.fields.iter().map(Field::width).sum::<u32>()
    }

    /// The execution class of a form of this row.
    pub fn exec_class(
        &self,
        ty: Option<Ty>,
        src_ty: Option<Ty>,
        space: Option<Space>,
    ) -> ExecClass {
        match self.exec {
            ExecRule::Fixed(c) => c,
            ExecRule::ByType { int, float } => {
                if ty == Some(Ty::F32) {
                    float
                } else {
                    int
                }
            }
            ExecRule::Convert { int, float } => {
                if ty == Some(Ty::F32) || src_ty == Some(Ty::F32) {
                    float
                } else {
                    int
                }
            }
            ExecRule::BySpace {
                global,
                shared,
                param,
                cb,
            } => match space {
                Some(Space::Global) | None => global,
                Some(Space::Shared) => shared,
                Some(Space::Param) => param,
                Some(_) => cb,
            },
        }
    }
}

/// The allowed values of a modifier mask, as spellings.
pub fn allowed_names(kind: ModKind, allowed: u16) -> Vec<&'static str> {
    kind.names()
        .iter()
        .enumerate()
        .filter(|(i, _)| allowed & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_fits_and_round_trips_its_lookups() {
        for op in Opcode::all() {
            let spec = op.spec();
            assert!(spec.used_bits() <= WORD_BITS, "{}", spec.mnemonic);
            assert_eq!(Opcode::from_mnemonic(spec.mnemonic), Some(op));
            assert_eq!(Opcode::from_encoding(spec.opcode), Some(op));
        }
    }

    #[test]
    fn fp_sfu_and_shared_forms_are_sm_only() {
        let add = Opcode::from_mnemonic("add").unwrap().spec();
        assert!(!add.exec_class(Some(Ty::F32), None, None).units.iu());
        assert!(add.exec_class(Some(Ty::S32), None, None).units.iu());
        let ld = Opcode::from_mnemonic("ld").unwrap().spec();
        assert!(
            !ld.exec_class(Some(Ty::F32), None, Some(Space::Shared))
                .units
                .iu()
        );
        assert!(
            ld.exec_class(Some(Ty::F32), None, Some(Space::CbNorth))
                .units
                .iu()
        );
        let cvt = Opcode::from_mnemonic("cvt").unwrap().spec();
        assert!(
            !cvt.exec_class(Some(Ty::S32), Some(Ty::F32), None)
                .units
                .iu()
        );
    }
}
