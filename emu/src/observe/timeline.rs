//! The activity timeline as SVG, in the spirit of thesis Figures 4.1b-4.3: one row
//! per unit, SMs ordered by anti-diagonal `x + y` (the wavefront) with a label per
//! diagonal, then the boundary units; filled where a unit works, pale where it
//! waits at a blocksync (coloured by side), blank where it is idle; dashed lines
//! where each pass starts; a legend.

use crate::machine::UnitLabel;
use crate::observe::activity::{Activity, ActivityLog};
use spu_isa::Side;
use std::fmt::Write;

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 46.0;

fn colour(a: Activity) -> &'static str {
    match a {
        Activity::Idle => "none",
        Activity::Compute => "#1f77b4",
        Activity::IuCode => "#2ca02c",
        Activity::Load => "#2ca02c",
        Activity::Store => "#9467bd",
        Activity::Spill => "#d62728",
        Activity::Restore => "#ff7f0e",
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

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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
    let row_h = (720.0 / rows.len().max(1) as f64).clamp(3.0, 14.0);
    let gap = if row_h >= 8.0 { 2.0 } else { 0.5 };
    let height = TOP + rows.len() as f64 * row_h + 150.0;
    let end = cycles.max(1) as f64;
    let x = |t: u64| LEFT + (WIDTH - LEFT - RIGHT) * t as f64 / end;
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
    // Pass starts: the earliest start of any unit's work in that pass.
    let mut pass_start: Vec<(u32, u64)> = Vec::new();
    for segs in &log.units {
        for seg in segs {
            match pass_start.iter_mut().find(|(p, _)| *p == seg.pass) {
                Some((_, t)) => *t = (*t).min(seg.start),
                None => pass_start.push((seg.pass, seg.start)),
            }
        }
    }
    pass_start.sort();
    // A GPU (SMs only) has no passes and runs only blocks.
    let gpu = labels.iter().all(|l| matches!(l, UnitLabel::Sm { .. }));
    if gpu {
        pass_start.clear();
    }
    let bottom = TOP + rows.len() as f64 * row_h;
    for (p, t) in &pass_start {
        let px = x(*t);
        let _ = writeln!(
            s,
            r##"<g class="pass-mark"><line x1="{px:.1}" x2="{px:.1}" y1="{}" y2="{bottom:.1}" stroke="#444" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" font-size="10">pass ({},{})</text></g>"##,
            TOP - 12.0,
            px + 2.0,
            TOP - 4.0,
            p % passes_x.max(1),
            p / passes_x.max(1)
        );
    }
    let mut last_diag = None;
    for (i, &u) in rows.iter().enumerate() {
        let y = TOP + i as f64 * row_h;
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
        for seg in &log.units[u] {
            if pass != Some(seg.pass) {
                // A new work item (block, IU program, spill or restore) starts here.
                pass = Some(seg.pass);
                let _ = write!(
                    s,
                    r#"<line class="item-start" x1="{x0:.2}" x2="{x0:.2}" y1="{:.2}" y2="{:.2}" stroke="black" stroke-width="1.2"/>"#,
                    y,
                    y + row_h,
                    x0 = x(seg.start)
                );
            }
            let (x0, x1) = (x(seg.start), x(seg.end));
            let w = (x1 - x0).max(0.3);
            let fill = colour(seg.activity);
            let stroke = if matches!(seg.activity, Activity::Wait(_)) {
                r##" stroke="#888" stroke-width="0.3""##
            } else {
                ""
            };
            let _ = write!(
                s,
                r#"<rect x="{x0:.2}" y="{:.2}" width="{w:.2}" height="{:.2}" fill="{fill}"{stroke}/>"#,
                y + gap / 2.0,
                row_h - gap
            );
        }
        let _ = writeln!(s, "</g>");
    }
    // Time axis.
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" x2="{}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="black"/>"#,
        WIDTH - RIGHT
    );
    for k in 0..=10 {
        let t = cycles * k / 10;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
            x(t),
            bottom + 14.0,
            crate::observe::report::grouped(t)
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
        bottom + 100.0
    );
    let _ = writeln!(s, "</g>");
    s.push_str("</svg>\n");
    s
}
