//! nvcc's line information in a `.ptx` file (`-lineinfo`, `-G`): `.file N "k.cu"`
//! names a CUDA source file, `.loc N LINE COL` says which of its lines the following
//! instructions come from. The line table then points at the CUDA source, so the
//! emulator's messages and per-line statistics name `k.cu:LINE`. (In a `.spu` file
//! `.file`/`.loc` are the disassembler's own line-table directives; see `mod.rs`.)

use super::Assembler;
use crate::ast::Spanned;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::parse_int;
use spu_isa::format::SourceLoc;

impl Assembler<'_> {
    /// `.file N "path"` of a PTX file: index N of nvcc's numbering, mapped to an
    /// entry of the line table (one per distinct path).
    pub(super) fn cuda_file(&mut self, index: &Spanned<&str>, path: &str, diags: &mut Diagnostics) {
        let Some(n) = parse_int(index.node).and_then(|v| u32::try_from(v).ok()) else {
            diags.push(
                Diagnostic::error(
                    format!("file index `{}` is out of range", index.node),
                    index.span.clone(),
                )
                .label("expected a number from 0 to 4294967295"),
            );
            return;
        };
        let files = &mut self.module.lines.files;
        let at = match files.iter().position(|f| f == path) {
            Some(i) => i,
            None if files.len() < usize::from(u16::MAX) => {
                files.push(path.to_string());
                files.len() - 1
            }
            None => {
                diags.push(
                    Diagnostic::error("too many source files", index.span.clone())
                        .label(format!("a line table names at most {} files", u16::MAX)),
                );
                return;
            }
        };
        let at = at as u16;
        if let Some(prev) = self.cuda_files.insert(n, at)
            && prev != at
        {
            diags.push(
                Diagnostic::error(
                    format!("file index {n} is declared twice"),
                    index.span.clone(),
                )
                .label(format!("this names `{path}`"))
                .help(format!(
                    "an earlier `.file {n}` named `{}`; give each file its own index",
                    self.module.lines.files[usize::from(prev)]
                )),
            );
        }
    }

    /// `.loc N LINE COL` of a PTX file: the CUDA source position of the instructions
    /// up to the next `.loc` or the end of the entry.
    pub(super) fn cuda_loc(
        &mut self,
        file: &Spanned<&str>,
        line: &Spanned<&str>,
        col: &Spanned<&str>,
        diags: &mut Diagnostics,
    ) {
        let num = |t: &Spanned<&str>| parse_int(t.node).and_then(|v| u32::try_from(v).ok());
        let (Some(f), Some(l), Some(c)) = (num(file), num(line), num(col)) else {
            diags.push(
                Diagnostic::error("malformed `.loc`", file.span.start..col.span.end)
                    .label("expected `.loc FILE LINE COLUMN` with numbers"),
            );
            return;
        };
        match self.cuda_files.get(&f) {
            Some(&index) => {
                self.cuda_loc = Some(SourceLoc {
                    file: index,
                    line: l,
                    col: c,
                });
            }
            None => diags.push(
                Diagnostic::error(
                    format!("`.loc` names file {f}, which no `.file` declares"),
                    file.span.clone(),
                )
                .label("unknown file index")
                .help(format!(
                    "declare it before the entry: `.file {f} \"kernel.cu\"`"
                )),
            ),
        }
    }
}
