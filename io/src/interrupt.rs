//! Ctrl-C. The handler sets a flag that long-running work (a simulation, writing an
//! output) polls so it can stop cleanly and report where it was. If the work has not
//! ended a second later (it was reading a pipe, or assembling), the handler removes
//! every temporary output file still registered and ends the process with exit code
//! 130, as shells report SIGINT. A second Ctrl-C ends it at once the same way.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The exit code after Ctrl-C, as shells report SIGINT (128 + 2).
pub const INTERRUPTED: u8 = 130;

/// How long cooperative work gets to stop on its own.
const GRACE: Duration = Duration::from_millis(1000);

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Temporary files to remove if the process ends from the handler.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the Ctrl-C handler (once per process) and returns the flag it sets.
/// `None` if no handler could be installed (Ctrl-C then ends the process at once).
pub fn install() -> Option<&'static AtomicBool> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    let ok = *INSTALLED.get_or_init(|| ctrlc::set_handler(on_interrupt).is_ok());
    ok.then_some(&REQUESTED)
}

/// True once Ctrl-C has been pressed (or [`stop`] called).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Asks running work to stop as Ctrl-C does, without ending the process: for an
/// output that failed while a run was writing it (a closed pipe, a full disk).
pub fn stop() {
    REQUESTED.store(true, Ordering::Relaxed);
}

fn on_interrupt() {
    if !REQUESTED.swap(true, Ordering::Relaxed) {
        std::thread::sleep(GRACE);
    }
    end_now();
}

/// Removes the registered temporaries and exits with 130.
fn end_now() -> ! {
    let paths = match TEMPORARIES.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
    crate::reportln!("error: interrupted");
    std::process::exit(i32::from(INTERRUPTED))
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
