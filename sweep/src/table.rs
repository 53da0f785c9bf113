//! The tidy reports: one row per planned run (in plan order) with its id, status,
//! axis columns, the selected metrics (units in the CSV header) and, for failed runs,
//! the error. `results.csv` and `results.jsonl` hold the same rows. They depend only
//! on the plan and the run records, never on where or when runs ran, so a local
//! sweep and a Slurm sweep give the same bytes.

use crate::metrics::{self, cell};
use crate::plan::Plan;
use crate::store::Record;
use serde_json::Value as Json;
use std::collections::HashMap;

/// The reports of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub csv: String,
    pub jsonl: String,
    /// Metric columns (keys, without units).
    pub metrics: Vec<String>,
    /// Runs of the plan without a record (not run yet).
    pub missing: usize,
    /// Exact metric keys that no finished run has.
    pub unknown_metrics: Vec<String>,
}

/// Builds the reports from the plan and the records.
pub fn report(plan: &Plan, records: &HashMap<String, Record>) -> Report {
    let done: Vec<&Record> = plan
        .runs
        .iter()
        .filter_map(|r| records.get(&r.id))
        .filter(|r| !r.metrics.is_empty())
        .collect();
    let metrics = metrics::select(&plan.metrics, done.iter().flat_map(|r| r.metrics.keys()));
    // Only keys the spec names are worth a warning: the defaults include energy,
    // which functional runs do not have.
    let unknown_metrics = if done.is_empty() || plan.metrics.is_empty() {
        Vec::new()
    } else {
        metrics
            .iter()
            .filter(|m| !done.iter().any(|r| metrics::value(&r.metrics, m).is_some()))
            .cloned()
            .collect()
    };
    let mut csv = String::new();
    let header: Vec<String> = ["run".to_string(), "status".to_string()]
        .into_iter()
        .chain(plan.columns.iter().cloned())
        .chain(metrics.iter().map(|m| metrics::header(m)))
        .chain(["error".to_string()])
        .collect();
    push_row(&mut csv, &header);
    let mut jsonl = String::new();
    let mut missing = 0;
    for run in &plan.runs {
        let Some(rec) = records.get(&run.id) else {
            missing += 1;
            continue;
        };
        let mut row = vec![run.id.clone(), rec.status.name().to_string()];
        row.extend(run.values.iter().cloned());
        let values: Vec<Option<Json>> = metrics
            .iter()
            .map(|m| metrics::value(&rec.metrics, m))
            .collect();
        row.extend(values.iter().map(|v| cell(v.as_ref())));
        row.push(rec.error.clone().unwrap_or_default());
        push_row(&mut csv, &row);

        let mut line = String::from("{");
        let mut field = |key: &str, value: &Json| {
            if line.len() > 1 {
                line.push(',');
            }
            line.push_str(&Json::from(key).to_string());
            line.push(':');
            line.push_str(&value.to_string());
        };
        field("run", &Json::from(run.id.as_str()));
        field("status", &Json::from(rec.status.name()));
        for (c, v) in plan.columns.iter().zip(&run.values) {
            field(c, &Json::from(v.as_str()));
        }
        for (m, v) in metrics.iter().zip(&values) {
            field(m, v.as_ref().unwrap_or(&Json::Null));
        }
        if let Some(e) = &rec.error {
            field("error", &Json::from(e.as_str()));
        }
        line.push_str("}\n");
        jsonl.push_str(&spu_io::quote::json(&line));
    }
    Report {
        csv,
        jsonl,
        metrics,
        missing,
        unknown_metrics,
    }
}

/// Appends one CSV line (RFC 4180 quoting) of cells escaped as one line of text
/// from the user ([`spu_io::quote::escape_distinct`]: a record's strings may hold
/// control characters and line breaks, which would forge rows, and two different
/// values stay two different cells).
fn push_row(out: &mut String, cells: &[String]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let c = spu_io::quote::escape_distinct(c);
        if c.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&c.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(&c);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line break and a backslash followed by `n` stay two different cells.
    #[test]
    fn different_values_stay_different_cells() {
        let mut s = String::new();
        push_row(&mut s, &["x\ny".into(), r"x\ny".into(), "\u{1b}".into()]);
        assert_eq!(s, r"x\ny,x\\ny,\u{1b}".to_string() + "\n");
    }

    #[test]
    fn cells_with_separators_are_quoted() {
        let mut s = String::new();
        push_row(
            &mut s,
            &["a".into(), "b,c".into(), "say \"hi\"".into(), "x\ny".into()],
        );
        assert_eq!(s, "a,\"b,c\",\"say \"\"hi\"\"\",x\\ny\n");
    }

    #[test]
    fn control_characters_in_cells_are_escaped() {
        let mut s = String::new();
        push_row(&mut s, &["\u{1b}[31mred\u{7}".into(), "1".into()]);
        assert_eq!(s, "\\u{1b}[31mred\\u{7},1\n");
    }
}
