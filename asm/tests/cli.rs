//! `spu-asm` on bad input of every kind: a non-zero exit, a one-line reason on
//! stderr, no panic, and no output file.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

fn spu_asm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .args(args)
        .output()
        .expect("spu-asm runs")
}

fn assert_clean_failure(out: &Output, reason: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "must fail: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ") && last.contains(reason),
        "last line `{last}` should say `{reason}`"
    );
}

fn temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let s = path.to_string_lossy().into_owned();
    (dir, s)
}

#[test]
fn missing_file() {
    assert_clean_failure(
        &spu_asm(&["/nonexistent/kernel.spu"]),
        "cannot read `/nonexistent/kernel.spu`",
    );
}

#[test]
fn empty_file() {
    let (_d, p) = temp("empty.spu", b"");
    let out = spu_asm(&[&p]);
    assert_clean_failure(&out, "1 error found, nothing written");
    assert!(String::from_utf8_lossy(&out.stderr).contains("the file is empty"));
    assert!(!Path::new(&p).with_extension("bin").exists());
}

#[test]
fn binary_file() {
    let (_d, p) = temp("blob.spu", &[0u8, 159, 146, 150, 255, 0, 1]);
    assert_clean_failure(&spu_asm(&[&p]), "is not UTF-8 text");
}

#[test]
fn ten_megabytes_of_random_bytes() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let bytes: Vec<u8> = (0..10 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let (_d, p) = temp("random.spu", &bytes);
    assert_clean_failure(&spu_asm(&[&p]), "is not UTF-8 text");
}

#[test]
fn disassembling_non_binaries() {
    let (_d, p) = temp("text.bin", b"hello");
    assert_clean_failure(&spu_asm(&["-d", &p]), "not an ELF file");
    let host = std::env::current_exe().unwrap();
    assert_clean_failure(
        &spu_asm(&["-d", &host.to_string_lossy()]),
        "not an SPU binary",
    );
}

#[test]
fn truncated_and_corrupted_binaries() {
    let (dir, src) = temp(
        "k.spu",
        b".entry k {\n    .reg .u32 %r;\n    mov.u32 %r, 7;\n    exit;\n}\n",
    );
    assert!(spu_asm(&[&src]).status.success());
    let bin = std::fs::read(dir.path().join("k.bin")).unwrap();
    let (_d1, truncated) = temp("t.bin", &bin[..bin.len() / 2]);
    assert_clean_failure(&spu_asm(&["-d", &truncated]), "is not a valid SPU binary");
    // An empty `.bin` is an empty binary, not empty source.
    let (_d0, empty) = temp("e.bin", b"");
    for args in [&["-d", empty.as_str()][..], &[empty.as_str()][..]] {
        assert_clean_failure(
            &spu_asm(args),
            "is not a valid SPU binary: the file is empty (0 bytes)",
        );
    }
    let mut corrupt = bin.clone();
    corrupt[0x40] = 0xee; // first byte of .text: an unknown opcode
    let (_d2, corrupted) = temp("c.bin", &corrupt);
    assert_clean_failure(&spu_asm(&["-d", &corrupted]), "unknown opcode 0xee");
}

#[test]
fn failed_assembly_keeps_the_previous_output() {
    let (dir, src) = temp("k.spu", b".entry k {\n    exit;\n}\n");
    assert!(spu_asm(&[&src]).status.success());
    let bin_path = dir.path().join("k.bin");
    let before = std::fs::read(&bin_path).unwrap();
    std::fs::write(&src, b".entry k {\n    exitt;\n}\n").unwrap();
    assert_clean_failure(&spu_asm(&[&src]), "nothing written");
    assert_eq!(std::fs::read(&bin_path).unwrap(), before);
}

/// A kernel whose immediate is a sum of 200 000 ones: about 400 KB on one line.
fn deep_kernel() -> Vec<u8> {
    let sum = vec!["1"; 200_000].join("+");
    format!(".entry deep {{\n    .reg .u32 %r0;\n    mov.u32 %r0, {sum};\n    exit;\n}}\n")
        .into_bytes()
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    // 11 650 terms used to end the process with a stack overflow (exit 134).
    let (dir, src) = temp("deep.spu", &deep_kernel());
    let out = spu_asm(&[&src]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = dir.path().join("deep.bin");
    let out = spu_asm(&["-d", &bin.to_string_lossy()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("mov.u32 %r0, 200000;"));
}

#[test]
#[ignore = "assembles 3.7 million instructions (about a minute in a debug build)"]
fn a_kernel_too_long_for_a_binary_is_refused_early() {
    let n = spu_isa::format::MAX_INSTRUCTIONS + 1;
    let src = format!(".entry k {{\n{}exit;\n}}\n", "nop;".repeat(n));
    let (dir, p) = temp("long.spu", src.as_bytes());
    assert_clean_failure(&spu_asm(&[&p]), "1 error found, nothing written");
    assert!(!dir.path().join("long.bin").exists());
}

#[test]
fn endless_inputs_stop_at_the_limit() {
    assert_clean_failure(
        &spu_asm(&["/dev/zero"]),
        "`/dev/zero` is larger than 64 MiB, the limit for inputs",
    );
}

/// The frame of the machine's `call` is a constant expression like any immediate.
#[test]
fn a_call_frame_may_be_a_constant_expression() {
    let dir = tempfile::tempdir().unwrap();
    let bin = |frame: &str| {
        let src = dir.path().join("c.spu");
        let out = dir.path().join("c.bin");
        std::fs::write(
            &src,
            format!(".entry k {{\n    call F, {frame};\n    exit;\nF:  ret;\n}}\n"),
        )
        .unwrap();
        let o = spu_asm(&[&src.to_string_lossy(), "-o", &out.to_string_lossy()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(&out).unwrap()
    };
    assert_eq!(bin("1 + 1"), bin("2"));
}

#[test]
fn the_output_may_not_be_the_input() {
    let (dir, src) = temp("k.spu", b".entry k {\n    exit;\n}\n");
    assert_clean_failure(&spu_asm(&[&src, "-o", &src]), "would overwrite the input");
    assert_eq!(std::fs::read(&src).unwrap(), b".entry k {\n    exit;\n}\n");
    // A source named .bin would be replaced by its own binary.
    let same = dir.path().join("k2.bin");
    std::fs::write(&same, b".entry k {\n    exit;\n}\n").unwrap();
    assert_clean_failure(
        &spu_asm(&[&same.to_string_lossy()]),
        "would overwrite the input",
    );
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    let (dir, src) = temp("k.spu", b".entry k {\n    exit;\n}\n");
    assert!(spu_asm(&[&src]).status.success());
    let bin = dir.path().join("k.bin");
    let Some(closed) = spu_io::testing::closed_pipe() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .args(["-d", &bin.to_string_lossy()])
        .stdout(closed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_closed_standard_error_keeps_the_exit_code() {
    // Diagnostics to a pipe whose reader went away (`spu-asm bad.spu 2>&1 | head -1`)
    // are dropped; the tool still exits 1 for the error, never with a panic (101).
    let (_dir, src) = temp("k.spu", b".entry k {\n    bogus r1;\n}\n");
    let Some(closed) = spu_io::testing::closed_pipe() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .arg(&src)
        .stderr(closed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn ctrl_c_while_reading_the_input_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("k.spu");
    if !spu_io::testing::make_fifo(&pipe) {
        return;
    }
    let child = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .arg(&pipe)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    send("INT", child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the FIFO"
    );
}

/// Sends `signal` (a `kill` name: `INT`, `TERM`, `HUP`) to process `pid`.
fn send(signal: &str, pid: u32) {
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// The exit code a shell reports for each signal the tools stop on.
const SIGNALS: [(&str, i32); 3] = [("INT", 130), ("TERM", 143), ("HUP", 129)];

#[test]
fn a_signal_that_comes_as_the_check_finishes_is_not_success() {
    for (signal, code) in SIGNALS {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("k.spu");
        if !spu_io::testing::make_fifo(&pipe) {
            return;
        }
        let child = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
            .arg(&pipe)
            .arg("--check")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        // The signal while the tool waits for its input; the input right after, so
        // the check ends before the signal's grace period does.
        send(signal, child.id());
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let Ok(mut w) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(&pipe)
        {
            let _ = w.write_all(b".entry k {\n    exit;\n}\n");
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {err}");
        assert!(err.contains("error: interrupted"), "SIG{signal}: {err}");
    }
}

#[test]
fn a_signal_while_writing_the_output_exits_with_its_own_code() {
    // A listing far larger than a pipe holds, written to standard output that is
    // read only after the signal: the write notices it and stops.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.spu");
    let body = "    add.u32 %r0, %r0, 1;\n".repeat(20_000);
    std::fs::write(
        &src,
        format!(".entry k {{\n    .reg .u32 %r<1>;\n{body}    exit;\n}}\n"),
    )
    .unwrap();
    let out = spu_asm(&[src.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = dir.path().join("k.bin");
    for (signal, code) in SIGNALS {
        let mut child = Command::new(env!("CARGO_BIN_EXE_spu-asm"))
            .args(["-d", bin.to_str().unwrap(), "-o", "-"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
        send(signal, child.id());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {err}");
        assert!(err.contains("interrupted"), "SIG{signal}: {err}");
    }
}

/// `O_NONBLOCK` on Linux: opening a FIFO to write fails at once if no one reads it.
const O_NONBLOCK: i32 = 0o4000;

#[test]
fn includes_stay_inside_the_kernels_folder_and_are_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.h");
    std::fs::write(&secret, "#define SECRET 41\n").unwrap();
    let kernel = dir.path().join("k.spu");
    let cases: Vec<(String, &str)> = {
        let mut v = vec![(format!("#include \"{}\"\n", secret.display()), "outside")];
        let name = outside.path().file_name().unwrap().to_string_lossy();
        v.push((format!("#include \"../{name}/secret.h\"\n"), "outside"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, dir.path().join("link.h")).unwrap();
            v.push(("#include \"link.h\"\n".into(), "outside"));
        }
        if spu_io::testing::make_fifo(&dir.path().join("pipe.h")) {
            v.push(("#include \"pipe.h\"\n".into(), "not a regular file"));
        }
        v
    };
    for (src, reason) in cases {
        std::fs::write(&kernel, format!("{src}.entry k {{ exit; }}\n")).unwrap();
        let out = spu_asm(&[kernel.to_str().unwrap(), "--check"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{src} must fail");
        assert!(
            stderr.contains(reason) && stderr.contains("copy") && stderr.contains("#include"),
            "{src}: {stderr}"
        );
        assert!(
            !stderr.contains("SECRET"),
            "the file is not quoted: {stderr}"
        );
    }
    // A header in a sub-folder, reached through a link that stays inside, is fine.
    std::fs::create_dir(dir.path().join("inc")).unwrap();
    std::fs::write(dir.path().join("inc/ok.h"), "#define N 3\n").unwrap();
    std::fs::write(&kernel, "#include \"inc/ok.h\"\n.entry k { exit; }\n").unwrap();
    let out = spu_asm(&[
        kernel.to_str().unwrap(),
        "-o",
        dir.path().join("k.bin").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_output_may_not_be_an_included_file() {
    let dir = tempfile::tempdir().unwrap();
    let header = dir.path().join("inc.h");
    std::fs::write(&header, "#define N 3\n").unwrap();
    let kernel = dir.path().join("vi.spu");
    std::fs::write(&kernel, "#include \"inc.h\"\n.entry k { exit; }\n").unwrap();
    let out = spu_asm(&[kernel.to_str().unwrap(), "-o", header.to_str().unwrap()]);
    assert_clean_failure(&out, "would overwrite the input");
    assert!(String::from_utf8_lossy(&out.stderr).contains("(included)"));
    // Also when the default output name is a link to the header.
    std::os::unix::fs::symlink(&header, dir.path().join("vi.bin")).unwrap();
    assert_clean_failure(
        &spu_asm(&[kernel.to_str().unwrap()]),
        "would overwrite the input",
    );
    assert_eq!(std::fs::read_to_string(&header).unwrap(), "#define N 3\n");
}

#[test]
fn a_file_full_of_errors_prints_the_first_fifty_and_a_count() {
    // 20 000 bad lines: each line's position used to be found by counting the lines
    // before it (quadratic), and every error was printed.
    let body: String = (0..20_000)
        .map(|i| format!("    bra nowhere{i};\n"))
        .collect();
    let (_dir, path) = temp(
        "bad.spu",
        format!(".entry k {{\n{body}    exit;\n}}\n").as_bytes(),
    );
    let out = spu_asm(&[&path, "--check"]);
    assert_clean_failure(&out, "20000 errors found, nothing written");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("error: undefined label").count(), 50);
    assert!(stderr.contains("error: undefined label `nowhere49`"));
    assert!(!stderr.contains("`nowhere50`"));
    assert!(
        stderr.contains(
            "... and 19950 more errors not shown (only the first 50 are printed); fix the ones above and assemble again"
        ),
        "{}",
        &stderr[stderr.len().saturating_sub(400)..]
    );
}

/// The bad-input matrix: one case per kind of bad input, each with its exact
/// message and exit code (snapshots `cli__matrix_*.snap`). Bless changes with
/// `INSTA_UPDATE=always`.
#[test]
fn bad_input_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    let file = |name: &str, body: &str| {
        std::fs::write(tmp.join(name), body).unwrap();
        p(name)
    };
    let kernel = |decls: &str, body: &str| {
        format!("{decls}\n.entry k {{\n    .reg .u32 %r<4>;\n{body}\n    exit;\n}}\n")
    };
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.h"), "#define SECRET 1\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.h"), tmp.join("link.h")).unwrap();
    std::fs::write(tmp.join("inc.h"), "#define N 3\n").unwrap();
    let fifo = spu_io::testing::make_fifo(&tmp.join("pipe.h"));
    std::fs::write(tmp.join("random.bin"), [0x7f, b'E', b'L', b'F', 1, 2, 3]).unwrap();
    let params: String = (0..=65536)
        .map(|i| format!(".param .u32 p{i} = {i};\n"))
        .collect();
    let max = spu_isa::format::MAX_EXPR_NODES as usize;
    let over = vec!["N"; max.div_ceil(2) + 1].join("+");
    let bad_lines: String = (0..60).map(|i| format!("    bra nowhere{i};\n")).collect();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(kernel("", "").encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(tmp.join("utf16.spu"), &utf16).unwrap();
    std::fs::write(tmp.join("utf16.h"), &utf16[..40]).unwrap();
    std::fs::write(tmp.join("nine.ptx"), NINE_PARAMETERS).unwrap();
    std::fs::write(tmp.join("struct.ptx"), STRUCT_PARAMETER).unwrap();
    std::fs::write(tmp.join("brace.ptx"), UNCLOSED_BRACE).unwrap();
    let struct_launch = |arg: &str| {
        format!(
            "#include \"struct.ptx\"\n.global .f32 OUT[64];\n.launch grid(1) block(64);\n.bind st(\n    {arg});\n"
        )
    };
    let nine_args = |args: &str| {
        format!(
            "#include \"nine.ptx\"\n.param .u32 N = 64;\n.global .f32 A[N];\n.global .f32 B[N];\n.launch grid(1) block(64);\n.bind nine({args});\n"
        )
    };
    let mut cases: Vec<(&str, Vec<String>)> = vec![
        ("missing_file", vec![p("none.spu")]),
        ("empty_file", vec![file("empty.spu", "")]),
        ("directory", vec![p("")]),
        ("endless_device", vec!["/dev/zero".into()]),
        (
            "nul_bytes",
            vec![file("nul.spu", "\u{0}\u{1}"), "--check".into()],
        ),
        (
            "binary_to_disassemble_is_not_one",
            vec!["-d".into(), p("random.bin")],
        ),
        (
            "source_where_a_binary_belongs",
            vec!["-d".into(), file("k.spu", &kernel("", ""))],
        ),
        (
            "expression_beyond_the_readers_limit",
            vec![file(
                "expr.spu",
                &kernel(&format!(".param .u32 N = 1;\n.global .u32 A[{over}];"), ""),
            )],
        ),
        (
            "parameter_65537",
            vec![file(
                "params.spu",
                &kernel(&format!("{params}.global .u32 A[p65536];"), ""),
            )],
        ),
        (
            "initialiser_beyond_u32",
            vec![file(
                "u32.spu",
                &kernel(".global .u32 A[4] = const(4294967296);", ""),
            )],
        ),
        (
            "initialiser_beyond_u8",
            vec![file(
                "u8.spu",
                &kernel(".global .u8 A[4] = const(256);", ""),
            )],
        ),
        (
            "fraction_for_an_integer_buffer",
            vec![file(
                "frac.spu",
                &kernel(".global .u32 A[4] = const(1.5);", ""),
            )],
        ),
        (
            "negative_unsigned_parameter",
            vec![file("neg.spu", &kernel(".param .u32 N = -1;", ""))],
        ),
        (
            "negative_u64_parameter",
            vec![file("neg64.spu", &kernel(".param .u64 N = -1;", ""))],
        ),
        (
            "f64_parameter_beyond_f64",
            vec![file("big.spu", &kernel(".param .f64 A = 1e400;", ""))],
        ),
        (
            "u64_read_of_a_u32_parameter",
            vec![file(
                "wide.spu",
                &kernel(
                    ".param .u32 K = 1;",
                    "    .reg .u64 %rd0;\n    ld.param.u64 %rd0, [K];",
                ),
            )],
        ),
        (
            "word_read_inside_a_word_of_a_u64_parameter",
            vec![file(
                "mid.spu",
                &kernel(".param .u64 N = 1;", "    ld.param.u32 %r0, [N+2];"),
            )],
        ),
        (
            "negating_the_most_negative_integer",
            vec![file(
                "min.spu",
                &kernel("", "    mov.u32 %r0, -(-9223372036854775807 - 1);"),
            )],
        ),
        (
            "include_outside_the_folder",
            vec![file("out.spu", "#include \"link.h\"\n.entry k { exit; }\n")],
        ),
        (
            "output_is_the_input",
            vec![p("k.spu"), "-o".into(), p("k.spu")],
        ),
        (
            "output_is_an_included_file",
            vec![
                file("inc.spu", "#include \"inc.h\"\n.entry k { exit; }\n"),
                "-o".into(),
                p("inc.h"),
            ],
        ),
        (
            "output_is_a_directory",
            vec![p("k.spu"), "-o".into(), p("")],
        ),
        (
            "carriage_returns_only",
            vec![file("cr.spu", ".entry k {\r    exit;\r}\r")],
        ),
        (
            "unterminated_comment",
            vec![file(
                "comment.spu",
                ".entry k {\n    exit;\n}\n/* never closed\n",
            )],
        ),
        (
            "byte_order_mark_is_accepted",
            vec![
                file("bom.spu", &format!("\u{feff}{}", kernel("", ""))),
                "--check".into(),
            ],
        ),
        (
            "many_errors_are_capped",
            vec![file("many.spu", &kernel("", &bad_lines)), "--check".into()],
        ),
        (
            "vector_width_v8",
            vec![file(
                "v8.spu",
                &kernel(
                    ".global .u32 A[64];",
                    "    ld.global.v8.u32 {%r0, %r1, %r2, %r3, %r0, %r1, %r2, %r3}, [A];",
                ),
            )],
        ),
        (
            "initialiser_list_longer_than_the_array",
            vec![file(
                "list.spu",
                &kernel(".global .u8 A[2] = {1, 2, 3};", ""),
            )],
        ),
        (
            "initialiser_list_value_outside_the_type",
            vec![file(
                "list8.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.visible .global .align 1 .s8 t[4] = {1, -129};\n.visible .entry k()\n{\n\tret;\n}\n",
            )],
        ),
        (
            "ptx_call_with_too_many_arguments",
            vec![file(
                "args.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.func (.param .b32 func_retval0) inc(.param .b32 inc_param_0)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t{\n\t.param .b32 param0;\n\t.param .b32 param1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), inc, (param0, param1);\n\t}\n\tret;\n}\n",
            )],
        ),
        (
            "ptx_call_argument_of_the_wrong_size",
            vec![file(
                "size.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.func (.param .b32 func_retval0) inc(.param .b32 inc_param_0)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), inc, (param0);\n\t}\n\tret;\n}\n",
            )],
        ),
        (
            "ptx_call_of_an_undeclared_function",
            vec![file(
                "undecl.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.func (.param .b32 func_retval0) inc(.param .b32 inc_param_0)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t{\n\t.param .b32 param0;\n\tcall.uni nope, (param0);\n\t}\n\tret;\n}\n",
            )],
        ),
        (
            "ptx_param_access_past_its_slot",
            vec![file(
                "past.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.func (.param .b32 func_retval0) inc(.param .b32 inc_param_0)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+4], %r1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), inc, (param0);\n\t}\n\tret;\n}\n",
            )],
        ),
        (
            "ptx_call_with_a_prototype",
            vec![file(
                "proto.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.func (.param .b32 func_retval0) inc(.param .b32 inc_param_0)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\tcall.uni inc, (%r1), proto;\n\tret;\n}\n",
            )],
        ),
        (
            "immediate_predicate_other_than_0_or_1",
            vec![file(
                "pred2.spu",
                &kernel("", "    .reg .pred %p<2>;\n    mov.pred %p0, 2;"),
            )],
        ),
        (
            "ptx_texture_read",
            vec![file(
                "tex.ptx",
                ".version 7.5\n.target sm_52\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n\t.reg .f32 %f<5>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\t.reg .pred %p<2>;\n\tld.param.u64 %rd1, [k_param_0];\n\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@!%p1 tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1}];\n\tret;\n}\n",
            )],
        ),
    ];
    cases.extend([
        // UTF-16 as PowerShell's `>` writes it: named, with the conversion.
        ("utf16_source", vec![p("utf16.spu"), "--check".into()]),
        (
            "utf16_include",
            vec![
                file("inc16.spu", "#include \"utf16.h\"\n.entry k { exit; }\n"),
                "--check".into(),
            ],
        ),
        (
            "dynamic_shared_size_negative",
            vec![file(
                "shneg.spu",
                ".extern .shared .align 4 .b8 dyn[];\n.launch grid(1) block(32) shared(-1);\n.entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r0, dyn;\n    st.shared.u32 [%r0], %r1;\n    exit;\n}\n",
            )],
        ),
        // One error for the cause, none for the kernel's reads of its parameters.
        (
            "bind_gives_too_few_arguments",
            vec![file("few.spu", &nine_args("A, B, N, N, N, N, N, N"))],
        ),
        (
            "bind_names_no_buffer",
            vec![file("nobuf.spu", &nine_args("A, C, N, N, N, N, N, N, N"))],
        ),
        (
            "bind_negative_constant_for_u32",
            vec![file("negarg.spu", &nine_args("A, B, -1, N, N, N, N, N, N"))],
        ),
        (
            "bind_buffer_to_a_u32_scalar",
            vec![file("bufarg.spu", &nine_args("A, B, A, N, N, N, N, N, N"))],
        ),
        (
            "bad_module_variable",
            vec![file(
                "badvar.spu",
                &NINE_PARAMETERS.replace(".visible .entry", ".global .u32 counter = 1.5;\n.visible .entry").replace("ld.param.u64 %rd1, [nine_param_0];", "ld.global.u32 %r1, [counter];"),
            )],
        ),
        (
            "buffer_alignment_above_256",
            vec![file(
                "align.spu",
                &kernel(".global .align 1024 .u32 A[4];\n.visible .global .align 512 .u64 v;", ""),
            )],
        ),
        (
            "registers_declared_past_the_limit",
            vec![file(
                "regs.spu",
                &format!(
                    ".entry k {{\n{}    exit;\n}}\n",
                    (0..5)
                        .map(|i| format!("    .reg .b32 %r{i}x<65536>;\n"))
                        .collect::<String>()
                ),
            )],
        ),
        (
            "statement_past_the_token_limit",
            vec![file(
                "minus.spu",
                &format!(
                    "#define M0 {}\n{}.param .s32 N = M10 1;\n.entry k {{ exit; }}\n",
                    "-".repeat(1024),
                    (1..=10)
                        .map(|i| format!("#define M{i} M{} M{}\n", i - 1, i - 1))
                        .collect::<String>()
                ),
            )],
        ),
        // 300 x 300 inclusions of one small file.
        ("inclusions_past_the_limit", {
            std::fs::write(tmp.join("leaf.h"), "// leaf\n").unwrap();
            std::fs::write(tmp.join("many.h"), "#include \"leaf.h\"\n".repeat(300)).unwrap();
            std::fs::write(tmp.join("mid.h"), "#include \"many.h\"\n".repeat(300)).unwrap();
            vec![file("incl.spu", "#include \"mid.h\"\n.entry k { exit; }\n")]
        }),
    ]);
    std::fs::write(tmp.join("nul.h"), "#define A(x) x\n#define B \u{0}A(1)\n").unwrap();
    cases.extend([
        // The cause comes first, and nothing it only seems to cause follows.
        (
            "unterminated_string",
            vec![file(
                "str.spu",
                ".global .u8 S[4] = \"abc\n.entry k { exit; }\n",
            )],
        ),
        (
            "include_with_nul_bytes",
            vec![file(
                "nulinc.spu",
                "#include \"nul.h\"\n.param .u32 N = B;\n.entry k { exit; }\n",
            )],
        ),
    ]);
    // `-v`: the machine and the parameter values its figures are for.
    let sized = file(
        "sized.spu",
        ".param .u32 N;\n.param .u32 M = 4;\n.launch grid(1) block(32);\n.entry k {\n    .shared .f32 s[N];\n    exit;\n}\n",
    );
    cases.extend([
        (
            "verbose_unknown_machine",
            vec![
                sized.clone(),
                "-v".into(),
                "--machine".into(),
                "gtx48".into(),
            ],
        ),
        (
            "verbose_missing_machine_file",
            vec![
                sized.clone(),
                "-v".into(),
                "--machine".into(),
                p("none.toml"),
            ],
        ),
        (
            "verbose_machine_file_with_a_typo",
            vec![
                sized.clone(),
                "-v".into(),
                "--machine".into(),
                file("typo.toml", "[sm]\nschedulrs = 4\n"),
            ],
        ),
        // A refused output prints its error and no summary (#23 note N9).
        (
            "verbose_with_a_refused_output",
            vec![
                sized.clone(),
                "-v".into(),
                "-D".into(),
                "N=4".into(),
                "-o".into(),
                sized.clone(),
            ],
        ),
        (
            "verbose_machine_without_v",
            vec![sized.clone(), "--machine".into(), "gtx480".into()],
        ),
        (
            "verbose_with_disassemble",
            vec!["-d".into(), "-v".into(), p("random.bin")],
        ),
        (
            "verbose_size_without_a_value",
            vec![sized.clone(), "-v".into()],
        ),
        (
            "verbose_define_of_no_parameter",
            vec![sized.clone(), "-v".into(), "-D".into(), "X=1".into()],
        ),
        (
            "verbose_define_without_a_value",
            vec![sized.clone(), "-v".into(), "-D".into(), "N".into()],
        ),
        (
            "verbose_define_of_a_bad_value",
            vec![sized.clone(), "-v".into(), "-D".into(), "N=many".into()],
        ),
        (
            "verbose_negative_size",
            vec![
                file(
                    "negative.spu",
                    ".param .s32 N;\n.entry k {\n    .shared .f32 s[N];\n    exit;\n}\n",
                ),
                "-v".into(),
                "-D".into(),
                "N=-1".into(),
            ],
        ),
    ]);
    // Preprocessor hardening (#23 items G8, G9, notes N2, N3, N8, N10).
    std::fs::create_dir(tmp.join("sub")).unwrap();
    std::fs::write(tmp.join("once.h"), "#pragma once\n.param .u32 N = 1;\n").unwrap();
    std::fs::write(tmp.join("twice.h"), ".param .u32 M = 1;\n").unwrap();
    cases.extend([
        (
            "unterminated_comment_in_skipped_text",
            vec![file(
                "skipcomment.spu",
                "#if 0\n/* never closed\n#endif\n.entry k { exit; }\n",
            )],
        ),
        (
            "unterminated_comment_in_emitted_text_inside_if",
            vec![file(
                "ifcomment.spu",
                "#if 1\n/* never closed\n#endif\n.entry k { exit; }\n",
            )],
        ),
        (
            "pragma_once_reads_a_file_once",
            vec![
                file(
                    "once.spu",
                    "#include \"once.h\"\n#include \"once.h\"\n#include \"sub/../once.h\"\n.entry k { exit; }\n",
                ),
                "--check".into(),
            ],
        ),
        (
            "a_file_without_pragma_once_is_read_twice",
            vec![
                file(
                    "twice.spu",
                    "#include \"twice.h\"\n#include \"twice.h\"\n.entry k { exit; }\n",
                ),
                "--check".into(),
            ],
        ),
        (
            "unknown_pragma_is_ignored_with_a_warning",
            vec![
                file("pragma.spu", "#pragma unroll 4\n.entry k { exit; }\n"),
                "--check".into(),
            ],
        ),
        (
            "tokens_after_else_and_endif",
            vec![file(
                "elsejunk.spu",
                "#if 1\n#else junk\n#endif more\n#if 0\n#else // a comment is fine\n#endif /* and here */\n.entry k { exit; }\n",
            )],
        ),
        (
            "tokens_after_undef_and_ifdef",
            vec![file(
                "undef.spu",
                "#define X 1\n#undef X garbage\n#ifdef X junk\n#endif\n#ifndef X more // ok\n#endif\n#undef X // a comment is fine\n.entry k { exit; }\n",
            )],
        ),
        (
            "define_defined",
            vec![file(
                "defined.spu",
                "#define defined 1\n.entry k { exit; }\n",
            )],
        ),
        // The warning points at `#pragma` on its own line, not into the next one.
        (
            "bare_pragma_is_ignored_with_a_warning",
            vec![
                file("bare.spu", "#pragma\n.entry k { exit; }\n"),
                "--check".into(),
            ],
        ),
        (
            "null_directive",
            vec![
                file("null.spu", "#\n  # // nothing\n.entry k { exit; }\n"),
                "--check".into(),
            ],
        ),
        // #23 note N7: the folder of the output is a file.
        (
            "output_inside_a_file",
            vec![
                file("plain.spu", ".entry k { exit; }\n"),
                "-o".into(),
                p("plain.spu/x.bin"),
            ],
        ),
        (
            "if_integer_past_64_bits",
            vec![file(
                "bigif.spu",
                "#if 9223372036854775808 > 0\n#endif\n.entry k { exit; }\n",
            )],
        ),
    ]);
    // The machine's `call LABEL, FRAME` gets messages about that form, not PTX's.
    let called = |call: &str| {
        format!(".entry k {{\n    .reg .u32 %r<8>;\n    {call};\n    exit;\nF:  ret;\n}}\n")
    };
    cases.extend([
        (
            "native_call_negative_frame",
            vec![file("cneg.spu", &called("call F, -1"))],
        ),
        (
            "native_call_computed_frame_past_255",
            vec![file("cexpr.spu", &called("call F, 200 + 56"))],
        ),
        (
            "native_call_of_a_register",
            vec![file("creg.spu", &called("call %r1, 1"))],
        ),
        (
            "native_call_with_three_operands",
            vec![file("c3.spu", &called("call F, 1, 2"))],
        ),
        (
            "native_call_without_a_frame",
            vec![file("c1.spu", &called("call F"))],
        ),
        (
            "negative_local_address",
            vec![file(
                "lneg.spu",
                ".entry k {\n    .reg .u32 %r<8>;\n    st.local.u32 [0], %r1;\n    call R, 1;\n    exit;\nR:  ld.local.u32 %r2, [-16];\n    ret;\n}\n",
            )],
        ),
        // A `.bind` whose struct argument does not parse: its error alone, not
        // "needs a launch file" for each struct parameter it left unbound.
        (
            "struct_bind_that_does_not_parse",
            vec![file(
                "sb1.spu",
                &struct_launch("{{.u64 OUT, .u32 N = 64}, .f32 S = 1.0}"),
            )],
        ),
        (
            "struct_field_offset_past_4_gib",
            vec![file(
                "sb2.spu",
                &struct_launch("{.u64 OUT, .u32 N = 64, [4294967297] .f32 S = 1.0}"),
            )],
        ),
        // `.bind` of a kernel no file defines: that, not "takes 0 arguments".
        (
            "bind_of_no_kernel",
            vec![file(
                "nok.spu",
                "#include \"nine.ptx\"\n.global .f32 A[64];\n.launch grid(1) block(64);\n.bind nien(A, A, 1, 2, 3, 4, 5, 6, 7);\n",
            )],
        ),
        // A function pointer: said so, at the address, the prototype and the call.
        (
            "call_through_a_register",
            vec![file("fptr.ptx", FUNCTION_POINTER), "--check".into()],
        ),
        // A local array past a frame's 4080 bytes: the limit named and explained.
        (
            "local_array_past_a_frame",
            vec![
                file(
                    "bigframe.ptx",
                    ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\t.local .align 4 .b8 __local_depot0[4096];\n\tret;\n}\n",
                ),
                "--check".into(),
            ],
        ),
        // A word of a 64-bit PTX entry parameter (`[k_param_1+4]`): named as a
        // part of the parameter, with how to read it.
        (
            "word_read_of_a_u64_ptx_parameter",
            vec![{
                file(
                    "wordp.ptx",
                    ".version 7.0\n.target sm_35\n.address_size 64\n.visible .entry k(\n    .param .u64 k_param_0,\n    .param .u64 k_param_1\n)\n{\n    .reg .b32 %r<4>;\n    .reg .b64 %rd<4>;\n    ld.param.u64 %rd1, [k_param_0];\n    ld.param.u32 %r2, [k_param_1+4];\n    cvta.to.global.u64 %rd2, %rd1;\n    st.global.u32 [%rd2], %r2;\n    ret;\n}\n",
                );
                file(
                    "wordp.spu",
                    "#include \"wordp.ptx\"\n.global .u32 O[1] = zeros;\n.launch grid(1) block(1);\n.bind k(O, 5);\n",
                )
            }],
        ),
        // An unclosed `{` in another kernel of an included file swallows the launch
        // file's lines: the brace is named, not "needs a launch file".
        (
            "unclosed_brace_in_another_included_kernel",
            vec![file(
                "brace.spu",
                "#include \"brace.ptx\"\n.global .u32 P[32] = zeros;\n.launch grid(1) block(32);\n.bind good(P);\n",
            )],
        ),
    ]);
    if fifo {
        cases.push((
            "include_of_a_pipe",
            vec![file(
                "fifo.spu",
                "#include \"pipe.h\"\n.entry k { exit; }\n",
            )],
        ));
    }
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = spu_io::testing::outcome(&spu_asm(&args), tmp)
            .replace(&outside.path().display().to_string(), "[OUTSIDE]");
        assert!(
            !text.contains("panicked") && !text.contains("SECRET"),
            "{name}:\n{text}"
        );
        insta::assert_snapshot!(format!("matrix_{name}"), text);
    }
}

/// A PTX kernel with a struct passed by value (a pointer, a count and a scale).
const STRUCT_PARAMETER: &str = "\
.version 7.8
.target sm_52
.address_size 64

.visible .entry st(
\t.param .align 8 .b8 st_param_0[16]
)
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;

\tld.param.u64 %rd1, [st_param_0];
\tld.param.u32 %r1, [st_param_0+8];
\tret;
}
";

/// Two PTX kernels; the second's block is never closed (`{ { {` where a line was).
const UNCLOSED_BRACE: &str = "\
.version 7.0
.target sm_52
.address_size 64
.visible .entry good(.param .u64 p)
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [p];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, 7;
\tst.global.u32 [%rd2], %r1;
\tret;
}
.visible .entry bad(.param .u64 p)
{
\t.reg .b32 %r<4>;
\t{ { {
\tret;
}
";

/// A kernel that calls a device function through a register, as clang compiles a
/// CUDA function pointer.
const FUNCTION_POINTER: &str = "\
.version 7.8
.target sm_52
.address_size 64

.func (.param .b32 r) g(.param .b32 x)
{
\t.reg .b32 %r<2>;
\tld.param.b32 %r1, [x];
\tst.param.b32 [r], %r1;
\tret;
}

.visible .entry k()
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;

\tmov.u64 %rd1, g;
\t{
\t.param .b32 a0;
\tst.param.b32 [a0+0], %r1;
\t.param .b32 r0;
\tproto: .callprototype (.param .b32 _) _ (.param .b32 _);
\tcall (r0), %rd1, (a0), proto;
\tld.param.b32 %r2, [r0+0];
\t}
\tret;
}
";

/// A PTX kernel of nine parameters, as nvcc writes one: two pointers and seven
/// scalars, each read once.
const NINE_PARAMETERS: &str = "\
.version 7.8
.target sm_52
.address_size 64

.visible .entry nine(
\t.param .u64 nine_param_0,
\t.param .u64 nine_param_1,
\t.param .u32 nine_param_2,
\t.param .u32 nine_param_3,
\t.param .u32 nine_param_4,
\t.param .u32 nine_param_5,
\t.param .u32 nine_param_6,
\t.param .u32 nine_param_7,
\t.param .u32 nine_param_8
)
{
\t.reg .b32 %r<12>;
\t.reg .b64 %rd<4>;

\tld.param.u64 %rd1, [nine_param_0];
\tld.param.u64 %rd2, [nine_param_1];
\tld.param.u32 %r1, [nine_param_2];
\tld.param.u32 %r2, [nine_param_3];
\tld.param.u32 %r3, [nine_param_4];
\tld.param.u32 %r4, [nine_param_5];
\tld.param.u32 %r5, [nine_param_6];
\tld.param.u32 %r6, [nine_param_7];
\tld.param.u32 %r7, [nine_param_8];
\tret;
}
";

/// `-v` says a launch is refused where spu-emu refuses it, names the limit that
/// blocks, and counts the local memory the code reaches (#25 H1-H4).
#[test]
fn verbose_summary_agrees_with_the_emulator() {
    let tmp = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    // `-v` refuses what spu-emu refuses, and counts local memory (#25 H1-H4).
    let threads = file(
        "threads.spu",
        ".param .u32 T = 1024;\n.param .u32 S = 1;\n.global .u32 out[4] = zeros;\n.launch grid(1) block(T);\n.entry k {\n    .reg .u32 %r<4>;\n    .shared .u32 buf[S];\n    mov.u32 %r3, out;\n    st.global.u32 [%r3], %r3;\n    exit;\n}\n",
    );
    let gpu = |args: &[&str]| -> Vec<String> {
        let mut v = vec![
            threads.clone(),
            "-v".into(),
            "-o".into(),
            "/dev/null".into(),
        ];
        v.extend(args.iter().map(|a| a.to_string()));
        v
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "verbose_block_over_the_per_block_thread_limit",
            gpu(&["--machine", "gtx480", "-D", "T=1536"]),
        ),
        (
            "verbose_block_over_the_resident_thread_limit",
            gpu(&["--machine", "gtx480", "-D", "T=2048"]),
        ),
        (
            "verbose_shared_memory_over_an_sm",
            gpu(&["--machine", "gtx480", "-D", "S=20000"]),
        ),
        ("verbose_empty_block", gpu(&["-D", "T=0"])),
        (
            "verbose_cb_kernel_on_a_gpu",
            vec![
                file(
                    "cb.spu",
                    ".global .u32 out[4] = zeros;\n.launch grid(1) block(32);\n.entry k {\n    .reg .u32 %r<4>;\n    bar.blocksync;\n    exit;\n}\n",
                ),
                "-v".into(),
                "--machine".into(),
                "gtx480".into(),
                "-o".into(),
                "/dev/null".into(),
            ],
        ),
        (
            "verbose_local_memory_at_a_constant_offset_and_through_calls",
            vec![
                file(
                    "local.spu",
                    ".launch grid(1) block(32);\n.entry k {\n    .reg .u32 %r<4>;\n    st.local.u32 [64], %r0;\n    call F, 2;\n    exit;\nF:  st.local.v2.u32 [96], {%r0, %r1};\n    ret;\n}\n",
                ),
                "-v".into(),
                "-o".into(),
                "/dev/null".into(),
            ],
        ),
        (
            "verbose_local_memory_of_recursion",
            vec![
                file(
                    "recurse.spu",
                    ".launch grid(1) block(32);\n.entry k {\n    .reg .u32 %r<4>;\n    call F, 1;\n    exit;\nF:  st.local.u32 [0], %r0;\n    call F, 1;\n    ret;\n}\n",
                ),
                "-v".into(),
                "-o".into(),
                "/dev/null".into(),
            ],
        ),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = spu_asm(&args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            spu_io::testing::outcome(&out, tmp.path())
        );
        insta::assert_snapshot!(name, text);
    }
}

/// A launch `-v` finds refused still writes its binary (a run may choose other
/// -D values or another machine), and the error says so.
#[test]
fn a_refused_launch_says_its_binary_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("k.spu");
    std::fs::write(
        &src,
        ".param .u32 T = 32;\n.launch grid(1) block(T);\n.entry k {\n    exit;\n}\n",
    )
    .unwrap();
    let bin = tmp.path().join("k.bin");
    let out = spu_asm(&[
        src.to_str().unwrap(),
        "-v",
        "-D",
        "T=0",
        "-o",
        bin.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("spu-emu refuses this launch")
            && err.contains(
                "k.bin` is written all the same: a run chooses its -D values and machine again"
            ),
        "{err}"
    );
    assert!(bin.exists());
}

/// `spu-asm` with its address space and CPU time limited, as a hostile input's
/// victim would run it.
/// The same when the big text comes from an `#include` of a small launch file, or
/// from macros a few hundred bytes long: the preprocessed text is checked as it
/// grows, and the part that fit is not assembled (it would only report the cut).
#[test]
fn a_memory_limit_too_tight_for_included_or_expanded_text_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..100_000)
        .map(|i| format!("    add.u32 %r{}, %r{}, {i};\n", i % 8, (i + 1) % 8))
        .collect();
    std::fs::write(
        dir.path().join("big.spu"),
        format!(".entry k {{\n    .reg .u32 %r<8>;\n{body}    exit;\n}}\n"),
    )
    .unwrap();
    let launch = dir.path().join("launch.spu");
    std::fs::write(&launch, "#include \"big.spu\"\n").unwrap();
    // 8^6 adds: about 5 MB of text from under 400 bytes.
    let mut macros = String::from("#define A0 add.u32 %r0, %r0, 1;\n");
    for level in 1..=6 {
        let prev = format!("A{} ", level - 1).repeat(8);
        macros.push_str(&format!("#define A{level} {prev}\n"));
    }
    let expanded = dir.path().join("macros.spu");
    std::fs::write(
        &expanded,
        format!("{macros}.entry k {{\n    .reg .u32 %r0;\n    A6\n    exit;\n}}\n"),
    )
    .unwrap();
    for src in [&launch, &expanded] {
        let src = src.to_str().unwrap();
        for args in [vec![src, "--check"], vec![src, "-o", "-"]] {
            let out = spu_asm_limited(&args, 64, 60);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                !err.contains("panicked") && !err.contains("memory allocation of"),
                "{args:?}: {err}"
            );
            assert!(
                err.contains("out of memory while assembling: the preprocessed source"),
                "{args:?}: {err}"
            );
            assert!(err.contains("1 error found"), "{args:?}: {err}");
        }
    }
}

fn spu_asm_limited(args: &[&str], memory_mib: u64, cpu_s: u64) -> Output {
    // A wall-clock limit too (`timeout`), and no backtraces: a process that
    // runs out of memory while the standard library prints a backtrace can wait
    // for itself for ever, using no CPU time.
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && ulimit -t {cpu_s} && exec timeout {} \"$0\" \"$@\"",
            memory_mib * 1024,
            cpu_s * 4
        ))
        .arg(env!("CARGO_BIN_EXE_spu-asm"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("sh runs")
}

/// Inputs of a few kilobytes to a few tens of megabytes that made the assembler
/// allocate gigabytes or run for minutes: each finishes within 1 GiB of address
/// space and 30 s of CPU, assembled or refused with a message naming the limit.
#[test]
fn hostile_inputs_stay_within_memory_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let write = |name: &str, text: &[u8]| {
        std::fs::write(tmp.join(name), text).unwrap();
        tmp.join(name).display().to_string()
    };
    let header = ".version 7.8\n.target sm_52\n.address_size 64\n";
    // 2^19 adds on 65 536 declared registers, from doubling macros.
    let mut adds = format!("{header}#define A0 add.s32 %r1, %r1, 1;\n");
    for i in 1..20 {
        adds.push_str(&format!("#define A{i} A{} A{}\n", i - 1, i - 1));
    }
    adds.push_str(".visible .entry k()\n{\n.reg .b32 %r<65536>;\nA19\nret;\n}\n");
    // 300 declarations of 65 536 registers each.
    let decls: String = (0..300)
        .map(|i| format!(".reg .b32 %r{i:03}x<65536>;\n"))
        .collect();
    // 2^20 minus signs from macros in a parameter's default.
    let mut minus = format!("#define M0 {}\n", "-".repeat(1024));
    for i in 1..=10 {
        minus.push_str(&format!("#define M{i} M{} M{}\n", i - 1, i - 1));
    }
    minus.push_str(".param .s32 N = M10 1;\n.entry k { exit; }\n");
    // Eight levels of files that each include the next eight times.
    for level in 1..8 {
        write(
            &format!("f{level}.h"),
            format!("#include \"f{}.h\"\n", level + 1)
                .repeat(8)
                .as_bytes(),
        );
    }
    write("f8.h", b"// leaf\n");
    let cases: Vec<(&str, String, &str)> = vec![
        ("adds.ptx", adds, ""),
        (
            "decls.ptx",
            format!("{header}.visible .entry k()\n{{\n{decls}ret;\n}}\n"),
            "the kernel declares more than 262144 registers",
        ),
        (
            "decls.spu",
            format!(".entry k {{\n{decls}exit;\n}}\n"),
            "the kernel declares more than 262144 registers",
        ),
        (
            "minus.spu",
            minus,
            "this statement has more than 1048576 tokens",
        ),
        (
            "semicolons.spu",
            format!(".entry k {{\n    exit;\n}}\n{}", ";".repeat(20 << 20)),
            "",
        ),
        (
            "sum.spu",
            format!(
                ".param .u32 N = 1{};\n.entry k {{\n    exit;\n}}\n",
                "+1".repeat(5 << 20)
            ),
            "this statement has more than 1048576 tokens",
        ),
        (
            "includes.spu",
            "#include \"f1.h\"\n.entry k { exit; }\n".to_string(),
            "too many `#include`s",
        ),
    ];
    for (name, text, refusal) in cases {
        let path = write(name, text.as_bytes());
        let out = spu_asm_limited(&[&path, "--check"], 1024, 30);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if refusal.is_empty() {
            assert!(out.status.success(), "{name} must assemble: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
            assert!(stderr.contains(refusal), "{name}: {stderr}");
            assert!(
                stderr
                    .trim_end()
                    .ends_with("1 error found, nothing written"),
                "{name}: one error, no cascade: {stderr}"
            );
        }
    }
}

/// Text from the user reaches the terminal escaped: a file name, source lines with
/// ESC, OSC, BEL, CR, a second byte order mark and other control characters (the
/// lexer's `unexpected character` and the quoted line), an include's name, a
/// `.file` name in a listing, and names in a forged binary.
#[test]
fn control_characters_never_reach_the_terminal() {
    use spu_io::testing::{HOSTILE, terminal_hazards};
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path();
    let p = |name: &str| tmp.join(name).display().to_string();
    let one_line = HOSTILE.replace(['\n', '\r', '"'], "");
    let kernel = ".entry k {\n    .reg .u32 %r<2>;\nLOOPX:\n    exit;\n}\n";
    let hostile = p(&format!("k{HOSTILE}.spu"));
    std::fs::write(
        &hostile,
        kernel.replace("exit;", &format!("exit; {one_line}")),
    )
    .unwrap();
    let named = p(&format!("good{HOSTILE}.spu"));
    std::fs::write(&named, kernel).unwrap();
    std::fs::write(p("inc.spu"), format!("#include \"{one_line}.h\"\n{kernel}")).unwrap();
    std::fs::write(p("file.spu"), format!(".file 1 \"{one_line}\";\n{kernel}")).unwrap();
    std::fs::write(p("good.spu"), kernel).unwrap();
    assert!(
        spu_asm(&[&p("good.spu"), "-o", &p("good.bin")])
            .status
            .success()
    );
    assert!(
        spu_asm(&[&p("file.spu"), "-o", &p("file.bin")])
            .status
            .success()
    );
    // A binary whose label is a colour sequence of the same length.
    let bin = std::fs::read(p("good.bin")).unwrap();
    let at = bin.windows(5).position(|w| w == b"LOOPX").unwrap();
    let mut forged = bin.clone();
    forged[at..at + 5].copy_from_slice(b"\x1b[31m");
    std::fs::write(p("forged.bin"), forged).unwrap();
    let cases: [(&str, Vec<String>); 6] = [
        ("source_line", vec![hostile.clone(), "--check".into()]),
        ("missing_file", vec![p(&format!("none{HOSTILE}.spu"))]),
        (
            "output_is_the_input",
            vec![named.clone(), "-o".into(), named.clone()],
        ),
        ("include", vec![p("inc.spu"), "--check".into()]),
        ("listing", vec!["-d".into(), p("file.bin")]),
        ("forged_binary", vec!["-d".into(), p("forged.bin")]),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = spu_asm(&args);
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let hazards = terminal_hazards(bytes);
            assert!(
                hazards.is_empty(),
                "{name}: {stream} carries {hazards:?}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
        if name == "listing" {
            assert!(out.status.success());
            continue;
        }
        assert!(!out.status.success(), "{name}");
        insta::assert_snapshot!(
            format!("escaped_{name}"),
            spu_io::testing::outcome(&out, tmp)
        );
    }
}

/// A file whose kernel calls thousands of device functions assembles in time
/// linear in their number (each function's label scope was built from all of them:
/// 8 000 took a minute, 50 000 hours).
#[test]
fn many_called_device_functions_assemble_quickly() {
    let n = 8000;
    let mut s = String::from(".version 7.5\n.target sm_52\n.address_size 64\n");
    for i in (0..n).rev() {
        s.push_str(&format!(
            ".func (.param .b32 r) f{i}(.param .b32 a)\n{{\n .reg .b32 %r<2>;\n ld.param.b32 %r0, [a];\n"
        ));
        if i + 1 < n {
            s.push_str(&format!(
                " {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r0; call (pr), f{}, (pa); ld.param.b32 %r1, [pr]; }}\n",
                i + 1
            ));
        } else {
            s.push_str(" mov.b32 %r1, %r0;\n");
        }
        s.push_str(" st.param.b32 [r], %r1;\n ret;\n}\n");
    }
    s.push_str(
        ".visible .entry k()\n{\n .reg .b32 %r<3>;\n mov.u32 %r0, %tid.x;\n { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r0; call (pr), f0, (pa); ld.param.b32 %r1, [pr]; }\n ret;\n}\n",
    );
    let (_dir, path) = temp("chain.ptx", s.as_bytes());
    let started = std::time::Instant::now();
    let out = spu_asm(&[&path, "--check"]);
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took.as_secs() < 20, "took {took:?}");
}

#[test]
fn a_file_name_a_file_string_cannot_hold_is_named_in_a_warning() {
    // A `"` in the source's name: the listing's `.file` string holds `'` instead, so a
    // kernel re-assembled from it names another file; the disassembler says so.
    let (dir, src) = temp("a\"b.spu", b".entry k {\n    exit;\n}\n");
    assert!(spu_asm(&[&src]).status.success());
    let bin = dir.path().join("a\"b.bin");
    let out = spu_asm(&["-d", &bin.to_string_lossy()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("a'b.spu\";"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: file 0's name `") && err.contains("a\"b.spu`"),
        "{err}"
    );
    // A name it can hold gets no warning.
    let (dir, src) = temp("plain name.spu", b".entry k {\n    exit;\n}\n");
    assert!(spu_asm(&[&src]).status.success());
    let out = spu_asm(&["-d", &dir.path().join("plain name.bin").to_string_lossy()]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

/// Under an address-space limit too tight for the input (`ulimit -v`), the tool
/// says it is out of memory and exits 1: no panic of a thread that could not
/// start, no abort of an allocation that failed.
#[test]
fn a_memory_limit_too_tight_for_the_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.spu");
    let body: String = (0..100_000)
        .map(|i| format!("    add.u32 %r{}, %r{}, {i};\n", i % 8, (i + 1) % 8))
        .collect();
    std::fs::write(
        &src,
        format!(".entry k {{\n    .reg .u32 %r<8>;\n{body}    exit;\n}}\n"),
    )
    .unwrap();
    let src = src.to_str().unwrap();
    // Below about 10 MiB the runtime itself may fail to start the Ctrl-C
    // watcher's thread (its signal stack), before any input is read.
    for memory_mib in [12, 64] {
        for args in [vec![src, "--check"], vec![src, "-o", "-"]] {
            let out = spu_asm_limited(&args, memory_mib, 60);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{memory_mib} MiB, {args:?}: {err}"
            );
            assert!(
                !err.contains("panicked") && !err.contains("memory allocation of"),
                "{memory_mib} MiB: {err}"
            );
            let last = err.lines().last().unwrap_or_default();
            assert!(last.starts_with("error: "), "{memory_mib} MiB: {err}");
            assert!(err.contains("out of memory"), "{memory_mib} MiB: {err}");
        }
    }
}

/// A usage error (an unknown option, no input) exits with status 2, as the
/// documentation says; other errors exit with 1.
#[test]
fn usage_errors_exit_with_status_2() {
    for args in [&["--bogus"][..], &[]] {
        let out = spu_asm(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}:\n{err}");
        assert!(err.contains("error:"), "{args:?}:\n{err}");
    }
    let out = spu_asm(&["no-such-file.spu", "--check"]);
    assert_eq!(out.status.code(), Some(1));
}
