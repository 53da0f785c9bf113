//! The one-step 3-D stencils: the 27-point stencil and PolyBench heat-3d.

use crate::common::*;
use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const S27_PC: &str = "samples/suite/stencil27_pc.spu";
const S27_GPU: &str = "samples/suite/stencil27_gpu.spu";
const HEAT_PC: &str = "samples/suite/heat3d_pc.spu";
const HEAT_GPU: &str = "samples/suite/heat3d_gpu.spu";

/// One step of a 3-D stencil over `A[k][n][n]`: `B` with its interior
/// (`1 <= z <= k-2`, `1 <= y, x <= n-2`) replaced by `f(at)`, where `at(dz, dy, dx)`
/// reads `A` around the cell.
fn step3d(
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    f: impl Fn(&dyn Fn(isize, isize, isize) -> f32) -> f32,
) -> Vec<f32> {
    let mut out = b.to_vec();
    for z in 1..k - 1 {
        for y in 1..n - 1 {
            for x in 1..n - 1 {
                let at = |dz: isize, dy: isize, dx: isize| {
                    let (z, y, x) = (z as isize + dz, y as isize + dy, x as isize + dx);
                    a[((z as usize) * n + y as usize) * n + x as usize]
                };
                out[(z * n + y) * n + x] = f(&at);
            }
        }
    }
    out
}

/// The 27-point stencil of `stencil27_pc.spu`: `((c0*C + c1*F) + c2*E) + c3*V`, each
/// sum in lexicographic `(dz, dy, dx)` order.
fn stencil27(n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
    let coef = [0.25f32, 0.0625, 0.015625, 0.0234375];
    step3d(n, k, a, b, |at| {
        let mut s = coef[0] * at(0, 0, 0);
        for (far, c) in coef.iter().enumerate().skip(1) {
            let mut sum: Option<f32> = None;
            for dz in -1..=1isize {
                for dy in -1..=1isize {
                    for dx in -1..=1isize {
                        if (dz != 0) as usize + (dy != 0) as usize + (dx != 0) as usize == far {
                            let v = at(dz, dy, dx);
                            sum = Some(sum.map_or(v, |s| s + v));
                        }
                    }
                }
            }
            s += c * sum.unwrap();
        }
        s
    })
}

/// PolyBench heat-3d's half-step A -> B in f32, in its order of operations.
fn heat3d(n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
    step3d(n, k, a, b, |at| {
        let c = at(0, 0, 0);
        let two = 2.0f32 * c;
        let t1 = 0.125f32 * (at(1, 0, 0) - two + at(-1, 0, 0));
        let t2 = 0.125f32 * (at(0, 1, 0) - two + at(0, -1, 0));
        let t3 = 0.125f32 * (at(0, 0, 1) - two + at(0, 0, -1));
        t1 + t2 + t3 + c
    })
}

type Step3d = fn(usize, usize, &[f32], &[f32]) -> Vec<f32>;

fn check_3d(kernel: &str, reference: Step3d, n: usize, k: usize, m: &Machine) -> Ran {
    let defines = [format!("N={n}"), format!("K={k}")];
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let want = reference(n, k, &ran.in_f32("A"), &ran.in_f32("B"));
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(
        ran.out_f32("B"),
        want,
        "{kernel} N={n} K={k} on {}",
        m.summary()
    );
    assert_eq!(
        ran.out_f32("A"),
        ran.in_f32("A"),
        "{kernel}: A is read only"
    );
    ran
}

/// SPU 3-D stencil: `N^2 K` in (each block loads its own tile of every plane; the
/// halos cross the CBs), `(N-2)^2 (K-2)` out, and per link between two passes one
/// CB spilled and restored per batch of 15 planes. Returns (words, spilled).
fn spu3d_words(n: usize, k: usize, p: usize, q: usize) -> (u64, u64) {
    let g = n.div_ceil(32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    let links = ((nx - 1) * g + (ny - 1) * g) as u64;
    let spill = links * k.div_ceil(15) as u64 * CB_WORDS;
    let io = (n * n * k + (n - 2) * (n - 2) * (k - 2)) as u64;
    (io + 2 * spill, spill)
}

/// GPU 3-D stencil: every block loads every plane of its tile with its halo (the
/// four edges, and the four corner columns when `corners`), and writes the interior:
/// `K((N-2)^2 + 4(N-2)G [+ 4G^2]) + (N-2)^2 (K-2)`, G = cdiv(N-2, 32).
fn gpu3d_words(n: usize, k: usize, corners: bool) -> u64 {
    let g = (n - 2).div_ceil(32);
    let plane = (n - 2) * (n - 2) + 4 * (n - 2) * g + if corners { 4 * g * g } else { 0 };
    (k * plane + (n - 2) * (n - 2) * (k - 2)) as u64
}

fn check_3d_spu(kernel: &str, reference: Step3d, sizes: &[(usize, usize)]) {
    for &(n, k) in sizes {
        let g = n.div_ceil(32);
        for m in spu_machines().into_iter().chain(fold_machines(g, g)) {
            let ran = check_3d(kernel, reference, n, k, &m);
            let (p, q) = window(&m);
            let (words, spill) = spu3d_words(n, k, p, q);
            let what = format!("{kernel} N={n} K={k} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

fn check_3d_gpu(kernel: &str, reference: Step3d, corners: bool, sizes: &[(usize, usize)]) {
    for &(n, k) in sizes {
        for (preset, sms) in [("gtx480", 15), ("gtx480", 2), ("gtx480-1cta", 15)] {
            let m = gpu(preset, sms);
            let ran = check_3d(kernel, reference, n, k, &m);
            assert_eq!(
                offchip(&ran),
                gpu3d_words(n, k, corners),
                "{preset} N={n} K={k}"
            );
        }
    }
    // It needs no CBs, so an SPU runs it too.
    check_3d(kernel, reference, 20, 6, &spu("2x2", &[]));
}

/// Runs `kernel` twice, the second time on the first's output (`--load A=` the
/// dumped `B`, `B=` the first's `A`): two steps of a time loop, as launches.
fn two_steps(kernel: &str, n: usize, k: usize, m: &Machine) -> (Ran, Ran) {
    let defines = [format!("N={n}"), format!("K={k}")];
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let first = run_with(&repo_path(kernel), m, &d);
    let dir = tempfile::tempdir().unwrap();
    let shape = [k as u64, n as u64, n as u64];
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    spu_emu::load::npy::write(&a, spu_isa::Ty::F32, &shape, &first.out_u32("B")).unwrap();
    spu_emu::load::npy::write(&b, spu_isa::Ty::F32, &shape, &first.in_u32("A")).unwrap();
    let loads = [format!("A={}", a.display()), format!("B={}", b.display())];
    let second = spu_tests::run_loaded(&repo_path(kernel), m, &d, &loads);
    (first, second)
}

#[test]
fn stencil27_spu_matches_the_reference_on_one_pass_and_several() {
    check_3d_spu(S27_PC, stencil27, &[(40, 20), (70, 17), (5, 3)]);
}

#[test]
fn stencil27_gpu_matches_the_reference() {
    check_3d_gpu(S27_GPU, stencil27, true, &[(40, 20), (70, 5)]);
}

#[test]
fn stencil27_two_steps_chain_as_two_launches() {
    for (kernel, m) in [(S27_PC, spu("1x1", &[])), (S27_GPU, gpu("gtx480", 15))] {
        let (first, second) = two_steps(kernel, 40, 9, &m);
        let (a, b) = (first.in_f32("A"), first.in_f32("B"));
        let b1 = stencil27(40, 9, &a, &b);
        assert_eq!(second.out_f32("B"), stencil27(40, 9, &b1, &a), "{kernel}");
    }
}

#[test]
fn stencil3d_functional_mode_agrees() {
    let defines = vec!["N=40".to_string(), "K=9".to_string()];
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [
        (S27_PC, spu("1x1", &[])),
        (S27_PC, spu("1x1", &["boundary.kind=dma"])),
        (S27_GPU, gpu("gtx480", 15)),
        (HEAT_PC, spu("1x1", &[])),
        (HEAT_GPU, gpu("gtx480", 15)),
    ] {
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["A", "B"]);
    }
}

/// PolyBench heat-3d MINI (N = 10) and SMALL (N = 20), and sizes of two and three
/// blocks a side.
#[test]
fn heat3d_spu_matches_the_reference_on_one_pass_and_several() {
    check_3d_spu(HEAT_PC, heat3d, &[(10, 10), (20, 20), (40, 7), (66, 4)]);
}

#[test]
fn heat3d_gpu_matches_the_reference() {
    check_3d_gpu(HEAT_GPU, heat3d, false, &[(10, 10), (20, 20), (40, 7)]);
}

/// One PolyBench time step (A -> B, then B -> A) as two launches with the arrays
/// swapped.
#[test]
fn heat3d_time_step_is_two_launches() {
    for (kernel, m) in [(HEAT_PC, spu("2x2", &[])), (HEAT_GPU, gpu("gtx480", 15))] {
        let (first, second) = two_steps(kernel, 20, 20, &m);
        let (a, b) = (first.in_f32("A"), first.in_f32("B"));
        let b1 = heat3d(20, 20, &a, &b);
        let a1 = heat3d(20, 20, &b1, &a);
        assert_eq!(second.out_f32("B"), a1, "{kernel}");
    }
}

/// PolyBench heat-3d MEDIUM (N = 40) and the 27-point stencil at 128^2 x 64 (4x4
/// blocks: one pass on 4x4, 2x2 passes on 2x2).
#[test]
#[ignore = "large: run with --ignored"]
fn stencil3d_large_sizes() {
    check_3d_spu(HEAT_PC, heat3d, &[(40, 40)]);
    check_3d_gpu(HEAT_GPU, heat3d, false, &[(40, 40)]);
    check_3d_spu(S27_PC, stencil27, &[(128, 64)]);
    check_3d_gpu(S27_GPU, stencil27, true, &[(128, 64)]);
}
