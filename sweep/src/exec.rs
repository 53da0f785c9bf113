//! One run, executed inside the child process (`spu-sweep exec-run`): bounds its own
//! memory and CPU time with rlimits, rebuilds the machine from the plan's resolved
//! parameters, runs the kernel through `spu_emu::cli::session::run_file`, prices it with
//! `spu_prof::energy::price` and returns the metrics, unless the kernel or a file it
//! includes changed since planning. A functional run models no
//! cycles, so it is not priced: its metrics are the emulator's, without time and
//! energy.

use crate::metrics::{self, Metrics};
use crate::plan::Run;
use serde::{Deserialize, Serialize};

/// What the parent sends the child on standard input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub run: Run,
}

/// What the child prints on standard output when the run finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub metrics: Metrics,
    /// Assembler warnings, if any.
    #[serde(default)]
    pub warnings: String,
}

/// Why a run failed; `details` holds multi-line reports (diagnostics, fault reports).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct RunFailure {
    pub message: String,
    pub details: String,
    /// The kernel's preconditions refused the parameters.
    pub refused: bool,
    /// The process could not allocate the run's memory (its memory bound).
    pub out_of_memory: bool,
}

impl RunFailure {
    fn new(message: impl std::fmt::Display) -> RunFailure {
        RunFailure {
            message: message.to_string(),
            details: String::new(),
            refused: false,
            out_of_memory: false,
        }
    }
}

fn changed(path: &std::path::Path) -> RunFailure {
    RunFailure::new(format!(
        "`{}` changed since the sweep was planned; run `spu-sweep run` on the spec again",
        spu_io::quote::path(path)
    ))
}

/// Runs one request in this process.
pub fn execute(req: &Request) -> Result<Reply, RunFailure> {
    let run = &req.run;
    let mut machine = spu_emu::Machine::default();
    for (k, v) in run.machine.iter() {
        machine.set(&format!("{k}={v}")).map_err(RunFailure::new)?;
    }
    // The files were checked when planning; one replaced since (by a link to a
    // file elsewhere, say) is refused, not read.
    let model_path = std::path::Path::new(&run.model);
    if model_path.is_absolute() && spu_io::open_regular(model_path).is_none() {
        return Err(changed(model_path));
    }
    let model = spu_prof::model::Model::load(&run.model).map_err(RunFailure::new)?;
    if crate::plan::model_hash(&model) != run.model_sha256 {
        return Err(changed(model_path));
    }
    let bytes = spu_io::read_regular(&run.kernel, spu_io::MAX_INPUT_BYTES)
        .ok_or_else(|| changed(&run.kernel))?
        .map_err(RunFailure::new)?;
    // The kernel's hash covers the files it includes, known once it is assembled:
    // checked after the run, which is dropped if they differ from the plan's.
    let unchanged = |included: &[std::path::PathBuf]| {
        if crate::plan::kernel_hash(&bytes, included) == run.kernel_sha256 {
            Ok(())
        } else {
            Err(changed(&run.kernel))
        }
    };
    let options = spu_emu::LoadOptions {
        defines: run
            .defines
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        loads: Vec::new(),
        dumps: Vec::new(),
        race_check: false,
        host_threads: 1,
        // Counted by the run from its recordings.
        recording_bytes: 0,
    };
    let control = spu_emu::RunControl {
        max_cycles: run.max_cycles,
        spin_limit: run.spin_limit,
        functional: run.functional,
        ..Default::default()
    };
    let session = match spu_emu::cli::session::run_file(&run.kernel, &machine, &options, control) {
        Ok(session) => {
            unchanged(&session.kernel.included)?;
            session
        }
        Err(e) => {
            // A kernel that no longer assembles includes nothing that can be listed.
            let included =
                spu_emu::read_kernel(&run.kernel).map_or_else(|_| Vec::new(), |k| k.included);
            unchanged(&included)?;
            return Err(RunFailure {
                message: one_line(&e),
                details: e.details().to_string(),
                refused: matches!(
                    e,
                    spu_emu::cli::session::SessionError::Load(
                        spu_emu::load::LoadError::Precondition { .. }
                    )
                ),
                out_of_memory: matches!(
                    e,
                    spu_emu::cli::session::SessionError::Load(
                        spu_emu::load::LoadError::HostMemory { .. }
                            | spu_emu::load::LoadError::Layout(
                                spu_emu::exec::memory::LayoutError { host: true, .. }
                            )
                    )
                ),
            });
        }
    };
    let stats =
        spu_emu::observe::stats::Stats::new(&session.result, &session.image, &session.machine);
    let energy = if run.functional {
        None
    } else {
        Some(spu_prof::energy::price(&stats, &model).map_err(RunFailure::new)?)
    };
    Ok(Reply {
        metrics: metrics::collect(&stats, energy.as_ref()),
        warnings: session.kernel.warnings,
    })
}

/// The cause of a failed run in one line: the first `error:` of its report (why a
/// run stopped, the first assembly error), else the error itself.
fn one_line(e: &spu_emu::cli::session::SessionError) -> String {
    use spu_emu::cli::session::SessionError;
    let first = e
        .details()
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("error: "))
        .map(str::to_string);
    match (e, first) {
        (SessionError::Stopped { .. }, Some(why)) => why,
        (SessionError::Assembly { .. }, Some(first)) => format!("{e}: {first}"),
        _ => e.to_string(),
    }
}
