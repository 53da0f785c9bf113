//! The `.bin` object format: an ELF64 little-endian file with a private machine
//! number holding code, kernel metadata, buffers, DMA descriptors, a line table,
//! label symbols and optional debug information (source register names). See
//! `isa-spec/FORMAT.md`.

mod bytes;
mod elf;
mod expr;
mod model;
mod output;
mod param;
mod sections;
mod validate;

pub use bytes::{MAX_EXPR_NODES, MAX_STRING};
pub use elf::{FORMAT_VERSION, OLDEST_FORMAT_VERSION, SPU_MACHINE, read_module, write_module};
pub use expr::{BinOp, EvalError, Expr, MalformedExpr, Node};
pub use model::{
    BufferDecl, CmpOp, DMA_FIELDS, DMA_OPTIONAL, DebugInfo, DmaDesc, GUARD_SLOT, Init, InstrDebug,
    Label, Launch, LineTable, MAX_SEED, Module, ParamDecl, Precondition, RegDecl, RegName, RegTy,
    SharedDecl, SourceLoc,
};
pub use output::{InputError, MAX_INPUT_BYTES, read_input, write_atomically};
pub use param::{
    decimal_f32, param_int, param_int_range, param_layout, param_size, parse_param_value,
};
pub use validate::MAX_SHARED_ALIGN;

/// Most instructions a binary within [`MAX_INPUT_BYTES`] can hold: each takes 8 bytes
/// of code and 10 of line table.
pub const MAX_INSTRUCTIONS: usize = (MAX_INPUT_BYTES / 18) as usize;

/// Whether a file is read as a binary rather than as source: its bytes start as an
/// ELF file's do, or are a cut-off start of one, or it is empty and named `*.bin`
/// (then refused as a binary, not assembled as source).
pub fn is_binary(path: &std::path::Path, bytes: &[u8]) -> bool {
    const MAGIC: &[u8] = b"\x7fELF";
    bytes.starts_with(MAGIC)
        || (!bytes.is_empty() && MAGIC.starts_with(bytes))
        || (bytes.is_empty()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("bin")))
}

#[cfg(test)]
mod tests {
    use super::is_binary;
    use std::path::Path;

    #[test]
    fn a_cut_off_binary_is_a_binary() {
        let bin = Path::new("k.bin");
        assert!(is_binary(bin, b"\x7fELF\x01\x01"));
        assert!(is_binary(bin, b"\x7f"));
        assert!(is_binary(bin, b"\x7fEL"));
        assert!(is_binary(Path::new("k"), b"\x7fE"));
        assert!(is_binary(bin, b""));
        assert!(!is_binary(Path::new("k.spu"), b""));
        assert!(!is_binary(bin, b".entry k {"));
    }
}

/// Why a file is not a valid SPU binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("the file is empty (0 bytes)")]
    Empty,
    #[error("not an ELF file (bad magic number)")]
    NotElf,
    #[error("not an SPU binary: {0}")]
    Foreign(String),
    #[error("ELF structure is damaged: {0}")]
    Elf(String),
    #[error(
        "SPU binary format version {found} is not supported (this tool reads versions {OLDEST_FORMAT_VERSION} to {supported})"
    )]
    Version { found: u32, supported: u32 },
    #[error(
        "the ELF header says format version {header} but section `.spu.kernel` says {kernel} (the file was altered or written by a broken tool)"
    )]
    VersionMismatch { header: u32, kernel: u32 },
    #[error("section `{0}` is missing")]
    MissingSection(&'static str),
    #[error("section `{section}` is truncated at byte {offset}")]
    Truncated {
        section: &'static str,
        offset: usize,
    },
    #[error("section `{section}` is corrupt at byte {offset}: {what}")]
    Corrupt {
        section: &'static str,
        offset: usize,
        what: String,
    },
    #[error("instruction {pc} is invalid: {what}")]
    BadInstruction { pc: usize, what: String },
    #[error("{0}")]
    Invalid(String),
}
