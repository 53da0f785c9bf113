//! `spu-emu` on hostile paths: outputs that are devices, pipes, links or inputs;
//! inputs that never end; binaries whose line table names files the user never
//! named; closed and full standard output; Ctrl-C while reading or writing. Tests
//! that need root (making device nodes) say so when they are skipped.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn emu_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spu-emu"));
    c.args(args).current_dir(root());
    c
}

fn emu(args: &[&str]) -> Output {
    emu_cmd(args).output().expect("spu-emu runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A private character device equal to /dev/null, or `None` (with the reason
/// printed) when this process may not make one.
fn private_null(dir: &Path) -> Option<PathBuf> {
    if !is_root() {
        eprintln!("skipped: making a device node needs root");
        return None;
    }
    let dev = dir.join("null");
    let ok = Command::new("mknod")
        .args([dev.to_str()?, "c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mknod failed");
        return None;
    }
    Some(dev)
}

fn fifo(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    spu_io::testing::make_fifo(&p).then_some(p)
}

/// Entries of `dir` other than `keep` (leftover temporaries).
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

fn interrupt(pid: u32) {
    send(pid, "INT");
}

fn send(pid: u32, signal: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(ok.success());
}

#[test]
fn a_device_output_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let Some(null) = private_null(dir.path()) else {
        return;
    };
    let dev = null.to_str().unwrap();
    for args in [
        vec!["samples/vecadd.spu", "-q", "--stats", dev],
        vec!["samples/vecadd.spu", "-q", "--timeline", dev],
        vec!["samples/vecadd.spu", "-q", "--dump", &format!("C={dev}")],
        vec!["samples/vecadd.spu", "-q", "--trace", dev],
    ] {
        let out = emu(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let m = std::fs::symlink_metadata(&null).unwrap();
        assert!(
            m.file_type().is_char_device(),
            "{args:?} replaced the device"
        );
    }
}

#[test]
fn a_link_to_standard_output_is_written_through_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let out = emu(&[
        "samples/vecadd.spu",
        "-q",
        "--stats",
        link.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(json.get("stats_version").is_some());
}

#[test]
fn a_replaced_output_keeps_its_mode_and_its_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, b"old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("s.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = emu(&[
        "samples/vecadd.spu",
        "-q",
        "--stats",
        link.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let m = std::fs::metadata(&real).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o640);
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("stats_version")
    );
    assert_eq!(
        leftovers(dir.path(), &["real.json", "s.json"]),
        Vec::<String>::new()
    );
}

#[test]
fn outputs_may_not_overwrite_inputs_or_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.spu");
    std::fs::copy(root().join("samples/vecadd.spu"), &k).unwrap();
    let ks = k.to_str().unwrap();
    let before = std::fs::read(&k).unwrap();
    let a = dir.path().join("a.json");
    let a = a.to_str().unwrap();
    for (args, needle) in [
        (
            vec![ks, "--stats", ks],
            "`--stats {k}` would overwrite the input kernel `{k}`; write it to another file",
        ),
        (
            vec![ks, "--stats", a, "--timeline", a],
            "`--timeline {a}` and `--stats {a}` name the same file; give each output its own file",
        ),
        (
            vec![ks, "--stats", "-", "--trace", "-"],
            "`--trace -` and `--stats -` both write to standard output; send one of them to a file",
        ),
    ] {
        let out = emu(&args);
        let err = text(&out.stderr);
        let needle = needle.replace("{k}", ks).replace("{a}", a);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&needle),
            "{args:?}: expected `{needle}` in {err}"
        );
    }
    assert_eq!(std::fs::read(&k).unwrap(), before);
    assert_eq!(leftovers(dir.path(), &["k.spu"]), Vec::<String>::new());
}

#[test]
fn outputs_may_not_overwrite_included_files() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.spu");
    let inc = dir.path().join("body.inc");
    let src = std::fs::read_to_string(root().join("samples/vecadd.spu")).unwrap();
    // The whole kernel moves to the included file; the kernel only includes it.
    std::fs::write(&inc, &src).unwrap();
    std::fs::write(&k, "#include \"body.inc\"\n").unwrap();
    let (ks, incs) = (k.to_str().unwrap(), inc.to_str().unwrap());
    for args in [
        vec![ks, "--stats", incs],
        vec![ks, "--trace", incs],
        vec![ks, "--dump", &format!("C={incs}")],
    ] {
        let out = emu(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let what = args[1..].join(" ");
        let needle = format!(
            "error: `{what}` would overwrite the input `{incs}`, which the kernel includes; write it to another file"
        );
        assert!(
            err.contains(&needle),
            "{args:?}: expected `{needle}` in {err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&inc).unwrap(), src);
    assert_eq!(
        leftovers(dir.path(), &["k.spu", "body.inc"]),
        Vec::<String>::new()
    );
}

#[test]
fn stats_on_standard_output_are_pure_json() {
    let out = emu(&["samples/vecadd.spu", "--stats", "-"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("only JSON");
    assert!(json.get("stats_version").is_some());
    assert!(
        text(&out.stderr).contains("cycles"),
        "the summary goes to stderr"
    );
}

/// A dump to standard output (`-` or `/dev/stdout`) is the array alone: the
/// summary and the kernel's printf output go to standard error (they were
/// appended to the `.npy`, which then did not load again).
#[test]
fn a_dump_on_standard_output_is_the_array_alone() {
    for to in ["-", "/dev/stdout"] {
        let out = emu(&["samples/cuda/printf_nvcc.spu", "--dump", &format!("X={to}")]);
        assert!(out.status.success(), "{to}: {}", text(&out.stderr));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.npy");
        std::fs::write(&file, &out.stdout).unwrap();
        let words =
            spu_emu::load::npy::read(&file, "X", spu_isa::Ty::F32, &[100]).expect("only the array");
        assert_eq!(f32::from_bits(words[0]), -3.25, "{to}");
        let err = text(&out.stderr);
        assert!(
            err.contains("block 0 thread  0:") && err.contains("kernel     _Z5helloPKfi"),
            "{to}: {err}"
        );
    }
}

#[test]
fn endless_and_huge_inputs_stop_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("big_header.npy");
    // A version 2 header claiming 4 GiB.
    let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&npy, &bytes).unwrap();
    let short = dir.path().join("short.npy");
    let words: Vec<u32> = (0..8).collect();
    let mut good = spu_emu::load::npy::encode(spu_isa::Ty::F32, &[8], &words).unwrap();
    good.truncate(good.len() - 5);
    std::fs::write(&short, &good).unwrap();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["/dev/zero".into()],
            "`/dev/zero` is larger than 64 MiB, the limit for inputs".into(),
        ),
        (
            vec!["samples/vecadd.spu".into(), "--machine".into(), "/dev/zero".into()],
            "machine file `/dev/zero`: cannot be read: it is larger than 64 MiB, the limit for inputs".into(),
        ),
        (
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                "A=/dev/zero".into(),
            ],
            "`/dev/zero` is not a valid .npy file: it does not start with the .npy magic".into(),
        ),
        (
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                format!("A={}", npy.display()),
            ],
            "its header is 4294967295 bytes (at most 65536)".into(),
        ),
        (
            vec![
                "samples/vecadd.spu".into(),
                "-D".into(),
                "N=8".into(),
                "--load".into(),
                format!("A={}", short.display()),
            ],
            "is truncated: its header declares 8 elements (32 bytes of data) but the file ends before them".into(),
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let start = Instant::now();
        let out = emu(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&needle),
            "{args:?}: expected `{needle}` in {err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?} took too long"
        );
    }
}

#[test]
fn bytes_after_the_npy_data_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<u32> = (0..8).collect();
    let mut bytes = spu_emu::load::npy::encode(spu_isa::Ty::F32, &[8], &words).unwrap();
    bytes.extend_from_slice(b"extra");
    let long = dir.path().join("long.npy");
    std::fs::write(&long, &bytes).unwrap();
    let out = emu(&[
        "samples/vecadd.spu",
        "-D",
        "N=8",
        "--load",
        &format!("A={}", long.display()),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "error: `{}` has bytes after its data: its header declares 8 elements, so expected 32 bytes of data, found 37; save the array alone (`np.save`)",
            long.display()
        )),
        "{err}"
    );
    // Through a pipe, where the size is not known in advance.
    let Some(pipe) = fifo(dir.path(), "p.npy") else {
        eprintln!("skipped: no FIFOs here");
        return;
    };
    let child = emu_cmd(&[
        "samples/vecadd.spu",
        "-D",
        "N=8",
        "--load",
        &format!("A={}", pipe.display()),
    ])
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::fs::write(&pipe, &bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("so expected 32 bytes of data, found more;"),
        "{err}"
    );
}

/// A binary of a faulting kernel whose line table names `recorded`.
fn faulting_binary(dir: &Path, recorded: &str) -> PathBuf {
    let src = std::fs::read_to_string(root().join("emu/tests/faults/oob_load.spu")).unwrap();
    let (bin, _) = spu_asm::assemble(recorded, &src).unwrap();
    let path = dir.join("k.bin");
    std::fs::write(&path, bin).unwrap();
    path
}

#[test]
fn a_binary_cannot_make_the_emulator_quote_files_the_user_did_not_name() {
    let dir = tempfile::tempdir().unwrap();
    // Line 7 of /etc/passwd would be quoted by the old reader.
    for recorded in ["/etc/passwd", "/dev/zero", "../../../etc/passwd"] {
        let bin = faulting_binary(dir.path(), recorded);
        let start = Instant::now();
        let out = emu(&[bin.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("error: the run of"), "{err}");
        assert!(
            !err.contains("root:") && !err.contains("/bin/"),
            "{recorded}: {err}"
        );
        assert!(start.elapsed() < Duration::from_secs(20));
    }
    // A FIFO beside the binary with the recorded name is not opened (it would block).
    if let Some(pipe) = fifo(dir.path(), "k.spu") {
        let bin = faulting_binary(dir.path(), pipe.to_str().unwrap());
        let child = emu_cmd(&[bin.to_str().unwrap()])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let (code, err) = spu_io::testing::wait_at_most(child, Duration::from_secs(20));
        assert_eq!(code, Some(1), "{err}");
    }
    // The real source beside the binary is quoted.
    let src = dir.path().join("real.spu");
    std::fs::copy(root().join("emu/tests/faults/oob_load.spu"), &src).unwrap();
    let bin = faulting_binary(dir.path(), "/somewhere/else/real.spu");
    let err = text(&emu(&[bin.to_str().unwrap()]).stderr);
    assert!(
        err.contains("ld.global"),
        "the source beside the binary is quoted: {err}"
    );
}

#[test]
fn nvcc_line_information_quotes_the_cuda_source_beside_the_launch_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = |file: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.file 1 \"{file}\"\n\
.visible .entry k(.param .u64 k_param_0)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\n\
.loc 1 7 5\nadd.s64 %rd3, %rd2, 1000000;\nst.global.u32 [%rd3], %r1;\nret;\n}}\n"
        )
    };
    let launch = dir.path().join("k.spu");
    std::fs::write(
        &launch,
        "#include \"k.ptx\"\n.global .u32 OUT[32] = zeros;\n.launch grid(1) block(32);\n.bind k(OUT);\n",
    )
    .unwrap();
    let mut cu = String::new();
    for i in 1..=9 {
        cu += &format!("// line {i} of the CUDA source\n");
    }
    std::fs::write(dir.path().join("kern.cu"), &cu).unwrap();
    // A file beside the launch file that is not source is never quoted.
    std::fs::write(dir.path().join("secret.txt"), &cu).unwrap();
    std::fs::write(dir.path().join("notes"), &cu).unwrap();
    for (recorded, quoted) in [
        ("/home/user/kern.cu", true),
        ("/etc/passwd", false),
        ("../../../etc/passwd", false),
        ("secret.txt", false),
        ("/somewhere/notes", false),
    ] {
        std::fs::write(dir.path().join("k.ptx"), ptx(recorded)).unwrap();
        let out = emu(&[launch.to_str().unwrap(), "-q"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("--> {recorded}:7:5")), "{err}");
        assert_eq!(err.contains("line 7 of the CUDA source"), quoted, "{err}");
        assert!(!err.contains("root:"), "{err}");
    }
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    for args in [
        vec!["samples/vecadd.spu"],
        vec!["--list-params"],
        vec![
            "samples/vecadd.spu",
            "--trace",
            "-",
            "--trace-limit",
            "100000",
        ],
    ] {
        let Some(closed) = spu_io::testing::closed_pipe() else {
            return;
        };
        let child = emu_cmd(&args)
            .stdout(closed)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (code, err) = spu_io::testing::wait_at_most(child, Duration::from_secs(60));
        assert_eq!(code, Some(141), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && err.is_empty(),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_closed_standard_error_keeps_the_exit_code() {
    // A run-time error reported to a closed pipe still ends with exit 1, not a panic.
    let Some(closed) = spu_io::testing::closed_pipe() else {
        return;
    };
    let child = emu_cmd(&["emu/tests/faults/spin.spu", "--max-cycles", "100"])
        .stdout(Stdio::null())
        .stderr(closed)
        .spawn()
        .unwrap();
    let (code, _) = spu_io::testing::wait_at_most(child, Duration::from_secs(60));
    assert_eq!(code, Some(1));
}

#[test]
fn a_full_standard_output_or_trace_file_is_an_error() {
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let out = emu_cmd(&["samples/vecadd.spu"])
        .stdout(full)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: cannot write `standard output`: No space left on device"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    let out = emu(&[
        "samples/vecadd.spu",
        "--trace",
        "/dev/full",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: cannot write `/dev/full`: No space left on device"),
        "{err}"
    );
    assert!(!stats.exists(), "nothing else is written");
}

#[test]
fn a_trace_file_is_untouched_until_the_run_is_over() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, b"previous trace").unwrap();
    let out = emu(&[
        "emu/tests/matrix/malformed.spu",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&trace).unwrap(), b"previous trace");
    // A kernel fault keeps the trace that leads to it.
    let out = emu(&[
        "emu/tests/faults/oob_load.spu",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("note: the trace up to the stop is in"));
    assert!(
        std::fs::read_to_string(&trace)
            .unwrap()
            .contains("ld.global")
    );
    assert_eq!(leftovers(dir.path(), &["t.txt"]), Vec::<String>::new());
}

#[test]
fn ctrl_c_while_an_output_blocks_leaves_nothing() {
    // The dump goes to a FIFO nobody reads, so the output phase blocks; Ctrl-C must
    // still end the run with 130 and leave the statistics unwritten. SIGTERM and
    // SIGHUP there end it with their own codes, 143 and 129 (not Ctrl-C's).
    for (signal, expected) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let dir = tempfile::tempdir().unwrap();
        let Some(pipe) = fifo(dir.path(), "dump.npy") else {
            return;
        };
        let stats = dir.path().join("s.json");
        let trace = dir.path().join("t.txt");
        let child = emu_cmd(&[
            "samples/vecadd.spu",
            "-q",
            "--stats",
            stats.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--dump",
            &format!("C={}", pipe.display()),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        send(child.id(), signal);
        let (code, err) = spu_io::testing::wait_at_most(child, Duration::from_secs(10));
        assert_eq!(code, Some(expected), "SIG{signal}: {err}");
        assert_eq!(leftovers(dir.path(), &["dump.npy"]), Vec::<String>::new());
    }
}

#[test]
fn a_signal_while_a_trace_is_written_exits_with_its_own_code() {
    // A kernel that never ends, traced line by line into a file: the signal stops the
    // run while the trace is being written, and the exit code is that signal's
    // (the trace writer used to report every signal as Ctrl-C's 130).
    for (signal, expected) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.txt");
        let child = emu_cmd(&[
            "emu/tests/faults/spin.spu",
            "-q",
            "--spin-limit",
            "0",
            "--trace",
            trace.to_str().unwrap(),
            "--trace-limit",
            "100000000",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        send(child.id(), signal);
        let (code, err) = spu_io::testing::wait_at_most(child, Duration::from_secs(20));
        assert_eq!(code, Some(expected), "SIG{signal}: {err}");
        assert!(err.contains("interrupted"), "SIG{signal}: {err}");
        assert_eq!(leftovers(dir.path(), &[]), Vec::<String>::new());
    }
}

#[test]
fn ctrl_c_while_reading_an_input_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let Some(pipe) = fifo(dir.path(), "k.spu") else {
        return;
    };
    let child = emu_cmd(&[pipe.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    interrupt(child.id());
    let (code, err) = spu_io::testing::wait_at_most(child, Duration::from_secs(10));
    assert_eq!(code, Some(130), "{err}");
}

#[test]
fn sigkill_while_writing_leaves_no_temporaries() {
    // Killed at any moment, a run leaves either nothing or the complete output.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.npy");
    // The run itself takes under a second, writing the dump a few hundred milliseconds.
    for delay_ms in [200, 500, 700, 850, 1000, 1200] {
        let _ = std::fs::remove_file(&out);
        let mut child = emu_cmd(&[
            "emu/tests/matrix/big_dump.spu",
            "-q",
            "--dump",
            &format!("A={}", out.display()),
        ])
        .spawn()
        .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let left = leftovers(dir.path(), &["a.npy"]);
        assert_eq!(left, Vec::<String>::new(), "killed after {delay_ms} ms");
        if out.exists() {
            assert_eq!(
                std::fs::metadata(&out).unwrap().len(),
                64 * 1024 * 1024 + 128
            );
        }
    }
}

/// Buffers of 8-, 16- and 64-bit types go through `--load` and `--dump` as `.npy`
/// files of their own dtype; a file of another dtype, and a parameter that is not
/// 32-bit, are refused with what to do.
#[test]
fn narrow_and_wide_buffers_load_and_dump_with_their_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.spu");
    // Each thread copies element i of every input to the output of its type.
    std::fs::write(
        &k,
        ".global .u8 A[5] = ramp(250, 1);\n.global .s16 B[5] = ramp(-3, 1);\n\
         .global .f64 C[5] = const(0.1);\n.global .u64 D[5] = zeros;\n\
         .launch grid(1) block(5);\n\
         .entry k {\n    .reg .u32 %r<4>;\n    .reg .u64 %rd<2>;\n\
         mov.u32 %r1, %tid.x;\n    shl.b32 %r2, %r1, 3;\n    mov.u32 %r3, C;\n\
         add.u32 %r3, %r3, %r2;\n    ld.global.u64 %rd1, [%r3];\n    mov.u32 %r3, D;\n\
         add.u32 %r3, %r3, %r2;\n    st.global.u64 [%r3], %rd1;\n\
         exit;\n}\n",
    )
    .unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let out = emu(&[
        k.to_str().unwrap(),
        "-q",
        "--dump",
        &format!("A={}", p("a.npy")),
        "--dump",
        &format!("B={}", p("b.npy")),
        "--dump",
        &format!("D={}", p("d.npy")),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let npy = |n: &str| std::fs::read(p(n)).unwrap();
    let (a, b, d) = (npy("a.npy"), npy("b.npy"), npy("d.npy"));
    assert!(text(&a).contains("'|u1'") && a.ends_with(&[250, 251, 252, 253, 254]));
    let b_body: Vec<u8> = [-3i16, -2, -1, 0, 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert!(text(&b).contains("'<i2'") && b.ends_with(&b_body));
    let d_body: Vec<u8> = [0.1f64; 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert!(text(&d).contains("'<u8'") && d.ends_with(&d_body));
    // The .u8 dump loads back into A, but not into the .s16 B.
    let ok = emu(&[
        k.to_str().unwrap(),
        "-q",
        "--load",
        &format!("A={}", p("a.npy")),
    ]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let bad = emu(&[
        k.to_str().unwrap(),
        "-q",
        "--load",
        &format!("B={}", p("a.npy")),
    ]);
    let err = text(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        err.contains("dtype `|u1`") && err.contains("astype('<i2')"),
        "{err}"
    );
    // A 16-bit parameter takes its values' range, as C's `short` field would.
    std::fs::write(&k, ".param .u16 N = 1;\n.entry k { exit; }\n").unwrap();
    let ok = emu(&[k.to_str().unwrap(), "-q", "-D", "N=65535"]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let bad = emu(&[k.to_str().unwrap(), "-q", "-D", "N=65536"]);
    let err = text(&bad.stderr);
    assert!(!bad.status.success());
    assert!(err.contains("`-D N=65536`: parameter `N` is .u16"), "{err}");
    std::fs::write(&k, ".param .u64 N = 1;\n.entry k { exit; }\n").unwrap();
    let ok = emu(&[k.to_str().unwrap(), "-q", "-D", "N=18446744073709551615"]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
}
