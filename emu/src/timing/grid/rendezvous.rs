//! Rendezvous: units and block slots arriving at directional and global
//! blocksyncs, the CB buffer pairs switching, and the release of both ends one
//! handshake later (thesis 2.2.1).

use super::Grid;
use crate::exec::fault::{Fault, FaultKind};
use crate::load::plan::WorkItem;
use crate::observe::outcome::Stop;
use crate::timing::cb::End;
use crate::timing::effects::Key;
use crate::timing::unit::Unit;
use spu_isa::Side;

impl Grid<'_> {
    /// Releases one end of a completed rendezvous (block slot `slot` of unit `u`)
    /// from cycle `at`; `key` orders what the release sends to global memory.
    pub(super) fn release(
        &mut self,
        u: usize,
        slot: usize,
        at: u64,
        key: Key,
    ) -> Result<(), Box<Stop>> {
        self.units[u].syncs += 1;
        if let Some(log) = &mut self.units[u].activity {
            log.resume(at);
        }
        if let Some((engine, mut env)) = self.engine_env(u, key) {
            match engine.release(at, &mut env) {
                Ok((w, tile)) => {
                    self.units[u].wake = w;
                    if let Some((stream, tile)) = tile {
                        self.spilled += tile.words.len() as u64 * 4 + tile.valid.len() as u64 * 8;
                        self.spills.entry(stream).or_default().tiles.push(tile);
                        if self.spilled > self.spill_room {
                            return Err(Box::new(Stop::SpillFull {
                                bytes: self.spilled,
                                tiles: self.spills.values().map(|s| s.tiles.len() as u64).sum(),
                                room: self.spill_room,
                                blocks_done: self.blocks_done,
                                blocks_total: self.blocks_total,
                            }));
                        }
                    }
                }
                Err(f) => return Err(self.engine_stop(u, f, at)),
            }
        } else if self.units[u].slot_ports.is_empty() {
            self.units[u].release_blocksync(at, &self.image.program);
        } else {
            self.sync_pending[self.geo.agent(u, slot)] = false;
            self.units[u].release_slot(slot, at, &self.image.program);
        }
        self.schedule(u);
        Ok(())
    }

    /// Switches link `l`'s pair of buffers.
    pub(super) fn switch(&mut self, l: usize) {
        let link = &mut self.links[l];
        let (p, c) = (link.producer, link.consumer);
        let (ps, cs) = (link.producer_slot, link.consumer_slot);
        let (out, input) = (link.out.code() as usize, link.input.code() as usize);
        let (producer, consumer) = if p == c {
            // An inner link: two slots of one SM.
            two_slots(&mut self.units[p], ps, cs)
        } else {
            let (producer, consumer) = if p < c {
                let (a, b) = self.units.split_at_mut(c);
                (&mut a[p], &mut b[0])
            } else {
                let (a, b) = self.units.split_at_mut(p);
                (&mut b[0], &mut a[c])
            };
            (
                crate::timing::unit::ports_of(&mut producer.ports, &mut producer.slot_ports, ps),
                crate::timing::unit::ports_of(&mut consumer.ports, &mut consumer.slot_ports, cs),
            )
        };
        if let (Some(pp), Some(cp)) = (&mut producer[out], &mut consumer[input]) {
            link.switch(pp, cp);
        }
    }

    /// Unit `u` arrives at a sync: on the link of `side` as `end`, or globally;
    /// `pc` is the sync instruction for code.
    pub(super) fn arrive(
        &mut self,
        u: usize,
        slot: usize,
        link_end: Option<(usize, End)>,
        pc: Option<u32>,
        now: u64,
    ) -> Result<(), Box<Stop>> {
        let folded = !self.units[u].slot_ports.is_empty();
        if folded {
            self.sync_pending[self.geo.agent(u, slot)] = true;
        }
        let unit = &mut self.units[u];
        // On an SM holding several blocks, the activity log shows the unit waiting
        // only once every block waits (see `arrive_slots`).
        if unit.activity.is_some() && !folded {
            let side = link_end.map(|(l, _)| {
                let port = unit
                    .ports
                    .iter()
                    .position(|p| p.as_ref().is_some_and(|p| p.link == l))
                    .unwrap_or(0);
                Side::ALL[port]
            });
            if let Some(log) = &mut unit.activity {
                log.wait(now, side);
            }
        }
        match link_end {
            None => {
                self.arrived_global[self.geo.agent(u, slot)] = true;
                Ok(())
            }
            Some((l, end)) => {
                if let Some(item) = self.slot_item(u, slot) {
                    self.links[l].record(end, item, pc);
                }
                if self.links[l].arrive(end) {
                    self.switch(l);
                    self.link_syncs += 1;
                    let at = now + self.timing.blocksync_latency();
                    let link = &self.links[l];
                    let (p, c) = (link.producer, link.consumer);
                    let (ps, cs) = (link.producer_slot, link.consumer_slot);
                    let key = self.units[u].next_key(now);
                    self.release(p, ps, at, key)?;
                    self.release(c, cs, at, key)?;
                }
                Ok(())
            }
        }
    }

    /// The work item block slot `slot` of unit `u` runs.
    pub(super) fn slot_item(&self, u: usize, slot: usize) -> Option<WorkItem> {
        let unit = &self.units[u];
        if unit.slot_ports.is_empty() {
            return unit.current;
        }
        unit.code()
            .and_then(|c| c.slots.get(slot).copied().flatten())
    }

    /// Block slot `slot` of unit `u` arrives at the blocksync at `pc` (directional
    /// on `side`, or global).
    pub(super) fn arrive_slot(
        &mut self,
        u: usize,
        slot: usize,
        side: Option<Side>,
        pc: u32,
        now: u64,
    ) -> Result<(), Box<Stop>> {
        let Some(side) = side else {
            return self.arrive(u, slot, None, Some(pc), now);
        };
        let unit = &mut self.units[u];
        let ports = crate::timing::unit::ports_of(&mut unit.ports, &mut unit.slot_ports, slot);
        let Some(l) = ports[side.code() as usize].as_ref().map(|p| p.link) else {
            let warp = unit.code().map_or(0, |c| c.slot_warps(slot).start as u32);
            return Err(self.fault_stop(
                u,
                Fault {
                    kind: FaultKind::NoCbPort { side },
                    pc,
                    warp,
                    lane: 0,
                },
                now,
            ));
        };
        let end = if side.is_input() {
            End::Consumer
        } else {
            End::Producer
        };
        self.arrive(u, slot, Some((l, end)), Some(pc), now)
    }

    /// An SM holding several blocks: retires its finished blocks and lets every
    /// block whose warps all wait at a blocksync arrive there (a step reports one
    /// event, and several blocks may have arrived or finished in it).
    pub(super) fn settle_slots(&mut self, u: usize, now: u64) -> Result<(), Box<Stop>> {
        if self.units[u].slot_ports.is_empty() {
            return Ok(());
        }
        if self.units[u].code().is_some_and(|c| c.any_finished()) {
            self.finish_blocks(u, now);
        }
        let arrived: Vec<(usize, u32)> = match self.units[u].code() {
            Some(code) => code
                .slots_at_blocksync()
                .into_iter()
                .filter(|&slot| !self.sync_pending[self.geo.agent(u, slot)])
                .filter_map(|slot| {
                    code.warps[code.slot_warps(slot)]
                        .iter()
                        .find_map(|w| match w.state {
                            crate::exec::warp::WarpState::AtBlockSync(pc) => Some((slot, pc)),
                            _ => None,
                        })
                })
                .collect(),
            None => Vec::new(),
        };
        for (slot, pc) in arrived {
            let side = match self.image.program.ops[pc as usize].run {
                crate::exec::ops::Run::BlockSync(side) => side,
                _ => None,
            };
            self.arrive_slot(u, slot, side, pc, now)?;
        }
        // The unit waits when every block it holds waits.
        let all_wait = self.units[u].code().is_some_and(|c| {
            (0..c.slots.len())
                .filter(|&s| c.slots[s].is_some())
                .all(|s| self.sync_pending[self.geo.agent(u, s)])
        });
        if all_wait && let Some(log) = &mut self.units[u].activity {
            log.wait(now, None);
        }
        Ok(())
    }

    /// Global blocksync: when every busy unit has arrived, every CB pair switches
    /// and all continue after the handshake (thesis 2.2.1).
    pub(super) fn check_global(&mut self, now: u64) -> Result<(), Box<Stop>> {
        // Only kernels with a global blocksync (and their engines) arrive globally.
        if !self.global_sync {
            return Ok(());
        }
        // Every busy unit arrives; on an SM holding several blocks, every block it
        // holds.
        let busy: Vec<(usize, usize)> = (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .flat_map(|u| self.busy_slots(u).into_iter().map(move |s| (u, s)))
            .collect();
        if busy.is_empty()
            || !busy
                .iter()
                .all(|&(u, s)| self.arrived_global[self.geo.agent(u, s)])
        {
            return Ok(());
        }
        for l in 0..self.links.len() {
            self.switch(l);
        }
        self.global_syncs += 1;
        let at = now + self.timing.blocksync_latency();
        self.post_seq += 1;
        let key = (now, u32::MAX, self.post_seq);
        for (u, s) in busy {
            self.arrived_global[self.geo.agent(u, s)] = false;
            self.release(u, s, at, key)?;
        }
        Ok(())
    }

    /// The block slots of busy unit `u` that take part in a global blocksync: every
    /// slot holding a block on an SM holding several, else slot 0.
    pub(super) fn busy_slots(&self, u: usize) -> Vec<usize> {
        match self.units[u].code() {
            Some(c) if !self.units[u].slot_ports.is_empty() => (0..c.slots.len())
                .filter(|&s| c.slots[s].is_some())
                .collect(),
            _ => vec![0],
        }
    }
}

/// The ports of two different block slots of one unit, borrowed together.
fn two_slots(
    unit: &mut Unit,
    a: usize,
    b: usize,
) -> (
    &mut [Option<crate::exec::cb::Port>; 4],
    &mut [Option<crate::exec::cb::Port>; 4],
) {
    assert_ne!(a, b, "an inner link joins two slots");
    let (lo, hi) = (a.min(b), a.max(b));
    let (first, rest) = if lo == 0 {
        (&mut unit.ports, &mut unit.slot_ports[..])
    } else {
        let (x, y) = unit.slot_ports.split_at_mut(lo);
        (&mut x[lo - 1], y)
    };
    let second = &mut rest[hi - lo - 1];
    if a < b {
        (first, second)
    } else {
        (second, first)
    }
}
