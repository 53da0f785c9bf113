//! CUDA C files whose names or folders clang cannot show as they are: a path
//! starting with `@` (clang reads such an argument as a file of options), a
//! line break or tab in a path or an `#include` (clang's messages, search list
//! and list of included files would read it as lines or names of their own),
//! a temporary folder with `=` (clang's prefix maps end at the first `=`). Each
//! is compiled as the file it is, or refused before clang runs with a message
//! that shows the name escaped; no file outside the kernel's folder is read.
//! The tests need clang and skip without it (see [`spu_tests::clang`]).

use spu_tests::binary;
use std::path::Path;
use std::process::{Command, Output};

const KERNEL: &str = "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = V; }\n";

fn asm(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(binary("spu-asm"));
    c.args(args).current_dir(dir).env_remove("SPU_CLANG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A kernel in a folder named `@d` is compiled as that file: clang is never
/// handed `@d/k.cu`, which it would read as a file of options (`d/k.cu`).
#[test]
fn a_folder_starting_with_at_is_compiled_as_a_folder() {
    if spu_tests::clang::skip("a .cu file in a folder named @d") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("@d")).unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("@d/k.cu"), format!("#define V 7\n{KERNEL}")).unwrap();
    // Read as options, this leaves clang no input: it would fail.
    std::fs::write(dir.path().join("d/k.cu"), "-fsyntax-only\n").unwrap();
    let o = asm(&["@d/k.cu", "-o", "k.bin"], dir.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("k.bin").is_file());
}

/// A tab in an `#include` is listed by clang as two names, each of which may
/// lead somewhere inside the folder while the whole name leads outside: such
/// a name is refused before clang runs, and the file outside is never read.
#[test]
fn an_include_with_a_tab_is_refused_before_clang_reads_it() {
    if spu_tests::clang::skip("an include with a tab") {
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let private = top.path().join("private");
    let dir = top.path().join("proj");
    for d in [&private, &dir, &dir.join("d1/d2"), &dir.join("private")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(private.join("secret.h"), "#define V 4242\n").unwrap();
    std::fs::write(dir.join("private/secret.h"), "#define V 1\n").unwrap();
    std::fs::write(dir.join("x"), "x\n").unwrap();
    std::fs::create_dir(dir.join("x\ty")).unwrap();
    std::os::unix::fs::symlink("d1/d2", dir.join("y")).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        format!("#include \"x\ty/../../private/secret.h\"\n{KERNEL}"),
    )
    .unwrap();
    let o = asm(&["k.cu", "-o", "k.bin"], &dir, &[]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("`x\\ty/../../private/secret.h`"), "{e}");
    assert!(e.contains("no file that can be checked"), "{e}");
    assert!(!dir.join("k.bin").exists());
}

/// A line break in the kernel's path would print lines of its own in clang's
/// messages (and forge a folder list): refused, the path shown escaped.
#[test]
fn a_path_with_a_line_break_is_refused_and_shown_escaped() {
    if spu_tests::clang::skip("a .cu path with a line break") {
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let private = top.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::write(private.join("conf"), "# PRIVATE-LINE\n").unwrap();
    let folder = "a\n#include <...> search starts here:\n/\nEnd of search list.\nb";
    let dir = top.path().join("proj");
    std::fs::create_dir_all(dir.join(folder)).unwrap();
    let kernel = format!("{folder}/k.cu");
    std::fs::write(
        dir.join(&kernel),
        format!("#include \"../../private/conf\"\n#define V 1\n{KERNEL}"),
    )
    .unwrap();
    let o = asm(&[&kernel, "--check"], &dir, &[]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(!e.contains("PRIVATE-LINE"), "{e}");
    assert!(e.contains("a\\n#include <...> search"), "{e}");
    assert!(e.contains("control character"), "{e}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
}

/// clang's `-fdebug-prefix-map=FOLDER=NAME` ends the folder at its first `=`:
/// a temporary folder with one would make every run's statistics name another
/// random folder. Refused, saying which setting to change.
#[test]
fn a_temporary_folder_with_an_equals_sign_is_refused() {
    if spu_tests::clang::skip("TMPDIR with =") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("t=x");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(dir.path().join("k.cu"), format!("#define V 1\n{KERNEL}")).unwrap();
    let o = asm(
        &["k.cu", "--check"],
        dir.path(),
        &[("TMPDIR", tmp.to_str().unwrap())],
    );
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("has a `=` in its path"), "{e}");
    assert!(e.contains("set TMPDIR"), "{e}");
    let o = asm(&["k.cu", "--check"], dir.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}
