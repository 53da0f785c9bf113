//! A slow model of IEEE 754 written apart from the implementation, for the tests:
//! operands decoded from their bit patterns into exact dyadic rationals (big
//! integers), each operation's special cases straight from the standard, its
//! exact result known only through comparisons with dyadic values, and rounding
//! as a binary search over the target format's bit patterns, which are ordered
//! like the magnitudes they encode.

use super::Round;
use num_bigint::{BigInt, BigUint, Sign};
use std::cmp::Ordering;

/// A binary format by its field widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub exponent_bits: u32,
    pub fraction_bits: u32,
}

pub const BINARY32: Format = Format {
    exponent_bits: 8,
    fraction_bits: 23,
};
pub const BINARY64: Format = Format {
    exponent_bits: 11,
    fraction_bits: 52,
};

impl Format {
    pub fn sign(self) -> u64 {
        1 << (self.exponent_bits + self.fraction_bits)
    }
    pub fn infinity(self, neg: bool) -> u64 {
        let inf = ((1 << self.exponent_bits) - 1) << self.fraction_bits;
        if neg { inf | self.sign() } else { inf }
    }
    fn zero(self, neg: bool) -> u64 {
        if neg { self.sign() } else { 0 }
    }
    fn bias(self) -> i64 {
        (1 << (self.exponent_bits - 1)) - 1
    }
    /// The magnitude a pattern without its sign encodes by the finite formula;
    /// infinity's pattern gives 2^(emax + 1), the next power of two past the
    /// largest finite value, which is where overflow begins.
    fn magnitude(self, bits: u64) -> Dyadic {
        let field = (bits >> self.fraction_bits) as i64;
        let fraction = bits & ((1 << self.fraction_bits) - 1);
        let (mag, exp) = if field == 0 {
            (fraction, 1 - self.bias())
        } else {
            (fraction | 1 << self.fraction_bits, field - self.bias())
        };
        Dyadic {
            neg: false,
            mag: BigUint::from(mag),
            exp: exp - i64::from(self.fraction_bits),
        }
    }
}

/// `±mag * 2^exp`, exactly; zero keeps its sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dyadic {
    pub neg: bool,
    pub mag: BigUint,
    pub exp: i64,
}

impl Dyadic {
    pub fn integer(n: i128) -> Dyadic {
        Dyadic {
            neg: n < 0,
            mag: BigUint::from(n.unsigned_abs()),
            exp: 0,
        }
    }
    fn is_zero(&self) -> bool {
        self.mag == BigUint::ZERO
    }
    fn signed(&self) -> BigInt {
        BigInt::from_biguint(
            if self.neg { Sign::Minus } else { Sign::Plus },
            self.mag.clone(),
        )
    }
    fn from_signed(n: BigInt, exp: i64) -> Dyadic {
        let (sign, mag) = n.into_parts();
        Dyadic {
            neg: sign == Sign::Minus,
            mag,
            exp,
        }
    }
    fn mul(&self, o: &Dyadic) -> Dyadic {
        Dyadic {
            neg: self.neg != o.neg,
            mag: &self.mag * &o.mag,
            exp: self.exp + o.exp,
        }
    }
    fn add(&self, o: &Dyadic) -> Dyadic {
        let exp = self.exp.min(o.exp);
        let a = self.signed() << (self.exp - exp);
        let b = o.signed() << (o.exp - exp);
        Dyadic::from_signed(a + b, exp)
    }
    /// Magnitudes compared.
    fn cmp_abs(&self, o: &Dyadic) -> Ordering {
        match (self.is_zero(), o.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let top = |v: &Dyadic| v.mag.bits() as i64 + v.exp;
        let by_top = top(self).cmp(&top(o));
        if by_top != Ordering::Equal {
            return by_top;
        }
        let exp = self.exp.min(o.exp);
        (&self.mag << (self.exp - exp)).cmp(&(&o.mag << (o.exp - exp)))
    }
}

/// A nonzero exact result, known through comparisons of its magnitude.
#[derive(Debug, Clone)]
pub enum Real {
    Exact(Dyadic),
    /// `n / d`.
    Quotient(Dyadic, Dyadic),
    /// The root of a positive value.
    Sqrt(Dyadic),
    /// One over the root of a positive value.
    RSqrt(Dyadic),
}

impl Real {
    fn is_negative(&self) -> bool {
        match self {
            Real::Exact(v) => v.neg,
            Real::Quotient(n, d) => n.neg != d.neg,
            Real::Sqrt(_) | Real::RSqrt(_) => false,
        }
    }
    /// `|x|` against `d >= 0`.
    fn cmp_abs(&self, d: &Dyadic) -> Ordering {
        match self {
            Real::Exact(v) => v.cmp_abs(d),
            Real::Quotient(n, q) => n.cmp_abs(&q.mul(d)),
            Real::Sqrt(v) => v.cmp_abs(&d.mul(d)),
            Real::RSqrt(v) if d.is_zero() => Ordering::Greater,
            // 1/sqrt(v) > d exactly when 1 > d^2 v.
            Real::RSqrt(v) => Dyadic::integer(1).cmp_abs(&d.mul(d).mul(v)),
        }
    }
}

/// Results in the four modes, in the order of [`Round::ALL`]; `None` is NaN.
pub type Four = [Option<u64>; 4];

fn all(bits: u64) -> Four {
    [Some(bits); 4]
}

const NAN: Four = [None; 4];

/// An exact zero from terms that cancel: +0 but toward minus infinity.
fn cancelled(f: Format) -> Four {
    Round::ALL.map(|r| Some(f.zero(r == Round::Down)))
}

/// `x` rounded to `f` in every mode.
pub fn round(f: Format, x: &Real) -> Four {
    let neg = x.is_negative();
    // The largest finite pattern whose magnitude is at most |x|.
    let (mut low, mut high) = (0u64, f.infinity(false));
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if x.cmp_abs(&f.magnitude(mid)).is_ge() {
            low = mid;
        } else {
            high = mid;
        }
    }
    let exact = x.cmp_abs(&f.magnitude(low)).is_eq();
    let mut midpoint = f.magnitude(low).add(&f.magnitude(low + 1));
    midpoint.exp -= 1;
    let vs_midpoint = x.cmp_abs(&midpoint);
    Round::ALL.map(|r| {
        let away = !exact
            && match r {
                Round::Nearest => match vs_midpoint {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    // Ties to the even pattern.
                    Ordering::Equal => low & 1 == 1,
                },
                Round::Zero => false,
                Round::Up => !neg,
                Round::Down => neg,
            };
        // low + 1 may be infinity's pattern: overflow.
        Some((low + u64::from(away)) | if neg { f.sign() } else { 0 })
    })
}

/// What a pattern of `f` means.
#[derive(Debug, Clone)]
pub enum Value {
    Nan,
    Infinity(bool),
    /// Zeros included.
    Number(Dyadic),
}

pub fn decode(f: Format, bits: u64) -> Value {
    let neg = bits & f.sign() != 0;
    let magnitude = bits & !f.sign();
    if magnitude > f.infinity(false) {
        Value::Nan
    } else if magnitude == f.infinity(false) {
        Value::Infinity(neg)
    } else {
        let mut v = f.magnitude(magnitude);
        v.neg = neg;
        Value::Number(v)
    }
}

pub fn add(f: Format, a: u64, b: u64) -> Four {
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) => NAN,
        (Value::Infinity(x), Value::Infinity(y)) if x != y => NAN,
        (Value::Infinity(x), _) | (_, Value::Infinity(x)) => all(f.infinity(x)),
        (Value::Number(x), Value::Number(y)) => {
            let s = x.add(&y);
            if !s.is_zero() {
                round(f, &Real::Exact(s))
            } else if x.is_zero() && y.is_zero() && x.neg == y.neg {
                all(f.zero(x.neg))
            } else {
                cancelled(f)
            }
        }
    }
}

pub fn sub(f: Format, a: u64, b: u64) -> Four {
    add(f, a, b ^ f.sign())
}

pub fn mul(f: Format, a: u64, b: u64) -> Four {
    let neg = (a ^ b) & f.sign() != 0;
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) => NAN,
        (Value::Infinity(_), Value::Number(z)) | (Value::Number(z), Value::Infinity(_))
            if z.is_zero() =>
        {
            NAN
        }
        (Value::Infinity(_), _) | (_, Value::Infinity(_)) => all(f.infinity(neg)),
        (Value::Number(x), Value::Number(y)) => {
            let p = x.mul(&y);
            if p.is_zero() {
                all(f.zero(neg))
            } else {
                round(f, &Real::Exact(p))
            }
        }
    }
}

pub fn fma(f: Format, a: u64, b: u64, c: u64) -> Four {
    let product_neg = (a ^ b) & f.sign() != 0;
    let (x, y, z) = (decode(f, a), decode(f, b), decode(f, c));
    let zero = |v: &Value| matches!(v, Value::Number(d) if d.is_zero());
    match (&x, &y, &z) {
        (Value::Nan, _, _) | (_, Value::Nan, _) | (_, _, Value::Nan) => NAN,
        (Value::Infinity(_), _, _) | (_, Value::Infinity(_), _) => {
            if zero(&x) || zero(&y) {
                NAN
            } else {
                match z {
                    Value::Infinity(s) if s != product_neg => NAN,
                    _ => all(f.infinity(product_neg)),
                }
            }
        }
        (_, _, Value::Infinity(s)) => all(f.infinity(*s)),
        (Value::Number(x), Value::Number(y), Value::Number(z)) => {
            let p = x.mul(y);
            let s = p.add(z);
            if !s.is_zero() {
                round(f, &Real::Exact(s))
            } else if p.is_zero() && z.is_zero() && product_neg == z.neg {
                all(f.zero(z.neg))
            } else {
                cancelled(f)
            }
        }
    }
}

pub fn div(f: Format, a: u64, b: u64) -> Four {
    let neg = (a ^ b) & f.sign() != 0;
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) | (Value::Infinity(_), Value::Infinity(_)) => NAN,
        (Value::Infinity(_), _) => all(f.infinity(neg)),
        (_, Value::Infinity(_)) => all(f.zero(neg)),
        (Value::Number(x), Value::Number(y)) => match (x.is_zero(), y.is_zero()) {
            (true, true) => NAN,
            (false, true) => all(f.infinity(neg)),
            (true, false) => all(f.zero(neg)),
            (false, false) => round(f, &Real::Quotient(x, y)),
        },
    }
}

pub fn one(f: Format) -> u64 {
    (f.bias() as u64) << f.fraction_bits
}

pub fn sqrt(f: Format, a: u64) -> Four {
    match decode(f, a) {
        Value::Nan | Value::Infinity(true) => NAN,
        Value::Infinity(false) => all(a),
        Value::Number(x) if x.is_zero() => all(a),
        Value::Number(x) if x.neg => NAN,
        Value::Number(x) => round(f, &Real::Sqrt(x)),
    }
}

/// Rounded to nearest only.
pub fn rsqrt(f: Format, a: u64) -> Option<u64> {
    match decode(f, a) {
        Value::Nan | Value::Infinity(true) => None,
        Value::Infinity(false) => Some(0),
        Value::Number(x) if x.is_zero() => Some(f.infinity(x.neg)),
        Value::Number(x) if x.neg => None,
        Value::Number(x) => round(f, &Real::RSqrt(x))[0],
    }
}

pub fn convert(from: Format, to: Format, a: u64) -> Four {
    match decode(from, a) {
        Value::Nan => NAN,
        Value::Infinity(neg) => all(to.infinity(neg)),
        Value::Number(x) if x.is_zero() => all(to.zero(x.neg)),
        Value::Number(x) => round(to, &Real::Exact(x)),
    }
}

pub fn from_int(f: Format, n: i128) -> Four {
    if n == 0 {
        all(0)
    } else {
        round(f, &Real::Exact(Dyadic::integer(n)))
    }
}

/// `x` rounded to an integer in every mode, on the signed value: floor for
/// `Down`, ceiling for `Up`.
fn integers(x: &Dyadic) -> [BigInt; 4] {
    let n = x.signed();
    if x.exp >= 0 {
        let v = n << x.exp;
        return [v.clone(), v.clone(), v.clone(), v];
    }
    let shift = x.exp.unsigned_abs();
    // BigInt's shift rounds toward minus infinity.
    let floor = &n >> shift;
    let rest = &n - (&floor << shift);
    let ceiling = if rest == BigInt::ZERO {
        floor.clone()
    } else {
        &floor + 1
    };
    let toward_zero = if x.neg {
        ceiling.clone()
    } else {
        floor.clone()
    };
    let nearest = match (rest << 1u32).cmp(&(BigInt::from(1) << shift)) {
        Ordering::Less => floor.clone(),
        Ordering::Greater => ceiling.clone(),
        Ordering::Equal if !floor.bit(0) => floor.clone(),
        Ordering::Equal => ceiling.clone(),
    };
    [nearest, toward_zero, floor, ceiling]
}

pub fn round_to_integral(f: Format, a: u64) -> Four {
    match decode(f, a) {
        Value::Nan => NAN,
        Value::Infinity(_) => all(a),
        Value::Number(x) if x.exp >= 0 => all(a),
        Value::Number(x) => {
            let ints = integers(&x);
            let mut out = NAN;
            for (slot, n) in out.iter_mut().zip(ints) {
                let v = Dyadic::from_signed(n, 0);
                *slot = Some(if v.is_zero() {
                    f.zero(x.neg)
                } else {
                    // Integers this small are exact in the format.
                    round(f, &Real::Exact(v))[0].expect("a number")
                });
            }
            out
        }
    }
}

/// PTX's float-to-integer `cvt` of a binary64 pattern in every mode: saturating,
/// and a NaN gives 0 from a binary32 source into fewer than 64 bits, else the
/// sign-bit pattern.
pub fn to_int(a: u64, bits: u32, signed: bool, f64_source: bool) -> [i128; 4] {
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    match decode(BINARY64, a) {
        Value::Nan if !f64_source && bits < 64 => [0; 4],
        Value::Nan if signed => [min; 4],
        Value::Nan => [1i128 << (bits - 1); 4],
        Value::Infinity(neg) => [if neg { min } else { max }; 4],
        Value::Number(x) => integers(&x).map(|n| {
            if n < BigInt::from(min) {
                min
            } else if n > BigInt::from(max) {
                max
            } else {
                i128::try_from(n).expect("in range")
            }
        }),
    }
}
