//! Plots of a sweep with `plotters` (SVG): a metric against a column or metric, one
//! series per value of the series columns (by default the machine, when it varies).
//! A numeric x gives lines with markers; a categorical x (machines, test-case
//! labels) gives grouped bars.
//!
//! Text from the user (a title, an axis label, a series name, a category) is
//! drawn through [`text`], so the SVG is always well-formed XML.

use crate::plan::Plan;
use crate::spec::PlotSpec;
use crate::store::{Record, Status};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;

/// Text from the user as drawn in the SVG: control and invisible characters
/// escaped as on a terminal (`\u{1b}`; XML 1.0 cannot hold most control characters,
/// not even as character references), a backslash doubled so that two different
/// labels never look the same. `plotters` writes `&`, `<` and `>` as entities.
fn text(s: &str) -> String {
    spu_io::quote::escape_distinct(s).into_owned()
}

/// Why a plot cannot be drawn.
#[derive(Debug, thiserror::Error)]
#[error("plot `{}`: {message}", spu_io::quote::escape(plot))]
pub struct PlotError {
    pub plot: String,
    pub message: String,
}

/// One series: name and `(x, y)` points in plan order.
type Series = (String, Vec<(String, f64)>);

/// The plot's data: series and the x categories in first-seen order.
fn data(
    plan: &Plan,
    records: &HashMap<String, Record>,
    p: &PlotSpec,
) -> Result<(Vec<Series>, Vec<String>), PlotError> {
    let columns = crate::plan::columns_phrase(&plan.columns);
    let err = |message: String| PlotError {
        plot: p.name.clone(),
        message,
    };
    let col = |name: &str| plan.columns.iter().position(|c| c == name);
    // x takes a column or a metric, y a metric only.
    let unknown = |key: &str, on_y: bool| {
        let lists = "`spu-sweep metrics DIR` lists the metrics";
        err(if on_y {
            if col(key).is_some() {
                format!(
                    "`{key}` is a column of the sweep, not a metric: y takes a metric ({lists}); a column goes on x or in the series"
                )
            } else {
                format!("`{key}` is not a metric of the finished runs; {lists}")
            }
        } else {
            format!(
                "`{key}` is neither a column nor a metric of the finished runs ({columns}); {lists}"
            )
        })
    };
    let series_cols: Vec<usize> = if p.series.is_empty() {
        // Default: one series per machine, when the machine varies.
        col("machine")
            .filter(|_| p.x != "machine")
            .into_iter()
            .collect()
    } else {
        p.series
            .iter()
            .map(|s| col(s).ok_or_else(|| err(format!("`{s}` is not a column ({columns})"))))
            .collect::<Result<_, _>>()?
    };
    let filters: Vec<(usize, &str)> = p
        .filters
        .iter()
        .map(|(c, v)| {
            col(c)
                .map(|i| (i, v.as_str()))
                .ok_or_else(|| err(format!("`{c}` is not a column ({columns})")))
        })
        .collect::<Result<_, _>>()?;
    let x_col = col(&p.x);
    let mut series: Vec<Series> = Vec::new();
    let mut xs: Vec<String> = Vec::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    // The key no run has, and whether it is y's.
    let mut missing: Option<(&String, bool)> = None;
    for (ri, run) in plan.runs.iter().enumerate() {
        if filters.iter().any(|(i, v)| run.values[*i] != *v) {
            continue;
        }
        let Some(rec) = records.get(&run.id).filter(|r| r.status == Status::Done) else {
            continue;
        };
        // A run without the metric (a functional run has no energy or time) is
        // left out; the plot fails only if no run has it.
        let x = match x_col {
            Some(i) => run.values[i].clone(),
            None => match crate::metrics::value(&rec.metrics, &p.x) {
                Some(v) => crate::metrics::cell(Some(&v)),
                None => {
                    missing = Some((&p.x, false));
                    continue;
                }
            },
        };
        let y = match crate::metrics::value(&rec.metrics, &p.y) {
            Some(v) => v
                .as_f64()
                .ok_or_else(|| err(format!("`{}` of run {} is not a number", p.y, run.id)))?,
            None => {
                missing = Some((&p.y, true));
                continue;
            }
        };
        let name = if series_cols.is_empty() {
            p.y.clone()
        } else {
            series_cols
                .iter()
                .map(|&i| run.values[i].clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(&other) = seen.get(&(name.clone(), x.clone())) {
            let a = &plan.runs[other];
            let differ = plan
                .columns
                .iter()
                .enumerate()
                .filter(|(i, _)| a.values[*i] != run.values[*i])
                .map(|(_, c)| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(err(format!(
                "runs {} and {} fall on the same point (series `{name}`, {} = {x}); they differ in {differ}: add it to `series` or `where`",
                a.id, run.id, p.x
            )));
        }
        seen.insert((name.clone(), x.clone()), ri);
        if !xs.contains(&x) {
            xs.push(x.clone());
        }
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((x, y)),
            None => series.push((name, vec![(x, y)])),
        }
    }
    if series.is_empty() {
        if let Some((key, on_y)) = missing {
            return Err(unknown(key, on_y));
        }
        let filter = if p.filters.is_empty() {
            String::new()
        } else {
            format!(
                " where {}",
                p.filters
                    .iter()
                    .map(|(c, v)| format!("{c} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(err(format!("no finished run to plot{filter}")));
    }
    Ok((series, xs))
}

/// The factor and unit to draw values of `unit` whose largest magnitude is `max`
/// in: milli or micro for seconds, joules and watts below 1, the unit otherwise.
fn scaled_unit(unit: Option<&str>, max: f64) -> (f64, Option<String>) {
    match unit {
        Some(u @ ("s" | "J" | "W")) if max > 0.0 && max < 1.0 => {
            if max >= 1e-3 {
                (1e3, Some(format!("m{u}")))
            } else if max >= 1e-6 {
                (1e6, Some(format!("µ{u}")))
            } else {
                (1e9, Some(format!("n{u}")))
            }
        }
        u => (1.0, u.map(str::to_string)),
    }
}

/// An axis label: at most four significant digits.
fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-3..1e7).contains(&a) {
        trim(format!(
            "{v:.*}",
            (3 - a.log10().floor() as i32).max(0) as usize
        ))
    } else {
        let e = a.log10().floor() as i32;
        format!("{}e{e}", trim(format!("{:.3}", v / 10f64.powi(e))))
    }
}

/// A value label: integers in full, other values to four significant digits.
fn exact(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        short(v)
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Size of the value labels over bars.
const LABEL_PT: f64 = 11.0;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Draws a plot as SVG text.
pub fn svg(
    plan: &Plan,
    records: &HashMap<String, Record>,
    p: &PlotSpec,
) -> Result<String, PlotError> {
    let (mut series, xs) = data(plan, records, p)?;
    // Numbers whose axis, with its margins, is finite (a label `inf` or
    // `1e308` is drawn as a category: an infinite range never finishes drawing).
    let numeric: Option<Vec<f64>> = xs
        .iter()
        .map(|x| x.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<Vec<f64>>>()
        .filter(|v| x_range(v).is_some());
    let bars = match p.kind.as_deref() {
        Some("bars") => true,
        Some(_) => false,
        None => numeric.is_none(),
    };
    let title = text(
        &p.title
            .clone()
            .unwrap_or_else(|| format!("{} against {}", p.y, p.x)),
    );
    let ymax = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|(_, y)| y.abs()))
        .fold(0.0f64, f64::max);
    // Seconds, joules and watts below 1 read better in milli or micro units.
    let (factor, unit) = scaled_unit(crate::metrics::unit(&p.y), ymax);
    for (_, pts) in &mut series {
        for (_, y) in pts {
            *y *= factor;
        }
    }
    let axis_desc = |label: &Option<String>, key: &str, unit: Option<String>| {
        let shown = text(label.as_deref().unwrap_or(key));
        match unit {
            Some(u) => format!("{shown} [{u}]"),
            None => shown,
        }
    };
    let y_desc = axis_desc(&p.y_label, &p.y, unit);
    let x_desc = axis_desc(
        &p.x_label,
        &p.x,
        crate::metrics::unit(&p.x)
            .filter(|_| !plan.columns.contains(&p.x))
            .map(str::to_string),
    );
    let ymax = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|(_, y)| *y))
        .fold(0.0f64, f64::max);
    let ymin = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|(_, y)| *y))
        .fold(0.0f64, f64::min);
    let pad = (ymax * 0.08 - ymin * 0.08).abs().max(f64::MIN_POSITIVE);
    let yrange = if ymin >= 0.0 {
        0.0..ymax + pad
    } else {
        ymin - pad..ymax + pad
    };
    if !(yrange.start.is_finite() && yrange.end.is_finite()) {
        return Err(PlotError {
            plot: p.name.clone(),
            message: format!(
                "the values of `{}` reach {}, too far for an axis to hold them; plot a metric in other units, or leave out the runs that give them",
                p.y,
                if ymax.abs() >= ymin.abs() { ymax } else { ymin }
            ),
        });
    }
    let mut out = String::new();
    let draw = |e: &dyn std::fmt::Display| PlotError {
        plot: p.name.clone(),
        message: format!("drawing failed: {e}"),
    };
    {
        let root = SVGBackend::with_string(&mut out, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let xrange = match (&numeric, bars) {
            (Some(v), false) => x_range(v).unwrap_or(-0.5..0.5),
            _ => -0.5..(xs.len() as f64 - 0.5),
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(90)
            .build_cartesian_2d(xrange, yrange)
            .map_err(|e| draw(&e))?;
        let categories = xs.clone();
        let label_x = move |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                categories
                    .get(i as usize)
                    .map_or_else(String::new, |c| text(c))
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc.as_str())
            .y_desc(y_desc.as_str())
            .y_label_formatter(&|y| short(*y));
        if bars || numeric.is_none() {
            mesh.x_labels(xs.len().max(2))
                .x_label_formatter(&label_x)
                .disable_x_mesh();
        } else {
            mesh.x_label_formatter(&|x| short(*x));
        }
        mesh.draw().map_err(|e| draw(&e))?;
        let n = series.len() as f64;
        let plot_px = f64::from(chart.plotting_area().dim_in_pixel().0);
        for (si, (name, pts)) in series.iter().enumerate() {
            let color = COLORS[si % COLORS.len()];
            let pos = |x: &String| -> f64 {
                match (&numeric, bars) {
                    (Some(_), false) => x.parse().unwrap_or(0.0),
                    _ => xs.iter().position(|c| c == x).unwrap_or(0) as f64,
                }
            };
            if bars {
                let width = 0.8 / n;
                let base = 0.0;
                chart
                    .draw_series(pts.iter().map(|(x, y)| {
                        let left = pos(x) - 0.4 + width * si as f64;
                        Rectangle::new([(left, base), (left + width * 0.92, *y)], color.filled())
                    }))
                    .map_err(|e| draw(&e))?
                    .label(text(name))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
                // The value over each bar (tables of the thesis give exact
                // numbers), when the labels fit over their bars.
                let bar_px = plot_px * width * 0.92 / xs.len() as f64;
                let label_px = pts.iter().map(|(_, y)| exact(*y).len()).max().unwrap_or(0) as f64
                    * LABEL_PT
                    * 0.6;
                if label_px <= bar_px {
                    let style = ("sans-serif", LABEL_PT)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom));
                    chart
                        .draw_series(pts.iter().map(|(x, y)| {
                            let center = pos(x) - 0.4 + width * (si as f64 + 0.46);
                            Text::new(exact(*y), (center, *y), style.clone())
                        }))
                        .map_err(|e| draw(&e))?;
                }
            } else {
                let pts: Vec<(f64, f64)> = pts.iter().map(|(x, y)| (pos(x), *y)).collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(|e| draw(&e))?
                    .label(text(name))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
                    .map_err(|e| draw(&e))?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(out)
}

/// The x axis of numeric values: their range with a margin of 5% (at least
/// 0.5) each side, if that is finite.
fn x_range(v: &[f64]) -> Option<std::ops::Range<f64>> {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let m = (hi * 0.05 - lo * 0.05).max(0.5);
    let range = (lo - m)..(hi + m);
    (range.start.is_finite() && range.end.is_finite()).then_some(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_short() {
        assert_eq!(short(1_200_000.0), "1200000");
        assert_eq!(short(12_000_000.0), "1.2e7");
        assert_eq!(short(98_304.0), "98304");
        assert_eq!(short(0.0012346), "0.001235");
        assert_eq!(short(79.1), "79.1");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(2.5e-7), "2.5e-7");
        assert_eq!(exact(1_179_648.0), "1179648");
        assert_eq!(exact(82.4), "82.4");
    }

    #[test]
    fn small_times_and_energies_get_milli_and_micro_units() {
        assert_eq!(scaled_unit(Some("s"), 0.0071), (1e3, Some("ms".into())));
        assert_eq!(scaled_unit(Some("J"), 0.48), (1e3, Some("mJ".into())));
        assert_eq!(scaled_unit(Some("J"), 2e-5), (1e6, Some("µJ".into())));
        assert_eq!(scaled_unit(Some("W"), 35.0), (1.0, Some("W".into())));
        assert_eq!(
            scaled_unit(Some("cycles"), 0.5),
            (1.0, Some("cycles".into()))
        );
        assert_eq!(scaled_unit(None, 0.5), (1.0, None));
    }
}
