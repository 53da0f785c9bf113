//! Running a sweep on a Slurm cluster: the pending runs are dealt round-robin into
//! tasks of a few runs each (many short runs per task, not one job per run), written
//! as one `sbatch --array` job whose task `T` runs `spu-sweep exec-task DIR --batch B
//! --task T` into the shared results folder. Each batch keeps a copy of the plan it
//! was made from, so re-planning the folder while a job runs cannot confuse it.
//! Status comes from `squeue` (and `sacct` where accounting is enabled) plus the
//! records themselves.

use crate::plan::Plan;
use crate::store::{Store, StoreError, to_json};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// How to submit.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// Most tasks running at once (`%K` of `--array`).
    pub max_parallel: Option<u32>,
    pub runs_per_task: usize,
    /// Time limit per task in minutes; by default from the per-run bound.
    pub time_min: Option<u64>,
    /// More `sbatch` options, passed as given (e.g. `--account=abc`).
    pub sbatch_args: Vec<String>,
    /// Wait until every task has ended.
    pub wait: bool,
}

/// One submitted array job; stored in `slurm/batch-B.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub batch: usize,
    /// Run ids of each task.
    pub tasks: Vec<Vec<String>>,
    #[serde(default)]
    pub job_id: Option<String>,
    /// Per-run bounds the tasks apply.
    pub timeout_s: u64,
    pub memory_mib: u64,
}

/// Why submitting or querying failed.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot run `{command}`: {error}; is Slurm installed and on PATH?")]
    Spawn {
        command: String,
        error: std::io::Error,
    },
    #[error("`{command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("batch {batch} has no task {task} (it has {count})")]
    NoTask {
        batch: usize,
        task: usize,
        count: usize,
    },
}

/// Deals `ids` round-robin into tasks of at most `per_task` runs, so every task
/// gets a mix of the sweep's small and large runs.
pub fn deal(ids: &[String], per_task: usize) -> Vec<Vec<String>> {
    let tasks = ids.len().div_ceil(per_task.max(1));
    let mut out = vec![Vec::new(); tasks];
    for (i, id) in ids.iter().enumerate() {
        out[i % tasks].push(id.clone());
    }
    out
}

/// The job script of a batch.
pub fn script(store: &Store, exe: &Path, name: &str, batch: &Batch, opts: &SlurmOptions) -> String {
    let dir = std::fs::canonicalize(&store.dir).unwrap_or_else(|_| store.dir.clone());
    let per_task = batch.tasks.iter().map(Vec::len).max().unwrap_or(1) as u64;
    let minutes = opts
        .time_min
        .unwrap_or_else(|| (per_task * batch.timeout_s).div_ceil(60) + 5);
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# spu-sweep: batch {} of sweep `{name}`, {} task(s)\n",
        batch.batch,
        batch.tasks.len()
    ));
    let array = match opts.max_parallel {
        Some(k) => format!("0-{}%{k}", batch.tasks.len() - 1),
        None => format!("0-{}", batch.tasks.len() - 1),
    };
    let directives = [
        format!("--job-name=spu-sweep-{}", sanitize(name)),
        format!("--array={array}"),
        format!(
            "--output={}/slurm/logs/batch-{}-%a.out",
            dir.display(),
            batch.batch
        ),
        "--ntasks=1".into(),
        "--cpus-per-task=1".into(),
        format!("--mem={}M", batch.memory_mib + 256),
        format!("--time={minutes}"),
    ];
    let partition = opts.partition.iter().map(|p| format!("--partition={p}"));
    for d in directives.into_iter().chain(partition) {
        s.push_str(&format!("#SBATCH {d}\n"));
    }
    for a in &opts.sbatch_args {
        s.push_str(&format!("#SBATCH {a}\n"));
    }
    s.push_str(&format!(
        "exec {} exec-task {} --batch {} --task \"$SLURM_ARRAY_TASK_ID\"\n",
        shell_quote(&exe.display().to_string()),
        shell_quote(&dir.display().to_string()),
        batch.batch
    ));
    s
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The number the next batch gets.
fn next_batch(store: &Store) -> usize {
    (0..)
        .find(|b| !store.dir.join(format!("slurm/batch-{b}.json")).exists())
        .unwrap_or(0)
}

/// Writes the batch, its plan and its script and submits it; returns the batch with
/// its job id.
pub fn submit(
    store: &Store,
    exe: &Path,
    plan: &Plan,
    ids: &[String],
    opts: &SlurmOptions,
    timeout_s: u64,
    memory_mib: u64,
) -> Result<Batch, SlurmError> {
    let mut batch = Batch {
        batch: next_batch(store),
        tasks: deal(ids, opts.runs_per_task),
        job_id: None,
        timeout_s,
        memory_mib,
    };
    let b = batch.batch;
    let name = &plan.name;
    std::fs::create_dir_all(store.dir.join("slurm/logs")).map_err(|error| StoreError::Write {
        path: spu_io::quote::path(&store.dir.join("slurm/logs")),
        error,
    })?;
    store.write(&format!("slurm/batch-{b}.plan.json"), &to_json(plan))?;
    store.write(&format!("slurm/batch-{b}.json"), &to_json(&batch))?;
    let script_name = format!("slurm/batch-{b}.sh");
    store.write(
        &script_name,
        script(store, exe, name, &batch, opts).as_bytes(),
    )?;
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable").arg(store.dir.join(&script_name));
    let out = output(&mut cmd, "sbatch")?;
    let job = out
        .split([';', '\n'])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    batch.job_id = Some(job);
    store.write(&format!("slurm/batch-{b}.json"), &to_json(&batch))?;
    Ok(batch)
}

fn output(cmd: &mut Command, name: &str) -> Result<String, SlurmError> {
    let out = cmd.output().map_err(|error| SlurmError::Spawn {
        command: name.into(),
        error,
    })?;
    if !out.status.success() {
        return Err(SlurmError::Failed {
            command: name.into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every batch submitted into this results folder.
pub fn batches(store: &Store) -> Vec<Batch> {
    (0..)
        .map_while(|b| {
            let path = store.dir.join(format!("slurm/batch-{b}.json"));
            let bytes = spu_isa::format::read_input(&path).ok()?;
            Some(serde_json::from_slice::<Batch>(&bytes).ok())
        })
        .flatten()
        .collect()
}

/// One task of a batch: the batch, the plan it was made from, and the task's run ids.
pub fn task(
    store: &Store,
    batch: usize,
    task: usize,
) -> Result<(Batch, Plan, Vec<String>), SlurmError> {
    let b = batches(store)
        .into_iter()
        .find(|x| x.batch == batch)
        .ok_or_else(|| StoreError::Read {
            path: spu_io::quote::path(&store.dir.join(format!("slurm/batch-{batch}.json"))),
            why: "no such batch".into(),
        })?;
    let plan: Plan = store.read_json(&format!("slurm/batch-{batch}.plan.json"))?;
    let count = b.tasks.len();
    let ids = b
        .tasks
        .get(task)
        .cloned()
        .ok_or(SlurmError::NoTask { batch, task, count })?;
    Ok((b, plan, ids))
}

/// Waits until no task of `job` is queued or running, calling `progress` about
/// every `interval`; returns `false` early when `stop` is set.
pub fn wait(
    job: &str,
    interval: std::time::Duration,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(),
) -> Result<bool, SlurmError> {
    loop {
        if squeue(job)?.is_empty() {
            return Ok(true);
        }
        progress();
        for _ in 0..10 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(false);
            }
            std::thread::sleep(interval / 10);
        }
    }
}

/// Task states of a job in the queue (queued and running tasks), counted.
fn squeue(job: &str) -> Result<Vec<(String, usize)>, SlurmError> {
    match output(
        Command::new("squeue").args(["-h", "-r", "-j", job, "-o", "%T"]),
        "squeue",
    ) {
        Ok(text) => Ok(count_states(text.lines())),
        // A job the controller has already forgotten has no task queued.
        Err(SlurmError::Failed { stderr, .. }) if stderr.contains("Invalid job id") => {
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

/// Task states of a job: `(state, count)`, from `squeue` (queued and running
/// tasks). `None` when `squeue` cannot be asked.
pub fn queue_states(job: &str) -> Option<Vec<(String, usize)>> {
    squeue(job).ok()
}

/// Final task states of a job from `sacct`; `None` without accounting.
pub fn accounting_states(job: &str) -> Option<Vec<(String, usize)>> {
    let out = output(
        Command::new("sacct").args(["-n", "-P", "-X", "-j", job, "-o", "State"]),
        "sacct",
    )
    .ok()?;
    Some(count_states(out.lines()))
}

fn count_states<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for l in lines {
        // `CANCELLED by 0` -> `CANCELLED`.
        let state = l.split_whitespace().next().unwrap_or("").to_string();
        if !state.is_empty() {
            *counts.entry(state).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dealing_is_round_robin_and_bounded() {
        let ids: Vec<String> = (0..7).map(|i| i.to_string()).collect();
        let tasks = deal(&ids, 3);
        assert_eq!(
            tasks,
            vec![vec!["0", "3", "6"], vec!["1", "4"], vec!["2", "5"]]
        );
        assert_eq!(deal(&ids, 100).len(), 1);
        assert_eq!(deal(&ids, 1).len(), 7);
    }

    #[test]
    fn states_are_counted() {
        let c = count_states(["RUNNING", "PENDING", "PENDING", "CANCELLED by 0"].into_iter());
        assert_eq!(
            c,
            vec![
                ("CANCELLED".to_string(), 1),
                ("PENDING".to_string(), 2),
                ("RUNNING".to_string(), 1)
            ]
        );
    }
}
