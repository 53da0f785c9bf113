//! Every non-stencil sample runs and its output matches a reference computed here,
//! independently of the emulator, on several machines.

use spu_emu::Machine;
use spu_tests::{assert_close, repo_path, run, run_with};

fn machines() -> Vec<(&'static str, Machine)> {
    let mut out = vec![("spu-4x4", Machine::default())];
    for (name, sets) in [
        (
            "1x1 sequential",
            &["grid.cols=1", "grid.rows=1", "passes.mode=sequential"][..],
        ),
        (
            "8x8 gto",
            &["grid.cols=8", "grid.rows=8", "sm.scheduler_policy=gto"][..],
        ),
        (
            "3x2 one scheduler",
            &["grid.cols=3", "grid.rows=2", "sm.schedulers=1"][..],
        ),
    ] {
        let mut m = Machine::default();
        for s in sets {
            m.set(s).unwrap();
        }
        out.push((name, m));
    }
    out
}

#[test]
fn vecadd_matches_elementwise_sum() {
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/vecadd.spu"), &m, &["N=1000"]);
        let (a, b) = (ran.in_f32("A"), ran.in_f32("B"));
        let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| f64::from(*x + *y)).collect();
        assert_close(&ran.out_f32("C"), &want, 0.0, name);
    }
}

#[test]
fn matmul_matches_a_triple_loop() {
    let n = 64;
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/matmul.spu"), &m, &[]);
        let (a, b) = (ran.in_f32("A"), ran.in_f32("B"));
        let mut want = vec![0f64; n * n];
        for i in 0..n {
            for j in 0..n {
                want[i * n + j] = (0..n)
                    .map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j]))
                    .sum();
            }
        }
        assert_close(&ran.out_f32("C"), &want, 1e-5, name);
    }
}

#[test]
fn matmul_other_sizes() {
    for n in [16usize, 48] {
        let ran = run("samples/matmul.spu", &[&format!("N={n}")]);
        let (a, b) = (ran.in_f32("A"), ran.in_f32("B"));
        let want: Vec<f64> = (0..n * n)
            .map(|ij| {
                (0..n)
                    .map(|k| f64::from(a[ij / n * n + k]) * f64::from(b[k * n + ij % n]))
                    .sum()
            })
            .collect();
        assert_close(&ran.out_f32("C"), &want, 1e-5, &format!("N={n}"));
    }
}

#[test]
fn reduction_matches_block_sums_and_counts_blocks() {
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/reduction.spu"), &m, &["N=2048"]);
        let x = ran.in_f32("x");
        let want: Vec<f64> = x
            .chunks(256)
            .map(|c| c.iter().map(|v| f64::from(*v)).sum())
            .collect();
        assert_close(&ran.out_f32("partial"), &want, 1e-6, name);
        assert_eq!(
            ran.out_u32("count"),
            vec![8],
            "{name}: every block counted once"
        );
    }
}

#[test]
fn divergent_matches_both_paths() {
    for (name, m) in machines() {
        let ran = run_with(&repo_path("samples/divergent.spu"), &m, &["N=200"]);
        let want: Vec<u32> = (0..200i32)
            .map(|i| if i % 2 == 0 { i * 3 } else { i - 100 } as u32)
            .collect();
        assert_eq!(ran.out_u32("out"), want, "{name}");
    }
}

#[test]
fn results_do_not_depend_on_the_machine_but_cycles_do() {
    let ms = machines();
    let runs: Vec<_> = ms
        .iter()
        .map(|(_, m)| run_with(&repo_path("samples/matmul.spu"), m, &[]))
        .collect();
    for r in &runs[1..] {
        assert_eq!(r.out_u32("C"), runs[0].out_u32("C"));
    }
    let one_sm = &runs[1].result;
    assert!(
        one_sm.cycles > runs[0].result.cycles * 4,
        "1x1 ({}) should be much slower than 4x4 ({})",
        one_sm.cycles,
        runs[0].result.cycles
    );
}

#[test]
fn pass_token_crosses_every_row_on_any_grid() {
    for grid in ["4x4", "2x2", "1x1", "3x5", "16x16"] {
        for mode in ["overlapped", "sequential"] {
            let mut m = Machine::default();
            m.set_grid(grid).unwrap();
            m.set(&format!("passes.mode={mode}")).unwrap();
            let ran = run_with(&repo_path("samples/pass_token.spu"), &m, &["P=5", "Q=3"]);
            let want: Vec<u32> = ran.in_u32("seed").iter().map(|s| s + 5).collect();
            assert_eq!(ran.out_u32("out"), want, "{grid} {mode}");
        }
    }
}

/// Every sample is a correct kernel, so neither the CB checker (on by default)
/// nor the shared-memory race checker fires: on one pass and across
/// passes, with IUs and DMA engines, in timing and functional mode. A new sample
/// must be added to the list.
#[test]
fn every_sample_runs_clean_under_the_cb_checker() {
    let cases: &[(&str, &[&str])] = &[
        ("divergent.spu", &[]),
        ("matmul.spu", &[]),
        ("pass_token.spu", &["P=3", "Q=3"]),
        ("reduction.spu", &[]),
        ("vecadd.spu", &[]),
        ("stencil2d/stencil_pc.spu", &["N=96", "K=64"]),
        ("stencil2d/stencil_global.spu", &["N=96", "K=64"]),
        ("stencil2d/stencil_gpu.spu", &["N=96", "K=64"]),
        ("stencil2d/stencil_gpu_lean.spu", &["N=96", "K=64"]),
        ("stencil2d/stencil_pc64.spu", &["N=128", "K=64"]),
        ("stencil2d/stencil_gpu64.spu", &["N=128", "K=64"]),
        ("suite/jacobi2d_pc.spu", &["N=30", "TSTEPS=8"]),
        ("suite/jacobi2d_gpu.spu", &["N=30", "TSTEPS=8"]),
        ("suite/fdtd2d_pc.spu", &["NX=40", "NY=20", "TMAX=12"]),
        ("suite/fdtd2d_gpu.spu", &["NX=40", "NY=40", "TMAX=4"]),
        ("suite/wave2d_pc.spu", &["N=30", "TSTEPS=8"]),
        ("suite/wave2d_gpu.spu", &["N=40", "TSTEPS=4"]),
        ("suite/stencil27_pc.spu", &["N=40", "K=17"]),
        ("suite/stencil27_gpu.spu", &["N=40", "K=17"]),
        ("suite/heat3d_pc.spu", &["N=40", "K=17"]),
        ("suite/heat3d_gpu.spu", &["N=40", "K=17"]),
        ("suite/hotspot_pc.spu", &["N=70"]),
        ("suite/hotspot_gpu.spu", &["N=70"]),
        ("suite/hotspot3d_pc.spu", &["N=70", "K=17"]),
        ("suite/hotspot3d_gpu.spu", &["N=70", "K=4"]),
        ("micro/banks.spu", &[]),
        ("micro/chase.spu", &[]),
        ("micro/issue.spu", &[]),
        ("micro/mshr.spu", &[]),
        ("micro/occupancy.spu", &[]),
        ("ptx/hotspot.spu", &[]),
        ("ptx/hotspot64.spu", &[]),
        ("ptx/hotspot_f64.spu", &[]),
        ("ptx/shade.spu", &[]),
        ("ptx/window.spu", &[]),
        ("ptx/matmul.spu", &[]),
        ("ptx/reduce.spu", &[]),
        ("ptx/rowscan.spu", &[]),
        ("ptx/vecadd.spu", &[]),
        ("ptx/histogram.spu", &[]),
        ("ptx/histogram_atom.spu", &[]),
        ("ptx/histogram_smem.spu", &[]),
        ("ptx/daxpy.spu", &["N=1000", "A=0.1"]),
        ("ptx/modifiers.spu", &[]),
        ("cuda/calls_nvcc.spu", &[]),
        ("cuda/calls_clang.spu", &[]),
        ("cuda/local_nvcc.spu", &[]),
        ("cuda/local_clang.spu", &[]),
        ("cuda/structs_nvcc.spu", &[]),
        ("cuda/structs_clang.spu", &[]),
        ("cuda/printf_nvcc.spu", &[]),
        ("cuda/printf_clang.spu", &[]),
        ("cuda/saxpy.spu", &[]),
        ("cuda/wave3d.spu", &[]),
        ("cuda/grid3d_nvcc.spu", &[]),
        ("cuda/predicates_nvcc.spu", &[]),
        ("cuda/predicates_clang.spu", &[]),
        ("cuda/wide_nvcc.spu", &[]),
        ("cuda/wide_clang.spu", &[]),
        ("cuda/entries_axpy.spu", &[]),
        ("cuda/entries_stamp.spu", &[]),
        ("cuda/tables_nvcc.spu", &[]),
        ("stencil2d/stencil_pc_cuda.spu", &["N=96", "K=64"]),
    ];
    let listed: Vec<std::path::PathBuf> = cases
        .iter()
        .map(|(f, _)| repo_path(&format!("samples/{f}")))
        .collect();
    for sample in spu_tests::sources("samples") {
        assert!(
            listed.contains(&sample),
            "{} is not listed",
            sample.display()
        );
    }
    for (file, defines) in cases {
        let path = repo_path(&format!("samples/{file}"));
        if spu_tests::clang::needs_clang(&path) && spu_tests::clang::skip(file) {
            continue;
        }
        let kernel = spu_emu::read_kernel(&path).unwrap();
        let has_dma = !kernel.module.dma.is_empty();
        for boundary in ["iu", "dma"] {
            if boundary == "dma" && !has_dma {
                continue;
            }
            // 2x2: several passes for every sample but the smallest launches.
            for (grid, mode) in [("2x2", "sequential"), ("4x4", "overlapped")] {
                let mut m = Machine::default();
                m.set_grid(grid).unwrap();
                m.set(&format!("boundary.kind={boundary}")).unwrap();
                m.set(&format!("passes.mode={mode}")).unwrap();
                if file.ends_with("pc64.spu") {
                    // A 64x64 tile of f32 is 16 KiB: Appendix A's CBs.
                    m.set("cb.size_kib=16").unwrap();
                }
                for functional in [false, true] {
                    let options = spu_emu::LoadOptions {
                        defines: defines.iter().map(|d| d.to_string()).collect(),
                        ..Default::default()
                    };
                    let mut image = spu_emu::load(kernel.module.clone(), &m, &options).unwrap();
                    let control = spu_emu::RunControl {
                        functional,
                        race_check: true,
                        ..Default::default()
                    };
                    assert!(control.cb_check, "the checker is on by default");
                    match spu_emu::simulate(&mut image, &m, control, &mut |_| {}) {
                        Err(stop) => panic!(
                            "{file} on {grid} {boundary} {mode} functional={functional}:\n{}",
                            spu_emu::observe::stopped::render_stop(&stop, &kernel, &image)
                        ),
                        // No sample races on shared memory.
                        Ok(result) => assert_eq!(
                            result.races.total(),
                            0,
                            "{file} on {grid} {boundary} {mode} functional={functional}:\n{}",
                            spu_emu::observe::races::render_races(
                                &result.races,
                                &kernel,
                                &image.launch
                            )
                        ),
                    }
                }
            }
        }
    }
}
