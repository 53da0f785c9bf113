//! PTX local memory: `.local` arrays (nvcc's and clang's `__local_depot0`, per-thread
//! arrays) placed in the running function's frame, after its parameters and return
//! value and before its callees' frames. A local array's name stands for its byte
//! offset in the frame, which is what `ld.local`/`st.local` take, so `mov.u64 %SPL,
//! __local_depot0;` gives that offset and `[%SPL+8]` or `[__local_depot0+8]` reach
//! it. A generic address of local memory (`cvta.local`) is the same offset: the
//! assembler follows the registers that hold one (copies, sums and differences of a
//! `cvta.local` result or a local array's name) and lowers a generic `ld`/`st`
//! through such a register to `ld.local`/`st.local`. A register counts only when
//! every write to it in the function makes a local address ([`local_registers`],
//! before the function is lowered): one that is local on one path and shared or
//! global on another (clang's join of two pointers) is not followed, and a generic
//! access through it is refused rather than sent to local memory.

use super::Assembler;
use crate::ast::{Expr, Operand, SExpr, Spanned, Step, TyTok, walk};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{const_int, parse_int};
use crate::lexer::Span;

/// Largest frame a caller may have: the machine's `call` gives the callee's frame
/// start in 16-byte units in 8 bits.
pub(super) const MAX_FRAME: u32 = 255 * 16;

/// Largest alignment a local array may ask for: frames start at multiples of 16.
const MAX_LOCAL_ALIGN: u32 = 16;

/// Spaces a PTX `ld`/`st` may name; without one the access is generic.
const SPACES: [&str; 9] = [
    "global", "shared", "local", "param", "const", "cb", "north", "south", "east",
];

/// The deep copy of an expression with each name `map` knows replaced (walked with
/// an explicit stack, as expressions may be nested as deeply as the source is long).
pub(super) fn copy_expr<'a>(e: &SExpr<'a>, map: &'a [(String, String)]) -> SExpr<'a> {
    let mut done: Vec<SExpr<'a>> = Vec::new();
    let _ = walk(e, |step| {
        if let Step::Exit(x) = step {
            let span = x.span.clone();
            let node = match &x.node {
                Expr::Int(t) => Expr::Int(t),
                Expr::Float(t) => Expr::Float(t),
                Expr::Name(n) => match map.iter().find(|(k, _)| k == n) {
                    Some((_, v)) => Expr::Int(v.as_str()),
                    None => Expr::Name(n),
                },
                Expr::Neg(_) => Expr::Neg(Box::new(done.pop().unwrap_or(int0(&span)))),
                Expr::Binary(op, _, _) => {
                    let b = done.pop().unwrap_or(int0(&span));
                    let a = done.pop().unwrap_or(int0(&span));
                    Expr::Binary(*op, Box::new(a), Box::new(b))
                }
                Expr::Call(f, args) => {
                    let at = done.len().saturating_sub(args.len());
                    Expr::Call(f.clone(), done.split_off(at))
                }
            };
            done.push(Spanned { node, span });
        }
        Ok::<_, ()>(true)
    });
    done.pop().unwrap_or(int0(&e.span))
}

fn int0<'a>(span: &Span) -> SExpr<'a> {
    Spanned {
        node: Expr::Int("0"),
        span: span.clone(),
    }
}

/// A copy of an operand list with the names of `map` replaced.
pub(super) fn copy_operands<'a>(
    ops: &[Spanned<Operand<'a>>],
    map: &'a [(String, String)],
) -> Vec<Spanned<Operand<'a>>> {
    ops.iter()
        .map(|o| Spanned {
            node: match &o.node {
                Operand::Register(r) => Operand::Register(r),
                Operand::NotPred(r) => Operand::NotPred(r),
                Operand::RegPred(r, p) => Operand::RegPred(r, p.clone()),
                Operand::Vector(rs) => Operand::Vector(rs.clone()),
                Operand::Mem {
                    base,
                    negative,
                    offset,
                } => Operand::Mem {
                    base: base.clone(),
                    negative: *negative,
                    offset: offset.as_ref().map(|e| copy_expr(e, map)),
                },
                Operand::Expr(e) => Operand::Expr(copy_expr(e, map)),
            },
            span: o.span.clone(),
        })
        .collect()
}

/// Whether an expression names something `pred` accepts.
fn names_any(e: &SExpr<'_>, pred: impl Fn(&str) -> bool) -> bool {
    walk(e, |step| match step {
        Step::Enter(Spanned {
            node: Expr::Name(n),
            ..
        }) if pred(n) => Err(()),
        _ => Ok(true),
    })
    .is_err()
}

/// How a write makes its register's value: a local address for certain, one if
/// any of the registers it copies or sums holds one, or something else.
enum Def<'s> {
    Local,
    From(Vec<&'s str>),
    Other,
}

/// The registers of the function or kernel whose header starts at byte `start`
/// of `text` that hold a local address wherever they are read: every write to
/// them is a `cvta.local`, a copy, sum or difference of a local array's or frame
/// slot's name (`slot` tells the function's own), or of such a register. The
/// largest such set (a pointer stepped in a loop, `add %rd5, %rd5, 4`, stays
/// local), found by dropping registers with a write that is not local until none
/// is left.
pub(super) fn local_registers(
    text: &str,
    start: usize,
    slot: impl Fn(&str) -> bool,
) -> std::collections::HashSet<String> {
    use crate::ast::Stmt;
    let mut statements = crate::parse::Statements::new(text, start, false, false);
    statements.next(); // the header
    let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut defs: Vec<(&str, Def<'_>)> = Vec::new();
    let mut depth = 0u32;
    for s in statements.by_ref() {
        match &s.node {
            Stmt::BlockOpen => depth += 1,
            Stmt::BlockClose if depth > 0 => depth -= 1,
            Stmt::BlockClose | Stmt::EntryOpen { .. } | Stmt::FuncOpen { .. } => break,
            Stmt::Local { name, .. } | Stmt::Param { name, .. } | Stmt::ParamArray { name, .. } => {
                names.insert(name.node);
            }
            Stmt::Instr {
                mnemonic, operands, ..
            } => {
                let parts: Vec<&str> = mnemonic.node.split('.').collect();
                if parts.first() == Some(&"st") {
                    continue;
                }
                let written: Vec<&str> = match operands.first().map(|o| &o.node) {
                    Some(Operand::Register(r)) => vec![*r],
                    Some(Operand::Vector(rs)) => rs.iter().map(|r| r.node).collect(),
                    Some(Operand::RegPred(r, p)) => vec![*r, p.node],
                    _ => continue,
                };
                let def = match (written.as_slice(), operands.first().map(|o| &o.node)) {
                    ([_], Some(Operand::Register(_))) => {
                        let cvta_local = parts.first() == Some(&"cvta")
                            && parts.get(1..3).is_some_and(|p| p.contains(&"local"));
                        // clang writes `or.b64 %rd2, %rd1, 4;` for an offset below the
                        // array's alignment (frames keep it), where it means `add`.
                        let or_offset = parts.first() == Some(&"or")
                            && matches!(operands.get(2).map(|o| &o.node), Some(Operand::Expr(_)));
                        let copies = or_offset
                            || matches!(parts.first(), Some(&"mov" | &"add" | &"sub" | &"cvt"));
                        if cvta_local {
                            Def::Local
                        } else if !copies {
                            Def::Other
                        } else {
                            let mut from = Vec::new();
                            let mut local = false;
                            for o in operands.iter().skip(1) {
                                match &o.node {
                                    Operand::Register(r) => from.push(*r),
                                    Operand::Expr(e) => {
                                        local |= names_any(e, |n| names.contains(n) || slot(n))
                                    }
                                    _ => {}
                                }
                            }
                            if local { Def::Local } else { Def::From(from) }
                        }
                    }
                    _ => Def::Other,
                };
                let mut written = written.into_iter();
                if let Some(first) = written.next() {
                    defs.push((first, def));
                }
                defs.extend(written.map(|r| (r, Def::Other)));
            }
            _ => {}
        }
    }
    // Registers as numbers; each write's count of sources still held. Dropping a
    // register visits the writes that copy it once each, so the whole takes
    // time in proportion to the code (a chain of copies in reverse text order
    // took a pass per register).
    let mut ids: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (r, _) in &defs {
        let n = ids.len();
        ids.entry(r).or_insert(n);
    }
    let mut held = vec![true; ids.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    let mut alive = vec![0usize; defs.len()];
    let mut drop: Vec<usize> = Vec::new();
    for (d, (r, def)) in defs.iter().enumerate() {
        match def {
            Def::Local => {}
            Def::Other => drop.push(ids[r]),
            Def::From(from) => {
                for f in from {
                    if let Some(&id) = ids.get(f) {
                        users[id].push(d);
                        alive[d] += 1;
                    }
                }
                if alive[d] == 0 {
                    drop.push(ids[r]);
                }
            }
        }
    }
    while let Some(id) = drop.pop() {
        if !std::mem::replace(&mut held[id], false) {
            continue;
        }
        for &d in &users[id] {
            alive[d] -= 1;
            if alive[d] == 0 {
                drop.push(ids[defs[d].0]);
            }
        }
    }
    ids.into_iter()
        .filter(|&(_, id)| held[id])
        .map(|(r, _)| r.to_string())
        .collect()
}

impl Assembler<'_> {
    /// `.local .align A .TYPE name[N]...;`: a per-thread array in the running
    /// function's frame (its size a constant).
    pub(super) fn local_decl(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dims: &[SExpr<'_>],
        align: Option<&Spanned<&str>>,
        diags: &mut Diagnostics,
    ) {
        let fail = |d: Diagnostic, diags: &mut Diagnostics| diags.push(d);
        let TyTok::Val(t) = ty.node else {
            return fail(
                Diagnostic::error("local arrays cannot hold predicates", ty.span.clone()),
                diags,
            );
        };
        if self.frame.local(name.node).is_some()
            || self.globals.contains_key(name.node)
            || self.frame.has_slot(name.node)
        {
            return fail(
                Diagnostic::error(
                    format!("`{}` is declared twice", name.node),
                    name.span.clone(),
                )
                .help("give the local array a name of its own"),
                diags,
            );
        }
        if self.frame.called {
            return fail(
                Diagnostic::error(
                    "a local array is declared after a call",
                    name.span.clone(),
                )
                .label("its place in the frame is where the callee's frame started")
                .help("declare `.local` arrays at the start of the function, as nvcc and clang do"),
                diags,
            );
        }
        let elem = t.bits() / 8;
        let mut bytes: u64 = u64::from(elem);
        for d in dims {
            match const_int(d, &self.scope.params) {
                Ok(v) if v >= 1 => bytes = bytes.saturating_mul(v as u64),
                Ok(v) => {
                    return fail(
                        Diagnostic::error(format!("dimension is {v}"), d.span.clone())
                            .label("must be at least 1"),
                        diags,
                    );
                }
                Err(e) => {
                    return fail(
                        e.help("a local array's size is a constant: each thread's frame is laid out when assembling"),
                        diags,
                    );
                }
            }
        }
        let align = match align {
            None => elem.max(1),
            Some(a) => match parse_int(a.node).and_then(|v| u32::try_from(v).ok()) {
                Some(v) if v.is_power_of_two() && v <= MAX_LOCAL_ALIGN => v.max(elem),
                _ => {
                    return fail(
                        Diagnostic::error(
                            format!("alignment `{}` is not supported", a.node),
                            a.span.clone(),
                        )
                        .label(format!("expected a power of two up to {MAX_LOCAL_ALIGN}")),
                        diags,
                    );
                }
            },
        };
        let limit = u64::from(MAX_FRAME);
        let offset = self
            .frame
            .own()
            .next_multiple_of(align.min(MAX_LOCAL_ALIGN));
        let end = u64::from(offset) + bytes;
        if end > limit {
            return fail(
                Diagnostic::error(
                    format!("`{}` does not fit in a thread's frame", name.node),
                    name.span.clone(),
                )
                .label(format!(
                    "{bytes} bytes from byte {offset}; a kernel's or device function's frame holds at most {limit} bytes"
                ))
                .help(format!("each frame holds at most {limit} bytes (a call gives the next frame's start in 16-byte units, at most 255 of them), though a thread's frames together may use 64 KiB: split the array between functions, or make a large per-thread array a `.global` buffer indexed by thread")),
                diags,
            );
        }
        self.frame
            .add_local(name.node, offset, (end as u32).next_multiple_of(16));
    }

    /// Lowers an instruction that touches local memory by name or through a generic
    /// address; false when it is no such instruction (the caller lowers it).
    pub(super) fn local_instr(
        &mut self,
        guard: Option<&crate::ast::Guard<'_>>,
        mnemonic: &Spanned<&str>,
        operands: &[Spanned<Operand<'_>>],
        span: &Span,
        diags: &mut Diagnostics,
    ) -> bool {
        let parts: Vec<&str> = mnemonic.node.split('.').collect();
        // A `.param` of a function's frame is local memory too (clang takes the
        // address of a struct parameter: `mov.b64 %rd1, f_param_0;`).
        let is_local = |n: &str| self.frame.local(n).or(self.frame.slot(n)).is_some();
        let local_reg = |r: &str| self.frame.local_ptrs.contains(r);
        let names_local = operands.iter().any(|o| match &o.node {
            Operand::Expr(e) => names_any(e, is_local),
            Operand::Mem {
                offset: Some(e), ..
            } => names_any(e, is_local),
            _ => false,
        });
        // `cvta.local`/`cvta.to.local`: generic and local addresses are the same.
        let cvta_local =
            parts.first() == Some(&"cvta") && parts.get(1..3).is_some_and(|p| p.contains(&"local"));
        let generic = matches!(parts.first(), Some(&"ld" | &"st"))
            && !parts.iter().skip(1).any(|p| SPACES.contains(p));
        let mem_base = operands.iter().find_map(|o| match &o.node {
            Operand::Mem { base: Some(b), .. } => Some(b.node),
            _ => None,
        });
        let generic_local = generic && mem_base.is_some_and(local_reg);
        // `ld.param.f32 %f1, [%rd1+4];` through such an address.
        let param_local = matches!(parts.first(), Some(&"ld" | &"st"))
            && parts.get(1) == Some(&"param")
            && mem_base.is_some_and(local_reg);
        if !(cvta_local || names_local || generic_local || param_local) {
            return false;
        }
        let map: Vec<(String, String)> = self
            .frame
            .locals()
            .map(|(n, off)| (n.to_string(), off.to_string()))
            .collect();
        let mut map = map;
        for o in operands {
            if let Operand::Expr(e) = &o.node {
                let _ = walk(e, |step| {
                    if let Step::Enter(Spanned {
                        node: Expr::Name(n),
                        ..
                    }) = step
                        && let Some(off) = self.frame.slot(n)
                    {
                        map.push((n.to_string(), off.to_string()));
                    }
                    Ok::<_, ()>(true)
                });
            }
        }
        let ops = copy_operands(operands, &map);
        let text = if cvta_local {
            let ty = parts.last().copied().unwrap_or("u64");
            let bits = spu_isa::Ty::from_name(ty).map_or(64, |t| t.bits());
            format!("mov.b{bits}")
        } else if param_local {
            parts
                .iter()
                .map(|p| if *p == "param" { "local" } else { p })
                .collect::<Vec<_>>()
                .join(".")
        } else if generic_local {
            let at = if parts.get(1) == Some(&"volatile") {
                2
            } else {
                1
            };
            let mut p = parts.clone();
            p.insert(at, "local");
            p.join(".")
        } else {
            mnemonic.node.to_string()
        };
        let m = Spanned {
            node: text.as_str(),
            span: mnemonic.span.clone(),
        };
        self.emit(guard, &m, &ops, span, diags);
        true
    }
}
