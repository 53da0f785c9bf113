//! The SFU functions `ex2 lg2 sin cos` (`.approx.f32`) for the reference. ISA.md
//! promises the function of the operand evaluated in double precision and rounded
//! once to `.f32`, within PTX's bounds: so a result must be one of the two `.f32`
//! values around the exact one (faithful rounding), flushed under `.ftz`, with the
//! exact special cases (NaN, infinities, signed zeros). The exact values come from
//! series written here (argument reduction, Taylor and `atanh` series), accurate to
//! about 2^-50, not from the host's `libm`; every check widens the interval by
//! that error.

use super::float::{F32, Format};

/// An SFU function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fun {
    Ex2,
    Lg2,
    Sin,
    Cos,
}

impl Fun {
    pub const ALL: [Fun; 4] = [Fun::Ex2, Fun::Lg2, Fun::Sin, Fun::Cos];

    pub fn name(self) -> &'static str {
        match self {
            Fun::Ex2 => "ex2",
            Fun::Lg2 => "lg2",
            Fun::Sin => "sin",
            Fun::Cos => "cos",
        }
    }
}

/// What a result must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Want {
    /// This pattern exactly (special cases).
    Exact(u32),
    /// A value in `[lo, hi]` (as reals), a zero only with the sign of `neg_zero`;
    /// `best` is the nearest `.f32` to the exact value, what a mismatch shows.
    Within {
        lo: f64,
        hi: f64,
        neg: bool,
        best: u32,
    },
    /// Outside the range where the value is known here (sin, cos beyond 2^18):
    /// any value of magnitude at most 1.
    UnitInterval,
}

const CANONICAL_NAN: u32 = 0x7fff_ffff;
const LN2: f64 = std::f64::consts::LN_2;

/// `2^n` for an integer `n` in the double range, by its pattern.
fn pow2(n: i64) -> f64 {
    assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// e^t by Taylor series, |t| < 0.5.
fn exp_small(t: f64) -> f64 {
    let (mut sum, mut term) = (1.0, 1.0);
    for k in 1..30 {
        term *= t / f64::from(k);
        sum += term;
    }
    sum
}

/// 2^x for a finite x of moderate size.
fn exp2(x: f64) -> f64 {
    let x = x.clamp(-200.0, 200.0);
    let n = x.round();
    exp_small((x - n) * LN2) * pow2(n as i64)
}

/// log2 x for a finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m =
/// 2 atanh((m - 1) / (m + 1)).
fn log2(x: f64) -> f64 {
    let bits = x.to_bits();
    let (mut e, mut m) = if bits >> 52 == 0 {
        // Subnormal (as a double: only from an .f32 subnormal times nothing; kept
        // general): scale into the normal range first.
        let y = x * pow2(64);
        (((y.to_bits() >> 52) as i64) - 1023 - 64, y)
    } else {
        (((bits >> 52) as i64) - 1023, x)
    };
    m = f64::from_bits((m.to_bits() & ((1 << 52) - 1)) | (1023 << 52));
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let (mut sum, mut power) = (0.0, s);
    for k in 0..20 {
        sum += power / f64::from(2 * k + 1);
        power *= s2;
    }
    e as f64 + 2.0 * sum / LN2
}

/// sin r and cos r by Taylor series, |r| <= pi/4 (plus rounding).
fn sin_cos_small(r: f64) -> (f64, f64) {
    let r2 = r * r;
    let (mut s, mut ts) = (r, r);
    let (mut c, mut tc) = (1.0, 1.0);
    for k in 1..16 {
        let k = f64::from(k);
        ts *= -r2 / ((2.0 * k) * (2.0 * k + 1.0));
        s += ts;
        tc *= -r2 / ((2.0 * k - 1.0) * (2.0 * k));
        c += tc;
    }
    (s, c)
}

/// pi/2 in three 33-bit parts and a tail (Cody and Waite's reduction, fdlibm's
/// constants), so `k * PIO2_1` is exact for k < 2^20.
const PIO2_1: f64 = 1.570_796_326_734_125_6e0;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;
const PIO2_3T: f64 = 8.478_427_660_368_9e-32;

/// sin or cos of x with |x| <= 2^18, and a bound of the absolute error the
/// reduction adds.
fn sin_cos(x: f64, cos: bool) -> (f64, f64) {
    if x.abs() <= std::f64::consts::FRAC_PI_4 {
        let (s, c) = sin_cos_small(x);
        return (if cos { c } else { s }, 0.0);
    }
    let k = (x / std::f64::consts::FRAC_PI_2).round();
    let r = (((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3) - k * PIO2_3T;
    let (s, c) = sin_cos_small(r);
    let q = (k as i64).rem_euclid(4);
    let v = match (q, cos) {
        (0, false) | (3, true) => s,
        (1, false) | (0, true) => c,
        (2, false) | (1, true) => -s,
        _ => -c,
    };
    (v, 2f64.powi(-66))
}

/// The `.f32` values next below and above a double `y` (equal if exact).
fn neighbours(y: f64) -> (f32, f32) {
    let r = y as f32;
    let rf = f64::from(r);
    if rf == y || y.is_infinite() {
        (r, r)
    } else if rf < y {
        (r, next_up(r))
    } else {
        (next_down(r), r)
    }
}

fn next_up(x: f32) -> f32 {
    if x.is_infinite() && x > 0.0 {
        return x;
    }
    let b = x.to_bits();
    if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

fn flush32(x: f32, ftz: bool) -> f32 {
    if ftz && x.is_subnormal() {
        if x < 0.0 { -0.0 } else { 0.0 }
    } else {
        x
    }
}

/// What `fun` (`.ftz` when `ftz`) must give for the operand pattern `a`.
pub fn want(fun: Fun, a: u32, ftz: bool) -> Want {
    let f: Format = F32;
    let x = flush32(f32::from_bits(a), ftz);
    if x.is_nan() {
        return Want::Exact(CANONICAL_NAN);
    }
    let inf = |neg: bool| Want::Exact(f.infinity(neg) as u32);
    let x64 = f64::from(x);
    // 2^n and log2 2^n are exact: no error to allow for.
    let exact = match fun {
        Fun::Ex2 => x64.fract() == 0.0,
        Fun::Lg2 => x64 > 0.0 && x64.to_bits() & ((1 << 52) - 1) == 0,
        _ => false,
    };
    let (y, abs_err) = match fun {
        Fun::Ex2 if x.is_infinite() => {
            return if x > 0.0 { inf(false) } else { Want::Exact(0) };
        }
        Fun::Ex2 => (exp2(x64), 0.0),
        Fun::Lg2 if x == 0.0 => return inf(true),
        Fun::Lg2 if x < 0.0 => return Want::Exact(CANONICAL_NAN),
        Fun::Lg2 if x.is_infinite() => return inf(false),
        Fun::Lg2 => (log2(x64), 0.0),
        Fun::Sin | Fun::Cos if x.is_infinite() => return Want::Exact(CANONICAL_NAN),
        Fun::Sin if x == 0.0 => return Want::Exact(x.to_bits()),
        Fun::Cos if x == 0.0 => return Want::Exact(1f32.to_bits()),
        Fun::Sin | Fun::Cos if x64.abs() > 262_144.0 => return Want::UnitInterval,
        Fun::Sin | Fun::Cos => sin_cos(x64, fun == Fun::Cos),
    };
    let err = if exact {
        0.0
    } else {
        y.abs() * 2f64.powi(-45) + abs_err
    };
    let (lo, _) = neighbours(y - err);
    let (_, hi) = neighbours(y + err);
    let (lo, hi) = (flush32(lo, ftz), flush32(hi, ftz));
    Want::Within {
        lo: f64::from(lo),
        hi: f64::from(hi),
        neg: y < 0.0,
        best: flush32(y as f32, ftz).to_bits(),
    }
}

/// Whether result `g` meets `w` (under `.ftz`, no subnormal result).
pub fn accepts(w: Want, g: u32, ftz: bool) -> bool {
    let v = f32::from_bits(g);
    if ftz && v.is_subnormal() {
        return false;
    }
    match w {
        Want::Exact(p) => g == p,
        Want::UnitInterval => v.abs() <= 1.0,
        Want::Within { lo, hi, neg, .. } => {
            let x = f64::from(v);
            !v.is_nan() && lo <= x && x <= hi && (x != 0.0 || v.is_sign_negative() == neg)
        }
    }
}

/// The pattern a mismatch report shows as wanted.
pub fn best(w: Want) -> u32 {
    match w {
        Want::Exact(p) => p,
        Want::Within { best, .. } => best,
        Want::UnitInterval => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_agree_with_known_values() {
        assert_eq!(exp2(10.0), 1024.0);
        assert!((exp2(0.5) - std::f64::consts::SQRT_2).abs() < 1e-15);
        assert_eq!(log2(8.0), 3.0);
        assert!((log2(10.0) - std::f64::consts::LOG2_10).abs() < 1e-14);
        let (s, _) = sin_cos(std::f64::consts::FRAC_PI_6, false);
        assert!((s - 0.5).abs() < 1e-15);
        // sin(100) = -0.50636564110975879...
        let (s, _) = sin_cos(100.0, false);
        assert!((s + 0.506_365_641_109_758_8).abs() < 1e-15);
        // cos(1000) = 0.56237907629070290...
        let (c, _) = sin_cos(1000.0, true);
        assert!((c - 0.562_379_076_290_702_9).abs() < 1e-14);
    }

    #[test]
    fn special_cases_and_bounds() {
        let w = want(Fun::Ex2, 3f32.to_bits(), false);
        assert!(accepts(w, 8f32.to_bits(), false));
        assert!(!accepts(w, next_up(8.0).to_bits(), false));
        assert!(accepts(
            want(Fun::Lg2, 0x8000_0000, false),
            0xff80_0000,
            false
        ));
        assert!(accepts(
            want(Fun::Sin, 0x8000_0000, false),
            0x8000_0000,
            false
        ));
        assert!(!accepts(want(Fun::Sin, 0x8000_0000, false), 0, false));
        // ex2 of -130 is subnormal: flushed under .ftz.
        let w = want(Fun::Ex2, (-130f32).to_bits(), true);
        assert!(accepts(w, 0, true));
        assert!(!accepts(w, 2f32.powi(-130).to_bits(), true));
    }
}
