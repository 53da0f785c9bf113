//! `spu-sweep`: plan, run (locally or on Slurm), follow, collect and plot
//! design-space sweeps of SPU kernels and machines.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use spu_sweep::local::{self, Show};
use spu_sweep::plan::{self, Plan};
use spu_sweep::spec::Spec;
use spu_sweep::store::{Status, Store};
use spu_sweep::supervise::{Bounds, ChildOutput, RUN_FAILED};
use spu_sweep::{Error, exec, slurm, status};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  spu-sweep plan experiments/table-6.3.toml                 # list the runs
  spu-sweep run experiments/table-6.3.toml                  # run them here, into table-6.3.sweep/
  spu-sweep run experiments/figure-7.1.toml --extra large   # include the large cases
  spu-sweep run SPEC --jobs 2 --timeout 600 --memory 2048   # 2 workers, per-run bounds
  spu-sweep run SPEC --slurm --partition short --runs-per-task 20 --max-parallel 50
  spu-sweep status table-6.3.sweep                          # done, failed, running, remaining
  spu-sweep collect table-6.3.sweep                         # results.csv, results.jsonl, plots
  spu-sweep plot table-6.3.sweep --x N --y offchip.words --series sync -o words.svg
  spu-sweep metrics table-6.3.sweep                         # every metric key with its unit

Exit status: 0 when every run finished, 3 when some runs failed (they are recorded),
130 after Ctrl-C (finished runs are kept; run again to resume), 1 on errors.
The spec format and the results folder are described in sweep/README.md.";

#[derive(Parser, Debug)]
#[command(
    name = "spu-sweep",
    version,
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
        #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// Wall-time bound per run in seconds [default: the spec's `timeout_s`, or 3600].
        #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
        timeout: Option<u64>,
        /// Memory bound per run in MiB [default: the spec's `memory_mib`, or 4096].
        #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(16..))]
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
        #[arg(long, value_name = "K", requires = "slurm", value_parser = clap::value_parser!(u32).range(1..))]
        max_parallel: Option<u32>,
        /// Runs per array task: many short runs share one task.
        #[arg(long, value_name = "M", default_value_t = 10, requires = "slurm", value_parser = clap::value_parser!(u64).range(1..))]
        runs_per_task: u64,
        /// Time limit per task in minutes [default: runs per task x timeout + 5].
        #[arg(long, value_name = "MINUTES", requires = "slurm")]
        time: Option<u64>,
        /// Another `#SBATCH` option, e.g. `--sbatch-arg=--account=abc` (repeatable).
        #[arg(
            long = "sbatch-arg",
            value_name = "ARG",
            requires = "slurm",
            allow_hyphen_values = true
        )]
        sbatch_args: Vec<String>,
        /// Wait until every task has ended, then write the reports.
        #[arg(long, requires = "slurm")]
        wait: bool,
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
    Plot {
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
        #[arg(long, value_parser = ["line", "bars"])]
        kind: Option<String>,
        /// The SVG file.
        #[arg(short, long, value_name = "FILE.svg", requires = "x")]
        output: Option<PathBuf>,
    },
    /// List the metric keys of the finished runs with units and the first run's values.
    Metrics {
        /// The results folder.
        dir: PathBuf,
    },
    /// Run one run (request on standard input); used by `run`.
    #[command(hide = true)]
    ExecRun {
        #[arg(long)]
        memory_mib: u64,
        #[arg(long)]
        cpu_s: u64,
    },
    /// Run one task of a Slurm batch; used by the job script.
    #[command(hide = true)]
    ExecTask {
        dir: PathBuf,
        #[arg(long)]
        batch: usize,
        #[arg(long)]
        task: usize,
    },
}

/// `1 run`, `2 runs`.
fn runs(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// Set by Ctrl-C.
static STOP: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::ExecRun { memory_mib, cpu_s } = cli.command {
        return exec_run(memory_mib, cpu_s);
    }
    match dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            if let Some(Error::Spec(s)) = e.downcast_ref::<Error>() {
                eprint!("{}", s.rendered());
            }
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
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
        } => {
            let (spec_file, plan, store) = prepare(&spec)?;
            let bounds = Bounds {
                timeout_s: timeout.unwrap_or(plan.timeout_s),
                memory_mib: memory.unwrap_or(plan.memory_mib),
            };
            let pending = pending(&store, &plan, retry_failed);
            report_plan(&plan, &store, pending.len(), &spec_file);
            if slurm {
                let opts = slurm::SlurmOptions {
                    partition,
                    max_parallel,
                    runs_per_task: runs_per_task as usize,
                    time_min: time,
                    sbatch_args,
                    wait,
                };
                cmd_slurm(&store, &plan, &pending, &opts, bounds)
            } else {
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
            let p = status::progress(&store, &plan);
            if format == "json" {
                println!("{}", serde_json::to_string_pretty(&p)?);
            } else {
                print!("{}", p.render());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Collect { dir } => {
            let store = Store::open(&dir)?;
            let plan = store.plan()?;
            finish(&store, &plan)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Plot {
            dir,
            x,
            y,
            series,
            filters,
            title,
            kind,
            output,
        } => cmd_plot(&dir, x, y, series, filters, title, kind, output),
        Command::Metrics { dir } => cmd_metrics(&dir),
        Command::ExecTask { dir, batch, task } => cmd_task(&dir, batch, task),
        Command::ExecRun { .. } => unreachable!("handled in main"),
    }
}

/// Reads and plans the spec and opens its results folder.
fn prepare(args: &SpecArgs) -> Result<(String, Plan, Store)> {
    let spec = Spec::read(&args.spec)?;
    let plan = plan::plan(&spec, &args.extras)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.sweep", spec.name)));
    let store = Store::create(&dir)?;
    store.write_plan(&plan, &spec.text)?;
    Ok((spec.file, plan, store))
}

/// Runs of the plan still to do, distinct, in plan order.
fn pending(store: &Store, plan: &Plan, retry_failed: bool) -> Vec<String> {
    let records = store.records(plan);
    plan.unique_ids()
        .into_iter()
        .filter(|id| match records.get(*id).map(|r| r.status) {
            Some(Status::Done) => false,
            Some(Status::Failed) => retry_failed,
            None => true,
        })
        .map(str::to_string)
        .collect()
}

fn report_plan(plan: &Plan, store: &Store, pending: usize, spec_file: &str) {
    let total = plan.unique_ids().len();
    eprintln!(
        "sweep `{}` ({spec_file}): {}, {} finished, {pending} to run; results in {}",
        plan.name,
        runs(total),
        total - pending,
        store.dir.display()
    );
}

fn cmd_plan(args: &SpecArgs, format: &str) -> Result<ExitCode> {
    let spec = Spec::read(&args.spec)?;
    let plan = plan::plan(&spec, &args.extras)?;
    if format == "json" {
        std::io::stdout().write_all(&spu_sweep::store::to_json(&plan))?;
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.sweep", spec.name)));
    let store = Store::open(&dir).ok();
    let records = store.as_ref().map(|s| s.records(&plan)).unwrap_or_default();
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    let mut header = vec!["#".to_string(), "run".to_string(), "status".to_string()];
    header.extend(plan.columns.iter().cloned());
    table.set_header(header);
    for (i, run) in plan.runs.iter().enumerate() {
        let status = records
            .get(&run.id)
            .map_or("pending", |r| r.status.name())
            .to_string();
        let mut row = vec![(i + 1).to_string(), run.id.clone(), status];
        row.extend(run.values.iter().cloned());
        table.add_row(row);
    }
    println!("{table}");
    let distinct = plan.unique_ids().len();
    let finished = records.len();
    println!(
        "{}{}; {finished} finished in {}",
        runs(plan.runs.len()),
        if distinct < plan.runs.len() {
            format!(" ({distinct} distinct)")
        } else {
            String::new()
        },
        dir.display()
    );
    let extras = spec.extra_names();
    if !extras.is_empty() {
        println!(
            "extra values: {} (include with --extra NAME)",
            extras.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn install_stop_handler() {
    // Without the handler Ctrl-C ends the process at once, which also keeps every
    // finished record (they are written atomically).
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed));
}

fn cmd_local(
    store: &Store,
    plan: &Plan,
    pending: &[String],
    jobs: usize,
    bounds: Bounds,
) -> Result<ExitCode> {
    if pending.is_empty() {
        eprintln!("nothing to simulate");
        return finish(store, plan);
    }
    install_stop_handler();
    let exe = std::env::current_exe().context("cannot find the spu-sweep executable")?;
    let pool = local::Pool {
        store,
        plan,
        exe: &exe,
        jobs,
        bounds,
        stop: &STOP,
        show: Show::Auto,
    };
    let s = local::execute(pool, pending)?;
    eprintln!(
        "{} done, {} failed{} in {:.1} s with {jobs} worker{}",
        s.done,
        s.failed,
        if s.unfinished > 0 {
            format!(", {} not run", s.unfinished)
        } else {
            String::new()
        },
        s.wall_s,
        if jobs == 1 { "" } else { "s" }
    );
    let code = finish(store, plan)?;
    if s.interrupted {
        eprintln!("interrupted: finished runs are kept; run the same command again to resume");
        return Ok(ExitCode::from(130));
    }
    Ok(code)
}

fn cmd_slurm(
    store: &Store,
    plan: &Plan,
    pending: &[String],
    opts: &slurm::SlurmOptions,
    bounds: Bounds,
) -> Result<ExitCode> {
    if pending.is_empty() {
        eprintln!("nothing to simulate");
        return finish(store, plan);
    }
    let exe = std::env::current_exe().context("cannot find the spu-sweep executable")?;
    let started = std::time::Instant::now();
    let batch = slurm::submit(
        store,
        &exe,
        plan,
        pending,
        opts,
        bounds.timeout_s,
        bounds.memory_mib,
    )?;
    let job = batch.job_id.clone().unwrap_or_default();
    if !opts.wait {
        eprintln!(
            "submitted job {job}: {} in {} array tasks; follow with `spu-sweep status {dir}`, gather with `spu-sweep collect {dir}`",
            runs(pending.len()),
            batch.tasks.len(),
            dir = store.dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "submitted job {job}: {} in {} array tasks; waiting (Ctrl-C stops waiting, not the job)",
        runs(pending.len()),
        batch.tasks.len()
    );
    install_stop_handler();
    let bar = (std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(pending.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} runs [{elapsed_precise} < {eta_precise}]",
            )
            // A constant template that is known to parse.
            .expect("static template"),
        );
        bar
    });
    let finished = slurm::wait(&job, Duration::from_secs(1), &STOP, &mut || {
        if let Some(bar) = &bar {
            let done = pending
                .iter()
                .filter(|id| store.record(id).is_some())
                .count();
            bar.set_position(done as u64);
        }
    })?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if !finished {
        eprintln!(
            "stopped waiting; job {job} goes on: follow with `spu-sweep status {dir}`, gather with `spu-sweep collect {dir}`",
            dir = store.dir.display()
        );
        return Ok(ExitCode::from(130));
    }
    eprintln!(
        "job {job}: {} in {} array tasks ended after {:.1} s",
        runs(pending.len()),
        batch.tasks.len(),
        started.elapsed().as_secs_f64()
    );
    finish(store, plan)
}

/// Writes the reports and says what came out; exit code 3 when runs failed.
fn finish(store: &Store, plan: &Plan) -> Result<ExitCode> {
    let c = spu_sweep::collect(store, plan)?;
    for e in &c.plot_errors {
        eprintln!("warning: {e}");
    }
    for m in &c.report.unknown_metrics {
        eprintln!(
            "warning: no finished run has the metric `{m}`; `spu-sweep metrics {}` lists them",
            store.dir.display()
        );
    }
    let records = store.records(plan);
    let failed = records
        .values()
        .filter(|r| r.status == Status::Failed)
        .count();
    eprintln!(
        "wrote {} and {}{}",
        store.dir.join("results.csv").display(),
        store.dir.join("results.jsonl").display(),
        if c.plots.is_empty() {
            String::new()
        } else {
            format!(
                " and {}",
                c.plots
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if c.report.missing > 0 {
        eprintln!("{} without a result yet", runs(c.report.missing));
    }
    if failed > 0 {
        eprintln!(
            "{} failed; `spu-sweep status {}` shows why",
            runs(failed),
            store.dir.display()
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn cmd_plot(
    dir: &Path,
    x: Option<String>,
    y: Option<String>,
    series: Vec<String>,
    filters: Vec<String>,
    title: Option<String>,
    kind: Option<String>,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    let store = Store::open(dir)?;
    let plan = store.plan()?;
    let (Some(x), Some(y)) = (x, y) else {
        if plan.plots.is_empty() {
            bail!("the spec defines no plots; give --x COLUMN --y METRIC -o FILE.svg");
        }
        let c = spu_sweep::collect(&store, &plan)?;
        if let Some(e) = c.plot_errors.into_iter().next() {
            return Err(e.into());
        }
        for p in &c.plots {
            println!("{}", p.display());
        }
        return Ok(ExitCode::SUCCESS);
    };
    let filters = filters
        .iter()
        .map(|f| {
            f.split_once('=')
                .map(|(c, v)| (c.to_string(), v.to_string()))
                .with_context(|| format!("`--where {f}` needs the form COLUMN=VALUE"))
        })
        .collect::<Result<Vec<_>>>()?;
    let output = output.unwrap_or_else(|| dir.join(format!("plots/{}.svg", y.replace('.', "_"))));
    let spec = spu_sweep::spec::PlotSpec {
        name: output
            .file_stem()
            .map_or("plot".into(), |s| s.to_string_lossy().into_owned()),
        x,
        y,
        series,
        filters,
        title,
        kind,
    };
    let svg = spu_sweep::plot::svg(&plan, &store.records(&plan), &spec)?;
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    spu_isa::format::write_atomically(&output, svg.as_bytes())
        .with_context(|| format!("cannot write `{}`", output.display()))?;
    println!("{}", output.display());
    Ok(ExitCode::SUCCESS)
}

fn cmd_metrics(dir: &Path) -> Result<ExitCode> {
    let store = Store::open(dir)?;
    let plan = store.plan()?;
    let records = store.records(&plan);
    let Some(first) = plan
        .runs
        .iter()
        .filter_map(|r| records.get(&r.id))
        .find(|r| r.status == Status::Done)
    else {
        bail!(
            "no run of `{}` has finished yet; metrics are listed from a finished run",
            dir.display()
        );
    };
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(["metric", "unit", &format!("run {}", first.id)]);
    for (k, v) in &first.metrics {
        table.add_row([
            k.clone(),
            spu_sweep::metrics::unit(k).unwrap_or("").to_string(),
            spu_sweep::metrics::cell(Some(v)),
        ]);
    }
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// One run in this process: bounded by rlimits, request on stdin, result on stdout.
fn exec_run(memory_mib: u64, cpu_s: u64) -> ExitCode {
    let fail = |message: String| {
        let out = ChildOutput::Failed {
            message,
            details: String::new(),
        };
        println!("{}", serde_json::to_string(&out).unwrap_or_default());
        ExitCode::from(RUN_FAILED as u8)
    };
    if let Err(e) = exec::limit_self(memory_mib, cpu_s) {
        return fail(e);
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().take(16 << 20).read_to_end(&mut input) {
        return fail(format!("cannot read the run request: {e}"));
    }
    let req: exec::Request = match serde_json::from_slice(&input) {
        Ok(r) => r,
        Err(e) => return fail(format!("not a run request: {e}")),
    };
    let (out, code) = match exec::execute(&req) {
        Ok(reply) => (ChildOutput::Done(reply), ExitCode::SUCCESS),
        Err(f) => (
            ChildOutput::Failed {
                message: f.message,
                details: f.details,
            },
            ExitCode::from(RUN_FAILED as u8),
        ),
    };
    // Metrics are numbers, strings and booleans: serialising cannot fail.
    println!(
        "{}",
        serde_json::to_string(&out).expect("run output serialises")
    );
    code
}

/// One task of a Slurm batch: its runs, one after another, logged line by line.
fn cmd_task(dir: &Path, batch: usize, task: usize) -> Result<ExitCode> {
    let store = Store::open(dir)?;
    let (b, plan, ids) = slurm::task(&store, batch, task)?;
    let ids: Vec<String> = ids
        .into_iter()
        .filter(|id| store.record(id).is_none_or(|r| r.status != Status::Done))
        .collect();
    install_stop_handler();
    let exe = std::env::current_exe().context("cannot find the spu-sweep executable")?;
    let bounds = Bounds {
        timeout_s: b.timeout_s,
        memory_mib: b.memory_mib,
    };
    println!(
        "spu-sweep task {task} of batch {batch} on {}: {}",
        spu_sweep::store::host(),
        runs(ids.len())
    );
    let pool = local::Pool {
        store: &store,
        plan: &plan,
        exe: &exe,
        jobs: 1,
        bounds,
        stop: &STOP,
        show: Show::Lines,
    };
    let s = local::execute(pool, &ids)?;
    println!("{} done, {} failed in {:.1} s", s.done, s.failed, s.wall_s);
    Ok(if s.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
