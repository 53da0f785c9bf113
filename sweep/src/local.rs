//! Running runs on this machine: a pool of workers, each supervising one child
//! process at a time, writing each finished run's record as soon as it ends, with a
//! progress bar (ETA) on terminals and one line per run otherwise. A stop flag
//! (Ctrl-C) kills the runs in progress and leaves every finished record in place.

use crate::exec::Request;
use crate::plan::Plan;
use crate::store::{Record, Status, Store, StoreError};
use crate::supervise::{Bounds, Outcome, run_child};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// How a batch of runs went.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    pub done: usize,
    pub failed: usize,
    /// Runs the kernel's preconditions refused.
    pub refused: usize,
    /// Runs not finished because the batch was stopped.
    pub unfinished: usize,
    pub interrupted: bool,
    pub wall_s: f64,
}

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// A progress bar on a terminal, else one line per run on standard error.
    Auto,
    /// One line per run on standard output (batch logs).
    Lines,
}

/// What runs the runs: where they come from and go, how many at once, how.
#[derive(Debug, Clone, Copy)]
pub struct Pool<'a> {
    pub store: &'a Store,
    pub plan: &'a Plan,
    /// The `spu-sweep` executable that runs `exec-run`.
    pub exe: &'a Path,
    pub jobs: usize,
    pub bounds: Bounds,
    /// Set (by Ctrl-C) to stop: runs in progress are killed and not recorded.
    pub stop: &'a AtomicBool,
    pub show: Show,
}

/// Runs `ids` (runs of the plan), recording each in the store as it ends.
pub fn execute(pool: Pool<'_>, ids: &[String]) -> Result<Summary, StoreError> {
    let Pool {
        store,
        plan,
        exe,
        jobs,
        bounds,
        stop,
        show,
    } = pool;
    let started = Instant::now();
    let total = ids.len();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let summary = Mutex::new(Summary::default());
    let first_error: Mutex<Option<StoreError>> = Mutex::new(None);
    let bar = (show == Show::Auto && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} runs [{elapsed_precise} < {eta_precise}] {msg}",
            )
            // A constant template that is known to parse.
            .expect("static template"),
        );
        bar
    });
    let print = |line: String| match (&bar, show) {
        (Some(bar), _) => bar.println(line),
        (None, Show::Lines) => spu_io::outln!("{line}"),
        (None, Show::Auto) => spu_io::reportln!("{line}"),
    };
    let width = total.to_string().len();
    let by_id: std::collections::HashMap<&str, &crate::plan::Run> =
        plan.runs.iter().map(|r| (r.id.as_str(), r)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(total.max(1)) {
            scope.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(id) = ids.get(i) else { break };
                    let Some(run) = by_id.get(id.as_str()).copied() else {
                        continue;
                    };
                    let req = Request { run: run.clone() };
                    let record = {
                        let _mark = store.mark_running(id);
                        match run_child(exe, &req, bounds, stop) {
                            Outcome::Finished(r) => r,
                            Outcome::Interrupted => break,
                        }
                    };
                    if let Err(e) = store.write_record(&record) {
                        first_error
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(e);
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                    let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                    let mut s = summary.lock().unwrap_or_else(|p| p.into_inner());
                    match record.status {
                        Status::Done => s.done += 1,
                        Status::Failed => s.failed += 1,
                        Status::Refused => s.refused += 1,
                    }
                    let failed_so_far = s.failed;
                    drop(s);
                    let what = match plan.describe(run) {
                        d if d.is_empty() => d,
                        d => format!(" {d}"),
                    };
                    match (&record, &bar) {
                        (r, Some(bar)) => {
                            if r.status != Status::Done {
                                bar.println(failure_line(r, &what));
                            }
                            bar.inc(1);
                            if failed_so_far > 0 {
                                bar.set_message(format!("{failed_so_far} failed"));
                            }
                        }
                        (r, None) => print(format!(
                            "[{n:>width$}/{total}] {:<6} {}{what} ({:.1} s){}",
                            r.status.name(),
                            r.id,
                            r.wall_s,
                            r.error
                                .as_deref()
                                .map(|e| format!(": {e}"))
                                .unwrap_or_default()
                        )),
                    }
                }
            });
        }
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut s = summary.into_inner().unwrap_or_else(|p| p.into_inner());
    s.unfinished = total - s.done - s.failed - s.refused;
    s.interrupted = stop.load(Ordering::Relaxed);
    s.wall_s = started.elapsed().as_secs_f64();
    Ok(s)
}

fn failure_line(r: &Record, what: &str) -> String {
    format!(
        "{} {}{what}: {}",
        r.status.name(),
        r.id,
        r.error.as_deref().unwrap_or("unknown error")
    )
}
