//! The run options `spu-emu` and `spu-prof` share (same names, same meaning in both),
//! and how they resolve into a machine and load options.

use crate::load::LoadOptions;
use crate::machine::{self, Machine, MachineError};
use std::path::PathBuf;

/// RUN OPTIONS.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Machine description: a preset name (spu-4x4, spu-8x8, spu-4x4-cb16k,
    /// spu-4x4-dma, gtx480, gtx480-1cta) or a TOML machine file.
    #[arg(long, value_name = "FILE|PRESET")]
    pub machine: Option<String>,
    /// SM grid: P columns (west to east) by Q rows (north to south).
    #[arg(long, value_name = "PxQ", allow_hyphen_values = true)]
    pub grid: Option<String>,
    /// Units on the grid boundary.
    #[arg(long, value_parser = ["iu", "dma"])]
    pub boundary: Option<String>,
    /// Pass execution model (thesis 4.3).
    #[arg(long, value_parser = ["overlapped", "sequential"])]
    pub passes: Option<String>,
    /// Override one machine parameter (repeatable; `spu-emu --list-params` shows all
    /// keys).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Set a kernel parameter over its declared default (repeatable): an integer in
    /// the range of the parameter's type (32- or 64-bit, decimal or 0x hex), or for
    /// .f32/.f64 a number (read as a double, as PTX reads constants, then rounded to
    /// nearest), inf, nan or a 0f/0d bit pattern.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// A folder whose files (and those below it) a source kernel may `#include`,
    /// besides its own folder (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// The clang that compiles a CUDA C kernel (`.cu`, named here or included by a
    /// launch file) [default: $SPU_CLANG, else `clang` on PATH].
    #[arg(long, value_name = "PATH")]
    pub clang: Option<PathBuf>,
    /// Load a buffer from a .npy file before the run (repeatable).
    #[arg(long = "load", value_name = "BUF=FILE.npy")]
    pub loads: Vec<String>,
    /// Write a buffer to a .npy file after the run (repeatable).
    #[arg(long = "dump", value_name = "BUF=FILE.npy")]
    pub dumps: Vec<String>,
    /// Write run statistics as JSON (`-` for standard output).
    #[arg(long, value_name = "FILE.json")]
    pub stats: Option<PathBuf>,
    /// Stop with an error after this many cycles, including the drain of the last
    /// stores to DRAM (with --functional, which does not model time: once the
    /// busiest unit's warp instructions divided by its schedulers, the fewest cycles
    /// timing mode could take for them, pass N).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000_000_000,
        allow_negative_numbers = true
    )]
    pub max_cycles: u64,
    /// Stop with an error after this many warp instructions (both modes).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100_000_000_000,
        allow_negative_numbers = true
    )]
    pub max_instructions: u64,
    /// Stop with an error when one unit issues this many warp instructions (in
    /// timing mode also: this many cycles pass; with --functional, scheduling
    /// rounds count as 32 warp instructions each) without any change to global
    /// memory (a store or atomic that writes a new value), finished block or
    /// blocksync anywhere (a kernel spinning on a flag nobody sets, or on a lock
    /// with compare-and-swap), or pass with no finished block or blocksync and
    /// changes only to words changed before (a loop that counts in a word, or
    /// rewrites an array, forever); also when 16 times N pass with no finished
    /// block and no change to a word not changed before, each blocksync a unit
    /// takes part in counting as 1 024 of its warp instructions (a loop that
    /// synchronises forever); 0 turns the checks off. Before that, a run whose
    /// every warp comes back to a state it was in while nothing changed stops
    /// as stuck (turned off by 0 too). The checks are made at the end of each
    /// window of global-memory visibility (one DRAM latency; with --functional,
    /// the blocksync latency in rounds), so a run stops up to a window past N,
    /// and a run shorter than a window is not stopped.
    #[arg(long, value_name = "N", default_value_t = crate::DEFAULT_SPIN_LIMIT, allow_negative_numbers = true)]
    pub spin_limit: u64,
    /// Keep at most this many bytes of the kernel's `printf` output, as CUDA's
    /// printf buffer (`cudaLimitPrintfFifoSize`, 1 MiB by default) does: past it
    /// the texts last in output order are dropped, and a warning says how many
    /// (at most 33554432, 32 MiB; 0 keeps none).
    #[arg(long, value_name = "BYTES", default_value_t = crate::exec::printlog::OUTPUT_LIMIT as u64,
          value_parser = printf_limit, allow_negative_numbers = true)]
    pub printf_limit: u64,
    /// Record activity every N cycles in the stats (`samples`), for power traces
    /// (GPUWattch sampled every 500).
    #[arg(long, value_name = "N", value_parser = at_least_one, allow_negative_numbers = true)]
    pub sample_interval: Option<u64>,
    /// Skip timing: many times faster, with the same off-chip counts (but for
    /// the toggles of atomics' old values, which come back in another order)
    /// and the same results except where the order in which warps interleave
    /// matters: sums of float atomic adds (they round in another order), the old
    /// values atomics return, what `atom.exch` and `atom.cas` races leave, and data races (a
    /// shared- or global-memory word one warp writes and another reads without a
    /// barrier between them): warps of a block race on shared memory
    /// (`--race-check` reports it), or a thread reads a global word that a warp of
    /// its block stored with no `bar.sync` between them or that another unit stored
    /// in the same pass. A kernel that reads %clock sees other values too. Cycles,
    /// stalls and time-dependent counters are not modelled. This mode applies other
    /// units' global stores at the end of windows of latency_cycles.blocksync
    /// rounds.
    #[arg(long)]
    pub functional: bool,
    /// Simulate on N threads (default: the number of cores). Results, stats and
    /// traces are identical for every N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), allow_negative_numbers = true)]
    pub threads: Option<u32>,
    /// Do not stop at a CB read of a word its producer has not written since the
    /// link last switched (the CB checker, on by default, costs about 1%).
    #[arg(long)]
    pub no_cb_check: bool,
    /// Check shared memory for races and report them after the run: accesses of
    /// different warps of a block to one word, one of them a store, with no
    /// `bar.sync` between them (the race checker; it costs about 25% of run time,
    /// 60% with --functional, on a kernel that works in shared memory).
    #[arg(long)]
    pub race_check: bool,
}

impl RunArgs {
    /// The machine: preset or file, then `--grid`, `--boundary`, `--passes`, then
    /// each `--set` in order; its caches checked once every key is set. A `--set`
    /// that gives a key one of those options sets another value is refused.
    pub fn machine(&self) -> Result<Machine, MachineError> {
        let mut m = match self.machine.as_deref() {
            None => Machine::default(),
            Some(name) => machine::named(name)?,
        };
        if let Some(g) = &self.grid {
            m.set_grid(g)?;
        }
        if let Some(b) = &self.boundary {
            m.set(&format!("boundary.kind={b}"))?;
        }
        if let Some(p) = &self.passes {
            m.set(&format!("passes.mode={p}"))?;
        }
        for (n, s) in self.sets.iter().enumerate() {
            let before = m.clone();
            m.set_from_command_line(s)?;
            self.check_shortcut(s, &self.sets[..n], &before, &m)?;
        }
        m.check_caches()?;
        Ok(m)
    }

    /// Refuses `--set KEY=VALUE` (taking `before` to `after`) when a shortcut option
    /// or an `earlier` `--set` set KEY and the assignment changed its value (the
    /// last would win without a word).
    fn check_shortcut(
        &self,
        set: &str,
        earlier: &[String],
        before: &Machine,
        after: &Machine,
    ) -> Result<(), MachineError> {
        let key_of = |s: &str| s.split_once('=').map(|(k, _)| k.trim().to_string());
        let Some(key) = key_of(set) else {
            return Ok(());
        };
        let key = key.as_str();
        let (first, second) = (before.value_text(key), after.value_text(key));
        if let Some(e) = earlier.iter().rfind(|e| key_of(e).as_deref() == Some(key))
            && first != second
        {
            return Err(MachineError::Conflict {
                option: format!(
                    "`--set {}` sets `{key}` to {}",
                    machine::param::shorten(e),
                    first.unwrap_or_default()
                ),
                assignment: machine::param::shorten(set),
                second: second.unwrap_or_default(),
            });
        }
        let shortcuts = [
            (
                "--grid",
                self.grid.as_deref(),
                &["grid.cols", "grid.rows"][..],
            ),
            (
                "--boundary",
                self.boundary.as_deref(),
                &["boundary.kind"][..],
            ),
            ("--passes", self.passes.as_deref(), &["passes.mode"][..]),
        ];
        let Some((name, Some(value), _)) =
            shortcuts.iter().find(|(_, _, keys)| keys.contains(&key))
        else {
            return Ok(());
        };
        if first == second {
            return Ok(());
        }
        Err(MachineError::Conflict {
            option: format!(
                "`{name} {}` sets `{key}` to {}",
                machine::param::shorten(value),
                first.unwrap_or_default()
            ),
            assignment: machine::param::shorten(set),
            second: second.unwrap_or_default(),
        })
    }

    /// Run length and sampling.
    pub fn control(&self) -> crate::RunControl {
        crate::RunControl {
            max_cycles: self.max_cycles,
            max_instructions: self.max_instructions,
            spin_limit: self.spin_limit,
            printf_limit: self.printf_limit as usize,
            sample_interval: self.sample_interval,
            sample_limit: crate::observe::samples::MAX_SAMPLES,
            functional: self.functional,
            interrupt: None,
            activity: false,
            pc_samples: false,
            threads: self.threads.map_or_else(default_threads, |n| n as usize),
            cb_check: !self.no_cb_check,
            race_check: self.race_check,
        }
    }

    /// The loader's options.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            defines: self.defines.clone(),
            loads: self.loads.clone(),
            dumps: self.dumps.clone(),
            race_check: self.race_check,
            host_threads: self.threads.map_or_else(default_threads, |n| n as usize),
            recording_bytes: 0,
        }
    }
}

/// Threads when `--threads` is not given: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

pub use machine::is_file_like;

/// The help text's examples for tools that take RUN OPTIONS.
pub const RUN_EXAMPLES: &str = "\
        --grid 8x8 --passes sequential          # another grid and pass model\n  \
        --machine spu-4x4-cb16k                 # a preset (see spu-emu --list-params)\n  \
        --machine my.toml --set sm.scheduler_policy=gto\n  \
        -D N=1024 --load A=a.npy --dump C=c.npy # parameters and buffers\n  \
        --stats run.json                        # machine-readable statistics";

/// Parses `--printf-limit`: a number of bytes up to the largest the run can hold.
fn printf_limit(text: &str) -> Result<u64, String> {
    let max = crate::exec::printlog::MAX_OUTPUT_LIMIT as u64;
    match text.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(format!(
            "at most {max} bytes ({} MiB) of `printf` output can be kept, as it is held in memory until the run ends; give a smaller number",
            max >> 20
        )),
        Err(_) => Err("expected a number of bytes, e.g. 1048576 for 1 MiB".to_string()),
    }
}

/// A count of at least 1 (`--sample-interval`).
fn at_least_one(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("it must be at least 1 (cycles between samples)".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of cycles, at least 1, e.g. 500".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(grid: Option<&str>, passes: Option<&str>, sets: &[&str]) -> RunArgs {
        RunArgs {
            grid: grid.map(str::to_string),
            passes: passes.map(str::to_string),
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..RunArgs::default()
        }
    }

    #[test]
    fn a_set_that_disagrees_with_a_shortcut_option_is_refused() {
        let e = args(Some("2x2"), None, &["grid.cols=8"])
            .machine()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`--grid 2x2`") && e.contains("`--set grid.cols=8`"),
            "{e}"
        );
        assert!(e.contains("`grid.cols` to 2") && e.contains("to 8"), "{e}");
        let e = args(None, Some("sequential"), &["passes.mode=overlapped"])
            .machine()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`--passes sequential`") && e.contains("passes.mode"),
            "{e}"
        );
    }

    #[test]
    fn a_set_that_agrees_with_a_shortcut_option_or_sets_another_key_is_kept() {
        let m = args(Some("2x2"), None, &["grid.cols = 2", "grid.rows=2"])
            .machine()
            .unwrap();
        assert_eq!((m.grid_cols, m.grid_rows), (2, 2));
        let m = args(None, None, &["grid.cols=8"]).machine().unwrap();
        assert_eq!(m.grid_cols, 8);
        let m = args(Some("2x2"), None, &["sm.schedulers=2"])
            .machine()
            .unwrap();
        assert_eq!(m.grid_cols, 2);
    }

    /// Two `--set`s of one key with different values are refused (the last won
    /// without a word); the same value twice is kept.
    #[test]
    fn a_key_set_twice_to_different_values_is_refused() {
        let e = args(
            None,
            None,
            &["sm.schedulers=2", "grid.cols=3", "sm.schedulers=4"],
        )
        .machine()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`--set sm.schedulers=2` sets `sm.schedulers` to 2")
                && e.contains("`--set sm.schedulers=4` sets it to 4; give only one of them"),
            "{e}"
        );
        let m = args(None, None, &["sm.schedulers=2", " sm.schedulers = 2"])
            .machine()
            .unwrap();
        assert_eq!(m.sm_schedulers, 2);
    }
}
