//! The activity timeline as SVG, in the spirit of thesis Figures 4.1b-4.3: one row
//! per unit, SMs ordered by anti-diagonal `x + y` (the wavefront) with a label per
//! diagonal, then the boundary units; filled where a unit works, pale where it
//! waits at a blocksync (coloured by side) or for a spill stream, blank where it
//! is idle; dashed lines where each pass starts; a time axis with round ticks; a
//! legend. Stretches too short to see are widened to [`MIN_WIDTH`], and those
//! closer than half a pixel are drawn as one bar, so the picture stays small for
//! any run.

use crate::machine::UnitLabel;
use crate::observe::activity::{Activity, ActivityLog};
use spu_io::quote::xml as escape;
use spu_isa::Side;
use std::fmt::Write;

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 46.0;
/// Narrowest drawn activity, in pixels: a 40-cycle spill in a run of millions
/// of cycles is still visible.
pub const MIN_WIDTH: f64 = 1.5;
/// Pass labels are stacked in at most this many lines above the rows.
const PASS_LANES: usize = 3;
/// Approximate width of one character of 10-pixel sans-serif text.
const CHAR_W: f64 = 5.6;

/// One drawn bar of a row: its extent in pixels and its look.
#[derive(Debug, Clone, Copy)]
struct Bar {
    x0: f64,
    x1: f64,
    fill: &'static str,
    outlined: bool,
}

/// A round tick step (1, 2 or 5 times a power of ten) that divides `span` into
/// at most `most` intervals.
pub fn tick_step(span: u64, most: u64) -> u64 {
    let most = most.max(1);
    let mut power = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = power.saturating_mul(m);
            if span.div_ceil(step) <= most || step == u64::MAX {
                return step;
            }
        }
        power = power.saturating_mul(10);
    }
}

/// The drawn extent `(x, width)` of a stretch from `x0` to `x1`: at least
/// [`MIN_WIDTH`] wide, centred on the stretch and kept within `[lo, hi]`.
pub fn drawn_extent(x0: f64, x1: f64, lo: f64, hi: f64) -> (f64, f64) {
    let w = (x1 - x0).max(0.0);
    if w >= MIN_WIDTH {
        return (x0, w);
    }
    let x = (x0 + x1) / 2.0 - MIN_WIDTH / 2.0;
    (x.clamp(lo, (hi - MIN_WIDTH).max(lo)), MIN_WIDTH)
}

/// Pass labels for pass lines at `xs` (in time order) named `names`: a line
/// closer to a group's first line than that group's label is wide joins the group,
/// so passes starting together share one label (`passes (0,0) (1,0) (2,0)`, or the
/// first and last with a count when there are many) instead of covering each
/// other. Returns each group's first index and its label.
pub fn group_pass_labels(xs: &[f64], names: &[String]) -> Vec<(usize, String)> {
    let mut groups: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, (&x, name)) in xs.iter().zip(names).enumerate() {
        match groups.last_mut() {
            Some((first, members))
                if x < xs[*first] + (label_of(members).len() as f64 + 1.0) * CHAR_W =>
            {
                members.push(name)
            }
            _ => groups.push((i, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(first, members)| (first, label_of(&members)))
        .collect()
}

fn label_of(members: &[&str]) -> String {
    match members {
        [one] => format!("pass {one}"),
        [_, _, _, _, _, ..] => format!(
            "passes {} .. {} ({})",
            members[0],
            members[members.len() - 1],
            members.len()
        ),
        _ => format!("passes {}", members.join(" ")),
    }
}

/// Stacks labels starting at `xs` (sorted) of widths `ws` into lanes so none
/// overlap: the lane of each label, or `None` when all lanes are taken there.
pub fn stack_labels(xs: &[f64], ws: &[f64], lanes: usize) -> Vec<Option<usize>> {
    let mut free_from = vec![f64::NEG_INFINITY; lanes];
    xs.iter()
        .zip(ws)
        .map(|(&x, &w)| {
            let lane = free_from.iter().position(|&f| f <= x)?;
            free_from[lane] = x + w + 4.0;
            Some(lane)
        })
        .collect()
}

/// The colour of an activity (`none`: idle, not drawn).
pub fn colour(a: Activity) -> &'static str {
    match a {
        Activity::Idle => "none",
        Activity::Compute => "#1f77b4",
        Activity::IuCode => "#2ca02c",
        Activity::Load => "#2ca02c",
        Activity::Store => "#9467bd",
        Activity::Spill => "#d62728",
        Activity::Restore => "#ff7f0e",
        Activity::SpillWait => "#fbf3c4",
        Activity::Wait(Some(Side::North | Side::West)) => "#f6d5b8",
        Activity::Wait(Some(_)) => "#cfe3f3",
        Activity::Wait(None) => "#e0e0e0",
    }
}

fn label(l: UnitLabel) -> String {
    match l {
        UnitLabel::Sm { x, y } => format!("SM ({x},{y})"),
        UnitLabel::Iu { side, index } => format!("{side} IU {index}"),
        UnitLabel::Dma { side, index } => format!("{side} DMA {index}"),
    }
}

/// Row order: SMs by anti-diagonal, then boundary units (loaders, then storers).
fn row_order(labels: &[UnitLabel]) -> Vec<usize> {
    let mut rows: Vec<usize> = (0..labels.len()).collect();
    rows.sort_by_key(|&u| match labels[u] {
        UnitLabel::Sm { x, y } => (0, x + y, y, x),
        UnitLabel::Iu { side, index } | UnitLabel::Dma { side, index } => {
            let order = match side {
                Side::North => 1,
                Side::West => 2,
                Side::South => 3,
                Side::East => 4,
            };
            (order, index, 0, 0)
        }
    });
    rows
}

/// The timeline. `passes_x` turns pass indices into `(px, py)` labels.
pub fn svg(
    log: &ActivityLog,
    labels: &[UnitLabel],
    cycles: u64,
    passes_x: u32,
    title: &str,
) -> String {
    // Units that never worked are left out (a launch smaller than the grid).
    let rows: Vec<usize> = row_order(labels)
        .into_iter()
        .filter(|&u| !log.units[u].is_empty())
        .collect();
    let hidden = labels.len() - rows.len();
    // Pass starts: the earliest start of any unit's work in that pass.
    let mut starts: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
    for seg in log.units.iter().flatten() {
        let t = starts.entry(seg.pass).or_insert(seg.start);
        *t = (*t).min(seg.start);
    }
    let mut pass_start: Vec<(u32, u64)> = starts.into_iter().collect();
    pass_start.sort_by_key(|&(p, t)| (t, p));
    // A GPU (SMs only) has no passes and runs only blocks.
    let gpu = labels.iter().all(|l| matches!(l, UnitLabel::Sm { .. }));
    if gpu {
        pass_start.clear();
    }
    let end = cycles.max(1) as f64;
    let x = |t: u64| LEFT + (WIDTH - LEFT - RIGHT) * t as f64 / end;
    // One mark per half pixel: a launch of many small passes would draw
    // thousands of lines on one spot.
    let mut last_mark = f64::NEG_INFINITY;
    pass_start.retain(|&(_, t)| {
        let keep = x(t) - last_mark >= 0.5;
        if keep {
            last_mark = x(t);
        }
        keep
    });
    let pass_names: Vec<String> = pass_start
        .iter()
        .map(|(p, _)| format!("({},{})", p % passes_x.max(1), p / passes_x.max(1)))
        .collect();
    let starts_x: Vec<f64> = pass_start.iter().map(|(_, t)| x(*t)).collect();
    let groups = group_pass_labels(&starts_x, &pass_names);
    let name_w: Vec<f64> = groups
        .iter()
        .map(|(_, n)| n.len() as f64 * CHAR_W)
        .collect();
    // A label starts just right of its first line, or ends at the right edge.
    let name_x: Vec<f64> = groups
        .iter()
        .zip(&name_w)
        .map(|((first, _), w)| (starts_x[*first] + 2.0).min(WIDTH - 2.0 - w))
        .collect();
    let lanes = stack_labels(&name_x, &name_w, PASS_LANES);
    let lanes_used = lanes.iter().flatten().max().map_or(1, |l| l + 1);
    let top = TOP + 11.0 * (lanes_used - 1) as f64;
    let row_h = (720.0 / rows.len().max(1) as f64).clamp(3.0, 14.0);
    let gap = if row_h >= 8.0 { 2.0 } else { 0.5 };
    let height = top + rows.len() as f64 * row_h + 150.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="{WIDTH}" height="{height:.0}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="18" font-size="14">{}</text>"#,
        escape(title)
    );
    if hidden > 0 {
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="32" font-size="10">{hidden} units without work are not shown</text>"#
        );
    }
    let bottom = top + rows.len() as f64 * row_h;
    for (i, (_, t)) in pass_start.iter().enumerate() {
        let px = x(*t);
        // A group's label is drawn with its first line; labels that find no free
        // lane are left out (counted below), the line and its hover text stay.
        let text = groups
            .iter()
            .position(|(first, _)| *first == i)
            .and_then(|g| Some((g, lanes[g]?)))
            .map_or_else(String::new, |(g, lane)| {
                format!(
                    r#"<text x="{:.1}" y="{:.1}" font-size="10">{}</text>"#,
                    name_x[g],
                    top - 4.0 - 11.0 * lane as f64,
                    groups[g].1
                )
            });
        let _ = writeln!(
            s,
            r##"<g class="pass-mark"><line x1="{px:.1}" x2="{px:.1}" y1="{:.1}" y2="{bottom:.1}" stroke="#444" stroke-dasharray="4 3"><title>pass {} starts at cycle {t}</title></line>{text}</g>"##,
            // From just above the rows: a longer line would cross the labels of
            // passes that started just before.
            if lanes_used == 1 {
                top - 12.0
            } else {
                top - 2.0
            },
            pass_names[i],
        );
    }
    let unlabelled = lanes.iter().filter(|l| l.is_none()).count();
    if unlabelled > 0 {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="32" font-size="10" text-anchor="end">{unlabelled} pass labels do not fit: hover a dashed line for its pass</text>"#,
            WIDTH - RIGHT
        );
    }
    let mut last_diag = None;
    for (i, &u) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let diag = match labels[u] {
            UnitLabel::Sm { x, y } => Some(x + y),
            _ => None,
        };
        if diag != last_diag || (diag.is_none() && row_h >= 8.0) {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#bbb" stroke-width="0.5"/>"##,
                WIDTH - RIGHT
            );
        }
        let side = match labels[u] {
            UnitLabel::Iu { side, .. } | UnitLabel::Dma { side, .. } => Some(side),
            UnitLabel::Sm { .. } => None,
        };
        let side_changed = i == 0
            || side
                != match labels[rows[i - 1]] {
                    UnitLabel::Iu { side, .. } | UnitLabel::Dma { side, .. } => Some(side),
                    UnitLabel::Sm { .. } => None,
                };
        let name = if row_h >= 8.0 {
            label(labels[u])
        } else if let Some(d) = diag.filter(|_| diag != last_diag) {
            format!("x+y = {d}")
        } else if let Some(side) = side.filter(|_| side_changed) {
            format!("{side} side")
        } else {
            String::new()
        };
        if !name.is_empty() {
            let _ = writeln!(
                s,
                r#"<text class="row-label" x="{}" y="{:.1}" text-anchor="end" font-size="{:.0}">{}</text>"#,
                LEFT - 6.0,
                y + row_h.max(8.0) - 2.0,
                row_h.clamp(7.0, 11.0),
                escape(&name)
            );
        }
        last_diag = diag;
        let _ = write!(
            s,
            r#"<g class="row" data-unit="{}">"#,
            escape(&label(labels[u]))
        );
        let mut pass = None;
        let mut last_line = f64::NEG_INFINITY;
        let mut pending: Option<Bar> = None;
        let draw = |s: &mut String, b: Bar| {
            let stroke = if b.outlined {
                r##" stroke="#888" stroke-width="0.3""##
            } else {
                ""
            };
            let _ = write!(
                s,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}"{stroke}/>"#,
                b.x0,
                y + gap / 2.0,
                b.x1 - b.x0,
                row_h - gap,
                b.fill
            );
        };
        for seg in &log.units[u] {
            let (x0, w) = drawn_extent(x(seg.start), x(seg.end), LEFT, WIDTH - RIGHT);
            // A new work item (block, IU program, spill or restore) starts here;
            // one mark per half pixel.
            if pass != Some(seg.pass) {
                pass = Some(seg.pass);
                let at = x(seg.start);
                if at - last_line >= 0.5 {
                    last_line = at;
                    let _ = write!(
                        s,
                        r#"<line class="item-start" x1="{at:.2}" x2="{at:.2}" y1="{:.2}" y2="{:.2}" stroke="black" stroke-width="1.2"/>"#,
                        y,
                        y + row_h,
                    );
                }
            }
            let bar = Bar {
                x0,
                x1: x0 + w,
                fill: colour(seg.activity),
                outlined: matches!(seg.activity, Activity::Wait(_) | Activity::SpillWait),
            };
            // Stretches are merged into one bar when they continue one of the
            // same colour, or start within half a pixel of the bar's start (the
            // first stretch's colour shows): so a row has at most a few bars per
            // pixel, however many stretches a run of millions of blocks records.
            pending = match pending {
                Some(mut p)
                    if bar.x0 < p.x0 + 0.5
                        || (bar.fill == p.fill && bar.outlined == p.outlined && bar.x0 <= p.x1) =>
                {
                    p.x1 = p.x1.max(bar.x1);
                    Some(p)
                }
                Some(p) => {
                    draw(&mut s, p);
                    Some(bar)
                }
                None => Some(bar),
            };
        }
        if let Some(p) = pending {
            draw(&mut s, p);
        }
        let _ = writeln!(s, "</g>");
    }
    // Time axis.
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" x2="{}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="black"/>"#,
        WIDTH - RIGHT
    );
    let step = tick_step(cycles, 10);
    for k in 0..=cycles / step {
        let t = k * step;
        let text = crate::observe::report::grouped(t);
        let half = text.len() as f64 * CHAR_W / 2.0;
        // Keep the label inside the picture (the last one may sit at the edge).
        let tx = x(t).min(WIDTH - 2.0 - half);
        let _ = writeln!(
            s,
            r##"<g class="tick"><line x1="{0:.1}" x2="{0:.1}" y1="{bottom:.1}" y2="{1:.1}" stroke="black"/><text x="{tx:.1}" y="{2:.1}" text-anchor="middle" font-size="10">{text}</text></g>"##,
            x(t),
            bottom + 3.0,
            bottom + 14.0,
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">cycles</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        bottom + 30.0
    );
    // Legend.
    let entries = [
        Activity::Compute,
        Activity::IuCode,
        Activity::Store,
        Activity::Spill,
        Activity::Restore,
        Activity::SpillWait,
        Activity::Wait(Some(Side::North)),
        Activity::Wait(Some(Side::South)),
        Activity::Wait(None),
    ];
    let entries = if gpu { &entries[..1] } else { &entries[..] };
    let _ = writeln!(s, r#"<g class="legend">"#);
    for (i, a) in entries.iter().enumerate() {
        let (lx, ly) = (
            LEFT + (i % 4) as f64 * 240.0,
            bottom + 50.0 + (i / 4) as f64 * 20.0,
        );
        let name = if *a == Activity::IuCode {
            "IU code / DMA load"
        } else {
            a.name()
        };
        let _ = writeln!(
            s,
            r##"<rect x="{lx}" y="{ly}" width="14" height="10" fill="{}" stroke="#888" stroke-width="0.5"/><text class="legend-entry" x="{}" y="{}">{}</text>"##,
            colour(*a),
            lx + 18.0,
            ly + 9.0,
            escape(name)
        );
    }
    let note = if gpu {
        "blank: idle; a bar spans an SM's resident blocks, from the start of its first block to the end of its last"
    } else {
        "blank: idle (no work in this pass); black ticks: a unit starts its work for a new pass; dashed lines: first start of each pass; SM rows by anti-diagonal x+y"
    };
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}" font-size="10">{note}</text>"#,
        bottom + 122.0
    );
    let _ = writeln!(s, "</g>");
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_starting_together_share_one_label_and_none_is_lost() {
        let names: Vec<String> = ["(0,0)", "(1,0)", "(2,0)", "(3,0)", "(0,1)", "(1,1)"]
            .iter()
            .map(|n| n.to_string())
            .collect();
        // Three passes at the left edge, then two far apart, then one next to
        // the fifth.
        let groups = group_pass_labels(&[110.0, 110.5, 112.0, 400.0, 700.0, 705.0], &names);
        assert_eq!(
            groups,
            [
                (0, "passes (0,0) (1,0) (2,0)".to_string()),
                (3, "pass (3,0)".to_string()),
                (4, "passes (0,1) (1,1)".to_string()),
            ]
        );
        // Many at once: the first, the last and how many.
        let many = group_pass_labels(&[0.0; 6], &names);
        assert_eq!(many, [(0, "passes (0,0) .. (1,1) (6)".to_string())]);
    }

    #[test]
    fn ticks_are_round_and_at_most_as_many_as_asked() {
        // (span, most, step): 1-2-5 steps, the smallest that fits.
        for (span, most, step) in [
            (2_449_140, 10, 500_000),
            (2_000_000, 10, 200_000),
            (653_699, 10, 100_000),
            (1_000, 10, 100),
            (1_001, 10, 200),
            (7, 10, 1),
            (0, 10, 1),
            (45, 10, 5),
            (u64::MAX, 10, 2_000_000_000_000_000_000),
        ] {
            assert_eq!(tick_step(span, most), step, "span {span}");
            assert!(span.div_ceil(step) <= most);
        }
    }

    #[test]
    fn short_stretches_get_a_minimum_width_inside_the_plot() {
        // A 0.3 px spill is widened around its centre.
        let (x, w) = drawn_extent(500.0, 500.3, 110.0, 1080.0);
        assert_eq!(w, MIN_WIDTH);
        assert!((x + w / 2.0 - 500.15).abs() < 1e-9);
        // Wide stretches are drawn as they are.
        assert_eq!(drawn_extent(200.0, 260.0, 110.0, 1080.0), (200.0, 60.0));
        // At the right edge the widened stretch stays inside.
        let (x, w) = drawn_extent(1079.9, 1080.0, 110.0, 1080.0);
        assert!(x + w <= 1080.0 + 1e-9 && w == MIN_WIDTH);
        // A zero-length stretch at the left edge too.
        assert_eq!(drawn_extent(110.0, 110.0, 110.0, 1080.0).0, 110.0);
    }

    #[test]
    fn close_pass_labels_are_stacked_or_left_out() {
        let w = [60.0; 5];
        // Far apart: one lane.
        assert_eq!(
            stack_labels(&[100.0, 300.0, 500.0], &w[..3], 3),
            vec![Some(0), Some(0), Some(0)]
        );
        // Close together: stacked, then dropped when the lanes are taken.
        assert_eq!(
            stack_labels(&[100.0, 110.0, 120.0, 130.0, 300.0], &w, 3),
            vec![Some(0), Some(1), Some(2), None, Some(0)]
        );
    }
}
