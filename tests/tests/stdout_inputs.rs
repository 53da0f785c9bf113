//! Standard output redirected by the shell to one of the inputs (`>> k.spu`,
//! `1<> k.spu`) is refused before anything is written, as `cat` refuses "input
//! file is output file": the input stays as it was.

use spu_tests::binary;
use std::process::{Command, Stdio};

fn run_into(
    tool: &str,
    args: &[&str],
    dir: &std::path::Path,
    stdout_to: &str,
) -> (Option<i32>, String) {
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(stdout_to))
        .unwrap();
    let o = Command::new(binary(tool))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::from(out))
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn standard_output_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let kernel =
        ".global .f32 A[32] = zeros;\n.launch grid(1) block(32);\n.entry k {\n    exit;\n}\n";
    std::fs::write(dir.path().join("k.spu"), kernel).unwrap();
    let o = Command::new(binary("spu-asm"))
        .current_dir(dir.path())
        .args(["k.spu", "-o", "k.bin"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let bin = std::fs::read(dir.path().join("k.bin")).unwrap();
    for (tool, args, file) in [
        ("spu-emu", &["k.spu", "-q", "--stats", "-"][..], "k.spu"),
        ("spu-emu", &["k.spu"][..], "k.spu"),
        ("spu-prof", &["k.bin"][..], "k.bin"),
        ("spu-asm", &["-d", "k.bin"][..], "k.bin"),
    ] {
        let (code, err) = run_into(tool, args, dir.path(), file);
        assert_eq!(code, Some(1), "{tool} {args:?}: {err}");
        assert!(
            err.contains("standard output is the input") && err.contains(&format!("`{file}`")),
            "{tool} {args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("k.spu")).unwrap(),
            kernel
        );
        assert_eq!(std::fs::read(dir.path().join("k.bin")).unwrap(), bin);
    }
    // Standard output to another file is fine.
    std::fs::write(dir.path().join("log.txt"), "").unwrap();
    let (code, err) = run_into("spu-emu", &["k.spu", "--stats", "-"], dir.path(), "log.txt");
    assert_eq!(code, Some(0), "{err}");
}
