//! The module against the slow reference (`reference`) on random and edge-case
//! operands for every operation, mode and format, and round-to-nearest against
//! the host's operations.

use super::float::{Sealed, is_nan};
use super::reference::{self as model, BINARY32, BINARY64, Format, Four};
use super::*;

/// SplitMix64: reproducible operands without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// A host type with its format in the reference.
trait Host: Float + Sealed {
    const FORMAT: Format;
}

impl Host for f32 {
    const FORMAT: Format = BINARY32;
}

impl Host for f64 {
    const FORMAT: Format = BINARY64;
}

fn bias(f: Format) -> i64 {
    (1 << (f.exponent_bits - 1)) - 1
}

/// A fraction field in one of the shapes that reach exact results, ties and
/// carries: random, short (trailing zeros), sparse, nearly all ones, extremes.
fn fraction(rng: &mut Rng, f: Format) -> u64 {
    let bits = u64::from(f.fraction_bits);
    let mask = (1u64 << bits) - 1;
    let one_bit = |rng: &mut Rng| 1u64 << rng.below(bits);
    match rng.below(7) {
        0 | 1 => rng.next() & mask,
        2 => rng.next() & mask & !(one_bit(rng) - 1),
        3 => (one_bit(rng) | one_bit(rng)) & mask,
        4 => mask ^ one_bit(rng),
        5 => mask & !(rng.next() & rng.next() & rng.next()),
        _ => [0, mask, 1, mask - 1][rng.below(4) as usize],
    }
}

/// A pattern with unbiased exponent `exp`, clamped into the format: below the
/// normal range it is subnormal, above it the largest binade.
fn with_exponent(rng: &mut Rng, f: Format, exp: i64) -> u64 {
    let field = (exp + bias(f)).clamp(0, (1 << f.exponent_bits) - 2) as u64;
    let sign = if rng.coin() { f.sign() } else { 0 };
    sign | field << f.fraction_bits | fraction(rng, f)
}

/// Zeros, subnormal and normal extremes, ones, infinities and NaNs (a signalling
/// one too), of both signs.
fn special(rng: &mut Rng, f: Format) -> u64 {
    let inf = f.infinity(false);
    let min_normal = 1u64 << f.fraction_bits;
    let one = model::one(f);
    let values = [
        0,
        1,
        min_normal - 1,
        min_normal,
        min_normal + 1,
        one,
        one + 1,
        one - 1,
        one + min_normal, // 2
        inf - 1,
        inf - 2,
        inf,
        inf | 1 << (f.fraction_bits - 1),
        inf | 1,
    ];
    let v = values[rng.below(values.len() as u64) as usize];
    if rng.coin() { v | f.sign() } else { v }
}

/// Any exponent of the format and a little beyond (clamped in [`with_exponent`]).
fn any_exp(rng: &mut Rng, f: Format) -> i64 {
    let b = bias(f);
    rng.range(-b - i64::from(f.fraction_bits) - 2, b + 1)
}

/// An exponent for a result near underflow, near overflow, near one or anywhere.
fn target_exp(rng: &mut Rng, f: Format) -> i64 {
    let (b, p) = (bias(f), i64::from(f.fraction_bits) + 1);
    match rng.below(4) {
        0 => rng.range(1 - b - p - 2, 1 - b + 2),
        1 => rng.range(b - 2, b + 1),
        2 => rng.range(-4, 4),
        _ => any_exp(rng, f),
    }
}

/// An operand: now and then a special value, else of exponent `exp`.
fn operand(f: Format, exp: i64, rng: &mut Rng) -> u64 {
    if rng.below(10) == 0 {
        special(rng, f)
    } else {
        with_exponent(rng, f, exp)
    }
}

/// Two addends: close exponents (cancellation, ties), far apart (sticky), or
/// exact opposites.
fn addends(rng: &mut Rng, f: Format) -> (u64, u64) {
    let p = i64::from(f.fraction_bits) + 1;
    let ea = target_exp(rng, f);
    let a = operand(f, ea, rng);
    let b = match rng.below(6) {
        0 => a ^ f.sign(),
        1 => (a ^ f.sign()).wrapping_add(rng.below(3)).wrapping_sub(1) & (2 * f.sign() - 1),
        2 => operand(f, any_exp(rng, f), rng),
        _ => operand(f, ea + rng.range(-p - 4, p + 4), rng),
    };
    if rng.coin() { (a, b) } else { (b, a) }
}

/// Two factors whose product lands near a target exponent.
fn factors(rng: &mut Rng, f: Format) -> (u64, u64) {
    let ea = any_exp(rng, f);
    let eb = target_exp(rng, f) - ea + rng.range(-1, 1);
    (operand(f, ea, rng), operand(f, eb, rng))
}

/// A dividend and divisor whose quotient lands near a target exponent.
fn division(rng: &mut Rng, f: Format) -> (u64, u64) {
    let ea = any_exp(rng, f);
    let eb = ea - target_exp(rng, f) + rng.range(-1, 1);
    (operand(f, ea, rng), operand(f, eb, rng))
}

fn fma_operands<F: Host>(rng: &mut Rng) -> (u64, u64, u64) {
    let f = F::FORMAT;
    let p = i64::from(f.fraction_bits) + 1;
    let (a, b) = factors(rng, f);
    let near = F::from_raw(a).hw_mul(F::from_raw(b)).raw() ^ f.sign();
    let c = match rng.below(5) {
        // Minus the rounded product, or a neighbour: the exact error decides.
        0 if is_finite(F::from_raw(near)) => near,
        1 if finite_nonzero(F::from_raw(near)) => near + 1,
        2 => operand(f, any_exp(rng, f), rng),
        _ => {
            let ep = (a >> f.fraction_bits & ((1 << f.exponent_bits) - 1)) as i64
                + (b >> f.fraction_bits & ((1 << f.exponent_bits) - 1)) as i64
                - 2 * bias(f);
            operand(f, ep + rng.range(-2 * p - 4, p + 4), rng)
        }
    };
    (a, b, c)
}

/// Mismatches against the reference, reported together.
#[derive(Default)]
struct Failures {
    cases: usize,
    wrong: usize,
    shown: Vec<String>,
}

impl Failures {
    fn record(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.cases += 1;
        if !ok {
            self.wrong += 1;
            if self.shown.len() < 20 {
                self.shown.push(what());
            }
        }
    }

    /// `got` must be `want`'s pattern, or a quiet NaN where `want` is `None`.
    fn check(&mut self, f: Format, want: Option<u64>, got: u64, what: impl FnOnce() -> String) {
        let quiet = f.infinity(false) | 1 << (f.fraction_bits - 1);
        let ok = match want {
            Some(bits) => got == bits,
            None => got & quiet == quiet,
        };
        self.record(ok, || {
            let want = want.map_or("a quiet NaN".to_string(), |w| format!("{w:#x}"));
            format!("{}: got {got:#x}, want {want}", what())
        });
    }

    fn assert_none(self, name: &str) {
        assert!(
            self.wrong == 0,
            "{name}: {} of {} results differ from the reference, first ones:\n{}",
            self.wrong,
            self.cases,
            self.shown.join("\n")
        );
        assert!(self.cases > 0, "{name}: nothing checked");
    }
}

fn check_four<F: Host>(
    failures: &mut Failures,
    want: Four,
    got: impl Fn(Round) -> F,
    what: impl Fn() -> String,
) {
    for (r, want) in Round::ALL.into_iter().zip(want) {
        failures.check(F::FORMAT, want, got(r).raw(), || {
            format!("{} {r:?}", what())
        });
    }
}

type Binary<F> = fn(F, F, Round) -> F;
type BinaryModel = fn(Format, u64, u64) -> Four;
type Inputs = fn(&mut Rng, Format) -> (u64, u64);

fn binary<F: Host>(cases: usize, seed: u64) -> Failures {
    let f = F::FORMAT;
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    // Each operation with the inputs that reach its hard cases.
    let ops: [(&str, Binary<F>, BinaryModel, Inputs); 4] = [
        ("add", add, model::add, addends),
        ("sub", sub, model::sub, addends),
        ("mul", mul, model::mul, factors),
        ("div", div, model::div, division),
    ];
    for _ in 0..cases {
        for (name, op, reference, inputs) in ops {
            let (a, b) = inputs(&mut rng, f);
            let (x, y) = (F::from_raw(a), F::from_raw(b));
            check_four(
                &mut failures,
                reference(f, a, b),
                |r| op(x, y, r),
                || format!("{name} {a:#x} {b:#x}"),
            );
        }
    }
    failures
}

fn fused<F: Host>(cases: usize, seed: u64) -> Failures {
    let f = F::FORMAT;
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    for _ in 0..cases {
        let (a, b, c) = fma_operands::<F>(&mut rng);
        let (x, y, z) = (F::from_raw(a), F::from_raw(b), F::from_raw(c));
        check_four(
            &mut failures,
            model::fma(f, a, b, c),
            |r| fma(x, y, z, r),
            || format!("fma {a:#x} {b:#x} {c:#x}"),
        );
    }
    failures
}

fn unary<F: Host>(cases: usize, seed: u64) -> Failures {
    let f = F::FORMAT;
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    let p = i64::from(f.fraction_bits) + 1;
    for _ in 0..cases {
        let a = operand(f, any_exp(&mut rng, f), &mut rng);
        let x = F::from_raw(a);
        check_four(
            &mut failures,
            model::sqrt(f, a),
            |r| sqrt(x, r),
            || format!("sqrt {a:#x}"),
        );
        let a = operand(f, -target_exp(&mut rng, f), &mut rng);
        let x = F::from_raw(a);
        let reciprocal = model::div(f, model::one(f), a);
        check_four(
            &mut failures,
            reciprocal,
            |r| rcp(x, r),
            || format!("rcp {a:#x}"),
        );
        let a = operand(f, any_exp(&mut rng, f), &mut rng);
        let x = F::from_raw(a);
        failures.check(f, model::rsqrt(f, a), rsqrt(x).raw(), || {
            format!("rsqrt {a:#x}")
        });
        let a = operand(f, rng.range(-3, p + 1), &mut rng);
        let x = F::from_raw(a);
        check_four(
            &mut failures,
            model::round_to_integral(f, a),
            |r| round_to_integral(x, r),
            || format!("round_to_integral {a:#x}"),
        );
    }
    failures
}

/// f64 to f32 (rounding), f32 to f64 (exact), and each to itself.
fn conversions(cases: usize, seed: u64) -> Failures {
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    for _ in 0..cases {
        // Around f32's range, whose edges are where narrowing rounds specially.
        let e = rng.range(-160, 140);
        let a = operand(
            BINARY64,
            if rng.coin() {
                e
            } else {
                target_exp(&mut rng, BINARY32)
            },
            &mut rng,
        );
        let x = f64::from_raw(a);
        check_four(
            &mut failures,
            model::convert(BINARY64, BINARY32, a),
            |r| convert::<f64, f32>(x, r),
            || format!("convert f64->f32 {a:#x}"),
        );
        check_four(
            &mut failures,
            model::convert(BINARY64, BINARY64, a),
            |r| convert::<f64, f64>(x, r),
            || format!("convert f64->f64 {a:#x}"),
        );
        let a = operand(BINARY32, any_exp(&mut rng, BINARY32), &mut rng);
        let x = f32::from_raw(a);
        check_four(
            &mut failures,
            model::convert(BINARY32, BINARY64, a),
            |r| convert::<f32, f64>(x, r),
            || format!("convert f32->f64 {a:#x}"),
        );
        check_four(
            &mut failures,
            model::convert(BINARY32, BINARY32, a),
            |r| convert::<f32, f32>(x, r),
            || format!("convert f32->f32 {a:#x}"),
        );
    }
    failures
}

/// An integer of up to 64 bits, signed or not: random, near a power of two,
/// sparse, or small.
fn integer(rng: &mut Rng) -> i128 {
    let k = rng.below(64);
    let n: i128 = match rng.below(4) {
        0 => i128::from(rng.next()),
        1 => (1i128 << k) + i128::from(rng.below(5)) - 2,
        2 => i128::from((1u64 << k) | (1u64 << rng.below(64)) | rng.below(2)),
        _ => i128::from(rng.below(1 << 12)),
    };
    // Negative values only within i64.
    if rng.coin() && n <= i128::from(i64::MAX) + 1 {
        -n
    } else {
        n
    }
}

fn integers<F: Host>(cases: usize, seed: u64) -> Failures {
    let f = F::FORMAT;
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    for _ in 0..cases {
        let n = integer(&mut rng);
        check_four(
            &mut failures,
            model::from_int(f, n),
            |r| from_int::<F>(n, r),
            || format!("from_int {n}"),
        );
    }
    failures
}

/// Float to integer: every width, signed or not, from either format.
fn to_integers(cases: usize, seed: u64) -> Failures {
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    for _ in 0..cases {
        let f64_source = rng.coin();
        let a = if f64_source {
            operand(BINARY64, rng.range(-3, 66), &mut rng)
        } else {
            f64::from(f32::from_raw(operand(
                BINARY32,
                rng.range(-3, 66),
                &mut rng,
            )))
            .raw()
        };
        let bits = [8, 16, 32, 64][rng.below(4) as usize];
        let signed = rng.coin();
        let want = model::to_int(a, bits, signed, f64_source);
        for (r, want) in Round::ALL.into_iter().zip(want) {
            let got = to_int(f64::from_raw(a), r, bits, signed).value(f64_source);
            failures.record(got == want, || {
                format!("to_int {a:#x} {r:?} to {bits} bits, signed {signed}, f64 source {f64_source}: got {got}, want {want}")
            });
        }
    }
    failures
}

/// Cases per test in the default run; the ignored long run takes many more.
const CASES: usize = 12_000;
const LONG: usize = 40;

#[test]
fn sums_products_and_quotients_match_the_reference() {
    binary::<f32>(CASES, 1).assert_none("f32");
    binary::<f64>(CASES, 2).assert_none("f64");
}

#[test]
fn fused_multiply_adds_match_the_reference() {
    fused::<f32>(4 * CASES, 3).assert_none("f32");
    fused::<f64>(4 * CASES, 4).assert_none("f64");
}

#[test]
fn roots_reciprocals_and_integral_rounding_match_the_reference() {
    unary::<f32>(CASES, 5).assert_none("f32");
    unary::<f64>(CASES, 6).assert_none("f64");
}

#[test]
fn conversions_match_the_reference() {
    conversions(2 * CASES, 7).assert_none("between formats");
    integers::<f32>(2 * CASES, 8).assert_none("from integers to f32");
    integers::<f64>(2 * CASES, 9).assert_none("from integers to f64");
    to_integers(4 * CASES, 10).assert_none("to integers");
}

#[test]
#[ignore = "long: about forty times the default run"]
fn long_run_matches_the_reference() {
    let n = LONG * CASES;
    binary::<f32>(n, 11).assert_none("f32");
    binary::<f64>(n, 12).assert_none("f64");
    fused::<f32>(4 * n, 13).assert_none("f32");
    fused::<f64>(4 * n, 14).assert_none("f64");
    unary::<f32>(n, 15).assert_none("f32");
    unary::<f64>(n, 16).assert_none("f64");
    conversions(2 * n, 17).assert_none("between formats");
    integers::<f32>(2 * n, 18).assert_none("from integers to f32");
    integers::<f64>(2 * n, 19).assert_none("from integers to f64");
    to_integers(4 * n, 20).assert_none("to integers");
}

/// Both NaN, or the same pattern.
fn same<F: Host>(got: F, host: F) -> bool {
    got.raw() == host.raw() || (is_nan(got) && is_nan(host))
}

fn nearest_matches_host<F: Host + std::ops::Neg<Output = F>>(cases: usize, seed: u64) -> Failures {
    let f = F::FORMAT;
    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    let n = Round::Nearest;
    for _ in 0..cases {
        let (a, b) = addends(&mut rng, f);
        let (c, d) = factors(&mut rng, f);
        let (x, y, z, w) = (
            F::from_raw(a),
            F::from_raw(b),
            F::from_raw(c),
            F::from_raw(d),
        );
        let ops = [
            ("add", add(x, y, n), x.hw_add(y)),
            ("sub", sub(x, y, n), x.hw_sub(y)),
            ("mul", mul(z, w, n), z.hw_mul(w)),
            ("div", div(z, w, n), z.hw_div(w)),
            ("fma", fma(z, w, x, n), z.hw_mul_add(w, x)),
            ("sqrt", sqrt(x, n), x.hw_sqrt()),
            ("rcp", rcp(z, n), F::ONE.hw_div(z)),
        ];
        for (name, got, host) in ops {
            failures.record(same(got, host), || {
                format!("{name} {a:#x} {b:#x} {c:#x} {d:#x}: got {got:?}, host {host:?}")
            });
        }
        let n64 = rng.next() as i64;
        failures.record(
            from_int::<F>(i128::from(n64), n).raw() == F::from_i128(i128::from(n64)).raw(),
            || format!("from_int {n64}"),
        );
    }
    failures
}

#[test]
fn nearest_is_the_hosts_operation() {
    nearest_matches_host::<f32>(4 * CASES, 21).assert_none("f32");
    nearest_matches_host::<f64>(4 * CASES, 22).assert_none("f64");
    let mut rng = Rng(23);
    let mut failures = Failures::default();
    for _ in 0..4 * CASES {
        let a = f64::from_raw(operand(BINARY64, rng.range(-160, 140), &mut rng));
        let n = rng.next() as i64;
        failures.record(
            same(convert::<f64, f32>(a, Round::Nearest), a as f32),
            || format!("convert {a:e}"),
        );
        failures.record(
            from_int::<f32>(i128::from(n), Round::Nearest) == n as f32,
            || format!("from_int {n}"),
        );
        failures.record(
            from_int::<f64>(i128::from(n as u64), Round::Nearest) == (n as u64) as f64,
            || format!("from_int {}", n as u64),
        );
    }
    failures.assert_none("conversions");
}
