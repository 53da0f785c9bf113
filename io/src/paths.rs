//! Refusing outputs that would overwrite one of the run's inputs, or each other.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What a path refers to, for comparing paths that may be spelled differently.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileId {
    /// An existing regular file: its device and inode.
    Inode(u64, u64),
    /// A file to be created: its absolute path.
    New(PathBuf),
    /// Standard output.
    Stdout,
}

/// The identity of `path`, or `None` for files several outputs may share
/// (devices: `/dev/null` twice is fine). A named pipe has one: two outputs
/// written into one pipe reach its reader as one stream neither format reads.
fn file_id(path: &Path) -> Option<FileId> {
    if matches!(
        path.to_str(),
        Some("-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
    ) || crate::output::reaches_stdout(path)
    {
        return Some(FileId::Stdout);
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() || std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()) => {
            Some(FileId::Inode(m.dev(), m.ino()))
        }
        Ok(_) => None,
        Err(_) => {
            let name = path.file_name()?;
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            Some(FileId::New(dir.join(name)))
        }
    }
}

/// The identity of the regular file standard output writes to, if it is one.
fn stdout_file() -> Option<FileId> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let m = std::fs::File::from(fd).metadata().ok()?;
    m.is_file().then(|| FileId::Inode(m.dev(), m.ino()))
}

/// Why the outputs cannot be written as asked.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(transparent)]
    Unwritable(#[from] crate::OutputError),
    #[error("{output} would overwrite the input {input}; write it to another file")]
    OverwritesInput { output: String, input: String },
    #[error("{first} and {second} name the same file; give each output its own file")]
    SameOutput { first: String, second: String },
    #[error(
        "standard output is the input {input} (a redirection such as `>> FILE` to it); send standard output to another file"
    )]
    StdoutIsInput { input: String },
    #[error("{first} and {second} both write to standard output; send one of them to a file")]
    BothStdout { first: String, second: String },
    #[error("`-I {path}`: {reason}; name an existing folder the source may `#include` from")]
    IncludeDir { path: String, reason: String },
}

/// Checks that each `-I DIR` names an existing folder (a missing folder or a file
/// there is a mistake, not an empty folder).
pub fn check_include_dirs(dirs: &[PathBuf]) -> Result<(), PathError> {
    for dir in dirs {
        let reason = match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => "not a folder".to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such folder".to_string(),
            Err(e) => format!("cannot be read ({})", crate::quote::escape(&e.to_string())),
        };
        return Err(PathError::IncludeDir {
            path: crate::quote::path(dir),
            reason,
        });
    }
    Ok(())
}

/// Checks that no output names an input or another output, and that each output
/// can be written ([`crate::output::check_target`]). Each path comes with the
/// option that named it (e.g. "`--stats s.json`"), for the message, which shows it
/// escaped ([`crate::quote::escape`]).
pub fn check_distinct(
    inputs: &[(String, &Path)],
    outputs: &[(String, &Path)],
) -> Result<(), PathError> {
    let inputs: Vec<(&String, FileId)> = inputs
        .iter()
        .filter_map(|(what, p)| Some((what, file_id(p)?)))
        .collect();
    let escape = |label: &str| crate::quote::escape(label).into_owned();
    // What the tool prints goes to standard output: a regular file there (the
    // shell's `>> kernel.spu`) must not be an input, as `cat` refuses.
    if let Some(out) = stdout_file()
        && let Some((input, _)) = inputs.iter().find(|(_, i)| *i == out)
    {
        return Err(PathError::StdoutIsInput {
            input: escape(input),
        });
    }
    let mut seen: Vec<(&String, FileId)> = Vec::new();
    for (what, p) in outputs {
        crate::output::check_target(p)?;
        let Some(id) = file_id(p) else {
            continue;
        };
        if let Some((input, _)) = inputs
            .iter()
            .find(|(_, i)| *i == id && id != FileId::Stdout)
        {
            return Err(PathError::OverwritesInput {
                output: escape(what),
                input: escape(input),
            });
        }
        if let Some((first, _)) = seen.iter().find(|(_, s)| *s == id) {
            return Err(if id == FileId::Stdout {
                PathError::BothStdout {
                    first: escape(first),
                    second: escape(what),
                }
            } else {
                PathError::SameOutput {
                    first: escape(first),
                    second: escape(what),
                }
            });
        }
        seen.push((what, id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_dirs_must_be_existing_folders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.h");
        std::fs::write(&file, b"").unwrap();
        assert!(check_include_dirs(&[dir.path().to_path_buf()]).is_ok());
        let missing = dir.path().join("nope");
        let err = check_include_dirs(&[dir.path().to_path_buf(), missing.clone()]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`-I ") && text.contains("nope`: no such folder"),
            "{text}"
        );
        let text = check_include_dirs(&[file]).unwrap_err().to_string();
        assert!(text.contains("f.h`: not a folder"), "{text}");
    }

    /// Two outputs into one named pipe are refused (the reader got both
    /// back to back); `/dev/null` may still take several.
    #[test]
    fn two_outputs_into_one_pipe_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("p");
        let made = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("skipped: no `mkfifo` to make a named pipe with");
            return;
        }
        let named = |s: &str| format!("`{s}`");
        let err = check_distinct(
            &[],
            &[
                (named("--stats"), pipe.as_path()),
                (named("--dump"), pipe.as_path()),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, PathError::SameOutput { .. }), "{err}");
        let null = Path::new("/dev/null");
        check_distinct(&[], &[(named("--stats"), null), (named("--dump"), null)])
            .expect("several outputs may go to /dev/null");
    }

    #[test]
    fn same_files_are_found_however_they_are_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.npy");
        std::fs::write(&input, b"x").unwrap();
        let spelled = dir.path().join(".").join("a.npy");
        let out = dir.path().join("out.json");
        let named = |s: &str| format!("`{s}`");
        let err = check_distinct(
            &[(named("--load"), input.as_path())],
            &[(named("--dump"), spelled.as_path())],
        )
        .unwrap_err();
        assert!(matches!(err, PathError::OverwritesInput { .. }), "{err}");
        let err = check_distinct(
            &[],
            &[
                (named("--stats"), out.as_path()),
                (named("-o"), out.as_path()),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, PathError::SameOutput { .. }), "{err}");
        let err = check_distinct(
            &[],
            &[
                (named("--stats"), Path::new("-")),
                (named("--trace"), Path::new("-")),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, PathError::BothStdout { .. }), "{err}");
        let null = Path::new("/dev/null");
        check_distinct(
            &[(named("k"), input.as_path())],
            &[(named("a"), null), (named("b"), null)],
        )
        .expect("devices may be shared");
    }
}
