//! Turning what went wrong into a [`Stop`]: faults of code and of engines (with the
//! link of a CB checker error), and the deadlock report: the units of one wait
//! chain or cycle, what each waits for, and who made the syncs on the links between
//! them.

use super::Grid;
use crate::exec::fault::{Fault, FaultKind};
use crate::exec::ops::Run;
use crate::exec::warp::WarpState;
use crate::load::plan::{Role, WorkItem};
use crate::observe::outcome::{BlockedLink, CbLink, ChainEnd, Place, Stop, SyncsBy, Waiting};
use crate::timing::cb::Link;
use crate::timing::engine::{DmaFault, Task};
use spu_isa::Side;

impl Grid<'_> {
    pub(super) fn engine_stop(&self, u: usize, f: DmaFault, now: u64) -> Box<Stop> {
        let role = self.role(u);
        let buffer = match self.units[u].engine().map(|e| &e.task) {
            Some(Task::Dma { plan, .. }) => plan.buffer,
            _ => 0,
        };
        let r = &self.memory.regions()[buffer];
        let kind = match f {
            DmaFault::OutOfBounds { element, tile } => FaultKind::DmaOutOfBounds {
                buffer: r.name.clone(),
                element,
                len: r.len,
                tile,
            },
            DmaFault::Unwritten { word, tile, held } => FaultKind::DmaUnwritten {
                buffer: r.name.clone(),
                word,
                tile,
                held,
            },
        };
        Box::new(Stop::Engine {
            kind,
            unit: self.units[u].label,
            role,
            cycle: (!self.functional).then_some(now),
        })
    }

    /// The block slot of unit `u` whose warp made `fault`: the slot whose warp of
    /// that index stopped at the faulting instruction (0 on a unit of one slot).
    fn fault_slot(&self, u: usize, fault: &Fault) -> usize {
        let unit = &self.units[u];
        match unit.code() {
            Some(code) if !unit.slot_ports.is_empty() => (0..code.slots.len())
                .find(|&s| {
                    code.slots[s].is_some()
                        && code
                            .warps
                            .get(code.slot_warps(s).start + fault.warp as usize)
                            .is_some_and(|w| !w.is_done() && w.pc() == Some(fault.pc))
                })
                .unwrap_or(0),
            _ => 0,
        }
    }

    pub(super) fn fault_stop(&self, u: usize, fault: Fault, now: u64) -> Box<Stop> {
        let slot = self.fault_slot(u, &fault);
        let cb = match fault.kind {
            FaultKind::UnwrittenCb { side, addr, .. } => self.cb_link(u, slot, side, addr / 4),
            _ => None,
        };
        Box::new(Stop::Fault {
            fault,
            unit: self.units[u].label,
            role: self.slot_item(u, slot).map_or(self.role(u), |i| i.role),
            cycle: (!self.functional).then_some(now),
            ntid: self.units[u].code().map_or([0; 3], |c| c.ctx.ntid),
            cb,
        })
    }

    /// The ports of block slot `slot` of unit `u`.
    fn slot_ports(&self, u: usize, slot: usize) -> &[Option<crate::exec::cb::Port>; 4] {
        let unit = &self.units[u];
        match slot.checked_sub(1) {
            Some(s) if s < unit.slot_ports.len() => &unit.slot_ports[s],
            _ => &unit.ports,
        }
    }

    /// The state of the link block slot `slot` of unit `u` read `word` from on
    /// `side`, for a CB checker error.
    fn cb_link(&self, u: usize, slot: usize, side: Side, word: u32) -> Option<Box<CbLink>> {
        let index = self.slot_ports(u, slot)[side.code() as usize]
            .as_ref()?
            .link;
        let l = &self.links[index];
        let me = self.geo.agent(u, slot);
        let reader_consumes = self.geo.agent(l.consumer, l.consumer_slot) == me;
        let partner = self.other_end(me, l);
        let (pu, ps) = self.geo.agent_unit(partner);
        let pending = self.slot_ports(l.producer, l.producer_slot)[l.out.code() as usize]
            .as_ref()
            .is_some_and(|p| p.holds(word));
        Some(Box::new(CbLink {
            side,
            reader_consumes,
            partner: self.place(partner),
            partner_role: self.slot_item(pu, ps).map(|i| i.role),
            arrivals: l.arrivals,
            switches: l.switches,
            pending: reader_consumes && pending,
            global_sync: self.global_sync,
        }))
    }

    /// Pass index `pass` as (x, y).
    fn pass_xy(&self, pass: u32) -> [u32; 2] {
        let [nx, _] = self.geo.passes();
        [pass % nx, pass / nx]
    }

    /// Where agent `a` runs: its unit, and its slot on an SM holding several
    /// blocks.
    fn place(&self, a: usize) -> Place {
        let (u, slot) = self.geo.agent_unit(a);
        Place {
            unit: self.units[u].label,
            slot: (!self.units[u].slot_ports.is_empty()).then_some(slot as u32),
        }
    }

    /// The agent at the other end of link `l` from agent `a`.
    fn other_end(&self, a: usize, l: &Link) -> usize {
        let producer = self.geo.agent(l.producer, l.producer_slot);
        if producer == a {
            self.geo.agent(l.consumer, l.consumer_slot)
        } else {
            producer
        }
    }

    /// True while agent `a` has work: its unit is busy and, on an SM holding
    /// several blocks, its slot holds one.
    fn agent_busy(&self, a: usize) -> bool {
        let (u, slot) = self.geo.agent_unit(a);
        self.units[u].busy
            && (self.units[u].slot_ports.is_empty() || self.slot_item(u, slot).is_some())
    }

    /// The warps of agent `a` that have not exited, for deadlock reports: (warp,
    /// pc, state).
    fn agent_warps(&self, a: usize) -> Vec<(u32, u32, WarpState)> {
        let (u, slot) = self.geo.agent_unit(a);
        let unit = &self.units[u];
        match unit.code() {
            Some(code) if !unit.slot_ports.is_empty() => code.warps[code.slot_warps(slot)]
                .iter()
                .filter(|w| !w.is_done())
                .map(|w| {
                    let pc = match w.state {
                        WarpState::AtBarrier(pc) | WarpState::AtBlockSync(pc) => pc,
                        _ => w.pc().unwrap_or(0),
                    };
                    (w.index, pc, w.state)
                })
                .collect(),
            _ => unit.waiting_warps(),
        }
    }

    /// What stuck agent `a` waits for.
    fn blocked(&self, a: usize) -> Blocked {
        let (u, slot) = self.geo.agent_unit(a);
        if let Some(e) = self.units[u].engine() {
            if e.is_waiting() {
                if self.global_sync {
                    return Blocked::Global;
                }
                return Blocked::Link {
                    link: e.link,
                    partner: self.other_end(a, &self.links[e.link]),
                };
            }
            if let Task::Restore { key, .. } = &e.task {
                let spills =
                    |i: &WorkItem| matches!(i.role, Role::Spill { key: k, .. } if k == *key);
                let spiller = (0..self.units.len()).find(|&v| {
                    self.units[v].current.as_ref().is_some_and(spills)
                        || self.units[v].queue.iter().any(spills)
                });
                return Blocked::Tiles(spiller);
            }
            return Blocked::OwnWarps;
        }
        let warps = self.agent_warps(a);
        let at_sync = warps.first().and_then(|&(_, pc, state)| match state {
            WarpState::AtBlockSync(_) => Some(pc),
            _ => None,
        });
        let Some(pc) = at_sync.filter(|&pc| {
            warps
                .iter()
                .all(|&(_, p, s)| p == pc && matches!(s, WarpState::AtBlockSync(_)))
        }) else {
            return Blocked::OwnWarps;
        };
        let unit = &self.units[u];
        let ports = if slot == 0 {
            &unit.ports
        } else {
            &unit.slot_ports[slot - 1]
        };
        match self.image.program.ops[pc as usize].run {
            Run::BlockSync(Some(side)) => match &ports[side.code() as usize] {
                Some(port) => Blocked::Link {
                    link: port.link,
                    partner: self.other_end(a, &self.links[port.link]),
                },
                None => Blocked::OwnWarps,
            },
            _ => Blocked::Global,
        }
    }

    /// The next agent in `a`'s wait chain, or what ends the chain.
    fn waits_for(&self, a: usize) -> Result<usize, ChainEnd> {
        let partner = match self.blocked(a) {
            Blocked::Link { partner, .. } => partner,
            Blocked::Tiles(Some(partner)) => partner,
            Blocked::Tiles(None) => return Err(ChainEnd::OwnWarps),
            Blocked::OwnWarps => return Err(ChainEnd::OwnWarps),
            Blocked::Global => {
                return self
                    .stuck()
                    .into_iter()
                    .find(|&v| !self.arrived_global[v])
                    .ok_or(ChainEnd::Global);
            }
        };
        if self.agent_busy(partner) {
            return Ok(partner);
        }
        let (pu, _) = self.geo.agent_unit(partner);
        let unit = self.units[pu].label;
        // A busy unit here is an SM whose block in that slot has finished.
        Err(match self.units[pu].queue.front() {
            Some(next) if !self.units[pu].busy => ChainEnd::NotStarted {
                unit,
                role: next.role,
                pass: self.pass_xy(next.pass),
                now: self.pass_xy(self.pass_now),
            },
            _ => ChainEnd::Finished(self.place(partner)),
        })
    }

    /// Every agent with work: busy units, and the slots holding blocks of SMs
    /// holding several.
    fn stuck(&self) -> Vec<usize> {
        (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .flat_map(|u| {
                self.busy_slots(u)
                    .into_iter()
                    .map(move |s| self.geo.agent(u, s))
            })
            .collect()
    }

    /// The deadlock report: the longest wait chain, or a wait cycle if there is
    /// one, with the links along it and who made their syncs. Chains run over
    /// agents: a block slot of an SM holding several blocks waits on its own.
    pub(super) fn deadlock(&self, now: u64) -> Box<Stop> {
        let stuck = self.stuck();
        let n = self.completed.len().max(self.units.len());
        let mut next: Vec<Option<Result<usize, ChainEnd>>> = vec![None; n];
        for &a in &stuck {
            next[a] = Some(self.waits_for(a));
        }
        // Length of the chain from each agent (agents on or leading into a cycle
        // are marked by `on_cycle`); each agent waits for at most one other.
        let mut length = vec![0usize; n];
        let mut cycle: Option<Vec<usize>> = None;
        for &s in &stuck {
            let mut path = Vec::new();
            let mut u = s;
            let tail = loop {
                if length[u] > 0 {
                    break length[u];
                }
                if let Some(i) = path.iter().position(|&v| v == u) {
                    let ring: Vec<usize> = path[i..].to_vec();
                    for &v in &ring {
                        length[v] = usize::MAX / 2;
                    }
                    cycle.get_or_insert(ring);
                    path.truncate(i);
                    break usize::MAX / 2;
                }
                path.push(u);
                match &next[u] {
                    Some(Ok(v)) => u = *v,
                    _ => break 0,
                }
            };
            for (i, &v) in path.iter().rev().enumerate() {
                length[v] = tail.saturating_add(i + 1);
            }
        }
        let (agents, end) = match cycle {
            Some(ring) => (ring, ChainEnd::Cycle),
            None => {
                let start = stuck
                    .iter()
                    .copied()
                    .max_by_key(|&u| (length[u], std::cmp::Reverse(u)))
                    .unwrap_or(0);
                let mut chain = vec![start];
                let mut u = start;
                let end = loop {
                    match &next[u] {
                        Some(Ok(v)) => {
                            u = *v;
                            chain.push(u);
                        }
                        Some(Err(end)) => break end.clone(),
                        None => break ChainEnd::OwnWarps,
                    }
                };
                (chain, end)
            }
        };
        let others = stuck
            .iter()
            .filter(|a| !agents.contains(a))
            .map(|&a| self.place(a))
            .collect();
        Box::new(Stop::Deadlock {
            cycle: (!self.functional).then_some(now),
            chain: agents.iter().map(|&a| self.waiting(a)).collect(),
            end,
            others,
        })
    }

    /// One agent of a deadlock: where it waits, and the link it waits on.
    fn waiting(&self, a: usize) -> Waiting {
        let (u, slot) = self.geo.agent_unit(a);
        let item = self.slot_item(u, slot).or(self.units[u].current);
        let pass = item.map_or(0, |i| i.pass);
        let blocked = self.blocked(a);
        let link = match blocked {
            Blocked::Link { link, .. } => Some(self.blocked_link(a, link)),
            _ => None,
        };
        let label = |v: usize| self.units[v].label;
        let engine = self.units[u].engine().map(|e| {
            let l = &self.links[e.link];
            let n = l.arrivals[e.end().index()];
            let partner = self.place(self.other_end(a, l));
            if matches!(blocked, Blocked::Global) {
                return "waits at the global blocksync".to_string();
            }
            match &e.task {
                Task::Spill { .. } => format!(
                    "waits for {partner} to hand over its next tile (sync {n} on the link)"
                ),
                Task::Restore { next, .. } => match blocked {
                    Blocked::Tiles(spiller) => format!(
                        "waits for tile {next} of the spill, which {} has not written yet",
                        spiller.map_or("no unit".to_string(), |v| label(v).to_string())
                    ),
                    _ => format!(
                        "waits for {partner} to take restored tile {next} (sync {n} on the link)"
                    ),
                },
                Task::Dma {
                    loader,
                    tile,
                    delay_left,
                    plan,
                    ..
                } => {
                    let kind = if *loader { "loader" } else { "storer" };
                    if *delay_left > 0 {
                        format!(
                            "a DMA {kind} making its start-up delay syncs: waits for {partner} (sync {n} on the link)"
                        )
                    } else if *loader {
                        format!(
                            "a DMA loader with tile {tile} of {} in the CB: waits for {partner} to take it (sync {n} on the link)",
                            plan.tiles
                        )
                    } else {
                        format!(
                            "a DMA storer waiting for {partner} to hand over tile {tile} of {} (sync {n} on the link)",
                            plan.tiles
                        )
                    }
                }
            }
        });
        Waiting {
            unit: self.place(a),
            role: item.map_or(self.role(u), |i| i.role),
            pass: self.pass_xy(pass),
            warps: if self.units[u].engine().is_some() {
                Vec::new()
            } else {
                self.agent_warps(a)
            },
            engine,
            link,
        }
    }

    /// Link `l` as agent `a` waits on it, with who made the syncs at both ends.
    fn blocked_link(&self, a: usize, l: usize) -> BlockedLink {
        let link = &self.links[l];
        let producer = self.geo.agent(link.producer, link.producer_slot);
        let side = if producer == a { link.out } else { link.input };
        let history = link.history.clone().map(|records| {
            records
                .into_iter()
                .map(|r| SyncsBy {
                    pass: self.pass_xy(r.item.pass),
                    role: r.item.role,
                    count: r.count,
                    pcs: r.pcs,
                })
                .collect()
        });
        BlockedLink {
            side,
            producer: self.place(producer),
            consumer: self.place(self.geo.agent(link.consumer, link.consumer_slot)),
            inner: link.inner,
            arrivals: link.arrivals,
            history,
        }
    }
}

/// What a stuck unit waits for.
enum Blocked {
    /// At a directional sync on link `link`, for unit `partner`.
    Link { link: usize, partner: usize },
    /// At a global blocksync.
    Global,
    /// Its warps wait at different barriers (or some have exited).
    OwnWarps,
    /// A restore waits for spilled tiles that the unit given has not written.
    Tiles(Option<usize>),
}
