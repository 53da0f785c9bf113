//! Exact IEEE 754 binary32 and binary64 for the reference, written from the
//! standard and the PTX manual, apart from the emulator's code: a finite operand
//! is a big-integer significand times a power of two; a result is known as an
//! integer significand with a sticky bit for anything below it (quotients and
//! roots are cut, not computed to the end), and is rounded once by cutting it at
//! the format's last place, gradual underflow and overflow included.

use num_bigint::BigUint;
use std::cmp::Ordering;

/// A rounding direction: `.rn`, `.rz`, `.rm`, `.rp` (and `.rni` ... to integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Nearest,
    Zero,
    Down,
    Up,
}

/// A binary interchange format by its field widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub exponent_bits: u32,
    pub fraction_bits: u32,
}

pub const F32: Format = Format {
    exponent_bits: 8,
    fraction_bits: 23,
};
pub const F64: Format = Format {
    exponent_bits: 11,
    fraction_bits: 52,
};

impl Format {
    pub fn sign(self) -> u64 {
        1 << (self.exponent_bits + self.fraction_bits)
    }
    fn precision(self) -> i64 {
        i64::from(self.fraction_bits) + 1
    }
    fn bias(self) -> i64 {
        (1 << (self.exponent_bits - 1)) - 1
    }
    /// The exponent of the last bit of a subnormal (-149, -1074).
    fn min_lsb(self) -> i64 {
        1 - self.bias() - i64::from(self.fraction_bits)
    }
    fn exponent_field(self, bits: u64) -> u64 {
        (bits >> self.fraction_bits) & ((1 << self.exponent_bits) - 1)
    }
    pub fn infinity(self, neg: bool) -> u64 {
        let inf = ((1u64 << self.exponent_bits) - 1) << self.fraction_bits;
        inf | if neg { self.sign() } else { 0 }
    }
    pub fn zero(self, neg: bool) -> u64 {
        if neg { self.sign() } else { 0 }
    }
    /// The largest finite magnitude, of sign `neg`.
    pub fn max_finite(self, neg: bool) -> u64 {
        self.infinity(neg) - 1
    }
    /// ISA notes: every NaN an arithmetic instruction produces is this pattern.
    pub fn canonical_nan(self) -> u64 {
        self.sign() - 1
    }
    pub fn one(self) -> u64 {
        (self.bias() as u64) << self.fraction_bits
    }
    pub fn is_nan(self, bits: u64) -> bool {
        bits & (self.sign() - 1) > self.infinity(false)
    }
    pub fn is_subnormal(self, bits: u64) -> bool {
        self.exponent_field(bits) == 0 && bits & ((1 << self.fraction_bits) - 1) != 0
    }
    pub fn is_neg(self, bits: u64) -> bool {
        bits & self.sign() != 0
    }
    /// A subnormal flushed to the zero of its sign (`.ftz`).
    pub fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            self.zero(self.is_neg(bits))
        } else {
            bits
        }
    }
}

/// A nonzero finite value, exactly: `(-1)^neg * sig * 2^exp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exact {
    pub neg: bool,
    pub sig: BigUint,
    pub exp: i64,
}

impl Exact {
    pub fn integer(n: i128) -> Option<Exact> {
        (n != 0).then(|| Exact {
            neg: n < 0,
            sig: BigUint::from(n.unsigned_abs()),
            exp: 0,
        })
    }
    fn aligned(&self, exp: i64) -> BigUint {
        &self.sig << (self.exp - exp) as u64
    }
    fn bits(&self) -> i64 {
        self.sig.bits() as i64
    }
}

/// What a bit pattern encodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Nan,
    Infinity(bool),
    Zero(bool),
    Finite(Exact),
}

pub fn decode(f: Format, bits: u64) -> Value {
    let neg = f.is_neg(bits);
    let field = f.exponent_field(bits) as i64;
    let fraction = bits & ((1 << f.fraction_bits) - 1);
    if field == (1 << f.exponent_bits) - 1 {
        return if fraction == 0 {
            Value::Infinity(neg)
        } else {
            Value::Nan
        };
    }
    if field == 0 && fraction == 0 {
        return Value::Zero(neg);
    }
    let (sig, exp) = if field == 0 {
        (fraction, f.min_lsb())
    } else {
        (fraction | 1 << f.fraction_bits, f.min_lsb() + field - 1)
    };
    Value::Finite(Exact {
        neg,
        sig: BigUint::from(sig),
        exp,
    })
}

/// A result before rounding: `sig * 2^exp`, plus something in `(0, 2^exp)` when
/// `sticky`; `sig` is then long enough that the cut lies above its last bit.
#[derive(Debug, Clone)]
pub struct Unrounded {
    pub neg: bool,
    pub sig: BigUint,
    pub exp: i64,
    pub sticky: bool,
}

impl From<Exact> for Unrounded {
    fn from(x: Exact) -> Self {
        Unrounded {
            neg: x.neg,
            sig: x.sig,
            exp: x.exp,
            sticky: false,
        }
    }
}

/// Whether cutting at the last place goes away from zero.
fn away(mode: Mode, neg: bool, rest: Ordering, exact: bool, odd: bool) -> bool {
    if exact {
        return false;
    }
    match mode {
        Mode::Nearest => rest == Ordering::Greater || (rest == Ordering::Equal && odd),
        Mode::Zero => false,
        Mode::Up => !neg,
        Mode::Down => neg,
    }
}

/// `x` (nonzero) rounded to `f` by `mode`.
pub fn round(f: Format, x: &Unrounded, mode: Mode) -> u64 {
    assert!(x.sig.bits() > 0, "round a nonzero value");
    let top = x.exp + x.sig.bits() as i64 - 1;
    let lsb = (top - (f.precision() - 1)).max(f.min_lsb());
    let (mut q, rest, exact) = if lsb <= x.exp {
        assert!(!x.sticky, "a sticky result needs bits below the last place");
        (&x.sig << (x.exp - lsb) as u64, Ordering::Less, true)
    } else {
        let cut = (lsb - x.exp) as u64;
        let q = &x.sig >> cut;
        let rem = &x.sig - (&q << cut);
        let half = BigUint::from(1u8) << (cut - 1);
        let rest = match rem.cmp(&half) {
            Ordering::Equal if x.sticky => Ordering::Greater,
            o => o,
        };
        let exact = rem == BigUint::ZERO && !x.sticky;
        (q, rest, exact)
    };
    if away(mode, x.neg, rest, exact, q.bit(0)) {
        q += 1u8;
    }
    let mut lsb = lsb;
    if q.bits() as i64 > f.precision() {
        q >>= 1u8;
        lsb += 1;
    }
    let sign = if x.neg { f.sign() } else { 0 };
    let q = u64::try_from(&q).expect("a significand fits 64 bits");
    if q == 0 {
        return sign;
    }
    let normal = q >> f.fraction_bits != 0;
    let field = if normal { lsb - f.min_lsb() + 1 } else { 0 };
    if field >= (1 << f.exponent_bits) - 1 {
        let infinite = match mode {
            Mode::Nearest => true,
            Mode::Zero => false,
            Mode::Up => !x.neg,
            Mode::Down => x.neg,
        };
        return if infinite {
            f.infinity(x.neg)
        } else {
            f.max_finite(x.neg)
        };
    }
    sign | (field as u64) << f.fraction_bits | (q & ((1 << f.fraction_bits) - 1))
}

/// The exact sum of two signed values (either may be zero, given as `None`).
fn sum(a: Option<&Exact>, b: Option<&Exact>) -> Option<Exact> {
    match (a, b) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => {
            let exp = x.exp.min(y.exp);
            let (p, q) = (x.aligned(exp), y.aligned(exp));
            if x.neg == y.neg {
                return Some(Exact {
                    neg: x.neg,
                    sig: p + q,
                    exp,
                });
            }
            match p.cmp(&q) {
                Ordering::Equal => None,
                Ordering::Greater => Some(Exact {
                    neg: x.neg,
                    sig: p - q,
                    exp,
                }),
                Ordering::Less => Some(Exact {
                    neg: y.neg,
                    sig: q - p,
                    exp,
                }),
            }
        }
    }
}

fn product(x: &Exact, y: &Exact) -> Exact {
    Exact {
        neg: x.neg != y.neg,
        sig: &x.sig * &y.sig,
        exp: x.exp + y.exp,
    }
}

/// The zero an exact sum of `x` and `y` gives when it is zero (IEEE 754 6.3): two
/// zeros of one sign keep it; otherwise +0, or -0 rounding down.
fn zero_sum(f: Format, x_neg: bool, y_neg: bool, both_zero: bool, mode: Mode) -> u64 {
    if both_zero && x_neg == y_neg {
        f.zero(x_neg)
    } else {
        f.zero(mode == Mode::Down)
    }
}

/// `a + b` of two patterns (NaN results are the canonical NaN).
pub fn add(f: Format, a: u64, b: u64, mode: Mode) -> u64 {
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) => f.canonical_nan(),
        (Value::Infinity(x), Value::Infinity(y)) if x != y => f.canonical_nan(),
        (Value::Infinity(x), _) | (_, Value::Infinity(x)) => f.infinity(x),
        (x, y) => add_values(f, &x, &y, mode),
    }
}

/// The sum of two finite values (zeros included).
fn add_values(f: Format, x: &Value, y: &Value, mode: Mode) -> u64 {
    let as_exact = |v: &Value| match v {
        Value::Finite(e) => Some(e.clone()),
        _ => None,
    };
    let neg = |v: &Value| {
        matches!(
            v,
            Value::Zero(true) | Value::Finite(Exact { neg: true, .. })
        )
    };
    let (ex, ey) = (as_exact(x), as_exact(y));
    match sum(ex.as_ref(), ey.as_ref()) {
        Some(s) => round(f, &s.into(), mode),
        None => zero_sum(f, neg(x), neg(y), ex.is_none() && ey.is_none(), mode),
    }
}

pub fn sub(f: Format, a: u64, b: u64, mode: Mode) -> u64 {
    if f.is_nan(b) {
        return f.canonical_nan();
    }
    add(f, a, b ^ f.sign(), mode)
}

pub fn mul(f: Format, a: u64, b: u64, mode: Mode) -> u64 {
    let neg = f.is_neg(a) != f.is_neg(b);
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) => f.canonical_nan(),
        (Value::Infinity(_), Value::Zero(_)) | (Value::Zero(_), Value::Infinity(_)) => {
            f.canonical_nan()
        }
        (Value::Infinity(_), _) | (_, Value::Infinity(_)) => f.infinity(neg),
        (Value::Zero(_), _) | (_, Value::Zero(_)) => f.zero(neg),
        (Value::Finite(x), Value::Finite(y)) => round(f, &product(&x, &y).into(), mode),
    }
}

/// `a * b + c` rounded once.
pub fn fma(f: Format, a: u64, b: u64, c: u64, mode: Mode) -> u64 {
    let pneg = f.is_neg(a) != f.is_neg(b);
    let (x, y, z) = (decode(f, a), decode(f, b), decode(f, c));
    if [&x, &y, &z].iter().any(|v| matches!(v, Value::Nan)) {
        return f.canonical_nan();
    }
    let inf = |v: &Value| matches!(v, Value::Infinity(_));
    let zero = |v: &Value| matches!(v, Value::Zero(_));
    if inf(&x) || inf(&y) {
        if zero(&x) || zero(&y) {
            return f.canonical_nan();
        }
        return match z {
            Value::Infinity(s) if s != pneg => f.canonical_nan(),
            _ => f.infinity(pneg),
        };
    }
    if let Value::Infinity(s) = z {
        return f.infinity(s);
    }
    let p = match (&x, &y) {
        (Value::Finite(x), Value::Finite(y)) => Value::Finite(product(x, y)),
        _ => Value::Zero(pneg),
    };
    add_values(f, &p, &z, mode)
}

pub fn div(f: Format, a: u64, b: u64, mode: Mode) -> u64 {
    let neg = f.is_neg(a) != f.is_neg(b);
    match (decode(f, a), decode(f, b)) {
        (Value::Nan, _) | (_, Value::Nan) => f.canonical_nan(),
        (Value::Infinity(_), Value::Infinity(_)) | (Value::Zero(_), Value::Zero(_)) => {
            f.canonical_nan()
        }
        (Value::Infinity(_), _) | (_, Value::Zero(_)) => f.infinity(neg),
        (_, Value::Infinity(_)) | (Value::Zero(_), _) => f.zero(neg),
        (Value::Finite(x), Value::Finite(y)) => {
            // Enough numerator bits for a quotient of precision + 3 bits.
            let shift = (y.bits() - x.bits() + f.precision() + 3).max(0);
            let n = &x.sig << shift as u64;
            let q = &n / &y.sig;
            let sticky = &q * &y.sig != n;
            let r = Unrounded {
                neg,
                sig: q,
                exp: x.exp - y.exp - shift,
                sticky,
            };
            round(f, &r, mode)
        }
    }
}

/// `x` as `sig * 2^exp` with an even `exp` and at least `bits` bits of `sig`.
fn even_scaled(x: &Exact, bits: i64) -> (BigUint, i64) {
    let mut shift = (bits - x.bits()).max(0);
    if (x.exp - shift).rem_euclid(2) != 0 {
        shift += 1;
    }
    (&x.sig << shift as u64, x.exp - shift)
}

pub fn sqrt(f: Format, a: u64, mode: Mode) -> u64 {
    match decode(f, a) {
        Value::Nan | Value::Infinity(true) => f.canonical_nan(),
        Value::Finite(x) if x.neg => f.canonical_nan(),
        Value::Infinity(false) | Value::Zero(_) => a,
        Value::Finite(x) => {
            let (m, e) = even_scaled(&x, 2 * (f.precision() + 3));
            let s = m.sqrt();
            let sticky = &s * &s != m;
            let r = Unrounded {
                neg: false,
                sig: s,
                exp: e / 2,
                sticky,
            };
            round(f, &r, mode)
        }
    }
}

/// `1 / sqrt(a)` rounded to nearest (IEEE 754 9.2 rSqrt).
pub fn rsqrt(f: Format, a: u64) -> u64 {
    match decode(f, a) {
        Value::Nan | Value::Infinity(true) => f.canonical_nan(),
        Value::Finite(x) if x.neg => f.canonical_nan(),
        Value::Infinity(false) => f.zero(false),
        Value::Zero(neg) => f.infinity(neg),
        Value::Finite(x) => {
            let (m, e) = even_scaled(&x, 2);
            // 1/sqrt(m 2^e) = 2^(-e/2) * 2^-k * (2^k / sqrt(m)), and
            // floor(2^k / sqrt(m)) = isqrt(floor(4^k / m)).
            let k = (m.bits() as i64) / 2 + f.precision() + 4;
            let four_k = BigUint::from(1u8) << (2 * k) as u64;
            let y = (&four_k / &m).sqrt();
            let sticky = &y * &y * &m != four_k;
            let r = Unrounded {
                neg: false,
                sig: y,
                exp: -e / 2 - k,
                sticky,
            };
            round(f, &r, Mode::Nearest)
        }
    }
}

/// A pattern of one format in another: exact when widening, rounded by `mode`
/// when narrowing.
pub fn convert(from: Format, to: Format, a: u64, mode: Mode) -> u64 {
    match decode(from, a) {
        Value::Nan => to.canonical_nan(),
        Value::Infinity(neg) => to.infinity(neg),
        Value::Zero(neg) => to.zero(neg),
        Value::Finite(x) => round(to, &x.into(), mode),
    }
}

/// An integer (of any 64-bit type) as a float, rounded by `mode`.
pub fn from_int(f: Format, n: i128, mode: Mode) -> u64 {
    match Exact::integer(n) {
        None => f.zero(false),
        Some(x) => round(f, &x.into(), mode),
    }
}

/// The integer `x` rounds to by `mode`, and whether it is exact.
fn to_integer(x: &Exact, mode: Mode) -> num_bigint::BigInt {
    use num_bigint::{BigInt, Sign};
    let sign = if x.neg { Sign::Minus } else { Sign::Plus };
    if x.exp >= 0 {
        return BigInt::from_biguint(sign, &x.sig << x.exp as u64);
    }
    let cut = x.exp.unsigned_abs();
    let q = &x.sig >> cut;
    let rem = &x.sig - (&q << cut);
    let half = BigUint::from(1u8) << (cut - 1);
    let exact = rem == BigUint::ZERO;
    let up = away(mode, x.neg, rem.cmp(&half), exact, q.bit(0));
    let magnitude = if up { q + 1u8 } else { q };
    BigInt::from_biguint(sign, magnitude)
}

/// `a` rounded to an integral value of its format (`cvt.rni.f32.f32`); zeros,
/// infinities and integers unchanged, a zero result keeps `a`'s sign.
pub fn round_to_integral(f: Format, a: u64, mode: Mode) -> u64 {
    match decode(f, a) {
        Value::Nan => f.canonical_nan(),
        Value::Infinity(_) | Value::Zero(_) => a,
        Value::Finite(x) => {
            let n = to_integer(&x, mode);
            let (sign, magnitude) = n.into_parts();
            if magnitude == BigUint::ZERO {
                return f.zero(x.neg);
            }
            let _ = sign;
            let v = Exact {
                neg: x.neg,
                sig: magnitude,
                exp: 0,
            };
            round(f, &v.into(), Mode::Nearest)
        }
    }
}

/// PTX's float-to-integer `cvt` (9.7.9.21): rounded by `mode`, clamped to the
/// range of a `bits`-wide integer, NaN giving 0 from a non-`.f64` source into
/// fewer than 64 bits and `1 << (bits - 1)` otherwise.
pub fn to_int(f: Format, a: u64, mode: Mode, bits: u32, signed: bool) -> i128 {
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    match decode(f, a) {
        Value::Nan if f == F32 && bits < 64 => 0,
        Value::Nan if signed => min,
        Value::Nan => 1i128 << (bits - 1),
        Value::Infinity(neg) => {
            if neg {
                min
            } else {
                max
            }
        }
        Value::Zero(_) => 0,
        Value::Finite(x) => {
            let n = to_integer(&x, mode);
            if n < min.into() {
                min
            } else if n > max.into() {
                max
            } else {
                i128::try_from(n).expect("within the clamp")
            }
        }
    }
}

/// IEEE 754-2019 minimumNumber / maximumNumber (ISA notes): a NaN gives the other
/// operand, two NaNs the canonical NaN, -0 below +0.
pub fn min_max(f: Format, a: u64, b: u64, max: bool) -> u64 {
    let key = |bits: u64| -> i128 {
        // Patterns ordered as the values they encode (-0 just below +0).
        let magnitude = i128::from(bits & (f.sign() - 1));
        if f.is_neg(bits) {
            -magnitude - 1
        } else {
            magnitude
        }
    };
    match (f.is_nan(a), f.is_nan(b)) {
        (true, true) => f.canonical_nan(),
        (true, false) => b,
        (false, true) => a,
        _ if (key(a) < key(b)) == max => b,
        _ => a,
    }
}
