//! `spu-emu`: run a kernel on a simulated SPU grid and print a summary.

use anyhow::{Context, Result};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser};
use spu_emu::cli::outputs::{self, Outputs, included};
use spu_emu::cli::{RUN_EXAMPLES, RunArgs};
use spu_emu::cli::{page, session};
use spu_emu::machine;
use spu_emu::observe::trace::{self, TraceFilter, TraceOutput};
use spu_emu::observe::{report, stats};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "spu-emu",
    version,
    about = "Run an SPU kernel on a cycle-level model of an SM grid",
    after_help = format!("Examples:\n  \
        spu-emu samples/vecadd.spu                      # assemble on the fly, run on 4x4\n  \
        spu-emu samples/stencil2d/stencil_pc.spu -D N=256 -D K=256 --stats run.json\n  \
        spu-emu samples/ptx/daxpy.spu -D N=100000 -D A=0.1 # 64-bit size_t and double\n  \
        spu-emu kernel.bin --max-cycles 1000000\n  \
        spu-emu kernel.spu --functional --spin-limit 1000000 # give up on a stuck loop sooner\n  \
        spu-emu kernel.spu --timeline t.svg             # unit activity over time\n  \
        spu-emu kernel.spu --html run.html              # replay the run in a browser\n  \
        spu-emu kernel.spu --trace - --trace-unit sm:0,0 --trace-cycles 0..200\n  \
        spu-emu --list-params                           # every machine key, unit and default\n\n\
        Run options:\n  {RUN_EXAMPLES}\n\n\
        Machine keys are documented in machine/MACHINE.md, the stats keys in emu/README.md\n\
        and the SPU runtime in emu/RUNTIME.md.")
)]
struct Cli {
    /// Kernel: .spu source (assembled on the fly) or .bin.
    #[arg(required_unless_present = "list_params")]
    kernel: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
    /// Draw each unit's activity over time (computing, waiting at syncs, moving
    /// tiles, idle) as an SVG timeline.
    #[arg(long, value_name = "FILE.svg")]
    timeline: Option<PathBuf>,
    /// Write a page that replays the run in a browser (one self-contained HTML
    /// file: the grid unit by unit over time, each unit's counters and links, the
    /// kernel's lines).
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Write an instruction trace (cycle, unit, warp, PC, line, instruction, mask,
    /// written values) to FILE, or `-` for standard output.
    #[arg(long, value_name = "FILE|-")]
    trace: Option<PathBuf>,
    /// Trace only this unit: `sm:X,Y`, `iu:SIDE:I` or `dma:SIDE:I`.
    #[arg(long, value_name = "UNIT", requires = "trace")]
    trace_unit: Option<String>,
    /// Trace only this warp (index within its block).
    #[arg(
        long,
        value_name = "W",
        requires = "trace",
        allow_negative_numbers = true
    )]
    trace_warp: Option<u32>,
    /// Trace only cycles FIRST..LAST.
    #[arg(long, value_name = "FIRST..LAST", requires = "trace")]
    trace_cycles: Option<String>,
    /// Stop tracing after this many lines.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2000,
        requires = "trace",
        allow_negative_numbers = true
    )]
    trace_limit: u64,
    /// Print every machine parameter with its unit, default and valid values.
    #[arg(long)]
    list_params: bool,
    /// Print no summary or progress on success (the kernel's `printf` output still
    /// goes to standard output, errors to standard error).
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| spu_io::exit::after_parse(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| spu_io::exit::after_parse(e));
    spu_io::interrupt::install_with_termination();
    match only_listing(&cli, &matches).and_then(|()| run(&cli)) {
        // A signal that came as the work was finishing still ends it as the signal asks.
        Ok(()) => spu_io::exit::unless_signalled(ExitCode::SUCCESS, true),
        Err(e) => ExitCode::from(session::report_failure(e.as_ref())),
    }
}

/// `--list-params` only lists: any other option given with it would be dropped.
fn only_listing(cli: &Cli, matches: &clap::ArgMatches) -> Result<()> {
    if !cli.list_params {
        return Ok(());
    }
    for arg in Cli::command().get_arguments() {
        let id = arg.get_id().as_str();
        if id == "list_params" || matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("`--{long}`"),
            (None, Some(short)) => format!("`-{short}`"),
            (None, None) => "a kernel".to_string(),
        };
        anyhow::bail!(
            "{name} does not apply to `--list-params`, which lists every machine key with its default and runs nothing; drop it"
        );
    }
    Ok(())
}

fn run(cli: &Cli) -> Result<()> {
    if cli.list_params {
        // The terminal's width when the shell exports it, else a common one.
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<u16>().ok())
            .map_or(100, |c| c.clamp(60, 400));
        spu_io::output::print(&machine::reference_table(width))?;
        return Ok(());
    }
    let path = cli.kernel.as_ref().context("no kernel given")?;
    let mut own_outputs = Vec::new();
    if let Some(t) = &cli.timeline {
        own_outputs.push((format!("`--timeline {}`", t.display()), t.clone()));
    }
    if let Some(t) = &cli.trace {
        own_outputs.push((format!("`--trace {}`", t.display()), t.clone()));
    }
    if let Some(h) = &cli.html {
        own_outputs.push((format!("`--html {}`", h.display()), h.clone()));
    }
    outputs::check_paths(Some(path), &cli.run, &[], &own_outputs)?;
    if cli.run.functional {
        if cli.html.is_some() {
            anyhow::bail!(
                "`--html` replays the run over time, which --functional does not model; drop --functional"
            );
        }
        if cli.timeline.is_some() {
            anyhow::bail!(
                "`--timeline` draws what each unit did cycle by cycle, which --functional does not model; drop --functional"
            );
        }
    }
    // Standard output carrying data (JSON, a trace, a page, an SVG, an array) gets
    // nothing else.
    let dumped_to_stdout = cli.run.dumps.iter().any(|d| {
        d.split_once('=')
            .is_some_and(|(_, file)| spu_io::output::is_stdout(std::path::Path::new(file)))
    });
    let stdout_carries_data = dumped_to_stdout
        || [&cli.run.stats, &cli.trace, &cli.html, &cli.timeline]
            .into_iter()
            .flatten()
            .any(|p| spu_io::output::is_stdout(p));
    let mut control = cli.run.control();
    control.activity = cli.timeline.is_some();
    let page_only_samples = cli.html.is_some() && page::record(&mut control);
    let filter = TraceFilter {
        unit: cli.trace_unit.clone(),
        warp: cli.trace_warp,
        cycles: cli
            .trace_cycles
            .as_deref()
            .map(trace::parse_cycles)
            .transpose()?,
        limit: cli.trace_limit,
    };
    let trace_out = cli.trace.as_deref().map(TraceOutput::create).transpose()?;
    let result = session::run_traced(
        path,
        &cli.run,
        control,
        trace_out.as_ref().map(|t| (filter, t.writer())),
        !cli.quiet && cli.trace.is_none(),
        &|files| outputs::check_paths(Some(path), &cli.run, &included(files), &own_outputs),
        &mut |w| spu_io::report!("{w}"),
    );
    let mut s = match result {
        Ok(s) => s,
        Err(e) => return Err(with_trace(e, trace_out, cli)),
    };
    // A trace that could not be written stopped the run: that is the error, and
    // no other output is written.
    if let Some(e) = trace_out.as_ref().and_then(TraceOutput::take_error) {
        return Err(e.into());
    }
    // Samples taken only for the page stay out of the statistics.
    let page_samples = page::samples(&mut s.result, page_only_samples);
    let mut files = Outputs::default();
    if let Some(out) = &cli.run.stats {
        let stats = stats::Stats::new(&s.result, &s.image, &s.machine);
        files.add_written(out, |w| stats.write_json(w))?;
    }
    if let (Some(out), Some(log)) = (&cli.timeline, &s.result.activity) {
        let labels: Vec<_> = s.result.units.iter().map(|u| u.label).collect();
        let title = format!(
            "{} on {}: unit activity over time",
            s.image.module.name,
            s.machine.summary()
        );
        let svg = spu_emu::observe::timeline::svg(
            log,
            &labels,
            s.result.cycles,
            s.result.passes[0],
            &title,
        );
        files.add(out, svg.as_bytes())?;
    }
    if let Some(out) = &cli.html {
        let run = page::run(&s, page_samples.as_ref(), path);
        let html = spu_emu::observe::html::page(&spu_emu::observe::html::PageData::single(run));
        files.add(out, html.as_bytes())?;
    }
    for (index, file) in &s.image.dumps {
        let r = &s.image.memory.regions()[*index];
        files.add_npy(file, r.ty, &r.dims, s.image.memory.buffer(*index))?;
    }
    if let Some(t) = trace_out {
        t.finish()?;
    }
    files.commit()?;
    // The kernel's output, even with --quiet (which silences the tool's own).
    session::print_output(&s.printed, stdout_carries_data)?;
    if !cli.quiet {
        let summary = report::summary(&s.result, &s.image, &s.machine);
        if stdout_carries_data {
            spu_io::report!("{summary}");
        } else {
            spu_io::output::print(&summary)?;
        }
    }
    Ok(())
}

/// A failed run's error, after dealing with its trace: a failed trace write is the
/// real cause; the trace of a run that stopped (a fault, a deadlock, the cycle
/// limit) is kept, as it shows how the kernel got there.
fn with_trace(
    e: session::SessionError,
    trace_out: Option<TraceOutput>,
    cli: &Cli,
) -> anyhow::Error {
    let Some(t) = trace_out else {
        return e.into();
    };
    if let Some(write_error) = t.take_error() {
        return write_error.into();
    }
    if let session::SessionError::Stopped {
        interrupted: false, ..
    } = e
    {
        if let Err(write_error) = t.finish() {
            return write_error.into();
        }
        if let Some(p) = cli.trace.as_ref().filter(|p| !spu_io::output::is_stdout(p)) {
            spu_io::reportln!(
                "note: the trace up to the stop is in `{}`",
                spu_io::quote::path(p)
            );
        }
    }
    // Otherwise (the kernel did not load, or Ctrl-C) the trace is dropped unwritten.
    e.into()
}
