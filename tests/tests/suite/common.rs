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
/// modes, IUs and DMA engines (one block per SM; see [`fold_machines`] for more).
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

/// SPU machines that hold several blocks per SM for a launch of `gx x gy` blocks:
/// for the first two folds that divide the launch, one pass on IUs; for the first,
/// also one pass on DMA engines and, where the launch allows, two passes (IUs
/// overlapped, DMA engines sequential). Whatever the launch, also folds whose
/// passes it leaves partial (the suite's kernels have no boundary work, so any
/// fold runs them): a 2x2 fold on a 2x2 SPU (IUs, overlapped), a 2x1 fold on a
/// 3x2 SPU (DMA engines, sequential) and a 1x2 fold on a 1x1 SPU (DMA engines).
pub fn fold_machines(gx: usize, gy: usize) -> Vec<Machine> {
    let mut out = Vec::new();
    let folds = [[2, 1], [1, 2], [2, 2], [3, 1], [1, 3]];
    let fits = folds
        .iter()
        .filter(|[fx, fy]| gx % fx == 0 && gy % fy == 0)
        .take(2);
    let fold_sets = |fx: usize, fy: usize| {
        vec![
            format!("sm.fold_x={fx}"),
            format!("sm.fold_y={fy}"),
            // Room for the blocks' shared memory and the inner CB pairs, and for
            // more than two of these 256-thread blocks' registers (a Fermi SM
            // holds two): residency, which does not change results.
            "sm.shared_kib=256".to_string(),
            "sm.registers=131072".to_string(),
        ]
    };
    let mut add = |grid: String, sets: Vec<String>| {
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        out.push(spu(&grid, &sets));
    };
    for (i, &[fx, fy]) in fits.enumerate() {
        let (cols, rows) = (gx / fx, gy / fy);
        let fold = fold_sets(fx, fy);
        let with = |more: &[&str]| -> Vec<String> {
            fold.iter()
                .cloned()
                .chain(more.iter().map(|s| s.to_string()))
                .collect()
        };
        add(format!("{cols}x{rows}"), with(&[]));
        if i > 0 {
            continue;
        }
        add(format!("{cols}x{rows}"), with(&["boundary.kind=dma"]));
        let two = if cols % 2 == 0 {
            Some(format!("{}x{rows}", cols / 2))
        } else if rows % 2 == 0 {
            Some(format!("{cols}x{}", rows / 2))
        } else {
            None
        };
        if let Some(grid) = two {
            add(grid.clone(), with(&[]));
            add(grid, with(&["boundary.kind=dma", "passes.mode=sequential"]));
        }
    }
    for (grid, [fx, fy], more) in [
        ("2x2", [2, 2], vec![]),
        (
            "3x2",
            [2, 1],
            vec!["boundary.kind=dma", "passes.mode=sequential"],
        ),
        ("1x1", [1, 2], vec!["boundary.kind=dma"]),
    ] {
        let mut sets = fold_sets(fx, fy);
        sets.extend(more.iter().map(|s| s.to_string()));
        add(grid.to_string(), sets);
    }
    out
}

/// Block columns and rows one pass covers on `m`: its grid times its fold.
pub fn window(m: &Machine) -> (usize, usize) {
    (
        (m.grid_cols * m.sm_fold_x) as usize,
        (m.grid_rows * m.sm_fold_y) as usize,
    )
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
