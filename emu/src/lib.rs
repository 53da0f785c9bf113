//! The SPU timing emulator: loads a kernel onto a configurable grid of SMs and
//! Interface Units, executes it warp by warp (SIMT with reconvergence) and times it
//! cycle by cycle (schedulers, scoreboard, pipelines, shared-memory banks, coalesced
//! global accesses through a bandwidth-limited DRAM queue), skipping idle cycles.
//!
//! Module map: [`machine`] (parameters, presets), [`kernel`] (reading `.bin`/`.spu`),
//! [`load`] (parameters, launch, buffers), [`program`] (decoded code), [`exec`]
//! (arithmetic), [`warp`] (SIMT stack), [`unit`] (one SM or IU), [`grid`] (placement,
//! passes, rendezvous, the cycle loop), [`dram`], [`memory`], [`counters`],
//! [`stats`], [`report`], [`npy`], [`cli`].

pub mod access;
pub mod cli;
pub mod counters;
pub mod dram;
pub mod exec;
pub mod fault;
pub mod grid;
pub mod kernel;
pub mod load;
pub mod machine;
pub mod memory;
pub mod npy;
pub mod program;
pub mod report;
pub mod stats;
pub mod unit;
pub mod warp;

use std::io::Write;
use std::path::Path;

pub use grid::{Grid, Progress, RunResult, Stop};
pub use kernel::{Kernel, read_kernel};
pub use load::{Image, LoadOptions, load};
pub use machine::Machine;

/// Runs a loaded image on a machine.
pub fn simulate(
    image: &mut Image,
    machine: &Machine,
    max_cycles: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult, Box<Stop>> {
    Grid::new(image, machine).run(max_cycles, progress)
}

/// Writes through a temporary file in the same directory, then renames, so a failed
/// run never leaves a half-written output.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
