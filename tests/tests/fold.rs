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

/// A partial pass with a fold (#29): `pass_token.spu` with `P = Q = 2` on a 2x1
/// SPU with a 2x1 fold. A pass covers 4x1 positions, so the launch runs in 1x2
/// passes of 2x1 blocks. By hand:
///
/// - SM (0, 0) holds blocks (0, py) and (1, py) in slots 0 and 1: the token
///   crosses its inner link once per pass (block (0, py) stores one word, block
///   (1, py) loads it: 2 words and 2 warp accesses a pass, 4 of each in all).
/// - Position (2, 0) is slot 0 of SM (1, 0), which holds no block: it runs the
///   east IU code of block row `py` (`%iuid` = py), reading the token over lane 0
///   of SM (0, 0)'s east CB; its slot 1 idles. The east IU lanes have no work.
/// - Between the passes, south lanes 0 and 1 spill what blocks (0, 0) and (1, 0)
///   hand over at their one south sync (a whole 1 024-word CB each) and north
///   lanes 0 and 1 restore it: 2 048 words each way; with the seeds (2 words in)
///   and the tokens (2 words out), 4 100 off-chip words, as on a 2x1 SPU without
///   a fold (the same 1x2 passes).
#[test]
fn a_partial_pass_with_a_fold_runs_its_east_iu_code_in_an_idle_sms_slot_0() {
    let m = machine("2x1", &["sm.fold_x=2"]);
    let ran = run_with(&repo_path(TOKEN), &m, &["P=2", "Q=2"]);
    assert_eq!(ran.out_u32("out"), vec![102, 202]);
    assert_eq!(ran.result.passes, [1, 2]);
    assert_eq!(ran.result.cb.inner_words, 4);
    assert_eq!(ran.result.cb.inner_accesses, 4);
    let t = &ran.result.traffic;
    assert_eq!((t.spill_words, t.restore_words), (2048, 2048));
    assert_eq!(t.load_words + t.store_words, 4100);
    let flat = run_with(&repo_path(TOKEN), &machine("2x1", &[]), &["P=2", "Q=2"]);
    assert_eq!(flat.out_u32("out"), vec![102, 202]);
    assert_eq!(flat.result.traffic, ran.result.traffic);
    assert_eq!(flat.result.cb.inner_words, 0);
    // Where the work ran: the blocks on SM (0, 0), the east IU code (its
    // `st.global` of the token) on SM (1, 0) once per pass, nothing else there.
    let args = [
        TOKEN,
        "-D",
        "P=2",
        "-D",
        "Q=2",
        "--grid",
        "2x1",
        "--set",
        "sm.fold_x=2",
    ];
    let t = sm_trace(&args);
    for l in &t {
        if l.unit == "sm:1,0" {
            assert!(!l.block.contains(','), "no block on SM (1, 0): {l:?}");
        } else {
            assert_eq!(l.unit, "sm:0,0", "{l:?}");
        }
    }
    let stores = t
        .iter()
        .filter(|l| l.unit == "sm:1,0" && l.text.starts_with("st.global"))
        .count();
    assert_eq!(stores, 2, "one east IU program per pass on SM (1, 0)");
}

/// With `P = 3` the east role of each pass falls on position (3, 0), slot 1 of
/// SM (1, 0), whose slot 0 runs block (2, py): the loader refuses, naming it.
#[test]
fn a_partial_pass_refuses_boundary_work_beside_a_block() {
    let out = Command::new(binary("spu-emu"))
        .args([
            TOKEN,
            "-D",
            "P=3",
            "-D",
            "Q=2",
            "--grid",
            "2x1",
            "--set",
            "sm.fold_x=2",
            "-q",
        ])
        .current_dir(repo_path("."))
        .output()
        .expect("spu-emu runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("east IU code for block row 0 falls on position (3, 0), slot 1 of SM (1, 0)"),
        "{err}"
    );
    assert!(err.contains("`sm.fold_y=1`"), "{err}");
}

/// The stencil with partial passes and folds, where the partial pass's boundary
/// role sits in slot 0 of an SM without blocks: N = 192 (6x6 blocks) on a 2x2
/// SPU with a 2x1 fold (a 4x2 window: 2x3 passes, the last pass column 2 blocks
/// wide, its east DMA engines or IU code on SM (1, y)) and with a 1x2 fold (a 2x4
/// window: 3x2 passes, the last pass row 2 blocks high). The bits of one block per
/// SM, and the off-chip words of the formula with the ceilings.
#[test]
fn the_stencil_with_partial_folded_passes_gives_the_bits_of_one() {
    let (n, k) = (192, 32);
    for boundary in ["iu", "dma"] {
        let base = stencil(
            &machine("4x4", &[&format!("boundary.kind={boundary}")]),
            n,
            k,
            false,
        );
        for (fold, mode) in [([2, 1], "overlapped"), ([1, 2], "sequential")] {
            let sets = [
                format!("boundary.kind={boundary}"),
                format!("passes.mode={mode}"),
                format!("sm.fold_x={}", fold[0]),
                format!("sm.fold_y={}", fold[1]),
                "sm.shared_kib=64".to_string(),
            ];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let m = machine("2x2", &sets);
            let what = format!("fold {fold:?} {mode} {boundary}");
            for functional in [false, true] {
                let ran = stencil(&m, n, k, functional);
                for buf in ["Hk", "Hi", "Hj"] {
                    assert_eq!(ran.out_u32(buf), base.out_u32(buf), "{what}: {buf}");
                }
                let window = (2 * fold[0], 2 * fold[1]);
                assert_eq!(
                    ran.result.passes,
                    [6u32.div_ceil(window.0), 6u32.div_ceil(window.1)],
                    "{what}"
                );
                let window = (window.0 as usize, window.1 as usize);
                assert_eq!(offchip(&ran), expected_words(n, k, window), "{what}");
            }
        }
    }
}
