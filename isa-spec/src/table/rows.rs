//! The rows of the ISA table: one [`InstrSpec`] per instruction.

use super::{ExecRule, Field, InstrSpec, ModKind, OperandKind, OperandTy, Role, Rule};
use crate::class::{EnergyClass as E, ExecClass, TimingClass as T, Units, ex};
use crate::names::{AtomOp, Prec, Space, Ty};

const fn mask(codes: &[Ty]) -> u32 {
    let mut m = 0u32;
    let mut i = 0;
    while i < codes.len() {
        m |= 1 << codes[i] as u8;
        i += 1;
    }
    m
}

const fn all(n: usize) -> u32 {
    (1u32 << n) - 1
}

use Ty::{B16, B32, B64, F32, F64, S8, S16, S32, S64, U8, U16, U32, U64};

/// Integer arithmetic types.
const INTS: u32 = mask(&[U16, S16, U32, S32, U64, S64]);
/// Integer arithmetic and float types.
const NUMS: u32 = INTS | FLOATS;
const FLOATS: u32 = mask(&[F32, F64]);
const SIGNED: u32 = mask(&[S16, S32, S64, F32, F64]);
/// Bitwise types (the 32-bit integer spellings are kept for older SPU sources).
const BITS: u32 = mask(&[B16, B32, B64, U32, S32]);
const SHR: u32 = mask(&[B16, B32, B64, U16, S16, U32, S32, U64, S64]);
/// Types `setp`, `selp` and `mov` take.
const VALUES: u32 = mask(&[B16, B32, B64, U16, S16, U32, S32, U64, S64, F32, F64]);
/// Every type (loads and stores).
const MEMORY: u32 = all(Ty::NAMES.len());
const CVT: u32 = mask(&[U8, S8, U16, S16, U32, S32, U64, S64, F32, F64]);
const HALF_INTS: u32 = mask(&[U16, S16, U32, S32]);
const B32_ONLY: u32 = mask(&[B32]);
const B32_64: u32 = mask(&[B32, B64]);
const INT_32_64: u32 = mask(&[U32, S32, U64, S64]);
const ADDR_TY: u32 = mask(&[U32, U64]);
const ATOM_TY: u32 = mask(&[U32, S32, B32, U64, S64, B64, F32, F64]);
/// `red` takes every atomic operation but `exch`.
const RED_OPS: u32 = all(AtomOp::ALL.len()) & !(1 << AtomOp::Exch as u32);

const fn ty(allowed: u32) -> Field {
    Field::Mod {
        kind: ModKind::Type,
        allowed,
        optional: false,
    }
}
const fn opt(kind: ModKind) -> Field {
    Field::Mod {
        kind,
        allowed: all(kind.names().len()),
        optional: true,
    }
}
const fn req(kind: ModKind) -> Field {
    Field::Mod {
        kind,
        allowed: all(kind.names().len()),
        optional: false,
    }
}
const fn modifier(kind: ModKind, allowed: u32, optional: bool) -> Field {
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
const B_IMM_C: Field = opnd("c", K::RegOrImm, OT::Main, Use);
const ADDR: Field = opnd("addr", K::Mem, OT::U32, Use);
const RND: Field = opt(ModKind::Rnd);
const FTZ: Field = opt(ModKind::Ftz);
const SAT: Field = opt(ModKind::Sat);
const PREC: Field = opt(ModKind::Prec);
const HALF: Field = opt(ModKind::Half);
const MASK: Field = opnd("membermask", K::Mask, OT::B32, Use);
const APPROX: Field = modifier(ModKind::Prec, 1 << Prec::Approx as u8, false);

const IU: Units = Units::SM_IU;
const SM: Units = Units::SM;

const INT_ADD: ExecClass = ex(T::IntAlu, E::IntAdd, IU);
const INT_LOGIC: ExecClass = ex(T::IntAlu, E::IntLogic, IU);
const INT_MUL: ExecClass = ex(T::IntMul, E::IntMul, IU);
const INT_DIV: ExecClass = ex(T::IntDiv, E::IntDiv, IU);
const FP_ADD: ExecClass = ex(T::Fpu, E::FpAdd, SM);
const FP_MUL: ExecClass = ex(T::Fpu, E::FpMul, SM);
const FP_FMA: ExecClass = ex(T::Fpu, E::FpFma, SM);
const SFU: ExecClass = ex(T::Sfu, E::FpSfu, SM);
const DP: ExecClass = ex(T::Dp, E::Fp64, SM);
const DP_DIV: ExecClass = ex(T::DpDiv, E::Fp64Sfu, SM);
const MOVE: ExecClass = ex(T::IntAlu, E::Move, IU);
const CONTROL: ExecClass = ex(T::Control, E::Branch, IU);
const FENCE: ExecClass = ex(T::Control, E::Nop, IU);

const ARITH: ExecRule = ExecRule::ByType {
    int: INT_ADD,
    f32: FP_ADD,
    f64: DP,
};
const MULTIPLY: ExecRule = ExecRule::ByType {
    int: INT_MUL,
    f32: FP_MUL,
    f64: DP,
};
const DIVIDE: ExecRule = ExecRule::ByType {
    int: INT_DIV,
    f32: SFU,
    f64: DP_DIV,
};
const SPECIAL: ExecRule = ExecRule::ByType {
    int: SFU,
    f32: SFU,
    f64: DP_DIV,
};
const LOGIC: ExecRule = ExecRule::Fixed(INT_LOGIC);
const LOAD: ExecRule = ExecRule::BySpace {
    global: ex(T::Global, E::LoadGlobal, IU),
    shared: ex(T::Shared, E::LoadShared, SM),
    param: ex(T::Param, E::LoadParam, IU),
    cb: ex(T::Cb, E::LoadCb, IU),
};
const STORE: ExecRule = ExecRule::BySpace {
    global: ex(T::Global, E::StoreGlobal, IU),
    shared: ex(T::Shared, E::StoreShared, SM),
    param: ex(T::Global, E::StoreGlobal, IU),
    cb: ex(T::Cb, E::StoreCb, IU),
};

const FLOAT_RULES: &[Rule] = &[Rule::FloatRounding, Rule::SatS32OrF32];
const NO_RULES: &[Rule] = &[];

const fn row(
    mnemonic: &'static str,
    opcode: u8,
    fields: &'static [Field],
    exec: ExecRule,
    rules: &'static [Rule],
    doc: &'static str,
    example: &'static str,
) -> InstrSpec {
    InstrSpec {
        mnemonic,
        opcode,
        fields,
        exec,
        rules,
        doc,
        example,
    }
}

/// The instruction set. Adding an instruction is adding a row here (and its
/// conformance test under `tests/conformance/`).
pub const TABLE: &[InstrSpec] = &[
    row(
        "add",
        0x01,
        &[RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
        ARITH,
        FLOAT_RULES,
        "d = a + b; integers wrap (`.sat` clamps .s32), floats round as the rounding mode says (default `rn`)",
        "add.s32 %r1, %r2, 4;",
    ),
    row(
        "sub",
        0x02,
        &[RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
        ARITH,
        FLOAT_RULES,
        "d = a - b; integers wrap (`.sat` clamps .s32), floats round as the rounding mode says",
        "sub.f32 %f1, %f2, %f3;",
    ),
    row(
        "mul",
        0x03,
        &[HALF, RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
        MULTIPLY,
        &[Rule::HalfForIntOnly, Rule::FloatRounding, Rule::SatF32],
        "d = a * b; integer forms keep the low (`.lo`) or high (`.hi`) half of the double-width product",
        "mul.lo.u32 %r1, %r2, 32;",
    ),
    row(
        "mad",
        0x04,
        &[HALF, RND, FTZ, SAT, ty(NUMS), D, A, B_IMM, C],
        ExecRule::ByType {
            int: INT_MUL,
            f32: FP_FMA,
            f64: DP,
        },
        &[Rule::HalfForIntOnly, Rule::FloatRounding, Rule::SatS32OrF32],
        "d = a * b + c: integer forms add c to the low (`.lo`) or high (`.hi`) half of the product; float forms are `fma`",
        "mad.lo.s32 %r1, %r2, %r3, %r4;",
    ),
    row(
        "fma",
        0x05,
        &[RND, FTZ, SAT, ty(FLOATS), D, A, B_IMM, C],
        ExecRule::ByType {
            int: FP_FMA,
            f32: FP_FMA,
            f64: DP,
        },
        &[Rule::FloatRounding, Rule::SatF32],
        "d = a * b + c with a single rounding",
        "fma.rn.f32 %f1, %f2, %f3, %f4;",
    ),
    row(
        "div",
        0x06,
        &[RND, PREC, FTZ, ty(NUMS), D, A, B_IMM],
        DIVIDE,
        &[Rule::FloatRounding, Rule::Precision],
        "d = a / b; integers truncate toward zero (division by zero: see the notes); floats are correctly rounded unless `.approx`/`.full`",
        "div.u32 %r1, %r2, %r3;",
    ),
    row(
        "rem",
        0x07,
        &[ty(INTS), D, A, B_IMM],
        ExecRule::Fixed(INT_DIV),
        NO_RULES,
        "d = a % b with the sign of a; remainder by zero gives a",
        "rem.s32 %r1, %r2, 7;",
    ),
    row(
        "min",
        0x08,
        &[FTZ, ty(NUMS), D, A, B_IMM],
        ARITH,
        &[Rule::FloatRounding],
        "d = the smaller of a and b; floats: a NaN operand gives the other one, -0 < +0",
        "min.u32 %r1, %r2, %r3;",
    ),
    row(
        "max",
        0x09,
        &[FTZ, ty(NUMS), D, A, B_IMM],
        ARITH,
        &[Rule::FloatRounding],
        "d = the larger of a and b; floats: a NaN operand gives the other one, -0 < +0",
        "max.f32 %f1, %f2, %f3;",
    ),
    row(
        "abs",
        0x0a,
        &[FTZ, ty(SIGNED), D, A],
        ARITH,
        &[Rule::FloatRounding],
        "d = |a| (the most negative integer stays itself)",
        "abs.f32 %f1, %f2;",
    ),
    row(
        "neg",
        0x0b,
        &[FTZ, ty(SIGNED), D, A],
        ARITH,
        &[Rule::FloatRounding],
        "d = -a",
        "neg.s32 %r1, %r2;",
    ),
    row(
        "and",
        0x0c,
        &[ty(BITS), D, A, B_IMM],
        LOGIC,
        NO_RULES,
        "d = a & b",
        "and.b32 %r1, %r2, 0xff;",
    ),
    row(
        "or",
        0x0d,
        &[ty(BITS), D, A, B_IMM],
        LOGIC,
        NO_RULES,
        "d = a | b",
        "or.b32 %r1, %r2, %r3;",
    ),
    row(
        "xor",
        0x0e,
        &[ty(BITS), D, A, B_IMM],
        LOGIC,
        NO_RULES,
        "d = a ^ b",
        "xor.b32 %r1, %r2, %r3;",
    ),
    row(
        "not",
        0x0f,
        &[ty(BITS), D, A],
        LOGIC,
        NO_RULES,
        "d = !a (bitwise)",
        "not.b32 %r1, %r2;",
    ),
    row(
        "shl",
        0x10,
        &[ty(BITS), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
        LOGIC,
        NO_RULES,
        "d = a << b; shifts by the width or more give 0",
        "shl.b32 %r1, %r2, 2;",
    ),
    row(
        "shr",
        0x11,
        &[ty(SHR), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
        LOGIC,
        NO_RULES,
        "d = a >> b, arithmetic for signed types; shifts by the width or more give 0 (or -1 for negative signed values)",
        "shr.s32 %r1, %r2, 1;",
    ),
    row(
        "rcp",
        0x12,
        &[RND, PREC, FTZ, ty(FLOATS), D, A],
        SPECIAL,
        &[Rule::FloatRounding, Rule::Precision],
        "d = 1 / a, correctly rounded, or the SFU approximation with `.approx`",
        "rcp.rn.f32 %f1, %f2;",
    ),
    row(
        "sqrt",
        0x13,
        &[RND, PREC, FTZ, ty(FLOATS), D, A],
        SPECIAL,
        &[Rule::FloatRounding, Rule::Precision],
        "d = square root of a, correctly rounded, or the SFU approximation with `.approx`",
        "sqrt.rn.f32 %f1, %f2;",
    ),
    row(
        "cvt",
        0x14,
        &[
            RND,
            FTZ,
            SAT,
            ty(CVT),
            modifier(ModKind::SrcType, CVT, false),
            D,
            reg("a", OT::Src, Use),
        ],
        ExecRule::Convert {
            int: MOVE,
            f32: ex(T::Fpu, E::Convert, SM),
            f64: DP,
        },
        &[Rule::CvtRounding],
        "d = a converted from the source type (second) to the destination type (first): see the notes for rounding, saturation and NaN",
        "cvt.rn.f32.s32 %f1, %r1;",
    ),
    row(
        "setp",
        0x15,
        &[
            req(ModKind::Cmp),
            FTZ,
            ty(VALUES),
            opnd("p", K::Pred, OT::Pred, Def),
            A,
            B_IMM,
        ],
        ARITH,
        &[Rule::CmpMatchesType],
        "p = (a cmp b); ordered float comparisons are false when an operand is NaN (`ne` too), unordered ones (`equ`...) true",
        "setp.lt.s32 %p1, %r1, %r2;",
    ),
    row(
        "selp",
        0x16,
        &[
            ty(VALUES),
            D,
            opnd("a", K::RegOrImm, OT::Main, Use),
            B_IMM,
            opnd("p", K::Pred, OT::Pred, Use),
        ],
        ExecRule::Fixed(MOVE),
        NO_RULES,
        "d = p ? a : b",
        "selp.b32 %r1, 1, 0, %p1;",
    ),
    row(
        "mov",
        0x17,
        &[ty(VALUES), D, opnd("src", K::MovSrc, OT::Main, Use)],
        ExecRule::Fixed(MOVE),
        NO_RULES,
        "d = src: a register, an immediate (32 bits, extended to 64 by the type), a special register (32-bit types) or the address of a buffer or shared array plus an offset",
        "mov.u32 %r1, %ctaid.x;",
    ),
    row(
        "ld",
        0x18,
        &[
            opt(ModKind::Volatile),
            modifier(
                ModKind::Space,
                1 << Space::Global as u8
                    | 1 << Space::Shared as u8
                    | 1 << Space::Param as u8
                    | 1 << Space::CbNorth as u8
                    | 1 << Space::CbWest as u8,
                false,
            ),
            opt(ModKind::CacheOp),
            opt(ModKind::Nc),
            opt(ModKind::Vector),
            ty(MEMORY),
            reg("d", OT::MainVec, Def),
            ADDR,
        ],
        LOAD,
        &[Rule::LoadCache, Rule::VectorElements],
        "d = the value at byte address addr of the state space (8- and 16-bit values are zero- or sign-extended); `.v2`/`.v4` load consecutive elements; CBs are read from the north and west ports",
        "ld.global.f32 %f1, [%r2+4];",
    ),
    row(
        "st",
        0x19,
        &[
            opt(ModKind::Volatile),
            modifier(
                ModKind::Space,
                1 << Space::Global as u8
                    | 1 << Space::Shared as u8
                    | 1 << Space::CbSouth as u8
                    | 1 << Space::CbEast as u8,
                false,
            ),
            opt(ModKind::CacheOp),
            opt(ModKind::Vector),
            ty(MEMORY),
            ADDR,
            reg("s", OT::MainVec, Use),
        ],
        STORE,
        &[Rule::StoreCache, Rule::VectorElements],
        "the value at byte address addr of the state space = s (8- and 16-bit types store the low bits); `.v2`/`.v4` store consecutive elements; CBs are written to the south and east ports",
        "st.global.f32 [%r2], %f1;",
    ),
    row(
        "atom.global",
        0x1a,
        &[req(ModKind::AtomOp), ty(ATOM_TY), D, ADDR, B],
        ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
        &[Rule::AtomOpType],
        "atomically: d = old value at addr; value = old op b (`add.f32` rounds to nearest even and flushes subnormals to zero; `exch` stores b; `inc`: old >= b ? 0 : old + 1; `dec`: old == 0 or old > b ? b : old - 1); 64-bit values are 8-byte aligned",
        "atom.global.add.u32 %r1, [%r2], %r3;",
    ),
    row(
        "atom.global.cas",
        0x1b,
        &[ty(mask(&[U32, S32, B32, U64, S64, B64])), D, ADDR, B, C],
        ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
        NO_RULES,
        "atomically: d = old value at addr; if old == b the value becomes c",
        "atom.global.cas.b32 %r1, [%r2], %r3, %r4;",
    ),
    row(
        "atom.shared",
        0x3f,
        &[req(ModKind::AtomOp), ty(ATOM_TY), D, ADDR, B],
        ExecRule::Fixed(ex(T::Shared, E::StoreShared, SM)),
        &[Rule::AtomOpType],
        "atomically in the block's shared memory, as `atom.global`: lanes take effect in lane order, lanes on one word one after another",
        "atom.shared.add.u32 %r1, [%r2], %r3;",
    ),
    row(
        "atom.shared.cas",
        0x40,
        &[ty(mask(&[U32, S32, B32, U64, S64, B64])), D, ADDR, B, C],
        ExecRule::Fixed(ex(T::Shared, E::StoreShared, SM)),
        NO_RULES,
        "atomically in the block's shared memory, as `atom.global.cas`",
        "atom.shared.cas.b32 %r1, [%r2], %r3, %r4;",
    ),
    row(
        "red.global",
        0x41,
        &[
            modifier(ModKind::AtomOp, RED_OPS, false),
            ty(ATOM_TY),
            ADDR,
            B,
        ],
        ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
        &[Rule::AtomOpType],
        "atomically: value at addr = old op b, as `atom.global` but returning nothing (what compilers emit for an atomic whose result is unused); no `exch`",
        "red.global.add.u32 [%r2], %r3;",
    ),
    row(
        "ldu",
        0x1c,
        &[
            modifier(ModKind::Space, 1 << Space::Global as u8, false),
            opt(ModKind::Vector),
            ty(MEMORY),
            reg("d", OT::MainVec, Def),
            ADDR,
        ],
        LOAD,
        &[Rule::VectorElements],
        "d = the value at addr of global memory, the same for every lane that reads it (like `ld.global`)",
        "ldu.global.f32 %f1, [%rd2];",
    ),
    row(
        "mul.wide",
        0x1d,
        &[ty(HALF_INTS), reg("d", OT::Wide, Def), A, B_IMM],
        ExecRule::Fixed(INT_MUL),
        NO_RULES,
        "d = a * b, the whole double-width product (d is twice as wide as a and b)",
        "mul.wide.s32 %rd1, %r1, 4;",
    ),
    row(
        "mad.wide",
        0x1e,
        &[
            ty(HALF_INTS),
            reg("d", OT::Wide, Def),
            A,
            B_IMM,
            reg("c", OT::Wide, Use),
        ],
        ExecRule::Fixed(INT_MUL),
        NO_RULES,
        "d = a * b + c with the double-width product (d and c are twice as wide as a and b)",
        "mad.wide.u32 %rd1, %r1, %r2, %rd3;",
    ),
    row(
        "rsqrt",
        0x1f,
        &[APPROX, FTZ, ty(FLOATS), D, A],
        SPECIAL,
        &[Rule::FloatRounding],
        "d = 1 / sqrt(a), SFU approximation",
        "rsqrt.approx.f32 %f1, %f2;",
    ),
    row(
        "bra",
        0x20,
        &[
            opt(ModKind::Uni),
            opnd("target", K::Target, OT::None, Use),
            Field::Reconv,
        ],
        ExecRule::Fixed(CONTROL),
        NO_RULES,
        "jump to target (for the threads whose guard holds); divergent threads reconverge at the branch's immediate post-dominator; `.uni` records that the branch is uniform",
        "@%p1 bra LOOP;",
    ),
    row(
        "exit",
        0x21,
        &[],
        ExecRule::Fixed(CONTROL),
        NO_RULES,
        "end the thread",
        "exit;",
    ),
    row(
        "nop",
        0x22,
        &[],
        ExecRule::Fixed(ex(T::Control, E::Nop, IU)),
        NO_RULES,
        "do nothing for one issue slot",
        "nop;",
    ),
    row(
        "bar.sync",
        0x23,
        &[],
        ExecRule::Fixed(ex(T::Barrier, E::Barrier, IU)),
        NO_RULES,
        "wait until every warp of the block has arrived (PTX `bar.sync 0`)",
        "bar.sync;",
    ),
    row(
        "bar.blocksync",
        0x24,
        &[opt(ModKind::Side)],
        ExecRule::Fixed(ex(T::BlockSync, E::BlockSync, IU)),
        NO_RULES,
        "block barrier that also meets other units: without a side every active block and IU arrives and all CB pairs switch (thesis 2.2.1); with a side, the k-th sync meets the neighbour's k-th sync on that link and only that link's CB pair switches (thesis 4.2)",
        "bar.blocksync.south;",
    ),
    row(
        "ret",
        0x25,
        &[],
        ExecRule::Fixed(CONTROL),
        NO_RULES,
        "return from the kernel: ends the thread, like `exit`",
        "ret;",
    ),
    row(
        "membar",
        0x26,
        &[req(ModKind::MemLevel)],
        ExecRule::Fixed(FENCE),
        NO_RULES,
        "memory barrier: orders the thread's memory accesses; a no-op here because every access completes in program order",
        "membar.gl;",
    ),
    row(
        "fence",
        0x27,
        &[opt(ModKind::FenceSem), req(ModKind::Scope)],
        ExecRule::Fixed(FENCE),
        NO_RULES,
        "memory fence: like `membar`, a no-op here because every access completes in program order",
        "fence.acq_rel.gpu;",
    ),
    row(
        "cvta",
        0x28,
        &[
            opt(ModKind::To),
            modifier(
                ModKind::Space,
                1 << Space::Global as u8 | 1 << Space::Shared as u8,
                false,
            ),
            ty(ADDR_TY),
            D,
            A,
        ],
        ExecRule::Fixed(MOVE),
        NO_RULES,
        "d = a: global and shared addresses are the same in generic form on the SPU (there is no generic addressing: loads and stores name their space)",
        "cvta.to.global.u64 %rd2, %rd1;",
    ),
    row(
        "ex2",
        0x29,
        &[APPROX, FTZ, ty(mask(&[F32])), D, A],
        SPECIAL,
        &[Rule::FloatRounding],
        "d = 2 to the power a, SFU approximation",
        "ex2.approx.f32 %f1, %f2;",
    ),
    row(
        "lg2",
        0x2a,
        &[APPROX, FTZ, ty(mask(&[F32])), D, A],
        SPECIAL,
        &[Rule::FloatRounding],
        "d = base-2 logarithm of a, SFU approximation",
        "lg2.approx.f32 %f1, %f2;",
    ),
    row(
        "sin",
        0x2b,
        &[APPROX, FTZ, ty(mask(&[F32])), D, A],
        SPECIAL,
        &[Rule::FloatRounding],
        "d = sine of a (radians), SFU approximation",
        "sin.approx.f32 %f1, %f2;",
    ),
    row(
        "cos",
        0x2c,
        &[APPROX, FTZ, ty(mask(&[F32])), D, A],
        SPECIAL,
        &[Rule::FloatRounding],
        "d = cosine of a (radians), SFU approximation",
        "cos.approx.f32 %f1, %f2;",
    ),
    row(
        "and.pred",
        0x2d,
        &[
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::Pred, OT::Pred, Use),
            opnd("b", K::Pred, OT::Pred, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = a and b, on predicates",
        "and.pred %p3, %p1, %p2;",
    ),
    row(
        "or.pred",
        0x2e,
        &[
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::Pred, OT::Pred, Use),
            opnd("b", K::Pred, OT::Pred, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = a or b, on predicates",
        "or.pred %p3, %p1, %p2;",
    ),
    row(
        "xor.pred",
        0x2f,
        &[
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::Pred, OT::Pred, Use),
            opnd("b", K::Pred, OT::Pred, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = a xor b, on predicates",
        "xor.pred %p3, %p1, %p2;",
    ),
    row(
        "not.pred",
        0x30,
        &[
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::Pred, OT::Pred, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = not a, on predicates",
        "not.pred %p2, %p1;",
    ),
    row(
        "mov.pred",
        0x31,
        &[
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::Pred, OT::Pred, Use),
        ],
        ExecRule::Fixed(MOVE),
        NO_RULES,
        "d = a, on predicates",
        "mov.pred %p2, %p1;",
    ),
    row(
        "shfl.sync",
        0x32,
        &[
            req(ModKind::ShflMode),
            ty(B32_ONLY),
            D,
            opnd("p", K::OptPred, OT::Pred, Def),
            A,
            opnd("b", K::RegOrSmall, OT::U32, Use),
            opnd("c", K::ShflC, OT::U32, Use),
            MASK,
        ],
        ExecRule::Fixed(ex(T::Shuffle, E::Shuffle, SM)),
        NO_RULES,
        "d = a of another lane of the warp: `up` lane - b, `down` lane + b, `bfly` lane ^ b, `idx` lane b, within segments and clamp given by c; p (optional, `d|p`) tells whether that lane was in range; out of range, d = a",
        "shfl.sync.down.b32 %r2|%p1, %r1, 16, 31, -1;",
    ),
    row(
        "vote.sync",
        0x33,
        &[
            req(ModKind::VoteMode),
            req(ModKind::PredTy),
            opnd("d", K::Pred, OT::Pred, Def),
            opnd("a", K::PredNeg, OT::Pred, Use),
            MASK,
        ],
        LOGIC,
        NO_RULES,
        "d = whether a holds in all (`all`), any (`any`) or all-or-none (`uni`) of the active lanes",
        "vote.sync.any.pred %p2, %p1, -1;",
    ),
    row(
        "vote.sync.ballot",
        0x34,
        &[ty(B32_ONLY), D, opnd("a", K::PredNeg, OT::Pred, Use), MASK],
        LOGIC,
        NO_RULES,
        "d = the mask of active lanes where a holds",
        "vote.sync.ballot.b32 %r1, %p1, -1;",
    ),
    row(
        "activemask",
        0x35,
        &[ty(B32_ONLY), D],
        LOGIC,
        NO_RULES,
        "d = the mask of the warp's active lanes",
        "activemask.b32 %r1;",
    ),
    row(
        "popc",
        0x36,
        &[ty(B32_64), reg("d", OT::U32, Def), A],
        LOGIC,
        NO_RULES,
        "d = number of set bits of a",
        "popc.b32 %r1, %r2;",
    ),
    row(
        "clz",
        0x37,
        &[ty(B32_64), reg("d", OT::U32, Def), A],
        LOGIC,
        NO_RULES,
        "d = number of leading zero bits of a",
        "clz.b32 %r1, %r2;",
    ),
    row(
        "brev",
        0x38,
        &[ty(B32_64), D, A],
        LOGIC,
        NO_RULES,
        "d = a with its bits in reverse order",
        "brev.b32 %r1, %r2;",
    ),
    row(
        "bfind",
        0x39,
        &[
            opt(ModKind::ShiftAmt),
            ty(INT_32_64),
            reg("d", OT::U32, Def),
            A,
        ],
        LOGIC,
        NO_RULES,
        "d = position of the most significant non-sign bit of a (with `.shiftamt`: the left shift that brings it to the top, 31 or 63 minus the position), or 0xffffffff if there is none",
        "bfind.u32 %r1, %r2;",
    ),
    row(
        "bfe",
        0x3a,
        &[
            ty(INT_32_64),
            D,
            A,
            opnd("b", K::RegOrSmall, OT::U32, Use),
            opnd("c", K::RegOrSmall, OT::U32, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = the c bits of a starting at bit b (positions and lengths use their low 8 bits), zero-extended for unsigned and sign-extended for signed types",
        "bfe.u32 %r1, %r2, 8, 4;",
    ),
    row(
        "bfi",
        0x3b,
        &[
            ty(B32_64),
            D,
            A,
            B,
            opnd("c", K::RegOrSmall, OT::U32, Use),
            opnd("e", K::RegOrSmall, OT::U32, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = b with its e bits starting at bit c replaced by the low bits of a",
        "bfi.b32 %r1, %r2, %r3, 8, 4;",
    ),
    row(
        "prmt",
        0x3c,
        &[ty(B32_ONLY), opt(ModKind::PrmtMode), D, A, B, B_IMM_C],
        LOGIC,
        NO_RULES,
        "d = bytes of {b, a} picked by the selector c (generic form: each 4-bit nibble of c picks a byte, bit 3 replicates its sign)",
        "prmt.b32 %r1, %r2, %r3, 0x3210;",
    ),
    row(
        "shf",
        0x3d,
        &[
            req(ModKind::ShfDir),
            req(ModKind::ShfMode),
            ty(B32_ONLY),
            D,
            A,
            B,
            opnd("c", K::RegOrSmall, OT::U32, Use),
        ],
        LOGIC,
        NO_RULES,
        "funnel shift: d = the 32 bits of {b, a} shifted left (`l`, high word) or right (`r`, low word) by c, which is clamped to 32 or taken modulo 32",
        "shf.l.wrap.b32 %r1, %r2, %r3, 5;",
    ),
    row(
        "lop3",
        0x3e,
        &[
            ty(B32_ONLY),
            D,
            A,
            B,
            C,
            opnd("lut", K::Imm8, OT::None, Use),
        ],
        LOGIC,
        NO_RULES,
        "d = the bitwise function of a, b, c whose truth table is lut (a = 0xf0, b = 0xcc, c = 0xaa)",
        "lop3.b32 %r1, %r2, %r3, %r4, 0xe8;",
    ),
];
