//! Running one run in a child process (`spu-sweep exec-run`) so that its time and
//! memory can be bounded and a crash cannot take the sweep down: the request goes
//! to the child's standard input, the result comes back on its standard output,
//! and every way it can end (finished, failed, out of time or memory, crashed,
//! interrupted) becomes a [`Record`] or [`Outcome::Interrupted`].

use crate::exec::{Reply, Request};
use crate::plan::TOOL_VERSION;
use crate::store::{Record, Status, host};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Per-run limits.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub timeout_s: u64,
    pub memory_mib: u64,
}

impl Bounds {
    /// The bounds runs started from this process can have: the memory bound is
    /// lowered to the hard limit this process inherited (`ulimit -v`), which a
    /// run cannot raise, with a note saying so.
    pub fn within_inherited_limit(self) -> (Bounds, Option<String>) {
        match spu_io::process::memory_ceiling_mib() {
            Some(ceiling) if ceiling < self.memory_mib => (
                Bounds {
                    memory_mib: ceiling,
                    ..self
                },
                Some(format!(
                    "note: this process may use at most {ceiling} MiB of memory (a hard limit \
                     it inherited, as `ulimit -v` sets), less than the runs' bound of {} MiB: \
                     runs are bound to {ceiling} MiB; give `--memory` to choose a lower bound, \
                     or raise the limit",
                    self.memory_mib
                )),
            ),
            _ => (self, None),
        }
    }
}

/// What the child prints on standard output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChildOutput {
    Done(Reply),
    Failed {
        message: String,
        details: String,
        /// The run could not allocate its memory (within its bound).
        #[serde(default)]
        out_of_memory: bool,
    },
    /// The kernel's preconditions refused the run's parameters.
    Refused {
        message: String,
    },
}

/// How a supervised run ended.
#[derive(Debug)]
pub enum Outcome {
    Finished(Record),
    /// Stopped by Ctrl-C (or the stop flag): nothing is recorded.
    Interrupted,
}

/// Exit code of the child when the run failed (its output says why).
pub const RUN_FAILED: i32 = 1;

/// Largest child output kept: results are small; anything bigger is a fault.
const MAX_STDOUT: u64 = 64 << 20;
/// Tail of the child's standard error kept for crash reports.
const STDERR_TAIL: usize = 4000;

/// Runs `req` in a child process of `exe`, within `bounds`, until it ends or `stop`
/// is set.
pub fn run_child(exe: &Path, req: &Request, bounds: Bounds, stop: &AtomicBool) -> Outcome {
    let started = Instant::now();
    let failed = |message: String, details: String| {
        Outcome::Finished(Record {
            id: req.run.id.clone(),
            status: Status::Failed,
            metrics: Default::default(),
            error: Some(message),
            details,
            warnings: String::new(),
            wall_s: started.elapsed().as_secs_f64(),
            host: host(),
            tool_version: TOOL_VERSION.into(),
        })
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let mut child = match Command::new(exe)
        .arg("exec-run")
        .arg("--memory-mib")
        .arg(bounds.memory_mib.to_string())
        .arg("--parent")
        .arg(std::process::id().to_string())
        .arg("--cpu-s")
        // A backstop behind the wall-time bound, allowing every core to be busy.
        .arg(
            bounds
                .timeout_s
                .saturating_mul(threads)
                .saturating_add(10)
                .to_string(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return failed(
                format!("cannot start `{} exec-run`: {e}", spu_io::quote::path(exe)),
                String::new(),
            );
        }
    };
    // The request is small; a child that died early just closes the pipe.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&serde_json::to_vec(req).unwrap_or_default());
    }
    use spu_io::process::read_on_thread;
    let stdout = child
        .stdout
        .take()
        .and_then(|p| read_on_thread(p, MAX_STDOUT));
    let stderr = child
        .stderr
        .take()
        .and_then(|p| read_on_thread(p, MAX_STDOUT));
    let timeout = Duration::from_secs(bounds.timeout_s);
    let mut nap = Duration::from_millis(1);
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (status, false),
            Ok(None) => {}
            Err(e) => return failed(format!("cannot wait for the run: {e}"), String::new()),
        }
        if stop.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Outcome::Interrupted;
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            match child.wait() {
                Ok(status) => break (status, true),
                Err(e) => return failed(format!("cannot wait for the run: {e}"), String::new()),
            }
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let out = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let err = String::from_utf8_lossy(&err);
    let tail = tail(&err);
    if stopped_with_sweep(status.signal(), stop) {
        return Outcome::Interrupted;
    }
    if timed_out {
        return failed(
            format!(
                "timed out after {} s (raise `timeout_s` in the spec or --timeout)",
                bounds.timeout_s
            ),
            tail,
        );
    }
    if status.success() || status.code() == Some(RUN_FAILED) {
        return match serde_json::from_slice::<ChildOutput>(&out) {
            Ok(ChildOutput::Done(reply)) => Outcome::Finished(Record {
                id: req.run.id.clone(),
                status: Status::Done,
                metrics: reply.metrics,
                error: None,
                details: String::new(),
                warnings: reply.warnings,
                wall_s: started.elapsed().as_secs_f64(),
                host: host(),
                tool_version: TOOL_VERSION.into(),
            }),
            // Global memory the run's address-space bound refused: said as for an
            // abort, the emulator's message kept in the details.
            Ok(ChildOutput::Failed {
                message,
                details,
                out_of_memory: true,
            }) => failed(
                format!(
                    "exceeded its memory bound of {} MiB (raise `memory_mib` in the spec or --memory)",
                    bounds.memory_mib
                ),
                format!("{message}\n{details}"),
            ),
            Ok(ChildOutput::Failed {
                message, details, ..
            }) => failed(message, details),
            Ok(ChildOutput::Refused { message }) => Outcome::Finished(Record {
                id: req.run.id.clone(),
                status: Status::Refused,
                metrics: Default::default(),
                error: Some(message),
                details: String::new(),
                warnings: String::new(),
                wall_s: started.elapsed().as_secs_f64(),
                host: host(),
                tool_version: TOOL_VERSION.into(),
            }),
            Err(e) => failed(format!("the run's output cannot be read: {e}"), tail),
        };
    }
    let memory = err.contains("memory allocation of") || err.contains("Cannot allocate memory");
    let message = match (status.signal(), status.code()) {
        (Some(spu_io::process::SIGXCPU), _) => format!(
            "exceeded its CPU-time bound ({} s of CPU time)",
            bounds.timeout_s
        ),
        (Some(_), _) | (None, Some(_)) if memory => format!(
            "exceeded its memory bound of {} MiB (raise `memory_mib` in the spec or --memory)",
            bounds.memory_mib
        ),
        (Some(sig), _) => format!(
            "was killed by {} (not by a stop of the sweep)",
            spu_io::process::describe_signal(sig)
        ),
        (None, Some(101)) => "crashed (the simulator panicked; please report it)".into(),
        (None, Some(code)) => format!("ended with exit code {code}"),
        (None, None) => "ended without a status".into(),
    };
    failed(message, tail)
}

/// How long a run killed by a stop request (SIGINT, SIGTERM, SIGHUP) waits for
/// the same signal to reach the sweep: one sent to the process group lands in
/// both, in no set order.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// True when a run that ended by `signal` was stopped along with the sweep, so
/// it is left to do again, not recorded: the sweep was told to stop (and then
/// any signal may have ended the run), or the run died of a stop request that
/// reaches the sweep within [`STOP_GRACE`]. A run killed on its own (a stop
/// request sent to it alone, the out-of-memory killer) is a failure.
fn stopped_with_sweep(signal: Option<i32>, stop: &AtomicBool) -> bool {
    let Some(signal) = signal else {
        return false;
    };
    if stop.load(Ordering::Relaxed) {
        return true;
    }
    if !spu_io::process::is_stop_request(signal) {
        return false;
    }
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        if stop.load(Ordering::Relaxed) {
            return true;
        }
    }
    false
}

fn tail(s: &str) -> String {
    let s = s.trim_end();
    if s.len() <= STDERR_TAIL {
        return s.to_string();
    }
    let mut start = s.len() - STDERR_TAIL;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &s[start..])
}
