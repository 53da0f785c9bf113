//! Global memory and the DRAM queue in timing mode, deferred: a unit's global
//! loads, stores and atomics and its engines' transfers are recorded with the key
//! (cycle, unit, sequence) they would have in a one-at-a-time simulation, and take
//! effect at the end of a window of cycles, in key order. The DRAM queue thus sees
//! requests in exactly the order of a sequential run, and loads see exactly the
//! memory a sequential run would show them.
//!
//! This is exact because nothing needs a deferred result within its window: the
//! earliest a DRAM transaction can complete is a full DRAM latency after its
//! request, and windows are at most that long. Until then the register a load
//! writes is pending ([`PENDING`]): the scoreboard keeps its readers, and the warp
//! waits with a memory stall, as it would for the real completion time. (Where
//! another latency could exceed the DRAM latency, the grid applies accesses at once
//! instead, on one thread.)

use crate::exec::lanes::{
    Lanes, Wide, lane_toggles, lanes_of, toggles, wide_toggles, write_masked,
};
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::Caching;
use crate::exec::ops::Reg;
use crate::exec::space::Global;
use crate::exec::warp::Warp;
use crate::load::DmaPlan;
use crate::load::plan::SpillKey;
use crate::sem::memory::Atomic;
use crate::sem::memory::{field, merge_field};
use crate::timing::cache::Caches;
use crate::timing::dram::Dram;
use crate::timing::window::StoreLog;
use spu_isa::Ty;

/// A time no deferred result can be known before: the ready time of a pending
/// register or the wake of an engine waiting for its transfer (half of `u64::MAX`,
/// so adding latencies cannot overflow).
pub const PENDING: u64 = u64::MAX / 2;

/// Where an effect sits in a one-at-a-time simulation (the caches order their
/// line fetches by it, so it lives with them).
pub use crate::timing::cache::Key;

/// One deferred access.
#[derive(Debug, Clone)]
pub struct Deferred {
    pub key: Key,
    pub effect: Effect,
}

/// What to do.
#[derive(Debug, Clone)]
pub enum Effect {
    /// A warp's global load into register `dst`, queueing `segments` transactions
    /// after the `before` that earlier words of the same instruction queued (a
    /// 64-bit or vector access records one effect per 32-bit word, but its
    /// transactions once); with `narrow`, `addrs` are byte addresses of 8- or
    /// 16-bit fields of that type.
    Load {
        target: Target,
        dst: Reg,
        mask: u32,
        addrs: Box<Lanes>,
        segments: u64,
        before: u64,
        narrow: Option<Ty>,
        caching: Caching,
        /// The instruction (for the energy counters of the traffic it causes).
        pc: u32,
    },
    /// A warp's global store, `segments` and `before` as for loads; with
    /// `narrow`, `addrs` are byte addresses and each lane's field is merged into
    /// its word in lane order.
    Store {
        unit: usize,
        mask: u32,
        addrs: Box<Lanes>,
        data: Box<Lanes>,
        segments: u64,
        before: u64,
        narrow: Option<Ty>,
        caching: Caching,
        /// The instruction (for the energy counters of the traffic it causes).
        pc: u32,
    },
    /// A warp's global atomics, one transaction per lane in lane order; the old
    /// values go to register `dst` (and the next one for 64-bit types), if any.
    Atomic {
        target: Target,
        atom: Atomic,
        dst: Option<Reg>,
        mask: u32,
        addrs: Box<Lanes>,
        operands: Box<[Wide; 2]>,
        pc: u32,
    },
    /// A warp's local load or store on a machine with data caches, at `addrs` in
    /// the caches' address space (every word of every lane): its values moved when
    /// it ran (local memory is the warp's own); here its lines go through the
    /// caches, and a load's `regs` registers from `dst` become ready.
    Local {
        target: Target,
        pc: u32,
        store: bool,
        dst: Reg,
        regs: u8,
        addrs: Vec<u64>,
    },
    /// A DMA loader's tile: global memory into the engine's CB port; the engine
    /// may act again when the last transaction lands.
    DmaLoad {
        unit: usize,
        generation: u64,
        plan: DmaPlan,
        iuid: u32,
        tile: u64,
    },
    /// Words a DMA storer writes to global memory, in order, with `count`
    /// transactions from cycle `at`.
    DmaStore {
        words: Vec<(u32, u32)>,
        count: u64,
        at: u64,
    },
    /// A spill of `words` words to stream `stream` from cycle `at`: the spilled tile
    /// is ready when the last transaction lands.
    Spill {
        stream: SpillKey,
        words: u32,
        at: u64,
    },
    /// A restore of `words` words by `unit`'s engine, which may act again when the
    /// last transaction lands.
    Restore {
        unit: usize,
        generation: u64,
        words: u32,
    },
}

/// The warp an access belongs to: the unit, its work item (generation) and the
/// warp's index in the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub unit: usize,
    pub generation: u64,
    pub warp: usize,
}

/// Global memory as a unit sees it in timing mode with deferred accesses: nothing
/// happens now; the access is recorded under `key`.
#[derive(Debug)]
pub struct Recorder<'a> {
    pub memory: &'a GlobalMemory,
    pub sink: &'a mut Vec<Deferred>,
    pub key: Key,
    pub target: Target,
    /// Toggles of the words stored (known now).
    pub toggles: u64,
    pub transaction_bytes: u32,
    /// How the instruction uses the data caches.
    pub caching: Caching,
    /// The instruction's address.
    pub pc: u32,
    /// The unit's view of what it stored in the window, kept when the kernel
    /// prints (what `printf` reads: [`Global::seen`]).
    pub seen: Option<&'a mut StoreLog>,
}

impl Recorder<'_> {
    /// The transactions a word access at byte addresses `addrs` (lanes of `mask`)
    /// adds to its instruction, and how many earlier words of the instruction
    /// queued. A 64-bit or vector access reaches global memory one 32-bit word at a
    /// time, all under one key; its transactions are the distinct aligned segments
    /// of all its words, each queued once, as for a 32-bit access.
    fn transactions(&self, addrs: &Lanes, mask: u32) -> (u64, u64) {
        // Transactions are at least 4 bytes: byte and word addresses of one word
        // fall in the same segment.
        let shift = self.transaction_bytes.trailing_zeros();
        let earlier = self
            .sink
            .iter()
            .rev()
            .take_while(|d| d.key == self.key)
            .filter_map(|d| match &d.effect {
                Effect::Load { addrs, mask, .. } | Effect::Store { addrs, mask, .. } => {
                    Some((addrs, *mask))
                }
                _ => None,
            });
        let mut queued: Vec<u32> = earlier
            .flat_map(|(a, m)| lanes_of(m).map(move |l| a[l] >> shift))
            .collect();
        if queued.is_empty() {
            return (crate::exec::lanes::distinct(addrs, mask, shift), 0);
        }
        queued.sort_unstable();
        queued.dedup();
        let mut new: Vec<u32> = lanes_of(mask)
            .map(|l| addrs[l] >> shift)
            .filter(|s| queued.binary_search(s).is_err())
            .collect();
        new.sort_unstable();
        new.dedup();
        (new.len() as u64, queued.len() as u64)
    }
}

impl Global for Recorder<'_> {
    fn layout(&self) -> &GlobalMemory {
        self.memory
    }

    fn seen(&self, addr: u32) -> u32 {
        match &self.seen {
            Some(log) => log.read(self.memory, addr),
            None => self.memory.read(addr),
        }
    }

    fn load(&mut self, _warp: &mut Warp, dst: Reg, addrs: &Lanes, mask: u32) {
        let (segments, before) = self.transactions(addrs, mask);
        self.sink.push(Deferred {
            key: self.key,
            effect: Effect::Load {
                target: self.target,
                dst,
                mask,
                addrs: Box::new(*addrs),
                segments,
                before,
                narrow: None,
                caching: self.caching,
                pc: self.pc,
            },
        });
    }

    fn load_narrow(&mut self, _warp: &mut Warp, dst: Reg, ty: Ty, bytes: &Lanes, mask: u32) {
        let (segments, before) = self.transactions(bytes, mask);
        self.sink.push(Deferred {
            key: self.key,
            effect: Effect::Load {
                target: self.target,
                dst,
                mask,
                addrs: Box::new(*bytes),
                segments,
                before,
                narrow: Some(ty),
                caching: self.caching,
                pc: self.pc,
            },
        });
    }

    fn store_narrow(&mut self, ty: Ty, bytes: &Lanes, data: &Lanes, mask: u32) {
        let (segments, before) = self.transactions(bytes, mask);
        if let Some(log) = self.seen.as_deref_mut() {
            log.note_narrow(self.memory, ty, bytes, data, mask);
        }
        // Each lane's word is stored on its own: no toggles between lanes.
        self.sink.push(Deferred {
            key: self.key,
            effect: Effect::Store {
                unit: self.target.unit,
                mask,
                addrs: Box::new(*bytes),
                data: Box::new(*data),
                segments,
                before,
                narrow: Some(ty),
                caching: self.caching,
                pc: self.pc,
            },
        });
    }

    fn store(&mut self, addrs: &Lanes, data: &Lanes, mask: u32) {
        let (segments, before) = self.transactions(addrs, mask);
        if let Some(log) = self.seen.as_deref_mut() {
            log.note_store(addrs, data, mask);
        }
        self.toggles += lane_toggles(data, mask);
        self.sink.push(Deferred {
            key: self.key,
            effect: Effect::Store {
                unit: self.target.unit,
                mask,
                addrs: Box::new(*addrs),
                data: Box::new(*data),
                segments,
                before,
                narrow: None,
                caching: self.caching,
                pc: self.pc,
            },
        });
    }

    fn atomic(
        &mut self,
        _warp: &mut Warp,
        atom: Atomic,
        dst: Option<Reg>,
        addrs: &Lanes,
        a: &Wide,
        b: &Wide,
        mask: u32,
    ) {
        if mask == 0 {
            // No lane, no transaction: nothing to defer.
            return;
        }
        if let Some(log) = self.seen.as_deref_mut() {
            log.note_atomic(self.memory, atom, addrs, [a, b], mask);
        }
        self.sink.push(Deferred {
            key: self.key,
            effect: Effect::Atomic {
                target: self.target,
                atom,
                dst,
                mask,
                addrs: Box::new(*addrs),
                operands: Box::new([*a, *b]),
                pc: self.pc,
            },
        });
    }
}

/// What applying an effect gives back to the unit or stream it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    None,
    /// Register `dst` of the target warp gets `values` in the lanes of `mask`
    /// (and register `dst + 1` gets `high`, for a 64-bit atomic), ready at
    /// `ready`; `toggles` are the bit toggles of the words moved; `pc` is the
    /// instruction (for the trace).
    Register {
        target: Target,
        pc: u32,
        dst: Reg,
        mask: u32,
        values: Box<Lanes>,
        high: Option<Box<Lanes>>,
        ready: u64,
        toggles: u64,
    },
    /// Registers `dst ..` (`regs` of them) of the target warp, whose values it
    /// already holds, are ready at `ready` (a local load through the caches).
    Ready {
        target: Target,
        dst: Reg,
        regs: u8,
        ready: u64,
    },
    /// The engine of `unit` (work item `generation`) may act again at `at`;
    /// `port_words` go to its CB port first (a DMA load).
    Engine {
        unit: usize,
        generation: u64,
        at: u64,
        port_words: Vec<u32>,
        toggles: u64,
    },
    /// The oldest pending tile of `stream` is ready at `at`.
    Tile {
        stream: SpillKey,
        at: u64,
    },
}

/// Applies one effect recorded at cycle `now`: global memory changes and DRAM
/// transactions are queued in the order effects are applied.
/// With `caches`, loads, stores and atomics go through them (line by line) and
/// only their misses and write-backs reach the DRAM queue.
pub fn apply(
    effect: Effect,
    key: Key,
    memory: &mut GlobalMemory,
    dram: &mut Dram,
    caches: Option<&mut Caches>,
    transaction_bytes: u32,
) -> Outcome {
    let now = key.0;
    let queue_at = |dram: &mut Dram, at: u64, count: u64| {
        let mut done = at;
        for i in 0..count {
            done = done.max(dram.request(at + i, transaction_bytes));
        }
        done
    };
    let queue = |dram: &mut Dram, count: u64| queue_at(dram, now, count);
    match effect {
        Effect::Load {
            target,
            dst,
            mask,
            addrs,
            segments,
            before,
            narrow,
            caching,
            pc,
        } => {
            let mut values = Box::new([0u32; 32]);
            for l in lanes_of(mask) {
                values[l] = memory.read(addrs[l] & !3);
            }
            let toggles = lane_toggles(&values, mask);
            if let Some(ty) = narrow {
                for l in lanes_of(mask) {
                    values[l] = field(ty, values[l], addrs[l]);
                }
            }
            // A later word of a 64-bit or vector load arrives with the
            // instruction's transactions, the last of which the queue (first in,
            // first out) finished most recently.
            let ready = match caches {
                Some(c) => c.access(
                    key,
                    target.unit,
                    pc,
                    &addrs,
                    mask,
                    caching,
                    false,
                    now,
                    dram,
                ),
                None => {
                    let earlier = if before > 0 { dram.drained_at() } else { now };
                    queue_at(dram, now + before, segments).max(earlier)
                }
            };
            Outcome::Register {
                target,
                pc,
                dst,
                mask,
                values,
                high: None,
                ready,
                toggles,
            }
        }
        Effect::Store {
            unit,
            mask,
            addrs,
            data,
            segments,
            before,
            narrow,
            caching,
            pc,
        } => {
            for l in lanes_of(mask) {
                let word = addrs[l] & !3;
                let value = match narrow {
                    Some(ty) => merge_field(ty, memory.read(word), addrs[l], data[l]),
                    None => data[l],
                };
                memory.write(word, value);
            }
            match caches {
                Some(c) => {
                    c.access(key, unit, pc, &addrs, mask, caching, true, now, dram);
                }
                None => {
                    queue_at(dram, now + before, segments);
                }
            }
            Outcome::None
        }
        Effect::Atomic {
            target,
            atom,
            dst,
            mask,
            addrs,
            operands,
            pc,
        } => {
            let [a, b] = &*operands;
            let old = crate::exec::memory::atomic_lanes(memory, atom, &addrs, a, b, mask);
            let toggles = wide_toggles(&old, mask, atom.words());
            let word = |k: u32| Box::new(crate::exec::lanes::word(&old, k));
            let ready = match caches {
                Some(c) => c.atomic(target.unit, pc, &addrs, mask, now, dram),
                None => queue(dram, u64::from(mask.count_ones())),
            };
            let Some(dst) = dst else {
                return Outcome::None;
            };
            Outcome::Register {
                target,
                pc,
                dst,
                mask,
                values: word(0),
                high: (atom.words() == 2).then(|| word(1)),
                ready,
                toggles,
            }
        }
        Effect::Local {
            target,
            pc,
            store,
            dst,
            regs,
            addrs,
        } => {
            let ready = match caches {
                Some(c) => c.local(target.unit, pc, &addrs, store, now, dram),
                None => now,
            };
            if store {
                return Outcome::None;
            }
            Outcome::Ready {
                target,
                dst,
                regs,
                ready,
            }
        }
        Effect::DmaLoad {
            unit,
            generation,
            plan,
            iuid,
            tile,
        } => {
            let r = &memory.regions()[plan.buffer];
            let base = r.base;
            let first =
                plan.offset + i64::from(iuid) * plan.iu_stride + tile as i64 * plan.tile_stride;
            let mut words = Vec::with_capacity((plan.rows * plan.cols) as usize);
            let mut segments = Vec::with_capacity(words.capacity());
            let shift = transaction_bytes.trailing_zeros();
            for row in 0..plan.rows {
                for c in 0..plan.cols {
                    // The engine checked every element when it recorded the tile.
                    let e = first + i64::from(row) * plan.row_stride + i64::from(c);
                    let addr = base + (e as u32) * 4;
                    words.push(memory.read(addr));
                    segments.push(addr >> shift);
                }
            }
            segments.sort_unstable();
            segments.dedup();
            let done = queue(dram, segments.len() as u64);
            Outcome::Engine {
                unit,
                generation,
                at: done.max(now + 1),
                toggles: toggles(words.iter().copied()),
                port_words: words,
            }
        }
        Effect::DmaStore { words, count, at } => {
            for (a, v) in words {
                memory.write(a, v);
            }
            queue_at(dram, at, count);
            Outcome::None
        }
        Effect::Spill { stream, words, at } => {
            let per = transaction_bytes / 4;
            let done = queue_at(dram, at, u64::from(words.div_ceil(per)));
            Outcome::Tile { stream, at: done }
        }
        Effect::Restore {
            unit,
            generation,
            words,
        } => {
            let per = transaction_bytes / 4;
            let done = queue(dram, u64::from(words.div_ceil(per)));
            Outcome::Engine {
                unit,
                generation,
                at: done.max(now + 1),
                port_words: Vec::new(),
                toggles: 0,
            }
        }
    }
}

/// Writes a register outcome into `warp`.
pub fn deliver(warp: &mut Warp, dst: Reg, mask: u32, values: &Lanes) {
    write_masked(&mut warp.regs[usize::from(dst)], values, mask);
}
