//! The rows of the ISA table: one [`InstrSpec`] per instruction.

use super::{ExecRule, Field, Flow, InstrSpec, ModKind, OperandKind, OperandTy, Role, Rule};
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
    local: ex(T::Global, E::LoadGlobal, IU),
};
const STORE: ExecRule = ExecRule::BySpace {
    global: ex(T::Global, E::StoreGlobal, IU),
    shared: ex(T::Shared, E::StoreShared, SM),
    param: ex(T::Global, E::StoreGlobal, IU),
    cb: ex(T::Cb, E::StoreCb, IU),
    local: ex(T::Global, E::StoreGlobal, IU),
};

const FLOAT_RULES: &[Rule] = &[Rule::FloatRounding, Rule::SatS32OrF32];
const NO_RULES: &[Rule] = &[];

/// The instruction set, one row per instruction, handed to `$callback` (a macro):
/// this crate stamps [`TABLE`] and [`Opcode`] from it, and the emulator its decoder,
/// with each row's `sem` column naming the function that defines its meaning.
/// Adding an instruction is adding a row here (and its semantics and conformance
/// test). Rows: `Variant { mnemonic, opcode, fields, exec, rules, flow, sem, doc,
/// example }`.
#[macro_export]
macro_rules! for_each_instr {
    ($callback:ident) => {
        $callback! {
        Add {
            mnemonic: "add",
            opcode: 0x01,
            fields: &[RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
            exec: ARITH,
            rules: FLOAT_RULES,
            flow: Next,
            sem: alu2(arith::add),
            doc: "d = a + b; integers wrap (`.sat` clamps .s32), floats round as the rounding mode says (default `rn`)",
            example: "add.s32 %r1, %r2, 4;",
        },
        Sub {
            mnemonic: "sub",
            opcode: 0x02,
            fields: &[RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
            exec: ARITH,
            rules: FLOAT_RULES,
            flow: Next,
            sem: alu2(arith::sub),
            doc: "d = a - b; integers wrap (`.sat` clamps .s32), floats round as the rounding mode says",
            example: "sub.f32 %f1, %f2, %f3;",
        },
        Mul {
            mnemonic: "mul",
            opcode: 0x03,
            fields: &[HALF, RND, FTZ, SAT, ty(NUMS), D, A, B_IMM],
            exec: MULTIPLY,
            rules: &[Rule::HalfForIntOnly, Rule::FloatRounding, Rule::SatF32],
            flow: Next,
            sem: alu2(arith::mul),
            doc: "d = a * b; integer forms keep the low (`.lo`) or high (`.hi`) half of the double-width product",
            example: "mul.lo.u32 %r1, %r2, 32;",
        },
        Mad {
            mnemonic: "mad",
            opcode: 0x04,
            fields: &[HALF, RND, FTZ, SAT, ty(NUMS), D, A, B_IMM, C],
            exec: ExecRule::ByType {
                int: INT_MUL,
                f32: FP_FMA,
                f64: DP,
            },
            rules: &[Rule::HalfForIntOnly, Rule::FloatRounding, Rule::SatMad],
            flow: Next,
            sem: alu3(arith::mad),
            doc: "d = a * b + c: integer forms add c to the low (`.lo`) or high (`.hi`) half of the product (`.sat` clamps the `.hi.s32` sum); float forms are `fma`",
            example: "mad.lo.s32 %r1, %r2, %r3, %r4;",
        },
        Fma {
            mnemonic: "fma",
            opcode: 0x05,
            fields: &[RND, FTZ, SAT, ty(FLOATS), D, A, B_IMM, C],
            exec: ExecRule::ByType {
                int: FP_FMA,
                f32: FP_FMA,
                f64: DP,
            },
            rules: &[Rule::FloatRounding, Rule::SatF32],
            flow: Next,
            sem: alu3(arith::fma),
            doc: "d = a * b + c with a single rounding",
            example: "fma.rn.f32 %f1, %f2, %f3, %f4;",
        },
        Div {
            mnemonic: "div",
            opcode: 0x06,
            fields: &[RND, PREC, FTZ, ty(NUMS), D, A, B_IMM],
            exec: DIVIDE,
            rules: &[Rule::FloatRounding, Rule::DivPrecision],
            flow: Next,
            sem: alu2(arith::div),
            doc: "d = a / b; integers truncate toward zero (division by zero: see the notes); floats are correctly rounded, `.approx.f32` and `.full.f32` too (see the notes)",
            example: "div.u32 %r1, %r2, %r3;",
        },
        Rem {
            mnemonic: "rem",
            opcode: 0x07,
            fields: &[ty(INTS), D, A, B_IMM],
            exec: ExecRule::Fixed(INT_DIV),
            rules: NO_RULES,
            flow: Next,
            sem: alu2(arith::rem),
            doc: "d = a % b with the sign of a; remainder by zero gives a",
            example: "rem.s32 %r1, %r2, 7;",
        },
        Min {
            mnemonic: "min",
            opcode: 0x08,
            fields: &[FTZ, ty(NUMS), D, A, B_IMM],
            exec: ARITH,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu2(arith::min),
            doc: "d = the smaller of a and b; floats: a NaN operand gives the other one, -0 < +0",
            example: "min.u32 %r1, %r2, %r3;",
        },
        Max {
            mnemonic: "max",
            opcode: 0x09,
            fields: &[FTZ, ty(NUMS), D, A, B_IMM],
            exec: ARITH,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu2(arith::max),
            doc: "d = the larger of a and b; floats: a NaN operand gives the other one, -0 < +0",
            example: "max.f32 %f1, %f2, %f3;",
        },
        Abs {
            mnemonic: "abs",
            opcode: 0x0a,
            fields: &[FTZ, ty(SIGNED), D, A],
            exec: ARITH,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::abs),
            doc: "d = |a| (the most negative integer stays itself)",
            example: "abs.f32 %f1, %f2;",
        },
        Neg {
            mnemonic: "neg",
            opcode: 0x0b,
            fields: &[FTZ, ty(SIGNED), D, A],
            exec: ARITH,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::neg),
            doc: "d = -a",
            example: "neg.s32 %r1, %r2;",
        },
        And {
            mnemonic: "and",
            opcode: 0x0c,
            fields: &[ty(BITS), D, A, B_IMM],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(bits::and),
            doc: "d = a & b",
            example: "and.b32 %r1, %r2, 0xff;",
        },
        Or {
            mnemonic: "or",
            opcode: 0x0d,
            fields: &[ty(BITS), D, A, B_IMM],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(bits::or),
            doc: "d = a | b",
            example: "or.b32 %r1, %r2, %r3;",
        },
        Xor {
            mnemonic: "xor",
            opcode: 0x0e,
            fields: &[ty(BITS), D, A, B_IMM],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(bits::xor),
            doc: "d = a ^ b",
            example: "xor.b32 %r1, %r2, %r3;",
        },
        Not {
            mnemonic: "not",
            opcode: 0x0f,
            fields: &[ty(BITS), D, A],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu1(bits::not),
            doc: "d = !a (bitwise)",
            example: "not.b32 %r1, %r2;",
        },
        Shl {
            mnemonic: "shl",
            opcode: 0x10,
            fields: &[ty(BITS), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(bits::shl),
            doc: "d = a << b; shifts by the width or more give 0",
            example: "shl.b32 %r1, %r2, 2;",
        },
        Shr {
            mnemonic: "shr",
            opcode: 0x11,
            fields: &[ty(SHR), D, A, opnd("b", K::RegOrImm, OT::U32, Use)],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(bits::shr),
            doc: "d = a >> b, arithmetic for signed types; shifts by the width or more give 0 (or -1 for negative signed values)",
            example: "shr.s32 %r1, %r2, 1;",
        },
        Rcp {
            mnemonic: "rcp",
            opcode: 0x12,
            fields: &[RND, PREC, FTZ, ty(FLOATS), D, A],
            exec: SPECIAL,
            rules: &[Rule::ApproxFloatRounding, Rule::RcpPrecision],
            flow: Next,
            sem: alu1(arith::rcp),
            doc: "d = 1 / a, correctly rounded (`.approx.f32` too); `rcp.approx.ftz.f64` is PTX's 20-bit approximation (see the notes)",
            example: "rcp.rn.f32 %f1, %f2;",
        },
        Sqrt {
            mnemonic: "sqrt",
            opcode: 0x13,
            fields: &[RND, PREC, FTZ, ty(FLOATS), D, A],
            exec: SPECIAL,
            rules: &[Rule::FloatRounding, Rule::SqrtPrecision],
            flow: Next,
            sem: alu1(arith::sqrt),
            doc: "d = square root of a, correctly rounded (`.approx.f32` too)",
            example: "sqrt.rn.f32 %f1, %f2;",
        },
        Cvt {
            mnemonic: "cvt",
            opcode: 0x14,
            fields: &[
                RND,
                FTZ,
                SAT,
                ty(CVT),
                modifier(ModKind::SrcType, CVT, false),
                D,
                reg("a", OT::Src, Use),
            ],
            exec: ExecRule::Convert {
                int: MOVE,
                f32: ex(T::Fpu, E::Convert, SM),
                f64: DP,
            },
            rules: &[Rule::CvtRounding],
            flow: Next,
            sem: alu1(convert::cvt),
            doc: "d = a converted from the source type (second) to the destination type (first): see the notes for rounding, saturation and NaN",
            example: "cvt.rn.f32.s32 %f1, %r1;",
        },
        Setp {
            mnemonic: "setp",
            opcode: 0x15,
            fields: &[
                req(ModKind::Cmp),
                FTZ,
                ty(VALUES),
                opnd("p", K::Pred, OT::Pred, Def),
                A,
                B_IMM,
            ],
            exec: ARITH,
            rules: &[Rule::CmpMatchesType],
            flow: Next,
            sem: setp(compare::setp),
            doc: "p = (a cmp b); bit types compare with `eq` and `ne` only; ordered float comparisons are false when an operand is NaN (`ne` too), unordered ones (`equ`...) true",
            example: "setp.lt.s32 %p1, %r1, %r2;",
        },
        Selp {
            mnemonic: "selp",
            opcode: 0x16,
            fields: &[
                ty(VALUES),
                D,
                opnd("a", K::RegOrImm, OT::Main, Use),
                B_IMM,
                opnd("p", K::Pred, OT::Pred, Use),
            ],
            exec: ExecRule::Fixed(MOVE),
            rules: NO_RULES,
            flow: Next,
            sem: selp(compare::selp),
            doc: "d = p ? a : b",
            example: "selp.b32 %r1, 1, 0, %p1;",
        },
        Mov {
            mnemonic: "mov",
            opcode: 0x17,
            fields: &[ty(VALUES), D, opnd("src", K::MovSrc, OT::Main, Use)],
            exec: ExecRule::Fixed(MOVE),
            rules: NO_RULES,
            flow: Next,
            sem: alu1(convert::mov),
            doc: "d = src: a register, an immediate (32 bits, extended to 64 by the type), a special register (32-bit types) or the address of a buffer or shared array plus an offset",
            example: "mov.u32 %r1, %ctaid.x;",
        },
        Ld {
            mnemonic: "ld",
            opcode: 0x18,
            fields: &[
                opt(ModKind::Volatile),
                modifier(
                    ModKind::Space,
                    1 << Space::Global as u8
                        | 1 << Space::Shared as u8
                        | 1 << Space::Param as u8
                        | 1 << Space::CbNorth as u8
                        | 1 << Space::CbWest as u8
                        | 1 << Space::Local as u8,
                    false,
                ),
                opt(ModKind::CacheOp),
                opt(ModKind::Nc),
                opt(ModKind::Vector),
                ty(MEMORY),
                reg("d", OT::MainVec, Def),
                ADDR,
            ],
            exec: LOAD,
            rules: &[Rule::LoadCache, Rule::VectorElements],
            flow: Next,
            sem: load,
            doc: "d = the value at byte address addr of the state space (8- and 16-bit values are zero- or sign-extended); `.v2`/`.v4` load consecutive elements; CBs are read from the north and west ports",
            example: "ld.global.f32 %f1, [%r2+4];",
        },
        St {
            mnemonic: "st",
            opcode: 0x19,
            fields: &[
                opt(ModKind::Volatile),
                modifier(
                    ModKind::Space,
                    1 << Space::Global as u8
                        | 1 << Space::Shared as u8
                        | 1 << Space::CbSouth as u8
                        | 1 << Space::CbEast as u8
                        | 1 << Space::Local as u8,
                    false,
                ),
                opt(ModKind::CacheOp),
                opt(ModKind::Vector),
                ty(MEMORY),
                ADDR,
                reg("s", OT::MainVec, Use),
            ],
            exec: STORE,
            rules: &[Rule::StoreCache, Rule::VectorElements],
            flow: Next,
            sem: store,
            doc: "the value at byte address addr of the state space = s (8- and 16-bit types store the low bits); `.v2`/`.v4` store consecutive elements; CBs are written to the south and east ports",
            example: "st.global.f32 [%r2], %f1;",
        },
        AtomGlobal {
            mnemonic: "atom.global",
            opcode: 0x1a,
            fields: &[req(ModKind::AtomOp), ty(ATOM_TY), D, ADDR, B],
            exec: ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
            rules: &[Rule::AtomOpType],
            flow: Next,
            sem: atomic,
            doc: "atomically: d = old value at addr; value = old op b (`add.f32` rounds to nearest even and flushes subnormals to zero; `exch` stores b; `inc`: old >= b ? 0 : old + 1; `dec`: old == 0 or old > b ? b : old - 1); 64-bit values are 8-byte aligned",
            example: "atom.global.add.u32 %r1, [%r2], %r3;",
        },
        AtomGlobalCas {
            mnemonic: "atom.global.cas",
            opcode: 0x1b,
            fields: &[ty(mask(&[U32, S32, B32, U64, S64, B64])), D, ADDR, B, C],
            exec: ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
            rules: NO_RULES,
            flow: Next,
            sem: atomic,
            doc: "atomically: d = old value at addr; if old == b the value becomes c",
            example: "atom.global.cas.b32 %r1, [%r2], %r3, %r4;",
        },
        AtomShared {
            mnemonic: "atom.shared",
            opcode: 0x3f,
            fields: &[req(ModKind::AtomOp), ty(ATOM_TY), D, ADDR, B],
            exec: ExecRule::Fixed(ex(T::Shared, E::StoreShared, SM)),
            rules: &[Rule::AtomOpType],
            flow: Next,
            sem: atomic,
            doc: "atomically in the block's shared memory, as `atom.global`: lanes take effect in lane order, lanes on one word one after another",
            example: "atom.shared.add.u32 %r1, [%r2], %r3;",
        },
        AtomSharedCas {
            mnemonic: "atom.shared.cas",
            opcode: 0x40,
            fields: &[ty(mask(&[U32, S32, B32, U64, S64, B64])), D, ADDR, B, C],
            exec: ExecRule::Fixed(ex(T::Shared, E::StoreShared, SM)),
            rules: NO_RULES,
            flow: Next,
            sem: atomic,
            doc: "atomically in the block's shared memory, as `atom.global.cas`",
            example: "atom.shared.cas.b32 %r1, [%r2], %r3, %r4;",
        },
        RedGlobal {
            mnemonic: "red.global",
            opcode: 0x41,
            fields: &[
                modifier(ModKind::AtomOp, RED_OPS, false),
                ty(ATOM_TY),
                ADDR,
                B,
            ],
            exec: ExecRule::Fixed(ex(T::Atomic, E::AtomicGlobal, IU)),
            rules: &[Rule::AtomOpType],
            flow: Next,
            sem: atomic,
            doc: "atomically: value at addr = old op b, as `atom.global` but returning nothing (what compilers emit for an atomic whose result is unused); no `exch`; no `.shared` form (PTX's `red.shared`): write `atom.shared` and ignore its result",
            example: "red.global.add.u32 [%r2], %r3;",
        },
        Ldu {
            mnemonic: "ldu",
            opcode: 0x1c,
            fields: &[
                modifier(ModKind::Space, 1 << Space::Global as u8, false),
                opt(ModKind::Vector),
                ty(MEMORY),
                reg("d", OT::MainVec, Def),
                ADDR,
            ],
            exec: LOAD,
            rules: &[Rule::VectorElements],
            flow: Next,
            sem: load,
            doc: "d = the value at addr of global memory, the same for every lane that reads it (like `ld.global`)",
            example: "ldu.global.f32 %f1, [%rd2];",
        },
        MulWide {
            mnemonic: "mul.wide",
            opcode: 0x1d,
            fields: &[ty(HALF_INTS), reg("d", OT::Wide, Def), A, B_IMM],
            exec: ExecRule::Fixed(INT_MUL),
            rules: NO_RULES,
            flow: Next,
            sem: alu2(arith::mul_wide),
            doc: "d = a * b, the whole double-width product (d is twice as wide as a and b)",
            example: "mul.wide.s32 %rd1, %r1, 4;",
        },
        MadWide {
            mnemonic: "mad.wide",
            opcode: 0x1e,
            fields: &[
                ty(HALF_INTS),
                reg("d", OT::Wide, Def),
                A,
                B_IMM,
                reg("c", OT::Wide, Use),
            ],
            exec: ExecRule::Fixed(INT_MUL),
            rules: NO_RULES,
            flow: Next,
            sem: alu3(arith::mad_wide),
            doc: "d = a * b + c with the double-width product (d and c are twice as wide as a and b)",
            example: "mad.wide.u32 %rd1, %r1, %r2, %rd3;",
        },
        Rsqrt {
            mnemonic: "rsqrt",
            opcode: 0x1f,
            fields: &[APPROX, FTZ, ty(FLOATS), D, A],
            exec: SPECIAL,
            rules: &[Rule::ApproxFloatRounding],
            flow: Next,
            sem: alu1(arith::rsqrt),
            doc: "d = 1 / sqrt(a), correctly rounded to nearest (`.f64` too); `rsqrt.approx.ftz.f64` flushes a subnormal operand to zero",
            example: "rsqrt.approx.f32 %f1, %f2;",
        },
        Bra {
            mnemonic: "bra",
            opcode: 0x20,
            fields: &[
                opt(ModKind::Uni),
                opnd("target", K::Target, OT::None, Use),
                Field::Reconv,
            ],
            exec: ExecRule::Fixed(CONTROL),
            rules: NO_RULES,
            flow: Branch,
            sem: branch,
            doc: "jump to target (for the threads whose guard holds); divergent threads reconverge at the branch's immediate post-dominator; `.uni` records that the branch is uniform",
            example: "@%p1 bra LOOP;",
        },
        Exit {
            mnemonic: "exit",
            opcode: 0x21,
            fields: &[],
            exec: ExecRule::Fixed(CONTROL),
            rules: NO_RULES,
            flow: Exit,
            sem: exit,
            doc: "end the thread",
            example: "exit;",
        },
        Nop {
            mnemonic: "nop",
            opcode: 0x22,
            fields: &[],
            exec: ExecRule::Fixed(ex(T::Control, E::Nop, IU)),
            rules: NO_RULES,
            flow: Next,
            sem: nop,
            doc: "do nothing for one issue slot",
            example: "nop;",
        },
        BarSync {
            mnemonic: "bar.sync",
            opcode: 0x23,
            fields: &[],
            exec: ExecRule::Fixed(ex(T::Barrier, E::Barrier, IU)),
            rules: NO_RULES,
            flow: Barrier,
            sem: barrier,
            doc: "wait until every warp of the block has arrived (PTX `bar.sync 0`)",
            example: "bar.sync;",
        },
        BarBlocksync {
            mnemonic: "bar.blocksync",
            opcode: 0x24,
            fields: &[opt(ModKind::Side)],
            exec: ExecRule::Fixed(ex(T::BlockSync, E::BlockSync, IU)),
            rules: NO_RULES,
            flow: BlockSync,
            sem: blocksync,
            doc: "block barrier that also meets other units: without a side every active block and IU arrives and all CB pairs switch (thesis 2.2.1); with a side, the k-th sync meets the neighbour's k-th sync on that link and only that link's CB pair switches (thesis 4.2)",
            example: "bar.blocksync.south;",
        },
        Ret {
            mnemonic: "ret",
            opcode: 0x25,
            fields: &[],
            exec: ExecRule::Fixed(CONTROL),
            rules: NO_RULES,
            flow: Exit,
            sem: ret,
            doc: "return from a device function to the instruction after its `call`, once every thread of the call has returned (threads that return early wait); outside any call (in the kernel itself) it ends the thread, like `exit`",
            example: "ret;",
        },
        Membar {
            mnemonic: "membar",
            opcode: 0x26,
            fields: &[req(ModKind::MemLevel)],
            exec: ExecRule::Fixed(FENCE),
            rules: NO_RULES,
            flow: Next,
            sem: nop,
            doc: "memory barrier: orders the thread's memory accesses; a no-op here because every access completes in program order",
            example: "membar.gl;",
        },
        Fence {
            mnemonic: "fence",
            opcode: 0x27,
            fields: &[opt(ModKind::FenceSem), req(ModKind::Scope)],
            exec: ExecRule::Fixed(FENCE),
            rules: NO_RULES,
            flow: Next,
            sem: nop,
            doc: "memory fence: like `membar`, a no-op here because every access completes in program order",
            example: "fence.acq_rel.gpu;",
        },
        Cvta {
            mnemonic: "cvta",
            opcode: 0x28,
            fields: &[
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
            exec: ExecRule::Fixed(MOVE),
            rules: NO_RULES,
            flow: Next,
            sem: alu1(convert::mov),
            doc: "d = a: global and shared addresses are the same in generic form on the SPU (there is no generic addressing: loads and stores name their space)",
            example: "cvta.to.global.u64 %rd2, %rd1;",
        },
        Ex2 {
            mnemonic: "ex2",
            opcode: 0x29,
            fields: &[APPROX, FTZ, ty(mask(&[F32])), D, A],
            exec: SPECIAL,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::ex2),
            doc: "d = 2 to the power a, SFU approximation",
            example: "ex2.approx.f32 %f1, %f2;",
        },
        Lg2 {
            mnemonic: "lg2",
            opcode: 0x2a,
            fields: &[APPROX, FTZ, ty(mask(&[F32])), D, A],
            exec: SPECIAL,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::lg2),
            doc: "d = base-2 logarithm of a, SFU approximation",
            example: "lg2.approx.f32 %f1, %f2;",
        },
        Sin {
            mnemonic: "sin",
            opcode: 0x2b,
            fields: &[APPROX, FTZ, ty(mask(&[F32])), D, A],
            exec: SPECIAL,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::sin),
            doc: "d = sine of a (radians), SFU approximation",
            example: "sin.approx.f32 %f1, %f2;",
        },
        Cos {
            mnemonic: "cos",
            opcode: 0x2c,
            fields: &[APPROX, FTZ, ty(mask(&[F32])), D, A],
            exec: SPECIAL,
            rules: &[Rule::FloatRounding],
            flow: Next,
            sem: alu1(arith::cos),
            doc: "d = cosine of a (radians), SFU approximation",
            example: "cos.approx.f32 %f1, %f2;",
        },
        AndPred {
            mnemonic: "and.pred",
            opcode: 0x2d,
            fields: &[
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::Pred, OT::Pred, Use),
                opnd("b", K::Pred, OT::Pred, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: pred(compare::and),
            doc: "d = a and b, on predicates",
            example: "and.pred %p3, %p1, %p2;",
        },
        OrPred {
            mnemonic: "or.pred",
            opcode: 0x2e,
            fields: &[
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::Pred, OT::Pred, Use),
                opnd("b", K::Pred, OT::Pred, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: pred(compare::or),
            doc: "d = a or b, on predicates",
            example: "or.pred %p3, %p1, %p2;",
        },
        XorPred {
            mnemonic: "xor.pred",
            opcode: 0x2f,
            fields: &[
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::Pred, OT::Pred, Use),
                opnd("b", K::Pred, OT::Pred, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: pred(compare::xor),
            doc: "d = a xor b, on predicates",
            example: "xor.pred %p3, %p1, %p2;",
        },
        NotPred {
            mnemonic: "not.pred",
            opcode: 0x30,
            fields: &[
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::Pred, OT::Pred, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: pred(compare::not),
            doc: "d = not a, on predicates",
            example: "not.pred %p2, %p1;",
        },
        MovPred {
            mnemonic: "mov.pred",
            opcode: 0x31,
            fields: &[
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::Pred, OT::Pred, Use),
            ],
            exec: ExecRule::Fixed(MOVE),
            rules: NO_RULES,
            flow: Next,
            sem: pred(compare::mov),
            doc: "d = a, on predicates",
            example: "mov.pred %p2, %p1;",
        },
        ShflSync {
            mnemonic: "shfl.sync",
            opcode: 0x32,
            fields: &[
                req(ModKind::ShflMode),
                ty(B32_ONLY),
                D,
                opnd("p", K::OptPred, OT::Pred, Def),
                A,
                opnd("b", K::RegOrSmall, OT::U32Low(5), Use),
                opnd("c", K::ShflC, OT::U32, Use),
                MASK,
            ],
            exec: ExecRule::Fixed(ex(T::Shuffle, E::Shuffle, SM)),
            rules: NO_RULES,
            flow: Next,
            sem: shfl(warp::shfl),
            doc: "d = a of another lane of the warp: `up` lane - b, `down` lane + b, `bfly` lane ^ b, `idx` lane b, within segments and clamp given by c; p (optional, `d|p`) tells whether that lane was in range; out of range, d = a",
            example: "shfl.sync.down.b32 %r2|%p1, %r1, 16, 31, -1;",
        },
        VoteSync {
            mnemonic: "vote.sync",
            opcode: 0x33,
            fields: &[
                req(ModKind::VoteMode),
                req(ModKind::PredTy),
                opnd("d", K::Pred, OT::Pred, Def),
                opnd("a", K::PredNeg, OT::Pred, Use),
                MASK,
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: vote(warp::vote),
            doc: "d = whether a holds in all (`all`), any (`any`) or all-or-none (`uni`) of the active lanes",
            example: "vote.sync.any.pred %p2, %p1, -1;",
        },
        VoteSyncBallot {
            mnemonic: "vote.sync.ballot",
            opcode: 0x34,
            fields: &[ty(B32_ONLY), D, opnd("a", K::PredNeg, OT::Pred, Use), MASK],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: ballot(warp::ballot),
            doc: "d = the mask of active lanes where a holds",
            example: "vote.sync.ballot.b32 %r1, %p1, -1;",
        },
        Activemask {
            mnemonic: "activemask",
            opcode: 0x35,
            fields: &[ty(B32_ONLY), D],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: activemask(warp::activemask),
            doc: "d = the mask of the warp's active lanes",
            example: "activemask.b32 %r1;",
        },
        Popc {
            mnemonic: "popc",
            opcode: 0x36,
            fields: &[ty(B32_64), reg("d", OT::U32, Def), A],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu1(bits::popc),
            doc: "d = number of set bits of a",
            example: "popc.b32 %r1, %r2;",
        },
        Clz {
            mnemonic: "clz",
            opcode: 0x37,
            fields: &[ty(B32_64), reg("d", OT::U32, Def), A],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu1(bits::clz),
            doc: "d = number of leading zero bits of a",
            example: "clz.b32 %r1, %r2;",
        },
        Brev {
            mnemonic: "brev",
            opcode: 0x38,
            fields: &[ty(B32_64), D, A],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu1(bits::brev),
            doc: "d = a with its bits in reverse order",
            example: "brev.b32 %r1, %r2;",
        },
        Bfind {
            mnemonic: "bfind",
            opcode: 0x39,
            fields: &[
                opt(ModKind::ShiftAmt),
                ty(INT_32_64),
                reg("d", OT::U32, Def),
                A,
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu1(bits::bfind),
            doc: "d = position of the most significant non-sign bit of a (with `.shiftamt`: the left shift that brings it to the top, 31 or 63 minus the position), or 0xffffffff if there is none",
            example: "bfind.u32 %r1, %r2;",
        },
        Bfe {
            mnemonic: "bfe",
            opcode: 0x3a,
            fields: &[
                ty(INT_32_64),
                D,
                A,
                opnd("b", K::RegOrSmall, OT::U32Low(8), Use),
                opnd("c", K::RegOrSmall, OT::U32Low(8), Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu3(bits::bfe),
            doc: "d = the c bits of a starting at bit b (positions and lengths use their low 8 bits), zero-extended for unsigned and sign-extended for signed types",
            example: "bfe.u32 %r1, %r2, 8, 4;",
        },
        Bfi {
            mnemonic: "bfi",
            opcode: 0x3b,
            fields: &[
                ty(B32_64),
                D,
                A,
                B,
                opnd("c", K::RegOrSmall, OT::U32Low(8), Use),
                opnd("e", K::RegOrSmall, OT::U32Low(8), Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu4(bits::bfi),
            doc: "d = b with its e bits starting at bit c replaced by the low bits of a",
            example: "bfi.b32 %r1, %r2, %r3, 8, 4;",
        },
        Prmt {
            mnemonic: "prmt",
            opcode: 0x3c,
            fields: &[ty(B32_ONLY), opt(ModKind::PrmtMode), D, A, B, B_IMM_C],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu3(bits::prmt),
            doc: "d = bytes of {b, a} picked by the selector c (generic form: each 4-bit nibble of c picks a byte, bit 3 replicates its sign)",
            example: "prmt.b32 %r1, %r2, %r3, 0x3210;",
        },
        Shf {
            mnemonic: "shf",
            opcode: 0x3d,
            fields: &[
                req(ModKind::ShfDir),
                req(ModKind::ShfMode),
                ty(B32_ONLY),
                D,
                A,
                B,
                opnd("c", K::RegOrSmall, OT::U32, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu3(bits::shf),
            doc: "funnel shift: d = the 32 bits of {b, a} shifted left (`l`, high word) or right (`r`, low word) by c, all 32 bits of it clamped to 32 (`clamp`) or taken modulo 32 (`wrap`)",
            example: "shf.l.wrap.b32 %r1, %r2, %r3, 5;",
        },
        Lop3 {
            mnemonic: "lop3",
            opcode: 0x3e,
            fields: &[
                ty(B32_ONLY),
                D,
                A,
                B,
                C,
                opnd("lut", K::Imm8, OT::None, Use),
            ],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu4(bits::lop3),
            doc: "d = the bitwise function of a, b, c whose truth table is lut (a = 0xf0, b = 0xcc, c = 0xaa)",
            example: "lop3.b32 %r1, %r2, %r3, %r4, 0xe8;",
        },
        Copysign {
            mnemonic: "copysign",
            opcode: 0x42,
            fields: &[ty(FLOATS), D, A, B],
            exec: LOGIC,
            rules: NO_RULES,
            flow: Next,
            sem: alu2(arith::copysign),
            doc: "d = b with the sign of a (PTX's order: the sign comes from the first source); every other bit of b is kept, a NaN's payload too",
            example: "copysign.f32 %f1, %f2, %f3;",
        },
        Call {
            mnemonic: "call",
            opcode: 0x43,
            fields: &[
                opt(ModKind::Uni),
                opnd("target", K::Target, OT::None, Use),
                opnd("frame", K::Imm8, OT::None, Use),
            ],
            exec: ExecRule::Fixed(CONTROL),
            rules: NO_RULES,
            flow: Call,
            sem: call,
            doc: "call the device function at target (for the threads whose guard holds): they run it until each has executed `ret`, then continue after the call together with the threads that did not call; the callee's local frame (parameters, return values, `.local` data) starts frame x 16 bytes after the caller's; the caller's registers are preserved; calls nest at most 64 deep",
            example: "call.uni FACT, 2;",
        },
        Printf {
            mnemonic: "printf",
            opcode: 0x44,
            fields: &[opnd("frame", K::Imm8, OT::None, Use)],
            exec: ExecRule::Fixed(CONTROL),
            rules: NO_RULES,
            flow: Next,
            sem: printf,
            doc: "the built-in `vprintf` with PTX's calling convention (for the threads whose guard holds): its frame starts frame x 16 bytes into the caller's, holding the format string's global address (8 bytes), the local address of the argument buffer (8 bytes, each argument aligned to its size) and, after them, the 4-byte result, the number of arguments printed (-1 for a null format); each thread's text goes to standard output after the run, by block, warp, lane and program order",
            example: "printf 2;",
        },
        Testp {
            mnemonic: "testp",
            opcode: 0x45,
            fields: &[
                req(ModKind::TestpOp),
                ty(FLOATS),
                opnd("p", K::Pred, OT::Pred, Def),
                A,
            ],
            exec: ARITH,
            rules: NO_RULES,
            flow: Next,
            sem: setp(compare::testp),
            doc: "p = whether a is finite (`finite`), an infinity (`infinite`), not NaN (`number`), NaN (`notanumber`), normal (`normal`: finite, nonzero, not subnormal) or subnormal (`subnormal`); subnormals are never flushed",
            example: "testp.notanumber.f32 %p1, %f1;",
        },
        }
    };
}

/// Stamps [`TABLE`] and [`Opcode`] from the rows.
macro_rules! define_table {
    ($(
        $variant:ident {
            mnemonic: $mnemonic:literal,
            opcode: $opcode:literal,
            fields: $fields:expr,
            exec: $exec:expr,
            rules: $rules:expr,
            flow: $flow:ident,
            sem: $sem:ident $(($($sem_arg:tt)*))?,
            doc: $doc:literal,
            example: $example:literal,
        },
    )*) => {
        /// The instruction set, in row order (the order of [`Opcode`]).
        pub const TABLE: &[InstrSpec] = &[$(
            InstrSpec {
                mnemonic: $mnemonic,
                opcode: $opcode,
                fields: $fields,
                exec: $exec,
                rules: $rules,
                flow: Flow::$flow,
                doc: $doc,
                example: $example,
            },
        )*];

        /// An instruction of the ISA: one variant per row of [`TABLE`], in row order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = $doc]
                $variant,
            )*
        }

        impl Opcode {
            /// Every row, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant),*];
        }
    };
}

crate::for_each_instr!(define_table);
