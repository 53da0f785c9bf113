//! Helpers for the tools' tests of pipes and of bad-input matrices (not used by the
//! tools themselves).

use std::path::Path;

/// Makes a FIFO at `path` with `mkfifo`; false (with the reason printed) if it
/// cannot, so the caller can skip its test.
pub fn make_fifo(path: &Path) -> bool {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: mkfifo is not available");
    }
    made
}

/// The write end of a pipe whose read end is already closed, so every write to it
/// fails with a broken pipe (a FIFO opened without blocking, then its reader
/// dropped). `None`, with the reason printed, when no FIFO can be made.
pub fn closed_pipe() -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    /// `O_NONBLOCK` on Linux: opening the read end must not wait for a writer.
    const O_NONBLOCK: i32 = 0o4000;
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("pipe");
    if !make_fifo(&path) {
        return None;
    }
    let reader = std::fs::File::options()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(&path)
        .ok()?;
    let writer = std::fs::File::options().write(true).open(&path).ok()?;
    drop(reader);
    Some(writer)
}

/// A finished tool run as a bad-input matrix snapshots it: the exit code and
/// standard error, with the test's temporary folder `tmp` shown as `[TMP]`.
pub fn outcome(out: &std::process::Output, tmp: &Path) -> String {
    format!(
        "exit: {}\n--- stderr ---\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stderr)
    )
    .replace(&tmp.display().to_string(), "[TMP]")
}
