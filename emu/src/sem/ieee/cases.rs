//! Results stated bit for bit: the ones an outside differential tester found
//! wrong when directed modes corrected the round-to-nearest result, and the
//! rules of PTX's conversions to integers.

use super::*;

const Z: Round = Round::Zero;
const DOWN: Round = Round::Down;
const UP: Round = Round::Up;

fn f64s(bits: u64) -> f64 {
    f64::from_bits(bits)
}

#[test]
fn division_by_zero_is_an_exactly_signed_infinity_in_every_mode() {
    // IEEE 754 7.3; the corrected results were +-max-finite (0x7f7fffff for
    // `rcp.rz.f32 +0`, 0xff7fffff for `div.rp.f32 1, -0`).
    for r in Round::ALL {
        assert_eq!(rcp(0.0f32, r).to_bits(), 0x7f80_0000, "{r:?}");
        assert_eq!(rcp(-0.0f32, r).to_bits(), 0xff80_0000, "{r:?}");
        assert_eq!(div(1.0f32, -0.0, r).to_bits(), 0xff80_0000, "{r:?}");
        assert_eq!(div(-3.5f32, -0.0, r).to_bits(), 0x7f80_0000, "{r:?}");
        assert_eq!(rcp(0.0f64, r).to_bits(), 0x7ff0_0000_0000_0000, "{r:?}");
        assert_eq!(rcp(-0.0f64, r).to_bits(), 0xfff0_0000_0000_0000, "{r:?}");
        assert_eq!(
            div(1.0f64, -0.0, r).to_bits(),
            0xfff0_0000_0000_0000,
            "{r:?}"
        );
        assert_eq!(
            div(f64::MIN_POSITIVE, 0.0, r).to_bits(),
            0x7ff0_0000_0000_0000
        );
    }
}

#[test]
fn exact_zero_sums_are_minus_zero_only_toward_minus_infinity() {
    // IEEE 754 6.3; the corrected results were +0 under `.rm`.
    assert_eq!(add(0.0f32, -0.0, DOWN).to_bits(), 0x8000_0000);
    assert_eq!(sub(0.0f64, 0.0, DOWN).to_bits(), 0x8000_0000_0000_0000);
    assert_eq!(fma(-1.0f32, 1.0, 1.0, DOWN).to_bits(), 0x8000_0000);
    assert_eq!(sub(1.5f32, 1.5, DOWN).to_bits(), 0x8000_0000);
    assert_eq!(
        fma(-1.0f64, 1.0, 1.0, DOWN).to_bits(),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        fma(0.0f64, -1.0, 0.0, DOWN).to_bits(),
        0x8000_0000_0000_0000
    );
    for r in [Round::Nearest, Z, UP] {
        assert_eq!(add(0.0f32, -0.0, r).to_bits(), 0, "{r:?}");
        assert_eq!(sub(0.0f64, 0.0, r).to_bits(), 0, "{r:?}");
        assert_eq!(fma(-1.0f32, 1.0, 1.0, r).to_bits(), 0, "{r:?}");
    }
    // Zeros of one sign keep it in every mode.
    for r in Round::ALL {
        assert_eq!(add(-0.0f32, -0.0, r).to_bits(), 0x8000_0000, "{r:?}");
        assert_eq!(add(0.0f64, 0.0, r).to_bits(), 0, "{r:?}");
        assert_eq!(fma(-0.0f32, 2.0, -0.0, r).to_bits(), 0x8000_0000, "{r:?}");
    }
}

#[test]
fn f64_directed_rounding_is_exact_near_and_below_the_normal_range() {
    // The corrected results were the nearest ones.
    let largest_subnormal = f64s(0x000f_ffff_ffff_ffff);
    assert_eq!(
        mul(largest_subnormal, 0.5, Z).to_bits(),
        0x0007_ffff_ffff_ffff
    );
    assert_eq!(
        mul(largest_subnormal, 0.5, UP).to_bits(),
        0x0008_0000_0000_0000
    );
    assert_eq!(
        mul(largest_subnormal, 0.5, Round::Nearest).to_bits(),
        0x0008_0000_0000_0000
    );
    // sqrt((2^52 - 1) 2^-1074) = 2^-511 (1 - 2^-53 - ...), just below the float
    // under 2^-511.
    assert_eq!(sqrt(largest_subnormal, Z).to_bits(), 0x1fff_ffff_ffff_fffe);
    assert_eq!(sqrt(largest_subnormal, UP).to_bits(), 0x1fff_ffff_ffff_ffff);
    assert_eq!(
        sqrt(largest_subnormal, Round::Nearest).to_bits(),
        0x1fff_ffff_ffff_ffff
    );
    let tiny = f64s(1); // 5e-324
    assert_eq!(div(tiny, 2.5e296, UP).to_bits(), 1);
    assert_eq!(div(tiny, 2.5e296, Z).to_bits(), 0);
    assert_eq!(div(-tiny, 2.5e296, DOWN).to_bits(), 0x8000_0000_0000_0001);
    // 1 / max = 2^-1024 (1 + 2^-53 + ...): subnormal, a sliver above 2^-1024.
    assert_eq!(div(1.0, f64::MAX, Z).to_bits(), 0x0004_0000_0000_0000);
    assert_eq!(div(1.0, f64::MAX, UP).to_bits(), 0x0004_0000_0000_0001);
    assert_eq!(rcp(-f64::MAX, DOWN).to_bits(), 0x8004_0000_0000_0001);
}

#[test]
fn f64_sums_next_to_the_largest_finite_value_round_exactly() {
    // An error-free sum overflows in its intermediate steps here: correcting the
    // nearest result by it moved 0x7fe0000000040000 the wrong way.
    let big = |bits: u64| f64s(bits);
    assert_eq!(
        add(big(0xffdf_ffff_fff7_ffff), f64::MAX, Z).to_bits(),
        0x7fe0_0000_0003_ffff
    );
    assert_eq!(
        add(big(0xffcf_ffff_ffff_fffe), f64::MAX, DOWN).to_bits(),
        0x7fe7_ffff_ffff_ffff
    );
    assert_eq!(
        add(big(0x7fcf_ffff_ffff_fffe), -f64::MAX, UP).to_bits(),
        0xffe7_ffff_ffff_ffff
    );
    assert_eq!(
        add(big(0xffcf_ffff_ffff_fffe), f64::MAX, UP).to_bits(),
        0x7fe8_0000_0000_0000
    );
}

#[test]
fn overflow_goes_to_infinity_or_the_largest_finite_value_by_mode() {
    // IEEE 754 7.4.
    let big = f32::MAX;
    assert_eq!(mul(big, 2.0, Round::Nearest), f32::INFINITY);
    assert_eq!(mul(big, 2.0, Z), f32::MAX);
    assert_eq!(mul(big, 2.0, DOWN), f32::MAX);
    assert_eq!(mul(big, 2.0, UP), f32::INFINITY);
    assert_eq!(mul(-big, 2.0, DOWN), f32::NEG_INFINITY);
    assert_eq!(mul(-big, 2.0, UP), f32::MIN);
    assert_eq!(add(f64::MAX, f64::MAX, Z), f64::MAX);
    assert_eq!(convert::<f64, f32>(1e39, Z), f32::MAX);
    assert_eq!(convert::<f64, f32>(-1e39, UP), f32::MIN);
    assert_eq!(convert::<f64, f32>(1e39, UP), f32::INFINITY);
    assert_eq!(
        from_int::<f32>(i128::from(u64::MAX), Z).to_bits(),
        0x5f7f_ffff
    );
}

#[test]
fn float_to_integer_saturates_and_gives_ptxs_nan_values() {
    let v = |a: f64, r, bits, signed| to_int(a, r, bits, signed).value(true);
    assert_eq!(v(2.5, Round::Nearest, 32, true), 2);
    assert_eq!(v(-2.5, Round::Nearest, 32, true), -2);
    assert_eq!(v(-2.5, Z, 32, true), -2);
    assert_eq!(v(-2.5, DOWN, 32, true), -3);
    assert_eq!(v(2.25, UP, 32, true), 3);
    assert_eq!(v(1e300, Z, 32, true), i128::from(i32::MAX));
    assert_eq!(v(f64::NEG_INFINITY, Z, 64, true), i128::from(i64::MIN));
    assert_eq!(v(-0.75, DOWN, 16, false), 0);
    assert_eq!(v(300.0, Z, 8, false), 255);
    assert_eq!(v(1.8446744073709552e19, Z, 64, false), i128::from(u64::MAX));
    // PTX ISA 9.0, 9.7.9.21: 0 from a non-.f64 source into fewer than 64 bits,
    // else 1 << (bits - 1).
    let nan = to_int(f64::NAN, Z, 32, true);
    assert_eq!(
        nan,
        IntResult::Nan {
            bits: 32,
            signed: true
        }
    );
    assert_eq!(nan.value(false), 0, "cvt.rzi.s32.f32");
    assert_eq!(nan.value(true), i128::from(i32::MIN), "cvt.rzi.s32.f64");
    assert_eq!(
        to_int(f64::NAN, Z, 64, false).value(false),
        1 << 63,
        "cvt.rzi.u64.f32"
    );
    assert_eq!(
        to_int(f64::NAN, Z, 64, true).value(false),
        i128::from(i64::MIN)
    );
    assert_eq!(
        to_int(f64::NAN, Z, 8, false).value(true),
        128,
        "cvt.rzi.u8.f64"
    );
    assert_eq!(
        to_int(f64::NAN, Z, 16, false).value(false),
        0,
        "cvt.rzi.u16.f32"
    );
}

#[test]
fn integral_rounding_keeps_the_sign_of_zero() {
    let bits = |a: f32, r| round_to_integral(a, r).to_bits();
    assert_eq!(bits(-0.4, Round::Nearest), 0x8000_0000);
    assert_eq!(bits(-0.5, Round::Nearest), 0x8000_0000);
    assert_eq!(bits(-0.3, UP), 0x8000_0000);
    assert_eq!(bits(0.3, DOWN), 0);
    assert_eq!(round_to_integral(2.5f32, Round::Nearest), 2.0);
    assert_eq!(round_to_integral(-2.5f64, DOWN), -3.0);
    assert_eq!(round_to_integral(2.000_000_2f32, UP), 3.0);
    assert_eq!(
        round_to_integral(4_503_599_627_370_497.0f64, Z),
        4_503_599_627_370_497.0
    );
    assert!(round_to_integral(f32::NAN, Z).is_nan());
}
