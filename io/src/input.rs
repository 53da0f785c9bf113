//! The one bounded reader behind every input (kernels, machine files, models,
//! statistics, `.npy` arrays): it reads at most the limit plus one byte, so a device
//! or a pipe that never ends costs no more than a large file.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Largest input file the tools accept.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Largest settings file (a machine or an energy model) the tools parse: such a
/// file holds a few hundred keys, and a parsed key costs hundreds of bytes, so a
/// file of 64 MiB of short keys would take gigabytes.
pub const MAX_SETTINGS_BYTES: usize = 1 << 20;

/// Why a settings file's `text` is too large to parse (`what`: "a machine
/// file"), if it is.
pub fn settings_too_large(text: &str, what: &str) -> Option<String> {
    (text.len() > MAX_SETTINGS_BYTES).then(|| {
        format!(
            "it is {} bytes long, but {what} is at most {} bytes (1 MiB: a few hundred keys); is it the right file?",
            crate::numbers::grouped(text.len() as u64),
            crate::numbers::grouped(MAX_SETTINGS_BYTES as u64)
        )
    })
}

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
    /// Text in another Unicode encoding (UTF-16 as Windows PowerShell's `>` writes
    /// it, or UTF-32): named, with the command that converts it.
    #[error(
        "`{path}` is {encoding} text, not UTF-8; convert it with `{}`",
        convert_command(path, encoding)
    )]
    OtherEncoding {
        path: String,
        encoding: &'static str,
    },
}

/// The `iconv` command that converts the file to UTF-8 beside itself (generic
/// names when the file's own would need quoting).
fn convert_command(path: &str, encoding: &str) -> String {
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| {
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
                && !n.starts_with(['-', '.'])
        });
    let (from, to) = match name {
        Some(n) => {
            let p = Path::new(n);
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or(n);
            let to = match p.extension().and_then(|e| e.to_str()) {
                Some(ext) => format!("{stem}-utf8.{ext}"),
                None => format!("{stem}-utf8"),
            };
            (n.to_string(), to)
        }
        None => ("FILE".to_string(), "FILE-utf8".to_string()),
    };
    // With a byte order mark iconv finds the byte order itself.
    let from_encoding = match encoding {
        "UTF-16 (little-endian, no byte order mark)" => "UTF-16LE",
        "UTF-16 (big-endian, no byte order mark)" => "UTF-16BE",
        e if e.starts_with("UTF-32") => "UTF-32",
        _ => "UTF-16",
    };
    format!("iconv -f {from_encoding} -t UTF-8 {from} > {to}")
}

/// The Unicode encoding other than UTF-8 that `bytes` are in, if they look like one:
/// a UTF-16 or UTF-32 byte order mark followed by text (mostly ASCII, as every
/// format the tools read is), or text whose every other byte is zero (the ASCII
/// characters of UTF-16 without a byte order mark).
pub fn other_encoding(bytes: &[u8]) -> Option<&'static str> {
    // UTF-32 first: its little-endian mark begins with UTF-16's.
    for (mark, width, big, name) in [
        (&[0xFF, 0xFE, 0, 0][..], 4, false, "UTF-32"),
        (&[0, 0, 0xFE, 0xFF][..], 4, true, "UTF-32"),
        (&[0xFF, 0xFE][..], 2, false, "UTF-16"),
        (&[0xFE, 0xFF][..], 2, true, "UTF-16"),
    ] {
        if let Some(rest) = bytes.strip_prefix(mark) {
            let head = &rest[..rest.len().min(512)];
            let units = head.chunks_exact(width).map(|c| match (width, big) {
                (2, false) => u32::from(u16::from_le_bytes([c[0], c[1]])),
                (2, true) => u32::from(u16::from_be_bytes([c[0], c[1]])),
                (_, false) => u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                (_, true) => u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
            });
            return looks_like_text(units, width == 2).then_some(name);
        }
    }
    let head = &bytes[..bytes.len().min(256) & !1];
    if head.len() < 4 {
        return None;
    }
    let zeros_at = |parity: usize| {
        head.iter()
            .enumerate()
            .filter(|(i, b)| **b == 0 && i % 2 == parity)
            .count()
    };
    let half = head.len() / 2;
    // Nearly every high byte zero: ASCII in UTF-16.
    match (zeros_at(0), zeros_at(1)) {
        (0, odd) if odd * 4 >= half * 3 => Some("UTF-16 (little-endian, no byte order mark)"),
        (even, 0) if even * 4 >= half * 3 => Some("UTF-16 (big-endian, no byte order mark)"),
        _ => None,
    }
}

/// Whether the code units (UTF-16's or UTF-32's) after a byte order mark decode to
/// text: characters, no controls but whitespace, at least half of them ASCII. A
/// surrogate cut off at the end of the sample is fine.
fn looks_like_text(units: impl Iterator<Item = u32>, utf16: bool) -> bool {
    let chars: Vec<Option<char>> = if utf16 {
        let mut units: Vec<u16> = units.map(|u| u as u16).collect();
        if units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
            units.pop();
        }
        char::decode_utf16(units).map(Result::ok).collect()
    } else {
        units.map(char::from_u32).collect()
    };
    let text = |c: &Option<char>| {
        c.is_some_and(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0c'))
    };
    let ascii = chars
        .iter()
        .filter(|c| c.is_some_and(|c| c.is_ascii()))
        .count();
    chars.iter().all(text) && ascii * 2 >= chars.len()
}

/// Text from the bytes of the file at `path`: UTF-8, or an error that names the
/// encoding the text is in and how to convert it.
pub fn text_from(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    if let Some(encoding) = other_encoding(&bytes) {
        return Err(InputError::OtherEncoding {
            path: crate::quote::path(path),
            encoding,
        });
    }
    String::from_utf8(bytes).map_err(|e| InputError::NotText {
        path: crate::quote::path(path),
        offset: e.utf8_error().valid_up_to(),
    })
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
            InputError::OtherEncoding { path, encoding } => format!(
                "it is {encoding} text, not UTF-8; convert it with `{}`",
                convert_command(path, encoding)
            ),
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
    text_from(path, read_input(path)?)
}

/// Reads a whole text input as [`read_text`] does, but never waits for a writer:
/// a named pipe nothing writes to (which [`read_text`] would wait on forever) is
/// refused at once, while a pipe with a writer (`<(...)` in a shell) is read.
/// For inputs that only configure a run (machine files, energy models).
pub fn read_text_without_waiting(path: &Path) -> Result<String, InputError> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let p = || crate::quote::path(path);
    let io = |error| InputError::Io { path: p(), error };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| io(open_failure(path, e)))?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(InputError::Directory { path: p() });
    }
    // Reads wait for data again; a pipe without a writer then reads as empty.
    rustix::fs::fcntl_setfl(&file, OFlags::empty()).map_err(|e| io(e.into()))?;
    if meta.is_file() && meta.len() > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge {
            path: p(),
            limit: MAX_INPUT_BYTES,
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge {
            path: p(),
            limit: MAX_INPUT_BYTES,
        });
    }
    if bytes.is_empty() && !meta.is_file() {
        return Err(io(std::io::Error::other(
            "it is a pipe or device that nothing writes to; give a regular file",
        )));
    }
    text_from(path, bytes)
}

/// How long a named pipe may keep a tool waiting: an input pipe for its first
/// bytes, an output pipe for a reader ([`crate::output`]). Past it the pipe is
/// refused with an explanation, never waited on for ever.
pub const PIPE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens an input to read it piece by piece (`.npy` arrays, whose size the caller
/// bounds), refusing directories. A named pipe must deliver its first bytes within
/// [`PIPE_WAIT`] (a note says the tool is waiting); it is then read at its pace.
pub fn open_input(path: &Path) -> Result<(File, std::fs::Metadata), InputError> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let p = || crate::quote::path(path);
    let io = |error| InputError::Io { path: p(), error };
    // Opening a pipe for a blocking read would wait for a writer for ever.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| io(open_failure(path, e)))?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(InputError::Directory { path: p() });
    }
    if meta.file_type().is_fifo() && !pipe_has_data(&file, path).map_err(io)? {
        return Err(io(std::io::Error::other(format!(
            "it is a named pipe, and nothing wrote to it within {} s; start the writer first (`cat data > pipe &`), or give a regular file",
            PIPE_WAIT.as_secs()
        ))));
    }
    rustix::fs::fcntl_setfl(&file, OFlags::empty()).map_err(|e| io(e.into()))?;
    Ok((file, meta))
}

/// Why `path` could not be opened: the system's reason, with what `-` would mean
/// elsewhere said when no file has that name.
fn open_failure(path: &Path, error: std::io::Error) -> std::io::Error {
    if error.kind() == std::io::ErrorKind::NotFound && path == Path::new("-") {
        return std::io::Error::new(
            error.kind(),
            "no file has that name, and the tools do not read standard input: save it to a file and give that",
        );
    }
    error
}

/// Waits up to [`PIPE_WAIT`] for a pipe opened without blocking to have bytes to
/// read, or a writer that came and went (it then reads as empty). A note says so
/// after the first second.
fn pipe_has_data(file: &File, path: &Path) -> std::io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let wait = |ms: u64| -> std::io::Result<bool> {
        let mut fds = [PollFd::new(file, PollFlags::IN)];
        let t = Timespec {
            tv_sec: (ms / 1000) as i64,
            tv_nsec: ((ms % 1000) * 1_000_000) as i64,
        };
        loop {
            match poll(&mut fds, Some(&t)) {
                Ok(n) => return Ok(n > 0),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    };
    if wait(1000)? {
        return Ok(true);
    }
    crate::reportln!(
        "note: waiting up to {} s for something to write to the pipe `{}`",
        PIPE_WAIT.as_secs(),
        crate::quote::path(path)
    );
    wait(PIPE_WAIT.as_millis().saturating_sub(1000) as u64)
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
    fn a_dash_is_a_file_name_and_the_error_says_so() {
        let err = read_input(Path::new("-")).unwrap_err().to_string();
        assert_eq!(
            err,
            "cannot read `-`: no file has that name, and the tools do not read standard input: save it to a file and give that"
        );
    }

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
    fn utf16_and_utf32_are_named_with_the_conversion() {
        let utf16le_bom: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(".entry k {}".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let err = text_from(Path::new("dir/k.spu"), utf16le_bom).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`dir/k.spu` is UTF-16 text, not UTF-8; convert it with `iconv -f UTF-16 -t UTF-8 k.spu > k-utf8.spu`"
        );
        let utf16be: Vec<u8> = "exit;\n"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        let err = text_from(Path::new("my kernel.ptx"), utf16be).unwrap_err();
        assert_eq!(
            err.reason(),
            "it is UTF-16 (big-endian, no byte order mark) text, not UTF-8; convert it with `iconv -f UTF-16BE -t UTF-8 FILE > FILE-utf8`"
        );
        let err =
            text_from(Path::new("m.toml"), vec![0xFF, 0xFE, 0, 0, b'a', 0, 0, 0]).unwrap_err();
        assert!(err.to_string().contains("UTF-32 text"), "{err}");
        // A byte order mark before bytes that are not text is no UTF-16 file.
        for garbage in [
            &[0xFF, 0xFE, 0x00, 0x13][..],
            &[0xFE, 0xFF, 0x00, 0x01, 0xD8, 0x00],
            &[0xFF, 0xFE, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],
        ] {
            let err = text_from(Path::new("g.bin"), garbage.to_vec()).unwrap_err();
            assert!(err.to_string().contains("is not UTF-8 text"), "{err}");
        }
        // A surrogate pair cut at the end of the sample still reads as UTF-16.
        let mut long: Vec<u8> = vec![0xFF, 0xFE];
        long.extend("a".repeat(255).encode_utf16().flat_map(u16::to_le_bytes));
        long.extend("\u{1F600}".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(other_encoding(&long), Some("UTF-16"));
        // Latin-1 is not mistaken for UTF-16, and UTF-8 passes.
        let err = text_from(Path::new("a.spu"), b"caf\xe9".to_vec()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a.spu` is not UTF-8 text (invalid byte at offset 3)"
        );
        assert_eq!(
            text_from(Path::new("a.spu"), "é\0x".into()).unwrap(),
            "é\0x"
        );
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
