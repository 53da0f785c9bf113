//! The memory an assembly needs, checked before it starts and again as the
//! preprocessed text grows (an `#include` of a big file, macros that expand to
//! much text): the text, the statements, the code and its register allocation grow
//! with it, and an allocation that fails deep inside would end the process with an
//! abort.

use crate::diag::Diagnostic;

/// Address space an assembly takes per byte of source, with a margin (measured:
/// about 35 for a file of plain instructions).
const BYTES_PER_SOURCE_BYTE: usize = 40;

/// Sources smaller than this are not checked: they fit whatever the tool can run in.
const UNCHECKED: usize = 1 << 20;

/// An error when assembling `src` cannot get the memory it needs (a limit such as
/// `ulimit -v`, or too little free memory).
pub(crate) fn check(src: &str) -> Option<Diagnostic> {
    check_len(src.len(), src.len(), "the source")
}

/// Checks the preprocessed text as it grows past twice the main file (which
/// [`check`] covered), each time it doubles: `checked` is the size at which it was
/// last checked (0 at first). The main file's share is not asked for again.
pub(crate) fn check_growth(len: usize, main: usize, checked: &mut usize) -> Option<Diagnostic> {
    if len < UNCHECKED || len < (*checked).max(main).saturating_mul(2) {
        return None;
    }
    *checked = len;
    check_len(
        len,
        len - main,
        "the preprocessed source (after `#include`s and macros)",
    )
}

/// `len`: the text's size; `more`: the part of it not accounted for yet.
fn check_len(len: usize, more: usize, what: &str) -> Option<Diagnostic> {
    if len < UNCHECKED {
        return None;
    }
    let needed = more.saturating_mul(BYTES_PER_SOURCE_BYTE);
    if spu_io::process::can_reserve(needed) {
        return None;
    }
    let mib = |b: u64| b.div_ceil(1 << 20);
    let available = match spu_io::process::memory_limit() {
        Some(limit) => format!(
            "which this process cannot get within its limit of {} MiB of address space (set by e.g. `ulimit -v`; part of it is already in use)",
            mib(limit)
        ),
        None => "which is more than is free".to_string(),
    };
    Some(
        Diagnostic::error(
            format!(
                "out of memory while assembling: {what} ({} MiB) needs about {} MiB more, {available}",
                mib(len as u64),
                mib(needed as u64)
            ),
            0..0,
        )
        .help("raise the memory limit, or split the file"),
    )
}
