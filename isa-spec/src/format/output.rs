//! Reading the toolchain's input files with the same checks everywhere, and writing
//! its output files (binaries, listings, stats, dumps) so that a failed run never
//! leaves a half-written file behind.

use std::io::Write;
use std::path::Path;

/// Writes through a temporary file in the same directory, then renames.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Largest input file (source or binary) the tools accept.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read `{path}`: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("`{path}` is a directory; give a .spu or .bin file")]
    Directory { path: String },
    #[error("`{path}` is {size} bytes; inputs are limited to 64 MiB")]
    TooLarge { path: String, size: u64 },
}

/// Reads a whole input file, refusing directories and files over
/// [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    let p = || path.display().to_string();
    let io = |error| InputError::Io { path: p(), error };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(InputError::Directory { path: p() });
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge {
            path: p(),
            size: meta.len(),
        });
    }
    std::fs::read(path).map_err(io)
}
