//! Outputs a user may not replace: a file they may not write (their own, made
//! read-only), and a file of another user, which a replacement would give to them.
//! Both are refused before any work, and the file keeps its contents, mode and
//! owner. Run as root, the tools run as user `nobody` (through `setpriv`), since
//! root may write and give away any file.

use spu_tests::binary;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const NOBODY: u32 = 65534;

const KERNEL: &str = "\
.global .u32 C[32] = zeros;
.launch grid(1, 1) block(32);
.entry k {
    .reg .u32 %r<8>;
    mov.u32 %r2, %tid.x;
    shl.u32 %r5, %r2, 2;
    mov.u32 %r6, C;
    add.u32 %r6, %r6, %r5;
    st.global.u32 [%r6], %r2;
    exit;
}
";

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// True when `setpriv` can run a command as `nobody`.
fn have_setpriv() -> bool {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// A tool run as the test's user, or as `nobody` when the test runs as root.
fn tool(name: &str) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(binary(name));
        c
    } else {
        Command::new(binary(name))
    }
}

/// A folder anyone may write (mode 777, no sticky bit) holding the kernel
/// `k.spu`, or `None` (with the reason printed) when the tools cannot run as
/// another user here.
fn open_folder() -> Option<tempfile::TempDir> {
    if is_root() && !have_setpriv() {
        eprintln!("skipped: running as root without a working setpriv");
        return None;
    }
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let k = dir.path().join("k.spu");
    std::fs::write(&k, KERNEL).unwrap();
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o644)).unwrap();
    Some(dir)
}

fn file_with(path: &Path, mode: u32, owner: Option<u32>) {
    std::fs::write(path, "precious\n").unwrap();
    if let Some(uid) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `command` in `dir` and checks it is refused with `why`, leaving `file`
/// as it was and no temporary behind; then removes `file`.
fn assert_refused(mut command: Command, dir: &Path, file: &str, why: &str) {
    let path = dir.join(file);
    let before = std::fs::metadata(&path).unwrap();
    let out = command.current_dir(dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{file}: {err}");
    assert!(
        err.contains(&format!("cannot write `{file}`: {why}")),
        "{file}: {err}"
    );
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
    assert_eq!(
        (after.ino(), after.uid(), after.mode()),
        (before.ino(), before.uid(), before.mode()),
        "{file}"
    );
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "leftovers: {names:?}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_own_read_only_file_is_refused() {
    let Some(dir) = open_folder() else { return };
    let owner = is_root().then_some(NOBODY);
    file_with(&dir.path().join("mine.json"), 0o444, owner);
    let mut emu = tool("spu-emu");
    emu.args(["-q", "k.spu", "--stats", "mine.json"]);
    let why = "it is read-only (mode 444); make it writable (`chmod u+w`), remove it or choose another file";
    assert_refused(emu, dir.path(), "mine.json", why);
    file_with(&dir.path().join("mine.bin"), 0o444, owner);
    let mut asm = tool("spu-asm");
    asm.args(["k.spu", "-o", "mine.bin"]);
    assert_refused(asm, dir.path(), "mine.bin", why);
}

/// Another user's file is refused whether or not its mode lets this user write
/// it: the replacement would belong to this user.
#[test]
fn another_users_file_is_refused_writable_or_not() {
    if !is_root() {
        eprintln!("skipped: making a file of another user needs root");
        return;
    }
    let Some(dir) = open_folder() else { return };
    for (mode, file) in [(0o644, "roots.json"), (0o666, "shared.json")] {
        file_with(&dir.path().join(file), mode, Some(0));
        let mut emu = tool("spu-emu");
        emu.args(["-q", "k.spu", "--stats", file]);
        let why = format!(
            "it belongs to another user (uid 0, mode {mode:o}), and a replacement would belong to you"
        );
        assert_refused(emu, dir.path(), file, &why);
    }
}
