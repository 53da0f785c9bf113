//! The timing mode's fast paths of the issue step (`super::issue::issue`): a
//! register operation, a branch, and a plain 32-bit shared-memory load or store,
//! which need nothing of the unit but the warp, its block's shared memory and the
//! counters.
//! They have the same effect, counts and timing as the general path, without its
//! memory scratch, dispatch over every kind of instruction, and flow handling.
//! Which instruction may take one is resolved once per program
//! ([`crate::timing::params::Path`]).

use super::code::{Code, Producer, RegReady};
use super::site::{Site, count};
use crate::exec::fault::{Fault, Faulted};
use crate::exec::ops::{LaneFn, NO_REG, Op, OpInfo, Program};
use crate::exec::step;
use crate::observe::counters::UnitCounts;
use crate::timing::env::Env;
use crate::timing::params::Timed;
use spu_isa::TimingClass;

/// Registers (and the predicate) `op` writes become ready at `at`, written by
/// `producer`.
#[inline(always)]
pub(super) fn mark_written(
    code: &mut Code,
    wi: usize,
    (op, info): (&Op, &OpInfo),
    at: u64,
    producer: Producer,
) {
    let board = &mut code.boards[wi];
    if op.d != NO_REG {
        let d = usize::from(op.d);
        for r in d..d + usize::from(info.dst_regs.max(1)) {
            board.regs[r] = RegReady::new(at, producer);
        }
    }
    if let Some(p) = op.pd {
        board.pred_ready[usize::from(p & 15)] = at;
    }
}

/// Issues the register operation `op` (lane function `f`) at `pc` of warp `wi`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn issue_lanes(
    code: &mut Code,
    wi: usize,
    pc: u32,
    (op, info, f): (&Op, &OpInfo, LaneFn),
    timed: &Timed,
    now: u64,
    program: &Program,
    counts: &mut UnitCounts,
) {
    let warp = &mut code.warps[wi];
    let exec = step::guarded(op.guard, &warp.preds, warp.active());
    f(warp, op, exec);
    warp.advance();
    count(counts, pc, exec);
    mark_written(code, wi, (op, info), now + timed.latency, Producer::Alu);
    code.set_next_issue(wi, now + 1, program);
    code.occupy(timed.pipe, now, timed.interval);
}

/// Issues the branch `op` to `target` (reconverging at `reconv`) at `pc` of warp
/// `wi`: the warp may issue again after the branch latency.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn issue_branch(
    code: &mut Code,
    wi: usize,
    pc: u32,
    (op, target, reconv): (&Op, u32, u32),
    timed: &Timed,
    now: u64,
    program: &Program,
    site: &mut Site,
) {
    let warp = &mut code.warps[wi];
    let exec = step::guarded(op.guard, &warp.preds, warp.active());
    warp.branch(exec, target, reconv);
    count(site.counts, pc, exec);
    code.set_next_issue(wi, now + timed.latency, program);
    code.occupy(timed.pipe, now, timed.interval);
}

/// Issues the plain 32-bit shared-memory load or store (`store`) `op` at `pc` of
/// warp `wi`; `false` (having done nothing) when no lane executes it or the unit
/// has no shared memory, which the general path handles.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn issue_shared(
    code: &mut Code,
    wi: usize,
    pc: u32,
    (op, info, store): (&Op, &OpInfo, bool),
    timed: &Timed,
    now: u64,
    env: &mut Env,
    site: &mut Site,
) -> Faulted<bool> {
    let range = code.shared_range(wi);
    let size = code.ctx.shared_bytes;
    let warp = &mut code.warps[wi];
    let exec = step::guarded(op.guard, &warp.preds, warp.active());
    let Some(shared) = code.shared.get_mut(range) else {
        return Ok(false);
    };
    if exec == 0 || shared.is_empty() {
        return Ok(false);
    }
    *site.seq += 1;
    let mut addrs = [0u32; 32];
    // Every lane, the common case, without expanding the mask lane by lane.
    let on = if exec == u32::MAX {
        [u32::MAX; 32]
    } else {
        crate::exec::lanes::expand(exec)
    };
    crate::exec::words::shared_word(op, store, warp, shared, size, exec, &on, &mut addrs).map_err(
        |(kind, lane)| {
            Box::new(Fault {
                kind,
                pc,
                warp: warp.index,
                lane,
            })
        },
    )?;
    warp.advance();
    if code.races.is_some() {
        code.check_race(site.label, wi, pc, env.program, &addrs, exec);
    }
    count(site.counts, pc, exec);
    // Bank conflicts serialise the access (as `crate::timing::access::cost` times
    // a shared-memory access).
    let timing = env.timing;
    let waves = env.waves.waves(pc, &addrs, exec, timing.banks()).max(1);
    let at = pc as usize;
    site.counts.conflict_waves[at] += waves - 1;
    site.counts.mem_events[at] += waves;
    let interval = timing.interval(TimingClass::Shared);
    let ready = now + timing.latency(TimingClass::Shared) + (waves - 1) * interval;
    mark_written(code, wi, (op, info), ready, Producer::Memory);
    code.set_next_issue(wi, now + 1, env.program);
    code.occupy(timed.pipe, now, waves * interval);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use crate::observe::trace::{TraceFilter, Tracer};
    use crate::{LoadOptions, RunControl};

    /// Everything a sample measured in timing mode on `machine`; with `general`,
    /// a trace that prints nothing makes every instruction take the general path.
    fn measured(machine: &str, file: &str, defines: &[&str], general: bool) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../samples")
            .join(file);
        let kernel = crate::read_kernel(&path).expect("the sample assembles");
        let machine = crate::machine::preset(machine).expect("a preset");
        let options = LoadOptions {
            defines: defines.iter().map(|d| d.to_string()).collect(),
            ..Default::default()
        };
        let mut image = crate::load(kernel.module.clone(), &machine, &options).expect("it loads");
        let tracer = general.then(|| {
            let filter = TraceFilter {
                cycles: Some((u64::MAX, u64::MAX)),
                ..Default::default()
            };
            Tracer::new(
                &kernel.module,
                &image.launch,
                filter,
                Box::new(std::io::sink()),
            )
        });
        let result = crate::simulate_traced(
            &mut image,
            &machine,
            RunControl::default(),
            tracer,
            &mut |_| {},
        )
        .expect("it runs");
        assert!(result.units.iter().any(|u| u.issued > 0), "the run issues");
        format!("{result:?}")
    }

    #[test]
    fn the_fast_issue_paths_time_and_count_what_the_general_path_does() {
        let cases: [(&str, &str, &[&str]); 3] = [
            ("spu-4x4", "stencil2d/stencil_pc.spu", &["N=64", "K=64"]),
            ("spu-4x4", "reduction.spu", &[]),
            ("gtx480", "matmul.spu", &[]),
        ];
        for (machine, file, defines) in cases {
            let fast = measured(machine, file, defines, false);
            let general = measured(machine, file, defines, true);
            assert_eq!(fast, general, "{machine} {file}");
        }
    }
}
