//! A run-time error on a source line of megabytes names the line's length
//! instead of printing it, as the assembler's errors do.

use std::process::Command;

#[test]
fn a_fault_on_a_very_long_line_does_not_print_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.spu");
    let comment = "x".repeat(2_000_000);
    std::fs::write(
        &path,
        format!(
            ".global .u32 A[4] = zeros;\n.launch grid(1) block(32);\n.entry k {{\n    .reg .u32 %r<4>;\n    mov.u32 %r1, 12345678;\n    ld.global.u32 %r2, [%r1]; // {comment}\n    exit;\n}}\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spu-emu"))
        .arg(&path)
        .arg("-q")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.len() < 4096, "{} bytes", err.len());
    assert!(
        err.contains("(the line is 2000033 bytes long and not shown)"),
        "{err}"
    );
}
