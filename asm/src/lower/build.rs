//! From lowered code to a module: branch targets, register allocation (or the
//! declared layout), reconvergence points, the checks of what Interface Units may
//! reach and of the code's end, and the final words. The code stays encoded
//! throughout; instructions are decoded where they are looked at.

use super::{Assembler, empty_module};
use crate::cfg::{self, Succ, decode};
use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Span;
use crate::regalloc::Failure;
use spu_isa::format::{Module, RegDecl, RegTy};
use spu_isa::table::Flow;
use spu_isa::{Guard, MAX_PREDS, MAX_REGS, Ty};

impl Assembler<'_> {
    /// `earlier_errors`: errors were reported before the text was assembled.
    pub(super) fn build(
        &mut self,
        diags: &mut Diagnostics,
        earlier_errors: bool,
    ) -> Option<Module> {
        self.size_dynamic_shared(diags);
        // A module-scope array the kernel never names (another kernel's, in a
        // file of several) takes no room: one element keeps it a valid array.
        for i in std::mem::take(&mut self.module_shared) {
            if !self.names_shared(i)
                && let Some(s) = self.module.shared.get_mut(i)
            {
                s.dims = vec![spu_isa::format::Expr::constant(1)];
            }
        }
        self.check_launch_bounds(diags);
        self.check_launch_iu(diags);
        match &self.entry {
            None if self.no_entry_chosen => return None,
            // After other errors, a missing kernel is most likely one of their
            // consequences (a `.entry` swallowed by a broken statement or include).
            None if earlier_errors || diags.has_errors() => return None,
            None => {
                diags.push(
                    Diagnostic::error("no `.entry` kernel in this file", 0..0)
                        .help("write the kernel as `.entry name { ... }`"),
                );
                return None;
            }
            Some(e) if !e.closed => diags.push(
                Diagnostic::error(
                    format!("unterminated block: `.entry {}` is never closed", e.name),
                    e.open.clone(),
                )
                .label("this block is never closed")
                .help("add `}` at the end of the kernel"),
            ),
            _ => {}
        }
        if self.code.is_empty() && !diags.has_errors() {
            diags.push(
                Diagnostic::error(
                    "the kernel has no instructions",
                    self.entry.as_ref().map_or(0..0, |e| e.open.clone()),
                )
                .help("end it with `exit;`"),
            );
            return None;
        }
        if diags.has_errors() || self.code.is_empty() {
            return None;
        }
        // Branch targets, then registers.
        let labels = &self.labels;
        let mut words = self.code.words(&|id| labels[id as usize].pc.unwrap_or(0));
        let (succ, code) = self.code.analyse(&words, self.colour);
        let phys: Vec<u8> = match code {
            Some(code) => {
                let result =
                    crate::regalloc::allocate(&self.vregs.classes, &code, MAX_REGS, MAX_PREDS);
                drop(code);
                match result {
                    Ok(a) => {
                        self.module.regs = canonical_regs(&a);
                        a.phys
                    }
                    Err(Failure::Pressure(p)) => {
                        diags.push(pressure_diagnostic(&p, self.code.span(p.at)));
                        return None;
                    }
                    Err(Failure::TooLarge { at, what }) => {
                        diags.push(too_large_diagnostic(what, self.code.span(at)));
                        return None;
                    }
                }
            }
            None => self
                .vregs
                .declared_at
                .iter()
                .map(|a| a.unwrap_or(0))
                .collect(),
        };
        let ipdom = cfg::immediate_post_dominators(&succ);
        if let Err((pc, e)) = self.code.place(&mut words, &|r| phys[r as usize], &ipdom) {
            diags.push(Diagnostic::error(e.to_string(), self.code.span(pc)));
            return None;
        }
        let allocated = self.colour.then_some(phys.as_slice());
        self.module.debug = super::debuginfo::build(&self.code, &words, &self.vregs, allocated);
        drop(phys);
        self.check_units(&words, &succ, diags);
        self.check_end(&words, &succ, diags);
        self.check_syncs(&words, &succ, &ipdom, diags);
        self.module.iu_entry = self.iu_entry.as_ref().map(|(pc, _)| *pc);
        self.module.code = words;
        (!diags.has_errors()).then(|| std::mem::replace(&mut self.module, empty_module(Vec::new())))
    }

    /// The successors as SMs (`is_iu` false) or IUs see them: when both start at
    /// the kernel's start (CUDA C's `spu_is_iu()`), a branch on `%is_iu` goes one
    /// way for each (see [`cfg::for_unit`]); otherwise every branch may go both ways.
    fn unit_succ<'a>(
        &self,
        code: &[u64],
        succ: &'a [Succ],
        is_iu: bool,
    ) -> std::borrow::Cow<'a, [Succ]> {
        match &self.iu_entry {
            Some((0, _)) => cfg::for_unit(code, succ, is_iu).into(),
            _ => succ.into(),
        }
    }

    /// Synchronisation warnings: CB sides never synced, barriers under divergence.
    fn check_syncs(
        &self,
        code: &[u64],
        succ: &[Succ],
        ipdom: &[Option<usize>],
        diags: &mut Diagnostics,
    ) {
        let mut entries = vec![0];
        entries.extend(self.iu_entry.as_ref().map(|(pc, _)| *pc as usize));
        for f in crate::lint::check(code, succ, ipdom, &entries) {
            let mut d = Diagnostic::warning(f.message, self.code.span(f.pc)).label(f.label);
            if let Some((pc, label)) = f.related {
                d = d.with_secondary(self.code.span(pc), label);
            }
            diags.push(d.help(f.help));
        }
    }

    /// `.launch iu(T)` known (with the defaults) to be zero or negative, or beyond
    /// what any Interface Unit runs, is refused when there is IU code to run, as
    /// the loader would refuse it.
    fn check_launch_iu(&self, diags: &mut Diagnostics) {
        use spu_machine::occupancy::MAX_IU_THREADS;
        let (Some(_), Some((v, at))) = (&self.iu_entry, &self.launch_iu_known) else {
            return;
        };
        let d = Diagnostic::error(format!("the IU thread count is {v}"), at.clone());
        if *v < 1 {
            diags.push(
                d.label("must be positive")
                    .help("give the threads each Interface Unit runs, e.g. `iu(32)`"),
            );
        } else if *v > MAX_IU_THREADS {
            diags.push(d.label(format!("at most {MAX_IU_THREADS}")).help(format!(
                "no machine runs more IU threads (`iu.max_threads` is at most {MAX_IU_THREADS}); launch fewer"
            )));
        }
    }

    /// Warns when execution can fall through the last instruction: the emulator would
    /// stop such a thread with a fault.
    pub(super) fn check_end(&self, code: &[u64], succ: &[Succ], diags: &mut Diagnostics) {
        let Some(last) = code.len().checked_sub(1) else {
            return;
        };
        let instr = &decode(code[last]);
        let ends = instr.guard == Guard::Always
            && matches!(instr.opcode.spec().flow, Flow::Exit | Flow::Branch);
        if ends {
            return;
        }
        let mut reached = cfg::reachable_with_calls(code, &self.unit_succ(code, succ, false), 0);
        if let Some((iu, _)) = &self.iu_entry {
            let from_iu =
                cfg::reachable_with_calls(code, &self.unit_succ(code, succ, true), *iu as usize);
            for (r, i) in reached.iter_mut().zip(from_iu) {
                *r |= i;
            }
        }
        if reached[last] {
            diags.push(
                Diagnostic::warning(
                    "execution can run past the last instruction",
                    self.code.span(last),
                )
                .label("nothing follows this instruction")
                .help("end every path with `exit;`"),
            );
        }
    }

    /// FP/SFU/shared-memory instructions IUs may reach (thesis Table 5.2): an error
    /// where only IUs reach them, a warning where both SMs and IUs may.
    pub(super) fn check_units(&self, code: &[u64], succ: &[Succ], diags: &mut Diagnostics) {
        let Some((iu_pc, iu_span)) = &self.iu_entry else {
            return;
        };
        let iu_pc = *iu_pc as usize;
        if iu_pc >= code.len() {
            diags.push(
                Diagnostic::error("the `.iu` section has no instructions", iu_span.clone())
                    .help("add IU code or remove `.iu`"),
            );
            return;
        }
        let from_sm = cfg::reachable_with_calls(code, &self.unit_succ(code, succ, false), 0);
        let from_iu = cfg::reachable_with_calls(code, &self.unit_succ(code, succ, true), iu_pc);
        if iu_pc > 0 && succ[iu_pc - 1].contains(iu_pc) && from_sm[iu_pc - 1] {
            diags.push(
                Diagnostic::warning(
                    "SM code runs on into the `.iu` section",
                    self.code.span(iu_pc - 1),
                )
                .label("execution continues into IU code")
                .with_secondary(iu_span.clone(), "IU section starts here")
                .help("end the SM code with `exit;` or an unconditional `bra`"),
            );
        }
        for (pc, word) in code.iter().enumerate() {
            if !from_iu[pc] {
                continue;
            }
            let instr = &decode(*word);
            if instr.exec_class().units.iu() {
                continue;
            }
            let what = spu_isa::disasm::full_mnemonic(instr);
            let span = self.code.span(pc);
            let d = if from_sm[pc] {
                Diagnostic::warning(
                    format!("Interface Units may reach `{what}`, which they cannot execute"),
                    span,
                )
                .label("reachable from both the SM and the IU entry")
            } else {
                Diagnostic::error(
                    format!("`{what}` is in code only Interface Units reach"),
                    span,
                )
                .label("IUs have no FPU, SFU or shared memory (thesis Table 5.2)")
            };
            diags.push(d.help(
                "move this work to SM code; IUs only move data between global memory and CBs",
            ));
        }
    }
}

/// The declarations that describe an allocated register file: 4-register groups
/// (as pairs), pairs, single registers and predicates, in that order.
pub(super) fn canonical_regs(a: &crate::regalloc::Assignment) -> Vec<RegDecl> {
    let decl = |name: &str, ty: RegTy, n: u32| {
        (n > 0).then(|| RegDecl {
            name: name.to_string(),
            ty,
            count: Some(n),
        })
    };
    [
        decl("rq", RegTy::Val(Ty::B64), 2 * a.quads),
        decl("rd", RegTy::Val(Ty::B64), a.pairs),
        decl("r", RegTy::Val(Ty::B32), a.singles),
        decl("p", RegTy::Pred, a.preds),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// More values live at once than registers exist: where, and how many.
pub(super) fn pressure_diagnostic(p: &crate::regalloc::Pressure, span: Span) -> Diagnostic {
    if p.predicates {
        return Diagnostic::error(
            format!(
                "{} predicates are live here, but a thread has {}",
                p.live, p.available
            ),
            span,
        )
        .label(format!("the allocation needs {} predicates", p.needed))
        .help(
            "combine conditions with `and.pred`/`or.pred`, or recompute them where they are used",
        );
    }
    let [quads, pairs, singles] = p.by_class;
    Diagnostic::error(
        format!(
            "{} registers are live here, but a thread has {}",
            p.live, p.available
        ),
        span,
    )
    .label(format!(
        "{singles} 32-bit values, {pairs} 64-bit values and {quads} vector groups live across this instruction; the allocation needs {} registers",
        p.needed
    ))
    .help("keep fewer values live across this point: recompute cheap values where they are used, or split the kernel")
}

/// Register allocation would take more work or memory than it is allowed.
pub(super) fn too_large_diagnostic(what: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        "this kernel is too large to allocate registers for",
        span,
    )
    .label(format!(
        "too many {what} (at most {} values live into blocks and {} pairs of values live at the same time)",
        crate::regalloc::MAX_LIVE_ENTRIES,
        crate::regalloc::MAX_PAIRS
    ))
    .help("keep fewer values live across branches, or split the kernel")
}
