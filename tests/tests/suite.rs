//! The stencil suite (`samples/suite/`): each SPU and GPU kernel against a plain
//! Rust reference that computes in the kernel's precision and order, on SPU grids of
//! one pass and several (IUs and DMA engines, both pass modes), on `gtx480`, and in
//! `--functional`; and the off-chip words against the formulas of the suite's
//! README.

use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const JACOBI_PC: &str = "samples/suite/jacobi2d_pc.spu";
const JACOBI_GPU: &str = "samples/suite/jacobi2d_gpu.spu";

/// Words in one CB (a spilling virtual IU moves a whole CB per rendezvous).
const CB_WORDS: u64 = 1024;

fn spu(grid: &str, sets: &[&str]) -> Machine {
    let mut m = Machine::default();
    m.set_grid(grid).unwrap();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

fn gpu(preset: &str, sms: usize) -> Machine {
    let mut m = spu_emu::machine::preset(preset).unwrap();
    m.set(&format!("grid.cols={sms}")).unwrap();
    m
}

/// The SPU machines every kernel is checked on: one pass and several, both pass
/// modes, IUs and DMA engines.
fn spu_machines() -> Vec<Machine> {
    let mut out = Vec::new();
    for (grid, mode) in [
        ("4x4", "overlapped"),
        ("2x2", "overlapped"),
        ("2x2", "sequential"),
        ("1x1", "overlapped"),
        ("3x2", "overlapped"),
    ] {
        for boundary in ["iu", "dma"] {
            out.push(spu(
                grid,
                &[
                    &format!("passes.mode={mode}"),
                    &format!("boundary.kind={boundary}"),
                ],
            ));
        }
    }
    out
}

fn offchip(ran: &Ran) -> u64 {
    ran.result.traffic.load_words + ran.result.traffic.store_words
}

/// Words a GPU kernel moved as `.f32` data (flags and tickets are `.u32`).
fn data_words(ran: &Ran, m: &Machine) -> u64 {
    let stats = spu_emu::observe::stats::Stats::new(&ran.result, &ran.before, m);
    stats
        .pcs
        .iter()
        .filter(|pc| pc.text.as_deref().unwrap_or("").contains(".global.f32"))
        .map(|pc| pc.threads)
        .sum()
}

/// Runs `kernel` in functional mode and checks it leaves the same buffers and
/// off-chip counts as the timed run `timed`.
fn same_in_functional(kernel: &str, m: &Machine, defines: &[String], timed: &Ran, bufs: &[&str]) {
    let options = spu_emu::LoadOptions {
        defines: defines.to_vec(),
        ..Default::default()
    };
    let control = spu_emu::RunControl {
        functional: true,
        ..Default::default()
    };
    let run = spu_emu::cli::session::run_file(&repo_path(kernel), m, &options, control).unwrap();
    for buf in bufs {
        let i = run
            .image
            .memory
            .regions()
            .iter()
            .position(|r| r.name == *buf)
            .unwrap();
        assert_eq!(
            run.image.memory.buffer(i),
            &timed.out_u32(buf)[..],
            "{kernel} functional: {buf}"
        );
    }
    if !m.is_gpu() {
        assert_eq!(
            run.result.traffic, timed.result.traffic,
            "{kernel}: traffic"
        );
    }
}

// ---------------------------------------------------------------- jacobi-2d

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
        for m in spu_machines() {
            let ran = check_jacobi(JACOBI_PC, n, tsteps, &m);
            let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
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
