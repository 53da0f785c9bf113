//! Exit codes the tools share beyond 0 (success) and 1 (an error was reported).

use crate::output::OutputError;

/// After Ctrl-C, as shells report SIGINT (128 + 2).
pub const INTERRUPTED: u8 = 130;
/// When the reader of a pipe went away, as a tool ended by SIGPIPE (128 + 13).
pub const CLOSED_PIPE: u8 = 141;

/// The exit code an error asks for, looking through its whole chain of causes:
/// [`INTERRUPTED`] for an output stopped by Ctrl-C, [`CLOSED_PIPE`] for output to a
/// closed pipe (which the tools end quietly), or `None` for an ordinary error.
pub fn special_code(error: &(dyn std::error::Error + 'static)) -> Option<u8> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(o) = e.downcast_ref::<OutputError>() {
            return match o {
                OutputError::Interrupted { .. } => Some(INTERRUPTED),
                OutputError::Io { error, .. } if is_closed_pipe(error) => Some(CLOSED_PIPE),
                _ => None,
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && is_closed_pipe(io)
        {
            return Some(CLOSED_PIPE);
        }
        cause = e.source();
    }
    None
}

/// True for the error a write to a pipe without a reader gives.
pub fn is_closed_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// `eprint!` that never panics: a closed or full standard error has nowhere left to
/// report to, so a failed write is dropped and the tool still ends with its own exit
/// code (`spu-asm bad.spu 2>&1 | head -1` exits 1, not with a panic).
#[macro_export]
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprintln!` that never panics; see [`report!`](crate::report).
#[macro_export]
macro_rules! reportln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Writes `text` to standard output for a tool whose output is a side line of its
/// work (a table, a path): a closed pipe ends the tool quietly with [`CLOSED_PIPE`],
/// as `spu-sweep status | head -1` expects, and a full disk is reported and ends it
/// with 1. Tools that must clean up first use [`crate::output::print`] instead.
pub fn print_or_exit(text: &str) {
    if let Err(e) = crate::output::print(text) {
        if special_code(&e) == Some(CLOSED_PIPE) {
            std::process::exit(i32::from(CLOSED_PIPE));
        }
        crate::reportln!("error: {e}");
        std::process::exit(1);
    }
}

/// `println!` through [`print_or_exit`]: never panics on a closed or full stdout.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::exit::print_or_exit(&format!("{}\n", format_args!($($arg)*)))
    };
}
