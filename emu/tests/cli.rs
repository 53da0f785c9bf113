//! `spu-emu` from the outside: a good run prints a summary and writes stats and
//! dumps; every kind of bad input exits non-zero with a clear `error:` and never a
//! panic or a half-written file; run-time errors read as the snapshots show.

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

/// Runs a command that must fail cleanly; returns its standard error.
fn fails(args: &[&str], needle: &str) -> String {
    let out = emu(args);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{args:?} succeeded:\n{}",
        text(&out.stdout)
    );
    assert!(err.contains("error:"), "{args:?}: no `error:` in\n{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?} panicked:\n{err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in\n{err}"
    );
    err
}

#[test]
fn a_good_run_prints_a_summary_and_writes_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    let dump = dir.path().join("c.npy");
    let out = emu(&[
        "samples/vecadd.spu",
        "-D",
        "N=512",
        "--stats",
        stats.to_str().unwrap(),
        "--dump",
        &format!("C={}", dump.display()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    for key in ["cycles", "IPC", "off-chip", "passes", "700 MHz"] {
        assert!(summary.contains(key), "summary lacks {key}:\n{summary}");
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert!(doc["cycles"].as_u64().unwrap() > 0);
    assert_eq!(doc["offchip"]["load_words"], 1024);
    assert_eq!(doc["offchip"]["store_words"], 512);
    assert!(std::fs::metadata(&dump).unwrap().len() > 512 * 4);
}

#[test]
fn the_same_run_twice_gives_identical_stats() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for out in [&a, &b] {
        let o = emu(&["samples/matmul.spu", "-q", "--stats", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a.len() > 1000);
    assert_eq!(a, b, "stats differ between identical runs");
}

#[test]
fn stats_have_the_documented_keys() {
    let out = emu(&["samples/reduction.spu", "-q", "--stats", "-"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for path in [
        "/cycles",
        "/offchip/load_words",
        "/offchip/store_words",
        "/offchip/spill_words",
        "/offchip/restore_words",
        "/cb/reads",
        "/cb/writes",
        "/passes/x",
        "/passes/y",
        "/passes/mode",
        "/machine/grid.cols",
        "/counters/DRAMP",
        "/counters/CBP",
        "/units/0/counters/SHRDP",
        "/pcs/0/issued",
    ] {
        assert!(doc.pointer(path).is_some(), "stats lack {path}");
    }
}

#[test]
fn bad_command_lines_and_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    std::fs::write(d("garbage.bin"), [0xffu8, 0xfe, 0x00, 0x13]).unwrap();
    std::fs::write(d("bad.spu"), "this is not assembly\n").unwrap();
    std::fs::write(d("bad.toml"), "[grid\ncols = 4\n").unwrap();
    std::fs::write(d("unknown.toml"), "[grid]\ncolumns = 4\n").unwrap();
    std::fs::write(d("range.toml"), "[sm]\nschedulers = 0\n").unwrap();
    let mut elf = std::fs::read(root().join("samples/vecadd.spu")).unwrap();
    elf.clear();
    elf.extend_from_slice(b"\x7fELF\x02\x01\x01");
    std::fs::write(d("truncated.bin"), &elf).unwrap();
    std::fs::write(d("empty.bin"), b"").unwrap();

    let cases: &[(&[&str], &str)] = &[
        (&["missing.spu"], "cannot read `missing.spu`"),
        (&["samples"], "is a directory"),
        (&[&d("garbage.bin")], "neither an SPU binary nor UTF-8"),
        (&[&d("truncated.bin")], "not a valid SPU binary"),
        (
            &[&d("empty.bin")],
            "is not a valid SPU binary: the file is empty (0 bytes)",
        ),
        (&[&d("bad.spu")], "does not assemble"),
        (
            &["samples/vecadd.spu", "--machine", "spu-9x9"],
            "unknown machine preset `spu-9x9`",
        ),
        (
            &["samples/vecadd.spu", "--machine", &d("bad.toml")],
            "bad.toml",
        ),
        (
            &["samples/vecadd.spu", "--machine", &d("unknown.toml")],
            "unknown machine key `grid.columns`",
        ),
        (
            &["samples/vecadd.spu", "--machine", &d("range.toml")],
            "sm.schedulers",
        ),
        (
            &["samples/vecadd.spu", "--machine", &d("none.toml")],
            "cannot be read",
        ),
        (
            &["samples/vecadd.spu", "--set", "sm.schedulers"],
            "KEY=VALUE",
        ),
        (
            &["samples/vecadd.spu", "--set", "sm.warp_size=64"],
            "unknown machine key",
        ),
        (
            &["samples/vecadd.spu", "--set", "clock.freq_mhz=fast"],
            "clock.freq_mhz",
        ),
        (&["samples/vecadd.spu", "--grid", "0x4"], "grid.cols"),
        (&["samples/vecadd.spu", "--grid", "four"], "PxQ"),
        (
            &["samples/vecadd.spu", "--boundary", "usb"],
            "invalid value",
        ),
        (&["samples/vecadd.spu", "-D", "M=4"], "no parameter `M`"),
        (
            &["samples/vecadd.spu", "-D", "N=-4"],
            "is out of range for .u32 (0 .. 4294967295)",
        ),
        (&["samples/vecadd.spu", "-D", "N"], "NAME=VALUE"),
        (
            &["samples/vecadd.spu", "-D", "N=0"],
            "launch grid dimension x",
        ),
        (&["samples/matmul.spu", "-D", "N=20000"], "global memory"),
        (
            &["samples/matmul.spu", "-D", "N=1000000"],
            "at most 4194304 blocks",
        ),
        (
            &["samples/vecadd.spu", "--load", "Z=a.npy"],
            "no buffer `Z`",
        ),
        (&["samples/vecadd.spu", "--load", "A"], "BUF=FILE.npy"),
        (
            &["samples/vecadd.spu", "--load", "A=missing.npy"],
            "cannot read `missing.npy`",
        ),
        (
            &[
                "samples/vecadd.spu",
                "--load",
                &format!("A={}", d("garbage.bin")),
            ],
            "not a valid .npy",
        ),
        (
            &["samples/vecadd.spu", "--dump", "Q=out.npy"],
            "no buffer `Q`",
        ),
        (
            &["samples/vecadd.spu", "--dump", "C=/nonexistent/dir/c.npy"],
            "cannot write",
        ),
        (
            &["samples/vecadd.spu", "--stats", "/nonexistent/dir/s.json"],
            "cannot write",
        ),
        (
            &["samples/vecadd.spu", "--max-cycles", "10"],
            "--max-cycles",
        ),
        (
            &["samples/vecadd.spu", "--max-cycles", "ten"],
            "invalid value",
        ),
        (&["emu/tests/faults/global_sync.spu"], "--passes sequential"),
        (
            &["emu/tests/faults/global_sync.spu", "--boundary", "dma"],
            "--boundary iu",
        ),
        (
            &[
                "emu/tests/faults/spin.spu",
                "--max-cycles",
                "20000",
                "--spin-limit",
                "0",
            ],
            "exceeded --max-cycles",
        ),
        (&["emu/tests/faults/oob_load.spu"], "outside every buffer"),
        (
            &["emu/tests/faults/atom_oob.spu"],
            "global atomic on address 0x00010080, which is outside every buffer",
        ),
        (
            &["emu/tests/faults/narrow_past_end.spu"],
            "global load of a 1-byte value at address 0x00010005, which runs past the end of a buffer",
        ),
        (
            &["emu/tests/faults/narrow_past_end.spu", "--functional"],
            "nearest buffer: `b` at 0x00010000..0x00010005 (5 elements)",
        ),
        (&["emu/tests/faults/misaligned.spu"], "not a multiple of 4"),
        (
            &["emu/tests/faults/shared_oob.spu"],
            "past the end of the 64-byte shared space",
        ),
        (&["emu/tests/faults/deadlock.spu"], "deadlock"),
        (&["emu/tests/faults/iu_fpu.spu"], "floating-point unit"),
        // Functional mode checks only the blocks that need it: this one does.
        (
            &["emu/tests/faults/iu_fpu.spu", "--functional"],
            "floating-point unit",
        ),
        (
            &["emu/tests/faults/mismatched_syncs.spu", "--grid", "2x1"],
            "block (0, 0) made 2 syncs on this link, block (1, 0) 1 sync",
        ),
        (
            &["emu/tests/faults/no_port.spu"],
            "no west Communication Buffer port",
        ),
    ];
    for (args, needle) in cases {
        fails(args, needle);
    }
}

#[test]
fn npy_inputs_are_checked_against_the_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let words: Vec<u32> = (0..8).map(|i| (i as f32).to_bits()).collect();
    spu_emu::load::npy::write(&path, spu_isa::Ty::F32, &[2, 4], &words).unwrap();
    let arg = format!("A={}", path.display());
    fails(
        &["samples/vecadd.spu", "-D", "N=8", "--load", &arg],
        "has shape [2, 4]",
    );
    spu_emu::load::npy::write(&path, spu_isa::Ty::U32, &[8], &words).unwrap();
    fails(
        &["samples/vecadd.spu", "-D", "N=8", "--load", &arg],
        "`<u4`",
    );
    spu_emu::load::npy::write(&path, spu_isa::Ty::F32, &[8], &words).unwrap();
    let out_path = dir.path().join("c.npy");
    let out = emu(&[
        "samples/vecadd.spu",
        "-D",
        "N=8",
        "--load",
        &arg,
        "--load",
        &format!("B={}", path.display()),
        "--dump",
        &format!("C={}", out_path.display()),
        "-q",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c = spu_emu::load::npy::read(&out_path, "C", spu_isa::Ty::F32, &[8]).unwrap();
    let want: Vec<u32> = (0..8).map(|i| (2.0 * i as f32).to_bits()).collect();
    assert_eq!(c, want, "C = A + B with A = B = 0..8");
}

#[test]
fn a_failed_run_writes_no_stats() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    fails(
        &[
            "emu/tests/faults/oob_load.spu",
            "--stats",
            stats.to_str().unwrap(),
        ],
        "outside every buffer",
    );
    assert!(!stats.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary files left"
    );
}

/// A negative number given to a numeric option is refused as that option's value
/// (the parser's reason, the option named), not taken for an unknown option; a
/// `-1` where the kernel is expected stays an unknown option.
#[test]
fn negative_numbers_are_refused_as_values_of_their_options() {
    let k = "samples/vecadd.spu";
    for (args, option) in [
        (&[k, "--max-cycles", "-1"][..], "'--max-cycles <N>'"),
        (&[k, "--max-instructions", "-1"], "'--max-instructions <N>'"),
        (&[k, "--spin-limit", "-1"], "'--spin-limit <N>'"),
        (&[k, "--printf-limit", "-1"], "'--printf-limit <BYTES>'"),
        (&[k, "--sample-interval", "-1"], "'--sample-interval <N>'"),
        (&[k, "--threads", "-2"], "'--threads <N>'"),
        (
            &[k, "--trace", "-", "--trace-warp", "-1"],
            "'--trace-warp <W>'",
        ),
        (
            &[k, "--trace", "-", "--trace-limit", "-1"],
            "'--trace-limit <N>'",
        ),
    ] {
        let value = args[args.len() - 1];
        let err = fails(args, &format!("invalid value '{value}' for {option}"));
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
    fails(&["-1"], "unexpected argument '-1'");
    fails(&["--max-cycles", "5", "-1"], "unexpected argument '-1'");
    // A negative grid reaches the machine's own check, not a tip about `--`.
    let err = fails(&[k, "--grid", "-4x4"], "`grid.cols`");
    assert!(!err.contains("tip:"), "{err}");
    // Zero gets the reason, not an unsigned range.
    let err = fails(&[k, "--sample-interval", "0"], "at least 1");
    assert!(!err.contains("18446744073709551615"), "{err}");
}

#[test]
fn pictures_over_time_are_refused_with_functional() {
    for option in ["--timeline", "--html"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("picture");
        fails(
            &[
                "samples/vecadd.spu",
                "--functional",
                option,
                out.to_str().unwrap(),
            ],
            "drop --functional",
        );
        assert!(!out.exists(), "{option}: nothing is written");
    }
}

/// A cache smaller than one set is refused, naming the keys and the smallest size.
#[test]
fn a_cache_smaller_than_one_set_is_refused() {
    let err = fails(
        &[
            "samples/vecadd.spu",
            "--machine",
            "gtx480",
            "--set",
            "cache.l2_kib=4",
        ],
        "machine key `cache.l2_kib`: 4 KiB is smaller than one set for each of the L2's banks",
    );
    assert!(
        err.contains("`cache.l2_ways` (8)") && err.contains("at least 12 "),
        "{err}"
    );
    fails(
        &[
            "samples/vecadd.spu",
            "--machine",
            "gtx480",
            "--set",
            "cache.l1_ways=64",
            "--set",
            "cache.line_bytes=512",
        ],
        "`cache.l1_kib`: 16 KiB is smaller than one set of the L1",
    );
}

#[test]
fn run_time_errors_read_well() {
    for name in [
        "oob_load",
        "misaligned",
        "deadlock",
        "iu_fpu",
        "shared_oob",
        "mismatched_syncs",
    ] {
        let path = format!("emu/tests/faults/{name}.spu");
        let err = text(&emu(&[&path, "-q", "--grid", "2x1"]).stderr);
        insta::assert_snapshot!(name, err);
    }
}

/// A folder or pipe named as the machine, without `.toml`, is said to be one,
/// not an unknown preset (#23 note N6).
#[test]
fn a_folder_named_as_the_machine_is_called_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("mdir")).unwrap();
    let kernel = root().join("samples/vecadd.spu");
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(&kernel)
        .args(["-q", "--machine", "mdir"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`mdir`: it is a folder, not a .toml file or a preset")
            && err.contains("`gtx480`"),
        "{err}"
    );
}

/// `--list-params` runs nothing, so it refuses a kernel or a run's options rather
/// than dropping them (#23 item H8).
#[test]
fn list_params_refuses_what_it_would_ignore() {
    for (args, named) in [
        (&["--list-params", "samples/vecadd.spu"][..], "a kernel"),
        (&["--list-params", "--machine", "gtx480"], "`--machine`"),
        (&["--list-params", "--stats", "never.json"], "`--stats`"),
        (&["--list-params", "-q"], "`--quiet`"),
    ] {
        let err = fails(args, "does not apply to `--list-params`");
        assert!(err.contains(named), "{args:?}: {err}");
    }
    assert!(!root().join("never.json").exists());
}

#[test]
fn list_params_documents_every_key() {
    let list = |columns: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_spu-emu"));
        c.arg("--list-params").env_remove("COLUMNS");
        if let Some(n) = columns {
            c.env("COLUMNS", n);
        }
        c.output().expect("spu-emu runs")
    };
    let out = list(None);
    assert!(out.status.success());
    let listing = text(&out.stdout);
    for p in spu_emu::machine::PARAMS {
        assert!(listing.contains(p.key), "{} missing", p.key);
    }
    // A terminal table, not the Markdown page: no developer notes, no Markdown.
    assert!(!listing.contains("do not edit"), "{listing}");
    assert!(
        !listing.contains('`') && !listing.contains("|---"),
        "{listing}"
    );
    assert!(listing.contains("| grid.cols "), "{listing}");
    assert!(
        listing.lines().all(|l| l.chars().count() <= 100),
        "{listing}"
    );
    let narrow = text(&list(Some("72")).stdout);
    assert!(narrow.lines().all(|l| l.chars().count() <= 72), "{narrow}");
}

#[test]
fn a_binary_runs_like_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let src_path = root().join("samples/reduction.spu");
    let src = std::fs::read_to_string(&src_path).unwrap();
    let (bin, _) = spu_asm::assemble("samples/reduction.spu", &src).unwrap();
    let bin_path = dir.path().join("reduction.bin");
    std::fs::write(&bin_path, bin).unwrap();
    let stats = |kernel: &str| -> serde_json::Value {
        let out = emu(&[kernel, "-q", "--stats", "-"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (a, b) = (
        stats("samples/reduction.spu"),
        stats(bin_path.to_str().unwrap()),
    );
    assert_eq!(a["cycles"], b["cycles"]);
    assert_eq!(a["counters"], b["counters"]);
}

#[test]
fn traces_follow_their_filters() {
    let out = emu(&[
        "samples/divergent.spu",
        "-D",
        "N=64",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:0,0",
        "--trace-warp",
        "1",
        "--trace-cycles",
        "10..80",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = text(&out.stdout);
    let lines: Vec<&str> = trace.lines().skip(1).collect();
    assert!(lines.len() >= 5, "{trace}");
    for l in &lines {
        let cols: Vec<&str> = l.split_whitespace().collect();
        let cycle: u64 = cols[0].parse().unwrap();
        // cycle, pass, unit, block, warp, pc, line, ...
        assert!(
            (10..=80).contains(&cycle)
                && cols[1] == "0"
                && cols[2] == "sm:0,0"
                && cols[3] == "0,0"
                && cols[4] == "1",
            "{l}"
        );
        assert!(l.contains("divergent.spu:"), "source line shown: {l}");
    }
    assert!(
        trace.contains("setp.eq.u32 %p1") && trace.contains("p1 = "),
        "{trace}"
    );
    let capped = emu(&[
        "samples/divergent.spu",
        "-q",
        "--trace",
        "-",
        "--trace-limit",
        "10",
    ]);
    let capped = text(&capped.stdout);
    assert_eq!(
        capped.lines().count(),
        1 + 10 + 1,
        "header, 10 lines, the stop note"
    );
    assert!(capped.contains("trace stopped after 10 lines"));
    fails(
        &[
            "samples/divergent.spu",
            "--trace",
            "-",
            "--trace-cycles",
            "9..3",
        ],
        "`--trace-cycles 9..3` is empty: FIRST (9) is after LAST (3); write `--trace-cycles 3..9`",
    );
    fails(
        &[
            "samples/divergent.spu",
            "--trace",
            "-",
            "--trace-cycles",
            "9-3",
        ],
        "needs the form FIRST..LAST",
    );
}

#[test]
fn timing_traces_show_loaded_values_when_they_arrive() {
    let out = emu(&[
        "samples/vecadd.spu",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:0,0",
        "--trace-warp",
        "0",
        "--trace-limit",
        "60",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = text(&out.stdout);
    // The load of A's first four elements is pending at issue, and its values
    // (A[1] = 0.5) appear at the write-back, later, in cycle order.
    let issue = trace
        .lines()
        .position(|l| l.contains("ld.global.f32 %f0") && l.ends_with("pending"))
        .unwrap_or_else(|| panic!("no pending load in\n{trace}"));
    let arrival = trace
        .lines()
        .position(|l| l.contains("ld.global.f32 %f0") && l.contains("loaded %f0"))
        .unwrap_or_else(|| panic!("no arrival in\n{trace}"));
    assert!(issue < arrival, "{trace}");
    assert!(trace.contains("[1]=0x3f000000"), "{trace}");
    let cycles: Vec<u64> = trace
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(cycles.windows(2).all(|w| w[0] <= w[1]), "{trace}");
    insta::assert_snapshot!("vecadd_trace_loads", trace);
    // Functional mode loads at once: no pending values.
    let out = emu(&[
        "samples/vecadd.spu",
        "-q",
        "--functional",
        "--trace",
        "-",
        "--trace-unit",
        "sm:0,0",
        "--trace-warp",
        "0",
    ]);
    let trace = text(&out.stdout);
    assert!(
        !trace.contains("pending") && trace.contains("[1]=0x3f000000"),
        "{trace}"
    );
}

#[test]
fn traces_show_blocks_passes_and_stored_values() {
    // pass_token: the west IU of row 0 loads seed[0] = 100, SM (0, 0) adds one and
    // SM (1, 0) adds one more, storing 102 = 0x66 at word 0 of its east and south
    // CBs.
    let out = emu(&[
        "samples/pass_token.spu",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:1,0",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = text(&out.stdout);
    for side in ["east", "south"] {
        assert!(
            trace.contains(&format!("cb.{side} store [0]@0x0=0x66")),
            "{trace}"
        );
    }
    // 2x2 blocks on a 1x1 grid: four passes, block (x, y) in pass 2y + x, and the
    // IU code's lines have no block.
    let out = emu(&[
        "samples/pass_token.spu",
        "-q",
        "-D",
        "P=2",
        "-D",
        "Q=2",
        "--grid",
        "1x1",
        "--trace",
        "-",
        "--trace-limit",
        "100000",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = text(&out.stdout);
    let mut seen = std::collections::BTreeSet::new();
    let header = trace.lines().next().unwrap();
    let starts: Vec<usize> = ["line", "instruction"]
        .iter()
        .map(|name| header.find(name).unwrap())
        .collect();
    for l in trace.lines().skip(1) {
        let cols: Vec<&str> = l.split_whitespace().collect();
        let (pass, unit, block) = (cols[1], cols[2], cols[3]);
        if unit.starts_with("sm:") {
            let (x, y) = block.split_once(',').unwrap();
            let (x, y): (u32, u32) = (x.parse().unwrap(), y.parse().unwrap());
            assert_eq!(pass, (2 * y + x).to_string(), "{l}");
            seen.insert((x, y));
        } else {
            assert_eq!(block, "-", "{l}");
        }
        // Columns line up: the source line and the instruction start where the
        // header's titles do.
        for &at in &starts {
            assert_eq!(&l[at - 2..at], "  ", "{l}");
            assert_ne!(&l[at..=at], " ", "{l}");
        }
    }
    assert_eq!(seen.len(), 4, "every block traced");
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    // A sum of 200 000 ones; 11 650 terms used to end the process with exit 134.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("deep.spu");
    let sum = vec!["1"; 200_000].join("+");
    std::fs::write(
        &src,
        format!(".entry deep {{\n    .reg .u32 %r0;\n    mov.u32 %r0, {sum};\n    exit;\n}}\n"),
    )
    .unwrap();
    let out = emu(&[src.to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_gpu_preset_runs_plain_kernels_and_refuses_spu_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (spu, gpu) = (dir.path().join("spu.npy"), dir.path().join("gpu.npy"));
    for (machine, dump) in [("spu-4x4", &spu), ("gtx480", &gpu)] {
        let out = emu(&[
            "samples/vecadd.spu",
            "-D",
            "N=8192",
            "--machine",
            machine,
            "--dump",
            &format!("C={}", dump.display()),
        ]);
        assert!(out.status.success(), "{machine}: {}", text(&out.stderr));
    }
    assert_eq!(std::fs::read(&spu).unwrap(), std::fs::read(&gpu).unwrap());
    let err = fails(
        &["samples/stencil2d/stencil_pc.spu", "--machine", "gtx480"],
        "the machine is a GPU",
    );
    assert!(err.contains("IU code") && err.contains("spu-4x4"), "{err}");
    fails(
        &[
            "samples/stencil2d/stencil_pc.spu",
            "--machine",
            "gtx480",
            "--boundary",
            "dma",
        ],
        "the machine is a GPU",
    );
}

#[test]
fn a_gpu_run_reports_occupancy_and_no_passes_cbs_or_boundary_units() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let out = emu(&[
        "samples/matmul.spu",
        "--machine",
        "gtx480",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = text(&out.stdout) + &text(&out.stderr);
    assert!(
        summary.contains("occupancy  6 blocks per SM (8 warps each; limited by threads per SM, `sm.max_resident_threads`)"),
        "{summary}"
    );
    assert!(summary.contains("up to 8 blocks per SM"), "{summary}");
    // What one block holds, as `spu-asm -v` gives it.
    assert!(
        summary.contains(
            "resources  20 registers per thread, 2048 B shared per block, 0 B local per thread, 4 B params, no CBs"
        ),
        "{summary}"
    );
    for absent in ["passes ", "cb ", "link rendezvous"] {
        assert!(!summary.contains(absent), "`{absent}` in {summary}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(json["occupancy"]["blocks_per_sm"], 6);
    assert_eq!(json["occupancy"]["limit"], "sm.max_resident_threads");
    let units = json["units"].as_array().unwrap();
    assert_eq!(units.len(), 15, "a GPU has its SMs and no boundary units");
    // One block per SM: the thesis's gpu-sim-1CTA/SM.
    let out = emu(&["samples/matmul.spu", "--machine", "gtx480-1cta"]);
    let summary = text(&out.stdout) + &text(&out.stderr);
    assert!(
        summary.contains(
            "occupancy  1 block per SM (8 warps each; limited by blocks per SM, `sm.max_blocks`)"
        ),
        "{summary}"
    );
    // An SPU summary keeps its passes and has no occupancy line.
    let out = emu(&["samples/matmul.spu"]);
    let summary = text(&out.stdout) + &text(&out.stderr);
    assert!(
        summary.contains("passes ") && !summary.contains("occupancy"),
        "{summary}"
    );
}

#[test]
fn limit_errors_say_what_is_too_big_and_how_to_fix_it() {
    // A huge value is too large, not "not positive".
    let err = fails(
        &["samples/vecadd.spu", "-D", "N=4294967295"],
        "but a launch has at most 4194304 blocks",
    );
    assert!(!err.contains("positive"), "{err}");
    // The memory limit names the buffers and the key that raises it.
    fails(
        &["samples/vecadd.spu", "-D", "N=300000000"],
        "buffers need 3434 MiB of global memory but the machine has 1536 MiB (`A` 1145 MiB, `B` 1145 MiB, `C` 1145 MiB); raise the limit with `--set memory.global_mib=3434`",
    );
    // The register file: which limit, and the three ways to fit.
    fails(
        &["samples/vecadd.spu", "--set", "sm.registers=1024"],
        "is 3072, but the SM register file holds at most 1024 (`sm.registers`); launch fewer threads per block, keep fewer values live per thread, or raise the limit with `--set sm.registers=3072`",
    );
}

#[test]
fn the_readme_describes_the_run_limits_in_the_words_of_the_help() {
    let help = text(&emu(&["--help"]).stdout);
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = words(&std::fs::read_to_string(root().join("emu/README.md")).unwrap());
    for option in [
        "--max-cycles <N>",
        "--max-instructions <N>",
        "--spin-limit <N>",
        "--printf-limit <BYTES>",
    ] {
        // The option's paragraph, up to its default.
        let at = help.find(option).expect("option in --help") + option.len();
        let para = &help[at..];
        let para = words(&para[..para.find("[default").expect("a default")]);
        assert!(
            readme.contains(&para),
            "emu/README.md should say, as --help does: {para}"
        );
    }
}

#[test]
fn max_instructions_stops_a_functional_run_that_stores_in_every_window() {
    // Windows closed with stores pending were not counted, so a storing kernel
    // never reached the check and ran to the end (here 593 798 warp instructions;
    // the limit is checked every 16 windows, so the run stops at 512 blocks).
    fails(
        &[
            "samples/vecadd.spu",
            "-D",
            "N=1000000",
            "--grid",
            "2x2",
            "--functional",
            "--max-instructions",
            "1000",
            "-q",
        ],
        "--max-instructions 1 000 warp instructions",
    );
}

#[test]
fn the_summary_says_when_a_launch_leaves_sms_idle() {
    let summary = |args: &[&str]| {
        let out = emu(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    // 8x1 blocks on the 4x4 SPU: one row of SMs.
    let s = summary(&["samples/vecadd.spu", "-D", "N=2048"]);
    assert!(
        s.contains(
            "sms        the launch uses 4 of 16 SMs: its 8x1 blocks cover 4 of 4 SM columns and 1 of 4 rows; hint: launched as 4x2 blocks (if the kernel's indexing allows), the same 8 would use 8"
        ),
        "{s}"
    );
    // 7 blocks cannot be reshaped to use more.
    let s = summary(&["samples/vecadd.spu", "-D", "N=1792", "--grid", "8x2"]);
    assert!(
        s.contains("the launch uses 7 of 16 SMs") && s.contains("`--grid 7x1`"),
        "{s}"
    );
    // A GPU with more SMs than blocks.
    let s = summary(&["samples/vecadd.spu", "-D", "N=2048", "--machine", "gtx480"]);
    assert!(
        s.contains("the launch uses 8 of 15 SMs: it has 8 blocks"),
        "{s}"
    );
    // Every SM busy: no line.
    for args in [
        &["samples/stencil2d/stencil_pc.spu"][..],
        &["samples/vecadd.spu", "--grid", "4x1"][..],
    ] {
        let s = summary(args);
        assert!(!s.contains("sms   "), "{args:?}: {s}");
    }
}

/// A page or timeline written to standard output is all that goes there: the
/// summary moves to standard error.
#[test]
fn a_page_or_timeline_on_standard_output_gets_nothing_else() {
    for (flag, end) in [("--html", "</html>\n"), ("--timeline", "</svg>\n")] {
        let out = emu(&["samples/vecadd.spu", flag, "-"]);
        assert!(out.status.success(), "{flag}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.ends_with(end),
            "{flag}: stdout ends {:?}",
            &stdout[stdout.len().saturating_sub(200)..]
        );
        assert!(
            text(&out.stderr).contains("kernel     vecadd"),
            "{flag}: the summary is on stderr"
        );
    }
}

#[test]
fn printf_output_goes_to_stdout_before_the_summary_even_with_quiet() {
    let kernel = "samples/cuda/printf_nvcc.spu";
    let out = emu(&[kernel]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("block 0 thread  0: x=-3.250 hex=000000 ok|pad   |A%\nr=7 n=100"),
        "{stdout}"
    );
    let summary = stdout.find("kernel     _Z5helloPKfi").expect("a summary");
    assert!(stdout[..summary].ends_with("block 3 thread  3: x=+77.188 hex=0x0e4f ok|pad   |V%\n"));
    // `-q` drops the summary, not the kernel's output.
    let quiet = emu(&[kernel, "-q"]);
    assert_eq!(text(&quiet.stdout), stdout[..summary]);
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    // Standard output carrying the stats: the kernel's output goes to standard error.
    let stats = emu(&[kernel, "-q", "--stats", "-"]);
    assert!(text(&stats.stdout).starts_with('{'));
    assert_eq!(text(&stats.stderr), stdout[..summary]);
}

#[test]
fn a_trace_of_a_3d_grid_names_blocks_by_their_three_coordinates() {
    let out = emu(&[
        "emu/tests/races/race3d.spu",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:1,3",
        "--trace-limit",
        "3",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = text(&out.stdout);
    // SM (1, 3) runs block (1, 0, 1): the folded row 3 is y = 0, z = 1.
    let first = trace.lines().nth(1).expect("a traced line");
    assert!(first.contains("sm:1,3        1,0,1 "), "{trace}");
}

#[test]
fn a_parameter_set_twice_is_refused_naming_both() {
    fails(
        &["samples/vecadd.spu", "-D", "N=64", "-D", "N=128"],
        "`-D N=64` and `-D N=128` both set parameter `N`",
    );
}

/// A usage error (an unknown option, a bad option value) exits with status 2, as
/// the documentation says; other errors exit with 1.
#[test]
fn usage_errors_exit_with_status_2() {
    for args in [
        &["samples/vecadd.spu", "--bogus"][..],
        &["samples/vecadd.spu", "--threads", "0"],
    ] {
        let out = emu(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}:\n{}",
            text(&out.stderr)
        );
    }
    let out = emu(&["no-such-kernel.spu"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

/// A launch or size expression that a `-D` makes invalid is refused naming the
/// expression, its declaration and the `-D` value that made it, with the way to
/// change it; an element count is the real one, not a saturated one.
#[test]
fn load_errors_name_the_expression_and_the_define() {
    let err = fails(
        &["samples/vecadd.spu", "-D", "N=0"],
        "launch grid dimension x",
    );
    assert!(
        err.contains("is 0, but it must be positive; it is `cdiv(N, 256)` in `.launch grid(..)`, with N = 0 (`-D N=0`): give N another value with `-D N=VALUE`"),
        "{err}"
    );
    let k = "emu/tests/matrix/size_overflow.spu";
    let err = fails(&[k, "-D", "N=4294967295"], "a dimension of buffer `A`");
    assert!(
        err.contains("`N * N` cannot be evaluated: integer overflow; it is in the `.global` declaration of `A`, with N = 4294967295 (`-D N=4294967295`): give N another value with `-D N=VALUE`"),
        "{err}"
    );
    let err = fails(&[k, "-D", "N=40000"], "the element count of buffer `A`");
    assert!(err.contains("is 1600000000, but"), "{err}");
    // With A's size in range, B's two dimensions give the real product.
    let src = std::fs::read_to_string(root().join(k)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let only_b = dir.path().join("b.spu");
    std::fs::write(&only_b, src.replace("A[N*N]", "A[1]")).unwrap();
    let err = fails(
        &[&only_b.display().to_string(), "-D", "N=4294967295"],
        "the element count of buffer `B` is 18446744065119617025, but a buffer holds at most 2^30 elements; it is `[N][N]` in the `.global` declaration of `B`, with N = 4294967295 (`-D N=4294967295`)",
    );
    assert!(!err.contains("9223372036854775807"), "{err}");
}

/// An unused dynamic shared size (no `.extern .shared` array) that a `-D` makes
/// negative is refused, as a negative grid is.
#[test]
fn an_unused_shared_size_made_negative_by_a_define_is_refused() {
    let err = fails(
        &["emu/tests/matrix/shared_unused_param.spu", "-D", "S=-1"],
        "the dynamic shared size `.launch shared(..)` must not be negative",
    );
    assert!(err.contains("S = -1"), "{err}");
    let out = emu(&["emu/tests/matrix/shared_unused_param.spu", "-D", "S=0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A run stopped by --max-cycles after every block finished was completing its
/// last stores: the help does not send the user looking for an endless loop.
#[test]
fn max_cycles_after_every_block_finished_says_so() {
    let err = fails(
        &["samples/vecadd.spu", "-q", "--max-cycles", "2400"],
        "with 16 of 16 blocks finished",
    );
    assert!(
        err.contains("every block had finished, and the run was still completing its last stores")
            && !err.contains("never ends"),
        "{err}"
    );
    let err = fails(
        &["samples/vecadd.spu", "-q", "--max-cycles", "100"],
        "with 0 of 16 blocks finished",
    );
    assert!(err.contains("look for a loop that never ends"), "{err}");
}
