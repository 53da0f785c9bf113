//! Parsing a `[[table]]` of a spec: a summary table of one metric (or a sum of
//! metrics) by row and column, optionally relative to one column, with a row of
//! means. Rendering is [`crate::summary`].

use super::rules::{MAX_DIGITS, digits_ok, needs_base, scale_ok};
use super::walk::{Walker, entries};
use super::{TableFormat, TableRows, TableSpec};
use crate::diag::{Problem, Span};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

const TABLE_KEYS: &[&str] = &[
    "name",
    "title",
    "rows",
    "value",
    "columns",
    "where",
    "relative_to",
    "format",
    "scale",
    "digits",
    "mean",
    "per",
];

impl Walker {
    /// One metric key or an array of them (summed).
    fn metric_list(&mut self, v: &Spanned<DeValue>, key: &str) -> Vec<String> {
        match v.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .filter_map(|i| self.string(i, key).map(|s| s.text))
                .collect(),
            _ => self.string(v, key).map(|s| s.text).into_iter().collect(),
        }
    }

    /// `rows = [["LABEL", "METRIC", ...], ...]`: fixed rows of summed metrics.
    fn metric_rows(&mut self, v: &Spanned<DeValue>) -> Vec<(String, Vec<String>)> {
        let mut rows = Vec::new();
        for row in self.array(v, "rows").unwrap_or_default() {
            let items: Vec<String> = self
                .array(row, "rows")
                .unwrap_or_default()
                .iter()
                .filter_map(|i| self.string(i, "rows").map(|s| s.text))
                .collect();
            match items.split_first() {
                Some((label, metrics)) if !metrics.is_empty() => {
                    rows.push((label.clone(), metrics.to_vec()));
                }
                _ => self.problems.push(
                    Problem::at(row.span(), "a row needs a label and at least one metric")
                        .label("incomplete row")
                        .help("e.g. [\"off-chip\", \"energy.components.DRAMP\", \"energy.components.MCP\"]"),
                ),
            }
        }
        rows
    }

    /// A `[[table]]`; `None` when it is unusable (the problems say why).
    pub(super) fn summary(&mut self, span: Span, t: &DeTable) -> Option<TableSpec> {
        let mut name = None;
        // A `name` that is there but unusable has its own problem already.
        let mut name_given = false;
        let mut title = None;
        let mut columns = None;
        let mut row_column: Option<Spanned<String>> = None;
        let mut metric_rows = None;
        let mut value = Vec::new();
        let mut filters = Vec::new();
        let mut relative_to = None;
        let mut format = TableFormat::Number;
        let mut scale = 1.0;
        let mut digits = None;
        let mut mean = Vec::new();
        let mut per = Vec::new();
        for (k, v) in entries(t) {
            let key = k.get_ref().as_ref();
            match key {
                "name" => {
                    name_given = true;
                    name = self.file_stem(v, "table");
                }
                "title" => title = self.string(v, key).map(|s| s.text),
                "columns" => columns = self.string(v, key).map(|s| s.text),
                "rows" => match v.get_ref() {
                    DeValue::String(s) => row_column = Some(Spanned::new(v.span(), s.to_string())),
                    DeValue::Array(_) => metric_rows = Some(self.metric_rows(v)),
                    _ => self.expected(v, key, "a column name or an array of rows"),
                },
                "value" => value = self.metric_list(v, key),
                "per" => per = self.metric_list(v, key),
                "where" => {
                    if let Some(sub) = self.table(v, key) {
                        for (col, val) in entries(sub) {
                            if let Some(s) = self.scalar(val, col.get_ref()) {
                                filters.push((col.get_ref().to_string(), s.text));
                            }
                        }
                    }
                }
                "relative_to" => relative_to = self.scalar(v, key).map(|s| s.text),
                "format" => {
                    if let Some(s) = self.string(v, key) {
                        format = match s.text.as_str() {
                            "number" => TableFormat::Number,
                            "ratio" => TableFormat::Ratio,
                            "speedup" => TableFormat::Speedup,
                            "percent" => TableFormat::Percent,
                            _ => {
                                self.problems.push(
                                    Problem::at(
                                        s.span,
                                        format!("unknown table format `{}`", s.text),
                                    )
                                    .label("expected \"number\", \"ratio\", \"speedup\" or \"percent\""),
                                );
                                format
                            }
                        };
                    }
                }
                "scale" => match v.get_ref() {
                    DeValue::Float(f) => match f.as_str().parse::<f64>() {
                        Ok(x) if scale_ok(x) => scale = x,
                        _ => self.expected(v, key, "a finite, non-zero number"),
                    },
                    DeValue::Integer(_) => {
                        if let Some(n) = self.bounded(v, key, (1, 1 << 53), "") {
                            scale = n as f64;
                        }
                    }
                    _ => self.expected(v, key, "a number"),
                },
                "digits" => match v.get_ref() {
                    DeValue::Integer(i) if i.as_str().parse::<usize>().is_ok_and(digits_ok) => {
                        digits = i.as_str().parse().ok();
                    }
                    _ => self.expected(v, key, &format!("an integer from 0 to {MAX_DIGITS}")),
                },
                "mean" => {
                    for m in self.array(v, key).unwrap_or_default() {
                        if let Some(s) = self.scalar(m, key) {
                            mean.push(s.text);
                        }
                    }
                }
                _ => self.unknown(k, "a `[[table]]`", TABLE_KEYS),
            }
        }
        if needs_base(format) && relative_to.is_none() {
            self.problems.push(
                Problem::at(span.clone(), "a ratio or percent table needs `relative_to`")
                    .label("relative to what?")
                    .help("name a value of the `columns` column, e.g. `relative_to = \"spu-4x4\"`"),
            );
            return None;
        }
        let rows = match (row_column, metric_rows) {
            (Some(c), None) if !value.is_empty() => TableRows::Column {
                column: c.into_inner(),
                value,
            },
            (Some(c), None) => {
                self.problems.push(
                    Problem::at(c.span(), "rows by a column need a `value`")
                        .label("one row per value of this column")
                        .help("give the metric of the cells, e.g. `value = \"cycles\"`"),
                );
                return None;
            }
            (None, Some(rows)) if value.is_empty() => TableRows::Metrics(rows),
            (None, Some(_)) => {
                self.problems.push(
                    Problem::at(span, "a table of metric rows takes no `value`")
                        .label("each row names its metrics"),
                );
                return None;
            }
            _ => {
                self.problems.push(
                    Problem::at(span, "a table needs `rows`")
                        .label("incomplete table")
                        .help("`rows = \"N\"` (a column) with `value = \"METRIC\"`, or `rows = [[\"LABEL\", \"METRIC\", ...], ...]`"),
                );
                return None;
            }
        };
        let Some(columns) = columns else {
            self.problems.push(
                Problem::at(span, "a table needs `columns`")
                    .label("incomplete table")
                    .help("the column whose values head the table's columns, e.g. `columns = \"machine\"`"),
            );
            return None;
        };
        let Some(name) = name else {
            if !name_given {
                self.problems.push(
                    Problem::at(span, "a table needs a `name`").label("names tables/NAME.md"),
                );
            }
            return None;
        };
        Some(TableSpec {
            name,
            title,
            columns,
            rows,
            filters,
            relative_to,
            format,
            scale,
            digits,
            mean,
            per,
        })
    }
}
