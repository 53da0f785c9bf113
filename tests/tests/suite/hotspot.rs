//! Rodinia hotspot and hotspot3D.

use crate::common::*;
use spu_emu::Machine;
use spu_tests::{Ran, repo_path, run_with};

const HOT_PC: &str = "samples/suite/hotspot_pc.spu";
const HOT_GPU: &str = "samples/suite/hotspot_gpu.spu";
const HOT3_PC: &str = "samples/suite/hotspot3d_pc.spu";
const HOT3_GPU: &str = "samples/suite/hotspot3d_gpu.spu";

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
    for n in [64_usize, 70, 5] {
        let g = n.div_ceil(32);
        for m in spu_machines().into_iter().chain(fold_machines(g, g)) {
            let ran = check_hotspot(HOT_PC, n, &m);
            let (p, q) = window(&m);
            let (words, spill) = hotspot_spu_words(n, p, q);
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
    for (n, k) in [(64_usize, 8), (70, 17), (5, 2)] {
        let g = n.div_ceil(32);
        for m in spu_machines().into_iter().chain(fold_machines(g, g)) {
            let ran = check_hotspot3d(HOT3_PC, n, k, &m);
            let (p, q) = window(&m);
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
