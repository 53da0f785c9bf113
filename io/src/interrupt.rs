//! Ctrl-C (and, with [`install_with_termination`], SIGTERM and SIGHUP). The handler
//! sets a flag that long-running work (a simulation, writing an output) polls so it
//! can stop cleanly and report where it was. If the work has not ended a second
//! later (it was reading a pipe, assembling, or waiting for clang), the handler
//! stops the child processes still registered, removes every temporary output file
//! and folder still registered and ends the process with exit code 128 + the
//! signal (130 for SIGINT, as shells report it). A second signal ends it at once
//! the same way. SIGKILL cannot be caught: it leaves them behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The exit code after Ctrl-C, as shells report SIGINT (128 + 2).
pub const INTERRUPTED: u8 = 130;

/// How long cooperative work gets to stop on its own.
const GRACE: Duration = Duration::from_millis(1000);

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The exit code of the signal that set [`REQUESTED`] (0 while none did).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// Temporary files to remove if the process ends from the handler.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Temporary folders (with their contents) to remove if the process ends from the
/// handler.
static FOLDERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Child processes (their ids) to stop if the process ends from the handler: they
/// would outlive it, and the limits it watched them with.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Installs the Ctrl-C handler (once per process) and returns the flag it sets.
/// `None` if no handler could be installed (Ctrl-C then ends the process at once).
pub fn install() -> Option<&'static AtomicBool> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    let ok = *INSTALLED.get_or_init(|| ctrlc::set_handler(on_interrupt).is_ok());
    ok.then_some(&REQUESTED)
}

/// [`install`], and SIGTERM and SIGHUP (`kill`, `timeout`, a closed terminal)
/// handled as Ctrl-C is. Call it first in `main`, before any thread starts (see
/// [`crate::process::catch_termination`]); the signals stay blocked in the child
/// processes started later, which are stopped through [`register_child`].
pub fn install_with_termination() -> Option<&'static AtomicBool> {
    crate::process::catch_termination(|signal| on_signal(128 + signal));
    install()
}

/// True once Ctrl-C has been pressed (or [`stop`] called).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The exit code for the signal that asked the work to stop (130 after Ctrl-C, 143
/// after SIGTERM, 129 after SIGHUP), or `None` if no signal did.
pub fn signalled() -> Option<u8> {
    u8::try_from(SIGNALLED.load(Ordering::Relaxed))
        .ok()
        .filter(|&code| code != 0)
}

/// The exit code for work a signal stopped: 128 + the signal received (130 for
/// Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), or 130 for work stopped by [`stop`]
/// with no signal.
pub fn stopped_code() -> u8 {
    signalled().unwrap_or(INTERRUPTED)
}

/// Records that `signal` asked the work to stop, for a tool whose work stops
/// through a flag of its own (`spu-sweep`'s runs): [`signalled`] then answers
/// 128 + it, so the tool exits as the signal asks however its work ends.
pub fn note(signal: i32) {
    let _ = SIGNALLED.compare_exchange(0, 128 + signal, Ordering::Relaxed, Ordering::Relaxed);
}

/// Ends the process as a signal does when the work does not stop by itself: stops
/// the registered children (and their process groups), removes the registered
/// temporaries, says "interrupted" and exits with `code`. For a tool with handlers
/// of its own, on a signal that comes before its work polls for one.
pub fn end(code: i32) -> ! {
    let _ = SIGNALLED.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
    // No child starts from now on (see `register_child`).
    REQUESTED.store(true, Ordering::Relaxed);
    end_now(code)
}

/// Asks running work to stop as Ctrl-C does, without ending the process: for an
/// output that failed while a run was writing it (a closed pipe, a full disk).
pub fn stop() {
    REQUESTED.store(true, Ordering::Relaxed);
}

fn on_interrupt() {
    on_signal(i32::from(INTERRUPTED));
}

/// Asks the work to stop, then (after [`GRACE`], or at once the second time)
/// ends the process with `code`.
fn on_signal(code: i32) {
    let _ = SIGNALLED.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
    if !REQUESTED.swap(true, Ordering::Relaxed) {
        std::thread::sleep(GRACE);
    }
    end_now(code);
}

/// Everything in `list`, taken (also from a poisoned lock: the process is ending).
fn take<T>(list: &Mutex<Vec<T>>) -> Vec<T> {
    match list.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    }
}

/// Stops the registered children, removes the registered temporaries and exits
/// with `code`.
fn end_now(code: i32) -> ! {
    let children = take(&CHILDREN);
    for &pid in &children {
        crate::process::kill_group(pid);
    }
    if !children.is_empty() {
        // Time for the signal to land, so no child writes into a folder removed below.
        std::thread::sleep(Duration::from_millis(100));
    }
    for p in take(&TEMPORARIES) {
        let _ = std::fs::remove_file(p);
    }
    for p in take(&FOLDERS) {
        let _ = std::fs::remove_dir_all(p);
    }
    crate::reportln!("error: interrupted");
    std::process::exit(code)
}

/// Records a temporary folder to remove (with its contents) if the process is
/// ended by a signal; [`unregister_folder`] once it is removed.
pub fn register_folder(path: &Path) {
    if let Ok(mut list) = FOLDERS.lock() {
        list.push(path.to_path_buf());
    }
}

/// Forgets a temporary folder registered with [`register_folder`].
pub fn unregister_folder(path: &Path) {
    if let Ok(mut list) = FOLDERS.lock()
        && let Some(i) = list.iter().position(|p| p == path)
    {
        list.swap_remove(i);
    }
}

/// Records a child process to stop if the process is ended by a signal;
/// [`unregister_child`] once it has ended.
pub fn register_child(pid: u32) {
    if let Ok(mut list) = CHILDREN.lock() {
        list.push(pid);
    }
    // Started as a signal came (the handler may have stopped the others already).
    if signalled().is_some() {
        crate::process::kill_group(pid);
    }
}

/// Forgets a child registered with [`register_child`].
pub fn unregister_child(pid: u32) {
    if let Ok(mut list) = CHILDREN.lock()
        && let Some(i) = list.iter().position(|&p| p == pid)
    {
        list.swap_remove(i);
    }
}

/// Records a temporary file to remove if the process is ended by Ctrl-C.
pub(crate) fn register(path: &Path) {
    if let Ok(mut list) = TEMPORARIES.lock() {
        list.push(path.to_path_buf());
    }
}

/// Forgets a temporary file that was renamed into place or removed.
pub(crate) fn unregister(path: &Path) {
    if let Ok(mut list) = TEMPORARIES.lock()
        && let Some(i) = list.iter().position(|p| p == path)
    {
        list.swap_remove(i);
    }
}
