//! Turning what went wrong into a [`Stop`]: faults of code and of engines (with the
//! link of a CB checker error), and the deadlock report: the units of one wait
//! chain or cycle, what each waits for, and who made the syncs on the links between
//! them.

use super::*;
use crate::exec::ops::Run;
use crate::exec::warp::WarpState;
use crate::observe::outcome::{BlockedLink, CbLink, ChainEnd, SyncsBy, Waiting};
use crate::timing::engine::DmaFault;

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
            cycle: now,
        })
    }

    pub(super) fn fault_stop(&self, u: usize, fault: Fault, now: u64) -> Box<Stop> {
        let cb = match fault.kind {
            FaultKind::UnwrittenCb { side, addr, .. } => self.cb_link(u, side, addr / 4),
            _ => None,
        };
        Box::new(Stop::Fault {
            fault,
            unit: self.units[u].label,
            role: self.role(u),
            cycle: now,
            ntid: self.units[u].code().map_or([0; 3], |c| c.ctx.ntid),
            cb,
        })
    }

    /// The state of the link unit `u` read `word` from on `side`, for a CB checker
    /// error.
    fn cb_link(&self, u: usize, side: Side, word: u32) -> Option<Box<CbLink>> {
        let index = self.units[u].ports[side.code() as usize].as_ref()?.link;
        let l = &self.links[index];
        let reader_consumes = l.consumer == u;
        let partner = if reader_consumes {
            l.producer
        } else {
            l.consumer
        };
        let pending = self.units[l.producer].ports[l.out.code() as usize]
            .as_ref()
            .is_some_and(|p| p.holds(word));
        Some(Box::new(CbLink {
            side,
            reader_consumes,
            partner: self.units[partner].label,
            partner_role: self.units[partner].current.map(|i| i.role),
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

    /// What stuck unit `u` waits for.
    fn blocked(&self, u: usize) -> Blocked {
        let other = |l: &Link| {
            if l.producer == u {
                l.consumer
            } else {
                l.producer
            }
        };
        if let Some(e) = self.units[u].engine() {
            if e.is_waiting() {
                if self.global_sync {
                    return Blocked::Global;
                }
                return Blocked::Link {
                    link: e.link,
                    partner: other(&self.links[e.link]),
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
        let warps = self.units[u].waiting_warps();
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
        match self.image.program.ops[pc as usize].run {
            Run::BlockSync(Some(side)) => match &self.units[u].ports[side.code() as usize] {
                Some(port) => Blocked::Link {
                    link: port.link,
                    partner: other(&self.links[port.link]),
                },
                None => Blocked::OwnWarps,
            },
            _ => Blocked::Global,
        }
    }

    /// The next unit in `u`'s wait chain, or what ends the chain.
    fn waits_for(&self, u: usize) -> Result<usize, ChainEnd> {
        let partner = match self.blocked(u) {
            Blocked::Link { partner, .. } | Blocked::Tiles(Some(partner)) => partner,
            Blocked::Tiles(None) => return Err(ChainEnd::OwnWarps),
            Blocked::OwnWarps => return Err(ChainEnd::OwnWarps),
            Blocked::Global => {
                return (0..self.units.len())
                    .find(|&v| self.units[v].busy && !self.arrived_global[v])
                    .ok_or(ChainEnd::Global);
            }
        };
        if self.units[partner].busy {
            return Ok(partner);
        }
        let unit = self.units[partner].label;
        Err(match self.units[partner].queue.front() {
            None => ChainEnd::Finished(unit),
            Some(next) => ChainEnd::NotStarted {
                unit,
                role: next.role,
                pass: self.pass_xy(next.pass),
                now: self.pass_xy(self.pass_now),
            },
        })
    }

    /// The deadlock report: the longest wait chain, or a wait cycle if there is
    /// one, with the links along it and who made their syncs.
    pub(super) fn deadlock(&self, now: u64) -> Box<Stop> {
        let stuck: Vec<usize> = (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .collect();
        let next: Vec<Option<Result<usize, ChainEnd>>> = (0..self.units.len())
            .map(|u| self.units[u].busy.then(|| self.waits_for(u)))
            .collect();
        // Length of the chain from each unit (units on or leading into a cycle are
        // marked by `on_cycle`); each unit waits for at most one other.
        let mut length = vec![0usize; self.units.len()];
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
        let (units, end) = match cycle {
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
            .filter(|u| !units.contains(u))
            .map(|&u| self.units[u].label)
            .collect();
        Box::new(Stop::Deadlock {
            cycle: now,
            chain: units.iter().map(|&u| self.waiting(u)).collect(),
            end,
            others,
        })
    }

    /// One unit of a deadlock: where it waits, and the link it waits on.
    fn waiting(&self, u: usize) -> Waiting {
        let pass = self.units[u].current.map_or(0, |i| i.pass);
        let blocked = self.blocked(u);
        let link = match blocked {
            Blocked::Link { link, .. } => Some(self.blocked_link(u, link)),
            _ => None,
        };
        let label = |v: usize| self.units[v].label;
        let engine = self.units[u].engine().map(|e| {
            let l = &self.links[e.link];
            let n = l.arrivals[e.end().index()];
            let partner = label(if l.producer == u { l.consumer } else { l.producer });
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
            unit: self.units[u].label,
            role: self.role(u),
            pass: self.pass_xy(pass),
            warps: if self.units[u].engine().is_some() {
                Vec::new()
            } else {
                self.units[u].waiting_warps()
            },
            engine,
            link,
        }
    }

    /// Link `l` as unit `u` waits on it, with who made the syncs at both ends.
    fn blocked_link(&self, u: usize, l: usize) -> BlockedLink {
        let link = &self.links[l];
        let side = if link.producer == u {
            link.out
        } else {
            link.input
        };
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
            producer: self.units[link.producer].label,
            consumer: self.units[link.consumer].label,
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
