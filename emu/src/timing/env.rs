//! What a unit reads while it steps, besides itself: the code, the resolved timing
//! parameters, the kernel's parameters, global memory as it stands (read only:
//! timing mode records accesses as [`Deferred`] effects, functional mode logs its
//! stores per unit), the bank-wave cache and the trace.

use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Program;
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::effects::Deferred;
use crate::timing::params::Timing;

/// What a unit reads while it steps.
#[derive(Debug)]
pub struct Env<'a> {
    pub program: &'a Program,
    pub timing: &'a Timing,
    pub memory: &'a GlobalMemory,
    pub params: &'a [u32],
    /// The local memory a thread may use ([`crate::load::Image::local_bytes`]).
    pub local_bytes: u32,
    /// Bank-conflict waves of recent shared-memory and CB accesses.
    pub waves: &'a mut WaveCache,
    /// Functional mode: no timing, only results and counts.
    pub functional: bool,
    /// Timing mode: global memory accesses and DRAM transactions, recorded.
    pub sink: &'a mut Vec<Deferred>,
    /// The instruction trace, when asked for.
    pub trace: Option<&'a mut Tracer>,
}
