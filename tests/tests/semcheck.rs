//! The differential corpus (`spu_tests::semcheck`): random kernels over the
//! value-computing instruction forms, run in timing mode, `--functional` and on
//! `gtx480`, every stored word compared with the independent reference. The
//! default run is small; `cargo test --release -p spu-tests --test semcheck --
//! --ignored` runs the large corpus (`SEMCHECK_KERNELS` sets its size).

use spu_tests::semcheck::reference::float::{self, F32, F64, Mode as Round};
use spu_tests::semcheck::{EXCLUDED, Mode, Piece, corpus, expected, input_words, kernel, run};

fn check(seed: u64, kernels: usize, len: usize, threads: usize) {
    let totals = corpus(seed, kernels, len, threads);
    let bad = &totals.bad;
    assert!(
        bad.is_empty(),
        "{} mismatches against the reference (of {} words):\n{}",
        bad.len(),
        totals.words,
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(
        totals.words >= kernels * 3 * threads * len,
        "only {} words compared",
        totals.words
    );
    eprintln!(
        "{kernels} kernels x 3 modes: {} thread-instructions, {} words compared, 0 mismatches",
        totals.thread_instructions, totals.words
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
    let want = expected(&k, &[]);
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert!(
        differ > want.len() / 8,
        "only {differ} of {} words differ",
        want.len()
    );
}

/// The instructions of 300 kernels as the large corpus draws them.
fn drawn_texts() -> Vec<String> {
    let mut texts = Vec::new();
    for seed in 0..300 {
        for piece in kernel(seed, 80, 64).pieces {
            match piece {
                Piece::Inst(i) => texts.push(i.text),
                Piece::Skip { body, .. } => texts.extend(body.into_iter().map(|i| i.text)),
            }
        }
    }
    texts
}

/// The row of the ISA table an instruction's text belongs to: the longest
/// mnemonic it starts with (`atom.global.cas` before `atom.global`).
fn row_of(text: &str) -> Option<&'static spu_isa::table::InstrSpec> {
    let name = text.split(' ').next().unwrap_or("").trim_end_matches(';');
    spu_isa::TABLE
        .iter()
        .filter(|s| {
            name == s.mnemonic
                || name
                    .strip_prefix(s.mnemonic)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
        .max_by_key(|s| s.mnemonic.len())
}

#[test]
fn every_row_of_the_isa_table_is_drawn_with_every_type_or_excluded_with_a_reason() {
    use spu_isa::table::{ModKind, allowed_names};
    let texts = drawn_texts();
    let mut problems = Vec::new();
    for (excluded, _) in EXCLUDED {
        if !spu_isa::TABLE.iter().any(|s| s.mnemonic == *excluded) {
            problems.push(format!(
                "`{excluded}` is excluded but is no row of the table"
            ));
        }
    }
    for spec in spu_isa::TABLE {
        let of_row: Vec<&str> = texts
            .iter()
            .filter(|t| row_of(t).is_some_and(|r| r.mnemonic == spec.mnemonic))
            .map(|t| t.split(' ').next().unwrap_or(""))
            .collect();
        let excluded = EXCLUDED.iter().any(|(m, _)| *m == spec.mnemonic);
        match (of_row.is_empty(), excluded) {
            (true, false) => problems.push(format!(
                "`{}` is neither drawn by the corpus nor in its exclusion list",
                spec.mnemonic
            )),
            (false, true) => problems.push(format!(
                "`{}` is drawn by the corpus but also in its exclusion list",
                spec.mnemonic
            )),
            _ => {}
        }
        let Some((allowed, _)) = spec.modifier(ModKind::Type) else {
            continue;
        };
        if excluded {
            continue;
        }
        for ty in allowed_names(ModKind::Type, allowed) {
            let (dot, end) = (format!(".{ty}."), format!(".{ty}"));
            if !of_row
                .iter()
                .any(|n| n.contains(&dot) || n.trim_end_matches(';').ends_with(&end))
            {
                problems.push(format!("`{}` is never drawn with .{ty}", spec.mnemonic));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_corpus_draws_every_value_computing_row_and_rounding_mode() {
    let texts = drawn_texts();
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

/// Every thread of two blocks updates the same global words, and every thread of
/// a block the same shared word, with operations whose final value does not depend
/// on the order of the lanes; the old values `atom.add` and `atom.inc` return are
/// then each value before the final one exactly once.
const CONTENDED: &str = "
.global .u32 out[400] = zeros;
.launch grid(2, 1) block(64) iu(32);
.entry contended {
    .reg .u32 %r<12>;
    .reg .u64 %rd<4>;
    .reg .f32 %f<2>;
    .reg .pred %p<2>;
    .shared .u32 sh[1];
    mov.u32 %r0, %ctaid.x;
    mov.u32 %r1, %tid.x;
    mad.lo.u32 %r2, %r0, 64, %r1;
    mov.u32 %r3, sh;
    mov.u32 %r4, out;
    mov.u32 %r6, 1;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r11, 0;
    @%p1 st.shared.u32 [%r3], %r11;
    bar.sync;
    shl.b32 %r7, %r2, 2;
    add.u32 %r7, %r7, %r4;
    atom.global.add.u32 %r5, [%r4], %r6;
    st.global.u32 [%r7+64], %r5;
    mad.lo.u32 %r9, %r2, 3, %r6;
    red.global.add.u32 [%r4+4], %r9;
    and.b32 %r9, %r2, 31;
    shl.b32 %r9, %r6, %r9;
    atom.global.or.b32 %r10, [%r4+8], %r9;
    mul.lo.u32 %r9, %r2, 40503;
    red.global.xor.b32 [%r4+12], %r9;
    mul.lo.u32 %r9, %r2, 37;
    rem.u32 %r9, %r9, 200;
    sub.s32 %r9, %r9, 100;
    atom.global.max.s32 %r10, [%r4+16], %r9;
    red.global.min.s32 [%r4+20], %r9;
    cvt.u64.u32 %rd1, %r2;
    shl.b64 %rd2, %rd1, 32;
    or.b64 %rd2, %rd2, %rd1;
    atom.global.add.u64 %rd3, [%r4+24], %rd2;
    mov.u32 %r9, 1000;
    atom.global.inc.u32 %r10, [%r4+32], %r9;
    st.global.u32 [%r7+576], %r10;
    atom.global.dec.u32 %r10, [%r4+36], %r9;
    mov.f32 %f1, 1.0;
    atom.global.add.f32 %f0, [%r4+40], %f1;
    atom.shared.add.u32 %r10, [%r3], %r6;
    st.global.u32 [%r7+1088], %r10;
    bar.sync;
    @%p1 ld.shared.u32 %r11, [%r3];
    shl.b32 %r8, %r0, 2;
    add.u32 %r8, %r8, %r4;
    @%p1 st.global.u32 [%r8+44], %r11;
    exit;
}
";

#[test]
fn contended_atomics_give_order_independent_results_in_every_mode() {
    let values = |f: &dyn Fn(u32) -> u32| (0..128u32).map(f).collect::<Vec<u32>>();
    let signed = values(&|t| ((t * 37 % 200) as i32 - 100) as u32);
    let max = signed.iter().map(|&v| v as i32).max().unwrap().max(0);
    let min = signed.iter().map(|&v| v as i32).min().unwrap().min(0);
    let sum3 = values(&|t| 3 * t + 1)
        .iter()
        .fold(0u32, |s, v| s.wrapping_add(*v));
    let xor = values(&|t| t.wrapping_mul(40503))
        .iter()
        .fold(0, |s, v| s ^ v);
    let wide: u64 = (0..128u64).map(|t| t << 32 | t).sum();
    let want_words: [(usize, u32, &str); 12] = [
        (0, 128, "atom.global.add.u32"),
        (1, sum3, "red.global.add.u32"),
        (2, u32::MAX, "atom.global.or.b32"),
        (3, xor, "red.global.xor.b32"),
        (4, max as u32, "atom.global.max.s32"),
        (5, min as u32, "red.global.min.s32"),
        (6, wide as u32, "atom.global.add.u64 (low word)"),
        (7, (wide >> 32) as u32, "atom.global.add.u64 (high word)"),
        (8, 128, "atom.global.inc.u32"),
        (9, 1000 - 127, "atom.global.dec.u32"),
        (10, 128f32.to_bits(), "atom.global.add.f32 of 1.0"),
        (11, 64, "atom.shared.add.u32, block 0"),
    ];
    for mode in Mode::ALL {
        let out = run(CONTENDED, &[], mode).unwrap_or_else(|e| panic!("{e}"));
        for (w, want, what) in want_words {
            assert_eq!(out[w], want, "{mode:?}: {what}: got {:#x}", out[w]);
        }
        assert_eq!(out[12], 64, "{mode:?}: atom.shared.add.u32, block 1");
        let sorted = |range: std::ops::Range<usize>| {
            let mut v = out[range].to_vec();
            v.sort_unstable();
            v
        };
        let all: Vec<u32> = (0..128).collect();
        assert_eq!(sorted(16..144), all, "{mode:?}: old values of atom.add");
        assert_eq!(sorted(144..272), all, "{mode:?}: old values of atom.inc");
        let block: Vec<u32> = (0..64).collect();
        for b in 0..2 {
            let at = 272 + 64 * b;
            assert_eq!(
                sorted(at..at + 64),
                block,
                "{mode:?}: old values of atom.shared.add, block {b}"
            );
        }
    }
}
