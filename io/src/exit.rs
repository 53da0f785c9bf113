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
