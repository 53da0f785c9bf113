//! Running a sweep on a Slurm cluster: the pending runs are dealt round-robin into
//! tasks of a few runs each (many short runs per task, not one job per run), written
//! as one `sbatch --array` job whose task `T` runs `spu-sweep exec-task DIR --batch B
//! --task T` into the shared results folder. Each batch keeps a copy of the plan it
//! was made from, so re-planning the folder while a job runs cannot confuse it; the
//! script carries the SHA-256 of that plan and of the batch, which the task checks
//! ([`crate::task`]).
//! Status comes from `squeue` (and `sacct` where accounting is enabled) plus the
//! records themselves.
//!
//! The job script runs a command line, so every value in it is checked or quoted
//! ([`script`]): no value may hold a control character (a newline would start a
//! command of its own), `#SBATCH` values are quoted the way `sbatch` reads them,
//! the command is quoted for the shell, and numbers are computed without
//! overflow.

use crate::json::to_json;
use crate::plan::Plan;
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use spu_io::quote::shorten;
use std::path::Path;
use std::process::Command;

/// Longest task time limit: Slurm keeps minutes in 32 bits, and its two largest
/// values mean "infinite" and "not set".
pub const MAX_TASK_MINUTES: u64 = u32::MAX as u64 - 2;

/// Memory `sbatch` is asked for on top of the per-run bound (the task's own
/// process and the child's overhead), in MiB.
const TASK_OVERHEAD_MIB: u64 = 256;

/// How to submit.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// Most tasks running at once (`%K` of `--array`).
    pub max_parallel: Option<u32>,
    pub runs_per_task: usize,
    /// Time limit per task in minutes; by default from the per-run bound.
    pub time_min: Option<u64>,
    /// More `sbatch` options, each one argument (e.g. `--account=abc`).
    pub sbatch_args: Vec<String>,
    /// Wait until every task has ended.
    pub wait: bool,
    /// Write the batch and its script but submit nothing.
    pub dry_run: bool,
}

/// One array job; stored in `slurm/batch-B.json` (without a job id until it is
/// submitted).
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
    /// SHA-256 of the batch's plan (`slurm/batch-B.plan.json`) as submitted: the
    /// job script passes it to its tasks, which refuse a plan edited since (it names
    /// the files the runs read).
    #[serde(default)]
    pub plan_sha256: Option<String>,
}

impl Batch {
    /// SHA-256 of what the batch's tasks run (its number, runs, bounds and plan
    /// hash; not the job id, recorded after submission): the job script passes it
    /// to its tasks, which refuse a batch record edited since.
    pub fn work_sha256(&self) -> String {
        #[derive(Serialize)]
        struct Work<'a> {
            batch: usize,
            tasks: &'a [Vec<String>],
            timeout_s: u64,
            memory_mib: u64,
            plan_sha256: Option<&'a str>,
        }
        let work = Work {
            batch: self.batch,
            tasks: &self.tasks,
            timeout_s: self.timeout_s,
            memory_mib: self.memory_mib,
            plan_sha256: self.plan_sha256.as_deref(),
        };
        // Strings, numbers and lists: serialising cannot fail.
        crate::plan::sha256_hex(&serde_json::to_vec(&work).unwrap_or_default())
    }
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
    #[error("{what} `{value}` cannot go into a Slurm job script: {why}")]
    Unsafe {
        what: String,
        value: String,
        why: String,
    },
    #[error(
        "the task time limit would be {minutes} minutes ({} of {timeout_s} s), more than Slurm takes ({MAX_TASK_MINUTES}); give `--time MINUTES` or fewer `--runs-per-task`",
        crate::count(usize::try_from(*runs).unwrap_or(usize::MAX), "run")
    )]
    TooLong {
        minutes: u128,
        runs: u64,
        timeout_s: u64,
    },
    #[error("a batch of no runs has no job script")]
    Empty,
    #[error(
        "a batch without its plan's SHA-256 has no job script: its tasks could not check the plan"
    )]
    NoPlanHash,
}

fn unsafe_value(what: &str, value: &str, why: &str) -> SlurmError {
    SlurmError::Unsafe {
        what: what.to_string(),
        value: shorten(&value.escape_debug().to_string()),
        why: why.to_string(),
    }
}

/// Refuses text with a control character: a newline (or a carriage return, a NUL)
/// in a job script would end the line it is on and start a command.
fn plain_text(what: &str, value: &str) -> Result<(), SlurmError> {
    if value.chars().any(char::is_control) {
        return Err(unsafe_value(
            what,
            value,
            "it holds a control character (a newline, tab or the like); use a value without one",
        ));
    }
    Ok(())
}

/// A path as text for a job script, refused if it is not UTF-8 or holds a control
/// character.
fn path_text(what: &str, path: &Path) -> Result<String, SlurmError> {
    let text = path.to_str().ok_or_else(|| {
        unsafe_value(
            what,
            &path.display().to_string(),
            "it is not UTF-8; use a path that is",
        )
    })?;
    plain_text(what, text)?;
    Ok(text.to_string())
}

/// One argument of an `#SBATCH` line as `sbatch` reads it back: quoted when it
/// holds a space, a quote, a backslash or `#` (which would start a comment).
fn sbatch_word(text: &str) -> String {
    if text.contains([' ', '"', '\'', '\\', '#']) {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        text.to_string()
    }
}

/// Quotes text for the shell: single quotes, inside which only `'` is special.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The `sbatch` options the job script sets: (long name, short letter, how the
/// user sets its value instead).
const OWNED_OPTIONS: &[(&str, Option<char>, &str)] = &[
    (
        "array",
        Some('a'),
        "one task per group of runs: size the groups with --runs-per-task, limit the tasks running at once with --max-parallel",
    ),
    (
        "output",
        Some('o'),
        "the task logs go to the results folder's slurm/logs",
    ),
    (
        "error",
        Some('e'),
        "the task logs go to the results folder's slurm/logs",
    ),
    ("job-name", Some('J'), "from the sweep's `name`"),
    ("mem", None, "set it with --memory, in MiB per run"),
    (
        "mem-per-cpu",
        None,
        "set the memory with --memory, in MiB per run",
    ),
    (
        "mem-per-gpu",
        None,
        "set the memory with --memory, in MiB per run",
    ),
    ("cpus-per-task", Some('c'), "a run uses one core"),
    ("ntasks", Some('n'), "each array task is one task"),
    ("time", Some('t'), "set it with --time, in minutes"),
    ("partition", Some('p'), "set it with --partition"),
    ("wrap", None, "the job runs the script spu-sweep writes"),
    (
        "parsable",
        None,
        "it passes it to sbatch to read the job id",
    ),
    (
        "test-only",
        None,
        "it submits what it writes; `spu-sweep run --slurm --dry-run` writes the scripts without submitting them",
    ),
    (
        "wait",
        Some('W'),
        "sbatch would not return until the job ends; `spu-sweep run --slurm --wait` waits and shows progress",
    ),
];

/// Short `sbatch` options that take no value, so another may follow in one word
/// (`-Qa 0-9` is `-Q -a 0-9`).
const FLAG_LETTERS: &[char] = &['h', 'H', 'O', 'Q', 's', 'u', 'v', 'V'];

/// The option of [`OWNED_OPTIONS`] an `--sbatch-arg` word sets, if any: a long
/// name or a prefix of one (`sbatch` takes `--arr` for `--array`), or a short
/// letter, alone or after value-less letters.
fn owned_option(arg: &str) -> Option<(&'static str, &'static str)> {
    if let Some(long) = arg.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        if name.is_empty() {
            return None;
        }
        return OWNED_OPTIONS
            .iter()
            .find(|(l, ..)| *l == name)
            .or_else(|| OWNED_OPTIONS.iter().find(|(l, ..)| l.starts_with(name)))
            .map(|(l, _, how)| (*l, *how));
    }
    for c in arg.chars().skip(1) {
        if let Some((l, _, how)) = OWNED_OPTIONS.iter().find(|(_, s, _)| *s == Some(c)) {
            return Some((l, how));
        }
        if !FLAG_LETTERS.contains(&c) {
            return None;
        }
    }
    None
}

/// Checks the options given on the command line before anything is written.
pub fn check_options(opts: &SlurmOptions) -> Result<(), SlurmError> {
    if let Some(p) = &opts.partition {
        plain_text("the partition", p)?;
        if p.is_empty()
            || !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ','))
        {
            return Err(unsafe_value(
                "the partition",
                p,
                "a partition name is letters, digits, `-`, `_` and `.` (several: comma-separated)",
            ));
        }
    }
    for a in &opts.sbatch_args {
        plain_text("the sbatch option", a)?;
        if !a.starts_with('-') {
            return Err(unsafe_value(
                "the sbatch option",
                a,
                "give an option of `sbatch`, such as `--sbatch-arg=--account=abc`",
            ));
        }
        if let Some((long, how)) = owned_option(a) {
            return Err(unsafe_value(
                "the sbatch option",
                a,
                &format!(
                    "spu-sweep writes `--{long}` itself ({how}), and a second one would replace it"
                ),
            ));
        }
    }
    if let Some(m) = opts.time_min
        && !(1..=MAX_TASK_MINUTES).contains(&m)
    {
        return Err(unsafe_value(
            "the time limit",
            &m.to_string(),
            &format!("give 1 to {MAX_TASK_MINUTES} minutes"),
        ));
    }
    Ok(())
}

/// Checks that the results folder (as it will be resolved) can be named in a job
/// script, before anything is written.
pub fn check_folder(dir: &Path) -> Result<(), SlurmError> {
    let absolute = std::env::current_dir()
        .map(|d| d.join(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    log_pattern(&absolute).map(drop)
}

/// The `--output` pattern of the task logs in `dir`: `%` doubled (Slurm would read
/// `%j`, `%a` as the job and task), no backslash (it stops Slurm from filling in
/// the task number).
fn log_pattern(dir: &Path) -> Result<String, SlurmError> {
    let dir = path_text("the results folder", dir)?;
    if dir.contains('\\') {
        return Err(unsafe_value(
            "the results folder",
            &dir,
            "a backslash stops Slurm from naming each task's log; use a folder whose path has none",
        ));
    }
    Ok(dir.replace('%', "%%"))
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

/// The job script of a batch whose results go to `dir` (an absolute path) and
/// whose tasks run `exe`. Every line is one the tool means to write: the values in
/// it are checked and quoted, so no input can add a line or a command.
pub fn script(
    dir: &Path,
    exe: &Path,
    name: &str,
    batch: &Batch,
    opts: &SlurmOptions,
) -> Result<String, SlurmError> {
    check_options(opts)?;
    plain_text("the sweep name", name)?;
    let logs = log_pattern(dir)?;
    let dir = path_text("the results folder", dir)?;
    let exe = path_text("the spu-sweep executable", exe)?;
    let last_task = batch.tasks.len().checked_sub(1).ok_or(SlurmError::Empty)?;
    let per_task = batch.tasks.iter().map(Vec::len).max().unwrap_or(1) as u64;
    let minutes = match opts.time_min {
        Some(m) => m,
        None => {
            // Whole minutes for every run of the largest task, plus 5 to start up.
            let m = (u128::from(per_task) * u128::from(batch.timeout_s)).div_ceil(60) + 5;
            u64::try_from(m)
                .ok()
                .filter(|m| *m <= MAX_TASK_MINUTES)
                .ok_or(SlurmError::TooLong {
                    minutes: m,
                    runs: per_task,
                    timeout_s: batch.timeout_s,
                })?
        }
    };
    let memory = batch
        .memory_mib
        .checked_add(TASK_OVERHEAD_MIB)
        .ok_or_else(|| {
            unsafe_value(
                "the memory bound",
                &batch.memory_mib.to_string(),
                "it is too large; give fewer MiB",
            )
        })?;
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# spu-sweep: batch {} of sweep `{}`, {} task(s)\n",
        batch.batch,
        sanitize(name),
        batch.tasks.len()
    ));
    let array = match opts.max_parallel {
        Some(k) => format!("0-{last_task}%{k}"),
        None => format!("0-{last_task}"),
    };
    let directives = [
        format!("--job-name=spu-sweep-{}", sanitize(name)),
        format!("--array={array}"),
        format!("--output={logs}/slurm/logs/batch-{}-%a.out", batch.batch),
        "--ntasks=1".into(),
        "--cpus-per-task=1".into(),
        format!("--mem={memory}M"),
        format!("--time={minutes}"),
    ];
    let partition = opts.partition.iter().map(|p| format!("--partition={p}"));
    for d in directives
        .into_iter()
        .chain(partition)
        .chain(opts.sbatch_args.iter().cloned())
    {
        s.push_str(&format!("#SBATCH {}\n", sbatch_word(&d)));
    }
    let plan_sha256 = match &batch.plan_sha256 {
        // 64 hex digits: nothing to quote.
        Some(h) if h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit()) => h,
        Some(h) => {
            return Err(unsafe_value(
                "the batch plan's SHA-256",
                h,
                "it is not 64 hexadecimal digits",
            ));
        }
        None => return Err(SlurmError::NoPlanHash),
    };
    s.push_str(&format!(
        "exec {} exec-task {} --batch {} --task \"$SLURM_ARRAY_TASK_ID\" --plan-sha256 {plan_sha256} --batch-sha256 {}\n",
        shell_quote(&exe),
        shell_quote(&dir),
        batch.batch,
        batch.work_sha256()
    ));
    Ok(s)
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

/// The number the next batch gets: the first one not written yet, or written but
/// never submitted (a `--dry-run`, or a submission `sbatch` refused).
fn next_batch(store: &Store) -> usize {
    (0..)
        .find(|b| {
            let name = format!("slurm/batch-{b}.json");
            if store.dir.join(&name).symlink_metadata().is_err() {
                return true;
            }
            store
                .read_own(&name)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Batch>(&bytes).ok())
                .is_some_and(|b| b.job_id.is_none())
        })
        .unwrap_or(0)
}

/// Writes the batch, its plan and its script and submits it (unless
/// `opts.dry_run`); returns the batch with its job id.
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
        plan_sha256: None,
    };
    let plan_json = crate::plan::file::to_bytes(plan);
    batch.plan_sha256 = Some(crate::plan::sha256_hex(&plan_json));
    let b = batch.batch;
    let dir = std::fs::canonicalize(&store.dir).unwrap_or_else(|_| store.dir.clone());
    // Checked before anything is written.
    let text = script(&dir, exe, &plan.name, &batch, opts)?;
    // Slurm writes the task logs there: a folder of the results folder's own.
    store.own_dir(Path::new("slurm/logs"))?;
    store.write(&format!("slurm/batch-{b}.plan.json"), &plan_json)?;
    store.write(&format!("slurm/batch-{b}.json"), &to_json(&batch))?;
    let script_name = format!("slurm/batch-{b}.sh");
    store.write(&script_name, text.as_bytes())?;
    if opts.dry_run {
        return Ok(batch);
    }
    let mut cmd = Command::new("sbatch");
    // The script by its absolute path: a results folder named `-o.sweep` would read
    // as sbatch's option `-o`, and sbatch would take the job script from standard
    // input instead.
    let submitted = dir.join(&script_name);
    let submitted = if submitted.is_absolute() {
        submitted
    } else {
        Path::new(".").join(submitted)
    };
    cmd.arg("--parsable").arg(submitted);
    // Task logs quote errors of runs: keep them as private as the inputs.
    if store.mode() & 0o044 != 0o044 {
        cmd.env("SLURM_UMASK", "0077");
    }
    let out = output(&mut cmd, "sbatch")?;
    let job = out
        .split([';', '\n'])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    if !is_job_id(&job) {
        return Err(SlurmError::Failed {
            command: "sbatch".into(),
            stderr: format!(
                "it printed `{}` where `--parsable` prints the job id (a number); the batch was not recorded as submitted",
                shorten(&spu_io::quote::escape(out.trim())),
            ),
        });
    }
    batch.job_id = Some(job);
    store.write(&format!("slurm/batch-{b}.json"), &to_json(&batch))?;
    Ok(batch)
}

/// Longest a Slurm command may take: a controller that does not answer is
/// reported, not waited for for ever (Slurm's own commands give up after their
/// `MessageTimeout`, 10 s by default, and a few retries).
const COMMAND_SECONDS: u64 = 60;

/// Most of a Slurm command's standard output kept (job ids, queue lines);
/// its messages keep their last [`MESSAGE_TAIL`] bytes.
const OUTPUT_BYTES: u64 = 64 << 20;
const MESSAGE_TAIL: usize = 16 << 10;

fn output(cmd: &mut Command, name: &str) -> Result<String, SlurmError> {
    use std::io::Read;
    let spawn = |error| SlurmError::Spawn {
        command: name.into(),
        error,
    };
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(spawn)?;
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(spawn(std::io::Error::other("no pipes")));
    };
    // Both pipes are drained as the command writes, within bounds.
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut limited = stdout.take(OUTPUT_BYTES);
        let _ = limited.read_to_end(&mut kept);
        let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
        let _ = out_tx.send(kept);
    });
    std::thread::spawn(move || {
        let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend(&buf[..n]);
            let extra = tail.len().saturating_sub(MESSAGE_TAIL);
            tail.drain(..extra);
        }
        let _ = err_tx.send(Vec::from(tail));
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed().as_secs() >= COMMAND_SECONDS => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SlurmError::Failed {
                    command: name.into(),
                    stderr: format!(
                        "no answer within {COMMAND_SECONDS} s (stopped); check that the Slurm controller is up (`scontrol ping`)"
                    ),
                });
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(error) => return Err(spawn(error)),
        }
    };
    // A process the command left behind may hold its pipes open: what came
    // within a few seconds of its end is what it said.
    let wait = std::time::Duration::from_secs(5);
    let stdout = out_rx.recv_timeout(wait).unwrap_or_default();
    let stderr = err_rx.recv_timeout(wait).unwrap_or_default();
    if !status.success() {
        let text = String::from_utf8_lossy(&stderr);
        let text = text.trim();
        return Err(SlurmError::Failed {
            command: name.into(),
            stderr: if stderr.len() >= MESSAGE_TAIL {
                format!("(its last {} bytes) ...{text}", MESSAGE_TAIL)
            } else {
                text.to_string()
            },
        });
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// A batch record (`slurm/batch-B.json`) that cannot be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DamagedBatch {
    /// The file, as messages name it (escaped).
    pub file: String,
    pub why: String,
}

/// Every batch written into this results folder (numbered from 0 to the first
/// number without a file), and the batch records that cannot be read.
pub fn batches(store: &Store) -> (Vec<Batch>, Vec<DamagedBatch>) {
    let (mut good, mut damaged) = (Vec::new(), Vec::new());
    for b in 0.. {
        let name = format!("slurm/batch-{b}.json");
        let path = store.dir.join(&name);
        if path.symlink_metadata().is_err() {
            break;
        }
        let read = store.read_own(&name).and_then(|bytes| {
            serde_json::from_slice::<Batch>(&bytes)
                .map_err(|e| format!("it is not a batch record: {e}"))
        });
        match read {
            Ok(batch) => good.push(batch),
            Err(why) => damaged.push(DamagedBatch {
                file: spu_io::quote::path(&path),
                why,
            }),
        }
    }
    (good, damaged)
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
/// A Slurm job id as `sbatch --parsable` prints it: digits (what a batch record
/// holds is checked before it reaches `squeue` or `sacct`, or a terminal).
pub fn is_job_id(job: &str) -> bool {
    !job.is_empty() && job.len() <= 20 && job.bytes().all(|b| b.is_ascii_digit())
}

fn squeue(job: &str) -> Result<Vec<(String, usize)>, SlurmError> {
    if !is_job_id(job) {
        return Err(unsafe_value("the job id", job, "it is not a number"));
    }
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
    if !is_job_id(job) {
        return None;
    }
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
    fn options_that_change_what_sbatch_prints_or_whether_it_submits_are_owned() {
        for (arg, owned) in [
            ("--parsable", Some("parsable")),
            ("--test-only", Some("test-only")),
            ("--test", Some("test-only")),
            ("--wait", Some("wait")),
            ("-W", Some("wait")),
            ("-QW", Some("wait")),
            ("--account=abc", None),
            ("-Q", None),
        ] {
            assert_eq!(owned_option(arg).map(|o| o.0), owned, "{arg}");
        }
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
