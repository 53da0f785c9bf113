//! What every stencil's tests share: the SPU and GPU machines they run on, the
//! off-chip word counts, and the functional-mode comparison.

use spu_emu::Machine;
use spu_tests::{Ran, repo_path};

/// Words in one CB (a spilling virtual IU moves a whole CB per rendezvous).
pub const CB_WORDS: u64 = 1024;

pub fn spu(grid: &str, sets: &[&str]) -> Machine {
    let mut m = Machine::default();
    m.set_grid(grid).unwrap();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

pub fn gpu(preset: &str, sms: usize) -> Machine {
    let mut m = spu_emu::machine::preset(preset).unwrap();
    m.set(&format!("grid.cols={sms}")).unwrap();
    m
}

/// The SPU machines every kernel is checked on: one pass and several, both pass
/// modes, IUs and DMA engines.
pub fn spu_machines() -> Vec<Machine> {
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

pub fn offchip(ran: &Ran) -> u64 {
    ran.result.traffic.load_words + ran.result.traffic.store_words
}

/// Words a GPU kernel moved as `.f32` data (flags and tickets are `.u32`).
pub fn data_words(ran: &Ran, m: &Machine) -> u64 {
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
pub fn same_in_functional(
    kernel: &str,
    m: &Machine,
    defines: &[String],
    timed: &Ran,
    bufs: &[&str],
) {
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
