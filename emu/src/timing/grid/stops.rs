//! Turning what went wrong into a [`Stop`]: faults of code and of engines, and the
//! deadlock report (every waiting unit, where it waits, and its links' sync counts).

use super::*;
use crate::exec::ops::Kind;
use crate::exec::warp::WarpState;
use crate::observe::outcome::{LinkState, Waiting};

impl Grid<'_> {
    pub(super) fn engine_stop(
        &self,
        u: usize,
        f: crate::timing::engine::DmaFault,
        now: u64,
    ) -> Box<Stop> {
        let role = self.role(u);
        let buffer = match self.units[u].engine().map(|e| &e.task) {
            Some(Task::Dma { plan, .. }) => plan.buffer,
            _ => 0,
        };
        let r = &self.memory.regions()[buffer];
        Box::new(Stop::Engine {
            kind: FaultKind::DmaOutOfBounds {
                buffer: r.name.clone(),
                element: f.element,
                len: r.len,
                tile: f.tile,
            },
            unit: self.units[u].label,
            role,
            cycle: now,
        })
    }

    pub(super) fn fault_stop(&self, u: usize, fault: Fault, now: u64) -> Box<Stop> {
        Box::new(Stop::Fault {
            fault,
            unit: self.units[u].label,
            role: self.role(u),
            cycle: now,
            ntid: self.units[u].code().map_or([0; 3], |c| c.ctx.ntid),
        })
    }

    pub(super) fn waiting(&self) -> Vec<Waiting> {
        let [nx, _] = self.geo.passes();
        (0..self.units.len())
            .filter(|&u| self.units[u].busy)
            .map(|u| {
                let pass = self.units[u].current.map_or(0, |i| i.pass);
                let warps = self.units[u].waiting_warps();
                // Report the links the unit waits on: its warps' directional syncs
                // or its engine's link.
                let waited: Vec<usize> = warps
                    .iter()
                    .filter_map(|(_, pc, state)| {
                        match (state, self.image.program.ops[*pc as usize].kind) {
                            (WarpState::AtBlockSync(_), Kind::BlockSync(Some(side))) => {
                                self.units[u].ports[side.code() as usize]
                                    .as_ref()
                                    .map(|p| p.link)
                            }
                            _ => None,
                        }
                    })
                    .chain(
                        self.units[u]
                            .engine()
                            .filter(|_| !self.global_sync)
                            .map(|e| e.link),
                    )
                    .collect();
                let links = Side::ALL
                    .iter()
                    .filter_map(|&side| {
                        let index = self.units[u].ports[side.code() as usize].as_ref()?.link;
                        if !waited.contains(&index) {
                            return None;
                        }
                        let l = &self.links[index];
                        let partner = if l.producer == u {
                            l.consumer
                        } else {
                            l.producer
                        };
                        Some(LinkState {
                            side,
                            partner: self.units[partner].label,
                            arrivals: l.arrivals,
                        })
                    })
                    .collect();
                let engine = self.units[u].engine().map(|e| match &e.task {
                    Task::Spill { .. } => {
                        "a spilling virtual IU waiting for its producer's next sync".to_string()
                    }
                    Task::Restore { next, .. } => {
                        format!("a restoring virtual IU waiting to hand over tile {next}")
                    }
                    Task::Dma { tile, loader, .. } => format!(
                        "a DMA {} at tile {tile}, waiting for its partner's sync",
                        if *loader { "loader" } else { "storer" }
                    ),
                });
                Waiting {
                    unit: self.units[u].label,
                    role: self.role(u),
                    pass: [pass % nx, pass / nx],
                    warps,
                    engine,
                    links,
                }
            })
            .collect()
    }
}
