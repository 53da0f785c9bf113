//! The memory an assembly needs, checked before it starts: the preprocessed text,
//! the statements, the code and its register allocation grow with the source, and
//! an allocation that fails deep inside would end the process with an abort.

use crate::diag::Diagnostic;

/// Address space an assembly takes per byte of source, with a margin (measured:
/// about 35 for a file of plain instructions).
const BYTES_PER_SOURCE_BYTE: usize = 40;

/// Sources smaller than this are not checked: they fit whatever the tool can run in.
const UNCHECKED: usize = 1 << 20;

/// An error when assembling `src` cannot get the memory it needs (a limit such as
/// `ulimit -v`, or too little free memory).
pub(super) fn check(src: &str) -> Option<Diagnostic> {
    if src.len() < UNCHECKED {
        return None;
    }
    let needed = src.len().saturating_mul(BYTES_PER_SOURCE_BYTE);
    if spu_io::process::can_reserve(needed) {
        return None;
    }
    let mib = |b: u64| b.div_ceil(1 << 20);
    let available = match spu_io::process::memory_limit() {
        Some(limit) => format!(
            "more than the {} MiB this process may use (its address space is limited, e.g. by `ulimit -v`)",
            mib(limit)
        ),
        None => "more than is free".to_string(),
    };
    Some(
        Diagnostic::error(
            format!(
                "out of memory while assembling: the source ({} MiB) needs about {} MiB, {available}",
                mib(src.len() as u64),
                mib(needed as u64)
            ),
            0..0,
        )
        .help("raise the memory limit, or split the file"),
    )
}
