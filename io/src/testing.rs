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

/// Text that would drive a terminal if a tool printed it raw: an OSC title
/// sequence ended by BEL, a colour (CSI) sequence, a carriage return, a second
/// byte order mark, a right-to-left override, DEL, a C1 CSI, a vertical tab, and
/// line breaks that would forge an `error: fake` line of the tool's own output.
pub const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[31mRED\r\u{feff}\u{202e}\u{7f}\u{9b}\u{b}\n\nerror: fake";

/// What of `output` (a tool's standard output or error) a terminal would act on:
/// every control or invisible character other than a line break, and every line
/// forged by [`HOSTILE`]. Empty when the output is safe to show.
pub fn terminal_hazards(output: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(output);
    let mut found: Vec<String> = text
        .chars()
        .filter(|&c| c != '\n' && crate::quote::is_hidden(c))
        .map(|c| format!("{:?}", c))
        .collect();
    found.extend(
        text.lines()
            .filter(|l| l.starts_with("error: fake"))
            .map(|l| format!("forged line {l:?}")),
    );
    found
}

/// `text` as a double-quoted string that TOML and JSON both read back as `text`:
/// every character outside printable ASCII written `\uXXXX` (characters of the
/// Basic Multilingual Plane only, as [`HOSTILE`] has).
pub fn quoted_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// Waits for `child` at most `limit`, then gives its exit code and standard error
/// (when piped); kills it and panics if it is still running (a hang is a failure,
/// not a test that never ends).
pub fn wait_at_most(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> (Option<i32>, String) {
    use std::io::Read;
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (status.code(), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
