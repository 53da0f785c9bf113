//! Functional mode: warps run straight through the execution core, without
//! scheduling, scoreboard or stall accounting, each for at most a slice of
//! instructions per step so that a warp spinning on a flag cannot keep the others
//! (or Ctrl-C) waiting. Global memory is seen through windows
//! ([`crate::timing::window`]). A warp runs on from basic block to basic block,
//! through fall-through and branches, until it stops at a barrier, an exit, an
//! atomic or the end of its slice. A block runs under one lane mask: it is
//! expanded once (and kept while the next blocks run under the same mask), and
//! plain 32-bit shared and CB loads and stores go straight to
//! [`words::shared_word`] and [`words::cb_word`] with it.

use super::code::Code;
use super::issue::{check_barrier, check_blocksync, past_the_end, trace_writes};
use super::shortcut::{Shortcut, Tally};
use super::site::count;
use super::{StepEvent, Unit, Work};
use crate::exec::fault::{Fault, Faulted};
use crate::exec::lanes::{self, distinct, transactions};
use crate::exec::ops::{Op, Run};
use crate::exec::race::Place;
use crate::exec::space::{Access, Local};
use crate::exec::step::{self, Flow};
use crate::exec::warp::{Warp, WarpState};
use crate::exec::words;
use crate::timing::env::Env;
use crate::timing::window::Windowed;
use spu_isa::Space;

const NEVER: u64 = u64::MAX;

/// Warp instructions one warp may execute in one step.
pub const SLICE: u32 = 10_000;

/// Global stores and atomics a unit may log in one window before its warps wait
/// for the window's end (about 9 MiB): a kernel storing in a loop would otherwise
/// log a whole window of slices, gigabytes on a large grid.
pub const LOG_LIMIT: usize = 1 << 15;

impl Unit {
    /// Functional mode: runs every warp until it exits, waits at a barrier, a
    /// blocksync or an atomic, or has used its slice.
    pub fn step_functional(&mut self, now: u64, env: &mut Env) -> Faulted<StepEvent> {
        let traced = env.trace.is_some();
        let mut budget = match &mut self.work {
            Work::Code(code) => std::mem::take(&mut code.budget),
            _ => Vec::new(),
        };
        budget.clear();
        budget.resize(self.code().map_or(0, |c| c.warps.len()), SLICE);
        let result = self.run_warps(&mut budget, now, traced, env);
        if let Work::Code(code) = &mut self.work {
            code.budget = budget;
        }
        result
    }

    fn run_warps(
        &mut self,
        budget: &mut [u32],
        now: u64,
        traced: bool,
        env: &mut Env,
    ) -> Faulted<StepEvent> {
        loop {
            let mut progressed = false;
            for (wi, left) in budget.iter_mut().enumerate() {
                while *left > 0
                    && matches!(self.warp_state(wi), WarpState::Running)
                    && self.stores.entries.len() < LOG_LIMIT
                {
                    progressed = true;
                    let (ran, event) = if traced {
                        (1, self.run_one(wi, now, env)?)
                    } else {
                        self.run_blocks(wi, *left, now, env)?
                    };
                    *left = left.saturating_sub(ran);
                    if let StepEvent::BlockSync { .. } = event {
                        // Other blocks of the SM run on in the next cycle.
                        let others = self
                            .code()
                            .is_some_and(|c| c.warps.iter().any(|w| w.state == WarpState::Running));
                        self.wake = if others { now + 1 } else { NEVER };
                        return Ok(event);
                    }
                }
            }
            let Some(code) = self.code() else {
                return Ok(StepEvent::None);
            };
            if code.warps.iter().all(Warp::is_done) {
                return Ok(StepEvent::Finished);
            }
            if code.slots.len() > 1 && code.any_finished() {
                self.wake = now + 1;
                return Ok(StepEvent::BlocksDone);
            }
            if !progressed {
                // Warps that used their slice run again in the next cycle.
                let sliced = code.warps.iter().any(|w| w.state == WarpState::Running);
                self.wake = if sliced { now + 1 } else { NEVER };
                return Ok(StepEvent::None);
            }
        }
    }

    /// Runs warp `wi` through basic blocks, starting with the rest of the one it is
    /// in, each counted once, for as long as the caller's loop would call again:
    /// while it has run fewer than `left` instructions, it is running, the unit's
    /// store log has room, and its last block ended in straight-line flow or a
    /// branch. Returns the instructions run and what the last block caused.
    fn run_blocks(
        &mut self,
        wi: usize,
        left: u32,
        now: u64,
        env: &mut Env,
    ) -> Faulted<(u32, StepEvent)> {
        let program = env.program;
        let Work::Code(code) = &mut self.work else {
            return Ok((0, StepEvent::None));
        };
        let code: &mut Code = code;
        let counts = &mut self.counts;
        let mut addrs = [0u32; 32];
        let is_iu = code.ctx.iu.is_some();
        let range = code.shared_range(wi);
        let place = Place {
            unit: self.label,
            block: code.trace_site(self.label, wi).block,
            base: range.start,
            words: code.shared.len(),
        };
        let slot = code.slot_of(wi);
        let mut races = code.races.as_deref_mut();
        let mut local = Local {
            shared: &mut code.shared[range],
            shared_bytes: code.ctx.shared_bytes,
            params: env.params,
            local_bytes: env.local_bytes,
            ports: super::ports_of(&mut self.ports, &mut self.slot_ports, slot),
            is_iu,
        };
        let mut global = Windowed {
            memory: env.memory,
            log: &mut self.stores,
            toggles: 0,
            now,
            warp: wi,
        };
        let traffic = &mut self.traffic;
        let warp = &mut code.warps[wi];
        let mut ran = 0;
        // The lane mask the blocks run under, expanded once while it stays.
        let (mut on_mask, mut on_count) = (0, 0);
        let mut on = lanes::expand(0);
        // Loops that change nothing but the warp (not watched while races are
        // checked: the checker records every shared access).
        let watch = races.is_none();
        let mut shortcut = Shortcut::new(code.watch_from[wi]);
        let flow = loop {
            let first = warp.pc().unwrap_or(0);
            if first as usize >= program.len() {
                return Err(Box::new(past_the_end(warp, program)));
            }
            let active = warp.active();
            if active != on_mask {
                on_mask = active;
                on_count = u64::from(active.count_ones());
                on = lanes::expand(active);
            }
            let block = program.block_of[first as usize] as usize;
            let end = program.block_starts[block + 1];
            let whole = program.block_starts[block] == first;
            let pure = whole && watch && program.block_pure[block];
            if shortcut.due(pure, first, ran) {
                let tally = Tally {
                    counts,
                    traffic,
                    toggles: &mut global.toggles,
                };
                ran += shortcut.look(first, ran, left, warp, tally);
            }
            if whole {
                counts.warp_instructions += u64::from(end - first);
                counts.block_runs[block] += 1;
                counts.block_threads[block] += on_count;
            }
            let mut pc = first;
            let ops = &program.ops[first as usize..end as usize];
            // The block's instructions one by one; `$execute` runs `op`, the one at
            // `pc`. Only the last can end the block (control flow, a barrier, an
            // atomic); after any other the warp moves to the next block.
            macro_rules! run_ops {
                ($execute:expr, $plain:expr) => {{
                    let mut flow = Flow::Next;
                    for op in ops {
                        let at = pc as usize;
                        // Register operations first, the way the general path runs them
                        // (they touch no memory and never end the block).
                        if $plain && let Some(exec) = step::run_register_op(op, warp, active) {
                            if !whole {
                                count(counts, pc, exec);
                            } else if op.guard != spu_isa::Guard::Always {
                                counts.guard_threads[at] += u64::from(exec.count_ones());
                            }
                            pc += 1;
                            if pc == end {
                                warp.set_pc(pc - 1);
                                warp.advance();
                            }
                            continue;
                        }
                        // Plain 32-bit shared and CB loads and stores of every active
                        // lane: straight to the memory with the block's expanded mask;
                        // `$moved` is the result of moving the words, `$shared` whether
                        // they are in shared memory (race-checked).
                        macro_rules! word_done {
                            ($moved:expr, $shared:expr) => {{
                                $moved.map_err(|(kind, lane)| {
                                    Box::new(Fault {
                                        kind,
                                        pc,
                                        warp: warp.index,
                                        lane,
                                    })
                                })?;
                                if !whole {
                                    count(counts, pc, active);
                                }
                                counts.mem_events[at] += 1;
                                if $shared && let Some(r) = races.as_deref_mut() {
                                    r.check(place, warp, pc, program, &addrs, active);
                                }
                                pc += 1;
                                if pc == end {
                                    warp.set_pc(pc - 1);
                                    warp.advance();
                                }
                                continue;
                            }};
                        }
                        if $plain
                            && active != 0
                            && op.guard == spu_isa::Guard::Always
                            && let Some((space, store)) = word_op(op)
                        {
                            if space == Space::Shared && !local.shared.is_empty() {
                                word_done!(
                                    words::shared_word(
                                        op,
                                        store,
                                        warp,
                                        local.shared,
                                        local.shared_bytes,
                                        active,
                                        &on,
                                        &mut addrs,
                                    ),
                                    true
                                );
                            }
                            if let Some(side) = space.cb_side() {
                                word_done!(
                                    words::cb_word(
                                        op,
                                        space,
                                        side,
                                        store,
                                        warp,
                                        local.ports,
                                        active,
                                        &on,
                                        &mut addrs,
                                    ),
                                    false
                                );
                            }
                        }
                        let executed = $execute(op)?;
                        let exec = executed.exec;
                        if !whole {
                            count(counts, pc, exec);
                        } else if op.guard != spu_isa::Guard::Always {
                            counts.guard_threads[at] += u64::from(exec.count_ones());
                        }
                        if executed.access.is_shared() {
                            counts.mem_events[at] += 1;
                            if let Some(r) = races.as_deref_mut() {
                                r.check(place, warp, pc, program, &addrs, exec);
                            }
                        } else if !executed.access.is_none() {
                            account(executed.access, &addrs, exec, at, env, counts, traffic);
                        }
                        pc += 1;
                        if pc == end {
                            if op.run.ends_block() {
                                flow = executed.flow;
                            } else {
                                // The next instruction starts a block: move the warp
                                // there (and reconverge if it is a reconvergence point).
                                warp.set_pc(pc - 1);
                                warp.advance();
                            }
                        }
                    }
                    flow
                }};
            }
            let flow = if program.block_checked[block].needed(is_iu) {
                run_ops!(
                    |_: &crate::exec::ops::Op| step::execute_in_block(
                        program,
                        pc,
                        warp,
                        active,
                        &mut local,
                        &mut global,
                        now,
                        &mut addrs,
                    ),
                    false
                )
            } else {
                run_ops!(
                    |op| step::execute_in_plain_block(
                        program,
                        op,
                        pc,
                        warp,
                        active,
                        &mut local,
                        &mut global,
                        &mut addrs,
                    ),
                    true
                )
            };
            ran += pc - first;
            match flow {
                Flow::Next | Flow::Branch
                    if ran < left
                        && warp.state == WarpState::Running
                        && global.log.entries.len() < LOG_LIMIT => {}
                _ => break flow,
            }
        };
        traffic.toggles += global.toggles;
        code.watch_from[wi] = shortcut.next_watch();
        Ok((
            ran,
            match flow {
                Flow::Next | Flow::Branch => StepEvent::None,
                Flow::Exit => {
                    check_barrier(code, wi, now, env);
                    check_blocksync(code, wi, program)
                }
                Flow::BarSync => {
                    check_barrier(code, wi, now, env);
                    StepEvent::None
                }
                Flow::BlockSync(_) => check_blocksync(code, wi, program),
            },
        ))
    }

    fn warp_state(&self, wi: usize) -> WarpState {
        self.code().map_or(WarpState::Done, |c| c.warps[wi].state)
    }

    /// Executes one instruction of warp `wi` at cycle `now`.
    fn run_one(&mut self, wi: usize, now: u64, env: &mut Env) -> Faulted<StepEvent> {
        let program = env.program;
        let Work::Code(code) = &mut self.work else {
            return Ok(StepEvent::None);
        };
        let code: &mut Code = code;
        let pc = code.warps[wi].pc().unwrap_or(0);
        if pc as usize >= program.len() {
            return Err(Box::new(past_the_end(&code.warps[wi], program)));
        }
        let mut addrs = [0u32; 32];
        let is_iu = code.ctx.iu.is_some();
        let executed = {
            let (range, slot) = (code.shared_range(wi), code.slot_of(wi));
            let mut local = Local {
                shared: &mut code.shared[range],
                shared_bytes: code.ctx.shared_bytes,
                params: env.params,
                local_bytes: env.local_bytes,
                ports: super::ports_of(&mut self.ports, &mut self.slot_ports, slot),
                is_iu,
            };
            let mut global = Windowed {
                memory: env.memory,
                log: &mut self.stores,
                toggles: 0,
                now,
                warp: wi,
            };
            let executed = step::execute(
                program,
                pc,
                &mut code.warps[wi],
                &mut local,
                &mut global,
                now,
                &mut addrs,
            )?;
            self.traffic.toggles += global.toggles;
            executed
        };
        let exec = executed.exec;
        if executed.access == Access::Shared && code.races.is_some() {
            code.check_race(self.label, wi, pc, program, &addrs, exec);
        }
        if let Some(t) = env.trace.as_deref_mut()
            && t.wants(self.label, code.warps[wi].index, now)
        {
            let writes = trace_writes(t, &code.warps[wi], program, pc, exec, &addrs, false);
            t.line(now, code.trace_site(self.label, wi), pc, exec, &writes);
        }
        count(&mut self.counts, pc, exec);
        let counts = &mut self.counts;
        if executed.access != Access::None {
            account(
                executed.access,
                &addrs,
                exec,
                pc as usize,
                env,
                counts,
                &mut self.traffic,
            );
        }
        Ok(match executed.flow {
            Flow::Next | Flow::Branch => StepEvent::None,
            Flow::Exit => {
                check_barrier(code, wi, now, env);
                check_blocksync(code, wi, program)
            }
            Flow::BarSync => {
                check_barrier(code, wi, now, env);
                StepEvent::None
            }
            Flow::BlockSync(_) => check_blocksync(code, wi, program),
        })
    }
}

/// Whether `op` is a plain 32-bit shared-memory or CB access through a 32-bit
/// base: its space and whether it stores.
#[inline(always)]
fn word_op(op: &Op) -> Option<(Space, bool)> {
    let (m, store) = match op.run {
        Run::Load(m) => (m, false),
        Run::Store(m) => (m, true),
        _ => return None,
    };
    let fast = m.space == Space::Shared || m.space.cb_side().is_some();
    (fast && m.is_word() && !op.addr.wide).then_some((m.space, store))
}

/// Counts what a memory access moved (functional mode has no costs, only counts).
fn account(
    access: Access,
    addrs: &crate::exec::lanes::Lanes,
    exec: u32,
    at: usize,
    env: &Env,
    counts: &mut crate::observe::counters::UnitCounts,
    traffic: &mut crate::observe::counters::Traffic,
) {
    match access {
        Access::None => {}
        Access::Global { store, words } => {
            let bytes = env.timing.transaction_bytes();
            let segments = transactions(addrs, exec, words, bytes.trailing_zeros());
            let words = u64::from(exec.count_ones()) * u64::from(words);
            if store {
                traffic.store_words += words;
                traffic.store_transactions += segments;
            } else {
                traffic.load_words += words;
                traffic.load_transactions += segments;
            }
            counts.transactions[at] += segments;
            counts.mem_events[at] += segments;
        }
        Access::Atomic { words } => {
            crate::timing::access::count_atomics(exec, words, at, counts, traffic);
        }
        Access::Param => counts.mem_events[at] += distinct(addrs, exec, 2).max(1),
        Access::Local { store, words } => {
            traffic.add_local(store, words, exec);
            counts.mem_events[at] += 1
        }
        Access::Shared | Access::SharedAtomic | Access::Cb => counts.mem_events[at] += 1,
    }
}
