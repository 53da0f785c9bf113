//! Outputs named through descriptor links: any spelling that reaches standard
//! output counts as standard output (two outputs there are refused before the
//! run), and a descriptor that is not open when the tool starts is refused
//! rather than reaching a file the tool opens itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn emu() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spu-emu"));
    c.current_dir(root());
    c
}

#[test]
fn every_spelling_of_standard_output_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    for spelling in [
        "/dev/./stdout",
        "//dev/stdout",
        "/proc/thread-self/fd/1",
        "/proc/self/fd/../fd/1",
        "/dev/fd/./1",
    ] {
        let out = dir.path().join("out.txt");
        let o = emu()
            .args(["samples/vecadd.spu", "--stats", "-", "--trace", spelling])
            .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{spelling}: {e}");
        assert!(
            e.contains("both write to standard output"),
            "{spelling}: {e}"
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            b"",
            "{spelling}: nothing written"
        );
    }
}

#[test]
fn a_descriptor_that_is_not_open_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    let o = emu()
        .args([
            "samples/vecadd.spu",
            "-q",
            "--stats",
            "/proc/self/fd/3",
            "--trace",
        ])
        .arg(&trace)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("names a file descriptor that is not open"),
        "{e}"
    );
    assert!(!trace.exists(), "nothing is written");
    // Opened by the shell, the descriptor is the user's file.
    let stats = dir.path().join("s.json");
    let script = format!(
        "exec {:?} samples/vecadd.spu -q --stats /proc/self/fd/3 3>{:?}",
        env!("CARGO_BIN_EXE_spu-emu"),
        stats
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&stats).unwrap();
    assert!(
        text.starts_with('{') && text.contains("\"stats_version\""),
        "{text:.80}"
    );
}
