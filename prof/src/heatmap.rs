//! The grid as a heat map: one tile per SM, the IUs or DMA engines around it,
//! coloured by a per-unit metric (dynamic energy, off-chip transactions, CB
//! accesses or busy fraction) with the value printed in each tile.

use crate::model::{Kind, Model};
use spu_emu::observe::counters::Component;
use spu_emu::observe::stats::{Stats, UnitStats};
use spu_io::quote::xml;
use std::fmt::Write;

/// What the tiles show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Dynamic energy of the unit (components model): its events, idle-core power
    /// for the cycles it waits, and an equal share of the chip's constant power.
    Energy,
    /// Off-chip (DRAM) transactions the unit caused.
    Offchip,
    /// Communication Buffer accesses (warp waves) of the unit.
    Cb,
    /// Fraction of the run the unit had work.
    Busy,
}

impl Metric {
    fn title(self) -> &'static str {
        match self {
            Metric::Energy => "dynamic energy (uJ)",
            Metric::Offchip => "off-chip transactions",
            Metric::Cb => "CB accesses (warp waves)",
            Metric::Busy => "busy fraction",
        }
    }
}

/// What the metric includes that a reader would not guess, under the title.
fn note(metric: Metric) -> Option<&'static str> {
    // Idle units are charged idle-core power for every cycle they wait, so a
    // waiting IU can outshine a busy SM.
    (metric == Metric::Energy).then_some(
        "events, plus idle-core power while a unit waits and a share of the chip's constant power",
    )
}

fn value(u: &UnitStats, metric: Metric, stats: &Stats, model: &Model, units: usize) -> f64 {
    let count = |c: Component| {
        if c == Component::ConstDynamicp {
            // The chip's constant power, shared equally by its units.
            stats.cycles as f64 / units.max(1) as f64
        } else {
            u.counters.get(c.name()).copied().unwrap_or(0) as f64
        }
    };
    match metric {
        Metric::Energy => match &model.kind {
            Kind::Components {
                event_pj,
                event_bytes,
                ..
            } => {
                let pj = match stats.machine() {
                    Ok(m) => crate::energy::pj_per_event(&m, event_pj, event_bytes),
                    Err(_) => event_pj.clone(),
                };
                Component::ALL
                    .iter()
                    .map(|c| count(*c) * pj[c])
                    .sum::<f64>()
                    * 1e-6
            }
            Kind::InstructionClasses { .. } => f64::NAN,
        },
        Metric::Offchip => count(Component::Dramp),
        Metric::Cb => count(Component::Cbp),
        Metric::Busy => u.busy_cycles as f64 / stats.cycles.max(1) as f64,
    }
}

/// White to dark red.
fn shade(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let g = (255.0 * (1.0 - 0.85 * t)) as u8;
    let r = (255.0 * (1.0 - 0.35 * t)) as u8;
    format!("#{r:02x}{g:02x}{g:02x}")
}

fn fmt(v: f64, metric: Metric) -> String {
    match metric {
        Metric::Busy => format!("{:.0}%", v * 100.0),
        _ if v >= 1000.0 => format!("{:.0}", v),
        _ => format!("{:.3}", v)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
    }
}

/// The heat map, or `None` when the metric cannot be computed (energy under an
/// instruction-classes model).
pub fn svg(stats: &Stats, model: &Model, metric: Metric) -> Option<String> {
    if metric == Metric::Energy && !matches!(model.kind, Kind::Components { .. }) {
        return None;
    }
    let machine = stats.machine().ok()?;
    let (p, q) = (machine.grid_cols, machine.grid_rows);
    let cell = (560.0 / f64::from(p.max(q))).clamp(14.0, 90.0);
    let edge = cell * 0.45;
    let (left, top) = (40.0 + edge, 60.0 + edge);
    // Wide enough for the note under the title on the smallest grids.
    let width = (left + f64::from(p) * cell + edge + 200.0).max(540.0);
    let height = top + f64::from(q) * cell + edge + 50.0;
    let units: Vec<&UnitStats> = crate::energy::present(stats, machine.is_gpu()).collect();
    let values: Vec<f64> = units
        .iter()
        .map(|u| value(u, metric, stats, model, units.len()))
        .collect();
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="{width:.0}" height="{height:.0}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="20" y="22" font-size="13">{} on {}</text><text class="metric" x="20" y="40" font-size="13">{}</text>"#,
        xml(&stats.kernel),
        xml(&machine.summary()),
        metric.title()
    );
    if let Some(n) = note(metric) {
        let _ = writeln!(
            s,
            r##"<text class="note" x="20" y="54" font-size="10" fill="#444">{n}</text>"##
        );
    }
    let show_text = cell >= 34.0;
    for (u, v) in units.iter().zip(&values) {
        let (x, y, w, h) = match (u.y, u.side.as_deref()) {
            (Some(y), _) => (
                left + f64::from(u.x) * cell,
                top + f64::from(y) * cell,
                cell,
                cell,
            ),
            (None, Some("north")) => (left + f64::from(u.x) * cell, top - edge, cell, edge),
            (None, Some("south")) => (
                left + f64::from(u.x) * cell,
                top + f64::from(q) * cell,
                cell,
                edge,
            ),
            (None, Some("west")) => (left - edge, top + f64::from(u.x) * cell, edge, cell),
            (None, _) => (
                left + f64::from(p) * cell,
                top + f64::from(u.x) * cell,
                edge,
                cell,
            ),
        };
        let kind = if u.y.is_some() {
            "sm".to_string()
        } else {
            xml(&u.kind)
        };
        let _ = writeln!(
            s,
            r##"<rect class="tile {kind}" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#666" stroke-width="0.6"><title>{} {}: {}</title></rect>"##,
            x + 1.0,
            y + 1.0,
            w - 2.0,
            h - 2.0,
            shade(v / max),
            xml(&u.kind),
            xml(&u.y.map_or_else(
                || format!("{} {}", u.side.as_deref().unwrap_or(""), u.x),
                |yy| format!("({},{yy})", u.x)
            )),
            fmt(*v, metric)
        );
        if show_text {
            // Boundary strips are narrow: smaller text, turned along east and
            // west strips.
            let (cx, cy) = (x + w / 2.0, y + h / 2.0);
            let (size, turn) = if u.y.is_some() {
                (11.0, String::new())
            } else if w < h {
                (10.0, format!(r#" transform="rotate(-90 {cx:.1} {cy:.1})""#))
            } else {
                (10.0, String::new())
            };
            let _ = writeln!(
                s,
                r#"<text class="value" x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="{size}"{turn}>{}</text>"#,
                cy + size / 3.0,
                fmt(*v, metric)
            );
        }
    }
    // Colour scale.
    let sx = left + f64::from(p) * cell + edge + 30.0;
    for k in 0..=10 {
        let t = f64::from(k) / 10.0;
        let _ = writeln!(
            s,
            r#"<rect class="scale" x="{sx:.1}" y="{:.1}" width="18" height="16" fill="{}"/>"#,
            top + (10 - k) as f64 * 16.0,
            shade(t)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
        sx + 24.0,
        top + 12.0,
        fmt(max, metric)
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">0</text>"#,
        sx + 24.0,
        top + 172.0
    );
    let strips = if machine.is_gpu() {
        "no boundary units (a GPU)".to_string()
    } else {
        format!("thin strips: boundary units ({})", machine.boundary)
    };
    let _ = writeln!(
        s,
        r#"<text x="20" y="{:.1}" font-size="10">tiles: SMs (x right, y down); {strips}; hover a tile for its name and value</text>"#,
        height - 14.0,
    );
    s.push_str("</svg>\n");
    Some(s)
}
