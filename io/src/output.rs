//! Output files. A regular file (or one a symbolic link points to) is replaced
//! atomically: the data goes to a temporary created exclusively, with an
//! unpredictable name, in the target's directory; on commit it gets the replaced
//! file's mode, owner and group (the group where the user belongs to it), is
//! synced and renamed over the target.
//! A link stays a link. Character devices, pipes and sockets (`/dev/null`, a FIFO)
//! are written directly and never renamed over; `-` and `/dev/stdout` are standard
//! output. Directories and block devices are refused, and so is a file the user
//! may not write or does not own (see [`may_replace`]). A file a tool owns in a
//! folder of its own ([`replace_file`]) is replaced whatever has its name, a link
//! included: the link itself, never its target. A temporary that is not
//! committed (an error, a dropped file, Ctrl-C) is removed; where the file system
//! allows, it has no name until it is complete (see [`crate::temp`]).

use crate::interrupt;
use crate::temp::Temp;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why an output cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write `{path}`: {error}")]
    Io { path: String, error: io::Error },
    #[error("cannot write `{path}`: it is a directory; give a file name")]
    Directory { path: String },
    #[error("cannot write `{path}`: it is a block device; give a file name")]
    BlockDevice { path: String },
    #[error(
        "cannot write `{path}`: a name ending in `/`, `/.` or `/..` names a directory; give a file name"
    )]
    EndsInSlash { path: String },
    #[error(
        "cannot write `{path}`: its name is {bytes} bytes long, and a file name has at most 255; give a shorter name"
    )]
    NameTooLong { path: String, bytes: usize },
    #[error(
        "cannot write `{path}`: it is a symbolic link to a file that does not exist; remove the link or give another name"
    )]
    DanglingLink { path: String },
    #[error(
        "cannot write `{path}`: it names a file descriptor that is not open; open it for the tool (as `3>FILE` in the shell) or give a file name"
    )]
    NoDescriptor { path: String },
    #[error(
        "cannot write `{path}`: it is read-only (mode {mode:03o}); make it writable (`chmod u+w`), remove it or choose another file"
    )]
    ReadOnly { path: String, mode: u32 },
    #[error(
        "cannot write `{path}`: it belongs to another user (uid {uid}, mode {mode:03o}), and a replacement would belong to you; ask its owner, or choose another file"
    )]
    NotOwner { path: String, uid: u32, mode: u32 },
    #[error("interrupted; `{path}` was not written")]
    Interrupted { path: String },
}

impl OutputError {
    /// The error as an `io::Error` (for callers that keep `io::Result`).
    pub fn into_io(self) -> io::Error {
        match self {
            OutputError::Io { error, .. } => error,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// Largest piece written at once, so Ctrl-C is noticed during a long write.
const CHUNK: usize = 8 << 20;

/// Marks a write stopped by Ctrl-C.
#[derive(Debug)]
pub(crate) struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Cancelled {}

/// Where the bytes go.
enum Sink {
    Stdout(io::Stdout),
    Stderr(io::Stderr),
    Direct(File),
    Temp(Temp),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if interrupt::requested() {
            return Err(io::Error::other(Cancelled));
        }
        let buf = &buf[..buf.len().min(CHUNK)];
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Stderr(s) => s.write(buf),
            Sink::Direct(f) => f.write(buf),
            Sink::Temp(t) => t.file_mut().write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Stderr(s) => s.flush(),
            Sink::Direct(f) => f.flush(),
            Sink::Temp(t) => t.file_mut().flush(),
        }
    }
}

/// What a replaced file keeps.
#[derive(Debug, Clone, Copy)]
struct Keep {
    mode: u32,
    uid: u32,
    gid: u32,
}

/// An output being written; [`OutputFile::commit`] puts it in place. Dropping it
/// uncommitted leaves the target untouched (for devices and standard output, what
/// was written is written).
pub struct OutputFile {
    path: PathBuf,
    writer: io::BufWriter<Sink>,
    /// For a temporary: the file to rename it over and what to keep of it.
    target: Option<(PathBuf, Option<Keep>)>,
    /// The temporary's path while it is registered for removal on Ctrl-C.
    registered: Option<PathBuf>,
    /// Permission bits the output may have at most (see [`OutputFile::create_restricted`]).
    mask: u32,
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputFile")
            .field("path", &self.path)
            .field("target", &self.target)
            .finish()
    }
}

/// Whether `path` (a name through descriptor links, as `/proc/thread-self/fd/1`
/// or `/dev/./stdout`) reaches the file standard output is.
pub(crate) fn reaches_stdout(path: &Path) -> bool {
    use std::os::fd::AsFd;
    if !through_descriptor_links(path) {
        return false;
    }
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return false;
    };
    let Ok(out) = File::from(fd).metadata() else {
        return false;
    };
    std::fs::metadata(path).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino())
}

/// True for `-` (standard output by convention) and the names of standard output.
pub fn is_stdout(path: &Path) -> bool {
    stream_of(path) == Some(1)
}

fn stream_of(path: &Path) -> Option<u8> {
    match path.to_str()? {
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => Some(1),
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => Some(2),
        _ => None,
    }
}

/// True when `path` reaches its file through a descriptor link (`/dev/fd/3`,
/// `/dev/stdout`, `/proc/self/fd/3`): such files are written in place, never
/// renamed over. A regular file elsewhere under `/dev` (a tmpfs at `/dev/shm`)
/// is replaced as any other.
pub(crate) fn through_descriptor_links(path: &Path) -> bool {
    let special = |p: &Path| {
        p.starts_with("/dev/fd")
            || ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
                .iter()
                .any(|s| p.starts_with(s))
            || (p.starts_with("/proc")
                && p.components().nth(3) == Some(std::path::Component::Normal("fd".as_ref())))
    };
    if special(path) {
        return true;
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(next) => {
                let next = match p.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
                if special(&next) {
                    return true;
                }
                p = next;
            }
            Err(_) => return false,
        }
    }
    false
}

/// True for a name that can only be a directory's: ending in `/`, `/.` or
/// `/..`, or `.` or `..` itself.
fn names_a_directory(path: &Path) -> bool {
    let b = path.as_os_str().as_encoded_bytes();
    [&b"/"[..], b"/.", b"/.."]
        .iter()
        .any(|end| b.ends_with(end))
        || b == b"."
        || b == b".."
}

/// The longest file name (one path component) Linux file systems take, in bytes.
const NAME_MAX: usize = 255;

/// Checks, before any work, that `path` can be an output: not a directory, a block
/// device or a dangling link, and in a directory that exists. Creates nothing.
pub fn check_target(path: &Path) -> Result<(), OutputError> {
    let p = || crate::quote::path(path);
    if stream_of(path).is_some() {
        return Ok(());
    }
    // Checked before any work: the file system would refuse the name only when
    // the output is written, after the run.
    if let Some(name) = path.file_name()
        && name.len() > NAME_MAX
    {
        return Err(OutputError::NameTooLong {
            path: p(),
            bytes: name.len(),
        });
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(OutputError::Directory { path: p() }),
        Ok(m) if m.file_type().is_block_device() => Err(OutputError::BlockDevice { path: p() }),
        Ok(m) if m.is_file() && !through_descriptor_links(path) => may_replace(path, &m),
        Ok(_) => Ok(()),
        Err(_) if std::fs::symlink_metadata(path).is_ok() => {
            Err(OutputError::DanglingLink { path: p() })
        }
        // `/proc/self/fd/3` with nothing open as 3: the name would later reach
        // whatever the tool itself opens as 3.
        Err(_) if through_descriptor_links(path) => Err(OutputError::NoDescriptor { path: p() }),
        Err(_) if names_a_directory(path) => Err(OutputError::EndsInSlash { path: p() }),
        Err(_) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let why = match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => return Ok(()),
                Ok(_) => format!("`{}` is a file, not a directory", crate::quote::path(dir)),
                Err(_) => format!("directory `{}` does not exist", crate::quote::path(dir)),
            };
            Err(OutputError::Io {
                path: p(),
                error: io::Error::new(io::ErrorKind::NotFound, why),
            })
        }
    }
}

impl OutputFile {
    /// Opens an output. Nothing visible changes until [`commit`](Self::commit),
    /// except for devices, pipes and standard output, which are written directly.
    pub fn create(path: &Path) -> Result<OutputFile, OutputError> {
        OutputFile::create_restricted(path, 0o7777)
    }

    /// Opens an output whose permissions are at most `mask`: a new file gets the
    /// usual mode (0666 less the umask) narrowed to `mask`, a replaced file keeps
    /// its mode narrowed to `mask`. The temporary is narrowed before any byte is
    /// written, so an output quoting private inputs is never more readable than
    /// they are. Devices, pipes and standard output are not changed.
    pub fn create_restricted(path: &Path, mask: u32) -> Result<OutputFile, OutputError> {
        let p = || crate::quote::path(path);
        let io_err = |error| OutputError::Io { path: p(), error };
        let direct = |sink| OutputFile {
            path: path.to_path_buf(),
            writer: io::BufWriter::with_capacity(1 << 16, sink),
            target: None,
            registered: None,
            mask,
        };
        match stream_of(path) {
            Some(1) => return Ok(direct(Sink::Stdout(io::stdout()))),
            Some(_) => return Ok(direct(Sink::Stderr(io::stderr()))),
            None => {}
        }
        let (target, keep) = match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(path).is_ok() {
                    return Err(OutputError::DanglingLink { path: p() });
                }
                (path.to_path_buf(), None)
            }
            Err(e) => return Err(io_err(e)),
            Ok(m) if m.is_dir() => return Err(OutputError::Directory { path: p() }),
            Ok(m) if m.file_type().is_block_device() => {
                return Err(OutputError::BlockDevice { path: p() });
            }
            Ok(m) if m.file_type().is_fifo() => {
                return Ok(direct(Sink::Direct(open_pipe(path)?)));
            }
            Ok(m) if !m.is_file() || through_descriptor_links(path) => {
                // A device or socket, or a file behind a descriptor link: in place.
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(m.is_file())
                    .open(path)
                    .map_err(io_err)?;
                return Ok(direct(Sink::Direct(file)));
            }
            Ok(m) => {
                may_replace(path, &m)?;
                let target =
                    if std::fs::symlink_metadata(path).is_ok_and(|l| l.file_type().is_symlink()) {
                        std::fs::canonicalize(path).map_err(io_err)?
                    } else {
                        path.to_path_buf()
                    };
                (target, Some(keep_of(&m)))
            }
        };
        OutputFile::through_temp(path, target, keep, mask)
    }

    /// Opens a file a tool owns in a folder of its own (a sweep's results folder),
    /// with permissions at most `mask`: whatever has the name (a file, a symbolic
    /// link, a pipe) is replaced by a new file on commit. A link is replaced, never
    /// followed, so nothing outside the folder is written; a directory is refused.
    pub fn create_replacing(path: &Path, mask: u32) -> Result<OutputFile, OutputError> {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => Err(OutputError::Directory {
                path: crate::quote::path(path),
            }),
            _ => OutputFile::through_temp(path, path.to_path_buf(), None, mask),
        }
    }

    /// An output written to a temporary beside `target` and renamed over it.
    fn through_temp(
        path: &Path,
        target: PathBuf,
        keep: Option<Keep>,
        mask: u32,
    ) -> Result<OutputFile, OutputError> {
        let p = || crate::quote::path(path);
        let io_err = |error| OutputError::Io { path: p(), error };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = Temp::create(&dir, &name).map_err(|e| io_err(without_temp_path(e)))?;
        if mask & 0o7777 != 0o7777 {
            let mode = temp.file().metadata().map_err(io_err)?.permissions().mode();
            temp.file()
                .set_permissions(std::fs::Permissions::from_mode(mode & mask & 0o7777))
                .map_err(io_err)?;
        }
        let registered = temp.path().map(Path::to_path_buf);
        if let Some(r) = &registered {
            interrupt::register(r);
        }
        Ok(OutputFile {
            path: path.to_path_buf(),
            writer: io::BufWriter::with_capacity(1 << 16, Sink::Temp(temp)),
            target: Some((target, keep)),
            registered,
            mask,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes and puts the output in place. Fails without touching the target if a
    /// write failed, the disk is full, or Ctrl-C was pressed.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let p = crate::quote::path(&self.path);
        let writer = std::mem::replace(
            &mut self.writer,
            io::BufWriter::new(Sink::Stderr(io::stderr())),
        );
        let sink = writer
            .into_inner()
            .map_err(|e| self.error(e.into_error()))?;
        let result = match sink {
            Sink::Temp(temp) => {
                let (target, keep) = self.target.take().unwrap_or_default();
                self.finish_temp(temp, &target, keep)
            }
            mut other => other.flush().map_err(|e| self.error(e)),
        };
        if interrupt::requested() {
            return Err(OutputError::Interrupted { path: p });
        }
        result
    }

    fn finish_temp(
        &self,
        temp: Temp,
        target: &Path,
        keep: Option<Keep>,
    ) -> Result<(), OutputError> {
        let file = temp.file();
        if let Some(k) = keep {
            file.set_permissions(std::fs::Permissions::from_mode(k.mode & self.mask & 0o7777))
                .map_err(|e| self.error(e))?;
            // Only root may give a file away; others keep their own files anyway.
            let _ = std::os::unix::fs::fchown(file, Some(k.uid), Some(k.gid));
        }
        file.sync_all().map_err(|e| self.error(e))?;
        if interrupt::requested() {
            return Err(OutputError::Interrupted {
                path: crate::quote::path(&self.path),
            });
        }
        temp.persist(target).map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Writes all of `bytes`, as an [`OutputError`].
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.writer.write_all(bytes).map_err(|e| self.error(e))
    }

    /// An error from writing to this output, as an [`OutputError`] (a write stopped
    /// by Ctrl-C becomes [`OutputError::Interrupted`]).
    pub fn error(&self, e: io::Error) -> OutputError {
        let path = crate::quote::path(&self.path);
        if e.get_ref().is_some_and(|inner| inner.is::<Cancelled>()) || interrupt::requested() {
            OutputError::Interrupted { path }
        } else {
            OutputError::Io { path, error: e }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        // The temporary (if any) is removed by its own drop; stop tracking it.
        if let Some(r) = self.registered.take() {
            interrupt::unregister(&r);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// The error without the temporary's random name, which means nothing to the user.
fn without_temp_path(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.find(" at path ") {
        Some(i) => io::Error::new(e.kind(), &text[..i]),
        None => e,
    }
}

/// Checks that the regular file `path` (with metadata `m`, links followed) may be
/// replaced by this user: it must be writable by them, as a shell's `>` would
/// need, and, unless they are root, theirs. A replacement is a new file that
/// belongs to its writer, and only root may give it back to another owner, so a
/// file of another user is refused even where its group or other bits allow
/// writing.
fn may_replace(path: &Path, m: &Metadata) -> Result<(), OutputError> {
    let mode = m.permissions().mode() & 0o7777;
    let me = rustix::process::geteuid();
    if !me.is_root() && m.uid() != me.as_raw() {
        return Err(OutputError::NotOwner {
            path: crate::quote::path(path),
            uid: m.uid(),
            mode,
        });
    }
    use rustix::fs::{Access, AtFlags, CWD};
    match rustix::fs::accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::ACCESS && mode & 0o200 == 0 => {
            Err(OutputError::ReadOnly {
                path: crate::quote::path(path),
                mode,
            })
        }
        Err(e) => Err(OutputError::Io {
            path: crate::quote::path(path),
            error: e.into(),
        }),
    }
}

fn keep_of(m: &Metadata) -> Keep {
    Keep {
        mode: m.permissions().mode(),
        uid: m.uid(),
        gid: m.gid(),
    }
}

/// Writes a whole output: `-` is standard output, a regular file is replaced
/// atomically, a device or pipe is written in place.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = OutputFile::create(path)?;
    out.write_bytes(bytes)?;
    out.commit()
}

/// Writes a whole output like [`write_file`], with permissions at most `mask`
/// (see [`OutputFile::create_restricted`]).
pub fn write_file_restricted(path: &Path, bytes: &[u8], mask: u32) -> Result<(), OutputError> {
    let mut out = OutputFile::create_restricted(path, mask)?;
    out.write_bytes(bytes)?;
    out.commit()
}

/// Writes a whole file a tool owns in a folder of its own, replacing whatever has
/// the name without following a link (see [`OutputFile::create_replacing`]).
pub fn replace_file(path: &Path, bytes: &[u8], mask: u32) -> Result<(), OutputError> {
    let mut out = OutputFile::create_replacing(path, mask)?;
    out.write_bytes(bytes)?;
    out.commit()
}

/// Opens a named pipe for writing once something reads from it, waiting at most
/// [`crate::input::PIPE_WAIT`] (a note says so after the first second); a blocking
/// open would wait for a reader for ever.
fn open_pipe(path: &Path) -> Result<File, OutputError> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let p = || crate::quote::path(path);
    let start = std::time::Instant::now();
    let mut noted = false;
    loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(path);
        match opened {
            Ok(file) => {
                // Writes wait for the reader again.
                rustix::fs::fcntl_setfl(&file, OFlags::empty()).map_err(|e| OutputError::Io {
                    path: p(),
                    error: e.into(),
                })?;
                return Ok(file);
            }
            // ENXIO: no reader yet.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {}
            Err(error) => return Err(OutputError::Io { path: p(), error }),
        }
        let waited = start.elapsed();
        // Ctrl-C meanwhile ends the tool with 130 (the interrupt watchdog).
        if waited >= crate::input::PIPE_WAIT {
            return Err(OutputError::Io {
                path: p(),
                error: io::Error::other(format!(
                    "it is a named pipe, and nothing read from it within {} s; start the reader first (`cat pipe &`), or give a regular file",
                    crate::input::PIPE_WAIT.as_secs()
                )),
            });
        }
        if !noted && waited >= std::time::Duration::from_secs(1) {
            noted = true;
            crate::reportln!(
                "note: waiting up to {} s for something to read from the pipe `{}`",
                crate::input::PIPE_WAIT.as_secs(),
                p()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Writes text to standard output, reporting a closed pipe or a full disk as an
/// error instead of panicking as `print!` does.
pub fn print(text: &str) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|error| OutputError::Io {
            path: "standard output".into(),
            error,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regular file under `/dev` (a tmpfs at `/dev/shm`) is replaced through a
    /// temporary as any other: an output given up leaves it as it was (it was
    /// truncated in place).
    #[test]
    fn a_regular_file_under_dev_is_replaced_not_written_in_place() {
        let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
            eprintln!("skipped: no /dev/shm to write in");
            return;
        };
        let path = dir.path().join("run.json");
        std::fs::write(&path, "earlier").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        std::io::Write::write_all(&mut out, b"new").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "earlier");
    }
}
