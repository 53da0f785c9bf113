//! Exit codes the tools share beyond 0 (success) and 1 (an error was reported), and
//! the end of a tool whose command line the argument parser answered or refused.

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
/// `--version`, a usage error), with the parser's text and exit code (2 for a usage
/// error). The user's text in a usage error (the value of `--jobs x`, an unknown
/// option) is escaped ([`crate::quote::escape`]) like any other message, so that
/// control characters and bidirectional overrides do not reach the terminal; the
/// parser's own wording, hints and colours stay. Help and the version hold no user
/// text and are written as they are.
pub fn after_parse(error: clap::Error) -> ! {
    let error = escape_user_text(error);
    after_usage(error.print(), !error.use_stderr(), error.exit_code())
}

/// The parser's error with the user's text in it escaped (see [`after_parse`]).
fn escape_user_text(mut error: clap::Error) -> clap::Error {
    use clap::builder::StyledStr;
    use clap::error::ContextValue;
    // The user's texts that need escaping, longest first, and how they are shown.
    let mut raw: Vec<(String, String)> = error
        .context()
        .flat_map(|(_, value)| match value {
            ContextValue::String(s) => std::slice::from_ref(s),
            ContextValue::Strings(v) => v.as_slice(),
            _ => &[],
        })
        .filter_map(|s| match crate::quote::escape(s) {
            std::borrow::Cow::Owned(shown) => Some((s.clone(), shown)),
            std::borrow::Cow::Borrowed(_) => None,
        })
        .collect();
    if raw.is_empty() {
        return error;
    }
    raw.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    let shown = |text: &str| {
        raw.iter().fold(text.to_string(), |t, (s, shown)| {
            t.replace(s.as_str(), shown)
        })
    };
    // A hint quoting the user's text (`to pass '--x' as a value, use '-- --x'`) is
    // styled text: the user's text in it is replaced, the parser's styles stay.
    let styled = |s: &StyledStr| StyledStr::from(shown(&s.ansi().to_string()));
    let escaped: Vec<_> = error
        .context()
        .map(|(kind, value)| {
            let value = match value {
                ContextValue::String(s) => ContextValue::String(shown(s)),
                ContextValue::Strings(v) => {
                    ContextValue::Strings(v.iter().map(|s| shown(s)).collect())
                }
                ContextValue::StyledStr(s) => ContextValue::StyledStr(styled(s)),
                ContextValue::StyledStrs(v) => {
                    ContextValue::StyledStrs(v.iter().map(styled).collect())
                }
                other => other.clone(),
            };
            (kind, value)
        })
        .collect();
    for (kind, value) in escaped {
        error.insert(kind, value);
    }
    error
}

/// Ends a tool whose command line the argument parser answered or refused (see
/// [`after_parse`]). `printed` is how writing that text went and `code` the
/// parser's exit code. Help or a version that cannot be written to standard
/// output (`--help > /dev/full`) is an error (exit 1), a closed pipe ends quietly
/// with [`CLOSED_PIPE`]; a usage error keeps its code whatever happened to
/// standard error.
fn after_usage(printed: std::io::Result<()>, to_stdout: bool, code: i32) -> ! {
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

    /// The user's text in a usage error, and in the hint quoting it, is escaped;
    /// the parser's own text and exit code stay.
    #[test]
    fn a_usage_error_shows_the_users_text_escaped() {
        let evil = "5\u{1b}]0;title\u{7}\u{202e}";
        let cmd = || {
            // Without the parser's colours, any escape character left is the user's.
            clap::Command::new("tool")
                .styles(clap::builder::Styles::plain())
                .arg(
                    clap::Arg::new("n")
                        .long("n")
                        .value_parser(clap::value_parser!(u32)),
                )
        };
        for args in [
            vec!["tool", "--n", evil],
            vec!["tool", &format!("--x{evil}")],
        ] {
            let e = escape_user_text(cmd().try_get_matches_from(&args).unwrap_err());
            let text = e.render().ansi().to_string();
            assert!(text.contains("5\\u{1b}]0;title\\u{7}\\u{202e}"), "{text}");
            assert!(!text.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{text:?}");
            assert!(
                text.contains("For more information, try '--help'."),
                "{text}"
            );
            assert_eq!(e.exit_code(), 2);
        }
    }

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
