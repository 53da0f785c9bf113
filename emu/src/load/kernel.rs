//! Reading a kernel from disk: a `.bin` is parsed and validated, anything else is
//! assembled on the fly as `.spu` source. Source text is kept so run-time errors can
//! quote the offending line: the kernel's own text, or for a binary the source files
//! its line table names, if they sit beside it ([`source_beside`]).

use spu_isa::format::Module;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What to do about a binary the reader refuses: a newer format needs newer tools.
fn fix(error: &spu_isa::format::FormatError) -> &'static str {
    match error {
        spu_isa::format::FormatError::Version { found, supported } if found > supported => {
            "use the tools that wrote it, or reassemble its source with this `spu-asm`"
        }
        _ => "reassemble it with `spu-asm`",
    }
}

/// Why a kernel cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error(transparent)]
    Input(#[from] spu_isa::format::InputError),
    #[error("`{path}` is not a valid SPU binary: {error}; {}", fix(error))]
    Binary {
        path: String,
        error: spu_isa::format::FormatError,
    },
    #[error("`{path}` is neither an SPU binary nor UTF-8 source text")]
    NotText { path: String },
    /// A `.cu` file that clang could not compile.
    #[error(transparent)]
    Cuda(#[from] spu_asm::cuda::CudaError),
    /// Assembly failed; `rendered` holds the diagnostics.
    #[error("`{path}`: {errors} assembly error{}", if *errors == 1 { "" } else { "s" })]
    Assembly {
        path: String,
        errors: usize,
        rendered: String,
    },
}

/// A kernel and the source text of the files its line table names.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub module: Module,
    /// File name (as in the line table) -> text.
    pub sources: HashMap<String, String>,
    /// Warnings from assembling on the fly.
    pub warnings: String,
    /// The files the assembler read besides the kernel (`#include`d ones).
    pub included: Vec<PathBuf>,
}

impl Kernel {
    /// The text of a source line, if known.
    pub fn source_line(&self, file: &str, line: u32) -> Option<&str> {
        self.sources
            .get(file)?
            .lines()
            .nth(line.checked_sub(1)? as usize)
    }
}

/// Extensions of the source files a line table may name: kernels, launch files,
/// CUDA C and the headers they include. Nothing else is quoted, so a line table
/// that names `secret.txt` beside the kernel gets no text from it.
pub const SOURCE_EXTENSIONS: &[&str] = &[
    "spu", "ptx", "cu", "cuh", "h", "hpp", "inc", "c", "cc", "cpp", "cxx",
];

/// The text of source file `recorded` (a name from a binary's line table or a
/// statistics file) if a plain file of that name, with a source extension
/// ([`SOURCE_EXTENSIONS`]), sits beside `input`, the file the user named. A hostile
/// binary can name any path; only its last component is used, and links, devices
/// and pipes are never read.
pub fn source_beside(input: &Path, recorded: &str) -> Option<String> {
    let name = Path::new(recorded).file_name()?;
    let ext = Path::new(name).extension()?.to_str()?;
    if !SOURCE_EXTENSIONS.contains(&ext) {
        return None;
    }
    let dir = match input.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    spu_io::read_quotable(&dir.join(name))
}

/// Reads a `.bin` or `.spu` file.
pub fn read_kernel(path: &Path) -> Result<Kernel, KernelError> {
    read_kernel_with(path, &[])
}

/// [`read_kernel`] where source may also `#include` files in `include_dirs` (`-I DIR`).
pub fn read_kernel_with(path: &Path, include_dirs: &[PathBuf]) -> Result<Kernel, KernelError> {
    read_kernel_using(path, include_dirs, None)
}

/// [`read_kernel_with`] where `clang` (`--clang PATH`) compiles CUDA C: a `.cu` file
/// named here or `#include`d by a launch file (see [`spu_asm::cuda`]).
pub fn read_kernel_using(
    path: &Path,
    include_dirs: &[PathBuf],
    clang: Option<&Path>,
) -> Result<Kernel, KernelError> {
    let bytes = spu_isa::format::read_input(path)?;
    if spu_isa::format::is_binary(path, &bytes) {
        let module = spu_isa::format::read_module(&bytes).map_err(|error| KernelError::Binary {
            path: spu_io::quote::path(path),
            error,
        })?;
        let sources = module
            .lines
            .files
            .iter()
            .filter_map(|f| Some((f.clone(), source_beside(path, f)?)))
            .collect();
        return Ok(Kernel {
            module,
            sources,
            warnings: String::new(),
            included: Vec::new(),
        });
    }
    let not_text = || KernelError::NotText {
        path: spu_io::quote::path(path),
    };
    // Text in another encoding (UTF-16 from PowerShell) is named with its conversion.
    let text = spu_io::input::text_from(path, bytes).map_err(|e| match e {
        spu_isa::format::InputError::NotText { .. } => not_text(),
        e => KernelError::Input(e),
    })?;
    if text.contains('\0') {
        return Err(not_text());
    }
    // A `.cu` file's text is the PTX clang writes for it, named `k.cu.ptx`.
    let (p, text, headers) = spu_asm::cuda::source_text(path, text, clang, include_dirs)?;
    // A run needs buffers behind a PTX kernel's pointers.
    let options = spu_asm::Options {
        launch: true,
        include_dirs: include_dirs.to_vec(),
        clang: clang.map(Path::to_path_buf),
        ..spu_asm::Options::default()
    };
    match spu_asm::assemble_module_with(&p, &text, &options) {
        Ok((module, warnings)) => {
            // Included files are quoted in run-time errors too.
            let mut sources: HashMap<String, String> = warnings
                .files
                .iter()
                .map(|f| (f.name.clone(), f.text.clone()))
                .collect();
            // An included `.cu` file is read; the PTX clang wrote for it is not a file.
            // So are the headers clang read for it.
            let included = warnings
                .files
                .iter()
                .filter(|f| f.name != p)
                .map(|f| PathBuf::from(spu_asm::cuda::cuda_of(&f.name).unwrap_or(&f.name)))
                .chain(headers.iter().chain(&warnings.headers).cloned())
                .collect();
            let rendered = warnings.render(&p, &text);
            sources.insert(p, text);
            // The CUDA files nvcc's `.file` names (`-lineinfo`), as for a binary.
            for f in &module.lines.files {
                if !sources.contains_key(f)
                    && let Some(t) = source_beside(path, f)
                {
                    sources.insert(f.clone(), t);
                }
            }
            Ok(Kernel {
                module,
                warnings: rendered,
                sources,
                included,
            })
        }
        Err(diags) => Err(KernelError::Assembly {
            errors: diags.error_count(),
            rendered: diags.render(&p, &text),
            path: spu_io::quote::path(path),
        }),
    }
}
