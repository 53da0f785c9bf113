//! Run-time errors that must point at the user's code: the CB checker (a read of a
//! CB word its producer has not written since the link last switched) and deadlock
//! reports (the wait chain or cycle, with the kernel source lines that made the
//! syncs at both ends of every blocked link), on one pass and across passes.
//! Snapshots in `snapshots/blame__*.snap`.

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

/// The line number of the first line of fault kernel `file` containing `marker`.
fn line_with(file: &str, marker: &str) -> usize {
    let text = std::fs::read_to_string(root().join("emu/tests/faults").join(file)).unwrap();
    1 + text
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker")
}

/// Runs a kernel that must fail and returns its standard error.
fn fails(args: &[&str]) -> String {
    let out = emu(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail:\n{err}");
    err
}

#[test]
fn a_deadlock_on_one_pass_names_both_sides() {
    let err = fails(&["emu/tests/faults/extra_sync.spu", "--grid", "2x1", "-q"]);
    insta::assert_snapshot!("deadlock_one_pass", err);
}

/// The restoring virtual IU is the unit left waiting; the report still names the
/// IU code and the block code that made the syncs on its link.
#[test]
fn a_deadlock_across_passes_names_the_kernel_code_not_the_runtime() {
    let err = fails(&[
        "emu/tests/faults/extra_sync.spu",
        "--grid",
        "2x1",
        "-D",
        "GY=2",
        "-q",
    ]);
    for marker in ["// the north IU's sync", "// the block's sync"] {
        let at = format!("extra_sync.spu:{}", line_with("extra_sync.spu", marker));
        assert!(err.contains(&at), "{marker}: {at} in\n{err}");
    }
    insta::assert_snapshot!("deadlock_across_passes", err);
}

#[test]
fn a_wait_cycle_lists_the_ring_and_nothing_else() {
    let err = fails(&["emu/tests/faults/sync_cycle.spu", "--grid", "2x2", "-q"]);
    assert!(
        err.contains("wait cycle: SM (0, 0) -> SM (1, 0) -> SM (1, 1) -> SM (0, 1) -> SM (0, 0)")
    );
    insta::assert_snapshot!("deadlock_cycle", err);
}

/// Only the units of the chain are described; the others are counted.
#[test]
fn other_waiting_units_are_counted_not_described() {
    // 8 blocks on 8x1: every north IU is stuck the same way.
    let err = fails(&[
        "emu/tests/faults/extra_sync.spu",
        "--grid",
        "8x1",
        "-D",
        "GX=8",
        "-q",
    ]);
    assert_eq!(err.matches("running the north IU code").count(), 1, "{err}");
    assert!(
        err.contains(
            "7 other units wait too: north IU 1, north IU 2, north IU 3, north IU 4 and 3 more"
        ),
        "{err}"
    );
}

#[test]
fn the_cb_checker_names_the_read_the_link_and_the_missing_write() {
    let err = fails(&["emu/tests/faults/cb_stale.spu", "--grid", "2x1", "-q"]);
    insta::assert_snapshot!("cb_stale", err);
}

/// Functional mode moves plain CB words on its own path from the block loop: the
/// checker stops the same read there.
#[test]
fn the_cb_checker_stops_the_same_read_in_functional_mode() {
    let timing = fails(&["emu/tests/faults/cb_stale.spu", "--grid", "2x1", "-q"]);
    let functional = fails(&[
        "emu/tests/faults/cb_stale.spu",
        "--grid",
        "2x1",
        "--functional",
        "-q",
    ]);
    let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert_eq!(first(&functional), first(&timing));
    assert!(
        functional.contains("in block (1, 0) on SM (1, 0), thread (16, 0, 0) (warp 0, lane 16)"),
        "{functional}"
    );
}

/// Words spilled and restored between passes keep whether they were written.
#[test]
fn the_cb_checker_sees_through_spills_and_restores() {
    let err = fails(&[
        "emu/tests/faults/cb_stale.spu",
        "--grid",
        "2x1",
        "-D",
        "G=4",
        "-D",
        "PARTIAL=1",
        "-q",
    ]);
    assert!(
        err.contains("in block (2, 0) on SM (0, 0), thread (16, 0, 0)"),
        "{err}"
    );
    insta::assert_snapshot!("cb_stale_across_passes", err);
    // Block 2 itself writes its second tile in full: block 3 reads clean data.
    let out = emu(&[
        "emu/tests/faults/cb_stale.spu",
        "--grid",
        "2x1",
        "-D",
        "G=4",
        "-D",
        "PARTIAL=3",
        "-q",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The case: a CB kernel with every east/west blocksync removed from both
/// sides assembles and, without the checker, runs to exit 0 with wrong results.
#[test]
fn removing_every_sync_on_a_link_stops_at_the_first_bad_read() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(root().join("samples/stencil2d/stencil_pc.spu")).unwrap();
    let broken: String = src
        .lines()
        .filter(|l| !l.contains("bar.blocksync.east") && !l.contains("bar.blocksync.west"))
        .map(|l| format!("{l}\n"))
        .collect();
    let read_line = 1 + broken
        .lines()
        .position(|l| l.contains("ld.cb.west.f32 %f0, [%r11];"))
        .unwrap();
    assert!(
        read_line >= 100,
        "the layout check below wants a 3-digit line"
    );
    let path = dir.path().join("no_east_west.spu");
    std::fs::write(&path, broken).unwrap();
    let path = path.to_str().unwrap();
    for mode in [&[][..], &["--functional"][..]] {
        let mut args = vec![path, "-q"];
        args.extend(mode);
        let all = fails(&args);
        // The assembler already warns that the SM code never syncs these sides.
        assert!(
            all.starts_with(
                "warning: this code reads the west CB but never syncs on the west link"
            ),
            "{mode:?}: {all}"
        );
        assert!(
            all.contains("warning: this code writes the east CB but never syncs on the east link"),
            "{all}"
        );
        let err = &all[all.find("\nerror: ").expect("a run-time error") + 1..];
        let first = err.lines().next().unwrap();
        assert!(
            first.starts_with("error: CB read of word 0 (byte address 0x0) on the west link"),
            "{mode:?}: {err}"
        );
        assert!(err.contains("`ld.cb.west.f32 %f0, [%r11];`"), "{err}");
        // A three-digit line: arrow, gutter and notes in one column.
        let lines: Vec<&str> = err.lines().collect();
        assert!(lines[1].starts_with("    --> "), "{err}");
        assert_eq!(lines[2], "    |");
        assert!(lines[3].starts_with(&format!("{read_line} | ")), "{err}");
        assert!(lines[5].starts_with("    = instruction"), "{err}");
        assert!(err.contains("east IU 0"), "{err}");
        assert!(
            err.contains("producer synced on it 0 times, consumer 0 times; it switched 0 times"),
            "{err}"
        );
        assert!(
            err.contains("probably missing: no `bar.blocksync.west` before this read"),
            "{err}"
        );
    }
    let out = emu(&[path, "-q", "--no-cb-check"]);
    assert!(
        out.status.success(),
        "without the checker the run completes (with wrong results)"
    );
}

/// A consumer that skips its sync reads before the link has ever switched.
#[test]
fn a_read_before_the_consumers_sync_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(root().join("samples/pass_token.spu")).unwrap();
    // The SMs' west sync goes; the west IUs keep theirs.
    let broken = src.replacen("    bar.blocksync.west;\n", "", 1);
    assert_ne!(broken, src);
    let path = dir.path().join("no_west.spu");
    std::fs::write(&path, broken).unwrap();
    let err = fails(&[path.to_str().unwrap(), "-q", "--grid", "2x1"]);
    assert!(err.contains("in block (0, 0) on SM (0, 0)"), "{err}");
    assert!(
        err.contains("probably missing: no `bar.blocksync.west` before this read: the link has never switched"),
        "{err}"
    );
}

/// A DMA storer reads its whole tile from the CB: words the block did not write
/// are caught too.
#[test]
fn the_cb_checker_covers_dma_storers() {
    let args = [
        "emu/tests/faults/dma_unwritten.spu",
        "--grid",
        "2x1",
        "--boundary",
        "dma",
        "-q",
    ];
    let err = fails(&args);
    insta::assert_snapshot!("dma_unwritten", err);
    let mut off = args.to_vec();
    off.push("--no-cb-check");
    assert!(emu(&off).status.success());
}
