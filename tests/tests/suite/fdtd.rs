//! PolyBench fdtd-2d (`fdtd2d_pc.spu`, `fdtd2d_gpu.spu`).

use crate::common::*;
use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const FDTD_PC: &str = "samples/suite/fdtd2d_pc.spu";
const FDTD_GPU: &str = "samples/suite/fdtd2d_gpu.spu";

/// The three fields after the time loop.
struct Fields {
    ex: Vec<f32>,
    ey: Vec<f32>,
    hz: Vec<f32>,
}

/// PolyBench fdtd-2d (`kernel_fdtd_2d`) in f32, in its order of operations.
fn fdtd2d(nx: usize, ny: usize, tmax: usize, start: Fields, fict: &[f32]) -> Fields {
    let Fields {
        mut ex,
        mut ey,
        mut hz,
    } = start;
    for &f in &fict[..tmax] {
        ey[..ny].fill(f);
        for i in 1..nx {
            for j in 0..ny {
                ey[i * ny + j] -= 0.5f32 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
            }
        }
        for i in 0..nx {
            for j in 1..ny {
                ex[i * ny + j] -= 0.5f32 * (hz[i * ny + j] - hz[i * ny + j - 1]);
            }
        }
        for i in 0..nx - 1 {
            for j in 0..ny - 1 {
                let c = i * ny + j;
                hz[c] -= 0.7f32 * (ex[c + 1] - ex[c] + ey[c + ny] - ey[c]);
            }
        }
    }
    Fields { ex, ey, hz }
}

fn fdtd_defines(nx: usize, ny: usize, tmax: usize) -> Vec<String> {
    vec![
        format!("NX={nx}"),
        format!("NY={ny}"),
        format!("TMAX={tmax}"),
    ]
}

fn check_fdtd(kernel: &str, nx: usize, ny: usize, tmax: usize, m: &Machine) -> Ran {
    let defines = fdtd_defines(nx, ny, tmax);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let start = Fields {
        ex: ran.in_f32("ex"),
        ey: ran.in_f32("ey"),
        hz: ran.in_f32("hz"),
    };
    let want = fdtd2d(nx, ny, tmax, start, &ran.in_f32("fict"));
    let what = format!("{kernel} NX={nx} NY={ny} TMAX={tmax} on {}", m.summary());
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(ran.out_f32("ex"), want.ex, "{what}: ex");
    assert_eq!(ran.out_f32("ey"), want.ey, "{what}: ey");
    assert_eq!(ran.out_f32("hz"), want.hz, "{what}: hz");
    assert_eq!(ran.out_f32("fict"), ran.in_f32("fict"), "{what}: fict");
    ran
}

/// The words every machine must move: the fields in (`ex`, `hz`, and `ey` but its
/// row 0, which the first step overwrites unread) and the cells the time loop
/// updates out (`ey`; `ex` but its column 0; `hz` but its last row and column).
fn fdtd_io_words(nx: usize, ny: usize) -> (u64, u64) {
    let load = nx * ny + (nx - 1) * ny + nx * ny;
    let store = nx * ny + nx * (ny - 1) + (nx - 1) * (ny - 1);
    (load as u64, store as u64)
}

/// SPU fdtd-2d: the necessary words, `fict[t]` once per block of the block row
/// that holds ey's row 0 at level `t + 1` (`Gc * TMAX`), and per link between two
/// passes one CB spilled and restored per batch of 10 of the `TMAX + 1` exchanged
/// levels. Gc = cdiv(NY + TMAX + 1, 32) blocks a row, Gr = cdiv(NX + TMAX + 1, 32)
/// a column. Returns (words, spilled).
fn fdtd_spu_words(nx: usize, ny: usize, tmax: usize, p: usize, q: usize) -> (u64, u64) {
    let (gc, gr) = ((ny + tmax + 1).div_ceil(32), (nx + tmax + 1).div_ceil(32));
    let (passes_x, passes_y) = (gc.div_ceil(p), gr.div_ceil(q));
    let links = ((passes_x - 1) * gr + (passes_y - 1) * gc) as u64;
    let spill = links * (tmax + 1).div_ceil(10) as u64 * CB_WORDS;
    let (load, store) = fdtd_io_words(nx, ny);
    (load + store + (gc * tmax) as u64 + 2 * spill, spill)
}

#[test]
fn fdtd2d_spu_matches_the_reference_on_one_pass_and_several() {
    // MINI (2x2 blocks), a taller grid of three batches, and a tiny one.
    for (nx, ny, tmax) in [(20, 30, 20), (40, 20, 25), (3, 5, 2)] {
        let (gc, gr) = (
            (ny + tmax + 1_usize).div_ceil(32),
            (nx + tmax + 1_usize).div_ceil(32),
        );
        for m in spu_machines().into_iter().chain(fold_machines(gc, gr)) {
            let ran = check_fdtd(FDTD_PC, nx, ny, tmax, &m);
            let (p, q) = window(&m);
            let (words, spill) = fdtd_spu_words(nx, ny, tmax, p, q);
            let what = format!("NX={nx} NY={ny} TMAX={tmax} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

/// GPU fdtd-2d data words, per time step: phase ey/ex reads hz's tiles with
/// their north and west halos (`NX NY + (Gr-1) NY + (Gc-1) NX`), ey but its row 0,
/// ex but its column 0 and `fict[t]` once per tile of the first tile row (`Gc`),
/// and writes ey and ex but its column 0; phase hz reads ex's tiles with their east
/// halos and ey's with their south halos, and reads and writes hz but its last row
/// and column. Gr = cdiv(NX, 32), Gc = cdiv(NY, 32).
fn fdtd_gpu_words(nx: usize, ny: usize, tmax: usize) -> u64 {
    let (gr, gc) = (nx.div_ceil(32), ny.div_ceil(32));
    let halos = (gr - 1) * ny + (gc - 1) * nx;
    let eyex = nx * ny + halos + (nx - 1) * ny + nx * ny + 2 * nx * (ny - 1) + gc;
    let hz = 2 * nx * ny + halos + 2 * (nx - 1) * (ny - 1);
    (tmax * (eyex + hz)) as u64
}

#[test]
fn fdtd2d_gpu_matches_the_reference() {
    for (preset, sms, nx, ny, tmax) in [
        ("gtx480", 15, 20, 30, 20),
        ("gtx480", 4, 70, 40, 3),
        ("gtx480-1cta", 15, 40, 70, 4),
        ("gtx480", 15, 3, 5, 2),
    ] {
        let m = gpu(preset, sms);
        let ran = check_fdtd(FDTD_GPU, nx, ny, tmax, &m);
        assert_eq!(
            data_words(&ran, &m),
            fdtd_gpu_words(nx, ny, tmax),
            "{preset} NX={nx} NY={ny} TMAX={tmax}"
        );
    }
    // It needs no CBs, so an SPU runs it too.
    check_fdtd(FDTD_GPU, 20, 30, 5, &spu("2x2", &[]));
}

#[test]
fn fdtd2d_functional_mode_agrees() {
    let defines = fdtd_defines(40, 20, 12);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [
        (FDTD_PC, spu("2x2", &[])),
        (FDTD_PC, spu("2x2", &["boundary.kind=dma"])),
        (FDTD_GPU, gpu("gtx480", 15)),
    ] {
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["ex", "ey", "hz"]);
    }
}

/// PolyBench's SMALL (60 x 80, 40 steps: 4x4 blocks, one pass on 4x4) and MEDIUM
/// (200 x 240, 100 steps: 11x10 blocks, 3x3 passes) datasets.
#[test]
#[ignore = "large: run with --ignored"]
fn fdtd2d_polybench_sizes() {
    for (nx, ny, tmax) in [(60, 80, 40), (200, 240, 100)] {
        let ran = check_fdtd(FDTD_PC, nx, ny, tmax, &Machine::default());
        assert_eq!(offchip(&ran), fdtd_spu_words(nx, ny, tmax, 4, 4).0);
        let g = gpu("gtx480", 15);
        let ran = check_fdtd(FDTD_GPU, nx, ny, tmax, &g);
        assert_eq!(data_words(&ran, &g), fdtd_gpu_words(nx, ny, tmax));
    }
}
