//! Buffer initialisers (`zeros`, `const`, `ramp`, `random`) and the seeded
//! generator behind `random`, so every run starts from the same bytes.

use spu_isa::Ty;
use spu_isa::format::Init;

/// SplitMix64: the generator behind `random(seed, lo, hi)`.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Checks that every value an initialiser gives a buffer of `elements` elements is a
/// value of the type ([`Ty::value_range`]): an integer in range for integer types, a
/// finite float within the float type's range otherwise. (The assembler checks the
/// literals; this also covers a ramp's last value, which depends on the size, and
/// hand-made binaries.)
pub fn check(init: &Init, ty: Ty, elements: u64) -> Result<(), String> {
    if let Init::Values(values) = init {
        return check_values(values, ty, elements);
    }
    let init = init.clone();
    if let Some((start, step)) = integer_ramp(&init, ty) {
        let last = i128::from(elements.saturating_sub(1));
        return check_exact(
            [
                ("the ramp's first value", start),
                ("the ramp's last value", start + last * step),
            ],
            ty,
        );
    }
    let last = elements.saturating_sub(1) as f64;
    let values: Vec<(&str, f64)> = match init {
        Init::Zeros => vec![],
        Init::ConstBits(bits) => {
            return match ty.bits() == 64 || bits >> ty.bits() == 0 {
                true => Ok(()),
                false => Err(format!(
                    "the const bit pattern {bits:#x} is not a .{ty} value (a bit pattern lies within the element's width)"
                )),
            };
        }
        Init::Const(v) => vec![("const", v)],
        Init::Ramp { start, step } => vec![
            ("the ramp's first value", start),
            ("the ramp's last value", start + last * step),
        ],
        Init::Random { lo, hi, .. } if lo > hi => {
            return Err(format!("random(seed, lo, hi) has lo {lo} above hi {hi}"));
        }
        Init::Random { lo, hi, .. } => vec![("random's lo", lo), ("random's hi", hi)],
        Init::Values(_) => vec![],
    };
    let (lo, hi) = ty.value_range();
    let show = |v: f64| match ty {
        // f32's bounds shown as the f32s they are (3.4028235e38).
        Ty::F32 => format!("{:e}", v as f32),
        Ty::F64 => format!("{v:e}"),
        _ if v.fract() == 0.0 && v.abs() < 1.9e19 => format!("{}", v as i128),
        _ => format!("{v}"),
    };
    for (what, v) in values {
        if !ty.holds(v) {
            return Err(format!(
                "{what} is {}, outside .{ty} ({}..={})",
                show(v),
                show(lo),
                show(hi)
            ));
        }
        if !ty.is_float() && v.fract() != 0.0 {
            return Err(format!("{what} is {v}, but a .{ty} buffer holds integers"));
        }
    }
    Ok(())
}

/// A ramp over an integer buffer as integers `(start, step)`: its elements are
/// computed in integers, exact for every 64-bit value (doubles are exact only up
/// to 2^53); `None` for any other initialiser.
fn integer_ramp(init: &Init, ty: Ty) -> Option<(i128, i128)> {
    let Init::Ramp { start, step } = *init else {
        return None;
    };
    let integral = |v: f64| v.is_finite() && v.fract() == 0.0 && v.abs() < 1e30;
    (ty.is_int() && integral(start) && integral(step)).then_some((start as i128, step as i128))
}

/// A list fits the buffer and each bit pattern its element's width (the assembler
/// checks the values as written; this covers hand-made binaries).
fn check_values(values: &[u64], ty: Ty, elements: u64) -> Result<(), String> {
    if values.len() as u64 > elements {
        return Err(format!(
            "the list has {} values but the buffer {elements} elements",
            values.len()
        ));
    }
    match values
        .iter()
        .position(|v| ty.bits() < 64 && v >> ty.bits() != 0)
    {
        Some(i) => Err(format!(
            "value {i} of the list, bit pattern {:#x}, is wider than .{ty}",
            values[i]
        )),
        None => Ok(()),
    }
}

fn check_exact(values: [(&str, i128); 2], ty: Ty) -> Result<(), String> {
    let (lo, hi) = spu_isa::format::param_int_range(ty).unwrap_or((0, 0));
    for (what, v) in values {
        if v < lo || v > hi {
            return Err(format!("{what} is {v}, outside .{ty} ({lo}..={hi})"));
        }
    }
    Ok(())
}

/// Element `i` of type `ty` in a buffer's words (little-endian, packed).
pub fn element(words: &[u32], ty: Ty, i: usize) -> u64 {
    match ty.bytes() {
        8 => u64::from(words[2 * i]) | u64::from(words[2 * i + 1]) << 32,
        4 => u64::from(words[i]),
        n => {
            let byte = i * n as usize;
            let mask = (1u64 << ty.bits()) - 1;
            (u64::from(words[byte / 4]) >> (8 * (byte % 4))) & mask
        }
    }
}

/// Sets element `i` of type `ty` in a buffer's words to the low bits of `bits`.
pub fn set_element(words: &mut [u32], ty: Ty, i: usize, bits: u64) {
    match ty.bytes() {
        8 => {
            words[2 * i] = bits as u32;
            words[2 * i + 1] = (bits >> 32) as u32;
        }
        4 => words[i] = bits as u32,
        n => {
            let byte = i * n as usize;
            let shift = 8 * (byte % 4);
            let mask = ((1u32 << ty.bits()) - 1) << shift;
            let w = &mut words[byte / 4];
            *w = (*w & !mask) | ((bits as u32) << shift & mask);
        }
    }
}

/// Sets every word to 0, writing only those that are not: fresh memory's pages,
/// all zero, stay untouched (the system backs them only once written).
fn zero(words: &mut [u32]) {
    words.iter_mut().filter(|w| **w != 0).for_each(|w| *w = 0);
}

/// Fills the `elements` elements of a buffer from its initialiser.
pub fn fill(words: &mut [u32], ty: Ty, elements: usize, init: &Init) {
    match *init {
        Init::Zeros => zero(words),
        Init::Const(v) => {
            let bits = ty.bits_of(v);
            for i in 0..elements {
                set_element(words, ty, i, bits);
            }
        }
        Init::ConstBits(bits) => {
            for i in 0..elements {
                set_element(words, ty, i, bits);
            }
        }
        Init::Ramp { start, step } => match integer_ramp(init, ty) {
            Some((start, step)) => {
                for i in 0..elements {
                    set_element(words, ty, i, (start + i as i128 * step) as u64);
                }
            }
            None => {
                for i in 0..elements {
                    set_element(words, ty, i, ty.bits_of(start + i as f64 * step));
                }
            }
        },
        Init::Random { seed, lo, hi } => {
            let mut rng = SplitMix64::new(seed);
            for i in 0..elements {
                let u = rng.next_unit();
                let bits = match ty {
                    // Rounded to f32 from the f64 draw (as always for .f32). A
                    // range wider than the largest double (-1e308 to 1e308)
                    // is drawn as a blend of its ends, which cannot overflow.
                    Ty::F32 | Ty::F64 if (hi - lo).is_finite() => ty.bits_of(lo + u * (hi - lo)),
                    Ty::F32 | Ty::F64 => ty.bits_of(lo * (1.0 - u) + hi * u),
                    _ => ty.bits_of((lo + (u * (hi - lo + 1.0)).floor()).min(hi)),
                };
                set_element(words, ty, i, bits);
            }
        }
        Init::Values(ref values) => {
            zero(words);
            for (i, bits) in values.iter().take(elements).enumerate() {
                set_element(words, ty, i, *bits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialisers_fill_as_documented() {
        let mut w = [0u32; 4];
        fill(
            &mut w,
            Ty::U32,
            4,
            &Init::Ramp {
                start: 6.0,
                step: 1.0,
            },
        );
        assert_eq!(w, [6, 7, 8, 9]);
        fill(&mut w, Ty::F32, 4, &Init::Const(-2.0));
        assert_eq!(w, [(-2.0f32).to_bits(); 4]);
        fill(
            &mut w,
            Ty::S32,
            4,
            &Init::Random {
                seed: 3,
                lo: -2.0,
                hi: 2.0,
            },
        );
        assert!(w.iter().all(|&v| (-2..=2).contains(&(v as i32))));
        let mut again = [0u32; 4];
        fill(
            &mut again,
            Ty::S32,
            4,
            &Init::Random {
                seed: 3,
                lo: -2.0,
                hi: 2.0,
            },
        );
        assert_eq!(w, again);
        // A list fills its elements in order and zeros the rest.
        let mut bytes = [0xffff_ffffu32; 2];
        fill(&mut bytes, Ty::U8, 6, &Init::Values(vec![1, 2, 3, 0xfe]));
        assert_eq!(bytes, [0xfe03_0201, 0]);
        assert!(check(&Init::Values(vec![1, 2, 3]), Ty::U8, 2).is_err());
        assert!(check(&Init::Values(vec![256]), Ty::U8, 2).is_err());
        assert!(check(&Init::Values(vec![255, 0]), Ty::U8, 2).is_ok());
        // A range wider than the largest double stays finite and within it.
        let mut wide = [0u32; 64];
        let (lo, hi) = (-f64::MAX, f64::MAX);
        fill(&mut wide, Ty::F64, 32, &Init::Random { seed: 1, lo, hi });
        let values: Vec<f64> = wide
            .chunks(2)
            .map(|w| f64::from_bits(u64::from(w[0]) | u64::from(w[1]) << 32))
            .collect();
        assert!(
            values
                .iter()
                .all(|v| v.is_finite() && (lo..=hi).contains(v)),
            "{values:?}"
        );
        assert!(values.iter().any(|v| *v < -1e300) && values.iter().any(|v| *v > 1e300));
    }

    #[test]
    fn values_outside_the_type_are_refused() {
        let ramp = |start, step| Init::Ramp { start, step };
        assert!(check(&ramp(4_294_967_000.0, 1.0), Ty::U32, 295).is_ok());
        let err = check(&ramp(4_294_967_000.0, 1.0), Ty::U32, 297).unwrap_err();
        assert_eq!(
            err,
            "the ramp's last value is 4294967296, outside .u32 (0..=4294967295)"
        );
        assert!(
            check(&ramp(10.0, -1.0), Ty::U32, 12).is_err(),
            "goes below 0"
        );
        assert!(check(&Init::Const(1.5), Ty::S32, 1).is_err());
        assert!(check(&Init::Const(1e39), Ty::F32, 1).is_err());
        assert!(check(&Init::Const(f64::NAN), Ty::F32, 1).is_err());
        let random = |lo, hi| Init::Random { seed: 1, lo, hi };
        assert!(check(&random(2.0, 1.0), Ty::F32, 1).is_err());
        assert!(check(&random(-5.0, 5.0), Ty::S32, 1).is_ok());
    }
}
