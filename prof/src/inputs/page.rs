//! Checking a page read back (`--compare A.html B.html`) as strictly as a
//! statistics file: its data must hold together as the emulator writes them, so
//! that a page written from it plays. The states are this version's; the machine
//! is one the machine table allows (each key through the table's setter), with the
//! units of its grid ([`super::units`]); the launch is within spu-emu's limits and
//! takes the passes the page says ([`super::launch`]); every index (a stretch's
//! state, a port's partner, a unit's line, a line's source file) points at
//! something the page has; stretches and rendezvous lie inside the run, in order;
//! the series have one value per frame and add up to the units' counters; and
//! nothing is longer than a page of this version can be.

use super::launch::{self, Launch};
use super::units::{self, Names, Place};
use super::{Damaged, component_names, damaged, known, short_name, stall_names};
use spu_emu::Machine;
use spu_emu::machine::occupancy::MAX_BLOCK_THREADS;
use spu_emu::observe::html::frames::{MAX_FRAMES, MAX_HANDOVERS, MAX_SEGMENTS};
use spu_emu::observe::html::record::{PageRun, STATES, UnitView};
use spu_emu::observe::html::{PageData, when};
use spu_io::quote::shorten;

/// A page's names for its machine's settings.
const PAGE: Names = Names {
    grid: "the page's `machine.cols` and `machine.rows`",
    kind: "the page's `machine.kind`",
    boundary: "the page's `machine.boundary`",
    sides: "the page's grid",
};

/// Checks every run of a page; a page of two runs names the run at fault.
pub fn check_page(data: &PageData) -> Result<(), Damaged> {
    for label in &data.labels {
        short_name("a run's label", label)?;
    }
    for (k, run) in data.runs.iter().enumerate() {
        check_run(run).map_err(|e| match data.runs.len() {
            1 => e,
            _ => damaged(format!("run {}: {e}", k + 1)),
        })?;
    }
    Ok(())
}

fn check_run(r: &PageRun) -> Result<(), Damaged> {
    short_name("the title", &r.title)?;
    short_name("the kernel name", &r.kernel)?;
    short_name("`machine.summary`", &r.machine.summary)?;
    short_name("`pass_mode`", &r.pass_mode)?;
    check_states(r)?;
    let m = machine(r)?;
    let places: Vec<Place> = r
        .units
        .iter()
        .map(|u| Place {
            kind: &u.kind,
            x: u.x,
            y: u.y,
            side: u.side.as_deref(),
        })
        .collect();
    for (i, p) in places.iter().enumerate() {
        units::check_kind(i, p)?;
    }
    units::check_on_machine(&places, &m, &PAGE)?;
    let launch = Launch {
        grid: r.grid,
        block: r.block,
        passes: r.passes,
        iu_threads: None,
    };
    let passes = launch::check_launch(&launch, &m, &launch::PAGE)?;
    check_frames(r)?;
    known("counter", r.component_events.keys(), &component_names())?;
    let mut stretches = 0;
    let mut handovers = 0;
    for (i, u) in r.units.iter().enumerate() {
        check_unit(r, u, (!m.is_gpu()).then_some(passes))
            .map_err(|e| damaged(format!("unit {i} (`{}`): {e}", shorten(&u.name))))?;
        stretches += u.stretches.len() / 4;
        handovers += u.handovers.len() / 2;
    }
    if stretches > MAX_SEGMENTS {
        return Err(damaged(format!(
            "the units have {stretches} activity stretches, but a page holds at most \
             {MAX_SEGMENTS}"
        )));
    }
    if handovers > MAX_HANDOVERS {
        return Err(damaged(format!(
            "the units list {handovers} rendezvous, but a page lists at most {MAX_HANDOVERS}"
        )));
    }
    check_lines(r)?;
    check_totals(r)
}

/// The states must be this version's, in its order: a stretch names one by index.
fn check_states(r: &PageRun) -> Result<(), Damaged> {
    let names: Vec<&str> = STATES.iter().map(|s| s.name()).collect();
    if r.states.len() != STATES.len() {
        return Err(damaged(format!(
            "`states` lists {}, but a page of this version has {}",
            spu_io::numbers::counted(r.states.len() as u64, "state"),
            STATES.len()
        )));
    }
    for (i, (s, want)) in r.states.iter().zip(&names).enumerate() {
        if s.name != *want {
            return Err(damaged(format!(
                "state {i} is `{}`, but state {i} of a page of this version is `{want}`",
                shorten(&s.name)
            )));
        }
        short_name("a state's colour", &s.colour)?;
        short_name("a state's group", &s.group)?;
    }
    Ok(())
}

/// The machine the page describes, through the machine table's own checks, with
/// the blocks per SM its boundary units show. The page does not say
/// `sm.max_threads`, so the machine has the most the machine table allows.
fn machine(r: &PageRun) -> Result<Machine, Damaged> {
    let v = &r.machine;
    let mut m = Machine::default();
    let settings = [
        ("machine.kind", "kind", v.kind.clone()),
        ("grid.cols", "cols", v.cols.to_string()),
        ("grid.rows", "rows", v.rows.to_string()),
        ("boundary.kind", "boundary", v.boundary.clone()),
        ("clock.freq_mhz", "freq_mhz", v.freq_mhz.to_string()),
        ("cb.size_kib", "cb_kib", v.cb_kib.to_string()),
        ("cache.l1_kib", "l1_kib", v.l1_kib.to_string()),
        ("cache.l2_kib", "l2_kib", v.l2_kib.to_string()),
    ];
    for (key, field, value) in settings {
        m.set(&format!("{key}={value}")).map_err(|e| {
            damaged(format!(
                "`machine.{field}` is `{}`, not a machine the machine table allows ({e})",
                shorten(&value)
            ))
        })?;
    }
    m.sm_max_threads = MAX_BLOCK_THREADS as u32;
    if !m.is_gpu() {
        // Several blocks per SM show as several boundary units per SM along a side;
        // a count that is no such multiple is refused by the units' check.
        let side = |name: &str| {
            r.units
                .iter()
                .filter(|u| u.kind != "sm" && u.side.as_deref() == Some(name))
                .count() as u32
        };
        for (key, lanes, along) in [
            ("sm.fold_x", side("north"), m.grid_cols),
            ("sm.fold_y", side("west"), m.grid_rows),
        ] {
            if lanes > along && lanes % along == 0 {
                let _ = m.set(&format!("{key}={}", lanes / along));
            }
        }
    }
    Ok(m)
}

/// The player's frames and the series drawn over them: one value per frame of
/// `frame_cycles` (the last may be partial), at most [`MAX_FRAMES`], each series
/// adding up to the units' counter it samples.
fn check_frames(r: &PageRun) -> Result<(), Damaged> {
    for (what, n) in [
        ("frame_cycles", r.frame_cycles),
        ("resolution_cycles", r.resolution_cycles),
        ("handover_resolution_cycles", r.handover_resolution_cycles),
    ] {
        if n == 0 {
            return Err(damaged(format!("`{what}` is 0; it must be 1 or more")));
        }
    }
    let frames = r.cycles.div_ceil(r.frame_cycles);
    let s = &r.series;
    for (name, series, counter) in [
        ("busy", &s.busy, "CONST_DYNAMICP"),
        ("instructions", &s.instructions, "PIPEP"),
        ("dram", &s.dram, "DRAMP"),
        ("cb", &s.cb, "CBP"),
        ("l2", &s.l2, "L2CP"),
    ] {
        let n = series.len() as u64;
        if n != frames || n > MAX_FRAMES as u64 {
            return Err(damaged(format!(
                "`series.{name}` has {}, but the run's {} cycles in frames of {} \
                 (`frame_cycles`) make {frames} frames{}",
                spu_io::numbers::counted(n, "value"),
                r.cycles,
                r.frame_cycles,
                if frames > MAX_FRAMES as u64 {
                    format!(", more than the {MAX_FRAMES} a page has")
                } else {
                    String::new()
                }
            )));
        }
        let sum: u128 = series.iter().map(|&v| u128::from(v)).sum();
        let total: u128 = r
            .units
            .iter()
            .map(|u| u128::from(u.counters.get(counter).copied().unwrap_or(0)))
            .sum();
        if sum != total {
            return Err(damaged(format!(
                "`series.{name}` adds up to {sum}, but the units' `{counter}` counters add up \
                 to {total}"
            )));
        }
    }
    Ok(())
}

/// One unit: its stretches, rendezvous, ports, lines and counters. `passes` is
/// the launch's passes on the SPU (a stretch names one), `None` on a GPU.
fn check_unit(r: &PageRun, u: &UnitView, passes: Option<u64>) -> Result<(), Damaged> {
    short_name("the name", &u.name)?;
    if u.stretches.len() % 4 != 0 {
        return Err(damaged(format!(
            "`stretches` has {} numbers, but it lists stretches of four (start, end, state, \
             pass)",
            u.stretches.len()
        )));
    }
    // Stretches drawn at frames of `resolution_cycles` cover whole frames, the
    // last one past the run's end.
    let last_cycle = match r.resolution_cycles {
        0 | 1 => r.cycles,
        step => r.cycles.div_ceil(step).saturating_mul(step),
    };
    let mut last_end = 0;
    for (k, s) in u.stretches.chunks_exact(4).enumerate() {
        let [start, end, state, pass] = [s[0], s[1], s[2], s[3]];
        let why = if start > end || start < last_end {
            Some(format!(
                "runs from cycle {start} to {end}, but stretches are in order and do not overlap \
                 (the one before ends at {last_end})"
            ))
        } else if end > last_cycle {
            Some(format!(
                "ends at cycle {end}, past the run's {} cycles{}",
                r.cycles,
                if last_cycle > r.cycles {
                    format!(
                        " (in whole frames of {} cycles, {last_cycle})",
                        r.resolution_cycles
                    )
                } else {
                    String::new()
                }
            ))
        } else if state >= r.states.len() as u64 {
            Some(format!(
                "names state {state}, but the page has {} states (0 to {})",
                r.states.len(),
                r.states.len().saturating_sub(1)
            ))
        } else if passes.is_some_and(|p| pass >= p) {
            Some(format!(
                "names pass {pass}, but the launch takes {} passes (0 to {})",
                passes.unwrap_or(0),
                passes.unwrap_or(0).saturating_sub(1)
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(damaged(format!("stretch {k} {why}")));
        }
        last_end = end;
    }
    if u.handovers.len() % 2 != 0 {
        return Err(damaged(format!(
            "`handovers` has {} numbers, but it lists rendezvous of two (cycle, side)",
            u.handovers.len()
        )));
    }
    for (k, h) in u.handovers.chunks_exact(2).enumerate() {
        if h[0] > r.cycles || h[1] >= spu_isa::Side::ALL.len() as u64 {
            return Err(damaged(format!(
                "rendezvous {k} is at cycle {} on side {}, but the run has {} cycles and sides \
                 0 to {}",
                h[0],
                h[1],
                r.cycles,
                spu_isa::Side::ALL.len() - 1
            )));
        }
    }
    for (k, p) in u.ports.iter().enumerate() {
        if !["north", "south", "east", "west"].contains(&p.side.as_str()) {
            return Err(damaged(format!(
                "port {k} is on side `{}`; expected north, south, east or west",
                shorten(&p.side)
            )));
        }
        if p.partner >= r.units.len() {
            return Err(damaged(format!(
                "port {k} links to unit {}, but the page has {} units (0 to {})",
                p.partner,
                r.units.len(),
                r.units.len().saturating_sub(1)
            )));
        }
    }
    if u.lines.len() % 3 != 0 {
        return Err(damaged(format!(
            "`lines` has {} numbers, but it lists lines in threes (line, instructions, stalls)",
            u.lines.len()
        )));
    }
    if let Some(l) = u
        .lines
        .chunks_exact(3)
        .find(|l| l[0] >= r.lines.len() as u64)
    {
        return Err(damaged(format!(
            "`lines` names line {}, but the page has {}",
            l[0],
            spu_io::numbers::counted(r.lines.len() as u64, "line")
        )));
    }
    for (what, n) in [
        ("busy_cycles", u.busy_cycles),
        ("code_cycles", u.code_cycles),
    ] {
        if n > r.cycles {
            return Err(damaged(format!(
                "`{what}` is {n}, more than the run's {} cycles",
                r.cycles
            )));
        }
    }
    let components = component_names();
    known("counter", u.counters.keys(), &components)?;
    if let Some(missing) = components.iter().find(|c| !u.counters.contains_key(**c)) {
        return Err(damaged(format!("its counters lack `{missing}`")));
    }
    known("stall reason", u.stall_cycles.keys(), &stall_names())
}

/// The source lines: each names a source file the page has, and when it ran.
fn check_lines(r: &PageRun) -> Result<(), Damaged> {
    for s in &r.sources {
        short_name("a source file name", &s.name)?;
    }
    let stalls = stall_names();
    for (i, l) in r.lines.iter().enumerate() {
        if let Some(f) = l.file.filter(|f| *f >= r.sources.len()) {
            return Err(damaged(format!(
                "line {i} (`{}`) is in source file {f}, but the page has {}",
                shorten(&l.key),
                spu_io::numbers::counted(r.sources.len() as u64, "source file")
            )));
        }
        short_name("a line's key", &l.key)?;
        for text in &l.instructions {
            short_name("an instruction's text", text)?;
        }
        known("stall reason", l.stalls.keys(), &stalls)?;
    }
    let Some(t) = &r.line_times else {
        return Ok(());
    };
    check_line_times(r, t)
}

/// When each line ran: per line of the page, per unit group, pairs of frame step
/// and count, inside the run and within [`when::MAX_CELLS`] cells.
fn check_line_times(r: &PageRun, t: &when::LineTimes) -> Result<(), Damaged> {
    const GROUPS: [&str; 3] = ["SMs", "IUs", "DMA engines"];
    if t.frame_cycles < r.frame_cycles {
        return Err(damaged(format!(
            "`line_times.frame_cycles` is {}, less than the player's step of {} cycles \
             (`frame_cycles`)",
            t.frame_cycles, r.frame_cycles
        )));
    }
    let known_group = |g: &String| GROUPS.contains(&g.as_str());
    if let Some(g) = t.groups.iter().find(|g| !known_group(g)) {
        return Err(damaged(format!(
            "`line_times.groups` names `{}`; expected {}",
            shorten(g),
            GROUPS.join(", ")
        )));
    }
    if t.lines.len() != r.lines.len() {
        return Err(damaged(format!(
            "`line_times.lines` has {}, but the page has {}",
            spu_io::numbers::counted(t.lines.len() as u64, "line"),
            r.lines.len()
        )));
    }
    let frames = r.cycles.div_ceil(t.frame_cycles);
    let mut cells = 0;
    for (i, groups) in t.lines.iter().enumerate() {
        if !groups.is_empty() && groups.len() != t.groups.len() {
            return Err(damaged(format!(
                "`line_times.lines[{i}]` has {} groups, but `line_times.groups` has {}",
                groups.len(),
                t.groups.len()
            )));
        }
        for pairs in groups {
            if pairs.len() % 2 != 0 {
                return Err(damaged(format!(
                    "`line_times.lines[{i}]` has a list of {} numbers, but it lists pairs \
                     (frame step, count)",
                    pairs.len()
                )));
            }
            let mut frame: u64 = 0;
            for p in pairs.chunks_exact(2) {
                frame = frame.saturating_add(p[0]);
                if frame >= frames {
                    return Err(damaged(format!(
                        "`line_times.lines[{i}]` counts frame {frame}, but the run's {} cycles \
                         in frames of {} make {frames}",
                        r.cycles, t.frame_cycles
                    )));
                }
            }
            cells += pairs.len() / 2;
        }
    }
    if cells > when::MAX_CELLS {
        return Err(damaged(format!(
            "`line_times` has {cells} cells, but a page holds at most {}",
            when::MAX_CELLS
        )));
    }
    Ok(())
}

/// The run's warp instructions are the units' and the lines' (as in statistics).
fn check_totals(r: &PageRun) -> Result<(), Damaged> {
    let warp = u128::from(r.totals.warp_instructions);
    let units: u128 = r.units.iter().map(|u| u128::from(u.issued)).sum();
    let lines: u128 = r.lines.iter().map(|l| u128::from(l.issued)).sum();
    for (what, sum) in [("units'", units), ("lines'", lines)] {
        if sum != warp {
            return Err(damaged(format!(
                "the {what} `issued` add up to {sum}, but `totals.warp_instructions` is {warp}"
            )));
        }
    }
    Ok(())
}
