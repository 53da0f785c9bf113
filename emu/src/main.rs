//! `spu-emu`: run a kernel on a simulated SPU grid and print a summary.

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use spu_emu::cli::{RUN_EXAMPLES, RunArgs};
use spu_emu::kernel::KernelError;
use spu_emu::{machine, npy, report, stats};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "spu-emu",
    version,
    about = "Run an SPU kernel on a cycle-level model of an SM grid",
    after_help = format!("Examples:\n  \
        spu-emu samples/vecadd.spu                      # assemble on the fly, run on 4x4\n  \
        spu-emu samples/matmul.spu --stats run.json\n  \
        spu-emu kernel.bin --max-cycles 1000000\n  \
        spu-emu --list-params                           # every machine key, unit and default\n\n\
        Run options:\n  {RUN_EXAMPLES}\n\n\
        Machine keys are documented in emu/MACHINE.md; the stats keys in emu/README.md.")
)]
struct Cli {
    /// Kernel: .spu source (assembled on the fly) or .bin.
    #[arg(required_unless_present = "list_params")]
    kernel: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
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
        Err(e) => {
            let text = format!("{e:#}");
            if !text.is_empty() {
                eprintln!("error: {text}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    if cli.list_params {
        print!("{}", machine::reference_markdown());
        return Ok(());
    }
    let path = cli.kernel.as_ref().context("no kernel given")?;
    let machine = cli.run.machine()?;
    let kernel = match spu_emu::read_kernel(path) {
        Ok(k) => k,
        Err(KernelError::Assembly { rendered, .. }) => {
            eprint!("{rendered}");
            bail!("`{}` does not assemble; nothing was run", path.display());
        }
        Err(e) => return Err(e.into()),
    };
    eprint!("{}", kernel.warnings);
    let mut image = spu_emu::load(kernel.module.clone(), &machine, &cli.run.load_options())?;

    let bar = (std::io::stdout().is_terminal() && !cli.quiet).then(|| {
        let bar = ProgressBar::new(image.launch.grid.iter().map(|&g| u64::from(g)).product());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos}/{len} blocks, cycle {msg} [{elapsed}]")
                .expect("static template"),
        );
        bar
    });
    let mut progress = |p: spu_emu::Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.blocks_done);
            bar.set_message(report::grouped(p.cycle));
        }
    };
    let outcome = spu_emu::simulate(&mut image, &machine, cli.run.control(), &mut progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let result = match outcome {
        Ok(r) => r,
        Err(stop) => {
            eprint!("{}", report::render_stop(&stop, &kernel, &image));
            bail!(
                "the run of `{}` stopped; no statistics or dumps were written",
                path.display()
            );
        }
    };
    if !cli.quiet {
        print!("{}", report::summary(&result, &image, &machine));
    }
    if let Some(out) = &cli.run.stats {
        let text = stats::Stats::new(&result, &image, &machine).to_json_text();
        if out.as_os_str() == "-" {
            std::io::stdout().write_all(text.as_bytes())?;
        } else {
            spu_emu::write_atomically(out, text.as_bytes())
                .with_context(|| format!("cannot write `{}`", out.display()))?;
        }
    }
    for (index, file) in &image.dumps {
        let r = &image.memory.regions()[*index];
        npy::write(file, r.ty, &r.dims, image.memory.buffer(*index))?;
    }
    Ok(())
}
