//! The sweep spec (TOML): what every run shares (`[base]`), the axes whose cartesian
//! product makes the runs (`[[axis]]`, several keys in one axis vary together),
//! extra values enabled by name (`[axis.extra.NAME]`), exclusions (`[[exclude]]`),
//! metrics and plots. Parsing walks the TOML tree with spans so every problem points
//! at its key or value ([`walk`]); all problems of a file are reported at once.

mod axes;
mod plot;
pub mod rules;
mod summary;
mod walk;

use crate::diag::{Problem, Span, SpecError};
use std::path::{Path, PathBuf};
use toml::de::DeTable;

/// What one spec key sets in a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The kernel file (`.spu` or `.bin`), relative to the spec.
    Kernel,
    /// A machine preset or machine file.
    Machine,
    /// An energy model: built-in name or model file.
    Model,
    Grid,
    Boundary,
    Passes,
    /// Functional mode (no timing).
    Functional,
    MaxCycles,
    SpinLimit,
    /// A kernel parameter (`-D NAME=VALUE`).
    Define(String),
    /// A machine parameter (`--set KEY=VALUE`).
    Set(String),
    /// A column that only names a value (e.g. `sync = "global"`), for plots and tables.
    Label(String),
}

impl Field {
    /// The results column this field fills.
    pub fn column(&self) -> String {
        match self {
            Field::Kernel => "kernel".into(),
            Field::Machine => "machine".into(),
            Field::Model => "model".into(),
            Field::Grid => "grid".into(),
            Field::Boundary => "boundary".into(),
            Field::Passes => "passes".into(),
            Field::Functional => "functional".into(),
            Field::MaxCycles => "max_cycles".into(),
            Field::SpinLimit => "spin_limit".into(),
            Field::Define(n) | Field::Set(n) | Field::Label(n) => n.clone(),
        }
    }

    /// How the field is written in a spec.
    pub fn spec_key(&self) -> String {
        match self {
            Field::Define(n) => format!("D.{n}"),
            Field::Set(k) => format!("set.\"{k}\""),
            Field::Label(n) => format!("label.{n}"),
            other => other.column(),
        }
    }
}

/// A scalar from the spec as text, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub span: Span,
}

/// One key of an axis and its values.
#[derive(Debug, Clone)]
pub struct Column {
    pub field: Field,
    pub key_span: Span,
    pub values: Vec<Value>,
}

/// One dimension of the product: its columns vary together.
#[derive(Debug, Clone)]
pub struct Axis {
    pub span: Span,
    pub columns: Vec<Column>,
    /// Named extra values (`[axis.extra.NAME]`), appended when enabled.
    pub extra: Vec<(String, Span, Vec<Column>)>,
}

impl Axis {
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Runs to leave out: every listed column equals one of its values.
#[derive(Debug, Clone)]
pub struct Exclude {
    pub span: Span,
    pub conditions: Vec<(String, Span, Vec<Value>)>,
}

/// A plot drawn after the runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// File stem of the SVG.
    pub name: String,
    pub x: String,
    pub y: String,
    #[serde(default)]
    pub series: Vec<String>,
    /// Only runs whose column has this value.
    #[serde(default, rename = "where")]
    pub filters: Vec<(String, String)>,
    #[serde(default)]
    pub title: Option<String>,
    /// `line` or `bars`; by default lines for a numeric x, bars otherwise.
    #[serde(default)]
    pub kind: Option<String>,
    /// What the axes show (by default the column or metric key); the plot adds
    /// the unit.
    #[serde(default)]
    pub x_label: Option<String>,
    #[serde(default)]
    pub y_label: Option<String>,
}

/// A summary table written after the runs (`[[table]]`): one cell per row and
/// column, optionally relative to one column, with a row of means.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// File stem of `tables/NAME.md`.
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    /// The run column whose values head the columns (e.g. `machine`).
    pub columns: String,
    pub rows: TableRows,
    /// Only runs whose column has this value.
    #[serde(default, rename = "where")]
    pub filters: Vec<(String, String)>,
    /// A value of `columns`: each cell is then relative to that column's cell in
    /// the same row (`format` says how).
    #[serde(default)]
    pub relative_to: Option<String>,
    #[serde(default)]
    pub format: TableFormat,
    /// Cells are multiplied by this before formatting (e.g. 1000 for J -> mJ).
    #[serde(default = "one")]
    pub scale: f64,
    /// Decimals; by default 0 for numbers, 2 for ratios, 1 for percentages.
    #[serde(default)]
    pub digits: Option<usize>,
    /// Row labels whose cells are averaged into a last row (arithmetic mean).
    #[serde(default)]
    pub mean: Vec<String>,
    /// Metrics summed into a divisor of every cell (e.g. `energy.total_j` for a
    /// share); none by default.
    #[serde(default)]
    pub per: Vec<String>,
}

fn one() -> f64 {
    1.0
}

/// What the rows of a summary table are.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TableRows {
    /// One row per value of a run column; a cell is the sum of the metrics.
    Column { column: String, value: Vec<String> },
    /// Fixed rows, each a label and the metrics summed into its cells.
    Metrics(Vec<(String, Vec<String>)>),
}

/// How cells are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// The value (relative: value / base).
    #[default]
    Number,
    /// `1.14x`: value / base.
    Ratio,
    /// `1.14x`: base / value (a speed-up, when the value is a time or cycles).
    Speedup,
    /// `+7.0%`: (value / base - 1) x 100.
    Percent,
}

/// A parsed spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The spec's path as given, for messages.
    pub file: String,
    /// The spec file, resolved; `None` for text that came from no file.
    pub path: Option<PathBuf>,
    /// Permission bits of the spec file (results are no more readable than it).
    pub mode: u32,
    /// Directory that relative paths in the spec start from.
    pub dir: PathBuf,
    /// Paths outside `dir` the command line lets the spec name (`--allow`).
    pub allowed: Vec<PathBuf>,
    pub text: String,
    pub name: String,
    pub description: String,
    /// Energy model of runs that do not name one: a built-in name or a model file.
    pub model: Value,
    /// Metric keys or `*` patterns; empty means the defaults.
    pub metrics: Vec<Value>,
    pub timeout_s: u64,
    pub memory_mib: u64,
    pub base: Vec<(Field, Value)>,
    pub axes: Vec<Axis>,
    pub excludes: Vec<Exclude>,
    pub plots: Vec<(Span, PlotSpec)>,
    pub tables: Vec<(Span, TableSpec)>,
}

/// Per-run wall-time bound unless the spec or the command line says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 3600;
/// Per-run memory bound unless the spec or the command line says otherwise.
pub const DEFAULT_MEMORY_MIB: u64 = 4096;
/// Longest per-run wall time: a year (longer is a typo, and products with it
/// would overflow).
pub const MAX_TIMEOUT_S: u64 = 365 * 24 * 3600;
/// Smallest and largest per-run memory bound (1 PiB).
pub const MIN_MEMORY_MIB: u64 = 16;
pub const MAX_MEMORY_MIB: u64 = 1 << 30;
/// Largest spec file: parsing costs about a hundred bytes per byte of short
/// keys, so this keeps a hostile spec's parse under half a gigabyte.
pub const MAX_SPEC_BYTES: usize = 4 << 20;

/// Longest name of a sweep, plot, column or extra (it names files and columns).
pub const MAX_NAME_BYTES: usize = 100;

impl Spec {
    /// Reads and parses a spec file.
    pub fn read(path: &Path) -> Result<Spec, crate::Error> {
        let bytes = spu_isa::format::read_input(path)?;
        let file = path.display().to_string();
        // UTF-16 or UTF-32 text is named, with the `iconv` command that converts it.
        let text = spu_io::input::text_from(path, bytes)?;
        if text.len() > MAX_SPEC_BYTES {
            return Err(SpecError {
                file,
                text: String::new(),
                problems: vec![Problem::whole(format!(
                    "it is {} bytes long, but a spec is at most {} bytes (4 MiB: an axis of 100 000 values takes under 1 MiB)",
                    spu_io::numbers::grouped(text.len() as u64),
                    spu_io::numbers::grouped(MAX_SPEC_BYTES as u64)
                ))
                .help("is it the right file?")],
            }
            .into());
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        let mut spec = Spec::parse(&file, &text, &dir, &stem)?;
        spec.path = path.canonicalize().ok();
        spec.mode = crate::files::mode_of(path);
        Ok(spec)
    }

    /// Parses spec text; `stem` names the sweep when the spec does not.
    pub fn parse(file: &str, text: &str, dir: &Path, stem: &str) -> Result<Spec, SpecError> {
        let error = |problems| SpecError {
            file: file.to_string(),
            text: text.to_string(),
            problems,
        };
        let root = DeTable::parse(text).map_err(|e| {
            let why = spu_io::quote::toml_reason(e.message().trim_end()).into_owned();
            let mut p = Problem::whole(why);
            p.span = e.span();
            error(vec![p.help("see `spu-sweep --help` for the spec format")])
        })?;
        let mut w = walk::Walker::default();
        let spec = w.spec(file, text, dir, stem, root.get_ref());
        if w.problems.is_empty() {
            Ok(spec)
        } else {
            w.problems
                .sort_by_key(|p| p.span.as_ref().map_or(usize::MAX, |s| s.start));
            Err(error(w.problems))
        }
    }

    /// The names of every `[axis.extra.NAME]` in the spec.
    pub fn extra_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .axes
            .iter()
            .flat_map(|a| a.extra.iter().map(|(n, _, _)| n.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}
