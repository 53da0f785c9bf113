//! Constraints between modifiers that a row's field list cannot express (PTX's
//! rules on rounding, saturation, comparisons, atomics and cache operators), checked
//! by the decoder and the assembler alike.

use crate::names::{AtomOp, CacheOp, Prec, Space, Ty};

/// A constraint between modifiers that the field list alone cannot express. The
/// decoder and the assembler both check them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Integer forms need `.lo`/`.hi`; float forms take none.
    HalfForIntOnly,
    /// Rounding (`rn rz rm rp`) and `.ftz` only on float types.
    FloatRounding,
    /// `.sat` only on `.s32` and `.f32`.
    SatS32OrF32,
    /// `.sat` only on `.f32`.
    SatF32,
    /// `.approx`/`.full` only on floats, never with a rounding mode; `.full` only on
    /// `.f32`.
    Precision,
    /// `cvt`: integral rounding (`rni`...) from floats to integers or floats of the same
    /// size, `rn rz rm rp` towards floats from integers or narrower floats; `.ftz` when a
    /// float is involved; `.sat` towards integers or floats.
    CvtRounding,
    /// `setp`: unordered comparisons, `num` and `nan` only on floats; `lo ls hi hs`
    /// only on unsigned and bit types.
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
    pub fn check(self, m: &crate::instr::Mods) -> Result<(), String> {
        let ty = m.ty;
        let float = ty.is_some_and(Ty::is_float);
        match self {
            Rule::HalfForIntOnly => match (ty, m.half) {
                (Some(t), None) if t.is_int() => Err(format!(
                    "integer forms need .lo or .hi (`.lo.{t}` keeps the low half)"
                )),
                (Some(t), Some(h)) if t.is_float() => Err(format!("`.{h}` does not apply to .{t}")),
                _ => Ok(()),
            },
            Rule::FloatRounding => {
                if let Some(r) = m.rnd {
                    if r.integral() {
                        return Err(format!("`.{r}` rounds to an integer: use it with `cvt`"));
                    }
                    if !float {
                        return Err(format!("`.{r}` only applies to float types"));
                    }
                }
                if m.ftz.is_some() && !float {
                    return Err("`.ftz` only applies to float types".into());
                }
                Ok(())
            }
            Rule::SatS32OrF32 => match (m.sat, ty) {
                (Some(_), Some(Ty::S32 | Ty::F32)) | (None, _) => Ok(()),
                _ => Err("`.sat` only applies to .s32 and .f32".into()),
            },
            Rule::SatF32 => match (m.sat, ty) {
                (Some(_), Some(Ty::F32)) | (None, _) => Ok(()),
                _ => Err("`.sat` only applies to .f32".into()),
            },
            Rule::Precision => match m.prec {
                None => Ok(()),
                Some(_) if !float => Err("`.approx`/`.full` only apply to float types".into()),
                Some(_) if m.rnd.is_some() => {
                    Err("give either a rounding mode or `.approx`/`.full`, not both".into())
                }
                Some(Prec::Full) if ty != Some(Ty::F32) => {
                    Err("`.full` only applies to .f32".into())
                }
                Some(_) => Ok(()),
            },
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
                (Some(c), Some(t)) if c.unsigned_only() && (t.is_float() || t.is_signed()) => Err(
                    format!("`.{c}` is an unsigned comparison: use a .u or .b type"),
                ),
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
