//! `spu-emu`: run a kernel on a simulated SPU grid and print a summary.

use anyhow::{Context, Result};
use clap::Parser;
use spu_emu::cli::session;
use spu_emu::cli::{RUN_EXAMPLES, RunArgs};
use spu_emu::load::npy;
use spu_emu::machine;
use spu_emu::observe::trace::{self, TraceFilter};
use spu_emu::observe::{report, stats};
use std::io::Write;
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
        spu-emu kernel.bin --max-cycles 1000000\n  \
        spu-emu kernel.spu --timeline t.svg             # unit activity over time\n  \
        spu-emu kernel.spu --trace - --trace-unit sm:0,0 --trace-cycles 0..200\n  \
        spu-emu --list-params                           # every machine key, unit and default\n\n\
        Run options:\n  {RUN_EXAMPLES}\n\n\
        Machine keys are documented in emu/MACHINE.md, the stats keys in emu/README.md\n\
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
    /// Write an instruction trace (cycle, unit, warp, PC, line, instruction, mask,
    /// written values) to FILE, or `-` for standard output.
    #[arg(long, value_name = "FILE|-")]
    trace: Option<PathBuf>,
    /// Trace only this unit: `sm:X,Y`, `iu:SIDE:I` or `dma:SIDE:I`.
    #[arg(long, value_name = "UNIT", requires = "trace")]
    trace_unit: Option<String>,
    /// Trace only this warp (index within its block).
    #[arg(long, value_name = "W", requires = "trace")]
    trace_warp: Option<u32>,
    /// Trace only cycles FIRST..LAST.
    #[arg(long, value_name = "FIRST..LAST", requires = "trace")]
    trace_cycles: Option<String>,
    /// Stop tracing after this many lines.
    #[arg(long, value_name = "N", default_value_t = 2000, requires = "trace")]
    trace_limit: u64,
    /// Print every machine parameter with its unit, default and valid values.
    #[arg(long)]
    list_params: bool,
    /// Print nothing on success (errors still go to standard error).
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => ExitCode::from(session::report_failure(e.as_ref())),
    }
}

fn run(cli: &Cli) -> Result<()> {
    if cli.list_params {
        print!("{}", machine::reference_markdown());
        return Ok(());
    }
    let path = cli.kernel.as_ref().context("no kernel given")?;
    let mut control = cli.run.control();
    control.activity = cli.timeline.is_some();
    let trace = match &cli.trace {
        None => None,
        Some(out) => {
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
            let sink: Box<dyn Write> = if out.as_os_str() == "-" {
                Box::new(std::io::stdout())
            } else {
                Box::new(std::io::BufWriter::new(
                    std::fs::File::create(out)
                        .with_context(|| format!("cannot write `{}`", out.display()))?,
                ))
            };
            Some((filter, sink))
        }
    };
    let s = session::run_traced(
        path,
        &cli.run,
        control,
        trace,
        !cli.quiet && cli.trace.is_none(),
        &mut |w| eprint!("{w}"),
    )?;
    if !cli.quiet {
        print!("{}", report::summary(&s.result, &s.image, &s.machine));
    }
    if let Some(out) = &cli.run.stats {
        let text = stats::Stats::new(&s.result, &s.image, &s.machine).to_json_text();
        if out.as_os_str() == "-" {
            std::io::stdout().write_all(text.as_bytes())?;
        } else {
            spu_emu::write_atomically(out, text.as_bytes())
                .with_context(|| format!("cannot write `{}`", out.display()))?;
        }
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
        spu_emu::write_atomically(out, svg.as_bytes())
            .with_context(|| format!("cannot write `{}`", out.display()))?;
    }
    for (index, file) in &s.image.dumps {
        let r = &s.image.memory.regions()[*index];
        npy::write(file, r.ty, &r.dims, s.image.memory.buffer(*index))?;
    }
    Ok(())
}
