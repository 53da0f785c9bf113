//! Parsing a `[[plot]]` of a spec: a metric against a column or a metric, in
//! series by columns, filtered by `where`. Drawing is [`crate::plot`].

use super::PlotSpec;
use super::rules::kind_ok;
use super::walk::{Walker, entries};
use crate::diag::{Problem, Span};
use spu_io::quote::shorten;
use toml::de::{DeTable, DeValue};

const PLOT_KEYS: &[&str] = &[
    "name", "x", "y", "series", "where", "title", "kind", "x_label", "y_label",
];

impl Walker {
    pub(super) fn plot(
        &mut self,
        span: Span,
        t: &DeTable,
        spec_name: &str,
        index: usize,
    ) -> Option<PlotSpec> {
        let mut plot = PlotSpec {
            name: if index == 0 {
                spec_name.to_string()
            } else {
                format!("{spec_name}-{}", index + 1)
            },
            x: String::new(),
            y: String::new(),
            series: Vec::new(),
            filters: Vec::new(),
            title: None,
            kind: None,
            x_label: None,
            y_label: None,
        };
        let mut has = (false, false);
        let mut named = false;
        for (k, v) in entries(t) {
            let key = k.get_ref().as_ref();
            match key {
                "name" => {
                    named = true;
                    if let Some(name) = self.file_stem(v, "plot") {
                        plot.name = name;
                    }
                }
                "x" => {
                    has.0 = true;
                    plot.x = self.string(v, key).map(|s| s.text).unwrap_or_default();
                }
                "y" => {
                    has.1 = true;
                    plot.y = self.string(v, key).map(|s| s.text).unwrap_or_default();
                }
                "series" => match v.get_ref() {
                    DeValue::Array(items) => {
                        plot.series = items
                            .iter()
                            .filter_map(|i| self.string(i, key).map(|s| s.text))
                            .collect();
                    }
                    _ => plot.series = self.string(v, key).map(|s| s.text).into_iter().collect(),
                },
                "where" => {
                    if let Some(sub) = self.table(v, key) {
                        for (col, value) in entries(sub) {
                            if let Some(s) = self.scalar(value, col.get_ref()) {
                                plot.filters.push((col.get_ref().to_string(), s.text));
                            }
                        }
                    }
                }
                "title" => plot.title = self.string(v, key).map(|s| s.text),
                "x_label" => plot.x_label = self.string(v, key).map(|s| s.text),
                "y_label" => plot.y_label = self.string(v, key).map(|s| s.text),
                "kind" => {
                    if let Some(s) = self.string(v, key) {
                        if kind_ok(&s.text) {
                            plot.kind = Some(s.text);
                        } else {
                            self.problems.push(
                                Problem::at(
                                    s.span,
                                    format!("unknown plot kind `{}`", shorten(&s.text)),
                                )
                                .label("expected \"line\" or \"bars\""),
                            );
                        }
                    }
                }
                _ => self.unknown(k, "a `[[plot]]`", PLOT_KEYS),
            }
        }
        // A plot with no `name` is named after the sweep, which may leave no room
        // for its number.
        if !named && !self.check_name(span.clone(), &plot.name, "the plot's default name") {
            return None;
        }
        if !(has.0 && has.1) {
            self.problems.push(
                Problem::at(
                    span,
                    format!("plot `{}` needs both `x` and `y`", shorten(&plot.name)),
                )
                .label("incomplete plot")
                .help("e.g. `x = \"N\"` (a column) and `y = \"energy.total_j\"` (a metric)"),
            );
            return None;
        }
        Some(plot)
    }
}
