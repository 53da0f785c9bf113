//! Reading `#include`d files from disk, confined to the kernel's folder: an included
//! file must be a regular file that resolves (after following links) inside the
//! folder of the file named on the command line, and is read through the one bounded
//! reader. A kernel from an untrusted source can therefore neither quote files
//! elsewhere on the machine nor hang the assembler on a pipe or device.

use std::path::{Path, PathBuf};

/// A reader for [`super::preprocess`] that loads included files of the kernel at
/// `path` (as named on the command line) under the rule above.
pub fn confined_reader(path: &str) -> impl FnMut(&Path) -> Result<String, String> {
    let folder = match Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let root = folder.canonicalize();
    move |p: &Path| {
        let root = root.as_ref().map_err(|e| {
            format!(
                "cannot resolve the kernel's folder `{}`: {e}",
                folder.display()
            )
        })?;
        let real = p
            .canonicalize()
            .map_err(|e| format!("cannot open `{}`: {e}", p.display()))?;
        if !real.starts_with(root) {
            return Err(format!(
                "`{}` resolves to `{}`, outside `{}`, the kernel's folder; included files must \
                 sit in that folder or below it (copy the file beside the kernel)",
                p.display(),
                real.display(),
                folder.display()
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
