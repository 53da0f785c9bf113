//! Global memory seen in windows: what a window defers (timing mode's recorded
//! accesses, functional mode's stores) takes effect when it closes, in (cycle,
//! unit, program) order, and the results reach the waiting units.

use super::{Grid, Work};
use crate::observe::counters::Component;
use crate::timing::effects::{self, Outcome, PENDING};
use crate::timing::window;
use std::sync::Arc;

impl Grid<'_> {
    /// True when the current window has accesses waiting for its end.
    pub(super) fn window_pending(&self) -> bool {
        if self.functional {
            self.units.iter().any(|u| !u.stores.entries.is_empty())
        } else {
            !self.effects.is_empty()
        }
    }

    /// The window ending at `self.window_end` closes: deferred accesses take
    /// effect in (cycle, unit, program) order.
    pub(super) fn close_window(&mut self) {
        self.windows_passed += 1;
        if !self.functional {
            self.window_end += self.window;
            self.apply_effects();
            return;
        }
        let end = self.window_end;
        self.window_end += self.window;
        let mut entries: Vec<(u64, usize, usize)> = Vec::new();
        for (u, unit) in self.units.iter().enumerate() {
            entries
                .extend((0..unit.stores.entries.len()).map(|i| (unit.stores.entries[i].0, u, i)));
        }
        entries.sort_unstable();
        let mut logs: Vec<Vec<Option<window::Logged>>> = self
            .units
            .iter_mut()
            .map(|u| {
                let e = std::mem::take(&mut u.stores.entries);
                u.stores.clear();
                e.into_iter().map(|(_, l)| Some(l)).collect()
            })
            .collect();
        let mut resumed = Vec::new();
        for (_, u, i) in entries {
            let Some(entry) = logs[u][i].take() else {
                continue;
            };
            let unit = &mut self.units[u];
            if matches!(entry, window::Logged::Atomic { .. }) {
                resumed.push(u);
            }
            let warps = match &mut unit.work {
                Work::Code(c) => Some(&mut c.warps),
                _ => None,
            };
            window::apply(
                entry,
                warps,
                &mut unit.traffic.toggles,
                Arc::make_mut(&mut self.memory),
            );
        }
        for u in resumed {
            let unit = &mut self.units[u];
            if unit.busy {
                unit.wake = unit.wake.min(end);
                self.schedule(u);
            }
        }
    }

    /// Timing mode: applies the recorded accesses in key order and gives their
    /// results to the units (loaded registers and their ready time, engine wakes,
    /// spilled tiles' ready times).
    pub(super) fn apply_effects(&mut self) {
        if self.image.program.prints {
            // Memory now holds what the units stored: their views go.
            for unit in &mut self.units {
                unit.stores.clear();
            }
        }
        let mut list = std::mem::take(&mut self.effects);
        list.sort_by_key(|d| d.key);
        let bytes = self.timing.transaction_bytes();
        for d in list {
            let outcome = effects::apply(
                d.effect,
                d.key,
                Arc::make_mut(&mut self.memory),
                &mut self.dram,
                self.caches.as_mut(),
                bytes,
            );
            self.deliver(outcome);
        }
        // The units' energy counters (and power traces) see their cache accesses.
        if let Some(caches) = &mut self.caches {
            for (unit, pc, [sent, dram]) in caches.take_traffic() {
                let lines = &mut self.units[unit].counts.cached_lines[pc as usize];
                lines[0] += sent;
                lines[1] += dram;
            }
            for (i, unit) in self.units.iter_mut().enumerate() {
                let [l1, l2] = caches.accesses_by(i);
                unit.cache_counters.set(Component::Dcp, l1);
                unit.cache_counters.set(Component::L2cp, l2);
            }
        }
        // Restorers waiting for a spilled tile learn when it is ready.
        for u in 0..self.units.len() {
            let unit = &self.units[u];
            if unit.wake != PENDING {
                continue;
            }
            if let Some((key, next)) = unit.engine().and_then(|e| e.awaited_tile())
                && let Some(tile) = self.spills.get(&key).and_then(|s| s.tiles.get(next))
                && tile.ready_at != PENDING
            {
                self.units[u].wake = tile.ready_at;
                self.schedule(u);
            }
        }
    }

    /// Gives the result of a deferred access to its unit or stream.
    pub(super) fn deliver(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::None => {}
            Outcome::Register {
                target,
                pc,
                dst,
                mask,
                values,
                high,
                ready,
                toggles,
            } => {
                let program = &self.image.program;
                let unit = &mut self.units[target.unit];
                unit.traffic.toggles += toggles;
                // A result for a block that has finished since is dropped (its
                // slot's generation has moved on).
                if let Work::Code(code) = &mut unit.work
                    && code.slot_generation.get(code.slot_of(target.warp))
                        == Some(&target.generation)
                {
                    if let Some(t) = &mut self.tracer
                        && t.wants(unit.label, code.warps[target.warp].index, ready)
                    {
                        let d = usize::from(dst);
                        let mut text =
                            crate::observe::trace::lanes_text(&t.reg_name(pc, d), &values, mask);
                        if let Some(h) = &high {
                            text.push(' ');
                            text.push_str(&crate::observe::trace::lanes_text(
                                &t.reg_name(pc, d + 1),
                                h,
                                mask,
                            ));
                        }
                        t.arrival(
                            ready,
                            code.trace_site(unit.label, target.warp),
                            pc,
                            mask,
                            &text,
                        );
                    }
                    let wake = code.resolve(
                        target.warp,
                        dst,
                        mask,
                        &values,
                        high.as_deref(),
                        ready,
                        program,
                        &mut unit.counts,
                    );
                    unit.wake = unit.wake.min(wake);
                    self.schedule(target.unit);
                }
            }
            Outcome::Ready {
                target,
                dst,
                regs,
                ready,
            } => {
                let program = &self.image.program;
                let unit = &mut self.units[target.unit];
                if let Work::Code(code) = &mut unit.work
                    && code.slot_generation.get(code.slot_of(target.warp))
                        == Some(&target.generation)
                {
                    let wake = code.resolve_ready(
                        target.warp,
                        dst,
                        regs,
                        ready,
                        program,
                        &mut unit.counts,
                    );
                    unit.wake = unit.wake.min(wake);
                    self.schedule(target.unit);
                }
            }
            Outcome::Engine {
                unit: u,
                generation,
                at,
                port_words,
                toggles,
            } => {
                let unit = &mut self.units[u];
                unit.traffic.toggles += toggles;
                if unit.generation != generation {
                    return;
                }
                if let Work::Engine(engine) = &unit.work
                    && let Some(port) = unit.ports[engine.port].as_mut()
                {
                    for (i, &w) in port_words.iter().enumerate() {
                        port.write(i as u32, w);
                    }
                }
                unit.wake = at;
                self.schedule(u);
            }
            Outcome::Tile { stream, at } => {
                // The first tile still waiting: searched from the last one found,
                // so a stream of n tiles costs n steps, not n^2 / 2.
                if let Some(s) = self.spills.get_mut(&stream) {
                    while s.tiles.get(s.known).is_some_and(|t| t.ready_at != PENDING) {
                        s.known += 1;
                    }
                    if let Some(tile) = s.tiles.get_mut(s.known) {
                        tile.ready_at = at;
                        s.known += 1;
                    }
                }
            }
        }
    }
}
