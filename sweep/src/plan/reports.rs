//! Checks of what a spec's reports name, made when planning so that a typo fails
//! before any run: metric keys (against every key a run can report), a plot's
//! `x`, a table's `relative_to` and `mean` labels (against the planned runs).

use super::{Planner, Run, columns_phrase, quoted};
use crate::diag::Problem;
use crate::metrics::Catalogue;
use crate::spec::TableRows;
use spu_io::quote::shorten;

impl Planner<'_> {
    /// Every metric a spec names (its `metrics`, plots' `x` and `y`, tables'
    /// values, rows and `per`) must be one some run can report, or a column where
    /// a column may stand.
    pub(super) fn check_metric_names(&mut self, columns: &[String]) {
        let catalogue = Catalogue::new();
        let spec = self.spec;
        let unknown = |what: String, key: &str| -> Problem {
            let hint = match catalogue.closest(key) {
                Some(k) => format!("did you mean `{k}`? "),
                None => String::new(),
            };
            Problem::whole(what).help(format!(
                "{hint}metrics are paths in the stats and energy documents (`cycles`, `offchip.load_words`, `caches.l1.hits`, `energy.total_j`, ...); `spu-sweep metrics DIR` lists those of a finished run"
            ))
        };
        for m in &spec.metrics {
            if !catalogue.knows(&m.text) {
                let what = if m.text.contains('*') {
                    format!("metric pattern `{}` matches no metric", shorten(&m.text))
                } else {
                    format!("`{}` is not a metric", shorten(&m.text))
                };
                let mut p = unknown(what, &m.text);
                p.span = Some(m.span.clone());
                self.problems.push(p.label("no run reports it"));
            }
        }
        for (span, p) in &spec.plots {
            if !columns.contains(&p.x) && !catalogue.knows(&p.x) {
                let mut problem = unknown(
                    format!(
                        "plot `{}`: `x = \"{}\"` is neither a column nor a metric ({})",
                        shorten(&p.name),
                        shorten(&p.x),
                        columns_phrase(columns)
                    ),
                    &p.x,
                );
                problem.span = Some(span.clone());
                self.problems.push(problem);
            }
            if !catalogue.knows(&p.y) {
                let mut problem = unknown(
                    format!(
                        "plot `{}`: `y = \"{}\"` is not a metric",
                        shorten(&p.name),
                        shorten(&p.y)
                    ),
                    &p.y,
                );
                problem.span = Some(span.clone());
                self.problems.push(problem);
            }
        }
        for (span, t) in &spec.tables {
            let named: Vec<&String> = match &t.rows {
                TableRows::Column { value, .. } => value.iter().collect(),
                TableRows::Metrics(rows) => rows.iter().flat_map(|(_, m)| m).collect(),
            };
            for m in named.into_iter().chain(&t.per) {
                if !catalogue.knows(m) {
                    let mut problem = unknown(
                        format!("table `{}`: `{}` is not a metric", t.name, shorten(m)),
                        m,
                    );
                    problem.span = Some(span.clone());
                    self.problems.push(problem);
                }
            }
        }
    }

    /// When every run is functional, no metric the spec names (its `metrics`,
    /// plots' `x` and `y`, tables' values, rows and `per`) may be one only timing
    /// runs report (energy, `cycles`, `time_s`, `ipc`).
    pub(super) fn check_functional_metrics(&mut self, runs: &[Run]) {
        if runs.is_empty() || runs.iter().any(|r| !r.functional) {
            return;
        }
        let spec = self.spec;
        let mut named: Vec<(std::ops::Range<usize>, String, &String)> = Vec::new();
        for m in &spec.metrics {
            named.push((m.span.clone(), "metric".into(), &m.text));
        }
        for (span, p) in &spec.plots {
            let what = format!("plot `{}`", shorten(&p.name));
            named.push((span.clone(), what.clone(), &p.x));
            named.push((span.clone(), what, &p.y));
        }
        for (span, t) in &spec.tables {
            let what = format!("table `{}`", shorten(&t.name));
            let values: Vec<&String> = match &t.rows {
                TableRows::Column { value, .. } => value.iter().collect(),
                TableRows::Metrics(rows) => rows.iter().flat_map(|(_, m)| m).collect(),
            };
            for m in values.into_iter().chain(&t.per) {
                named.push((span.clone(), what.clone(), m));
            }
        }
        for (span, what, key) in named {
            if crate::metrics::needs_timing(key) {
                self.problems.push(
                    Problem::at(
                        span,
                        format!(
                            "{what} `{}`: functional runs do not report it (every run here is functional)",
                            shorten(key)
                        ),
                    )
                    .label("needs timing")
                    .help("energy, `cycles`, `time_s` and `ipc` need timing: remove `functional = true` or name other metrics"),
                );
            }
        }
    }

    /// A table's `relative_to` must be a value of its `columns` column, and each
    /// `mean` label one of its rows, among the planned runs: known before any run.
    pub(super) fn check_table_values(&mut self, columns: &[String], runs: &[Run]) {
        // Each column's distinct values in run order (and as a set), found once:
        // tables may name a column of 100 000 values many times.
        type Distinct = (Vec<String>, std::collections::HashSet<String>);
        let mut distinct: std::collections::HashMap<&str, Distinct> =
            std::collections::HashMap::new();
        for (_, t) in &self.spec.tables {
            let named = std::iter::once(t.columns.as_str()).chain(match &t.rows {
                TableRows::Column { column, .. } => Some(column.as_str()),
                TableRows::Metrics(_) => None,
            });
            for col in named {
                let Some(i) = columns.iter().position(|c| c == col) else {
                    continue;
                };
                distinct.entry(col).or_insert_with(|| {
                    let mut set = std::collections::HashSet::new();
                    let order = runs
                        .iter()
                        .filter(|r| set.insert(r.values[i].clone()))
                        .map(|r| r.values[i].clone())
                        .collect();
                    (order, set)
                });
            }
        }
        let empty: Distinct = Default::default();
        let values_of = |col: &str| distinct.get(col).unwrap_or(&empty);
        for (span, t) in &self.spec.tables {
            if !columns.contains(&t.columns) {
                continue; // already reported as not a column
            }
            let (heads, head_set) = values_of(&t.columns);
            if let Some(b) = &t.relative_to
                && !head_set.contains(b)
            {
                self.problems.push(
                    Problem::at(
                        span.clone(),
                        format!(
                            "table `{}`: `relative_to = \"{}\"` is not a value of `{}`",
                            t.name,
                            shorten(b),
                            t.columns
                        ),
                    )
                    .help(format!(
                        "the runs give `{}` the values {}",
                        t.columns,
                        quoted(heads)
                    )),
                );
            }
            let rows = match &t.rows {
                TableRows::Column { column, .. } if columns.contains(column) => {
                    std::borrow::Cow::Borrowed(values_of(column))
                }
                TableRows::Column { .. } => continue,
                TableRows::Metrics(rows) => {
                    let labels: Vec<String> = rows.iter().map(|(label, _)| label.clone()).collect();
                    let set = labels.iter().cloned().collect();
                    std::borrow::Cow::Owned((labels, set))
                }
            };
            let (rows, row_set) = &*rows;
            for m in &t.mean {
                if !row_set.contains(m) {
                    self.problems.push(
                        Problem::at(
                            span.clone(),
                            format!(
                                "table `{}`: `mean` names row `{}`, which the table does not have",
                                t.name,
                                shorten(m)
                            ),
                        )
                        .help(format!("its rows are {}", quoted(rows))),
                    );
                }
            }
        }
    }
}
