//! PolyBench jacobi-2d (`jacobi2d_pc.spu`, `jacobi2d_gpu.spu`).

use crate::common::*;
use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const JACOBI_PC: &str = "samples/suite/jacobi2d_pc.spu";
const JACOBI_GPU: &str = "samples/suite/jacobi2d_gpu.spu";

/// PolyBench jacobi-2d in f32, in its order of additions: returns (A, B).
fn jacobi2d(n: usize, tsteps: usize, a: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    let half = |src: &[f32], dst: &mut [f32]| {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let at = |r: usize, c: usize| src[r * n + c];
                dst[i * n + j] =
                    0.2f32 * (at(i, j) + at(i, j - 1) + at(i, j + 1) + at(i + 1, j) + at(i - 1, j));
            }
        }
    };
    for _ in 0..tsteps {
        half(&a, &mut b);
        half(&b, &mut a);
    }
    (a, b)
}

fn jacobi_defines(n: usize, tsteps: usize) -> Vec<String> {
    vec![format!("N={n}"), format!("TSTEPS={tsteps}")]
}

fn check_jacobi(kernel: &str, n: usize, tsteps: usize, m: &Machine) -> Ran {
    let defines = jacobi_defines(n, tsteps);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let (a, b) = jacobi2d(n, tsteps, &ran.in_f32("A"), &ran.in_f32("B"));
    let what = format!("{kernel} N={n} TSTEPS={tsteps} on {}", m.summary());
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(ran.out_f32("A"), a, "{what}: A");
    assert_eq!(ran.out_f32("B"), b, "{what}: B");
    ran
}

/// SPU jacobi-2d: `N^2` (A) + `4(N-1)` (the edge of B) in, `2(N-2)^2` out, and per
/// link between two passes one CB spilled and restored per exchange batch.
fn jacobi_spu_words(n: usize, tsteps: usize, p: usize, q: usize) -> (u64, u64) {
    let g = (n + 2 * tsteps + 1).div_ceil(32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    let batches = (2 * tsteps + 1).div_ceil(15) as u64;
    let links = ((nx - 1) * g + (ny - 1) * g) as u64;
    let spill = links * batches * CB_WORDS;
    let io = (n * n + 4 * (n - 1) + 2 * (n - 2) * (n - 2)) as u64;
    (io + 2 * spill, spill)
}

/// GPU jacobi-2d data words: per half-step the interior in and out and, per tile,
/// its four halo edges: `2T * (2(N-2)^2 + 4(N-2)G)`, G = cdiv(N-2, 32).
fn jacobi_gpu_words(n: usize, tsteps: usize) -> u64 {
    let g = (n - 2).div_ceil(32);
    (2 * tsteps * (2 * (n - 2) * (n - 2) + 4 * (n - 2) * g)) as u64
}

#[test]
fn jacobi2d_spu_matches_the_reference_on_one_pass_and_several() {
    for (n, tsteps) in [(30, 20), (40, 3)] {
        let g = (n + 2 * tsteps + 1_usize).div_ceil(32);
        for m in spu_machines().into_iter().chain(fold_machines(g, g)) {
            let ran = check_jacobi(JACOBI_PC, n, tsteps, &m);
            let (p, q) = window(&m);
            let (words, spill) = jacobi_spu_words(n, tsteps, p, q);
            let what = format!("N={n} TSTEPS={tsteps} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

#[test]
fn jacobi2d_gpu_matches_the_reference() {
    for (preset, sms, n, tsteps) in [
        ("gtx480", 15, 30, 20),
        ("gtx480", 4, 70, 3),
        ("gtx480-1cta", 15, 70, 3),
    ] {
        let m = gpu(preset, sms);
        let ran = check_jacobi(JACOBI_GPU, n, tsteps, &m);
        assert_eq!(
            data_words(&ran, &m),
            jacobi_gpu_words(n, tsteps),
            "{preset} N={n} TSTEPS={tsteps}"
        );
    }
    // It needs no CBs, so an SPU runs it too.
    check_jacobi(JACOBI_GPU, 30, 4, &spu("2x2", &[]));
}

#[test]
fn jacobi2d_functional_mode_agrees() {
    let defines = jacobi_defines(30, 5);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [
        (JACOBI_PC, spu("2x2", &[])),
        (JACOBI_PC, spu("2x2", &["boundary.kind=dma"])),
        (JACOBI_GPU, gpu("gtx480", 15)),
    ] {
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["A", "B"]);
    }
}

/// PolyBench's SMALL (N = 90, 40 steps) and MEDIUM (N = 250, 100 steps) datasets.
#[test]
#[ignore = "large: run with --ignored"]
fn jacobi2d_polybench_sizes() {
    for (n, tsteps) in [(90, 40), (250, 100)] {
        let m = Machine::default();
        let ran = check_jacobi(JACOBI_PC, n, tsteps, &m);
        assert_eq!(offchip(&ran), jacobi_spu_words(n, tsteps, 4, 4).0);
        let g = gpu("gtx480", 15);
        let ran = check_jacobi(JACOBI_GPU, n, tsteps, &g);
        assert_eq!(data_words(&ran, &g), jacobi_gpu_words(n, tsteps));
    }
}
