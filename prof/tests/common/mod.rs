//! What the profiler's test files share: the repository root, running
//! `spu-prof` from it, and its output as text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (samples and test files are named from it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `spu-prof` with `args` in the repository root.
pub fn prof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-prof"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("spu-prof runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
