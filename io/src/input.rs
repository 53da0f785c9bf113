//! The one bounded reader behind every input (kernels, machine files, models,
//! statistics, `.npy` arrays): it reads at most the limit plus one byte, so a device
//! or a pipe that never ends costs no more than a large file.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Largest input file the tools accept.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read `{path}`: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("`{path}` is a directory; give a file")]
    Directory { path: String },
    #[error("`{path}` is larger than {}, the limit for inputs", size_text(*limit))]
    TooLarge { path: String, limit: u64 },
    #[error("`{path}` is not UTF-8 text (invalid byte at offset {offset})")]
    NotText { path: String, offset: usize },
}

impl InputError {
    /// What is wrong, without the path (for messages that name the file already).
    pub fn reason(&self) -> String {
        match self {
            InputError::Io { error, .. } => error.to_string(),
            InputError::Directory { .. } => "it is a directory".into(),
            InputError::TooLarge { limit, .. } => {
                format!(
                    "it is larger than {}, the limit for inputs",
                    size_text(*limit)
                )
            }
            InputError::NotText { offset, .. } => {
                format!("it is not UTF-8 text (invalid byte at offset {offset})")
            }
        }
    }
}

/// A byte count as people write it.
fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads a whole input file of at most [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    read_limited(path, MAX_INPUT_BYTES)
}

/// Reads a whole file of at most `limit` bytes, refusing directories. Any file the
/// user names is accepted, including pipes and devices: only `limit + 1` bytes are
/// ever read.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let p = || path.display().to_string();
    let io = |error| InputError::Io { path: p(), error };
    let (file, meta) = open_input(path)?;
    if meta.is_file() && meta.len() > limit {
        return Err(InputError::TooLarge { path: p(), limit });
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { path: p(), limit });
    }
    Ok(bytes)
}

/// Reads a whole text input (machine files, models, statistics) of at most
/// [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read_input(path)?;
    String::from_utf8(bytes).map_err(|e| InputError::NotText {
        path: path.display().to_string(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Opens an input to read it piece by piece (`.npy` arrays, whose size the caller
/// bounds), refusing directories.
pub fn open_input(path: &Path) -> Result<(File, std::fs::Metadata), InputError> {
    let p = || path.display().to_string();
    let io = |error| InputError::Io { path: p(), error };
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(InputError::Directory { path: p() });
    }
    Ok((file, meta))
}

/// Source text to quote in a message, if `path` is a plain file (not a link, device
/// or pipe) of at most [`MAX_INPUT_BYTES`] holding UTF-8 text. Reading never blocks
/// and never follows a link a hostile file may have planted.
pub fn read_quotable(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_INPUT_BYTES {
        return None;
    }
    let bytes = read_limited(path, MAX_INPUT_BYTES).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_devices_stop_at_the_limit() {
        let zero = Path::new("/dev/zero");
        if !zero.exists() {
            crate::reportln!("skipped: no /dev/zero on this system");
            return;
        }
        let err = read_limited(zero, 1000).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`/dev/zero` is larger than 1000 bytes, the limit for inputs"
        );
        assert!(read_quotable(zero).is_none(), "devices are never quoted");
    }

    #[test]
    fn files_directories_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.spu");
        std::fs::write(&file, "exit;").unwrap();
        assert_eq!(read_limited(&file, 5).unwrap(), b"exit;");
        assert!(matches!(
            read_limited(&file, 4),
            Err(InputError::TooLarge { .. })
        ));
        assert!(matches!(
            read_input(dir.path()),
            Err(InputError::Directory { .. })
        ));
        assert_eq!(read_quotable(&file).as_deref(), Some("exit;"));
        let link = dir.path().join("link.spu");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read_quotable(&link).is_none(), "links are never quoted");
        assert_eq!(read_input(&link).unwrap(), b"exit;", "but may be named");
    }
}
