//! Expanding a spec into runs: the cartesian product of the axes (first axis
//! slowest), minus exclusions, each resolved to a kernel file and its hash, a full
//! machine, kernel parameters and options, and identified by a hash of all of
//! them and the tool version ([`identity`]). Problems that only show up here
//! (missing or forbidden files, kernel parameters the kernel does not declare or
//! cannot take, bad machine combinations) still point into the spec. The files a
//! spec names are read in [`inputs`], and exclusions matched in [`exclude`].

mod exclude;
pub mod file;
mod inputs;
mod reports;

use crate::diag::{Problem, SpecError};
use crate::files::Access;
use crate::spec::{Field, PlotSpec, Spec, TableRows, TableSpec, Value};
use inputs::KernelFile;
pub use inputs::kernel_hash;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use spu_io::quote::shorten;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// The version of this tool, part of every run's identity.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A fingerprint of the simulator's sources this tool was built from (see
/// `build.rs`), part of every run's identity: results of an older simulator are
/// not reused.
pub const SOURCES: &str = env!("SPU_SWEEP_SOURCES");

/// Most runs one sweep may have.
pub const MAX_RUNS: usize = 100_000;

/// Default cycle limit of a run (as `spu-emu`).
pub const DEFAULT_MAX_CYCLES: u64 = 10_000_000_000;

/// One run, fully resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Hex prefix of the identity hash; names the run's result file.
    pub id: String,
    /// Value of each plan column, in [`Plan::columns`] order.
    pub values: Vec<String>,
    /// Absolute path of the kernel file.
    pub kernel: PathBuf,
    /// The kernel's bytes and those of the files it includes ([`kernel_hash`]).
    pub kernel_sha256: String,
    /// Every machine parameter, `(key, value)`, as `spu-emu --list-params` names them;
    /// shared by the runs of one machine.
    #[serde(with = "file::shared")]
    pub machine: Arc<[(String, String)]>,
    /// Kernel parameters, sorted by name.
    pub defines: Vec<(String, String)>,
    pub functional: bool,
    pub max_cycles: u64,
    /// `spu-emu --spin-limit`.
    pub spin_limit: u64,
    /// Energy model: a built-in name or an absolute path, and a hash of its contents.
    pub model: String,
    pub model_sha256: String,
}

/// Everything needed to run, resume and report a sweep; stored as `plan.json`
/// ([`file`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub tool_version: String,
    /// The spec file as given and its hash.
    pub spec_file: String,
    pub spec_sha256: String,
    /// Extra values included (`--extra`).
    pub extras: Vec<String>,
    /// Metric keys or patterns (empty: the defaults).
    pub metrics: Vec<String>,
    pub timeout_s: u64,
    pub memory_mib: u64,
    /// Axis columns, in spec order.
    pub columns: Vec<String>,
    pub runs: Vec<Run>,
    pub plots: Vec<PlotSpec>,
    /// Summary tables (`[[table]]`), written to `tables/`.
    pub tables: Vec<TableSpec>,
    /// Every file the plan was made from (the spec, kernels and the files they
    /// include, machine files, models and the models they extend), resolved:
    /// outputs must never overwrite them.
    pub inputs: Vec<PathBuf>,
    /// Permission bits the results may have at most: those every input file grants.
    pub file_mode: u32,
}

impl Plan {
    /// Distinct run ids in plan order (two rows may describe the same run).
    pub fn unique_ids(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.runs
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| seen.insert(*id))
            .collect()
    }

    /// `N=128 machine=spu-4x4` for messages (escaped: [`spu_io::quote::escape`]).
    pub fn describe(&self, run: &Run) -> String {
        let escape = spu_io::quote::escape;
        self.columns
            .iter()
            .zip(&run.values)
            .map(|(c, v)| format!("{}={}", escape(c), escape(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What makes two runs the same; hashed into the run id.
#[derive(Serialize)]
struct Identity<'a> {
    tool: &'static str,
    version: &'static str,
    sources: &'static str,
    kernel_sha256: &'a str,
    machine: &'a [(String, String)],
    defines: &'a [(String, String)],
    functional: bool,
    max_cycles: u64,
    spin_limit: u64,
    model_sha256: &'a str,
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The run id: the first 16 hex digits of the hash of everything that determines
/// the run's results.
pub fn identity(run: &Run) -> String {
    let id = Identity {
        tool: "spu-sweep",
        version: TOOL_VERSION,
        sources: SOURCES,
        kernel_sha256: &run.kernel_sha256,
        machine: &run.machine[..],
        defines: &run.defines,
        functional: run.functional,
        max_cycles: run.max_cycles,
        spin_limit: run.spin_limit,
        model_sha256: &run.model_sha256,
    };
    // Plain strings, numbers and booleans: serialising cannot fail.
    let json = serde_json::to_vec(&id).expect("identity serialises");
    sha256_hex(&json)[..16].to_string()
}

/// A hash of an energy model's resolved contents (not of where it was read from).
pub fn model_hash(model: &spu_prof::model::Model) -> String {
    sha256_hex(format!("{:?}", model.pricing()).as_bytes())
}

/// Expands a spec into its plan, with the named extra values included.
pub fn plan(spec: &Spec, extras: &[String]) -> Result<Plan, crate::Error> {
    let known = spec.extra_names();
    for e in extras {
        if !known.contains(e) {
            return Err(crate::Error::UnknownExtra {
                name: shorten(e),
                file: spec.file.clone(),
                known: if known.is_empty() {
                    "it defines none".into()
                } else {
                    format!("it defines {}", quoted(&known))
                },
            });
        }
    }
    let mut p = Planner {
        spec,
        access: Access::new(&spec.dir, &spec.allowed),
        problems: Vec::new(),
        kernels: HashMap::new(),
        machines: HashMap::new(),
        models: HashMap::new(),
        inputs: spec.path.iter().cloned().collect(),
        file_mode: spec.mode,
        machine_errors: HashMap::new(),
        shared_machines: HashSet::new(),
    };
    if let Some(why) = p.access.unusable() {
        p.problems.push(
            Problem::whole(format!("`--allow`: {why}")).help("give an existing folder or file"),
        );
    }
    let mut plan = p.plan(extras);
    if p.problems.is_empty() {
        plan.inputs = p.inputs.iter().cloned().collect();
        if let Some(problem) = file::check_size(&plan) {
            p.problems.push(problem);
        }
    }
    if p.problems.is_empty() {
        plan.file_mode = p.file_mode;
        Ok(plan)
    } else {
        // One problem of many runs is reported once.
        let mut seen = std::collections::HashSet::new();
        p.problems
            .retain(|q| seen.insert((q.span.clone(), q.message.clone())));
        Err(SpecError {
            file: spec.file.clone(),
            text: spec.text.clone(),
            problems: p.problems,
        }
        .into())
    }
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{}`", shorten(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sweep's axis columns for a message: "the columns are `N`, `M`", or, for a
/// sweep without axes, that it has none (not an empty list).
pub(crate) fn columns_phrase(columns: &[String]) -> String {
    if columns.is_empty() {
        "this sweep has no axis columns".to_string()
    } else {
        format!("the columns are {}", quoted(columns))
    }
}

struct Planner<'s> {
    spec: &'s Spec,
    /// Where the spec may read files.
    access: Access,
    problems: Vec<Problem>,
    /// Kernel text as written -> the kernel; `None` after a reported problem.
    kernels: HashMap<String, Option<KernelFile>>,
    /// Machine value as written -> what `RunArgs` should be given.
    machines: HashMap<String, Option<String>>,
    /// Model value as written -> (name or absolute path, hash).
    models: HashMap<String, Option<(String, String)>>,
    /// Files read so far, resolved.
    inputs: BTreeSet<PathBuf>,
    /// Permission bits every file read so far grants.
    file_mode: u32,
    /// A machine error at a place in the spec -> its problem, the runs it hit and
    /// the first of them: reported once, however many runs share it.
    machine_errors: HashMap<MachineErrorAt, (usize, usize, String)>,
    /// Machines resolved so far, one allocation each, shared by their runs.
    shared_machines: HashSet<Arc<[(String, String)]>>,
}

/// A machine error's text and where in the spec its value is.
type MachineErrorAt = (String, Option<std::ops::Range<usize>>);

impl Planner<'_> {
    fn plan(&mut self, extras: &[String]) -> Plan {
        let spec = self.spec;
        // Each axis as a list of points; a point sets one value per column.
        let axes: Vec<Vec<Vec<(Field, Value)>>> = spec
            .axes
            .iter()
            .map(|a| {
                let mut cols = vec![&a.columns];
                cols.extend(
                    a.extra
                        .iter()
                        .filter(|(n, _, _)| extras.contains(n))
                        .map(|(_, _, c)| c),
                );
                cols.iter()
                    .flat_map(|columns| {
                        (0..columns[0].values.len()).map(|i| {
                            // Extras may list keys in another order: follow the axis.
                            a.columns
                                .iter()
                                .map(|ac| {
                                    let c = columns.iter().find(|c| c.field == ac.field);
                                    let v = c.map_or(&ac.values[0], |c| &c.values[i]);
                                    (ac.field.clone(), v.clone())
                                })
                                .collect()
                        })
                    })
                    .collect()
            })
            .collect();
        let columns = self.columns();
        self.check_excludes(&columns);
        self.check_metric_names(&columns);
        let has_kernel = spec.base.iter().any(|(f, _)| *f == Field::Kernel)
            || spec
                .axes
                .iter()
                .any(|a| a.columns.iter().any(|c| c.field == Field::Kernel));
        if !has_kernel {
            self.problems.push(
                Problem::whole("no kernel: every run needs one").help(
                    "add `kernel = \"path/to/kernel.spu\"` under `[base]` or a `kernel` axis",
                ),
            );
        }
        // The spec-wide model is checked even when every run names its own.
        self.model(&spec.model);
        let mut runs = Vec::new();
        let count = axes
            .iter()
            .try_fold(1u128, |n, a| n.checked_mul(a.len() as u128));
        let fits = count.filter(|&n| n <= MAX_RUNS as u128).map(|n| n as usize);
        if fits.is_none() {
            let sizes: Vec<String> = axes.iter().map(|a| a.len().to_string()).collect();
            let made = count.map_or("more than 2^128".to_string(), |n| n.to_string());
            self.problems.push(
                Problem::whole(format!(
                    "the axes make {made} runs ({}), more than the {MAX_RUNS} a sweep may have",
                    sizes.join(" x ")
                ))
                .help("split the study into several specs, or use fewer values per axis"),
            );
        }
        if self.problems.is_empty() {
            // What runs hold apart from each other, a lower bound of the plan
            // file's size: planning stops once it alone is too large to read back.
            let mut own_bytes = 0u64;
            let exclusions = exclude::Exclusions::new(&spec.excludes);
            for point in product(&axes) {
                if exclusions.exclude(&point) {
                    continue;
                }
                if let Some(mut run) = self.resolve(&point) {
                    run.id = identity(&run);
                    own_bytes += file::own_bytes(&run);
                    runs.push(run);
                    if own_bytes > spu_io::MAX_INPUT_BYTES {
                        let total = fits.unwrap_or(MAX_RUNS);
                        self.problems
                            .push(file::too_large(total, runs.len(), own_bytes, false));
                        break;
                    }
                }
            }
            if runs.is_empty() && self.problems.is_empty() {
                self.problems.push(
                    Problem::whole("the exclusions leave no runs")
                        .help("check the `[[exclude]]` tables"),
                );
            }
            self.check_table_values(&columns, &runs);
            self.check_functional_metrics(&runs);
        }
        Plan {
            name: spec.name.clone(),
            description: spec.description.clone(),
            tool_version: TOOL_VERSION.into(),
            spec_file: spec.file.clone(),
            spec_sha256: sha256_hex(spec.text.as_bytes()),
            extras: extras.to_vec(),
            metrics: spec.metrics.iter().map(|m| m.text.clone()).collect(),
            timeout_s: spec.timeout_s,
            memory_mib: spec.memory_mib,
            columns,
            runs,
            plots: spec.plots.iter().map(|(_, p)| p.clone()).collect(),
            tables: spec.tables.iter().map(|(_, t)| t.clone()).collect(),
            inputs: Vec::new(),
            file_mode: spec.mode,
        }
    }

    /// Column names in axis order; one column may come from one axis only.
    fn columns(&mut self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for a in &self.spec.axes {
            for c in &a.columns {
                let name = c.field.column();
                if names.contains(&name) || name == "run" || name == "status" || name == "error" {
                    self.problems.push(
                        Problem::at(c.key_span.clone(), format!("column `{}` is used twice", shorten(&name)))
                            .label("already a column")
                            .help("`run`, `status` and `error` are reserved; a column may vary in one axis only (put keys that vary together in one axis)"),
                    );
                } else {
                    names.push(name);
                }
            }
        }
        for (span, p) in &self.spec.plots {
            for col in p.series.iter().chain(p.filters.iter().map(|(c, _)| c)) {
                if !names.contains(col) {
                    self.problems.push(
                        Problem::at(
                            span.clone(),
                            format!(
                                "plot `{}`: `{}` is not a column",
                                shorten(&p.name),
                                shorten(col)
                            ),
                        )
                        .help(format!(
                            "series and `where` name axis columns: {}",
                            quoted(&names)
                        )),
                    );
                }
            }
        }
        for (span, t) in &self.spec.tables {
            let row = match &t.rows {
                TableRows::Column { column, .. } => Some(column),
                TableRows::Metrics(_) => None,
            };
            for col in std::iter::once(&t.columns)
                .chain(row)
                .chain(t.filters.iter().map(|(c, _)| c))
            {
                if !names.contains(col) {
                    self.problems.push(
                        Problem::at(
                            span.clone(),
                            format!("table `{}`: `{col}` is not a column", t.name),
                        )
                        .help(format!(
                            "`columns`, `rows` and `where` name axis columns: {}",
                            quoted(&names)
                        )),
                    );
                }
            }
        }
        names
    }

    fn check_excludes(&mut self, columns: &[String]) {
        for e in &self.spec.excludes {
            for (col, span, _) in &e.conditions {
                if !columns.contains(col) {
                    self.problems.push(
                        Problem::at(
                            span.clone(),
                            format!("`{}` is not a column of this sweep", shorten(col)),
                        )
                        .label("unknown column")
                        .help(format!(
                            "exclusions name axis columns; {}",
                            columns_phrase(columns)
                        )),
                    );
                }
            }
        }
    }

    /// Resolves one point of the product (axis values over `[base]`).
    fn resolve(&mut self, point: &[(Field, Value)]) -> Option<Run> {
        let mut settings: BTreeMap<Field, Value> = BTreeMap::new();
        for (f, v) in self.spec.base.iter().chain(point) {
            settings.insert(f.clone(), v.clone());
        }
        // `D.NAME = ""` leaves the parameter at the kernel's default in this run,
        // so one axis can zip kernels that declare different parameters.
        settings.retain(|f, v| !(matches!(f, Field::Define(_)) && v.text.is_empty()));
        let kernel_value = settings.get(&Field::Kernel)?.clone();
        let kernel = self.kernel(&kernel_value)?;
        if !self.check_defines(&kernel, &kernel_value, &settings) {
            return None;
        }
        let model_value = settings
            .get(&Field::Model)
            .unwrap_or(&self.spec.model)
            .clone();
        let (model, model_sha256) = self.model(&model_value)?;
        let machine = match settings.get(&Field::Machine) {
            Some(v) => Some(self.machine_source(v)?),
            None => None,
        };
        let text = |f: Field| settings.get(&f).map(|v| v.text.clone());
        let args = spu_emu::cli::RunArgs {
            machine,
            grid: text(Field::Grid),
            boundary: text(Field::Boundary),
            passes: text(Field::Passes),
            sets: settings
                .iter()
                .filter_map(|(f, v)| match f {
                    Field::Set(k) => Some(format!("{k}={}", v.text)),
                    _ => None,
                })
                .collect(),
            ..Default::default()
        };
        let m = match args.machine() {
            Ok(m) => m,
            Err(e) => {
                // The value the error is about, from `[base]` or an axis.
                let span = culprit(&args, &settings).map(|v| v.span.clone());
                let run = shorten(&describe(point));
                let key = (e.to_string(), span.clone());
                if let Some((at, runs, first)) = self.machine_errors.get_mut(&key) {
                    *runs += 1;
                    self.problems[*at].message = format!("{e} (in {runs} runs, the first {first})");
                    return None;
                }
                // A spec without axes has one run, which has no name.
                let message = if run.is_empty() {
                    e.to_string()
                } else {
                    format!("{e} (in the run {run})")
                };
                let mut p = Problem::whole(message).label("this value");
                p.span = span;
                self.machine_errors
                    .insert(key, (self.problems.len(), 1, run));
                self.problems.push(p);
                return None;
            }
        };
        let entries: Vec<(String, String)> = m
            .entry_texts()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let machine = match self.shared_machines.get(&entries[..]) {
            Some(m) => m.clone(),
            None => {
                let m: Arc<[(String, String)]> = Arc::from(entries);
                self.shared_machines.insert(m.clone());
                m
            }
        };
        Some(Run {
            id: String::new(),
            values: point.iter().map(|(_, v)| v.text.clone()).collect(),
            kernel: kernel.path,
            kernel_sha256: kernel.sha256,
            machine,
            defines: settings
                .iter()
                .filter_map(|(f, v)| match f {
                    Field::Define(n) => Some((n.clone(), v.text.clone())),
                    _ => None,
                })
                .collect(),
            functional: text(Field::Functional).is_some_and(|t| t == "true"),
            max_cycles: text(Field::MaxCycles)
                .and_then(|t| t.parse().ok())
                .unwrap_or(DEFAULT_MAX_CYCLES),
            spin_limit: text(Field::SpinLimit)
                .and_then(|t| t.parse().ok())
                .unwrap_or(spu_emu::DEFAULT_SPIN_LIMIT),
            model,
            model_sha256,
        })
    }
}

/// The setting a machine error of `args` comes from: the first in the order the
/// machine is built (its file or preset, `grid`, `boundary`, `passes`, then each
/// `set`) whose addition makes building it fail.
fn culprit<'a>(
    args: &spu_emu::cli::RunArgs,
    settings: &'a BTreeMap<Field, Value>,
) -> Option<&'a Value> {
    let mut partial = spu_emu::cli::RunArgs {
        machine: args.machine.clone(),
        ..Default::default()
    };
    if partial.machine().is_err() {
        return settings.get(&Field::Machine);
    }
    let steps = [
        (Field::Grid, args.grid.clone()),
        (Field::Boundary, args.boundary.clone()),
        (Field::Passes, args.passes.clone()),
    ];
    for (field, value) in steps {
        match field {
            Field::Grid => partial.grid = value,
            Field::Boundary => partial.boundary = value,
            _ => partial.passes = value,
        }
        if partial.machine().is_err() {
            return settings.get(&field);
        }
    }
    for (f, v) in settings {
        if let Field::Set(k) = f {
            partial.sets.push(format!("{k}={}", v.text));
            if partial.machine().is_err() {
                return Some(v);
            }
        }
    }
    None
}

fn describe(point: &[(Field, Value)]) -> String {
    point
        .iter()
        .map(|(f, v)| format!("{}={}", f.column(), v.text))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cartesian product, first axis slowest, a point at a time. No axes: one
/// empty point.
fn product<T: Clone>(axes: &[Vec<Vec<T>>]) -> impl Iterator<Item = Vec<T>> + '_ {
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.len()))
        .unwrap_or(0);
    (0..total).map(move |mut i| {
        let mut at = vec![0; axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            at[k] = i % a.len();
            i /= a.len();
        }
        at.iter()
            .zip(axes)
            .flat_map(|(&j, a)| a[j].iter().cloned())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_varies_the_last_axis_fastest() {
        let axes = vec![vec![vec![1], vec![2]], vec![vec![10], vec![20], vec![30]]];
        let p: Vec<_> = product(&axes).collect();
        assert_eq!(
            p,
            vec![
                vec![1, 10],
                vec![1, 20],
                vec![1, 30],
                vec![2, 10],
                vec![2, 20],
                vec![2, 30]
            ]
        );
        assert_eq!(
            product::<u8>(&[]).collect::<Vec<_>>(),
            vec![Vec::<u8>::new()]
        );
    }
}
