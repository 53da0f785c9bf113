//! Per-thread local memory within the emulator's state limit: a run holding so
//! many threads at once that 64 KiB each would pass it gives each a share, known
//! before the run; code that goes past its share stops the run with the same
//! error for any number of host threads, and calls whose frames do not fit the
//! share are refused before anything is allocated.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Exit code and standard error of `spu-emu ARGS` run from the workspace root.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-emu runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// 64 blocks of 1024 threads, one block an SM, each thread storing at byte
/// 65532 of its local memory: 64 KiB for each of 65 536 threads would be 4 GiB.
/// The store past the threads' share stops the run at once, the same way for
/// one or two host threads and in functional mode.
#[test]
fn local_memory_past_the_run_s_share_stops_the_run() {
    let kernel = "emu/tests/local/share.spu";
    let grid = ["-D", "G=8", "--grid", "8x8"];
    let mut seen = Vec::new();
    for extra in [
        &["--threads", "1"][..],
        &["--threads", "2"],
        &["--functional"],
    ] {
        let mut args = vec![kernel, "-q"];
        args.extend(grid);
        args.extend(extra);
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{extra:?}: {err}");
        assert!(
            err.contains("local store to address 65532")
                && err.contains("bytes of local memory a thread has in this run")
                && err.contains("the emulator's limits on a run's memory")
                && err.contains("use a smaller --grid, fewer threads per block or smaller buffers")
                && !err.contains("panicked"),
            "{extra:?}: {err}"
        );
        if extra[0] == "--threads" {
            seen.push(err);
        }
    }
    assert_eq!(seen[0], seen[1]);
}

/// The same kernel within its share runs, on a grid that holds as many threads.
#[test]
fn local_memory_within_the_run_s_share_is_used() {
    let (code, err) = run(&[
        "emu/tests/local/share.spu",
        "-q",
        "-D",
        "G=8",
        "--grid",
        "8x8",
        "-D",
        "OFF=512",
    ]);
    assert_eq!(code, Some(0), "{err}");
}

/// 256 blocks of 1024 threads held at once leave each thread less than the 4080
/// bytes past which the kernel's call starts its frame: refused before the run.
/// A 15x15 grid on the same machine holds few enough threads.
#[test]
fn calls_past_the_run_s_local_share_are_refused_before_the_run() {
    let kernel = "emu/tests/local/frames.spu";
    let (code, err) = run(&[kernel, "-q", "-D", "G=16", "--grid", "16x16"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the kernel's calls reach byte 4080 of a thread's local memory")
            && err.contains("this run holds 262144 threads at once")
            && err.contains("use a smaller --grid or fewer threads per block, so that at most")
            && !err.contains("stopped"),
        "{err}"
    );
    let (code, err) = run(&[kernel, "-q", "-D", "G=1", "--grid", "16x16"]);
    assert_eq!(code, Some(0), "{err}");
}
