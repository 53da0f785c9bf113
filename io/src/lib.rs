//! How the SPU tools touch files, so every tool treats hostile paths the same way:
//!
//! - [`input`]: every input is read through one bounded reader (at most
//!   [`MAX_INPUT_BYTES`], whatever the file type), and source text is quoted only
//!   from plain files.
//! - [`output`]: outputs replace regular files atomically (an unpredictable,
//!   exclusively created temporary in the same directory, renamed over the target,
//!   keeping its mode); devices and pipes are written directly and never replaced;
//!   nothing is left behind on an error or Ctrl-C.
//! - [`interrupt`]: Ctrl-C sets a flag long-running work polls; work that does not
//!   poll is ended within a second with exit code 130, temporaries removed.
//! - [`exit`]: exit codes for interrupted runs and closed pipes; [`report!`] and
//!   [`reportln!`] write to standard error without ever panicking, escaped.
//! - [`process`]: limits on the calling process and the signals children die of.
//! - [`paths`]: refusing an output that would overwrite an input or another output.
//! - [`quote`]: quoting user text in messages and reports: escaped (no control or
//!   invisible character reaches a terminal) and never megabytes of it.
//! - [`suggest`]: "did you mean" by edit distance.
//! - [`testing`]: pipes and FIFOs for the tools' tests.

pub mod exit;
pub mod input;
pub mod interrupt;
pub mod numbers;
pub mod output;
pub mod paths;
pub mod process;
pub mod quote;
pub mod suggest;
mod temp;
pub mod testing;

pub use input::{
    InputError, MAX_INPUT_BYTES, open_input, open_regular, read_input, read_limited, read_quotable,
    read_regular, read_text,
};
pub use output::{OutputError, OutputFile, write_file};
