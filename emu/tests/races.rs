//! The shared-memory race checker (`--race-check`) from the outside: kernels whose
//! warps race on shared memory (a missing `bar.sync`) are reported in both modes
//! with both source lines, the warps and the address; correct kernels and the
//! samples are not; and without the option nothing is checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn emu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-emu runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Standard error of a run that must succeed.
fn warnings(args: &[&str]) -> String {
    let out = emu(args);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{args:?} failed:\n{err}");
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    err
}

const RACE: &str = "warning: shared-memory race";

#[test]
fn a_smoothing_kernel_without_its_barrier_is_reported_in_both_modes() {
    let file = "emu/tests/races/smooth_nobar.spu";
    for mode in [&[][..], &["--functional"][..]] {
        let mut args = vec![file, "--quiet", "--race-check"];
        args.extend_from_slice(mode);
        let err = warnings(&args);
        assert!(err.contains(RACE), "{mode:?}: no race reported:\n{err}");
        // The read of another warp's row, and the store it raced with.
        assert!(
            err.contains("smooth_nobar.spu:42") || err.contains("smooth_nobar.spu:44"),
            "{mode:?}: {err}"
        );
        assert!(err.contains("smooth_nobar.spu:28"), "{mode:?}: {err}");
        assert!(err.contains("help: put a `bar.sync`"), "{mode:?}: {err}");
        if mode.is_empty() {
            insta::assert_snapshot!("smooth_nobar", err);
        }
    }
}

#[test]
fn a_reduction_missing_a_barrier_is_reported_in_both_modes() {
    for mode in [&[][..], &["--functional"][..]] {
        let mut args = vec![
            "emu/tests/races/reduce_nobar.spu",
            "--quiet",
            "--race-check",
        ];
        args.extend_from_slice(mode);
        let err = warnings(&args);
        assert!(err.contains(RACE), "{mode:?}: no race reported:\n{err}");
        // The store that fills `buf`, and the first step of the tree.
        assert!(err.contains("reduce_nobar.spu:27"), "{mode:?}: {err}");
        assert!(err.contains("reduce_nobar.spu:35"), "{mode:?}: {err}");
    }
}

#[test]
fn an_exchange_missing_its_second_barrier_is_a_write_after_read() {
    for mode in [&[][..], &["--functional"][..]] {
        let mut args = vec![
            "emu/tests/races/exchange_nobar.spu",
            "--quiet",
            "--race-check",
        ];
        args.extend_from_slice(mode);
        let err = warnings(&args);
        assert!(err.contains(RACE), "{mode:?}: no race reported:\n{err}");
        assert!(
            err.contains("a write of a word that another warp read"),
            "{mode:?}: {err}"
        );
    }
}

#[test]
fn correct_exchanges_through_shared_memory_are_not_reported() {
    for file in [
        "emu/tests/races/smooth.spu",
        "emu/tests/races/exchange.spu",
        "samples/reduction.spu",
        "samples/matmul.spu",
        "samples/ptx/reduce.spu",
        "samples/ptx/histogram_smem.spu",
        "samples/ptx/rowscan.spu",
    ] {
        for mode in [&[][..], &["--functional"][..]] {
            let mut args = vec![file, "--quiet", "--race-check"];
            args.extend_from_slice(mode);
            let err = warnings(&args);
            assert!(!err.contains("race"), "{file} {mode:?}:\n{err}");
        }
    }
    // Several blocks resident per SM, each with its own shared memory.
    let err = warnings(&[
        "samples/stencil2d/stencil_gpu.spu",
        "--machine",
        "gtx480",
        "--quiet",
        "--race-check",
    ]);
    assert!(!err.contains("race"), "{err}");
}

#[test]
fn without_race_check_nothing_is_checked() {
    let err = warnings(&["emu/tests/races/smooth_nobar.spu", "--quiet"]);
    assert!(!err.contains("race"), "{err}");
}

#[test]
fn the_help_says_when_modes_can_differ() {
    let help = text(&emu(&["--help"]).stdout);
    for needle in ["--race-check", "%clock", "race on shared memory"] {
        assert!(help.contains(needle), "`{needle}` not in --help:\n{help}");
    }
}

#[test]
fn a_race_in_a_3d_grid_names_the_block_by_its_three_coordinates() {
    for mode in [&[][..], &["--functional"][..]] {
        let mut args = vec!["emu/tests/races/race3d.spu", "--quiet", "--race-check"];
        args.extend_from_slice(mode);
        let err = warnings(&args);
        assert!(
            err.contains("first in block (1, 2, 3) on SM"),
            "{mode:?}: {err}"
        );
    }
    // A 2-D grid keeps two coordinates.
    let err = warnings(&[
        "emu/tests/races/smooth_nobar.spu",
        "--quiet",
        "--race-check",
    ]);
    assert!(err.contains("first in block (0, 0) on SM"), "{err}");
}
