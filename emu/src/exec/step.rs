//! Executing one instruction of a warp: the one dispatch over the micro-op kinds
//! that every execution mode runs. It applies the instruction's effect on the
//! warp's registers, predicates and SIMT stack, on the unit's shared memory,
//! parameters and CB ports, and hands global memory accesses to the mode's
//! [`Global`] (which may apply them at once or later, in a global order). What an
//! access costs is left to the caller, which gets the lane addresses.
//!
//! A register operation runs its lane function; loads, stores and atomics are in
//! [`crate::exec::access`]; control flow moves the warp's SIMT stack.

use crate::exec::fault::{Fault, FaultKind, Faulted};
use crate::exec::lanes::Lanes;
use crate::exec::ops::{Op, Program, Run};
use crate::exec::space::{Access, Global, Local};
use crate::exec::warp::{CallError, LOCAL_LIMIT_BYTES, Warp, WarpState};
use spu_isa::{Guard, Side, TimingClass};

/// How control continues after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The next instruction (or the reconvergence point).
    Next,
    /// A branch was taken or not (the warp's stack says where it goes).
    Branch,
    /// Some lanes exited.
    Exit,
    /// The warp waits at `bar.sync` (if any lane executed it).
    BarSync,
    /// The warp waits at a blocksync (if any lane executed it).
    BlockSync(Option<Side>),
}

/// The outcome of one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Executed {
    /// Lanes that executed (active and guard true).
    pub exec: u32,
    pub flow: Flow,
    pub access: Access,
}

/// The lanes of `active` whose guard holds.
#[inline(always)]
pub fn guarded(guard: Guard, preds: &[u32; 16], active: u32) -> u32 {
    active
        & match guard {
            Guard::Always => u32::MAX,
            Guard::If(p) => preds[usize::from(p & 15)],
            Guard::IfNot(p) => !preds[usize::from(p & 15)],
        }
}

/// Executes the instruction at `pc` for `warp` at cycle `now` (what `%clock`
/// reads) and moves the warp on. Memory addresses are left in `addrs`.
#[inline]
pub fn execute<G: Global>(
    prog: &Program,
    pc: u32,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    now: u64,
    addrs: &mut Lanes,
) -> Faulted<Executed> {
    let active = warp.active();
    dispatch::<G, true, true>(
        prog,
        &prog.ops[pc as usize],
        pc,
        warp,
        active,
        local,
        global,
        now,
        addrs,
    )
}

/// Executes the instruction at `pc`, inside a basic block the warp entered with
/// lanes `active`: an instruction that does not end the block leaves the warp's PC
/// alone (the caller moves it past the block); one that ends it moves the warp on
/// as [`execute`] does, from `pc`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn execute_in_block<G: Global>(
    prog: &Program,
    pc: u32,
    warp: &mut Warp,
    active: u32,
    local: &mut Local,
    global: &mut G,
    now: u64,
    addrs: &mut Lanes,
) -> Faulted<Executed> {
    if prog.ops[pc as usize].run.ends_block() {
        warp.set_pc(pc);
    }
    dispatch::<G, false, true>(
        prog,
        &prog.ops[pc as usize],
        pc,
        warp,
        active,
        local,
        global,
        now,
        addrs,
    )
}

/// [`execute_in_block`] of `op`, the instruction at `pc`, in a basic block whose
/// [`Checks`](crate::exec::ops::Checks) the unit does not need: no instruction
/// the unit lacks, none that reads `%clock`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn execute_in_plain_block<G: Global>(
    prog: &Program,
    op: &Op,
    pc: u32,
    warp: &mut Warp,
    active: u32,
    local: &mut Local,
    global: &mut G,
    addrs: &mut Lanes,
) -> Faulted<Executed> {
    dispatch::<G, false, false>(prog, op, pc, warp, active, local, global, 0, addrs)
}

/// Runs `op` if it is a register operation (which never ends a basic block nor
/// touches memory), for the lanes of `active` whose guard holds, and returns
/// those lanes; `None` for any other instruction, left to
/// [`execute_in_plain_block`]. What [`execute_in_plain_block`] would do, without
/// building an [`Executed`].
#[inline(always)]
pub fn run_register_op(op: &Op, warp: &mut Warp, active: u32) -> Option<u32> {
    match op.run {
        Run::Lanes(f) => {
            let exec = guarded(op.guard, &warp.preds, active);
            f(warp, op, exec);
            Some(exec)
        }
        _ => None,
    }
}

/// An instruction that ends its basic block runs from its own PC: inside a block
/// (`!ADVANCE`) the warp's PC still is the block's start.
#[inline(always)]
fn ends_block<const ADVANCE: bool>(warp: &mut Warp, pc: u32) {
    if !ADVANCE {
        warp.set_pc(pc);
    }
}

/// The one dispatch over the micro-op kinds; `ADVANCE`: move the warp past
/// instructions that do not end a basic block; `CHECKED`: check that the unit has
/// the instruction and fill `%clock` (the caller knows neither is needed without).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn dispatch<G: Global, const ADVANCE: bool, const CHECKED: bool>(
    prog: &Program,
    op: &Op,
    pc: u32,
    warp: &mut Warp,
    active: u32,
    local: &mut Local,
    global: &mut G,
    now: u64,
    addrs: &mut Lanes,
) -> Faulted<Executed> {
    let at = pc as usize;
    let warp_index = warp.index;
    let fault = |kind, lane: u32| {
        Box::new(Fault {
            kind,
            pc,
            warp: warp_index,
            lane,
        })
    };
    if CHECKED {
        let info = &prog.info[at];
        if local.is_iu && !info.class.units.iu() {
            let what = match info.class.timing {
                TimingClass::Sfu => "the special function unit",
                TimingClass::Shared => "shared memory",
                _ => "the floating-point unit",
            };
            return Err(fault(FaultKind::NotOnIu { what }, active.trailing_zeros()));
        }
        if info.reads_clock {
            let slot = prog.layout.first_special()
                + prog
                    .layout
                    .specials
                    .iter()
                    .position(|&s| s == spu_isa::Special::Clock)
                    .unwrap_or(0);
            warp.regs[slot] = [now as u32; 32];
        }
    }
    let exec = guarded(op.guard, &warp.preds, active);
    let mut access = Access::None;
    let flow = match op.run {
        Run::Lanes(f) => {
            f(warp, op, exec);
            Flow::Next
        }
        Run::Load(m) | Run::Store(m) => {
            if exec != 0 {
                let store = matches!(op.run, Run::Store(_));
                access =
                    crate::exec::access::memory(op, m, store, warp, local, global, exec, addrs)
                        .map_err(|(k, l)| fault(k, l))?;
            }
            Flow::Next
        }
        Run::Atomic { atom, space } => {
            ends_block::<ADVANCE>(warp, pc);
            access = crate::exec::access::atomic(op, atom, space, warp, local, global, exec, addrs)
                .map_err(|(k, l)| fault(k, l))?;
            // An atomic ends its basic block: the warp moves on from here.
            warp.advance();
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Run::Bra { target, reconv } => {
            ends_block::<ADVANCE>(warp, pc);
            warp.branch(exec, target, reconv);
            return Ok(Executed {
                exec,
                flow: Flow::Branch,
                access,
            });
        }
        Run::Exit => {
            ends_block::<ADVANCE>(warp, pc);
            warp.exit(exec);
            return Ok(Executed {
                exec,
                flow: Flow::Exit,
                access,
            });
        }
        Run::Call {
            target,
            frame_bytes,
        } => {
            ends_block::<ADVANCE>(warp, pc);
            let depth = warp.depth() as u32;
            let limit = local.local_bytes.min(LOCAL_LIMIT_BYTES);
            warp.call(exec, target, frame_bytes, limit).map_err(|e| {
                let kind = match e {
                    CallError::TooDeep => FaultKind::CallTooDeep { target, depth },
                    CallError::FrameTooLarge { base, saved } => FaultKind::FrameTooLarge {
                        target,
                        base,
                        saved,
                        limit,
                    },
                };
                fault(kind, exec.trailing_zeros())
            })?;
            return Ok(Executed {
                exec,
                flow: Flow::Branch,
                access,
            });
        }
        Run::Ret => {
            ends_block::<ADVANCE>(warp, pc);
            // Outside any call `ret` ends the thread, as `exit` does.
            let flow = if warp.depth() == 0 {
                Flow::Exit
            } else {
                Flow::Branch
            };
            warp.ret(exec);
            return Ok(Executed { exec, flow, access });
        }
        Run::Printf { frame_bytes } => {
            if exec != 0 {
                let limit = local.local_bytes;
                crate::exec::printf::run(&prog.printed, &*global, warp, frame_bytes, exec, limit)
                    .map_err(|(k, l)| fault(k, l))?;
            }
            Flow::Next
        }
        Run::Nop => Flow::Next,
        Run::BarSync | Run::BlockSync(_) => {
            ends_block::<ADVANCE>(warp, pc);
            warp.advance();
            if exec != 0 && !warp.is_done() {
                warp.syncs = warp.syncs.wrapping_add(1);
                warp.state = if matches!(op.run, Run::BarSync) {
                    WarpState::AtBarrier(pc)
                } else {
                    WarpState::AtBlockSync(pc)
                };
            }
            let flow = match op.run {
                Run::BlockSync(side) => Flow::BlockSync(side),
                _ => Flow::BarSync,
            };
            return Ok(Executed { exec, flow, access });
        }
    };
    if ADVANCE {
        warp.advance();
    }
    Ok(Executed { exec, flow, access })
}
