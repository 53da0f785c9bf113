//! The temporary an output is written to before it is renamed over its target.
//! Where the file system allows it (Linux `O_TMPFILE`), the temporary has no name
//! until it is complete, so even a process killed with SIGKILL leaves nothing
//! behind; it is then linked under an unpredictable, exclusively created name and
//! renamed. Elsewhere it is a named temporary (`tempfile`), removed on drop.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// An output's temporary file.
#[derive(Debug)]
pub(crate) enum Temp {
    /// Not linked into any directory yet.
    Unnamed {
        file: File,
        dir: PathBuf,
        prefix: String,
    },
    Named(tempfile::NamedTempFile),
}

impl Temp {
    /// A temporary in `dir` for a file called `name`, with mode 0666 less the umask.
    pub fn create(dir: &Path, name: &str) -> io::Result<Temp> {
        // `.NAME.XXXXXX.tmp` is 12 bytes longer than the name: a long name is
        // cut (at a character boundary) so the temporary's fits in 255 bytes.
        let mut cut = name.len().min(200);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let prefix = format!(".{}.", &name[..cut]);
        if Path::new("/proc/self/fd").is_dir() {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC;
            if let Ok(fd) =
                rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::from_raw_mode(0o666))
            {
                return Ok(Temp::Unnamed {
                    file: File::from(fd),
                    dir: dir.to_path_buf(),
                    prefix,
                });
            }
        }
        named(dir, &prefix).map(Temp::Named)
    }

    pub fn file(&self) -> &File {
        match self {
            Temp::Unnamed { file, .. } => file,
            Temp::Named(t) => t.as_file(),
        }
    }

    pub fn file_mut(&mut self) -> &mut File {
        match self {
            Temp::Unnamed { file, .. } => file,
            Temp::Named(t) => t.as_file_mut(),
        }
    }

    /// The path to remove if the process is ended by Ctrl-C (named temporaries only).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Temp::Unnamed { .. } => None,
            Temp::Named(t) => Some(t.path()),
        }
    }

    /// Renames the complete temporary over `target`.
    pub fn persist(self, target: &Path) -> io::Result<()> {
        match self {
            Temp::Named(t) => t.persist(target).map(drop).map_err(|e| e.error),
            Temp::Unnamed {
                mut file,
                dir,
                prefix,
            } => {
                let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
                let linked = tempfile::Builder::new()
                    .prefix(&prefix)
                    .suffix(".tmp")
                    .make_in(&dir, |p| {
                        rustix::fs::linkat(
                            rustix::fs::CWD,
                            proc_path.as_str(),
                            rustix::fs::CWD,
                            p,
                            rustix::fs::AtFlags::SYMLINK_FOLLOW,
                        )
                        .map_err(io::Error::from)
                    });
                match linked {
                    Ok(named) => named.persist(target).map_err(|e| e.error),
                    Err(_) => {
                        // Linking is not allowed here: copy into a named temporary.
                        let mut copy = named(&dir, &prefix)?;
                        // Narrowed before the bytes go in, as the original was.
                        copy.as_file()
                            .set_permissions(file.metadata()?.permissions())?;
                        io::Seek::rewind(&mut file)?;
                        io::copy(&mut file, copy.as_file_mut())?;
                        copy.as_file().sync_all()?;
                        copy.persist(target).map(drop).map_err(|e| e.error)
                    }
                }
            }
        }
    }
}

fn named(dir: &Path, prefix: &str) -> io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}
