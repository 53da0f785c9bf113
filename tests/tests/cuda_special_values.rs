//! The CUDA header's maths library at special arguments: zeros of either
//! sign, infinities, NaNs and arguments far beyond 2^28, against the values C99's
//! Annex F gives (F.9, cited per case). The arguments are read from memory, so
//! that clang cannot fold a call into a constant of the host's libm; the
//! expected values are written here by hand, or for the large arguments of the
//! trigonometric functions taken from Rust's double-precision functions and
//! allowed 1 ulp. On the SPU, `gtx480` and in `--functional`.

use spu_tests::run_in_mode;

/// What a case must give.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// These bits exactly.
    Bits(f32),
    /// Any NaN.
    Nan,
    /// Within 1 ulp of this value (the exact result rounded to f32).
    Near(f64),
}

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

/// The cases: a call of `a` and `b`, the arguments, and what it must give.
fn cases() -> Vec<(&'static str, f32, f32, Want)> {
    use Want::*;
    use std::f64::consts::PI;
    let pi = |k: f64| Bits((k * PI) as f32);
    vec![
        // fdim of a NaN is NaN (7.12.12.1).
        ("fdimf(a, b)", NAN, 2.0, Nan),
        ("fdimf(a, b)", INF, NAN, Nan),
        ("fdimf(a, b)", 3.0, 1.0, Bits(2.0)),
        ("fdimf(a, b)", 1.0, 3.0, Bits(0.0)),
        // hypot of an infinity is +inf, even beside a NaN (F.9.4.3).
        ("hypotf(a, b)", INF, NAN, Bits(INF)),
        ("hypotf(a, b)", NAN, -INF, Bits(INF)),
        ("hypotf(a, b)", NAN, 1.0, Nan),
        ("hypotf(a, b)", -3.0, 4.0, Bits(5.0)),
        // atan2 at infinities, zeros and NaNs (F.9.1.4).
        ("atan2f(a, b)", -INF, -INF, pi(-0.75)),
        ("atan2f(a, b)", INF, -INF, pi(0.75)),
        ("atan2f(a, b)", INF, INF, pi(0.25)),
        ("atan2f(a, b)", -INF, INF, pi(-0.25)),
        ("atan2f(a, b)", 1.0, -INF, pi(1.0)),
        ("atan2f(a, b)", -1.0, INF, Bits(-0.0)),
        ("atan2f(a, b)", INF, 1.0, pi(0.5)),
        ("atan2f(a, b)", -0.0, 1.0, Bits(-0.0)),
        ("atan2f(a, b)", -0.0, -1.0, pi(-1.0)),
        ("atan2f(a, b)", -0.0, -0.0, pi(-1.0)),
        ("atan2f(a, b)", NAN, 0.0, Nan),
        ("atan2f(a, b)", 0.0, NAN, Nan),
        // pow (F.9.4.4).
        ("powf(a, b)", -1.0, INF, Bits(1.0)),
        ("powf(a, b)", -1.0, -INF, Bits(1.0)),
        ("powf(a, b)", 0.5, -INF, Bits(INF)),
        ("powf(a, b)", 2.0, -INF, Bits(0.0)),
        ("powf(a, b)", -0.0, -3.0, Bits(-INF)),
        ("powf(a, b)", -0.0, 3.0, Bits(-0.0)),
        ("powf(a, b)", -2.0, 3.0, Bits(-8.0)),
        ("powf(a, b)", -2.0, 0.5, Nan),
        ("powf(a, b)", NAN, 0.0, Bits(1.0)),
        ("powf(a, b)", 1.0, NAN, Bits(1.0)),
        ("powf(a, b)", -INF, 3.0, Bits(-INF)),
        ("powf(a, b)", -INF, -3.0, Bits(-0.0)),
        // An odd function keeps the sign of a zero (F.9.1, F.9.2, F.9.3).
        ("sinf(a)", -0.0, 0.0, Bits(-0.0)),
        ("tanf(a)", -0.0, 0.0, Bits(-0.0)),
        ("asinf(a)", -0.0, 0.0, Bits(-0.0)),
        ("atanf(a)", -0.0, 0.0, Bits(-0.0)),
        ("sinhf(a)", -0.0, 0.0, Bits(-0.0)),
        ("tanhf(a)", -0.0, 0.0, Bits(-0.0)),
        ("expm1f(a)", -0.0, 0.0, Bits(-0.0)),
        ("log1pf(a)", -0.0, 0.0, Bits(-0.0)),
        ("cbrtf(a)", -0.0, 0.0, Bits(-0.0)),
        ("sinf(a)", 0.0, 0.0, Bits(0.0)),
        ("cosf(a)", -0.0, 0.0, Bits(1.0)),
        // Infinities and NaNs of the trigonometric functions (F.9.1.5-7).
        ("sinf(a)", INF, 0.0, Nan),
        ("cosf(a)", -INF, 0.0, Nan),
        ("tanf(a)", INF, 0.0, Nan),
        ("sinf(a)", NAN, 0.0, Nan),
        ("cosf(a)", NAN, 0.0, Nan),
        // Arguments far beyond 2^28 keep their accuracy.
        ("sinf(a)", 1e20, 0.0, Near(1e20f32.into())),
        ("cosf(a)", 1e20, 0.0, Near(1e20f32.into())),
        ("sinf(a)", 1e30, 0.0, Near(1e30f32.into())),
        ("cosf(a)", -1e30, 0.0, Near((-1e30f32).into())),
        ("tanf(a)", 1e30, 0.0, Near(1e30f32.into())),
        ("sinf(a)", f32::MAX, 0.0, Near(f32::MAX.into())),
        ("cosf(a)", -f32::MAX, 0.0, Near((-f32::MAX).into())),
        ("sinf(a)", 268435456.0, 0.0, Near(268435456.0)),
        ("sinf(a)", -268435440.0, 0.0, Near(-268435440.0)),
    ]
}

/// The function of a `Near` case at its argument.
fn exact(call: &str, x: f64) -> f64 {
    match call {
        "sinf(a)" => x.sin(),
        "cosf(a)" => x.cos(),
        "tanf(a)" => x.tan(),
        _ => unreachable!("{call}"),
    }
}

/// Ordered integer of a float, so that adjacent floats differ by one.
fn ordered(x: f32) -> i64 {
    let b = i64::from(x.to_bits() as i32);
    if b < 0 { i64::from(i32::MIN) - b } else { b }
}

#[test]
fn the_maths_library_gives_c99s_special_values() {
    if spu_tests::clang::skip("the header's special values") {
        return;
    }
    let cases = cases();
    let calls: String = cases
        .iter()
        .enumerate()
        .map(|(k, (call, ..))| {
            format!(
                "    {{ float a = x[{}], b = x[{}]; r[{k}] = {call}; }}\n",
                2 * k,
                2 * k + 1
            )
        })
        .collect();
    let bits: Vec<String> = cases
        .iter()
        .flat_map(|(_, a, b, _)| [a.to_bits(), b.to_bits()])
        .map(|b| b.to_string())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let launch = spu_tests::clang::one_thread_kernel(
        dir.path(),
        "special",
        "const float *x, float *r",
        &calls,
        &format!(
            ".global .u32 X[{}] = {{{}}};\n.global .f32 R[{}] = zeros;\n",
            bits.len(),
            bits.join(", "),
            cases.len()
        ),
        "X, R",
    );
    for (name, machine, functional) in spu_tests::every_mode() {
        let got = run_in_mode(&launch, &machine, &[], &[], functional).out_f32("R");
        for ((call, a, b, want), got) in cases.iter().zip(got) {
            let ok = match *want {
                Want::Bits(w) => got.to_bits() == w.to_bits(),
                Want::Nan => got.is_nan(),
                Want::Near(x) => {
                    let w = exact(call, x) as f32;
                    !got.is_nan() && (ordered(got) - ordered(w)).abs() <= 1
                }
            };
            assert!(
                ok,
                "{name}: {call} at a = {a:e}, b = {b:e} gave {got:e} ({:#010x}), want {want:?}",
                got.to_bits()
            );
        }
    }
}
