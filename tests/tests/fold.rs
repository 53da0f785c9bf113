//! Several blocks per SM on the SPU (`sm.fold_x` x `sm.fold_y`, `emu/RUNTIME.md`,
//! Several blocks per SM): a token-passing schedule computed by hand, the 2-D
//! stencil bit-identical to one block per SM (IUs and DMA engines, both pass
//! modes, timing and functional) with its off-chip words against the formula for
//! a pass window of `P*fx x Q*fy` blocks, the global-sync stencil, and a deadlock
//! report that names the SM slot.

use spu_emu::Machine;
use spu_tests::{Ran, binary, repo_path, run_in_mode, run_with};
use std::process::Command;

const PC: &str = "samples/stencil2d/stencil_pc.spu";
const GLOBAL: &str = "samples/stencil2d/stencil_global.spu";
const TOKEN: &str = "samples/pass_token.spu";

fn machine(grid: &str, sets: &[&str]) -> Machine {
    let mut m = Machine::default();
    m.set_grid(grid).unwrap();
    for s in sets {
        m.set(s).unwrap();
    }
    m
}

/// One line of an instruction trace: cycle, unit, block, instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    cycle: u64,
    unit: String,
    block: String,
    text: String,
}

/// The trace of `args` (lines of SM code only).
fn sm_trace(args: &[&str]) -> Vec<Line> {
    let out = Command::new(binary("spu-emu"))
        .args(args)
        .args(["-q", "--trace", "-"])
        .current_dir(repo_path("."))
        .output()
        .expect("spu-emu runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f[2].starts_with("sm:").then(|| Line {
                cycle: f[0].parse().unwrap(),
                unit: f[2].to_string(),
                block: f[3].to_string(),
                text: f[7..].join(" "),
            })
        })
        .collect()
}

/// The cycle block `block` issued the first instruction starting with `what`.
fn at(trace: &[Line], block: &str, what: &str) -> u64 {
    trace
        .iter()
        .find(|l| l.block == block && l.text.starts_with(what))
        .unwrap_or_else(|| panic!("block {block} never runs `{what}`"))
        .cycle
}

/// `pass_token.spu` on a 2x2 launch, on a 1x2 SPU whose SMs each hold a 2x1 fold:
/// block (0, y) in slot 0 and (1, y) in slot 1 of SM (0, y), joined by an inner
/// link. The schedule by hand, from the kernel's instructions and the machine's
/// latencies (ALU and control 4, CB 24, blocksync handshake 16, DRAM 400, one
/// cycle per 32-byte transaction; the CB store interval 2):
///
/// - Every block issues `bar.blocksync.north` at 5 (mov, 4, setp, 1). North IUs
///   reach `bar.blocksync.south` at 26 (six instructions and two untaken
///   branches: 0, 1, 2, 5, 6, 10, 14, 18, 22, 26), so row 0 is released at
///   26 + 16 = 42 and issues `bar.blocksync.west` at 42.
/// - West IUs load the seed (`ld.global` at 30, data at 30 + 400 + 1 = 431),
///   store it and arrive at 432: block (0, 0) is released at 448.
/// - A released block: branch at R, `ld.cb.west` at R + 4, add at R + 28,
///   `st.cb.east` at R + 32, `st.cb.south` at R + 34, `bar.blocksync.east` at
///   R + 35, `bar.blocksync.south` at its release from the east sync.
/// - (0, 0): R = 448, east sync at 483 meets (1, 0) (waiting at its west sync
///   since 42) over the inner link: both released at 499; its south sync at 499
///   meets (0, 1) (waiting at north since 5): released at 515.
/// - (1, 0): R = 499, east sync at 534 meets east IU 0 (waiting): 550; south
///   sync at 550 meets (1, 1): 566.
/// - (0, 1): north released at 515, west sync at 515 meets west IU 1 (waiting
///   since 432): R = 531, east sync at 566.
/// - (1, 1): north released at 566, west sync at 566 meets (0, 1)'s east sync of
///   566 over the inner link of SM (0, 1): R = 582, east sync at 617.
///
/// One-warp blocks on two schedulers never compete for an issue slot, and the
/// wavefront never has two blocks of one SM use the load/store pipeline in the
/// same cycle, so the schedule is the one of a 2x2 SPU with one block per SM.
#[test]
fn a_token_passes_through_a_fold_on_the_schedule_computed_by_hand() {
    let args = [TOKEN, "-D", "P=2", "-D", "Q=2", "--grid", "1x2"];
    let folded: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--set", "sm.fold_x=2"])
        .collect();
    let t = sm_trace(&folded);
    for (block, release) in [("0,0", 448), ("1,0", 499), ("0,1", 531), ("1,1", 582)] {
        assert_eq!(at(&t, block, "ld.cb.west"), release + 4, "block {block}");
        assert_eq!(at(&t, block, "st.cb.east"), release + 32, "block {block}");
        assert_eq!(
            at(&t, block, "bar.blocksync.east"),
            release + 35,
            "block {block}"
        );
    }
    assert_eq!(at(&t, "0,0", "bar.blocksync.west"), 42);
    assert_eq!(at(&t, "1,0", "bar.blocksync.west"), 42);
    assert_eq!(at(&t, "0,1", "bar.blocksync.west"), 515);
    assert_eq!(at(&t, "1,1", "bar.blocksync.west"), 566);
    assert_eq!(at(&t, "0,0", "bar.blocksync.south"), 499);
    assert_eq!(at(&t, "1,0", "bar.blocksync.south"), 550);
    // Blocks (0, y) and (1, y) run in slots of SM (0, y).
    for l in &t {
        let y = l.block.split(',').nth(1).unwrap();
        assert_eq!(l.unit, format!("sm:0,{y}"), "{l:?}");
    }
    // The same schedule as one block per SM on a 2x2 grid.
    let flat = sm_trace(&[TOKEN, "-D", "P=2", "-D", "Q=2", "--grid", "2x2"]);
    let strip = |t: &[Line]| -> Vec<(u64, String, String)> {
        let mut v: Vec<_> = t
            .iter()
            .map(|l| (l.cycle, l.block.clone(), l.text.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(strip(&t), strip(&flat));
    // The tokens: seeds 100 and 200, plus one per block.
    let ran = run_with(
        &repo_path(TOKEN),
        &machine("1x2", &["sm.fold_x=2"]),
        &["P=2", "Q=2"],
    );
    assert_eq!(ran.out_u32("out"), vec![102, 202]);
}

fn stencil(m: &Machine, n: usize, k: usize, functional: bool) -> Ran {
    run_in_mode(
        &repo_path(PC),
        m,
        &[&format!("N={n}"), &format!("K={k}")],
        &[],
        functional,
    )
}

fn offchip(ran: &Ran) -> u64 {
    ran.result.traffic.load_words + ran.result.traffic.store_words
}

/// `2*K*b*G*(nx+ny) + 2*N^2` with the pass window of a fold: `nx = ceil(G / (P*fx))`.
fn expected_words(n: usize, k: usize, window: (usize, usize)) -> u64 {
    let (b, g) = (32, n / 32);
    let (nx, ny) = (g.div_ceil(window.0), g.div_ceil(window.1));
    (2 * k * b * g * (nx + ny) + 2 * n * n) as u64
}

/// The producer-consumer stencil with several blocks per SM: the same bits as one
/// block per SM (IUs and DMA engines, both pass modes, one pass and several,
/// timing and functional), and the off-chip words of the formula with the folded
/// window.
#[test]
fn the_stencil_with_several_blocks_per_sm_gives_the_bits_of_one() {
    let (n, k) = (256, 64);
    for boundary in ["iu", "dma"] {
        let base = stencil(
            &machine("4x4", &[&format!("boundary.kind={boundary}")]),
            n,
            k,
            false,
        );
        for (grid, fold, mode) in [
            ("4x4", [2, 1], "overlapped"),
            ("4x4", [1, 2], "sequential"),
            ("2x4", [2, 2], "overlapped"),
            ("4x4", [2, 2], "overlapped"),
            ("2x2", [2, 2], "sequential"),
            ("1x2", [4, 2], "overlapped"),
        ] {
            let sets = [
                format!("boundary.kind={boundary}"),
                format!("passes.mode={mode}"),
                format!("sm.fold_x={}", fold[0]),
                format!("sm.fold_y={}", fold[1]),
                // Room for the blocks' planes and the inner CB pairs.
                "sm.shared_kib=160".to_string(),
            ];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let m = machine(grid, &sets);
            let what = format!("{grid} fold {fold:?} {mode} {boundary}");
            for functional in [false, true] {
                let ran = stencil(&m, n, k, functional);
                for buf in ["Hk", "Hi", "Hj"] {
                    assert_eq!(ran.out_u32(buf), base.out_u32(buf), "{what}: {buf}");
                }
                let window = (
                    (m.grid_cols * fold[0]) as usize,
                    (m.grid_rows * fold[1]) as usize,
                );
                assert_eq!(offchip(&ran), expected_words(n, k, window), "{what}");
            }
        }
    }
}

/// A 2x2 fold on the thesis's 4x4 SPU runs N = K = 256 in one pass: no spills, and
/// the off-chip words of one pass (2*N^2 + 4*N*K).
#[test]
fn a_fold_turns_four_passes_into_one() {
    let m = machine("4x4", &["sm.fold_x=2", "sm.fold_y=2", "sm.shared_kib=72"]);
    let ran = stencil(&m, 256, 256, false);
    assert_eq!(ran.result.traffic.spill_words, 0);
    assert_eq!(offchip(&ran), 2 * 256 * 256 + 4 * 256 * 256);
    assert_eq!(ran.result.passes, [1, 1]);
}

/// Global blocksync: every block of every SM arrives, then every link (inner ones
/// too) switches.
#[test]
fn global_sync_counts_every_resident_block() {
    let base = run_with(
        &repo_path(GLOBAL),
        &machine("4x4", &["passes.mode=sequential"]),
        &["N=128", "K=64"],
    );
    for (grid, fold) in [("2x4", "sm.fold_x=2"), ("4x2", "sm.fold_y=2")] {
        let m = machine(grid, &["passes.mode=sequential", fold, "sm.shared_kib=64"]);
        let ran = run_with(&repo_path(GLOBAL), &m, &["N=128", "K=64"]);
        for buf in ["Hk", "Hi", "Hj"] {
            assert_eq!(ran.out_u32(buf), base.out_u32(buf), "{grid} {fold}: {buf}");
        }
        // One pass: T = K/32 + Gx + Gy = 2 + 4 + 4 global syncs, as without a fold.
        assert_eq!(ran.result.global_syncs, 10, "{grid} {fold}");
    }
}
