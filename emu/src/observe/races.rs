//! The shared-memory races a run found ([`crate::exec::race`]), rendered for the
//! terminal as warnings: per pair of instructions, both source lines, the warps,
//! the address, the block and unit, how often it happened, and the barrier that
//! is missing.

use crate::exec::race::{RaceKind, Races};
use crate::load::image::LaunchDims;
use crate::load::kernel::Kernel;
use crate::observe::stopped::{block_coords, count, line_of, note, quote_source};
use std::fmt::Write;

/// One warning per pair of racing instructions (empty when there are none); blocks
/// are named as `launch` numbers them (`(x, y, z)` in a 3-D grid).
pub fn render_races(races: &Races, kernel: &Kernel, launch: &LaunchDims) -> String {
    let mut s = String::new();
    for r in &races.found {
        let (earlier, later, what) = match r.kind {
            RaceKind::ReadAfterWrite => ("wrote", "read", "a read of a word"),
            RaceKind::WriteAfterRead => ("read", "wrote", "a write of a word"),
            RaceKind::WriteAfterWrite => ("wrote", "wrote", "a write of a word"),
        };
        let _ = writeln!(
            s,
            "warning: shared-memory race: {what} that another warp {earlier} with no `bar.sync` between them"
        );
        let w = quote_source(&mut s, kernel, r.later.pc);
        let w = w.max(quote_source(&mut s, kernel, r.earlier.pc));
        note(
            &mut s,
            w,
            &format!(
                "warp {} {later} shared address {:#x} at {}, which warp {} {earlier} at {} since the last barrier",
                r.later.warp,
                r.addr,
                line_of(kernel, r.later.pc),
                r.earlier.warp,
                line_of(kernel, r.earlier.pc),
            ),
        );
        let place = match r.block {
            Some(b) => format!("block {} on {}", block_coords(b, launch), r.unit),
            None => format!("the IU code on {}", r.unit),
        };
        note(
            &mut s,
            w,
            &format!(
                "first in {place}; these two lines raced {} in the run",
                count(r.count, "time")
            ),
        );
        let help = match r.kind {
            RaceKind::ReadAfterWrite => {
                "put a `bar.sync` between the store and the load, so that every warp has stored before any warp reads"
            }
            RaceKind::WriteAfterRead => {
                "put a `bar.sync` between the load and the store, so that every warp has read before any warp overwrites"
            }
            RaceKind::WriteAfterWrite => {
                "put a `bar.sync` between the two stores, or let one warp write the word"
            }
        };
        note(&mut s, w, &format!("help: {help}"));
        note(
            &mut s,
            w,
            "note: results may then differ between timing mode and `--functional`, which order warps differently",
        );
    }
    if races.more > 0 {
        let _ = writeln!(
            s,
            "warning: {} more shared-memory races between other pairs of instructions",
            races.more
        );
    }
    s
}
