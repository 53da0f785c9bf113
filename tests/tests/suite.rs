//! The stencil suite (`samples/suite/`): each SPU and GPU kernel against a plain
//! Rust reference that computes in the kernel's precision and order, on SPU grids of
//! one pass and several (IUs and DMA engines, both pass modes), on `gtx480`, and in
//! `--functional`; and the off-chip words against the formulas of the suite's
//! README.

use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const JACOBI_PC: &str = "samples/suite/jacobi2d_pc.spu";
const JACOBI_GPU: &str = "samples/suite/jacobi2d_gpu.spu";
const S27_PC: &str = "samples/suite/stencil27_pc.spu";
const S27_GPU: &str = "samples/suite/stencil27_gpu.spu";
const HEAT_PC: &str = "samples/suite/heat3d_pc.spu";
const HEAT_GPU: &str = "samples/suite/heat3d_gpu.spu";
const HOT_PC: &str = "samples/suite/hotspot_pc.spu";
const HOT_GPU: &str = "samples/suite/hotspot_gpu.spu";
const HOT3_PC: &str = "samples/suite/hotspot3d_pc.spu";
const HOT3_GPU: &str = "samples/suite/hotspot3d_gpu.spu";

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

// ------------------------------------------------------- 3-D stencils, one step

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
        for m in spu_machines() {
            let ran = check_3d(kernel, reference, n, k, &m);
            let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
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

// ---------------------------------------------------------------- hotspot

/// Rodinia hotspot's constants for an `n x n` chip (`hotspot.cu`,
/// `compute_tran_temp`) in f32: `[step/Cap, 1/Rx, 1/Ry, 1/Rz]`.
fn hotspot_constants(n: usize) -> [f32; 4] {
    let (t_chip, chip, k_si, factor_chip, spec_heat_si) =
        (0.0005f32, 0.016f32, 100f32, 0.5f32, 1.75e6f32);
    let (gh, gw) = (chip / n as f32, chip / n as f32);
    let cap = factor_chip * spec_heat_si * t_chip * gw * gh;
    let rx = gw / (2.0 * k_si * t_chip * gh);
    let ry = gh / (2.0 * k_si * t_chip * gw);
    let rz = t_chip / (k_si * gh * gw);
    let max_slope = 3.0e6f32 / (factor_chip * t_chip * spec_heat_si);
    let step = 0.001f32 / max_slope;
    [step / cap, 1.0 / rx, 1.0 / ry, 1.0 / rz]
}

fn hotspot_defines(n: usize) -> Vec<String> {
    let c = hotspot_constants(n);
    vec![
        format!("N={n}"),
        format!("SDC={:?}", c[0]),
        format!("RX1={:?}", c[1]),
        format!("RY1={:?}", c[2]),
        format!("RZ1={:?}", c[3]),
    ]
}

/// One iteration of Rodinia hotspot in f32, in its order of operations; a
/// neighbour beyond the chip's edge is the cell itself.
fn hotspot(n: usize, t: &[f32], p: &[f32]) -> Vec<f32> {
    let [sdc, rx1, ry1, rz1] = hotspot_constants(n);
    let amb = 80.0f32;
    let mut out = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let at = |r: usize, c: usize| t[r * n + c];
            let v = at(r, c);
            let (nn, s) = (at(r.saturating_sub(1), c), at((r + 1).min(n - 1), c));
            let (w, e) = (at(r, c.saturating_sub(1)), at(r, (c + 1).min(n - 1)));
            let two = 2.0f32 * v;
            let sum = p[r * n + c] + (s + nn - two) * ry1 + (e + w - two) * rx1 + (amb - v) * rz1;
            out[r * n + c] = v + sdc * sum;
        }
    }
    out
}

fn check_hotspot(kernel: &str, n: usize, m: &Machine) -> Ran {
    let defines = hotspot_defines(n);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let want = hotspot(n, &ran.in_f32("T"), &ran.in_f32("P"));
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(
        ran.out_f32("OUT"),
        want,
        "{kernel} N={n} on {}",
        m.summary()
    );
    ran
}

/// SPU hotspot: T and P in (`2N^2`), OUT out (`N^2`), and per link between two
/// passes one CB spilled and restored (one exchange per launch).
fn hotspot_spu_words(n: usize, p: usize, q: usize) -> (u64, u64) {
    let g = n.div_ceil(32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    let spill = ((nx - 1) * g + (ny - 1) * g) as u64 * CB_WORDS;
    (3 * (n * n) as u64 + 2 * spill, spill)
}

/// GPU hotspot: the tiles of T with their halo inside the chip, P, and OUT:
/// `N^2 + 4N(G-1) + N^2 + N^2`, G = cdiv(N, 32).
fn hotspot_gpu_words(n: usize) -> u64 {
    let g = n.div_ceil(32);
    (3 * n * n + 4 * n * (g - 1)) as u64
}

#[test]
fn hotspot_spu_matches_the_reference_on_one_pass_and_several() {
    for n in [64, 70, 5] {
        for m in spu_machines() {
            let ran = check_hotspot(HOT_PC, n, &m);
            let (words, spill) = hotspot_spu_words(n, m.grid_cols as usize, m.grid_rows as usize);
            let what = format!("N={n} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

#[test]
fn hotspot_gpu_matches_the_reference() {
    for n in [64, 70, 5] {
        for (preset, sms) in [("gtx480", 15), ("gtx480", 2), ("gtx480-1cta", 15)] {
            let m = gpu(preset, sms);
            let ran = check_hotspot(HOT_GPU, n, &m);
            assert_eq!(offchip(&ran), hotspot_gpu_words(n), "{preset} N={n}");
        }
    }
    check_hotspot(HOT_GPU, 40, &spu("2x2", &[]));
}

/// Two iterations as two launches: the second loads the first's OUT as T.
#[test]
fn hotspot_two_iterations_chain_as_two_launches() {
    let n = 70;
    let defines = hotspot_defines(n);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [(HOT_PC, spu("2x2", &[])), (HOT_GPU, gpu("gtx480", 15))] {
        let first = run_with(&repo_path(kernel), &m, &d);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        let shape = [n as u64, n as u64];
        spu_emu::load::npy::write(&path, spu_isa::Ty::F32, &shape, &first.out_u32("OUT")).unwrap();
        let loads = [format!("T={}", path.display())];
        let second = spu_tests::run_loaded(&repo_path(kernel), &m, &d, &loads);
        let p = first.in_f32("P");
        let t1 = hotspot(n, &first.in_f32("T"), &p);
        assert_eq!(second.out_f32("OUT"), hotspot(n, &t1, &p), "{kernel}");
    }
}

#[test]
fn hotspot_functional_mode_agrees() {
    let defines = hotspot_defines(70);
    for (kernel, m) in [
        (HOT_PC, spu("2x2", &[])),
        (HOT_PC, spu("2x2", &["boundary.kind=dma"])),
        (HOT_GPU, gpu("gtx480", 15)),
    ] {
        let d: Vec<&str> = defines.iter().map(String::as_str).collect();
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["OUT"]);
    }
}

/// Rodinia's 512 x 512 chip (16x16 blocks: 4x4 passes on the 4x4 SPU).
#[test]
#[ignore = "large: run with --ignored"]
fn hotspot_rodinia_512() {
    let ran = check_hotspot(HOT_PC, 512, &Machine::default());
    assert_eq!(offchip(&ran), hotspot_spu_words(512, 4, 4).0);
    let g = gpu("gtx480", 15);
    let ran = check_hotspot(HOT_GPU, 512, &g);
    assert_eq!(offchip(&ran), hotspot_gpu_words(512));
}

// ---------------------------------------------------------------- hotspot3D

/// Rodinia hotspot3D's coefficients for an `n x n x k` chip (`3D.cu`, `main` and
/// `hotspot_opt1`) in f32: `[ce, cw, cn, cs, ct, cb, cc, sdc]`.
fn hotspot3d_constants(n: usize, k: usize) -> [f32; 8] {
    let (t_chip, chip, k_si, factor_chip, spec_heat_si) =
        (0.0005f32, 0.016f32, 100f32, 0.5f32, 1.75e6f32);
    let (dx, dy, dz) = (chip / n as f32, chip / n as f32, t_chip / k as f32);
    let cap = factor_chip * spec_heat_si * t_chip * dx * dy;
    let rx = dy / (2.0 * k_si * t_chip * dx);
    let ry = dx / (2.0 * k_si * t_chip * dy);
    let rz = dz / (k_si * dx * dy);
    let max_slope = 3.0e6f32 / (factor_chip * t_chip * spec_heat_si);
    let sdc = 0.001f32 / max_slope / cap;
    let (ce, cn, ct) = (sdc / rx, sdc / ry, sdc / rz);
    let cc = 1.0 - (2.0 * ce + 2.0 * cn + 3.0 * ct);
    [ce, ce, cn, cn, ct, ct, cc, sdc]
}

fn hotspot3d_defines(n: usize, k: usize) -> Vec<String> {
    let names = ["CE", "CW", "CN", "CS", "CT", "CB", "CC", "SDC"];
    let mut out = vec![format!("N={n}"), format!("K={k}")];
    for (name, v) in names.iter().zip(hotspot3d_constants(n, k)) {
        out.push(format!("{name}={v:?}"));
    }
    out
}

/// One iteration of Rodinia hotspot3D in f32, in its order of additions; a
/// neighbour beyond the chip's edge (in any direction) is the cell itself.
fn hotspot3d(n: usize, k: usize, t: &[f32], p: &[f32]) -> Vec<f32> {
    let [ce, cw, cn, cs, ct, cb, cc, sdc] = hotspot3d_constants(n, k);
    let amb = 80.0f32;
    let mut out = vec![0f32; n * n * k];
    for z in 0..k {
        for j in 0..n {
            for i in 0..n {
                let at = |z: usize, j: usize, i: usize| t[(z * n + j) * n + i];
                let c = (z * n + j) * n + i;
                let w = at(z, j, i.saturating_sub(1));
                let e = at(z, j, (i + 1).min(n - 1));
                let nn = at(z, j.saturating_sub(1), i);
                let s = at(z, (j + 1).min(n - 1), i);
                let below = at(z.saturating_sub(1), j, i);
                let above = at((z + 1).min(k - 1), j, i);
                out[c] = cc * t[c]
                    + cw * w
                    + ce * e
                    + cs * s
                    + cn * nn
                    + cb * below
                    + ct * above
                    + sdc * p[c]
                    + ct * amb;
            }
        }
    }
    out
}

fn check_hotspot3d(kernel: &str, n: usize, k: usize, m: &Machine) -> Ran {
    let defines = hotspot3d_defines(n, k);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    let ran = run_with(&repo_path(kernel), m, &d);
    let want = hotspot3d(n, k, &ran.in_f32("T"), &ran.in_f32("P"));
    // Same operations in the same order in f32: bit-exact.
    assert_eq!(
        ran.out_f32("OUT"),
        want,
        "{kernel} N={n} K={k} on {}",
        m.summary()
    );
    ran
}

/// SPU hotspot3D: T and P in, OUT out (`3N^2 K`), and per link between two passes
/// one CB spilled and restored per batch of 15 layers.
fn hotspot3d_spu_words(n: usize, k: usize, p: usize, q: usize) -> (u64, u64) {
    let g = n.div_ceil(32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    let links = ((nx - 1) * g + (ny - 1) * g) as u64;
    let spill = links * k.div_ceil(15) as u64 * CB_WORDS;
    (3 * (n * n * k) as u64 + 2 * spill, spill)
}

/// GPU hotspot3D: every layer of every tile of T with its halo inside the chip,
/// P and OUT: `K(N^2 + 4N(G-1)) + 2N^2 K`, G = cdiv(N, 32).
fn hotspot3d_gpu_words(n: usize, k: usize) -> u64 {
    let g = n.div_ceil(32);
    (k * (n * n + 4 * n * (g - 1)) + 2 * n * n * k) as u64
}

/// Rodinia's 64 x 64 x 8 chip, and sizes of three blocks a side and two batches.
#[test]
fn hotspot3d_spu_matches_the_reference_on_one_pass_and_several() {
    for (n, k) in [(64, 8), (70, 17), (5, 2)] {
        for m in spu_machines() {
            let ran = check_hotspot3d(HOT3_PC, n, k, &m);
            let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
            let (words, spill) = hotspot3d_spu_words(n, k, p, q);
            let what = format!("N={n} K={k} on {}", m.summary());
            assert_eq!(offchip(&ran), words, "{what}");
            assert_eq!(ran.result.traffic.spill_words, spill, "{what}");
            assert_eq!(ran.result.traffic.restore_words, spill, "{what}");
        }
    }
}

#[test]
fn hotspot3d_gpu_matches_the_reference() {
    for (n, k) in [(64, 8), (70, 3), (5, 2)] {
        for (preset, sms) in [("gtx480", 15), ("gtx480", 2), ("gtx480-1cta", 15)] {
            let m = gpu(preset, sms);
            let ran = check_hotspot3d(HOT3_GPU, n, k, &m);
            assert_eq!(
                offchip(&ran),
                hotspot3d_gpu_words(n, k),
                "{preset} N={n} K={k}"
            );
        }
    }
    check_hotspot3d(HOT3_GPU, 40, 4, &spu("2x2", &[]));
}

#[test]
fn hotspot3d_functional_mode_agrees() {
    let defines = hotspot3d_defines(40, 4);
    let d: Vec<&str> = defines.iter().map(String::as_str).collect();
    for (kernel, m) in [
        (HOT3_PC, spu("1x1", &[])),
        (HOT3_PC, spu("1x1", &["boundary.kind=dma"])),
        (HOT3_GPU, gpu("gtx480", 15)),
    ] {
        let timed = run_with(&repo_path(kernel), &m, &d);
        same_in_functional(kernel, &m, &defines, &timed, &["OUT"]);
    }
}

/// Rodinia's 512 x 512 x 8 chip (4x4 passes on the 4x4 SPU).
#[test]
#[ignore = "large: run with --ignored"]
fn hotspot3d_rodinia_512x8() {
    let ran = check_hotspot3d(HOT3_PC, 512, 8, &Machine::default());
    assert_eq!(offchip(&ran), hotspot3d_spu_words(512, 8, 4, 4).0);
    let g = gpu("gtx480", 15);
    let ran = check_hotspot3d(HOT3_GPU, 512, 8, &g);
    assert_eq!(offchip(&ran), hotspot3d_gpu_words(512, 8));
}
