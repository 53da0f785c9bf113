//! The independent reference of the differential corpus: what each generated
//! instruction stores, written from ISA.md's notes and the PTX manual without the
//! emulator's code. Integers compute on `i128` values of their type ([`int`]);
//! floats exactly on big integers, rounded once ([`float`]). Operands arrive as
//! register patterns (or immediates) and are read by the instruction's types here.
//! [`sfu`] gives the bounds of the SFU functions, [`memory`] what loads, stores and
//! atomics do to a thread's bytes, [`warp`] the operations across a warp's lanes.

pub mod float;
pub mod int;
pub mod memory;
pub mod sfu;
pub mod warp;

use float::{F32, F64, Format, Mode};
use spu_isa::{
    AtomOp, Cmp, Half, PrmtMode, Rnd, ShfDir, ShfMode, ShflMode, Space, TestpOp, Ty, VoteMode,
};

/// One generated operation and its modifiers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add {
        ty: Ty,
        sat: bool,
    },
    Sub {
        ty: Ty,
        sat: bool,
    },
    Mul {
        ty: Ty,
        half: Half,
    },
    Mad {
        ty: Ty,
        half: Half,
        sat: bool,
    },
    MulWide {
        ty: Ty,
    },
    MadWide {
        ty: Ty,
    },
    Div {
        ty: Ty,
    },
    Rem {
        ty: Ty,
    },
    MinMax {
        ty: Ty,
        max: bool,
    },
    Abs {
        ty: Ty,
    },
    Neg {
        ty: Ty,
    },
    Shift {
        ty: Ty,
        left: bool,
    },
    Logic {
        ty: Ty,
        op: Logic,
    },
    Not {
        ty: Ty,
    },
    Popc {
        ty: Ty,
    },
    Clz {
        ty: Ty,
    },
    Brev {
        ty: Ty,
    },
    Bfind {
        ty: Ty,
        shiftamt: bool,
    },
    Bfe {
        ty: Ty,
    },
    Bfi {
        ty: Ty,
    },
    Prmt {
        mode: Option<PrmtMode>,
    },
    Shf {
        dir: ShfDir,
        mode: ShfMode,
    },
    Lop3 {
        lut: u8,
    },
    /// `add sub mul` on floats.
    FArith {
        ty: Ty,
        op: Arith,
        rnd: Option<Rnd>,
        ftz: bool,
        sat: bool,
    },
    Fma {
        ty: Ty,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
    },
    /// `div`; `approx`: `.approx` or `.full` (both correctly rounded, to nearest).
    FDiv {
        ty: Ty,
        rnd: Option<Rnd>,
        ftz: bool,
    },
    /// `rcp`; `rnd` `None` is `.approx`.
    Rcp {
        ty: Ty,
        rnd: Option<Rnd>,
        ftz: bool,
    },
    /// `sqrt`; `rnd` `None` is `.approx`.
    Sqrt {
        ty: Ty,
        rnd: Option<Rnd>,
        ftz: bool,
    },
    Rsqrt {
        ty: Ty,
        ftz: bool,
    },
    FMinMax {
        ty: Ty,
        max: bool,
        ftz: bool,
    },
    FSign {
        ty: Ty,
        neg: bool,
        ftz: bool,
    },
    Copysign {
        ty: Ty,
    },
    Setp {
        ty: Ty,
        cmp: Cmp,
        ftz: bool,
    },
    Selp {
        ty: Ty,
    },
    Cvt {
        dst: Ty,
        src: Ty,
        rnd: Option<Rnd>,
        ftz: bool,
        sat: bool,
    },
    /// `testp.{test}.{ty}`: the class of a float (PTX 9.7.3.2).
    Testp {
        test: TestpOp,
        ty: Ty,
    },
    /// `ex2 lg2 sin cos .approx[.ftz].f32`: checked against [`sfu::want`].
    Sfu {
        fun: sfu::Fun,
        ftz: bool,
    },
    /// `mov` of a register or an immediate, and `cvta`: d = a read as `ty`.
    Mov {
        ty: Ty,
    },
    /// `mov.u32 d, %special` (a special register whose value the reference knows).
    Special(Sr),
    /// Predicate logic on 0/1 values.
    PredLogic(PredOp),
    /// `ld`, `ldu`: `count` elements of `ty` at byte `offset` of the thread's
    /// scratch of `space` (of the parameters for `.param`).
    Load {
        space: Space,
        ty: Ty,
        count: usize,
        offset: usize,
    },
    /// `st`: the sources' low bits as `count` elements of `ty`.
    Store {
        space: Space,
        ty: Ty,
        count: usize,
        offset: usize,
    },
    /// `atom` (`op` `None`: `.cas`), and `red` (`returns` false).
    Atomic {
        space: Space,
        op: Option<AtomOp>,
        ty: Ty,
        offset: usize,
        returns: bool,
    },
    /// `shfl.sync`: destinations d and, if present, p; sources a, b, c.
    Shfl {
        mode: ShflMode,
    },
    /// `vote.sync.{all,any,uni}.pred`, of the source predicate negated or not.
    Vote {
        mode: VoteMode,
        negated: bool,
    },
    /// `vote.sync.ballot.b32`.
    Ballot {
        negated: bool,
    },
    Activemask,
    /// `nop`, `bar.sync`, `membar`, `fence`: nothing to compute.
    Nothing,
}

/// The special registers the corpus reads: their value follows from the
/// thread's index and the launch (blocks of 64 threads in one row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sr {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    IsIu,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
}

impl Sr {
    pub const ALL: [Sr; 20] = [
        Sr::Tid(0),
        Sr::Tid(1),
        Sr::Tid(2),
        Sr::Ntid(0),
        Sr::Ntid(1),
        Sr::Ntid(2),
        Sr::Ctaid(0),
        Sr::Ctaid(1),
        Sr::Ctaid(2),
        Sr::Nctaid(0),
        Sr::Nctaid(1),
        Sr::Nctaid(2),
        Sr::LaneId,
        Sr::WarpId,
        Sr::IsIu,
        Sr::LanemaskEq,
        Sr::LanemaskLe,
        Sr::LanemaskLt,
        Sr::LanemaskGe,
        Sr::LanemaskGt,
    ];

    /// Its name in source, without `%`.
    pub fn name(self) -> String {
        let axis = |d: u8| ["x", "y", "z"][usize::from(d)];
        match self {
            Sr::Tid(d) => format!("tid.{}", axis(d)),
            Sr::Ntid(d) => format!("ntid.{}", axis(d)),
            Sr::Ctaid(d) => format!("ctaid.{}", axis(d)),
            Sr::Nctaid(d) => format!("nctaid.{}", axis(d)),
            Sr::LaneId => "laneid".into(),
            Sr::WarpId => "warpid".into(),
            Sr::IsIu => "is_iu".into(),
            Sr::LanemaskEq => "lanemask_eq".into(),
            Sr::LanemaskLe => "lanemask_le".into(),
            Sr::LanemaskLt => "lanemask_lt".into(),
            Sr::LanemaskGe => "lanemask_ge".into(),
            Sr::LanemaskGt => "lanemask_gt".into(),
        }
    }

    /// Its value in global thread `t` of a launch of `threads` threads in blocks
    /// of 64 (PTX 10: thread and block indices, lane within the warp of 32, the
    /// lane masks).
    pub fn value(self, t: usize, threads: usize) -> u64 {
        let (tid, block) = ((t % 64) as u64, (t / 64) as u64);
        let lane = tid % 32;
        let le = ((2u64 << lane) - 1) & 0xffff_ffff;
        let lt = (1u64 << lane) - 1;
        match self {
            Sr::Tid(0) => tid,
            Sr::Ntid(0) => 64,
            Sr::Ctaid(0) => block,
            Sr::Nctaid(0) => (threads / 64) as u64,
            Sr::Tid(_) | Sr::Ctaid(_) => 0,
            Sr::Ntid(_) | Sr::Nctaid(_) => 1,
            Sr::LaneId => lane,
            Sr::WarpId => tid / 32,
            Sr::IsIu => 0,
            Sr::LanemaskEq => 1 << lane,
            Sr::LanemaskLe => le,
            Sr::LanemaskLt => lt,
            Sr::LanemaskGe => !lt & 0xffff_ffff,
            Sr::LanemaskGt => !le & 0xffff_ffff,
        }
    }
}

/// Predicate logic: `and.pred or.pred xor.pred` (two sources), `not.pred`,
/// `mov.pred` (one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
}

fn format(ty: Ty) -> Format {
    if ty == Ty::F64 { F64 } else { F32 }
}

fn mode(rnd: Option<Rnd>) -> Mode {
    match rnd {
        None | Some(Rnd::Rn | Rnd::Rni) => Mode::Nearest,
        Some(Rnd::Rz | Rnd::Rzi) => Mode::Zero,
        Some(Rnd::Rm | Rnd::Rmi) => Mode::Down,
        Some(Rnd::Rp | Rnd::Rpi) => Mode::Up,
    }
}

/// A float operand's pattern, a subnormal `.f32` flushed under `.ftz`.
fn fin(ty: Ty, v: u64, ftz: bool) -> u64 {
    let f = format(ty);
    let v = int::low(ty.bits(), v);
    if ftz && ty == Ty::F32 { f.flush(v) } else { v }
}

/// A float result: flushed (`.ftz`, `.f32` only), then clamped to [0, 1] (`.sat`:
/// NaN gives +0, -0 stays).
fn fout(ty: Ty, r: u64, ftz: bool, sat: bool) -> u64 {
    let f = format(ty);
    let r = if ftz && ty == Ty::F32 { f.flush(r) } else { r };
    if !sat {
        return r;
    }
    if f.is_nan(r) {
        return 0;
    }
    match float::decode(f, r) {
        float::Value::Finite(x) if x.neg => 0,
        float::Value::Infinity(true) => 0,
        _ if greater_than_one(f, r) => f.one(),
        _ => r,
    }
}

fn greater_than_one(f: Format, r: u64) -> bool {
    !f.is_neg(r) && r > f.one()
}

/// The value `op` gives for operands `v` (patterns of their registers, or
/// immediates) and, for `selp`, predicate `p`: a pattern of the destination
/// (predicates: 0 or 1).
pub fn eval(op: Op, v: &[u64], p: bool) -> u64 {
    use int::*;
    match op {
        Op::Add { ty, sat } => add(ty, v[0], v[1], sat),
        Op::Sub { ty, sat } => sub(ty, v[0], v[1], sat),
        Op::Mul { ty, half } => mul(ty, v[0], v[1], half),
        Op::Mad { ty, half, sat } => mad(ty, v[0], v[1], v[2], half, sat),
        Op::MulWide { ty } => mul_wide(ty, v[0], v[1]),
        Op::MadWide { ty } => mad_wide(ty, v[0], v[1], v[2]),
        Op::Div { ty } => int::div(ty, v[0], v[1]),
        Op::Rem { ty } => rem(ty, v[0], v[1]),
        Op::MinMax { ty, max } => min_max(ty, v[0], v[1], max),
        Op::Abs { ty } => abs(ty, v[0]),
        Op::Neg { ty } => neg(ty, v[0]),
        Op::Shift { ty, left } => shift(ty, v[0], v[1], left),
        Op::Logic { ty, op } => {
            let r = match op {
                Logic::And => v[0] & v[1],
                Logic::Or => v[0] | v[1],
                Logic::Xor => v[0] ^ v[1],
            };
            wrap(ty, value(ty, r))
        }
        Op::Not { ty } => wrap(ty, value(ty, !v[0])),
        Op::Popc { ty } => popc(ty, v[0]),
        Op::Clz { ty } => clz(ty, v[0]),
        Op::Brev { ty } => brev(ty, v[0]),
        Op::Bfind { ty, shiftamt } => bfind(ty, v[0], shiftamt),
        Op::Bfe { ty } => bfe(ty, v[0], v[1], v[2]),
        Op::Bfi { ty } => bfi(ty, v[0], v[1], v[2], v[3]),
        Op::Prmt { mode } => prmt(v[0], v[1], v[2], mode),
        Op::Shf { dir, mode } => shf(v[0], v[1], v[2], dir, mode),
        Op::Lop3 { lut } => lop3(v[0], v[1], v[2], u64::from(lut)),
        Op::FArith {
            ty,
            op,
            rnd,
            ftz,
            sat,
        } => {
            let (f, m) = (format(ty), mode(rnd));
            let (a, b) = (fin(ty, v[0], ftz), fin(ty, v[1], ftz));
            let r = match op {
                Arith::Add => float::add(f, a, b, m),
                Arith::Sub => float::sub(f, a, b, m),
                Arith::Mul => float::mul(f, a, b, m),
            };
            fout(ty, r, ftz, sat)
        }
        Op::Fma { ty, rnd, ftz, sat } => {
            let [a, b, c] = [0, 1, 2].map(|i| fin(ty, v[i], ftz));
            fout(
                ty,
                float::fma(format(ty), a, b, c, mode(Some(rnd))),
                ftz,
                sat,
            )
        }
        Op::FDiv { ty, rnd, ftz } => {
            let (a, b) = (fin(ty, v[0], ftz), fin(ty, v[1], ftz));
            fout(ty, float::div(format(ty), a, b, mode(rnd)), ftz, false)
        }
        Op::Rcp { ty, rnd, ftz } => {
            let f = format(ty);
            if ty == Ty::F64 && rnd.is_none() {
                return rcp_approx_ftz_f64(v[0]);
            }
            fout(
                ty,
                float::div(f, f.one(), fin(ty, v[0], ftz), mode(rnd)),
                ftz,
                false,
            )
        }
        Op::Sqrt { ty, rnd, ftz } => fout(
            ty,
            float::sqrt(format(ty), fin(ty, v[0], ftz), mode(rnd)),
            ftz,
            false,
        ),
        Op::Rsqrt { ty, ftz } => {
            // `rsqrt.approx.ftz.f64` flushes its operand too.
            let a = if ftz {
                format(ty).flush(int::low(ty.bits(), v[0]))
            } else {
                v[0]
            };
            fout(
                ty,
                float::rsqrt(format(ty), int::low(ty.bits(), a)),
                ftz,
                false,
            )
        }
        Op::FMinMax { ty, max, ftz } => {
            let (a, b) = (fin(ty, v[0], ftz), fin(ty, v[1], ftz));
            float::min_max(format(ty), a, b, max)
        }
        Op::FSign { ty, neg, ftz } => {
            let f = format(ty);
            let a = fin(ty, v[0], ftz);
            if neg { a ^ f.sign() } else { a & !f.sign() }
        }
        Op::Copysign { ty } => {
            let s = format(ty).sign();
            let (a, b) = (int::low(ty.bits(), v[0]), int::low(ty.bits(), v[1]));
            (b & !s) | (a & s)
        }
        Op::Setp { ty, cmp, ftz } => u64::from(setp(ty, cmp, ftz, v[0], v[1])),
        Op::Selp { ty } => int::low(ty.bits(), if p { v[0] } else { v[1] }),
        Op::Cvt {
            dst,
            src,
            rnd,
            ftz,
            sat,
        } => cvt(dst, src, rnd, ftz, sat, v[0]),
        Op::Testp { test, ty } => u64::from(testp(test, ty, v[0])),
        Op::Sfu { fun, ftz } => u64::from(sfu::best(sfu::want(fun, v[0] as u32, ftz))),
        Op::Mov { ty } => int::low(ty.bits(), v[0]),
        Op::PredLogic(op) => {
            let (a, b) = (v[0] != 0, v.get(1).is_some_and(|&b| b != 0));
            u64::from(match op {
                PredOp::And => a && b,
                PredOp::Or => a || b,
                PredOp::Xor => a != b,
                PredOp::Not => !a,
                PredOp::Mov => a,
            })
        }
        Op::Special(_)
        | Op::Load { .. }
        | Op::Store { .. }
        | Op::Atomic { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Ballot { .. }
        | Op::Activemask
        | Op::Nothing => unreachable!("{op:?} needs the thread's or the warp's state"),
    }
}

/// PTX 9.7.3.14: the upper word of `a`, flushed; the reciprocal rounded to
/// nearest, flushed, its low word cleared; NaN gives the canonical NaN's upper word.
fn rcp_approx_ftz_f64(a: u64) -> u64 {
    let upper = F64.flush(a & 0xffff_ffff_0000_0000);
    let r = F64.flush(float::div(F64, F64.one(), upper, Mode::Nearest));
    if F64.is_nan(r) {
        0x7fff_ffff_0000_0000
    } else {
        r & 0xffff_ffff_0000_0000
    }
}

/// PTX 9.7.3.2 `testp`: the class of a float pattern, by its fields.
fn testp(test: TestpOp, ty: Ty, a: u64) -> bool {
    let f = format(ty);
    let a = int::low(ty.bits(), a);
    let (nan, inf) = (f.is_nan(a), a & (f.sign() - 1) == f.infinity(false));
    let zero = a & (f.sign() - 1) == 0;
    match test {
        TestpOp::Finite => !nan && !inf,
        TestpOp::Infinite => inf,
        TestpOp::Number => !nan,
        TestpOp::NotANumber => nan,
        TestpOp::Normal => !nan && !inf && !zero && !f.is_subnormal(a),
        TestpOp::Subnormal => f.is_subnormal(a),
    }
}

/// A float pattern's value as f64 (exact), or `None` for NaN.
fn as_f64(ty: Ty, v: u64) -> Option<f64> {
    let x = if ty == Ty::F64 {
        f64::from_bits(v)
    } else {
        f64::from(f32::from_bits(v as u32))
    };
    (!x.is_nan()).then_some(x)
}

/// PTX 9.7.6.2 with ISA.md's notes on NaN.
fn setp(ty: Ty, cmp: Cmp, ftz: bool, a: u64, b: u64) -> bool {
    use std::cmp::Ordering::*;
    let order = if ty.is_float() {
        let (x, y) = (fin(ty, a, ftz), fin(ty, b, ftz));
        match (as_f64(ty, x), as_f64(ty, y)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => None,
        }
    } else if cmp.unsigned_only() || !ty.is_signed() {
        Some(int::low(ty.bits(), a).cmp(&int::low(ty.bits(), b)))
    } else {
        Some(int::value(ty, a).cmp(&int::value(ty, b)))
    };
    let Some(o) = order else {
        // A NaN: ordered comparisons are false, unordered ones true.
        return matches!(
            cmp,
            Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Nan
        );
    };
    match cmp {
        Cmp::Eq | Cmp::Equ => o == Equal,
        Cmp::Ne | Cmp::Neu => o != Equal,
        Cmp::Lt | Cmp::Lo | Cmp::Ltu => o == Less,
        Cmp::Le | Cmp::Ls | Cmp::Leu => o != Greater,
        Cmp::Gt | Cmp::Hi | Cmp::Gtu => o == Greater,
        Cmp::Ge | Cmp::Hs | Cmp::Geu => o != Less,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// PTX 9.7.9.21 `cvt`, with ISA.md's conversion notes.
fn cvt(dst: Ty, src: Ty, rnd: Option<Rnd>, ftz: bool, sat: bool, a: u64) -> u64 {
    match (src.is_float(), dst.is_float()) {
        (false, false) => {
            let x = int::value(src, a);
            if sat {
                let (lo, hi) = int::range(dst);
                int::wrap(dst, x.clamp(lo, hi))
            } else {
                int::wrap(dst, x)
            }
        }
        (false, true) => {
            let r = float::from_int(format(dst), int::value(src, a), mode(rnd));
            fout(dst, r, ftz, sat)
        }
        (true, false) => {
            let x = fin(src, a, ftz);
            let m = mode(Some(rnd.unwrap_or(Rnd::Rzi)));
            let n = float::to_int(format(src), x, m, dst.bits(), dst.is_signed());
            int::wrap(dst, n)
        }
        (true, true) => {
            let x = fin(src, a, ftz);
            let r = match rnd {
                Some(r) if r.integral() => float::round_to_integral(format(src), x, mode(rnd)),
                _ => float::convert(format(src), format(dst), x, mode(rnd)),
            };
            fout(dst, r, ftz, sat)
        }
    }
}
