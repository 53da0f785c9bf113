//! The differential corpus (`spu_tests::semcheck`): random kernels over the
//! value-computing instruction forms, run in timing mode, `--functional` and on
//! `gtx480`, every stored word compared with the independent reference. The
//! default run is small; `cargo test --release -p spu-tests --test semcheck --
//! --ignored` runs the large corpus (`SEMCHECK_KERNELS` sets its size).

use spu_tests::semcheck::reference::float::{self, F32, F64, Mode as Round};
use spu_tests::semcheck::{Mode, Piece, corpus, expected, input_words, kernel, run};

fn check(seed: u64, kernels: usize, len: usize, threads: usize) {
    let (bad, words) = corpus(seed, kernels, len, threads);
    assert!(
        bad.is_empty(),
        "{} mismatches against the reference (of {words} words):\n{}",
        bad.len(),
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(
        words >= kernels * 3 * threads * len,
        "only {words} words compared"
    );
}

#[test]
fn random_kernels_match_the_reference_in_every_mode() {
    check(1, 6, 40, 128);
}

#[test]
#[ignore = "the large corpus: minutes in a release build"]
fn large_corpus_matches_the_reference_in_every_mode() {
    let kernels = std::env::var("SEMCHECK_KERNELS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    check(1000, kernels, 80, 128);
}

/// #24 class 1: 64 threads, the odd lanes branch to a target whose first
/// instruction is `add.s64`; the even lanes' fall-through path must run too.
const DIVERGENT_ADD_S64: &str = "
.global .u32 out[64] = zeros;
.launch grid(1, 1) block(64) iu(32);
.entry divergent_general_target {
    .reg .u32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 1;
    setp.ne.u32 %p1, %r2, 0;
    cvt.u64.u32 %rd2, %r1;
    mov.b32 %r5, 0xdead;
    @%p1 bra ELSE;
    mov.u32 %r5, 7;
    bra JOIN;
ELSE:
    add.s64 %rd1, %rd2, %rd2;
JOIN:
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, out;
    add.u32 %r4, %r4, %r3;
    st.global.u32 [%r4], %r5;
    exit;
}
";

#[test]
fn divergent_branch_to_a_general_instruction_keeps_the_fall_through_path() {
    for mode in Mode::ALL {
        let out = run(DIVERGENT_ADD_S64, &[], mode).unwrap_or_else(|e| panic!("{e}"));
        for (lane, &v) in out.iter().enumerate() {
            let want = if lane % 2 == 0 { 7 } else { 0xdead };
            assert_eq!(
                v, want,
                "{mode:?}: lane {lane} stored {v:#x}, want {want:#x}"
            );
        }
    }
}

/// The reference itself on the cases #24 found wrong (IEEE 754 7.3, 6.3 and
/// directed rounding near the subnormal range).
#[test]
fn reference_gives_the_ieee_results_of_the_reported_cases() {
    // Division by zero: an exactly signed infinity in every mode.
    assert_eq!(float::div(F32, F32.one(), 0, Round::Zero), 0x7f80_0000);
    assert_eq!(
        float::div(F32, F32.one(), 0x8000_0000, Round::Up),
        0xff80_0000
    );
    // Exact zero sums toward minus infinity are -0.
    assert_eq!(float::add(F32, 0, 0x8000_0000, Round::Down), 0x8000_0000);
    assert_eq!(float::sub(F64, 0, 0, Round::Down), 0x8000_0000_0000_0000);
    let minus_one = 0xbf80_0000;
    assert_eq!(
        float::fma(F32, minus_one, F32.one(), F32.one(), Round::Down),
        0x8000_0000
    );
    // Directed rounding of subnormal results.
    let half = 0x3fe0_0000_0000_0000;
    assert_eq!(
        float::mul(F64, 0x000f_ffff_ffff_ffff, half, Round::Zero),
        0x0007_ffff_ffff_ffff
    );
    assert_eq!(
        float::sqrt(F64, 0x000f_ffff_ffff_ffff, Round::Zero),
        0x1fff_ffff_ffff_fffe
    );
    assert_eq!(
        float::div(F64, 1, f64::to_bits(2.5e296), Round::Up),
        1,
        "5e-324 / 2.5e296 rounds up to the smallest subnormal"
    );
    // Nearest still rounds to nearest even.
    assert_eq!(
        float::add(F32, F32.one(), 0x3380_0000, Round::Nearest),
        F32.one()
    );
}

#[test]
fn the_comparison_reports_changed_results() {
    // Inputs other than the reference's: most stored words must differ.
    let k = kernel(7, 40, 64);
    let mut inputs = input_words(&k);
    for w in &mut inputs {
        *w ^= 0x0100_0001;
    }
    let got = run(&k.text, &inputs, Mode::Functional).unwrap_or_else(|e| panic!("{e}"));
    let want = expected(&k);
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert!(
        differ > want.len() / 8,
        "only {differ} of {} words differ",
        want.len()
    );
}

#[test]
fn the_corpus_draws_every_value_computing_row_and_rounding_mode() {
    let mut texts = Vec::new();
    for seed in 0..300 {
        for piece in kernel(seed, 80, 64).pieces {
            match piece {
                Piece::Inst(i) => texts.push(i.text),
                Piece::Skip { body, .. } => texts.extend(body.into_iter().map(|i| i.text)),
            }
        }
    }
    // Every row that computes a value from registers, but the SFU functions
    // (`ex2 lg2 sin cos`) and moves.
    let want = [
        "add.",
        "sub.",
        "mul.lo.",
        "mul.hi.",
        "mad.lo.",
        "mad.hi.",
        "mul.wide.",
        "mad.wide.",
        "fma.",
        "div.",
        "rem.",
        "min.",
        "max.",
        "abs.",
        "neg.",
        "and.",
        "or.",
        "xor.",
        "not.",
        "shl.",
        "shr.",
        "rcp.",
        "sqrt.",
        "rsqrt.",
        "cvt.",
        "setp.",
        "selp.",
        "popc.",
        "clz.",
        "brev.",
        "bfind.",
        "bfe.",
        "bfi.",
        "prmt.",
        "shf.",
        "lop3.",
        "copysign.",
    ];
    for w in want {
        assert!(texts.iter().any(|t| t.starts_with(w)), "no `{w}` drawn");
    }
    for ty in ["f32", "f64"] {
        for rnd in ["rn", "rz", "rm", "rp"] {
            for op in ["add", "mul", "fma", "div", "sqrt", "rcp"] {
                let form = format!("{op}.{rnd}");
                assert!(
                    texts
                        .iter()
                        .any(|t| t.starts_with(&form) && t.contains(&format!(".{ty} "))),
                    "no `{form}...{ty}` drawn"
                );
            }
        }
    }
    let missing: Vec<&str> = [
        "cvt.rni.s64.f64",
        "cvt.rm.f32.",
        "cvt.sat.u8.",
        "cvt.rzi.ftz.",
        ".f32.s64",
        ".s8.f64",
        "rcp.approx.ftz.f64",
        "div.full",
        "mad.hi.sat.s32",
        "add.sat.s32",
        "setp.ltu.f64",
        "setp.hs.u64",
        "setp.ne.b16",
        ".ftz.sat.f32",
        ".u16 %h",
    ]
    .into_iter()
    .filter(|form| !texts.iter().any(|t| t.contains(form)))
    .collect();
    assert!(missing.is_empty(), "not drawn: {missing:?}");
}
