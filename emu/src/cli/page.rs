//! `--html` in both tools: what a run records for its page (activity, and samples
//! at the page's resolution when none were asked for), keeping samples taken only
//! for the page out of the statistics, and the page's data of a finished run.

use crate::RunControl;
use crate::cli::session::Session;
use crate::observe::html::{PageRun, frames};
use crate::observe::outcome::RunResult;
use crate::observe::samples::Samples;
use std::path::Path;

/// Makes the run record what a page needs. Returns true when the samples are
/// taken only for the page (nothing else asked for them).
pub fn record(control: &mut RunControl) -> bool {
    control.activity = true;
    control.pc_samples = true;
    if control.sample_interval.is_some() {
        return false;
    }
    // From every cycle, doubling the interval as the run grows: a page gets
    // between MAX_FRAMES / 2 and MAX_FRAMES frames whatever the run's length.
    control.sample_interval = Some(1);
    control.sample_limit = frames::MAX_FRAMES;
    true
}

/// The page's samples: taken out of the result when only the page asked for them
/// (so `--stats` is the same with or without `--html`), else a copy.
pub fn samples(result: &mut RunResult, page_only: bool) -> Option<Samples> {
    if page_only {
        result.samples.take()
    } else {
        result.samples.clone()
    }
}

/// The page's data of a finished run of `kernel_path`. Source text is quoted only
/// from the kernel itself or files beside it, as everywhere else.
pub fn run(session: &Session, samples: Option<&Samples>, kernel_path: &Path) -> PageRun {
    let source = |name: &str| {
        session
            .kernel
            .sources
            .get(name)
            .cloned()
            .or_else(|| crate::load::kernel::source_beside(kernel_path, name))
    };
    PageRun::new(
        &session.result,
        samples,
        &session.image,
        &session.machine,
        &source,
    )
}
