//! When each source line ran, for the page's clicked line: the units'
//! per-instruction counts over time ([`crate::observe::pcs`]) summed by source line
//! and unit group (SMs, IUs or DMA engines) into frames of the player's step, or of
//! a multiple of it when more than [`MAX_CELLS`] (frame, line, group) cells would
//! not fit (at most one frame for the whole run, which a kernel of more lines
//! than that needs); the page says when that happened.

use crate::machine::UnitLabel;
use crate::observe::pcs::PcSamples;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most (frame, line, group) cells with a count that a page holds.
pub const MAX_CELLS: usize = 1 << 16;

/// When each line ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineTimes {
    /// Cycles per frame below: the player's step, or a multiple of it when the
    /// cells would not have fitted.
    pub frame_cycles: u64,
    /// The unit groups counted apart: `SMs`, `IUs`, `DMA engines`.
    pub groups: Vec<String>,
    /// Per line (index into the page's lines), per group: pairs of frame and
    /// warp instructions issued in it, each frame given as the distance from the
    /// previous pair's (the first from frame 0); empty for a line that never ran.
    pub lines: Vec<Vec<Vec<u64>>>,
}

/// The group a unit is counted in, in page order, and the group's name.
fn group_of(label: UnitLabel) -> (usize, &'static str) {
    match label {
        UnitLabel::Sm { .. } => (0, "SMs"),
        UnitLabel::Iu { .. } => (1, "IUs"),
        UnitLabel::Dma { .. } => (2, "DMA engines"),
    }
}

/// When each of `lines` lines ran: `units` are the units' samples with their
/// labels, `line_of_pc` the line of each instruction, `frame_cycles` the player's
/// step.
pub fn line_times(
    units: &[(UnitLabel, &PcSamples)],
    line_of_pc: &[usize],
    lines: usize,
    frame_cycles: u64,
) -> LineTimes {
    // The groups present, in page order.
    let mut groups: Vec<(usize, &str)> = units.iter().map(|(l, _)| group_of(*l)).collect();
    groups.sort_unstable();
    groups.dedup();
    let mut frame = units
        .iter()
        .map(|(_, s)| s.interval_cycles)
        .fold(frame_cycles.max(1), u64::max);
    // (line, group, frame) -> warp instructions.
    let mut cells: BTreeMap<(usize, usize, u64), u64> = BTreeMap::new();
    for (label, s) in units {
        let Ok(g) = groups.binary_search(&group_of(*label)) else {
            continue; // not reached: every unit's group is in `groups`
        };
        for (i, interval) in s.intervals.iter().enumerate() {
            let f = i as u64 * s.interval_cycles / frame;
            for (pc, n) in interval {
                let line = line_of_pc.get(*pc as usize).copied().unwrap_or(0);
                *cells.entry((line, g, f)).or_default() += u64::from(*n);
            }
        }
    }
    // Coarser frames until the cells fit, or until one frame spans the whole
    // run: then there is one cell per (line, group), as many as the page's lines
    // of code already are.
    while cells.len() > MAX_CELLS && cells.keys().any(|&(_, _, f)| f > 0) {
        frame = frame.saturating_mul(2);
        let mut coarser = BTreeMap::new();
        for ((line, g, f), n) in cells {
            *coarser.entry((line, g, f / 2)).or_default() += n;
        }
        cells = coarser;
    }
    let mut out = vec![vec![Vec::new(); groups.len()]; lines];
    let mut prev: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for ((line, g, f), n) in cells {
        if let Some(pairs) = out.get_mut(line).and_then(|l| l.get_mut(g)) {
            let p = prev.entry((line, g)).or_default();
            pairs.extend([f - *p, n]);
            *p = f;
        }
    }
    // A line that never ran holds nothing at all.
    for l in &mut out {
        if l.iter().all(Vec::is_empty) {
            l.clear();
        }
    }
    LineTimes {
        frame_cycles: frame,
        groups: groups
            .into_iter()
            .map(|(_, name)| name.to_string())
            .collect(),
        lines: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SM: UnitLabel = UnitLabel::Sm { x: 0, y: 0 };
    const IU: UnitLabel = UnitLabel::Iu {
        side: spu_isa::Side::North,
        index: 0,
    };

    fn samples(interval: u64, intervals: Vec<Vec<(u32, u32)>>) -> PcSamples {
        PcSamples {
            interval_cycles: interval,
            intervals,
        }
    }

    #[test]
    fn counts_are_summed_by_line_group_and_frame() {
        // pcs 0 and 1 are line 0, pc 2 line 1; line 2 never runs.
        let sm = samples(10, vec![vec![(0, 1), (1, 2)], vec![], vec![(2, 5)]]);
        let iu = samples(20, vec![vec![(2, 7)], vec![(0, 1)]]);
        let t = line_times(&[(SM, &sm), (IU, &iu)], &[0, 0, 1], 3, 10);
        assert_eq!(t.frame_cycles, 20, "the coarsest unit's interval");
        assert_eq!(t.groups, ["SMs", "IUs"]);
        // Line 0: SMs 3 in frame 0; IUs 1 in frame 1.
        assert_eq!(t.lines[0], vec![vec![0, 3], vec![1, 1]]);
        // Line 1: SMs 5 in frame 1 (cycles 20..30); IUs 7 in frame 0.
        assert_eq!(t.lines[1], vec![vec![1, 5], vec![0, 7]]);
        assert!(t.lines[2].is_empty());
    }

    #[test]
    fn more_lines_than_cells_end_in_one_frame_for_the_run() {
        // Each of MAX_CELLS + 10 lines runs once, in its own cycle: a frame for
        // the whole run still holds a cell per line (this used to loop for ever).
        let n = MAX_CELLS + 10;
        let sm = samples(1, (0..n as u32).map(|pc| vec![(pc, 1)]).collect());
        let line_of_pc: Vec<usize> = (0..n).collect();
        let t = line_times(&[(SM, &sm)], &line_of_pc, n, 1);
        assert!(t.frame_cycles >= n as u64, "{}", t.frame_cycles);
        assert!(t.lines.iter().all(|l| l == &vec![vec![0, 1]]));
    }

    #[test]
    fn too_many_cells_coarsen_the_frames() {
        // One line running in each of 3 * MAX_CELLS cycles.
        let sm = samples(1, vec![vec![(0, 1)]; 3 * MAX_CELLS]);
        let t = line_times(&[(SM, &sm)], &[0], 1, 1);
        assert_eq!(t.frame_cycles, 4);
        let pairs = &t.lines[0][0];
        assert!(pairs.len() / 2 <= MAX_CELLS);
        let total: u64 = pairs.iter().skip(1).step_by(2).sum();
        assert_eq!(total, 3 * MAX_CELLS as u64, "nothing lost");
        // Frames follow one another: every distance after the first is 1.
        assert!(pairs.iter().step_by(2).skip(1).all(|d| *d == 1));
    }
}
