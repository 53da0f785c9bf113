//! CUDA C in: a `.cu` file (named on the command line or `#include`d by a launch
//! file) is compiled to PTX by clang's NVPTX back end, which needs no CUDA
//! installation, and the PTX goes through the assembler as a `.ptx` file would.
//! clang runs without a shell, in a private temporary folder that holds the SPU's
//! CUDA header (`spu_cuda.h`, built into the tools, included before the user's
//! code) and the PTX, and is removed afterwards; nothing is written beside the
//! user's files. clang's own messages go straight to standard error and name the
//! user's file and line.

use crate::diag::Diagnostics;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The CUDA device API for the SPU: `__global__`, `__syncthreads`, the atomics,
/// the maths functions and the SPU's own extensions (see `asm/cuda/spu_cuda.h`).
pub const HEADER: &str = include_str!("../cuda/spu_cuda.h");

/// The header's name, for `#include "spu_cuda.h"` (it is also included by itself).
pub const HEADER_NAME: &str = "spu_cuda.h";

/// The environment variable that names clang when `--clang` does not.
pub const CLANG_ENV: &str = "SPU_CLANG";

/// The environment variable that sets clang's time limit in seconds.
pub const TIMEOUT_ENV: &str = "SPU_CLANG_TIMEOUT";

/// clang's time limit when [`TIMEOUT_ENV`] does not set one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

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
    #[error("cannot compile `{file}`: {why}")]
    Io { file: String, why: String },
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

/// The time limit: [`TIMEOUT_ENV`] seconds if set to a positive number.
fn timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

/// Compiles the CUDA C file `cu` to PTX text with clang (`clang` names it, else
/// [`find_clang`]'s search). clang's messages go to standard error as it writes them.
pub fn compile(cu: &Path, clang: Option<&Path>) -> Result<String, CudaError> {
    let file = cu.display().to_string();
    let io = |why: String| CudaError::Io {
        file: file.clone(),
        why,
    };
    let clang = find_clang(clang, &file)?;
    // Private (mode 0700), removed when dropped, also on an error.
    let dir = tempfile::Builder::new()
        .prefix("spu-cuda-")
        .tempdir()
        .map_err(|e| io(format!("cannot create a temporary folder: {e}")))?;
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
    let out = dir.path().join("kernel.ptx");
    // A name starting with `-` would read as an option.
    let input = if file.starts_with('-') {
        Path::new(".").join(cu)
    } else {
        cu.to_path_buf()
    };
    let mut child = Command::new(&clang)
        .args([
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_35",
            "--cuda-device-only",
            "-nocudainc",
            "-nocudalib",
            "-O2",
            "-S",
            // `.loc` lines: errors and statistics then name the `.cu` line, as the
            // user named the file, and the header as it sits in the sources.
            "-gline-tables-only",
            "-fdebug-compilation-dir=.",
        ])
        .arg(prefix_map(dir.path()))
        .arg("-I")
        .arg(dir.path())
        .arg("-include")
        .arg(&header)
        .arg("-o")
        .arg(&out)
        .arg(&input)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => CudaError::NoClang {
                file: file.clone(),
                looked: format!("clang `{}` does not exist", clang.display()),
            },
            _ => CudaError::Spawn {
                clang: clang.display().to_string(),
                error,
            },
        })?;
    let limit = timeout();
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CudaError::Timeout {
                    file,
                    secs: limit.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(io(format!("cannot wait for clang: {e}"))),
        }
    };
    if !status.success() {
        let status = match status.code() {
            Some(c) => format!("exit status {c}"),
            None => "stopped by a signal".to_string(),
        };
        return Err(CudaError::Failed { file, status });
    }
    let bytes = spu_io::read_regular(&out, spu_io::MAX_INPUT_BYTES)
        .ok_or_else(|| io("clang wrote no PTX".to_string()))?
        .map_err(|e| io(format!("cannot read clang's PTX: {e}")))?;
    String::from_utf8(bytes).map_err(|_| io("clang's PTX is not UTF-8 text".to_string()))
}

/// clang's option that names the temporary folder `asm/cuda` in the line table
/// (where the header sits in the sources), so runs are the same every time.
fn prefix_map(dir: &Path) -> std::ffi::OsString {
    let mut o = std::ffi::OsString::from("-fdebug-prefix-map=");
    o.push(dir);
    o.push("=asm/cuda");
    o
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

/// The text to assemble for the file the user named, and the name diagnostics give
/// it: for a `.cu` file the PTX clang writes ([`ptx_name`]), for any other file its
/// own `text`.
pub fn source_text(
    path: &Path,
    text: String,
    clang: Option<&Path>,
) -> Result<(String, String), CudaError> {
    let name = path.to_string_lossy().into_owned();
    if is_cuda(path) {
        Ok((ptx_name(&name), compile(path, clang)?))
    } else {
        Ok((name, text))
    }
}
