//! 64-bit kernel parameters end to end: the conformance source of 64-bit
//! parameters run with `-D` values at the edges of each type, and the nvcc-style
//! `samples/ptx/daxpy.spu` (`double a`, `size_t n`) against a reference computed
//! here in f64, bit for bit, with its defaults and with `-D`.

use spu_emu::Machine;
use spu_tests::{repo_path, run_with};

#[test]
fn the_64_bit_parameter_conformance_source_takes_dash_d_values_whole() {
    let path = repo_path("tests/conformance/ld.param.64.spu");
    let (n, s, a, w) = (u64::MAX, i64::MIN, -0.3f64, 0xfedc_ba98_7654_3210u64);
    let ran = run_with(
        &path,
        &Machine::default(),
        &[
            "K=4294967295",
            "N=18446744073709551615",
            "S=-9223372036854775808",
            "A=-0.3",
            "W=0xfedc_ba98_7654_3210",
            "L=0",
        ],
    );
    let pair = |v: u64| [v as u32, (v >> 32) as u32];
    let mut want = vec![u32::MAX];
    want.extend(pair(n));
    want.extend(pair(n.wrapping_add(1)));
    want.extend(pair(s as u64));
    want.extend(pair((a + a).to_bits()));
    want.extend(pair(w));
    want.extend(pair(w));
    want.push(0);
    assert_eq!(ran.out_u32("out"), want);
}

fn machines() -> Vec<(&'static str, Machine)> {
    let mut m = Machine::default();
    for s in ["grid.cols=3", "grid.rows=2", "passes.mode=sequential"] {
        m.set(s).unwrap();
    }
    vec![("spu-4x4", Machine::default()), ("3x2 sequential", m)]
}

/// Runs daxpy.spu and checks Y = fma(X, A, Y) bit for bit (the kernel's `fma.rn.f64`,
/// rounded once), for the `n` elements of the run.
fn check_daxpy(defines: &[&str], n: usize, a: f64) {
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/ptx/daxpy.spu"), &m, defines);
        let (x, y) = (ran.in_f64("X"), ran.in_f64("Y"));
        assert_eq!(x.len(), n, "{name}");
        // Real doubles, not widened floats.
        assert!(x.iter().any(|v| f64::from(*v as f32) != *v), "{name}");
        let got = ran.out_f64("Y");
        for i in 0..n {
            let want = x[i].mul_add(a, y[i]);
            assert_eq!(
                got[i].to_bits(),
                want.to_bits(),
                "{name} {defines:?}: Y[{i}] is {}, want {want}",
                got[i]
            );
        }
    }
}

#[test]
fn daxpy_ptx_matches_an_f64_reference_with_its_defaults() {
    check_daxpy(&[], 4096, 2.5);
}

#[test]
fn daxpy_ptx_takes_size_t_and_double_from_dash_d() {
    // 1000 is not a multiple of the block size: the 64-bit bounds test matters. 0.1
    // and -1.25e-3 are not f32 values: the kernel must see the nearest doubles.
    check_daxpy(&["N=1000", "A=0.1"], 1000, 0.1);
    check_daxpy(&["N=0x101", "A=-1.25e-3"], 257, -1.25e-3);
}

/// Loads `src` (assembled) with the default machine.
fn loaded(src: &str) -> spu_emu::Image {
    let (bin, _) =
        spu_asm::assemble("k.spu", src).unwrap_or_else(|d| panic!("{}", d.render("k.spu", src)));
    let module = spu_isa::format::read_module(&bin).unwrap();
    spu_emu::load(module, &Machine::default(), &Default::default()).unwrap()
}

/// A buffer's initial elements as bit patterns.
fn elements(image: &spu_emu::Image, name: &str) -> Vec<u64> {
    let i = image
        .memory
        .regions()
        .iter()
        .position(|r| r.name == name)
        .unwrap();
    let r = &image.memory.regions()[i];
    (0..r.len as usize)
        .map(|e| spu_emu::load::init::element(image.memory.buffer(i), r.ty, e))
        .collect()
}

#[test]
fn sixty_four_bit_initialisers_reach_memory_exactly() {
    let image = loaded(
        ".global .u64 big = 9007199254740993;\n\
         .visible .global .b64 mask = 0xFFFFFFFFFFFFFFFF;\n\
         .global .s64 low = -9223372036854775808;\n\
         .global .s64 S[2] = const(-9223372036854775807);\n\
         .global .u64 U[2] = const(18446744073709551615);\n\
         .global .u64 R[3] = ramp(1152921504606846976, 1);\n\
         .global .s64 D[3] = ramp(-1152921504606846976, -1);\n\
         .entry k {\n    exit;\n}\n",
    );
    assert_eq!(elements(&image, "big"), [9_007_199_254_740_993]);
    assert_eq!(elements(&image, "mask"), [u64::MAX]);
    assert_eq!(elements(&image, "low"), [i64::MIN as u64]);
    assert_eq!(elements(&image, "S"), [(i64::MIN + 1) as u64; 2]);
    assert_eq!(elements(&image, "U"), [u64::MAX; 2]);
    // 2^60 + i: doubles would round every one of them to 2^60.
    let r: Vec<u64> = (0..3).map(|i| (1u64 << 60) + i).collect();
    assert_eq!(elements(&image, "R"), r);
    let d: Vec<u64> = (0..3).map(|i| (-(1i64 << 60) - i) as u64).collect();
    assert_eq!(elements(&image, "D"), d);
}

#[test]
fn buffers_honour_their_alignment() {
    let image = loaded(
        ".global .u8 a[3];\n.global .align 256 .u8 b[5];\n.visible .global .align 128 .u64 v;\n\
         .entry k {\n    exit;\n}\n",
    );
    for r in image.memory.regions() {
        assert_eq!(r.base % 256, 0, "{} at {:#x}", r.name, r.base);
    }
}
