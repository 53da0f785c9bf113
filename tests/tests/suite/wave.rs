//! The second-order-in-time wave equation (`wave2d_pc.spu`, `wave2d_gpu.spu`).

use crate::common::*;
use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const WAVE_PC: &str = "samples/suite/wave2d_pc.spu";
const WAVE_GPU: &str = "samples/suite/wave2d_gpu.spu";

/// The kernels' default squared Courant number.
const C2: f32 = 0.25;

/// The leapfrog wave equation in f32, in the kernels' order of operations:
/// `u' = (2u - u_old) + C2 * ((((N + S) + W) + E) - 4u)` over the interior, `TSTEPS`
/// times, each step writing over the older array. Returns (U0, U1).
fn wave2d(n: usize, tsteps: usize, c2: f32, u0: &[f32], u1: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut u = [u0.to_vec(), u1.to_vec()];
    for step in 1..=tsteps {
        // u^{step+1} replaces u^{step-1} in U[(step+1) % 2].
        let (cur, old) = ((step % 2), (step + 1) % 2);
        let src = u[cur].clone();
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let at = |r: usize, c: usize| src[r * n + c];
                let c = at(i, j);
                let lap = at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0f32 * c;
                let dst = &mut u[old][i * n + j];
                *dst = (2.0f32 * c - *dst) + c2 * lap;
            }
        }
    }
    let [a, b] = u;
    (a, b)
}

fn wave_defines(n: usize, tsteps: usize) -> Vec<String> {
    vec![format!("N={n}"), format!("TSTEPS={tsteps}")]
}

fn check_wave(kernel: &str, n: usize, tsteps: usize, m: &Machine) -> Ran {
    let defines = wave_defines(n, tsteps);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let (u0, u1) = wave2d(n, tsteps, C2, &ran.in_f32("U0"), &ran.in_f32("U1"));
    let what = format!("{kernel} N={n} TSTEPS={tsteps} on {}", m.summary());
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(ran.out_f32("U0"), u0, "{what}: U0");
    assert_eq!(ran.out_f32("U1"), u1, "{what}: U1");
    ran
}

/// SPU wave equation: both arrays in (`2N^2`), both interiors out (`2(N-2)^2`), and
/// per link between two passes one CB spilled and restored per batch of 15 of the
/// `TSTEPS + 1` exchanged levels. G = cdiv(N + TSTEPS + 1, 32).
fn wave_spu_words(n: usize, tsteps: usize, p: usize, q: usize) -> (u64, u64) {
    let g = (n + tsteps + 1).div_ceil(32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    let batches = (tsteps + 1).div_ceil(15) as u64;
    let links = ((nx - 1) * g + (ny - 1) * g) as u64;
    let spill = links * batches * CB_WORDS;
    let io = (2 * n * n + 2 * (n - 2) * (n - 2)) as u64;
    (io + 2 * spill, spill)
}

/// GPU wave equation data words: per step the interior of the newer array with
/// each tile's four halo edges, and the interior of the older array in and out:
/// `TSTEPS * (3(N-2)^2 + 4(N-2)G)`, G = cdiv(N-2, 32).
fn wave_gpu_words(n: usize, tsteps: usize) -> u64 {
    let g = (n - 2).div_ceil(32);
    (tsteps * (3 * (n - 2) * (n - 2) + 4 * (n - 2) * g)) as u64
}

#[test]
fn wave2d_spu_matches_the_reference_on_one_pass_and_several() {
    // The default (N = 30, 40 steps: 3x3 blocks) and an odd number of steps.
    for (n, tsteps) in [(30, 40), (40, 3)] {
        let g = (n + tsteps + 1_usize).div_ceil(32);
        for m in spu_machines().into_iter().chain(fold_machines(g, g)) {
            let ran = check_wave(WAVE_PC, n, tsteps, &m);
            let (p, q) = window(&m);
            let (words, spill) = wave_spu_words(n, tsteps, p, q);
            let what = format!("N={n} TSTEPS={tsteps} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

#[test]
fn wave2d_courant_number_is_a_parameter() {
    let defines = ["N=30", "TSTEPS=7", "C2=0.375"];
    let ran = run_with(&repo_path(WAVE_PC), &spu("2x2", &[]), &defines);
    let (u0, u1) = wave2d(30, 7, 0.375, &ran.in_f32("U0"), &ran.in_f32("U1"));
    assert_eq!(ran.out_f32("U0"), u0);
    assert_eq!(ran.out_f32("U1"), u1);
}

#[test]
fn wave2d_gpu_matches_the_reference() {
    for (preset, sms, n, tsteps) in [
        ("gtx480", 15, 30, 40),
        ("gtx480", 4, 70, 3),
        ("gtx480-1cta", 15, 70, 4),
    ] {
        let m = gpu(preset, sms);
        let ran = check_wave(WAVE_GPU, n, tsteps, &m);
        assert_eq!(
            data_words(&ran, &m),
            wave_gpu_words(n, tsteps),
            "{preset} N={n} TSTEPS={tsteps}"
        );
    }
    // It needs no CBs, so an SPU runs it too.
    check_wave(WAVE_GPU, 30, 5, &spu("2x2", &[]));
}

#[test]
fn wave2d_functional_mode_agrees() {
    let defines = wave_defines(30, 9);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [
        (WAVE_PC, spu("2x2", &[])),
        (WAVE_PC, spu("2x2", &["boundary.kind=dma"])),
        (WAVE_GPU, gpu("gtx480", 15)),
    ] {
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["U0", "U1"]);
    }
}

/// jacobi-2d's SMALL (N = 90) and MEDIUM (N = 250) grids with as many sweeps (80
/// and 200 steps).
#[test]
#[ignore = "large: run with --ignored"]
fn wave2d_polybench_sized_grids() {
    for (n, tsteps) in [(90, 80), (250, 200)] {
        let ran = check_wave(WAVE_PC, n, tsteps, &Machine::default());
        assert_eq!(offchip(&ran), wave_spu_words(n, tsteps, 4, 4).0);
        let g = gpu("gtx480", 15);
        let ran = check_wave(WAVE_GPU, n, tsteps, &g);
        assert_eq!(data_words(&ran, &g), wave_gpu_words(n, tsteps));
    }
}
