//! The timing mode's step of a unit: each scheduler picks a warp and issues one
//! instruction; the execution core does its effect, and here it is timed
//! (latency, pipeline occupancy, scoreboard) and counted, with an optional trace
//! line.

use super::code::{Code, Producer};
use super::fast;
use super::site::{Site, count};
use super::stall::Stall;
use super::{StepEvent, Unit};
use crate::exec::fault::{Fault, FaultKind, Faulted};
use crate::exec::ops::{Program, Run};
use crate::exec::space::{Access, Local};
use crate::exec::step::{self, Executed, Flow};
use crate::exec::warp::{Warp, WarpState};
use crate::machine::SchedulerPolicy;
use crate::timing::access;
use crate::timing::effects::{Recorder, Target};
use crate::timing::env::Env;
use crate::timing::params::Path;
use spu_isa::TimingClass;

impl Unit {
    /// [`Unit::step`] of code whose schedulers have several warps (or none): polls
    /// every scheduler at every step.
    pub(super) fn step_polled(&mut self, now: u64, env: &mut Env) -> Faulted<StepEvent> {
        let policy = env.timing.policy;
        let Some((code, mut site, wake)) = self.code_and_site() else {
            return Ok(StepEvent::None);
        };
        let stride = code.schedulers.len();
        let mut event = StepEvent::None;
        let mut exited = false;
        for s in 0..stride {
            let sched = &code.schedulers[s];
            let (stall, since) = (sched.stall, sched.since);
            let (first, count, last) = (sched.first, sched.count, sched.last);
            code.charge(s, stall, now.saturating_sub(since), site.counts);
            let mut chosen = None;
            let mut blocked = None;
            for k in 0..count {
                let pos = issue_order(policy, last, count, k);
                let w = first + pos * stride;
                if code.warps[w].is_done() {
                    continue;
                }
                if code.ready_at(w, now) <= now {
                    chosen = Some((pos, w));
                    break;
                }
                if blocked.is_none() {
                    blocked = Some(w);
                }
            }
            match chosen {
                Some((pos, w)) => {
                    code.schedulers[s].last = pos;
                    let e = issue(code, w, now, env, &mut site)?;
                    exited |= code.warps[w].is_done();
                    if e != StepEvent::None {
                        event = e;
                    }
                }
                None => {
                    let stall = blocked.map_or(Stall::IDLE, |w| code.stall_of(w, now));
                    code.charge(s, stall, 1, site.counts);
                }
            }
            let sched = &mut code.schedulers[s];
            sched.stall = Stall::NONE;
            sched.since = now + 1;
        }
        // Only a warp's own exit ends it.
        if exited && code.warps.iter().all(Warp::is_done) {
            return Ok(StepEvent::Finished);
        }
        *wake = code.plan(now + 1);
        if event == StepEvent::None && code.slots.len() > 1 && code.any_finished() {
            event = StepEvent::BlocksDone;
        }
        Ok(event)
    }
}

/// The fault of a warp that ran past the last instruction.
pub(super) fn past_the_end(w: &Warp, program: &Program) -> Fault {
    let pc = w.pc().unwrap_or(0);
    Fault {
        kind: FaultKind::PastTheEnd {
            last: program.len() as u32,
        },
        pc: pc.saturating_sub(1),
        warp: w.index,
        lane: w.active().trailing_zeros(),
    }
}

/// What the trace shows an instruction wrote; `addrs` holds the byte address of
/// each active lane of a memory access. With `pending`, the registers written get
/// their values later (a global load or atomic in timing mode), on a line of their
/// own.
pub(super) fn trace_writes(
    t: &crate::observe::trace::Tracer,
    w: &Warp,
    program: &Program,
    pc: u32,
    exec: u32,
    addrs: &[u32; 32],
    pending: bool,
) -> String {
    let op = &program.ops[pc as usize];
    match (program.info[pc as usize].dst_general, op.run) {
        (Some(d), _) if pending => {
            let regs: Vec<String> = (0..program.info[pc as usize].dst_regs.max(1))
                .map(|k| t.reg_name(pc, usize::from(d) + usize::from(k)))
                .collect();
            format!("{} pending", regs.join(" "))
        }
        // Every register written: both of a 64-bit pair, all of a vector.
        (Some(d), _) => (0..program.info[pc as usize].dst_regs.max(1))
            .filter_map(|k| {
                let r = usize::from(d) + usize::from(k);
                let values = w.regs.get(r)?;
                Some(crate::observe::trace::lanes_text(
                    &t.reg_name(pc, r),
                    values,
                    exec,
                ))
            })
            .collect::<Vec<_>>()
            .join(" "),
        (_, _) if op.pd.is_some() => {
            let p = op.pd.unwrap_or(0);
            format!(
                "{} = {:08x}",
                t.pred_name(pc, usize::from(p)),
                w.preds[usize::from(p & 15)]
            )
        }
        (_, Run::Store(m)) => match w.regs.get(usize::from(op.src[0])) {
            Some(values) => {
                crate::observe::trace::store_text(&m.space.to_string(), addrs, values, exec)
            }
            None => format!("{} store", m.space),
        },
        (_, Run::Bra { .. }) => format!("taken by {exec:08x}"),
        _ => String::new(),
    }
}

/// Executes the next instruction of warp `wi` at cycle `now`: a register
/// operation here, anything else through the general path.
#[inline(always)]
pub(super) fn issue(
    code: &mut Code,
    wi: usize,
    now: u64,
    env: &mut Env,
    site: &mut Site,
) -> Faulted<StepEvent> {
    let (program, timing) = (env.program, env.timing);
    let pc = code.warps[wi].pc().unwrap_or(0);
    let at = pc as usize;
    if env.trace.is_none()
        && let Some(timed) = timing.ops.get(at)
        && let Some((op, info)) = program.ops.get(at).zip(program.info.get(at))
    {
        match timed.path[code.kind & 1] {
            Path::Lanes(f) => {
                *site.seq += 1;
                fast::issue_lanes(
                    code,
                    wi,
                    pc,
                    (op, info, f),
                    timed,
                    now,
                    program,
                    site.counts,
                );
                return Ok(StepEvent::None);
            }
            Path::SharedWord(store)
                if fast::issue_shared(code, wi, pc, (op, info, store), timed, now, env, site)? =>
            {
                return Ok(StepEvent::None);
            }
            Path::Branch(target, reconv) => {
                *site.seq += 1;
                fast::issue_branch(
                    code,
                    wi,
                    pc,
                    (op, target, reconv),
                    timed,
                    now,
                    program,
                    site,
                );
                return Ok(StepEvent::None);
            }
            _ => {}
        }
    }
    issue_general(code, wi, pc, now, env, site)
}

/// [`issue`] of any instruction at `pc`, the general path.
#[inline(never)]
fn issue_general(
    code: &mut Code,
    wi: usize,
    pc: u32,
    now: u64,
    env: &mut Env,
    site: &mut Site,
) -> Faulted<StepEvent> {
    let (label, unit) = (site.label, site.unit);
    let ports = super::ports_of(site.ports, site.slot_ports, code.slot_of(wi));
    let program = env.program;
    if pc as usize >= program.len() {
        return Err(Box::new(past_the_end(&code.warps[wi], program)));
    }
    let is_iu = code.ctx.iu.is_some();
    let mut addrs = [0u32; 32];
    let shared_bytes = code.ctx.shared_bytes;
    let generation = code.slot_generation[code.slot_of(wi)];
    let executed: Executed = {
        let (warps, shared) = code.warp_and_shared(wi);
        let mut local = Local {
            shared,
            shared_bytes,
            params: env.params,
            local_bytes: env.local_bytes,
            ports,
            is_iu,
        };
        *site.seq += 1;
        let mut global = Recorder {
            memory: env.memory,
            sink: &mut *env.sink,
            key: (now, unit as u32, *site.seq),
            target: Target {
                unit,
                generation,
                warp: wi,
            },
            toggles: 0,
            transaction_bytes: env.timing.transaction_bytes(),
            caching: program.info[pc as usize].caching,
            pc,
            seen: program.prints.then_some(&mut *site.stores),
        };
        let executed = step::execute(program, pc, warps, &mut local, &mut global, now, &mut addrs)?;
        site.traffic.toggles += global.toggles;
        executed
    };
    if executed.access.is_shared() && code.races.is_some() {
        code.check_race(label, wi, pc, program, &addrs, executed.exec);
    }
    if let Some(t) = env.trace.as_deref_mut()
        && t.wants(label, code.warps[wi].index, now)
    {
        // Global loads and atomics write their registers when the value arrives.
        let pending = executed.exec != 0
            && matches!(
                executed.access,
                Access::Global { store: false, .. } | Access::Atomic { .. }
            );
        let writes = trace_writes(
            t,
            &code.warps[wi],
            program,
            pc,
            executed.exec,
            &addrs,
            pending,
        );
        t.line(now, code.trace_site(label, wi), pc, executed.exec, &writes);
    }
    let (op, info) = (&program.ops[pc as usize], &program.info[pc as usize]);
    let exec = executed.exec;
    count(site.counts, pc, exec);
    let timed = code.timed[pc as usize];
    let latency = timed.latency;
    let mut occupancy = timed.interval;
    let mut result_at = now + latency;
    let mut producer = Producer::Alu;
    if let Access::Local { store, words } = executed.access
        && env.timing.local_in_dram()
    {
        // Cached DRAM traffic on a GPU: through the caches when the window is applied.
        let warp = &code.warps[wi];
        let place = access::LocalPlace {
            unit: unit as u32,
            slot: code.slot_of(wi) as u32,
            slots: code.slots.len() as u32,
            block_threads: code.block_warps() as u32 * 32,
            warp: warp.index,
            frame: warp.frame_base(),
        };
        let target = Target {
            unit,
            generation,
            warp: wi,
        };
        let dst = (op.d, info.dst_regs.max(1));
        let at = (pc, (now, unit as u32, *site.seq), target);
        let cost = access::local_cost(
            place,
            (store, words),
            dst,
            &addrs,
            exec,
            at,
            env,
            site.counts,
            site.traffic,
        );
        (occupancy, result_at) = (cost.busy, cost.ready);
        producer = Producer::Memory;
    } else if !executed.access.is_none() {
        let cost = access::cost(
            executed.access,
            &addrs,
            exec,
            pc,
            now,
            env,
            site.counts,
            site.traffic,
        );
        (occupancy, result_at) = (cost.busy, cost.ready);
        producer = Producer::Memory;
    }
    Ok(match executed.flow {
        Flow::Branch => {
            code.set_next_issue(wi, now + latency, program);
            code.occupy(timed.pipe, now, occupancy);
            StepEvent::None
        }
        Flow::Exit => {
            code.set_next_issue(wi, now + latency, program);
            check_barrier(code, wi, now, env);
            check_blocksync(code, wi, program)
        }
        Flow::BarSync => {
            code.set_next_issue(wi, now + 1, program);
            check_barrier(code, wi, now, env);
            StepEvent::None
        }
        Flow::BlockSync(_) => {
            code.set_next_issue(wi, now + 1, program);
            check_blocksync(code, wi, program)
        }
        Flow::Next => {
            // A plain 32-bit load with no lane executing writes nothing.
            let word_load = matches!(op.run, Run::Load(m) if m.is_word() && !op.addr.wide);
            if word_load && executed.access.is_none() {
                if let Some(p) = op.pd {
                    code.boards[wi].pred_ready[usize::from(p & 15)] = result_at;
                }
            } else {
                fast::mark_written(code, wi, (op, info), result_at, producer);
            }
            let next = if matches!(op.run, Run::Nop) {
                now + latency
            } else {
                now + 1
            };
            code.set_next_issue(wi, next, program);
            code.occupy(timed.pipe, now, occupancy);
            StepEvent::None
        }
    })
}

/// Releases the warps of warp `wi`'s block at `bar.sync` once every live warp of
/// the block has arrived.
pub(super) fn check_barrier(code: &mut Code, wi: usize, now: u64, env: &Env) {
    let block = code.slot_warps(code.slot_of(wi));
    let mut any = false;
    for w in code.warps[block.clone()].iter().filter(|w| !w.is_done()) {
        if !matches!(w.state, WarpState::AtBarrier(_)) {
            return;
        }
        any = true;
    }
    if any {
        let at = now + env.timing.latency(TimingClass::Barrier);
        for wi in block {
            if matches!(code.warps[wi].state, WarpState::AtBarrier(_)) {
                code.warps[wi].state = WarpState::Running;
                code.set_next_issue(wi, at, env.program);
            }
        }
    }
}

/// Warp `wi`'s block arrives at a blocksync once every live warp of it has.
pub(super) fn check_blocksync(code: &Code, wi: usize, program: &Program) -> StepEvent {
    let mut arrived = None;
    let slot = code.slot_of(wi);
    for w in code.warps[code.slot_warps(slot)]
        .iter()
        .filter(|w| !w.is_done())
    {
        match (w.state, arrived) {
            (WarpState::AtBlockSync(at), None) => arrived = Some(at),
            (WarpState::AtBlockSync(_), Some(_)) => {}
            _ => return StepEvent::None,
        }
    }
    match arrived.map(|pc| (pc, program.ops[pc as usize].run)) {
        Some((pc, Run::BlockSync(side))) => StepEvent::BlockSync { side, pc, slot },
        _ => StepEvent::None,
    }
}

/// Position in a scheduler's warp list of the `k`-th warp to try. Loose
/// round-robin starts after the warp issued last; greedy-then-oldest retries it
/// first, then goes oldest first.
#[inline]
pub(super) fn issue_order(policy: SchedulerPolicy, last: usize, n: usize, k: usize) -> usize {
    match policy {
        SchedulerPolicy::Lrr => {
            let start = if last >= n - 1 { 0 } else { last + 1 };
            let pos = start + k;
            if pos >= n { pos - n } else { pos }
        }
        SchedulerPolicy::Gto if last < n => match k {
            0 => last,
            _ if k - 1 < last => k - 1,
            _ => k,
        },
        SchedulerPolicy::Gto => k,
    }
}

#[cfg(test)]
mod tests {
    use super::issue_order;
    use crate::machine::SchedulerPolicy;

    #[test]
    fn loose_round_robin_starts_after_the_last_issued_warp() {
        let order = |last, n| -> Vec<usize> {
            (0..n)
                .map(|k| issue_order(SchedulerPolicy::Lrr, last, n, k))
                .collect()
        };
        assert_eq!(order(usize::MAX, 3), vec![0, 1, 2]);
        assert_eq!(order(0, 3), vec![1, 2, 0]);
        assert_eq!(order(2, 3), vec![0, 1, 2]);
        assert_eq!(order(0, 1), vec![0]);
        let gto: Vec<usize> = (0..3)
            .map(|k| issue_order(SchedulerPolicy::Gto, 1, 3, k))
            .collect();
        assert_eq!(gto, vec![1, 0, 2]);
    }
}
