//! The 2-D stencil samples (thesis Ch. 3) against a straightforward reference, on
//! many grids, both pass modes and both boundary kinds; and their off-chip traffic
//! against thesis Table 6.3 and the producer-consumer formula of `emu/RUNTIME.md`.

use spu_emu::Machine;
use spu_tests::{Ran, assert_close, repo_path, run_with};

const PC: &str = "samples/stencil2d/stencil_pc.spu";
const GLOBAL: &str = "samples/stencil2d/stencil_global.spu";
const GPU: &str = "samples/stencil2d/stencil_gpu.spu";

/// H by the definition, in f64: returns (Hk, Hi, Hj).
fn reference(
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut prev: Vec<f64> = a.iter().map(|v| f64::from(*v)).collect();
    let (mut hi, mut hj) = (vec![0.0; n * k], vec![0.0; n * k]);
    for kk in 0..k {
        let mut cur = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let up = if i == 0 {
                    f64::from(c[j * k + kk])
                } else {
                    cur[(i - 1) * n + j]
                };
                let left = if j == 0 {
                    f64::from(b[i * k + kk])
                } else {
                    cur[i * n + j - 1]
                };
                cur[i * n + j] = (up + left + prev[i * n + j]) / 3.0;
            }
        }
        for x in 0..n {
            hi[x * k + kk] = cur[(n - 1) * n + x];
            hj[x * k + kk] = cur[x * n + n - 1];
        }
        prev = cur;
    }
    (prev, hi, hj)
}

fn machine(grid: &str, sets: &[&str]) -> Machine {
    let mut m = Machine::default();
    m.set_grid(grid).unwrap();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

fn run_stencil(kernel: &str, n: usize, k: usize, m: &Machine) -> Ran {
    run_with(
        &repo_path(kernel),
        m,
        &[&format!("N={n}"), &format!("K={k}")],
    )
}

fn check(kernel: &str, n: usize, k: usize, m: &Machine) -> Ran {
    let ran = run_stencil(kernel, n, k, m);
    let (hk, hi, hj) = reference(n, k, &ran.in_f32("A"), &ran.in_f32("B"), &ran.in_f32("C"));
    let what = format!("{kernel} N={n} K={k} on {}", m.summary());
    assert_close(&ran.out_f32("Hk"), &hk, 1e-4, &format!("{what}: Hk"));
    assert_close(&ran.out_f32("Hi"), &hi, 1e-4, &format!("{what}: Hi"));
    assert_close(&ran.out_f32("Hj"), &hj, 1e-4, &format!("{what}: Hj"));
    ran
}

/// `2*K*b*G*(nx+ny) + 2*N^2` (the producer-consumer formula of `emu/RUNTIME.md`).
fn expected_words(n: usize, k: usize, p: usize, q: usize) -> u64 {
    let (b, g) = (32, n / 32);
    let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
    (2 * k * b * g * (nx + ny) + 2 * n * n) as u64
}

fn offchip(ran: &Ran) -> u64 {
    ran.result.traffic.load_words + ran.result.traffic.store_words
}

#[test]
fn producer_consumer_matches_the_reference_on_many_grids() {
    for (grid, n, k) in [
        ("1x1", 64, 32),
        ("2x2", 64, 64),
        ("4x4", 64, 32),
        ("3x5", 96, 32),
        ("8x8", 64, 32),
        ("2x2", 96, 32),
    ] {
        for mode in ["overlapped", "sequential"] {
            for boundary in ["iu", "dma"] {
                let m = machine(
                    grid,
                    &[
                        &format!("passes.mode={mode}"),
                        &format!("boundary.kind={boundary}"),
                    ],
                );
                let ran = check(PC, n, k, &m);
                let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
                assert_eq!(
                    offchip(&ran),
                    expected_words(n, k, p, q),
                    "N={n} K={k} {grid} {mode} {boundary}"
                );
            }
        }
    }
}

#[test]
fn global_sync_matches_the_reference() {
    for (grid, n, k, mode) in [
        ("1x1", 64, 32, "sequential"),
        ("2x2", 64, 64, "overlapped"),
        ("2x2", 96, 32, "sequential"),
        ("3x5", 96, 32, "overlapped"),
        ("4x4", 64, 32, "overlapped"),
        ("8x8", 64, 32, "overlapped"),
    ] {
        for boundary in ["iu", "dma"] {
            let m = machine(
                grid,
                &[
                    &format!("passes.mode={mode}"),
                    &format!("boundary.kind={boundary}"),
                ],
            );
            check(GLOBAL, n, k, &m);
        }
    }
}

#[test]
fn offchip_words_match_thesis_table_6_3_at_n_128() {
    let m = Machine::default();
    for kernel in [PC, GLOBAL] {
        let ran = check(kernel, 128, 128, &m);
        assert_eq!(offchip(&ran), 98_304, "{kernel}");
        assert_eq!(ran.result.traffic.spill_words, 0, "one pass: no spills");
    }
}

#[test]
fn offchip_words_match_thesis_table_6_3_at_n_256() {
    let ran = check(PC, 256, 256, &Machine::default());
    assert_eq!(offchip(&ran), 655_360);
    let t = &ran.result.traffic;
    // 2x2 passes: two inner edges, each 256 rows x 256 k values.
    assert_eq!(
        (t.spill_words, t.restore_words),
        (2 * 256 * 256, 2 * 256 * 256)
    );
}

#[test]
fn multi_pass_traffic_counts_spills_and_restores() {
    // 4x4 blocks on 2x2: 2x2 passes; every inner edge moves K words per row.
    let m = machine("2x2", &[]);
    let ran = check(PC, 128, 64, &m);
    let t = &ran.result.traffic;
    assert_eq!(offchip(&ran), expected_words(128, 64, 2, 2));
    assert_eq!(t.spill_words, t.restore_words);
    // Two inner edges (one vertical, one horizontal), each 128 rows x 64 k.
    assert_eq!(t.spill_words, 2 * 128 * 64);
}

/// The smaller version of the thesis's global-sync count (Table 6.3): by default a
/// spilling virtual IU moves a whole CB at every sync it resolves (thesis
/// Algorithm 2), whether or not its producer wrote anything.
#[test]
fn global_sync_spills_whole_cbs_by_default() {
    // 4x4 blocks on 2x2: 2x2 passes, 8 spilling VIU-pass edges (2 east and 2 south
    // in pass (0,0), 2 south in (1,0), 2 east in (0,1)), each resolving
    // T = K/32 + Gx + Gy = 2 + 4 + 4 = 10 syncs, each moving a 1024-word CB.
    let (n, k) = (128, 64);
    let spilled = 8 * 10 * 1024;
    let ran = check(GLOBAL, n, k, &machine("2x2", &["passes.mode=sequential"]));
    let t = &ran.result.traffic;
    assert_eq!((t.spill_words, t.restore_words), (spilled, spilled));
    // Plus A and Hk (N^2 each) and Hi, Hj, B, C (N*K each).
    assert_eq!(offchip(&ran), 2 * spilled + (2 * n * n + 4 * n * k) as u64);
    // Hypothetical dirty tracking moves only what the producers wrote: the
    // producer-consumer kernel's count.
    let written = machine("2x2", &["passes.mode=sequential", "viu.spill=written"]);
    assert_eq!(
        offchip(&check(GLOBAL, n, k, &written)),
        expected_words(n, k, 2, 2)
    );
}

#[test]
fn overlapped_passes_are_faster_than_sequential() {
    let run = |mode: &str| {
        run_stencil(
            PC,
            128,
            64,
            &machine("2x2", &[&format!("passes.mode={mode}")]),
        )
        .result
        .cycles
    };
    let (overlapped, sequential) = (run("overlapped"), run("sequential"));
    assert!(
        overlapped < sequential,
        "overlapped {overlapped} cycles, sequential {sequential}"
    );
}

/// The thesis's N = K = 256 case (Table 6.3, Section 6.2): takes a few seconds.
#[test]
#[ignore = "large: run with --ignored"]
fn thesis_n_256_counts_and_overlap_gain() {
    let pc = run_stencil(PC, 256, 256, &Machine::default());
    let seq = machine("4x4", &["passes.mode=sequential"]);
    let pc_seq = run_stencil(PC, 256, 256, &seq);
    assert_eq!(offchip(&pc_seq), 655_360);
    let gain = 1.0 - pc.result.cycles as f64 / pc_seq.result.cycles as f64;
    assert!(
        gain > 0.2,
        "overlapped passes save {:.1}% of cycles",
        gain * 100.0
    );
    // Global sync: every virtual IU spills at each of the T = K/32 + Gx + Gy = 24
    // syncs of its pass. Moving whole CBs (the thesis runtime, the default) gives
    // the thesis count; moving only the words written (hypothetical dirty
    // tracking) gives the producer-consumer count.
    assert_eq!(offchip(&check(GLOBAL, 256, 256, &seq)), 1_179_648);
    let written = machine("4x4", &["passes.mode=sequential", "viu.spill=written"]);
    assert_eq!(offchip(&check(GLOBAL, 256, 256, &written)), 655_360);
}

#[test]
fn large_grids_and_partial_passes_work() {
    // 4x4 blocks on 16x16 SMs: one partial pass whose east and south edges are
    // stored by idle SMs; 5x5 blocks on 4x4: partial last pass row and column.
    for (grid, n) in [("16x16", 128), ("4x4", 160), ("4x4", 320)] {
        for boundary in ["iu", "dma"] {
            let m = machine(grid, &[&format!("boundary.kind={boundary}")]);
            let ran = check(PC, n, 32, &m);
            let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
            assert_eq!(
                offchip(&ran),
                expected_words(n, 32, p, q),
                "{grid} N={n} {boundary}"
            );
        }
    }
}

/// A full 16x16 grid with one block per SM.
#[test]
#[ignore = "large: run with --ignored"]
fn a_full_16x16_grid() {
    check(PC, 512, 32, &machine("16x16", &[]));
}

/// Same results, off-chip counts and CB counts, read toggles included: each warp's
/// (and each engine's) reads from a CB are counted in its own program order, which
/// both modes share.
#[test]
fn functional_mode_gives_the_same_results_and_traffic() {
    for (kernel, grid, mode, boundary) in [
        (PC, "2x2", "overlapped", "iu"),
        (PC, "3x5", "sequential", "iu"),
        (PC, "2x2", "overlapped", "dma"),
        (GLOBAL, "2x2", "sequential", "iu"),
    ] {
        let timed = machine(
            grid,
            &[
                &format!("passes.mode={mode}"),
                &format!("boundary.kind={boundary}"),
            ],
        );
        let a = run_stencil(kernel, 96, 32, &timed);
        let options = spu_emu::LoadOptions {
            defines: vec!["N=96".into(), "K=32".into()],
            ..Default::default()
        };
        let control = spu_emu::RunControl {
            functional: true,
            ..Default::default()
        };
        let run =
            spu_emu::cli::session::run_file(&repo_path(kernel), &timed, &options, control).unwrap();
        let (image, b) = (run.image, run.result);
        for buf in ["Hk", "Hi", "Hj"] {
            let i = image
                .memory
                .regions()
                .iter()
                .position(|r| r.name == buf)
                .unwrap();
            assert_eq!(
                image.memory.buffer(i),
                &a.out_u32(buf)[..],
                "{kernel} {grid}: {buf}"
            );
        }
        assert_eq!(
            b.traffic, a.result.traffic,
            "{kernel} {grid}: off-chip counts"
        );
        assert_eq!(b.cb, a.result.cb, "{kernel} {grid} {boundary}: CB counts");
        if kernel == PC {
            assert!(b.cb.read_toggles > 0, "{kernel}: toggles are counted");
        }
        assert!(b.functional);
    }
}

/// Global words the GPU kernel moved: (data words, flag and ticket words), by the
/// instructions that moved them (`.f32` data, `.u32` flags and the ticket).
fn gpu_words(ran: &Ran, m: &Machine) -> (u64, u64) {
    let stats = spu_emu::observe::stats::Stats::new(&ran.result, &ran.before, m);
    let (mut data, mut sync) = (0, 0);
    for pc in &stats.pcs {
        let text = pc.text.as_deref().unwrap_or("");
        if text.contains(".global.f32") {
            data += pc.threads;
        } else if text.starts_with("atom") {
            sync += 2 * pc.threads; // read and written
        } else if text.contains(".global.") {
            sync += pc.threads;
        }
    }
    (data, sync)
}

#[test]
fn the_gpu_kernel_matches_the_reference_and_moves_eq_3_3_words() {
    // Several blocks per SM (gtx480: two by shared memory), one (gtx480-1cta), and
    // limits set by keys: three blocks by `sm.max_blocks` where shared memory
    // allows five, one by `sm.max_warps`. A block has 2 warps and 17 168 bytes of
    // shared memory: 49 152 / 17 168 = 2 blocks fit in 48 KiB, 5 in 96 KiB.
    let cases = [
        ("gtx480", 15, 64, 32, "", 2),
        ("gtx480", 1, 64, 64, "", 2),
        ("gtx480", 4, 96, 32, "", 2),
        ("gtx480", 15, 128, 64, "", 2),
        ("gtx480-1cta", 15, 128, 64, "", 1),
        ("gtx480-1cta", 4, 96, 32, "", 1),
        ("gtx480", 2, 128, 32, "sm.shared_kib=96,sm.max_blocks=3", 3),
        ("gtx480", 3, 96, 64, "sm.max_warps=3", 1),
    ];
    for (preset, sms, n, k, sets, resident) in cases {
        let mut m = spu_emu::machine::preset(preset).unwrap();
        m.set(&format!("grid.cols={sms}")).unwrap();
        for set in sets.split(',').filter(|s| !s.is_empty()) {
            m.set(set).unwrap();
        }
        let ran = check(GPU, n, k, &m);
        let occupancy = ran
            .result
            .occupancy
            .expect("a GPU run reports its occupancy");
        assert_eq!(occupancy.blocks_per_sm, resident, "{preset} {sets}");
        // Every SM fills up when there are enough blocks.
        let blocks = (n / 32) * (n / 32);
        assert_eq!(
            occupancy.peak_blocks_per_sm as usize,
            (resident as usize).min(blocks.div_ceil(sms)),
            "{preset} {sets} N={n} on {sms} SMs"
        );
        let (data, sync) = gpu_words(&ran, &m);
        // Thesis Eq. 3.3 with K planes: 4 N^2 K / b + 2 N^2 data words (b = 32).
        assert_eq!(
            data,
            (4 * n * n * k / 32 + 2 * n * n) as u64,
            "N={n} K={k} on {sms} SMs of {preset} {sets}"
        );
        assert_eq!(offchip(&ran), data + sync, "every other word is a flag");
        // One ticket (two words) and K/32 flag raises per block, and at least one poll per
        // tile of each block with a north or west neighbour.
        let g = (n / 32) as u64;
        let raised = g * g * (2 + k as u64 / 32);
        let waits = (g * g - 1) * k as u64 / 32;
        assert!(sync >= raised + waits, "N={n}: {sync} flag words");
    }
}

#[test]
fn the_gpu_kernel_runs_on_an_spu_too() {
    // The GPU kernel needs no CBs, so an SPU runs it too.
    check(GPU, 64, 32, &machine("2x2", &[]));
}

const GPU_LEAN: &str = "samples/stencil2d/stencil_gpu_lean.spu";
const PC64: &str = "samples/stencil2d/stencil_pc64.spu";
const GPU64: &str = "samples/stencil2d/stencil_gpu64.spu";

/// The small-footprint GPU kernel: the same results and data words as
/// stencil_gpu.spu (its edge tiles come from global memory either way), with 8 720
/// bytes of shared memory a block, so a GTX 480 holds 5 blocks per SM.
#[test]
fn the_lean_gpu_kernel_matches_the_reference_with_five_blocks_per_sm() {
    for (preset, sms, n, k, resident) in [
        ("gtx480", 15, 128, 64, 5),
        ("gtx480", 2, 96, 32, 5),
        ("gtx480-1cta", 4, 96, 64, 1),
    ] {
        let mut m = spu_emu::machine::preset(preset).unwrap();
        m.set(&format!("grid.cols={sms}")).unwrap();
        let ran = check(GPU_LEAN, n, k, &m);
        let occupancy = ran.result.occupancy.unwrap();
        assert_eq!(occupancy.blocks_per_sm, resident, "{preset}");
        let (data, _) = gpu_words(&ran, &m);
        assert_eq!(data, (4 * n * n * k / 32 + 2 * n * n) as u64, "Eq. 3.3");
    }
}

/// 64x64 tiles (thesis Appendix A): the producer-consumer kernel on 16 KiB CBs
/// with IUs and DMA engines, on one pass and several, and the GPU kernel with one
/// block per SM.
#[test]
fn the_64x64_kernels_match_the_reference() {
    for (grid, n, k) in [("2x2", 128, 64), ("2x2", 256, 64), ("4x4", 192, 128)] {
        for boundary in ["iu", "dma"] {
            let m = machine(
                grid,
                &["cb.size_kib=16", &format!("boundary.kind={boundary}")],
            );
            let ran = check(PC64, n, k, &m);
            // The producer-consumer formula with b = 64.
            let (p, q) = (m.grid_cols as usize, m.grid_rows as usize);
            let g = n / 64;
            let (nx, ny) = (g.div_ceil(p), g.div_ceil(q));
            let want = (2 * k * 64 * g * (nx + ny) + 2 * n * n) as u64;
            assert_eq!(offchip(&ran), want, "{grid} N={n} K={k} {boundary}");
        }
    }
    let e = std::panic::catch_unwind(|| run_stencil(PC64, 128, 64, &Machine::default()));
    assert!(e.is_err(), "a 64x64 tile does not fit a 4 KiB CB");
    let mut m = spu_emu::machine::preset("gtx480").unwrap();
    m.set("grid.cols=3").unwrap();
    let ran = check(GPU64, 192, 128, &m);
    assert_eq!(ran.result.occupancy.unwrap().blocks_per_sm, 1);
    let (data, _) = gpu_words(&ran, &m);
    assert_eq!(data, (4 * 192 * 192 * 128 / 64 + 2 * 192 * 192) as u64);
}
