//! Expanding a spec into runs: the cartesian product of the axes (first axis
//! slowest), minus exclusions, each resolved to a kernel file and its hash, a full
//! machine, kernel parameters and options, and identified by a hash of all of
//! them and the tool version ([`identity`]). Problems that only show up here
//! (missing kernel files, bad machine combinations) still point into the spec.

use crate::diag::{Problem, SpecError};
use crate::spec::{Field, PlotSpec, Spec, TableRows, TableSpec, Value};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

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
    pub kernel_sha256: String,
    /// Every machine parameter, `(key, value)`, as `spu-emu --list-params` names them.
    pub machine: Vec<(String, String)>,
    /// Kernel parameters, sorted by name.
    pub defines: Vec<(String, String)>,
    pub functional: bool,
    pub max_cycles: u64,
    /// Energy model: a built-in name or an absolute path, and a hash of its contents.
    pub model: String,
    pub model_sha256: String,
}

/// Everything needed to run, resume and report a sweep; stored as `plan.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default)]
    pub tables: Vec<TableSpec>,
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

    /// A run by id.
    pub fn run(&self, id: &str) -> Option<&Run> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// `N=128 machine=spu-4x4` for messages.
    pub fn describe(&self, run: &Run) -> String {
        self.columns
            .iter()
            .zip(&run.values)
            .map(|(c, v)| format!("{c}={v}"))
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
        machine: &run.machine,
        defines: &run.defines,
        functional: run.functional,
        max_cycles: run.max_cycles,
        model_sha256: &run.model_sha256,
    };
    // Plain strings, numbers and booleans: serialising cannot fail.
    let json = serde_json::to_vec(&id).expect("identity serialises");
    sha256_hex(&json)[..16].to_string()
}

/// A hash of an energy model's resolved contents (not of where it was read from).
pub fn model_hash(model: &spu_prof::model::Model) -> String {
    let mut m = model.clone();
    m.file.clear();
    sha256_hex(format!("{m:?}").as_bytes())
}

/// Expands a spec into its plan, with the named extra values included.
pub fn plan(spec: &Spec, extras: &[String]) -> Result<Plan, crate::Error> {
    let known = spec.extra_names();
    for e in extras {
        if !known.contains(e) {
            return Err(crate::Error::UnknownExtra {
                name: e.clone(),
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
        problems: Vec::new(),
        kernels: HashMap::new(),
        machines: HashMap::new(),
        models: HashMap::new(),
    };
    let plan = p.plan(extras);
    if p.problems.is_empty() {
        Ok(plan)
    } else {
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
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Planner<'s> {
    spec: &'s Spec,
    problems: Vec<Problem>,
    /// Kernel text as written -> (absolute path, hash); `None` after a reported problem.
    kernels: HashMap<String, Option<(PathBuf, String)>>,
    /// Machine value as written -> what `RunArgs` should be given.
    machines: HashMap<String, Option<String>>,
    /// Model value as written -> (name or absolute path, hash).
    models: HashMap<String, Option<(String, String)>>,
}

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
            .try_fold(1usize, |n, a| n.checked_mul(a.len()))
            .filter(|&n| n <= MAX_RUNS);
        if count.is_none() {
            self.problems.push(
                Problem::whole(format!("the axes make more than {MAX_RUNS} runs"))
                    .help("split the study into several specs"),
            );
        }
        if self.problems.is_empty() {
            for point in product(&axes) {
                if self.excluded(&point) {
                    continue;
                }
                if let Some(mut run) = self.resolve(&point) {
                    run.id = identity(&run);
                    runs.push(run);
                }
            }
            if runs.is_empty() && self.problems.is_empty() {
                self.problems.push(
                    Problem::whole("the exclusions leave no runs")
                        .help("check the `[[exclude]]` tables"),
                );
            }
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
                        Problem::at(c.key_span.clone(), format!("column `{name}` is used twice"))
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
                            format!("plot `{}`: `{col}` is not a column", p.name),
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
                            format!("`{col}` is not a column of this sweep"),
                        )
                        .label("unknown column")
                        .help(format!("exclusions name axis columns: {}", quoted(columns))),
                    );
                }
            }
        }
    }

    fn excluded(&self, point: &[(Field, Value)]) -> bool {
        self.spec.excludes.iter().any(|e| {
            e.conditions.iter().all(|(col, _, values)| {
                point
                    .iter()
                    .find(|(f, _)| f.column() == *col)
                    .is_some_and(|(_, v)| values.iter().any(|x| x.text == v.text))
            })
        })
    }

    /// A path relative to the spec if it looks like a file, else a name.
    fn file_or_name(&self, text: &str, ext: &str) -> String {
        let candidate = self.spec.dir.join(text);
        if text.ends_with(ext) || text.contains('/') || candidate.is_file() {
            std::fs::canonicalize(&candidate)
                .unwrap_or(candidate)
                .display()
                .to_string()
        } else {
            text.to_string()
        }
    }

    fn kernel(&mut self, v: &Value) -> Option<(PathBuf, String)> {
        if let Some(k) = self.kernels.get(&v.text) {
            return k.clone();
        }
        let path = self.spec.dir.join(&v.text);
        let resolved = match spu_isa::format::read_input(&path) {
            Ok(bytes) => Some((
                std::fs::canonicalize(&path).unwrap_or(path),
                sha256_hex(&bytes),
            )),
            Err(e) => {
                self.problems.push(
                    Problem::at(v.span.clone(), e.to_string())
                        .label("kernel file")
                        .help(format!(
                            "kernel paths are relative to the spec's folder `{}`",
                            self.spec.dir.display()
                        )),
                );
                None
            }
        };
        self.kernels.insert(v.text.clone(), resolved.clone());
        resolved
    }

    /// Loads an energy model once; `None` after a reported problem.
    fn model(&mut self, v: &Value) -> Option<(String, String)> {
        if let Some(m) = self.models.get(&v.text) {
            return m.clone();
        }
        let source = self.file_or_name(&v.text, ".toml");
        let resolved = match spu_prof::model::Model::load(&source) {
            Ok(m) => Some((source, model_hash(&m))),
            Err(e) => {
                self.problems.push(
                    Problem::at(v.span.clone(), e.to_string())
                        .label("cannot load this energy model"),
                );
                None
            }
        };
        self.models.insert(v.text.clone(), resolved.clone());
        resolved
    }

    fn machine_source(&mut self, v: &Value) -> Option<String> {
        if let Some(m) = self.machines.get(&v.text) {
            return m.clone();
        }
        let source = self.file_or_name(&v.text, ".toml");
        let args = spu_emu::cli::RunArgs {
            machine: Some(source.clone()),
            ..Default::default()
        };
        let resolved = match args.machine() {
            Ok(_) => Some(source),
            Err(e) => {
                self.problems.push(
                    Problem::at(v.span.clone(), e.to_string()).label("machine preset or file"),
                );
                None
            }
        };
        self.machines.insert(v.text.clone(), resolved.clone());
        resolved
    }

    /// Resolves one point of the product (axis values over `[base]`).
    fn resolve(&mut self, point: &[(Field, Value)]) -> Option<Run> {
        let mut settings: BTreeMap<Field, Value> = BTreeMap::new();
        for (f, v) in self.spec.base.iter().chain(point) {
            settings.insert(f.clone(), v.clone());
        }
        let (kernel, kernel_sha256) = self.kernel(settings.get(&Field::Kernel)?)?;
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
                let span = point
                    .iter()
                    .rev()
                    .find(|(f, _)| matches!(f, Field::Grid | Field::Set(_)))
                    .map(|(_, v)| v.span.clone());
                let mut p = Problem::whole(format!("{e} (in the run {})", describe(point)))
                    .label("this combination");
                p.span = span;
                self.problems.push(p);
                return None;
            }
        };
        Some(Run {
            id: String::new(),
            values: point.iter().map(|(_, v)| v.text.clone()).collect(),
            kernel,
            kernel_sha256,
            machine: m
                .entry_texts()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
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
            model,
            model_sha256,
        })
    }
}

fn describe(point: &[(Field, Value)]) -> String {
    point
        .iter()
        .map(|(f, v)| format!("{}={}", f.column(), v.text))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cartesian product, first axis slowest. No axes: one empty point.
fn product<T: Clone>(axes: &[Vec<Vec<T>>]) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .iter()
            .flat_map(|prefix| {
                axis.iter().map(move |point| {
                    let mut p = prefix.clone();
                    p.extend(point.iter().cloned());
                    p
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_varies_the_last_axis_fastest() {
        let axes = vec![vec![vec![1], vec![2]], vec![vec![10], vec![20], vec![30]]];
        let p = product(&axes);
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
        assert_eq!(product::<u8>(&[]), vec![Vec::<u8>::new()]);
    }
}
