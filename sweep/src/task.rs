//! One array task of a Slurm batch, as `spu-sweep exec-task` finds it in the
//! results folder: the batch record (`slurm/batch-B.json`) and the plan it was
//! made from (`slurm/batch-B.plan.json`), each checked against the SHA-256 the
//! job script carries, then the batch checked against the plan (every run id one
//! of the plan's, none in two places, the bounds in range, the task one of the
//! batch's). A results folder may be shared and edited: what a task runs is only
//! what `spu-sweep` submitted.

use crate::plan::{Plan, sha256_hex};
use crate::slurm::{Batch, SlurmError};
use crate::spec::{MAX_MEMORY_MIB, MAX_TIMEOUT_S, MIN_MEMORY_MIB};
use crate::store::{Store, StoreError};
use spu_io::quote::shorten;
use std::collections::{HashMap, HashSet};

/// The hashes the job script gives each task: of the batch's plan file, and of
/// the batch's runs and bounds ([`Batch::work_sha256`]).
#[derive(Debug, Clone, Copy)]
pub struct Hashes<'a> {
    pub plan_sha256: &'a str,
    pub batch_sha256: &'a str,
}

/// How to redo a batch whose files cannot be trusted.
const SUBMIT_AGAIN: &str = "a results folder holds only what spu-sweep wrote: submit the runs again with `spu-sweep run SPEC --slurm`";

/// One task of a batch: the batch, the plan it was made from, and the task's run
/// ids, all checked (see the module header).
pub fn task(
    store: &Store,
    batch: usize,
    task: usize,
    hashes: Hashes<'_>,
) -> Result<(Batch, Plan, Vec<String>), SlurmError> {
    let name = format!("slurm/batch-{batch}.json");
    let path = spu_io::quote::path(&store.dir.join(&name));
    let bad = |why: String| -> SlurmError {
        StoreError::Read {
            path: path.clone(),
            why,
        }
        .into()
    };
    let bytes = store.read_own(&name).map_err(&bad)?;
    let b: Batch = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("not a valid batch record: {e}")))?;
    let found = b.work_sha256();
    if !found.eq_ignore_ascii_case(hashes.batch_sha256) {
        return Err(bad(format!(
            "its runs or bounds changed since the job was submitted (SHA-256 {}, the job script says {}); {SUBMIT_AGAIN}",
            shorten(&found),
            shorten(&spu_io::quote::escape(hashes.batch_sha256))
        )));
    }
    if b.batch != batch {
        return Err(bad(format!(
            "it holds batch {}, not batch {batch}",
            b.batch
        )));
    }
    if !b
        .plan_sha256
        .as_deref()
        .is_some_and(|h| h.eq_ignore_ascii_case(hashes.plan_sha256))
    {
        return Err(bad(format!(
            "it was made from another plan than the job script names; {SUBMIT_AGAIN}"
        )));
    }
    let plan = plan_of(store, batch, hashes.plan_sha256)?;
    check_batch(&b, &plan).map_err(bad)?;
    let count = b.tasks.len();
    let ids = b.tasks.get(task).cloned().ok_or_else(|| {
        bad(format!(
            "batch {batch} has no task {task}: its tasks are 0 to {}",
            count.saturating_sub(1)
        ))
    })?;
    Ok((b, plan, ids))
}

/// The plan of batch `batch`, refused unless its bytes have the SHA-256 `expected`.
fn plan_of(store: &Store, batch: usize, expected: &str) -> Result<Plan, SlurmError> {
    let name = format!("slurm/batch-{batch}.plan.json");
    let path = spu_io::quote::path(&store.dir.join(&name));
    let read_err = |why: String| StoreError::Read {
        path: path.clone(),
        why,
    };
    let bytes = store.read_own(&name).map_err(read_err)?;
    let found = sha256_hex(&bytes);
    if !found.eq_ignore_ascii_case(expected) {
        return Err(read_err(format!(
            "it changed since the job was submitted (SHA-256 {}, the job script says {}), and it names the files the runs read; {SUBMIT_AGAIN}",
            shorten(&found),
            shorten(&spu_io::quote::escape(expected))
        ))
        .into());
    }
    Ok(crate::plan::file::from_bytes(&bytes, &name).map_err(read_err)?)
}

/// Why a batch does not fit its plan, naming the entry: a run id the plan does
/// not have, a run in two places, an empty task, bounds out of range.
fn check_batch(b: &Batch, plan: &Plan) -> Result<(), String> {
    if b.tasks.is_empty() {
        return Err("it has no tasks".into());
    }
    if !(1..=MAX_TIMEOUT_S).contains(&b.timeout_s) {
        return Err(format!(
            "its `timeout_s` {} is not 1 to {MAX_TIMEOUT_S} seconds",
            b.timeout_s
        ));
    }
    if !(MIN_MEMORY_MIB..=MAX_MEMORY_MIB).contains(&b.memory_mib) {
        return Err(format!(
            "its `memory_mib` {} is not {MIN_MEMORY_MIB} to {MAX_MEMORY_MIB} MiB",
            b.memory_mib
        ));
    }
    let known: HashSet<&str> = plan.runs.iter().map(|r| r.id.as_str()).collect();
    let mut seen: HashMap<&str, (usize, usize)> = HashMap::new();
    for (t, ids) in b.tasks.iter().enumerate() {
        if ids.is_empty() {
            return Err(format!("its task {t} has no runs"));
        }
        for (i, id) in ids.iter().enumerate() {
            let quoted = shorten(&spu_io::quote::escape(id));
            if !known.contains(id.as_str()) {
                return Err(format!(
                    "task {t}, entry {i}: the batch's plan has no run `{quoted}`"
                ));
            }
            if let Some((t0, i0)) = seen.insert(id, (t, i)) {
                return Err(format!(
                    "task {t}, entry {i}: run `{quoted}` is also task {t0}, entry {i0}; a run belongs to one task"
                ));
            }
        }
    }
    Ok(())
}
