//! The files a command-line run writes (statistics, timeline, dumps, reports), put
//! in place together: each is first written to its own temporary, and only when all
//! are complete are they renamed over their targets, so an error or Ctrl-C leaves
//! every target as it was. Also the check, before a run starts, that no output names
//! an input or another output.

use crate::cli::args::RunArgs;
use crate::load::npy::{self, NpyError};
use spu_io::paths::PathError;
use spu_io::{OutputError, OutputFile};
use spu_isa::Ty;
use std::path::{Path, PathBuf};

/// Outputs written but not yet in place.
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<OutputFile>,
}

impl Outputs {
    /// Writes `bytes` for `path` (to a temporary, or directly for standard output
    /// and devices).
    pub fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        let mut out = OutputFile::create(path)?;
        out.write_bytes(bytes)?;
        self.files.push(out);
        Ok(())
    }

    /// Writes for `path` what `write` writes, as it writes it (a text too large
    /// to hold twice).
    pub fn add_written(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut OutputFile) -> std::io::Result<()>,
    ) -> Result<(), OutputError> {
        let mut out = OutputFile::create(path)?;
        write(&mut out).map_err(|e| out.error(e))?;
        self.files.push(out);
        Ok(())
    }

    /// Writes a buffer as `.npy`.
    pub fn add_npy(
        &mut self,
        path: &Path,
        ty: Ty,
        dims: &[u64],
        words: &[u32],
    ) -> Result<(), NpyError> {
        let write = |error| NpyError::Write {
            path: spu_io::quote::path(path),
            error,
        };
        let mut out = OutputFile::create(path)?;
        npy::encode_to(&mut out, ty, dims, words).map_err(write)?;
        self.files.push(out);
        Ok(())
    }

    /// Puts every output in place, in the order they were added.
    pub fn commit(self) -> Result<(), OutputError> {
        for f in self.files {
            f.commit()?;
        }
        Ok(())
    }
}

/// The file part of a `BUF=FILE` argument.
fn file_of(arg: &str) -> Option<PathBuf> {
    arg.split_once('=')
        .map(|(_, f)| PathBuf::from(f))
        .filter(|f| !f.as_os_str().is_empty())
}

/// Files a kernel `#include`s, as inputs for [`check_paths`].
pub fn included(files: &[PathBuf]) -> Vec<(String, PathBuf)> {
    files
        .iter()
        .map(|f| {
            (
                format!("`{}`, which the kernel includes", f.display()),
                f.clone(),
            )
        })
        .collect()
}

/// Checks that no output of a run names one of its inputs or another output.
/// `inputs` and `outputs` add the tool's own files to the run options' ones; each is
/// (how the command line named it, the path).
pub fn check_paths(
    kernel: Option<&Path>,
    args: &RunArgs,
    inputs: &[(String, PathBuf)],
    outputs: &[(String, PathBuf)],
) -> Result<(), PathError> {
    let mut ins: Vec<(String, PathBuf)> = inputs.to_vec();
    if let Some(k) = kernel {
        ins.push((format!("kernel `{}`", k.display()), k.to_path_buf()));
    }
    if let Some(m) = args
        .machine
        .as_deref()
        .filter(|m| crate::cli::args::is_file_like(m))
    {
        ins.push((format!("`--machine {m}`"), PathBuf::from(m)));
    }
    for l in &args.loads {
        if let Some(f) = file_of(l) {
            ins.push((format!("`--load {l}`"), f));
        }
    }
    let mut outs: Vec<(String, PathBuf)> = outputs.to_vec();
    if let Some(s) = &args.stats {
        outs.push((format!("`--stats {}`", s.display()), s.clone()));
    }
    for d in &args.dumps {
        if let Some(f) = file_of(d) {
            outs.push((format!("`--dump {d}`"), f));
        }
    }
    let ins: Vec<(String, &Path)> = ins.iter().map(|(w, p)| (w.clone(), p.as_path())).collect();
    let outs: Vec<(String, &Path)> = outs.iter().map(|(w, p)| (w.clone(), p.as_path())).collect();
    spu_io::paths::check_distinct(&ins, &outs)
}
