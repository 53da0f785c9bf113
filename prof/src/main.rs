//! `spu-prof`: where did the joules go? Runs a kernel (or reads `spu-emu --stats`
//! output) and prices it with an energy model.

use anyhow::{Context, Result, bail};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, ValueEnum};
use spu_emu::cli::outputs::{self, Outputs};
use spu_emu::cli::{RUN_EXAMPLES, RunArgs};
use spu_emu::cli::{page, session};
use spu_emu::observe::stats::Stats;
use spu_io::paths::PathError;
use spu_prof::energy::{Breakdown, price};
use spu_prof::heatmap::Metric;
use spu_prof::model::{BUILT_IN, Model};
use spu_prof::{report, svg};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Cycles per power-trace sample (GPUWattch sampled every 500, thesis 5.1).
const DEFAULT_SAMPLE_INTERVAL: u64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Parser, Debug)]
#[command(
    name = "spu-prof",
    version,
    about = "Energy breakdown of an SPU kernel: leakage per unit, dynamic energy per component and source line",
    after_help = format!("Examples:\n  \
        spu-prof samples/stencil2d/stencil_pc.spu                   # table with the default model\n  \
        spu-prof kernel.spu --by-line                               # annotated source\n  \
        spu-prof kernel.spu --power-trace power.svg                 # power over time\n  \
        spu-prof kernel.spu --heatmap grid.svg --heatmap-metric busy  # the grid, coloured\n  \
        spu-prof kernel.spu --html run.html                         # replay it in a browser\n  \
        spu-prof --compare a.html b.html --html both.html           # two replays side by side\n  \
        spu-prof kernel.spu --format json -o a.json --boundary dma  # machine-readable\n  \
        spu-prof --from-stats run.json --model cyclops64            # price an earlier spu-emu run\n  \
        spu-prof --compare iu.json dma.json                         # two runs side by side\n  \
        spu-prof --list-models\n\n\
        Run options (as spu-emu):\n  {RUN_EXAMPLES}\n\n\
        Models live in prof/models/; prof/README.md explains every number.")
)]
struct Cli {
    /// Kernel to run and profile: .spu source or .bin.
    #[arg(required_unless_present_any = ["from_stats", "compare", "list_models"])]
    kernel: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
    /// Price a statistics file written by `spu-emu --stats` instead of running.
    #[arg(long, value_name = "FILE.json", conflicts_with = "kernel")]
    from_stats: Option<PathBuf>,
    /// Energy model: a built-in name (default, wires, cyclops64) or a `.toml` file
    /// (what it `extends` must sit in its folder or below).
    #[arg(long, value_name = "NAME|FILE", default_value = "default")]
    model: String,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print the kernel source annotated with energy and instructions per line.
    #[arg(long)]
    by_line: bool,
    /// A source file to quote with --by-line and in the hottest-lines table
    /// (repeatable). Without it, sources are quoted only from the kernel itself or
    /// from files beside the kernel or the statistics file with the recorded name.
    #[arg(long = "source", value_name = "FILE")]
    sources: Vec<PathBuf>,
    /// Write power over time as an SVG chart.
    #[arg(long, value_name = "FILE.svg")]
    power_trace: Option<PathBuf>,
    /// Write a page that replays the run in a browser, with its energy (one
    /// self-contained HTML file). With --compare, the two runs side by side: A
    /// and B must then be pages written by --html.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Draw the grid as a heat map of a per-unit metric.
    #[arg(long, value_name = "FILE.svg")]
    heatmap: Option<PathBuf>,
    /// The heat map's metric.
    #[arg(long, value_enum, default_value_t = Metric::Energy, requires = "heatmap")]
    heatmap_metric: Metric,
    /// Compare two runs: `spu-prof --format json` reports, `spu-emu --stats` files
    /// (checked as strictly as a run's own) or pages written by `spu-prof --html`.
    // Any number is taken, so that a count other than two is refused as such (with
    // exactly two, a third file would be taken for the kernel and refused as one).
    #[arg(long, num_args = 1.., value_names = ["A.json", "B.json"], conflicts_with_all = ["kernel", "from_stats"])]
    compare: Option<Vec<PathBuf>>,
    /// Write the report to a file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// List the built-in models.
    #[arg(long)]
    list_models: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| spu_io::exit::after_parse(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| spu_io::exit::after_parse(e));
    if let Some(files) = cli.compare.as_ref().filter(|f| f.len() != 2) {
        spu_io::exit::after_parse(Cli::command().error(
            clap::error::ErrorKind::WrongNumberOfValues,
            format!(
                "`--compare` takes exactly two files, A and B, but {}: `spu-prof --compare A.json B.json`",
                match files.len() {
                    1 => "only one was given".to_string(),
                    n => format!("{n} were given"),
                }
            ),
        ));
    }
    spu_io::interrupt::install_with_termination();
    let model_given = matches.value_source("model") == Some(ValueSource::CommandLine);
    let outcome = unused_options(&cli, &matches).and_then(|()| run(&cli, model_given));
    match outcome {
        // A signal that came as the work was finishing still ends it as the signal asks.
        Ok(()) => spu_io::exit::unless_signalled(ExitCode::SUCCESS, true),
        Err(e) => ExitCode::from(session::report_failure(e.as_ref())),
    }
}

/// Refuses an option given on the command line that the chosen mode would not
/// honour: `--compare` and `--from-stats` run nothing, and `--list-models` only
/// lists. Nothing is ever dropped silently (a file asked for and not written).
fn unused_options(cli: &Cli, matches: &clap::ArgMatches) -> Result<()> {
    const COMPARE: &[&str] = &["compare", "model", "format", "html", "output", "quiet"];
    const FROM_STATS: &[&str] = &[
        "from_stats",
        "model",
        "format",
        "by_line",
        "sources",
        "power_trace",
        "html",
        "heatmap",
        "heatmap_metric",
        "output",
        "quiet",
    ];
    if cli.by_line && cli.format != Format::Table {
        bail!(
            "`--by-line` writes the annotated source as text, not JSON or CSV; drop `--format`, or drop `--by-line`"
        );
    }
    let (mode, honoured) = match () {
        () if cli.list_models => ("--list-models", &["list_models"][..]),
        () if cli.compare.is_some() => ("--compare", COMPARE),
        () if cli.from_stats.is_some() => ("--from-stats", FROM_STATS),
        () => return Ok(()),
    };
    let run_args = RunArgs::augment_args(clap::Command::new("run"));
    let is_run_arg = |id: &str| run_args.get_arguments().any(|a| a.get_id() == id);
    let command = Cli::command();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if honoured.contains(&id) || matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => "the kernel".to_string(),
        };
        let positional = arg.get_long().is_none() && arg.get_short().is_none();
        match mode {
            "--list-models" if positional => bail!(
                "a kernel does not apply to `--list-models`, which only lists the built-in models; drop the kernel"
            ),
            "--list-models" => bail!(
                "`{name}` does not apply to `--list-models`, which only lists the built-in models; drop it"
            ),
            "--from-stats" if is_run_arg(id) => bail!(
                "`{name}` needs a run, and `--from-stats` runs nothing: the machine, parameters and results come from the statistics file; drop `{name}`, or give the kernel instead of --from-stats"
            ),
            "--from-stats" => bail!("`{name}` does not apply to `--from-stats`; drop it"),
            _ if is_run_arg(id) => bail!(
                "`{name}` needs a run, and `--compare` runs nothing: it prices the two files as they are; drop `{name}`"
            ),
            _ => bail!(
                "`{name}` is not available with `--compare`, which writes the two runs side by side (with `-o`, `--format`, `--model` and `--html`); drop it, or use it on one run: `spu-prof --from-stats A.json {name} ...`"
            ),
        }
    }
    Ok(())
}

/// Checks JSON text before it is deserialized (nothing is built for it), and
/// returns its top level.
fn check_json(path: &Path, text: &str) -> Result<spu_emu::observe::json::Top> {
    spu_emu::observe::json::check(text)
        .map_err(|e| anyhow::anyhow!("`{}` {e}", spu_io::quote::path(path)))
}

/// A statistics file, read and checked.
fn read_stats(path: &Path) -> Result<Stats> {
    let text = spu_io::read_text(path)?;
    let top = check_json(path, &text)?;
    parse_stats(path, &text, &top)
}

fn parse_stats(path: &Path, text: &str, top: &spu_emu::observe::json::Top) -> Result<Stats> {
    use spu_emu::observe::json::Scalar;
    let supported = spu_emu::observe::stats::STATS_VERSION;
    match top.get("stats_version") {
        Some(Scalar::Count(v)) if *v == u64::from(supported) => {}
        Some(Scalar::Count(v)) => bail!(
            "`{}` has stats_version {v}, but this spu-prof reads version {supported}; rerun `spu-emu --stats` with the spu-emu of this release",
            spu_io::quote::path(path)
        ),
        _ => bail!(
            "`{}` has no numeric `stats_version`, so it is not `spu-emu --stats` output; rerun `spu-emu --stats`",
            spu_io::quote::path(path)
        ),
    }
    let text = spu_emu::observe::json::strip_bom(text);
    let stats: Stats = serde_json::from_str(text).with_context(|| {
        format!(
            "`{}` is not a statistics file from this version of spu-emu; rerun `spu-emu --stats`",
            spu_io::quote::path(path)
        )
    })?;
    // The machine first: the other checks read its values.
    let machine = stats.machine().map_err(|e| {
        anyhow::anyhow!(
            "`{}`: {}; rerun `spu-emu --stats`",
            spu_io::quote::path(path),
            spu_prof::energy::EnergyError::Machine(e.to_string())
        )
    })?;
    if let Err(why) = spu_prof::inputs::check_stats(&stats, &machine) {
        bail!(
            "`{}`: the statistics are damaged: {why}; rerun `spu-emu --stats`",
            spu_io::quote::path(path)
        );
    }
    Ok(stats)
}

/// A page written by `--html`.
fn read_page(path: &Path) -> Result<spu_emu::observe::html::PageData> {
    let text = spu_io::read_text(path)?;
    let data = spu_emu::observe::html::read(&text).map_err(|e| match e {
        spu_emu::observe::html::PageError::NotAPage => anyhow::anyhow!(
            "`{}` {e}; `--compare A B --html` needs two pages written by `spu-prof KERNEL --html`, since statistics and reports hold no activity over time",
            path.display()
        ),
        e => anyhow::anyhow!("`{}` {e}", path.display()),
    })?;
    check_page(path, &data)?;
    Ok(data)
}

/// Refuses a page whose data do not hold together (a page written from it would
/// not play).
fn check_page(path: &Path, data: &spu_emu::observe::html::PageData) -> Result<()> {
    if let Err(why) = spu_prof::inputs::check_page(data) {
        bail!(
            "`{}`: the page's data are damaged: {why}; write it again with `spu-prof KERNEL --html`",
            path.display()
        );
    }
    Ok(())
}

/// True when `text` is HTML rather than JSON.
fn is_html(text: &str) -> bool {
    text.trim_start().starts_with('<')
}

/// A breakdown from a stats file (priced with `model`), a saved JSON report or a
/// page of a priced run; true when the file came priced.
fn breakdown_from_file(path: &Path, model: &Model) -> Result<(Breakdown, bool)> {
    let text = spu_io::read_text(path)?;
    if is_html(text.trim_start_matches('\u{feff}')) {
        let data = spu_emu::observe::html::read(&text).map_err(|e| match e {
            spu_emu::observe::html::PageError::NotAPage => anyhow::anyhow!(
                "`{}` {e}; --compare reads pages written by `spu-prof KERNEL --html`, `spu-prof --format json` reports and `spu-emu --stats` files",
                path.display()
            ),
            e => anyhow::anyhow!("`{}` {e}", path.display()),
        })?;
        check_page(path, &data)?;
        let report = spu_prof::page::breakdown_of(&data)
            .map_err(|why| {
                anyhow::anyhow!(
                    "`{}`: the page's energy is damaged: {why}; write it again with `spu-prof KERNEL --html`",
                    path.display()
                )
            })?
            .with_context(|| {
            format!(
                "`{}` is a page without energy (written by spu-emu, or comparing two runs); write it with `spu-prof KERNEL --html`",
                path.display()
            )
        })?;
        if let Err(why) = spu_prof::inputs::check_report(&report) {
            bail!(
                "`{}`: the page's energy is damaged: {why}; write it again with `spu-prof KERNEL --html`",
                path.display()
            );
        }
        return Ok((report, true));
    }
    let top = check_json(path, &text)?;
    if top.get("stats_version").is_some() {
        let priced = price(&parse_stats(path, &text, &top)?, model)
            .with_context(|| format!("`{}`", spu_io::quote::path(path)))?;
        return Ok((priced, false));
    }
    let report: Breakdown = serde_json::from_str(spu_emu::observe::json::strip_bom(&text))
        .with_context(|| {
            format!(
                "`{}` is neither `spu-emu --stats` output nor a `spu-prof --format json` report",
                spu_io::quote::path(path)
            )
        })?;
    if let Err(why) = spu_prof::inputs::check_report(&report) {
        bail!(
            "`{}`: the report is damaged: {why}; write it again with `spu-prof --format json`",
            spu_io::quote::path(path)
        );
    }
    Ok((report, true))
}

/// Refuses outputs that name an input or each other, before any work; `read` adds
/// files found to be inputs on the way (a model's `extends` chain, included files).
fn check_paths(cli: &Cli, read: &[(String, PathBuf)]) -> Result<(), PathError> {
    let mut inputs: Vec<(String, PathBuf)> = read.to_vec();
    if let Some(p) = &cli.from_stats {
        inputs.push((format!("`--from-stats {}`", p.display()), p.clone()));
    }
    for p in cli.compare.iter().flatten() {
        inputs.push((format!("`--compare {}`", p.display()), p.clone()));
    }
    for p in &cli.sources {
        inputs.push((format!("`--source {}`", p.display()), p.clone()));
    }
    if !BUILT_IN.iter().any(|b| b.name == cli.model) {
        inputs.push((
            format!("`--model {}`", cli.model),
            PathBuf::from(&cli.model),
        ));
    }
    let mut outputs: Vec<(String, PathBuf)> = Vec::new();
    match &cli.output {
        Some(p) => outputs.push((format!("`-o {}`", p.display()), p.clone())),
        None => outputs.push(("the report".into(), PathBuf::from("-"))),
    }
    if let Some(p) = &cli.heatmap {
        outputs.push((format!("`--heatmap {}`", p.display()), p.clone()));
    }
    if let Some(p) = &cli.power_trace {
        outputs.push((format!("`--power-trace {}`", p.display()), p.clone()));
    }
    if let Some(p) = &cli.html {
        outputs.push((format!("`--html {}`", p.display()), p.clone()));
    }
    outputs::check_paths(cli.kernel.as_deref(), &cli.run, &inputs, &outputs)
}

/// `model_given`: `--model` was on the command line (not its default).
fn run(cli: &Cli, model_given: bool) -> Result<()> {
    if cli.list_models {
        let mut text = String::new();
        for b in BUILT_IN {
            let m = Model::load(b.name)?;
            text.push_str(&format!("{:<10} {}\n", m.name, m.description));
        }
        spu_io::output::print(&text)?;
        return Ok(());
    }
    check_paths(cli, &[])?;
    let model = Model::load(&cli.model)?;
    let extended: Vec<(String, PathBuf)> = model
        .files
        .iter()
        .skip(1)
        .map(|f| {
            (
                format!("`{}`, which the model extends", f.display()),
                f.clone(),
            )
        })
        .collect();
    check_paths(cli, &extended)?;
    let mut files = Outputs::default();
    let report_to = cli.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    if let Some(paths) = &cli.compare {
        let (a, b) = (&paths[0], &paths[1]);
        let ((ba, pa), (bb, pb)) = (
            breakdown_from_file(a, &model)?,
            breakdown_from_file(b, &model)?,
        );
        let (an, bn) = (a.display().to_string(), b.display().to_string());
        let side = |file, breakdown, priced_before| spu_prof::compare::Side {
            file,
            breakdown,
            priced_before,
        };
        let (sa, sb) = (side(&an, &ba, pa), side(&bn, &bb, pb));
        match spu_prof::compare::models([&sa, &sb], &model.name, model_given) {
            Err(why) => bail!("{why}"),
            Ok(Some(warning)) => spu_io::reportln!("warning: {warning}"),
            Ok(None) => {}
        }
        let text = match cli.format {
            Format::Table => spu_prof::compare::table_report(&ba, &an, &bb, &bn),
            Format::Json => spu_prof::compare::json_report(&ba, &an, &bb, &bn),
            Format::Csv => spu_prof::compare::csv_report(&ba, &bb),
        };
        // The pages are read before anything is written, so a run named by
        // statistics is refused before the table reaches the terminal.
        if let Some(out) = &cli.html {
            let run =
                |label: &str, path: &Path| -> Result<(String, spu_emu::observe::html::PageRun)> {
                    let mut data = read_page(path)?;
                    if data.runs.len() != 1 {
                        bail!(
                            "`{}` already compares two runs; compare pages of single runs",
                            path.display()
                        );
                    }
                    Ok((format!("{label}: {}", path.display()), data.runs.remove(0)))
                };
            let page = spu_emu::observe::html::PageData::pair(run("A", a)?, run("B", b)?);
            files.add(out, spu_emu::observe::html::page(&page).as_bytes())?;
        }
        files.add(&report_to, text.as_bytes())?;
        return Ok(files.commit()?);
    }
    // Source text for --by-line: files named with --source, the kernel's own text,
    // or files beside the kernel or the stats file.
    let mut sources: HashMap<String, String> = HashMap::new();
    let mut named: Vec<(PathBuf, String)> = Vec::new();
    for p in &cli.sources {
        named.push((p.clone(), spu_io::read_text(p)?));
    }
    let mut page = None;
    let (stats, beside) = match (&cli.from_stats, &cli.kernel) {
        (Some(path), _) => {
            if cli.html.is_some() {
                bail!(
                    "`--html` replays a run over time, which a statistics file does not hold; give the kernel instead of --from-stats"
                );
            }
            (read_stats(path)?, path)
        }
        (None, Some(kernel)) => {
            if cli.run.functional {
                return Err(spu_prof::energy::EnergyError::Functional.into());
            }
            // A model that cannot price this machine fails before the run, not after.
            spu_prof::energy::leakage_w(&cli.run.machine()?, &model)?;
            let mut control = cli.run.control();
            if cli.power_trace.is_some() && control.sample_interval.is_none() {
                control.sample_interval = Some(DEFAULT_SAMPLE_INTERVAL);
            }
            let page_only_samples = cli.html.is_some() && page::record(&mut control);
            let mut s = session::run(
                kernel,
                &cli.run,
                control,
                !cli.quiet,
                &|files| check_paths(cli, &outputs::included(files)),
                &mut |w| spu_io::report!("{w}"),
            )?;
            sources.extend(s.kernel.sources.clone());
            // The kernel's `printf` output; standard output is the energy report's.
            session::print_output(&s.printed, true)?;
            // Samples taken only for the page stay out of the statistics.
            let page_samples = page::samples(&mut s.result, page_only_samples);
            if cli.html.is_some() {
                let frames = page_samples
                    .as_ref()
                    .map(spu_emu::observe::html::frames::merge_samples);
                page = Some((page::run(&s, frames.as_ref(), kernel), frames));
            }
            let stats = Stats::new(&s.result, &s.image, &s.machine);
            if let Some(out) = &cli.run.stats {
                files.add_written(out, |w| stats.write_json(w))?;
            }
            for (index, file) in &s.image.dumps {
                let r = &s.image.memory.regions()[*index];
                files.add_npy(file, r.ty, &r.dims, s.image.memory.buffer(*index))?;
            }
            (stats, kernel)
        }
        (None, None) => bail!("give a kernel, --from-stats FILE or --compare A B"),
    };
    let breakdown = price(&stats, &model)?;
    if let (Some(out), Some((mut run, frames))) = (&cli.html, page) {
        let energy = spu_prof::page::energy(&stats, frames.as_ref(), &model)?;
        // Plain structs with string keys and finite numbers: cannot fail.
        run.energy = Some(serde_json::to_value(energy).expect("energy serialises"));
        let html = spu_emu::observe::html::page(&spu_emu::observe::html::PageData::single(run));
        files.add(out, html.as_bytes())?;
    }
    if let Some(path) = &cli.heatmap {
        let map = spu_prof::heatmap::svg(&stats, &model, cli.heatmap_metric).with_context(|| {
            format!(
                "the `{}` model prices instructions, not units; use --heatmap-metric offchip, cb or busy, or a components model",
                spu_io::quote::escape(&model.name)
            )
        })?;
        files.add(path, map.as_bytes())?;
    }
    if let Some(path) = &cli.power_trace {
        let chart = svg::power_trace(&breakdown).with_context(|| {
            "no activity samples to plot: price a kernel directly, or rerun spu-emu with --sample-interval 500"
        })?;
        files.add(path, chart.as_bytes())?;
    }
    let source = |file: &str| {
        let recorded = Path::new(file);
        named
            .iter()
            .find(|(p, _)| p == recorded || p.file_name() == recorded.file_name())
            .map(|(_, text)| text.clone())
            .or_else(|| sources.get(file).cloned())
            .or_else(|| spu_emu::load::kernel::source_beside(beside, file))
    };
    let text = if cli.by_line {
        report::by_line_report(&breakdown, &source)
    } else {
        match cli.format {
            Format::Table => report::table_report(&breakdown, &source),
            // Written as it is made: a long kernel's report is hundreds of megabytes.
            Format::Json => {
                files.add_written(&report_to, |w| report::write_json_report(&breakdown, w))?;
                return Ok(files.commit()?);
            }
            Format::Csv => report::csv_report(&breakdown),
        }
    };
    files.add(&report_to, text.as_bytes())?;
    Ok(files.commit()?)
}
