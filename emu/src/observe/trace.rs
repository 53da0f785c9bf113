//! The instruction trace (`--trace`): one line per issued warp instruction with
//! cycle, pass, unit, block, warp, PC, source line, instruction, active mask and
//! the values it wrote (for a store, each lane's address and value), filtered by
//! unit, warp and cycle range and capped so small kernels stay readable. A value
//! that arrives later (a global load or atomic in timing mode) is shown pending at
//! issue and on a line of its own at write-back, in cycle order. Filters that
//! cannot match anything on the machine and launch are refused before the run.

use crate::load::plan::{Geometry, Role, plan};
use crate::load::{Image, LaunchDims};
use crate::machine::{Boundary, Machine, UnitLabel};
use spu_io::{OutputError, OutputFile};
use spu_isa::format::Module;
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

/// Which instructions to trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// `sm:X,Y`, `iu:SIDE:I` or `dma:SIDE:I`; `None` traces every unit.
    pub unit: Option<String>,
    pub warp: Option<u32>,
    /// Inclusive cycle range.
    pub cycles: Option<(u64, u64)>,
    /// Most lines to print.
    pub limit: u64,
}

/// Why a cycle range does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CyclesSyntax {
    #[error("`--trace-cycles {0}` needs the form FIRST..LAST, e.g. `--trace-cycles 100..500`")]
    Form(String),
    #[error(
        "`--trace-cycles {text}` is empty: FIRST ({first}) is after LAST ({last}); write `--trace-cycles {last}..{first}`"
    )]
    Reversed { text: String, first: u64, last: u64 },
}

/// Parses `A..B` (either end may be left out).
pub fn parse_cycles(text: &str) -> Result<(u64, u64), CyclesSyntax> {
    let err = || CyclesSyntax::Form(spu_io::quote::shorten(text));
    let (a, b) = text.split_once("..").ok_or_else(err)?;
    let a = if a.is_empty() {
        0
    } else {
        a.trim().parse().map_err(|_| err())?
    };
    let b = if b.is_empty() {
        u64::MAX
    } else {
        b.trim().parse().map_err(|_| err())?
    };
    if a > b {
        return Err(CyclesSyntax::Reversed {
            text: spu_io::quote::shorten(text),
            first: a,
            last: b,
        });
    }
    Ok((a, b))
}

/// Why a trace filter would give an empty trace on this machine and launch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error(
        "`--trace-unit {text}` is not a unit name: write `sm:X,Y`, `iu:SIDE:I` or `dma:SIDE:I` (SIDE is north, south, east or west), e.g. `--trace-unit sm:0,0`"
    )]
    Syntax { text: String },
    #[error("`--trace-unit {text}` is not a unit of this machine: {units}")]
    NoSuchUnit { text: String, units: String },
    #[error("`--trace-unit {text}` runs no instructions in this launch: {why}")]
    NoCode { text: String, why: String },
    #[error(
        "`--trace-warp {warp}` matches no warp: {warps}; warps are numbered from 0 within each block or IU program"
    )]
    NoSuchWarp { warp: u32, warps: String },
}

impl TraceFilter {
    /// Checks that the unit and warp filters can match an instruction of `image`
    /// on `machine`, so a typo gives an error rather than an empty trace.
    pub fn check(&self, machine: &Machine, image: &Image) -> Result<(), FilterError> {
        let geo = Geometry::new(machine, image.launch.grid);
        let gpu = machine.is_gpu();
        let mut labels = geo.labels(machine.boundary);
        let sms = (geo.cols * geo.rows) as usize;
        if gpu {
            labels.truncate(sms);
        }
        let block_warps = image.launch.block_threads().div_ceil(32);
        let iu_warps = image.launch.iu_threads.div_ceil(32);
        let iu_code = !gpu && machine.boundary == Boundary::Iu;
        // Warps of the code each unit runs (0: it runs none).
        let mut warps = vec![0u32; labels.len()];
        if gpu {
            // A GPU's first round of dispatch hands block k to SM k (row-major),
            // and later blocks go to SMs already running: SM k runs blocks
            // exactly when the launch has more than k blocks.
            let blocks = u64::from(geo.grid[0]) * u64::from(geo.grid[1]);
            for (u, w) in warps.iter_mut().enumerate() {
                if (u as u64) < blocks {
                    *w = block_warps;
                }
            }
        } else {
            let sides = image.boundary_sides(machine.boundary);
            for (u, items) in plan(geo, &sides).iter().enumerate() {
                for item in items {
                    let n = match item.role {
                        Role::Block { .. } => block_warps,
                        Role::Boundary { .. } if iu_code => iu_warps,
                        _ => 0,
                    };
                    warps[u] = warps[u].max(n);
                }
            }
        }
        let mut chosen: Vec<usize> = (0..labels.len()).collect();
        if let Some(text) = &self.unit {
            let label = parse_unit(text).ok_or_else(|| FilterError::Syntax {
                text: spu_io::quote::shorten(text),
            })?;
            let at =
                labels
                    .iter()
                    .position(|&l| l == label)
                    .ok_or_else(|| FilterError::NoSuchUnit {
                        text: spu_io::quote::shorten(text),
                        units: unit_list(machine),
                    })?;
            if warps[at] == 0 {
                let why = match label {
                    UnitLabel::Dma { .. } => {
                        "DMA engines move tiles without running code; trace an SM instead"
                            .to_string()
                    }
                    UnitLabel::Iu { .. } if image.module.iu_entry.is_none() => {
                        "the kernel has no IU code".to_string()
                    }
                    UnitLabel::Iu { .. } => {
                        "this IU only spills or restores tiles between passes, which runs no code"
                            .to_string()
                    }
                    UnitLabel::Sm { .. } => format!(
                        "the launch's {}x{} blocks leave this SM idle",
                        geo.grid[0], geo.grid[1]
                    ),
                };
                return Err(FilterError::NoCode {
                    text: spu_io::quote::shorten(text),
                    why,
                });
            }
            chosen = vec![at];
        }
        if let Some(warp) = self.warp {
            let most = chosen.iter().map(|&u| warps[u]).max().unwrap_or(0);
            if warp >= most {
                let plural = |n: u32| if n == 1 { "warp" } else { "warps" };
                let mut have = vec![format!(
                    "a block of {} threads has {block_warps} {}",
                    image.launch.block_threads(),
                    plural(block_warps)
                )];
                if iu_code && iu_warps > 0 {
                    have.push(format!(
                        "an IU program of {} threads has {iu_warps} {}",
                        image.launch.iu_threads,
                        plural(iu_warps)
                    ));
                }
                return Err(FilterError::NoSuchWarp {
                    warp,
                    warps: have.join(", "),
                });
            }
        }
        Ok(())
    }
}

/// The machine's units, for error messages: `the grid is 4x4: SMs sm:0,0 ..
/// sm:3,3; IUs iu:north:0..3, ...`.
fn unit_list(machine: &Machine) -> String {
    let (p, q) = (machine.grid_cols, machine.grid_rows);
    let mut text = format!("the grid is {p}x{q}: SMs sm:0,0 .. sm:{},{}", p - 1, q - 1);
    if !machine.is_gpu() {
        let (kind, name) = match machine.boundary {
            Boundary::Iu => ("iu", "IUs"),
            Boundary::Dma => ("dma", "DMA engines"),
        };
        let sides: Vec<String> = [("north", p), ("south", p), ("east", q), ("west", q)]
            .iter()
            .map(|(side, n)| format!("{kind}:{side}:0..{}", n - 1))
            .collect();
        text += &format!("; {name} {}", sides.join(", "));
    }
    text
}

fn unit_key(l: UnitLabel) -> String {
    match l {
        UnitLabel::Sm { x, y } => format!("sm:{x},{y}"),
        UnitLabel::Iu { side, index } => format!("iu:{side}:{index}"),
        UnitLabel::Dma { side, index } => format!("dma:{side}:{index}"),
    }
}

/// Parses `sm:X,Y`, `iu:SIDE:I` or `dma:SIDE:I`.
pub fn parse_unit(text: &str) -> Option<UnitLabel> {
    let (kind, rest) = text.trim().split_once(':')?;
    let num = |t: &str| t.trim().parse::<u32>().ok();
    match kind.trim() {
        "sm" => {
            let (x, y) = rest.split_once(',')?;
            Some(UnitLabel::Sm {
                x: num(x)?,
                y: num(y)?,
            })
        }
        k @ ("iu" | "dma") => {
            let (side, index) = rest.split_once(':')?;
            let side = spu_isa::Side::from_name(side.trim())?;
            let index = num(index)?;
            Some(if k == "iu" {
                UnitLabel::Iu { side, index }
            } else {
                UnitLabel::Dma { side, index }
            })
        }
        _ => None,
    }
}

/// Where a traced instruction ran: the unit, the pass, the block (`None` for IU
/// code) and the warp within its block or IU program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    pub unit: UnitLabel,
    pub pass: u32,
    pub block: Option<[u32; 2]>,
    pub warp: u32,
}

/// Writes trace lines.
pub struct Tracer {
    filter: TraceFilter,
    /// The parsed `filter.unit` (an unparsable name matches nothing; the command
    /// line rejects it first, see [`TraceFilter::check`]).
    unit: Option<Option<UnitLabel>>,
    text: Vec<String>,
    loc: Vec<String>,
    /// Per instruction, the source names of the registers it writes: (predicate?,
    /// register, name).
    written_names: Vec<Vec<(bool, u8, String)>>,
    widths: Widths,
    out: Box<dyn Write>,
    written: u64,
    /// Write-backs of values that arrive later, printed in cycle order among the
    /// issue lines: (cycle, site, pc, mask, writes).
    arrivals: Vec<(u64, Site, u32, u32, String)>,
    /// The launch, whose blocks are named `x,y` or, in a 3-D grid, `x,y,z`.
    launch: LaunchDims,
}

/// Column widths, from the longest value each column can hold in this run.
#[derive(Debug, Clone, Copy)]
struct Widths {
    pass: usize,
    block: usize,
    loc: usize,
    text: usize,
}

impl fmt::Debug for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracer")
            .field("filter", &self.filter)
            .field("written", &self.written)
            .finish()
    }
}

/// A block as the trace's block column names it: `x,y`, or `x,y,z` in a 3-D grid
/// (which runs folded as (x, y*z)).
fn block_key([x, by]: [u32; 2], launch: &LaunchDims) -> String {
    if launch.grid_y > 0 && launch.grid[1] != launch.grid_y {
        format!("{x},{},{}", by % launch.grid_y, by / launch.grid_y)
    } else {
        format!("{x},{by}")
    }
}

/// Width of the unit column: `iu:north:255` (DMA engines run no instructions).
const UNIT_WIDTH: usize = 12;

impl Tracer {
    /// A tracer of `module` run with launch `launch`, writing to `out`.
    pub fn new(
        module: &Module,
        launch: &LaunchDims,
        filter: TraceFilter,
        mut out: Box<dyn Write>,
    ) -> Tracer {
        let text: Vec<String> = (0..module.code.len())
            .map(|pc| {
                let text = spu_asm::disasm::instr_text(module, pc).unwrap_or_default();
                spu_io::quote::escape(&text).into_owned()
            })
            .collect();
        let written_names = (0..module.code.len())
            .map(|pc| spu_asm::disasm::written_names(module, pc))
            .collect();
        let loc: Vec<String> = module
            .lines
            .locs
            .iter()
            .map(|l| {
                let file = module
                    .lines
                    .files
                    .get(usize::from(l.file))
                    .map_or("?", String::as_str);
                let short = std::path::Path::new(file)
                    .file_name()
                    .map_or(file.into(), |n| n.to_string_lossy());
                format!("{}:{}", spu_io::quote::escape(&short), l.line)
            })
            .collect();
        let longest = |v: &[String], least: usize| {
            v.iter().map(|t| t.chars().count()).fold(least, usize::max)
        };
        let [gx, gy] = launch.grid;
        let passes = u64::from(gx) * u64::from(gy);
        let widths = Widths {
            pass: passes.saturating_sub(1).to_string().len().max(4),
            block: block_key([gx.saturating_sub(1), gy.saturating_sub(1)], launch)
                .len()
                .max(5),
            loc: longest(&loc, 4),
            text: longest(&text, 11),
        };
        let w = widths;
        let _ = writeln!(
            out,
            "{:>9}  {:>pw$}  {:<UNIT_WIDTH$}  {:>bw$}  {:>4}  {:>5}  {:<lw$}  {:<tw$}  {:>8}  writes",
            "cycle",
            "pass",
            "unit",
            "block",
            "warp",
            "pc",
            "line",
            "instruction",
            "mask",
            pw = w.pass,
            bw = w.block,
            lw = w.loc,
            tw = w.text,
        );
        Tracer {
            unit: filter.unit.as_deref().map(parse_unit),
            filter,
            text,
            loc,
            written_names,
            widths,
            out,
            written: 0,
            arrivals: Vec::new(),
            launch: *launch,
        }
    }

    /// The source name of general register `reg` as instruction `pc` writes it
    /// (`%f2`, `%rd3.hi`, `%tmp0`), or its number (`%r8`) if the binary has none.
    pub fn reg_name(&self, pc: u32, reg: usize) -> String {
        self.name_of(pc, false, reg)
    }

    /// The source name of predicate `p` as instruction `pc` writes it.
    pub fn pred_name(&self, pc: u32, p: usize) -> String {
        self.name_of(pc, true, p)
    }

    fn name_of(&self, pc: u32, pred: bool, reg: usize) -> String {
        let named = self.written_names.get(pc as usize).and_then(|names| {
            names
                .iter()
                .find(|(p, r, _)| *p == pred && usize::from(*r) == reg)
        });
        match named {
            Some((_, _, name)) => format!("%{}", spu_io::quote::escape(name)),
            None if pred => format!("%p{reg}"),
            None => format!("%r{reg}"),
        }
    }

    /// True when an instruction of this unit, warp and cycle is to be traced.
    pub fn wants(&self, unit: UnitLabel, warp: u32, cycle: u64) -> bool {
        self.written <= self.filter.limit
            && self.filter.warp.is_none_or(|w| w == warp)
            && self
                .filter
                .cycles
                .is_none_or(|(a, b)| (a..=b).contains(&cycle))
            && self.unit.is_none_or(|u| u == Some(unit))
    }

    /// Notes that the value of instruction `pc` issued at `site` arrives at
    /// `cycle` (registers and values in `writes`); its line is written among the
    /// issue lines of that cycle. Words of one access arriving together share a line.
    pub fn arrival(&mut self, cycle: u64, site: Site, pc: u32, mask: u32, writes: &str) {
        if let Some(last) = self.arrivals.last_mut()
            && (last.0, last.1, last.2) == (cycle, site, pc)
        {
            last.4.push(' ');
            last.4.push_str(writes);
            return;
        }
        self.arrivals
            .push((cycle, site, pc, mask, format!("loaded {writes}")));
    }

    /// Writes the arrivals due by `cycle` (all of them with `u64::MAX`).
    fn arrivals_until(&mut self, cycle: u64) {
        if self.arrivals.iter().all(|a| a.0 > cycle) {
            return;
        }
        // Stable: arrivals of one cycle keep the order they were noted in.
        self.arrivals.sort_by_key(|a| a.0);
        let due = self.arrivals.partition_point(|a| a.0 <= cycle);
        let lines: Vec<_> = self.arrivals.drain(..due).collect();
        for (c, site, pc, mask, writes) in lines {
            self.write_line(c, site, pc, mask, &writes);
        }
    }

    /// Writes one line; `writes` describes the values written.
    pub fn line(&mut self, cycle: u64, site: Site, pc: u32, mask: u32, writes: &str) {
        self.arrivals_until(cycle);
        self.write_line(cycle, site, pc, mask, writes);
    }

    fn write_line(&mut self, cycle: u64, site: Site, pc: u32, mask: u32, writes: &str) {
        if self.written > self.filter.limit {
            return;
        }
        if self.written == self.filter.limit {
            let _ = writeln!(
                self.out,
                "... trace stopped after {} lines (raise --trace-limit or narrow the filters)",
                self.filter.limit
            );
            self.written += 1;
            return;
        }
        self.written += 1;
        let i = pc as usize;
        let w = self.widths;
        let block = site
            .block
            .map_or_else(|| "-".to_string(), |b| block_key(b, &self.launch));
        let line = format!(
            "{cycle:>9}  {:>pw$}  {:<UNIT_WIDTH$}  {block:>bw$}  {:>4}  {pc:>5}  {:<lw$}  {:<tw$}  {mask:08x}  {writes}",
            site.pass,
            unit_key(site.unit),
            site.warp,
            self.loc.get(i).map_or("", String::as_str),
            self.text.get(i).map_or("", String::as_str),
            pw = w.pass,
            bw = w.block,
            lw = w.loc,
            tw = w.text,
        );
        let _ = writeln!(self.out, "{}", line.trim_end());
    }

    /// Writes the arrivals still due and flushes the output.
    pub fn flush(&mut self) {
        self.arrivals_until(u64::MAX);
        let _ = self.out.flush();
    }
}

/// Where `--trace` goes: a file put in place only when the run is over (standard
/// output and devices are written as the trace grows). The first failed write (a
/// full disk, a closed pipe) stops the run; [`TraceOutput::finish`] reports it.
#[derive(Debug, Clone)]
pub struct TraceOutput {
    state: Arc<Mutex<TraceState>>,
}

#[derive(Debug)]
struct TraceState {
    out: Option<OutputFile>,
    error: Option<OutputError>,
}

impl TraceOutput {
    /// Opens the trace output; nothing is replaced until [`finish`](Self::finish).
    pub fn create(path: &Path) -> Result<TraceOutput, OutputError> {
        Ok(TraceOutput {
            state: Arc::new(Mutex::new(TraceState {
                out: Some(OutputFile::create(path)?),
                error: None,
            })),
        })
    }

    /// A writer for [`Tracer::new`].
    pub fn writer(&self) -> Box<dyn Write> {
        Box::new(TraceWriter(self.clone()))
    }

    /// The error that stopped the trace, if a write failed.
    pub fn take_error(&self) -> Option<OutputError> {
        self.lock().error.take()
    }

    /// Puts the trace in place, or reports why it could not be written.
    pub fn finish(self) -> Result<(), OutputError> {
        let mut state = self.lock();
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        match state.out.take() {
            Some(out) => out.commit(),
            None => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TraceState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct TraceWriter(TraceOutput);

impl Write for TraceWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut state = self.0.lock();
        if state.error.is_none()
            && let Some(out) = state.out.as_mut()
            && let Err(e) = out.write_all(buf)
        {
            let e = out.error(e);
            state.error = Some(e);
            // Nothing more can be traced: stop the run rather than simulate on.
            spu_io::interrupt::stop();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut state = self.0.lock();
        if state.error.is_none()
            && let Some(out) = state.out.as_mut()
            && let Err(e) = out.flush()
        {
            let e = out.error(e);
            state.error = Some(e);
        }
        Ok(())
    }
}

/// Up to four active lanes, each as `one(lane)`, then `...` if more are active.
fn first_lanes(mask: u32, one: impl Fn(usize) -> String) -> String {
    let mut shown: Vec<String> = Vec::new();
    for l in (0..32).filter(|l| mask >> l & 1 != 0) {
        if shown.len() == 4 {
            shown.push("...".into());
            break;
        }
        shown.push(one(l));
    }
    shown.join(" ")
}

/// Formats written lanes: up to four active lanes' values.
pub fn lanes_text(name: &str, values: &[u32; 32], mask: u32) -> String {
    format!(
        "{name} {}",
        first_lanes(mask, |l| format!("[{l}]={:#x}", values[l]))
    )
}

/// Formats a store: up to four active lanes' byte addresses in `space` and the
/// values stored there, as `[lane]@address=value`.
pub fn store_text(space: &str, addrs: &[u32; 32], values: &[u32; 32], mask: u32) -> String {
    let lanes = first_lanes(mask, |l| format!("[{l}]@{:#x}={:#x}", addrs[l], values[l]));
    format!("{space} store {lanes}")
}
