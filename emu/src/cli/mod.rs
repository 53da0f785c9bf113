//! The command-line front end shared by `spu-emu` and `spu-prof`: the run options
//! ([`args`]) and one run from a kernel file to a result, with progress and Ctrl-C
//! ([`session`]), the files it writes ([`outputs`]) and what `--html` records
//! ([`page`]).
//!
//! Layer 6: may use every layer below.

pub mod args;
pub mod outputs;
pub mod page;
pub mod session;

pub use args::{RUN_EXAMPLES, RunArgs};
