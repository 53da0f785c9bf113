//! The instruction trace (`--trace`): one line per issued warp instruction with
//! cycle, unit, warp, PC, source line, instruction, active mask and the values it
//! wrote, filtered by unit, warp and cycle range and capped so small kernels stay
//! readable.

use crate::machine::UnitLabel;
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
    let err = || CyclesSyntax::Form(text.to_string());
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
            text: text.to_string(),
            first: a,
            last: b,
        });
    }
    Ok((a, b))
}

fn unit_key(l: UnitLabel) -> String {
    match l {
        UnitLabel::Sm { x, y } => format!("sm:{x},{y}"),
        UnitLabel::Iu { side, index } => format!("iu:{side}:{index}"),
        UnitLabel::Dma { side, index } => format!("dma:{side}:{index}"),
    }
}

/// Writes trace lines.
pub struct Tracer {
    filter: TraceFilter,
    text: Vec<String>,
    loc: Vec<String>,
    out: Box<dyn Write>,
    written: u64,
}

impl fmt::Debug for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracer")
            .field("filter", &self.filter)
            .field("written", &self.written)
            .finish()
    }
}

impl Tracer {
    pub fn new(module: &Module, filter: TraceFilter, mut out: Box<dyn Write>) -> Tracer {
        let text = (0..module.code.len())
            .map(|pc| spu_asm::disasm::instr_text(module, pc).unwrap_or_default())
            .collect();
        let loc = module
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
                format!("{short}:{}", l.line)
            })
            .collect();
        let _ = writeln!(
            out,
            "{:>9}  {:<12} {:>4} {:>5}  {:<18} {:<36} {:>8}  writes",
            "cycle", "unit", "warp", "pc", "line", "instruction", "mask"
        );
        Tracer {
            filter,
            text,
            loc,
            out,
            written: 0,
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
            && self
                .filter
                .unit
                .as_ref()
                .is_none_or(|u| *u == unit_key(unit))
    }

    /// Writes one line; `writes` describes the values written.
    pub fn line(
        &mut self,
        cycle: u64,
        unit: UnitLabel,
        warp: u32,
        pc: u32,
        mask: u32,
        writes: &str,
    ) {
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
        let _ = writeln!(
            self.out,
            "{cycle:>9}  {:<12} {warp:>4} {pc:>5}  {:<18} {:<36} {mask:08x}  {writes}",
            unit_key(unit),
            self.loc.get(i).map_or("", String::as_str),
            self.text.get(i).map_or("", String::as_str),
        );
    }

    pub fn flush(&mut self) {
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

/// Formats written lanes: up to four active lanes' values.
pub fn lanes_text(name: &str, values: &[u32; 32], mask: u32) -> String {
    let mut shown: Vec<String> = Vec::new();
    for (l, v) in values.iter().enumerate() {
        if mask >> l & 1 != 0 {
            if shown.len() == 4 {
                shown.push("...".into());
                break;
            }
            shown.push(format!("[{l}]={v:#x}"));
        }
    }
    format!("{name} {}", shown.join(" "))
}
