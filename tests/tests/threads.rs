//! `--threads` never changes a run: every sample, in timing and functional mode,
//! on machines that exercise IUs, DMA engines, virtual IUs (spills between
//! overlapped passes) and sequential passes, gives byte-identical stats JSON and
//! identical buffers with 1, 2 and 4 threads; runs that stop (cycle limit,
//! fault, deadlock) stop with the same message. The one-at-a-time event loop
//! (taken by traced runs) and the window-by-window simulation give the same stats.

use spu_emu::cli::session::run_file;
use spu_emu::observe::stats::Stats;
use spu_emu::observe::trace::{TraceFilter, Tracer};
use spu_emu::{LoadOptions, Machine, RunControl};
use spu_tests::{repo_path, sources};
use std::path::Path;

/// Stats JSON and every buffer after the run, or the error message.
fn outcome(
    path: &Path,
    machine: &Machine,
    defines: &[&str],
    functional: bool,
    max_cycles: u64,
    threads: usize,
) -> Result<(String, Vec<Vec<u32>>), String> {
    let options = LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        ..LoadOptions::default()
    };
    let control = RunControl {
        functional,
        max_cycles,
        threads,
        sample_interval: Some(250),
        ..RunControl::default()
    };
    match run_file(path, machine, &options, control) {
        Ok(run) => {
            let stats = Stats::new(&run.result, &run.image, machine).to_json_text();
            let memory = &run.image.memory;
            let buffers = (0..memory.regions().len())
                .map(|i| memory.buffer(i).to_vec())
                .collect();
            Ok((stats, buffers))
        }
        Err(e) => Err(format!("{}\n{e}", e.details())),
    }
}

fn machine(sets: &[&str]) -> Machine {
    let mut m = Machine::default();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

/// Runs one case with 1, 2 and 4 threads and compares.
fn same_for_all_threads(
    path: &Path,
    m: &Machine,
    defines: &[&str],
    max_cycles: u64,
) -> Vec<Result<(), String>> {
    let mut outs = Vec::new();
    for functional in [false, true] {
        let one = outcome(path, m, defines, functional, max_cycles, 1);
        for threads in [2, 4] {
            let other = outcome(path, m, defines, functional, max_cycles, threads);
            let what = format!(
                "{} {defines:?} functional={functional}: --threads {threads}",
                path.display()
            );
            match (&one, &other) {
                (Ok((s1, b1)), Ok((s2, b2))) => {
                    assert!(s1 == s2, "{what}: stats differ from --threads 1");
                    assert!(b1 == b2, "{what}: buffers differ from --threads 1");
                }
                (Err(e1), Err(e2)) => assert_eq!(e1, e2, "{what}: the run stops differently"),
                _ => panic!(
                    "{what}: one thread gives {}, {threads} threads {}",
                    if one.is_ok() { "a result" } else { "a stop" },
                    if other.is_ok() { "a result" } else { "a stop" },
                ),
            }
        }
        outs.push(one.map(|_| ()));
    }
    outs
}

#[test]
fn every_sample_is_identical_on_one_two_and_four_threads() {
    let samples = sources("samples");
    assert!(samples.len() >= 7, "samples found: {samples:?}");
    for path in &samples {
        let small: &[&str] = if path.to_string_lossy().contains("stencil") {
            &["N=64", "K=64"]
        } else {
            &[]
        };
        let mut m = Machine::default();
        if path.ends_with("stencil2d/stencil_pc64.spu") {
            // A 64x64 tile of f32 is 16 KiB: Appendix A's CBs.
            m.set("cb.size_kib=16").unwrap();
        }
        for out in same_for_all_threads(path, &m, small, u64::MAX) {
            out.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn stencils_are_identical_on_one_two_and_four_threads_on_every_kind_of_boundary() {
    let pc = repo_path("samples/stencil2d/stencil_pc.spu");
    let global = repo_path("samples/stencil2d/stencil_global.spu");
    let cases: [(&Path, &[&str]); 5] = [
        // 4 overlapped passes on 2x2: virtual IUs spill and restore.
        (&pc, &["grid.cols=2", "grid.rows=2"]),
        (&pc, &["grid.cols=2", "grid.rows=2", "boundary.kind=dma"]),
        (&pc, &["passes.mode=sequential", "boundary.kind=dma"]),
        (&global, &["passes.mode=sequential"]),
        (
            &global,
            &[
                "grid.cols=2",
                "grid.rows=2",
                "boundary.kind=dma",
                "passes.mode=sequential",
            ],
        ),
    ];
    for (path, sets) in cases {
        for out in same_for_all_threads(path, &machine(sets), &["N=128", "K=64"], u64::MAX) {
            out.unwrap_or_else(|e| panic!("{} {sets:?}: {e}", path.display()));
        }
    }
}

#[test]
fn gpu_runs_with_several_blocks_per_sm_are_identical_on_one_two_and_four_threads() {
    // Blocks finish and new ones take their slots at different cycles on
    // different SMs: the round-robin hand-out must not depend on the threads.
    for preset in ["gtx480", "gtx480-1cta"] {
        let m = spu_emu::machine::preset(preset).unwrap();
        for (rel, defines) in [
            ("samples/stencil2d/stencil_gpu.spu", &["N=128", "K=64"][..]),
            ("samples/matmul.spu", &[][..]),
            ("samples/reduction.spu", &[][..]),
        ] {
            for out in same_for_all_threads(&repo_path(rel), &m, defines, u64::MAX) {
                out.unwrap_or_else(|e| panic!("{rel} on {preset}: {e}"));
            }
        }
    }
}

#[test]
fn gpu_runs_with_caches_are_identical_on_one_two_and_four_threads() {
    // The caches are shared state (the L2) changed where global accesses are
    // applied, in (cycle, unit, sequence) order.
    let m = spu_emu::machine::preset("gtx480").unwrap();
    for (rel, defines) in [
        ("samples/vecadd.spu", &[][..]),
        ("samples/reduction.spu", &[]),
        ("samples/stencil2d/stencil_gpu.spu", &["N=64", "K=32"]),
    ] {
        for out in same_for_all_threads(&repo_path(rel), &m, defines, u64::MAX) {
            out.unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
    }
}

#[test]
fn runs_that_stop_stop_the_same_way_on_any_number_of_threads() {
    let pc = repo_path("samples/stencil2d/stencil_pc.spu");
    let outs = same_for_all_threads(&pc, &Machine::default(), &["N=128", "K=64"], 100_000);
    assert!(
        outs.iter().any(|o| o
            .as_ref()
            .is_err_and(|e| e.contains("--max-cycles 100 000"))),
        "the cycle limit stops the timing run: {outs:?}"
    );
    // Faults, deadlocks and a kernel that never ends.
    let faults = sources("emu/tests/faults");
    assert!(faults.len() >= 5, "fault kernels found: {faults:?}");
    for path in &faults {
        let outs = same_for_all_threads(path, &Machine::default(), &[], 500);
        assert!(
            outs.iter().all(Result::is_err),
            "{}: {outs:?}",
            path.display()
        );
    }
}

/// Stats JSON of a run that writes a trace (which takes the one-at-a-time event
/// loop) or not (window by window).
fn stats_traced(
    rel: &str,
    defines: &[&str],
    machine: &Machine,
    functional: bool,
    traced: bool,
) -> String {
    let kernel = spu_emu::read_kernel(&repo_path(rel)).unwrap();
    let options = LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        ..LoadOptions::default()
    };
    let mut image = spu_emu::load(kernel.module.clone(), machine, &options).unwrap();
    let tracer = traced.then(|| {
        let filter = TraceFilter {
            limit: 10,
            ..TraceFilter::default()
        };
        Tracer::new(
            &kernel.module,
            &image.launch,
            filter,
            Box::new(std::io::sink()),
        )
    });
    let control = RunControl {
        functional,
        ..RunControl::default()
    };
    let result = spu_emu::simulate_traced(&mut image, machine, control, tracer, &mut |_| {})
        .unwrap_or_else(|e| panic!("{rel}: {e:?}"));
    Stats::new(&result, &image, machine).to_json_text()
}

#[test]
fn the_event_loop_and_the_window_by_window_simulation_agree() {
    for (rel, defines) in [
        ("samples/stencil2d/stencil_pc.spu", &["N=64", "K=64"][..]),
        ("samples/reduction.spu", &[][..]),
        ("samples/matmul.spu", &[][..]),
    ] {
        for sets in [
            &[][..],
            &["boundary.kind=dma", "grid.cols=2", "grid.rows=2"][..],
        ] {
            let m = machine(sets);
            for functional in [false, true] {
                let events = stats_traced(rel, defines, &m, functional, true);
                let windows = stats_traced(rel, defines, &m, functional, false);
                assert!(
                    events == windows,
                    "{rel} {sets:?} functional={functional}: a traced run's stats differ"
                );
            }
        }
    }
    let gpu = spu_emu::machine::preset("gtx480").unwrap();
    for (rel, defines) in [
        ("samples/stencil2d/stencil_gpu.spu", &["N=96", "K=32"][..]),
        ("samples/matmul.spu", &[][..]),
    ] {
        let events = stats_traced(rel, defines, &gpu, false, true);
        let windows = stats_traced(rel, defines, &gpu, false, false);
        assert!(
            events == windows,
            "{rel} on gtx480: a traced run's stats differ"
        );
    }
}
