//! The machine parameters the issue step needs, resolved once from the machine
//! file: latency and pipeline interval per timing class, and which pipeline each
//! class occupies; and, once per program, the same for each instruction
//! ([`Timed`]).

use crate::exec::ops::{LaneFn, Program, Run};
use crate::machine::{Machine, SchedulerPolicy};
use spu_isa::TimingClass;
use std::sync::Arc;

const CLASSES: usize = TimingClass::Shuffle as usize + 1;

/// Pipelines an instruction class occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    Core = 0,
    Sfu = 1,
    Mem = 2,
}

/// What the issue step needs of one instruction, resolved once per program: its
/// class's latency and pipeline interval, the pipeline it occupies, and the path
/// an SM and an IU issue it by.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    pub latency: u64,
    pub interval: u64,
    /// Index of the pipeline kind ([`Pipe`]); [`NO_PIPE`] for none.
    pub pipe: u8,
    /// The path on an SM (index 0) and on an IU (index 1).
    pub path: [Path; 2],
}

/// [`Timed::pipe`] of an instruction that needs no pipeline.
pub const NO_PIPE: u8 = 3;

/// How the issue step runs an instruction (without a trace; with one, everything
/// takes the general path).
#[derive(Debug, Clone, Copy)]
pub enum Path {
    /// Through the execution core's dispatch.
    General,
    /// A register operation (this lane function) that does not read `%clock`.
    Lanes(LaneFn),
    /// A plain 32-bit shared-memory load or store through a 32-bit base that does
    /// not read `%clock` (`true`: a store).
    SharedWord(bool),
    /// A branch (target, reconvergence point) that does not read `%clock`.
    Branch(u32, u32),
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
    /// Each instruction of the program, resolved ([`Timing::resolve`]).
    pub ops: Arc<[Timed]>,
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
            ops: Arc::from([]),
        }
    }

    /// Resolves each instruction of `program` for the issue step.
    pub fn resolve(&mut self, program: &Program) {
        self.ops = program
            .ops
            .iter()
            .zip(&program.info)
            .map(|(op, info)| {
                let class = info.class.timing;
                let path = match op.run {
                    _ if info.reads_clock => Path::General,
                    Run::Lanes(f) => Path::Lanes(f),
                    Run::Bra { target, reconv } => Path::Branch(target, reconv),
                    Run::Load(m) | Run::Store(m)
                        if m.space == spu_isa::Space::Shared && m.is_word() && !op.addr.wide =>
                    {
                        Path::SharedWord(matches!(op.run, Run::Store(_)))
                    }
                    _ => Path::General,
                };
                // An IU lacks some instructions: the general path faults on them.
                let on_iu = if info.class.units.iu() {
                    path
                } else {
                    Path::General
                };
                Timed {
                    latency: self.latency(class),
                    interval: self.interval(class),
                    pipe: pipe_of(class).map_or(NO_PIPE, |p| p as u8),
                    path: [path, on_iu],
                }
            })
            .collect();
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
