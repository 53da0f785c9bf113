//! `spu-sweep status`: how far a sweep is (done, failed, running, remaining), why
//! runs failed, and for Slurm sweeps what the queue (and accounting, where enabled)
//! says about each submitted array job; and what to do about damaged records.

use crate::plan::Plan;
use crate::slurm;
use crate::store::{DamagedRecord, Status, Store};
use serde::Serialize;

const REDO_DAMAGED: &str = "run the sweep again (`spu-sweep run SPEC`) to redo the runs of damaged records: it replaces each one";

/// What to do about damaged records, for messages: running again replaces a
/// damaged file, but a folder in a record's place is the user's, and only they
/// may remove it (`run` refuses to start until they have).
pub fn redo_damaged(damaged: &[DamagedRecord]) -> String {
    let folders: Vec<&str> = damaged
        .iter()
        .filter(|d| d.folder)
        .map(|d| d.file.as_str())
        .collect();
    let Some(first) = folders.first() else {
        return REDO_DAMAGED.into();
    };
    let named = if folders.len() == 1 {
        format!("a folder stands where a run record belongs: remove the folder `{first}`")
    } else {
        let shown: Vec<String> = folders.iter().take(5).map(|f| format!("`{f}`")).collect();
        let more = if folders.len() > 5 {
            format!(" and {} more", folders.len() - 5)
        } else {
            String::new()
        };
        format!(
            "folders stand where run records belong: remove the folders {}{more}",
            shown.join(", ")
        )
    };
    let mut s = format!(
        "{named} (a record cannot replace a folder, and spu-sweep never removes one), then run the sweep again (`spu-sweep run SPEC`) to redo {}",
        if folders.len() == 1 {
            "its run"
        } else {
            "their runs"
        }
    );
    if folders.len() < damaged.len() {
        s.push('\n');
        s.push_str(REDO_DAMAGED);
    }
    s
}

/// A sweep's progress.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    pub name: String,
    pub dir: String,
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    /// Runs the kernel's preconditions refused (listed with the failures).
    pub refused: usize,
    pub running: usize,
    pub remaining: usize,
    /// Markers left by runs whose process died (their runs count as remaining).
    pub stale: usize,
    pub failures: Vec<Failure>,
    /// Record files that cannot be read (their runs count as remaining).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<DamagedRecord>,
    pub jobs: Vec<Job>,
    /// Slurm batch records that cannot be read (their jobs are not shown).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damaged_batches: Vec<slurm::DamagedBatch>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// `failed` or `refused`.
    pub status: String,
    pub run: String,
    pub columns: String,
    pub error: String,
}

/// One submitted Slurm array job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub batch: usize,
    pub job_id: String,
    pub tasks: usize,
    /// `(state, tasks)` from `squeue`; `None` when it cannot be asked.
    pub queue: Option<Vec<(String, usize)>>,
    /// `(state, tasks)` from `sacct`; `None` without accounting.
    pub accounting: Option<Vec<(String, usize)>>,
}

/// Gathers the progress of the sweep in `store`.
pub fn progress(store: &Store, plan: &Plan) -> Progress {
    let ids = plan.unique_ids();
    let (records, damaged) = store.scan(plan);
    let markers = store.running();
    let mut p = Progress {
        name: plan.name.clone(),
        dir: store.dir.display().to_string(),
        total: ids.len(),
        done: 0,
        failed: 0,
        refused: 0,
        running: 0,
        remaining: 0,
        stale: 0,
        failures: Vec::new(),
        damaged,
        jobs: Vec::new(),
        damaged_batches: Vec::new(),
    };
    let (batches, damaged_batches) = slurm::batches(store);
    p.damaged_batches = damaged_batches;
    for b in batches {
        let Some(job_id) = b.job_id.clone() else {
            continue;
        };
        p.jobs.push(Job {
            batch: b.batch,
            queue: slurm::queue_states(&job_id),
            accounting: slurm::accounting_states(&job_id),
            job_id,
            tasks: b.tasks.len(),
        });
    }
    // Markers from other hosts cannot be checked; with no task left in the
    // queue, their runs are not running either.
    let queue_empty = !p.jobs.is_empty()
        && p.jobs
            .iter()
            .all(|j| j.queue.as_ref().is_some_and(|q| q.is_empty()));
    let here = crate::store::host();
    // Failed runs are described by their columns: looked up once each.
    let runs: std::collections::HashMap<&str, &crate::plan::Run> =
        plan.runs.iter().rev().map(|r| (r.id.as_str(), r)).collect();
    for id in ids {
        match records.get(id).map(|r| r.status) {
            Some(Status::Done) => p.done += 1,
            Some(status @ (Status::Failed | Status::Refused)) => {
                if status == Status::Failed {
                    p.failed += 1;
                } else {
                    p.refused += 1;
                }
                p.failures.push(Failure {
                    run: id.to_string(),
                    columns: runs.get(id).map(|r| plan.describe(r)).unwrap_or_default(),
                    error: records[id].error.clone().unwrap_or_default(),
                    status: status.name().into(),
                });
            }
            None => match markers.iter().find(|m| m.0 == id) {
                Some(m) if m.3 && !(queue_empty && m.1 != here) => p.running += 1,
                Some(_) => {
                    p.stale += 1;
                    p.remaining += 1;
                }
                None => p.remaining += 1,
            },
        }
    }
    p
}

/// Task states as `squeue`/`sacct` printed them (escaped: [`spu_io::quote::escape`])
/// with their counts.
fn states(s: &[(String, usize)]) -> String {
    if s.is_empty() {
        return "none".into();
    }
    s.iter()
        .map(|(state, n)| format!("{n} {}", spu_io::quote::escape(&state.to_lowercase())))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Progress {
    /// The human-readable report.
    pub fn render(&self) -> String {
        let escape = spu_io::quote::escape;
        let mut s = format!(
            "sweep `{}` in {}: {}\n",
            escape(&self.name),
            escape(&self.dir),
            crate::count(self.total, "run")
        );
        s.push_str(&format!("  done       {}\n", self.done));
        s.push_str(&format!("  failed     {}\n", self.failed));
        if self.refused > 0 {
            s.push_str(&format!(
                "  refused    {} (the kernel's preconditions refused the parameters)\n",
                self.refused
            ));
        }
        s.push_str(&format!("  running    {}\n", self.running));
        s.push_str(&format!("  remaining  {}\n", self.remaining));
        if self.stale > 0 {
            s.push_str(&format!(
                "  ({} of the remaining {} running when {} process died)\n",
                self.stale,
                if self.stale == 1 { "was" } else { "were" },
                if self.stale == 1 { "its" } else { "their" }
            ));
        }
        for f in self.failures.iter().take(20) {
            s.push_str(&format!(
                "{} {} {}: {}\n",
                f.status,
                escape(&f.run),
                f.columns,
                escape(&f.error)
            ));
        }
        if self.failures.len() > 20 {
            s.push_str(&format!(
                "... and {} more\n",
                crate::count(self.failures.len() - 20, "failed run")
            ));
        }
        if self.failed > 0 {
            s.push_str("re-run them with `spu-sweep run SPEC --retry-failed`\n");
        }
        for d in self.damaged.iter().take(20) {
            s.push_str(&format!(
                "damaged record `{}` of run {} (counted as remaining): {}\n",
                escape(&d.file),
                escape(&d.run),
                escape(&d.why)
            ));
        }
        if self.damaged.len() > 20 {
            s.push_str(&format!(
                "... and {} more\n",
                crate::count(self.damaged.len() - 20, "damaged record")
            ));
        }
        if !self.damaged.is_empty() {
            s.push_str(&format!("{}\n", redo_damaged(&self.damaged)));
        }
        for d in &self.damaged_batches {
            s.push_str(&format!(
                "damaged Slurm batch record `{}` (its job is not shown, and its tasks refuse to run): {}\n",
                d.file,
                escape(&d.why)
            ));
        }
        if !self.damaged_batches.is_empty() {
            s.push_str("submit the unfinished runs again with `spu-sweep run SPEC --slurm`\n");
        }
        let mut queued = 0;
        for j in &self.jobs {
            let queue = match &j.queue {
                Some(q) => {
                    queued += q.iter().map(|(_, n)| n).sum::<usize>();
                    format!("queue: {}", states(q))
                }
                None if !crate::slurm::is_job_id(&j.job_id) => {
                    "queue: not asked (the recorded job id is not a number)".into()
                }
                None => "queue: squeue not available".into(),
            };
            let acct = match &j.accounting {
                Some(a) => format!("; accounting: {}", states(a)),
                None => String::new(),
            };
            s.push_str(&format!(
                "slurm job {} (batch {}, {}): {queue}{acct}\n",
                spu_io::quote::escape(&j.job_id),
                j.batch,
                crate::count(j.tasks, "task")
            ));
        }
        if !self.jobs.is_empty()
            && queued == 0
            && self.remaining > 0
            && self.jobs.iter().all(|j| j.queue.is_some())
        {
            s.push_str(&format!(
                "no task is queued but {} unfinished: see {}/slurm/logs, then submit again with `spu-sweep run SPEC --slurm`\n",
                if self.remaining == 1 {
                    "1 run is".to_string()
                } else {
                    format!("{} runs are", self.remaining)
                },
                escape(&self.dir)
            ));
        }
        s
    }
}
