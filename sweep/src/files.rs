//! The files a spec names (kernels, machine files, energy models), resolved the way
//! `#include` resolves included files: relative to the spec, and only inside the
//! spec's folder or a folder or file the command line allows (`--allow`), after
//! following links. Each must be a regular file of its kind (a kernel `.spu`,
//! `.ptx`, `.cu` or `.bin`, a machine or model `.toml`), so a spec from an untrusted
//! source can neither make a sweep read a file elsewhere on the machine nor quote
//! a file that is not source. The permissions of every file read narrow those of
//! the results ([`Access`]), so records that quote a private file stay private.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What a spec file is used as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Kernel,
    Machine,
    Model,
}

impl Kind {
    fn extensions(self) -> &'static [&'static str] {
        match self {
            // A `.cu` file is compiled by clang as `spu-emu k.cu` does; the files it
            // includes must sit in its folder, itself inside the spec's.
            Kind::Kernel => &["spu", "ptx", "cu", "bin"],
            Kind::Machine | Kind::Model => &["toml"],
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Kernel => "a kernel",
            Kind::Machine => "a machine file",
            Kind::Model => "an energy model file",
        }
    }
}

/// Where a spec may read files: its own folder and what the command line allows.
#[derive(Debug, Clone)]
pub struct Access {
    /// The spec's folder, as written (relative paths start there).
    pub dir: PathBuf,
    /// The spec's folder and the allowed paths, resolved; `Err` keeps why one
    /// cannot be resolved.
    roots: Vec<Result<PathBuf, String>>,
}

/// Permission bits of a results folder whose inputs nobody restricted.
pub const OPEN_MODE: u32 = 0o777;

impl Access {
    pub fn new(dir: &Path, allowed: &[PathBuf]) -> Access {
        let resolve = |p: &Path| {
            p.canonicalize()
                .map_err(|e| format!("cannot resolve `{}`: {e}", p.display()))
        };
        Access {
            dir: dir.to_path_buf(),
            roots: std::iter::once(dir)
                .chain(allowed.iter().map(PathBuf::as_path))
                .map(resolve)
                .collect(),
        }
    }

    /// True when `text` names a file rather than a preset or built-in model.
    pub fn names_a_file(text: &str, kind: Kind) -> bool {
        text.contains('/') || has_extension(text, kind)
    }

    /// Resolves `text` (relative to the spec) to a file this spec may read:
    /// its canonical path and permission bits, or why not (a message to show
    /// under the value).
    pub fn resolve(&self, text: &str, kind: Kind) -> Result<(PathBuf, u32), String> {
        if !has_extension(text, kind) {
            let mut names: Vec<String> =
                kind.extensions().iter().map(|e| format!(".{e}")).collect();
            let last = names.pop().unwrap_or_default();
            let names = if names.is_empty() {
                last
            } else {
                format!("{} or {last}", names.join(", "))
            };
            return Err(format!(
                "{} must be a {names} file; `{}` is not",
                kind.what(),
                spu_io::quote::shorten(text)
            ));
        }
        let path = self.dir.join(text);
        let real = path.canonicalize().map_err(|e| {
            format!(
                "cannot read `{}`: {e}",
                spu_io::quote::shorten(&path.display().to_string())
            )
        })?;
        let inside = self.roots.iter().any(|r| match r {
            Ok(root) => real.starts_with(root),
            Err(_) => false,
        });
        if !inside {
            return Err(format!(
                "`{}` is outside the spec's folder `{}`; a spec may only name files in its \
                 folder or below it, or under a path given with `--allow`",
                spu_io::quote::shorten(text),
                self.dir.display()
            ));
        }
        let meta = std::fs::metadata(&real)
            .map_err(|e| format!("cannot read `{}`: {e}", spu_io::quote::shorten(text)))?;
        if !meta.is_file() {
            return Err(format!(
                "`{}` is not a regular file (a folder, pipe or device)",
                spu_io::quote::shorten(text)
            ));
        }
        Ok((real, meta.permissions().mode() & OPEN_MODE))
    }

    /// Why an allowed path cannot be used, if one cannot.
    pub fn unusable(&self) -> Option<&str> {
        self.roots
            .iter()
            .find_map(|r| r.as_ref().err().map(String::as_str))
    }
}

fn has_extension(text: &str, kind: Kind) -> bool {
    Path::new(text)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| kind.extensions().iter().any(|k| e.eq_ignore_ascii_case(k)))
}

/// Permission bits of a file, if it can be read (0 bits of it are lost otherwise,
/// so an unreadable file cannot widen anything).
pub fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & OPEN_MODE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_outside_the_folder_and_of_other_kinds_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let spec_dir = dir.path().join("spec");
        std::fs::create_dir(&spec_dir).unwrap();
        std::fs::write(spec_dir.join("k.spu"), "exit;").unwrap();
        std::fs::write(dir.path().join("outside.spu"), "exit;").unwrap();
        std::fs::write(spec_dir.join("notes.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.spu"), spec_dir.join("link.spu"))
            .unwrap();
        let access = Access::new(&spec_dir, &[]);
        assert!(access.resolve("k.spu", Kind::Kernel).is_ok());
        for (text, needle) in [
            ("../outside.spu", "outside the spec's folder"),
            ("link.spu", "outside the spec's folder"),
            (
                "notes.txt",
                "a kernel must be a .spu, .ptx, .cu or .bin file",
            ),
            ("/etc/passwd", "a machine file must be a .toml file"),
        ] {
            let kind = if text.starts_with('/') {
                Kind::Machine
            } else {
                Kind::Kernel
            };
            let e = access.resolve(text, kind).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let allowed = Access::new(&spec_dir, &[dir.path().join("outside.spu")]);
        assert!(allowed.resolve("../outside.spu", Kind::Kernel).is_ok());
        assert!(allowed.resolve("link.spu", Kind::Kernel).is_ok());
    }
}
