//! The plan as a file (`plan.json`, `slurm/batch-B.plan.json`): compact JSON in
//! which what runs share is written once. Kernels, energy models and machines are
//! tables that runs name by index, and a machine is written as the entries in
//! which it differs from the plan's base machine (every machine has the same keys,
//! in the same order: [`spu_emu::Machine::entry_texts`]). A run costs its id, its
//! column values and its kernel parameters (about 100 bytes with short values),
//! so a plan of [`super::MAX_RUNS`] such runs stays well below the input limit the
//! sweep's commands read it back with; [`size`] and [`own_bytes`] let planning
//! refuse a spec whose plan would not fit (long values in a large product).
//!
//! The file carries its format version ([`FORMAT`]): a plan of another format is
//! refused with a message saying to plan again, never misread. What is read back
//! keeps the rules planning kept (run ids; plots and tables by
//! [`crate::spec::rules`]), so an edited file cannot name files outside the
//! results folder: it is refused as damaged.

use super::{Plan, Run};
use crate::diag::Problem;
use crate::spec::{PlotSpec, TableSpec};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The version of the plan file format.
pub const FORMAT: u32 = 2;

/// A machine's `(key, value)` entries.
type Entries = Vec<(String, String)>;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    format: u32,
    name: String,
    description: String,
    tool_version: String,
    spec_file: String,
    spec_sha256: String,
    extras: Vec<String>,
    metrics: Vec<String>,
    timeout_s: u64,
    memory_mib: u64,
    columns: Vec<String>,
    /// `(absolute path, SHA-256)` of each kernel.
    kernels: Vec<(PathBuf, String)>,
    /// `(built-in name or absolute path, hash)` of each energy model.
    models: Vec<(String, String)>,
    /// Every entry of the first run's machine.
    base_machine: Entries,
    /// Each distinct machine: the entries in which it differs from the base.
    machines: Vec<Entries>,
    runs: Vec<RunEntry>,
    plots: Vec<PlotSpec>,
    tables: Vec<TableSpec>,
    inputs: Vec<PathBuf>,
    file_mode: u32,
}

/// One run; `kernel`, `machine` and `model` index the plan's tables.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunEntry {
    id: String,
    values: Vec<String>,
    kernel: usize,
    machine: usize,
    model: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    defines: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    functional: bool,
    #[serde(
        default = "default_max_cycles",
        skip_serializing_if = "is_default_max_cycles"
    )]
    max_cycles: u64,
    #[serde(
        default = "default_spin_limit",
        skip_serializing_if = "is_default_spin_limit"
    )]
    spin_limit: u64,
}

fn default_spin_limit() -> u64 {
    spu_emu::DEFAULT_SPIN_LIMIT
}

fn is_default_spin_limit(n: &u64) -> bool {
    *n == spu_emu::DEFAULT_SPIN_LIMIT
}

fn default_max_cycles() -> u64 {
    super::DEFAULT_MAX_CYCLES
}

fn is_default_max_cycles(n: &u64) -> bool {
    *n == super::DEFAULT_MAX_CYCLES
}

/// Index of `key` in a table, adding it when new.
fn index<K: std::hash::Hash + Eq + Clone>(
    table: &mut Vec<K>,
    seen: &mut HashMap<K, usize>,
    key: K,
) -> usize {
    *seen.entry(key.clone()).or_insert_with(|| {
        table.push(key);
        table.len() - 1
    })
}

impl PlanFile {
    fn of(plan: &Plan) -> PlanFile {
        let base: Entries = plan
            .runs
            .first()
            .map(|r| r.machine.to_vec())
            .unwrap_or_default();
        let (mut kernels, mut models, mut machines) = (Vec::new(), Vec::new(), Vec::new());
        let (mut seen_k, mut seen_mo) = (HashMap::new(), HashMap::new());
        // Runs share their machine's allocation: one diff per distinct machine.
        let mut seen_ma: HashMap<*const (String, String), usize> = HashMap::new();
        let mut by_entries: HashMap<Entries, usize> = HashMap::new();
        let runs = plan
            .runs
            .iter()
            .map(|r| {
                let ptr = r.machine.as_ptr();
                let machine = match seen_ma.get(&ptr) {
                    Some(&i) => i,
                    None => {
                        let diff = diff(&base, &r.machine);
                        let i = index(&mut machines, &mut by_entries, diff);
                        seen_ma.insert(ptr, i);
                        i
                    }
                };
                RunEntry {
                    id: r.id.clone(),
                    values: r.values.clone(),
                    kernel: index(
                        &mut kernels,
                        &mut seen_k,
                        (r.kernel.clone(), r.kernel_sha256.clone()),
                    ),
                    machine,
                    model: index(
                        &mut models,
                        &mut seen_mo,
                        (r.model.clone(), r.model_sha256.clone()),
                    ),
                    defines: r.defines.clone(),
                    functional: r.functional,
                    max_cycles: r.max_cycles,
                    spin_limit: r.spin_limit,
                }
            })
            .collect();
        PlanFile {
            format: FORMAT,
            name: plan.name.clone(),
            description: plan.description.clone(),
            tool_version: plan.tool_version.clone(),
            spec_file: plan.spec_file.clone(),
            spec_sha256: plan.spec_sha256.clone(),
            extras: plan.extras.clone(),
            metrics: plan.metrics.clone(),
            timeout_s: plan.timeout_s,
            memory_mib: plan.memory_mib,
            columns: plan.columns.clone(),
            kernels,
            models,
            base_machine: base,
            machines,
            runs,
            plots: plan.plots.clone(),
            tables: plan.tables.clone(),
            inputs: plan.inputs.clone(),
            file_mode: plan.file_mode,
        }
    }

    fn into_plan(self) -> Result<Plan, String> {
        if self.file_mode > crate::files::OPEN_MODE {
            return Err(format!(
                "its `file_mode` is {:#o}, not permission bits (0 to 0o777, those every input grants)",
                self.file_mode
            ));
        }
        match self.runs.len() {
            0 => return Err("it has no runs".into()),
            n if n > super::MAX_RUNS => {
                return Err(format!(
                    "it has {n} runs, more than the {} a sweep may have",
                    super::MAX_RUNS
                ));
            }
            _ => {}
        }
        let keys: HashMap<&str, usize> = self
            .base_machine
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (k.as_str(), i))
            .collect();
        let machines = self
            .machines
            .iter()
            .enumerate()
            .map(|(m, changes)| {
                let mut entries = self.base_machine.clone();
                for (k, v) in changes {
                    let i = keys.get(k.as_str()).ok_or_else(|| {
                        format!(
                            "machine {m} sets `{}`, which the base machine does not have",
                            spu_io::quote::shorten(&spu_io::quote::escape(k))
                        )
                    })?;
                    entries[*i].1 = v.clone();
                }
                Ok(Arc::from(entries))
            })
            .collect::<Result<Vec<Arc<[(String, String)]>>, String>>()?;
        let runs = self
            .runs
            .into_iter()
            .enumerate()
            .map(|(n, r)| {
                let missing = |what: &str, i: usize, len: usize| {
                    format!("run {n} names {what} {i}, but the plan has {len}")
                };
                let (kernel, kernel_sha256) = self
                    .kernels
                    .get(r.kernel)
                    .cloned()
                    .ok_or_else(|| missing("kernel", r.kernel, self.kernels.len()))?;
                let (model, model_sha256) = self
                    .models
                    .get(r.model)
                    .cloned()
                    .ok_or_else(|| missing("model", r.model, self.models.len()))?;
                let machine = machines
                    .get(r.machine)
                    .cloned()
                    .ok_or_else(|| missing("machine", r.machine, machines.len()))?;
                if r.values.len() != self.columns.len() {
                    return Err(format!(
                        "run {n} has {} column values for {} columns",
                        r.values.len(),
                        self.columns.len()
                    ));
                }
                Ok(Run {
                    id: r.id,
                    values: r.values,
                    kernel,
                    kernel_sha256,
                    machine,
                    defines: r.defines,
                    functional: r.functional,
                    max_cycles: r.max_cycles,
                    spin_limit: r.spin_limit,
                    model,
                    model_sha256,
                })
            })
            .collect::<Result<Vec<Run>, String>>()?;
        check_ids(&runs)?;
        crate::spec::rules::check_reports(&self.plots, &self.tables)?;
        Ok(Plan {
            name: self.name,
            description: self.description,
            tool_version: self.tool_version,
            spec_file: self.spec_file,
            spec_sha256: self.spec_sha256,
            extras: self.extras,
            metrics: self.metrics,
            timeout_s: self.timeout_s,
            memory_mib: self.memory_mib,
            columns: self.columns,
            runs,
            plots: self.plots,
            tables: self.tables,
            inputs: self.inputs,
            file_mode: self.file_mode,
        })
    }
}

/// Why the runs' ids are not ones planning gives: an id that is not 16 hex digits
/// (it names the run's record file), or one id for two runs that differ in what
/// they run. Rows that only differ in their column values are one run, and share
/// an id.
fn check_ids(runs: &[Run]) -> Result<(), String> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (n, run) in runs.iter().enumerate() {
        let id = run.id.as_str();
        if id.len() != 16 || !id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(format!(
                "run {n} has the id `{}`, but run ids are 16 hex digits",
                spu_io::quote::shorten(&spu_io::quote::escape(id))
            ));
        }
        let m = *first.entry(id).or_insert(n);
        if m != n && !same_run(&runs[m], run) {
            return Err(format!(
                "runs {m} and {n} have the same id `{id}`, but differ in what they run"
            ));
        }
    }
    Ok(())
}

/// Whether two runs run the same thing: what their id is the hash of.
fn same_run(a: &Run, b: &Run) -> bool {
    a.kernel_sha256 == b.kernel_sha256
        && a.machine == b.machine
        && a.defines == b.defines
        && a.functional == b.functional
        && a.max_cycles == b.max_cycles
        && a.spin_limit == b.spin_limit
        && a.model_sha256 == b.model_sha256
}

/// The entries of `machine` that differ from `base` (same keys, same order).
fn diff(base: &[(String, String)], machine: &[(String, String)]) -> Entries {
    machine
        .iter()
        .enumerate()
        .filter(|(i, e)| base.get(*i) != Some(*e))
        .map(|(_, e)| e.clone())
        .collect()
}

/// The plan file's bytes: compact JSON with a final newline.
pub fn to_bytes(plan: &Plan) -> Vec<u8> {
    // Plain data with string keys: serialising cannot fail.
    let mut bytes = serde_json::to_vec(&PlanFile::of(plan)).expect("a plan serialises");
    bytes.push(b'\n');
    bytes
}

/// The plan as pretty JSON (for `spu-sweep plan --format json`).
pub fn to_pretty(plan: &Plan) -> Vec<u8> {
    crate::json::to_json(&PlanFile::of(plan))
}

/// How many bytes [`to_bytes`] makes, without keeping them.
pub fn size(plan: &Plan) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(1);
    // Writing into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, &PlanFile::of(plan));
    count.0
}

/// Why the plan cannot be used, if its file would be larger than the sweep's
/// commands read (`status`, `collect` and Slurm tasks read it back).
pub(super) fn check_size(plan: &Plan) -> Option<Problem> {
    let bytes = size(plan);
    (bytes > spu_io::MAX_INPUT_BYTES)
        .then(|| too_large(plan.runs.len(), plan.runs.len(), bytes, true))
}

/// Bytes a run takes in its plan file at least: its id, column values and kernel
/// parameters with the JSON around them (`{"id":"","values":[],"kernel":0,...}`).
pub(super) fn own_bytes(run: &Run) -> u64 {
    let values = run.values.iter().map(|v| v.len() + 3).sum::<usize>();
    let defines = run
        .defines
        .iter()
        .map(|(k, v)| k.len() + v.len() + 8)
        .sum::<usize>();
    (54 + run.id.len() + values + defines) as u64
}

/// The problem of a plan of `runs` runs too large to read back, of which the first
/// `measured` take `bytes` (all of the plan's when `whole`).
pub(super) fn too_large(runs: usize, measured: usize, bytes: u64, whole: bool) -> Problem {
    let limit = spu_io::MAX_INPUT_BYTES;
    let fit = measured as u128 * u128::from(limit) / u128::from(bytes.max(1));
    let mib = format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64);
    let what = if whole {
        format!(
            "would take {mib}, more than the {} MiB the sweep's commands read back",
            limit >> 20
        )
    } else {
        format!(
            "would be larger than the {} MiB the sweep's commands read back: the first {measured} alone take {mib}",
            limit >> 20
        )
    };
    Problem::whole(format!(
        "the plan of these {runs} runs {what} (each run's column values and kernel parameters are written in it)"
    ))
    .help(format!(
        "split the study into several specs of at most about {fit} runs each, or use shorter values"
    ))
}

/// A run's machine as a list, shared in memory (for the request a run's child
/// process reads).
pub(super) mod shared {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(m: &Arc<[(String, String)]>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Arc<[(String, String)]>, D::Error> {
        Vec::<(String, String)>::deserialize(d).map(Arc::from)
    }
}

/// The way out of a plan that cannot be read.
const PLAN_AGAIN: &str = "plan again (`spu-sweep run SPEC` with the same --out)";

/// Whether `bytes` are a plan file of any format (a JSON object with a
/// `format` number), or why not: a folder whose `plan.json` is not one was not
/// written by `spu-sweep run`, and is not run into.
pub fn check_is_plan(bytes: &[u8]) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not a valid plan.json: {e}"))?;
    match value.get("format") {
        Some(f) if f.is_u64() => Ok(()),
        _ => Err("not a valid plan.json: it has no format number".to_string()),
    }
}

/// Reads a plan file's bytes, or says why not (`name` names the file in the
/// message): a plan of another format is refused, naming the way out.
pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Plan, String> {
    #[derive(Deserialize)]
    struct Probe {
        format: Option<u32>,
    }
    match serde_json::from_slice::<Probe>(bytes) {
        Ok(Probe {
            format: Some(FORMAT),
        }) => {}
        Ok(Probe { format: Some(f) }) if f > FORMAT => {
            return Err(format!(
                "it was planned by a newer spu-sweep (plan format {f}, this one reads {FORMAT}); use that version, or plan again with this one"
            ));
        }
        Ok(_) => {
            return Err(format!(
                "it was planned by an older spu-sweep, whose plans this one does not read; {PLAN_AGAIN}"
            ));
        }
        Err(e) => return Err(damaged(name, e)),
    }
    let file: PlanFile = serde_json::from_slice(bytes).map_err(|e| damaged(name, e))?;
    file.into_plan().map_err(|why| damaged(name, why))
}

/// Why a plan file of this format cannot be read, and the way out.
fn damaged(name: &str, why: impl std::fmt::Display) -> String {
    format!("not a valid {name}: {why}; it was edited or damaged: {PLAN_AGAIN}")
}
