//! What the assembled kernel's instructions use. Which shared arrays it names
//! (a module-scope array or an `.extern .shared` one it does not name takes no
//! room). Which parameters
//! of a PTX kernel are pointers, for a kernel run without a launch file: a parameter whose value (`ld.param.u64 %rd1, [P]`) is converted by
//! `cvta.to.global` or used as a global address. Such a kernel cannot run from its
//! `.ptx` file alone (no buffer stands behind the pointer), so a run refuses it with
//! the way to write the launch file, rather than asking for a value with `-D` and
//! then faulting at address 0.

use super::Assembler;
use crate::ast::{Expr, Operand as AstOperand, Spanned, Step, walk};
use crate::diag::{Diagnostic, Diagnostics};

impl Assembler<'_> {
    /// Follows one instruction of the assembled kernel.
    pub(super) fn track_uses(
        &mut self,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<AstOperand<'_>>],
    ) {
        self.track_pointers(mnemonic, operands);
    }

    /// Notes the shared arrays an instruction names: a kernel holds the
    /// module-scope arrays it names, and sizes the `.extern .shared` one it names.
    pub(super) fn note_shared(&mut self, operands: &[Spanned<AstOperand<'_>>]) {
        if self.scope.shared.is_empty() {
            return;
        }
        for o in operands {
            let expr = match &o.node {
                AstOperand::Mem {
                    offset: Some(e), ..
                }
                | AstOperand::Expr(e) => e,
                _ => continue,
            };
            let _ = walk(expr, |step| {
                if let Step::Enter(e) = step
                    && let Expr::Name(n) = e.node
                    && self.scope.shared.contains_key(n)
                    && !self.shared_used.contains(n)
                {
                    self.shared_used.insert(n.to_string());
                }
                Ok::<bool, ()>(true)
            });
        }
    }

    /// Whether the kernel names shared array `index`.
    pub(super) fn names_shared(&self, index: usize) -> bool {
        self.module
            .shared
            .get(index)
            .is_some_and(|s| self.shared_used.contains(&s.name))
    }

    fn track_pointers(&mut self, mnemonic: &Spanned<&str>, operands: &[Spanned<AstOperand<'_>>]) {
        if self.entry_params.is_empty() || self.first_bind.is_some() {
            return;
        }
        let m = mnemonic.node;
        match operands {
            [
                Spanned {
                    node: AstOperand::Register(d),
                    ..
                },
                Spanned {
                    node:
                        AstOperand::Mem {
                            base: None,
                            offset: Some(off),
                            ..
                        },
                    ..
                },
            ] if m.starts_with("ld.param.") => {
                if let crate::ast::Expr::Name(p) = off.node
                    && self.entry_params.iter().any(|(n, _)| n == p)
                {
                    self.param_regs.insert(d.to_string(), p.to_string());
                } else {
                    self.param_regs.remove(*d);
                }
                return;
            }
            _ => {}
        }
        if !m.split('.').any(|p| p == "global") {
            return;
        }
        for o in operands {
            let name = match &o.node {
                AstOperand::Register(r) if m.starts_with("cvta") => *r,
                AstOperand::Mem { base: Some(b), .. } => b.node,
                _ => continue,
            };
            if let Some(p) = self.param_regs.get(name)
                && !self.pointer_params.contains(p)
            {
                self.pointer_params.push(p.clone());
            }
        }
    }

    /// The error of a run of a kernel with pointer parameters and no launch file.
    pub(super) fn check_pointer_params(&self, diags: &mut Diagnostics) {
        let Some(first) = self.pointer_params.first() else {
            return;
        };
        if !self.options.launch || self.first_bind.is_some() || self.bind_broken {
            return;
        }
        let span = self
            .entry_params
            .iter()
            .find(|(n, _)| n == first)
            .map_or(0..0, |(_, s)| s.clone());
        let names: Vec<String> = self
            .pointer_params
            .iter()
            .map(|p| format!("`{p}`"))
            .collect();
        let kernel = self.entry.as_ref().map_or("", |e| e.name.as_str());
        let args: Vec<&str> = self
            .entry_params
            .iter()
            .map(|(n, _)| {
                if self.pointer_params.contains(n) {
                    "BUF"
                } else {
                    "VALUE"
                }
            })
            .collect();
        diags.push(
            Diagnostic::error(
                format!(
                    "a kernel with pointer parameters needs a launch file: {} {}",
                    names.join(", "),
                    if names.len() == 1 {
                        "is a pointer"
                    } else {
                        "are pointers"
                    }
                ),
                span,
            )
            .label("no buffer stands behind this pointer")
            .help(format!(
                "write a `.spu` file that `#include`s this one, declares the buffers (`.global .f32 BUF[N] = zeros;`), the launch (`.launch grid(..) block(..);`) and binds the arguments in signature order (`.bind {kernel}({});`), and run that file; see \"Launching a PTX kernel\" in asm/LANGUAGE.md",
                args.join(", ")
            )),
        );
    }
}

impl Assembler<'_> {
    /// The warning of a run of a `.ptx` or `.cu` kernel with no launch file: it
    /// runs the default launch, one block of 32 threads, which the user may not
    /// expect.
    pub(super) fn check_default_launch(&self, diags: &mut Diagnostics) {
        if !self.options.launch
            || self.launch_seen.is_some()
            || self.first_bind.is_some()
            || !self.pointer_params.is_empty()
        {
            return;
        }
        let Some(e) = &self.entry else {
            return;
        };
        if !self.in_ptx_file(e.open.start) {
            return;
        }
        let kernel = &e.name;
        diags.push(
            Diagnostic::warning(
                format!(
                    "`{kernel}` runs as one block of 32 threads: a `.ptx` or `.cu` file run on its own has no launch"
                ),
                e.open.clone(),
            )
            .label("launched as `grid(1) block(32)`")
            .help(format!(
                "to choose the grid and block, write a `.spu` file that `#include`s this one and says `.launch grid(X, Y, Z) block(X, Y, Z);` (and `.bind {kernel}(...);` for its parameters), and run that file; see \"Launching a PTX kernel\" in asm/LANGUAGE.md"
            )),
        );
    }
}
