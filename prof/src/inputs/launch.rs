//! Checking a file's launch against its machine, for statistics files and pages
//! alike, by the limits spu-emu keeps when it loads a kernel: no extent is 0, each
//! is within [`launch_dim_limit`], the grid within [`MAX_LAUNCH_BLOCKS`] blocks, a
//! block within the threads an SM runs per block (`sm.max_threads`), the threads
//! of an Interface Unit within `iu.max_threads` (none on a GPU), and the passes
//! are those the launch takes on the machine.

use super::{Damaged, damaged};
use spu_emu::Machine;
use spu_emu::load::plan::Geometry;
use spu_emu::machine::occupancy::{MAX_LAUNCH_BLOCKS, launch_dim_limit};

/// A file's launch.
pub(super) struct Launch {
    /// Blocks along x and y (a 3-D grid runs as x by y*z).
    pub grid: [u32; 2],
    /// Threads of a block along x, y and z.
    pub block: [u32; 3],
    /// The passes the file says the launch took.
    pub passes: [u32; 2],
    /// Threads per Interface Unit (0 for a kernel without IU code), when the file
    /// says.
    pub iu_threads: Option<u32>,
}

/// How a file names its launch in messages.
pub(super) struct Names {
    /// The launch's grid and blocks, as the subject of "... a grid of ...".
    pub launch: &'static str,
    /// The grid's extents.
    pub grid: &'static str,
    /// The passes.
    pub passes: &'static str,
    /// The threads per Interface Unit.
    pub iu_threads: &'static str,
    /// The owner of the machine's SMs.
    pub sms: &'static str,
}

/// A page's names: its fields.
pub(super) const PAGE: Names = Names {
    launch: "the launch is",
    grid: "`grid`",
    passes: "`passes`",
    iu_threads: "the threads per Interface Unit",
    sms: "the page's",
};

/// A statistics file's names: the keys of its `launch` and `passes` sections.
pub(super) const STATS: Names = Names {
    launch: "`launch.grid` and `launch.block` make",
    grid: "`launch.grid`",
    passes: "`passes`",
    iu_threads: "`launch.iu_threads`",
    sms: "the `machine` section's",
};

/// Checks launch `l` on machine `m`; returns the passes it takes.
pub(super) fn check_launch(l: &Launch, m: &Machine, names: &Names) -> Result<u64, Damaged> {
    let launch = format!(
        "{} a grid of {}x{} blocks of {}x{}x{} threads",
        names.launch, l.grid[0], l.grid[1], l.block[0], l.block[1], l.block[2]
    );
    if l.grid.contains(&0) || l.block.contains(&0) {
        return Err(damaged(format!("{launch}; none may be 0")));
    }
    let extents = l.grid.iter().map(|&n| (true, n)).enumerate();
    let extents = extents.chain(l.block.iter().map(|&n| (false, n)).enumerate());
    for (axis, (grid, n)) in extents {
        let (most, why) = launch_dim_limit(grid, axis);
        if i64::from(n) > most {
            return Err(damaged(format!("{launch}, but {why}")));
        }
    }
    let blocks = i64::from(l.grid[0]) * i64::from(l.grid[1]);
    if blocks > MAX_LAUNCH_BLOCKS {
        return Err(damaged(format!(
            "{launch}, but a launch has at most {MAX_LAUNCH_BLOCKS} blocks"
        )));
    }
    let threads: u64 = l.block.iter().map(|&n| u64::from(n)).product();
    // The limit is the file's machine's: a run's `--set` is no fix here.
    if threads > u64::from(m.sm_max_threads) {
        return Err(damaged(format!(
            "{launch}, {threads} threads per block, but {} SMs run at most {} (`sm.max_threads`)",
            names.sms, m.sm_max_threads
        )));
    }
    if let Some(iu) = l.iu_threads {
        let most = if m.is_gpu() { 0 } else { m.iu_max_threads };
        if iu > most {
            return Err(damaged(format!(
                "{} is {iu}, but {}",
                names.iu_threads,
                if m.is_gpu() {
                    "a GPU has no Interface Units".to_string()
                } else {
                    format!("an Interface Unit runs at most {most} threads (`iu.max_threads`)")
                }
            )));
        }
    }
    let expected = if m.is_gpu() {
        [1, 1]
    } else {
        Geometry::new(m, l.grid).passes()
    };
    if l.passes != expected {
        return Err(damaged(format!(
            "{} is {}x{}, but a launch of {}x{} blocks ({}) on {} {}x{} SMs takes {}x{}",
            names.passes,
            l.passes[0],
            l.passes[1],
            l.grid[0],
            l.grid[1],
            names.grid,
            names.sms,
            m.grid_cols,
            m.grid_rows,
            expected[0],
            expected[1]
        )));
    }
    Ok(u64::from(expected[0]) * u64::from(expected[1]))
}
