//! One step of one unit, the same for the one-thread event loop and for the
//! threads: what a step reads besides the unit ([`Shared`]), what it writes besides
//! the unit (the bank-wave cache and the deferred accesses, which each thread
//! keeps for itself), and what the grid must act on afterwards ([`Happened`]).

use crate::exec::fault::Fault;
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Program;
use crate::observe::activity::Activity;
use crate::observe::trace::Tracer;
use crate::timing::banks::WaveCache;
use crate::timing::effects::Deferred;
use crate::timing::engine::{DmaFault, EngineEnv, EngineEvent, SpillStore, Task};
use crate::timing::unit::{Env, StepEvent, Timing, Unit, Work};

/// What a step reads besides the unit itself; none of it changes while units step.
#[derive(Debug, Clone, Copy)]
pub struct Shared<'s> {
    pub program: &'s Program,
    pub timing: &'s Timing,
    pub memory: &'s GlobalMemory,
    pub params: &'s [u32],
    /// The local memory a thread may use ([`crate::load::Image::local_bytes`]).
    pub local_bytes: u32,
    /// Spilled tiles (read by restoring virtual IUs only).
    pub spills: &'s SpillStore,
    /// Last pass each unit has completed (read by spilling virtual IUs only).
    pub completed: &'s [Option<u32>],
    pub functional: bool,
    pub spill_full: bool,
}

/// What a step did that the grid must act on.
#[derive(Debug, Clone)]
pub enum Happened {
    Code(StepEvent),
    Engine { event: EngineEvent, link: usize },
    Fault(Fault),
    EngineFault(DmaFault),
}

impl Happened {
    /// True when the grid has nothing to do.
    pub fn is_nothing(&self) -> bool {
        matches!(
            self,
            Happened::Code(StepEvent::None)
                | Happened::Engine {
                    event: EngineEvent::None,
                    ..
                }
        )
    }
}

/// True when the unit's steps read other units' state (a virtual IU reads which
/// passes have completed and the spilled tiles), so it must step in order with the
/// grid's own actions rather than ahead of them on a thread.
pub fn reads_others(unit: &Unit) -> bool {
    matches!(
        unit.engine().map(|e| &e.task),
        Some(Task::Spill { .. } | Task::Restore { .. })
    )
}

/// Steps `unit` at cycle `now` (its wake cycle). The step's deferred global
/// accesses go to `sink`; the unit's `wake` is its next step.
pub fn step(
    unit: &mut Unit,
    now: u64,
    shared: &Shared,
    waves: &mut WaveCache,
    sink: &mut Vec<Deferred>,
    trace: Option<&mut Tracer>,
) -> Happened {
    unit.observe(now, shared.program);
    if let Work::Engine(_) = unit.work {
        let key = unit.next_key(now);
        let id = unit.id;
        let generation = unit.generation;
        let Unit {
            work: Work::Engine(engine),
            ports,
            stores,
            traffic,
            engine_counters,
            drained_at,
            activity,
            ..
        } = unit
        else {
            unreachable!("matched above");
        };
        let link = engine.link;
        let port = ports[engine.port]
            .as_mut()
            .expect("boundary roles sit next to a link");
        let mut env = EngineEnv {
            port,
            sink: (!shared.functional).then_some((sink, key)),
            unit: id,
            generation,
            memory: shared.memory,
            stores: shared.functional.then_some(stores),
            spills: shared.spills,
            traffic,
            counters: engine_counters,
            drained_at,
            completed: shared.completed,
            transaction_bytes: shared.timing.transaction_bytes(),
            spill_full: shared.spill_full,
        };
        let waiting = engine.waiting_for_spill();
        let stepped = engine.step(now, &mut env);
        if let Some(log) = activity {
            match (waiting, engine.waiting_for_spill()) {
                (None, Some(since)) => log.pause(since, Activity::SpillWait),
                (Some(_), None) => log.resume(now),
                _ => {}
            }
        }
        return match stepped {
            Ok((event, wake)) => {
                unit.wake = wake;
                Happened::Engine { event, link }
            }
            Err(f) => Happened::EngineFault(f),
        };
    }
    let mut env = Env {
        program: shared.program,
        timing: shared.timing,
        memory: shared.memory,
        params: shared.params,
        local_bytes: shared.local_bytes,
        waves,
        functional: shared.functional,
        sink,
        trace,
    };
    let stepped = if shared.functional {
        unit.step_functional(now, &mut env)
    } else {
        unit.step(now, &mut env)
    };
    match stepped {
        Ok(event) => Happened::Code(event),
        Err(fault) => Happened::Fault(*fault),
    }
}

/// Steps `unit` at each of its wake cycles before `horizon` until a step gives the
/// grid something to act on; returns that step's cycle and what happened. `last`
/// becomes the latest cycle stepped.
pub fn advance(
    unit: &mut Unit,
    horizon: u64,
    shared: &Shared,
    waves: &mut WaveCache,
    sink: &mut Vec<Deferred>,
    last: &mut u64,
) -> Option<(u64, Happened)> {
    if let Work::Code(_) = unit.work {
        // Code runs through its wake cycles here, with one environment.
        let mut env = Env {
            program: shared.program,
            timing: shared.timing,
            memory: shared.memory,
            params: shared.params,
            local_bytes: shared.local_bytes,
            waves,
            functional: shared.functional,
            sink,
            trace: None,
        };
        if !shared.functional && unit.runs_single() {
            return unit
                .run_single(horizon, &mut env, last)
                .map(|(now, stepped)| {
                    let happened = match stepped {
                        Ok(event) => Happened::Code(event),
                        Err(fault) => Happened::Fault(*fault),
                    };
                    (now, happened)
                });
        }
        while unit.busy && unit.wake < horizon {
            let now = unit.wake;
            *last = (*last).max(now);
            unit.observe(now, shared.program);
            let stepped = if shared.functional {
                unit.step_functional(now, &mut env)
            } else {
                unit.step(now, &mut env)
            };
            match stepped {
                Ok(StepEvent::None) => {}
                Ok(event) => return Some((now, Happened::Code(event))),
                Err(fault) => return Some((now, Happened::Fault(*fault))),
            }
        }
        return None;
    }
    while unit.busy && unit.wake < horizon {
        let now = unit.wake;
        *last = (*last).max(now);
        let happened = step(unit, now, shared, waves, sink, None);
        if !happened.is_nothing() {
            return Some((now, happened));
        }
    }
    None
}
