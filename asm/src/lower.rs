//! The assembler proper: walks the parsed statements, checks declarations and
//! instructions, computes reconvergence points and IU reachability, and builds the
//! [`Module`]. Every problem becomes a diagnostic; assembly fails if any is an error.

use crate::ast::{Expr, SExpr, Spanned, Stmt, TyTok};
use crate::cfg;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::{
    MAX_PARAMS, ParamInfo, const_f64, eval_with_defaults, lower, param_default, parse_int,
};
use crate::lexer::Span;
use crate::lexer::bare_carriage_return;
use crate::operands::{Lowering, Scope};
use crate::parse::parse_file;
use crate::regalloc::Class;
use crate::suggest::closest;
use crate::vcode::{VInstr, VRegs};
use spu_isa::format::{
    BufferDecl, DMA_FIELDS, DMA_OPTIONAL, DmaDesc, Init, Label, Launch, LineTable, MAX_EXPR_NODES,
    MAX_STRING, Module, ParamDecl, RegDecl, RegTy, SharedDecl, SourceLoc,
};
use spu_isa::{
    Guard, Instr, MAX_PREDS, MAX_REGS, MAX_SYMBOLS, NO_RECONV, Opcode, Operand, Side, Special, Ty,
};
use std::collections::HashMap;

/// Assembles source text into a module; warnings come back with it. `#include`
/// paths are relative to `path`'s directory.
pub fn assemble_module(path: &str, src: &str) -> Result<(Module, Diagnostics), Diagnostics> {
    let mut read = |p: &std::path::Path| -> Result<String, String> {
        let bytes = spu_isa::format::read_input(p).map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|_| format!("`{}` is not UTF-8 text", p.display()))
    };
    assemble_with(path, src, &mut read)
}

/// [`assemble_module`] with a caller-provided reader for included files.
pub fn assemble_with(
    path: &str,
    src: &str,
    read: &mut dyn FnMut(&std::path::Path) -> Result<String, String>,
) -> Result<(Module, Diagnostics), Diagnostics> {
    let mut diags = Diagnostics::default();
    if src.trim().is_empty() {
        diags.push(
            Diagnostic::error("the file is empty", 0..0)
                .help("a kernel needs at least `.entry name { exit; }`"),
        );
        return Err(diags);
    }
    if let Some(at) = bare_carriage_return(src) {
        // Everything would be one line; no other message would make sense.
        diags.push(
            Diagnostic::error("a line ends with a bare carriage return (CR)", at..at + 1)
                .label("CR without LF")
                .help("save the file with LF (or CR LF) line ends, e.g. `tr '\\r' '\\n' < old.spu > new.spu`"),
        );
        return Err(diags);
    }
    if path.len() > MAX_STRING as usize {
        diags.push(Diagnostic::error(
            format!(
                "the file's path is {} bytes long; a binary stores at most {MAX_STRING}",
                path.len()
            ),
            0..0,
        ));
        return Err(diags);
    }
    let (text, map, pre_diags) = crate::preprocess::preprocess(path, src, read);
    let parsed = parse_file(&text, &mut diags);
    // First keep the declarations' own register layout; when it does not fit, or the
    // code needs temporaries, colour every register instead.
    let mut first = diags.clone();
    let mut asm = Assembler::new(map.clone(), false);
    asm.run(&parsed.stmts, &mut first);
    let (module, map) = if parsed.stopped_early {
        (None, map)
    } else if asm.needs_colouring() {
        let mut asm = Assembler::new(map, true);
        asm.run(&parsed.stmts, &mut diags);
        asm.finish(&mut diags)
    } else {
        diags = first;
        asm.finish(&mut diags)
    };
    diags.remap(&map);
    diags.items.extend(pre_diags.items);
    diags.sort();
    match module {
        Some(m) if !diags.has_errors() => Ok((m, diags)),
        _ => Err(diags),
    }
}

/// The declarations that describe an allocated register file: 4-register groups
/// (as pairs), pairs, single registers and predicates, in that order.
fn canonical_regs(a: &crate::regalloc::Assignment) -> Vec<RegDecl> {
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
fn pressure_diagnostic(p: &crate::regalloc::Pressure, span: Span) -> Diagnostic {
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

/// A module with nothing in it yet (the default launch is one warp per block).
fn empty_module(files: Vec<String>) -> Module {
    Module {
        name: String::new(),
        code: Vec::new(),
        iu_entry: None,
        regs: Vec::new(),
        params: Vec::new(),
        shared: Vec::new(),
        buffers: Vec::new(),
        launch: Launch {
            block: [
                spu_isa::format::Expr::constant(32),
                spu_isa::format::Expr::constant(1),
                spu_isa::format::Expr::constant(1),
            ],
            ..Launch::default()
        },
        dma: Vec::new(),
        lines: LineTable {
            files,
            locs: Vec::new(),
        },
        labels: Vec::new(),
    }
}

/// Most registers one `.reg` declaration may name.
const MAX_DECLARED: usize = 1 << 16;

fn ty_of(t: TyTok) -> Option<Ty> {
    match t {
        TyTok::Val(t) => Some(t),
        TyTok::Pred => None,
    }
}

struct Entry {
    name: String,
    open: Span,
    closed: bool,
}

struct Assembler {
    map: crate::preprocess::SourceMap,
    /// Registers are coloured by the allocator rather than placed by declaration.
    colour: bool,
    vregs: VRegs,
    /// The declarations fit the register file as laid out.
    decls_fit: bool,
    /// Label name -> index of the next machine instruction.
    label_at: HashMap<String, u32>,
    scope: Scope,
    /// Names shared by parameters, buffers and shared arrays -> where declared.
    globals: HashMap<String, Span>,
    label_spans: HashMap<String, Span>,
    reg_counts: (u32, u32),
    entry: Option<Entry>,
    iu_entry: Option<(u32, Span)>,
    module: Module,
    instrs: Vec<(VInstr, Span)>,
    launch_seen: Option<Span>,
    pending_loc: Option<SourceLoc>,
}

impl Assembler {
    fn new(map: crate::preprocess::SourceMap, colour: bool) -> Self {
        let files = map.files.iter().map(|f| f.name.clone()).collect();
        Assembler {
            map,
            colour,
            vregs: VRegs::default(),
            decls_fit: true,
            label_at: HashMap::new(),
            scope: Scope::default(),
            globals: HashMap::new(),
            label_spans: HashMap::new(),
            reg_counts: (0, 0),
            entry: None,
            iu_entry: None,
            module: empty_module(files),
            instrs: Vec::new(),
            launch_seen: None,
            pending_loc: None,
        }
    }

    /// Where the preprocessed offset came from: file, line and column.
    fn loc(&self, offset: usize) -> SourceLoc {
        let o = self.map.origin(&(offset..offset));
        let (line, col) = self.map.line_col(o.file, o.span.start);
        SourceLoc {
            file: u16::try_from(o.file).unwrap_or(u16::MAX),
            line,
            col,
        }
    }

    /// Whether the registers must be coloured: the declarations do not fit, or the
    /// code needs temporaries.
    fn needs_colouring(&self) -> bool {
        !self.decls_fit || self.vregs.has_temps(false) || self.vregs.has_temps(true)
    }

    fn in_entry(&self) -> bool {
        self.entry.as_ref().is_some_and(|e| !e.closed)
    }

    fn declare_global(&mut self, name: &Spanned<&str>, diags: &mut Diagnostics) -> bool {
        if let Some(prev) = self.globals.get(name.node) {
            diags.push(
                Diagnostic::error(
                    format!("`{}` is declared twice", name.node),
                    name.span.clone(),
                )
                .label("second declaration")
                .with_secondary(prev.clone(), "first declared here")
                .help("parameters, buffers and shared arrays share one namespace"),
            );
            return false;
        }
        self.globals
            .insert(name.node.to_string(), name.span.clone());
        true
    }

    /// Pass 1 collects declarations and labels so uses may precede them; pass 2 checks
    /// instructions and expressions.
    fn run(&mut self, stmts: &[Spanned<Stmt<'_>>], diags: &mut Diagnostics) {
        for s in stmts {
            match &s.node {
                Stmt::Param { ty, name, default } => self.param(ty, name, default.as_ref(), diags),
                // A PTX entry's parameters are kernel parameters.
                Stmt::EntryOpen { params, .. } => {
                    for p in params {
                        self.param(&p.ty, &p.name, None, diags);
                    }
                }
                Stmt::Label { name } => {
                    if let Some(prev) = self.label_spans.get(name.node) {
                        diags.push(
                            Diagnostic::error(
                                format!("label `{}` is defined twice", name.node),
                                name.span.clone(),
                            )
                            .label("second definition")
                            .with_secondary(prev.clone(), "first defined here"),
                        );
                    } else {
                        self.label_spans
                            .insert(name.node.to_string(), name.span.clone());
                        self.scope.labels.insert(name.node.to_string());
                    }
                }
                _ => {}
            }
        }
        for s in stmts {
            self.statement(s, diags);
        }
    }

    fn param(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        default: Option<&SExpr<'_>>,
        diags: &mut Diagnostics,
    ) {
        let Some(t) = ty_of(ty.node) else {
            diags.push(
                Diagnostic::error("parameters cannot be predicates", ty.span.clone())
                    .label("use .u32, .s32 or .f32"),
            );
            return;
        };
        if self.scope.params.len() >= MAX_PARAMS {
            diags.push(
                Diagnostic::error("too many parameters", name.span.clone())
                    .label(format!("a kernel has at most {MAX_PARAMS} parameters")),
            );
            return;
        }
        if !self.declare_global(name, diags) {
            return;
        }
        let default = match default.map(|e| param_default(e, t, &self.scope.params)) {
            Some(Ok(v)) => Some(v),
            Some(Err(d)) => {
                diags.push(d);
                None
            }
            None => None,
        };
        self.scope.params.push(ParamInfo {
            name: name.node.to_string(),
            ty: t,
            default,
        });
        self.module.params.push(ParamDecl {
            name: name.node.to_string(),
            ty: t,
            default,
        });
    }

    fn expr(&self, e: &SExpr<'_>, diags: &mut Diagnostics) -> Option<spu_isa::format::Expr> {
        let stored = lower(e, &self.scope.params).and_then(|x| {
            if x.node_count() > MAX_EXPR_NODES as usize {
                return Err(Diagnostic::error(
                    format!("this expression has {} terms and operators", x.node_count()),
                    e.span.clone(),
                )
                .label(format!("a binary stores at most {MAX_EXPR_NODES}"))
                .help("write constant parts as one number, e.g. `64` instead of `8 * 8`"));
            }
            Ok(x)
        });
        match stored.and_then(|x| eval_with_defaults(e, &self.scope.params).map(|_| x)) {
            Ok(x) => Some(x),
            Err(d) => {
                diags.push(d);
                None
            }
        }
    }

    fn dims(
        &self,
        dims: &[SExpr<'_>],
        diags: &mut Diagnostics,
    ) -> Option<Vec<spu_isa::format::Expr>> {
        if dims.len() > 4 {
            diags.push(Diagnostic::error(
                "at most 4 dimensions",
                dims[4].span.clone(),
            ));
            return None;
        }
        let mut out = Vec::new();
        for d in dims {
            let e = self.expr(d, diags)?;
            if let Ok(Some(v)) = eval_with_defaults(d, &self.scope.params)
                && v <= 0
            {
                diags.push(
                    Diagnostic::error(format!("dimension is {v}"), d.span.clone())
                        .label("must be at least 1"),
                );
                return None;
            }
            out.push(e);
        }
        Some(out)
    }

    fn statement(&mut self, s: &Spanned<Stmt<'_>>, diags: &mut Diagnostics) {
        let needs_entry = matches!(
            s.node,
            Stmt::Reg { .. }
                | Stmt::Shared { .. }
                | Stmt::Label { .. }
                | Stmt::Instr { .. }
                | Stmt::IuSection
        );
        if needs_entry && !self.in_entry() {
            diags.push(
                Diagnostic::error("this belongs inside an `.entry` block", s.span.clone())
                    .label("outside any kernel")
                    .help("put registers, shared arrays and code inside `.entry name { ... }`"),
            );
            return;
        }
        match &s.node {
            Stmt::Param { .. } | Stmt::Empty => {}
            Stmt::Label { name } => {
                let pc = self.instrs.len() as u32;
                if !self.label_at.contains_key(name.node) {
                    self.label_at.insert(name.node.to_string(), pc);
                    self.module.labels.push(Label {
                        name: name.node.to_string(),
                        pc,
                    });
                }
            }
            Stmt::File { index, path } => match parse_int(index.node) {
                Some(i) if i >= 0 && (i as usize) <= self.module.lines.files.len() && i < 65536 => {
                    let i = i as usize;
                    if i == self.module.lines.files.len() {
                        self.module.lines.files.push(path.to_string());
                    } else {
                        self.module.lines.files[i] = path.to_string();
                    }
                }
                _ => diags.push(
                    Diagnostic::error(
                        format!("file index `{}` is out of order", index.node),
                        index.span.clone(),
                    )
                    .label(format!("expected 0..={}", self.module.lines.files.len())),
                ),
            },
            Stmt::Loc { file, line, col } => {
                let num = |t: &Spanned<&str>| parse_int(t.node).and_then(|v| u32::try_from(v).ok());
                match (num(file), num(line), num(col)) {
                    (Some(f), Some(l), Some(c)) if (f as usize) < self.module.lines.files.len() => {
                        self.pending_loc = Some(SourceLoc {
                            file: f as u16,
                            line: l,
                            col: c,
                        });
                    }
                    _ => diags.push(Diagnostic::error("malformed `.loc`", s.span.clone()).label(
                        "expected `.loc FILE LINE COLUMN;` with a file declared by `.file`",
                    )),
                }
            }
            Stmt::Global {
                ty,
                name,
                dims,
                init,
            } => self.global(ty, name, dims, init.as_ref(), diags),
            Stmt::Shared { ty, name, dims } => {
                let Some(t) = ty_of(ty.node) else {
                    diags.push(Diagnostic::error(
                        "shared arrays cannot hold predicates",
                        ty.span.clone(),
                    ));
                    return;
                };
                if self.module.shared.len() >= usize::from(MAX_SYMBOLS) {
                    diags.push(
                        Diagnostic::error("too many shared arrays", name.span.clone())
                            .label(format!("a kernel has at most {MAX_SYMBOLS}")),
                    );
                    return;
                }
                if !self.declare_global(name, diags) {
                    return;
                }
                if let Some(dims) = self.dims(dims, diags) {
                    self.scope
                        .shared
                        .insert(name.node.to_string(), self.module.shared.len() as u16);
                    self.module.shared.push(SharedDecl {
                        name: name.node.to_string(),
                        ty: t,
                        dims,
                    });
                }
            }
            Stmt::Reg { ty, items } => self.regs(ty, items, diags),
            Stmt::Launch { parts } => self.launch(parts, &s.span, diags),
            Stmt::Dma {
                side,
                buffer,
                fields,
            } => self.dma(side, buffer, fields, diags),
            Stmt::Header { directive, value } => {
                if *directive == "address_size" && !matches!(value.node, "32" | "64") {
                    diags.push(
                        Diagnostic::error(
                            format!("`.address_size {}` is not supported", value.node),
                            value.span.clone(),
                        )
                        .label("expected 32 or 64"),
                    );
                }
            }
            Stmt::EntryOpen { name, .. } => match &self.entry {
                Some(e) => diags.push(
                    Diagnostic::error("only one `.entry` per file", name.span.clone())
                        .label("second kernel")
                        .with_secondary(e.open.clone(), "first kernel here")
                        .help("put each kernel in its own file"),
                ),
                None => {
                    self.module.name = name.node.to_string();
                    self.entry = Some(Entry {
                        name: name.node.to_string(),
                        open: s.span.clone(),
                        closed: false,
                    });
                }
            },
            Stmt::BlockClose => match &mut self.entry {
                Some(e) if !e.closed => e.closed = true,
                _ => diags.push(
                    Diagnostic::error("unmatched `}`", s.span.clone())
                        .label("no block is open here"),
                ),
            },
            Stmt::IuSection => match &self.iu_entry {
                Some((_, prev)) => diags.push(
                    Diagnostic::error("a kernel has one `.iu` section", s.span.clone())
                        .with_secondary(prev.clone(), "the IU section starts here"),
                ),
                None => self.iu_entry = Some((self.instrs.len() as u32, s.span.clone())),
            },
            Stmt::Instr {
                guard,
                mnemonic,
                operands,
            } => {
                let pos = guard
                    .as_ref()
                    .map_or(mnemonic.span.start, |g| g.pred.span.start.saturating_sub(1));
                let loc = self.pending_loc.take().unwrap_or_else(|| self.loc(pos));
                let mut lowering = Lowering {
                    scope: &self.scope,
                    vregs: &mut self.vregs,
                    colour: self.colour,
                };
                match lowering.instr(guard.as_ref(), mnemonic, operands, &s.span) {
                    Ok(list) => {
                        for v in list {
                            self.instrs.push((v, s.span.clone()));
                            self.module.lines.locs.push(loc);
                        }
                    }
                    Err(ds) => ds.into_iter().for_each(|d| diags.push(d)),
                }
            }
        }
    }

    fn global(
        &mut self,
        ty: &Spanned<TyTok>,
        name: &Spanned<&str>,
        dims: &[SExpr<'_>],
        init: Option<&SExpr<'_>>,
        diags: &mut Diagnostics,
    ) {
        let Some(t) = ty_of(ty.node) else {
            diags.push(Diagnostic::error(
                "buffers cannot hold predicates",
                ty.span.clone(),
            ));
            return;
        };
        if self.module.buffers.len() >= usize::from(MAX_SYMBOLS) {
            diags.push(
                Diagnostic::error("too many buffers", name.span.clone())
                    .label(format!("a kernel has at most {MAX_SYMBOLS}")),
            );
            return;
        }
        if !self.declare_global(name, diags) {
            return;
        }
        let Some(dims) = self.dims(dims, diags) else {
            return;
        };
        let init = match init {
            None => Init::Zeros,
            Some(e) => match initialiser(e).and_then(|i| check_init_values(e, i, t)) {
                Ok(i) => i,
                Err(d) => {
                    diags.push(d);
                    return;
                }
            },
        };
        self.scope
            .buffers
            .insert(name.node.to_string(), self.module.buffers.len() as u16);
        self.module.buffers.push(BufferDecl {
            name: name.node.to_string(),
            ty: t,
            dims,
            init,
        });
    }

    fn regs(
        &mut self,
        ty: &Spanned<TyTok>,
        items: &[crate::ast::RegItem<'_>],
        diags: &mut Diagnostics,
    ) {
        let rty = ty_of(ty.node).map_or(RegTy::Pred, RegTy::Val);
        for item in items {
            let count = match &item.count {
                Some(c) => match parse_int(c.node).and_then(|v| u32::try_from(v).ok()) {
                    Some(n) if n as usize <= MAX_DECLARED => Some(n),
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                format!("register count `{}` is too large", c.node),
                                c.span.clone(),
                            )
                            .label(format!("at most {MAX_DECLARED}")),
                        );
                        continue;
                    }
                },
                None => None,
            };
            let base = item.name.node;
            if Special::from_name(base).is_some() || base.contains('.') {
                diags.push(
                    Diagnostic::error(
                        format!("`%{base}` is a special register name"),
                        item.name.span.clone(),
                    )
                    .label("reserved")
                    .help("choose another name"),
                );
                continue;
            }
            let names: Vec<String> = match count {
                Some(n) => (0..n).map(|k| format!("{base}{k}")).collect(),
                None => vec![base.to_string()],
            };
            if let Some(dup) = names.iter().find(|n| self.scope.regs.contains_key(*n)) {
                diags.push(
                    Diagnostic::error(
                        format!("register `%{dup}` is declared twice"),
                        item.name.span.clone(),
                    )
                    .label("already declared"),
                );
                continue;
            }
            // Registers of 64-bit types are aligned pairs (the layout rule of
            // `Module::reg_layout`).
            let elem = match rty {
                RegTy::Val(t) => u32::from(t.regs()),
                RegTy::Pred => 1,
            };
            let (used, limit) = if rty == RegTy::Pred {
                (&mut self.reg_counts.1, MAX_PREDS)
            } else {
                (&mut self.reg_counts.0, MAX_REGS)
            };
            let start = used.next_multiple_of(elem);
            if names.len() > MAX_DECLARED {
                diags.push(
                    Diagnostic::error(
                        format!("`%{base}<{}>` declares too many registers", names.len()),
                        item.name.span.clone(),
                    )
                    .label(format!("at most {MAX_DECLARED} per declaration")),
                );
                continue;
            }
            if start + names.len() as u32 * elem > limit {
                // The allocator will colour them; the declared layout cannot be kept.
                self.decls_fit = false;
            }
            *used = start;
            let class = match rty {
                RegTy::Pred => Class::Pred,
                RegTy::Val(t) if t.bits() == 64 => Class::Pair,
                RegTy::Val(_) => Class::Single,
            };
            for n in names {
                let at = u8::try_from(*used).ok().filter(|_| *used + elem <= limit);
                let vreg = self.vregs.add(class, at);
                self.scope
                    .regs
                    .insert(n, crate::operands::RegInfo { vreg, ty: rty });
                *used += elem;
            }
            self.module.regs.push(RegDecl {
                name: base.to_string(),
                ty: rty,
                count,
            });
        }
    }

    fn launch(
        &mut self,
        parts: &[(Spanned<&str>, Vec<SExpr<'_>>)],
        span: &Span,
        diags: &mut Diagnostics,
    ) {
        if let Some(prev) = &self.launch_seen {
            diags.push(
                Diagnostic::error("`.launch` is given twice", span.clone())
                    .with_secondary(prev.clone(), "first here"),
            );
            return;
        }
        self.launch_seen = Some(span.clone());
        for (name, args) in parts {
            let max = match name.node {
                "grid" => 2,
                "block" => 3,
                "iu" => 1,
                other => {
                    let d = Diagnostic::error(
                        format!("unknown launch dimension `{other}`"),
                        name.span.clone(),
                    )
                    .label("expected grid, block or iu");
                    diags.push(match closest(other, ["grid", "block", "iu"]) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d,
                    });
                    continue;
                }
            };
            if args.len() > max {
                diags.push(
                    Diagnostic::error(
                        format!("`{}` takes at most {max} values", name.node),
                        args[max].span.clone(),
                    )
                    .label("extra value"),
                );
                continue;
            }
            let mut vals = Vec::new();
            for a in args {
                match self.expr(a, diags) {
                    Some(e) => vals.push(e),
                    None => return,
                }
            }
            let target: &mut [spu_isa::format::Expr] = match name.node {
                "grid" => &mut self.module.launch.grid,
                "block" => &mut self.module.launch.block,
                _ => std::slice::from_mut(&mut self.module.launch.iu_threads),
            };
            for (slot, v) in target.iter_mut().zip(vals) {
                *slot = v;
            }
        }
    }

    fn dma(
        &mut self,
        side: &Spanned<&str>,
        buffer: &Spanned<&str>,
        fields: &[(Spanned<&str>, SExpr<'_>)],
        diags: &mut Diagnostics,
    ) {
        let Some(s) = Side::from_name(side.node) else {
            diags.push(
                Diagnostic::error(format!("unknown side `{}`", side.node), side.span.clone())
                    .label("expected north, south, east or west"),
            );
            return;
        };
        if self.module.dma.iter().any(|d| d.side == s) {
            diags.push(
                Diagnostic::error(format!("a second `.dma {s}` descriptor"), side.span.clone())
                    .label("one descriptor per side"),
            );
            return;
        }
        let Some(buf) = self.scope.buffers.get(buffer.node).copied() else {
            let d = Diagnostic::error(
                format!("unknown buffer `{}`", buffer.node),
                buffer.span.clone(),
            )
            .label("no `.global` buffer has this name");
            diags.push(
                match closest(buffer.node, self.scope.buffers.keys().map(String::as_str)) {
                    Some(c) => d.help(format!("did you mean `{c}`?")),
                    None => d,
                },
            );
            return;
        };
        let mut values: [Option<spu_isa::format::Expr>; 9] = Default::default();
        for (v, name) in values.iter_mut().zip(DMA_FIELDS) {
            if DMA_OPTIONAL.contains(&name) {
                *v = Some(spu_isa::format::Expr::constant(0));
            }
        }
        let mut ok = true;
        for (key, value) in fields {
            let Some(i) = DMA_FIELDS.iter().position(|f| *f == key.node) else {
                let d = Diagnostic::error(
                    format!("unknown DMA field `{}`", key.node),
                    key.span.clone(),
                )
                .label(format!("expected one of {}", DMA_FIELDS.join(", ")));
                diags.push(match closest(key.node, DMA_FIELDS) {
                    Some(c) => d.help(format!("did you mean `{c}`?")),
                    None => d,
                });
                ok = false;
                continue;
            };
            match self.expr(value, diags) {
                Some(e) => values[i] = Some(e),
                None => ok = false,
            }
        }
        let missing: Vec<&str> = DMA_FIELDS
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            diags.push(
                Diagnostic::error(
                    format!("`.dma {s}` is missing {}", missing.join(", ")),
                    side.span.clone(),
                )
                .label("incomplete descriptor")
                .help(format!("a descriptor gives {}", DMA_FIELDS.join(", "))),
            );
            return;
        }
        if ok {
            let fields = values.map(|v| v.unwrap_or(spu_isa::format::Expr::constant(0)));
            self.module.dma.push(DmaDesc {
                side: s,
                buffer: buf,
                fields,
            });
        }
    }

    fn finish(mut self, diags: &mut Diagnostics) -> (Option<Module>, crate::preprocess::SourceMap) {
        let module = self.build(diags);
        (module, self.map)
    }

    fn build(&mut self, diags: &mut Diagnostics) -> Option<Module> {
        match &self.entry {
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
        if self.instrs.is_empty() && !diags.has_errors() {
            diags.push(
                Diagnostic::error(
                    "the kernel has no instructions",
                    self.entry.as_ref().map_or(0..0, |e| e.open.clone()),
                )
                .help("end it with `exit;`"),
            );
            return None;
        }
        if diags.has_errors() || self.instrs.is_empty() {
            return None;
        }
        // Branch targets, then registers.
        for (v, span) in &mut self.instrs {
            if let Some(name) = &v.target {
                let pc = self.label_at.get(name).copied().unwrap_or(0);
                if let Some(Operand::Target(t)) = v.instr.operands_mut().first_mut() {
                    *t = pc;
                } else {
                    diags.push(Diagnostic::error("branch target lost", span.clone()));
                }
            }
        }
        let placed: Vec<Instr> = self.instrs.iter().map(|(v, _)| v.instr).collect();
        let succ = cfg::successors(&placed);
        let phys: Vec<u8> = if self.colour {
            let insts: Vec<_> = self.instrs.iter().map(|(v, _)| v.uses_and_defs()).collect();
            match crate::regalloc::allocate(&self.vregs.classes, &insts, &succ, MAX_REGS, MAX_PREDS)
            {
                Ok(a) => {
                    self.module.regs = canonical_regs(&a);
                    a.phys
                }
                Err(p) => {
                    diags.push(pressure_diagnostic(&p, self.instrs[p.at].1.clone()));
                    return None;
                }
            }
        } else {
            self.vregs
                .declared_at
                .iter()
                .map(|a| a.unwrap_or(0))
                .collect()
        };
        for (v, _) in &mut self.instrs {
            v.patch(&|r| phys[r as usize]);
        }
        let mut code: Vec<Instr> = self.instrs.iter().map(|(v, _)| v.instr).collect();
        let ipdom = cfg::immediate_post_dominators(&succ);
        let bra = Opcode::from_mnemonic("bra");
        for (pc, instr) in code.iter_mut().enumerate() {
            if Some(instr.opcode) == bra && instr.guard != Guard::Always {
                instr.reconv = Some(ipdom[pc].map_or(NO_RECONV, |p| p as u32));
            }
        }
        self.check_units(&code, &succ, diags);
        self.check_end(&code, &succ, diags);
        self.module.iu_entry = self.iu_entry.as_ref().map(|(pc, _)| *pc);
        for (pc, instr) in code.iter().enumerate() {
            match instr.encode() {
                Ok(w) => self.module.code.push(w),
                Err(e) => diags.push(Diagnostic::error(e.to_string(), self.instrs[pc].1.clone())),
            }
        }
        (!diags.has_errors()).then(|| std::mem::replace(&mut self.module, empty_module(Vec::new())))
    }

    /// Warns when execution can fall through the last instruction: the emulator would
    /// stop such a thread with a fault.
    fn check_end(&self, code: &[Instr], succ: &[Vec<usize>], diags: &mut Diagnostics) {
        let Some(last) = code.len().checked_sub(1) else {
            return;
        };
        let instr = &code[last];
        let ends = instr.guard == Guard::Always
            && [
                Opcode::from_mnemonic("exit"),
                Opcode::from_mnemonic("ret"),
                Opcode::from_mnemonic("bra"),
            ]
            .contains(&Some(instr.opcode));
        if ends {
            return;
        }
        let mut reached = cfg::reachable(succ, 0);
        if let Some((iu, _)) = &self.iu_entry {
            let from_iu = cfg::reachable(succ, *iu as usize);
            for (r, i) in reached.iter_mut().zip(from_iu) {
                *r |= i;
            }
        }
        if reached[last] {
            diags.push(
                Diagnostic::warning(
                    "execution can run past the last instruction",
                    self.instrs[last].1.clone(),
                )
                .label("nothing follows this instruction")
                .help("end every path with `exit;`"),
            );
        }
    }

    /// FP/SFU/shared-memory instructions IUs may reach (thesis Table 5.2): an error
    /// where only IUs reach them, a warning where both SMs and IUs may.
    fn check_units(&self, code: &[Instr], succ: &[Vec<usize>], diags: &mut Diagnostics) {
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
        let from_sm = cfg::reachable(succ, 0);
        let from_iu = cfg::reachable(succ, iu_pc);
        if iu_pc > 0 && succ[iu_pc - 1].contains(&iu_pc) && from_sm[iu_pc - 1] {
            diags.push(
                Diagnostic::warning(
                    "SM code runs on into the `.iu` section",
                    self.instrs[iu_pc - 1].1.clone(),
                )
                .label("execution continues into IU code")
                .with_secondary(iu_span.clone(), "IU section starts here")
                .help("end the SM code with `exit;` or an unconditional `bra`"),
            );
        }
        for (pc, instr) in code.iter().enumerate() {
            if !from_iu[pc] || instr.exec_class().units.iu() {
                continue;
            }
            let what = spu_isa::disasm::full_mnemonic(instr);
            let span = self.instrs[pc].1.clone();
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

/// Checks an initialiser's values against the buffer's type: integers for integer
/// buffers, each within the type's range; finite values within f32's range otherwise.
/// (A ramp's last value depends on the buffer's size and is checked at load time.)
fn check_init_values(e: &SExpr<'_>, init: Init, ty: Ty) -> Result<Init, Diagnostic> {
    let Expr::Call(_, args) = &e.node else {
        return Ok(init);
    };
    // (value, argument index, is a ramp's step)
    let checks: Vec<(f64, usize, bool)> = match init {
        Init::Zeros => vec![],
        Init::Const(v) => vec![(v, 0, false)],
        Init::Ramp { start, step } => vec![(start, 0, false), (step, 1, true)],
        Init::Random { lo, hi, .. } if args.len() == 3 => vec![(lo, 1, false), (hi, 2, false)],
        Init::Random { .. } => vec![],
    };
    for (v, i, is_step) in checks {
        check_init_value(v, ty, is_step, &args[i])?;
    }
    if let Init::Random { lo, hi, .. } = init
        && lo > hi
    {
        return Err(Diagnostic::error(
            format!("`random` has lo {lo} above hi {hi}"),
            e.span.clone(),
        )
        .label("expected random(seed, lo, hi) with lo <= hi"));
    }
    Ok(init)
}

fn check_init_value(v: f64, ty: Ty, is_step: bool, arg: &SExpr<'_>) -> Result<(), Diagnostic> {
    let text = format_number(v);
    match ty {
        Ty::F32 => {
            if !v.is_finite() || v.abs() > f64::from(f32::MAX) {
                return Err(Diagnostic::error(
                    format!("`{text}` does not fit in .f32"),
                    arg.span.clone(),
                )
                .label(format!("expected a magnitude of at most {:e}", f32::MAX)));
            }
        }
        // Other element types are refused when the kernel is loaded; their
        // initialisers are checked like the 32-bit integer ones.
        _ => {
            if v.fract() != 0.0 || !v.is_finite() {
                return Err(Diagnostic::error(
                    format!("`{text}` is not an integer"),
                    arg.span.clone(),
                )
                .label(format!("a .{ty} buffer holds integers"))
                .help("write an integer, or declare the buffer .f32"));
            }
            let (lo, hi) = if is_step {
                // A step may go down; the ramp's values are checked at load time.
                (-f64::from(u32::MAX), f64::from(u32::MAX))
            } else if !ty.is_signed() {
                (0.0, f64::from(u32::MAX))
            } else {
                (f64::from(i32::MIN), f64::from(i32::MAX))
            };
            if v < lo || v > hi {
                return Err(Diagnostic::error(
                    format!("`{text}` does not fit in .{ty}"),
                    arg.span.clone(),
                )
                .label(format!(
                    "expected {}..={}",
                    format_number(lo),
                    format_number(hi)
                )));
            }
        }
    }
    Ok(())
}

/// A number as written in source: integers without a fractional part.
fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e18 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Largest seed: initialiser arguments are read as f64, exact up to 2^53.
const MAX_SEED: f64 = 9_007_199_254_740_992.0;

fn initialiser(e: &SExpr<'_>) -> Result<Init, Diagnostic> {
    let (name, args): (&str, &[SExpr<'_>]) = match &e.node {
        Expr::Name(n) => (n, &[]),
        Expr::Call(f, args) => (f.node, args),
        _ => {
            return Err(Diagnostic::error("expected an initialiser", e.span.clone())
                .label("not zeros, const(v), ramp(start, step) or random(seed, lo, hi)"));
        }
    };
    let nums = args.iter().map(const_f64).collect::<Result<Vec<_>, _>>()?;
    let wrong = |expected: &str| {
        Diagnostic::error(format!("`{name}` takes {expected}"), e.span.clone())
            .label(format!("found {} arguments", nums.len()))
    };
    Ok(match (name, nums.as_slice()) {
        ("zeros", []) => Init::Zeros,
        ("zeros", _) => return Err(wrong("no arguments")),
        ("const", [v]) => Init::Const(*v),
        ("const", _) => return Err(wrong("one value")),
        ("ramp", [start, step]) => Init::Ramp {
            start: *start,
            step: *step,
        },
        ("ramp", _) => return Err(wrong("a start and a step")),
        ("random", [seed]) | ("random", [seed, _, _])
            if *seed < 0.0 || seed.fract() != 0.0 || *seed > MAX_SEED =>
        {
            return Err(Diagnostic::error(
                "the seed must be a non-negative integer",
                args[0].span.clone(),
            )
            .label(format!("expected 0..={MAX_SEED}")));
        }
        ("random", [seed]) => Init::Random {
            seed: *seed as u64,
            lo: 0.0,
            hi: 1.0,
        },
        ("random", [seed, lo, hi]) => Init::Random {
            seed: *seed as u64,
            lo: *lo,
            hi: *hi,
        },
        ("random", _) => return Err(wrong("a seed, optionally followed by lo and hi")),
        (other, _) => {
            let d = Diagnostic::error(format!("unknown initialiser `{other}`"), e.span.clone())
                .label("expected zeros, const, ramp or random");
            return Err(match closest(other, ["zeros", "const", "ramp", "random"]) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d,
            });
        }
    })
}
