//! `#include` of files outside the kernel's folder: refused unless their folder was
//! given with `-I DIR`, and a link out of a `-I` folder is still refused.

use std::path::Path;
use std::process::{Command, Output};

fn spu_asm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-asm"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("spu-asm runs")
}

const KERNEL: &str = "#include \"../lib/n.h\"\n.entry k {\n    .reg .u32 %r<2>;\n    mov.u32 %r0, N;\n    exit;\n}\n";

/// `root/launch/k.spu` includes `../lib/n.h`; `root/secret/s.h` is not named anywhere.
fn layout() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for d in ["launch", "lib", "secret"] {
        std::fs::create_dir(root.path().join(d)).unwrap();
    }
    std::fs::write(root.path().join("launch/k.spu"), KERNEL).unwrap();
    std::fs::write(root.path().join("lib/n.h"), "#define N 7\n").unwrap();
    std::fs::write(root.path().join("secret/s.h"), "#define N 9\n").unwrap();
    root
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn parent_folder_is_refused_without_dash_i_and_the_message_says_to_add_it() {
    let root = layout();
    let out = spu_asm(root.path(), &["launch/k.spu", "--check"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("cannot include `../lib/n.h`"), "{err}");
    assert!(err.contains("add `-I "), "{err}");
    assert!(err.contains("lib`, or copy"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn parent_folder_is_accepted_with_dash_i() {
    let root = layout();
    let out = spu_asm(root.path(), &["launch/k.spu", "-I", "lib"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(root.path().join("launch/k.bin").is_file());
    // The same folder named another way (relative to where the tool runs) works too.
    let out = spu_asm(
        root.path(),
        &["launch/k.spu", "--check", "-I", "launch/../lib"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn another_folder_than_the_one_given_is_still_refused() {
    let root = layout();
    let out = spu_asm(root.path(), &["launch/k.spu", "--check", "-I", "secret"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("cannot include `../lib/n.h`"), "{err}");
}

#[test]
fn a_link_out_of_a_dash_i_folder_is_refused() {
    let root = layout();
    std::fs::remove_file(root.path().join("lib/n.h")).unwrap();
    std::os::unix::fs::symlink(root.path().join("secret/s.h"), root.path().join("lib/n.h"))
        .unwrap();
    let out = spu_asm(root.path(), &["launch/k.spu", "--check", "-I", "lib"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("resolves to"), "{err}");
    assert!(err.contains("secret"), "{err}");
}

#[test]
fn dash_i_is_refused_with_disassemble() {
    let root = layout();
    let out = spu_asm(root.path(), &["-d", "launch/k.bin", "-I", "lib"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_dash_i_folder_that_does_not_exist_or_is_a_file_is_refused() {
    let root = layout();
    for (dir, reason) in [("nowhere", "no such folder"), ("lib/n.h", "not a folder")] {
        let out = spu_asm(root.path(), &["launch/k.spu", "--check", "-I", dir]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(&format!("`-I {dir}`: {reason}")), "{err}");
    }
}
