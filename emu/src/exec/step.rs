//! Executing one instruction of a warp: the one dispatch over the micro-op kinds
//! that every execution mode runs. It applies the instruction's effect on the
//! warp's registers, predicates and SIMT stack, on the unit's shared memory,
//! parameters and CB ports, and hands global memory accesses to the mode's
//! [`Global`] (which may apply them at once or later, in a global order). What an
//! access costs is left to the caller, which gets the lane addresses.
//!
//! Address checks take a fast path (alignment and bounds of the whole access from
//! the OR, minimum and maximum of its addresses) and fall back to the lane-by-lane
//! check only to name the first faulting lane.

use crate::exec::cb::Port;
use crate::exec::fault::{Fault, FaultKind};
use crate::exec::lanes::{self, Lanes, Wide, lanes_of};
use crate::exec::memory::GlobalMemory;
use crate::exec::ops::{Kind, Program, Reg};
use crate::exec::scalar::Atomic;
use crate::exec::warp::{Warp, WarpState};
use spu_isa::{Guard, Side, Space, TimingClass, Ty};

/// A fault and the lane that caused it.
pub type LaneFault = (FaultKind, u32);

/// The unit-local state an instruction may touch.
#[derive(Debug)]
pub struct Local<'a> {
    /// Shared memory: a power-of-two number of words, at least `shared_bytes / 4`.
    pub shared: &'a mut [u32],
    /// Size of the block's shared space in bytes.
    pub shared_bytes: u32,
    pub params: &'a [u32],
    /// CB ports by side code.
    pub ports: &'a mut [Option<Port>; 4],
    /// The unit runs IU code (no FPU, SFU or shared memory, thesis Table 5.2).
    pub is_iu: bool,
}

/// Global memory as an execution mode provides it. Addresses reach it checked.
pub trait Global {
    /// The memory layout, for address checks.
    fn layout(&self) -> &GlobalMemory;
    /// Loads the lanes of `mask` into register `dst` of `warp`.
    fn load(&mut self, warp: &mut Warp, dst: Reg, addrs: &Lanes, mask: u32);
    /// Stores `data` in the lanes of `mask`.
    fn store(&mut self, addrs: &Lanes, data: &Lanes, mask: u32);
    /// Loads the 8- or 16-bit field of type `ty` at each lane's byte address in
    /// `bytes`, extended to 32 bits, into register `dst` of `warp`.
    fn load_narrow(&mut self, warp: &mut Warp, dst: Reg, ty: Ty, bytes: &Lanes, mask: u32);
    /// Stores the low 8 or 16 bits of `data` at each lane's byte address, lane by
    /// lane (so lanes writing bytes of one word all land).
    fn store_narrow(&mut self, ty: Ty, bytes: &Lanes, data: &Lanes, mask: u32);
    /// Atomics `atom` in the lanes of `mask`, in lane order, at checked and aligned
    /// addresses: `a` is the operand (the compare value of CAS), `b` the CAS swap
    /// value, both read as the atomic's type; the old values go to register `dst`
    /// (and the next one for 64-bit types), if any (`red` has none).
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        warp: &mut Warp,
        atom: Atomic,
        dst: Option<Reg>,
        addrs: &Lanes,
        a: &Wide,
        b: &Wide,
        mask: u32,
    );
}

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

/// What memory an instruction accessed; the addresses are in the caller's scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    None,
    Shared,
    Param,
    Cb,
    Global {
        store: bool,
        /// Words each lane moves (2 for a 64-bit value or `.v2`, 4 for `.v4`);
        /// aligned accesses never straddle a transaction, so the lanes' first
        /// addresses give the transactions.
        words: u8,
    },
    /// Global atomics (one transaction per executing lane), each lane's value
    /// `words` (1 or 2) words wide.
    Atomic {
        words: u8,
    },
    /// Shared-memory atomics: lanes on one word take effect one after another.
    SharedAtomic,
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
) -> Result<Executed, Fault> {
    let active = warp.active();
    dispatch::<G, true>(prog, pc, warp, active, local, global, now, addrs)
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
) -> Result<Executed, Fault> {
    if prog.ops[pc as usize].kind.ends_block() {
        warp.set_pc(pc);
    }
    dispatch::<G, false>(prog, pc, warp, active, local, global, now, addrs)
}

/// The one dispatch over the micro-op kinds; `ADVANCE`: move the warp past
/// instructions that do not end a basic block.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn dispatch<G: Global, const ADVANCE: bool>(
    prog: &Program,
    pc: u32,
    warp: &mut Warp,
    active: u32,
    local: &mut Local,
    global: &mut G,
    now: u64,
    addrs: &mut Lanes,
) -> Result<Executed, Fault> {
    let at = pc as usize;
    let (op, info) = (&prog.ops[at], &prog.info[at]);
    let warp_index = warp.index;
    let fault = |kind, lane: u32| Fault {
        kind,
        pc,
        warp: warp_index,
        lane,
    };
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
    let exec = guarded(op.guard, &warp.preds, active);
    let [a, b, c] = op.src;
    let mut access = Access::None;
    let value: Lanes = match op.kind {
        Kind::Bin(f) => lanes::binary(f, reg(warp, a), reg(warp, b)),
        Kind::Un(f) => lanes::unary(f, reg(warp, a)),
        Kind::MadLo => lanes::mad_lo(reg(warp, a), reg(warp, b), reg(warp, c)),
        Kind::Fma => lanes::fma(reg(warp, a), reg(warp, b), reg(warp, c)),
        Kind::Mov => *reg(warp, a),
        Kind::Selp => lanes::select(
            warp.preds[usize::from(op.pred & 15)],
            reg(warp, a),
            reg(warp, b),
        ),
        Kind::Setp(cmp, ty) => {
            let hits = lanes::setp(cmp, ty, reg(warp, a), reg(warp, b));
            let p = &mut warp.preds[usize::from(op.pred & 15)];
            *p = (*p & !exec) | (hits & exec);
            if ADVANCE {
                warp.advance();
            }
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Kind::Ld(space) | Kind::St(space) => {
            let store = matches!(op.kind, Kind::St(_));
            if exec != 0 {
                address(warp, op.base, op.offset, addrs);
                access = memory(
                    space, store, op.src[0], op.dst, warp, local, global, exec, addrs,
                )
                .map_err(|(k, l)| fault(k, l))?;
            }
            if ADVANCE {
                warp.advance();
            }
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Kind::Atomic(i) => {
            let access =
                crate::exec::ext::atomic(&prog.ext[i as usize], warp, local, global, exec, addrs)
                    .map_err(|(k, l)| fault(k, l))?;
            warp.advance();
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Kind::Bra { target, reconv } => {
            warp.branch(exec, target, reconv);
            return Ok(Executed {
                exec,
                flow: Flow::Branch,
                access,
            });
        }
        Kind::Exit => {
            warp.exit(exec);
            return Ok(Executed {
                exec,
                flow: Flow::Exit,
                access,
            });
        }
        Kind::Ext(i) => {
            let access =
                crate::exec::ext::execute(&prog.ext[i as usize], warp, local, global, exec, addrs)
                    .map_err(|(k, l)| fault(k, l))?;
            warp.advance();
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Kind::Nop => {
            if ADVANCE {
                warp.advance();
            }
            return Ok(Executed {
                exec,
                flow: Flow::Next,
                access,
            });
        }
        Kind::BarSync | Kind::BlockSync(_) => {
            warp.advance();
            if exec != 0 && !warp.is_done() {
                warp.state = if op.kind == Kind::BarSync {
                    WarpState::AtBarrier(pc)
                } else {
                    WarpState::AtBlockSync(pc)
                };
            }
            let flow = match op.kind {
                Kind::BlockSync(side) => Flow::BlockSync(side),
                _ => Flow::BarSync,
            };
            return Ok(Executed { exec, flow, access });
        }
    };
    lanes::write_masked(&mut warp.regs[usize::from(op.dst)], &value, exec);
    if ADVANCE {
        warp.advance();
    }
    Ok(Executed {
        exec,
        flow: Flow::Next,
        access,
    })
}

#[inline(always)]
fn reg(warp: &Warp, x: Reg) -> &Lanes {
    warp.reg(usize::from(x))
}

/// The byte address `[base + offset]` in every lane.
#[inline]
fn address(warp: &Warp, base: Reg, offset: i32, out: &mut Lanes) {
    let base = warp.reg(usize::from(base));
    for (o, &b) in out.iter_mut().zip(base) {
        *o = b.wrapping_add(offset as u32);
    }
}

/// Alignment and bounds of an access to a space of `size` bytes.
pub(crate) fn check_bounded(
    space: Space,
    addrs: &Lanes,
    mask: u32,
    size: u32,
    store: bool,
) -> Result<(), LaneFault> {
    let (or, outside) = lanes::or_outside(addrs, mask, 0, size);
    if or % 4 == 0 && !outside {
        return Ok(());
    }
    for l in lanes_of(mask) {
        let addr = addrs[l];
        if addr % 4 != 0 {
            return Err((FaultKind::Misaligned { space, addr }, l as u32));
        }
        if addr >= size {
            return Err((
                FaultKind::OutOfRange {
                    space,
                    addr,
                    size,
                    store,
                },
                l as u32,
            ));
        }
    }
    Ok(())
}

/// Alignment and mapping of a global access of `size` bytes (1, 2, 4 or 8) per
/// lane: each lane's address is a multiple of `size` (of 4 for 8-byte accesses,
/// which the caller checks whole), and all its bytes lie inside one buffer (a
/// buffer whose size is not a multiple of 4 ends inside its last word).
pub fn check_global(
    memory: &GlobalMemory,
    addrs: &Lanes,
    mask: u32,
    size: u32,
    store: bool,
) -> Result<(), LaneFault> {
    if mask == 0 {
        return Ok(());
    }
    let align = size.min(4);
    // Fast path: every lane in the region of the first one.
    let first = addrs[mask.trailing_zeros() as usize];
    if let Some(r) = memory.region_of(first & !3) {
        let r = &memory.regions()[r];
        let last_start = (r.end() + 1).saturating_sub(size);
        let (or, outside) = lanes::or_outside(addrs, mask, r.base, last_start);
        if or % align == 0 && !outside {
            return Ok(());
        }
    }
    for l in lanes_of(mask) {
        let addr = addrs[l];
        if addr % align != 0 {
            let space = Space::Global;
            let kind = if align == 4 {
                FaultKind::Misaligned { space, addr }
            } else {
                FaultKind::MisalignedBy { space, addr, size }
            };
            return Err((kind, l as u32));
        }
        match memory.region_of(addr & !3) {
            None => return Err((FaultKind::Unmapped { addr, store }, l as u32)),
            Some(r) if addr as u64 + u64::from(size) > u64::from(memory.regions()[r].end()) => {
                return Err((FaultKind::PastEnd { addr, size, store }, l as u32));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A load or store of the lanes of `mask` (non-empty) to `space`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn memory<G: Global>(
    space: Space,
    store: bool,
    data: Reg,
    dst: Reg,
    warp: &mut Warp,
    local: &mut Local,
    global: &mut G,
    mask: u32,
    addrs: &Lanes,
) -> Result<Access, LaneFault> {
    match space {
        Space::Global => {
            check_global(global.layout(), addrs, mask, 4, store)?;
            if store {
                global.store(addrs, warp.reg(usize::from(data)), mask);
            } else {
                global.load(warp, dst, addrs, mask);
            }
            Ok(Access::Global { store, words: 1 })
        }
        Space::Shared => {
            check_bounded(space, addrs, mask, local.shared_bytes, store)?;
            let shared = &mut *local.shared;
            // The buffer's length is a power of two at least the space's size, and
            // every address was checked: masking the index changes nothing but
            // spares a bounds check per lane.
            let wrap = shared.len().wrapping_sub(1);
            if store {
                let v = warp.reg(usize::from(data));
                for l in lanes_of(mask) {
                    shared[(addrs[l] / 4) as usize & wrap] = v[l];
                }
            } else {
                let mut loaded = [0; 32];
                if mask == u32::MAX {
                    for (v, &a) in loaded.iter_mut().zip(addrs) {
                        *v = shared[(a / 4) as usize & wrap];
                    }
                } else {
                    for l in lanes_of(mask) {
                        loaded[l] = shared[(addrs[l] / 4) as usize & wrap];
                    }
                }
                lanes::write_masked(&mut warp.regs[usize::from(dst)], &loaded, mask);
            }
            Ok(Access::Shared)
        }
        Space::Param => {
            let params = local.params;
            check_bounded(space, addrs, mask, params.len() as u32 * 4, store)?;
            let mut v = [0; 32];
            for l in lanes_of(mask) {
                v[l] = params[(addrs[l] / 4) as usize];
            }
            lanes::write_masked(&mut warp.regs[usize::from(dst)], &v, mask);
            Ok(Access::Param)
        }
        _ => {
            let lane0 = mask.trailing_zeros();
            let side = space.cb_side().unwrap_or(Side::North);
            let port = local.ports[side.code() as usize]
                .as_mut()
                .ok_or((FaultKind::NoCbPort { side }, lane0))?;
            check_bounded(space, addrs, mask, port.words() * 4, store)?;
            if store {
                port.write_lanes(addrs, warp.reg(usize::from(data)), mask);
            } else {
                let mut v = [0; 32];
                port.read_lanes(addrs, mask, &mut v, warp.index)
                    .map_err(|lane| {
                        let addr = addrs[lane as usize];
                        let held = port.held();
                        (FaultKind::UnwrittenCb { side, addr, held }, lane)
                    })?;
                lanes::write_masked(&mut warp.regs[usize::from(dst)], &v, mask);
            }
            Ok(Access::Cb)
        }
    }
}
