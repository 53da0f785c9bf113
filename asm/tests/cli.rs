//! `spu-asm` on bad input of every kind: a non-zero exit, a one-line reason on
//! stderr, no panic, and no output file.

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
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the FIFO"
    );
}
