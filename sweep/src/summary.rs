//! Summary tables of a sweep (`[[table]]` in the spec), as Markdown: one cell per
//! row and column (a metric, or a sum of metrics, of the one finished run there),
//! optionally relative to one column, and a last row with the mean of chosen rows.
//! Like the reports they depend only on the plan and the records. Text from the
//! spec (title, labels) is written as the terminal shows it ([`cell`]), so a `|`
//! or a line break in a label cannot add a cell, a row or a heading.

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

/// The table's cells: row labels, column labels and values (`None`: no run).
struct Grid {
    rows: Vec<String>,
    columns: Vec<String>,
    cells: HashMap<(usize, usize), f64>,
}

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
        let divisor = if t.per.is_empty() {
            1.0
        } else {
            sum(rec, &t.per)
        };
        let cells: Vec<(usize, f64)> = match (&t.rows, row_column) {
            (TableRows::Column { value, .. }, Some(rc)) => {
                vec![(
                    push_label(&mut g.rows, &run.values[rc]),
                    sum(rec, value) / divisor,
                )]
            }
            (TableRows::Metrics(rows), _) => rows
                .iter()
                .enumerate()
                .map(|(r, (_, metrics))| (r, sum(rec, metrics) / divisor))
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
    spu_io::quote::escape(text).replace('|', "\\|")
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

fn format_cell(v: f64, t: &TableSpec) -> String {
    match t.format {
        TableFormat::Number => {
            let digits = t.digits.unwrap_or(0);
            let text = format!("{:.*}", digits, v * t.scale);
            match text.split_once('.') {
                Some((whole, frac)) => format!("{}.{frac}", grouped(whole)),
                None => grouped(&text),
            }
        }
        TableFormat::Ratio | TableFormat::Speedup => format!("{:.*}x", t.digits.unwrap_or(2), v),
        TableFormat::Percent => format!("{:+.*}%", t.digits.unwrap_or(1), v),
    }
}

/// The table as Markdown.
pub fn markdown(
    plan: &Plan,
    records: &HashMap<String, Record>,
    t: &TableSpec,
) -> Result<String, TableError> {
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
    let shown = |r: usize, c: usize| -> Option<f64> {
        let v = *g.cells.get(&(r, c))?;
        match base {
            None => Some(v),
            Some(b) => {
                let b = *g.cells.get(&(r, b))?;
                let ratio = v / b;
                match t.format {
                    TableFormat::Percent => Some((ratio - 1.0) * 100.0),
                    TableFormat::Speedup => Some(1.0 / ratio),
                    _ => Some(ratio),
                }
            }
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
            .map(|c| shown(r, c).map_or_else(|| "-".to_string(), |v| format_cell(v, t)))
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
        let cells: Vec<String> = (0..g.columns.len())
            .map(|c| {
                let values: Option<Vec<f64>> = rows.iter().map(|&r| shown(r, c)).collect();
                values.map_or_else(
                    || "-".to_string(),
                    |v| format_cell(v.iter().sum::<f64>() / v.len() as f64, t),
                )
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
    Ok(out)
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
