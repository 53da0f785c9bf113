//! `spu-sweep`: plan, run (locally or on Slurm), follow, collect and plot
//! design-space sweeps of SPU kernels and machines. This file holds the command
//! line; [`commands`] carries each command out.

mod commands;

/// The files of a results folder besides `runs/`, `running/`, `slurm/` and
/// `plots/`: a plot may not be written over them.
const OWN_FILES: &[&str] = &[
    "plan.json",
    "spec.toml",
    "manifest.json",
    "results.csv",
    "results.jsonl",
];

use anyhow::Result;
use clap::{Parser, Subcommand};
use commands::{
    catch_termination, cmd_local, cmd_metrics, cmd_plan, cmd_plot, cmd_slurm, cmd_task, exec_run,
    finish, pending, prepare, report_plan,
};
use spu_sweep::plan::MAX_RUNS;
use spu_sweep::spec::{MAX_MEMORY_MIB, MAX_TIMEOUT_S, MIN_MEMORY_MIB};
use spu_sweep::store::Store;
use spu_sweep::supervise::Bounds;
use spu_sweep::{Error, slurm, status};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  spu-sweep plan experiments/table-6.3.toml --allow samples # list the runs
  spu-sweep run experiments/table-6.3.toml --allow samples  # run them here, into table-6.3.sweep/
  spu-sweep run experiments/section-6.2.2.toml --allow samples --extra large   # the large cases
  spu-sweep run SPEC --jobs 2 --timeout 600 --memory 2048   # 2 workers, per-run bounds
  spu-sweep run SPEC --slurm --partition short --runs-per-task 20 --max-parallel 50
  spu-sweep run SPEC --slurm --dry-run                      # write the job script, submit nothing
  spu-sweep status table-6.3.sweep                          # done, failed, running, remaining
  spu-sweep collect table-6.3.sweep                         # results.csv, results.jsonl, plots
  spu-sweep plot table-6.3.sweep --x N --y offchip.words --series sync -o words.svg
  spu-sweep metrics table-6.3.sweep                         # every metric key with its unit

A spec may name files (kernels, machine files, models) only in its own folder or
below it, or under a path given with --allow. Results are no more readable than the
files they were made from.

Exit status: 0 when every run finished, 3 when some runs failed (they are recorded),
130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP (finished runs are kept, the
runs stopped are not recorded; run again to resume), 1 on errors.
The spec format and the results folder are described in sweep/README.md.";

#[derive(Parser, Debug)]
#[command(
    name = "spu-sweep",
    version = concat!(env!("CARGO_PKG_VERSION"), " (simulator sources ", env!("SPU_SWEEP_SOURCES"), ")"),
    about = "Design-space sweeps: many SPU runs from one spec, on this machine or a Slurm cluster",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Debug)]
struct SpecArgs {
    /// The sweep spec (TOML).
    spec: PathBuf,
    /// Include the named extra values of the axes (`[axis.extra.NAME]`; repeatable).
    #[arg(long = "extra", value_name = "NAME")]
    extras: Vec<String>,
    /// Results folder [default: NAME.sweep, after the spec's name].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Let the spec name files under PATH, a folder or file outside the spec's
    /// own folder (repeatable).
    #[arg(long = "allow", value_name = "PATH")]
    allow: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct PlotArgs {
    /// The results folder.
    dir: PathBuf,
    #[arg(long, value_name = "COLUMN|METRIC", requires = "y")]
    x: Option<String>,
    #[arg(long, value_name = "METRIC", requires = "x")]
    y: Option<String>,
    /// Columns whose values make the series [default: machine, when it varies].
    #[arg(long, value_name = "COLUMN")]
    series: Vec<String>,
    /// Only runs whose column has this value (repeatable).
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    filters: Vec<String>,
    #[arg(long)]
    title: Option<String>,
    /// `line` or `bars` [default: lines for a numeric x, bars otherwise].
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(spu_sweep::spec::rules::PLOT_KINDS))]
    kind: Option<String>,
    /// The SVG file [default: DIR/plots/METRIC.svg]; never a file of the sweep (its
    /// plan, records, reports, spec or kernels).
    #[arg(short, long, value_name = "FILE.svg", requires = "x")]
    output: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the runs of a spec without running them (and which are already done).
    Plan {
        #[command(flatten)]
        spec: SpecArgs,
        /// `table` for people, `json` for the resolved plan.
        #[arg(long, default_value = "table", value_parser = ["table", "json"])]
        format: String,
    },
    /// Run every run of a spec that has no result yet, then write the reports.
    Run {
        #[command(flatten)]
        spec: SpecArgs,
        /// Runs at once [default: the number of cores].
        #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
        jobs: Option<u32>,
        /// Wall-time bound per run in seconds, at most a year [default: the spec's
        /// `timeout_s`, or 3600].
        #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_S), allow_negative_numbers = true)]
        timeout: Option<u64>,
        /// Memory bound per run in MiB, 16 to 2^30 [default: the spec's `memory_mib`,
        /// or 4096].
        #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(MIN_MEMORY_MIB..=MAX_MEMORY_MIB), allow_negative_numbers = true)]
        memory: Option<u64>,
        /// Run failed runs again (by default a failure is a result and is kept).
        #[arg(long)]
        retry_failed: bool,
        /// Submit the runs as one Slurm array job instead of running them here.
        #[arg(long)]
        slurm: bool,
        /// Slurm partition.
        #[arg(long, value_name = "P", requires = "slurm")]
        partition: Option<String>,
        /// Most array tasks running at once.
        #[arg(long, value_name = "K", requires = "slurm", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
        max_parallel: Option<u32>,
        /// Runs per array task: many short runs share one task.
        #[arg(long, value_name = "M", default_value_t = 10, requires = "slurm", value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS as u64), allow_negative_numbers = true)]
        runs_per_task: u64,
        /// Time limit per task in minutes [default: runs per task x timeout + 5].
        #[arg(long, value_name = "MINUTES", requires = "slurm", value_parser = clap::value_parser!(u64).range(1..=slurm::MAX_TASK_MINUTES), allow_negative_numbers = true)]
        time: Option<u64>,
        /// Another `#SBATCH` option, one argument, e.g. `--sbatch-arg=--account=abc`
        /// (repeatable; quoted in the script as sbatch reads it).
        #[arg(
            long = "sbatch-arg",
            value_name = "ARG",
            requires = "slurm",
            allow_hyphen_values = true
        )]
        sbatch_args: Vec<String>,
        /// Wait until every task has ended, then write the reports.
        #[arg(long, requires = "slurm", conflicts_with = "dry_run")]
        wait: bool,
        /// Write the job script (DIR/slurm/batch-B.sh) but submit nothing, to read it
        /// first; the same command without --dry-run submits.
        #[arg(long, requires = "slurm")]
        dry_run: bool,
    },
    /// How far a sweep is: done, failed, running, remaining; Slurm job states.
    Status {
        /// The results folder.
        dir: PathBuf,
        #[arg(long, default_value = "table", value_parser = ["table", "json"])]
        format: String,
    },
    /// Write results.csv, results.jsonl and the spec's plots from the finished runs.
    Collect {
        /// The results folder.
        dir: PathBuf,
    },
    /// Draw a metric against a column (or another metric) as SVG; without --x/--y,
    /// draw the spec's plots into DIR/plots.
    Plot(PlotArgs),
    /// List every metric key of the finished runs with its unit and the value of the first finished run that has it.
    Metrics {
        /// The results folder.
        dir: PathBuf,
    },
    /// Run one run (request on standard input); used by `run`.
    #[command(hide = true)]
    ExecRun {
        #[arg(long, allow_negative_numbers = true)]
        memory_mib: u64,
        #[arg(long, allow_negative_numbers = true)]
        cpu_s: u64,
        /// The supervising process: the run ends when it does.
        #[arg(long, allow_negative_numbers = true)]
        parent: Option<u32>,
    },
    /// Run one task of a Slurm batch; used by the job script `run --slurm` writes,
    /// which gives every option.
    #[command(hide = true)]
    ExecTask {
        /// The results folder.
        dir: PathBuf,
        /// The batch (`DIR/slurm/batch-B.json`).
        #[arg(long, value_name = "B", allow_negative_numbers = true)]
        batch: usize,
        /// The task of the batch, from 0.
        #[arg(long, value_name = "T", allow_negative_numbers = true)]
        task: usize,
        /// SHA-256 of the batch's plan (`DIR/slurm/batch-B.plan.json`) as submitted.
        #[arg(long, value_name = "HEX")]
        plan_sha256: String,
        /// SHA-256 of the batch's runs and bounds as submitted.
        #[arg(long, value_name = "HEX")]
        batch_sha256: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| spu_io::exit::after_parse(e));
    if let Command::ExecRun {
        memory_mib,
        cpu_s,
        parent,
    } = cli.command
    {
        return exec_run(memory_mib, cpu_s, parent);
    }
    // Before any thread starts (see `catch_termination`); `exec-run` returned above.
    catch_termination();
    match dispatch(cli.command) {
        // Work that ended as a signal stopped it (runs stopped, or a signal that came
        // as the command finished) exits as the signal asks.
        Ok(code) => spu_io::exit::unless_signalled(code, !commands::stop_reported()),
        Err(e) => {
            if let Some(Error::Spec(s)) = e.downcast_ref::<Error>() {
                spu_io::report!("{}", s.rendered());
            }
            // One line: a file name in the message cannot start a line of its own.
            spu_io::reportln!("error: {}", spu_io::quote::escape(&format!("{e:#}")));
            // An error a signal caused (a write it cancelled) exits as the signal asks.
            spu_io::interrupt::signalled().map_or(ExitCode::FAILURE, ExitCode::from)
        }
    }
}

fn dispatch(command: Command) -> Result<ExitCode> {
    match command {
        Command::Plan { spec, format } => cmd_plan(&spec, &format),
        Command::Run {
            spec,
            jobs,
            timeout,
            memory,
            retry_failed,
            slurm,
            partition,
            max_parallel,
            runs_per_task,
            time,
            sbatch_args,
            wait,
            dry_run,
        } => {
            let opts = slurm::SlurmOptions {
                partition,
                max_parallel,
                runs_per_task: runs_per_task as usize,
                time_min: time,
                sbatch_args,
                wait,
                dry_run,
            };
            if slurm {
                // Checked before the results folder is made.
                slurm::check_options(&opts)?;
                // The results folder, or the current one the default goes into.
                slurm::check_folder(spec.out.as_deref().unwrap_or(Path::new(".")))?;
            }
            let (spec_file, plan, store) = prepare(&spec)?;
            let bounds = Bounds {
                timeout_s: timeout.unwrap_or(plan.timeout_s),
                memory_mib: memory.unwrap_or(plan.memory_mib),
            };
            let pending = pending(&store, &plan, retry_failed)?;
            report_plan(&plan, &store, pending.len(), &spec_file);
            if slurm {
                cmd_slurm(&store, &plan, &pending, &opts, bounds)
            } else {
                // Runs here cannot have more memory than this process may give.
                let (bounds, note) = bounds.within_inherited_limit();
                if let Some(note) = note {
                    spu_io::reportln!("{note}");
                }
                let jobs = jobs.map_or_else(
                    || std::thread::available_parallelism().map_or(1, |n| n.get()),
                    |j| j as usize,
                );
                cmd_local(&store, &plan, &pending, jobs, bounds)
            }
        }
        Command::Status { dir, format } => {
            let store = Store::open(&dir)?;
            let plan = store.plan()?;
            let store = store.for_plan(&plan);
            let p = status::progress(&store, &plan);
            if format == "json" {
                let text = serde_json::to_string_pretty(&p)?;
                spu_io::outln!("{}", spu_io::quote::json(&text));
            } else {
                spu_io::exit::print_or_exit(&p.render());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Collect { dir } => {
            let store = Store::open(&dir)?;
            let plan = store.plan()?;
            let store = store.for_plan(&plan);
            finish(&store, &plan)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Plot(args) => cmd_plot(args),
        Command::Metrics { dir } => cmd_metrics(&dir),
        Command::ExecTask {
            dir,
            batch,
            task,
            plan_sha256,
            batch_sha256,
        } => cmd_task(
            &dir,
            batch,
            task,
            spu_sweep::task::Hashes {
                plan_sha256: &plan_sha256,
                batch_sha256: &batch_sha256,
            },
        ),
        Command::ExecRun { .. } => unreachable!("handled in main"),
    }
}
