//! Kernels that never end stop with an explanation and exit code 1, in both modes:
//! a run whose every warp comes back to a state it was in, with nothing changed
//! meanwhile, is stuck (every thread of 16 blocks of 1 024 waiting for a flag
//! nobody sets); `--spin-limit` ends a run in which no change to global memory,
//! finished block or blocksync happens (the same wait, counting its tries), and `--max-cycles` bounds a `--functional` run too (snapshots in
//! `snapshots/endless__*.snap`); a kernel that prints in an endless loop stops
//! there too, its output bounded by `--printf-limit`; loops that rewrite the same
//! words, or synchronise forever, stop too. Each run is killed, and the
//! test failed, if it has not ended after [`DEADLINE`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far beyond what the bounded runs take (seconds) on a busy machine, far below
/// the hours an unbounded one runs.
const DEADLINE: Duration = Duration::from_secs(600);

const KERNEL: &str = "emu/tests/faults/flag_spin.spu";

/// The same wait, counting its tries.
const COUNTING: &str = "emu/tests/faults/flag_spin_counting.spu";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs spu-emu on [`KERNEL`] with `args`: exit code and standard error.
fn run(args: &[&str]) -> (Option<i32>, String) {
    run_kernel(KERNEL, args)
}

/// Runs spu-emu on `kernel` with `args`: exit code and standard error.
fn run_kernel(kernel: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(kernel)
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
                "`spu-emu {kernel} {}` still ran after {DEADLINE:?}",
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

/// What the spin limit stops these loops by: in timing mode they wait on memory
/// and issue less than one warp instruction per cycle, so cycles come first.
fn measure(mode: Option<&str>) -> &'static str {
    if mode.is_some() {
        "warp instructions of one unit"
    } else {
        "cycles"
    }
}

/// Every warp waiting for a flag nobody sets comes back to the same state try
/// after try: the repeat proof stops the run at the default limits, in seconds
/// in both modes (the clocks alone took about a minute in functional mode).
#[test]
fn a_flag_nobody_sets_is_found_stuck_in_both_modes() {
    for (name, mode) in [
        ("stuck_functional", Some("--functional")),
        ("stuck_timing", None),
    ] {
        let mut args = vec!["-q"];
        args.extend(mode);
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{name}:\n{err}");
        assert!(
            err.contains("the kernel is stuck: each of its 128 running warps came back to a state it had been in")
                && err.contains("12 blocks have not started")
                && err.contains("0 of 16 blocks finished")
                && err.contains("look for a wait on a flag"),
            "{name}:\n{err}"
        );
        assert!(!err.contains("spin lock"), "{name}:\n{err}");
        // Functional mode has no cycles to name; timing mode names the cycle.
        assert_eq!(err.contains("(cycle "), mode.is_none(), "{name}:\n{err}");
        insta::assert_snapshot!(name, err);
    }
}

/// A wait that counts its tries (`while (*flag == 0) tries++;`, the count
/// stored after the wait) changes a register on every try, but the count decides
/// nothing in the loop: the repeat proof stops it in every mode, at the same
/// point for 1 and 2 threads (the clocks alone took minutes on large grids).
#[test]
fn a_flag_wait_that_counts_its_tries_is_found_stuck() {
    for mode in [
        vec![],
        vec!["--functional"],
        vec!["--machine", "gtx480"],
        vec!["--machine", "gtx480", "--functional"],
    ] {
        let mut args = vec!["-q", "-D", "G=16", "--grid", "16x16"];
        args.extend(&mode);
        let (code, err) = run_kernel("emu/tests/faults/flag_spin_tries.spu", &args);
        assert_eq!(
            code,
            Some(1),
            "{mode:?}:
{err}"
        );
        assert!(
            err.contains("the kernel is stuck: each of its")
                && err.contains("counters that decide nothing aside")
                && err.contains("0 of 256 blocks finished")
                && err.contains("flag_spin_tries.spu:"),
            "{mode:?}:
{err}"
        );
        args.extend(["--threads", "2"]);
        assert_eq!(
            run_kernel("emu/tests/faults/flag_spin_tries.spu", &args),
            (code, err.clone()),
            "{mode:?}"
        );
    }
}

/// A flag wait of 2 048 warps on a 16 x 16 grid: memory is busy enough that
/// some warp nearly always waits for its load, so the proof keeps each warp it
/// caught looping for the rest of the epoch. It stopped at cycle 3 622 634 (19
/// s) when every warp had to be caught at one moment, and not within minutes on
/// 32 x 32.
#[test]
fn a_flag_wait_of_many_warps_on_a_large_grid_is_found_stuck_soon() {
    let args = ["-q", "--grid", "16x16"];
    let (code, err) = run_kernel("emu/tests/faults/flag_spin_warps.spu", &args);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the kernel is stuck: each of its 2 048 running warps"),
        "{err}"
    );
    let cycle: u64 = err
        .split("(cycle ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .map(|n| n.replace(' ', "").parse().unwrap())
        .expect("the stop names its cycle");
    assert!(cycle < 500_000, "stopped at cycle {cycle}:\n{err}");
    let mut two = args.to_vec();
    two.extend(["--threads", "2"]);
    assert_eq!(
        run_kernel("emu/tests/faults/flag_spin_warps.spu", &two),
        (code, err)
    );
}

/// The same wait giving up after 2^32 tries never repeats a state (its count
/// decides when it ends): the spin limit's clocks stop it, with their own
/// explanation.
#[test]
fn a_flag_wait_that_counts_its_tries_stops_at_the_spin_limit_in_both_modes() {
    for (name, mode) in [
        ("spin_functional", Some("--functional")),
        ("spin_timing", None),
    ] {
        let mut args = vec!["-q", "--spin-limit", "100000"];
        args.extend(mode);
        let (code, err) = run_kernel(COUNTING, &args);
        assert_eq!(code, Some(1), "{name}:\n{err}");
        assert!(
            err.contains(&format!(
                "100 000 {} passed without a change to global memory",
                measure(mode)
            )) && err.contains("0 of 16 blocks finished")
                && err.contains("raise --spin-limit"),
            "{name}:\n{err}"
        );
        assert!(!err.contains("spin lock"), "{name}:\n{err}");
        assert_eq!(err.contains("(cycle "), mode.is_none(), "{name}:\n{err}");
        insta::assert_snapshot!(name, err);
    }
}

/// Blocks waiting for the launch's last block on a GPU that cannot hold them
/// all: the 120 resident blocks spin until the proof stops them, and the
/// message says why the last block never starts.
#[test]
fn blocks_waiting_for_a_block_that_cannot_start_are_found_stuck() {
    for mode in [None, Some("--functional")] {
        let mut args = vec!["--machine", "gtx480"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/later_block.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        // Found at the same point whatever the threads.
        let mut two = args.clone();
        two.extend(["--threads", "2"]);
        assert_eq!(
            run_kernel("emu/tests/faults/later_block.spu", &two),
            (code, err.clone()),
            "{mode:?}"
        );
        assert!(
            err.contains("the kernel is stuck")
                && err.contains("0 of 2000 blocks finished")
                && err
                    .contains("blocks have not started: they start only as running blocks finish"),
            "{mode:?}:\n{err}"
        );
        // Functional mode's note does not send the user to timing mode, which
        // holds fewer blocks than the launch too.
        assert_eq!(
            err.contains("timing mode holds up to 120 blocks at once too, fewer than the launch's 2 000, so a wait for every block of the launch never ends there either"),
            mode.is_some(),
            "{mode:?}:\n{err}"
        );
        assert!(!err.contains("co-resident"), "{mode:?}:\n{err}");
    }
}

/// A software grid barrier (16 blocks of 256 threads, thread 0 of each adding to
/// a counter and spinning until all 16 have) finishes in timing mode, where a
/// GTX 480 SM holds 6 such blocks; functional mode runs one block per SM, so on
/// its 15 SMs the last block never starts: the stop says so, and that timing
/// mode runs them co-resident. The note appears only then: not in timing mode,
/// nor on the SPU, whose SMs hold one block.
#[test]
fn a_grid_barrier_stuck_in_functional_mode_says_why() {
    const BARRIER: &str = "emu/tests/faults/grid_barrier.spu";
    let (code, err) = run_kernel(BARRIER, &["-q", "--machine", "gtx480"]);
    assert_eq!(code, Some(0), "{err}");
    let note = "functional mode runs one block per SM at a time, though this machine holds 6 blocks of this kernel per SM at once";
    for extra in [&[][..], &["--spin-limit", "2000"][..]] {
        let mut args = vec!["-q", "--machine", "gtx480", "--functional"];
        args.extend(extra);
        let (code, err) = run_kernel(BARRIER, &args);
        assert_eq!(code, Some(1), "{extra:?}:\n{err}");
        assert!(
            err.contains(note)
                && err.contains("blocks that wait for other blocks of the launch")
                && err.contains("timing mode (without --functional) runs up to 90 blocks at once"),
            "{extra:?}:\n{err}"
        );
    }
    // Stuck in timing mode too (2 000 blocks wait for the last): the note is
    // functional mode's alone.
    let (code, err) = run_kernel("emu/tests/faults/later_block.spu", &["--machine", "gtx480"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("functional mode runs"), "{err}");
    let (code, err) = run_kernel(KERNEL, &["-q", "--functional"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("functional mode runs"), "{err}");
}

/// A loop of nothing but a barrier in every block is proven stuck in both
/// modes, the warps of each SM compared together (the clocks took over a
/// minute to stop it on a 4 x 4 grid); a loop of barriers that counts to its
/// end in a register is no such loop: it runs to the end and stores its count.
#[test]
fn a_loop_of_barriers_is_found_stuck_and_one_that_counts_runs() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/barrier_loop.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains("each of its 512 running warps came back with the warps beside it to a state they had all been in at one moment")
                && err.contains("passing only barriers of its own block")
                && err.contains("look for a loop around a barrier"),
            "{mode:?}:\n{err}"
        );
        let dump = dir.path().join("out.npy");
        let dump_arg = format!("out={}", dump.display());
        args.extend(["-D", "STEPS=3000", "--dump", &dump_arg]);
        let (code, err) = run_kernel("emu/tests/faults/barrier_steps.spu", &args);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
        let bytes = std::fs::read(&dump).unwrap();
        let counts: Vec<u32> = bytes[bytes.len() - 64..]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(counts, [3000; 16], "{mode:?}");
    }
}

/// A warp waiting out a long latency (a division, a barrier's release) keeps
/// its state without going anywhere: beside a warp spinning for its result, it
/// is no loop, and the run finishes (it was stopped as stuck).
#[test]
fn warps_that_wait_long_are_not_taken_for_loops() {
    for (kernel, set) in [
        ("long_wait", "latency_cycles.int_div=20000"),
        ("release_wait", "latency_cycles.barrier=100000"),
    ] {
        let (code, err) = run_kernel(
            &format!("emu/tests/waits/{kernel}.spu"),
            &["-q", "--set", set],
        );
        assert_eq!(code, Some(0), "{kernel}:\n{err}");
        assert!(!err.contains("stuck"), "{kernel}:\n{err}");
    }
}

/// Waiting warps repeat while one block computes (in registers, for 200 000
/// rounds) towards the flag: that block does not repeat, so the run goes on,
/// and every block gets past the wait; also when the waiters count their
/// tries.
#[test]
fn waiting_warps_beside_a_computing_block_are_not_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = ["late_flag", "late_flag_tries"];
    for (kernel, mode) in kernels
        .iter()
        .flat_map(|k| [(k, None), (k, Some("--functional"))])
    {
        let out = dir.path().join("out.npy");
        let dump = format!("out={}", out.display());
        let mut args = vec!["-q", "--dump", &dump];
        args.extend(mode);
        let (code, err) = run_kernel(&format!("emu/tests/waits/{kernel}.spu"), &args);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
        let bytes = std::fs::read(&out).unwrap();
        // 16 little-endian ones after the header.
        let data = &bytes[bytes.len() - 64..];
        assert!(
            data.chunks(4).all(|w| w == [1, 0, 0, 0]),
            "{mode:?}: {data:?}"
        );
    }
}

/// A kernel that prints in an endless loop changes no global memory: the spin
/// limit stops it with the usual explanation, and its output, all from before
/// the stop, is bounded by `--printf-limit`, with a note on what was dropped.
#[test]
fn an_endless_printf_loop_stops_at_the_spin_limit_with_bounded_output() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["--spin-limit", "100000", "--printf-limit", "1000"];
        args.extend(mode);
        let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
            .arg("emu/tests/faults/printf_loop.spu")
            .args(&args)
            .current_dir(root())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains(&format!(
                "100 000 {} passed without a change to global memory",
                measure(mode)
            )) && !err.contains("spin lock"),
            "{mode:?}:\n{err}"
        );
        // Whole texts of thread 0 (block 0, warp 0, lane 0) first, up to the bound.
        assert_eq!(
            out.stdout,
            "tick 0\n".repeat(1000 / 7).as_bytes(),
            "{mode:?}"
        );
        assert!(
            err.contains("warning: `printf` output is limited to 1 000 bytes per run: the last ")
                && err.contains(
                    "were dropped; raise the limit with `--printf-limit BYTES` (at most 32 MiB)"
                ),
            "{mode:?}:\n{err}"
        );
    }
}

#[test]
fn printf_limit_is_checked() {
    let (code, err) = run_kernel(
        "emu/tests/faults/printf_loop.spu",
        &["--printf-limit", "33554433"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--printf-limit")
            && err.contains("at most 33554432 bytes (32 MiB) of `printf` output can be kept"),
        "{err}"
    );
}

/// A failed compare-and-swap stores, but changes nothing: a warp spinning on a lock
/// its own lane 0 holds is stopped by the spin limit in both modes (it used to run
/// until `--max-cycles`, hours in timing mode). It waits for its atomics: in
/// timing mode on memory latency, so cycles count; in functional mode for the
/// end of a window of scheduling rounds, so rounds count, 32 warp instructions
/// each (counting its few instructions alone took minutes at the default limit).
#[test]
fn a_compare_and_swap_lock_that_starves_its_holder_stops_in_both_modes() {
    for (mode, clock) in [
        (
            Some("--functional"),
            "3 125 scheduling rounds (of 32 warp instructions' worth each)",
        ),
        (None, "100 000 cycles"),
    ] {
        let mut args = vec!["-q", "--spin-limit", "100000", "--threads", "2"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/cas_spin.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        // A failed compare-and-swap changes nothing, so the repeat proof may
        // catch the spin before the clock does.
        assert!(
            (err.contains(&format!("{clock} passed without a change to global memory"))
                || err.contains("the kernel is stuck: its one running warp came back"))
                && err.contains("0 of 1 blocks finished")
                && err.contains("spin lock"),
            "{mode:?}:\n{err}"
        );
    }
}

/// A compare-and-swap lock in shared memory that is never released: the
/// failed swaps change nothing, so the repeat proof stops it at once in
/// functional mode (the clocks took 21 s); timing mode, whose shared atomics
/// keep the window's accesses pending, is left to the clocks (`--spin-limit`
/// small here).
#[test]
fn a_shared_memory_lock_never_released_is_found_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lock.spu");
    std::fs::write(
        &path,
        ".launch grid(16) block(256);
.entry k {
    .shared .u32 lock;
    .reg .u32 %r<4>;
    .reg .pred %p<2>;
    mov.u32 %r0, lock;
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra SPIN;
    st.shared.u32 [%r0], 1;
SPIN:
    bar.sync 0;
AGAIN:
    atom.shared.cas.b32 %r1, [%r0], 0, 1;
    setp.ne.u32 %p0, %r1, 0;
    @%p0 bra AGAIN;
    exit;
}
",
    )
    .unwrap();
    let (code, err) = run_kernel(path.to_str().unwrap(), &["-q", "--functional"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the kernel is stuck"), "{err}");
    let (code, err) = run_kernel(path.to_str().unwrap(), &["-q", "--spin-limit", "100000"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("100 000 cycles passed"), "{err}");
}

#[test]
fn the_default_spin_limit_stops_a_functional_run() {
    let (code, err) = run_kernel(COUNTING, &["-q", "--functional", "-D", "BLOCKS=1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(
            "67 108 864 warp instructions of one unit passed without a change to global memory"
        ),
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

/// A loop that changes memory, but only one counter word, stops by the spin limit
/// in both modes (it used to run until `--max-cycles`: minutes in timing mode,
/// hours in functional mode); so does one that sweeps over 8 192 words forever.
/// A loop as long that writes 8 192 words once is work, and runs to its end.
#[test]
fn a_counter_rewritten_forever_stops_but_work_on_many_words_does_not() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q", "--spin-limit", "100000", "--threads", "2"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/counter_loop.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains(&format!(
                "100 000 {} passed without a finished block or a blocksync",
                measure(mode)
            )) && err
                .contains("changed global memory only in words changed before, one word in all")
                && err.contains("0 of 1 blocks finished")
                && err.contains("raise --spin-limit"),
            "{mode:?}:\n{err}"
        );
        assert_eq!(err.contains("cycle "), mode.is_none(), "{mode:?}:\n{err}");
        let (code, err) = run_kernel("emu/tests/faults/sweep_forever.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains("only in words changed before, the same 8 192 words in all"),
            "{mode:?}:\n{err}"
        );
        let (code, err) = run_kernel("emu/tests/faults/many_words.spu", &args);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
    }
}

/// In timing mode a loop that waits on memory latency issues few instructions
/// per cycle: the spin limit counts cycles too, so such a loop stops as soon.
#[test]
fn a_latency_bound_spin_stops_by_cycles_in_timing_mode() {
    let (code, err) = run_kernel(
        "emu/tests/faults/counter_loop.spu",
        &[
            "-q",
            "--spin-limit",
            "100000",
            "--set",
            "memory.dram_latency_cycles=2000",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("100 000 cycles passed without"), "{err}");
}

/// The spin limit counts the warp instructions of one unit, not of the whole
/// grid: sixteen blocks computing in registers for 9 000 warp instructions each
/// (144 160 in all, 36 428 cycles) before their one store are not stopped by a
/// limit of 100 000 (a grid-wide count stopped them, and larger grids sooner).
#[test]
fn a_long_computation_on_many_units_is_not_taken_for_a_spin() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q", "--spin-limit", "100000"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/long_compute.spu", &args);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
    }
}

/// `--max-instructions` holds for a run that ends before the limit's periodic
/// check (a functional run of matmul issued 83 456 with a limit of 10).
#[test]
fn max_instructions_holds_for_a_run_that_ends_between_checks() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q", "--max-instructions", "10"];
        args.extend(mode);
        let (code, err) = run_kernel("samples/matmul.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains("the run exceeded --max-instructions 10 warp instructions"),
            "{mode:?}:\n{err}"
        );
    }
}

/// Loops that synchronise forever stop in both modes (they ran to `--max-cycles`,
/// about ten minutes, because every sync counted as progress): a grid that
/// counts in one word between global blocksyncs, and two blocks that pass a
/// counter through a CB. Syncs weigh 1 024 warp instructions on a clock that
/// allows 16 times the limit.
#[test]
fn loops_that_synchronise_forever_stop_in_both_modes() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q", "--spin-limit", "1000", "--threads", "2"];
        args.extend(mode);
        for (kernel, what) in [
            ("sync_forever", "changing only one word"),
            ("cb_forever", "changing no global memory"),
        ] {
            let (code, err) = run_kernel(&format!("emu/tests/faults/{kernel}.spu"), &args);
            assert_eq!(code, Some(1), "{kernel} {mode:?}:\n{err}");
            assert!(
                err.contains("16 000 warp instructions of one unit (a blocksync it takes part in counting as 1 024) passed with")
                    && err.contains(&format!("blocksyncs but no finished block, {what} ("))
                    && err.contains("looks stuck in a loop that synchronises forever")
                    && err.contains("needs a larger --spin-limit"),
                "{kernel} {mode:?}:\n{err}"
            );
            assert_eq!(err.contains("cycle "), mode.is_none(), "{mode:?}:\n{err}");
        }
    }
}

/// An iterative kernel that synchronises each step is not taken for such a
/// loop: 64 steps that each write new words run to the end, and so do 8 steps
/// in place (syncs still count as progress for the limit itself); 64 steps in
/// place, 16 times the limit, stop, and the message says what they changed.
#[test]
fn iterative_kernels_that_synchronise_run_unless_they_stay_in_place_too_long() {
    let kernel = "emu/tests/faults/sync_steps.spu";
    for mode in [Some("--functional"), None] {
        let run_with = |defines: &[&str]| {
            let mut args = vec!["-q", "--spin-limit", "1000"];
            args.extend(mode);
            for d in defines {
                args.extend(["-D", d]);
            }
            run_kernel(kernel, &args)
        };
        let (code, err) = run_with(&["T=64", "FRESH=1"]);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
        let (code, err) = run_with(&["T=8", "FRESH=0"]);
        assert_eq!(code, Some(0), "{mode:?}:\n{err}");
        let (code, err) = run_with(&["T=64", "FRESH=0"]);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains("changing only the same 128 words") && err.contains("0 of 4 blocks"),
            "{mode:?}:\n{err}"
        );
    }
}

/// A launch of several passes keeps each tile a pass sends on for the next: a
/// pass that synchronises forever filled memory without bound (gigabytes in a
/// minute, before the spin limit could stop it). The tiles count against the
/// global memory the buffers leave, and the run stops when they outgrow it.
#[test]
fn spilled_tiles_of_an_endless_pass_are_bounded_by_global_memory() {
    for mode in [Some("--functional"), None] {
        let mut args = vec!["-q", "--grid", "1x1", "--set", "memory.global_mib=1"];
        args.extend(mode);
        let (code, err) = run_kernel("emu/tests/faults/cb_forever.spu", &args);
        assert_eq!(code, Some(1), "{mode:?}:\n{err}");
        assert!(
            err.contains("error: the virtual IUs spilled 249 CB tiles (2 MiB), more than the 1 MiB kept for them (the global memory the buffers leave, at most 1 GiB) (0 of 2 blocks finished)")
                && err.contains("look for a loop that never ends"),
            "{mode:?}:\n{err}"
        );
    }
}
