//! Registers keep the source's names where the assembler allocated them: a kernel
//! whose float immediate needs a temporary (so every register is renumbered) shows
//! `%f2` and `%i`, not the physical registers they landed in, in run-time errors,
//! in the trace's instructions and in its `writes` column; the temporary is
//! `%tmp0`. A binary without that debug information still runs and shows the
//! registers' numbers. Snapshots in `snapshots/names__*.snap`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KERNEL: &str = "emu/tests/names/smooth.spu";
const UNSYNCED: &str = "emu/tests/names/smooth_unsynced.spu";

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

fn module(path: &str) -> spu_isa::format::Module {
    let src = std::fs::read_to_string(root().join(path)).unwrap();
    spu_asm::assemble_module(path, &src)
        .unwrap_or_else(|d| panic!("{}", d.render(path, &src)))
        .0
}

/// The kernels' registers really were renumbered: the binary declares the
/// physical registers, and `%f2` is not where the declarations would put it.
#[test]
fn the_kernels_need_a_temporary_and_are_allocated() {
    for path in [KERNEL, UNSYNCED] {
        let m = module(path);
        let names: Vec<&str> = m.regs.iter().map(|r| r.name.as_str()).collect();
        assert!(!names.contains(&"f"), "{path}: {names:?}");
        assert!(names.contains(&"r"), "{path}: {names:?}");
        assert!(m.debug.names.iter().any(|n| n == "tmp0"), "{path}");
        assert!((0..m.code.len()).any(|pc| m.debug.hidden(pc)), "{path}");
    }
}

#[test]
fn a_cb_error_names_registers_as_the_source_does() {
    let out = emu(&[UNSYNCED, "--grid", "2x1", "-q"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`ld.cb.west.f32 %f2, [%i];`"),
        "the instruction as written:\n{err}"
    );
    insta::assert_snapshot!("cb_error", err);
}

#[test]
fn the_trace_names_registers_and_writes_as_the_source_does() {
    let out = emu(&[
        KERNEL,
        "--grid",
        "2x1",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:1,0",
        "--trace-warp",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "mov.f32 %tmp0, 0.33333334;",
        "%tmp0 [0]=0x3eaaaaab",
        "mul.f32 %f1, %f1, %tmp0;",
        "ld.cb.west.f32 %f2, [%i];",
        "%f2 [0]=0x0 [1]=0x3f800000",
        "%f0 pending",
        "loaded %f0 [0]=0x42000000",
    ] {
        assert!(text.contains(expected), "`{expected}` in\n{text}");
    }
    // No physical register shows through.
    assert!(!text.contains("%r"), "{text}");
    insta::assert_snapshot!("trace", text);
}

/// A binary without debug information (as older assemblers wrote) runs alike and
/// shows the registers' numbers.
#[test]
fn a_binary_without_names_shows_register_numbers() {
    let mut m = module(KERNEL);
    m.debug = Default::default();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bare.bin");
    std::fs::write(&bin, spu_isa::format::write_module(&m).unwrap()).unwrap();
    let out = emu(&[
        bin.to_str().unwrap(),
        "--grid",
        "2x1",
        "-q",
        "--trace",
        "-",
        "--trace-unit",
        "sm:1,0",
        "--trace-warp",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("mul.f32 %r"), "{text}");
    assert!(!text.contains("%tmp0") && !text.contains("%f1"), "{text}");
    let named = emu(&[KERNEL, "--grid", "2x1", "-q", "--trace", "-"]);
    let bare = emu(&[bin.to_str().unwrap(), "--grid", "2x1", "-q", "--trace", "-"]);
    let cycles = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(cycles(&named), cycles(&bare), "the same run");
}
