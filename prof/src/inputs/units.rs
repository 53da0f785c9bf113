//! Checking a file's units against its machine, for statistics files and pages
//! alike: each unit's kind with the place fields it needs (an SM a row `y`, a
//! boundary unit a `side`), `cols` x `rows` SMs, on the SPU a boundary unit of the
//! machine's boundary kind per edge position (per lane with several blocks per
//! SM), none on a GPU, every unit on the grid and no two in one place.

use super::{Damaged, damaged};
use spu_emu::Machine;
use spu_emu::observe::stats::UnitStats;
use spu_io::quote::shorten;

/// Where a file puts a unit.
pub(super) struct Place<'a> {
    pub kind: &'a str,
    pub x: u32,
    pub y: Option<u32>,
    pub side: Option<&'a str>,
}

impl<'a> Place<'a> {
    pub fn of_stats(u: &'a UnitStats) -> Place<'a> {
        Place {
            kind: &u.kind,
            x: u.x,
            y: u.y,
            side: u.side.as_deref(),
        }
    }
}

/// How a file names its machine's settings in messages.
pub(super) struct Names {
    /// The grid's columns and rows.
    pub grid: &'static str,
    /// The machine's kind (SPU or GPU).
    pub kind: &'static str,
    /// The boundary's kind.
    pub boundary: &'static str,
    /// The grid, as the owner of its sides.
    pub sides: &'static str,
}

/// A statistics file's names: the keys of its `machine` section.
pub(super) const STATS: Names = Names {
    grid: "the `machine` section's `grid.cols` and `grid.rows`",
    kind: "the `machine` section's `machine.kind`",
    boundary: "the `machine` section's `boundary.kind`",
    sides: "the `machine` section's grid",
};

/// Checks that unit `i` is of a known kind and has the place fields its kind needs.
pub(super) fn check_kind(i: usize, u: &Place) -> Result<(), Damaged> {
    let at = |why: String| damaged(format!("unit {i}: {why}"));
    match (u.kind, u.y, u.side) {
        ("sm", Some(_), None) => Ok(()),
        ("iu" | "dma", None, Some("north" | "south" | "east" | "west")) => Ok(()),
        ("sm" | "iu" | "dma", _, _) => Err(at(format!(
            "a `{}` unit needs {}",
            u.kind,
            if u.kind == "sm" {
                "a row `y` and no `side`"
            } else {
                "a `side` (north, south, east or west) and no row `y`"
            }
        ))),
        (other, _, _) => Err(at(format!(
            "unknown unit kind `{}`; expected sm, iu or dma",
            shorten(other)
        ))),
    }
}

/// Checks that `units` (each already through [`check_kind`]) are those of `m`:
/// `grid.cols` x `grid.rows` SMs and, on the SPU, a boundary unit of
/// `boundary.kind` per edge position.
pub(super) fn check_on_machine(units: &[Place], m: &Machine, names: &Names) -> Result<(), Damaged> {
    let (cols, rows) = (u64::from(m.grid_cols), u64::from(m.grid_rows));
    let count = |kind: &str, side: Option<&str>| {
        units
            .iter()
            .filter(|u| u.kind == kind && (side.is_none() || u.side == side))
            .count() as u64
    };
    let sms = count("sm", None);
    if sms != cols * rows {
        return Err(damaged(format!(
            "{} say {cols}x{rows} = {} SMs, but the file has {sms} SM units",
            names.grid,
            cols * rows
        )));
    }
    // With several blocks per SM the boundary has a unit per lane (block column or
    // row of a pass), `sm.fold_x` or `sm.fold_y` per SM along its side.
    let [fx, fy] = if m.is_gpu() { [1, 1] } else { m.fold() };
    let (lanes_x, lanes_y) = (cols * u64::from(fx), rows * u64::from(fy));
    check_positions(units, cols, rows, (lanes_x, lanes_y))?;
    let (iu, dma) = (count("iu", None), count("dma", None));
    if m.is_gpu() {
        if iu + dma > 0 {
            return Err(damaged(format!(
                "{} is `gpu`, but the file has {} boundary units",
                names.kind,
                iu + dma
            )));
        }
        return Ok(());
    }
    let kind = m.boundary.name();
    let other = if kind == "iu" { dma } else { iu };
    if other > 0 {
        return Err(damaged(format!(
            "{} is `{kind}`, but the file has {other} {} units",
            names.boundary,
            if kind == "iu" { "dma" } else { "iu" }
        )));
    }
    for (side, n) in [
        ("north", lanes_x),
        ("south", lanes_x),
        ("east", lanes_y),
        ("west", lanes_y),
    ] {
        let have = count(kind, Some(side));
        if have != n {
            return Err(damaged(format!(
                "{} ({cols}x{rows}) has {n} `{kind}` units on its {side} side, but the file has \
                 {have}",
                names.sides
            )));
        }
    }
    Ok(())
}

/// Checks that every unit sits on the grid (an SM at column `x` < cols and row
/// `y` < rows, a boundary unit at `x` < the lanes of its side) and that no two
/// units share a place.
fn check_positions(
    units: &[Place],
    cols: u64,
    rows: u64,
    lanes: (u64, u64),
) -> Result<(), Damaged> {
    let mut seen = std::collections::HashMap::new();
    for (i, u) in units.iter().enumerate() {
        let (x, y) = (u64::from(u.x), u.y.map(u64::from));
        let len = match u.side {
            Some("east" | "west") => lanes.1,
            Some(_) => lanes.0,
            None => cols,
        };
        let outside = match (u.side, y) {
            (None, Some(y)) if y >= rows => Some(format!("y = {y}")),
            _ if x >= len => Some(format!("x = {x}")),
            _ => None,
        };
        if let Some(at) = outside {
            let whose = match u.side {
                Some(side) => format!("the grid's {side} side, which has {len} places"),
                None => format!("the {cols}x{rows} grid"),
            };
            return Err(damaged(format!(
                "unit {i} (`{}`) is at {at}, outside {whose}",
                shorten(u.kind)
            )));
        }
        let place = match u.side {
            Some(side) => format!("{side} {x}"),
            None => format!("({x}, {})", y.unwrap_or(0)),
        };
        // Kinds on one side share places: the boundary has one unit per place.
        if let Some(first) = seen.insert(place.clone(), i) {
            return Err(damaged(format!(
                "units {first} and {i} are both at {place}; every unit has its own place"
            )));
        }
    }
    Ok(())
}
