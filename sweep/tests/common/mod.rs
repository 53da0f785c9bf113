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

/// Runs task 0 of the first batch script in the results folder `out`, as Slurm
/// would, and returns its log (standard output), asserting that it succeeded.
pub fn run_first_task(out: &Path) -> String {
    let o = Command::new("bash")
        .arg(out.join("slurm/batch-0.sh"))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .output()
        .unwrap();
    let log = text(&o.stdout);
    assert!(o.status.success(), "{log}{}", text(&o.stderr));
    log
}
