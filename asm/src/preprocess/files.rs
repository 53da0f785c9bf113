//! Reading `#include`d files from disk, confined to folders the user named: an included
//! file must be a regular file that resolves (after following links) inside the folder
//! of the file named on the command line or inside a folder given with `-I DIR`, and is
//! read through the one bounded reader. A kernel from an untrusted source can therefore
//! neither quote files elsewhere on the machine nor hang the assembler on a pipe or
//! device.

use std::path::{Path, PathBuf};

/// A reader for [`super::preprocess`] that loads included files of the kernel at
/// `path` (as named on the command line) under the rule above; `include_dirs` are the
/// `-I` folders.
pub fn confined_reader(
    path: &str,
    include_dirs: &[PathBuf],
) -> impl FnMut(&Path) -> Result<String, String> + use<> {
    let folder = match Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let roots: Vec<(PathBuf, std::io::Result<PathBuf>)> = std::iter::once(folder)
        .chain(include_dirs.iter().cloned())
        .map(|d| {
            let real = d.canonicalize();
            (d, real)
        })
        .collect();
    move |p: &Path| {
        for (dir, real) in &roots {
            if let Err(e) = real {
                return Err(format!(
                    "cannot resolve the folder `{}`: {e}",
                    dir.display()
                ));
            }
        }
        let real = p
            .canonicalize()
            .map_err(|e| format!("cannot open `{}`: {e}", p.display()))?;
        if !roots
            .iter()
            .any(|(_, root)| root.as_ref().is_ok_and(|r| real.starts_with(r)))
        {
            let named: Vec<String> = roots
                .iter()
                .map(|(d, _)| format!("`{}`", d.display()))
                .collect();
            let folder = real.parent().unwrap_or(&real);
            return Err(format!(
                "`{}` resolves to `{}`, outside {}; included files must sit in the kernel's \
                 folder or in a folder given with `-I DIR`: add `-I {}`, or copy the file \
                 beside the kernel",
                p.display(),
                real.display(),
                named.join(", "),
                spu_io::quote::path(folder)
            ));
        }
        // Checked on the opened file: nothing can be swapped in after the check.
        let bytes = spu_io::read_regular(&real, spu_io::MAX_INPUT_BYTES)
            .ok_or_else(|| {
                format!(
                    "`{}` is not a regular file (a folder, pipe or device); copy its text into a \
                     file beside the kernel",
                    p.display()
                )
            })?
            .map_err(|e| e.to_string())?;
        let text = spu_io::input::text_from(p, bytes).map_err(|e| e.to_string())?;
        // As for the kernel itself; the macro expander also relies on it.
        if text.contains('\0') {
            return Err(format!(
                "`{}` contains NUL bytes; is it a source file?",
                p.display()
            ));
        }
        Ok(text)
    }
}
