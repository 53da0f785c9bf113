//! Kernel parameters' place in parameter space and the values each parameter type
//! holds: the layout the assembler addresses and the loader fills, and the parsing
//! of a value written as text (`spu-emu -D NAME=VALUE`), with the range a value of
//! each type must lie in, shared by the assembler's defaults and the loader.

use crate::Ty;

/// Bytes a parameter of type `ty` occupies in parameter space: its own size, as
/// a C struct's field (a `short` field of a struct passed by value is 2 bytes).
pub fn param_size(ty: Ty) -> u32 {
    ty.bits() / 8
}

/// The parameter space layout: each parameter's byte offset, in declaration order,
/// and the total size in bytes. Parameters follow each other, each at the next
/// multiple of its size, as C lays out a struct (a 64-bit parameter is 8-byte
/// aligned, so a 32-bit one before it may leave a 4-byte gap; a 16-bit one takes 2
/// bytes); the total is rounded up to a multiple of 4. Values are little-endian (a
/// 64-bit value low word first).
pub fn param_layout(tys: impl IntoIterator<Item = Ty>) -> (Vec<u32>, u32) {
    let mut next = 0u32;
    let offsets = tys
        .into_iter()
        .map(|t| {
            let size = param_size(t);
            let at = next.next_multiple_of(size);
            next = at.saturating_add(size);
            at
        })
        .collect();
    (offsets, next.next_multiple_of(4))
}

/// The values an integer parameter type holds, `(lowest, highest)`; `None` for the
/// float types. Bit types (`.b32`, `.b64`) hold their unsigned range.
pub fn param_int_range(ty: Ty) -> Option<(i128, i128)> {
    if ty.is_float() {
        return None;
    }
    let bits = ty.bits();
    Some(if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

/// The value of a parameter of type `ty` with bit pattern `bits` as size and launch
/// expressions see it: `None` for a float, or for a `.u64`/`.b64` value above
/// `i64::MAX` (expressions compute in i64).
pub fn param_int(ty: Ty, bits: u64) -> Option<i64> {
    match ty {
        Ty::F32 | Ty::F64 => None,
        Ty::S64 => Some(bits as i64),
        Ty::U64 | Ty::B64 => i64::try_from(bits).ok(),
        // Sign-extended from the type's width (`.s16`, `.s32`).
        t if t.is_signed() => {
            let shift = 64 - t.bits();
            Some(((bits << shift) as i64) >> shift)
        }
        t => Some((bits & (u64::MAX >> (64 - t.bits()))) as i64),
    }
}

/// The bit pattern of an integer value of type `ty` (two's complement, the type's
/// width), or `None` when the value is out of the type's range.
fn int_bits(v: i128, ty: Ty) -> Option<u64> {
    let (lo, hi) = param_int_range(ty)?;
    (lo..=hi)
        .contains(&v)
        .then(|| (v as u128 & ((1u128 << ty.bits()) - 1)) as u64)
}

/// A decimal or `0x` hex integer, optionally signed, `_` separators allowed.
fn parse_int(text: &str) -> Option<i128> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.starts_with(['+', '-']) => i128::from_str_radix(hex, 16).ok()?,
        Some(_) => return None,
        None if digits.starts_with(['+', '-']) => return None,
        None => digits.parse::<i128>().ok()?,
    };
    Some(if negative { -v } else { v })
}

/// A float of type `ty` (`.f32` or `.f64`): a decimal number rounded to the
/// nearest value of the type, `inf`, `-inf`, `nan`, or an exact bit pattern
/// (`0f` + 8 hex digits for an f32, `0d` + 16 hex digits for an f64, as in
/// PTX; an `0f` pattern given to an `.f64` is widened exactly).
/// A decimal number (or `inf`, `nan`) as an f32: read as a double and rounded
/// to f32 from there, as PTX reads every floating-point constant (PTX ISA,
/// "Floating-point literals"), for parameters and the assembler alike.
pub fn decimal_f32(text: &str) -> Option<f32> {
    match text.parse::<f64>() {
        Ok(d) if !d.is_nan() => Some(d as f32),
        _ => text.parse().ok(),
    }
}

fn float_bits(text: &str, ty: Ty) -> Result<u64, String> {
    let pattern = |prefix: [&str; 2], digits: usize| {
        let hex = text
            .strip_prefix(prefix[0])
            .or_else(|| text.strip_prefix(prefix[1]))?;
        Some(if hex.len() == digits {
            u64::from_str_radix(hex, 16).ok()
        } else {
            None
        })
    };
    let f32_pattern = pattern(["0f", "0F"], 8);
    let f64_pattern = pattern(["0d", "0D"], 16);
    let bits = match (ty, f32_pattern, f64_pattern) {
        (_, Some(Some(b)), _) if ty == Ty::F32 => Some(b),
        (_, Some(Some(b)), _) => Some(f64::from(f32::from_bits(b as u32)).to_bits()),
        (Ty::F64, _, Some(Some(b))) => Some(b),
        (_, Some(None), _) | (Ty::F64, _, Some(None)) => None,
        (Ty::F32, _, Some(_)) => {
            return Err(
                "is an .f64 bit pattern (`0d`); an .f32 takes `0f` and 8 hex digits".into(),
            );
        }
        _ => None,
    };
    if let Some(b) = bits {
        return Ok(b);
    }
    let malformed = || {
        format!(
            "is not a valid .{ty} value (a number such as 1.5 or -2e-3, inf, -inf, nan, or the exact bit pattern {})",
            if ty == Ty::F32 {
                "0f3FC00000"
            } else {
                "0d3FF8000000000000"
            }
        )
    };
    if text.starts_with(['0', '+', '-']) && (f32_pattern.is_some() || f64_pattern.is_some()) {
        return Err(malformed());
    }
    let named = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    let literal_inf = named == "inf" || named == "infinity";
    let out_of_range = |max: String| {
        format!(
            "is out of range for .{ty} (largest finite magnitude {max}; write inf for infinity)"
        )
    };
    if ty == Ty::F32 {
        let v = decimal_f32(text).ok_or_else(malformed)?;
        if v.is_infinite() && !literal_inf {
            return Err(out_of_range(format!("{:e}", f32::MAX)));
        }
        Ok(u64::from(v.to_bits()))
    } else {
        let v: f64 = text.parse().map_err(|_| malformed())?;
        if v.is_infinite() && !literal_inf {
            return Err(out_of_range(format!("{:e}", f64::MAX)));
        }
        Ok(v.to_bits())
    }
}

/// Parses a value for a parameter of type `ty` as `-D NAME=VALUE` writes it: an
/// integer type takes a decimal or `0x` hex integer in its range (`_` separators
/// allowed); `.f32` and `.f64` take a decimal number (rounded to the nearest value
/// of the type), `inf`, `-inf`, `nan` or an exact bit pattern (`0f...`,
/// `0d...`). Returns the value's bit pattern (a 32-bit type's in the low 32
/// bits), or what is wrong, phrased to follow the quoted value: "is out of range
/// for .u64 (0 .. 18446744073709551615)".
pub fn parse_param_value(text: &str, ty: Ty) -> Result<u64, String> {
    let t = text.replace('_', "");
    let Some((lo, hi)) = param_int_range(ty) else {
        return float_bits(&t, ty);
    };
    match parse_int(&t) {
        Some(v) => int_bits(v, ty).ok_or_else(|| {
            let mut why = format!("is out of range for .{ty} ({lo} .. {hi})");
            if v < 0 && !ty.is_signed() {
                let signed = Ty::int(ty.bits(), true);
                // The two's complement, for a parameter whose declaration the
                // user does not write (clang's or nvcc's `.u32` for an `int`).
                let wrapped = (v as u64) & (u64::MAX >> (64 - ty.bits()));
                if int_bits(v, signed).is_some() {
                    why.push_str(&format!(
                        "; declare the parameter .{signed} for negative values, or give the same bits as .{ty}: {wrapped}"
                    ));
                } else {
                    why.push_str(&format!(
                        "; declare the parameter .{signed} for negative values"
                    ));
                }
            }
            why
        }),
        None => Err(format!(
            "is not a valid .{ty} value (an integer {lo} .. {hi}, decimal or 0x hex)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A negative value for an unsigned parameter names both fixes, the second
    /// one for a declaration the user does not write (clang's `.u32` for an
    /// `int`).
    #[test]
    fn a_negative_unsigned_value_says_which_bits_to_give() {
        let why = parse_param_value("-5", Ty::U32).unwrap_err();
        assert!(
            why.ends_with("declare the parameter .s32 for negative values, or give the same bits as .u32: 4294967291"),
            "{why}"
        );
        let why = parse_param_value("-300", Ty::U8).unwrap_err();
        assert!(
            why.ends_with("declare the parameter .s8 for negative values"),
            "{why}"
        );
    }

    /// An .f32 value is read as a double and rounded from there, as the
    /// assembler reads constants.
    #[test]
    fn f32_values_round_through_a_double() {
        let f32_max = u64::from(f32::MAX.to_bits());
        assert_eq!(parse_param_value("3.4028235e38", Ty::F32), Ok(f32_max));
        assert!(parse_param_value("3.4028235677973366e38", Ty::F32).is_err());
        assert_eq!(
            parse_param_value("0.1", Ty::F32),
            Ok(u64::from(0.1f32.to_bits()))
        );
        assert_eq!(
            parse_param_value("nan", Ty::F32),
            Ok(u64::from(f32::NAN.to_bits()))
        );
    }

    #[test]
    fn layout_aligns_64_bit_parameters() {
        let (at, size) = param_layout([Ty::U32, Ty::F64, Ty::S32, Ty::U64, Ty::F32]);
        assert_eq!(at, vec![0, 8, 16, 24, 32]);
        assert_eq!(size, 36);
        assert_eq!(param_layout([Ty::U32, Ty::S32]), (vec![0, 4], 8));
        assert_eq!(param_layout([]), (vec![], 0));
    }

    #[test]
    fn expressions_read_64_bit_integers_while_they_fit() {
        assert_eq!(param_int(Ty::S64, u64::MAX), Some(-1));
        assert_eq!(param_int(Ty::U64, 1 << 40), Some(1 << 40));
        assert_eq!(param_int(Ty::U64, u64::MAX), None);
        assert_eq!(param_int(Ty::S32, 0xffff_ffff), Some(-1));
        assert_eq!(param_int(Ty::U32, 0xffff_ffff), Some(0xffff_ffff));
        assert_eq!(param_int(Ty::F64, 0), None);
    }

    #[test]
    fn integers_parse_to_the_edges_of_their_type() {
        let p = parse_param_value;
        assert_eq!(p("18446744073709551615", Ty::U64), Ok(u64::MAX));
        assert_eq!(p("0xffff_ffff_ffff_ffff", Ty::B64), Ok(u64::MAX));
        assert_eq!(p("-9223372036854775808", Ty::S64), Ok(1 << 63));
        assert_eq!(p("-1", Ty::S64), Ok(u64::MAX));
        assert_eq!(p("-1", Ty::S32), Ok(0xffff_ffff));
        assert_eq!(p("4294967295", Ty::U32), Ok(0xffff_ffff));
        assert_eq!(p("-0x10", Ty::S32), Ok(0xffff_fff0));
        assert_eq!(
            p("18446744073709551616", Ty::U64),
            Err("is out of range for .u64 (0 .. 18446744073709551615)".into())
        );
        assert_eq!(
            p("-9223372036854775809", Ty::S64),
            Err("is out of range for .s64 (-9223372036854775808 .. 9223372036854775807)".into())
        );
        assert!(
            p("-1", Ty::U64)
                .unwrap_err()
                .contains("declare the parameter .s64")
        );
        assert!(
            p("4294967296", Ty::U32)
                .unwrap_err()
                .contains("(0 .. 4294967295)")
        );
        for bad in ["", "abc", "1.5", "--1", "0x", "0x-1", "1e3"] {
            assert!(
                p(bad, Ty::U64).unwrap_err().contains("not a valid .u64"),
                "{bad}"
            );
        }
    }

    #[test]
    fn floats_round_to_nearest_and_keep_patterns() {
        let p = parse_param_value;
        assert_eq!(p("0.1", Ty::F64), Ok(0.1f64.to_bits()));
        assert_eq!(p("0.1", Ty::F32), Ok(u64::from(0.1f32.to_bits())));
        // 2^-1074, the smallest subnormal, and the largest finite value.
        assert_eq!(p("5e-324", Ty::F64), Ok(1));
        assert_eq!(p("1.7976931348623157e308", Ty::F64), Ok(f64::MAX.to_bits()));
        assert_eq!(p("-inf", Ty::F64), Ok(f64::NEG_INFINITY.to_bits()));
        assert_eq!(p("inf", Ty::F32), Ok(u64::from(f32::INFINITY.to_bits())));
        assert!(f64::from_bits(p("nan", Ty::F64).unwrap()).is_nan());
        assert_eq!(p("0d7FF8000000000001", Ty::F64), Ok(0x7ff8_0000_0000_0001));
        assert_eq!(p("0f3F800000", Ty::F64), Ok(1.0f64.to_bits()));
        assert_eq!(p("0f3F800000", Ty::F32), Ok(0x3f80_0000));
        assert!(
            p("1e400", Ty::F64)
                .unwrap_err()
                .contains("out of range for .f64")
        );
        assert!(
            p("1e39", Ty::F32)
                .unwrap_err()
                .contains("out of range for .f32")
        );
        assert!(
            p("0d3FF0", Ty::F64)
                .unwrap_err()
                .contains("not a valid .f64")
        );
        assert!(
            p("0d3FF0000000000000", Ty::F32)
                .unwrap_err()
                .contains("`0f`")
        );
        assert!(p("x", Ty::F64).unwrap_err().contains("0d3FF8000000000000"));
    }
}
