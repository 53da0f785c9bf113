//! The files of a plan: kernels (hashed with the files they include, and read or
//! assembled once so their parameters can be checked), machine files and energy
//! models, each found
//! through [`crate::files`] and counted as an input of the sweep (its permissions
//! narrow the results'), and the check of each run's `D` values against the
//! kernel's parameters.

use super::{Planner, model_hash, quoted, sha256_hex};
use crate::diag::Problem;
use crate::files::{Access, Kind};
use crate::spec::{Field, Value};
use spu_io::quote::shorten;
use spu_isa::format::ParamDecl;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A kernel file as planned: where it is, its hash ([`kernel_hash`]), and its
/// parameters (`None` when it does not assemble: its runs fail and say why).
#[derive(Debug, Clone)]
pub(super) struct KernelFile {
    pub path: PathBuf,
    pub sha256: String,
    params: Option<Vec<ParamDecl>>,
}

/// The hash a run's identity holds for its kernel: of the kernel file's `bytes`
/// and of every file the assembler read for it besides (`included`: `#include`d
/// `.spu`/`.ptx` files, the `.cu` file of a launch file and the headers clang read
/// for it), in the order they were read, so changing any of them runs the kernel's
/// runs again. A kernel that includes nothing is hashed by its own bytes. A file
/// that cannot be read again counts as such, not as an error: the run that reads
/// it says why.
pub fn kernel_hash(bytes: &[u8], included: &[PathBuf]) -> String {
    let own = sha256_hex(bytes);
    if included.is_empty() {
        return own;
    }
    let mut seen = std::collections::HashSet::new();
    let mut parts = vec![own];
    for f in included {
        let real = f.canonicalize().unwrap_or_else(|_| f.clone());
        if seen.insert(real.clone()) {
            parts.push(match spu_io::read_regular(&real, spu_io::MAX_INPUT_BYTES) {
                Some(Ok(b)) => sha256_hex(&b),
                _ => "unreadable".to_string(),
            });
        }
    }
    sha256_hex(parts.join("\n").as_bytes())
}

impl Planner<'_> {
    /// A file the spec names, resolved and counted as an input; a problem at the
    /// value otherwise.
    fn file(&mut self, v: &Value, kind: Kind, label: &str) -> Option<PathBuf> {
        match self.access.resolve(&v.text, kind) {
            Ok((path, mode)) => {
                self.file_mode &= mode;
                self.inputs.insert(path.clone());
                Some(path)
            }
            Err(why) => {
                self.problems
                    .push(Problem::at(v.span.clone(), why).label(label).help(format!(
                        "paths are relative to the spec's folder `{}`",
                        self.access.dir.display()
                    )));
                None
            }
        }
    }

    /// A file the spec names (as its absolute path), or a preset or built-in name.
    fn file_or_name(&mut self, v: &Value, kind: Kind, label: &str) -> Option<String> {
        if Access::names_a_file(&v.text, kind) {
            self.file(v, kind, label).map(|p| p.display().to_string())
        } else {
            Some(v.text.clone())
        }
    }

    /// Counts a file the tools read on their own (included, extended) as an input.
    fn also_read(&mut self, path: &Path) {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.file_mode &= crate::files::mode_of(&real);
        self.inputs.insert(real);
    }

    pub(super) fn kernel(&mut self, v: &Value) -> Option<KernelFile> {
        if let Some(k) = self.kernels.get(&v.text) {
            return k.clone();
        }
        let resolved = self.file(v, Kind::Kernel, "kernel file").and_then(|path| {
            match spu_isa::format::read_input(&path) {
                Ok(bytes) => {
                    let (params, included) = self.params(&path);
                    Some(KernelFile {
                        sha256: kernel_hash(&bytes, &included),
                        params,
                        path,
                    })
                }
                Err(e) => {
                    self.problems
                        .push(Problem::at(v.span.clone(), e.to_string()).label("kernel file"));
                    None
                }
            }
        });
        self.kernels.insert(v.text.clone(), resolved.clone());
        resolved
    }

    /// The parameters a kernel declares, read (or assembled) once while planning,
    /// so `D` values are checked before any run (`None` if it does not assemble),
    /// and the files the assembler read for it besides the kernel. The files a
    /// run's messages may quote narrow the sweep's file mode: those included, and
    /// the sources beside the kernel its line table names; when it does not
    /// assemble, which files its messages quote is not known, so its records are
    /// private (600).
    fn params(&mut self, path: &Path) -> (Option<Vec<ParamDecl>>, Vec<PathBuf>) {
        let Ok(kernel) = spu_emu::read_kernel(path) else {
            self.file_mode &= 0o600;
            return (None, Vec::new());
        };
        for f in &kernel.included {
            self.also_read(f);
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        for name in kernel.sources.keys() {
            if let Some(file) = Path::new(name).file_name() {
                self.also_read(&dir.join(file));
            }
        }
        (Some(kernel.module.params), kernel.included)
    }

    /// Loads an energy model once; `None` after a reported problem.
    pub(super) fn model(&mut self, v: &Value) -> Option<(String, String)> {
        if let Some(m) = self.models.get(&v.text) {
            return m.clone();
        }
        let resolved = self
            .file_or_name(v, Kind::Model, "energy model file")
            .and_then(|source| match spu_prof::model::Model::load(&source) {
                Ok(m) => {
                    for f in m.files.iter().skip(1) {
                        self.also_read(f);
                    }
                    Some((source, model_hash(&m)))
                }
                Err(e) => {
                    self.problems.push(
                        Problem::at(v.span.clone(), e.to_string())
                            .label("cannot load this energy model"),
                    );
                    None
                }
            });
        self.models.insert(v.text.clone(), resolved.clone());
        resolved
    }

    pub(super) fn machine_source(&mut self, v: &Value) -> Option<String> {
        if let Some(m) = self.machines.get(&v.text) {
            return m.clone();
        }
        let resolved = self
            .file_or_name(v, Kind::Machine, "machine file")
            .and_then(|source| {
                let args = spu_emu::cli::RunArgs {
                    machine: Some(source.clone()),
                    ..Default::default()
                };
                match args.machine() {
                    Ok(_) => Some(source),
                    Err(e) => {
                        self.problems.push(
                            Problem::at(v.span.clone(), e.to_string())
                                .label("machine preset or file"),
                        );
                        None
                    }
                }
            });
        self.machines.insert(v.text.clone(), resolved.clone());
        resolved
    }

    /// Checks the run's `D` values against the kernel's parameters: each must be
    /// declared and take the value; every parameter without a default needs one.
    pub(super) fn check_defines(
        &mut self,
        kernel: &KernelFile,
        kernel_value: &Value,
        settings: &BTreeMap<Field, Value>,
    ) -> bool {
        let Some(params) = &kernel.params else {
            return true;
        };
        let mut ok = true;
        let names = || {
            if params.is_empty() {
                "it declares no parameters".to_string()
            } else {
                format!(
                    "it declares {}",
                    quoted(&params.iter().map(|p| p.name.clone()).collect::<Vec<_>>())
                )
            }
        };
        for (f, v) in settings {
            let Field::Define(name) = f else { continue };
            let Some(p) = params.iter().find(|p| p.name == *name) else {
                ok = false;
                self.problems.push(
                    Problem::at(
                        v.span.clone(),
                        format!(
                            "the kernel `{}` has no parameter `{}`",
                            shorten(&kernel_value.text),
                            shorten(name)
                        ),
                    )
                    .label("not a kernel parameter")
                    .help(names()),
                );
                continue;
            };
            if let Err(why) = spu_isa::format::parse_param_value(&v.text, p.ty) {
                ok = false;
                self.problems.push(
                    Problem::at(
                        v.span.clone(),
                        format!(
                            "kernel parameter `{name}` is .{} and `{}` {why}",
                            p.ty,
                            shorten(&v.text)
                        ),
                    )
                    .label("not a value of this parameter"),
                );
            }
        }
        for p in params {
            if p.default.is_none() && !settings.contains_key(&Field::Define(p.name.clone())) {
                ok = false;
                self.problems.push(
                    Problem::at(
                        kernel_value.span.clone(),
                        format!(
                            "the kernel `{}` needs a value for its parameter `{}`",
                            shorten(&kernel_value.text),
                            p.name
                        ),
                    )
                    .label("no value for every parameter")
                    .help(format!("add `D.{} = ...` to `[base]` or an axis", p.name)),
                );
            }
        }
        ok
    }
}
