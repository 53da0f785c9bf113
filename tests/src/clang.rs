//! Whether clang is there for the tests of CUDA C (`.cu` kernels, and launch files
//! that include one): without it they are skipped with a printed reason, except
//! when `SPU_REQUIRE_CLANG=1` (CI sets it), where a missing clang fails them.

use std::path::{Path, PathBuf};

/// True when the tests must not skip for want of clang.
pub fn required() -> bool {
    std::env::var_os("SPU_REQUIRE_CLANG").is_some_and(|v| v == "1")
}

/// Whether the tools would find a clang ($SPU_CLANG, or one on PATH).
pub fn available() -> bool {
    if std::env::var_os(spu_asm::cuda::CLANG_ENV).is_some_and(|p| !p.is_empty()) {
        return true;
    }
    std::process::Command::new("clang")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether `path` is CUDA C or a launch file that includes some.
pub fn needs_clang(path: &Path) -> bool {
    spu_asm::cuda::is_cuda(path)
        || std::fs::read_to_string(path).is_ok_and(|t| {
            t.lines()
                .any(|l| l.trim_start().starts_with("#include") && l.contains(".cu\""))
        })
}

/// True (after saying why) when a test of `what` must be skipped: it needs clang
/// and there is none. Panics instead when clang is required.
pub fn skip(what: &str) -> bool {
    if available() {
        return false;
    }
    assert!(
        !required(),
        "{what} needs clang and SPU_REQUIRE_CLANG=1, but no clang runs: install it \
         (`apt-get install clang`) or set SPU_CLANG"
    );
    eprintln!(
        "skipped {what}: no clang (`apt-get install clang` runs it; SPU_REQUIRE_CLANG=1 makes this an error)"
    );
    true
}

/// Writes `NAME.cu`, a kernel `NAME(params)` whose thread 0 runs `body`, and
/// `NAME.spu`, its launch (`decls`, one block of 32 threads, `.bind NAME(args)`),
/// into `dir`; returns the launch file.
pub fn one_thread_kernel(
    dir: &Path,
    name: &str,
    params: &str,
    body: &str,
    decls: &str,
    args: &str,
) -> PathBuf {
    std::fs::write(
        dir.join(format!("{name}.cu")),
        format!(
            "extern \"C\" __global__ void {name}({params}) {{\n    if (threadIdx.x != 0) return;\n{body}}}\n"
        ),
    )
    .unwrap();
    let launch = dir.join(format!("{name}.spu"));
    std::fs::write(
        &launch,
        format!(
            "#include \"{name}.cu\"\n{decls}.launch grid(1) block(32);\n.bind {name}({args});\n"
        ),
    )
    .unwrap();
    launch
}
