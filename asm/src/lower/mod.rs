//! The assembler proper: reads the declarations of a file, then lowers its code
//! statement by statement as it is parsed (so a file is never held as a syntax
//! tree), checks declarations and instructions, computes reconvergence points and
//! IU reachability, and builds the [`Module`]. Every problem becomes a diagnostic;
//! assembly fails if any is an error.

use crate::ast::{Spanned, Stmt, TyTok};
use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::Span;
use crate::lexer::bare_carriage_return;
use crate::operands::Scope;
use crate::parse::{Statements, statement_at};
use crate::preprocess::SourceMap;
use crate::vcode::{VCode, VRegs};
use outline::{DeclKind, NO_OWNER, Outline};
use spu_isa::Ty;
use spu_isa::format::{Launch, LineTable, MAX_STRING, Module, SourceLoc};
use std::collections::{HashMap, HashSet};

mod bounds;
mod build;
pub(crate) mod debuginfo;
mod decls;
mod entries;
mod funcs;
mod init;
mod lineinfo;
mod local;
mod outline;
mod precondition;
mod statements;
mod structs;
mod uses;

pub use decls::MAX_REGISTERS;
pub use outline::{MAX_ENTRIES, MAX_LABELS};

/// Choices the source does not make itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The kernel to assemble when the file has several `.entry` blocks.
    pub entry: Option<String>,
    /// The module is to be run as it is: a PTX kernel with pointer parameters and
    /// no `.bind` is refused (no buffer stands behind them).
    pub launch: bool,
    /// Folders given with `-I DIR`: files in them (or below) may be `#include`d besides
    /// those in the kernel's own folder.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// The clang that compiles an `#include`d `.cu` file (`--clang PATH`); `None`
    /// looks for one (see [`crate::cuda::compile`]).
    pub clang: Option<std::path::PathBuf>,
}

/// Assembles source text into a module; warnings come back with it. `#include`
/// paths are relative to the including file and must stay inside `path`'s folder
/// (or an [`Options::include_dirs`] folder with [`assemble_module_with`]; see
/// [`crate::preprocess::confined_reader`]).
pub fn assemble_module(path: &str, src: &str) -> Result<(Module, Diagnostics), Diagnostics> {
    assemble_with_options(
        path,
        src,
        &mut crate::preprocess::confined_reader(path, &[]),
        &Options::default(),
    )
}

/// [`assemble_module`] with options (which entry to assemble).
pub fn assemble_module_with(
    path: &str,
    src: &str,
    options: &Options,
) -> Result<(Module, Diagnostics), Diagnostics> {
    let mut confined = crate::preprocess::confined_reader(path, &options.include_dirs);
    let mut headers = Vec::new();
    // An included `.cu` file is read under the same rule, then compiled to PTX.
    let mut read = |p: &std::path::Path| {
        let text = confined(p)?;
        if crate::cuda::is_cuda(p) {
            let c = crate::cuda::compile(p, options.clang.as_deref(), &options.include_dirs)
                .map_err(|e| e.to_string())?;
            headers.extend(c.headers);
            Ok(c.ptx)
        } else {
            Ok(text)
        }
    };
    let mut result = assemble_with_options(path, src, &mut read, options);
    match &mut result {
        Ok((_, d)) | Err(d) => d.headers = headers,
    }
    result
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
    if let Some(d) = crate::memory::check(src) {
        diags.push(d);
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
    let (text, mut map, pre_diags) = crate::preprocess::preprocess(path, src, read);
    let module = assemble_text(&text, &map, options, pre_diags.has_errors(), &mut diags);
    // Reading order of the preprocessed text: an included file's errors come at its
    // `#include`, before the errors they cause further down (a `.bind` of a kernel
    // whose signature did not parse). Preprocessor errors come first.
    diags.sort();
    // A line where preprocessing failed (an invocation left out, a macro's text cut
    // short) gets no errors of the assembler: they would only repeat the cause.
    let broken: HashSet<(usize, u32)> = pre_diags
        .items
        .iter()
        .filter(|d| d.severity == crate::Severity::Error)
        .filter_map(|d| {
            let file = d.file? as usize;
            Some((file, map.line_col(file, d.span.start).0))
        })
        .collect();
    if !broken.is_empty() {
        diags.items.retain(|d| {
            let o = map.origin(&d.span);
            d.file.is_some() || !broken.contains(&(o.file, map.line_col(o.file, o.span.start).0))
        });
    }
    diags.remap(&mut map);
    let mut all = pre_diags;
    all.sort();
    let files = std::mem::take(&mut diags.files);
    all.append(diags);
    all.files = files;
    crate::cuda::point_at_cuda(&mut all, path, src);
    match module {
        Some(m) if !all.has_errors() => Ok((m, all)),
        _ => Err(all),
    }
}

/// Assembles preprocessed text: the outline first, then the declarations, then the
/// code as it is parsed. `earlier_errors`: preprocessing reported errors.
fn assemble_text(
    text: &str,
    map: &SourceMap,
    options: &Options,
    earlier_errors: bool,
    diags: &mut Diagnostics,
) -> Option<Module> {
    let outline = outline::scan(text, diags);
    if let Some(end) = outline.stopped_at {
        // Nothing is assembled, but the syntax errors before the stop are reported.
        let mut statements = Statements::new(text, 0, false, true);
        statements.parse_until(end);
        diags.append(statements.take_diagnostics());
        return None;
    }
    let mut asm = Assembler::new(map, options);
    asm.declarations(text, &outline, diags);
    // First keep the declarations' own register layout; when it does not fit, the
    // code needs temporaries or the registers are a PTX file's virtual ones, colour
    // every register instead. Lowering differs only where a vector operand used
    // declared registers as they are; then the code is lowered again for colouring.
    let declared = asm.clone();
    let mut code_diags = Diagnostics::default();
    asm.code(text, &mut code_diags);
    if asm.vregs.declared_groups && asm.needs_colouring() {
        asm = declared;
        asm.colour = true;
        code_diags = Diagnostics::default();
        asm.code(text, &mut code_diags);
    }
    diags.append(code_diags);
    asm.report_missing_kernel(diags, earlier_errors);
    asm.check_pointer_params(diags);
    asm.check_default_launch(diags);
    if let Some(chosen) = asm.chosen {
        let called: Vec<u32> = asm
            .funcs
            .iter()
            .filter(|f| f.queued)
            .map(|f| f.start)
            .collect();
        spare_other_entries(&outline, chosen, &called, diags);
    }
    // After the sparing: a block left open is no kernel's own error.
    report_unclosed(&outline, asm.chosen, diags);
    asm.colour |= asm.needs_colouring();
    asm.build(diags, earlier_errors)
}

/// A kernel or device function (other than the chosen kernel, which `build`
/// reports) whose `{` is never closed: everything after it, also a launch file's
/// lines after the `#include` of its file, was read as its body, so this comes
/// before what that causes (a `.bind` not seen).
fn report_unclosed(outline: &Outline<'_>, chosen: Option<u32>, diags: &mut Diagnostics) {
    let Some(u) = &outline.unclosed else {
        return;
    };
    if Some(u.owner) == chosen {
        return;
    }
    let what = if u.owner >= outline::FUNC_OWNER {
        "device function"
    } else {
        "kernel"
    };
    let mut d = Diagnostic::error(
        format!("the `{{` of {what} `{}` is never closed", u.name),
        u.open.clone(),
    )
    .label("no `}` closes this block")
    .help(
        "add the missing `}` (or remove an extra `{`); until then everything after it, also \
         the lines after an `#include` of this file, is read as part of the block",
    );
    if let Some(inner) = &u.inner {
        d = d.with_secondary(inner.clone(), "the innermost `{` still open");
    }
    diags.push(d);
}

/// Errors inside kernels other than the chosen one, and at device functions (which
/// the chosen kernel could only reach by a `call`, itself an error), become
/// warnings: only the chosen kernel is assembled.
fn spare_other_entries(
    outline: &Outline<'_>,
    chosen: u32,
    called: &[u32],
    diags: &mut Diagnostics,
) {
    // A device function the kernel does not call is not assembled.
    let spare_func = |at: usize| {
        outline
            .funcs
            .iter()
            .find(|f| (f.start as usize) <= at && at < f.end as usize && !called.contains(&f.start))
    };
    let owner = |at: usize| {
        outline
            .entry_starts
            .iter()
            .zip(&outline.entry_ends)
            .position(|(s, e)| (*s as usize) <= at && at < *e as usize)
    };
    for d in &mut diags.items {
        if d.severity != crate::diag::Severity::Error {
            continue;
        }
        let note = match owner(d.span.start) {
            Some(k) if k as u32 != chosen => format!(
                "in kernel `{}`, which is not assembled (the launch chose `{}`)",
                outline.entries[k].node, outline.entries[chosen as usize].node
            ),
            None if spare_func(d.span.start).is_some() => {
                "in a device function the assembled kernel does not call".to_string()
            }
            _ => continue,
        };
        d.severity = crate::diag::Severity::Warning;
        d.label = if d.label.is_empty() {
            note
        } else {
            format!("{}; {note}", d.label)
        };
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
        preconditions: Vec::new(),
        debug: Default::default(),
    }
}

fn ty_of(t: TyTok) -> Option<Ty> {
    match t {
        TyTok::Val(t) => Some(t),
        TyTok::Pred => None,
    }
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    open: Span,
    closed: bool,
}

/// A label of the assembled kernel.
#[derive(Debug, Clone)]
struct LabelInfo {
    span: Span,
    /// The instruction it stands before, once the code reaches it.
    pc: Option<u32>,
}

#[derive(Clone)]
struct Assembler<'m> {
    map: &'m SourceMap,
    options: Options,
    /// The kernel being assembled (index into the outline's entries), if any.
    chosen: Option<u32>,
    /// No kernel could be chosen (already reported).
    no_entry_chosen: bool,
    /// The error for a kernel `--entry` or `.bind` names that no `.entry` defines,
    /// reported at the end unless an earlier error explains it.
    missing_kernel: Option<Diagnostic>,
    /// The `.extern .shared` arrays (one is sized at launch): index, element
    /// bytes and declaration.
    dynamic_shared: Vec<(usize, u32, Span)>,
    /// The statement being lowered is at module scope (outside any body).
    module_scope: bool,
    /// The `.shared` arrays declared at module scope (by index), which a kernel
    /// that never names them does not hold.
    module_shared: Vec<usize>,
    /// `.launch shared(BYTES)`: the dynamic shared size.
    launch_shared: Option<(spu_isa::format::Expr, Span)>,
    /// Its value with the parameters' defaults, if known, and where it is written.
    launch_shared_known: Option<(i64, Span)>,
    /// `.launch shared(..)` is given but its value is in error (already reported).
    launch_shared_broken: bool,
    /// `.launch iu(T)` with the parameters' defaults, if known, and where it is written.
    launch_iu_known: Option<(i64, Span)>,
    /// Registers are coloured by the allocator rather than placed by declaration.
    colour: bool,
    vregs: VRegs,
    /// The declarations fit the register file as laid out.
    decls_fit: bool,
    /// Registers are declared in a `.ptx` file: virtual by definition, so always
    /// allocated (nvcc numbers them with gaps, `%r<158>` for 18 in use).
    ptx_regs: bool,
    /// Registers declared so far (see [`MAX_REGISTERS`]).
    declared_regs: usize,
    /// A limit of the kernel's size was reached (and reported): the rest of the code
    /// is not checked, as every error there would follow from it.
    halted: bool,
    scope: Scope,
    /// Names shared by parameters, buffers and shared arrays -> where declared.
    globals: HashMap<String, Span>,
    /// Labels of the kernel by id (see [`Scope::labels`]).
    labels: Vec<LabelInfo>,
    reg_counts: (u32, u32),
    entry: Option<Entry>,
    iu_entry: Option<(u32, Span)>,
    module: Module,
    code: VCode,
    launch_seen: Option<Span>,
    pending_loc: Option<SourceLoc>,
    /// A listing's `.loc` attributes for the next instruction (see `debuginfo`).
    pending_debug: Option<debuginfo::Listed>,
    /// nvcc's `.file N "k.cu"` in a `.ptx` file: N -> index in the line table.
    cuda_files: HashMap<u32, u16>,
    /// nvcc's `.loc` in a `.ptx` file: the CUDA source line of the instructions that
    /// follow, up to the next `.loc` or the end of the entry.
    cuda_loc: Option<SourceLoc>,
    /// `.maxntid`/`.reqntid` of the assembled entry.
    thread_bounds: Vec<bounds::ThreadBound>,
    /// `.launch block(...)`: each extent if known at assembly time, and where.
    launch_block: Option<([Option<u64>; 3], Span)>,
    /// The first `.bind` of the kernel, which the others repeat (an error each).
    first_bind: Option<Span>,
    /// A `.bind` of the chosen kernel that did not parse, or a block left open that
    /// may have swallowed it (so no binding is missing: the cause is reported).
    bind_broken: bool,
    /// The width of a pointer parameter (see [`Outline::pointer_bits`]).
    pointer_bits: u32,
    /// The chosen PTX entry's parameters and where they are declared.
    entry_params: Vec<(String, Span)>,
    /// Registers holding an entry parameter's value (`ld.param`) -> its name.
    param_regs: HashMap<String, String>,
    /// Entry parameters used as global addresses, in order of first use.
    pointer_params: Vec<String>,
    /// The shared arrays the kernel's instructions name.
    shared_used: std::collections::HashSet<String>,
    /// The file's device functions, by name and in order.
    funcs: Vec<funcs::FuncDef>,
    func_index: HashMap<String, usize>,
    /// The device functions' names as labels, the scope every function's own labels
    /// are added to (and removed from after it).
    func_labels: Option<HashMap<String, u32>>,
    /// Device functions to lower after the kernel, in the order of their first call.
    func_queue: Vec<usize>,
    /// The frame of the code being lowered.
    frame: funcs::Frame,
    /// Registers holding a struct parameter's address in the code being
    /// lowered, and the registers it has written and read so far.
    struct_regs: structs::StructRegs,
}

impl<'m> Assembler<'m> {
    fn new(map: &'m SourceMap, options: &Options) -> Self {
        let files = map.files.iter().map(|f| f.name.clone()).collect();
        Assembler {
            map,
            options: options.clone(),
            chosen: None,
            no_entry_chosen: false,
            missing_kernel: None,
            dynamic_shared: Vec::new(),
            module_scope: false,
            module_shared: Vec::new(),
            launch_shared: None,
            launch_shared_known: None,
            launch_shared_broken: false,
            launch_iu_known: None,
            colour: false,
            vregs: VRegs::default(),
            decls_fit: true,
            ptx_regs: false,
            declared_regs: 0,
            halted: false,
            scope: Scope::default(),
            globals: HashMap::new(),
            labels: Vec::new(),
            reg_counts: (0, 0),
            entry: None,
            iu_entry: None,
            module: empty_module(files),
            code: VCode::default(),
            launch_seen: None,
            pending_loc: None,
            pending_debug: None,
            cuda_files: HashMap::new(),
            cuda_loc: None,
            thread_bounds: Vec::new(),
            launch_block: None,
            first_bind: None,
            bind_broken: false,
            pointer_bits: 64,
            entry_params: Vec::new(),
            param_regs: HashMap::new(),
            pointer_params: Vec::new(),
            shared_used: Default::default(),
            funcs: Vec::new(),
            func_index: HashMap::new(),
            func_labels: None,
            func_queue: Vec::new(),
            frame: funcs::Frame::default(),
            struct_regs: Default::default(),
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
        // (The PTX clang wrote for a `.cu` file is named `k.cu.ptx`.)
        self.map.files.get(o.file).is_some_and(|f| {
            std::path::Path::new(&f.name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("ptx"))
        })
    }

    /// Whether `offset` lies in the PTX clang wrote for a `.cu` file.
    fn in_cuda_file(&self, offset: usize) -> bool {
        let o = self.map.origin(&(offset..offset));
        self.map
            .files
            .get(o.file)
            .is_some_and(|f| crate::cuda::cuda_of(&f.name).is_some())
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
        self.frame.in_func || self.entry.as_ref().is_some_and(|e| !e.closed)
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

    /// Whether a statement of kernel `owner` belongs to the assembled kernel (or to
    /// no kernel at all).
    fn active(&self, owner: u32) -> bool {
        owner == NO_OWNER || Some(owner) == self.chosen
    }

    /// Reads the declarations so that the code may use them before they appear:
    /// chooses the kernel, then collects parameters, labels and the `.bind`, then
    /// buffers, and binds the chosen entry's parameters. Statements of the other
    /// entries of the file are skipped.
    fn declarations(&mut self, text: &str, outline: &Outline<'_>, diags: &mut Diagnostics) {
        self.chosen = self.select_entry(text, outline, diags);
        self.pointer_bits = outline.pointer_bits;
        let chosen = self.chosen;
        let decls = || {
            outline
                .decls
                .iter()
                .filter(move |d| d.owner == NO_OWNER || Some(d.owner) == chosen)
                .filter_map(|d| Some((d.kind, statement_at(text, d.start as usize)?)))
        };
        // A `.bind` that did not parse was reported; a missing binding would repeat it.
        self.bind_broken = outline.unclosed.is_some()
            || outline
                .decls
                .iter()
                .filter(|d| d.owner == NO_OWNER || Some(d.owner) == chosen)
                .filter(|d| matches!(d.kind, DeclKind::Bind))
                .any(|d| {
                    !matches!(
                        statement_at(text, d.start as usize).map(|s| s.node),
                        Some(Stmt::Bind { .. })
                    )
                });
        let mut bind = None;
        for (kind, s) in decls() {
            match (&s.node, kind) {
                (Stmt::Param { ty, name, default }, DeclKind::Param) => {
                    self.param(ty, name, default.as_ref(), diags)
                }
                (Stmt::Bind { .. }, DeclKind::Bind) if bind.is_none() => {
                    self.first_bind = Some(s.span.clone());
                    bind = Some(s);
                }
                // Before any `.loc`: clang declares its files at the end.
                (Stmt::File { index, path }, DeclKind::File) if self.in_ptx_file(s.span.start) => {
                    self.cuda_file(index, path, diags)
                }
                _ => {}
            }
        }
        let entry = self
            .chosen
            .and_then(|k| statement_at(text, outline.entry_starts[k as usize] as usize));
        let entry_params = match entry.as_ref().map(|e| &e.node) {
            Some(Stmt::EntryOpen { params, .. }) => params.as_slice(),
            _ => &[],
        };
        for (owner, name) in &outline.labels {
            if !self.active(*owner) {
                continue;
            }
            if let Some(&id) = self.scope.labels.get(name.node) {
                diags.push(
                    Diagnostic::error(
                        format!("label `{}` is defined twice", name.node),
                        name.span.clone(),
                    )
                    .label("second definition")
                    .with_secondary(self.labels[id as usize].span.clone(), "first defined here"),
                );
            } else {
                self.scope
                    .labels
                    .insert(name.node.to_string(), self.labels.len() as u32);
                self.labels.push(LabelInfo {
                    span: name.span.clone(),
                    pc: None,
                });
            }
        }
        self.func_decls(text, outline, diags);
        for (kind, s) in decls() {
            if let (
                Stmt::Global {
                    ty,
                    name,
                    dims,
                    init,
                    align,
                },
                DeclKind::Global,
            ) = (&s.node, kind)
            {
                self.global(ty, name, dims, init.as_ref(), align.as_ref(), diags);
            }
        }
        self.entry_params = entry_params
            .iter()
            .map(|p| (p.name.node.to_string(), p.name.span.clone()))
            .collect();
        // A `.bind` of no kernel was reported as such; its arguments match nothing.
        let bind = bind.filter(|_| !self.no_entry_chosen);
        self.bind_entry_params(entry_params, bind.as_ref(), diags);
    }
}
