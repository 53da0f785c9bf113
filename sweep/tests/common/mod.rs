//! What the sweep's test files share: running `spu-sweep` (here, or in a folder)
//! and its output as text. Each test file uses some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `spu-sweep` with `args`.
pub fn sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `spu-sweep` with `args` in folder `dir`.
pub fn sweep_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spu-sweep"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
