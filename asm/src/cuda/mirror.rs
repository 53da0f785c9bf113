//! The private copy that clang compiles. After the listing pass has checked
//! which files a `.cu` file reads, each of them is opened once, the file that
//! was opened is checked again (it must still sit in an allowed folder), and its
//! bytes are copied into the private temporary folder, below `src`, at the path
//! the file has from `/`. The compilation runs in the copy of the working
//! folder and reads the copies, so a header swapped after the check (for a link
//! to a file outside, say) is never read. Every folder of the copy is a real
//! folder, so clang resolves `.` and `..` in it by name: files are placed where
//! their names lead by name, from the working folder.
//!
//! What this does not cover: an `#include` of an absolute path names the real
//! file, not its copy; the compilation's own list of what it read is checked
//! for those (see [`super::compile`]).

use super::CudaError;
use super::includes::Allowed;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The copy: its root (the copy of `/`) and its working folder.
pub(super) struct Mirror {
    pub root: PathBuf,
    pub cwd: PathBuf,
}

impl Mirror {
    /// Copies `cu` and `headers` (as the listing names them, relative to the
    /// working folder or absolute) below `temp/src`, each checked as it is
    /// opened; at most [`spu_io::MAX_INPUT_BYTES`] in all.
    pub(super) fn make(
        temp: &Path,
        cu: &Path,
        headers: &[PathBuf],
        include_dirs: &[PathBuf],
    ) -> Result<Mirror, CudaError> {
        let io = |why: String| CudaError::Io {
            file: spu_io::quote::path(cu),
            why,
        };
        let cwd = std::env::current_dir()
            .map_err(|e| io(format!("cannot tell the working folder: {e}")))?;
        let root = temp.join("src");
        let mirror = Mirror {
            cwd: below(&root, &by_name(&cwd, Path::new("."))),
            root,
        };
        make_folder(&mirror.cwd).map_err(|e| io(copy_failed(&mirror.cwd, &e)))?;
        let allowed = Allowed::new(cu, include_dirs);
        let mut budget = spu_io::MAX_INPUT_BYTES;
        // The kernel itself is the file the user named, wherever it resolves.
        mirror.copy(&cwd, cu, None, &mut budget)?;
        for h in headers {
            mirror.copy(&cwd, h, Some((&allowed, cu)), &mut budget)?;
        }
        Ok(mirror)
    }

    /// `path` as the compilation names it: a relative path as it is (clang runs
    /// in the copy's working folder), an absolute one below the copy's root.
    pub(super) fn path(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            below(&self.root, &by_name(Path::new("/"), path))
        } else {
            path.to_path_buf()
        }
    }

    /// Copies the file `name` names; with `check`, refuses a file that resolves
    /// outside the allowed folders when it is opened.
    fn copy(
        &self,
        cwd: &Path,
        name: &Path,
        check: Option<(&Allowed, &Path)>,
        budget: &mut u64,
    ) -> Result<(), CudaError> {
        let cu = check.map_or(name, |(_, cu)| cu);
        let io = |why: String| CudaError::Io {
            file: spu_io::quote::path(cu),
            why,
        };
        let shown = spu_io::quote::path(name);
        let mut file = std::fs::File::open(cwd.join(name))
            .map_err(|e| io(format!("cannot read `{shown}` again to compile it: {e}")))?;
        if let Some((allowed, cu)) = check {
            let real = opened_path(&file, &cwd.join(name))
                .map_err(|e| io(format!("cannot tell where `{shown}` resolves: {e}")))?;
            if !allowed.holds(&real) {
                return Err(allowed.outside(cu, &name.display().to_string(), &real));
            }
        }
        let meta = file
            .metadata()
            .map_err(|e| io(format!("cannot read `{shown}` again to compile it: {e}")))?;
        if !meta.is_file() {
            return Err(io(format!(
                "`{shown}` is no longer a regular file; compile again when nothing changes the kernel's folder"
            )));
        }
        let mut bytes = Vec::new();
        (&mut file)
            .take(budget.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| io(format!("cannot read `{shown}` again to compile it: {e}")))?;
        *budget = budget.checked_sub(bytes.len() as u64).ok_or_else(|| {
            io(format!(
                "the kernel and the files it includes pass {} MiB together, the most a compilation copies",
                spu_io::MAX_INPUT_BYTES >> 20
            ))
        })?;
        let to = below(&self.root, &by_name(cwd, name));
        if let Some(parent) = to.parent() {
            make_folder(parent).map_err(|e| io(copy_failed(parent, &e)))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&to)
        {
            Ok(mut out) => {
                std::io::Write::write_all(&mut out, &bytes).map_err(|e| io(copy_failed(&to, &e)))
            }
            // Two names that lead to one place (`a/../h.h` and `h.h`) must be
            // one file's.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if std::fs::read(&to).is_ok_and(|b| b == bytes) {
                    Ok(())
                } else {
                    Err(io(format!(
                        "two names of included files lead to `{shown}` by name but to different files (through a link to a folder); include the file by one name"
                    )))
                }
            }
            Err(e) => Err(io(copy_failed(&to, &e))),
        }
    }
}

fn copy_failed(path: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot copy the sources into the temporary folder (`{}`): {e}",
        spu_io::quote::path(path)
    )
}

/// Creates `path` and the folders above it, private (mode 0700).
fn make_folder(path: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(path)
}

/// `path` (from `cwd` when relative) as an absolute path with `.` and `..`
/// taken by name.
fn by_name(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in cwd.join(path).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The absolute path `abs` below `root`.
fn below(root: &Path, abs: &Path) -> PathBuf {
    root.join(abs.strip_prefix("/").unwrap_or(abs))
}

/// Where the open `file` resolves: what the system says it opened (so a link
/// swapped after the open does not matter), else the name resolved now.
fn opened_path(file: &std::fs::File, name: &Path) -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return Ok(p);
        }
    }
    let _ = file;
    name.canonicalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_placed_by_name() {
        let cwd = Path::new("/home/u/proj");
        assert_eq!(
            by_name(cwd, Path::new("k.cu")),
            Path::new("/home/u/proj/k.cu")
        );
        assert_eq!(
            by_name(cwd, Path::new("./a/../h.h")),
            Path::new("/home/u/proj/h.h")
        );
        assert_eq!(by_name(cwd, Path::new("../../../../x")), Path::new("/x"));
        assert_eq!(by_name(cwd, Path::new("/abs/./b")), Path::new("/abs/b"));
        assert_eq!(
            below(Path::new("/t/src"), Path::new("/home/u")),
            Path::new("/t/src/home/u")
        );
    }
}

#[cfg(test)]
mod copies {
    use super::*;

    /// A header is copied as it is when it is opened: a header that resolves
    /// outside the allowed folders by then is refused, and the copies are what
    /// the files held, whatever happens to them afterwards.
    #[test]
    fn headers_are_checked_as_they_are_copied() {
        let top = tempfile::tempdir().unwrap();
        let proj = top.path().join("proj");
        let private = top.path().join("private");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(&private).unwrap();
        std::fs::write(private.join("secret"), "SECRET\n").unwrap();
        let cu = proj.join("k.cu");
        std::fs::write(&cu, "#include \"h.h\"\n").unwrap();
        let h = proj.join("h.h");
        std::fs::write(&h, "#define V 3\n").unwrap();
        let temp = tempfile::tempdir().unwrap();
        let m = Mirror::make(temp.path(), &cu, std::slice::from_ref(&h), &[]).unwrap();
        let copy = m.path(&h);
        assert!(copy.starts_with(&m.root), "{}", copy.display());
        std::fs::remove_file(&h).unwrap();
        std::os::unix::fs::symlink(private.join("secret"), &h).unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "#define V 3\n");
        assert_eq!(
            std::fs::read_to_string(m.path(&cu)).unwrap(),
            "#include \"h.h\"\n"
        );
        let again = tempfile::tempdir().unwrap();
        let err = Mirror::make(again.path(), &cu, std::slice::from_ref(&h), &[])
            .err()
            .expect("a header that now leads outside is refused");
        assert!(matches!(err, CudaError::Outside { .. }), "{err}");
        let not_copied = below(&again.path().join("src"), &h);
        assert!(!not_copied.exists(), "{}", not_copied.display());
    }
}
