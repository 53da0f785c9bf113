//! The timing step of code whose schedulers have one warp each (warp `s` on
//! scheduler `s`: the SPU's SMs and IUs), driven by issues rather than by polling
//! every scheduler: a scheduler is looked at only from the cycle its warp can
//! issue (`due` of [`super::code::Scheduler`]) or once its warp changed
//! ([`super::code::Code::touched`]); the others keep their stall, which is charged
//! as one interval when they are next looked at.
//!
//! A scheduler left alone would have been charged the same stall, cycle for
//! cycle, by the general step ([`super::issue`]): its warp's operands and state
//! are unchanged, and the pipelines only become busier, which keeps a pipeline
//! stall a pipeline stall and an operand stall an operand stall until `due` (the
//! cycle its operands arrive, or its pipeline frees). When `due` moves, the
//! scheduler is planned again as the general step plans every scheduler.

use super::code::Code;
use super::issue::issue;
use super::site::Site;
use super::stall::Stall;
use super::{StepEvent, Unit, Work};
use crate::exec::fault::Faulted;
use crate::timing::env::Env;

const NEVER: u64 = u64::MAX;

impl Unit {
    /// True while the unit runs code with one warp per scheduler.
    pub fn runs_single(&self) -> bool {
        matches!(&self.work, Work::Code(c) if c.single)
    }

    /// Timing mode, code with one warp per scheduler: steps the unit at each of
    /// its wake cycles before `horizon` until a step gives the grid something to
    /// act on, and returns that step's cycle and outcome; `last` becomes the
    /// latest cycle stepped.
    pub fn run_single(
        &mut self,
        horizon: u64,
        env: &mut Env,
        last: &mut u64,
    ) -> Option<(u64, Faulted<StepEvent>)> {
        while self.busy && self.wake < horizon {
            let now = self.wake;
            self.observe(now, env.program);
            // Samples are taken between steps: one step at a time while sampling.
            let limit = if self.sampler.is_some() || self.pcs.is_some() {
                now + 1
            } else {
                horizon
            };
            let (at, stepped) = match self.code().map_or(0, |c| c.schedulers.len()) {
                1 => self.run_schedulers::<1>(now, limit, env),
                2 => self.run_schedulers::<2>(now, limit, env),
                _ => self.run_schedulers::<0>(now, limit, env),
            };
            *last = (*last).max(at);
            match stepped {
                Ok(StepEvent::None) => {}
                other => return Some((at, other)),
            }
        }
        None
    }

    /// Steps code with `N` schedulers (0: any number) from cycle `now` at each of
    /// its wake cycles before `limit`, in one borrow of the unit, until a step
    /// gives the grid something to act on; returns the last step's cycle and
    /// outcome.
    #[inline(never)]
    fn run_schedulers<const N: usize>(
        &mut self,
        mut now: u64,
        limit: u64,
        env: &mut Env,
    ) -> (u64, Faulted<StepEvent>) {
        let Some((code, mut site, wake_at)) = self.code_and_site() else {
            return (now, Ok(StepEvent::None));
        };
        loop {
            match step_code::<N>(code, &mut site, wake_at, now, env) {
                Ok(StepEvent::None) if *wake_at < limit => now = *wake_at,
                other => return (now, other),
            }
        }
    }

    /// [`Unit::step`] of code with one warp per scheduler.
    #[inline]
    pub(super) fn step_single(&mut self, now: u64, env: &mut Env) -> Faulted<StepEvent> {
        // The SPU's IUs have one scheduler and its SMs two: their loops unrolled.
        match self.code().map_or(0, |c| c.schedulers.len()) {
            1 => self.step_schedulers::<1>(now, env),
            2 => self.step_schedulers::<2>(now, env),
            _ => self.step_schedulers::<0>(now, env),
        }
    }

    /// [`Unit::step_single`] of code with `N` schedulers (0: any number).
    #[inline(always)]
    fn step_schedulers<const N: usize>(&mut self, now: u64, env: &mut Env) -> Faulted<StepEvent> {
        let Some((code, mut site, wake_at)) = self.code_and_site() else {
            return Ok(StepEvent::None);
        };
        step_code::<N>(code, &mut site, wake_at, now, env)
    }
}

/// One step at cycle `now` of code with `N` schedulers (0: any number) of one
/// warp each; `wake_at` becomes the unit's next wake.
#[inline(always)]
fn step_code<const N: usize>(
    code: &mut Code,
    site: &mut Site,
    wake_at: &mut u64,
    now: u64,
    env: &mut Env,
) -> Faulted<StepEvent> {
    let n = if N == 0 { code.schedulers.len() } else { N };
    let mut event = StepEvent::None;
    let mut exited = false;
    let mut looked = 0u32;
    for s in 0..n {
        let bit = 1u32 << s;
        if code.schedulers[s].due > now && code.touched & bit == 0 {
            continue;
        }
        looked |= bit;
        let (stall, since) = (code.schedulers[s].stall, code.schedulers[s].since);
        code.charge_now(s, stall, now.saturating_sub(since), site.counts);
        // An exited warp is never ready: the common case is tested first.
        if code.ready_at(s, now) <= now {
            code.schedulers[s].last = 0;
            let e = issue(code, s, now, env, site)?;
            exited |= !code.runs(s) && code.warps[s].is_done();
            if e != StepEvent::None {
                event = e;
            }
        } else if code.warps[s].is_done() {
            code.charge_now(s, Stall::IDLE, 1, site.counts);
        } else {
            let stall = code.stall_of(s, now);
            code.charge_now(s, stall, 1, site.counts);
        }
        let sched = &mut code.schedulers[s];
        sched.stall = Stall::NONE;
        sched.since = now + 1;
    }
    // Only a warp's own exit ends it.
    if exited && code.warps.iter().all(|w| w.is_done()) {
        return Ok(StepEvent::Finished);
    }
    let t = now + 1;
    let mut wake = NEVER;
    for s in 0..n {
        let bit = 1u32 << s;
        if (looked | code.touched) & bit == 0 {
            // An exited warp stays untouched with `due` and `ready_at` NEVER.
            // Left alone: the same stall goes on while the warp waits for the
            // same cycle; otherwise (an operand arrives now but the pipeline is
            // busy, or the pipeline stays busy longer) it is planned again.
            let at = code.ready_at(s, t);
            if at == code.schedulers[s].due {
                wake = wake.min(at);
                continue;
            }
        }
        if looked & bit == 0 {
            // Left alone, or released by another warp after its turn: charged
            // through this cycle with the stall it had when its turn came.
            let (stall, since) = (code.schedulers[s].stall, code.schedulers[s].since);
            code.charge_now(s, stall, t.saturating_sub(since), site.counts);
        }
        let at = code.ready_at(s, t);
        let stall = if at <= t {
            Stall::NONE
        } else if code.warps[s].is_done() {
            Stall::IDLE
        } else {
            code.stall_of(s, t)
        };
        wake = wake.min(at);
        let sched = &mut code.schedulers[s];
        sched.due = at;
        sched.stall = stall;
        sched.since = t;
    }
    code.touched = 0;
    *wake_at = wake;
    if event == StepEvent::None && code.slots.len() > 1 && code.any_finished() {
        event = StepEvent::BlocksDone;
    }
    Ok(event)
}

#[cfg(test)]
mod tests {
    use crate::timing::unit::code::POLL_ALL;
    use crate::{LoadOptions, RunControl};

    /// Everything a sample measured on `spu-4x4` (SMs with two schedulers, IUs
    /// with one), with `poll_all` or with one warp per scheduler stepped by issue.
    fn measured(poll_all: bool, file: &str, defines: &[&str]) -> String {
        POLL_ALL.with(|p| p.set(poll_all));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../samples")
            .join(file);
        let kernel = crate::read_kernel(&path).expect("the sample assembles");
        let machine = crate::machine::preset("spu-4x4").expect("a preset");
        let options = LoadOptions {
            defines: defines.iter().map(|d| d.to_string()).collect(),
            ..Default::default()
        };
        let mut image = crate::load(kernel.module, &machine, &options).expect("it loads");
        let control = RunControl {
            sample_interval: Some(500),
            ..Default::default()
        };
        let result = crate::simulate(&mut image, &machine, control, &mut |_| {});
        POLL_ALL.with(|p| p.set(false));
        let result = result.expect("it runs");
        let stalls: u64 = result.units.iter().flat_map(|u| u.stalls).sum();
        assert!(
            stalls > 0,
            "the run stalls, so the comparison means something"
        );
        format!("{result:?}")
    }

    #[test]
    fn stepping_by_issue_charges_what_polling_every_scheduler_charges() {
        let cases: [(&str, &[&str]); 2] = [
            ("stencil2d/stencil_pc.spu", &["N=64", "K=64"]),
            ("divergent.spu", &[]),
        ];
        for (file, defines) in cases {
            let by_issue = measured(false, file, defines);
            assert_eq!(by_issue, measured(true, file, defines), "{file}");
        }
    }
}
