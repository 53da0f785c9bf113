//! What each `spu-sweep` command does, given its parsed arguments: planning and
//! opening the results folder, local and Slurm runs, reports, plots, metrics, and
//! the hidden commands the runs themselves execute (`exec-run`, `exec-task`).

use crate::{PlotArgs, SpecArgs};
use anyhow::{Context, Result, bail};
use spu_sweep::local::{self, Show};
use spu_sweep::plan::{self, Plan};
use spu_sweep::spec::Spec;
use spu_sweep::store::{Status, Store, StoreError};
use spu_sweep::supervise::{Bounds, ChildOutput, RUN_FAILED};
use spu_sweep::{exec, slurm};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `1 run`, `2 runs`.
fn runs(n: usize) -> String {
    spu_sweep::count(n, "run")
}

/// Set by Ctrl-C, SIGTERM or SIGHUP while runs go on.
static STOP: AtomicBool = AtomicBool::new(false);
/// A command reported that it stopped (see [`stop_reported`]).
static STOP_REPORTED: AtomicBool = AtomicBool::new(false);
/// True once something polls [`STOP`] (runs, or waiting for a Slurm job).
static ARMED: AtomicBool = AtomicBool::new(false);

/// SIGTERM and SIGHUP (`kill`, `timeout`, batch systems, a closed terminal) stop
/// runs as Ctrl-C does: children killed, their markers removed, finished records
/// kept. Before runs start (while planning compiles a `.cu` kernel with clang, or
/// a report is written) they, and Ctrl-C, end the process at once, stopping clang
/// and removing temporaries first. Call it before any thread starts.
pub fn catch_termination() {
    spu_io::process::catch_termination(on_stop_signal);
    let _ = ctrlc::set_handler(|| on_stop_signal(2));
}

fn on_stop_signal(signal: i32) {
    if ARMED.load(Ordering::SeqCst) {
        // The exit code is 128 plus the signal, however the command ends.
        spu_io::interrupt::note(signal);
        STOP.store(true, Ordering::SeqCst);
    } else {
        spu_io::interrupt::end(128 + signal);
    }
}

/// The exit code of a command that stopped (and said so): 128 plus the signal
/// that stopped it.
fn stopped_code() -> ExitCode {
    STOP_REPORTED.store(true, Ordering::SeqCst);
    ExitCode::from(spu_io::interrupt::stopped_code())
}

/// True when the command ended by reporting its stop; false when a signal came
/// too late for it to notice (as it finished), and nothing said so yet.
pub fn stop_reported() -> bool {
    STOP_REPORTED.load(Ordering::SeqCst)
}

/// Reads the spec, letting it name the paths the command line allows.
fn read_spec(args: &SpecArgs) -> Result<Spec> {
    let mut spec = Spec::read(&args.spec)?;
    spec.allowed = args.allow.clone();
    Ok(spec)
}

/// Reads and plans the spec and opens its results folder.
pub fn prepare(args: &SpecArgs) -> Result<(String, Plan, Store)> {
    let spec = read_spec(args)?;
    let plan = plan::plan(&spec, &args.extras)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.sweep", spec.name)));
    spu_sweep::store::refuse_file_as_folder(&dir, args.out.is_some(), &args.spec, &spec.name)?;
    let store = Store::create(&dir)?.for_plan(&plan);
    refuse_inputs_among_own_files(&store, &plan)?;
    store.write_plan(&plan, &spec.text)?;
    Ok((spec.file, plan, store))
}

/// Runs of the plan still to do, distinct, in plan order; refused, before any
/// run, when a folder stands where a record would be written.
pub fn pending(store: &Store, plan: &Plan, retry_failed: bool) -> Result<Vec<String>> {
    let (records, damaged) = store.scan(plan);
    if damaged.iter().any(|d| d.folder) {
        bail!("{}", spu_sweep::status::redo_damaged(&damaged));
    }
    Ok(plan
        .unique_ids()
        .into_iter()
        .filter(|id| match records.get(*id).map(|r| r.status) {
            Some(Status::Done | Status::Refused) => false,
            Some(Status::Failed) => retry_failed,
            None => true,
        })
        .map(str::to_string)
        .collect())
}

pub fn report_plan(plan: &Plan, store: &Store, pending: usize, spec_file: &str) {
    let total = plan.unique_ids().len();
    spu_io::reportln!(
        "sweep `{}` ({}): {}, {} finished, {pending} to run; results in {}",
        plan.name,
        spu_io::quote::escape(spec_file),
        runs(total),
        total - pending,
        spu_io::quote::path(&store.dir)
    );
}

pub fn cmd_plan(args: &SpecArgs, format: &str) -> Result<ExitCode> {
    let spec = read_spec(args)?;
    let plan = plan::plan(&spec, &args.extras)?;
    if format == "json" {
        let json = spu_sweep::plan::file::to_pretty(&plan);
        let text = spu_io::quote::json(std::str::from_utf8(&json)?);
        std::io::stdout().write_all(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.sweep", spec.name)));
    // Without a sweep there yet every run is pending; a sweep whose folders
    // are not its own is refused, as by every command that reads it.
    let store = match Store::open(&dir) {
        Ok(store) => Some(store),
        Err(e @ (StoreError::LinkedFolder(_) | StoreError::NotAFolder(_))) => return Err(e.into()),
        Err(_) => None,
    };
    let (records, damaged) = store.as_ref().map(|s| s.scan(&plan)).unwrap_or_default();
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    let escape = |text: &String| spu_io::quote::escape(text).into_owned();
    let mut header = vec!["#".to_string(), "run".to_string(), "status".to_string()];
    header.extend(plan.columns.iter().map(escape));
    table.set_header(header);
    for (i, run) in plan.runs.iter().enumerate() {
        let status = match records.get(&run.id) {
            Some(r) => r.status.name(),
            None if damaged.iter().any(|d| d.run == run.id) => "damaged",
            None => "pending",
        }
        .to_string();
        let mut row = vec![(i + 1).to_string(), run.id.clone(), status];
        row.extend(run.values.iter().map(escape));
        table.add_row(row);
    }
    spu_io::outln!("{table}");
    let distinct = plan.unique_ids().len();
    let finished = records.len();
    spu_io::outln!(
        "{}{}; {finished} finished in {}",
        runs(plan.runs.len()),
        if distinct < plan.runs.len() {
            format!(" ({distinct} distinct)")
        } else {
            String::new()
        },
        spu_io::quote::path(&dir)
    );
    let extras = spec.extra_names();
    if !extras.is_empty() {
        spu_io::outln!(
            "extra values: {} (include with --extra NAME)",
            extras.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn install_stop_handler() {
    // From now on Ctrl-C, SIGTERM and SIGHUP stop the runs (`catch_termination`).
    ARMED.store(true, Ordering::SeqCst);
}

pub fn cmd_local(
    store: &Store,
    plan: &Plan,
    pending: &[String],
    jobs: usize,
    bounds: Bounds,
) -> Result<ExitCode> {
    if pending.is_empty() {
        spu_io::reportln!("nothing to simulate");
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
    spu_io::reportln!(
        "{} done, {} failed{}{} in {:.1} s with {jobs} worker{}",
        s.done,
        s.failed,
        if s.refused > 0 {
            format!(", {} refused by the kernel's preconditions", s.refused)
        } else {
            String::new()
        },
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
        spu_io::reportln!(
            "interrupted: finished runs are kept; run the same command again to resume"
        );
        return Ok(stopped_code());
    }
    Ok(code)
}

pub fn cmd_slurm(
    store: &Store,
    plan: &Plan,
    pending: &[String],
    opts: &slurm::SlurmOptions,
    bounds: Bounds,
) -> Result<ExitCode> {
    if pending.is_empty() {
        spu_io::reportln!("nothing to simulate");
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
    if opts.dry_run {
        spu_io::reportln!(
            "wrote {}: {} in {}, not submitted; submit it with the same command without --dry-run",
            spu_io::quote::path(&store.dir.join(format!("slurm/batch-{}.sh", batch.batch))),
            runs(pending.len()),
            spu_sweep::count(batch.tasks.len(), "array task")
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !opts.wait {
        spu_io::reportln!(
            "submitted job {job}: {} in {}; follow with `spu-sweep status {dir}`, gather with `spu-sweep collect {dir}`",
            runs(pending.len()),
            spu_sweep::count(batch.tasks.len(), "array task"),
            dir = spu_sweep::arg_path(&store.dir)
        );
        return Ok(ExitCode::SUCCESS);
    }
    spu_io::reportln!(
        "submitted job {job}: {} in {}; waiting (Ctrl-C stops waiting, not the job)",
        runs(pending.len()),
        spu_sweep::count(batch.tasks.len(), "array task")
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
        spu_io::reportln!(
            "stopped waiting; job {job} goes on: follow with `spu-sweep status {dir}`, gather with `spu-sweep collect {dir}`",
            dir = spu_sweep::arg_path(&store.dir)
        );
        return Ok(stopped_code());
    }
    spu_io::reportln!(
        "job {job}: {} in {} ended after {:.1} s",
        runs(pending.len()),
        spu_sweep::count(batch.tasks.len(), "array task"),
        started.elapsed().as_secs_f64()
    );
    finish(store, plan)
}

/// Writes the reports and says what came out; exit code 3 when runs failed.
pub fn finish(store: &Store, plan: &Plan) -> Result<ExitCode> {
    let c = spu_sweep::collect(store, plan)?;
    for e in &c.plot_errors {
        spu_io::reportln!("warning: {}", spu_io::quote::escape(&e.to_string()));
    }
    for e in c.table_errors.iter().chain(&c.table_warnings) {
        spu_io::reportln!("warning: {}", spu_io::quote::escape(&e.to_string()));
    }
    for m in &c.report.unknown_metrics {
        spu_io::reportln!(
            "warning: no finished run has the metric `{m}`; `spu-sweep metrics {}` lists them",
            spu_sweep::arg_path(&store.dir)
        );
    }
    let records = store.records(plan);
    let failed = records
        .values()
        .filter(|r| r.status == Status::Failed)
        .count();
    spu_io::reportln!(
        "wrote {} and {}{}",
        spu_io::quote::path(&store.dir.join("results.csv")),
        spu_io::quote::path(&store.dir.join("results.jsonl")),
        if c.plots.is_empty() {
            String::new()
        } else {
            format!(
                " and {}",
                c.plots
                    .iter()
                    .map(|p| spu_io::quote::path(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if !c.tables.is_empty() {
        spu_io::reportln!(
            "wrote {} into {}",
            spu_sweep::count(c.tables.len(), "summary table"),
            spu_io::quote::path(&store.dir.join("tables.md"))
        );
    }
    if c.report.missing > 0 {
        spu_io::reportln!("{} without a result yet", runs(c.report.missing));
    }
    let damaged = store.scan(plan).1;
    for d in damaged.iter().take(20) {
        spu_io::reportln!(
            "warning: the record `{}` of run {} is damaged, so the run counts as not run: {}",
            d.file,
            d.run,
            spu_io::quote::escape(&d.why)
        );
    }
    if damaged.len() > 20 {
        spu_io::reportln!(
            "warning: ... and {} more damaged records",
            damaged.len() - 20
        );
    }
    if !damaged.is_empty() {
        spu_io::reportln!("{}", spu_sweep::status::redo_damaged(&damaged));
    }
    if failed > 0 {
        spu_io::reportln!(
            "{} failed; `spu-sweep status {}` shows why",
            runs(failed),
            spu_sweep::arg_path(&store.dir)
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn cmd_plot(args: PlotArgs) -> Result<ExitCode> {
    let PlotArgs {
        dir,
        x,
        y,
        series,
        filters,
        title,
        kind,
        output,
    } = args;
    let dir = dir.as_path();
    let store = Store::open(dir)?;
    let plan = store.plan()?;
    let store = store.for_plan(&plan);
    let (Some(x), Some(y)) = (x, y) else {
        if plan.plots.is_empty() {
            bail!("the spec defines no plots; give --x COLUMN --y METRIC -o FILE.svg");
        }
        let c = spu_sweep::collect(&store, &plan)?;
        if let Some(e) = c.plot_errors.into_iter().next() {
            return Err(e.into());
        }
        for p in &c.plots {
            spu_io::outln!("{}", spu_io::quote::path(p));
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
    // Without `-o` the plot is a file of the results folder's own, in its
    // `plots/` folder, made if missing.
    let own = output
        .is_none()
        .then(|| format!("plots/{}.svg", y.replace('.', "_")));
    let output = output.unwrap_or_else(|| dir.join(own.as_deref().unwrap_or_default()));
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
        x_label: None,
        y_label: None,
    };
    // A wrong column or metric is reported before anything about the output.
    let svg = spu_sweep::plot::svg(&plan, &store.records(&plan), &spec)?;
    if own.is_some() {
        store.own_dir(Path::new("plots"))?;
    }
    refuse_inputs(&store, &plan, &output)?;
    if let Some(name) = own {
        store.write(&name, svg.as_bytes())?;
        spu_io::outln!("{}", spu_io::quote::path(&output));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", spu_io::quote::path(parent)))?;
    }
    // The output error names the file itself.
    spu_io::output::write_file_restricted(&output, svg.as_bytes(), store.mode())?;
    spu_io::outln!("{}", spu_io::quote::path(&output));
    Ok(ExitCode::SUCCESS)
}

/// Refuses a plot output that would overwrite a file of the sweep: the results
/// folder's own files (plan, spec copy, manifest, records, reports, Slurm batches)
/// or a file the plan was made from; and one that would be a new file among the
/// results folder's own, or inside its [`STATE_DIRS`].
fn refuse_inputs(store: &Store, plan: &Plan, output: &Path) -> Result<()> {
    let mut inputs = plan_inputs(plan);
    let mut found: Vec<PathBuf> = crate::OWN_FILES
        .iter()
        .chain(&["tables.md"])
        .map(|f| store.dir.join(f))
        .collect();
    for sub in STATE_DIRS.iter().chain(&["tables"]) {
        files_under(&store.dir.join(sub), &mut found);
    }
    for f in found {
        inputs.push((
            format!(
                "`{}`, a file of the sweep's results folder",
                spu_io::quote::path(&f)
            ),
            f,
        ));
    }
    let inputs: Vec<(String, &Path)> = inputs
        .iter()
        .map(|(w, p)| (w.clone(), p.as_path()))
        .collect();
    spu_io::paths::check_distinct(
        &inputs,
        &[(format!("`-o {}`", spu_io::quote::path(output)), output)],
    )?;
    if let Some(place) = own_place(store, output) {
        bail!(
            "`-o {}` is {place} of the results folder `{}`, which spu-sweep keeps for itself; write the plot elsewhere (without `-o` it goes to `plots/`)",
            spu_io::quote::path(output),
            spu_io::quote::path(&store.dir)
        );
    }
    Ok(())
}

/// Folders of a results folder that hold its state: run records, marks of
/// running runs, Slurm batches and their logs.
const STATE_DIRS: &[&str] = &["runs", "running", "slurm"];

/// How a message names the place `output` would be written to, if that is one of
/// the results folder's own files or inside one of its [`STATE_DIRS`], whether or
/// not the file exists yet (the folder that would hold it is resolved, links and
/// all).
fn own_place(store: &Store, output: &Path) -> Option<String> {
    let name = output.file_name()?;
    let parent = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let real = parent.canonicalize().ok()?.join(name);
    let dir = store.dir.canonicalize().ok()?;
    let rel = real.strip_prefix(&dir).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_str()?;
    let last = parts.next().is_none();
    // The summary tables (`tables.md`, `tables/`) are the reports `collect`
    // rewrites: not for a plot either.
    if STATE_DIRS.contains(&first) || first == "tables" {
        Some(if last {
            format!("the folder `{first}/`")
        } else {
            format!("inside `{first}/`")
        })
    } else if last && (crate::OWN_FILES.contains(&first) || first == "tables.md") {
        Some(format!("the file `{first}`"))
    } else {
        None
    }
}

/// Refuses a sweep one of whose inputs is a file `run` and `collect` write in the
/// results folder (a machine file kept as `DIR/spec.toml` would be replaced by
/// the spec), before anything is written.
fn refuse_inputs_among_own_files(store: &Store, plan: &Plan) -> Result<()> {
    let mut own: Vec<PathBuf> = crate::OWN_FILES
        .iter()
        .chain(&["tables.md"])
        .map(|f| store.dir.join(f))
        .collect();
    for sub in ["plots", "tables"] {
        files_under(&store.dir.join(sub), &mut own);
    }
    let own: Vec<(PathBuf, (u64, u64))> = own
        .into_iter()
        .filter_map(|p| Some((p.clone(), spu_sweep::store::file_id(&p)?)))
        .collect();
    // The folders whose files spu-sweep writes (records, job scripts and logs,
    // plots, tables), whether or not a file of that name exists yet.
    let folders: Vec<PathBuf> = ["runs", "running", "slurm", "plots", "tables"]
        .iter()
        .filter_map(|sub| store.dir.join(sub).canonicalize().ok())
        .collect();
    for (what, input) in plan_inputs(plan) {
        if let Ok(real) = input.canonicalize()
            && let Some(folder) = folders.iter().find(|f| real.starts_with(f))
        {
            anyhow::bail!(
                "{what} is in `{}`, a folder whose files spu-sweep writes; move it out of the results folder, or give another `--out`",
                spu_io::quote::path(folder)
            );
        }
        let Some(input_id) = spu_sweep::store::file_id(&input) else {
            continue;
        };
        if let Some((file, _)) = own.iter().find(|(_, o)| *o == input_id) {
            anyhow::bail!(
                "{what} is also `{}`, a file spu-sweep writes in the results folder; move it out of the results folder, or give another `--out`",
                spu_io::quote::path(file)
            );
        }
    }
    Ok(())
}

/// The files a plan was made from (spec, kernels, the files they include, machine
/// files, models), each with how a message names it.
fn plan_inputs(plan: &Plan) -> Vec<(String, PathBuf)> {
    let mut inputs: Vec<(String, PathBuf)> = plan
        .inputs
        .iter()
        .map(|p| {
            (
                format!("`{}`, an input of the sweep", spu_io::quote::path(p)),
                p.clone(),
            )
        })
        .collect();
    for run in &plan.runs {
        inputs.push((
            format!(
                "`{}`, a kernel of the sweep",
                spu_io::quote::path(&run.kernel)
            ),
            run.kernel.clone(),
        ));
        if Path::new(&run.model).is_absolute() {
            inputs.push((
                format!(
                    "`{}`, an energy model of the sweep",
                    spu_io::quote::escape(&run.model)
                ),
                PathBuf::from(&run.model),
            ));
        }
    }
    inputs
}

/// Every file under `dir` (not following links).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

pub fn cmd_metrics(dir: &Path) -> Result<ExitCode> {
    let store = Store::open(dir)?;
    let plan = store.plan()?;
    let store = store.for_plan(&plan);
    let records = store.records(&plan);
    // Every key of every finished run (a functional run has no energy, cycles or
    // time, a timing run has them), in key order, with the value of the first
    // finished run in plan order that has it.
    let finished: Vec<_> = plan
        .runs
        .iter()
        .filter_map(|r| records.get(&r.id))
        .filter(|r| r.status == Status::Done)
        .collect();
    if finished.is_empty() {
        bail!(
            "no run of `{}` has finished yet; metrics are listed from the finished runs",
            spu_io::quote::path(dir)
        );
    }
    let mut keys: BTreeMap<&str, (&serde_json::Value, &str)> = BTreeMap::new();
    for r in finished {
        for (k, v) in &r.metrics {
            keys.entry(k.as_str()).or_insert((v, r.id.as_str()));
        }
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(["metric", "unit", "value", "of run"]);
    // A record is a file anyone may have edited: its keys and values are escaped.
    for (k, (v, id)) in keys {
        table.add_row([
            spu_io::quote::escape(k).into_owned(),
            spu_sweep::metrics::unit(k).unwrap_or("").to_string(),
            spu_io::quote::escape(&spu_sweep::metrics::cell(Some(v))).into_owned(),
            id.to_string(),
        ]);
    }
    spu_io::outln!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// One run in this process: bounded by rlimits, request on stdin, result on stdout.
pub fn exec_run(memory_mib: u64, cpu_s: u64, parent: Option<u32>) -> ExitCode {
    // The supervisor blocks SIGTERM and SIGHUP for itself, not for its runs.
    spu_io::process::unblock_termination();
    if let Some(parent) = parent {
        spu_io::process::end_with_parent(parent);
    }
    let fail = |message: String| {
        let out = ChildOutput::Failed {
            message,
            details: String::new(),
            out_of_memory: false,
        };
        spu_io::outln!("{}", serde_json::to_string(&out).unwrap_or_default());
        ExitCode::from(RUN_FAILED as u8)
    };
    if let Err(e) = spu_io::process::limit_self(memory_mib, cpu_s) {
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
        Err(f) if f.refused => (
            ChildOutput::Refused { message: f.message },
            ExitCode::from(RUN_FAILED as u8),
        ),
        Err(f) => (
            ChildOutput::Failed {
                message: f.message,
                details: f.details,
                out_of_memory: f.out_of_memory,
            },
            ExitCode::from(RUN_FAILED as u8),
        ),
    };
    // Metrics are numbers, strings and booleans: serialising cannot fail.
    spu_io::outln!(
        "{}",
        serde_json::to_string(&out).expect("run output serialises")
    );
    code
}

/// One task of a Slurm batch: its runs, one after another, logged line by line.
pub fn cmd_task(
    dir: &Path,
    batch: usize,
    task: usize,
    hashes: spu_sweep::task::Hashes<'_>,
) -> Result<ExitCode> {
    let store = Store::open(dir)?;
    let (b, plan, ids) = spu_sweep::task::task(&store, batch, task, hashes)?;
    let store = store.for_plan(&plan);
    let ids: Vec<String> = ids
        .into_iter()
        .filter(|id| store.record(id).is_none_or(|r| r.status != Status::Done))
        .collect();
    install_stop_handler();
    let exe = std::env::current_exe().context("cannot find the spu-sweep executable")?;
    let (bounds, note) = Bounds {
        timeout_s: b.timeout_s,
        memory_mib: b.memory_mib,
    }
    .within_inherited_limit();
    spu_io::outln!(
        "spu-sweep task {task} of batch {batch} on {}: {}",
        spu_sweep::store::host(),
        runs(ids.len())
    );
    if let Some(note) = note {
        spu_io::outln!("{note}");
    }
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
    spu_io::outln!("{} done, {} failed in {:.1} s", s.done, s.failed, s.wall_s);
    if !s.interrupted {
        return Ok(ExitCode::SUCCESS);
    }
    spu_io::outln!(
        "stopped (the job was cancelled or ran out of time): {} not run, left to do; `spu-sweep run SPEC --slurm` submits them again",
        runs(s.unfinished)
    );
    Ok(stopped_code())
}
