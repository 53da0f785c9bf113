//! CUDA's rounding intrinsics through clang (`__fadd_rz`, `__fmaf_ru`,
//! `__dsqrt_rd`, `__float2int_rn`, `__ull2double_ru`, ...), `rint` and the
//! wrapping atomics (`atomicInc`, `atomicDec`): each one, in each
//! direction, on operands whose exact result lies between two representable
//! values, so that every direction gives a value of its own. The expected values
//! are worked out here by hand from the exact results (IEEE 754 §4.3), not by the
//! emulator's arithmetic; on the SPU, `gtx480` and in `--functional`.

use spu_tests::run_in_mode;

/// How a case's value is stored as 64 bits.
#[derive(Clone, Copy)]
enum Kind {
    /// A float's bits.
    F,
    /// A double's bits.
    D,
    /// A signed integer, sign-extended.
    I,
    /// An unsigned integer.
    U,
}

/// The next float above `x` (`x` finite and positive).
fn up32(x: f32) -> u64 {
    u64::from(x.to_bits() + 1)
}

fn f32b(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn f64b(x: f64) -> u64 {
    x.to_bits()
}

/// The cases: a CUDA expression, how its value is stored, and the expected bits.
fn cases() -> Vec<(&'static str, Kind, u64)> {
    use Kind::*;
    let e23 = f32::EPSILON; // 2^-23
    let e52 = f64::EPSILON; // 2^-52
    let third32 = 0x3eaa_aaaa_u64; // 1/3 rounded down; up is the next
    let third64 = 0x3fd5_5555_5555_5555_u64;
    let sqrt2_32 = 0x3fb5_04f3_u64; // below sqrt(2)
    let sqrt2_64 = 0x3ff6_a09e_667f_3bcd_u64; // above sqrt(2)
    let neg = |b: u64| b | (1 << 31);
    vec![
        // 1 + 2^-30: between 1 and the next float.
        ("__fadd_rn(1.0f, 0x1p-30f)", F, f32b(1.0)),
        ("__fadd_rz(1.0f, 0x1p-30f)", F, f32b(1.0)),
        ("__fadd_ru(1.0f, 0x1p-30f)", F, up32(1.0)),
        ("__fadd_rd(1.0f, 0x1p-30f)", F, f32b(1.0)),
        ("__fadd_rd(-1.0f, -0x1p-30f)", F, neg(up32(1.0))),
        ("__fadd_ru(-1.0f, -0x1p-30f)", F, neg(f32b(1.0))),
        // 1 - 2^-30: between the float below 1 (1 - 2^-24) and 1.
        ("__fsub_rn(1.0f, 0x1p-30f)", F, f32b(1.0)),
        ("__fsub_rz(1.0f, 0x1p-30f)", F, f32b(1.0) - 1),
        ("__fsub_ru(1.0f, 0x1p-30f)", F, f32b(1.0)),
        ("__fsub_rd(1.0f, 0x1p-30f)", F, f32b(1.0) - 1),
        // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46.
        (
            "__fmul_rn(1.0f + 0x1p-23f, 1.0f + 0x1p-23f)",
            F,
            f32b(1.0 + 2.0 * e23),
        ),
        (
            "__fmul_rz(1.0f + 0x1p-23f, 1.0f + 0x1p-23f)",
            F,
            f32b(1.0 + 2.0 * e23),
        ),
        (
            "__fmul_ru(1.0f + 0x1p-23f, 1.0f + 0x1p-23f)",
            F,
            f32b(1.0 + 3.0 * e23),
        ),
        (
            "__fmul_rd(1.0f + 0x1p-23f, 1.0f + 0x1p-23f)",
            F,
            f32b(1.0 + 2.0 * e23),
        ),
        // 1/3 = 0x3eaaaaaa.aaa...: nearest is up.
        ("__fdiv_rn(1.0f, 3.0f)", F, third32 + 1),
        ("__fdiv_rz(1.0f, 3.0f)", F, third32),
        ("__fdiv_ru(1.0f, 3.0f)", F, third32 + 1),
        ("__fdiv_rd(1.0f, 3.0f)", F, third32),
        ("__fdiv_rd(-1.0f, 3.0f)", F, neg(third32 + 1)),
        ("__frcp_rn(3.0f)", F, third32 + 1),
        ("__frcp_rz(3.0f)", F, third32),
        ("__frcp_ru(3.0f)", F, third32 + 1),
        ("__frcp_rd(3.0f)", F, third32),
        // sqrt(2) lies above 0x3fb504f3 and nearer to it.
        ("__fsqrt_rn(2.0f)", F, sqrt2_32),
        ("__fsqrt_rz(2.0f)", F, sqrt2_32),
        ("__fsqrt_ru(2.0f)", F, sqrt2_32 + 1),
        ("__fsqrt_rd(2.0f)", F, sqrt2_32),
        // (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46, half way between 2^-22 and the next
        // float: to even (2^-22), or up.
        (
            "__fmaf_rn(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f)",
            F,
            f32b(2.0 * e23),
        ),
        (
            "__fmaf_rz(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f)",
            F,
            f32b(2.0 * e23),
        ),
        (
            "__fmaf_ru(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f)",
            F,
            up32(2.0 * e23),
        ),
        (
            "__fmaf_rd(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f)",
            F,
            f32b(2.0 * e23),
        ),
        // The same in double precision.
        ("__dadd_rn(1.0, 0x1p-60)", D, f64b(1.0)),
        ("__dadd_rz(1.0, 0x1p-60)", D, f64b(1.0)),
        ("__dadd_ru(1.0, 0x1p-60)", D, f64b(1.0 + e52)),
        ("__dadd_rd(-1.0, -0x1p-60)", D, f64b(-1.0 - e52)),
        ("__dsub_rz(1.0, 0x1p-60)", D, f64b(1.0) - 1),
        ("__dsub_ru(1.0, 0x1p-60)", D, f64b(1.0)),
        (
            "__dmul_ru(1.0 + 0x1p-52, 1.0 + 0x1p-52)",
            D,
            f64b(1.0 + 3.0 * e52),
        ),
        (
            "__dmul_rd(1.0 + 0x1p-52, 1.0 + 0x1p-52)",
            D,
            f64b(1.0 + 2.0 * e52),
        ),
        // 1/3 = 0x3fd5555555555555.555...: nearest is down.
        ("__ddiv_rn(1.0, 3.0)", D, third64),
        ("__ddiv_rz(1.0, 3.0)", D, third64),
        ("__ddiv_ru(1.0, 3.0)", D, third64 + 1),
        ("__ddiv_rd(1.0, 3.0)", D, third64),
        ("__drcp_ru(3.0)", D, third64 + 1),
        ("__drcp_rz(3.0)", D, third64),
        // sqrt(2) lies below 0x3ff6a09e667f3bcd and nearer to it.
        ("__dsqrt_rn(2.0)", D, sqrt2_64),
        ("__dsqrt_rz(2.0)", D, sqrt2_64 - 1),
        ("__dsqrt_ru(2.0)", D, sqrt2_64),
        ("__dsqrt_rd(2.0)", D, sqrt2_64 - 1),
        (
            "__fma_rn(1.0 + 0x1p-52, 1.0 + 0x1p-52, -1.0)",
            D,
            f64b(2.0 * e52),
        ),
        (
            "__fma_ru(1.0 + 0x1p-52, 1.0 + 0x1p-52, -1.0)",
            D,
            f64b(2.0 * e52) + 1,
        ),
        (
            "__fma_rd(1.0 + 0x1p-52, 1.0 + 0x1p-52, -1.0)",
            D,
            f64b(2.0 * e52),
        ),
        (
            "__fma_rz(1.0 + 0x1p-52, 1.0 + 0x1p-52, -1.0)",
            D,
            f64b(2.0 * e52),
        ),
        // To integers: halves go to even with _rn.
        ("__float2int_rn(2.5f)", I, 2),
        ("__float2int_rz(2.5f)", I, 2),
        ("__float2int_ru(2.5f)", I, 3),
        ("__float2int_rd(-2.5f)", I, (-3i64) as u64),
        ("__float2int_rn(-2.5f)", I, (-2i64) as u64),
        ("__float2uint_rd(3.75f)", U, 3),
        ("__float2uint_ru(3.25f)", U, 4),
        ("__float2ll_ru(-0.5f)", I, 0),
        ("__float2ull_rz(7.9f)", U, 7),
        ("__double2int_rn(-1.5)", I, (-2i64) as u64),
        ("__double2int_rz(-1.5)", I, (-1i64) as u64),
        ("__double2int_ru(-1.5)", I, (-1i64) as u64),
        ("__double2int_rd(-1.5)", I, (-2i64) as u64),
        ("__double2uint_rn(4294967294.5)", U, 4_294_967_294),
        ("__double2ll_rd(-3.5)", I, (-4i64) as u64),
        ("__double2ull_ru(4.25)", U, 5),
        // To floats: 2^24 + 1 lies half way between 2^24 and 2^24 + 2.
        ("__int2float_rn(16777217)", F, f32b(16_777_216.0)),
        ("__int2float_rz(16777217)", F, f32b(16_777_216.0)),
        ("__int2float_ru(16777217)", F, f32b(16_777_218.0)),
        ("__int2float_rd(-16777217)", F, f32b(-16_777_218.0)),
        ("__uint2float_ru(4294967295u)", F, f32b(4_294_967_296.0)),
        ("__uint2float_rd(4294967295u)", F, f32b(4_294_967_040.0)),
        (
            "__ll2float_ru(9007199254740993ll)",
            F,
            f32b(9_007_200_328_482_816.0),
        ),
        (
            "__ll2float_rd(9007199254740993ll)",
            F,
            f32b(9_007_199_254_740_992.0),
        ),
        (
            "__ull2float_rz(18446744073709551615ull)",
            F,
            f32b(18_446_742_974_197_923_840.0),
        ),
        (
            "__ll2double_rn(9007199254740993ll)",
            D,
            f64b(9_007_199_254_740_992.0),
        ),
        (
            "__ll2double_ru(9007199254740993ll)",
            D,
            f64b(9_007_199_254_740_994.0),
        ),
        (
            "__ull2double_ru(18446744073709551615ull)",
            D,
            f64b(18_446_744_073_709_551_616.0),
        ),
        (
            "__ull2double_rd(18446744073709551615ull)",
            D,
            f64b(18_446_744_073_709_549_568.0),
        ),
        ("__double2float_rn(1.0 / 3.0)", F, third32 + 1),
        ("__double2float_rd(1.0 / 3.0)", F, third32),
        ("__double2float_ru(1e300)", F, f32b(f32::INFINITY)),
        ("__double2float_rd(1e300)", F, f32b(f32::MAX)),
        ("__double2float_rz(-1e300)", F, f32b(-f32::MAX)),
        ("__int2double_rn(-7)", D, f64b(-7.0)),
        ("__uint2double_rn(4294967295u)", D, f64b(4_294_967_295.0)),
        // C's rint: halfway cases to even, the sign kept.
        ("rintf(2.5f)", F, f32b(2.0)),
        ("rintf(3.5f)", F, f32b(4.0)),
        ("rintf(-0.5f)", F, f32b(-0.0)),
        ("nearbyintf(0.5f)", F, f32b(0.0)),
        ("rint(2.5)", D, f64b(2.0)),
        ("nearbyint(-1.5)", D, f64b(-2.0)),
        // atomicInc and atomicDec on w[0] (0 at the start), one after another:
        // inc wraps to 0 once the old value reaches 2; dec gives 2 from 0 or
        // from above 2.
        ("atomicInc(w, 2u)", U, 0),
        ("atomicInc(w, 2u)", U, 1),
        ("atomicInc(w, 2u)", U, 2),
        ("atomicInc(w, 2u)", U, 0),
        ("atomicDec(w, 2u)", U, 1),
        ("atomicDec(w, 2u)", U, 0),
        ("atomicDec(w, 2u)", U, 2),
        ("atomicExch(w, 7u)", U, 1),
        ("atomicDec(w, 2u)", U, 7),
        ("w[0]", U, 2),
    ]
}

#[test]
fn every_rounding_intrinsic_rounds_its_own_way() {
    if spu_tests::clang::skip("the header's rounding intrinsics") {
        return;
    }
    let cases = cases();
    let stores: String = cases
        .iter()
        .enumerate()
        .map(|(k, (expr, kind, _))| {
            let bits = match kind {
                Kind::F => format!("(unsigned long long)__float_as_uint({expr})"),
                Kind::D => format!("(unsigned long long)__double_as_longlong({expr})"),
                Kind::I => format!("(unsigned long long)(long long)({expr})"),
                Kind::U => format!("(unsigned long long)({expr})"),
            };
            format!("    r[{k}] = {bits};\n")
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let launch = spu_tests::clang::one_thread_kernel(
        dir.path(),
        "rounding",
        "unsigned long long *r, unsigned int *w",
        &stores,
        &format!(
            ".global .u64 R[{}] = zeros;\n.global .u32 W[1] = zeros;\n",
            cases.len()
        ),
        "R, W",
    );
    for (name, machine, functional) in spu_tests::every_mode() {
        let got = run_in_mode(&launch, &machine, &[], &[], functional).out_bits("R");
        for ((expr, _, want), got) in cases.iter().zip(got) {
            assert_eq!(got, *want, "{name}: {expr} gave {got:#x}, want {want:#x}");
        }
    }
}
