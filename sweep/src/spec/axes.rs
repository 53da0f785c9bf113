//! Parsing the `[[axis]]` and `[[exclude]]` tables of a spec: each axis's columns
//! (machine settings, kernel parameters, labels, plain run keys) with their values,
//! zipped keys of one length, extras that set the axis's keys.

use super::walk::{Entry, FIELD_KEYS, Walker, entries, is_string, plain_field};
use super::{Axis, Column, Exclude, Field};
use crate::diag::{Problem, Span};
use spu_io::quote::shorten;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

impl Walker {
    /// The columns of one axis table (or of one of its extras).
    fn columns<'t, 'i>(
        &mut self,
        t: &'t DeTable<'i>,
        allow_extra: bool,
    ) -> (Vec<Column>, Vec<Entry<'t, 'i>>) {
        let mut columns = Vec::new();
        let mut extras = Vec::new();
        for (k, v) in entries(t) {
            let key = k.get_ref().as_ref();
            match key {
                "extra" if allow_extra => extras.push((k, v)),
                "D" | "set" | "label" => {
                    let Some(sub) = self.table(v, key) else {
                        continue;
                    };
                    for (name, values) in entries(sub) {
                        if !self.check_name(name.span(), name.get_ref(), "the column") {
                            continue;
                        }
                        let n = name.get_ref().to_string();
                        let field = match key {
                            "D" => Field::Define(n),
                            "set" => Field::Set(n),
                            _ => Field::Label(n),
                        };
                        if !self.check_column_name(&field, name.span()) {
                            continue;
                        }
                        if let Some(c) = self.column(field, name.span(), values) {
                            columns.push(c);
                        }
                    }
                }
                _ => match plain_field(key) {
                    Some(field) => {
                        if let Some(c) = self.column(field, k.span(), v) {
                            columns.push(c);
                        }
                    }
                    None => {
                        let mut known = FIELD_KEYS.to_vec();
                        if allow_extra {
                            known.push("extra");
                        }
                        self.unknown(k, "an axis", &known);
                    }
                },
            }
        }
        (columns, extras)
    }

    /// A column named by `D.`, `set.` or `label.` must not take the name of a
    /// column the sweep fills itself (`kernel`, `machine`, ...) or of a metric
    /// (`cycles`, `energy.total_j`, ...): it would replace that column, or stand
    /// beside it under the same name.
    fn check_column_name(&mut self, field: &Field, span: Span) -> bool {
        let name = field.column();
        // A machine key (`cb.size_kib`) is a metric only under `machine.`.
        let taken = if FIELD_KEYS.contains(&name.as_str()) {
            "a column every sweep has"
        } else if !matches!(field, Field::Set(_)) && crate::metrics::Catalogue::new().knows(&name) {
            "a metric's name"
        } else {
            return true;
        };
        self.problems.push(
            Problem::at(
                span,
                format!(
                    "`{}` names its column `{}`, which is {taken}",
                    field.spec_key(),
                    shorten(&name)
                ),
            )
            .label("name taken")
            .help("choose another name; results, tables and plots name columns and metrics alike"),
        );
        false
    }

    fn column(&mut self, field: Field, key_span: Span, v: &Spanned<DeValue>) -> Option<Column> {
        let key = field.spec_key();
        let items = self.array(v, &key)?;
        if items.is_empty() {
            self.problems.push(
                Problem::at(v.span(), format!("axis `{key}` has no values"))
                    .label("empty")
                    .help("give at least one value, or move a single value to `[base]`"),
            );
            return None;
        }
        let mut values = Vec::new();
        for item in items.iter() {
            if let Some(s) = self.scalar(item, &key) {
                self.check_plain(&field, &s);
                self.check_set(&field, &s, is_string(item));
                values.push(s);
            }
        }
        (values.len() == items.len()).then_some(Column {
            field,
            key_span,
            values,
        })
    }

    pub(super) fn axis(&mut self, span: Span, t: &DeTable) -> Option<Axis> {
        let (columns, extra_entries) = self.columns(t, true);
        if columns.is_empty() {
            if !t.is_empty() && extra_entries.len() < t.len() {
                return None; // its keys were already reported
            }
            self.problems.push(
                Problem::at(span, "an `[[axis]]` without values")
                    .label("no axis keys")
                    .help("add a key with a list of values, e.g. `D.N = [128, 256]`"),
            );
            return None;
        }
        let zipped = self.zipped(&columns);
        let ok = zipped && self.unique_points(&[], &columns);
        let mut extra = Vec::new();
        for (_, v) in extra_entries {
            let Some(named) = self.table(v, "extra") else {
                continue;
            };
            for (name, values) in entries(named) {
                if !self.check_name(name.span(), name.get_ref(), "the extra") {
                    continue;
                }
                let Some(vt) = self.table(values, "extra") else {
                    continue;
                };
                let (cols, _) = self.columns(vt, false);
                // Points of the axis exist only when its columns are zipped.
                if self.zipped(&cols)
                    && self.same_fields(&columns, &cols, name.span())
                    && (!zipped || self.unique_points(&columns, &cols))
                {
                    extra.push((name.get_ref().to_string(), name.span(), cols));
                }
            }
        }
        ok.then_some(Axis {
            span,
            columns,
            extra,
        })
    }

    /// Columns of one axis vary together, so they need as many values each.
    fn zipped(&mut self, columns: &[Column]) -> bool {
        let Some(first) = columns.first() else {
            return true;
        };
        let mut ok = true;
        for c in &columns[1..] {
            if c.values.len() != first.values.len() {
                ok = false;
                self.problems.push(
                    Problem::at(
                        c.key_span.clone(),
                        format!(
                            "`{}` has {} but `{}` in the same axis has {}",
                            c.field.spec_key(),
                            crate::count(c.values.len(), "value"),
                            first.field.spec_key(),
                            first.values.len()
                        ),
                    )
                    .label("keys of one axis vary together")
                    .help("give both the same number of values, or put them in separate `[[axis]]` tables to combine every value with every other"),
                );
            }
        }
        let mut seen = std::collections::HashSet::new();
        for c in columns {
            if !seen.insert(c.field.column()) {
                ok = false;
                self.problems.push(
                    Problem::at(
                        c.key_span.clone(),
                        format!("column `{}` is set twice in one axis", c.field.column()),
                    )
                    .label("duplicate"),
                );
            }
        }
        ok
    }

    /// Two points of one axis (with its extras) that set every key alike would be
    /// one run: refused at the second, with the duplicated values. `earlier` holds
    /// the points the `columns` (zipped, of equal length) must differ from too.
    fn unique_points(&mut self, earlier: &[Column], columns: &[Column]) -> bool {
        fn point(columns: &[Column], i: usize) -> Vec<(String, String)> {
            let mut p: Vec<(String, String)> = columns
                .iter()
                .map(|c| {
                    let text = &c.values[i].text;
                    let value = match c.field {
                        // `./k.spu`, `k.spu` and `sub//k.spu` name one file.
                        Field::Kernel | Field::Machine | Field::Model => {
                            let path: std::path::PathBuf = std::path::Path::new(text)
                                .components()
                                .filter(|c| !matches!(c, std::path::Component::CurDir))
                                .collect();
                            path.display().to_string()
                        }
                        _ => text.clone(),
                    };
                    (c.field.spec_key(), value)
                })
                .collect();
            p.sort();
            p
        }
        let len = |cols: &[Column]| cols.first().map_or(0, |c| c.values.len());
        let mut seen: std::collections::HashSet<Vec<(String, String)>> =
            (0..len(earlier)).map(|i| point(earlier, i)).collect();
        let mut ok = true;
        for i in 0..len(columns) {
            let p = point(columns, i);
            if seen.contains(&p) {
                ok = false;
                let shown: Vec<String> = p
                    .iter()
                    .map(|(k, v)| format!("`{k} = {}`", shorten(v)))
                    .collect();
                self.problems.push(
                    Problem::at(
                        columns[0].values[i].span.clone(),
                        format!(
                            "the axis gives {} twice; the two would be one run",
                            shown.join(", ")
                        ),
                    )
                    .label("duplicate value")
                    .help("remove the repeated value, or change it"),
                );
            }
            seen.insert(p);
        }
        ok
    }

    fn same_fields(&mut self, axis: &[Column], extra: &[Column], span: Span) -> bool {
        let mut a: Vec<String> = axis.iter().map(|c| c.field.spec_key()).collect();
        let mut b: Vec<String> = extra.iter().map(|c| c.field.spec_key()).collect();
        a.sort();
        b.sort();
        if a == b {
            return true;
        }
        self.problems.push(
            Problem::at(span, "extra values must set the same keys as their axis")
                .label(format!("sets {}", b.join(", ")))
                .help(format!("the axis sets {}", a.join(", "))),
        );
        false
    }

    pub(super) fn exclude(&mut self, span: Span, t: &DeTable) -> Exclude {
        let mut conditions = Vec::new();
        for (k, v) in entries(t) {
            let col = k.get_ref().to_string();
            let values = match v.get_ref() {
                DeValue::Array(items) => {
                    items.iter().filter_map(|i| self.scalar(i, &col)).collect()
                }
                _ => self.scalar(v, &col).into_iter().collect(),
            };
            conditions.push((col, k.span(), values));
        }
        if conditions.is_empty() {
            self.problems.push(
                Problem::at(
                    span.clone(),
                    "an empty `[[exclude]]` would exclude every run",
                )
                .label("no conditions")
                .help("name columns and values, e.g. `machine = \"spu-4x4-dma\"`"),
            );
        }
        Exclude { span, conditions }
    }
}
