//! Kernels that never end stop with an explanation and exit code 1, in both modes:
//! `--spin-limit` ends a run in which no global store or atomic, finished block or
//! blocksync happens (every thread of 16 blocks of 1 024 waiting for a flag nobody
//! sets), and `--max-cycles` bounds a `--functional` run too (snapshots in
//! `snapshots/endless__*.snap`). Each run is killed, and the test failed, if it
//! has not ended after [`DEADLINE`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far beyond what the bounded runs take (seconds) on a busy machine, far below
/// the hours an unbounded one runs.
const DEADLINE: Duration = Duration::from_secs(600);

const KERNEL: &str = "emu/tests/faults/flag_spin.spu";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs spu-emu on [`KERNEL`] with `args`: exit code and standard error.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(KERNEL)
        .args(args)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spu-emu starts");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "`spu-emu {KERNEL} {}` still ran after {DEADLINE:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_flag_nobody_sets_stops_with_the_spin_message_in_both_modes() {
    for (name, mode) in [
        ("spin_functional", Some("--functional")),
        ("spin_timing", None),
    ] {
        let mut args = vec!["-q", "--spin-limit", "100000"];
        args.extend(mode);
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{name}:\n{err}");
        assert!(
            err.contains("100 000 warp instructions passed without a global store or atomic")
                && err.contains("0 of 16 blocks finished")
                && err.contains("raise --spin-limit"),
            "{name}:\n{err}"
        );
        insta::assert_snapshot!(name, err);
    }
}

#[test]
fn the_default_spin_limit_stops_a_functional_run() {
    let (code, err) = run(&["-q", "--functional"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("67 108 864 warp instructions passed without a global store"),
        "{err}"
    );
}

#[test]
fn max_cycles_stops_a_functional_run() {
    let (code, err) = run(&[
        "-q",
        "--functional",
        "--spin-limit",
        "0",
        "--max-cycles",
        "100000",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the run exceeded --max-cycles 100 000 with 0 of 16 blocks finished"),
        "{err}"
    );
    insta::assert_snapshot!("max_cycles_functional", err);
}
