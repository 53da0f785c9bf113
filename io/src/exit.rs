//! Exit codes the tools share beyond 0 (success) and 1 (an error was reported).

use crate::output::OutputError;

/// After Ctrl-C, as shells report SIGINT (128 + 2).
pub use crate::interrupt::INTERRUPTED;
use std::process::ExitCode;
/// When the reader of a pipe went away, as a tool ended by SIGPIPE (128 + 13).
pub const CLOSED_PIPE: u8 = 141;

/// The exit code an error asks for, looking through its whole chain of causes:
/// 128 + the signal for an output a signal stopped (see
/// [`stopped_code`](crate::interrupt::stopped_code)), [`CLOSED_PIPE`] for output to
/// a closed pipe (which the tools end quietly), 128 + the signal for any error after
/// a signal asked the work to stop, or `None` for an ordinary error.
pub fn special_code(error: &(dyn std::error::Error + 'static)) -> Option<u8> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(o) = e.downcast_ref::<OutputError>() {
            return match o {
                OutputError::Interrupted { .. } => Some(crate::interrupt::stopped_code()),
                OutputError::Io { error, .. } if is_closed_pipe(error) => Some(CLOSED_PIPE),
                _ => None,
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if is_closed_pipe(io) {
                return Some(CLOSED_PIPE);
            }
            // A write that a signal stopped, wrapped by a caller's own error type.
            if io
                .get_ref()
                .is_some_and(|inner| inner.is::<crate::output::Cancelled>())
            {
                return Some(crate::interrupt::stopped_code());
            }
        }
        cause = e.source();
    }
    // Any error after Ctrl-C, SIGTERM or SIGHUP follows from it (clang stopped, a
    // run interrupted): exit as the signal asks, as the handler would.
    crate::interrupt::signalled()
}

/// The exit code of work that ended without an error: `code` (success, or a
/// tool's own code), unless a signal (Ctrl-C, SIGTERM, SIGHUP) asked it to stop
/// meanwhile, too late for the work to notice (it was finishing). Then 128 + that
/// signal, as if the signal had come a moment earlier: a tool asked to stop never
/// reports success. `say`: print `error: interrupted` (false for a tool that
/// reported the stop in its own words).
pub fn unless_signalled(code: ExitCode, say: bool) -> ExitCode {
    match crate::interrupt::signalled() {
        Some(signal) => {
            if say {
                crate::reportln!("error: interrupted");
            }
            ExitCode::from(signal)
        }
        None => code,
    }
}

/// True for the error a write to a pipe without a reader gives.
pub fn is_closed_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// `eprint!` that never panics: a closed or full standard error has nowhere left to
/// report to, so a failed write is dropped and the tool still ends with its own exit
/// code (`spu-asm bad.spu 2>&1 | head -1` exits 1, not with a panic). The text goes
/// through [`escape_lines`](crate::quote::escape_lines): whatever a message quotes,
/// no control character reaches the terminal.
#[macro_export]
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = std::io::stderr().write_all($crate::quote::escape_lines(&text).as_bytes());
    }};
}

/// `eprintln!` that never panics; see [`report!`](crate::report).
#[macro_export]
macro_rules! reportln {
    ($($arg:tt)*) => {
        $crate::report!("{}\n", format_args!($($arg)*))
    };
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

/// Ends a tool whose command line the argument parser answered or refused (`--help`,
/// `--version`, a usage error). `printed` is how writing that text went and `code`
/// the parser's exit code. Help or a version that cannot be written to standard
/// output (`--help > /dev/full`) is an error (exit 1), a closed pipe ends quietly
/// with [`CLOSED_PIPE`]; a usage error keeps its code whatever happened to
/// standard error.
pub fn after_usage(printed: std::io::Result<()>, to_stdout: bool, code: i32) -> ! {
    use std::io::Write as _;
    if to_stdout {
        match printed.and_then(|()| std::io::stdout().flush()) {
            Ok(()) => {}
            Err(e) if is_closed_pipe(&e) => std::process::exit(i32::from(CLOSED_PIPE)),
            Err(e) => {
                crate::reportln!("error: cannot write to standard output: {e}");
                std::process::exit(1);
            }
        }
    }
    std::process::exit(code)
}

/// `println!` through [`print_or_exit`]: never panics on a closed or full stdout.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::exit::print_or_exit(&format!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caller's error type that keeps the write error as its cause, as the
    /// `.npy` writer does.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot write `d.npy`")]
    struct Wrapper(#[source] std::io::Error);

    #[test]
    fn a_write_stopped_by_ctrl_c_exits_130_through_a_wrapper() {
        let stopped = std::io::Error::other(crate::output::Cancelled);
        assert_eq!(special_code(&Wrapper(stopped)), Some(INTERRUPTED));
        let full = std::io::Error::from_raw_os_error(28);
        assert_eq!(special_code(&Wrapper(full)), None);
        let closed = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(special_code(&Wrapper(closed)), Some(CLOSED_PIPE));
    }
}
