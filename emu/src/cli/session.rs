//! One command-line run, shared by `spu-emu` and `spu-prof`: resolve the machine,
//! read (or assemble) the kernel, load it, run it with a progress bar on terminals,
//! and turn every failure into a message ready to print.

use crate::RunControl;
use crate::cli::RunArgs;
use crate::load::kernel::{Kernel, KernelError, read_kernel_using};
use crate::load::{Image, LoadError, load};
use crate::machine::{Machine, MachineError};
use crate::observe::outcome::{Progress, RunResult};
use crate::observe::report;
use indicatif::{ProgressBar, ProgressStyle};
use spu_io::paths::PathError;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// A finished run and everything needed to report on it.
#[derive(Debug)]
pub struct Session {
    pub kernel: Kernel,
    pub machine: Machine,
    /// The image after the run (buffers hold the results).
    pub image: Image,
    pub result: RunResult,
    /// What the kernel's `printf` calls printed.
    pub printed: crate::exec::printlog::Printed,
}

/// Why a run did not complete.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    Kernel(KernelError),
    /// The kernel does not assemble; `rendered` holds the diagnostics.
    #[error("`{path}` does not assemble; nothing was run")]
    Assembly { path: String, rendered: String },
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An output names a file the kernel includes.
    #[error(transparent)]
    Paths(#[from] spu_io::paths::PathError),
    /// A trace filter that would match nothing.
    #[error(transparent)]
    TraceFilter(#[from] crate::observe::trace::FilterError),
    /// The run stopped; `rendered` explains where and why; `printed` is what the
    /// kernel's `printf` calls printed before.
    #[error("the run of `{path}` stopped; no statistics or dumps were written")]
    Stopped {
        path: String,
        rendered: String,
        interrupted: bool,
        printed: crate::exec::printlog::Printed,
    },
}

impl SessionError {
    /// Text to print before the one-line error (diagnostics, fault reports).
    pub fn details(&self) -> &str {
        match self {
            SessionError::Assembly { rendered, .. } | SessionError::Stopped { rendered, .. } => {
                rendered
            }
            _ => "",
        }
    }
}

impl SessionError {
    /// The process exit code: 130 after Ctrl-C (as shells report SIGINT), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            SessionError::Stopped {
                interrupted: true, ..
            } => 130,
            _ => 1,
        }
    }
}

/// Runs `kernel` with the run options. `included` may refuse the files the kernel
/// includes (outputs must not name them) before anything runs; `warnings` receives
/// assembler warnings and, after the run, the race checker's.
pub fn run(
    kernel_path: &Path,
    args: &RunArgs,
    control: RunControl,
    show_progress: bool,
    included: &dyn Fn(&[PathBuf]) -> Result<(), PathError>,
    warnings: &mut dyn FnMut(&str),
) -> Result<Session, SessionError> {
    run_traced(
        kernel_path,
        args,
        control,
        None,
        show_progress,
        included,
        warnings,
    )
}

/// [`run`] with an instruction trace written to `trace`.
pub fn run_traced(
    kernel_path: &Path,
    args: &RunArgs,
    control: RunControl,
    trace: Option<(crate::observe::trace::TraceFilter, Box<dyn std::io::Write>)>,
    show_progress: bool,
    included: &dyn Fn(&[PathBuf]) -> Result<(), PathError>,
    warnings: &mut dyn FnMut(&str),
) -> Result<Session, SessionError> {
    let machine = args.machine()?;
    spu_io::paths::check_include_dirs(&args.include_dirs)?;
    let kernel = read(kernel_path, &args.include_dirs, args.clang.as_deref())?;
    included(&kernel.included)?;
    warnings(&kernel.warnings);
    let options = crate::LoadOptions {
        recording_bytes: recording_bytes(&control, &machine),
        ..args.load_options()
    };
    let image = load(kernel.module.clone(), &machine, &options)?;
    let bar = (show_progress && std::io::stdout().is_terminal()).then(|| {
        let bar = ProgressBar::new(image.launch.grid.iter().map(|&g| u64::from(g)).product());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos}/{len} blocks, cycle {msg} [{elapsed}]")
                // A constant template that is known to parse.
                .expect("static template"),
        );
        bar
    });
    let mut progress = |p: Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.blocks_done);
            bar.set_message(report::grouped(p.cycle));
        }
    };
    let mut control = control;
    if control.interrupt.is_none() {
        control.interrupt = spu_io::interrupt::install();
    }
    if let Some((filter, _)) = &trace {
        filter.check(&machine, &image)?;
    }
    let tracer = trace.map(|(filter, out)| {
        crate::observe::trace::Tracer::new(&kernel.module, &image.launch, filter, out)
    });
    let session = simulate_loaded(
        kernel_path,
        kernel,
        machine,
        image,
        control,
        tracer,
        &mut progress,
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Ok(s) = &session {
        let races =
            crate::observe::races::render_races(&s.result.races, &s.kernel, &s.image.launch);
        if !races.is_empty() {
            warnings(&races);
        }
    }
    session
}

/// Runs a kernel file on a machine without progress output or Ctrl-C handling:
/// the library entry point for tests, benchmarks and other tools.
pub fn run_file(
    kernel_path: &Path,
    machine: &Machine,
    options: &crate::LoadOptions,
    control: RunControl,
) -> Result<Session, SessionError> {
    let kernel = read(kernel_path, &[], None)?;
    // The threads the run will use count in the memory checked before it.
    let options = crate::LoadOptions {
        host_threads: options.host_threads.max(control.threads),
        recording_bytes: recording_bytes(&control, machine),
        ..options.clone()
    };
    let image = load(kernel.module.clone(), machine, &options)?;
    simulate_loaded(
        kernel_path,
        kernel,
        machine.clone(),
        image,
        control,
        None,
        &mut |_| {},
    )
}

/// The most the run's recordings may take, by their bounds: the samples of
/// `--sample-interval` (and those a page takes) and the activity of `--html` and
/// `--timeline`, each about three times over for the outputs made from them.
fn recording_bytes(control: &RunControl, machine: &Machine) -> u64 {
    use crate::observe::{activity, counters::ComponentCounts, samples};
    let (cols, rows) = (machine.grid_cols as usize, machine.grid_rows as usize);
    // SMs and the boundary units around them.
    let units = cols * rows + 2 * (cols + rows);
    let snapshots = control.sample_interval.map_or(0, |_| {
        units * control.sample_limit.min(samples::per_unit_limit(units))
    });
    let segments = if control.activity {
        units * (activity::MAX_RECORDED / units).max(1024)
    } else {
        0
    };
    let bytes = snapshots * std::mem::size_of::<(ComponentCounts, u64)>()
        + segments * std::mem::size_of::<activity::Segment>();
    3 * bytes as u64
}

/// Reads or assembles a kernel, keeping assembler diagnostics for printing.
fn read(
    kernel_path: &Path,
    include_dirs: &[PathBuf],
    clang: Option<&Path>,
) -> Result<Kernel, SessionError> {
    read_kernel_using(kernel_path, include_dirs, clang).map_err(|e| match e {
        KernelError::Assembly { rendered, .. } => SessionError::Assembly {
            path: spu_io::quote::path(kernel_path),
            rendered,
        },
        other => SessionError::Kernel(other),
    })
}

/// Runs a loaded image and turns a stop into a rendered error.
fn simulate_loaded(
    kernel_path: &Path,
    kernel: Kernel,
    machine: Machine,
    mut image: Image,
    control: RunControl,
    tracer: Option<crate::observe::trace::Tracer>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Session, SessionError> {
    let run = crate::simulate_traced(&mut image, &machine, control, tracer, progress);
    let printed = image.program.printed.take();
    match run {
        Ok(result) => Ok(Session {
            kernel,
            machine,
            image,
            result,
            printed,
        }),
        Err(stop) => Err(SessionError::Stopped {
            rendered: crate::observe::stopped::render_stop(&stop, &kernel, &image),
            interrupted: matches!(*stop, crate::Stop::Interrupted { .. }),
            path: spu_io::quote::path(kernel_path),
            printed,
        }),
    }
}

/// Prints a command-line failure: the details a session error carries
/// (diagnostics, fault reports), then `error:` with the whole cause chain. Returns
/// the process exit code.
pub fn report_failure(error: &(dyn std::error::Error + 'static)) -> u8 {
    let special = spu_io::exit::special_code(error);
    if special == Some(spu_io::exit::CLOSED_PIPE) {
        // The reader of our output went away: end quietly, as other tools do.
        return spu_io::exit::CLOSED_PIPE;
    }
    let session = error.downcast_ref::<SessionError>();
    if let Some(SessionError::Stopped { printed, .. }) = session {
        // What the kernel printed before the stop is its output, as on a GPU.
        if print_output(printed, false).is_err() {
            return spu_io::exit::CLOSED_PIPE;
        }
    }
    if let Some(s) = session {
        spu_io::report!("{}", s.details());
    }
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    spu_io::reportln!("error: {message}");
    special.unwrap_or_else(|| session.map_or(1, SessionError::exit_code))
}

/// The kernel's text as written: raw into a file or pipe (it is data), but on a
/// terminal with what would drive it (ESC and OSC sequences, other control and
/// invisible characters) escaped, line breaks and tabs kept, as all user text is.
pub fn for_terminal(text: &[u8], terminal: bool) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    if !terminal {
        return Cow::Borrowed(text);
    }
    let lossy = String::from_utf8_lossy(text);
    match spu_io::quote::escape_lines(&lossy) {
        Cow::Borrowed(_) if matches!(lossy, Cow::Borrowed(_)) => Cow::Borrowed(text),
        t => Cow::Owned(t.into_owned().into_bytes()),
    }
}

/// Writes what the kernel's `printf` calls printed: to standard output, or to
/// standard error when standard output carries data (`--stats -`); a note about
/// dropped texts goes to standard error.
pub fn print_output(
    printed: &crate::exec::printlog::Printed,
    to_stderr: bool,
) -> Result<(), spu_io::output::OutputError> {
    use std::io::{IsTerminal, Write};
    if !printed.text.is_empty() {
        let (written, path) = if to_stderr {
            let mut e = std::io::stderr().lock();
            let text = for_terminal(&printed.text, e.is_terminal());
            (
                e.write_all(&text).and_then(|()| e.flush()),
                "standard error",
            )
        } else {
            let mut o = std::io::stdout().lock();
            let text = for_terminal(&printed.text, o.is_terminal());
            (
                o.write_all(&text).and_then(|()| o.flush()),
                "standard output",
            )
        };
        written.map_err(|error| spu_io::output::OutputError::Io {
            path: path.into(),
            error,
        })?;
    }
    if let Some(note) = printed.dropped_note() {
        spu_io::reportln!("{note}");
    }
    Ok(())
}
