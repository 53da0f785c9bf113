//! The stats document: it reads back into the same value, rebuilds the machine it
//! came from, and its per-instruction and per-interval counts add up to the totals.

use spu_emu::observe::counters::Component;
use spu_emu::observe::stats::Stats;
use spu_emu::{Machine, RunControl};
use spu_tests::repo_path;

fn stats_of(rel: &str, machine: &Machine, defines: &[&str], interval: Option<u64>) -> Stats {
    let options = spu_emu::LoadOptions {
        defines: defines.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    let control = RunControl {
        sample_interval: interval,
        ..RunControl::default()
    };
    let run = spu_emu::cli::session::run_file(&repo_path(rel), machine, &options, control).unwrap();
    Stats::new(&run.result, &run.image, machine)
}

#[test]
fn stats_read_back_and_rebuild_the_machine() {
    let mut m = Machine::default();
    m.set("sm.scheduler_policy=gto").unwrap();
    m.set_grid("2x3").unwrap();
    let s = stats_of(
        "samples/stencil2d/stencil_pc.spu",
        &m,
        &["N=64", "K=32"],
        Some(500),
    );
    let back: Stats = serde_json::from_str(&s.to_json_text()).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.machine().unwrap(), m);
}

#[test]
fn per_instruction_and_per_interval_counts_add_up() {
    for boundary in ["iu", "dma"] {
        let mut m = Machine::default();
        m.set(&format!("boundary.kind={boundary}")).unwrap();
        let s = stats_of(
            "samples/stencil2d/stencil_pc.spu",
            &m,
            &["N=128", "K=64"],
            Some(500),
        );
        let samples = s.samples.as_ref().unwrap();
        for c in Component::ALL {
            let name = c.name();
            let total = s.counters[name];
            let sampled: u64 = samples.components[name].iter().sum();
            assert_eq!(sampled, total, "{boundary}: samples of {name}");
            let by_pc: u64 = s
                .pcs
                .iter()
                .map(|p| p.components.get(name).copied().unwrap_or(0))
                .sum();
            match c {
                // Instruction-driven components come only from instructions, except
                // transfers done by DMA engines and virtual IUs.
                Component::IdleCorep | Component::ConstDynamicp => assert_eq!(by_pc, 0),
                Component::Mcp | Component::Nocp | Component::Dramp | Component::Cbp => {
                    assert!(by_pc <= total, "{boundary}: {name}")
                }
                _ => assert_eq!(by_pc, total, "{boundary}: {name} by instruction"),
            }
        }
        let units = s.units.len() as u64;
        let idle_plus_busy = s.counters["IDLE_COREP"] + s.counters["CONST_DYNAMICP"];
        assert_eq!(
            idle_plus_busy,
            units * s.cycles,
            "{boundary}: every unit-cycle is idle or busy"
        );
    }
}

#[test]
fn gpu_power_traces_and_instructions_add_up_to_the_cache_traffic() {
    // On a machine with caches the DRAM-side components count the lines after
    // the caches: every one caused by an instruction, sampled as it happens.
    let m = spu_emu::machine::preset("gtx480").unwrap();
    let s = stats_of("samples/stencil2d/stencil_gpu.spu", &m, &[], Some(500));
    let samples = s.samples.as_ref().unwrap();
    for c in Component::ALL {
        let name = c.name();
        let total = s.counters[name];
        let sampled: u64 = samples.components[name].iter().sum();
        assert_eq!(sampled, total, "samples of {name}");
    }
    let caches = s.caches.as_ref().unwrap();
    // The dirty lines written back when the kernel ends are priced on a line of
    // their own: no instruction caused them.
    let lines = caches.dram_read_lines + caches.dram_write_lines - caches.end_writeback_lines;
    assert!(lines > 0);
    assert_eq!(s.counters["DRAMP"], lines);
    assert_eq!(s.counters["MCP"], lines);
    assert_eq!(s.counters["NOCP"], s.counters["L2CP"] + caches.l2.bypasses);
    for name in ["NOCP", "MCP", "DRAMP"] {
        let by_pc: u64 = s
            .pcs
            .iter()
            .map(|p| p.components.get(name).copied().unwrap_or(0))
            .sum();
        assert_eq!(by_pc, s.counters[name], "{name} by instruction");
    }
}

#[test]
fn every_sample_gives_byte_identical_stats_twice() {
    for (rel, defines) in [
        ("samples/vecadd.spu", &["N=1000"][..]),
        ("samples/matmul.spu", &[][..]),
        ("samples/reduction.spu", &[][..]),
        ("samples/divergent.spu", &[][..]),
        ("samples/pass_token.spu", &[][..]),
        ("samples/stencil2d/stencil_pc.spu", &["N=96", "K=32"][..]),
        (
            "samples/stencil2d/stencil_global.spu",
            &["N=64", "K=32"][..],
        ),
    ] {
        for boundary in ["iu", "dma"] {
            if boundary == "dma" && !rel.contains("stencil") {
                continue;
            }
            let mut m = Machine::default();
            m.set(&format!("boundary.kind={boundary}")).unwrap();
            m.set_grid("2x2").unwrap();
            if rel.contains("global") {
                m.set("passes.mode=sequential").unwrap();
            }
            let a = stats_of(rel, &m, defines, Some(250)).to_json_text();
            let b = stats_of(rel, &m, defines, Some(250)).to_json_text();
            assert!(
                a == b,
                "{rel} ({boundary}): stats differ between identical runs"
            );
        }
    }
}
