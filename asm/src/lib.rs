//! The SPU assembler: `.spu` source to a [`spu_isa::format::Module`] (and `.bin`
//! bytes), with every error of a file reported as a span-labelled diagnostic; and
//! the disassembler that prints a module back as source that re-assembles to the
//! same bytes.

pub mod ast;
mod cfg;
pub mod cuda;
pub mod diag;
pub mod disasm;
mod eval;
pub mod lexer;
mod lint;
mod lower;
mod memory;
mod operands;
pub mod parse;
pub mod preprocess;
pub mod regalloc;
pub mod source_map;
mod vcode;

lalrpop_util::lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_parens,
        missing_debug_implementations
    )]
    grammar
);

pub use diag::{Diagnostic, Diagnostics, Severity};
pub use lower::{
    MAX_ENTRIES, MAX_LABELS, MAX_REGISTERS, Options, assemble_module, assemble_module_with,
    assemble_with, assemble_with_options,
};

/// Assembles source text into `.bin` bytes. `path` names the file in diagnostics
/// and in the line table. Warnings are returned alongside a successful result.
pub fn assemble(path: &str, src: &str) -> Result<(Vec<u8>, Diagnostics), Diagnostics> {
    assemble_with_options_bytes(path, src, &Options::default())
}

/// [`assemble`] with options (which entry of the file to assemble).
pub fn assemble_with_options_bytes(
    path: &str,
    src: &str,
    options: &Options,
) -> Result<(Vec<u8>, Diagnostics), Diagnostics> {
    let (module, warnings) = assemble_module_with(path, src, options)?;
    match spu_isa::format::write_module(&module) {
        Ok(bytes) => Ok((bytes, warnings)),
        Err(e) => {
            let mut d = warnings;
            d.push(Diagnostic::error(
                format!("cannot write the binary: {e}"),
                0..0,
            ));
            Err(d)
        }
    }
}
