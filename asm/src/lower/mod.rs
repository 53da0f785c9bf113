//! The assembler proper: walks the parsed statements, checks declarations and
//! instructions, computes reconvergence points and IU reachability, and builds the
//! [`Module`]. Every problem becomes a diagnostic; assembly fails if any is an error.

use crate::ast::{Spanned, Stmt, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::parse_int;
use crate::lexer::Span;
use crate::lexer::bare_carriage_return;
use crate::operands::{Lowering, Scope};
use crate::parse::parse_file;
use crate::vcode::{VInstr, VRegs};
use spu_isa::format::{
    Label, Launch, LineTable, MAX_SHARED_ALIGN, MAX_STRING, Module, SharedDecl, SourceLoc,
};
use spu_isa::{MAX_SYMBOLS, Ty};
use std::collections::HashMap;

mod bounds;
mod build;
mod decls;
mod entries;
mod lineinfo;

/// Choices the source does not make itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The kernel to assemble when the file has several `.entry` blocks.
    pub entry: Option<String>,
}

/// Assembles source text into a module; warnings come back with it. `#include`
/// paths are relative to the including file and must stay inside `path`'s folder
/// (see [`crate::preprocess::confined_reader`]).
pub fn assemble_module(path: &str, src: &str) -> Result<(Module, Diagnostics), Diagnostics> {
    assemble_with_options(
        path,
        src,
        &mut crate::preprocess::confined_reader(path),
        &Options::default(),
    )
}

/// [`assemble_module`] with options (which entry to assemble).
pub fn assemble_module_with(
    path: &str,
    src: &str,
    options: &Options,
) -> Result<(Module, Diagnostics), Diagnostics> {
    assemble_with_options(
        path,
        src,
        &mut crate::preprocess::confined_reader(path),
        options,
    )
}

/// [`assemble_module`] with a caller-provided reader for included files.
pub fn assemble_with(
    path: &str,
    src: &str,
    read: &mut dyn FnMut(&std::path::Path) -> Result<String, String>,
) -> Result<(Module, Diagnostics), Diagnostics> {
    assemble_with_options(path, src, read, &Options::default())
}

/// [`assemble_with`] with options.
pub fn assemble_with_options(
    path: &str,
    src: &str,
    read: &mut dyn FnMut(&std::path::Path) -> Result<String, String>,
    options: &Options,
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
    // First keep the declarations' own register layout; when it does not fit, the
    // code needs temporaries or the registers are a PTX file's virtual ones, colour
    // every register instead.
    let mut first = diags.clone();
    let mut asm = Assembler::new(map.clone(), false, options);
    asm.run(&parsed.stmts, &mut first);
    let (module, map) = if parsed.stopped_early {
        (None, map)
    } else if asm.needs_colouring() {
        let mut asm = Assembler::new(map, true, options);
        asm.run(&parsed.stmts, &mut diags);
        asm.finish(&mut diags)
    } else {
        diags = first;
        asm.finish(&mut diags)
    };
    // Reading order of the preprocessed text: an included file's errors come at its
    // `#include`, before the errors they cause further down (a `.bind` of a kernel
    // whose signature did not parse). Preprocessor errors come first.
    diags.sort();
    diags.remap(&map);
    let mut pre = pre_diags;
    pre.sort();
    diags.items.splice(0..0, pre.items);
    match module {
        Some(m) if !diags.has_errors() => Ok((m, diags)),
        _ => Err(diags),
    }
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
    options: Options,
    /// No kernel could be chosen (already reported).
    no_entry_chosen: bool,
    /// The `.extern .shared` array sized at launch: index and element bytes.
    dynamic_shared: Option<(usize, u32, Span)>,
    /// `.launch shared(BYTES)`: the dynamic shared size.
    launch_shared: Option<(spu_isa::format::Expr, Span)>,
    /// Registers are coloured by the allocator rather than placed by declaration.
    colour: bool,
    vregs: VRegs,
    /// The declarations fit the register file as laid out.
    decls_fit: bool,
    /// Registers are declared in a `.ptx` file: virtual by definition, so always
    /// allocated (nvcc numbers them with gaps, `%r<158>` for 18 in use).
    ptx_regs: bool,
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
    /// nvcc's `.file N "k.cu"` in a `.ptx` file: N -> index in the line table.
    cuda_files: HashMap<u32, u16>,
    /// nvcc's `.loc` in a `.ptx` file: the CUDA source line of the instructions that
    /// follow, up to the next `.loc` or the end of the entry.
    cuda_loc: Option<SourceLoc>,
    /// `.maxntid`/`.reqntid` of the assembled entry.
    thread_bounds: Vec<bounds::ThreadBound>,
    /// `.launch block(...)`: each extent if known at assembly time, and where.
    launch_block: Option<([Option<u64>; 3], Span)>,
}

impl Assembler {
    fn new(map: crate::preprocess::SourceMap, colour: bool, options: &Options) -> Self {
        let files = map.files.iter().map(|f| f.name.clone()).collect();
        Assembler {
            map,
            options: options.clone(),
            no_entry_chosen: false,
            dynamic_shared: None,
            launch_shared: None,
            colour,
            vregs: VRegs::default(),
            decls_fit: true,
            ptx_regs: false,
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
            cuda_files: HashMap::new(),
            cuda_loc: None,
            thread_bounds: Vec::new(),
            launch_block: None,
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

    /// Whether the text at a preprocessed offset comes from a `.ptx` file.
    fn in_ptx_file(&self, offset: usize) -> bool {
        let o = self.map.origin(&(offset..offset));
        self.map.files.get(o.file).is_some_and(|f| {
            std::path::Path::new(&f.name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("ptx"))
        })
    }

    /// Whether the registers must be coloured: the declarations do not fit, a `.ptx`
    /// file declares them, or the code needs temporaries.
    fn needs_colouring(&self) -> bool {
        !self.decls_fit
            || self.ptx_regs
            || self.vregs.has_temps(false)
            || self.vregs.has_temps(true)
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

    /// Pass 1 collects parameters, labels and buffers so uses may precede them, and
    /// binds the chosen entry's parameters; pass 2 checks instructions and
    /// expressions. Statements of the other entries of the file are skipped.
    fn run(&mut self, stmts: &[Spanned<Stmt<'_>>], diags: &mut Diagnostics) {
        let active = self.select_entry(stmts, diags);
        let live = || {
            stmts
                .iter()
                .zip(&active)
                .filter(|(_, on)| **on)
                .map(|(s, _)| s)
        };
        let mut entry_params: &[crate::ast::EntryParam<'_>] = &[];
        let mut bind: Option<&Spanned<Stmt<'_>>> = None;
        for s in live() {
            match &s.node {
                Stmt::Param { ty, name, default } => self.param(ty, name, default.as_ref(), diags),
                Stmt::EntryOpen { params, .. } => entry_params = params,
                Stmt::Bind { .. } => match bind {
                    Some(prev) => diags.push(
                        Diagnostic::error("`.bind` is given twice", s.span.clone())
                            .with_secondary(prev.span.clone(), "first here")
                            .help("a launch binds one kernel's arguments once"),
                    ),
                    None => bind = Some(s),
                },
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
        for s in live() {
            if let Stmt::Global {
                ty,
                name,
                dims,
                init,
            } = &s.node
            {
                self.global(ty, name, dims, init.as_ref(), diags);
            }
        }
        self.bind_entry_params(entry_params, bind, diags);
        for s in live() {
            self.statement(s, diags);
        }
    }

    fn statement(&mut self, s: &Spanned<Stmt<'_>>, diags: &mut Diagnostics) {
        // nvcc declares `extern __shared__` arrays (`.extern .shared`) at module
        // scope, before the entries that use them.
        let needs_entry = matches!(
            s.node,
            Stmt::Reg { .. }
                | Stmt::Shared { dynamic: false, .. }
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
            Stmt::Param { .. } | Stmt::Global { .. } | Stmt::Bind { .. } | Stmt::Empty => {}
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
            Stmt::File { index, path } if self.in_ptx_file(s.span.start) => {
                self.cuda_file(index, path, diags);
            }
            Stmt::Loc { file, line, col } if self.in_ptx_file(s.span.start) => {
                self.cuda_loc(file, line, col, diags);
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
            Stmt::Shared {
                ty,
                name,
                dims,
                align,
                dynamic,
            } => {
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
                let align = match align {
                    None => 0,
                    Some(a) => match parse_int(a.node).and_then(|v| u32::try_from(v).ok()) {
                        Some(v) if v.is_power_of_two() && v <= MAX_SHARED_ALIGN => v,
                        _ => {
                            diags.push(
                                Diagnostic::error(
                                    format!("alignment `{}` is not supported", a.node),
                                    a.span.clone(),
                                )
                                .label(format!("expected a power of two up to {MAX_SHARED_ALIGN}")),
                            );
                            return;
                        }
                    },
                };
                if *dynamic {
                    if let Some((_, _, prev)) = &self.dynamic_shared {
                        diags.push(
                            Diagnostic::error(
                                "a second `.extern .shared` array",
                                name.span.clone(),
                            )
                            .with_secondary(prev.clone(), "the first one")
                            .help("declare one dynamic shared array and address its parts with offsets"),
                        );
                        return;
                    }
                    self.dynamic_shared =
                        Some((self.module.shared.len(), t.bits() / 8, name.span.clone()));
                }
                let dims = if *dynamic {
                    Some(vec![spu_isa::format::Expr::constant(1)])
                } else {
                    self.dims(dims, diags)
                };
                if let Some(dims) = dims {
                    self.scope
                        .shared
                        .insert(name.node.to_string(), self.module.shared.len() as u16);
                    self.module.shared.push(SharedDecl {
                        name: name.node.to_string(),
                        ty: t,
                        align,
                        dims,
                    });
                }
            }
            Stmt::Reg { ty, items } => {
                self.ptx_regs |= self.in_ptx_file(s.span.start);
                self.regs(ty, items, diags);
            }
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
            Stmt::EntryOpen { name, hints, .. } => match &self.entry {
                Some(e) => diags.push(
                    Diagnostic::error("only one `.entry` per file", name.span.clone())
                        .label("second kernel")
                        .with_secondary(e.open.clone(), "first kernel here")
                        .help("put each kernel in its own file"),
                ),
                None => {
                    self.entry_hints(hints, diags);
                    self.module.name = name.node.to_string();
                    self.entry = Some(Entry {
                        name: name.node.to_string(),
                        open: s.span.clone(),
                        closed: false,
                    });
                }
            },
            Stmt::BlockClose => match &mut self.entry {
                Some(e) if !e.closed => {
                    e.closed = true;
                    self.cuda_loc = None;
                }
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
                let loc = self
                    .pending_loc
                    .take()
                    .or(self.cuda_loc)
                    .unwrap_or_else(|| self.loc(pos));
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
}
