//! Constraints between modifiers that a row's field list cannot express (PTX's
//! rules on rounding, saturation, comparisons, atomics and cache operators), checked
//! by the decoder and the assembler alike.

use crate::names::{AtomOp, CacheOp, Cmp, Half, Prec, Space, Ty, TyClass};

/// A constraint between modifiers that the field list alone cannot express. The
/// decoder and the assembler both check them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Integer forms need `.lo`/`.hi`; float forms take none.
    HalfForIntOnly,
    /// Rounding (`rn rz rm rp`) and `.ftz` only on float types, `.ftz` only on
    /// `.f32`: PTX's `.f64` arithmetic keeps subnormals.
    FloatRounding,
    /// As [`Rule::FloatRounding`], but `.ftz` also on `.approx.f64`: PTX's
    /// `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64` (PTX ISA 9.7.3.14, 9.7.3.17).
    ApproxFloatRounding,
    /// `.sat` only on `.s32` and `.f32`.
    SatS32OrF32,
    /// `.sat` only on `.f32`.
    SatF32,
    /// `mad`: `.sat` only on `.hi.s32` and `.f32` (PTX ISA 9.7.1.4: the `.lo` sum
    /// wraps).
    SatMad,
    /// `div`: `.approx`/`.full` only on `.f32`, never with a rounding mode (PTX ISA
    /// 9.7.3.8 has no `.approx` `.f64` division).
    DivPrecision,
    /// `sqrt`: `.approx` only on `.f32`, never with a rounding mode; no `.full`
    /// (PTX ISA 9.7.3.15).
    SqrtPrecision,
    /// `rcp`: `.approx` on `.f32`, and on `.f64` only with `.ftz` (PTX's
    /// `rcp.approx.ftz.f64`, 9.7.3.14), never with a rounding mode; no `.full`
    /// (9.7.3.13).
    RcpPrecision,
    /// `cvt`: integral rounding (`rni`...) from floats to integers or floats of the same
    /// size, `rn rz rm rp` towards floats from integers or narrower floats; `.ftz` when a
    /// float is involved; `.sat` towards integers or floats.
    CvtRounding,
    /// `setp`: unordered comparisons, `num` and `nan` only on floats; `lo ls hi hs`
    /// only on unsigned types; bit types only with `eq` and `ne` (PTX ISA 9.7.6.2).
    CmpMatchesType,
    /// `atom`: `add` on u32/s32/u64/f32/f64; `min`/`max` on u32/s32/u64/s64; `exch`, `and`,
    /// `or`, `xor` on b32/b64 (and u32/s32 for `exch`); `inc`/`dec` on u32.
    AtomOpType,
    /// A shared-memory `cvta`/`ld`/`st` cannot use `.nc`, cache operators belong to
    /// loads (`ca cg cs lu cv`) or stores (`wb cg cs wt`).
    LoadCache,
    /// Store cache operators only.
    StoreCache,
    /// `.v4` takes elements of at most 32 bits.
    VectorElements,
}

impl Rule {
    /// Checks the modifiers; `Err` says what is wrong.
    pub fn check(self, m: &crate::mods::Mods) -> Result<(), String> {
        let ty = m.ty;
        match self {
            Rule::HalfForIntOnly => match (ty, m.half) {
                (Some(t), None) if t.is_int() => Err(format!(
                    "integer forms need .lo or .hi (`.lo.{t}` keeps the low half)"
                )),
                (Some(t), Some(h)) if t.is_float() => Err(format!("`.{h}` does not apply to .{t}")),
                _ => Ok(()),
            },
            Rule::FloatRounding => float_rounding(m, false),
            Rule::ApproxFloatRounding => float_rounding(m, true),
            Rule::SatS32OrF32 => match (m.sat, ty) {
                (Some(_), Some(Ty::S32 | Ty::F32)) | (None, _) => Ok(()),
                _ => Err("`.sat` only applies to .s32 and .f32".into()),
            },
            Rule::SatF32 => match (m.sat, ty) {
                (Some(_), Some(Ty::F32)) | (None, _) => Ok(()),
                _ => Err("`.sat` only applies to .f32".into()),
            },
            Rule::SatMad => match (m.sat, ty, m.half) {
                (None, ..) | (Some(_), Some(Ty::F32), _) | (Some(_), Some(Ty::S32), Some(Half::Hi)) => {
                    Ok(())
                }
                (Some(_), Some(Ty::S32), _) => Err(
                    "`.sat` only applies to `mad.hi.s32`: the low half of the product wraps, so drop `.sat` (PTX has no `mad.lo.sat`)".into(),
                ),
                _ => Err("`.sat` only applies to `mad.hi.s32` and `mad.f32`".into()),
            },
            Rule::DivPrecision => precision(m, Approx::F32, true),
            Rule::SqrtPrecision => precision(m, Approx::F32, false),
            Rule::RcpPrecision => precision(m, Approx::F64WithFtz, false),
            Rule::CvtRounding => {
                let (Some(d), Some(s)) = (m.ty, m.src_ty) else {
                    return Ok(());
                };
                if let Some(r) = m.rnd {
                    let ok = if r.integral() {
                        s.is_float() && (d.is_int() || d == s)
                    } else {
                        d.is_float() && (s.is_int() || d.bits() < s.bits())
                    };
                    if !ok {
                        return Err(format!(
                            "`.{r}` does not apply to a conversion from .{s} to .{d}: integral rounding (rni rzi rmi rpi) is for floats to integers or to the same float type, rn rz rm rp for integers or wider floats to floats"
                        ));
                    }
                }
                if m.ftz.is_some() && !(d == Ty::F32 || s == Ty::F32) {
                    return Err("`.ftz` needs an .f32 source or destination".into());
                }
                Ok(())
            }
            Rule::CmpMatchesType => match (m.cmp, ty) {
                (Some(c), Some(t)) if c.float_only() && !t.is_float() => {
                    Err(format!("`.{c}` only applies to float comparisons"))
                }
                (Some(c), Some(t)) if c.unsigned_only() && t.class() != TyClass::Unsigned => Err(
                    format!("`.{c}` is an unsigned comparison: use .u{}", t.bits()),
                ),
                // PTX ISA 9.7.6.2: "the untyped, bit-size comparisons are eq and ne".
                (Some(c @ (Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge)), Some(t))
                    if t.class() == TyClass::Bits =>
                {
                    let w = t.bits();
                    Err(format!(
                        "`.{c}` orders values, and bit types only compare with `eq` and `ne`: use .u{w} for an unsigned or .s{w} for a signed comparison"
                    ))
                }
                _ if m.ftz.is_some() && ty != Some(Ty::F32) => {
                    Err("`.ftz` only applies to .f32".into())
                }
                _ => Ok(()),
            },
            Rule::AtomOpType => {
                let (Some(op), Some(t)) = (m.atom, ty) else {
                    return Ok(());
                };
                let ok = match op {
                    AtomOp::Add => matches!(t, Ty::U32 | Ty::S32 | Ty::U64 | Ty::F32 | Ty::F64),
                    AtomOp::Min | AtomOp::Max => matches!(t, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
                    AtomOp::Exch => matches!(t, Ty::B32 | Ty::B64 | Ty::U32 | Ty::S32),
                    AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(t, Ty::B32 | Ty::B64),
                    AtomOp::Inc | AtomOp::Dec => t == Ty::U32,
                };
                if ok {
                    Ok(())
                } else {
                    Err(format!("`atom.{op}` does not take .{t}"))
                }
            }
            Rule::LoadCache => match m.cache {
                Some(c @ (CacheOp::Wb | CacheOp::Wt)) => {
                    Err(format!("`.{c}` is a store cache operator"))
                }
                _ if m.nc.is_some() && m.space != Some(Space::Global) => {
                    Err("`.nc` only applies to global loads".into())
                }
                _ if m.nc.is_some() && m.volatile.is_some() => {
                    Err("a load cannot be both `.volatile` and `.nc`".into())
                }
                _ => Ok(()),
            },
            Rule::VectorElements => match (m.vec, ty) {
                (Some(crate::names::Vector::V4), Some(t)) if t.bits() == 64 => {
                    Err(format!(".v4 takes elements of at most 32 bits, not .{t}"))
                }
                _ => Ok(()),
            },
            Rule::StoreCache => match m.cache {
                Some(c @ (CacheOp::Ca | CacheOp::Lu | CacheOp::Cv)) => {
                    Err(format!("`.{c}` is a load cache operator"))
                }
                _ => Ok(()),
            },
        }
    }
}

/// Whether `.approx` applies to `.f64` (with `.ftz` only, as `rcp.approx.ftz.f64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Approx {
    F32,
    F64WithFtz,
}

/// [`Rule::FloatRounding`] and, when `approx_ftz_f64`, [`Rule::ApproxFloatRounding`].
fn float_rounding(m: &crate::mods::Mods, approx_ftz_f64: bool) -> Result<(), String> {
    let float = m.ty.is_some_and(Ty::is_float);
    if let Some(r) = m.rnd {
        if r.integral() {
            return Err(format!("`.{r}` rounds to an integer: use it with `cvt`"));
        }
        if !float {
            return Err(format!("`.{r}` only applies to float types"));
        }
    }
    match (m.ftz, m.ty) {
        (Some(_), _) if !float => Err("`.ftz` only applies to float types".into()),
        (Some(_), Some(Ty::F64)) if approx_ftz_f64 && m.prec == Some(Prec::Approx) => Ok(()),
        (Some(_), Some(Ty::F64)) if approx_ftz_f64 => Err(
            "`.ftz` applies to .f64 only in the `.approx.ftz.f64` form: drop `.ftz` (.f64 keeps subnormals)".into(),
        ),
        (Some(_), Some(Ty::F64)) => Err(
            "`.ftz` only applies to .f32: drop it (.f64 arithmetic keeps subnormals)".into(),
        ),
        _ => Ok(()),
    }
}

/// The precision rules of `div`, `sqrt` and `rcp`: `.full` only where `full`.
fn precision(m: &crate::mods::Mods, approx: Approx, full: bool) -> Result<(), String> {
    let float = m.ty.is_some_and(Ty::is_float);
    match (m.prec, m.ty) {
        (None, _) => Ok(()),
        (Some(_), _) if !float => Err("`.approx`/`.full` only apply to float types".into()),
        (Some(_), _) if m.rnd.is_some() => {
            Err("give either a rounding mode or `.approx`/`.full`, not both".into())
        }
        (Some(Prec::Full), _) if !full => {
            Err("`.full` only applies to `div.full.f32`: write `.approx` or a rounding mode".into())
        }
        (Some(Prec::Full), Some(Ty::F64)) => {
            Err("`.full` only applies to .f32: write `.rn` for the correctly rounded .f64 result".into())
        }
        (Some(Prec::Approx), Some(Ty::F64)) => match approx {
            Approx::F64WithFtz if m.ftz.is_some() => Ok(()),
            Approx::F64WithFtz => Err(
                "the .f64 approximation is `rcp.approx.ftz.f64` (it flushes subnormals): add `.ftz`, or write `.rn` for the correctly rounded result".into(),
            ),
            Approx::F32 => Err(
                "`.approx` only applies to .f32: write `.rn` for the correctly rounded .f64 result".into(),
            ),
        },
        (Some(_), _) => Ok(()),
    }
}
