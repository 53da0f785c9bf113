//! The rules a plot or a summary table keeps wherever it comes from: a spec, whose
//! walk ([`super::walk`]) reports a break at its key, or a `plan.json` read back
//! ([`check_reports`]), which is refused as damaged when one is broken. A name is
//! a plain file stem (it names `plots/NAME.svg` or `tables/NAME.md` inside the
//! results folder) and names one plot or one table; a plot's kind is one the
//! plotter draws; a table's scale is finite and non-zero, its decimals at most
//! [`MAX_DIGITS`], and a relative format has a base column.

use super::{MAX_NAME_BYTES, PlotSpec, TableFormat, TableRows, TableSpec};
use spu_io::quote::shorten;

/// Most decimals a table cell is written with.
pub const MAX_DIGITS: usize = 12;

/// The kinds of plot ([`PlotSpec::kind`]).
pub const PLOT_KINDS: &[&str] = &["line", "bars"];

/// Why a name cannot name a file of the results folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameFault {
    /// Empty, starting with `.`, or with a character other than a letter, a
    /// digit, `-`, `_` or `.` (a slash would leave the folder).
    NotPlain,
    /// Longer than [`MAX_NAME_BYTES`].
    TooLong,
}

/// Letters, digits, `-`, `_` and `.`, not empty and not starting with `.`.
pub fn plain_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why `name` cannot be the stem of a file in the results folder, if it cannot.
pub fn name_fault(name: &str) -> Option<NameFault> {
    if !plain_name(name) {
        Some(NameFault::NotPlain)
    } else if name.len() > MAX_NAME_BYTES {
        Some(NameFault::TooLong)
    } else {
        None
    }
}

/// Whether a table's `scale` can multiply its cells.
pub fn scale_ok(scale: f64) -> bool {
    scale.is_finite() && scale != 0.0
}

/// Whether cells can be written with `digits` decimals.
pub fn digits_ok(digits: usize) -> bool {
    digits <= MAX_DIGITS
}

/// Whether a plot can be drawn as `kind`.
pub fn kind_ok(kind: &str) -> bool {
    PLOT_KINDS.contains(&kind)
}

/// Whether a table of this format needs `relative_to` (all but plain numbers).
pub fn needs_base(format: TableFormat) -> bool {
    format != TableFormat::Number
}

/// The `(first, later)` positions of names given twice: the later would write
/// the first's file.
pub fn repeats<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(usize, usize)> {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    let mut out = Vec::new();
    for (i, name) in names.enumerate() {
        match seen.get(name) {
            Some(&first) => out.push((first, i)),
            None => {
                seen.insert(name, i);
            }
        }
    }
    out
}

/// A name as a message shows it: escaped, and shortened when long.
fn shown(name: &str) -> String {
    shorten(name)
}

/// What is wrong with a name read back (`what` says whose), if anything.
fn name_problem(name: &str, what: &str) -> Option<String> {
    Some(match name_fault(name)? {
        NameFault::NotPlain => format!(
            "{what} is named `{}`, but a name is a plain file stem (letters, digits, `-`, `_` and `.`, not empty, not starting with `.`)",
            shown(name)
        ),
        NameFault::TooLong => format!(
            "{what} is named `{}`, longer than {MAX_NAME_BYTES} bytes",
            shown(name)
        ),
    })
}

fn plot_problem(n: usize, p: &PlotSpec) -> Option<String> {
    let what = format!("plot {n}");
    if let Some(why) = name_problem(&p.name, &what) {
        return Some(why);
    }
    match &p.kind {
        Some(kind) if !kind_ok(kind) => Some(format!(
            "{what} (`{}`) has `kind = \"{}\"`, but a plot is drawn as \"line\" or \"bars\"",
            shown(&p.name),
            shown(kind)
        )),
        _ => None,
    }
}

fn table_problem(n: usize, t: &TableSpec) -> Option<String> {
    let what = format!("table {n}");
    if let Some(why) = name_problem(&t.name, &what) {
        return Some(why);
    }
    let what = format!("{what} (`{}`)", shown(&t.name));
    if !scale_ok(t.scale) {
        return Some(format!(
            "{what} has `scale = {}`, but a scale is a finite, non-zero number",
            t.scale
        ));
    }
    if let Some(d) = t.digits.filter(|&d| !digits_ok(d)) {
        return Some(format!(
            "{what} has `digits = {d}`, but a table has 0 to {MAX_DIGITS} decimals"
        ));
    }
    if needs_base(t.format) && t.relative_to.is_none() {
        return Some(format!(
            "{what} has a relative `format` but no `relative_to`"
        ));
    }
    let empty = match &t.rows {
        TableRows::Column { value, .. } => value.is_empty(),
        TableRows::Metrics(rows) => rows.iter().any(|(_, m)| m.is_empty()),
    };
    empty.then(|| format!("{what} has a row without a metric"))
}

/// Why the plots and tables of a plan read back cannot be the spec's, if they
/// cannot: each is checked by the rules its spec was, so a `plan.json` edited
/// to name a file outside the folder, or two reports one file, is refused.
pub fn check_reports(plots: &[PlotSpec], tables: &[TableSpec]) -> Result<(), String> {
    let plot = plots
        .iter()
        .enumerate()
        .find_map(|(n, p)| plot_problem(n, p));
    let table = || {
        tables
            .iter()
            .enumerate()
            .find_map(|(n, t)| table_problem(n, t))
    };
    if let Some(why) = plot.or_else(table) {
        return Err(why);
    }
    let twice = |what: &str, names: Vec<&str>, file: &str| {
        repeats(names.iter().copied()).first().map(|&(a, b)| {
            format!(
                "{what}s {a} and {b} are both named `{}`, and would both write `{}`",
                shown(names[a]),
                file.replace("{}", &shown(names[a]))
            )
        })
    };
    let plot_names = plots.iter().map(|p| p.name.as_str()).collect();
    let table_names = tables.iter().map(|t| t.name.as_str()).collect();
    match twice("plot", plot_names, "plots/{}.svg")
        .or_else(|| twice("table", table_names, "tables/{}.md"))
    {
        Some(why) => Err(why),
        None => Ok(()),
    }
}
