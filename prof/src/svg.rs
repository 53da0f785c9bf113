//! Power over time as a hand-written SVG chart: total and dynamic power per
//! sampling interval, with the leakage level, labelled axes and a legend. The
//! title is cut to the chart's width and the legend sits below the plot, so
//! neither covers the other or the curves.

use crate::energy::Breakdown;
use spu_io::quote::xml as escape;
use std::fmt::Write;

const W: f64 = 800.0;
const H: f64 = 380.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 52.0;
/// Below the plot: tick labels, the axis title and the legend's row.
const BOTTOM: f64 = 76.0;
/// Width of a character at the title's 14 px (sans-serif, a generous average).
const TITLE_CHAR_W: f64 = 7.2;

/// `text` cut to at most `max` characters, marked with an ellipsis when cut.
fn fit(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}\u{2026}")
}

/// Tick `k` of `step`, written with as many decimals as the step has (so the
/// labels read 0.3, not 0.30000000000000004).
fn tick_label(k: u32, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{:.*}", decimals, f64::from(k) * step)
}

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
    // The title on one line cut to the width, the model on the line below.
    let room = ((W - LEFT - RIGHT) / TITLE_CHAR_W) as usize;
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="20" font-size="14">{}</text><text x="{LEFT}" y="36" font-size="11" fill="#444">{}</text>"##,
        escape(&fit(
            &format!("Power over time: {} on {}", b.kernel, b.machine),
            room
        )),
        escape(&fit(&format!("energy model {}", b.model), room + room / 4))
    );
    // Axes and ticks.
    let _ = writeln!(
        s,
        r#"<path d="M{LEFT} {TOP} V{} H{}" stroke="black" fill="none"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
    let step = tick_step(p_max, 5.0);
    for k in (0..).take_while(|&k| f64::from(k) * step <= p_max) {
        let p = f64::from(k) * step;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y(p) + 4.0,
            tick_label(k, step),
            y = y(p)
        );
    }
    let t_us = t_end * 1e6;
    let t_step = tick_step(t_us, 8.0);
    for k in (0..).take_while(|&k| f64::from(k) * t_step <= t_us) {
        let t = f64::from(k) * t_step;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            x(t * 1e-6),
            H - BOTTOM + 18.0,
            tick_label(k, t_step)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">time (us)</text><text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">power (W)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - BOTTOM + 36.0,
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
    // The legend: one row below the axis title, clear of the curves.
    let ly = H - 12.0;
    let mut lx = LEFT;
    let _ = write!(s, "<g>");
    for (colour, dash, label) in [
        ("#1f77b4", "", "total".to_string()),
        ("#d62728", "", "dynamic".to_string()),
        (
            "#888",
            r#" stroke-dasharray="6 4""#,
            format!("leakage {:.1} W", b.leakage_w),
        ),
    ] {
        let _ = write!(
            s,
            r#"<line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{ly}">{label}</text>"#,
            lx + 20.0,
            ly - 4.0,
            ly - 4.0,
            lx + 25.0,
        );
        lx += 45.0 + 7.0 * label.len() as f64;
    }
    let _ = writeln!(s, "</g>");
    s.push_str("</svg>\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::PowerSample;

    fn breakdown(kernel: &str, model: &str) -> Breakdown {
        Breakdown {
            model: model.into(),
            kernel: kernel.into(),
            machine: "spu-4x4".into(),
            cycles: 700,
            freq_mhz: 700.0,
            time_s: 1e-6,
            leakage_w: 11.0,
            leakage_by_unit: Vec::new(),
            static_j: 0.0,
            dynamic_j: 0.0,
            total_j: 0.0,
            avg_power_w: 0.0,
            dynamic_power_w: 0.0,
            edp_js: 0.0,
            components: Default::default(),
            lines: Default::default(),
            line_detail: Default::default(),
            power_trace: Some(
                (0..10)
                    .map(|i| PowerSample {
                        t_s: f64::from(i) * 1e-7,
                        dynamic_w: 3.0 + f64::from(i % 3),
                    })
                    .collect(),
            ),
            legend: Default::default(),
        }
    }

    /// The numbers of every `attr="..."` in the chart's elements named `tag`.
    fn attr_values(svg: &str, tag: &str, attr: &str) -> Vec<f64> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .filter_map(|e| {
                let at = e.find(&format!(" {attr}=\""))? + attr.len() + 3;
                e[at..].split('"').next()?.parse().ok()
            })
            .collect()
    }

    #[test]
    fn a_long_title_is_cut_to_the_width_and_the_model_has_its_own_line() {
        let svg = power_trace(&breakdown(&"k".repeat(300), "default")).unwrap();
        let title = svg.split("<text ").nth(1).unwrap();
        let text = title.split('>').nth(1).unwrap().split('<').next().unwrap();
        assert!(text.chars().count() <= ((W - LEFT - RIGHT) / TITLE_CHAR_W) as usize);
        assert!(text.ends_with('\u{2026}'), "{text}");
        assert!(svg.contains(">energy model default<"), "{svg}");
    }

    #[test]
    fn the_legend_is_below_the_plot() {
        let svg = power_trace(&breakdown("stencil_pc", "default")).unwrap();
        let legend = &svg[svg.rfind("<g>").unwrap()..];
        for y in attr_values(legend, "text", "y") {
            assert!(
                y > H - BOTTOM + 36.0,
                "legend text at y = {y} is inside the plot"
            );
        }
        assert!(legend.contains("leakage 11.0 W"), "{legend}");
    }

    #[test]
    fn tick_labels_are_exact_decimals() {
        assert_eq!(tick_label(3, 0.1), "0.3");
        assert_eq!(tick_label(7, 0.02), "0.14");
        assert_eq!(tick_label(4, 50.0), "200");
        let svg = power_trace(&breakdown("stencil_pc", "default")).unwrap();
        assert!(!svg.contains("0000000"), "{svg}");
    }
}
