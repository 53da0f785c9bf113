//! The machine parameters the issue step needs, resolved once from the machine
//! file: latency and pipeline interval per timing class, and which pipeline each
//! class occupies.

use crate::machine::{Machine, SchedulerPolicy};
use spu_isa::TimingClass;

const CLASSES: usize = TimingClass::Shuffle as usize + 1;

/// Pipelines an instruction class occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    Core = 0,
    Sfu = 1,
    Mem = 2,
}

pub fn pipe_of(class: TimingClass) -> Option<Pipe> {
    use TimingClass as T;
    match class {
        T::IntAlu | T::IntMul | T::IntDiv | T::Fpu | T::Shuffle => Some(Pipe::Core),
        // GPGPU-Sim's GTX 480 configuration runs double precision on the SFU pipeline.
        T::Sfu | T::Dp | T::DpDiv => Some(Pipe::Sfu),
        T::Shared | T::Global | T::Param | T::Cb | T::Atomic => Some(Pipe::Mem),
        T::Control | T::Barrier | T::BlockSync => None,
    }
}

/// The machine parameters the issue step needs, resolved once.
#[derive(Debug, Clone)]
pub struct Timing {
    latency: [u64; CLASSES],
    interval: [u64; CLASSES],
    pub pipes: [usize; 3],
    pub sm_schedulers: usize,
    pub iu_schedulers: usize,
    pub policy: SchedulerPolicy,
    banks: u32,
    transaction_bytes: u32,
    dram_latency: u64,
    /// The shortest cache hit latency, if the machine has data caches.
    cache_latency: Option<u64>,
    /// Units of the grid (for the addresses of local memory).
    units: u32,
}

impl Timing {
    pub fn new(m: &Machine) -> Timing {
        let all = [
            TimingClass::IntAlu,
            TimingClass::IntMul,
            TimingClass::IntDiv,
            TimingClass::Fpu,
            TimingClass::Sfu,
            TimingClass::Shared,
            TimingClass::Global,
            TimingClass::Param,
            TimingClass::Cb,
            TimingClass::Atomic,
            TimingClass::Control,
            TimingClass::Barrier,
            TimingClass::BlockSync,
            TimingClass::Dp,
            TimingClass::DpDiv,
            TimingClass::Shuffle,
        ];
        Timing {
            latency: all.map(|c| u64::from(m.latency(c))),
            interval: all.map(|c| u64::from(m.interval(c))),
            pipes: [m.core_pipes, m.sfu_pipes, m.mem_pipes].map(|n| n as usize),
            sm_schedulers: m.sm_schedulers as usize,
            iu_schedulers: m.iu_schedulers as usize,
            policy: m.scheduler_policy,
            banks: m.shared_banks,
            transaction_bytes: m.transaction_bytes,
            dram_latency: u64::from(m.dram_latency),
            cache_latency: crate::timing::cache::Caches::min_latency(m),
            units: m.sms(),
        }
    }

    /// Cycles within which no global access can complete: the DRAM latency plus
    /// the one cycle of transfer every transaction takes, or the shortest cache hit
    /// latency if that is shorter.
    pub fn dram_window(&self) -> u64 {
        let dram = self.dram_latency + 1;
        self.cache_latency.map_or(dram, |c| c.min(dram))
    }

    /// True when threads' local memory is cached DRAM traffic: on machines with
    /// data caches (GPUs). Elsewhere it sits beside the SM, timed as shared memory.
    pub fn local_in_dram(&self) -> bool {
        self.cache_latency.is_some()
    }

    pub fn units(&self) -> u32 {
        self.units
    }

    /// Sets the number of units of the grid (SMs and boundary units).
    pub fn set_units(&mut self, units: u32) {
        self.units = units;
    }

    pub fn latency(&self, c: TimingClass) -> u64 {
        self.latency[c as usize]
    }

    pub fn interval(&self, c: TimingClass) -> u64 {
        self.interval[c as usize]
    }

    pub fn banks(&self) -> u32 {
        self.banks
    }

    pub fn transaction_bytes(&self) -> u32 {
        self.transaction_bytes
    }

    /// Cycles from the last arrival at a blocksync to the release.
    pub fn blocksync_latency(&self) -> u64 {
        self.latency(TimingClass::BlockSync)
    }
}
