//! Boundary work without instruction fetch: DMA engines executing a kernel's
//! descriptors (thesis 7.2, Table 7.1) and the runtime's virtual IUs that spill a
//! pass's outgoing tiles to a reserved global region and restore them, in order,
//! for the next pass (thesis 2.2.2, Algorithm 2). Each is a small state machine
//! that the grid steps like a unit: it arrives at rendezvous (on its link, or at the
//! global blocksync), and moves data when released.
//!
//! Loaders (DMA north/west, restoring VIUs) transfer a tile into the CB and then
//! sync; storers (DMA south/east, spilling VIUs) sync and then transfer out.

use crate::exec::cb::Port;
use crate::exec::lanes::toggles;
use crate::exec::memory::GlobalMemory;
use crate::load::DmaPlan;
use crate::load::plan::SpillKey;
use crate::observe::counters::Traffic;
use crate::observe::counters::{Component, ComponentCounts};
use crate::timing::cb::End;
use crate::timing::effects::{Deferred, Effect, Key, PENDING};
use crate::timing::window::StoreLog;
use std::collections::BTreeMap;

const NEVER: u64 = u64::MAX;

/// One spilled tile.
#[derive(Debug, Clone)]
pub struct SpilledTile {
    pub words: Vec<u32>,
    /// Which words the producer had written (one bit per word): a restore hands
    /// on only those as written, so the CB checker sees through passes.
    pub valid: Vec<u64>,
    /// Cycle the spill's writes have completed (a restore waits for it, thesis 4.3).
    pub ready_at: u64,
}

/// A spill stream between two passes.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    pub tiles: Vec<SpilledTile>,
    /// Tiles before this one know when they are ready (a tile's `ready_at` is
    /// set once, in order): where the search for the next one starts.
    pub known: usize,
    /// The spilling VIU has finished: no more tiles will come.
    pub closed: bool,
}

/// The runtime-reserved spill region.
pub type SpillStore = BTreeMap<SpillKey, Stream>;

/// What the engine does.
#[derive(Debug, Clone)]
pub enum Task {
    Spill {
        key: SpillKey,
        /// Unit whose block (in `pass`) feeds the link.
        producer: usize,
        pass: u32,
    },
    Restore {
        key: SpillKey,
        next: usize,
    },
    Dma {
        plan: DmaPlan,
        loader: bool,
        iuid: u32,
        delay_left: u64,
        tile: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Decide the next action at the wake cycle.
    Ready,
    /// Arrive at the rendezvous at the wake cycle (a transfer in has landed).
    ArriveNext,
    /// Arrived; waiting for the release.
    Waiting,
}

/// An engine's state.
#[derive(Debug, Clone)]
pub struct Engine {
    pub task: Task,
    /// The link it serves.
    pub link: usize,
    /// Side code of the unit's port on that link.
    pub port: usize,
    phase: Phase,
    /// A restoring virtual IU waiting for its spill stream: since when.
    spill_wait_since: Option<u64>,
    /// Cycles of earlier, finished waits for the spill stream.
    spill_waited: u64,
}

/// What a step asks the grid to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineEvent {
    /// Nothing; step again at the returned wake cycle.
    None,
    /// Arrive at the rendezvous as this end of the link (or globally).
    Arrive(End),
    Finished,
}

/// What an engine touches.
#[derive(Debug)]
pub struct EngineEnv<'a> {
    /// The unit's end of the link the engine serves.
    pub port: &'a mut Port,
    /// Timing mode: the engine's global memory and DRAM transfers are recorded
    /// here, under `key`, and complete later (the engine waits). `None` in
    /// functional mode, where memory is seen through `stores` and a transfer of `n`
    /// transactions from cycle `t` completes at `t + n - 1`.
    pub sink: Option<(&'a mut Vec<Deferred>, Key)>,
    /// The unit and its work item, to which deferred results return.
    pub unit: usize,
    pub generation: u64,
    pub memory: &'a GlobalMemory,
    /// Functional mode: the unit's window of global stores (stores wait for the end
    /// of the window; loads see them).
    pub stores: Option<&'a mut StoreLog>,
    pub spills: &'a SpillStore,
    pub traffic: &'a mut Traffic,
    pub counters: &'a mut ComponentCounts,
    /// Cycle by which the unit's transfers have completed.
    pub drained_at: &'a mut u64,
    /// Last pass each unit has completed.
    pub completed: &'a [Option<u32>],
    pub transaction_bytes: u32,
    /// Spill the whole CB at every rendezvous instead of the words written.
    pub spill_full: bool,
}

/// What went wrong in a DMA transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DmaFault {
    /// The tile reaches element `element` outside its buffer.
    OutOfBounds { element: i64, tile: u64 },
    /// A storer's tile includes CB word `word`, which the producer has not written
    /// since the link last switched (the CB checker); it wrote `held` words.
    Unwritten { word: u32, tile: u64, held: u32 },
}

impl Engine {
    pub fn new(task: Task, link: usize, port: usize) -> Engine {
        Engine {
            task,
            link,
            port,
            phase: Phase::Ready,
            spill_wait_since: None,
            spill_waited: 0,
        }
    }

    /// Since when a restoring virtual IU has been waiting for the next tile of its
    /// spill stream (to be spilled, or to arrive from DRAM), if it is.
    pub fn waiting_for_spill(&self) -> Option<u64> {
        self.spill_wait_since
    }

    /// Cycles spent waiting for the spill stream up to cycle `t` (not busy: the
    /// engine does nothing meanwhile).
    pub fn spill_wait(&self, t: u64) -> u64 {
        self.spill_waited
            + self
                .spill_wait_since
                .map_or(0, |since| t.saturating_sub(since))
    }

    fn end_spill_wait(&mut self, now: u64) {
        if let Some(since) = self.spill_wait_since.take() {
            self.spill_waited += now.saturating_sub(since);
        }
    }

    /// Which end of its link the engine is.
    pub fn end(&self) -> End {
        match self.task {
            Task::Spill { .. } => End::Consumer,
            Task::Restore { .. } => End::Producer,
            Task::Dma { loader, .. } => {
                if loader {
                    End::Producer
                } else {
                    End::Consumer
                }
            }
        }
    }

    /// The spill stream and tile a restoring virtual IU waits for, if it does.
    pub fn awaited_tile(&self) -> Option<(SpillKey, usize)> {
        match self.task {
            Task::Restore { key, next } if self.phase == Phase::Ready => Some((key, next)),
            _ => None,
        }
    }

    /// True while arrived and waiting for a release.
    pub fn is_waiting(&self) -> bool {
        self.phase == Phase::Waiting
    }

    /// One step at cycle `now`; returns the event and the next wake cycle.
    pub fn step(&mut self, now: u64, env: &mut EngineEnv) -> Result<(EngineEvent, u64), DmaFault> {
        if self.phase == Phase::ArriveNext {
            self.phase = Phase::Waiting;
            return Ok((EngineEvent::Arrive(self.end()), NEVER));
        }
        if self.phase == Phase::Waiting {
            return Ok((EngineEvent::None, NEVER));
        }
        let end = self.end();
        let arrive = |e: &mut Engine| {
            e.phase = Phase::Waiting;
            Ok((EngineEvent::Arrive(end), NEVER))
        };
        match &mut self.task {
            Task::Spill { producer, pass, .. } => {
                if env.completed[*producer].is_some_and(|c| c >= *pass) {
                    return Ok((EngineEvent::Finished, NEVER));
                }
                arrive(self)
            }
            Task::Restore { key, next } => {
                let stream = env.spills.get(key);
                let (tile, closed) = match stream.and_then(|s| s.tiles.get(*next)) {
                    Some(tile) if tile.ready_at > now => (Err(tile.ready_at), false),
                    Some(tile) => (Ok((tile.words.clone(), tile.valid.clone())), false),
                    None => (Err(NEVER), stream.is_some_and(|s| s.closed)),
                };
                match tile {
                    // Not spilled yet, or still on its way from DRAM; the grid wakes
                    // us when a tile is spilled.
                    Err(ready_at) if !closed => {
                        self.spill_wait_since.get_or_insert(now);
                        Ok((EngineEvent::None, ready_at))
                    }
                    Err(_) => {
                        self.end_spill_wait(now);
                        Ok((EngineEvent::Finished, NEVER))
                    }
                    Ok((words, valid)) => {
                        self.end_spill_wait(now);
                        let done = self.restore(&words, &valid, now, env);
                        self.phase = Phase::ArriveNext;
                        Ok((EngineEvent::None, done))
                    }
                }
            }
            Task::Dma {
                plan,
                loader,
                iuid,
                delay_left,
                tile,
            } => {
                if *delay_left == 0 && *tile >= plan.tiles {
                    return Ok((EngineEvent::Finished, NEVER));
                }
                if *loader && *delay_left == 0 {
                    let (plan, iuid, t) = (*plan, *iuid, *tile);
                    let done = self.dma_transfer(plan, iuid, t, true, now, env)?;
                    self.phase = Phase::ArriveNext;
                    return Ok((EngineEvent::None, done));
                }
                arrive(self)
            }
        }
    }

    /// The rendezvous completed at `at`; returns the next wake cycle, and the tile a
    /// spilling virtual IU adds to its stream.
    pub fn release(
        &mut self,
        at: u64,
        env: &mut EngineEnv,
    ) -> Result<(u64, Option<(SpillKey, SpilledTile)>), DmaFault> {
        self.phase = Phase::Ready;
        match &mut self.task {
            Task::Spill { key, .. } => {
                let key = *key;
                let n = if env.spill_full {
                    env.port.words()
                } else {
                    env.port.written
                };
                let (words, valid) = env.port.read_words(n);
                let (busy, ready_at) = stream_words(env, n, at, false);
                // A spill of no words completes at once: only transfers defer.
                let ready_at = match &mut env.sink {
                    Some((sink, k)) if n > 0 => {
                        sink.push(Deferred {
                            key: *k,
                            effect: Effect::Spill {
                                stream: key,
                                words: n,
                                at,
                            },
                        });
                        PENDING
                    }
                    _ => ready_at,
                };
                env.traffic.toggles += toggles(words.iter().copied());
                env.traffic.store_words += u64::from(n);
                env.traffic.spill_words += u64::from(n);
                env.traffic.engine_store_words += u64::from(n);
                Ok((
                    at + busy,
                    Some((
                        key,
                        SpilledTile {
                            words,
                            valid,
                            ready_at,
                        },
                    )),
                ))
            }
            Task::Restore { next, .. } => {
                *next += 1;
                Ok((at, None))
            }
            Task::Dma {
                plan,
                loader,
                iuid,
                delay_left,
                tile,
            } => {
                if *delay_left > 0 {
                    *delay_left -= 1;
                    return Ok((at, None));
                }
                if *loader {
                    *tile += 1;
                    return Ok((at, None));
                }
                let (plan, iuid, t) = (*plan, *iuid, *tile);
                *tile += 1;
                let done = self.dma_transfer(plan, iuid, t, false, at, env)?;
                Ok((done, None))
            }
        }
    }

    /// Writes restored words into the link's producer buffer; returns when they land.
    fn restore(&mut self, words: &[u32], valid: &[u64], now: u64, env: &mut EngineEnv) -> u64 {
        let n = words.len() as u32;
        let (_, mut done) = stream_words(env, n, now, true);
        if let Some((sink, key)) = &mut env.sink
            && n > 0
        {
            sink.push(Deferred {
                key: *key,
                effect: Effect::Restore {
                    unit: env.unit,
                    generation: env.generation,
                    words: n,
                },
            });
            done = PENDING;
        }
        env.port.restore_words(words, valid);
        env.traffic.toggles += toggles(words.iter().copied());
        env.traffic.load_words += u64::from(n);
        env.traffic.restore_words += u64::from(n);
        env.traffic.engine_load_words += u64::from(n);
        done.max(now + 1)
    }

    /// Moves one descriptor tile between global memory and the link; returns the
    /// cycle the engine may act again.
    fn dma_transfer(
        &mut self,
        plan: DmaPlan,
        iuid: u32,
        tile: u64,
        load: bool,
        now: u64,
        env: &mut EngineEnv,
    ) -> Result<u64, DmaFault> {
        let len = env.memory.regions()[plan.buffer].len as i64;
        let base = env.memory.regions()[plan.buffer].base;
        let first = plan.offset + i64::from(iuid) * plan.iu_stride + tile as i64 * plan.tile_stride;
        let mut segments = Vec::with_capacity((plan.rows * plan.cols) as usize);
        let mut moved = Vec::with_capacity(segments.capacity());
        let mut logged = Vec::new();
        let shift = env.transaction_bytes.trailing_zeros();
        let deferred = env.sink.is_some();
        if !load
            && env.port.checked
            && let Some(word) = (0..plan.rows * plan.cols).find(|&w| !env.port.holds(w))
        {
            let held = env.port.held();
            return Err(DmaFault::Unwritten { word, tile, held });
        }
        for r in 0..plan.rows {
            for c in 0..plan.cols {
                let e = first + i64::from(r) * plan.row_stride + i64::from(c);
                if !(0..len).contains(&e) {
                    return Err(DmaFault::OutOfBounds { element: e, tile });
                }
                let addr = base + (e as u32) * 4;
                let word = r * plan.cols + c;
                segments.push(addr >> shift);
                if load && deferred {
                    // The words reach the CB when the transfer is applied.
                    continue;
                }
                let v = if load {
                    let v = match env.stores.as_deref() {
                        Some(log) => log.read(env.memory, addr),
                        None => env.memory.read(addr),
                    };
                    env.port.write(word, v);
                    v
                } else {
                    let v = env.port.read_word(word, crate::exec::cb::ENGINE);
                    logged.push((addr, v));
                    v
                };
                moved.push(v);
            }
        }
        segments.sort_unstable();
        segments.dedup();
        let n = u64::from(plan.rows * plan.cols);
        let count = segments.len() as u64;
        let mut done = queue_transactions(env, count, n, now);
        if let Some(log) = env.stores.as_deref_mut()
            && !logged.is_empty()
        {
            log.words(now, logged);
        } else if let Some((sink, key)) = &mut env.sink {
            let effect = if load {
                done = PENDING;
                Effect::DmaLoad {
                    unit: env.unit,
                    generation: env.generation,
                    plan,
                    iuid,
                    tile,
                }
            } else {
                Effect::DmaStore {
                    words: logged,
                    count,
                    at: now,
                }
            };
            sink.push(Deferred { key: *key, effect });
        }
        env.traffic.toggles += toggles(moved.into_iter());
        if load {
            env.traffic.engine_load_words += n;
            env.traffic.load_words += n;
            env.traffic.load_transactions += count;
            Ok(done.max(now + 1))
        } else {
            env.traffic.engine_store_words += n;
            env.traffic.store_words += n;
            env.traffic.store_transactions += count;
            // A storer is free once it has read the CB; the writes drain on their own.
            Ok(now + count.max(1))
        }
    }
}

/// Counts `count` DRAM transactions from cycle `now`, one per cycle, for a transfer
/// of `words` CB words; returns the last completion when DRAM is untimed.
fn queue_transactions(env: &mut EngineEnv, count: u64, words: u64, now: u64) -> u64 {
    // Untimed (functional mode); timing mode defers the transfer to the DRAM queue.
    let done = now + count.saturating_sub(1);
    if env.sink.is_none() {
        *env.drained_at = (*env.drained_at).max(done);
    }
    for c in [Component::Mcp, Component::Nocp, Component::Dramp] {
        env.counters.add(c, count);
    }
    env.counters.add(Component::Cbp, words.div_ceil(32));
    done
}

/// Queues `n` contiguous words on the DRAM (reads or writes); returns the cycles the
/// engine is busy issuing and the cycle the last transaction completes.
fn stream_words(env: &mut EngineEnv, n: u32, now: u64, read: bool) -> (u64, u64) {
    let per = env.transaction_bytes / 4;
    let count = u64::from(n.div_ceil(per));
    let done = queue_transactions(env, count, u64::from(n), now);
    if read {
        env.traffic.load_transactions += count;
    } else {
        env.traffic.store_transactions += count;
    }
    (count.max(1), done)
}
