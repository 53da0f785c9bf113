//! Running clang under limits: a time limit ([`TIMEOUT_ENV`]), a limit on its
//! resident memory ([`MEMORY_ENV`]), a stop as soon as it waits on a named pipe,
//! and cleanup of the child and the temporary folder when a signal ends the tool.

use super::{CudaError, DEFAULT_TIMEOUT, MEMORY_ENV, MEMORY_LIMIT, TIMEOUT_ENV};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A positive whole number from the environment variable `var`, or `default`
/// when it is unset or empty; anything else is refused (a limit silently ignored
/// would be a surprise hours later).
fn env_limit(var: &'static str, unit: &'static str, default: u64) -> Result<u64, CudaError> {
    let Some(raw) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
        return Ok(default);
    };
    raw.to_str()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| CudaError::Setting {
            var,
            value: spu_io::quote::shorten(&raw.to_string_lossy()),
            unit,
            default,
        })
}

/// The memory limit in bytes: [`MEMORY_ENV`] MiB if set.
pub(super) fn memory_limit() -> Result<u64, CudaError> {
    env_limit(MEMORY_ENV, "MiB", MEMORY_LIMIT >> 20).map(|m| m.saturating_mul(1 << 20))
}

/// The time limit: [`TIMEOUT_ENV`] seconds if set.
pub(super) fn timeout() -> Result<Duration, CudaError> {
    env_limit(TIMEOUT_ENV, "seconds", DEFAULT_TIMEOUT.as_secs()).map(Duration::from_secs)
}

/// Runs clang within `(limit, memory)` ([`timeout`], [`memory_limit`]); its
/// standard error goes to ours, or (`capture`) is returned (at most 1 MiB of it).
pub(super) fn run(
    mut command: Command,
    clang: &Path,
    file: &str,
    (limit, memory): (Duration, u64),
    capture: bool,
) -> Result<(std::process::ExitStatus, String), CudaError> {
    // After Ctrl-C, SIGTERM or SIGHUP no clang starts (the handler stops those
    // that run, and would miss a later one).
    if spu_io::interrupt::requested() {
        return Err(CudaError::Interrupted {
            file: file.to_string(),
        });
    }
    // A group of its own, so what clang starts is stopped with it.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(if capture {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => CudaError::NoClang {
                file: file.to_string(),
                looked: format!("clang `{}` does not exist", clang.display()),
            },
            _ => CudaError::Spawn {
                clang: clang.display().to_string(),
                error,
            },
        })?;
    // Stopped if a signal ends the tool: nothing would bound it any more.
    let _registered = Registered::child(child.id());
    // Read beside the wait, so a full pipe never stops clang.
    let said = child
        .stderr
        .take()
        .and_then(|err| spu_io::process::read_on_thread(err, 1 << 20));
    let started = Instant::now();
    let stop = |child: &mut std::process::Child| {
        spu_io::process::kill_group(child.id());
        let _ = child.wait();
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                stop(&mut child);
                return Err(CudaError::Timeout {
                    file: file.to_string(),
                    secs: limit.as_secs(),
                });
            }
            // Opening or reading a named pipe: an `#include` in a spelling the
            // check before clang did not see (a macro, `#import`, a link).
            Ok(None) if waits_on_pipe(child.id()) => {
                stop(&mut child);
                return Err(CudaError::Io {
                    file: file.to_string(),
                    why: "clang waits on a named pipe (FIFO) that the file includes, which may never end; copy its text into a file beside the kernel".to_string(),
                });
            }
            Ok(None) if resident_bytes(child.id()).is_some_and(|b| b > memory) => {
                stop(&mut child);
                return Err(CudaError::Memory {
                    file: file.to_string(),
                    mib: memory >> 20,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                return Err(CudaError::Io {
                    file: file.to_string(),
                    why: format!("cannot wait for clang: {e}"),
                });
            }
        }
    };
    let said = said
        .and_then(|t| t.join().ok())
        .map(|buf| String::from_utf8_lossy(&buf).into_owned())
        .unwrap_or_default();
    Ok((status, said))
}

/// A temporary folder or a child process that [`spu_io::interrupt`] cleans up if a
/// signal ends the tool, for as long as this lives.
pub(super) enum Registered {
    Folder(PathBuf),
    Child(u32),
}

impl Registered {
    pub(super) fn folder(path: &Path) -> Self {
        spu_io::interrupt::register_folder(path);
        Registered::Folder(path.to_path_buf())
    }

    pub(super) fn child(pid: u32) -> Self {
        spu_io::interrupt::register_child(pid);
        Registered::Child(pid)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        match self {
            Registered::Folder(p) => spu_io::interrupt::unregister_folder(p),
            Registered::Child(pid) => spu_io::interrupt::unregister_child(*pid),
        }
    }
}

/// True when a process sleeps opening or reading a pipe, where the system shows
/// it (`/proc` on Linux). clang's standard input is empty and it only writes its
/// output, so such a wait is a named pipe among the files it reads.
fn waits_on_pipe(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/wchan")).is_ok_and(|w| {
        w == "wait_for_partner" || w.starts_with("pipe_read") || w.starts_with("pipe_wait")
    })
}

/// A process's resident memory, where the system shows it (`/proc` on Linux).
fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}
