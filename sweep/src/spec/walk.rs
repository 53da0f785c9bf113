//! Walking the TOML tree of a spec (with spans) into a [`Spec`], collecting every
//! problem on the way: unknown keys, wrong types, values the machine table or the
//! allowed choices reject. The top level and `[base]` are here; axes, plots and
//! tables have their own modules.

use super::rules::{NameFault, name_fault, plain_name, repeats};
use super::{
    DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT_S, Field, MAX_MEMORY_MIB, MAX_NAME_BYTES, MAX_TIMEOUT_S,
    MIN_MEMORY_MIB, Spec, Value,
};
use crate::diag::{Problem, Span};
use spu_io::quote::shorten;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "model",
    "metrics",
    "timeout_s",
    "memory_mib",
    "base",
    "axis",
    "exclude",
    "plot",
    "table",
];
pub(super) const FIELD_KEYS: &[&str] = &[
    "kernel",
    "machine",
    "model",
    "grid",
    "boundary",
    "passes",
    "functional",
    "max_cycles",
    "spin_limit",
    "D",
    "set",
    "label",
];

pub(super) type Entry<'t, 'i> = (
    &'t Spanned<std::borrow::Cow<'i, str>>,
    &'t Spanned<DeValue<'i>>,
);

/// A table's entries in the order they were written.
pub(super) fn entries<'t, 'i>(t: &'t DeTable<'i>) -> Vec<Entry<'t, 'i>> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

fn type_name(v: &DeValue) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Collects problems while turning the TOML tree into a [`Spec`].
#[derive(Default)]
pub(super) struct Walker {
    pub(super) problems: Vec<Problem>,
}

impl Walker {
    pub(super) fn unknown(
        &mut self,
        key: &Spanned<std::borrow::Cow<str>>,
        place: &str,
        known: &[&str],
    ) {
        let list = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        // A typo of a known key is named first.
        let typo = known
            .iter()
            .map(|k| (edit_distance(key.get_ref(), k), *k))
            .min()
            .filter(|&(d, _)| d <= 2)
            .map_or_else(String::new, |(_, k)| format!("did you mean `{k}`? "));
        self.problems.push(
            Problem::at(
                key.span(),
                format!("unknown key `{}` in {place}", shorten(key.get_ref())),
            )
            .label("not a spec key")
            .help(format!("{typo}expected one of {list}")),
        );
    }

    pub(super) fn expected(&mut self, v: &Spanned<DeValue>, key: &str, what: &str) {
        let mut problem = Problem::at(
            v.span(),
            format!("`{key}` must be {what}, not {}", type_name(v.get_ref())),
        )
        .label(format!("expected {what}"));
        // `timeout_s = "60"`: TOML reads a quoted number as a string.
        if let DeValue::String(s) = v.get_ref()
            && !what.contains("string")
            && let Some(hint) = spu_io::quote::unquote_hint(s)
        {
            problem = problem.help(hint);
        }
        self.problems.push(problem);
    }

    /// A scalar as text (strings as written, numbers in decimal, booleans).
    pub(super) fn scalar(&mut self, v: &Spanned<DeValue>, key: &str) -> Option<Value> {
        let text = match v.get_ref() {
            DeValue::String(s) => s.to_string(),
            DeValue::Integer(i) => match i128::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => n.to_string(),
                Err(_) => {
                    self.expected(v, key, "an integer that fits in 64 bits");
                    return None;
                }
            },
            DeValue::Float(f) => f.as_str().to_string(),
            DeValue::Boolean(b) => b.to_string(),
            _ => {
                self.expected(v, key, "a string, number or boolean");
                return None;
            }
        };
        Some(Value {
            text,
            span: v.span(),
        })
    }

    pub(super) fn string(&mut self, v: &Spanned<DeValue>, key: &str) -> Option<Value> {
        match v.get_ref() {
            DeValue::String(s) => Some(Value {
                text: s.to_string(),
                span: v.span(),
            }),
            _ => {
                self.expected(v, key, "a string");
                None
            }
        }
    }

    /// An integer in `min..=max` (`unit` names what it counts, for the message).
    pub(super) fn bounded(
        &mut self,
        v: &Spanned<DeValue>,
        key: &str,
        (min, max): (u64, u64),
        unit: &str,
    ) -> Option<u64> {
        let what = format!("an integer from {min} to {max} {unit}");
        let DeValue::Integer(i) = v.get_ref() else {
            self.expected(v, key, &what);
            return None;
        };
        // An integer out of range is named as one, with the range it must be in.
        let n = i128::from_str_radix(i.as_str(), i.radix()).ok();
        match n {
            Some(n) if (i128::from(min)..=i128::from(max)).contains(&n) => Some(n as u64),
            _ => {
                let shown = n.map_or_else(|| shorten(i.as_str()), |n| n.to_string());
                self.problems.push(
                    Problem::at(
                        v.span(),
                        format!("`{key}` is {shown}, out of range: it must be {what}"),
                    )
                    .label(format!("expected {what}")),
                );
                None
            }
        }
    }

    /// A name that becomes a file name or a column: plain and short.
    /// The `name` of a plot or table (`what`): it names a file, so a plain stem.
    pub(super) fn file_stem(&mut self, v: &Spanned<DeValue>, what: &str) -> Option<String> {
        let s = self.string(v, "name")?;
        match name_fault(&s.text) {
            None => Some(s.text),
            Some(NameFault::NotPlain) => {
                self.problems.push(
                    Problem::at(s.span, format!("a {what} name must be a plain file stem"))
                        .label("no slashes, not empty, not starting with `.`"),
                );
                None
            }
            Some(NameFault::TooLong) => {
                self.check_name(s.span.clone(), &s.text, &format!("the {what} name"));
                None
            }
        }
    }

    pub(super) fn check_name(&mut self, span: Span, name: &str, what: &str) -> bool {
        if name.len() > MAX_NAME_BYTES {
            self.problems.push(
                Problem::at(
                    span,
                    format!(
                        "{what} `{}` is longer than {MAX_NAME_BYTES} bytes",
                        shorten(name)
                    ),
                )
                .label("too long")
                .help("use a short name"),
            );
            return false;
        }
        true
    }

    pub(super) fn array<'t, 'i>(
        &mut self,
        v: &'t Spanned<DeValue<'i>>,
        key: &str,
    ) -> Option<&'t [Spanned<DeValue<'i>>]> {
        match v.get_ref() {
            DeValue::Array(a) => Some(a),
            _ => {
                self.expected(v, key, "an array");
                None
            }
        }
    }

    pub(super) fn table<'t, 'i>(
        &mut self,
        v: &'t Spanned<DeValue<'i>>,
        key: &str,
    ) -> Option<&'t DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => {
                self.expected(v, key, "a table");
                None
            }
        }
    }

    pub(super) fn spec(
        &mut self,
        file: &str,
        text: &str,
        dir: &Path,
        stem: &str,
        root: &DeTable,
    ) -> Spec {
        let mut spec = Spec {
            file: file.to_string(),
            path: None,
            mode: crate::files::OPEN_MODE,
            dir: dir.to_path_buf(),
            allowed: Vec::new(),
            text: text.to_string(),
            name: stem.to_string(),
            description: String::new(),
            model: Value {
                text: "default".into(),
                span: 0..0,
            },
            metrics: Vec::new(),
            timeout_s: DEFAULT_TIMEOUT_S,
            memory_mib: DEFAULT_MEMORY_MIB,
            base: Vec::new(),
            axes: Vec::new(),
            excludes: Vec::new(),
            plots: Vec::new(),
            tables: Vec::new(),
        };
        let named = root.get("name").is_some();
        if !named && (!plain_name(stem) || stem.len() > MAX_NAME_BYTES) {
            self.problems.push(
                Problem::whole(format!(
                    "the sweep is named after its file, and `{}` cannot name a sweep",
                    shorten(stem)
                ))
                .help(format!(
                    "add `name = \"...\"` to the spec (letters, digits, `-`, `_` and `.`, at most {MAX_NAME_BYTES} bytes), or rename the file"
                )),
            );
        }
        for (k, v) in entries(root) {
            let key = k.get_ref().as_ref();
            match key {
                "name" => {
                    if let Some(s) = self.string(v, key) {
                        if !plain_name(&s.text) {
                            self.problems.push(
                                Problem::at(
                                    s.span,
                                    format!("`{}` cannot name a sweep", shorten(&s.text)),
                                )
                                .label("names the results folder")
                                .help(
                                    "use letters, digits, `-`, `_` and `.`, not starting with `.`",
                                ),
                            );
                        } else if self.check_name(s.span.clone(), &s.text, "the sweep name") {
                            spec.name = s.text;
                        }
                    }
                }
                "description" => {
                    if let Some(s) = self.string(v, key) {
                        spec.description = s.text;
                    }
                }
                "model" => {
                    if let Some(s) = self.string(v, key) {
                        spec.model = s;
                    }
                }
                "metrics" => {
                    for m in self.array(v, key).unwrap_or_default() {
                        if let Some(s) = self.string(m, "metrics") {
                            spec.metrics.push(s);
                        }
                    }
                }
                "timeout_s" => {
                    spec.timeout_s = self
                        .bounded(v, key, (1, MAX_TIMEOUT_S), "seconds")
                        .unwrap_or(spec.timeout_s)
                }
                "memory_mib" => {
                    spec.memory_mib = self
                        .bounded(v, key, (MIN_MEMORY_MIB, MAX_MEMORY_MIB), "MiB")
                        .unwrap_or(spec.memory_mib)
                }
                "base" => {
                    if let Some(t) = self.table(v, key) {
                        spec.base = self.base(t);
                    }
                }
                "axis" => {
                    for a in self.array(v, "axis").unwrap_or_default() {
                        if let Some(t) = self.table(a, "axis") {
                            if let Some(axis) = self.axis(a.span(), t) {
                                spec.axes.push(axis);
                            }
                        }
                    }
                }
                "exclude" => {
                    for e in self.array(v, "exclude").unwrap_or_default() {
                        if let Some(t) = self.table(e, "exclude") {
                            spec.excludes.push(self.exclude(e.span(), t));
                        }
                    }
                }
                "plot" => {
                    for (i, p) in self.array(v, "plot").unwrap_or_default().iter().enumerate() {
                        if let Some(t) = self.table(p, "plot") {
                            if let Some(plot) = self.plot(p.span(), t, &spec.name, i) {
                                spec.plots.push((p.span(), plot));
                            }
                        }
                    }
                }
                "table" => {
                    for t in self.array(v, "table").unwrap_or_default() {
                        if let Some(tab) = self.table(t, "table") {
                            if let Some(table) = self.summary(t.span(), tab) {
                                spec.tables.push((t.span(), table));
                            }
                        }
                    }
                }
                _ => self.unknown(k, "the spec", TOP_KEYS),
            }
        }
        let plots = spec.plots.iter().map(|(s, p)| (s, &p.name));
        self.unique_names(text, plots, "[[plot]]", "plots/{}.svg");
        let tables = spec.tables.iter().map(|(s, t)| (s, &t.name));
        self.unique_names(text, tables, "[[table]]", "tables/{}.md");
        spec
    }

    /// Two plots (or tables) of one name would write one file, the second over
    /// the first: refused at the second, naming the first's line.
    fn unique_names<'a>(
        &mut self,
        text: &str,
        items: impl Iterator<Item = (&'a Span, &'a String)>,
        what: &str,
        file: &str,
    ) {
        let line = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
        let items: Vec<(&Span, &String)> = items.collect();
        for (first, second) in repeats(items.iter().map(|(_, n)| n.as_str())) {
            let (first, (span, name)) = (items[first].0, items[second]);
            self.problems.push(
                Problem::at(
                    span.clone(),
                    format!(
                        "two `{what}`s are named `{}` (lines {} and {}); both would write `{}`",
                        shorten(name),
                        line(first.start),
                        line(span.start),
                        file.replace("{}", &shorten(name)),
                    ),
                )
                .label(format!("second `{what}` named `{}`", shorten(name)))
                .help("give each a `name` of its own"),
            );
        }
    }

    /// `[base]`: one value per field; `set` as `["KEY=VALUE", ...]` or a table.
    fn base(&mut self, t: &DeTable) -> Vec<(Field, Value)> {
        let mut out = Vec::new();
        for (k, v) in entries(t) {
            let key = k.get_ref().as_ref();
            match key {
                "D" => {
                    let Some(sub) = self.table(v, key) else {
                        continue;
                    };
                    for (name, value) in entries(sub) {
                        if !self.check_name(name.span(), name.get_ref(), "the kernel parameter") {
                            continue;
                        }
                        let field = Field::Define(name.get_ref().to_string());
                        if let Some(s) = self.scalar(value, &field.spec_key()) {
                            out.push((field, s));
                        }
                    }
                }
                "label" => self.problems.push(
                    Problem::at(k.span(), "labels belong to axes, not to `[base]`")
                        .label("the same for every run")
                        .help("`label.NAME = [...]` in an `[[axis]]` names that axis's values"),
                ),
                "set" => match v.get_ref() {
                    DeValue::Array(items) => {
                        for item in items.iter() {
                            let Some(s) = self.string(item, "set") else {
                                continue;
                            };
                            match s.text.split_once('=') {
                                Some((k, val)) if !k.trim().is_empty() => {
                                    let field = Field::Set(k.trim().to_string());
                                    let value = Value {
                                        text: val.trim().to_string(),
                                        span: s.span.clone(),
                                    };
                                    self.check_set(&field, &value, false);
                                    if let Some((_, first)) = out.iter().find(|(f, _)| *f == field) {
                                        // The last would win without a word, as two
                                        // `--set`s of one key would not.
                                        self.problems.push(
                                            Problem::at(
                                                value.span.clone(),
                                                format!(
                                                    "`{}` is set twice in `set` (to {} and to {})",
                                                    shorten(k.trim()),
                                                    shorten(&first.text),
                                                    shorten(&value.text)
                                                ),
                                            )
                                            .label("second value")
                                            .help("give each key once; to compare values, put them on an `[[axis]]` as `set.\"KEY\" = [...]`"),
                                        );
                                        continue;
                                    }
                                    out.push((field, value));
                                }
                                _ => self.problems.push(
                                    Problem::at(s.span, format!("`{}` is not KEY=VALUE", shorten(&s.text)))
                                        .label("expected KEY=VALUE")
                                        .help("write machine settings as \"sm.warp_size=32\" (`spu-emu --list-params` shows every key)"),
                                ),
                            }
                        }
                    }
                    DeValue::Table(sub) => {
                        for (name, value) in entries(sub) {
                            let field = Field::Set(name.get_ref().to_string());
                            if let Some(s) = self.scalar(value, &field.spec_key()) {
                                self.check_set(&field, &s, is_string(value));
                                out.push((field, s));
                            }
                        }
                    }
                    _ => self.expected(v, "set", "an array of \"KEY=VALUE\" or a table"),
                },
                _ => match plain_field(key) {
                    Some(field) => {
                        if let Some(s) = self.scalar(v, key) {
                            self.check_plain(&field, &s);
                            out.push((field, s));
                        }
                    }
                    None => self.unknown(k, "`[base]`", FIELD_KEYS),
                },
            }
        }
        out
    }

    /// Checks a value of a field whose values are known without files.
    pub(super) fn check_plain(&mut self, field: &Field, v: &Value) {
        let allowed: &[&str] = match field {
            Field::Boundary => &["iu", "dma"],
            Field::Passes => &["overlapped", "sequential"],
            Field::Functional => &["true", "false"],
            _ => &[],
        };
        if !allowed.is_empty() && !allowed.contains(&v.text.as_str()) {
            self.problems.push(
                Problem::at(
                    v.span.clone(),
                    format!("`{}` is not a valid `{}`", shorten(&v.text), field.column()),
                )
                .label(format!("expected {}", allowed.join(" or "))),
            );
        }
        if *field == Field::MaxCycles && v.text.parse::<u64>().map_or(true, |n| n == 0) {
            self.problems.push(
                Problem::at(
                    v.span.clone(),
                    format!("`{}` is not a cycle count", shorten(&v.text)),
                )
                .label("expected a positive integer"),
            );
        }
        if *field == Field::SpinLimit && v.text.parse::<u64>().is_err() {
            self.problems.push(
                Problem::at(
                    v.span.clone(),
                    format!("`{}` is not a spin limit", shorten(&v.text)),
                )
                .label("expected a whole number of warp instructions (0: no limit)"),
            );
        }
    }

    /// Checks a machine setting against the parameter table; `quoted` when the
    /// spec wrote the value as a TOML string, which a number may not be (a
    /// string is a word: `"8"` for a size is a typo, as `8` would be for a name).
    pub(super) fn check_set(&mut self, field: &Field, v: &Value, quoted: bool) {
        let Field::Set(key) = field else { return };
        if quoted
            && matches!(
                spu_emu::machine::param::RawValue::from_text(&v.text),
                spu_emu::machine::param::RawValue::Int(_)
                    | spu_emu::machine::param::RawValue::BigInt(_)
                    | spu_emu::machine::param::RawValue::Float(_)
            )
        {
            self.problems.push(
                Problem::at(
                    v.span.clone(),
                    format!(
                        "machine setting `{}` is given the string \"{}\"",
                        shorten(key),
                        shorten(&v.text)
                    ),
                )
                .label("a string, not a number")
                .help(format!(
                    "write the number without quotes: `{}`",
                    shorten(&v.text)
                )),
            );
            return;
        }
        if let Err(e) = spu_emu::Machine::default().set(&format!("{key}={}", v.text)) {
            self.problems.push(
                Problem::at(v.span.clone(), e.to_string())
                    .label("not a valid machine setting")
                    .help("`spu-emu --list-params` lists every key with its range"),
            );
        }
    }
}

pub(super) fn plain_field(key: &str) -> Option<Field> {
    Some(match key {
        "kernel" => Field::Kernel,
        "machine" => Field::Machine,
        "model" => Field::Model,
        "grid" => Field::Grid,
        "boundary" => Field::Boundary,
        "passes" => Field::Passes,
        "functional" => Field::Functional,
        "max_cycles" => Field::MaxCycles,
        "spin_limit" => Field::SpinLimit,
        _ => return None,
    })
}

/// Whether a TOML value was written as a string.
pub(super) fn is_string(v: &Spanned<DeValue>) -> bool {
    matches!(v.get_ref(), DeValue::String(_))
}

/// Edits (insertions, deletions, substitutions) between two keys; a key longer
/// than any known one is far from all of them without being compared.
fn edit_distance(a: &str, b: &str) -> usize {
    if a.len() > 64 {
        return usize::MAX;
    }
    spu_io::suggest::distance(a, b)
}
