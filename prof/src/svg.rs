//! Power over time as a hand-written SVG chart: total and dynamic power per
//! sampling interval, with the leakage level, labelled axes and a legend.

use crate::energy::Breakdown;
use spu_io::quote::xml as escape;
use std::fmt::Write;

const W: f64 = 800.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

/// A round step for about `n` ticks over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// The chart, or `None` without a power trace.
pub fn power_trace(b: &Breakdown) -> Option<String> {
    let trace = b.power_trace.as_ref().filter(|t| !t.is_empty())?;
    let t_end = b.time_s.max(f64::MIN_POSITIVE);
    let p_max = trace
        .iter()
        .map(|s| s.dynamic_w + b.leakage_w)
        .fold(b.leakage_w, f64::max)
        .max(1e-9)
        * 1.1;
    let x = |t: f64| LEFT + (W - LEFT - RIGHT) * t / t_end;
    let y = |p: f64| H - BOTTOM - (H - TOP - BOTTOM) * p / p_max;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="22" font-size="14">{} on {}: power over time (model {})</text>"#,
        escape(&b.kernel),
        escape(&b.machine),
        escape(&b.model)
    );
    // Axes and ticks.
    let _ = writeln!(
        s,
        r#"<path d="M{LEFT} {TOP} V{} H{}" stroke="black" fill="none"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
    let step = tick_step(p_max, 5.0);
    let mut p = 0.0;
    while p <= p_max {
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{p}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y(p) + 4.0,
            y = y(p)
        );
        p += step;
    }
    let t_step = tick_step(t_end * 1e6, 8.0);
    let mut t = 0.0;
    while t <= t_end * 1e6 {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{t}</text>"#,
            x(t * 1e-6),
            H - BOTTOM + 18.0
        );
        t += t_step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">time (us)</text><text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">power (W)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 10.0,
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0
    );
    // Leakage level, dynamic and total power as steps per interval.
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{ly:.1}" y2="{ly:.1}" stroke="#888" stroke-dasharray="6 4"/>"##,
        W - RIGHT,
        ly = y(b.leakage_w)
    );
    for (offset, colour, label) in [
        (0.0, "#d62728", "dynamic"),
        (b.leakage_w, "#1f77b4", "total"),
    ] {
        let mut points = String::new();
        for (i, sample) in trace.iter().enumerate() {
            let end = trace.get(i + 1).map_or(t_end, |n| n.t_s);
            let py = y(sample.dynamic_w + offset);
            let _ = write!(
                points,
                "{:.1},{py:.1} {:.1},{py:.1} ",
                x(sample.t_s),
                x(end)
            );
        }
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"><title>{label} power</title></polyline>"#,
            points.trim_end()
        );
    }
    let lx = W - RIGHT - 170.0;
    let _ = writeln!(
        s,
        r##"<g><line x1="{lx}" x2="{}" y1="{TOP}" y2="{TOP}" stroke="#1f77b4" stroke-width="2"/><text x="{}" y="{}">total</text><line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="#d62728" stroke-width="2"/><text x="{}" y="{}">dynamic</text><line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="#888" stroke-dasharray="6 4"/><text x="{}" y="{}">leakage {:.1} W</text></g>"##,
        lx + 20.0,
        lx + 25.0,
        TOP + 4.0,
        lx + 20.0,
        TOP + 16.0,
        TOP + 16.0,
        lx + 25.0,
        TOP + 20.0,
        lx + 20.0,
        TOP + 32.0,
        TOP + 32.0,
        lx + 25.0,
        TOP + 36.0,
        b.leakage_w
    );
    s.push_str("</svg>\n");
    Some(s)
}
