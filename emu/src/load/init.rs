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

/// The bit pattern of `v` as an element of type `ty` (integers wrap).
fn to_bits(v: f64, ty: Ty) -> u32 {
    match ty {
        Ty::F32 => (v as f32).to_bits(),
        _ => v as i64 as u32,
    }
}

/// Fills a buffer from its initialiser.
pub fn fill(words: &mut [u32], ty: Ty, init: Init) {
    match init {
        Init::Zeros => words.fill(0),
        Init::Const(v) => words.fill(to_bits(v, ty)),
        Init::Ramp { start, step } => {
            for (i, w) in words.iter_mut().enumerate() {
                *w = to_bits(start + i as f64 * step, ty);
            }
        }
        Init::Random { seed, lo, hi } => {
            let mut rng = SplitMix64::new(seed);
            for w in words.iter_mut() {
                let u = rng.next_unit();
                *w = match ty {
                    Ty::F32 => ((lo + u * (hi - lo)) as f32).to_bits(),
                    _ => to_bits(lo + (u * (hi - lo + 1.0)).floor(), ty),
                };
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
            Init::Ramp {
                start: 6.0,
                step: 1.0,
            },
        );
        assert_eq!(w, [6, 7, 8, 9]);
        fill(&mut w, Ty::F32, Init::Const(-2.0));
        assert_eq!(w, [(-2.0f32).to_bits(); 4]);
        fill(
            &mut w,
            Ty::S32,
            Init::Random {
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
            Init::Random {
                seed: 3,
                lo: -2.0,
                hi: 2.0,
            },
        );
        assert_eq!(w, again);
    }
}
