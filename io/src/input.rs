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
    let p = || crate::quote::path(path);
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
        path: crate::quote::path(path),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Opens an input to read it piece by piece (`.npy` arrays, whose size the caller
/// bounds), refusing directories.
pub fn open_input(path: &Path) -> Result<(File, std::fs::Metadata), InputError> {
    let p = || crate::quote::path(path);
    let io = |error| InputError::Io { path: p(), error };
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(InputError::Directory { path: p() });
    }
    Ok((file, meta))
}

/// Opens `path` only if it is a regular file, deciding on the opened file itself
/// (`fstat`), so nothing can be swapped in between the check and the read: the last
/// component is not followed if it is a link, and opening never blocks (a FIFO put
/// in its place is refused, not waited on). `None` for anything else.
pub fn open_regular(path: &Path) -> Option<(File, std::fs::Metadata)> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOFOLLOW).bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then_some((file, meta))
}

/// Reads a file [`open_regular`] accepts, of at most `limit` bytes; `None` if it is
/// not a regular file, `Some(Err)` if it cannot be read or is too large.
pub fn read_regular(path: &Path, limit: u64) -> Option<Result<Vec<u8>, InputError>> {
    let (file, meta) = open_regular(path)?;
    let p = || crate::quote::path(path);
    if meta.len() > limit {
        return Some(Err(InputError::TooLarge { path: p(), limit }));
    }
    let mut bytes = Vec::new();
    if let Err(error) = file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        return Some(Err(InputError::Io { path: p(), error }));
    }
    if bytes.len() as u64 > limit {
        return Some(Err(InputError::TooLarge { path: p(), limit }));
    }
    Some(Ok(bytes))
}

/// Source text to quote in a message, if `path` is a plain file (not a link, device
/// or pipe) of at most [`MAX_INPUT_BYTES`] holding UTF-8 text. Reading never blocks
/// and never follows a link a hostile file may have planted.
pub fn read_quotable(path: &Path) -> Option<String> {
    let bytes = read_regular(path, MAX_INPUT_BYTES)?.ok()?;
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
    fn only_regular_files_are_opened_as_regular_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.h");
        std::fs::write(&file, "#define A 1\n").unwrap();
        assert_eq!(read_regular(&file, 100).unwrap().unwrap(), b"#define A 1\n");
        assert!(matches!(
            read_regular(&file, 4),
            Some(Err(InputError::TooLarge { .. }))
        ));
        let link = dir.path().join("link.h");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read_regular(&link, 100).is_none(), "a link is not followed");
        assert!(read_regular(dir.path(), 100).is_none(), "a directory");
        // A FIFO with no writer: opening it for a blocking read would wait forever.
        let fifo = dir.path().join("p.h");
        if crate::testing::make_fifo(&fifo) {
            assert!(read_regular(&fifo, 100).is_none());
        }
        assert!(read_regular(&dir.path().join("none.h"), 100).is_none());
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
