//! The tools' input and output files are handled by `spu-io` (bounded reads, safe
//! atomic writes); the pieces the format's users need are re-exported here.

pub use spu_io::{InputError, MAX_INPUT_BYTES, read_input};

/// Writes an output file safely (see [`spu_io::write_file`]): a regular file is
/// replaced atomically, a device or pipe written in place, `-` is standard output.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    spu_io::write_file(path, bytes).map_err(spu_io::OutputError::into_io)
}
