//! Functional mode: warps run straight through the execution core, without
//! scheduling, scoreboard or stall accounting, each for at most a slice of
//! instructions per step so that a warp spinning on a flag cannot keep the others
//! (or Ctrl-C) waiting. Global memory is seen through windows
//! ([`crate::timing::window`]).

use super::code::Code;
use super::issue::{check_barrier, check_blocksync, count, past_the_end, trace_writes};
use super::{StepEvent, Unit, Work};
use crate::exec::fault::Fault;
use crate::exec::step::{self, Access, Flow, Local};
use crate::exec::warp::{Warp, WarpState};
use crate::timing::access::distinct;
use crate::timing::env::Env;
use crate::timing::window::Windowed;

const NEVER: u64 = u64::MAX;

/// Warp instructions one warp may execute in one step.
pub const SLICE: u32 = 10_000;

impl Unit {
    /// Functional mode: runs every warp until it exits, waits at a barrier, a
    /// blocksync or an atomic, or has used its slice.
    pub fn step_functional(&mut self, now: u64, env: &mut Env) -> Result<StepEvent, Fault> {
        let n = self.code().map_or(0, |c| c.warps.len());
        let mut budget = vec![SLICE; n];
        loop {
            let mut progressed = false;
            for (wi, left) in budget.iter_mut().enumerate() {
                while *left > 0 && self.warp_state(wi) == WarpState::Running {
                    progressed = true;
                    *left -= 1;
                    let event = self.run_one(wi, now, env)?;
                    if let StepEvent::BlockSync { .. } = event {
                        self.wake = NEVER;
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
            if !progressed {
                // Warps that used their slice run again in the next cycle.
                let sliced = code.warps.iter().any(|w| w.state == WarpState::Running);
                self.wake = if sliced { now + 1 } else { NEVER };
                return Ok(StepEvent::None);
            }
        }
    }

    fn warp_state(&self, wi: usize) -> WarpState {
        self.code().map_or(WarpState::Done, |c| c.warps[wi].state)
    }

    /// Executes one instruction of warp `wi` at cycle `now`.
    fn run_one(&mut self, wi: usize, now: u64, env: &mut Env) -> Result<StepEvent, Fault> {
        let program = env.program;
        let Work::Code(code) = &mut self.work else {
            return Ok(StepEvent::None);
        };
        let code: &mut Code = code;
        let pc = code.warps[wi].pc().unwrap_or(0);
        if pc as usize >= program.len() {
            return Err(past_the_end(&code.warps[wi], program));
        }
        let mut addrs = [0u32; 32];
        let is_iu = code.ctx.iu.is_some();
        let executed = {
            let mut local = Local {
                shared: &mut code.shared,
                params: env.params,
                ports: &mut self.ports,
                is_iu,
            };
            let mut global = Windowed {
                memory: env.memory,
                log: &mut self.stores,
                toggles: &mut self.traffic.toggles,
                now,
                warp: wi,
            };
            step::execute(
                program,
                pc,
                &mut code.warps[wi],
                &mut local,
                &mut global,
                now,
                &mut addrs,
            )?
        };
        let exec = executed.exec;
        if let Some(t) = env.trace.as_deref_mut()
            && t.wants(self.label, code.warps[wi].index, now)
        {
            let writes = trace_writes(&code.warps[wi], program, pc, exec);
            t.line(now, self.label, code.warps[wi].index, pc, exec, &writes);
        }
        count(&mut self.counts, pc, exec);
        let at = pc as usize;
        let counts = &mut self.counts;
        let traffic = &mut self.traffic;
        match executed.access {
            Access::None => {}
            Access::Global { store } => {
                let bytes = env.timing.transaction_bytes();
                let segments = distinct(&addrs, exec, bytes.trailing_zeros());
                let words = u64::from(exec.count_ones());
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
            Access::Atomic => {
                let n = u64::from(exec.count_ones());
                traffic.load_words += n;
                traffic.store_words += n;
                traffic.load_transactions += n;
                traffic.store_transactions += n;
                counts.transactions[at] += n;
                counts.mem_events[at] += n;
            }
            Access::Param => counts.mem_events[at] += distinct(&addrs, exec, 2).max(1),
            Access::Shared | Access::Cb => counts.mem_events[at] += 1,
        }
        Ok(match executed.flow {
            Flow::Next | Flow::Branch => StepEvent::None,
            Flow::Exit => {
                check_barrier(code, now, env);
                check_blocksync(code, program)
            }
            Flow::BarSync => {
                check_barrier(code, now, env);
                StepEvent::None
            }
            Flow::BlockSync(_) => check_blocksync(code, program),
        })
    }
}
