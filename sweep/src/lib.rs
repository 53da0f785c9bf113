//! Design-space sweeps over SPU kernels and machines: many runs from one TOML spec,
//! run on this machine or as a Slurm array job, resumable (each run is identified by
//! a hash of everything that determines its results) and reported as tidy CSV/JSON
//! lines and plots.
//!
//! Module map, in the order a sweep flows through them:
//! - the spec: [`spec`] (parsing, with spans) and [`diag`] (its error reports);
//! - [`plan`]: the runs of a spec, resolved and identified, reading only the
//!   files [`files`] lets it;
//! - [`store`]: the results folder (plan, manifest, one record per run), its
//!   JSON files all in [`json`]'s form;
//! - running: [`exec`] (one run inside the child process), [`supervise`] (the
//!   child process, its bounds and failures), [`local`] (the worker pool),
//!   [`slurm`] (array jobs), [`task`] (one array task's checked batch);
//! - reports: [`metrics`] (keys, units, selection), [`table`] (CSV and JSON
//!   lines), [`plot`] (SVG), [`summary`] (Markdown tables), [`status`].

pub mod diag;
pub mod exec;
pub mod files;
pub mod json;
pub mod local;
pub mod metrics;
pub mod plan;
pub mod plot;
pub mod slurm;
pub mod spec;
pub mod status;
pub mod store;
pub mod summary;
pub mod supervise;
pub mod table;
pub mod task;

use std::path::PathBuf;

/// A path as a command the user is told to type takes it: escaped
/// ([`spu_io::quote::path`]), with `./` before a relative path that starts with `-`
/// (a sweep named `-o`), which the command would read as an option.
pub fn arg_path(path: &std::path::Path) -> String {
    if path.as_os_str().as_encoded_bytes().starts_with(b"-") {
        spu_io::quote::path(&std::path::Path::new(".").join(path))
    } else {
        spu_io::quote::path(path)
    }
}

/// A count with its noun, `1 run` or `2 runs`, by the rule the other tools'
/// messages follow.
pub fn count(n: usize, what: &str) -> String {
    match u32::try_from(n) {
        Ok(n) => spu_emu::machine::plural(n, what),
        Err(_) => format!("{n} {what}s"),
    }
}

/// Anything that stops a sweep command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Spec(#[from] diag::SpecError),
    #[error(transparent)]
    Input(#[from] spu_isa::format::InputError),
    #[error(
        "no axis of `{}` has extra values named `{}`; {known}",
        spu_io::quote::escape(file),
        spu_io::quote::shorten(name)
    )]
    UnknownExtra {
        name: String,
        file: String,
        known: String,
    },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Slurm(#[from] slurm::SlurmError),
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
}

/// What [`collect`] wrote.
#[derive(Debug)]
pub struct Collected {
    pub report: table::Report,
    pub plots: Vec<PathBuf>,
    /// Plots of the spec that could not be drawn (the reports are still written).
    pub plot_errors: Vec<plot::PlotError>,
    /// The summary tables written (`tables/NAME.md`, and all of them in
    /// `tables.md`), and those that could not be.
    pub tables: Vec<PathBuf>,
    pub table_errors: Vec<summary::TableError>,
    /// Cells of the written tables left empty because their value cannot be
    /// computed (a `per` or `relative_to` of 0, an overflow).
    pub table_warnings: Vec<summary::TableError>,
}

/// Writes `results.csv`, `results.jsonl`, the spec's plots and its summary tables
/// from the records.
pub fn collect(store: &store::Store, plan: &plan::Plan) -> Result<Collected, Error> {
    let records = store.records(plan);
    let report = table::report(plan, &records);
    store.write("results.csv", report.csv.as_bytes())?;
    store.write("results.jsonl", report.jsonl.as_bytes())?;
    let mut plots = Vec::new();
    let mut plot_errors = Vec::new();
    if records.values().any(|r| r.status == store::Status::Done) {
        for p in &plan.plots {
            match plot::svg(plan, &records, p) {
                Ok(svg) => {
                    let name = format!("plots/{}.svg", p.name);
                    store.write(&name, svg.as_bytes())?;
                    plots.push(store.dir.join(name));
                }
                Err(e) => plot_errors.push(e),
            }
        }
    }
    let mut tables = Vec::new();
    let mut table_errors = Vec::new();
    let mut table_warnings = Vec::new();
    if records.values().any(|r| r.status == store::Status::Done) && !plan.tables.is_empty() {
        let mut all = String::new();
        for t in &plan.tables {
            match summary::markdown(plan, &records, t) {
                Ok(md) => {
                    let name = format!("tables/{}.md", t.name);
                    store.write(&name, md.text.as_bytes())?;
                    tables.push(store.dir.join(name));
                    table_warnings.extend(md.warnings);
                    all.push_str(&md.text);
                    all.push('\n');
                }
                Err(e) => table_errors.push(e),
            }
        }
        store.write("tables.md", all.as_bytes())?;
    }
    Ok(Collected {
        report,
        plots,
        plot_errors,
        tables,
        table_errors,
        table_warnings,
    })
}
