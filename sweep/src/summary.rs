//! Summary tables of a sweep (`[[table]]` in the spec), as Markdown: one cell per
//! row and column (a metric, or a sum of metrics, of the one finished run there),
//! optionally relative to one column, and a last row with the mean of chosen rows.
//! Like the reports they depend only on the plan and the records. Text from the
//! spec (title, labels) is written as the terminal shows it ([`cell`]), so a `|`
//! or a line break in a label cannot add a cell, a row or a heading.
//!
//! A cell never shows a number that is not finite: a cell with no value (no run
//! there, or a functional run asked for a timing metric) is `-`, and so is one
//! whose value cannot be computed (a `per` or `relative_to` of 0, an overflow),
//! with a warning naming its row, its column and why ([`Markdown::warnings`]).

use crate::plan::Plan;
use crate::spec::{TableFormat, TableRows, TableSpec};
use crate::store::{Record, Status};
use std::collections::{HashMap, HashSet};

/// Why a table cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("table `{table}`: {message}")]
pub struct TableError {
    pub table: String,
    pub message: String,
}

/// A table as Markdown, and the cells it left empty for a reason worth a warning.
#[derive(Debug)]
pub struct Markdown {
    pub text: String,
    pub warnings: Vec<TableError>,
}

/// A cell a run fills.
#[derive(Clone, Copy)]
enum Cell {
    Value(f64),
    /// A functional run asked for a metric only timing runs report.
    Untimed,
    /// A value that cannot be computed, and why.
    Broken(&'static str),
}

/// The table's cells: row labels, column labels and the cells runs fill.
struct Grid {
    rows: Vec<String>,
    columns: Vec<String>,
    cells: HashMap<(usize, usize), Cell>,
}

/// Most empty cells named one by one for a table; the rest are counted.
const MAX_WARNINGS: usize = 5;

fn push_label(labels: &mut Vec<String>, label: &str) -> usize {
    labels.iter().position(|l| l == label).unwrap_or_else(|| {
        labels.push(label.to_string());
        labels.len() - 1
    })
}

fn grid(plan: &Plan, records: &HashMap<String, Record>, t: &TableSpec) -> Result<Grid, TableError> {
    let err = |message: String| TableError {
        table: t.name.clone(),
        message,
    };
    let col = |name: &str| {
        plan.columns.iter().position(|c| c == name).ok_or_else(|| {
            err(format!(
                "`{name}` is not a column ({})",
                plan.columns.join(", ")
            ))
        })
    };
    let column = col(&t.columns)?;
    let filters: Vec<(usize, &str)> = t
        .filters
        .iter()
        .map(|(c, v)| col(c).map(|i| (i, v.as_str())))
        .collect::<Result<_, _>>()?;
    let row_column = match &t.rows {
        TableRows::Column { column, .. } => Some(col(column)?),
        TableRows::Metrics(_) => None,
    };
    let mut g = Grid {
        rows: match &t.rows {
            TableRows::Metrics(rows) => rows.iter().map(|(l, _)| l.clone()).collect(),
            TableRows::Column { .. } => Vec::new(),
        },
        columns: Vec::new(),
        cells: HashMap::new(),
    };
    // A metric a run lacks counts 0 (energy components are left out when 0); one
    // that no run of the table has is a mistake, reported after the runs.
    let mut found: HashSet<String> = HashSet::new();
    let mut sum = |rec: &Record, metrics: &[String]| -> f64 {
        let mut total = 0.0;
        for m in metrics {
            if let Some(v) = rec.metrics.get(m).and_then(serde_json::Value::as_f64) {
                found.insert(m.clone());
                total += v;
            }
        }
        total
    };
    for run in &plan.runs {
        if filters.iter().any(|(i, v)| run.values[*i] != *v) {
            continue;
        }
        let Some(rec) = records.get(&run.id).filter(|r| r.status == Status::Done) else {
            continue;
        };
        let c = push_label(&mut g.columns, &run.values[column]);
        // A functional run reports no energy, cycles, time or IPC: not zeros.
        let untimed = |metrics: &[String]| {
            run.functional && metrics.iter().any(|m| crate::metrics::needs_timing(m))
        };
        let mut cell = |metrics: &[String]| -> Cell {
            if untimed(metrics) || untimed(&t.per) {
                return Cell::Untimed;
            }
            let value = sum(rec, metrics);
            if t.per.is_empty() {
                return Cell::Value(value);
            }
            let divisor = sum(rec, &t.per);
            if divisor == 0.0 {
                Cell::Broken("its `per` metrics are 0 there, and it is divided by them")
            } else {
                Cell::Value(value / divisor)
            }
        };
        let cells: Vec<(usize, Cell)> = match (&t.rows, row_column) {
            (TableRows::Column { value, .. }, Some(rc)) => {
                vec![(push_label(&mut g.rows, &run.values[rc]), cell(value))]
            }
            (TableRows::Metrics(rows), _) => rows
                .iter()
                .enumerate()
                .map(|(r, (_, metrics))| (r, cell(metrics)))
                .collect(),
            _ => Vec::new(),
        };
        for (r, v) in cells {
            if g.cells.insert((r, c), v).is_some() {
                return Err(err(format!(
                    "two runs give row `{}`, column `{}`; add a `where` that keeps one",
                    g.rows[r], g.columns[c]
                )));
            }
        }
    }
    if !g.cells.is_empty() {
        let wanted = match &t.rows {
            TableRows::Column { value, .. } => value.iter().collect::<Vec<_>>(),
            TableRows::Metrics(rows) => rows.iter().flat_map(|(_, m)| m).collect(),
        };
        if let Some(m) = wanted
            .into_iter()
            .chain(&t.per)
            .find(|m| !found.contains(m.as_str()))
        {
            return Err(err(format!(
                "no finished run has the metric `{m}`; `spu-sweep metrics DIR` lists them"
            )));
        }
    }
    Ok(g)
}

/// Text from the spec in a Markdown table or title: escaped as on a terminal
/// (a line break becomes `\n`, so a title cannot start a heading), with `|`
/// written `\|` so it stays inside its cell.
fn cell(text: &str) -> String {
    spu_io::quote::escape_distinct(text).replace('|', "\\|")
}

/// `1234567` -> `1 234 567`.
fn grouped(digits: &str) -> String {
    let (sign, digits) = digits.strip_prefix('-').map_or(("", digits), |d| ("-", d));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(ch);
    }
    format!("{sign}{out}")
}

/// The number a cell shows for `v` (scaled when it is a plain number), or why
/// it shows none: a number that is not finite (an overflow).
fn shown_number(v: f64, t: &TableSpec) -> Result<f64, &'static str> {
    let x = match t.format {
        TableFormat::Number => v * t.scale,
        _ => v,
    };
    if x.is_finite() {
        Ok(x)
    } else if t.format == TableFormat::Number && v.is_finite() {
        Err("multiplied by its `scale` it is too large for a number")
    } else {
        Err("it is too large for a number")
    }
}

/// A cell's text for a number from [`shown_number`].
fn format_cell(x: f64, t: &TableSpec) -> String {
    match t.format {
        TableFormat::Number => {
            let digits = t.digits.unwrap_or(0);
            let text = format!("{:.*}", digits, x);
            match text.split_once('.') {
                Some((whole, frac)) => format!("{}.{frac}", grouped(whole)),
                None => grouped(&text),
            }
        }
        TableFormat::Ratio | TableFormat::Speedup => format!("{:.*}x", t.digits.unwrap_or(2), x),
        TableFormat::Percent => format!("{:+.*}%", t.digits.unwrap_or(1), x),
    }
}

/// The table as Markdown, with warnings for the cells it leaves empty because
/// their value cannot be computed.
pub fn markdown(
    plan: &Plan,
    records: &HashMap<String, Record>,
    t: &TableSpec,
) -> Result<Markdown, TableError> {
    let g = grid(plan, records, t)?;
    let err = |message: String| TableError {
        table: t.name.clone(),
        message,
    };
    // Cells as shown (relative to the base column when asked), before formatting.
    let base = match &t.relative_to {
        Some(b) => Some(g.columns.iter().position(|c| c == b).ok_or_else(|| {
            err(format!(
                "`relative_to = \"{b}\"` is not a value of `{}` among the finished runs ({})",
                t.columns,
                g.columns.join(", ")
            ))
        })?),
        None => None,
    };
    // `Err(None)`: empty with nothing to say (no run, no timing, or an empty
    // base cell, which has its own warning); `Err(Some(why))`: worth a warning.
    let relative = |r: usize, c: usize| -> Result<f64, Option<&'static str>> {
        let v = match g.cells.get(&(r, c)) {
            Some(Cell::Value(v)) => *v,
            Some(Cell::Broken(why)) => return Err(Some(why)),
            Some(Cell::Untimed) | None => return Err(None),
        };
        let Some(b) = base else {
            return Ok(v);
        };
        let b = match g.cells.get(&(r, b)) {
            Some(Cell::Value(b)) => *b,
            _ => return Err(None),
        };
        if b == 0.0 {
            return Err(Some(
                "its `relative_to` cell is 0, and a relative cell is divided by it",
            ));
        }
        let ratio = v / b;
        Ok(match t.format {
            TableFormat::Percent => (ratio - 1.0) * 100.0,
            TableFormat::Speedup if ratio == 0.0 => {
                return Err(Some("it is 0, and a speed-up divides by it"));
            }
            TableFormat::Speedup => 1.0 / ratio,
            _ => ratio,
        })
    };
    let shown = |r: usize, c: usize| relative(r, c).and_then(|v| shown_number(v, t).map_err(Some));
    let mut broken: Vec<String> = Vec::new();
    let mut text = |r: &str, c: usize, x: Result<f64, Option<&str>>| match x {
        Ok(x) => format_cell(x, t),
        Err(why) => {
            if let Some(why) = why {
                broken.push(format!(
                    "row `{r}`, column `{}` is left empty: {why}",
                    g.columns[c]
                ));
            }
            "-".to_string()
        }
    };
    let row_header = match &t.rows {
        TableRows::Column { column, .. } => column.clone(),
        TableRows::Metrics(_) => String::new(),
    };
    let mut out = String::new();
    if let Some(title) = &t.title {
        out.push_str(&format!("**{}**\n\n", cell(title)));
    }
    let columns: Vec<String> = g.columns.iter().map(|c| cell(c)).collect();
    out.push_str(&format!(
        "| {} | {} |\n",
        cell(&row_header),
        columns.join(" | ")
    ));
    out.push_str(&format!("|---|{}\n", "---:|".repeat(g.columns.len())));
    for (r, label) in g.rows.iter().enumerate() {
        let cells: Vec<String> = (0..g.columns.len())
            .map(|c| text(label, c, shown(r, c)))
            .collect();
        out.push_str(&format!("| {} | {} |\n", cell(label), cells.join(" | ")));
    }
    if !t.mean.is_empty() {
        let rows: Vec<usize> = t
            .mean
            .iter()
            .map(|m| {
                g.rows.iter().position(|r| r == m).ok_or_else(|| {
                    err(format!(
                        "`mean` names row `{m}`, which the table does not have ({})",
                        g.rows.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        // A mean over a row with an empty cell is empty too; the row's own
        // cell already has its warning.
        let cells: Vec<String> = (0..g.columns.len())
            .map(|c| {
                let values: Option<Vec<f64>> = rows.iter().map(|&r| relative(r, c).ok()).collect();
                let mean = match values {
                    Some(v) => {
                        shown_number(v.iter().sum::<f64>() / v.len() as f64, t).map_err(Some)
                    }
                    None => Err(None),
                };
                text("mean", c, mean)
            })
            .collect();
        out.push_str(&format!(
            "| mean of {} | {} |\n",
            t.mean
                .iter()
                .map(|m| cell(m))
                .collect::<Vec<_>>()
                .join(", "),
            cells.join(" | ")
        ));
    }
    let more = broken.len().saturating_sub(MAX_WARNINGS);
    broken.truncate(MAX_WARNINGS);
    if more > 0 {
        broken.push(format!(
            "{} left empty for these reasons",
            crate::count(more, "other cell")
        ));
    }
    let warnings = broken.into_iter().map(err).collect();
    Ok(Markdown {
        text: out,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped("1234567"), "1 234 567");
        assert_eq!(grouped("-1234"), "-1 234");
        assert_eq!(grouped("12"), "12");
    }

    #[test]
    fn cells_hold_no_column_bar_or_line_break() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("T | x\n# injected"), "T \\| x\\n# injected");
        assert_eq!(cell("plain"), "plain");
    }
}
