//! Issuing one warp instruction: the functional effect (arithmetic, memory, CBs,
//! branches, barriers) and what it costs (latency, pipeline occupancy, counters),
//! with an optional trace line.

use super::*;
use crate::access::{self, Access, Request};

impl Unit {
    pub(super) fn special(&self, w: &Warp, sp: Special, now: u64) -> Lanes {
        let ctx = &self.ctx;
        let thread = |l: usize| w.index * 32 + l as u32;
        let [nx, ny, _] = ctx.ntid;
        let (smx, smy) = match self.label {
            UnitLabel::Sm { x, y } => (x, y),
            _ => (u32::MAX, u32::MAX),
        };
        let uniform = |v: u32| [v; 32];
        match sp {
            Special::TidX => std::array::from_fn(|l| thread(l) % nx),
            Special::TidY => std::array::from_fn(|l| thread(l) / nx % ny),
            Special::TidZ => std::array::from_fn(|l| thread(l) / (nx * ny)),
            Special::NtidX => uniform(ctx.ntid[0]),
            Special::NtidY => uniform(ctx.ntid[1]),
            Special::NtidZ => uniform(ctx.ntid[2]),
            Special::CtaidX => uniform(ctx.ctaid[0]),
            Special::CtaidY => uniform(ctx.ctaid[1]),
            Special::CtaidZ => uniform(0),
            Special::NctaidX => uniform(ctx.nctaid[0]),
            Special::NctaidY => uniform(ctx.nctaid[1]),
            Special::NctaidZ => uniform(1),
            Special::LaneId => std::array::from_fn(|l| l as u32),
            Special::WarpId => uniform(w.index),
            Special::SmidX => uniform(smx),
            Special::SmidY => uniform(smy),
            Special::IsIu => uniform(u32::from(ctx.iu.is_some())),
            Special::IuDir => uniform(ctx.iu.map_or(u32::MAX, |(s, _)| u32::from(s.code()))),
            Special::IuId => uniform(ctx.iu.map_or(u32::MAX, |(_, i)| i)),
            Special::Clock => uniform(now as u32),
            Special::NWarpId => uniform(self.warps.len() as u32),
            Special::Smid => uniform(if smx == u32::MAX {
                u32::MAX
            } else {
                smy * ctx.sm_grid[0] + smx
            }),
            Special::NSmid => uniform(ctx.sm_grid[0] * ctx.sm_grid[1]),
            Special::LanemaskEq => std::array::from_fn(|l| 1 << l),
            Special::LanemaskLe => std::array::from_fn(|l| ((2u64 << l) - 1) as u32),
            Special::LanemaskLt => std::array::from_fn(|l| (1u32 << l) - 1),
            Special::LanemaskGe => std::array::from_fn(|l| !((1u32 << l) - 1)),
            Special::LanemaskGt => std::array::from_fn(|l| !(((2u64 << l) - 1) as u32)),
        }
    }

    pub(super) fn fetch(&self, w: &Warp, src: Src, now: u64) -> Lanes {
        match src {
            Src::Reg(r) => w.regs[usize::from(r)],
            Src::Imm(v) => [v; 32],
            Src::Special(sp) => self.special(w, sp, now),
            Src::None => [0; 32],
        }
    }

    pub(super) fn occupy(&mut self, class: TimingClass, now: u64, cycles: u64) {
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
        if !traced {
            return self.issue_untraced(wi, now, env);
        }
        let w = &self.warps[wi];
        let (warp, pc) = (w.index, w.pc().unwrap_or(0));
        let Some(&op) = env.ops.get(pc as usize) else {
            return self.issue_untraced(wi, now, env);
        };
        let exec = w.active()
            & match op.guard {
                Guard::Always => u32::MAX,
                Guard::If(p) => w.preds[usize::from(p)],
                Guard::IfNot(p) => !w.preds[usize::from(p)],
            };
        let event = self.issue_untraced(wi, now, env)?;
        let w = &self.warps[wi];
        let writes = match (op.dst, op.pdst, op.kind) {
            (Some(d), ..) => {
                crate::trace::lanes_text(&format!("r{d}"), &w.regs[usize::from(d)], exec)
            }
            (_, Some(p), _) => format!("p{p} = {:08x}", w.preds[usize::from(p)]),
            (_, _, Kind::St(space)) => format!("{space} store"),
            (_, _, Kind::Bra { .. }) => format!("taken by {exec:08x}"),
            _ => String::new(),
        };
        if let Some(t) = env.trace.as_deref_mut() {
            t.line(now, self.label, warp, pc, exec, &writes);
        }
        Ok(event)
    }

    pub(super) fn issue_untraced(
        &mut self,
        wi: usize,
        now: u64,
        env: &mut Env,
    ) -> Result<StepEvent, Fault> {
        let w = &self.warps[wi];
        let pc = w.pc().unwrap_or(0);
        let Some(&op) = env.ops.get(pc as usize) else {
            return Err(Fault {
                kind: FaultKind::PastTheEnd {
                    last: env.ops.len() as u32,
                },
                pc: pc.saturating_sub(1),
                warp: w.index,
                lane: w.active().trailing_zeros(),
            });
        };
        let warp_index = w.index;
        let fault = |kind, lane: u32| Fault {
            kind,
            pc,
            warp: warp_index,
            lane,
        };
        if self.is_iu() && !op.class.units.iu() {
            let what = match op.class.timing {
                TimingClass::Sfu => "the special function unit",
                TimingClass::Shared => "shared memory",
                _ => "the floating-point unit",
            };
            return Err(fault(
                FaultKind::NotOnIu { what },
                w.active().trailing_zeros(),
            ));
        }
        let active = w.active();
        let exec = active
            & match op.guard {
                Guard::Always => u32::MAX,
                Guard::If(p) => w.preds[usize::from(p)],
                Guard::IfNot(p) => !w.preds[usize::from(p)],
            };
        let lanes = u64::from(exec.count_ones());
        self.issued += 1;
        self.thread_instrs += lanes;
        let mut charge = |c: Component, n: u64| {
            self.counters.add(c, n);
            env.pcs[pc as usize].components.add(c, n);
        };
        for c in [
            Component::Ibp,
            Component::Icp,
            Component::Schedp,
            Component::Pipep,
        ] {
            charge(c, 1);
        }
        charge(Component::Rfp, lanes * u64::from(op.register_accesses()));
        match op.class.timing {
            TimingClass::IntAlu | TimingClass::IntMul | TimingClass::IntDiv => {
                charge(Component::Spp, lanes)
            }
            TimingClass::Fpu => charge(Component::Fpup, lanes),
            // GPGPU-Sim's GTX 480 runs double precision on the SFU pipeline.
            TimingClass::Sfu | TimingClass::Dp | TimingClass::DpDiv => {
                charge(Component::Sfup, lanes)
            }
            // Shuffles move words through the shared-memory crossbar.
            TimingClass::Shuffle => charge(Component::Shrdp, 1),
            _ => {}
        }
        let pcc = &mut env.pcs[pc as usize];
        pcc.issued += 1;
        pcc.threads += lanes;
        let timing = env.timing;
        let latency = timing.latency(op.class.timing);
        let mut occupancy = timing.interval(op.class.timing);
        let mut result_at = now + latency;
        let mut producer = Producer::Alu;
        let mut next_issue = now + 1;
        let mut event = StepEvent::None;
        let mut value: Option<Lanes> = None;

        match op.kind {
            Kind::Bin(b) => {
                let (a, bv) = (self.fetch(w, op.a, now), self.fetch(w, op.b, now));
                value = Some(exec::binary(b, &a, &bv));
            }
            Kind::Un(u) => value = Some(exec::unary(u, &self.fetch(w, op.a, now))),
            Kind::MadLo | Kind::Fma => {
                let (a, b, c) = (
                    self.fetch(w, op.a, now),
                    self.fetch(w, op.b, now),
                    self.fetch(w, op.c, now),
                );
                value = Some(if op.kind == Kind::Fma {
                    exec::fma(&a, &b, &c)
                } else {
                    exec::mad_lo(&a, &b, &c)
                });
            }
            Kind::Mov => value = Some(self.fetch(w, op.a, now)),
            Kind::Selp => {
                let (a, b) = (self.fetch(w, op.a, now), self.fetch(w, op.b, now));
                let p = op.pred_src.map_or(0, |p| w.preds[usize::from(p)]);
                value = Some(std::array::from_fn(|l| {
                    if p >> l & 1 != 0 { a[l] } else { b[l] }
                }));
            }
            Kind::Setp(cmp, ty) => {
                let (a, b) = (self.fetch(w, op.a, now), self.fetch(w, op.b, now));
                let hits = exec::setp(cmp, ty, &a, &b);
                let w = &mut self.warps[wi];
                if let Some(p) = op.pdst {
                    let p = usize::from(p);
                    w.preds[p] = (w.preds[p] & !exec) | (hits & exec);
                    w.pred_ready[p] = result_at;
                }
            }
            Kind::Ld(space) | Kind::St(space) => {
                let addrs = self.addresses(w, &op, now);
                let data = matches!(op.kind, Kind::St(_)).then(|| self.fetch(w, op.a, now));
                let cb_link = space
                    .cb_side()
                    .map(|side| (side, self.ports[side.code() as usize]));
                let req = Request {
                    space,
                    addrs: &addrs,
                    data: data.as_ref(),
                    exec,
                    pc,
                    now,
                    cb_link,
                };
                if exec != 0 {
                    let done =
                        access::access(req, &mut self.shared, env).map_err(|(k, l)| fault(k, l))?;
                    self.charge_access(&done, &mut env.pcs[pc as usize]);
                    (occupancy, result_at, value) = (done.busy, done.ready, done.loaded);
                    producer = Producer::Memory;
                }
            }
            Kind::Atom(..) | Kind::Cas => {
                let addrs = self.addresses(w, &op, now);
                let (a, b) = (self.fetch(w, op.a, now), self.fetch(w, op.b, now));
                let req = Request {
                    space: Space::Global,
                    addrs: &addrs,
                    data: None,
                    exec,
                    pc,
                    now,
                    cb_link: None,
                };
                let done =
                    access::atomic(op.kind, req, &a, &b, env).map_err(|(k, l)| fault(k, l))?;
                self.charge_access(&done, &mut env.pcs[pc as usize]);
                (occupancy, result_at, value) = (done.busy, done.ready, done.loaded);
                producer = Producer::Memory;
            }
            Kind::Bra { target, reconv } => {
                let w = &mut self.warps[wi];
                w.branch(exec, target, reconv);
                w.set_next_issue(now + latency);
                self.occupy(op.class.timing, now, occupancy);
                return Ok(StepEvent::None);
            }
            Kind::Exit => {
                let w = &mut self.warps[wi];
                w.exit(exec);
                w.set_next_issue(now + latency);
                self.check_barrier(now, env);
                return Ok(self.check_blocksync(env));
            }
            Kind::Nop => next_issue = now + latency,
            Kind::BarSync | Kind::BlockSync(_) => {
                let w = &mut self.warps[wi];
                w.advance();
                if exec != 0 && !w.is_done() {
                    w.state = if op.kind == Kind::BarSync {
                        WarpState::AtBarrier(pc)
                    } else {
                        WarpState::AtBlockSync(pc)
                    };
                }
                w.set_next_issue(now + 1);
                if op.kind == Kind::BarSync {
                    self.check_barrier(now, env);
                } else {
                    event = self.check_blocksync(env);
                }
                return Ok(event);
            }
        }
        let w = &mut self.warps[wi];
        if let (Some(v), Some(d)) = (value, op.dst) {
            let d = usize::from(d);
            exec::write_masked(&mut w.regs[d], &v, exec);
            w.reg_ready[d] = result_at;
            w.reg_producer[d] = producer;
        }
        w.advance();
        w.set_next_issue(next_issue);
        self.occupy(op.class.timing, now, occupancy);
        Ok(event)
    }

    pub(super) fn addresses(&self, w: &Warp, op: &Op, now: u64) -> Lanes {
        let base = op
            .mem_base
            .map_or([0; 32], |r| self.fetch(w, Src::Reg(r), now));
        base.map(|b| b.wrapping_add(op.mem_offset as u32))
    }

    pub(super) fn check_barrier(&mut self, now: u64, env: &Env) {
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
            for w in &mut self.warps {
                if matches!(w.state, WarpState::AtBarrier(_)) {
                    w.state = WarpState::Running;
                    w.set_next_issue(at);
                }
            }
        }
    }

    pub(super) fn check_blocksync(&self, env: &Env) -> StepEvent {
        let mut arrived = None;
        for w in self.warps.iter().filter(|w| !w.is_done()) {
            match (w.state, arrived) {
                (WarpState::AtBlockSync(at), None) => arrived = Some(at),
                (WarpState::AtBlockSync(_), Some(_)) => {}
                _ => return StepEvent::None,
            }
        }
        match arrived.map(|pc| (pc, env.ops[pc as usize].kind)) {
            Some((pc, Kind::BlockSync(side))) => StepEvent::BlockSync { side, pc },
            _ => StepEvent::None,
        }
    }

    pub(super) fn charge_access(&mut self, done: &Access, at: &mut PcCounters) {
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
