//! CUDA C in: a `.cu` file (named on the command line or `#include`d by a launch
//! file) is compiled to PTX by clang's NVPTX back end, which needs no CUDA
//! installation, and the PTX goes through the assembler as a `.ptx` file would.
//! clang runs without a shell, in a private temporary folder that holds the SPU's
//! CUDA header (`spu_cuda.h`, built into the tools, included before the user's
//! code) and the PTX, and is removed afterwards; nothing is written beside the
//! user's files. clang's own messages go straight to standard error and name the
//! user's file and line.
//!
//! Before compiling, a preprocessing pass lists the files the `.cu` file includes:
//! each must sit in its folder or a folder given with `-I DIR` (as a `.spu` file's
//! `#include`s must), or be one of clang's own system headers, so clang never reads
//! or quotes a file the user did not mean; the list is returned as inputs the tools
//! never overwrite; the compilation reads private copies of those files
//! ([`mirror`]). clang is stopped past [`DEFAULT_TIMEOUT`] and past
//! [`MEMORY_LIMIT`] of resident memory (macros can make it grow without end), as
//! soon as it waits on a named pipe (an `#include` of one in any spelling), and
//! when a signal ends the tool (the folder is then removed too): [`process`].

mod includes;
mod mirror;
mod process;

use crate::diag::Diagnostics;
use includes::{Deps, check_named_includes, confine, diagnostic_files, parse_deps, system_dirs};
use mirror::Mirror;
use process::{Registered, memory_limit, run, timeout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The CUDA device API for the SPU: `__global__`, `__syncthreads`, the atomics,
/// the maths functions and the SPU's own extensions (see `asm/cuda/spu_cuda.h`).
pub const HEADER: &str = include_str!("../../cuda/spu_cuda.h");

/// The header's name, for `#include "spu_cuda.h"` (it is also included by itself).
pub const HEADER_NAME: &str = "spu_cuda.h";

/// The environment variable that names clang when `--clang` does not.
pub const CLANG_ENV: &str = "SPU_CLANG";

/// The environment variable that sets clang's time limit in seconds.
pub const TIMEOUT_ENV: &str = "SPU_CLANG_TIMEOUT";

/// clang's time limit when [`TIMEOUT_ENV`] does not set one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Most resident memory clang may use before it is stopped (checked where the
/// system shows it, `/proc` on Linux), unless [`MEMORY_ENV`] sets another.
pub const MEMORY_LIMIT: u64 = 2 << 30;

/// The environment variable that sets clang's memory limit in MiB.
pub const MEMORY_ENV: &str = "SPU_CLANG_MEMORY_MIB";

/// clang's CUDA device compilation without NVIDIA's toolkit, the same for the
/// preprocessor pass and the compilation; a crash leaves no reproducer (the
/// preprocessed source) in the system's temporary folder.
const DEVICE_ONLY: [&str; 7] = [
    "-x",
    "cuda",
    "--cuda-gpu-arch=sm_35",
    "--cuda-device-only",
    "-nocudainc",
    "-nocudalib",
    "-fno-crash-diagnostics",
];

/// The options of the compilation that change what the preprocessor sees
/// (`-O2` defines `__OPTIMIZE__`): the include listing passes them too, so it
/// lists the files the compilation reads.
const MACRO_FLAGS: [&str; 1] = ["-O2"];

/// Names clang goes by, tried in order on `PATH`.
const CLANG_NAMES: &[&str] = &[
    "clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14",
];

/// How to install clang, for the message when none is found.
const INSTALL: &str = "install it (`apt-get install clang` on Debian and Ubuntu, \
    `dnf install clang` on Fedora, `pacman -S clang` on Arch, `brew install llvm` on macOS)";

/// Whether `path` names CUDA C source (`.cu`).
pub fn is_cuda(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cu"))
}

/// The name diagnostics give the PTX clang wrote for `cu` (never a file on disk).
pub fn ptx_name(cu: &str) -> String {
    format!("{cu}.ptx")
}

/// The `.cu` file whose PTX a source-map name from [`ptx_name`] stands for.
pub fn cuda_of(name: &str) -> Option<&str> {
    name.strip_suffix(".ptx").filter(|s| is_cuda(Path::new(s)))
}

/// Why a `.cu` file could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    #[error(
        "`{file}` is CUDA C, which clang compiles to PTX, and {looked}; {INSTALL}, or name \
         one with `--clang PATH` (or the {CLANG_ENV} environment variable)"
    )]
    NoClang { file: String, looked: String },
    #[error("cannot run clang `{clang}`: {error}; check the path, or {INSTALL}")]
    Spawn {
        clang: String,
        error: std::io::Error,
    },
    #[error("clang could not compile `{file}` ({status}); its messages above say where and why")]
    Failed { file: String, status: String },
    #[error(
        "clang did not finish compiling `{file}` within {secs} s and was stopped; raise the \
         limit with {TIMEOUT_ENV}=SECONDS if the file is that large"
    )]
    Timeout { file: String, secs: u64 },
    #[error(
        "clang used more than {mib} MiB of memory compiling `{file}` and was stopped; look for \
         macros that expand without end, or raise the limit with {MEMORY_ENV}=MIB"
    )]
    Memory { file: String, mib: u64 },
    #[error(
        "`{file}` includes `{header}`, which resolves to `{real}`, outside {roots}; files a CUDA \
         C file includes must sit in its folder or in a folder given with `-I DIR`: add `-I \
         {folder}`, or copy the file beside the kernel"
    )]
    Outside {
        file: String,
        header: String,
        real: String,
        roots: String,
        folder: String,
    },
    #[error(
        "`{file}` includes `{header}`, which is no file that can be checked: it does not exist, \
         or its name holds a tab, a line break or another character clang's list of included \
         files cannot show; create the file, or rename it"
    )]
    Unlisted { file: String, header: String },
    #[error(
        "the environment variable {var} is `{value}`, but it takes a whole number of {unit}, 1 \
         or more (e.g. {var}={default}, the default); set it so, or unset it"
    )]
    Setting {
        var: &'static str,
        value: String,
        unit: &'static str,
        default: u64,
    },
    #[error("interrupted while compiling `{file}`")]
    Interrupted { file: String },
    #[error("cannot compile `{file}`: {why}")]
    Io { file: String, why: String },
}

/// What clang made of a `.cu` file: the PTX, and the files it included (inputs
/// that no output may overwrite).
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    pub ptx: String,
    pub headers: Vec<PathBuf>,
}

/// Finds clang: `explicit` (`--clang`), else [`CLANG_ENV`], else on `PATH`.
fn find_clang(explicit: Option<&Path>, file: &str) -> Result<PathBuf, CudaError> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(CLANG_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in CLANG_NAMES {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(CudaError::NoClang {
        file: file.to_string(),
        looked: format!("no `clang` is on PATH and {CLANG_ENV} is not set"),
    })
}

/// Compiles the CUDA C file `cu` to PTX text with clang (`clang` names it, else
/// [`find_clang`]'s search). The files it includes must sit in its folder or one of
/// `include_dirs` (or be clang's system headers); clang's messages go to standard
/// error as it writes them.
pub fn compile(
    cu: &Path,
    clang: Option<&Path>,
    include_dirs: &[PathBuf],
) -> Result<Compiled, CudaError> {
    let file = spu_io::quote::path(cu);
    let io = |why: String| CudaError::Io {
        file: file.clone(),
        why,
    };
    // clang hands the file's name to its compiler proper, which reads a name
    // starting with `@` as a file of options, whatever folder it sits in.
    if cu
        .file_name()
        .is_some_and(|n| n.as_encoded_bytes().starts_with(b"@"))
    {
        return Err(io(
            "clang would read a file name starting with `@` as a file of options to run it with; rename the file"
                .to_string(),
        ));
    }
    // clang prints and lists names as they are: a line break in one would read
    // as a line of its own (a message, or a folder of its search list).
    if cu
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(|b| b.is_ascii_control())
    {
        return Err(io(
            "its path holds a line break, a tab or another control character, which clang's messages and lists of files cannot show unambiguously; rename the file or its folder"
                .to_string(),
        ));
    }
    // Checked before clang runs, so a mistyped limit is never silently ignored.
    let limits = (timeout()?, memory_limit()?);
    let clang = find_clang(clang, &file)?;
    // Private (mode 0700: it holds the PTX of the user's file), removed when
    // dropped, also on an error.
    let mut builder = tempfile::Builder::new();
    builder.prefix("spu-cuda-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder
        .tempdir()
        .map_err(|e| io(format!("cannot create a temporary folder: {e}")))?;
    // Removed also when a signal ends the tool while clang runs (not by SIGKILL).
    let _registered = Registered::folder(dir.path());
    // clang's `-fdebug-prefix-map=FOLDER=NAME` ends the folder at its first `=`.
    if dir.path().as_os_str().as_encoded_bytes().contains(&b'=') {
        return Err(io(format!(
            "the temporary folder `{}` has a `=` in its path, which clang's options cannot name; set TMPDIR to a folder without one",
            spu_io::quote::path(dir.path())
        )));
    }
    let header = dir.path().join(HEADER_NAME);
    std::fs::write(&header, HEADER)
        .and_then(|()| {
            // CUDA programs include it; its device API is the header's.
            std::fs::write(
                dir.path().join("cuda_runtime.h"),
                "#pragma once\n#include \"spu_cuda.h\"\n",
            )
        })
        .map_err(|e| {
            io(format!(
                "cannot write the header into the temporary folder: {e}"
            ))
        })?;
    // What clang writes goes into a folder of its own, which no `#include` or
    // `__has_include` searches: both passes must see the same files.
    let work = dir.path().join("out");
    let mut folder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder
        .create(&work)
        .map_err(|e| io(format!("cannot create a temporary folder: {e}")))?;
    let out = work.join("kernel.ptx");
    // A name starting with `-` would read as an option, one starting with `@`
    // as a file of options.
    let input = if cu.as_os_str().as_encoded_bytes().starts_with(b"-")
        || cu.as_os_str().as_encoded_bytes().starts_with(b"@")
    {
        Path::new(".").join(cu)
    } else {
        cu.to_path_buf()
    };
    // A pipe or device named by an `#include` would hold clang's preprocessor up.
    check_named_includes(cu, include_dirs)?;
    // First the files it includes, read by the preprocessor alone (nothing quoted).
    let deps = work.join("kernel.d");
    let mut list = Command::new(&clang);
    list.args(DEVICE_ONLY)
        .args(MACRO_FLAGS)
        .args(["-E", "-M", "-MG", "-MT", "x"])
        // Its messages name the file, line and column but quote no source
        // line: this pass reads the real files, which may change under it.
        .arg("-fno-caret-diagnostics")
        .arg("-I")
        .arg(dir.path())
        .arg("-include")
        .arg(&header)
        .arg("-o")
        .arg(&deps)
        .arg(&input);
    let system = system_folders(&clang, &work, &file, limits)?;
    let (status, said) = run(list, &clang, &file, limits, true)?;
    if !status.success() {
        // Never compiled unconfined: a message about a file outside the allowed
        // folders (which may quote it) refuses that file; the rest are relayed.
        confine(
            cu,
            include_dirs,
            dir.path(),
            &Deps::Named(diagnostic_files(&said)),
            &system,
        )?;
        return Err(failed(file, status, &said));
    }
    // The files a list clang wrote names, each confined.
    let listed = |list: &Path| -> Result<Vec<PathBuf>, CudaError> {
        let text = read_listing(list).map_err(io)?;
        confine(
            cu,
            include_dirs,
            dir.path(),
            &Deps::Listed(parse_deps(&text)),
            &system,
        )
    };
    let headers = listed(&deps)?;
    // The compilation reads a private copy of the files just checked, each
    // checked again as it is copied.
    let mirror = Mirror::make(dir.path(), cu, &headers, include_dirs)?;
    // It lists what it read too, checked again: an `#include` of an absolute
    // path reads the real file, not a copy.
    let compiled_deps = work.join("compiled.d");
    let mut command = Command::new(&clang);
    command
        .current_dir(&mirror.cwd)
        .args(DEVICE_ONLY)
        .args(MACRO_FLAGS)
        .args([
            "-S",
            // `.loc` lines: errors and statistics then name the `.cu` line, as the
            // user named the file, and the header as it sits in the sources.
            "-gline-tables-only",
            "-fdebug-compilation-dir=.",
        ])
        .arg(prefix_map(dir.path()))
        .args(copy_names(&mirror.root))
        .arg("-I")
        .arg(dir.path())
        .arg("-include")
        .arg(&header)
        .args(["-MD", "-MT", "x", "-MF"])
        .arg(&compiled_deps)
        .arg("-o")
        .arg(&out)
        .arg(mirror.path(&input));
    // Captured and relayed escaped: a file name (or other text) in a diagnostic
    // could otherwise drive the terminal.
    let (status, compile_said) = run(command, &clang, &file, limits, true)?;
    // Absolute names of copies as the user's files are named.
    let compile_said = match mirror.root.to_str() {
        Some(root) => compile_said.replace(root, ""),
        None => compile_said,
    };
    // Checked before any message is relayed (clang writes no list after a
    // fatal error, which ends it at the file it names).
    if status.success() || compiled_deps.exists() {
        listed(&compiled_deps)?;
    }
    // Without a list (an error in a directive ends clang before it writes one),
    // the files the messages name are checked, as after a failed listing.
    confine(
        cu,
        include_dirs,
        dir.path(),
        &Deps::Named(diagnostic_files(&compile_said)),
        &system,
    )?;
    let said = compile_said;
    if !status.success() {
        return Err(failed(file, status, &said));
    }
    if !said.is_empty() {
        eprint!("{}", spu_io::quote::escape_lines(&said));
    }
    let bytes = spu_io::read_regular(&out, spu_io::MAX_INPUT_BYTES)
        .ok_or_else(|| io("clang wrote no PTX".to_string()))?
        .map_err(|e| io(format!("cannot read clang's PTX: {e}")))?;
    let ptx =
        String::from_utf8(bytes).map_err(|_| io("clang's PTX is not UTF-8 text".to_string()))?;
    Ok(Compiled { ptx, headers })
}

/// clang's system folders (where `#include <...>` looks after `-I`), from the
/// search list `-v` prints for an empty file of the private folder `work`: a
/// list no name of the user's can forge (the user's kernel, folders and
/// working folder are never printed beside it).
fn system_folders(
    clang: &Path,
    work: &Path,
    file: &str,
    limits: (Duration, u64),
) -> Result<Vec<PathBuf>, CudaError> {
    let empty = work.join("empty.cu");
    std::fs::write(&empty, "").map_err(|e| CudaError::Io {
        file: file.to_string(),
        why: format!("cannot write into the temporary folder: {e}"),
    })?;
    let mut probe = Command::new(clang);
    probe
        .current_dir(work)
        .args(DEVICE_ONLY)
        .args(MACRO_FLAGS)
        .args(["-E", "-v", "-o"])
        .arg(work.join("empty.i"))
        .arg(&empty);
    let (status, said) = run(probe, clang, file, limits, true)?;
    if !status.success() {
        return Err(failed(file.to_string(), status, &said));
    }
    Ok(system_dirs(&said))
}

/// The dependency list clang wrote to `path`; an unreadable or over-large one is
/// an error (never an empty list, which would check nothing).
fn read_listing(path: &Path) -> Result<String, String> {
    match spu_io::read_regular(path, spu_io::MAX_INPUT_BYTES) {
        Some(Ok(b)) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Some(Err(e)) => Err(format!(
            "cannot read clang's list of the files it includes ({e}); too many or too long include names cannot be checked"
        )),
        None => Err("clang wrote no list of the files it includes".to_string()),
    }
}

/// clang's messages relayed (escaped), and why it failed: interrupted by the
/// tool's own signal, or clang's exit status.
fn failed(file: String, status: std::process::ExitStatus, said: &str) -> CudaError {
    if !said.is_empty() {
        eprint!("{}", spu_io::quote::escape_lines(said));
    }
    // A signal to the tool stops clang too: that is the tool's interruption,
    // not a failure of clang's.
    if spu_io::interrupt::requested() {
        return CudaError::Interrupted { file };
    }
    let status = match status.code() {
        Some(c) => format!("exit status {c}"),
        None => "stopped by a signal".to_string(),
    };
    CudaError::Failed { file, status }
}

/// clang's option that names the temporary folder `asm/cuda` in the line table
/// (where the header sits in the sources), so runs are the same every time.
fn prefix_map(dir: &Path) -> std::ffi::OsString {
    let mut o = std::ffi::OsString::from("-fdebug-prefix-map=");
    o.push(dir);
    o.push("=asm/cuda");
    o
}

/// clang's options that name a copy of the user's file below `root` ([`Mirror`])
/// as the file itself, in the line table and in `__FILE__`.
fn copy_names(root: &Path) -> [std::ffi::OsString; 2] {
    ["-fdebug-prefix-map=", "-fmacro-prefix-map="].map(|o| {
        let mut o = std::ffi::OsString::from(o);
        o.push(root);
        o.push("=");
        o
    })
}

/// Adds to every diagnostic in PTX that clang wrote the `.cu` line it came from,
/// found from the nearest `.loc` before it (clang writes them with
/// `-gline-tables-only`).
/// `path` and `src` are the main file's (the one a diagnostic without a file is in).
pub fn point_at_cuda(diags: &mut Diagnostics, path: &str, src: &str) {
    let files = &diags.files;
    for d in &mut diags.items {
        let (name, text) = match d.file.and_then(|f| files.get(f as usize)) {
            Some(f) => (f.name.as_str(), f.text.as_str()),
            None if files.is_empty() || d.file == Some(0) => (path, src),
            None => continue,
        };
        let Some(cu) = cuda_of(name) else {
            continue;
        };
        let at = d.span.start.min(text.len());
        let line = text[..at].matches('\n').count() + 1;
        let from = match cuda_line(text, at, cu) {
            Some((l, c)) => format!("from `{cu}:{l}:{c}`; "),
            None => String::new(),
        };
        let note = format!(
            "{from}this is line {line} of the PTX clang wrote for `{cu}` (docs/from-cuda.md \
             shows the clang command that prints it)"
        );
        d.help = Some(match &d.help {
            Some(h) => format!("{h}; {note}").into_boxed_str(),
            None => note.into_boxed_str(),
        });
    }
}

/// The line and column of `cu` that the nearest `.loc` before `at` names.
fn cuda_line(ptx: &str, at: usize, cu: &str) -> Option<(u32, u32)> {
    let base = Path::new(cu).file_name()?;
    // clang's `.file N "path"` lines: the indices that name `cu`.
    let indices: Vec<&str> = ptx
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == ".file").then_some(())?;
            let n = w.next()?;
            let path = w.next()?.trim_matches('"');
            (Path::new(path).file_name()? == base).then_some(n)
        })
        .collect();
    ptx[..at].lines().rev().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()? == ".loc").then_some(())?;
        let n = w.next()?;
        if !indices.contains(&n) {
            return None;
        }
        let line = w.next()?.parse().ok()?;
        let col = w.next().and_then(|c| c.trim_end_matches(';').parse().ok());
        Some((line, col.unwrap_or(0)))
    })
}

/// The text to assemble for the file the user named, the name diagnostics give it,
/// and the files clang read for it: for a `.cu` file the PTX clang writes
/// ([`ptx_name`]) and its headers, for any other file its own `text`.
pub fn source_text(
    path: &Path,
    text: String,
    clang: Option<&Path>,
    include_dirs: &[PathBuf],
) -> Result<(String, String, Vec<PathBuf>), CudaError> {
    let name = path.to_string_lossy().into_owned();
    if is_cuda(path) {
        let c = compile(path, clang, include_dirs)?;
        Ok((ptx_name(&name), c.ptx, c.headers))
    } else {
        Ok((name, text, Vec::new()))
    }
}
