//! The machine-wide state a unit touches while issuing (the code, global memory,
//! the DRAM queue, counters, the trace), borrowed field by field from the grid so
//! a unit can be borrowed alongside.

use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Program;
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::dram::Dram;
use crate::timing::params::Timing;

/// Machine-wide state a unit touches while issuing.
#[derive(Debug)]
pub struct Env<'a> {
    pub program: &'a Program,
    pub timing: &'a Timing,
    pub memory: &'a mut GlobalMemory,
    pub dram: &'a mut Dram,
    pub params: &'a [u32],
    /// Bank-conflict waves of recent shared-memory and CB accesses.
    pub waves: &'a mut WaveCache,
    /// Functional mode: no timing, only results and counts.
    pub functional: bool,
    /// The instruction trace, when asked for.
    pub trace: Option<&'a mut Tracer>,
}
