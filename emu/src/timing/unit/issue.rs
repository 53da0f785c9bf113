//! Issuing one warp instruction: the execution core does its effect; here it is
//! timed (latency, pipeline occupancy, scoreboard) and counted, with an optional
//! trace line.

use super::*;
use crate::exec::fault::FaultKind;
use crate::exec::ops::{Kind, NO_REG};
use crate::exec::step::{self, Access, Executed, Flow, Local};
use crate::observe::counters::{Component, PcCounters};
use crate::timing::access::{self, Cost, Immediate};
use spu_isa::TimingClass;

impl Unit {
    fn occupy(&mut self, class: TimingClass, now: u64, cycles: u64) {
        if let Some(pipe) = pipe_of(class) {
            let slots = &mut self.pipes[pipe as usize];
            if let Some(slot) = slots.iter_mut().find(|f| **f <= now) {
                *slot = now + cycles.max(1);
            }
        }
    }

    /// Executes the next instruction of warp `wi` at cycle `now`.
    pub(super) fn issue(&mut self, wi: usize, now: u64, env: &mut Env) -> Result<StepEvent, Fault> {
        let traced = env
            .trace
            .as_ref()
            .is_some_and(|t| t.wants(self.label, self.warps[wi].index, now));
        let pc = self.warps[wi].pc().unwrap_or(0);
        let (event, executed) = self.issue_untraced(wi, pc, now, env)?;
        if traced {
            self.trace_line(wi, pc, now, executed.exec, env);
        }
        Ok(event)
    }

    fn trace_line(&self, wi: usize, pc: u32, now: u64, exec: u32, env: &mut Env) {
        let w = &self.warps[wi];
        let op = &env.program.ops[pc as usize];
        let writes = match (env.program.info[pc as usize].dst_general, op.kind) {
            (Some(d), _) => {
                crate::observe::trace::lanes_text(&format!("r{d}"), &w.regs[usize::from(d)], exec)
            }
            (_, Kind::Setp(..)) => format!("p{} = {:08x}", op.pred, w.preds[usize::from(op.pred)]),
            (_, Kind::St(space)) => format!("{space} store"),
            (_, Kind::Bra { .. }) => format!("taken by {exec:08x}"),
            _ => String::new(),
        };
        if let Some(t) = env.trace.as_deref_mut() {
            t.line(now, self.label, w.index, pc, exec, &writes);
        }
    }

    fn issue_untraced(
        &mut self,
        wi: usize,
        pc: u32,
        now: u64,
        env: &mut Env,
    ) -> Result<(StepEvent, Executed), Fault> {
        let program = env.program;
        if pc as usize >= program.len() {
            let w = &self.warps[wi];
            return Err(Fault {
                kind: FaultKind::PastTheEnd {
                    last: program.len() as u32,
                },
                pc: pc.saturating_sub(1),
                warp: w.index,
                lane: w.active().trailing_zeros(),
            });
        }
        let mut addrs = [0u32; 32];
        let is_iu = self.is_iu();
        let executed = {
            let mut local = Local {
                shared: &mut self.shared,
                params: env.params,
                ports: &mut self.ports,
                is_iu,
            };
            let mut global = Immediate {
                memory: env.memory,
                toggles: &mut env.traffic.toggles,
            };
            step::execute(
                program,
                pc,
                &mut self.warps[wi],
                &mut local,
                &mut global,
                now,
                &mut addrs,
            )?
        };
        let (op, info) = (&program.ops[pc as usize], &program.info[pc as usize]);
        let exec = executed.exec;
        let threads = u64::from(exec.count_ones());
        self.issued += 1;
        self.thread_instrs += threads;
        let pcc = &mut env.pcs[pc as usize];
        let mut charge = |c: Component, n: u64| {
            self.counters.add(c, n);
            pcc.components.add(c, n);
        };
        for c in [
            Component::Ibp,
            Component::Icp,
            Component::Schedp,
            Component::Pipep,
        ] {
            charge(c, 1);
        }
        charge(Component::Rfp, threads * u64::from(info.rf_accesses));
        match info.class.timing {
            TimingClass::IntAlu | TimingClass::IntMul | TimingClass::IntDiv => {
                charge(Component::Spp, threads)
            }
            TimingClass::Fpu => charge(Component::Fpup, threads),
            // GPGPU-Sim's GTX 480 runs double precision on the SFU pipeline.
            TimingClass::Sfu | TimingClass::Dp | TimingClass::DpDiv => {
                charge(Component::Sfup, threads)
            }
            // Shuffles move words through the shared-memory crossbar.
            TimingClass::Shuffle => charge(Component::Shrdp, 1),
            _ => {}
        }
        pcc.issued += 1;
        pcc.threads += threads;
        let timing = env.timing;
        let class = info.class.timing;
        let latency = timing.latency(class);
        let mut occupancy = timing.interval(class);
        let mut result_at = now + latency;
        let mut producer = Producer::Alu;
        if executed.access != Access::None {
            let cost = access::cost(executed.access, &addrs, exec, pc, now, env);
            self.charge_access(&cost, &mut env.pcs[pc as usize]);
            (occupancy, result_at) = (cost.busy, cost.ready);
            producer = Producer::Memory;
        }
        let board = &mut self.boards[wi];
        let event = match executed.flow {
            Flow::Branch => {
                board.set_next_issue(now + latency);
                self.occupy(class, now, occupancy);
                StepEvent::None
            }
            Flow::Exit => {
                board.set_next_issue(now + latency);
                self.check_barrier(now, env);
                self.check_blocksync(env)
            }
            Flow::BarSync => {
                board.set_next_issue(now + 1);
                self.check_barrier(now, env);
                StepEvent::None
            }
            Flow::BlockSync(_) => {
                board.set_next_issue(now + 1);
                self.check_blocksync(env)
            }
            Flow::Next => {
                let writes = op.dst != NO_REG
                    && !(matches!(op.kind, Kind::Ld(_)) && executed.access == Access::None);
                if writes {
                    let d = usize::from(op.dst);
                    for r in d..d + usize::from(info.dst_regs.max(1)) {
                        board.reg_ready[r] = result_at;
                        board.reg_producer[r] = producer;
                    }
                }
                if info.writes_pred {
                    board.pred_ready[usize::from(op.pred & 15)] = result_at;
                }
                let next = if op.kind == Kind::Nop {
                    now + latency
                } else {
                    now + 1
                };
                board.set_next_issue(next);
                self.occupy(class, now, occupancy);
                StepEvent::None
            }
        };
        Ok((event, executed))
    }

    fn check_barrier(&mut self, now: u64, env: &Env) {
        let live = self.warps.iter().filter(|w| !w.is_done());
        let mut any = false;
        for w in live {
            if !matches!(w.state, WarpState::AtBarrier(_)) {
                return;
            }
            any = true;
        }
        if any {
            let at = now + env.timing.latency(TimingClass::Barrier);
            for (w, b) in self.warps.iter_mut().zip(&mut self.boards) {
                if matches!(w.state, WarpState::AtBarrier(_)) {
                    w.state = WarpState::Running;
                    b.set_next_issue(at);
                }
            }
        }
    }

    fn check_blocksync(&self, env: &Env) -> StepEvent {
        let mut arrived = None;
        for w in self.warps.iter().filter(|w| !w.is_done()) {
            match (w.state, arrived) {
                (WarpState::AtBlockSync(at), None) => arrived = Some(at),
                (WarpState::AtBlockSync(_), Some(_)) => {}
                _ => return StepEvent::None,
            }
        }
        match arrived.map(|pc| (pc, env.program.ops[pc as usize].kind)) {
            Some((pc, Kind::BlockSync(side))) => StepEvent::BlockSync { side, pc },
            _ => StepEvent::None,
        }
    }

    fn charge_access(&mut self, done: &Cost, at: &mut PcCounters) {
        let (component, n) = done.events;
        let group: &[Component] = if component == Component::Dramp {
            &[Component::Mcp, Component::Nocp, Component::Dramp]
        } else {
            &[component]
        };
        for &c in group {
            self.counters.add(c, n);
            at.components.add(c, n);
        }
    }
}
